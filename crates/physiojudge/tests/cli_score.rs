//! `physiojudge score` on the real labels: JSON shape (docs/scoring.md), modes, exit codes.

use testkit::physiojudge;

fn json(args: &[&str]) -> serde_json::Value {
    let o = physiojudge!(args);
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
    let o = physiojudge!(&compat);
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

    let text = physiojudge!(&args[..args.len() - 1]);
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
fn physionet2022_json_text_and_modes() {
    let Some(data) = testkit::shared_data("physionet2022_json_text_and_modes") else {
        return;
    };
    let labels = data.join("circor2022/training_data");
    let outputs = tempfile::tempdir().unwrap();
    // Two patients answered, one of them with a file the official code would crash on.
    std::fs::write(
        outputs.path().join("2530.csv"),
        "#2530\nPresent,Unknown,Absent,Abnormal,Normal\n0,0,1,0,1\n0.1,0.1,0.8,0.2,0.8\n",
    )
    .unwrap();
    std::fs::write(outputs.path().join("9979.csv"), "#9979\nPresent\n").unwrap();
    let args = [
        "score",
        "physionet2022",
        "--labels",
        labels.to_str().unwrap(),
        "--outputs",
        outputs.path().to_str().unwrap(),
        "--json",
    ];
    let v = json(&args);
    assert_eq!(
        (v["challenge"].as_str(), v["mode"].as_str()),
        (Some("physionet2022"), Some("strict"))
    );
    let items = v["items"].as_array().unwrap();
    assert_eq!(items.len(), 46);
    let p2530 = items.iter().find(|i| i["patient"] == "2530").unwrap();
    assert_eq!(
        (
            p2530["murmur_output"].as_str(),
            p2530["outcome_output"].as_str()
        ),
        (Some("Absent"), Some("Normal"))
    );
    assert_eq!(p2530["defaulted"], false);
    // 44 missing outputs and 9979's two lines.
    let errors = v["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 45);
    assert!(errors.iter().any(|e| e["file"] == "9979.csv" && e["reason"].as_str().unwrap().contains("2 line(s)")));
    assert!(v["score"].is_number() && v["outcome_cost"].is_number());
    assert_eq!(
        v["murmur"]["classes"],
        serde_json::json!(["Present", "Unknown", "Absent"])
    );
    assert!(v["murmur"]["per_class"]["auroc"].as_array().unwrap().len() == 3);

    // Compat: the first missing output stops the run with the official message.
    let mut compat = args.to_vec();
    compat.push("--official-compat");
    let o = physiojudge!(&compat);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("Output file 46778.csv not found for label file 46778.txt."),
        "{err}"
    );

    // The text report is laid out like evaluate_model.py's.
    let text = physiojudge!(&args[..args.len() - 1]);
    assert!(text.status.success());
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.starts_with("#Murmur scores\nAUROC,AUPRC,F-measure,Accuracy,Weighted Accuracy,Cost\n"),
        "{text}"
    );
    assert!(
        text.contains("\n#Outcome scores (per class)\nClasses,Abnormal,Normal\n"),
        "{text}"
    );
    assert!(
        text.contains("45 errors (each scored with the default answer)"),
        "{text}"
    );
}

#[test]
fn score_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    // No records in the reference: the work failed.
    let o = physiojudge!(&[
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
    assert_eq!(physiojudge!(&["score", "cpsc2021"]).status.code(), Some(2));
    assert_eq!(
        physiojudge!(&["score", "physionet2022", "--labels", "x"])
            .status
            .code(),
        Some(2)
    );
    let o = physiojudge!(&[
        "score",
        "physionet2022",
        "--labels",
        dir.path().to_str().unwrap(),
        "--outputs",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no patient .txt files"));
    assert_eq!(
        physiojudge!(&["score", "nosuchchallenge"]).status.code(),
        Some(2)
    );
    assert_eq!(physiojudge!(&["score", "--help"]).status.code(), Some(0));
}
