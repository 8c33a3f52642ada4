//! Result folders put in place under the attempt's lock in the database
//! (`Store::while_holding`): what replicas on one database rely on.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use chrono::Duration;

use super::*;

both!(placing_holds_the_attempt_against_its_ending);

async fn placing_holds_the_attempt_against_its_ending(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let a = team(t, &f, "a").await;
    let s = t.submit(&entry(&a, &f, 1)).await.unwrap();
    let (other, _) = t.create_worker("w2").await.unwrap();
    let j = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
    assert_eq!(j.attempt.submission, s.id);

    // Another worker may not place anything for the attempt.
    let r = t.while_holding(other.id, j.attempt, async { Ok::<_, ()>(()) });
    assert!(
        matches!(r.await, Err(Error::Refused(WorkerRefusal::Attempt { ref why, .. })) if why.contains("another worker's")),
    );

    // The holder places; a report sent meanwhile waits until the placing is done.
    let (go, wait) = tokio::sync::oneshot::channel::<()>();
    let placed = Arc::new(AtomicBool::new(false));
    let (started, is_placing) = tokio::sync::oneshot::channel::<()>();
    let placing = {
        let store = t.store.clone();
        let placed = placed.clone();
        let w = f.worker.id;
        tokio::spawn(async move {
            store
                .while_holding(w, j.attempt, async move {
                    started.send(()).unwrap();
                    wait.await.unwrap();
                    placed.store(true, Ordering::SeqCst);
                    Ok::<_, ()>("placed")
                })
                .await
        })
    };
    is_placing.await.unwrap();
    let report = {
        let store = t.store.clone();
        let placed = placed.clone();
        let w = f.worker.id;
        tokio::spawn(async move {
            let r = store
                .report(w, j.attempt, &scored(&[("score", 0.5, Better::Higher)]))
                .await;
            (r, placed.load(Ordering::SeqCst))
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(!report.is_finished(), "a report went through a placing");
    go.send(()).unwrap();
    assert_eq!(placing.await.unwrap().unwrap(), Ok("placed"));
    let (r, after_placing) = report.await.unwrap();
    r.unwrap();
    assert!(after_placing);

    // Ended: nothing is placed for it any more, and `place` does not run.
    let ran = Arc::new(AtomicBool::new(false));
    let ran2 = ran.clone();
    let r = t
        .while_holding(f.worker.id, j.attempt, async move {
            ran2.store(true, Ordering::SeqCst);
            Ok::<_, ()>(())
        })
        .await;
    assert!(
        matches!(r, Err(Error::Refused(WorkerRefusal::Attempt { ref why, .. })) if why.contains("already ended"))
    );
    assert!(!ran.load(Ordering::SeqCst));

    // On PostgreSQL the reconciler skips an attempt being placed (its lease lapsed
    // meanwhile) and ends it at its next pass; SQLite has one writer at a time.
    if t.backend() == Backend::Postgres {
        let s2 = t.submit(&entry(&a, &f, 2)).await.unwrap();
        let k = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
        assert_eq!(k.attempt.submission, s2.id);
        t.clock.advance(Duration::minutes(2));
        let (go, wait) = tokio::sync::oneshot::channel::<()>();
        let (started, is_placing) = tokio::sync::oneshot::channel::<()>();
        let store = t.store.clone();
        let w = f.worker.id;
        let placing = tokio::spawn(async move {
            store
                .while_holding(w, k.attempt, async move {
                    started.send(()).unwrap();
                    wait.await.unwrap();
                    Ok::<_, ()>(())
                })
                .await
        });
        is_placing.await.unwrap();
        assert!(t.reconcile().await.unwrap().lost.is_empty());
        go.send(()).unwrap();
        placing.await.unwrap().unwrap().unwrap();
        assert_eq!(t.reconcile().await.unwrap().lost, [k.attempt]);
    }
}
