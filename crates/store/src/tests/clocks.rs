//! Two servers on one database whose clocks disagree: leases follow the database's
//! clock on PostgreSQL, so neither lapses the other's live attempts.

use std::sync::Arc;

use chrono::{Duration, Utc};

use super::*;

both!(servers_with_skewed_clocks_agree_on_leases);

async fn servers_with_skewed_clocks_agree_on_leases(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let a = team(t, &f, "a").await;
    t.submit(&entry(&a, &f, 1)).await.unwrap();
    // One server's clock an hour ahead, another's an hour behind.
    let ahead = t
        .store
        .clone()
        .with_process_clock(Arc::new(|| Utc::now() + Duration::hours(1)));
    let behind = t
        .store
        .clone()
        .with_process_clock(Arc::new(|| Utc::now() - Duration::hours(1)));
    let lease = std::time::Duration::from_secs(60);
    let j = behind
        .take_job(f.worker.id, lease, None)
        .await
        .unwrap()
        .unwrap();
    let heartbeat = behind
        .heartbeat(f.worker.id, j.attempt, lease)
        .await
        .unwrap();
    let reconciled = ahead.reconcile().await.unwrap();
    // How far each lease is from the true time plus a lease: the database's clock is
    // this machine's, so well within a minute; a process's clock is an hour off.
    let off = |at: chrono::DateTime<Utc>| (at - (Utc::now() + Duration::seconds(60))).abs();
    match t.backend() {
        Backend::Postgres => {
            assert!(off(j.lease_expires_at) < Duration::minutes(1), "{j:?}");
            assert!(off(heartbeat) < Duration::minutes(1), "{heartbeat}");
            // The server ahead sees a live lease, not one that ran out an hour ago.
            assert_eq!(reconciled, Reconciled::default());
        }
        Backend::Sqlite => {
            // One process's file: its clock is the process's (documented).
            assert!(off(heartbeat + Duration::hours(1)) < Duration::minutes(1));
            assert_eq!(reconciled.lost, [j.attempt]);
        }
    }
}
