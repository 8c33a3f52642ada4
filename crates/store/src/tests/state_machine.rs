//! The submission state machine, enforced by the database.

use proptest::prelude::*;

use super::*;
use crate::db::args;
use crate::submissions::force_transition;

both!(
    refused_transitions_and_history,
    the_database_refuses_raw_updates
);

fn allowed(from: State, to: State) -> bool {
    // Written out again rather than read from State::TRANSITIONS, so that a wrong table
    // in either place fails.
    use State::*;
    matches!(
        (from, to),
        (Queued, Running)
            | (Queued, Withdrawn)
            | (Running, Scored)
            | (Running, Failed)
            | (Running, Error)
            | (Error, Queued)
    )
}

#[test]
fn the_rust_table_is_the_documented_one() {
    for &from in State::ALL {
        for &to in State::ALL {
            assert_eq!(
                State::TRANSITIONS.contains(&(from, to)),
                allowed(from, to),
                "{from} → {to}"
            );
        }
    }
}

async fn refused_transitions_and_history(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let team = team(t, &f, "t").await;
    let s = t.submit(&entry(&team, &f, 1)).await.unwrap();
    let job = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();

    // running → queued is not a transition: a lost run goes through error.
    match force_transition(t, s.id, State::Running, State::Queued).await {
        Err(Error::Transition {
            from: State::Running,
            to: State::Queued,
            actual: Some(State::Running),
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
    // A withdrawal only while queued.
    match t.withdraw(s.id, None).await {
        Err(Error::Transition {
            actual: Some(State::Running),
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        t.requeue(s.id, None, "why").await,
        Err(Error::Transition { .. })
    ));
    assert!(matches!(
        t.withdraw(SubmissionId::new(), None).await,
        Err(Error::Transition { actual: None, .. })
    ));
    t.report(
        f.worker.id,
        job.attempt,
        &scored(&[("score", 0.5, Better::Higher)]),
    )
    .await
    .unwrap();
    for &to in State::ALL {
        assert!(
            force_transition(t, s.id, State::Scored, to).await.is_err(),
            "scored → {to}"
        );
    }
    let h = t.history(s.id).await.unwrap();
    let steps: Vec<_> = h.iter().map(|e| (e.seq, e.from, e.to)).collect();
    assert_eq!(
        steps,
        [
            (1, None, State::Queued),
            (2, Some(State::Queued), State::Running),
            (3, Some(State::Running), State::Scored),
        ]
    );
    assert_eq!(h[0].reason, Reason::Submitted);
    assert_eq!(
        h[1].reason,
        Reason::Taken {
            worker: f.worker.id,
            attempt: 1
        }
    );
    // The history is append-only.
    let mut tx = t.store.db.write().await.unwrap();
    assert!(
        tx.execute("DELETE FROM state_history", args![])
            .await
            .is_err()
    );
}

async fn the_database_refuses_raw_updates(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let team = team(t, &f, "t").await;
    let s = t.submit(&entry(&team, &f, 1)).await.unwrap();
    t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
    // Not through this crate's functions at all: the trigger refuses.
    for to in ["queued", "withdrawn", "running"] {
        let mut tx = t.store.db.write().await.unwrap();
        let e = tx
            .execute(
                "UPDATE submissions SET state = $2 WHERE id = $1",
                args![s.id, to],
            )
            .await
            .unwrap_err();
        assert!(e.is_transition_refusal(), "running → {to}: {e}");
    }
    // Nor can a submission be born in another state.
    let mut tx = t.store.db.write().await.unwrap();
    let e = tx
        .execute(
            "INSERT INTO submissions (id, challenge_id, team_id, phase_id, entry_sha256, \
             entry_path, received_at, state, state_changed_at) \
             VALUES ($1, $2, $3, $4, 'x', 'y', 0, 'scored', 0)",
            args![SubmissionId::new(), &f.challenge, team.id, f.phase.id],
        )
        .await
        .unwrap_err();
    assert!(e.is_transition_refusal(), "{e}");
    drop(tx);
    // An allowed change is accepted (the history row is the caller's to write).
    let mut tx = t.store.db.write().await.unwrap();
    tx.execute(
        "UPDATE submissions SET state = 'error' WHERE id = $1",
        args![s.id],
    )
    .await
    .unwrap();
}

/// Random walks over the states: the database accepts a change exactly when the table
/// allows it, whether it comes as this crate's compare-and-set or as a raw UPDATE.
fn walk(backend: Backend) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let t = rt.block_on(TestStore::new(backend));
    let (f, team) = rt.block_on(async {
        let f = fixture(&t, Quota::default(), Rule::Best).await;
        let team = team(&t, &f, "walkers").await;
        (f, team)
    });
    let n = std::sync::atomic::AtomicU32::new(0);
    let state = prop::sample::select(State::ALL.to_vec());
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 48,
        ..ProptestConfig::default()
    });
    runner
        .run(
            &prop::collection::vec((state, any::<bool>()), 1..10),
            |steps| {
                let n = n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                rt.block_on(async {
                    let s = t.submit(&entry(&team, &f, n)).await.unwrap();
                    let mut now = State::Queued;
                    for (to, raw) in steps {
                        let result = if raw {
                            let mut tx = t.store.db.write().await.unwrap();
                            let r = tx
                                .execute(
                                    "UPDATE submissions SET state = $2 WHERE id = $1",
                                    args![s.id, to],
                                )
                                .await;
                            match r {
                                Ok(_) => tx.commit().await,
                                Err(e) => Err(e),
                            }
                        } else {
                            force_transition(&t, s.id, now, to).await
                        };
                        let want = allowed(now, to);
                        prop_assert_eq!(result.is_ok(), want, "{} → {}: {:?}", now, to, result);
                        if let Err(e) = &result {
                            prop_assert!(
                                matches!(e, Error::Transition { .. }) || e.is_transition_refusal(),
                                "{e}"
                            );
                        }
                        if want {
                            now = to;
                        }
                        let stored = t.submission(s.id).await.unwrap().state;
                        prop_assert_eq!(stored, now);
                    }
                    Ok(())
                })
            },
        )
        .unwrap();
    rt.block_on(t.close());
}

#[test]
fn state_machine_walks_sqlite() {
    walk(Backend::Sqlite);
}

#[test]
fn state_machine_walks_postgres() {
    walk(Backend::Postgres);
}
