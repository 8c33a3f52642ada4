//! The judge as a library: `Judge::evaluate` from several threads at once on the four
//! challenges (never more evaluations at once than slots), a stop in the middle of each
//! stage (a typed outcome, the slot given back), and `result.json` read back into the
//! same value. Needs root and the Python runtime (built once in `target/tmp/runtime`).
//!
//! No libtest harness: this binary is also the sandbox's init program
//! (`sandbox::reexec`), so its `main` must look at its arguments first.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use judge::result::{EntryVerdict, Outcome, Reason, Stage};
use judge::{CancelToken, EvalResult, Event, Judge, Progress, Request};

/// The exam scores of the example entries on each challenge's generated data (seed
/// 2026, default size), as the scorers give them (`private/exam-score.json`). Pinned:
/// the judge's behaviour must not change under a refactoring. These are the figures
/// `physiojudge evaluate --json` printed at full precision before participants were
/// shown ranking numbers only (commit f3ea9ee).
const PINNED: [(&str, f64, Option<f64>); 4] = [
    ("cpsc2021", 2.4444444444444446, None),
    ("cinc2017", 0.883076923076923, None),
    ("physionet2022", 1.0, Some(15010.0)),
    ("p300speller", 114.90189077493115, None),
];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn runtime() -> runtime::Runtime {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("runtime");
    runtime::setup(&dir, Path::new(runtime::DEFAULT_PYTHON)).expect("the Python runtime")
}

/// Each challenge's generated data, made once.
fn data(id: &str) -> PathBuf {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    static MADE: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let base = DIR.get_or_init(|| tempfile::tempdir().unwrap()).path();
    let dir = base.join(id);
    let mut made = MADE.lock().unwrap_or_else(|e| e.into_inner());
    if !made.iter().any(|m| m == id) {
        synth::write_challenge(id, &dir, 2026, None).unwrap();
        made.push(id.to_string());
    }
    dir
}

fn judge(slots: std::ops::Range<u32>) -> Judge {
    let init = sandbox::reexec::this_program().unwrap();
    Judge::new(runtime(), init, slots).unwrap()
}

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Counts the evaluations under way across threads.
struct Counting<'a> {
    now: &'a AtomicUsize,
    most: &'a AtomicUsize,
    counted: bool,
}

impl Progress for Counting<'_> {
    fn event(&mut self, event: Event<'_>) {
        // The score stage ends before the evaluation gives its slot back.
        if let Event::Done(report) = event
            && report.stage == Stage::Score
        {
            self.now.fetch_sub(1, Ordering::SeqCst);
        }
        if !self.counted
            && matches!(
                event,
                Event::Stage {
                    stage: Stage::Prep,
                    ..
                }
            )
        {
            self.counted = true;
            let n = self.now.fetch_add(1, Ordering::SeqCst) + 1;
            self.most.fetch_max(n, Ordering::SeqCst);
        }
    }
}

fn four_challenges_from_four_threads() {
    let judge = judge(40..42);
    let now = AtomicUsize::new(0);
    let most = AtomicUsize::new(0);
    let ids: Vec<&str> = PINNED.iter().map(|p| p.0).collect();
    for id in &ids {
        data(id);
    }
    let outs = tempfile::tempdir().unwrap();
    let results: Vec<(String, EvalResult)> = std::thread::scope(|s| {
        let handles: Vec<_> = ids
            .iter()
            .map(|&id| {
                let (judge, now, most, outs) = (&judge, &now, &most, outs.path());
                s.spawn(move || {
                    let out = outs.join(id);
                    let entry = repo().join("entries").join(id);
                    let data = data(id);
                    let request = Request {
                        challenge: id,
                        entry: &entry,
                        data: &data,
                        out: &out,
                        cancel: None,
                    };
                    let mut p = Counting {
                        now,
                        most,
                        counted: false,
                    };
                    let r = judge.evaluate(&request, &mut p).unwrap();
                    (id.to_string(), r)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let most = most.load(Ordering::SeqCst);
    assert!(most <= 2, "{most} evaluations at once with 2 slots");
    println!("at most {most} evaluations at once");
    let mut pinned_ok = true;
    for (id, r) in &results {
        assert_eq!(r.verdict, EntryVerdict::Scored, "{id}: {r:?}");
        let full = read_json(&outs.path().join(id).join("private/exam-score.json"));
        let (_, score, cost) = PINNED.iter().find(|p| p.0 == id).unwrap();
        let got = full["score"].as_f64().unwrap();
        let got_cost = full["outcome_cost"].as_f64();
        println!("{id}: exam score {got:?}, outcome cost {got_cost:?}");
        if got.to_bits() != score.to_bits() || got_cost.map(f64::to_bits) != cost.map(f64::to_bits)
        {
            pinned_ok = false;
        }
        // result.json reads back into the very value returned.
        let text = std::fs::read(outs.path().join(id).join("result.json")).unwrap();
        let back: EvalResult = serde_json::from_slice(&text).unwrap();
        assert_eq!(&back, r, "{id}");
        // Scoring the kept outputs again (a platform's rescoring) gives the run's own
        // report and ranking numbers, and the example entries are not degenerate.
        let challenge = judge.challenge(id).unwrap();
        let again =
            judge::rescore::score_result_folder(challenge, &data(id), &outs.path().join(id))
                .unwrap()
                .unwrap_or_else(|| panic!("{id}: no exam outputs to rescore"));
        assert_eq!(again.report, full, "{id}: rescored report");
        assert_eq!(Some(&again.exam_score), r.exam_score.as_ref(), "{id}");
        // The quiz's kept outputs too: the run's own full quiz report (private when
        // the quiz's labels are hidden, else the one in result.json).
        let quiz = std::fs::read_to_string(outs.path().join(id).join("private/quiz-score.json"))
            .ok()
            .map(|t| serde_json::from_str::<serde_json::Value>(&t).unwrap())
            .or_else(|| r.quiz_score.as_ref().map(|s| s.report.clone()));
        assert_eq!(quiz.is_some(), r.split.quiz > 0, "{id}: quiz scored");
        assert_eq!(again.quiz_report, quiz, "{id}: rescored quiz report");
        assert_eq!(again.warnings, Vec::<String>::new(), "{id}");
    }
    assert!(
        pinned_ok,
        "the exam scores moved from the pinned ones (see above)"
    );
}

/// Stops the evaluation when `stage` starts (or, for a stage with records, once its
/// first record is done).
struct StopAt {
    stage: Stage,
    token: CancelToken,
}

impl Progress for StopAt {
    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Stage { stage, records: 0 } if stage == self.stage => self.token.cancel(),
            Event::Record { stage, .. } if stage == self.stage => self.token.cancel(),
            _ => {}
        }
    }
}

/// A per-record entry whose setup takes a while (so that a stop comes while it runs).
fn slow_setup_entry(dir: &Path) -> PathBuf {
    let e = dir.join("slow-setup");
    std::fs::create_dir_all(&e).unwrap();
    for (name, text) in [
        ("next.sh", "echo \"$1,N\" >> answers.txt\n"),
        ("setup.sh", "sleep 30\n"),
        ("dependencies.txt", "# nothing\n"),
        ("AUTHORS.txt", "test\n"),
        ("LICENSE.txt", "MIT\n"),
    ] {
        std::fs::write(e.join(name), text).unwrap();
    }
    e
}

fn a_stop_in_each_stage_ends_typed_and_gives_the_slot_back() {
    // One slot: a stop that kept it would make the next evaluation wait for ever.
    let judge = judge(42..43);
    let tmp = tempfile::tempdir().unwrap();
    let slow = slow_setup_entry(tmp.path());
    let cases: [(&str, PathBuf, Stage); 4] = [
        ("cinc2017", slow, Stage::Prep),
        (
            "physionet2022",
            repo().join("entries/physionet2022"),
            Stage::Train,
        ),
        ("cinc2017", repo().join("entries/cinc2017"), Stage::Quiz),
        ("cpsc2021", repo().join("entries/cpsc2021"), Stage::Exam),
    ];
    for (i, (id, entry, stage)) in cases.iter().enumerate() {
        let out = tmp.path().join(format!("out-{i}"));
        let data = data(id);
        let token = CancelToken::new();
        let request = Request {
            challenge: id,
            entry,
            data: &data,
            out: &out,
            cancel: Some(&token),
        };
        let mut p = StopAt {
            stage: *stage,
            token: token.clone(),
        };
        let r = judge.evaluate(&request, &mut p).unwrap();
        assert_eq!(r.verdict, EntryVerdict::Stopped, "{id} {stage:?}: {r:?}");
        let report = r.stages.iter().find(|s| s.stage == *stage).unwrap();
        assert_eq!(
            report.outcome,
            Outcome::Failed {
                reason: Reason::Stopped
            },
            "{id} {stage:?}: {r:?}"
        );
        for later in r.stages.iter().filter(|s| s.stage as u8 > *stage as u8) {
            assert!(
                matches!(&later.outcome, Outcome::Skipped { why }
                    if why.contains("stopped") || why.contains("no train stage")),
                "{id}: {later:?}"
            );
        }
        assert!(r.score.is_none());
        let back: EvalResult =
            serde_json::from_slice(&std::fs::read(out.join("result.json")).unwrap()).unwrap();
        assert_eq!(back, r);
        println!("{id}: stopped in {stage:?}");
    }
}

/// Each challenge's trivial baseline is scored with the warning "degenerate output"
/// (computed from the exam outputs the run kept), and scoring its folder again gives
/// the same report.
fn trivial_entries_are_degenerate() {
    let judge = judge(40..42);
    let outs = tempfile::tempdir().unwrap();
    // The trivial baselines `physiojudge demo` runs: each kind's own.
    for id in ["cpsc2021", "cinc2017", "physionet2022", "p300speller"] {
        let entry = outs.path().join(format!("entry-{id}"));
        let kind = judge::kinds::of(judge.challenge(id).unwrap().scorer);
        let trivial = kind.shipped().trivial;
        assert!(!trivial.is_empty(), "{id}");
        for file in trivial {
            let to = entry.join(file.path);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::write(&to, file.bytes).unwrap();
        }
        let out = outs.path().join(id);
        let data = data(id);
        let request = Request {
            challenge: id,
            entry: &entry,
            data: &data,
            out: &out,
            cancel: None,
        };
        let r = judge.evaluate(&request, &mut ()).unwrap();
        assert_eq!(r.verdict, EntryVerdict::Scored, "{id}: {r:?}");
        let challenge = judge.challenge(id).unwrap();
        let warnings = judge::rescore::warnings(challenge, &out);
        println!("{id}: {warnings:?}");
        assert_eq!(warnings.len(), 1, "{id}: {warnings:?}");
        assert!(
            warnings[0].starts_with("degenerate output: "),
            "{id}: {warnings:?}"
        );
        let again = judge::rescore::score_result_folder(challenge, &data, &out)
            .unwrap()
            .unwrap();
        assert_eq!(
            again.report,
            read_json(&out.join("private/exam-score.json")),
            "{id}"
        );
        assert_eq!(again.warnings, warnings, "{id}");
    }
}

fn main() -> ExitCode {
    sandbox::reexec::hook();
    let tests: [(&str, fn()); 3] = [
        (
            "four_challenges_from_four_threads",
            four_challenges_from_four_threads,
        ),
        (
            "a_stop_in_each_stage_ends_typed_and_gives_the_slot_back",
            a_stop_in_each_stage_ends_typed_and_gives_the_slot_back,
        ),
        (
            "trivial_entries_are_degenerate",
            trivial_entries_are_degenerate,
        ),
    ];
    // Arguments that are not flags filter by name, as libtest's do.
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let chosen: Vec<_> = tests
        .iter()
        .filter(|(name, _)| filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str())))
        .collect();
    if !testkit::root("library") {
        println!("0 passed, 0 failed, {} skipped", chosen.len());
        return ExitCode::SUCCESS;
    }
    let (mut passed, mut failed) = (0, 0);
    for (name, test) in chosen {
        println!("test {name} ...");
        match std::panic::catch_unwind(test) {
            Ok(()) => {
                println!("test {name} ... ok");
                passed += 1;
            }
            Err(_) => {
                println!("test {name} ... FAILED");
                failed += 1;
            }
        }
    }
    sandbox::shutdown();
    println!("{passed} passed, {failed} failed");
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
