//! Worker and queue controls over real HTTP, on SQLite and PostgreSQL (docs/service.md,
//! "Workers"): the list of workers, drain / disable / enable, the version refusal and
//! automatic disabling shown to organisers, pausing a challenge's judging, the
//! workers metric, and who may do each.

mod common;

use std::time::Duration as StdDuration;

use serde_json::{Value, json};

use common::*;
use store::{Backend, WorkerRefusal};

both!(
    workers_are_listed_and_controlled_by_organisers_only,
    a_paused_challenge_accepts_and_queues_but_is_not_judged
);

const LEASE: StdDuration = StdDuration::from_secs(60);

fn worker<'a>(list: &'a Value, id: &str) -> &'a Value {
    list["workers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["id"] == id)
        .unwrap_or_else(|| panic!("worker {id} in {list}"))
}

fn judge_error() -> store::Report {
    store::Report {
        outcome: store::Outcome::Error,
        result_json: None,
        private_json: None,
        figures: Vec::new(),
        quiz_figures: Vec::new(),
        scorer_version: "score 0.1.0".into(),
        judge_version: "0.1.0".into(),
        message: Some("judge error (machine fault): out of memory".into()),
        runtime_lock: None,
        warnings: Vec::new(),
    }
}

async fn workers_are_listed_and_controlled_by_organisers_only(b: Backend) {
    let h = Harness::start(b).await;
    let (alice, _) = h.ready(json!(null)).await;
    let org = Some(h.organiser.as_str());
    let a = h
        .post(org, "/api/v1/workers", json!({"name": "gpu-1"}))
        .await;
    assert_eq!(a.status, 201, "{a:?}");
    let id = a.json["id"].as_str().unwrap().to_owned();
    let wid: store::WorkerId = id.parse().unwrap();

    // Who may look.
    assert_eq!(h.get(Some(&alice), "/api/v1/workers").await.status, 403);
    assert_eq!(h.get(None, "/api/v1/workers").await.status, 401);
    let list = h.get(org, "/api/v1/workers").await;
    assert_eq!(list.status, 200, "{list:?}");
    let server = list.json["server"].clone();
    assert!(server["judge_version"].is_string(), "{list:?}");
    assert_eq!(list.json["error_limit"], 3);
    let w = worker(&list.json, &id);
    assert_eq!(w["state"], "enabled");
    assert_eq!(w["build_matches"], false);
    assert_eq!(w["running_attempts"], 0);
    assert!(w.get("version").is_none() && w.get("last_heartbeat").is_none());

    // A worker of another judge version announces itself: refused, and shown.
    let checked = h.t.store.clone().with_build(store::Build {
        judge_version: server["judge_version"].as_str().unwrap().into(),
        runtime_lock: server["runtime_lock"].as_str().unwrap().into(),
    });
    let old = store::Announcement {
        build: store::Build {
            judge_version: "0.0.1".into(),
            runtime_lock: server["runtime_lock"].as_str().unwrap().into(),
        },
        slots: Some(2),
        host: Some("lab-3".into()),
        instance: None,
    };
    let e = checked.announce_worker(wid, &old).await.unwrap_err();
    assert!(
        matches!(e, store::Error::Refused(WorkerRefusal::WrongVersion { .. })),
        "{e}"
    );
    let list = h.get(org, "/api/v1/workers").await;
    let w = worker(&list.json, &id);
    assert_eq!(
        (w["version"].as_str(), w["build_matches"].as_bool()),
        (Some("0.0.1"), Some(false))
    );
    assert_eq!(
        (w["slots"].as_u64(), w["host"].as_str()),
        (Some(2), Some("lab-3"))
    );
    let refusal = w["refusal"]["message"].as_str().unwrap();
    assert!(refusal.contains("judge 0.0.1"), "{refusal}");
    assert!(
        refusal.contains(server["judge_version"].as_str().unwrap()),
        "{refusal}"
    );
    // Upgraded: it matches, and takes alice's submission.
    let right = store::Announcement {
        build: store::Build {
            judge_version: server["judge_version"].as_str().unwrap().into(),
            runtime_lock: server["runtime_lock"].as_str().unwrap().into(),
        },
        ..old
    };
    checked.announce_worker(wid, &right).await.unwrap();
    let up = h.upload(&alice, "cinc2017", "", good_entry()).await;
    let sub = up.json["id"].as_str().unwrap().to_owned();
    let job = checked
        .take_job(wid, LEASE, None)
        .await
        .unwrap()
        .expect("a job");
    let list = h.get(org, "/api/v1/workers").await;
    let w = worker(&list.json, &id);
    assert_eq!(w["build_matches"], true);
    assert!(w.get("refusal").is_none(), "{w}");
    assert_eq!(w["running_attempts"], 1);
    assert_eq!(w["running"][0]["submission"], sub.as_str());
    assert!(w["last_heartbeat"].is_string());

    // Who may act, and on what.
    let drain = format!("/api/v1/workers/{id}/drain");
    assert_eq!(h.post_empty(Some(&alice), &drain).await.status, 403);
    assert_eq!(h.post_empty(None, &drain).await.status, 401);
    let unknown = format!("/api/v1/workers/{}/drain", uuid::Uuid::nil());
    let a = h.post_empty(org, &unknown).await;
    assert_eq!((a.status, a.code()), (404, "not_found"), "{a:?}");
    assert_eq!(
        h.post_empty(org, "/api/v1/workers/nope/disable")
            .await
            .status,
        404
    );
    let a = h.post_empty(org, &format!("{drain}?why=")).await;
    assert_eq!(a.status, 422, "{a:?}");

    // Drain: the running attempt goes on; no new take.
    let a = h
        .post_empty(org, &format!("{drain}?why=kernel%20update"))
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(a.json["state"], "draining");
    assert_eq!(a.json["state_reason"]["message"], "kernel update");
    assert_eq!(a.json["state_reason"]["kind"], "organiser");
    assert!(a.json["state_changed_by"].is_string());
    checked.heartbeat(wid, job.attempt, LEASE).await.unwrap();
    let a = h.post_empty(org, &drain).await;
    assert_eq!((a.status, a.code()), (409, "worker_state"), "{a:?}");
    assert_eq!(a.json["error"]["worker_state"], "draining");
    // Disable: the running attempt ends as an error, never charged, queued again.
    let a = h
        .post_empty(org, &format!("/api/v1/workers/{id}/disable"))
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(
        (
            a.json["state"].as_str(),
            a.json["running_attempts"].as_u64()
        ),
        (Some("disabled"), Some(0))
    );
    let s = h
        .get(Some(&alice), &format!("/api/v1/submissions/{sub}"))
        .await;
    assert_eq!(
        (s.json["state"].as_str(), s.json["attempts"].as_u64()),
        (Some("queued"), Some(1)),
        "{s:?}"
    );
    assert!(matches!(
        checked.heartbeat(wid, job.attempt, LEASE).await,
        Err(store::Error::Refused(WorkerRefusal::Disabled(_)))
    ));
    let a = h.post_empty(org, &drain).await;
    assert_eq!((a.status, a.code()), (409, "worker_state"), "{a:?}");
    assert!(
        a.json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("enable it first"),
        "{a:?}"
    );
    let metrics = h.get(org, "/metrics").await;
    assert!(
        metrics
            .text
            .contains("physiojudge_workers{state=\"disabled\"} 1"),
        "{}",
        metrics.text
    );
    assert!(
        metrics
            .text
            .contains("physiojudge_workers{state=\"enabled\"} 0"),
        "{}",
        metrics.text
    );
    // Enable: it takes again.
    let a = h
        .post_empty(org, &format!("/api/v1/workers/{id}/enable"))
        .await;
    assert_eq!(
        (a.status, a.json["state"].as_str()),
        (200, Some("enabled")),
        "{a:?}"
    );
    let a = h
        .post_empty(org, &format!("/api/v1/workers/{id}/enable"))
        .await;
    assert_eq!((a.status, a.code()), (409, "worker_state"), "{a:?}");

    // Three errors of its own in a row: disabled automatically, shown with why, since
    // another worker takes jobs (seen asking; the last one is never disabled). (The
    // first submission has two attempts left; a second one gives the third error.)
    let (steady, _) = h.t.create_worker("steady").await.unwrap();
    h.t.take_job(steady.id, LEASE, Some(&[])).await.unwrap();
    let up = h.upload(&alice, "cinc2017", "", good_entry()).await;
    assert_eq!(up.status, 201, "{up:?}");
    for _ in 0..3 {
        let j = checked
            .take_job(wid, LEASE, None)
            .await
            .unwrap()
            .expect("a job");
        checked
            .report(wid, j.attempt, &judge_error())
            .await
            .unwrap();
    }
    let list = h.get(org, "/api/v1/workers").await;
    let w = worker(&list.json, &id);
    assert_eq!(w["state"], "disabled", "{w}");
    assert_eq!(w["state_reason"]["kind"], "repeated_errors");
    assert_eq!(w["state_reason"]["attempts"].as_array().unwrap().len(), 3);
    assert!(w.get("state_changed_by").is_none(), "{w}");
    assert_eq!(
        (w["recent_errors"].as_u64(), w["error_streak"].as_u64()),
        (Some(3), Some(3))
    );
    let metrics = h.get(org, "/metrics").await;
    assert!(
        metrics.text.contains("physiojudge_worker_alerts 0"),
        "{}",
        metrics.text
    );
    // The first submission used its three attempts: left in error, for organisers.
    let s = h
        .get(Some(&alice), &format!("/api/v1/submissions/{sub}"))
        .await;
    assert_eq!(s.json["state"], "error", "{s:?}");
}

async fn a_paused_challenge_accepts_and_queues_but_is_not_judged(b: Backend) {
    let h = Harness::start(b).await;
    let (alice, _) = h.ready(json!(null)).await;
    let org = Some(h.organiser.as_str());
    let pause = "/api/v1/challenges/cinc2017/pause";
    let resume = "/api/v1/challenges/cinc2017/resume";
    assert_eq!(h.post_empty(Some(&alice), pause).await.status, 403);
    assert_eq!(h.post_empty(None, pause).await.status, 401);
    assert_eq!(
        h.post_empty(org, "/api/v1/challenges/nope/pause")
            .await
            .status,
        404
    );
    let a = h.post_empty(org, resume).await;
    assert_eq!((a.status, a.code()), (409, "pause_state"), "{a:?}");

    let a = h.post_empty(org, &format!("{pause}?why=data%20fix")).await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(a.json["judging_paused"], true);
    assert_eq!(a.json["pause_reason"], "data fix");
    let a = h.post_empty(org, pause).await;
    assert_eq!((a.status, a.code()), (409, "pause_state"), "{a:?}");

    // Still accepted and queued; the team sees that judging is paused, and its place.
    let up = h.upload(&alice, "cinc2017", "", good_entry()).await;
    assert_eq!(up.status, 201, "{up:?}");
    let sub = up.json["id"].as_str().unwrap().to_owned();
    let c = h.get(Some(&alice), "/api/v1/challenges/cinc2017").await;
    assert_eq!(c.json["judging_paused"], true, "{c:?}");
    let s = h
        .get(Some(&alice), &format!("/api/v1/submissions/{sub}"))
        .await;
    assert_eq!(s.json["state"], "queued");
    assert_eq!(s.json["judging_paused"], true);
    assert_eq!(s.json["queue_position"], 1);
    let (w, _) = h.t.create_worker("w1").await.unwrap();
    assert_eq!(h.t.take_job(w.id, LEASE, None).await.unwrap(), None);

    let a = h.post_empty(org, resume).await;
    assert_eq!(
        (a.status, a.json["judging_paused"].as_bool()),
        (200, Some(false)),
        "{a:?}"
    );
    let s = h
        .get(Some(&alice), &format!("/api/v1/submissions/{sub}"))
        .await;
    assert_eq!(s.json["judging_paused"], false);
    let job =
        h.t.take_job(w.id, LEASE, None)
            .await
            .unwrap()
            .expect("a job");
    assert_eq!(job.attempt.submission.to_string(), sub);
}
