//! The server open to the public (docs/service.md, "Running it in public"): what one
//! hostile client may take of it is bounded — guesses under concurrency, password
//! hashes waiting their turn, bodies read whole, half-sent requests, event streams.

mod common;

use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use common::{Harness, answer, good_entry};
use store::Backend;

both!(
    concurrent_guesses_are_limited,
    guesses_from_one_address_are_limited,
    hashing_waits_are_bounded,
    event_streams_are_capped_per_user,
);

/// 60 wrong passwords for one name at once: the tries are reserved before the check,
/// so no more than the limit are checked (before, all 60 were).
async fn concurrent_guesses_are_limited(b: Backend) {
    // The 5 checked guesses wait for their hashes as long as it takes: this test is
    // about the limiter, and on a loaded machine a debug build's hash can take longer
    // than serve's 5 s wait (the wait has its own test below).
    let h = Harness::start_tuned(
        b,
        |s| s.with_hashing(2, Duration::from_secs(600)),
        |c| {
            c.login_tries_per_minute = 5;
            c.login_tries_per_address_per_minute = 0;
        },
    )
    .await;
    h.participant("alice").await;
    let tries = (0..60).map(|i| {
        let (http, url) = (h.http.clone(), h.url("/api/v1/tokens"));
        tokio::spawn(async move {
            let r = http
                .post(url)
                .json(&json!({"name": "alice", "password": format!("guess {i}")}))
                .send()
                .await
                .unwrap();
            answer(r).await
        })
    });
    let mut statuses = Vec::new();
    for t in tries.collect::<Vec<_>>() {
        let a = t.await.unwrap();
        if a.status == 429 {
            assert!(a.headers.contains_key("retry-after"), "{a:?}");
        }
        statuses.push(a.status);
    }
    assert_eq!(
        statuses.iter().filter(|s| **s == 401).count(),
        5,
        "{statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|s| **s == 429).count(),
        55,
        "{statuses:?}"
    );
    // The right password is refused as well while the name's window is full.
    let a = h
        .post(
            None,
            "/api/v1/tokens",
            json!({"name": "alice", "password": "correct horse"}),
        )
        .await;
    assert_eq!(a.status, 429, "{a:?}");
}

/// One address guessing many names is limited whatever the names.
async fn guesses_from_one_address_are_limited(b: Backend) {
    let h = Harness::start_with(b, |c| {
        c.login_tries_per_minute = 100;
        c.login_tries_per_address_per_minute = 4;
    })
    .await;
    h.participant("alice").await;
    let mut statuses = Vec::new();
    for i in 0..6 {
        let a = h
            .post(
                None,
                "/api/v1/tokens",
                json!({"name": format!("user{i}"), "password": "x"}),
            )
            .await;
        statuses.push(a.status);
    }
    assert_eq!(statuses, [401, 401, 401, 401, 429, 429]);
}

/// One hash at a time and no wait: a burst of sign-ins gets 503 with Retry-After for
/// those that found the hasher busy, not a queue of 19 MiB hashes.
async fn hashing_waits_are_bounded(b: Backend) {
    let h = Harness::start_tuned(
        b,
        |s| s.with_hashing(1, Duration::ZERO),
        |c| {
            c.login_tries_per_minute = 0;
            c.login_tries_per_address_per_minute = 0;
        },
    )
    .await;
    h.participant("alice").await;
    let tries: Vec<_> = (0..16)
        .map(|_| {
            let (http, url) = (h.http.clone(), h.url("/api/v1/tokens"));
            tokio::spawn(async move {
                let r = http
                    .post(url)
                    .json(&json!({"name": "alice", "password": "wrong password"}))
                    .send()
                    .await
                    .unwrap();
                answer(r).await
            })
        })
        .collect();
    let mut busy = 0;
    for t in tries {
        let a = t.await.unwrap();
        match a.status {
            401 => {}
            503 => {
                assert_eq!(a.code(), "busy", "{a:?}");
                assert!(a.headers.contains_key("retry-after"), "{a:?}");
                busy += 1;
            }
            s => panic!("unexpected {s}: {a:?}"),
        }
    }
    assert!(busy > 0, "16 hashes at once with one permit and no wait");
}

/// Past its streams, a user gets 429; a stream that ends gives its place back.
async fn event_streams_are_capped_per_user(b: Backend) {
    let h = Harness::start_with(b, |c| c.streams_per_user = 2).await;
    let (alice, _) = h.ready(json!(null)).await;
    let a = h.upload(&alice, "cinc2017", "", good_entry()).await;
    let id = a.json["id"].as_str().unwrap().to_owned();
    let path = format!("/api/v1/submissions/{id}/events");
    let open = || h.http.get(h.url(&path)).bearer_auth(&alice).send();
    let one = open().await.unwrap();
    let two = open().await.unwrap();
    assert_eq!((one.status().as_u16(), two.status().as_u16()), (200, 200));
    let third = answer(open().await.unwrap()).await;
    assert_eq!(
        (third.status, third.code()),
        (429, "rate_limited"),
        "{third:?}"
    );
    // The organiser is another user: not limited by alice's streams.
    let r = h
        .http
        .get(h.url(&path))
        .bearer_auth(&h.organiser)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    drop(one);
    // The server sees the hang-up at the stream's next write (a poll finds nothing
    // new; the keep-alive comes at 15 s): try until the place is back.
    let mut status = 0;
    for _ in 0..200 {
        let r = open().await.unwrap();
        status = r.status().as_u16();
        if status == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(status, 200, "a closed stream gives its place back");
}

/// A JSON body past the cap is 413 before it is parsed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_read_whole_are_capped() {
    let h = Harness::start_with(Backend::Sqlite, |c| c.max_body_bytes = 64 << 10).await;
    let big = "x".repeat(200 << 10);
    let a = h
        .post(
            None,
            "/api/v1/tokens",
            json!({"name": big, "password": "x"}),
        )
        .await;
    assert_eq!(a.status, 413, "{a:?}");
}

/// Connections that send half a request head are closed after the header timeout
/// (before, they stayed open for as long as the client liked).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_sent_requests_are_closed() {
    let h = Harness::start_with(Backend::Sqlite, |c| {
        c.connections.header_timeout = Duration::from_secs(1);
    })
    .await;
    let addr = h.base.trim_start_matches("http://").to_owned();
    let mut conns = Vec::new();
    for _ in 0..20 {
        let mut s = tokio::net::TcpStream::connect(&addr).await.unwrap();
        s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            .await
            .unwrap();
        conns.push(s);
    }
    // And one that sends nothing at all.
    conns.push(tokio::net::TcpStream::connect(&addr).await.unwrap());
    for mut s in conns {
        let mut buf = Vec::new();
        // A generous bound only so that a failing test ends: the server closes each
        // one after 1 s.
        let r = tokio::time::timeout(Duration::from_secs(60), s.read_to_end(&mut buf)).await;
        assert!(r.is_ok(), "a half-sent request's connection stayed open");
    }
    // The server still answers whole requests.
    assert_eq!(h.get(None, "/healthz").await.status, 200);
}
