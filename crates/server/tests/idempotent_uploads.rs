//! Uploads with an `Idempotency-Key` through real HTTP, over SQLite and PostgreSQL
//! (docs/service.md, "Uploads"): a client whose `201` was lost sends the upload again
//! with the same key and gets the same submission, charged once.

mod common;

use serde_json::json;

use common::*;

both!(
    a_retried_upload_is_one_submission,
    racing_retries_are_one_submission
);

async fn keyed(h: &Harness, token: &str, key: &str, query: &str, bytes: Vec<u8>) -> Answer {
    let r = h
        .http
        .post(h.url(&format!("/api/v1/challenges/cinc2017/submissions{query}")))
        .bearer_auth(token)
        .header("content-type", "application/octet-stream")
        .header("idempotency-key", key)
        .body(bytes)
        .send()
        .await
        .unwrap();
    answer(r).await
}

async fn used(h: &Harness, token: &str) -> serde_json::Value {
    h.get(Some(token), "/api/v1/challenges/cinc2017/quota")
        .await
        .json["used_total"]
        .clone()
}

async fn a_retried_upload_is_one_submission(b: store::Backend) {
    let h = Harness::start(b).await;
    let (alice, _) = h.ready(json!({"total": 2})).await;
    let first = keyed(&h, &alice, "k-1", "?method=m", good_entry()).await;
    assert_eq!(first.status, 201, "{first:?}");
    assert!(first.headers.get("idempotent-replayed").is_none());
    let id = first.json["id"].clone();

    // The retry: the same submission, the same answer, nothing charged or kept.
    let again = keyed(&h, &alice, "k-1", "?method=m", good_entry()).await;
    assert_eq!(again.status, 201, "{again:?}");
    assert_eq!(again.headers["idempotent-replayed"], "true");
    for field in ["id", "entry_sha256", "phase", "received_at", "state"] {
        assert_eq!(again.json[field], first.json[field], "{field}");
    }
    assert_eq!(used(&h, &alice).await, 1);
    assert_eq!(h.entries().len(), 1, "{:?}", h.entries());
    assert!(h.incoming().is_empty(), "{:?}", h.incoming());

    // The same key for another entry or another method: refused, clearly.
    let other = zip(&[("setup.sh", b"#!/bin/sh\n"), ("next.sh", b"#!/bin/sh\n")]);
    for (query, bytes) in [("?method=m", other), ("?method=n", good_entry())] {
        let a = keyed(&h, &alice, "k-1", query, bytes).await;
        assert_eq!(
            (a.status, a.code()),
            (422, "idempotency_key_reused"),
            "{a:?}"
        );
        let message = a.json["error"]["message"].as_str().unwrap();
        assert!(message.contains(id.as_str().unwrap()), "{message}");
    }
    assert_eq!(used(&h, &alice).await, 1);

    // The quota spent by another upload, the retry is still answered (it was charged
    // when it was made); a new key is refused for the quota.
    assert_eq!(keyed(&h, &alice, "k-2", "", good_entry()).await.status, 201);
    let again = keyed(&h, &alice, "k-1", "?method=m", good_entry()).await;
    assert_eq!((again.status, again.json["id"].clone()), (201, id.clone()));
    let a = keyed(&h, &alice, "k-3", "", good_entry()).await;
    assert_eq!((a.status, a.code()), (409, "quota_spent"), "{a:?}");

    // A key that is not 1 to 255 visible ASCII characters is refused before the body.
    let a = keyed(&h, &alice, "two words", "", good_entry()).await;
    assert_eq!(a.status, 422, "{a:?}");
    assert_eq!(used(&h, &alice).await, 2);
    assert_eq!(h.entries().len(), 2, "{:?}", h.entries());

    // Without a key, each upload is its own (the quota refuses a third).
    let a = h.upload(&alice, "cinc2017", "", good_entry()).await;
    assert_eq!((a.status, a.code()), (409, "quota_spent"), "{a:?}");
}

async fn racing_retries_are_one_submission(b: store::Backend) {
    let h = Harness::start(b).await;
    let (alice, _) = h.ready(json!(null)).await;
    let answers =
        futures_util::future::join_all((0..6).map(|_| keyed(&h, &alice, "same", "", good_entry())))
            .await;
    let mut ids: Vec<_> = answers
        .iter()
        .map(|a| {
            assert_eq!(a.status, 201, "{a:?}");
            a.json["id"].as_str().unwrap().to_owned()
        })
        .collect();
    ids.dedup();
    assert_eq!(ids.len(), 1, "{ids:?}");
    assert_eq!(used(&h, &alice).await, 1);
    // The losers' files are gone: one entry on disk, nothing half-made.
    assert_eq!(h.entries().len(), 1, "{:?}", h.entries());
    assert!(h.incoming().is_empty(), "{:?}", h.incoming());
}
