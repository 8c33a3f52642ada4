//! Worker controls: states and their history, builds refused, repeated errors, paused
//! challenges.

use chrono::Duration;

use super::*;

both!(
    drain_disable_enable_and_their_history,
    a_worker_of_another_build_is_refused,
    repeated_errors_of_its_own_disable_a_worker,
    a_paused_challenge_is_queued_but_not_taken,
);

fn build(version: &str) -> Build {
    Build {
        judge_version: version.into(),
        runtime_lock: "sha256:0123456789abcdef".into(),
    }
}

async fn organiser(t: &TestStore) -> User {
    t.create_user("org", Role::Organiser, None).await.unwrap()
}

async fn drain_disable_enable_and_their_history(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let org = organiser(t).await;
    let (a, b) = (team(t, &f, "a").await, team(t, &f, "b").await);
    let a1 = t.submit(&entry(&a, &f, 1)).await.unwrap();
    let b1 = t.submit(&entry(&b, &f, 2)).await.unwrap();
    let job = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
    assert_eq!(job.attempt.submission, a1.id);

    // Draining: the running attempt goes on (heartbeat, report), no new take.
    let w = t
        .drain_worker(f.worker.id, Some(org.id), "new kernel")
        .await
        .unwrap();
    assert_eq!(w.state, WorkerState::Draining);
    assert_eq!(w.state_changed_by, Some(org.id));
    assert!(matches!(
        t.take_job(f.worker.id, LEASE, None).await,
        Err(Error::Refused(WorkerRefusal::Draining(_)))
    ));
    t.heartbeat(f.worker.id, job.attempt, LEASE).await.unwrap();
    t.report(f.worker.id, job.attempt, &failed()).await.unwrap();
    assert_eq!(t.submission(b1.id).await.unwrap().state, State::Queued);
    // Draining twice is refused, and so is an empty reason.
    assert!(matches!(
        t.drain_worker(f.worker.id, Some(org.id), "again").await,
        Err(Error::WorkerState {
            from: WorkerState::Draining,
            to: WorkerState::Draining,
            ..
        })
    ));
    assert!(matches!(
        t.enable_worker(f.worker.id, Some(org.id), "  ").await,
        Err(Error::Invalid { .. })
    ));

    // Enabled again, it takes b1; disabled while running it, the attempt ends as an
    // error that is not the worker's and not charged, and is queued again.
    t.enable_worker(f.worker.id, Some(org.id), "kernel done")
        .await
        .unwrap();
    let job = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
    assert_eq!(job.attempt.submission, b1.id);
    let (w, ended) = t
        .disable_worker(f.worker.id, Some(org.id), "disk failing")
        .await
        .unwrap();
    assert_eq!(w.state, WorkerState::Disabled);
    assert_eq!(ended.lost, vec![job.attempt]);
    assert_eq!(ended.requeued, vec![b1.id]);
    assert_eq!(t.submission(b1.id).await.unwrap().state, State::Queued);
    let history = t.history(b1.id).await.unwrap();
    assert!(
        history
            .iter()
            .any(|h| matches!(h.reason, Reason::WorkerDisabled { attempt: 1, .. })),
        "{history:?}"
    );
    // Its heartbeat and its report are refused; so is a take, and draining it.
    assert!(matches!(
        t.heartbeat(f.worker.id, job.attempt, LEASE).await,
        Err(Error::Refused(WorkerRefusal::Disabled(_)))
    ));
    assert!(matches!(
        t.report(f.worker.id, job.attempt, &failed()).await,
        Err(Error::Refused(WorkerRefusal::Disabled(_)))
    ));
    assert!(matches!(
        t.take_job(f.worker.id, LEASE, None).await,
        Err(Error::Refused(WorkerRefusal::Disabled(_)))
    ));
    let refused = t
        .drain_worker(f.worker.id, Some(org.id), "x")
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("enable it first"), "{refused}");
    // Another worker takes b1 as its attempt 2.
    let (w2, _) = t.create_worker("w2").await.unwrap();
    let again = t.take_job(w2.id, LEASE, None).await.unwrap().unwrap();
    assert_eq!(again.attempt.submission, b1.id);
    assert_eq!(again.attempt.number, 2);

    // The list: state, who and why, running attempts; no error held against w1.
    let list = t.worker_statuses().await.unwrap();
    let w1 = list.iter().find(|s| s.worker.id == f.worker.id).unwrap();
    assert_eq!(w1.worker.state, WorkerState::Disabled);
    assert_eq!(
        w1.worker.state_reason,
        Some(WorkerStateReason::Organiser {
            why: "disk failing".into()
        })
    );
    assert!(w1.running.is_empty());
    assert_eq!((w1.recent_errors, w1.error_streak), (0, 0));
    let w2s = list.iter().find(|s| s.worker.id == w2.id).unwrap();
    assert_eq!(w2s.running, vec![again.attempt]);

    let h = t.worker_history(f.worker.id).await.unwrap();
    let steps: Vec<_> = h.iter().map(|e| (e.seq, e.from, e.to)).collect();
    use WorkerState::*;
    assert_eq!(
        steps,
        [
            (1, Enabled, Draining),
            (2, Draining, Enabled),
            (3, Enabled, Disabled)
        ]
    );
    assert!(h.iter().all(|e| e.by == Some(org.id)));
    assert!(matches!(
        t.worker_history(WorkerId::new()).await,
        Err(Error::NotFound { .. })
    ));
    assert!(matches!(
        t.enable_worker(WorkerId::new(), None, "x").await,
        Err(Error::NotFound { .. })
    ));
}

async fn a_worker_of_another_build_is_refused(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let store = t.store.clone().with_build(build("0.2.0"));
    let team = team(t, &f, "a").await;
    t.submit(&entry(&team, &f, 1)).await.unwrap();
    // Not announced yet: refused, and the refusal is on the worker's record.
    let e = store.take_job(f.worker.id, LEASE, None).await.unwrap_err();
    assert!(
        matches!(
            &e,
            Error::Refused(WorkerRefusal::WrongVersion {
                announced: None,
                ..
            })
        ),
        "{e}"
    );
    // An older judge: refused, with both builds and what to do.
    let old = Announcement {
        build: build("0.1.0"),
        slots: Some(4),
        host: Some("gpu-7".into()),
        instance: None,
    };
    let e = store.announce_worker(f.worker.id, &old).await.unwrap_err();
    let text = e.to_string();
    assert!(matches!(
        e,
        Error::Refused(WorkerRefusal::WrongVersion { .. })
    ));
    for part in [
        "judge 0.1.0",
        "judge 0.2.0",
        "sha256:0123456789abcdef",
        "install",
    ] {
        assert!(text.contains(part), "{part:?} in {text}");
    }
    let e = store.take_job(f.worker.id, LEASE, None).await.unwrap_err();
    assert!(
        matches!(&e, Error::Refused(WorkerRefusal::WrongVersion { announced: Some(b), .. }) if b.judge_version == "0.1.0"),
        "{e}"
    );
    let w = store.worker(f.worker.id).await.unwrap();
    assert_eq!(w.build, Some(build("0.1.0")));
    assert_eq!((w.slots, w.host.as_deref()), (Some(4), Some("gpu-7")));
    let refusal = w.refusal.expect("the refusal is recorded");
    assert!(
        refusal.message.contains("judge 0.2.0"),
        "{}",
        refusal.message
    );
    // Another runtime lock is another build too.
    let mut lock = build("0.2.0");
    lock.runtime_lock = "sha256:ffffffffffffffff".into();
    assert!(matches!(
        store
            .announce_worker(
                f.worker.id,
                &Announcement {
                    build: lock,
                    slots: None,
                    host: None,
                    instance: None,
                }
            )
            .await,
        Err(Error::Refused(WorkerRefusal::WrongVersion { .. }))
    ));
    // Upgraded: accepted, the refusal cleared, and it takes the job.
    let right = Announcement {
        build: build("0.2.0"),
        slots: Some(4),
        host: Some("gpu-7".into()),
        instance: None,
    };
    let w = store.announce_worker(f.worker.id, &right).await.unwrap();
    assert_eq!(w.refusal, None);
    assert_eq!(w.build, Some(build("0.2.0")));
    assert!(
        store
            .take_job(f.worker.id, LEASE, None)
            .await
            .unwrap()
            .is_some()
    );
    // A store that does not check builds takes from anyone (the queue's own tests).
    assert_eq!(t.build(), None);
}

fn status_of(list: Vec<WorkerStatus>, w: WorkerId) -> WorkerStatus {
    list.into_iter().find(|s| s.worker.id == w).unwrap()
}

async fn repeated_errors_of_its_own_disable_a_worker(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let store = t.store.clone().with_policy(Policy {
        max_attempts: 20,
        ..Policy::default()
    });
    assert_eq!(store.policy().worker_error_limit, 3);
    let team = team(t, &f, "a").await;
    t.submit(&entry(&team, &f, 1)).await.unwrap();
    let w = f.worker.id;
    // Another worker takes jobs (seen asking, for no challenge): w is not the last.
    let (steady, _) = t.create_worker("steady").await.unwrap();
    store.take_job(steady.id, LEASE, Some(&[])).await.unwrap();
    let take = || async { store.take_job(w, LEASE, None).await.unwrap().unwrap() };
    // error, error, failed (the entry's: the streak ends), error, error: enabled.
    for report in [judge_error(), judge_error(), failed()] {
        let j = take().await;
        store.report(w, j.attempt, &report).await.unwrap();
        if report.outcome == Outcome::Failed {
            t.submit(&entry(&team, &f, 2)).await.unwrap();
        }
    }
    for _ in 0..2 {
        let j = take().await;
        store.report(w, j.attempt, &judge_error()).await.unwrap();
    }
    // A stopped run (not its fault) neither counts nor ends the streak.
    let j = take().await;
    store
        .report_blamed(w, j.attempt, &judge_error(), Blame::Elsewhere)
        .await
        .unwrap();
    let status = |list: Vec<WorkerStatus>| list.into_iter().find(|s| s.worker.id == w).unwrap();
    let now = status(store.worker_statuses().await.unwrap());
    assert_eq!(now.worker.state, WorkerState::Enabled);
    assert_eq!((now.error_streak, now.recent_errors), (2, 4));
    // The third in a row, a lease lost: disabled, with the three attempts named.
    let j = take().await;
    t.clock.advance(Duration::seconds(61));
    let done = store.reconcile().await.unwrap();
    assert_eq!(done.lost, vec![j.attempt]);
    let now = status(store.worker_statuses().await.unwrap());
    assert_eq!(now.worker.state, WorkerState::Disabled);
    assert_eq!(now.worker.state_changed_by, None);
    match &now.worker.state_reason {
        Some(WorkerStateReason::RepeatedErrors { count: 3, last }) => {
            assert_eq!(last.len(), 3);
            assert_eq!(last[0], j.attempt);
        }
        other => panic!("{other:?}"),
    }
    assert!(
        now.worker
            .state_reason
            .as_ref()
            .unwrap()
            .to_string()
            .contains("disabled automatically")
    );
    assert!(matches!(
        store.take_job(w, LEASE, None).await,
        Err(Error::Refused(WorkerRefusal::Disabled(_)))
    ));
    // The other worker's errors in a row now would disable the last worker taking jobs:
    // it is kept enabled, its streak at the limit (the alert organisers see).
    store.enable_worker(w, None, "a look").await.unwrap();
    store.disable_worker(w, None, "for the test").await.unwrap();
    t.clock.advance(Duration::seconds(1));
    t.submit(&entry(&team, &f, 3)).await.unwrap();
    for _ in 0..4 {
        let j = store
            .take_job(steady.id, LEASE, None)
            .await
            .unwrap()
            .unwrap();
        store
            .report(steady.id, j.attempt, &judge_error())
            .await
            .unwrap();
    }
    let last = status_of(store.worker_statuses().await.unwrap(), steady.id);
    assert_eq!(
        (last.worker.state, last.error_streak),
        (WorkerState::Enabled, 4)
    );
    // Enabled again, its streak starts from nothing: one more error does not disable.
    store
        .enable_worker(w, None, "fixed the disk")
        .await
        .unwrap();
    t.clock.advance(Duration::seconds(1));
    let j = take().await;
    store.report(w, j.attempt, &judge_error()).await.unwrap();
    let now = status(store.worker_statuses().await.unwrap());
    assert_eq!(
        (now.worker.state, now.error_streak),
        (WorkerState::Enabled, 1)
    );
    // A limit of 0 never disables.
    let never = t.store.clone().with_policy(Policy {
        max_attempts: 20,
        worker_error_limit: 0,
        ..Policy::default()
    });
    for _ in 0..4 {
        let j = never.take_job(w, LEASE, None).await.unwrap().unwrap();
        never.report(w, j.attempt, &judge_error()).await.unwrap();
    }
    assert_eq!(never.worker(w).await.unwrap().state, WorkerState::Enabled);
}

async fn a_paused_challenge_is_queued_but_not_taken(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let org = organiser(t).await;
    // A second challenge, with its own phase and team.
    let data = tempfile::tempdir().unwrap();
    write(data.path(), "REFERENCE.csv", "rec1,N\n");
    t.create_challenge(
        "other",
        "Other",
        Definition::Builtin("cinc2017".into()),
        data.path(),
    )
    .await
    .unwrap();
    let now = t.now();
    let phase = t
        .create_phase(
            "other",
            &NewPhase {
                name: "open".into(),
                opens: now - Duration::days(1),
                closes: now + Duration::days(1),
                selection_closes: None,
                quota: Quota::default(),
                scored_split: Split::Exam,
                show_exam: false,
                rule: Rule::Best,
            },
        )
        .await
        .unwrap();
    let a = team(t, &f, "a").await;
    let ou = t
        .create_user("o-founder", Role::Participant, None)
        .await
        .unwrap();
    let o = t.create_team("other", "o", ou.id).await.unwrap();
    let a1 = t.submit(&entry(&a, &f, 1)).await.unwrap();
    t.clock.advance(Duration::seconds(1));
    let a2 = t.submit(&entry(&a, &f, 2)).await.unwrap();
    let running = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
    assert_eq!(running.attempt.submission, a1.id);

    let c = t
        .pause_challenge(&f.challenge, Some(org.id), "data fix")
        .await
        .unwrap();
    let pause = c.paused.expect("paused");
    assert_eq!((pause.by, pause.why.as_str()), (Some(org.id), "data fix"));
    assert!(matches!(
        t.pause_challenge(&f.challenge, None, "again").await,
        Err(Error::PauseState { paused: true, .. })
    ));
    assert!(matches!(
        t.pause_challenge("nope", None, "x").await,
        Err(Error::NotFound { .. })
    ));
    // Still accepted and queued; the other challenge's later submission is taken first.
    t.clock.advance(Duration::seconds(1));
    let a3 = t.submit(&entry(&a, &f, 3)).await.unwrap();
    t.clock.advance(Duration::seconds(1));
    let o1 = t
        .submit(&NewSubmission {
            team: o.id,
            phase: phase.id,
            ..entry(&a, &f, 4)
        })
        .await
        .unwrap();
    // Positions: o1 is first (the paused ones ahead of it are not taken); a2, a3 keep
    // their places among the paused challenge's.
    assert_eq!(t.queue_position(o1.id).await.unwrap(), Some(1));
    assert_eq!(t.queue_position(a2.id).await.unwrap(), Some(1));
    assert_eq!(t.queue_position(a3.id).await.unwrap(), Some(2));
    let (w2, _) = t.create_worker("w2").await.unwrap();
    let j = t.take_job(w2.id, LEASE, None).await.unwrap().unwrap();
    assert_eq!(j.attempt.submission, o1.id);
    assert_eq!(t.take_job(w2.id, LEASE, None).await.unwrap(), None);
    // The attempt running when it was paused finishes.
    t.report(f.worker.id, running.attempt, &failed())
        .await
        .unwrap();
    assert_eq!(t.take_job(f.worker.id, LEASE, None).await.unwrap(), None);

    let c = t.resume_challenge(&f.challenge).await.unwrap();
    assert_eq!(c.paused, None);
    assert!(matches!(
        t.resume_challenge(&f.challenge).await,
        Err(Error::PauseState { paused: false, .. })
    ));
    let j = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
    assert_eq!(j.attempt.submission, a2.id);
}
