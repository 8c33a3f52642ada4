//! A challenge kind added without touching the judge crate: the toy kind ([`toy`], one
//! file here) is registered with one line, a definition names it (`scorer = "toy"`), and
//! the real judge runs a shell entry through it end to end on synthetic data in the
//! cinc2017 layout. The score is the toy's figure, computed here independently: the
//! fraction of exam records the entry's rule answers right.
//!
//! Needs root and the Python runtime (built once in `target/tmp/runtime`), as every
//! evaluation does. No libtest harness: this binary is also the sandbox's init program
//! (`sandbox::reexec`), so its `main` must look at its arguments first.

mod toy;

use std::path::Path;
use std::process::ExitCode;

use judge::challenge::ScorerId;
use judge::dataset::Dataset;
use judge::result::EntryVerdict;
use judge::{Challenge, Judge, Request};

/// A challenge of the toy kind on data in the cinc2017 layout, through the per-record
/// interface.
const DEFINITION: &str = r#"
id = "toy-challenge"
title = "A toy: classes by record number"
interface = "per-record"
layout = "cinc2017"
scorer = "toy"
required_files = ["setup.sh", "next.sh"]

[split]
training = 0.0
quiz = 0.3
exam = 0.7

[limits]
memory_mb = 512
pids = 64
setup_time_s = 60
record_cpu_s = 10
record_wall_s = 30
startup_s = 0
stage_cap_s = 600

[labels]
withhold = []
strip = []
"#;

/// The entry: no Python, a class from the record's last digit.
const NEXT_SH: &str = "#!/bin/bash\n\
    # Even last digit: N; odd: A.\n\
    if (( ${1: -1} % 2 == 0 )); then c=N; else c=A; fi\n\
    echo \"$1,$c\" >> answers.txt\n";

/// The entry's rule, as the test reads it.
fn guess(record: &str) -> &'static str {
    let last = record.bytes().last().unwrap() - b'0';
    if last.is_multiple_of(2) { "N" } else { "A" }
}

fn runtime() -> runtime::Runtime {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("runtime");
    runtime::setup(&dir, Path::new(runtime::DEFAULT_PYTHON)).expect("the Python runtime")
}

fn a_toy_kind_is_judged_end_to_end() {
    // Unknown until registered: the definition is refused, naming the known kinds.
    let e = Challenge::parse(DEFINITION, "toy.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown scorer `toy`"), "{e}");
    let toy = judge::kinds::register(&toy::Toy).expect("a new kind");
    assert!(
        judge::kinds::register(&toy::Toy).is_err(),
        "registered twice"
    );
    let c = Challenge::parse(DEFINITION, "toy.toml").unwrap();
    assert_eq!(c.scorer, toy);
    assert_eq!(ScorerId::named("toy"), Some(toy));

    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    synth::write_challenge("cinc2017", &data, 2026, Some(20)).unwrap();
    let entry = dir.path().join("entry");
    std::fs::create_dir_all(&entry).unwrap();
    std::fs::write(entry.join("setup.sh"), "#!/bin/bash\ntrue\n").unwrap();
    std::fs::write(entry.join("next.sh"), NEXT_SH).unwrap();

    let init = sandbox::reexec::this_program().unwrap();
    let mut judge = Judge::new(runtime(), init, 76..77).unwrap();
    judge.add_challenge(c.clone());
    let out = dir.path().join("out");
    let request = Request {
        challenge: &c.id,
        entry: &entry,
        data: &data,
        out: &out,
        cancel: None,
    };
    let r = judge.evaluate(&request, &mut ()).unwrap();
    assert_eq!(r.verdict, EntryVerdict::Scored, "{r:?}");

    // The toy's figure, independently: the exam's records, their reference, the rule.
    let exam = Dataset::open(c.layout, &data)
        .unwrap()
        .split(&c.split, &c.id)
        .unwrap()
        .exam;
    let reference = toy::pairs(&std::fs::read_to_string(data.join("REFERENCE.csv")).unwrap());
    let right = exam
        .iter()
        .filter(|i| reference[&i.id] == guess(&i.id))
        .count();
    assert!(right > 0 && right < exam.len(), "{right} of {}", exam.len());
    let expected = right as f64 / exam.len() as f64;
    let full: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("private/exam-score.json")).unwrap())
            .unwrap();
    println!("toy: {right} of {} exam records right: {full}", exam.len());
    assert_eq!(
        full["score"].as_f64().map(f64::to_bits),
        Some(expected.to_bits())
    );
    let shown = r.score.unwrap();
    assert!((shown - expected).abs() <= 5e-4, "{shown} for {expected}");
    assert!(
        r.warnings.iter().all(|w| !w.contains("degenerate")),
        "{:?}",
        r.warnings
    );

    // The kind is asked again for a rescoring and the record viewer.
    let again = judge::rescore::score_result_folder(&c, &data, &out)
        .unwrap()
        .unwrap();
    assert_eq!(again.report, full);
    let quiz = &Dataset::open(c.layout, &data)
        .unwrap()
        .split(&c.split, &c.id)
        .unwrap()
        .quiz[0];
    let ask = judge::kinds::view::Ask {
        from: None,
        to: None,
        columns: 100,
    };
    let view = judge::kinds::of(c.scorer)
        .record_view(
            &data,
            &out.join(judge::rescore::QUIZ_OUTPUTS),
            &quiz.id,
            ask,
        )
        .unwrap();
    let answer = view.facts.iter().find(|f| f.label == "Answer").unwrap();
    assert_eq!(answer.value, guess(&quiz.id));
    assert_eq!(answer.verdict, Some(reference[&quiz.id] == guess(&quiz.id)));
}

fn main() -> ExitCode {
    sandbox::reexec::hook();
    if !testkit::root("toy_kind") {
        println!("0 passed, 0 failed, 1 skipped");
        return ExitCode::SUCCESS;
    }
    let ok = std::panic::catch_unwind(a_toy_kind_is_judged_end_to_end).is_ok();
    sandbox::shutdown();
    println!(
        "test a_toy_kind_is_judged_end_to_end ... {}",
        if ok { "ok" } else { "FAILED" }
    );
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
