//! The API through real HTTP on 127.0.0.1, over SQLite and PostgreSQL (docs/service.md,
//! "HTTP API").

mod common;

use chrono::Duration;
use serde_json::json;

use common::*;
use store::Backend;

both!(
    accounts_and_tokens,
    team_rules,
    challenges_and_phases,
    upload_good,
    upload_too_large,
    upload_invalid_is_not_charged,
    upload_closed_phase,
    upload_quota_spent,
    security_by_attack,
    what_a_team_sees,
    events_follow_the_state,
    withdraw_select_requeue,
    metrics_and_health,
    the_public_sees_the_exam_at_the_challenge_precision,
);

/// A leaderboard of exam scores shows the public each figure at the challenge's
/// precision (3 decimals): at full precision it would be the label-recovery channel
/// result.json no longer is. Organisers see the stored figure, exactly.
async fn the_public_sees_the_exam_at_the_challenge_precision(b: Backend) {
    let h = Harness::start(b).await;
    h.challenge().await;
    h.phase("open", -Duration::days(1), json!(null), true).await;
    let (_, alice) = h.participant("alice").await;
    h.team(&alice, "Alpha").await;
    let a = h.upload(&alice, "cinc2017", "", good_entry()).await;
    assert_eq!(a.status, 201, "{a:?}");
    judge_next(&h, 0.812_345_678).await;
    let path = "/api/v1/challenges/cinc2017/leaderboard";
    for who in [None, Some(alice.as_str())] {
        let lb = h.get(who, path).await;
        assert_eq!(lb.json["rows"][0]["score"], 0.812, "{lb:?}");
        assert_eq!(lb.json["rows"][0]["scores"]["score"], 0.812, "{lb:?}");
        assert!(!lb.text.contains("0.812345"), "{lb:?}");
    }
    let lb = h.get(Some(&h.organiser), path).await;
    assert_eq!(lb.json["rows"][0]["score"], 0.812_345_678, "{lb:?}");
}

async fn accounts_and_tokens(b: Backend) {
    let h = Harness::start_with(b, |c| c.login_tries_per_minute = 3).await;
    // No token, a bad one, a malformed header.
    let a = h.get(None, "/api/v1/users/me").await;
    assert_eq!((a.status, a.code()), (401, "unauthenticated"), "{a:?}");
    assert!(a.headers.contains_key("www-authenticate"));
    let a = h.get(Some("pj_nope"), "/api/v1/users/me").await;
    assert_eq!((a.status, a.code()), (401, "bad_token"), "{a:?}");
    let a = answer(
        h.http
            .get(h.url("/api/v1/users/me"))
            .header("authorization", "Basic abc")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(a.status, 401, "{a:?}");

    let (id, token) = h.participant("bob").await;
    let me = h.get(Some(&token), "/api/v1/users/me").await;
    assert_eq!(me.status, 200);
    assert_eq!(me.json["id"], id.as_str());
    assert_eq!(me.json["role"], "participant");
    // Name taken; wrong shapes.
    let a = h
        .post(
            Some(&h.organiser),
            "/api/v1/users",
            json!({"name": "bob", "role": "participant"}),
        )
        .await;
    assert_eq!((a.status, a.code()), (409, "exists"), "{a:?}");
    let a = h
        .post(
            Some(&h.organiser),
            "/api/v1/users",
            json!({"name": "x", "role": "admin"}),
        )
        .await;
    assert_eq!(a.status, 422, "{a:?}");
    let a = answer(
        h.http
            .post(h.url("/api/v1/users"))
            .bearer_auth(&h.organiser)
            .header("content-type", "application/json")
            .body("{not json")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((a.status, a.code()), (400, "bad_request"), "{a:?}");
    // A participant may not create accounts.
    let a = h
        .post(
            Some(&token),
            "/api/v1/users",
            json!({"name": "mallory", "role": "organiser"}),
        )
        .await;
    assert_eq!((a.status, a.code()), (403, "forbidden"), "{a:?}");

    // Tokens by password; wrong ones are limited per name.
    let a = h
        .post(
            None,
            "/api/v1/tokens",
            json!({"name": "bob", "password": "correct horse"}),
        )
        .await;
    assert_eq!(a.status, 201, "{a:?}");
    let second = a.json["token"].as_str().unwrap().to_owned();
    assert_eq!(
        h.get(Some(&second), "/api/v1/users/me").await.json["name"],
        "bob"
    );
    for _ in 0..3 {
        let a = h
            .post(
                None,
                "/api/v1/tokens",
                json!({"name": "bob", "password": "wrong one"}),
            )
            .await;
        assert_eq!((a.status, a.code()), (401, "bad_credentials"), "{a:?}");
    }
    let a = h
        .post(
            None,
            "/api/v1/tokens",
            json!({"name": "bob", "password": "correct horse"}),
        )
        .await;
    assert_eq!((a.status, a.code()), (429, "rate_limited"), "{a:?}");
    assert!(a.headers.contains_key("retry-after"));

    // A worker's token is no user's.
    let a = h
        .post(Some(&h.organiser), "/api/v1/workers", json!({"name": "w1"}))
        .await;
    assert_eq!(a.status, 201, "{a:?}");
    let worker = a.json["token"].as_str().unwrap().to_owned();
    for path in ["/api/v1/users/me", "/api/v1/invitations", "/metrics"] {
        let a = h.get(Some(&worker), path).await;
        assert_eq!((a.status, a.code()), (403, "worker_token"), "{path}: {a:?}");
    }
}

async fn team_rules(b: Backend) {
    let h = Harness::start(b).await;
    h.challenge().await;
    let (_, alice) = h.participant("alice").await;
    let (bob_id, bob) = h.participant("bob").await;
    let (_, carol) = h.participant("carol").await;
    let hostile = "<script>alert('pwned')</script>";
    let a = h
        .post(
            Some(&alice),
            "/api/v1/teams",
            json!({"name": hostile, "challenge": "cinc2017"}),
        )
        .await;
    assert_eq!(a.status, 201, "{a:?}");
    // Escaped in the text, the same name in the value.
    assert!(!a.text.contains("<script>"), "{}", a.text);
    assert!(a.text.contains(r"\u003cscript\u003e"), "{}", a.text);
    assert_eq!(a.headers["x-content-type-options"], "nosniff");
    assert_eq!(a.json["name"], hostile);
    assert_eq!(a.json["members"].as_array().unwrap().len(), 1);
    let team = a.json["id"].as_str().unwrap().to_owned();
    // One team per challenge; a name once.
    let a = h
        .post(
            Some(&alice),
            "/api/v1/teams",
            json!({"name": "Second", "challenge": "cinc2017"}),
        )
        .await;
    assert_eq!((a.status, a.code()), (409, "already_in_team"), "{a:?}");
    let a = h
        .post(
            Some(&carol),
            "/api/v1/teams",
            json!({"name": hostile, "challenge": "cinc2017"}),
        )
        .await;
    assert_eq!((a.status, a.code()), (409, "exists"), "{a:?}");
    let a = h
        .post(
            Some(&carol),
            "/api/v1/teams",
            json!({"name": "Nowhere", "challenge": "nope"}),
        )
        .await;
    assert_eq!(a.status, 404, "{a:?}");
    // Only members see or invite; joining needs the invitee's consent.
    assert_eq!(
        h.get(Some(&carol), &format!("/api/v1/teams/{team}"))
            .await
            .status,
        404
    );
    let a = h
        .post(
            Some(&carol),
            &format!("/api/v1/teams/{team}/invitations"),
            json!({"user": "bob"}),
        )
        .await;
    assert_eq!(a.status, 404, "{a:?}");
    let a = h
        .post(
            Some(&alice),
            &format!("/api/v1/teams/{team}/invitations"),
            json!({"user": "bob"}),
        )
        .await;
    assert_eq!(a.status, 201, "{a:?}");
    assert_eq!(a.json["user"], bob_id.as_str());
    let inv = a.json["id"].as_str().unwrap().to_owned();
    let mine = h.get(Some(&bob), "/api/v1/invitations").await;
    assert_eq!(mine.json.as_array().unwrap().len(), 1);
    // Someone else cannot accept it.
    let a = h
        .post_empty(Some(&carol), &format!("/api/v1/invitations/{inv}/accept"))
        .await;
    assert_eq!(
        (a.status, a.code()),
        (409, "invitation_not_pending"),
        "{a:?}"
    );
    let a = h
        .post_empty(Some(&bob), &format!("/api/v1/invitations/{inv}/accept"))
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(a.json["members"].as_array().unwrap().len(), 2);
    let a = h
        .post_empty(Some(&bob), &format!("/api/v1/invitations/{inv}/accept"))
        .await;
    assert_eq!(a.status, 409, "{a:?}");
    // Carol's own team; an invitation to Alice's cannot be accepted while in it.
    let a = h
        .post(
            Some(&carol),
            "/api/v1/teams",
            json!({"name": "Gamma", "challenge": "cinc2017"}),
        )
        .await;
    assert_eq!(a.status, 201);
    let a = h
        .post(
            Some(&alice),
            &format!("/api/v1/teams/{team}/invitations"),
            json!({"user": "carol"}),
        )
        .await;
    let inv = a.json["id"].as_str().unwrap().to_owned();
    let a = h
        .post_empty(Some(&carol), &format!("/api/v1/invitations/{inv}/accept"))
        .await;
    assert_eq!((a.status, a.code()), (409, "already_in_team"), "{a:?}");
    let a = h
        .post_empty(Some(&carol), &format!("/api/v1/invitations/{inv}/decline"))
        .await;
    assert_eq!(a.status, 204, "{a:?}");
    // An organiser's team is hidden from leaderboards.
    let a = h
        .post(
            Some(&h.organiser),
            "/api/v1/teams",
            json!({"name": "Baseline", "challenge": "cinc2017"}),
        )
        .await;
    assert_eq!(a.status, 201, "{a:?}");
    assert_eq!(a.json["hidden"], true);
}

async fn challenges_and_phases(b: Backend) {
    let h = Harness::start(b).await;
    let data = h.data.path().to_str().unwrap().to_owned();
    let (_, alice) = h.participant("alice").await;
    let new = json!({"id": "cinc2017", "definition": "cinc2017", "data": data});
    let a = h
        .post(Some(&alice), "/api/v1/challenges", new.clone())
        .await;
    assert_eq!(a.status, 403, "{a:?}");
    let a = h
        .post(Some(&h.organiser), "/api/v1/challenges", new.clone())
        .await;
    assert_eq!(a.status, 201, "{a:?}");
    assert_eq!(a.json["definition_kind"], "builtin");
    assert_eq!(a.json["files"], 2);
    assert_eq!(a.json["score_precision"], 3);
    assert_eq!(a.json["ranking"][0]["key"], "score");
    assert_eq!(a.json["data_path"], data.as_str());
    let a = h.post(Some(&h.organiser), "/api/v1/challenges", new).await;
    assert_eq!((a.status, a.code()), (409, "exists"), "{a:?}");
    // A built-in definition may be hosted under another id (a second run).
    let a = h
        .post(
            Some(&h.organiser),
            "/api/v1/challenges",
            json!({"id": "cinc2017-course", "definition": "cinc2017", "data": data}),
        )
        .await;
    assert_eq!(a.status, 201, "{a:?}");
    assert_eq!(a.json["definition_kind"], "builtin");
    assert_eq!(a.json["ranking"][0]["key"], "score");
    // A TOML definition must be the challenge's; the data a folder, by absolute path.
    let toml = judge::challenge::BUILT_IN
        .iter()
        .find(|(id, _)| *id == "cpsc2021")
        .unwrap()
        .1;
    let a = h
        .post(
            Some(&h.organiser),
            "/api/v1/challenges",
            json!({"id": "other", "definition": toml, "data": data}),
        )
        .await;
    assert_eq!(a.status, 422, "{a:?}");
    assert!(
        a.json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("cpsc2021")
    );
    let a = h
        .post(
            Some(&h.organiser),
            "/api/v1/challenges",
            json!({"id": "cpsc2021", "definition": "not = [toml", "data": data}),
        )
        .await;
    assert_eq!(a.status, 422, "{a:?}");
    let a = h
        .post(
            Some(&h.organiser),
            "/api/v1/challenges",
            json!({"id": "cpsc2021", "definition": toml, "data": "relative/path"}),
        )
        .await;
    assert_eq!(a.status, 422, "{a:?}");
    let a = h
        .post(
            Some(&h.organiser),
            "/api/v1/challenges",
            json!({"id": "cpsc2021", "definition": toml, "data": data, "title": "CPSC"}),
        )
        .await;
    assert_eq!(a.status, 201, "{a:?}");
    assert_eq!(a.json["definition_kind"], "toml");
    assert_eq!(a.json["title"], "CPSC");

    // Phases: a number is the total; limits by name; closes after it opens.
    let p_official = h
        .phase("official", -Duration::days(1), json!(5), true)
        .await;
    let p = &p_official;
    assert_eq!(p["quota"]["total"], 5);
    assert_eq!(p["open"], true);
    let p = h
        .phase(
            "final",
            Duration::days(40),
            json!({"per_day": 2, "max_concurrent": 1}),
            false,
        )
        .await;
    assert_eq!(p["quota"]["per_day"], 2);
    assert_eq!(p["quota"]["total"], serde_json::Value::Null);
    assert_eq!(p["open"], false);
    let now = h.now();
    let a = h
        .post(
            Some(&h.organiser),
            "/api/v1/challenges/cinc2017/phases",
            json!({"name": "bad", "opens": now, "closes": now - Duration::days(1),
                   "scored_split": "exam", "show_exam": false, "rule": "best"}),
        )
        .await;
    assert_eq!(a.status, 422, "{a:?}");
    let a = h
        .post(
            Some(&alice),
            "/api/v1/challenges/cinc2017/phases",
            json!({"name": "mine", "opens": now, "closes": now + Duration::days(1),
                   "scored_split": "exam", "show_exam": false, "rule": "best"}),
        )
        .await;
    assert_eq!(a.status, 403, "{a:?}");
    // A phase changed: every field, under the checks of a new one; organisers only.
    let official = "/api/v1/challenges/cinc2017/phases/official";
    let change = |name: &str, closes: chrono::DateTime<chrono::Utc>| {
        json!({"name": name, "opens": now - Duration::days(2), "closes": closes,
               "quota": {"total": 7, "per_day": 3}, "scored_split": "quiz",
               "show_exam": false, "rule": "latest"})
    };
    let a = h
        .put(
            Some(&alice),
            official,
            change("official", now + Duration::days(9)),
        )
        .await;
    assert_eq!(a.status, 403, "{a:?}");
    let a = h
        .put(
            Some(&h.organiser),
            official,
            change("official", now - Duration::days(3)),
        )
        .await;
    assert_eq!(a.status, 422, "{a:?}");
    let a = h
        .put(
            Some(&h.organiser),
            official,
            change("final", now + Duration::days(9)),
        )
        .await;
    assert_eq!((a.status, a.code()), (409, "exists"), "{a:?}");
    let a = h
        .put(
            Some(&h.organiser),
            "/api/v1/challenges/cinc2017/phases/nope",
            change("nope", now + Duration::days(9)),
        )
        .await;
    assert_eq!(a.status, 404, "{a:?}");
    let a = h
        .put(
            Some(&h.organiser),
            official,
            change("official", now + Duration::days(9)),
        )
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(a.json["quota"]["total"], 7);
    assert_eq!(a.json["quota"]["per_day"], 3);
    assert_eq!(a.json["scored_split"], "quiz");
    assert_eq!(a.json["rule"], "latest");
    assert_eq!(a.json["show_exam"], false);
    assert_eq!(a.json["id"], p_official["id"], "the same phase");
    // Renamed: its old name names nothing.
    let a = h
        .put(
            Some(&h.organiser),
            official,
            change("first", now + Duration::days(9)),
        )
        .await;
    assert_eq!((a.status, a.json["name"].as_str()), (200, Some("first")));
    assert_eq!(
        h.put(
            Some(&h.organiser),
            official,
            change("x", now + Duration::days(9))
        )
        .await
        .status,
        404
    );
    // A challenge's title changed; nothing else may be.
    let path = "/api/v1/challenges/cinc2017";
    let a = h.patch(Some(&alice), path, json!({"title": "Mine"})).await;
    assert_eq!(a.status, 403, "{a:?}");
    let a = h
        .patch(Some(&h.organiser), path, json!({"title": " "}))
        .await;
    assert_eq!(a.status, 422, "{a:?}");
    let a = h
        .patch(Some(&h.organiser), path, json!({"data": "/elsewhere"}))
        .await;
    assert_eq!(a.status, 422, "{a:?}");
    let a = h
        .patch(Some(&h.organiser), path, json!({"title": "AF, 2017"}))
        .await;
    assert_eq!(
        (a.status, a.json["title"].as_str()),
        (200, Some("AF, 2017"))
    );
    let a = h
        .patch(Some(&h.organiser), "/api/v1/challenges/nope", json!({}))
        .await;
    assert_eq!(a.status, 404, "{a:?}");
    // The rescoring history: organisers only; none yet.
    let a = h
        .get(Some(&h.organiser), "/api/v1/challenges/cinc2017/rescores")
        .await;
    assert_eq!((a.status, a.json.clone()), (200, json!([])));
    let a = h
        .get(Some(&alice), "/api/v1/challenges/cinc2017/rescores")
        .await;
    assert_eq!(a.status, 403, "{a:?}");
    let a = h
        .get(Some(&h.organiser), "/api/v1/challenges/nope/rescores")
        .await;
    assert_eq!(a.status, 404, "{a:?}");
    // Anyone reads; only organisers see the server's data path.
    let a = h.get(None, "/api/v1/challenges/cinc2017").await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(a.json["phases"].as_array().unwrap().len(), 2);
    assert!(a.json.get("data_path").is_none());
    let a = h.get(None, "/api/v1/challenges").await;
    assert_eq!(a.json.as_array().unwrap().len(), 3);
    assert_eq!(h.get(None, "/api/v1/challenges/nope").await.status, 404);
}

async fn upload_good(b: Backend) {
    let h = Harness::start(b).await;
    let (alice, _) = h.ready(json!(null)).await;
    let bytes = good_entry();
    let a = h
        .upload(
            &alice,
            "cinc2017",
            "?method=Baseline%20%3Cb%3E",
            bytes.clone(),
        )
        .await;
    assert_eq!(a.status, 201, "{a:?}");
    assert_eq!(a.json["state"], "queued");
    assert_eq!(a.json["entry_sha256"], sha256_hex(&bytes).as_str());
    assert_eq!(a.json["phase"], "official");
    let id = a.json["id"].as_str().unwrap().to_owned();
    // The file on disk is the upload.
    let org = h
        .get(Some(&h.organiser), &format!("/api/v1/submissions/{id}"))
        .await;
    let rel = org.json["organiser"]["entry_path"].as_str().unwrap();
    assert!(rel.ends_with(".zip"), "{rel}");
    let on_disk = std::fs::read(h.state.path().join(rel)).unwrap();
    assert_eq!(sha256_hex(&on_disk), sha256_hex(&bytes));
    assert!(h.incoming().is_empty(), "{:?}", h.incoming());
    // The team sees it queued, first in line.
    let s = h
        .get(Some(&alice), &format!("/api/v1/submissions/{id}"))
        .await;
    assert_eq!(s.status, 200, "{s:?}");
    assert_eq!(s.json["state"], "queued");
    assert_eq!(s.json["queue_position"], 1);
    assert!(s.json.get("organiser").is_none());
    assert!(
        s.json["reproduce"]["command"]
            .as_str()
            .unwrap()
            .starts_with("physiojudge evaluate --challenge cinc2017 --entry entry.zip")
    );
    // tar.gz and tar too, by their first bytes.
    let files: &[(&str, &[u8])] = &[("setup.sh", b"#!/bin/sh\n"), ("next.sh", b"#!/bin/sh\n")];
    for (bytes, ext) in [(gzip(&tar(files)), "tar.gz"), (tar(files), "tar")] {
        let a = h.upload(&alice, "cinc2017", "?phase=official", bytes).await;
        assert_eq!(a.status, 201, "{ext}: {a:?}");
    }
    let mut exts: Vec<String> = h
        .entries()
        .iter()
        .map(|p| {
            let n = p.file_name().unwrap().to_str().unwrap();
            n.split_once('.').unwrap().1.to_owned()
        })
        .collect();
    exts.sort();
    assert_eq!(exts, ["tar", "tar.gz", "zip"]);
    let q = h
        .get(Some(&alice), "/api/v1/challenges/cinc2017/quota")
        .await;
    assert_eq!(q.json["used_total"], 3, "{q:?}");
    assert_eq!(q.json["running"], 3);
}

async fn upload_too_large(b: Backend) {
    let h = Harness::start_with(b, |c| c.max_upload_bytes = 64 << 10).await;
    let (alice, _) = h.ready(json!(null)).await;
    // Streamed without a length: counted while it arrives.
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
        (0..20).map(|_| Ok(vec![7u8; 10_000])).collect();
    let r = h
        .http
        .post(h.url("/api/v1/challenges/cinc2017/submissions"))
        .bearer_auth(&alice)
        .header("content-type", "application/octet-stream")
        .body(reqwest::Body::wrap_stream(futures_util::stream::iter(
            chunks,
        )))
        .send()
        .await
        .unwrap();
    let a = answer(r).await;
    assert_eq!((a.status, a.code()), (413, "too_large"), "{a:?}");
    assert_eq!(a.json["error"]["max_bytes"], 64 << 10);
    // Declared too large: refused before it is read.
    let a = h.upload(&alice, "cinc2017", "", vec![0u8; 100_000]).await;
    assert_eq!((a.status, a.code()), (413, "too_large"), "{a:?}");
    // Nothing kept, nothing charged.
    assert!(h.entries().is_empty(), "{:?}", h.entries());
    assert!(h.incoming().is_empty(), "{:?}", h.incoming());
    let q = h
        .get(Some(&alice), "/api/v1/challenges/cinc2017/quota")
        .await;
    assert_eq!(q.json["used_total"], 0, "{q:?}");
}

async fn upload_invalid_is_not_charged(b: Backend) {
    let h = Harness::start(b).await;
    let (alice, _) = h.ready(json!(1)).await;
    for (bytes, why) in [
        (b"hello, not an archive".to_vec(), "not a .zip"),
        (Vec::new(), "empty"),
        (zip(&[("../escape.sh", b"x")]), "outside the entry"),
        (tar(&[("a.sh", b"x"), ("a.sh", b"y")]), "twice"),
    ] {
        let a = h.upload(&alice, "cinc2017", "", bytes).await;
        assert_eq!(a.status, 422, "{why}: {a:?}");
        assert_eq!(a.code(), "invalid_entry");
        let message = a.json["error"]["message"].as_str().unwrap();
        assert!(message.contains(why), "{why}: {message}");
    }
    assert!(h.entries().is_empty(), "{:?}", h.entries());
    assert!(h.incoming().is_empty(), "{:?}", h.incoming());
    // The one submission of the quota is still there.
    let q = h
        .get(Some(&alice), "/api/v1/challenges/cinc2017/quota")
        .await;
    assert_eq!(
        (q.json["used_total"].clone(), q.json["total_left"].clone()),
        (json!(0), json!(1))
    );
    assert_eq!(
        h.upload(&alice, "cinc2017", "", good_entry()).await.status,
        201
    );
}

async fn upload_closed_phase(b: Backend) {
    let h = Harness::start(b).await;
    h.challenge().await;
    let p = h
        .phase("later", Duration::days(2), json!(null), false)
        .await;
    let (_, alice) = h.participant("alice").await;
    h.team(&alice, "Alpha").await;
    // Not open yet: when it opens.
    let a = h.upload(&alice, "cinc2017", "", good_entry()).await;
    assert_eq!((a.status, a.code()), (409, "phase_closed"), "{a:?}");
    assert_eq!(a.json["error"]["opens"], p["opens"]);
    assert_eq!(a.json["error"]["closes"], p["closes"]);
    // Closed: when it closed.
    h.t.clock.advance(Duration::days(40));
    let a = h
        .upload(&alice, "cinc2017", "?phase=later", good_entry())
        .await;
    assert_eq!((a.status, a.code()), (409, "phase_closed"), "{a:?}");
    assert_eq!(a.json["error"]["closes"], p["closes"]);
    let a = h
        .upload(&alice, "cinc2017", "?phase=nope", good_entry())
        .await;
    assert_eq!(a.status, 404, "{a:?}");
    assert!(h.entries().is_empty());
}

async fn upload_quota_spent(b: Backend) {
    let h = Harness::start(b).await;
    let (alice, _) = h.ready(json!({"per_day": 1, "total": 2})).await;
    assert_eq!(
        h.upload(&alice, "cinc2017", "", good_entry()).await.status,
        201
    );
    // The day's one is used: the next slot is at the next UTC midnight.
    let a = h.upload(&alice, "cinc2017", "", good_entry()).await;
    assert_eq!((a.status, a.code()), (409, "quota_spent"), "{a:?}");
    let midnight = (h.now() + Duration::days(1))
        .date_naive()
        .and_hms_opt(0, 0, 0)
        .unwrap()
        .and_utc();
    let next: chrono::DateTime<chrono::Utc> =
        serde_json::from_value(a.json["error"]["next_slot_at"].clone()).unwrap();
    assert_eq!(next, midnight);
    assert_eq!(a.json["error"]["quota"]["today_left"], 0);
    assert_eq!(a.json["error"]["quota"]["spent"], json!(["per_day"]));
    let q = h
        .get(Some(&alice), "/api/v1/challenges/cinc2017/quota")
        .await;
    assert_eq!(q.status, 200);
    assert_eq!(q.json["next_slot_at"], a.json["error"]["next_slot_at"]);
    assert_eq!(q.json["phase"], "official");
    // The next day, one more; then the total is spent, and no slot comes.
    h.t.clock.set(midnight + Duration::hours(1));
    assert_eq!(
        h.upload(&alice, "cinc2017", "", good_entry()).await.status,
        201
    );
    h.t.clock
        .set(midnight + Duration::days(1) + Duration::hours(1));
    let a = h.upload(&alice, "cinc2017", "", good_entry()).await;
    assert_eq!((a.status, a.code()), (409, "quota_spent"), "{a:?}");
    assert_eq!(a.json["error"]["next_slot_at"], serde_json::Value::Null);
    assert_eq!(a.json["error"]["quota"]["spent"], json!(["total"]));
    assert_eq!(h.entries().len(), 2);
}

async fn security_by_attack(b: Backend) {
    let h = Harness::start(b).await;
    let (alice, _) = h.ready(json!(null)).await;
    let (_, mallory) = h.participant("mallory").await;
    h.team(&mallory, "Mallory's").await;
    let a = h.upload(&alice, "cinc2017", "", good_entry()).await;
    let id = a.json["id"].as_str().unwrap().to_owned();
    judge_next(&h, 0.8).await;
    // Another team: the submission, its logs, its events and actions do not exist.
    for path in [
        format!("/api/v1/submissions/{id}"),
        format!("/api/v1/submissions/{id}/logs/quiz"),
        format!("/api/v1/submissions/{id}/logs/exam"),
        format!("/api/v1/submissions/{id}/events"),
    ] {
        let a = h.get(Some(&mallory), &path).await;
        assert_eq!((a.status, a.code()), (404, "not_found"), "{path}: {a:?}");
        assert!(
            !a.text.contains("A0001") && !a.text.contains("0.8"),
            "{a:?}"
        );
    }
    for action in ["withdraw", "select"] {
        let a = h
            .post_empty(
                Some(&mallory),
                &format!("/api/v1/submissions/{id}/{action}"),
            )
            .await;
        assert_eq!(a.status, 404, "{action}: {a:?}");
    }
    // Without a token: 401, never the data.
    let a = h.get(None, &format!("/api/v1/submissions/{id}")).await;
    assert_eq!(a.status, 401, "{a:?}");
    // Its own team: not the exam's log.
    let a = h
        .get(Some(&alice), &format!("/api/v1/submissions/{id}/logs/exam"))
        .await;
    assert_eq!((a.status, a.code()), (403, "not_visible"), "{a:?}");
    assert!(!a.text.contains("X9"));
    let a = h
        .get(Some(&alice), &format!("/api/v1/submissions/{id}/logs/quiz"))
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    assert!(a.text.contains("A0001 ok"));
    let a = h
        .get(
            Some(&alice),
            &format!("/api/v1/submissions/{id}/logs/../../etc"),
        )
        .await;
    assert_eq!(a.status, 404, "{a:?}");
    // A participant calling organisers' endpoints.
    let now = h.now();
    let organiser_only: Vec<(&str, String, serde_json::Value)> = vec![
        (
            "POST",
            "/api/v1/users".into(),
            json!({"name": "m2", "role": "organiser"}),
        ),
        ("POST", "/api/v1/workers".into(), json!({"name": "mw"})),
        (
            "POST",
            "/api/v1/challenges".into(),
            json!({"id": "x", "definition": "cinc2017", "data": "/"}),
        ),
        (
            "POST",
            "/api/v1/challenges/cinc2017/phases".into(),
            json!({"name": "p", "opens": now, "closes": now + Duration::days(1),
                   "scored_split": "quiz", "show_exam": true, "rule": "best"}),
        ),
        (
            "GET",
            "/api/v1/challenges/cinc2017/submissions".into(),
            json!(null),
        ),
        (
            "POST",
            format!("/api/v1/submissions/{id}/requeue"),
            json!(null),
        ),
        ("GET", "/metrics".into(), json!(null)),
    ];
    for (method, path, body) in organiser_only {
        let a = if method == "GET" {
            h.get(Some(&mallory), &path).await
        } else {
            h.post(Some(&mallory), &path, body).await
        };
        assert_eq!(
            (a.status, a.code()),
            (403, "forbidden"),
            "{method} {path}: {a:?}"
        );
    }
}

async fn what_a_team_sees(b: Backend) {
    let h = Harness::start(b).await;
    let (alice, _) = h.ready(json!(null)).await;
    let (_, bob) = h.participant("bob").await;
    h.team(&bob, "Beta").await;
    let a = h.upload(&alice, "cinc2017", "", good_entry()).await;
    let id = a.json["id"].as_str().unwrap().to_owned();
    judge_next(&h, 0.812).await;
    let path = format!("/api/v1/submissions/{id}");
    let s = h.get(Some(&alice), &path).await;
    assert_eq!(s.status, 200, "{s:?}");
    assert_eq!(s.json["state"], "scored");
    let stages: Vec<&str> = s.json["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["stage"].as_str().unwrap())
        .collect();
    assert_eq!(stages, ["prep", "quiz", "exam", "score"]);
    let exam = &s.json["stages"][2];
    assert_eq!(exam["counts"]["failures"], 1);
    assert_eq!(exam["seconds"], 3.0);
    assert_eq!(exam["log"], false);
    assert_eq!(s.json["stages"][1]["log"], true);
    assert_eq!(s.json["stages"][1]["records"][0]["record"], "A0001");
    assert_eq!(s.json["quiz"]["score"], 0.7);
    assert_eq!(s.json["warnings"], json!(["A0003: no answer"]));
    // The phase hides exam scores until it closes; the private score never shows.
    assert_eq!(s.json["scores"], json!({}));
    assert!(s.json["scores_hidden_until"].is_string());
    assert!(
        !s.text.contains("0.812") && !s.text.contains("0.81234"),
        "{}",
        s.text
    );
    let lb = h.get(None, "/api/v1/challenges/cinc2017/leaderboard").await;
    assert_eq!(lb.status, 200, "{lb:?}");
    assert_eq!(lb.json["rows"], json!([]));
    assert!(lb.json["hidden_until"].is_string());
    // Organisers see everything.
    let o = h.get(Some(&h.organiser), &path).await;
    assert_eq!(o.json["scores"]["score"], 0.812);
    assert_eq!(o.json["organiser"]["private"]["score"], 0.81234);
    assert_eq!(o.json["organiser"]["history"].as_array().unwrap().len(), 3);
    assert_eq!(o.json["stages"][2]["log"], true);
    let log = h
        .get(Some(&h.organiser), &format!("{path}/logs/exam"))
        .await;
    assert_eq!(log.status, 200);
    assert!(log.text.contains("X9"));
    let lb = h
        .get(
            Some(&h.organiser),
            "/api/v1/challenges/cinc2017/leaderboard",
        )
        .await;
    assert_eq!(lb.json["rows"][0]["score"], 0.812, "{lb:?}");
    // Once the phase closes, its exam scores still wait for the published leaderboard:
    // a team sees none before, and the live board stays withheld.
    h.t.clock.advance(Duration::days(31));
    let s = h.get(Some(&alice), &path).await;
    assert_eq!(s.json["scores"], json!({}));
    let lb = h
        .get(
            None,
            "/api/v1/challenges/cinc2017/leaderboard?phase=official",
        )
        .await;
    assert_eq!(lb.json["rows"], json!([]), "{lb:?}");
    assert!(lb.json["withheld"].is_string());
    let p = h
        .post(
            Some(&h.organiser),
            "/api/v1/challenges/cinc2017/publish",
            json!({"phase": "official"}),
        )
        .await;
    assert_eq!(p.status, 201, "{p:?}");
    // Then the team and the public see the final entry's exam figures.
    let s = h.get(Some(&alice), &path).await;
    assert_eq!(s.json["scores"], json!({"score": 0.812}));
    assert!(s.json.get("scores_hidden_until").is_none());
    assert!(!s.text.contains("0.81234"));
    let lb = h
        .get(
            None,
            "/api/v1/challenges/cinc2017/leaderboard?phase=official&board=published",
        )
        .await;
    let row = &lb.json["rows"][0];
    assert_eq!(
        (
            row["rank"].clone(),
            row["team"].clone(),
            row["score"].clone()
        ),
        (json!(1), json!("Alpha"), json!(0.812)),
        "{lb:?}"
    );
    assert_eq!(row["scores"], json!({"score": 0.812}));
    assert_eq!(row["run_time_s"], 5.0);
    assert_eq!(lb.json["ranking"][0]["better"], "higher");
    assert_eq!(lb.json["rows"].as_array().unwrap().len(), 1);
}

async fn events_follow_the_state(b: Backend) {
    let h = Harness::start(b).await;
    let (alice, _) = h.ready(json!(null)).await;
    let (_, bob) = h.participant("bob").await;
    h.team(&bob, "Beta").await;
    let a = h.upload(&alice, "cinc2017", "", good_entry()).await;
    let id = a.json["id"].as_str().unwrap().to_owned();
    let path = format!("/api/v1/submissions/{id}/events");
    assert_eq!(h.get(Some(&bob), &path).await.status, 404);
    let r = h
        .http
        .get(h.url(&path))
        .bearer_auth(&alice)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(
        r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    // The first event is there before anything happens; then the worker's changes.
    let follower = tokio::spawn(read_events(r, |e| e.len() >= 3));
    judge_next(&h, 0.5).await;
    let events = follower.await.unwrap();
    let states: Vec<&str> = events.iter().map(|e| e["to"].as_str().unwrap()).collect();
    assert_eq!(states, ["queued", "running", "scored"], "{events:?}");
    assert_eq!(events[1]["reason"], "taken");
    assert!(events[1].get("detail").is_none(), "{events:?}");
    assert_eq!(events[2]["submission"], id.as_str());
    // Resuming after the second change; the stream ends after a final state.
    let r = h
        .http
        .get(h.url(&path))
        .bearer_auth(&h.organiser)
        .header("last-event-id", "2")
        .send()
        .await
        .unwrap();
    let events = read_events(r, |_| false).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["to"], "scored");
    assert!(events[0]["detail"].is_object(), "organisers see the reason");
}

async fn withdraw_select_requeue(b: Backend) {
    let h = Harness::start(b).await;
    let (alice, _) = h.ready(json!({"max_concurrent": 1})).await;
    let a = h.upload(&alice, "cinc2017", "", good_entry()).await;
    let first = a.json["id"].as_str().unwrap().to_owned();
    // A queued submission: not selectable; withdrawn once, freeing the slot.
    let a = h
        .post_empty(Some(&alice), &format!("/api/v1/submissions/{first}/select"))
        .await;
    assert_eq!((a.status, a.code()), (409, "state_conflict"), "{a:?}");
    assert_eq!(
        h.upload(&alice, "cinc2017", "", good_entry()).await.status,
        409
    );
    let a = h
        .post_empty(
            Some(&h.organiser),
            &format!("/api/v1/submissions/{first}/withdraw"),
        )
        .await;
    assert_eq!(a.status, 403, "only its team: {a:?}");
    let a = h
        .post_empty(
            Some(&alice),
            &format!("/api/v1/submissions/{first}/withdraw"),
        )
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(a.json["state"], "withdrawn");
    let a = h
        .post_empty(
            Some(&alice),
            &format!("/api/v1/submissions/{first}/withdraw"),
        )
        .await;
    assert_eq!((a.status, a.code()), (409, "state_conflict"), "{a:?}");
    assert_eq!(a.json["error"]["state"], "withdrawn");
    let s = h
        .get(Some(&alice), &format!("/api/v1/submissions/{first}"))
        .await;
    assert_eq!(s.json["reason"], "withdrawn by the team");
    // A scored one is selected.
    let a = h.upload(&alice, "cinc2017", "", good_entry()).await;
    assert_eq!(a.status, 201, "{a:?}");
    let second = a.json["id"].as_str().unwrap().to_owned();
    judge_next(&h, 0.6).await;
    let a = h
        .post_empty(
            Some(&alice),
            &format!("/api/v1/submissions/{second}/select"),
        )
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(a.json["selected"], true);
    let lb = h
        .get(
            Some(&h.organiser),
            "/api/v1/challenges/cinc2017/leaderboard?final=true",
        )
        .await;
    assert_eq!(lb.json["final_entries"], true);
    assert_eq!(lb.json["rows"][0]["submission"], second.as_str());
    // Requeue: only what is in error.
    let a = h
        .post_empty(
            Some(&h.organiser),
            &format!("/api/v1/submissions/{second}/requeue"),
        )
        .await;
    assert_eq!((a.status, a.code()), (409, "state_conflict"), "{a:?}");
    let a = h.upload(&alice, "cinc2017", "", good_entry()).await;
    let third = a.json["id"].as_str().unwrap().to_owned();
    let worker = h.t.workers().await.unwrap().remove(0);
    let job =
        h.t.take_job(worker.id, std::time::Duration::from_secs(60), None)
            .await
            .unwrap()
            .unwrap();
    h.t.report(
        worker.id,
        job.attempt,
        &store::Report {
            outcome: store::Outcome::Error,
            result_json: None,
            private_json: None,
            figures: vec![],
            quiz_figures: Vec::new(),
            scorer_version: "score 0.1.0".into(),
            judge_version: "judge 0.1.0".into(),
            message: Some("disk full".into()),
            runtime_lock: None,
            warnings: Vec::new(),
        },
    )
    .await
    .unwrap();
    // Retried at once by the store (queued); take it and fail it twice more.
    for _ in 0..2 {
        let job =
            h.t.take_job(worker.id, std::time::Duration::from_secs(60), None)
                .await
                .unwrap()
                .unwrap();
        h.t.report(
            worker.id,
            job.attempt,
            &store::Report {
                outcome: store::Outcome::Error,
                result_json: None,
                private_json: None,
                figures: vec![],
                quiz_figures: Vec::new(),
                scorer_version: "score 0.1.0".into(),
                judge_version: "judge 0.1.0".into(),
                message: Some("disk full".into()),
                runtime_lock: None,
                warnings: Vec::new(),
            },
        )
        .await
        .unwrap();
    }
    let s = h
        .get(Some(&alice), &format!("/api/v1/submissions/{third}"))
        .await;
    assert_eq!(s.json["state"], "error", "{s:?}");
    assert!(
        !s.text.contains("disk full"),
        "the team gets no internals: {s:?}"
    );
    let o = h
        .get(Some(&h.organiser), &format!("/api/v1/submissions/{third}"))
        .await;
    assert!(
        o.json["reason"].as_str().unwrap().contains("disk full"),
        "{o:?}"
    );
    let unknown = "/api/v1/submissions/01a213b3-0000-7000-8000-000000000000/requeue";
    assert_eq!(h.post_empty(Some(&h.organiser), unknown).await.status, 404);
    let a = h
        .post_empty(
            Some(&h.organiser),
            &format!("/api/v1/submissions/{third}/requeue?why=disk%20replaced"),
        )
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(a.json["state"], "queued");
    let list = h
        .get(
            Some(&h.organiser),
            "/api/v1/challenges/cinc2017/submissions?limit=2",
        )
        .await;
    assert_eq!(list.status, 200, "{list:?}");
    assert_eq!(list.json["submissions"].as_array().unwrap().len(), 2);
    let next = list.json["next"].as_str().unwrap();
    let rest = h
        .get(
            Some(&h.organiser),
            &format!("/api/v1/challenges/cinc2017/submissions?limit=2&after={next}"),
        )
        .await;
    assert_eq!(
        rest.json["submissions"].as_array().unwrap().len(),
        1,
        "{rest:?}"
    );
    assert_eq!(rest.json["submissions"][0]["id"], first.as_str());
}

async fn metrics_and_health(b: Backend) {
    let h = Harness::start(b).await;
    let a = h.get(None, "/healthz").await;
    assert_eq!((a.status, a.json["status"].as_str()), (200, Some("ok")));
    let (alice, _) = h.ready(json!(null)).await;
    h.upload(&alice, "cinc2017", "", good_entry()).await;
    h.upload(&alice, "cinc2017", "", b"junk".to_vec()).await;
    let a = h.get(None, "/metrics").await;
    assert_eq!(a.status, 401);
    let a = h.get(Some(&h.organiser), "/metrics").await;
    assert_eq!(a.status, 200, "{a:?}");
    assert!(
        a.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain")
    );
    for line in [
        "physiojudge_queue_length 1",
        "physiojudge_running 0",
        "physiojudge_submissions{state=\"queued\"} 1",
        "physiojudge_http_requests_total{method=\"POST\",route=\"/api/v1/challenges/{id}/submissions\",status=\"201\"} 1",
        "physiojudge_http_requests_total{method=\"POST\",route=\"/api/v1/challenges/{id}/submissions\",status=\"422\"} 1",
        "# TYPE physiojudge_http_request_duration_seconds histogram",
        "# TYPE physiojudge_failed_submissions gauge",
    ] {
        assert!(
            a.text.lines().any(|l| l == line),
            "no {line:?} in:\n{}",
            a.text
        );
    }
    // Unknown paths and methods answer in the API's shape.
    let a = h.get(None, "/api/v1/nothing").await;
    assert_eq!((a.status, a.code()), (404, "not_found"));
    let a = answer(
        h.http
            .delete(h.url("/api/v1/challenges"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((a.status, a.code()), (405, "method_not_allowed"));
    let doc = h.get(None, "/api/v1/openapi.json").await;
    assert_eq!(doc.status, 200);
    assert!(doc.json["openapi"].as_str().unwrap().starts_with("3."));
    assert!(doc.json["paths"]["/api/v1/challenges/{id}/submissions"]["post"].is_object());
}
