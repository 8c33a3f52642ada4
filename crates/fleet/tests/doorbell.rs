//! The doorbell against the machine's real NATS server with JetStream (127.0.0.1:4222,
//! or PHYSIOJUDGE_TEST_NATS): each test makes its own stream and deletes it.

use std::time::Duration;

use fleet::{Doorbell, QueueUrl};

fn url() -> QueueUrl {
    let server = std::env::var("PHYSIOJUDGE_TEST_NATS")
        .unwrap_or_else(|_| "nats://127.0.0.1:4222".to_owned());
    let stream = format!("PJ_TEST_{}", std::process::id())
        + &format!(
            "_{}",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        );
    format!("{server}/{stream}").parse().unwrap()
}

async fn bell(url: &QueueUrl) -> Doorbell {
    Doorbell::connect(url).await.unwrap_or_else(|e| {
        panic!(
            "these tests need NATS with JetStream at {}: {e}",
            url.server
        )
    })
}

/// Notices taken by `listener` until none comes within `quiet`.
async fn drain(listener: &fleet::Listener, quiet: Duration) -> usize {
    let mut n = 0;
    while let Some(notice) = listener.wait(quiet).await.unwrap() {
        notice.done().await;
        n += 1;
    }
    n
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_notice_wakes_one_worker_once() {
    let url = url();
    let server = bell(&url).await;
    // Two workers on other machines, each with its own connection.
    let (a, b) = (bell(&url).await, bell(&url).await);
    let (la, lb) = (a.listener().await.unwrap(), b.listener().await.unwrap());
    // Nothing rung: a wait ends empty when it says.
    let started = std::time::Instant::now();
    assert!(la.wait(Duration::from_millis(300)).await.unwrap().is_none());
    assert!(started.elapsed() < Duration::from_secs(5));

    server.ring(5).await.unwrap();
    assert_eq!(server.waiting().await.unwrap(), 5);
    let (na, nb) = tokio::join!(
        drain(&la, Duration::from_millis(500)),
        drain(&lb, Duration::from_millis(500))
    );
    assert_eq!(na + nb, 5, "{na} + {nb}");
    // Acked notices are gone from the work queue: none is handed out twice.
    assert_eq!(server.waiting().await.unwrap(), 0);
    assert_eq!(drain(&la, Duration::from_millis(300)).await, 0);
    server.delete().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_rings_for_each_wake_up_of_its_queue() {
    let url = url();
    let server = bell(&url).await;
    let listener = bell(&url).await.listener().await.unwrap();
    let t = store::testing::TestStore::new(store::Backend::Sqlite).await;
    let state = tempfile::tempdir().unwrap();
    let queue =
        dispatch::LocalQueue::new(t.store.clone(), dispatch::QueueConfig::new(state.path()));
    let ringer = fleet::spawn_ringer(&queue, server.clone());
    queue.wake();
    let first = listener.wait(Duration::from_secs(10)).await.unwrap();
    let first = first.expect("a notice for the first wake-up");
    first.done().await;
    queue.wake();
    queue.wake();
    queue.wake();
    // Rung for each (a burst is rung together), and nothing more.
    let mut n = 0;
    let until = std::time::Instant::now() + Duration::from_secs(10);
    while n < 3 && std::time::Instant::now() < until {
        if let Some(notice) = listener.wait(Duration::from_secs(1)).await.unwrap() {
            notice.done().await;
            n += 1;
        }
    }
    assert_eq!(n, 3);
    assert_eq!(drain(&listener, Duration::from_millis(500)).await, 0);
    ringer.abort();
    server.delete().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_take_purges_the_notices_stored_before_it_only() {
    let url = url();
    let server = bell(&url).await;
    let listener = bell(&url).await.listener().await.unwrap();
    // A burst while every worker was busy: stored.
    server.ring(4).await.unwrap();
    let n = listener
        .wait(Duration::from_secs(10))
        .await
        .unwrap()
        .unwrap();
    // Rung after the notice was delivered: possibly a new job; kept.
    server.ring(1).await.unwrap();
    // The take it prompted found nothing.
    listener.stale(&n).await;
    n.done().await;
    assert_eq!(server.waiting().await.unwrap(), 1);
    assert_eq!(listener.counts().purged, 4);
    assert_eq!(listener.counts().delivered, 1);
    assert_eq!(drain(&listener, Duration::from_millis(500)).await, 1);
    server.delete().await.unwrap();
}

#[test]
fn a_queue_address_that_is_not_nats_is_refused_by_name() {
    let e = "redis://127.0.0.1:6379".parse::<QueueUrl>().unwrap_err();
    assert!(e.to_string().contains("redis://127.0.0.1:6379"), "{e}");
    assert!(e.to_string().contains("nats://host:port"), "{e}");
}
