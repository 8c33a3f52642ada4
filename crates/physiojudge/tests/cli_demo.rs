//! `physiojudge demo`, the README's main job: it needs nothing but this checkout (its data
//! comes from `synth`), passes, and every example entry beats the trivial baseline.
//! Needs root (the sandbox); builds the runtime once in target/tmp.

#[test]
fn demo_runs_every_example_and_each_beats_the_trivial_answer() {
    if !testkit::root("demo") {
        return;
    }
    // No --out: the demo writes to a fresh folder in physiojudge's data folder.
    let home = tempfile::tempdir().unwrap();
    let o = testkit::physiojudge_command!()
        .arg("demo")
        .env("XDG_DATA_HOME", home.path())
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
    let folder = text
        .lines()
        .find_map(|l| l.strip_prefix("data, entries and results: "))
        .unwrap_or_else(|| panic!("the folder is not printed: {text}"));
    let folder = std::path::Path::new(folder);
    assert_eq!(
        folder.parent().unwrap(),
        home.path().join("physiojudge/demo")
    );
    assert!(folder.join("results").is_dir(), "{text}");
}
