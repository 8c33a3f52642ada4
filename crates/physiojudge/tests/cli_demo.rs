//! `physiojudge demo`, the README's main job: it needs nothing but this checkout (its data
//! comes from `synth`), passes, and every example entry beats the trivial baseline.
//! Needs root (the sandbox); builds the runtime once in target/tmp.

#[test]
fn demo_runs_every_example_and_each_beats_the_trivial_answer() {
    if !testkit::root("demo") {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let o = testkit::physiojudge_command!()
        .args(["demo", "--out"])
        .arg(out.path().join("demo"))
        // Nothing of ../shared/data is used.
        .env("PHYSIOJUDGE_DATA", "/nonexistent")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for challenge in ["cpsc2021", "cinc2017", "physionet2022"] {
        let rows: Vec<&str> = text.lines().filter(|l| l.starts_with(challenge)).collect();
        assert_eq!(rows.len(), 2, "{text}");
        let first: Vec<&str> = rows[0].split_whitespace().collect();
        assert_eq!(&first[1..4], ["1", "example", "scored"], "{text}");
        let second: Vec<&str> = rows[1].split_whitespace().collect();
        assert_eq!(&second[2..4], ["trivial", "scored"], "{text}");
        let score = |r: &[&str]| r[5].parse::<f64>().unwrap();
        assert!(score(&first) > score(&second), "{text}");
    }
}
