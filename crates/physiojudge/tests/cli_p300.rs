//! `physiojudge p300 synth`: the real binary writes one `.npy` block per subject in the
//! organiser layout (float32, 65 rows, trigger row last), the same bytes for the same seed,
//! prints one summary line, and keeps the exit-code contract (0 ok, 1 the work failed,
//! 2 usage).

use std::path::{Path, PathBuf};
use std::process::Output;

use testkit::{physiojudge, text};

use formats::npy::{self, Dtype};

fn synth(out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["p300", "synth", "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    physiojudge!(&args)
}

#[test]
fn writes_one_block_per_subject_the_same_for_the_same_seed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("p300");
    let args = [
        "--subjects",
        "2",
        "--seed",
        "3",
        "--chars",
        "2",
        "--snr",
        "1.5",
    ];
    let o = synth(&dir, &args);
    assert!(o.status.success(), "{}", text(&o));
    let stdout = String::from_utf8(o.stdout.clone()).unwrap();
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(
        stdout.starts_with("p300speller: 2 subjects × 2 characters"),
        "{stdout}"
    );
    assert!(stdout.contains("(seed 3, snr 1.5)"), "{stdout}");

    let written = testkit::tree(&dir);
    let names: Vec<PathBuf> = written.iter().map(|f| f.0.clone()).collect();
    assert_eq!(
        names,
        vec![
            PathBuf::from("S01/block_1.npy"),
            PathBuf::from("S02/block_1.npy")
        ]
    );
    let samples = 250 + 2 * 3810;
    for (name, bytes) in &written {
        let a = npy::parse(bytes, &name.to_string_lossy()).unwrap();
        assert_eq!(a.shape, vec![65, samples], "{name:?}");
        assert_eq!(a.dtype, Dtype::F4, "{name:?}");
        let trigger = a.row(64).unwrap();
        let events: Vec<(usize, f64)> = trigger
            .iter()
            .copied()
            .enumerate()
            .filter(|&(_, v)| v != 0.0)
            .collect();
        assert_eq!(events.len(), 2 * 67, "{name:?}");
        assert_eq!(events[0].0, 250);
        assert!((101.0..=136.0).contains(&events[0].1), "{:?}", events[0]);
        assert_eq!(events.last().unwrap().1, 241.0);
        assert!(
            a.row(0).unwrap().iter().any(|&v| v != 0.0),
            "EEG rows hold signal"
        );
    }
    assert_ne!(written[0].1, written[1].1, "subjects differ");

    // The same seed writes the same bytes; another seed does not.
    let again = tmp.path().join("again");
    let o = synth(&again, &args);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(testkit::tree(&again), written);
    let other = tmp.path().join("other");
    let o = synth(
        &other,
        &[
            "--subjects",
            "2",
            "--seed",
            "4",
            "--chars",
            "2",
            "--snr",
            "1.5",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert_ne!(testkit::tree(&other), written);

    // Defaults: 32 characters.
    let dflt = tmp.path().join("default");
    let o = synth(&dflt, &["--subjects", "1", "--seed", "3"]);
    assert!(o.status.success(), "{}", text(&o));
    let a = npy::read(dflt.join("S01/block_1.npy")).unwrap();
    assert_eq!(a.shape, vec![65, 250 + 32 * 3810]);
}

#[test]
fn usage_errors_exit_2_and_failures_exit_1() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("x");
    let d = dir.to_str().unwrap();
    // `p300 synth --out DIR` followed by each of these, then a few other command lines.
    let after_out = [
        "--seed 1 --subjects 0",
        "--seed 1 --subjects 100",
        "--seed 1 --subjects 1 --chars 0",
        "--seed 1 --subjects 1 --chars 201",
        "--seed 1 --subjects 1 --snr -1",
        "--seed 1 --subjects 1 --snr nan",
        "--seed 1 --subjects 1 --snr x",
        "--seed -1 --subjects 1",
        "--subjects 1",
        "--seed 1",
        "--seed 1 --subjects 1 --records 2",
    ];
    let mut cases: Vec<Vec<&str>> = after_out
        .iter()
        .map(|extra| {
            let mut args = vec!["p300", "synth", "--out", d];
            args.extend(extra.split_whitespace());
            args
        })
        .collect();
    cases.extend([
        vec!["p300", "synth", "--seed", "1", "--subjects", "1"],
        vec!["p300", "synth"],
        vec!["p300", "nope"],
        vec!["p300"],
        // The generic synth command does not know this challenge.
        vec!["synth", "p300speller", "--out", d, "--seed", "1"],
    ]);
    for args in &cases {
        let o = physiojudge!(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(!dir.exists(), "{args:?} created the folder");
    }
    let o = physiojudge!(&[
        "p300",
        "synth",
        "--out",
        d,
        "--seed",
        "1",
        "--subjects",
        "0",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("subjects must be 1 to 99, not 0"), "{err}");

    // A folder that is not empty is refused, named, and left alone.
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("keep.txt"), "mine").unwrap();
    let o = synth(&dir, &["--subjects", "1", "--seed", "1", "--chars", "1"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(d) && err.contains("not empty"), "{err}");
    assert_eq!(testkit::tree(&dir).len(), 1);
}
