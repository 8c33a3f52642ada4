//! Schemathesis (PyPI, pinned in tests/schemathesis/requirements.txt, installed by
//! scripts/test.sh) against the OpenAPI document of a running server: generated
//! requests, valid and not, for every operation; no answer may be a 5xx, and every
//! answer must be one the document declares, in the declared content type and shape.
//!
//! The server holds a challenge, an open phase, a team, one scored submission and the
//! worker that judged it, and a second submission held by a remote worker; the
//! operations' path ids point at them, so that the requests reach past "not found".
//! It runs three times: as an organiser, as the team's participant and as the remote
//! worker (the queue's endpoints: random progress, reports and result archives).
//!
//! `PHYSIOJUDGE_SCHEMATHESIS` names the `schemathesis` program; without it the test says
//! so and passes, unless `PHYSIOJUDGE_REQUIRE_SCHEMATHESIS` is set (scripts/test.sh sets
//! both), where it fails.

mod common;

use std::process::Stdio;

use serde_json::json;

use common::*;
use store::Backend;

const CHECKS: &str = "not_a_server_error,status_code_conformance,content_type_conformance,\
                      response_headers_conformance,response_schema_conformance";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schemathesis_finds_no_5xx_and_no_schema_violation() {
    let Some(st) = std::env::var_os("PHYSIOJUDGE_SCHEMATHESIS") else {
        assert!(
            std::env::var_os("PHYSIOJUDGE_REQUIRE_SCHEMATHESIS").is_none(),
            "PHYSIOJUDGE_REQUIRE_SCHEMATHESIS is set but PHYSIOJUDGE_SCHEMATHESIS is not: \
             run scripts/test.sh, which installs schemathesis"
        );
        eprintln!(
            "skipped: PHYSIOJUDGE_SCHEMATHESIS (the schemathesis program) is not set; \
             scripts/test.sh installs it and sets it"
        );
        return;
    };
    let h = Harness::start(Backend::Sqlite).await;
    let (alice, team) = h.ready(json!({"per_day": 50})).await;
    let a = h.upload(&alice, "cinc2017", "", good_entry()).await;
    assert_eq!(a.status, 201, "{a:?}");
    let submission = a.json["id"].as_str().unwrap().to_owned();
    judge_next(&h, 0.75).await;
    // The worker that judged it (judge_next registers it): the worker controls' paths.
    let worker = h.t.workers().await.unwrap().remove(0).id;
    // A remote worker of the server's build holding an attempt: the queue's paths.
    let a = h
        .post(
            Some(&h.organiser),
            "/api/v1/workers",
            json!({"name": "remote"}),
        )
        .await;
    assert_eq!(a.status, 201, "{a:?}");
    let remote = a.json["token"].as_str().unwrap().to_owned();
    let a = h
        .post(
            Some(&remote),
            "/api/v1/queue/announce",
            json!({"build": server_build(), "slots": 1, "host": "schemathesis"}),
        )
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    let a = h.upload(&alice, "cinc2017", "", good_entry()).await;
    assert_eq!(a.status, 201, "{a:?}");
    let a = h.post(Some(&remote), "/api/v1/queue/take", json!({})).await;
    assert_eq!(a.status, 200, "{a:?}");
    let held = a.json["job"]["attempt"]["submission"]
        .as_str()
        .unwrap()
        .to_owned();

    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("schemathesis.toml");
    std::fs::write(
        &config,
        format!(
            r#"
[[operations]]
include-path-regex = "^/api/v1/challenges/"
parameters = {{ "path.id" = "cinc2017", "query.phase" = "official", "path.phase" = "official", "path.team" = "{team}" }}

[[operations]]
include-path-regex = "^/api/v1/submissions/"
parameters = {{ "path.id" = "{submission}", "path.stage" = "quiz" }}

[[operations]]
include-path-regex = "^/api/v1/teams/"
parameters = {{ "path.id" = "{team}" }}

[[operations]]
include-path-regex = "^/api/v1/workers/"
parameters = {{ "path.id" = "{worker}" }}

[[operations]]
include-path-regex = "^/api/v1/queue/attempts/"
parameters = {{ "path.submission" = "{held}", "path.number" = 1 }}
"#
        ),
    )
    .unwrap();

    let schema = h.url("/api/v1/openapi.json");
    for (who, token) in [
        ("organiser", h.organiser.clone()),
        ("participant", alice),
        ("worker", remote),
    ] {
        let out = tokio::process::Command::new(&st)
            .arg("--config-file")
            .arg(&config)
            .args(["--no-color", "run", &schema])
            .args(["--url", &h.base])
            .args(["-H", &format!("Authorization: Bearer {token}")])
            .args(["--checks", CHECKS])
            .args(["--phases", "coverage,fuzzing"])
            .args(["--max-examples", "30", "--seed", "2026", "--workers", "1"])
            .args(["--request-timeout", "60"])
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .output()
            .await
            .expect("running schemathesis");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        eprintln!("schemathesis as {who}:\n{stdout}\n{stderr}");
        assert!(
            out.status.success(),
            "schemathesis as {who} found failures ({}):\n{stdout}\n{stderr}",
            out.status
        );
    }
}
