//! Publishing, rescoring and the versions a leaderboard combines, on both backends.

use super::*;

both!(
    publishing_blockers_and_versions,
    rescoring_is_applied_whole_or_not_at_all,
    leaderboards_combine_only_the_current_scorer,
);

async fn publishing_blockers_and_versions(t: &TestStore) {
    let store = t.store.clone().with_scorer_version("score 0.1.0");
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let a = team(t, &f, "a").await;
    let b = team(t, &f, "b").await;
    let a1 = scored_one(t, &f, &a, 1, 0.5).await;
    let queued = t.submit(&entry(&b, &f, 2)).await.unwrap();
    let generation = store.board_generation();
    match store.publish(f.phase.id, None).await {
        Err(Error::NotPublishable { blockers, .. }) => assert_eq!(
            blockers,
            [PublishBlocker::Unfinished {
                submission: queued.id,
                team: b.id,
                state: State::Queued,
            }]
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(store.publication(f.phase.id, None).await.unwrap(), None);
    // b's entry is scored by another scorer: no exam result under the current versions.
    let j = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
    let mut old = scored(&[("score", 0.9, Better::Higher)]);
    old.scorer_version = "score 0.0.1".into();
    t.report(f.worker.id, j.attempt, &old).await.unwrap();
    assert_eq!(
        store.publish_blockers(f.phase.id).await.unwrap(),
        [PublishBlocker::NoExamResult {
            submission: queued.id,
            team: b.id,
        }]
    );
    // Once b is disqualified, a alone is published.
    t.set_team_disqualified(b.id, true, Some("test"))
        .await
        .unwrap();
    let p1 = store.publish(f.phase.id, None).await.unwrap();
    assert!(store.board_generation() > generation);
    assert_eq!(p1.version, 1);
    assert_eq!(p1.board.rows.len(), 1);
    assert_eq!(p1.board.rows[0].submission, a1.submission);
    assert!(p1.board.final_entries);
    // A later better entry changes the next publication only.
    let a2 = scored_one(t, &f, &a, 3, 0.7).await;
    assert_eq!(
        store.publication(f.phase.id, None).await.unwrap().unwrap(),
        p1
    );
    let p2 = store.publish(f.phase.id, None).await.unwrap();
    assert_eq!(p2.version, 2);
    assert_eq!(p2.board.rows[0].submission, a2.submission);
    assert_eq!(
        store
            .publication(f.phase.id, Some(1))
            .await
            .unwrap()
            .unwrap(),
        p1
    );
    assert!(
        store
            .is_published_entry(f.phase.id, a2.submission)
            .await
            .unwrap()
    );
    assert!(
        !store
            .is_published_entry(f.phase.id, a1.submission)
            .await
            .unwrap()
    );
}

async fn rescoring_is_applied_whole_or_not_at_all(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let a = team(t, &f, "a").await;
    let b = team(t, &f, "b").await;
    let ka = scored_one(t, &f, &a, 1, 0.5).await;
    let kb = scored_one(t, &f, &b, 2, 0.6).await;
    let live = |k: AttemptKey| async move {
        t.results(k.submission)
            .await
            .unwrap()
            .into_iter()
            .find(|r| !r.replaced)
            .unwrap()
    };
    let (ra, rb) = (live(ka).await, live(kb).await);
    assert_eq!(ra.run_time_s, None, "the test result.json has no stages");
    assert_eq!(
        ra.entry_sha256.as_deref(),
        Some(format!("{:064x}", 1).as_str())
    );
    let c = t.challenge(&f.challenge).await.unwrap();
    assert_eq!(ra.manifest_sha256, Some(c.manifest.sha256()));
    assert_eq!(ra.definition_sha256, Some(c.definition_sha256.clone()));
    let change = |r: &ResultRecord, k: AttemptKey, v: f64| {
        let mut report = scored(&[("score", v, Better::Higher)]);
        report.scorer_version = "score 0.2.0".into();
        report.warnings = vec!["degenerate output: test".into()];
        RescoreChange {
            result: r.id,
            attempt: k,
            before: r.figures.clone(),
            before_quiz: r.quiz_figures.clone(),
            report,
        }
    };
    let new = |changes| NewRescore {
        challenge: f.challenge.clone(),
        requested_by: None,
        reason: "scorer fix".into(),
        scope: serde_json::json!({"results": 2}),
        scorer_version: "score 0.2.0".into(),
        judge_version: "0.2.0".into(),
        changes,
    };
    let r1 = t
        .create_rescore(&new(vec![change(&ra, ka, 0.55), change(&rb, kb, 0.65)]))
        .await
        .unwrap();
    assert_eq!(r1.state, RescoreState::Pending);
    assert_eq!(r1.changes.len(), 2);
    assert_eq!(t.rescore(r1.id).await.unwrap(), r1);
    // Another rescoring replaces b's result first: r1 is then refused whole.
    let r2 = t
        .create_rescore(&new(vec![change(&rb, kb, 0.61)]))
        .await
        .unwrap();
    t.apply_rescore(r2.id, None).await.unwrap();
    assert!(matches!(
        t.apply_rescore(r1.id, None).await,
        Err(Error::Refused(WorkerRefusal::Attempt { .. }))
    ));
    assert_eq!(t.rescore(r1.id).await.unwrap().state, RescoreState::Pending);
    assert_eq!(live(ka).await.id, ra.id, "a's result untouched");
    let lb = t.leaderboard(f.phase.id).await.unwrap();
    let scores: Vec<Option<f64>> = lb.rows.iter().map(|r| r.figures[0].value).collect();
    assert_eq!(scores, [Some(0.61), Some(0.5)]);
    let b_now = live(kb).await;
    assert_eq!(b_now.rescore, Some(r2.id));
    assert_eq!(b_now.warnings, ["degenerate output: test"]);
    assert_eq!(b_now.entry_sha256, rb.entry_sha256);
    assert_eq!(t.results(kb.submission).await.unwrap().len(), 2);
    // Cancelled, it stays a record; decided once.
    let r1 = t.cancel_rescore(r1.id, None).await.unwrap();
    assert_eq!(r1.state, RescoreState::Cancelled);
    assert!(r1.decided_at.is_some());
    assert!(t.apply_rescore(r1.id, None).await.is_err());
    assert!(t.cancel_rescore(r2.id, None).await.is_err());
    // A rescoring needs a reason.
    let mut bad = new(Vec::new());
    bad.reason = " ".into();
    assert!(t.create_rescore(&bad).await.is_err());
}

async fn leaderboards_combine_only_the_current_scorer(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let a = team(t, &f, "a").await;
    let b = team(t, &f, "b").await;
    scored_one(t, &f, &a, 1, 0.5).await;
    t.submit(&entry(&b, &f, 2)).await.unwrap();
    let j = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
    let mut old = scored(&[("score", 0.9, Better::Higher)]);
    old.scorer_version = "score 0.0.1".into();
    t.report(f.worker.id, j.attempt, &old).await.unwrap();
    // Without a scorer version every result counts; with one, only its results.
    assert_eq!(t.leaderboard(f.phase.id).await.unwrap().rows.len(), 2);
    let current = t.store.clone().with_scorer_version("score 0.1.0");
    let rows = current.leaderboard(f.phase.id).await.unwrap().rows;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].team, a.id);
    let rows = current.final_leaderboard(f.phase.id).await.unwrap().rows;
    assert_eq!(rows.len(), 1);
}

/// A team and its queued submission as rows of the schema before migration 0006 (the
/// store's `create_team` and `submit` read its columns and tables).
pub(super) async fn old_submission(t: &TestStore, f: &Fixture) -> Submission {
    let team = TeamId::new();
    let id = SubmissionId::new();
    let now = crate::us(t.now());
    let mut tx = t.store.db.write().await.unwrap();
    tx.execute(
        "INSERT INTO teams (id, challenge_id, name, created_at) VALUES ($1, $2, 'a', $3)",
        crate::db::args![team, &f.challenge, now],
    )
    .await
    .unwrap();
    tx.execute(
        "INSERT INTO submissions (id, challenge_id, team_id, phase_id, entry_sha256, \
         entry_path, received_at, state, state_changed_at) \
         VALUES ($1, $2, $3, $4, $5, 'entries/a/7.zip', $6, 'queued', $6)",
        crate::db::args![
            id,
            &f.challenge,
            team,
            f.phase.id,
            format!("{:064x}", 7),
            now
        ],
    )
    .await
    .unwrap();
    tx.execute(
        "INSERT INTO state_history (submission_id, seq, from_state, to_state, at, reason) \
         VALUES ($1, 1, NULL, 'queued', $2, '{\"kind\":\"submitted\"}')",
        crate::db::args![id, now],
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    t.submission(id).await.unwrap()
}

/// Migration 0003 on records stored before it: each result gets the hashes it was
/// judged with and its run time from its `result.json`.
mod migration_0003 {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn sqlite() {
        fills_results_stored_before_it(Backend::Sqlite).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn postgres() {
        fills_results_stored_before_it(Backend::Postgres).await;
    }
}

async fn fills_results_stored_before_it(backend: Backend) {
    let t = TestStore::without_migration(backend, Some(3)).await;
    let f = fixture(&t, Quota::default(), Rule::Best).await;
    let s = old_submission(&t, &f).await;
    let j = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
    let result_json = serde_json::json!({
        "verdict": "scored",
        "stages": [
            {"stage": "prep", "wall_time_s": 1.5},
            {"stage": "quiz", "wall_time_s": 3.25},
            {"stage": "exam", "wall_time_s": 0.0}
        ]
    })
    .to_string();
    // A result as the schema before 0003 stored it.
    let mut tx = t.store.db.write().await.unwrap();
    tx.execute(
        "INSERT INTO results (id, submission_id, attempt, outcome, result_json, \
         private_json, scorer_version, judge_version, created_at) \
         VALUES ($1, $2, $3, 'scored', $4, NULL, 'score 0.1.0', '0.1.0', 0)",
        crate::db::args![
            ResultId::new(),
            s.id,
            i64::from(j.attempt.number),
            result_json
        ],
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    crate::migrate(&t.store.db, None).await.unwrap();
    let r = t.results(s.id).await.unwrap().remove(0);
    let c = t.challenge(&f.challenge).await.unwrap();
    assert_eq!(r.run_time_s, Some(5.0));
    assert_eq!(r.entry_sha256, Some(s.entry_sha256.clone()));
    assert_eq!(r.definition_sha256, Some(c.definition_sha256.clone()));
    assert_eq!(r.manifest_sha256, Some(c.manifest.sha256()));
    assert_eq!(r.warnings, Vec::<String>::new());
    assert_eq!(r.runtime_lock, None);
}

/// Migration 0005 on figures stored before it: they are the exam's (workers reported
/// only those), and the leaderboard of an exam-scored phase still ranks by them.
mod migration_0005 {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn sqlite() {
        keeps_old_figures_as_the_exams(Backend::Sqlite).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn postgres() {
        keeps_old_figures_as_the_exams(Backend::Postgres).await;
    }
}

async fn keeps_old_figures_as_the_exams(backend: Backend) {
    let t = TestStore::without_migration(backend, Some(5)).await;
    let f = fixture(&t, Quota::default(), Rule::Best).await;
    let s = old_submission(&t, &f).await;
    let j = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
    let c = t.challenge(&f.challenge).await.unwrap();
    // A result and its figures as the schema before 0005 stored them.
    let rid = ResultId::new();
    let mut tx = t.store.db.write().await.unwrap();
    tx.execute(
        "UPDATE attempts SET ended_at = 1, outcome = 'scored' WHERE submission_id = $1",
        crate::db::args![s.id],
    )
    .await
    .unwrap();
    tx.execute(
        "UPDATE submissions SET state = 'scored' WHERE id = $1",
        crate::db::args![s.id],
    )
    .await
    .unwrap();
    tx.execute(
        "INSERT INTO results (id, submission_id, attempt, outcome, result_json, \
         private_json, scorer_version, judge_version, created_at, definition_sha256, \
         manifest_sha256, entry_sha256) \
         VALUES ($1, $2, $3, 'scored', '{}', NULL, 'score 0.1.0', '0.1.0', 0, $4, $5, $6)",
        crate::db::args![
            rid,
            s.id,
            i64::from(j.attempt.number),
            c.definition_sha256.clone(),
            c.manifest.sha256(),
            s.entry_sha256.clone()
        ],
    )
    .await
    .unwrap();
    for (position, key, value, better) in [
        (0_i64, "score", 0.30000000000000004, "higher"),
        (1, "cost", 12.5, "lower"),
    ] {
        tx.execute(
            "INSERT INTO result_figures (result_id, position, key, value, better) \
             VALUES ($1, $2, $3, $4, $5)",
            crate::db::args![rid, position, key, Some(value), better],
        )
        .await
        .unwrap();
    }
    tx.commit().await.unwrap();
    crate::migrate(&t.store.db, None).await.unwrap();
    let r = t.results(s.id).await.unwrap().remove(0);
    let keys: Vec<_> = r
        .figures
        .iter()
        .map(|f| (f.key.as_str(), f.value))
        .collect();
    assert_eq!(
        keys,
        [("score", Some(0.30000000000000004)), ("cost", Some(12.5))]
    );
    assert_eq!(r.quiz_figures, Vec::<Figure>::new());
    let board = t.leaderboard(f.phase.id).await.unwrap();
    assert_eq!(board.rows.len(), 1);
    assert_eq!(board.rows[0].figures, r.figures);
    // The new keys: a split may repeat the other's keys, not its own.
    let mut tx = t.store.db.write().await.unwrap();
    tx.execute(
        "INSERT INTO result_figures (result_id, split, position, key, value, better) \
         VALUES ($1, 'quiz', 0, 'score', 0.5, 'higher')",
        crate::db::args![rid],
    )
    .await
    .unwrap();
    let e = tx
        .execute(
            "INSERT INTO result_figures (result_id, split, position, key, value, better) \
             VALUES ($1, 'quiz', 1, 'score', 0.5, 'higher')",
            crate::db::args![rid],
        )
        .await
        .unwrap_err();
    assert!(e.is_unique_violation(), "{e}");
}
