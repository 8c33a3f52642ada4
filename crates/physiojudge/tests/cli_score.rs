//! `physiojudge score` on the real labels: JSON shape (docs/scoring.md), modes, exit codes.

use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_physiojudge"))
        .args(args)
        .output()
        .expect("run physiojudge")
}

fn json(args: &[&str]) -> serde_json::Value {
    let o = run(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("one JSON object on stdout")
}

#[test]
fn cpsc2021_json_and_modes() {
    let Some(data) = testkit::shared_data("cpsc2021_json_and_modes") else {
        return;
    };
    let reference = data.join("cpsc2021");
    let preds = tempfile::tempdir().unwrap();
    std::fs::write(
        preds.path().join("data_92_12.json"),
        "{\"predict_endpoints\": [[2833,6457]]}",
    )
    .unwrap();
    std::fs::write(
        preds.path().join("data_21_7.json"),
        "{\"predict_endpoints\": [[10]]}",
    )
    .unwrap();
    let args = [
        "score",
        "cpsc2021",
        "--reference",
        reference.to_str().unwrap(),
        "--predictions",
        preds.path().to_str().unwrap(),
        "--json",
    ];
    let v = json(&args);
    assert_eq!(v["challenge"], "cpsc2021");
    assert_eq!(v["mode"], "strict");
    assert_eq!(v["items"].as_array().unwrap().len(), 23);
    let item = v["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["record"] == "data_92_12")
        .unwrap();
    assert_eq!(
        (item["u"].as_f64(), item["class_pred"].as_str()),
        (Some(3.0), Some("AFp"))
    );
    let errors = v["errors"].as_array().unwrap();
    // 21 records without a file, and data_21_7's malformed rows.
    assert_eq!(errors.len(), 22);
    assert!(
        errors.iter().any(|e| e["file"] == "data_21_7.json"
            && e["reason"].as_str().unwrap().contains("rows of 1"))
    );
    assert!(v["score"].is_number());

    // Official-compat: the malformed rows of an N record stop the official scorer (it
    // indexes row[0][1] to decide the class).
    let mut compat = args.to_vec();
    compat.push("--official-compat");
    let o = run(&compat);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("data_21_7.json") && err.contains("official scorer would stop"),
        "{err}"
    );
    std::fs::remove_file(preds.path().join("data_21_7.json")).unwrap();
    let v = json(&compat);
    assert_eq!(
        (v["score"].as_f64(), v["mode"].as_str()),
        (Some(3.0), Some("official-compat"))
    );

    let text = run(&args[..args.len() - 1]);
    assert!(
        String::from_utf8_lossy(&text.stdout).starts_with("AF Endpoints Detection Performance: ")
    );
}

#[test]
fn cinc2017_json() {
    let Some(data) = testkit::shared_data("cinc2017_json") else {
        return;
    };
    let reference = data.join("cinc2017/REFERENCE.csv");
    let dir = tempfile::tempdir().unwrap();
    let answers = dir.path().join("answers.txt");
    std::fs::write(&answers, "A00001,N\nA00001,O\nA00002,Z\n").unwrap();
    let v = json(&[
        "score",
        "cinc2017",
        "--reference",
        reference.to_str().unwrap(),
        "--answers",
        answers.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(v["challenge"], "cinc2017");
    assert_eq!(v["items"].as_array().unwrap().len(), 48);
    let errors = v["errors"].as_array().unwrap();
    assert_eq!(errors[0]["line"], 2);
    assert_eq!(errors[1]["line"], 3);
    assert!(v["f1"]["N"].is_number() && v["score_4class"].is_number());
}

#[test]
fn score_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    // No records in the reference: the work failed.
    let o = run(&[
        "score",
        "cpsc2021",
        "--reference",
        dir.path().to_str().unwrap(),
        "--predictions",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no records"));
    // Usage errors.
    assert_eq!(run(&["score", "cpsc2021"]).status.code(), Some(2));
    assert_eq!(run(&["score", "nosuchchallenge"]).status.code(), Some(2));
    assert_eq!(run(&["score", "--help"]).status.code(), Some(0));
}
