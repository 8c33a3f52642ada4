//! `physiojudge synth`: the real binary writes each challenge's layout, the same bytes for
//! the same seed, prints one summary line, and keeps the exit-code contract (0 ok, 1 the
//! work failed, 2 usage).

use std::path::Path;
use std::process::Output;

use testkit::{physiojudge, text};

fn synth(challenge: &str, out: &Path, seed: &str, records: &str) -> Output {
    let out = out.to_str().unwrap();
    physiojudge!(&[
        "synth",
        challenge,
        "--out",
        out,
        "--seed",
        seed,
        "--records",
        records,
    ])
}

fn listing(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn writes_each_layout_with_a_one_line_summary() {
    let tmp = tempfile::tempdir().unwrap();
    for (challenge, n, must) in [
        ("cpsc2021", "3", "data_0_1.atr"),
        ("cinc2017", "4", "REFERENCE.csv"),
        ("physionet2022", "2", "40000.txt"),
    ] {
        let dir = tmp.path().join(challenge);
        let o = synth(challenge, &dir, "5", n);
        assert!(o.status.success(), "{}", text(&o));
        let stdout = String::from_utf8(o.stdout.clone()).unwrap();
        assert_eq!(stdout.lines().count(), 1, "{stdout}");
        assert!(
            stdout.starts_with(&format!("{challenge}: {n} ")),
            "{stdout}"
        );
        assert!(stdout.contains("(seed 5)"), "{stdout}");
        let files = listing(&dir);
        let names: Vec<&str> = files.iter().map(|f| f.0.as_str()).collect();
        if challenge == "physionet2022" {
            assert!(
                names.iter().filter(|f| f.ends_with(".txt")).count() == 2,
                "{names:?}"
            );
        } else {
            assert!(names.contains(&must), "{names:?}");
        }

        // The same seed writes the same bytes.
        let again = tmp.path().join(format!("{challenge}-again"));
        let o = synth(challenge, &again, "5", n);
        assert!(o.status.success(), "{}", text(&o));
        assert_eq!(files, listing(&again), "{challenge}");
    }

    // The CPSC records score with the score command (labels read back).
    let preds = tmp.path().join("preds");
    std::fs::create_dir(&preds).unwrap();
    let o = physiojudge!(&[
        "score",
        "cpsc2021",
        "--reference",
        tmp.path().join("cpsc2021").to_str().unwrap(),
        "--predictions",
        preds.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["items"].as_array().unwrap().len(), 3);
}

#[test]
fn usage_errors_exit_2_and_failures_exit_1() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("x");
    let d = dir.to_str().unwrap();
    for args in [
        &["synth", "p300", "--out", d, "--seed", "1"][..],
        &["synth", "cinc2017", "--out", d],
        &["synth", "cinc2017", "--out", d, "--seed", "-1"],
        &[
            "synth",
            "cinc2017",
            "--out",
            d,
            "--seed",
            "1",
            "--records",
            "0",
        ],
        &[
            "synth",
            "cinc2017",
            "--out",
            d,
            "--seed",
            "1",
            "--records",
            "100000",
        ],
        &["synth", "cinc2017", "--seed", "1"],
    ] {
        let o = physiojudge!(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(!dir.exists() || listing(&dir).is_empty(), "{args:?}");
    }

    // A folder that is not empty is refused, named, and left alone.
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("keep.txt"), "mine").unwrap();
    let o = synth("physionet2022", &dir, "1", "2");
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(d) && err.contains("not empty"), "{err}");
    assert_eq!(listing(&dir).len(), 1);
}
