//! Taking jobs (FIFO, fair, atomic), leases and the reconciler, results accepted once.

use std::collections::HashMap;

use chrono::Duration;

use super::*;

both!(
    fifo_and_fair_across_teams,
    two_workers_race_for_one_job,
    many_workers_never_break_the_team_cap,
    lapsed_lease_errors_and_requeues,
    a_result_is_accepted_once,
    heartbeats_extend_the_lease,
    judge_errors_retry_then_stay,
    workers_and_challenge_filters,
    rescoring_keeps_the_old_result,
    listings_counts_and_positions,
    a_late_report_races_the_reconciler,
    failures_by_reason,
    a_restarted_worker_loses_only_its_own_attempts,
    a_platform_outage_extends_leases,
    only_the_runs_own_errors_use_its_attempts,
);

async fn fifo_and_fair_across_teams(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let a = team(t, &f, "a").await;
    let b = team(t, &f, "b").await;
    let a1 = t.submit(&entry(&a, &f, 1)).await.unwrap();
    t.clock.advance(Duration::seconds(1));
    let a2 = t.submit(&entry(&a, &f, 2)).await.unwrap();
    t.clock.advance(Duration::seconds(1));
    let b1 = t.submit(&entry(&b, &f, 3)).await.unwrap();
    let (w2, _) = t.create_worker("w2").await.unwrap();

    let j1 = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
    assert_eq!(j1.attempt.submission, a1.id);
    assert_eq!(j1.attempt.number, 1);
    assert_eq!(j1.lease_expires_at, t.now() + Duration::seconds(60));
    assert_eq!((j1.team, j1.entry_sha256.clone()), (a.id, a1.entry_sha256));
    // a2 is older than b1, but team a is at its running cap.
    let j2 = t.take_job(w2.id, LEASE, None).await.unwrap().unwrap();
    assert_eq!(j2.attempt.submission, b1.id);
    assert_eq!(t.take_job(w2.id, LEASE, None).await.unwrap(), None);
    t.report(f.worker.id, j1.attempt, &failed()).await.unwrap();
    let j3 = t.take_job(w2.id, LEASE, None).await.unwrap().unwrap();
    assert_eq!(j3.attempt.submission, a2.id);

    // With a cap of 2, a team with one running waits behind teams with none.
    let store = t.store.clone().with_policy(Policy {
        max_attempts: 3,
        team_running_cap: 2,
        ..Policy::default()
    });
    t.clock.advance(Duration::seconds(1));
    let a3 = t.submit(&entry(&a, &f, 4)).await.unwrap();
    t.clock.advance(Duration::seconds(1));
    let a4 = t.submit(&entry(&a, &f, 5)).await.unwrap();
    t.clock.advance(Duration::seconds(1));
    t.report(w2.id, j2.attempt, &failed()).await.unwrap();
    let b2 = t.submit(&entry(&b, &f, 6)).await.unwrap();
    // a has one running (a2), b none: b2 first although it is the newest.
    let order: Vec<_> = [
        store.take_job(w2.id, LEASE, None).await.unwrap(),
        store.take_job(w2.id, LEASE, None).await.unwrap(),
        store.take_job(w2.id, LEASE, None).await.unwrap(),
    ]
    .into_iter()
    .map(|j| j.map(|j| j.attempt.submission))
    .collect();
    assert_eq!(order, [Some(b2.id), Some(a3.id), None]);
    let _ = a4;
}

async fn two_workers_race_for_one_job(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let team = team(t, &f, "t").await;
    let mut workers = vec![f.worker.clone()];
    for i in 2..=4 {
        workers.push(t.create_worker(&format!("w{i}")).await.unwrap().0);
    }
    for round in 0..5 {
        let s = t.submit(&entry(&team, &f, round)).await.unwrap();
        let mut tasks = Vec::new();
        for w in &workers {
            let (store, id) = (t.store.clone(), w.id);
            tasks.push(tokio::spawn(async move {
                store.take_job(id, LEASE, None).await
            }));
        }
        let mut won = Vec::new();
        for (w, task) in workers.iter().zip(tasks) {
            if let Some(job) = task.await.unwrap().unwrap() {
                won.push((w.id, job));
            }
        }
        assert_eq!(won.len(), 1, "round {round}: {won:?}");
        let (w, job) = &won[0];
        assert_eq!(job.attempt.submission, s.id);
        let attempts = t.attempts(s.id).await.unwrap();
        assert_eq!(attempts.len(), 1);
        assert_eq!(attempts[0].worker, *w);
        t.report(*w, job.attempt, &failed()).await.unwrap();
    }
}

async fn many_workers_never_break_the_team_cap(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let mut teams = Vec::new();
    for name in ["x", "y", "z"] {
        let tm = team(t, &f, name).await;
        for n in 0..3 {
            t.submit(&entry(&tm, &f, n)).await.unwrap();
            t.clock.advance(Duration::milliseconds(1));
        }
        teams.push(tm);
    }
    let mut tasks = Vec::new();
    for i in 0..6 {
        let (w, _) = t.create_worker(&format!("racer{i}")).await.unwrap();
        let store = t.store.clone();
        tasks.push(tokio::spawn(async move {
            let mut got = Vec::new();
            while let Some(j) = store.take_job(w.id, LEASE, None).await.unwrap() {
                got.push(j);
            }
            got
        }));
    }
    let mut per_team: HashMap<TeamId, usize> = HashMap::new();
    let mut total = 0;
    for task in tasks {
        for j in task.await.unwrap() {
            *per_team.entry(j.team).or_default() += 1;
            total += 1;
        }
    }
    // One running per team (the cap), each team's oldest.
    assert_eq!(total, 3);
    assert!(per_team.values().all(|&n| n == 1), "{per_team:?}");
    for tm in &teams {
        let subs = t.submissions(tm.id, f.phase.id).await.unwrap();
        let states: Vec<_> = subs.iter().map(|s| s.state).collect();
        assert_eq!(states, [State::Running, State::Queued, State::Queued]);
    }
}

async fn lapsed_lease_errors_and_requeues(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let team = team(t, &f, "t").await;
    let s = t.submit(&entry(&team, &f, 1)).await.unwrap();
    let j1 = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
    t.clock.advance(Duration::seconds(60));
    // Not lapsed until after its deadline.
    assert_eq!(t.reconcile().await.unwrap(), Reconciled::default());
    t.clock.advance(Duration::seconds(1));
    let r = t.reconcile().await.unwrap();
    assert_eq!(r.lost, [j1.attempt]);
    assert_eq!(r.requeued, [s.id]);
    assert!(r.gave_up.is_empty());
    let sub = t.submission(s.id).await.unwrap();
    assert_eq!((sub.state, sub.attempt), (State::Queued, 1));
    let h = t.history(s.id).await.unwrap();
    assert_eq!(
        h[2..]
            .iter()
            .map(|e| (e.from, e.to, e.reason.clone()))
            .collect::<Vec<_>>(),
        [
            (
                Some(State::Running),
                State::Error,
                Reason::WorkerLost {
                    worker: f.worker.id,
                    attempt: 1
                }
            ),
            (
                Some(State::Error),
                State::Queued,
                Reason::Retry { next_attempt: 2 }
            ),
        ]
    );
    // The lost worker's late heartbeat and report are refused.
    assert!(matches!(
        t.heartbeat(f.worker.id, j1.attempt, LEASE).await,
        Err(Error::Refused(WorkerRefusal::Attempt { .. }))
    ));
    let (w2, _) = t.create_worker("w2").await.unwrap();
    let j2 = t.take_job(w2.id, LEASE, None).await.unwrap().unwrap();
    assert_eq!(j2.attempt.number, 2);
    match t
        .report(
            f.worker.id,
            j1.attempt,
            &scored(&[("score", 1.0, Better::Higher)]),
        )
        .await
    {
        Err(Error::Refused(WorkerRefusal::Attempt { why, .. })) => {
            assert!(why.contains("already ended"), "{why}")
        }
        other => panic!("{other:?}"),
    }
    t.report(
        w2.id,
        j2.attempt,
        &scored(&[("score", 0.5, Better::Higher)]),
    )
    .await
    .unwrap();
    let attempts = t.attempts(s.id).await.unwrap();
    assert_eq!(
        attempts.iter().map(|a| a.outcome).collect::<Vec<_>>(),
        [Some(Outcome::Error), Some(Outcome::Scored)]
    );
    assert_eq!(t.submission(s.id).await.unwrap().state, State::Scored);
}

async fn a_result_is_accepted_once(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let team = team(t, &f, "t").await;
    let s = t.submit(&entry(&team, &f, 1)).await.unwrap();
    let j = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
    let (w2, _) = t.create_worker("w2").await.unwrap();
    let report = scored(&[("score", 0.75, Better::Higher)]);
    // Not another worker's to report.
    assert!(matches!(
        t.report(w2.id, j.attempt, &report).await,
        Err(Error::Refused(WorkerRefusal::Attempt { .. }))
    ));
    // Nor an attempt that does not exist.
    let wrong = AttemptKey {
        submission: s.id,
        number: 2,
    };
    assert!(matches!(
        t.report(f.worker.id, wrong, &report).await,
        Err(Error::Refused(WorkerRefusal::Attempt { .. }))
    ));
    // Invalid reports change nothing.
    let mut bad = report.clone();
    bad.result_json = Some("{not json".into());
    assert!(matches!(
        t.report(f.worker.id, j.attempt, &bad).await,
        Err(Error::Invalid { .. })
    ));
    bad = report.clone();
    bad.figures[0].value = Some(f64::NAN);
    assert!(matches!(
        t.report(f.worker.id, j.attempt, &bad).await,
        Err(Error::Invalid { .. })
    ));
    bad = report.clone();
    bad.figures.clear();
    assert!(matches!(
        t.report(f.worker.id, j.attempt, &bad).await,
        Err(Error::Invalid { .. })
    ));
    // Reported after the lease lapsed, before the reconciler: still accepted.
    t.clock.advance(Duration::minutes(5));
    // Two reports of the same attempt at once: exactly one is accepted.
    let (s1, s2) = (t.store.clone(), t.store.clone());
    let (r1, r2) = (report.clone(), failed());
    let wid = f.worker.id;
    let key = j.attempt;
    let (a, b) = tokio::join!(
        tokio::spawn(async move { s1.report(wid, key, &r1).await }),
        tokio::spawn(async move { s2.report(wid, key, &r2).await }),
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    assert!(a.is_ok() != b.is_ok(), "{a:?} {b:?}");
    let refused = if a.is_ok() { b } else { a };
    assert!(matches!(
        refused,
        Err(Error::Refused(WorkerRefusal::Attempt { .. }))
    ));
    assert_eq!(t.results(s.id).await.unwrap().len(), 1);
    // And again, later.
    match t.report(f.worker.id, j.attempt, &report).await {
        Err(Error::Refused(WorkerRefusal::Attempt { why, .. })) => {
            assert!(why.contains("accepted once"), "{why}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(t.reconcile().await.unwrap(), Reconciled::default());
    // The store's unique index refuses a second live result whatever the caller does.
    let mut tx = t.store.db.write().await.unwrap();
    let e = tx
        .execute(
            "INSERT INTO results (id, submission_id, attempt, outcome, result_json, \
             scorer_version, judge_version, created_at) \
             VALUES ($1, $2, 1, 'failed', '{}', 'x', 'y', 0)",
            crate::db::args![ResultId::new(), s.id],
        )
        .await
        .unwrap_err();
    assert!(e.is_unique_violation(), "{e}");
}

async fn heartbeats_extend_the_lease(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let team = team(t, &f, "t").await;
    t.submit(&entry(&team, &f, 1)).await.unwrap();
    let start = t.now();
    let j = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
    t.clock.advance(Duration::seconds(50));
    let until = t.heartbeat(f.worker.id, j.attempt, LEASE).await.unwrap();
    assert_eq!(until, start + Duration::seconds(110));
    t.clock.set(start + Duration::seconds(100));
    assert!(t.reconcile().await.unwrap().lost.is_empty());
    t.clock.set(start + Duration::seconds(111));
    assert_eq!(t.reconcile().await.unwrap().lost, [j.attempt]);
    let w = t.worker(f.worker.id).await.unwrap();
    assert_eq!(w.last_seen_at, Some(start + Duration::seconds(50)));
}

async fn judge_errors_retry_then_stay(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let team = team(t, &f, "t").await;
    let s = t.submit(&entry(&team, &f, 1)).await.unwrap();
    // Attempt 1: the judge fails; attempt 2: the worker is lost; attempt 3: judge again.
    let j = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
    t.report(f.worker.id, j.attempt, &judge_error())
        .await
        .unwrap();
    assert_eq!(t.submission(s.id).await.unwrap().state, State::Queued);
    let j = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
    assert_eq!(j.attempt.number, 2);
    t.clock.advance(Duration::minutes(2));
    assert_eq!(t.reconcile().await.unwrap().requeued, [s.id]);
    // Another worker: a third error of w1's own in a row would disable it.
    let (w2, _) = t.create_worker("w2").await.unwrap();
    let j = t.take_job(w2.id, LEASE, None).await.unwrap().unwrap();
    assert_eq!(j.attempt.number, 3);
    t.clock.advance(Duration::minutes(2));
    let r = t.reconcile().await.unwrap();
    assert_eq!((r.requeued.len(), r.gave_up.clone()), (0, vec![s.id]));
    assert_eq!(t.submission(s.id).await.unwrap().state, State::Error);
    assert_eq!(t.take_job(f.worker.id, LEASE, None).await.unwrap(), None);
    let h = t.history(s.id).await.unwrap();
    assert!(matches!(
        &h[2].reason,
        Reason::JudgeError { message, attempt: 1, .. } if message == "disk full"
    ));
    // An organiser may queue it once more.
    t.requeue(s.id, None, "data fixed").await.unwrap();
    let j = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
    assert_eq!(j.attempt.number, 4);
    assert_eq!(t.results(s.id).await.unwrap().len(), 1);
}

async fn workers_and_challenge_filters(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let team = team(t, &f, "t").await;
    t.submit(&entry(&team, &f, 1)).await.unwrap();
    let other = ["cpsc2021".to_owned()];
    assert_eq!(
        t.take_job(f.worker.id, LEASE, Some(&other)).await.unwrap(),
        None
    );
    assert_eq!(
        t.take_job(f.worker.id, LEASE, Some(&[])).await.unwrap(),
        None
    );
    t.set_worker_disabled(f.worker.id, true).await.unwrap();
    assert!(matches!(
        t.take_job(f.worker.id, LEASE, None).await,
        Err(Error::Refused(WorkerRefusal::Disabled(_)))
    ));
    assert!(matches!(
        t.take_job(WorkerId::new(), LEASE, None).await,
        Err(Error::NotFound { .. })
    ));
    t.set_worker_disabled(f.worker.id, false).await.unwrap();
    let mine = [f.challenge.clone(), "cpsc2021".to_owned()];
    assert!(
        t.take_job(f.worker.id, LEASE, Some(&mine))
            .await
            .unwrap()
            .is_some()
    );
}

async fn rescoring_keeps_the_old_result(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let team = team(t, &f, "t").await;
    let s = t.submit(&entry(&team, &f, 1)).await.unwrap();
    let j = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
    t.report(
        f.worker.id,
        j.attempt,
        &scored(&[("score", 0.5, Better::Higher)]),
    )
    .await
    .unwrap();
    let mut new = scored(&[("score", 0.625, Better::Higher)]);
    new.scorer_version = "score 0.2.0".into();
    t.replace_result(j.attempt, &new).await.unwrap();
    let rs = t.results(s.id).await.unwrap();
    assert_eq!(rs.len(), 2);
    assert!(rs[0].replaced && !rs[1].replaced);
    assert_eq!(rs[1].figures[0].value, Some(0.625));
    assert_eq!(rs[1].scorer_version, "score 0.2.0");
    assert!(matches!(
        t.replace_result(j.attempt, &failed()).await,
        Err(Error::Invalid { .. })
    ));
    let lb = t.leaderboard(f.phase.id).await.unwrap();
    assert_eq!(lb.rows[0].figures[0].value, Some(0.625));
    // Selection: only a scored submission, one per team and phase.
    t.select(s.id).await.unwrap();
    assert!(t.submission(s.id).await.unwrap().selected);
    let q = t.submit(&entry(&team, &f, 2)).await.unwrap();
    assert!(matches!(t.select(q.id).await, Err(Error::Invalid { .. })));
}

async fn listings_counts_and_positions(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let a = team(t, &f, "a").await;
    let b = team(t, &f, "b").await;
    let mut ids = Vec::new();
    for n in 0..5 {
        let tm = if n % 2 == 0 { &a } else { &b };
        ids.push(t.submit(&entry(tm, &f, n)).await.unwrap().id);
        if n != 3 {
            // Two at the same microsecond: the id breaks the tie.
            t.clock.advance(Duration::seconds(1));
        }
    }
    let j = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
    assert_eq!(j.attempt.submission, ids[0]);
    assert_eq!(t.queue_position(ids[0]).await.unwrap(), None);
    let mut positions = [ids[1], ids[2], ids[3], ids[4]];
    if ids[3] > ids[4] {
        positions.swap(2, 3);
    }
    for (i, id) in positions.iter().enumerate() {
        assert_eq!(t.queue_position(*id).await.unwrap(), Some(i as u32 + 1));
    }
    let counts = t.state_counts(Some(&f.challenge)).await.unwrap();
    assert_eq!(
        counts,
        [
            (State::Queued, 4),
            (State::Running, 1),
            (State::Scored, 0),
            (State::Failed, 0),
            (State::Error, 0),
            (State::Withdrawn, 0),
        ]
    );
    assert_eq!(
        t.state_counts(Some("other")).await.unwrap()[0],
        (State::Queued, 0)
    );
    assert_eq!(t.state_counts(None).await.unwrap()[0], (State::Queued, 4));
    // Pages of two, newest first.
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let page = t
            .challenge_submissions(&f.challenge, after, 2)
            .await
            .unwrap();
        if page.is_empty() {
            break;
        }
        assert!(page.len() <= 2);
        after = page.last().map(|s| s.id);
        seen.extend(page.iter().map(|s| s.id));
    }
    let mut newest_first = ids.clone();
    newest_first.reverse();
    if ids[3] > ids[4] {
        newest_first.swap(0, 1);
    }
    assert_eq!(seen, newest_first);
    let unfinished: Vec<_> = t
        .unfinished(f.phase.id)
        .await
        .unwrap()
        .iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(unfinished[0], ids[0]);
    assert_eq!(unfinished[1..], positions);
    t.report(f.worker.id, j.attempt, &failed()).await.unwrap();
    assert_eq!(t.unfinished(f.phase.id).await.unwrap().len(), 4);
}

async fn a_late_report_races_the_reconciler(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let team = team(t, &f, "t").await;
    for n in 0..6 {
        let s = t.submit(&entry(&team, &f, n)).await.unwrap();
        let j = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
        t.clock.advance(Duration::minutes(2));
        let (s1, s2) = (t.store.clone(), t.store.clone());
        let (wid, key) = (f.worker.id, j.attempt);
        let (reported, reconciled) = tokio::join!(
            tokio::spawn(async move {
                s1.report(wid, key, &scored(&[("score", 0.5, Better::Higher)]))
                    .await
            }),
            tokio::spawn(async move { s2.reconcile().await }),
        );
        let (reported, reconciled) = (reported.unwrap(), reconciled.unwrap().unwrap());
        // Either the report came first and the reconciler found nothing, or the
        // reconciler ended the attempt and the report was refused.
        let sub = t.submission(s.id).await.unwrap();
        match reported {
            Ok(_) => {
                assert!(reconciled.lost.is_empty(), "round {n}");
                assert_eq!(sub.state, State::Scored);
            }
            Err(Error::Refused(WorkerRefusal::Attempt { .. })) => {
                assert_eq!(reconciled.lost, [key], "round {n}");
                assert_eq!(sub.state, State::Queued);
                assert!(t.results(s.id).await.unwrap().is_empty());
                // Clear the queue for the next round.
                let j = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
                t.report(f.worker.id, j.attempt, &failed()).await.unwrap();
            }
            Err(e) => panic!("round {n}: {e}"),
        }
    }
}

async fn failures_by_reason(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let a = team(t, &f, "a").await;
    let b = team(t, &f, "b").await;
    let c = team(t, &f, "c").await;
    for (n, team) in [(1, &a), (2, &b), (3, &c)] {
        t.submit(&entry(team, &f, n)).await.unwrap();
    }
    let run = r#"{"verdict":"failed","stages":[{"stage":"prep","status":"passed"},
        {"stage":"quiz","status":"failed","reason":{"kind":"run","record":"r1"}}]}"#;
    // One failed run, one failed result without stages, one judge error (retried).
    let j = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
    let mut report = failed();
    report.result_json = Some(run.into());
    t.report(f.worker.id, j.attempt, &report).await.unwrap();
    let j = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
    t.report(f.worker.id, j.attempt, &failed()).await.unwrap();
    let j = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
    t.report(f.worker.id, j.attempt, &judge_error())
        .await
        .unwrap();
    let counts: Vec<_> = t
        .failure_counts()
        .await
        .unwrap()
        .into_iter()
        .map(|c| (c.state, c.kind, c.count))
        .collect();
    assert_eq!(
        counts,
        [
            (State::Error, "judge_error".to_owned(), 1),
            (State::Failed, "run".to_owned(), 1),
            (State::Failed, "unknown".to_owned(), 1),
        ]
    );
}

async fn a_restarted_worker_loses_only_its_own_attempts(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let team_a = team(t, &f, "a").await;
    let team_b = team(t, &f, "b").await;
    let (remote, _) = t.create_worker("remote").await.unwrap();
    let mine = t.submit(&entry(&team_a, &f, 1)).await.unwrap();
    t.clock.advance(Duration::seconds(1));
    let theirs = t.submit(&entry(&team_b, &f, 2)).await.unwrap();
    let j = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
    assert_eq!(j.attempt.submission, mine.id);
    let k = t.take_job(remote.id, LEASE, None).await.unwrap().unwrap();
    assert_eq!(k.attempt.submission, theirs.id);
    // Both leases are fresh: the reconciler sees nothing lost.
    assert_eq!(t.reconcile().await.unwrap(), Reconciled::default());
    // The local worker's process started again: its attempt ends now, the remote
    // worker's goes on.
    let r = t.reclaim_worker(f.worker.id).await.unwrap();
    assert_eq!(r.lost, [j.attempt]);
    assert_eq!(r.requeued, [mine.id]);
    assert!(r.gave_up.is_empty());
    assert_eq!(t.submission(mine.id).await.unwrap().state, State::Queued);
    assert_eq!(t.submission(theirs.id).await.unwrap().state, State::Running);
    let h = t.history(mine.id).await.unwrap();
    let states: Vec<State> = h.iter().map(|e| e.to).collect();
    assert_eq!(
        states,
        [State::Queued, State::Running, State::Error, State::Queued]
    );
    assert_eq!(
        h[2].reason,
        Reason::WorkerRestarted {
            worker: f.worker.id,
            attempt: 1
        }
    );
    // Not charged: the queued retry holds its one place, the lost attempt adds none.
    let q = t.quota(f.phase.id, team_a.id).await.unwrap();
    assert_eq!(q.used_total, 1);
    // The ended attempt's late report is refused; the remote one's is accepted.
    let e = t
        .report(
            f.worker.id,
            j.attempt,
            &scored(&[("score", 0.5, Better::Higher)]),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(e, Error::Refused(WorkerRefusal::Attempt { .. })),
        "{e}"
    );
    t.report(
        remote.id,
        k.attempt,
        &scored(&[("score", 0.5, Better::Higher)]),
    )
    .await
    .unwrap();
    // A second reclaim finds nothing; the retry is the next job, attempt 2.
    assert_eq!(
        t.reclaim_worker(f.worker.id).await.unwrap(),
        Reconciled::default()
    );
    let j = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
    assert_eq!(
        j.attempt,
        AttemptKey {
            submission: mine.id,
            number: 2
        }
    );
}

/// After the platform was failing, every running lease is moved to one lease from now:
/// a lease that lapsed during the outage is not ended, a later one is not shortened,
/// ended attempts are left alone, and a worker that is really gone lapses one lease on.
async fn a_platform_outage_extends_leases(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let team = team(t, &f, "t").await;
    t.submit(&entry(&team, &f, 1)).await.unwrap();
    let start = t.now();
    let j = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
    // Down for longer than the lease; back now.
    t.clock.advance(Duration::seconds(200));
    assert_eq!(t.extend_leases(LEASE).await.unwrap(), 1);
    assert!(t.reconcile().await.unwrap().lost.is_empty());
    // A shorter extension does not shorten it.
    assert_eq!(
        t.extend_leases(std::time::Duration::from_secs(1))
            .await
            .unwrap(),
        0
    );
    t.clock.set(start + Duration::seconds(259));
    assert!(t.reconcile().await.unwrap().lost.is_empty());
    t.clock.set(start + Duration::seconds(261));
    assert_eq!(t.reconcile().await.unwrap().lost, [j.attempt]);
    // Ended attempts stay ended.
    assert_eq!(t.extend_leases(LEASE).await.unwrap(), 0);
}

/// Attempts ended by a restart, a disabled worker or a stop are not charged: only the
/// worker's own errors (a judge fault, a lapsed lease) count toward `max_attempts`; all
/// of them together stop at `max_attempts_total`.
async fn only_the_runs_own_errors_use_its_attempts(t: &TestStore) {
    let store = t.store.clone().with_policy(Policy {
        max_attempts: 2,
        max_attempts_total: 6,
        worker_error_limit: 0,
        ..Policy::default()
    });
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let team = team(t, &f, "t").await;
    let w = f.worker.id;
    let s = store.submit(&entry(&team, &f, 1)).await.unwrap();
    let sid = s.id;
    let take = |n: u32| {
        let store = store.clone();
        async move {
            let j = store.take_job(w, LEASE, None).await.unwrap().unwrap();
            assert_eq!((j.attempt.submission, j.attempt.number), (sid, n));
            j
        }
    };
    let state = || async { store.submission(sid).await.unwrap().state };
    // 1: the worker's process started again; 2: the worker was disabled (and enabled
    // again); 3: the run was stopped (a shutdown). None is charged.
    take(1).await;
    assert_eq!(store.reclaim_worker(w).await.unwrap().requeued, [s.id]);
    take(2).await;
    let (_, r) = store.disable_worker(w, None, "maintenance").await.unwrap();
    assert_eq!(r.requeued, [s.id]);
    store.enable_worker(w, None, "back").await.unwrap();
    let j = take(3).await;
    store
        .report_blamed(w, j.attempt, &judge_error(), Blame::Elsewhere)
        .await
        .unwrap();
    assert_eq!(state().await, State::Queued);
    // 4: a lapsed lease, the worker's: the first charged attempt.
    take(4).await;
    t.clock.advance(Duration::minutes(2));
    assert_eq!(store.reconcile().await.unwrap().requeued, [s.id]);
    // 5: a judge error, the worker's: the second and last charged attempt.
    let j = take(5).await;
    store.report(w, j.attempt, &judge_error()).await.unwrap();
    assert_eq!(state().await, State::Error);
    assert_eq!(store.take_job(w, LEASE, None).await.unwrap(), None);
    let h = store.history(s.id).await.unwrap();
    let retries = h
        .iter()
        .filter(|e| matches!(e.reason, Reason::Retry { .. }))
        .count();
    assert_eq!(retries, 4);

    // Endings that are never charged still stop at `max_attempts_total`.
    let s2 = store.submit(&entry(&team, &f, 2)).await.unwrap();
    for n in 1..=6 {
        let j = store.take_job(w, LEASE, None).await.unwrap().unwrap();
        assert_eq!((j.attempt.submission, j.attempt.number), (s2.id, n));
        let r = store.reclaim_worker(w).await.unwrap();
        if n < 6 {
            assert_eq!(r.requeued, [s2.id]);
        } else {
            assert_eq!(r.gave_up, [s2.id]);
        }
    }
    assert_eq!(store.submission(s2.id).await.unwrap().state, State::Error);
}
