//! `physiojudge demo`, the README's main job: it needs nothing but this checkout (its data
//! comes from `synth`), passes, and every example entry beats the trivial baseline: the
//! MATLAB ones too when the Octave runtime is set up, each row naming its language.
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
    // The MATLAB examples run when the Octave runtime is set up (scripts/test.sh builds
    // it); else the demo says why they are left out.
    let matlab = !text.contains("the MATLAB example entries are left out");
    for challenge in ["cpsc2021", "cinc2017", "physionet2022"] {
        let rows: Vec<Vec<&str>> = text
            .lines()
            .filter(|l| l.starts_with(challenge))
            .map(|l| l.split_whitespace().collect())
            .collect();
        let with_matlab = matlab && challenge != "physionet2022";
        assert_eq!(rows.len(), if with_matlab { 3 } else { 2 }, "{text}");
        // challenge rank entry language... verdict quiz exam cost time
        let row = |entry: &str| {
            rows.iter()
                .find(|r| r[2] == entry)
                .unwrap_or_else(|| panic!("no {entry} row: {text}"))
        };
        let exam = |r: &[&str]| r[r.len() - 3].parse::<f64>().unwrap();
        let verdict = |r: &[&str]| r[r.len() - 5].to_string();
        let (example, trivial) = (row("example"), row("trivial"));
        assert_eq!(&example[1..4], ["1", "example", "Python"], "{text}");
        assert_eq!(verdict(example), "scored", "{text}");
        assert_eq!(verdict(trivial), "scored", "{text}");
        assert!(exam(example) > exam(trivial), "{text}");
        if with_matlab {
            let m = row("example-matlab");
            assert_eq!(&m[3..5], ["MATLAB", "(Octave)"], "{text}");
            assert_eq!(verdict(m), "scored", "{text}");
            assert!(exam(m) > exam(trivial), "{text}");
        }
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
