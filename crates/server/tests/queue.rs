//! The queue's endpoints for remote workers over real HTTP, on SQLite and PostgreSQL
//! (docs/service.md, "A fleet"), attacked the way a stranger would: people's tokens, a
//! worker of another build, another worker's attempt, a report without its result
//! folder, a result archive that climbs out of its folder, a duplicate report. Then the
//! way that works: take, download the entry as uploaded, heartbeat, send the result
//! folder, report once, and the team reads its log from what the worker sent.

mod common;

use serde_json::{Value, json};

use common::*;
use store::Backend;

both!(
    a_take_sent_again_and_a_restarted_worker,
    remote_workers_are_held_to_the_queue_rules,
    result_archives_cannot_climb_out_of_their_folder,
    a_folder_for_a_lapsed_attempt_is_refused
);

fn announcement(build: store::Build) -> Value {
    json!({"build": build, "slots": 1, "host": "remote-test"})
}

/// A worker's token, made by the organiser through the API.
async fn worker_token(h: &Harness, name: &str) -> String {
    let a = h
        .post(Some(&h.organiser), "/api/v1/workers", json!({"name": name}))
        .await;
    assert_eq!(a.status, 201, "{a:?}");
    a.json["token"].as_str().unwrap().to_owned()
}

/// A worker through the API: its id and token, announced as running `build`.
async fn worker(h: &Harness, name: &str, build: store::Build) -> (String, String) {
    let token = worker_token(h, name).await;
    let a = h
        .post(Some(&token), "/api/v1/queue/announce", announcement(build))
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(a.json["name"], name, "{a:?}");
    (a.json["worker"].as_str().unwrap().to_owned(), token)
}

fn scored_report() -> Value {
    let report = store::Report {
        outcome: store::Outcome::Scored,
        result_json: Some(scored_result().to_string()),
        private_json: Some(r#"{"score": 0.81234}"#.into()),
        figures: vec![store::Figure {
            key: "score".into(),
            value: Some(0.81234),
            better: store::Better::Higher,
        }],
        quiz_figures: Vec::new(),
        scorer_version: "score 0.1.0".into(),
        judge_version: "judge 0.1.0".into(),
        message: None,
        runtime_lock: None,
        warnings: Vec::new(),
    };
    json!({"report": report, "blame": "worker"})
}

/// An entry uploaded and taken by a fresh worker: (participant token, submission id,
/// the worker's token, the attempt's path prefix, the entry's bytes).
async fn taken(h: &Harness) -> (String, String, String, String, Vec<u8>) {
    let (alice, _) = h.ready(json!(5)).await;
    let entry = good_entry();
    let a = h.upload(&alice, "cinc2017", "", entry.clone()).await;
    assert_eq!(a.status, 201, "{a:?}");
    let id = a.json["id"].as_str().unwrap().to_owned();
    let (_, w) = worker(h, "remote-1", server_build()).await;
    let a = h.post(Some(&w), "/api/v1/queue/take", json!({})).await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(a.json["job"]["attempt"]["submission"], id.as_str());
    let n = a.json["job"]["attempt"]["number"].as_u64().unwrap();
    (
        alice,
        id.clone(),
        w,
        format!("/api/v1/queue/attempts/{id}/{n}"),
        entry,
    )
}

async fn remote_workers_are_held_to_the_queue_rules(b: Backend) {
    let h = Harness::start(b).await;
    let (alice, id, w, attempt, entry) = taken(&h).await;

    // People take no jobs; nobody without a token does anything.
    for token in [Some(alice.as_str()), Some(h.organiser.as_str()), None] {
        let a = h.post(token, "/api/v1/queue/take", json!({})).await;
        let want = if token.is_some() { 403 } else { 401 };
        assert_eq!(a.status, want, "{a:?}");
        let a = h.get(token, &format!("{attempt}/entry")).await;
        assert_eq!(a.status, want, "{a:?}");
    }
    // A worker token is good for nothing else.
    let a = h.get(Some(&w), &format!("/api/v1/submissions/{id}")).await;
    assert_eq!(a.status, 403, "{a:?}");

    // A worker of another build is refused its takes, and told the server's build.
    let other = store::Build {
        judge_version: "0.0.1-old".into(),
        runtime_lock: "old-lock".into(),
    };
    let old = worker_token(&h, "remote-old").await;
    for a in [
        h.post(Some(&old), "/api/v1/queue/announce", announcement(other))
            .await,
        h.post(Some(&old), "/api/v1/queue/take", json!({})).await,
    ] {
        assert_eq!((a.status, a.code()), (409, "wrong_version"), "{a:?}");
        assert_eq!(
            a.json["error"]["server"]["judge_version"],
            judge::rescore::JUDGE_VERSION
        );
    }

    // A disabled worker is told so by name, and so is a draining one.
    let (dis_id, dis) = worker(&h, "remote-disabled", server_build()).await;
    let a = h
        .post_empty(
            Some(&h.organiser),
            &format!("/api/v1/workers/{dis_id}/disable?why=test"),
        )
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    let a = h.post(Some(&dis), "/api/v1/queue/take", json!({})).await;
    assert_eq!((a.status, a.code()), (403, "worker_disabled"), "{a:?}");
    let (drain_id, drain) = worker(&h, "remote-draining", server_build()).await;
    let a = h
        .post_empty(
            Some(&h.organiser),
            &format!("/api/v1/workers/{drain_id}/drain?why=test"),
        )
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    let a = h.post(Some(&drain), "/api/v1/queue/take", json!({})).await;
    assert_eq!((a.status, a.code()), (403, "worker_draining"), "{a:?}");

    // Another worker of the right build gets nothing of this attempt.
    let (_, stranger) = worker(&h, "remote-2", server_build()).await;
    let a = h
        .post(Some(&stranger), "/api/v1/queue/take", json!({}))
        .await;
    assert_eq!(a.status, 204, "nothing else is queued: {a:?}");
    let a = h.get(Some(&stranger), &format!("{attempt}/entry")).await;
    assert_eq!((a.status, a.code()), (409, "attempt_refused"), "{a:?}");
    let folder = tar(&[("result/result.json", b"{}")]);
    let a = h
        .put_bytes(&stranger, &format!("{attempt}/result"), folder)
        .await;
    assert_eq!((a.status, a.code()), (409, "attempt_refused"), "{a:?}");
    let a = h
        .post(
            Some(&stranger),
            &format!("{attempt}/report"),
            scored_report(),
        )
        .await;
    assert_eq!(a.status, 409, "{a:?}");
    let a = h
        .post(
            Some(&stranger),
            &format!("{attempt}/heartbeat"),
            json!({"stage": "quiz", "done": 1, "total": 2}),
        )
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    assert!(
        a.json.get("Lost").is_some(),
        "a stranger's heartbeat: {a:?}"
    );
    let s = h
        .get(Some(&h.organiser), &format!("/api/v1/submissions/{id}"))
        .await;
    assert_eq!(s.json["state"], "running", "{s:?}");

    // The worker that holds it: the entry exactly as uploaded, a heartbeat that holds.
    let r = h
        .http
        .get(h.url(&format!("{attempt}/entry")))
        .bearer_auth(&w)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.bytes().await.unwrap().to_vec(), entry);
    let a = h
        .post(
            Some(&w),
            &format!("{attempt}/heartbeat"),
            json!({"stage": "quiz", "done": 1, "total": 2}),
        )
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    assert!(a.json.get("Held").is_some(), "{a:?}");

    // A judged report needs its result folder first.
    let a = h
        .post(Some(&w), &format!("{attempt}/report"), scored_report())
        .await;
    assert_eq!((a.status, a.code()), (409, "result_missing"), "{a:?}");
    let folder = tar(&[
        ("result/result.json", scored_result().to_string().as_bytes()),
        ("result/logs/quiz.log", b"quiz: record A0001 ok (remote)\n"),
        ("result/private/exam.log", b"exam: hidden\n"),
    ]);
    let a = h.put_bytes(&w, &format!("{attempt}/result"), folder).await;
    assert_eq!(a.status, 204, "{a:?}");
    let a = h
        .post(Some(&w), &format!("{attempt}/report"), scored_report())
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    assert!(a.json["result"].is_string(), "{a:?}");
    // Accepted once.
    let a = h
        .post(Some(&w), &format!("{attempt}/report"), scored_report())
        .await;
    assert_eq!((a.status, a.code()), (409, "attempt_refused"), "{a:?}");
    let a = h
        .put_bytes(
            &w,
            &format!("{attempt}/result"),
            tar(&[("result/result.json", b"{}")]),
        )
        .await;
    assert_eq!(a.status, 409, "a folder after the report: {a:?}");

    // The team reads its quiz log from what the worker sent, and only that.
    let s = h
        .get(Some(&alice), &format!("/api/v1/submissions/{id}"))
        .await;
    assert_eq!(s.json["state"], "scored", "{s:?}");
    let a = h
        .get(Some(&alice), &format!("/api/v1/submissions/{id}/logs/quiz"))
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    assert!(a.text.contains("(remote)"), "{a:?}");
    let a = h
        .get(Some(&alice), &format!("/api/v1/submissions/{id}/logs/exam"))
        .await;
    assert_ne!(a.status, 200, "{a:?}");
}

/// A tar whose one member's name is written as given, unchecked (the tar crate refuses
/// to write `..` itself).
fn raw_tar(name: &[u8], body: &[u8]) -> Vec<u8> {
    let mut h = tar::Header::new_gnu();
    h.as_gnu_mut().unwrap().name[..name.len()].copy_from_slice(name);
    h.set_size(body.len() as u64);
    h.set_mode(0o644);
    h.set_entry_type(tar::EntryType::Regular);
    h.set_cksum();
    let mut b = tar::Builder::new(Vec::new());
    b.append(&h, body).unwrap();
    b.into_inner().unwrap()
}

async fn a_folder_for_a_lapsed_attempt_is_refused(b: Backend) {
    let h = Harness::start(b).await;
    let (_, _, w, attempt, _) = taken(&h).await;
    // The worker went quiet past its lease; the reconciler took the attempt back.
    h.t.clock.advance(chrono::Duration::seconds(61));
    let done = h.t.reconcile().await.unwrap();
    assert_eq!(done.lost.len(), 1);
    let folder = tar(&[("result/result.json", b"{}")]);
    let a = h.put_bytes(&w, &format!("{attempt}/result"), folder).await;
    assert_eq!((a.status, a.code()), (409, "attempt_refused"), "{a:?}");
    let a = h
        .post(Some(&w), &format!("{attempt}/report"), scored_report())
        .await;
    assert_eq!(a.status, 409, "{a:?}");
    assert_eq!(h.incoming(), Vec::<std::path::PathBuf>::new());
}

async fn result_archives_cannot_climb_out_of_their_folder(b: Backend) {
    let h = Harness::start(b).await;
    let (_, _, w, attempt, _) = taken(&h).await;
    let escape = h.state.path().join("results/escaped.txt");
    for archive in [
        raw_tar(b"../../escaped.txt", b"out"),
        raw_tar(b"/tmp/physiojudge-escaped.txt", b"out"),
        {
            // A link to the server's files, then a write through it.
            let mut hd = tar::Header::new_gnu();
            hd.set_entry_type(tar::EntryType::Symlink);
            hd.set_size(0);
            hd.set_mode(0o777);
            hd.set_link_name("/etc").unwrap();
            hd.set_path("result/etc").unwrap();
            hd.set_cksum();
            let mut t = tar::Builder::new(Vec::new());
            t.append(&hd, &b""[..]).unwrap();
            t.into_inner().unwrap()
        },
        b"not a tar at all".to_vec(),
    ] {
        let a = h.put_bytes(&w, &format!("{attempt}/result"), archive).await;
        assert_eq!((a.status, a.code()), (422, "invalid_result"), "{a:?}");
    }
    assert!(!escape.exists());
    assert!(!std::path::Path::new("/tmp/physiojudge-escaped.txt").exists());
    // Nothing of the refused archives is left in the server's scratch folder.
    assert_eq!(h.incoming(), Vec::<std::path::PathBuf>::new());
    // Nor in the attempt's place.
    let n: u32 = attempt.rsplit('/').next().unwrap().parse().unwrap();
    let id: store::SubmissionId = attempt.split('/').nth(5).unwrap().parse().unwrap();
    let dir = server::layout::result_dir(
        h.state.path(),
        store::AttemptKey {
            submission: id,
            number: n,
        },
    );
    assert!(!dir.exists(), "{}", dir.display());
}

/// A take whose answer was lost is sent again with its id: the same attempt, not a
/// second one. A worker process that starts again (a new instance id) ends what the
/// previous process held at once, as `worker_restarted`, not held against it.
async fn a_take_sent_again_and_a_restarted_worker(b: store::Backend) {
    let h = Harness::start(b).await;
    let (alice, _) = h.ready(json!(5)).await;
    let mut ids = Vec::new();
    for _ in 0..2 {
        let a = h.upload(&alice, "cinc2017", "", good_entry()).await;
        assert_eq!(a.status, 201, "{a:?}");
        ids.push(a.json["id"].as_str().unwrap().to_owned());
    }
    let token = worker_token(&h, "remote-1").await;
    let mut started = announcement(server_build());
    started["instance"] = json!("process-1");
    let a = h
        .post(Some(&token), "/api/v1/queue/announce", started.clone())
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    let take = json!({"take": "take-1"});
    let first = h
        .post(Some(&token), "/api/v1/queue/take", take.clone())
        .await;
    assert_eq!(first.status, 200, "{first:?}");
    let again = h
        .post(Some(&token), "/api/v1/queue/take", take.clone())
        .await;
    assert_eq!(again.status, 200, "{again:?}");
    assert_eq!(again.json["job"]["attempt"], first.json["job"]["attempt"]);
    let s = h
        .get(Some(&alice), &format!("/api/v1/submissions/{}", ids[1]))
        .await;
    assert_eq!(s.json["state"], "queued", "the second waits: {s:?}");

    // The process is killed and started again: its attempt ends now, queued again.
    started["instance"] = json!("process-2");
    let a = h
        .post(Some(&token), "/api/v1/queue/announce", started)
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    let org = h
        .get(
            Some(&h.organiser),
            &format!("/api/v1/submissions/{}", ids[0]),
        )
        .await;
    assert_eq!(org.json["state"], "queued", "{org:?}");
    assert!(org.text.contains("worker_restarted"), "{org:?}");
    // The old take id hands out nothing more; a new take gets the oldest again.
    let a = h.post(Some(&token), "/api/v1/queue/take", take).await;
    assert_eq!(a.status, 204, "{a:?}");
    let a = h
        .post(
            Some(&token),
            "/api/v1/queue/take",
            json!({"take": "take-2"}),
        )
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(a.json["job"]["attempt"]["submission"], ids[0].as_str());
    assert_eq!(a.json["job"]["attempt"]["number"], 2);
    let list = h.get(Some(&h.organiser), "/api/v1/workers").await;
    let w = list.json["workers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["name"] == "remote-1")
        .unwrap()
        .clone();
    assert_eq!(
        (w["error_streak"].clone(), w["recent_errors"].clone()),
        (json!(0), json!(0))
    );
}
