//! Per-team rules (deadline extensions, quota overrides) and baseline teams, on both
//! backends.

use chrono::Duration;

use super::*;

both!(
    an_extension_lets_one_team_upload_after_the_close,
    extensions_refuse_bad_input_and_keep_their_history,
    a_quota_override_raises_and_lowers_one_teams_limits,
    a_baseline_team_is_shown_with_its_mark,
    team_rule_histories_are_append_only,
    an_open_extension_holds_back_publishing,
);

fn closed_at(e: Error) -> (chrono::DateTime<chrono::Utc>, bool) {
    match e {
        Error::PhaseClosed {
            closes, extended, ..
        } => (closes, extended),
        other => panic!("expected PhaseClosed, got {other:?}"),
    }
}

async fn an_extension_lets_one_team_upload_after_the_close(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let a = team(t, &f, "a").await;
    let b = team(t, &f, "b").await;
    let organiser = t.create_user("org", Role::Organiser, None).await.unwrap();
    // One entry each while open; b's is still queued when the phase closes.
    t.submit(&entry(&a, &f, 1)).await.unwrap();
    let queued = t.submit(&entry(&b, &f, 2)).await.unwrap();
    let extended = f.phase.closes + Duration::hours(6);
    let ext = t
        .grant_extension(
            f.phase.id,
            b.id,
            extended,
            "  power cut at the lab ",
            Some(organiser.id),
        )
        .await
        .unwrap();
    assert_eq!(ext.closes, extended);
    assert_eq!(ext.reason, "power cut at the lab");
    assert_eq!(ext.set_by, Some(organiser.id));
    assert_eq!(ext.set_at, t.now());
    assert_eq!(
        t.extension(f.phase.id, b.id).await.unwrap(),
        Some(ext.clone())
    );
    assert_eq!(t.extension(f.phase.id, a.id).await.unwrap(), None);
    assert_eq!(
        t.extensions(f.phase.id).await.unwrap(),
        std::slice::from_ref(&ext)
    );

    t.clock.set(f.phase.closes + Duration::hours(1));
    // a: the phase's close.
    let (closes, ext_a) = closed_at(t.submit(&entry(&a, &f, 3)).await.unwrap_err());
    assert_eq!((closes, ext_a), (f.phase.closes, false));
    // b: accepted, stamped after the phase's close.
    let late = t.submit(&entry(&b, &f, 4)).await.unwrap();
    assert!(late.received_at >= f.phase.closes);
    // What was accepted is judged to the end after the close, late or not.
    let j = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
    t.report(
        f.worker.id,
        j.attempt,
        &scored(&[("score", 0.5, Better::Higher)]),
    )
    .await
    .unwrap();
    assert_eq!(
        t.submission(j.attempt.submission).await.unwrap().state,
        State::Scored
    );
    let _ = queued;

    // After b's own close: refused, with b's close in the refusal.
    t.clock.set(extended);
    let e = t.submit(&entry(&b, &f, 5)).await.unwrap_err();
    assert!(e.to_string().contains("of your team (extended)"), "{e}");
    assert_eq!(closed_at(e), (extended, true));

    // Revoked: the phase's close holds for b again.
    t.clock.set(f.phase.closes + Duration::hours(2));
    t.revoke_extension(f.phase.id, b.id, None, Some(organiser.id))
        .await
        .unwrap();
    assert_eq!(t.extension(f.phase.id, b.id).await.unwrap(), None);
    assert!(t.extensions(f.phase.id).await.unwrap().is_empty());
    assert_eq!(
        closed_at(t.submit(&entry(&b, &f, 6)).await.unwrap_err()),
        (f.phase.closes, false)
    );
    // Revoking what is not in force names it.
    assert!(matches!(
        t.revoke_extension(f.phase.id, b.id, None, None).await,
        Err(Error::NotFound { .. })
    ));
}

async fn extensions_refuse_bad_input_and_keep_their_history(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let a = team(t, &f, "a").await;
    let later = f.phase.closes + Duration::days(1);
    for reason in ["", "   ", &"x".repeat(MAX_REASON_CHARS + 1)] {
        assert!(
            matches!(
                t.grant_extension(f.phase.id, a.id, later, reason, None)
                    .await,
                Err(Error::Invalid {
                    field: "reason",
                    ..
                })
            ),
            "{reason:?}"
        );
    }
    for early in [f.phase.closes, f.phase.closes - Duration::hours(1)] {
        assert!(matches!(
            t.grant_extension(f.phase.id, a.id, early, "why", None)
                .await,
            Err(Error::Invalid {
                field: "closes",
                ..
            })
        ));
    }
    // A team of another challenge has no rules in this phase.
    let data = tempfile::tempdir().unwrap();
    write(data.path(), "x.txt", "x");
    let other = t
        .create_challenge(
            "other",
            "Other",
            Definition::Builtin("cinc2017".into()),
            data.path(),
        )
        .await
        .unwrap();
    let u = t.create_user("z", Role::Participant, None).await.unwrap();
    let stranger = t.create_team(&other.id, "z", u.id).await.unwrap();
    assert!(matches!(
        t.grant_extension(f.phase.id, stranger.id, later, "why", None)
            .await,
        Err(Error::NotFound { what: "team", .. })
    ));
    assert!(matches!(
        t.grant_extension(PhaseId(uuid::Uuid::now_v7()), a.id, later, "why", None)
            .await,
        Err(Error::NotFound { what: "phase", .. })
    ));
    // Nothing was recorded by the refusals; then a grant, a change and a revocation.
    assert!(
        t.extension_history(f.phase.id, a.id)
            .await
            .unwrap()
            .is_empty()
    );
    t.grant_extension(f.phase.id, a.id, later, "ill", None)
        .await
        .unwrap();
    t.clock.advance(Duration::minutes(1));
    let changed = t
        .grant_extension(
            f.phase.id,
            a.id,
            later + Duration::days(1),
            "still ill",
            None,
        )
        .await
        .unwrap();
    t.clock.advance(Duration::minutes(1));
    t.revoke_extension(f.phase.id, a.id, Some("recovered"), None)
        .await
        .unwrap();
    t.clock.advance(Duration::minutes(1));
    let again = t
        .grant_extension(f.phase.id, a.id, later, "relapse", None)
        .await
        .unwrap();
    let h = t.extension_history(f.phase.id, a.id).await.unwrap();
    assert_eq!(h.iter().map(|c| c.seq).collect::<Vec<_>>(), [1, 2, 3, 4]);
    assert_eq!(h[1].value.as_ref(), Some(&changed));
    assert_eq!(h[2].value, None);
    assert_eq!(h[2].reason.as_deref(), Some("recovered"));
    assert_eq!(h[3].value.as_ref(), Some(&again));
    assert_eq!(t.extension(f.phase.id, a.id).await.unwrap(), Some(again));

    // The selection deadline bounds an extension.
    let now = t.now();
    let p = t
        .create_phase(
            &f.challenge,
            &NewPhase {
                name: "final".into(),
                opens: now,
                closes: now + Duration::days(1),
                selection_closes: Some(now + Duration::days(2)),
                quota: Quota::default(),
                scored_split: Split::Exam,
                show_exam: false,
                rule: Rule::Best,
            },
        )
        .await
        .unwrap();
    assert!(matches!(
        t.grant_extension(p.id, a.id, now + Duration::days(3), "why", None)
            .await,
        Err(Error::Invalid {
            field: "closes",
            ..
        })
    ));
    t.grant_extension(p.id, a.id, now + Duration::days(2), "why", None)
        .await
        .unwrap();
}

async fn a_quota_override_raises_and_lowers_one_teams_limits(t: &TestStore) {
    let quota = Quota {
        total: Some(2),
        per_day: Some(5),
        max_concurrent: None,
    };
    let f = fixture(t, quota, Rule::Best).await;
    let a = team(t, &f, "a").await;
    let b = team(t, &f, "b").await;
    for n in 0..2 {
        t.submit(&entry(&a, &f, n)).await.unwrap();
        t.submit(&entry(&b, &f, 10 + n)).await.unwrap();
    }
    assert!(matches!(
        t.submit(&entry(&a, &f, 2)).await,
        Err(Error::QuotaSpent(s)) if s.spent == [QuotaLimit::Total] && !s.overridden
    ));
    // Raised for a (total only; the daily limit stays the phase's).
    let o = t
        .set_quota_override(
            f.phase.id,
            a.id,
            Quota {
                total: Some(4),
                ..Quota::default()
            },
            "a late start",
            None,
        )
        .await
        .unwrap();
    assert_eq!(
        o.apply(quota),
        Quota {
            total: Some(4),
            ..quota
        }
    );
    let s = t.quota(f.phase.id, a.id).await.unwrap();
    assert!(s.overridden);
    assert_eq!((s.quota.total, s.quota.per_day), (Some(4), Some(5)));
    assert_eq!(s.total_left, Some(2));
    assert!(s.spent.is_empty());
    t.submit(&entry(&a, &f, 3)).await.unwrap();
    // b's quota is the phase's.
    let sb = t.quota(f.phase.id, b.id).await.unwrap();
    assert!(!sb.overridden);
    assert_eq!(sb.total_left, Some(0));
    assert!(matches!(
        t.submit(&entry(&b, &f, 12)).await,
        Err(Error::QuotaSpent(_))
    ));
    // Lowered: a concurrency cap of 1 while three are queued.
    t.set_quota_override(
        f.phase.id,
        a.id,
        Quota {
            total: Some(4),
            max_concurrent: Some(1),
            ..Quota::default()
        },
        "fair queue",
        None,
    )
    .await
    .unwrap();
    match t.submit(&entry(&a, &f, 4)).await {
        Err(Error::QuotaSpent(s)) => {
            assert!(s.overridden);
            assert_eq!(s.quota.max_concurrent, Some(1));
            assert_eq!(s.spent, [QuotaLimit::MaxConcurrent]);
            assert!(
                s.describe()
                    .contains("3 of 1 submissions queued or running")
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(t.quota_overrides(f.phase.id).await.unwrap().len(), 1);
    // Removed: the phase's total again (3 used of 2).
    t.remove_quota_override(f.phase.id, a.id, None, None)
        .await
        .unwrap();
    let s = t.quota(f.phase.id, a.id).await.unwrap();
    assert!(!s.overridden);
    assert_eq!((s.quota, s.total_left), (quota, Some(0)));
    assert!(t.quota_overrides(f.phase.id).await.unwrap().is_empty());
    assert_eq!(
        t.quota_override_history(f.phase.id, a.id)
            .await
            .unwrap()
            .len(),
        3
    );
    // Bad input.
    assert!(matches!(
        t.set_quota_override(f.phase.id, a.id, Quota::default(), "why", None)
            .await,
        Err(Error::Invalid { field: "quota", .. })
    ));
    assert!(matches!(
        t.set_quota_override(f.phase.id, a.id, quota, " ", None)
            .await,
        Err(Error::Invalid {
            field: "reason",
            ..
        })
    ));
    assert!(matches!(
        t.remove_quota_override(f.phase.id, a.id, None, None).await,
        Err(Error::NotFound { .. })
    ));
}

async fn a_baseline_team_is_shown_with_its_mark(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let a = team(t, &f, "a").await;
    let base = team(t, &f, "trivial").await;
    // Made by an organiser: hidden, as organisers' teams are.
    t.set_team_hidden(base.id, true, Some("an organisers' team"))
        .await
        .unwrap();
    for (tm, n, v) in [(&a, 1, 0.7), (&base, 2, 0.4)] {
        t.submit(&entry(tm, &f, n)).await.unwrap();
        let j = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
        t.report(
            f.worker.id,
            j.attempt,
            &scored(&[("score", v, Better::Higher)]),
        )
        .await
        .unwrap();
    }
    assert_eq!(t.leaderboard(f.phase.id).await.unwrap().rows.len(), 1);
    let g = t.board_generation();
    t.set_team_baseline(base.id, true).await.unwrap();
    assert!(t.board_generation() > g);
    let team = t.team(base.id).await.unwrap();
    assert!(team.baseline && !team.hidden && team.reason.is_none());
    for board in [
        t.leaderboard(f.phase.id).await.unwrap(),
        t.final_leaderboard(f.phase.id).await.unwrap(),
        t.publish(f.phase.id, None).await.unwrap().board,
    ] {
        let marks: Vec<_> = board
            .rows
            .iter()
            .map(|r| (r.team_name.as_str(), r.rank, r.baseline))
            .collect();
        assert_eq!(marks, [("a", 1, false), ("trivial", 2, true)]);
    }
    // The publication keeps the mark when read back.
    let p = t.publication(f.phase.id, None).await.unwrap().unwrap();
    assert!(p.board.rows[1].baseline);
    // Hidden again: gone, though still a baseline; unmarked: a plain team.
    t.set_team_hidden(base.id, true, Some("withdrawn baseline"))
        .await
        .unwrap();
    assert_eq!(t.leaderboard(f.phase.id).await.unwrap().rows.len(), 1);
    t.set_team_hidden(base.id, false, None).await.unwrap();
    t.set_team_baseline(base.id, false).await.unwrap();
    let rows = t.leaderboard(f.phase.id).await.unwrap().rows;
    assert!(rows.iter().all(|r| !r.baseline) && rows.len() == 2);
    assert!(matches!(
        t.set_team_baseline(TeamId(uuid::Uuid::now_v7()), true)
            .await,
        Err(Error::NotFound { .. })
    ));
}

async fn team_rule_histories_are_append_only(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let a = team(t, &f, "a").await;
    t.grant_extension(
        f.phase.id,
        a.id,
        f.phase.closes + Duration::days(1),
        "why",
        None,
    )
    .await
    .unwrap();
    t.set_quota_override(
        f.phase.id,
        a.id,
        Quota {
            total: Some(1),
            ..Quota::default()
        },
        "why",
        None,
    )
    .await
    .unwrap();
    for sql in [
        "UPDATE deadline_extensions SET reason = 'other'",
        "DELETE FROM deadline_extensions",
        "UPDATE quota_overrides SET quota_total = 9",
        "DELETE FROM quota_overrides",
    ] {
        let mut tx = t.db.write().await.unwrap();
        let r = tx.execute(sql, crate::db::args![]).await;
        tx.finish(r.map(|_| ())).await.expect_err(sql);
    }
    assert!(t.extension(f.phase.id, a.id).await.unwrap().is_some());
    assert!(t.quota_override(f.phase.id, a.id).await.unwrap().is_some());
}

/// Migration 0006 on records stored before it: teams are not baselines, and a team's
/// quota and close are the phase's.
mod migration_0006 {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn sqlite() {
        teams_before_it_have_no_rules(Backend::Sqlite).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn postgres() {
        teams_before_it_have_no_rules(Backend::Postgres).await;
    }
}

async fn teams_before_it_have_no_rules(backend: Backend) {
    let t = TestStore::without_migration(backend, Some(6)).await;
    let f = fixture(&t, Quota::default(), Rule::Best).await;
    let s = super::rules::old_submission(&t, &f).await;
    crate::migrate(&t.store.db, None).await.unwrap();
    let team = t.team(s.team).await.unwrap();
    assert!(!team.baseline && !team.hidden);
    assert_eq!(t.extension(f.phase.id, s.team).await.unwrap(), None);
    let q = t.quota(f.phase.id, s.team).await.unwrap();
    assert!(!q.overridden);
    assert_eq!(q.used_total, 1);
}

async fn an_open_extension_holds_back_publishing(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let a = team(t, &f, "a").await;
    let b = team(t, &f, "b").await;
    scored_one(t, &f, &a, 1, 0.5).await;
    scored_one(t, &f, &b, 2, 0.6).await;
    let extended = f.phase.closes + Duration::hours(6);
    t.grant_extension(f.phase.id, b.id, extended, "power cut", None)
        .await
        .unwrap();
    // After the phase's close, before b's: b could still submit having seen the board.
    t.clock.set(f.phase.closes + Duration::hours(1));
    let want = [PublishBlocker::ExtensionOpen {
        team: b.id,
        closes: extended,
    }];
    assert_eq!(t.publish_blockers(f.phase.id).await.unwrap(), want);
    match t.publish(f.phase.id, None).await {
        Err(Error::NotPublishable { blockers, .. }) => assert_eq!(blockers, want),
        other => panic!("{other:?}"),
    }
    assert!(want[0].to_string().contains("revoke the extension"));
    assert_eq!(t.publication(f.phase.id, None).await.unwrap(), None);
    // Revoked, it holds nothing back; granted again, it does.
    t.revoke_extension(f.phase.id, b.id, None, None)
        .await
        .unwrap();
    assert_eq!(t.publish_blockers(f.phase.id).await.unwrap(), []);
    t.grant_extension(f.phase.id, b.id, extended, "power cut, again", None)
        .await
        .unwrap();
    assert_eq!(t.publish_blockers(f.phase.id).await.unwrap(), want);
    // At b's own close it is over: published, both teams on the board.
    t.clock.set(extended);
    let p = t.publish(f.phase.id, None).await.unwrap();
    assert_eq!(p.board.rows.len(), 2);
}
