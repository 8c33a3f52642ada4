//! The stages: prep → train → quiz → exam → score, for each entry interface.
//!
//! Host folders of one evaluation (under a private work folder, `0700`, root's):
//! `entry/` (the unpacked entry, given to the sandbox uid, mounted read-write at
//! `/entry`, the working directory), `judge/` (our drivers, read-only at `/judge`),
//! `<stage>/data` (what the entry may see of the split, read-only at `/data`),
//! `<stage>/out` (read-write at `/out`), `model/` (train-run and stream: read-write at
//! `/model` in train, read-only after).
//!
//! In the result folder: `result.json`, `logs/<stage>.log`, `outputs/quiz/` (the quiz
//! outputs taken from the entry and scored; never mounted; a stream quiz's session log),
//! and `private/` (exam log, per-record statuses, outputs or session log, and full score
//! report: the organiser's, never shown to a participant).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sandbox::init::Bind;
use sandbox::{InitProgram, RunConfig, Verdict};

use crate::challenge::{Challenge, Interface, ScorerId};
use crate::dataset::{Dataset, Item, materialise, shown_files};
pub use crate::judging::CancelToken;
use crate::outputs::{collect, read_capped};
use crate::result::{
    Counts, EntryVerdict, EvalResult, JudgeFailure, Outcome, Reason, RecordState, RecordStatus,
    ScoreSummary, SplitSizes, Stage, StageReport,
};
use crate::streaming::EntryConfig;
use crate::unpack::{Caps, unpack};
use crate::workdir::{RemoveError, WorkDir, remove_tree};
use crate::{JudgeError, requirements, shown, visibility};

/// Each stage's log is capped here (as in the PhysioNet sandbox).
pub const LOG_CAP: usize = 1 << 20;
/// The largest output file taken from an entry.
pub const OUTPUT_CAP: u64 = 16 << 20;
/// The most a per-record run may append to `answers.txt` (one line is expected).
pub const ANSWER_CAP: u64 = 64 << 10;

/// Our drivers of the train-run interface (the organisers replaced the team's too).
const DRIVERS: [(&str, &str); 3] = [
    ("helper_code.py", include_str!("../drivers/helper_code.py")),
    ("train_model.py", include_str!("../drivers/train_model.py")),
    ("run_model.py", include_str!("../drivers/run_model.py")),
];

/// What the caller hears while an evaluation runs (to draw progress, or to tell a
/// server's clients).
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// A stage starts; `records` will be reported one by one (0: no per-record progress).
    Stage { stage: Stage, records: usize },
    /// `done` of the stage's `total` records are done, `elapsed` into the stage.
    Record {
        stage: Stage,
        done: usize,
        total: usize,
        elapsed: Duration,
    },
    /// The stage ended.
    Done(&'a StageReport),
}

/// Hears an evaluation's [`Event`]s.
pub trait Progress {
    fn event(&mut self, _event: Event<'_>) {}
}

/// No progress output.
impl Progress for () {}

/// One evaluation's inputs.
pub struct Evaluation<'a> {
    pub challenge: &'a Challenge,
    /// A folder or archive.
    pub entry: &'a Path,
    /// A labelled folder in the challenge's native layout.
    pub data: &'a Path,
    /// The result folder to write (created; must not hold an older result).
    pub out: &'a Path,
    /// The Python runtime, mounted at `/runtime`.
    pub runtime: &'a runtime::Runtime,
    pub init: InitProgram,
    /// The sandbox slot (concurrent evaluations use different slots).
    pub slot: u32,
    /// Set by the caller to stop the evaluation (checked between records and stages,
    /// and by the sandbox while a run goes on).
    pub cancel: Option<CancelToken>,
}

/// A log capped at [`LOG_CAP`], marked when cut.
struct Log {
    buf: Vec<u8>,
    cut: bool,
}

impl Log {
    fn new() -> Log {
        Log {
            buf: Vec::new(),
            cut: false,
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        let room = LOG_CAP.saturating_sub(self.buf.len());
        if bytes.len() > room {
            self.cut = true;
        }
        self.buf.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    /// One line of the judge's own, which may quote what the entry chose (names,
    /// requirement lines, messages): shown escaped and capped (`crate::shown`).
    fn line(&mut self, text: &str) {
        self.push(format!("{}\n", shown::line(text)).as_bytes());
    }

    fn run(&mut self, what: &str, run: &sandbox::Run) {
        let r = &run.result;
        self.line(&format!(
            "== {what}: {}{} (cpu {:.3} s, wall {:.3} s, peak memory {})",
            r.verdict,
            r.message
                .as_ref()
                .map(|m| format!(": {m}"))
                .unwrap_or_default(),
            r.cpu_time_s,
            r.wall_time_s,
            r.peak_memory_bytes
                .map_or("unknown".into(), |b| format!("{} KiB", b / 1024))
        ));
        for (name, bytes) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
            if !bytes.is_empty() {
                self.line(&format!("-- {name}"));
                // At most the log's cap is shown: escape no more than that.
                let bytes = &bytes[..bytes.len().min(LOG_CAP)];
                self.push(shown::block(bytes).as_bytes());
                if !bytes.ends_with(b"\n") {
                    self.push(b"\n");
                }
            }
        }
    }

    fn save(mut self, path: &Path) -> Result<(), JudgeError> {
        if self.cut {
            self.buf.extend_from_slice(b"\n[log cut at 1 MiB]\n");
        }
        std::fs::write(path, &self.buf).map_err(|e| io(path, e))
    }
}

fn io(path: &Path, e: std::io::Error) -> JudgeError {
    JudgeError::io(path, e)
}

fn mkdir(path: &Path) -> Result<(), JudgeError> {
    std::fs::create_dir_all(path).map_err(|e| io(path, e))
}

/// Gives a tree the judge made or unpacked (its depth bounded by the unpack caps) to
/// the sandbox uid, so the entry may write there. A list, not recursion.
fn give(path: &Path, uid: u32) -> Result<(), JudgeError> {
    let id = Some(nix::unistd::Uid::from_raw(uid));
    let gid = Some(nix::unistd::Gid::from_raw(uid));
    let mut todo = vec![path.to_path_buf()];
    while let Some(path) = todo.pop() {
        nix::unistd::fchownat(
            nix::fcntl::AT_FDCWD,
            &path,
            id,
            gid,
            nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
        )
        .map_err(|e| io(&path, std::io::Error::from(e)))?;
        if std::fs::symlink_metadata(&path)
            .map_err(|e| io(&path, e))?
            .is_dir()
        {
            for e in std::fs::read_dir(&path).map_err(|e| io(&path, e))? {
                todo.push(e.map_err(|e| io(&path, e))?.path());
            }
        }
    }
    Ok(())
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// The state of one evaluation in progress.
struct Run<'a, 'p> {
    ev: &'a Evaluation<'a>,
    c: &'a Challenge,
    work: PathBuf,
    entry: PathBuf,
    uid: u32,
    progress: &'p mut dyn Progress,
    /// The current stage, when it started, its records and how many are done.
    current: (Stage, Instant, usize, usize),
    stages: Vec<StageReport>,
    /// The entry's own `answers.txt` (per-record interface), kept before the quiz.
    submitted: Option<Vec<u8>>,
    dry_run: bool,
    /// The entry's `config.toml` (stream interface), read in prep.
    config: EntryConfig,
    split: SplitSizes,
}

/// Runs every stage and writes the result folder; returns the result. An `Err` is the
/// judge's own failure (bad data folder, unwritable result folder); everything the entry
/// does wrong is a stage outcome in the result. Once the result folder is made, it gets
/// a `result.json` whatever happens: on a judge failure its verdict is `error`, with the
/// failure and whose fault it is.
pub fn evaluate(ev: &Evaluation, progress: &mut dyn Progress) -> Result<EvalResult, JudgeError> {
    if std::fs::read_dir(ev.out).is_ok_and(|mut d| d.next().is_some()) {
        return Err(JudgeError::Io {
            path: ev.out.to_path_buf(),
            kind: std::io::ErrorKind::AlreadyExists,
            message: "the result folder is not empty".into(),
        });
    }
    mkdir(&ev.out.join("logs"))?;
    private_dir(&ev.out.join("private"))?;
    let work_dir = WorkDir::new().map_err(|e| io(&std::env::temp_dir(), e))?;
    let entry = work_dir.path().join("entry");
    let mut run = Run {
        ev,
        c: ev.challenge,
        work: work_dir.path().to_path_buf(),
        entry,
        uid: sandbox::run::BASE_ID + ev.slot,
        progress,
        current: (Stage::Prep, Instant::now(), 0, 0),
        stages: Vec::new(),
        submitted: None,
        dry_run: false,
        config: EntryConfig::default(),
        split: SplitSizes::default(),
    };
    let outcome = run.all_stages();
    let result = match outcome {
        Ok(result) => result,
        Err(e) => {
            let result = EvalResult {
                challenge: ev.challenge.id.clone(),
                entry: ev.entry.display().to_string(),
                verdict: EntryVerdict::Error,
                score: None,
                split: run.split,
                stages: std::mem::take(&mut run.stages),
                quiz_score: None,
                exam_score: None,
                error: Some(JudgeFailure {
                    fault: e.fault(),
                    message: e.to_string(),
                }),
                judge_version: env!("CARGO_PKG_VERSION").to_string(),
            };
            // The judge's failure is the answer; a result that cannot be written too
            // adds nothing to it.
            let _ = write_json(&ev.out.join("result.json"), &result);
            return Err(e);
        }
    };
    drop(work_dir);
    write_json(&ev.out.join("result.json"), &result)?;
    Ok(result)
}

/// A folder only root may enter (the organiser's part of a result).
fn private_dir(path: &Path) -> Result<(), JudgeError> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path)
        .map_err(|e| io(path, e))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700)).map_err(|e| io(path, e))
}

/// Train-run challenges train; a stream challenge trains when it has training subjects.
fn has_train(c: &Challenge, training: &[Item]) -> bool {
    match c.interface {
        Interface::TrainRun => true,
        Interface::Stream => !training.is_empty(),
        _ => false,
    }
}

fn write_json(path: &Path, value: &impl serde::Serialize) -> Result<(), JudgeError> {
    let mut text = serde_json::to_vec_pretty(value).map_err(|e| JudgeError::Internal {
        message: format!("{}: {e}", path.display()),
    })?;
    text.push(b'\n');
    std::fs::write(path, text).map_err(|e| io(path, e))
}

impl Run<'_, '_> {
    /// Every stage in turn, and the result (not yet written).
    fn all_stages(&mut self) -> Result<EvalResult, JudgeError> {
        let (ev, c) = (self.ev, self.c);
        let dataset = Dataset::open(c.layout, ev.data)?;
        let splits = dataset.split(&c.split, &c.id)?;
        self.split = SplitSizes {
            training: splits.training.len(),
            quiz: splits.quiz.len(),
            exam: splits.exam.len(),
        };
        mkdir(&self.entry)?;
        let mut quiz_score = None;
        let mut exam_score = None;
        let mut ok = self.prep()?;
        if ok && has_train(c, &splits.training) && !self.cancelled() {
            ok = self.train(&splits.training)?;
        }
        if ok && !self.cancelled() {
            let (passed, score) = self.test(Stage::Quiz, &splits.quiz)?;
            quiz_score = score;
            ok = passed;
        }
        if ok && self.dry_run {
            self.skip(
                Stage::Exam,
                "DRYRUN: the entry asked to stop after the quiz",
            );
            self.skip(Stage::Score, "DRYRUN: no score");
        } else if ok && !self.cancelled() {
            let (passed, score) = self.test(Stage::Exam, &splits.exam)?;
            ok = passed;
            exam_score = score;
            let t = Instant::now();
            self.started(Stage::Score, 0);
            let outcome = match &exam_score {
                Some(_) if ok => Outcome::Passed,
                _ if self.cancelled() => Outcome::Skipped {
                    why: "the evaluation was stopped".into(),
                },
                _ => Outcome::Skipped {
                    why: "the exam did not finish".into(),
                },
            };
            self.finish(Stage::Score, outcome, t, Vec::new(), None, None);
        }
        // Every stage appears in the result, in order: those not reached say why.
        let failed = self
            .stages
            .iter()
            .any(|s| matches!(s.outcome, Outcome::Failed { .. }));
        for stage in [
            Stage::Prep,
            Stage::Train,
            Stage::Quiz,
            Stage::Exam,
            Stage::Score,
        ] {
            if !self.stages.iter().any(|s| s.stage == stage) {
                let why = if stage == Stage::Train
                    && c.interface == Interface::Stream
                    && splits.training.is_empty()
                {
                    "the split has no training subjects"
                } else if stage == Stage::Train && !has_train(c, &splits.training) {
                    "this challenge has no train stage"
                } else if self.cancelled() {
                    "the evaluation was stopped"
                } else if failed {
                    "an earlier stage failed"
                } else {
                    "not reached"
                };
                self.skip(stage, why);
            }
        }
        self.stages.sort_by_key(|s| s.stage as u8);
        let verdict = if self.cancelled() {
            EntryVerdict::Stopped
        } else if failed {
            EntryVerdict::Failed
        } else if self.dry_run {
            EntryVerdict::DryRun
        } else {
            EntryVerdict::Scored
        };
        // The organiser's full reports; the participant's views (docs/judge.md).
        if let Some(s) = &exam_score {
            write_json(&ev.out.join("private/exam-score.json"), &s.report)?;
        }
        if let Some(s) = &quiz_score
            && !c.reveal_quiz_labels
        {
            write_json(&ev.out.join("private/quiz-score.json"), &s.report)?;
        }
        let for_participant = exam_score
            .as_ref()
            .map(|s: &ScoreSummary| visibility::exam_view(c, &s.report));
        let quiz_score = quiz_score.map(|s| ScoreSummary {
            report: visibility::quiz_view(c, &s.report),
            score: s.score,
        });
        Ok(EvalResult {
            challenge: c.id.clone(),
            entry: ev.entry.display().to_string(),
            verdict,
            score: match verdict {
                EntryVerdict::Scored => for_participant.as_ref().and_then(|s| s.get("score")),
                _ => None,
            },
            split: self.split,
            stages: std::mem::take(&mut self.stages),
            quiz_score,
            exam_score: for_participant,
            error: None,
            judge_version: env!("CARGO_PKG_VERSION").to_string(),
        })
    }

    fn cancelled(&self) -> bool {
        self.ev
            .cancel
            .as_ref()
            .is_some_and(CancelToken::is_cancelled)
    }

    fn started(&mut self, stage: Stage, records: usize) {
        self.current = (stage, Instant::now(), records, 0);
        self.progress.event(Event::Stage { stage, records });
    }

    fn record_done(&mut self) {
        let (stage, t, total, done) = &mut self.current;
        *done += 1;
        self.progress.event(Event::Record {
            stage: *stage,
            done: *done,
            total: *total,
            elapsed: t.elapsed(),
        });
    }

    fn skip(&mut self, stage: Stage, why: &str) {
        self.stages.push(StageReport {
            stage,
            outcome: Outcome::Skipped { why: why.into() },
            wall_time_s: 0.0,
            records: Vec::new(),
            counts: None,
            log: None,
        });
    }

    fn finish(
        &mut self,
        stage: Stage,
        outcome: Outcome,
        started: Instant,
        records: Vec<RecordStatus>,
        counts: Option<Counts>,
        log: Option<String>,
    ) -> bool {
        // Whatever a run did once the caller had stopped it, the stage was stopped.
        let outcome = match outcome {
            Outcome::Failed { .. } if self.cancelled() => Outcome::Failed {
                reason: Reason::Stopped,
            },
            o => o,
        };
        let passed = outcome == Outcome::Passed;
        let hidden = matches!(stage, Stage::Exam | Stage::Score);
        // A hidden stage's times in whole seconds: to the nanosecond they are a channel
        // an entry can encode what it read from hidden data in.
        let (wall_time_s, outcome) = match outcome {
            o if !hidden => (secs(started.elapsed()), o),
            Outcome::Failed {
                reason: Reason::ComputeBudget { budget_s, used_s },
            } => (
                started.elapsed().as_secs_f64().round(),
                Outcome::Failed {
                    reason: Reason::ComputeBudget {
                        budget_s,
                        used_s: used_s.round(),
                    },
                },
            ),
            o => (started.elapsed().as_secs_f64().round(), o),
        };
        let report = StageReport {
            stage,
            outcome,
            wall_time_s,
            records,
            counts,
            log,
        };
        self.progress.event(Event::Done(&report));
        self.stages.push(report);
        passed
    }

    /// Saves a stage's log: exam logs are private.
    fn save_log(&self, stage: Stage, log: Log) -> Result<Option<String>, JudgeError> {
        if stage == Stage::Exam {
            log.save(&self.ev.out.join("private/exam.log"))?;
            Ok(None)
        } else {
            let rel = format!("logs/{}.log", stage.as_str());
            log.save(&self.ev.out.join(&rel))?;
            Ok(Some(rel))
        }
    }

    fn sandbox(&self, argv: &[&str], binds: Vec<Bind>, limits: sandbox::Limits) -> sandbox::Run {
        sandbox::run(&self.sandbox_config(argv, binds, limits))
    }

    /// A run in `/entry` (the entry folder, writable) with the runtime and `binds`.
    fn sandbox_config(
        &self,
        argv: &[&str],
        binds: Vec<Bind>,
        limits: sandbox::Limits,
    ) -> RunConfig {
        let mut cfg = RunConfig::new(
            argv.iter().map(|s| s.to_string()).collect(),
            self.ev.init.clone(),
        );
        cfg.cwd = PathBuf::from("/entry");
        cfg.binds = vec![
            Bind {
                src: self.entry.clone(),
                dst: PathBuf::from("/entry"),
                writable: true,
            },
            self.ev.runtime.bind(),
        ];
        cfg.binds.extend(binds);
        for (k, v) in &mut cfg.env {
            if k == "PATH" {
                *v = runtime::Runtime::sandbox_path();
            }
        }
        if self.c.interface == Interface::Stream {
            // Our client package, importable from anywhere.
            cfg.env.push(("PYTHONPATH".into(), "/judge".into()));
        }
        cfg.limits = limits;
        cfg.slot = self.ev.slot;
        cfg.stop = self.ev.cancel.as_ref().map(CancelToken::flag);
        cfg
    }

    // ---------------------------------------------------------------------------------
    // prep

    fn prep(&mut self) -> Result<bool, JudgeError> {
        let t = Instant::now();
        self.started(Stage::Prep, 0);
        let mut log = Log::new();
        let outcome = self.prep_inner(&mut log)?;
        let log = self.save_log(Stage::Prep, log)?;
        Ok(self.finish(Stage::Prep, outcome, t, Vec::new(), None, log))
    }

    fn prep_inner(&mut self, log: &mut Log) -> Result<Outcome, JudgeError> {
        let fail = |reason| Ok(Outcome::Failed { reason });
        match unpack(self.ev.entry, &self.entry, Caps::default()) {
            Ok(u) => {
                log.line(&format!(
                    "unpacked {} files, {} bytes{}",
                    u.files,
                    u.bytes,
                    u.unwrapped
                        .map(|d| format!(" (from the single folder {d}/)"))
                        .unwrap_or_default()
                ));
            }
            Err(e) => {
                log.line(&e.to_string());
                return fail(Reason::Unpack {
                    message: e.to_string(),
                });
            }
        }
        let missing: Vec<String> = self
            .c
            .required_files
            .iter()
            .filter(|f| !non_empty(&self.entry.join(f)))
            .cloned()
            .collect();
        if !missing.is_empty() {
            log.line("Required component(s) missing -- not scored");
            return fail(Reason::MissingFiles { files: missing });
        }
        let mut problems = Vec::new();
        if let Some(req) = &self.c.requirements {
            let path = self.entry.join(req);
            if let Some(bytes) = read_capped(&path, 1 << 20).ok().flatten() {
                problems.extend(requirements::check_pip(
                    req,
                    &String::from_utf8_lossy(&bytes),
                ));
            }
        }
        if self.c.interface == Interface::PerRecord {
            let path = self.entry.join("dependencies.txt");
            if let Some(bytes) = read_capped(&path, 1 << 20).ok().flatten() {
                problems.extend(requirements::check_debian(
                    "dependencies.txt",
                    &String::from_utf8_lossy(&bytes),
                ));
            }
            self.submitted = read_capped(&self.entry.join("answers.txt"), OUTPUT_CAP)
                .ok()
                .flatten();
        }
        self.dry_run = self.entry.join("DRYRUN").exists();
        if self.c.interface == Interface::Stream {
            let path = self.entry.join("config.toml");
            let parsed = match read_capped(&path, 1 << 20) {
                Ok(Some(bytes)) => match std::str::from_utf8(&bytes) {
                    Ok(text) => EntryConfig::parse(text),
                    Err(e) => Err(format!("not UTF-8 text: {e}")),
                },
                Ok(None) => Err("missing".into()),
                Err(why) => Err(why),
            };
            match parsed {
                Ok(c) => self.config = c,
                Err(message) => {
                    log.line(&format!("config.toml: {message}"));
                    return fail(Reason::Config { message });
                }
            }
        }
        if !problems.is_empty() {
            for p in &problems {
                log.line(p);
            }
            return fail(Reason::Requirements { problems });
        }
        give(&self.entry, self.uid)?;
        if matches!(self.c.interface, Interface::TrainRun | Interface::Stream) {
            self.write_drivers()?;
        }
        if self.c.interface == Interface::PerRecord || self.entry.join("setup.sh").is_file() {
            let r = self.sandbox(
                &["/bin/bash", "setup.sh"],
                Vec::new(),
                self.c.setup_limits(),
            );
            log.run("setup.sh", &r);
            let res = &r.result;
            match res.verdict {
                Verdict::Ok => {}
                Verdict::InternalError => {
                    return fail(Reason::Internal {
                        message: message_of(res),
                    });
                }
                v => {
                    return fail(Reason::Setup {
                        verdict: v,
                        exit_code: res.exit_code,
                    });
                }
            }
        }
        Ok(Outcome::Passed)
    }

    // ---------------------------------------------------------------------------------
    // train

    fn train(&mut self, items: &[Item]) -> Result<bool, JudgeError> {
        let t = Instant::now();
        self.started(Stage::Train, 0);
        let mut log = Log::new();
        let data = self.work.join("train/data");
        mkdir(&data)?;
        materialise(self.c.layout, items, &data, None)?;
        let model = self.work.join("model");
        mkdir(&model)?;
        give(&model, self.uid)?;
        let stream_argv = self.config.train_argv();
        let argv: Vec<&str> = match self.c.interface {
            Interface::Stream => stream_argv.iter().map(String::as_str).collect(),
            _ => vec!["python3", "/judge/train_model.py", "/data", "/model"],
        };
        let r = self.sandbox(
            &argv,
            vec![
                ro(&data, "/data"),
                ro(&self.work.join("judge"), "/judge"),
                rw(&model, "/model"),
            ],
            self.c.train_limits(),
        );
        log.run(&argv.join(" "), &r);
        let outcome = match r.result.verdict {
            Verdict::Ok => Outcome::Passed,
            Verdict::InternalError => Outcome::Failed {
                reason: Reason::Internal {
                    message: message_of(&r.result),
                },
            },
            v => Outcome::Failed {
                reason: Reason::Run {
                    record: None,
                    verdict: v,
                    exit_code: r.result.exit_code,
                },
            },
        };
        let log = self.save_log(Stage::Train, log)?;
        Ok(self.finish(Stage::Train, outcome, t, Vec::new(), None, log))
    }

    /// Our code the entry's runs use, at `/judge`: the train-run drivers or the stream
    /// client package.
    fn write_drivers(&self) -> Result<(), JudgeError> {
        let dir = self.work.join("judge");
        mkdir(&dir)?;
        if self.c.interface == Interface::Stream {
            return crate::streaming::write_client(&dir).map_err(|e| io(&dir, e));
        }
        for (name, text) in DRIVERS {
            std::fs::write(dir.join(name), text).map_err(|e| io(&dir, e))?;
        }
        Ok(())
    }

    // ---------------------------------------------------------------------------------
    // quiz and exam

    /// Runs the entry on a split and scores it on the host. Quiz: full diagnostics, the
    /// first failure fails the stage. Exam: failures never stop it; counts only.
    fn test(
        &mut self,
        stage: Stage,
        items: &[Item],
    ) -> Result<(bool, Option<ScoreSummary>), JudgeError> {
        let t = Instant::now();
        if items.is_empty() {
            self.skip(stage, "the split has no records");
            return Ok((true, None));
        }
        let quiz = stage == Stage::Quiz;
        self.started(stage, items.len());
        let mut log = Log::new();
        let dir = self.work.join(stage.as_str());
        let data = dir.join("data");
        let out = dir.join("out");
        // What is taken from the entry goes straight to where it is kept: quiz outputs
        // for the participant, exam outputs for the organiser (they would reveal the
        // hidden records' names).
        let taken = match stage {
            Stage::Exam => self.ev.out.join("private/exam-outputs"),
            _ => self.ev.out.join(format!("outputs/{}", stage.as_str())),
        };
        for d in [&data, &out, &taken] {
            mkdir(d)?;
        }
        give(&out, self.uid)?;
        let mut streamed = None;
        let (mut records, stopped) = match self.c.interface {
            Interface::PerRecord => self.per_record(stage, items, &taken, &mut log)?,
            Interface::Folder | Interface::TrainRun => {
                materialise(self.c.layout, items, &data, Some(&self.c.labels))?;
                self.whole_split(stage, items, &data, &out, &mut log)?
            }
            Interface::Stream => {
                let (records, stopped, score) =
                    self.stream_split(stage, items, &taken, &mut log)?;
                streamed = Some(score);
                (records, stopped)
            }
        };
        // Outputs: only regular files, copied out of the entry's reach.
        if matches!(self.c.interface, Interface::Folder | Interface::TrainRun) {
            let ext = match self.c.scorer {
                ScorerId::Cpsc2021 => ".json",
                _ => ".csv",
            };
            // Only the split's own output names: anything else the entry left is ignored.
            let expected: std::collections::HashSet<String> =
                items.iter().map(|i| format!("{}{ext}", i.id)).collect();
            let skipped =
                collect(&out, &taken, OUTPUT_CAP, |n| expected.contains(n)).map_err(|message| {
                    JudgeError::Io {
                        path: out.clone(),
                        kind: std::io::ErrorKind::Other,
                        message,
                    }
                })?;
            for s in skipped {
                log.line(&format!("output {} not taken: {}", s.name, s.why));
            }
        }
        let scored = match streamed {
            Some(score) => score,
            None => self.score(items, &taken, &mut records)?,
        };
        let first_failure = records
            .iter()
            .find(|r| r.state != RecordState::Ok)
            .map(record_reason);
        // The quiz stops at the first failure. The exam never does: a failed run leaves
        // its records without output, scored as the default answer — only the judge's own
        // failure or the stage cap ends it.
        // A run the caller stopped ends the stage, quiz or exam, whatever it did.
        let stopped = match stopped {
            None if self.cancelled() => Some(Reason::Stopped),
            s => s,
        };
        let outcome = match (stopped, first_failure) {
            (Some(reason), _) if quiz => Outcome::Failed { reason },
            (
                Some(
                    reason @ (Reason::Internal { .. }
                    | Reason::StageTimeLimit { .. }
                    | Reason::ComputeBudget { .. }
                    | Reason::Leftovers { .. }
                    | Reason::Stopped),
                ),
                _,
            ) => Outcome::Failed { reason },
            (None, Some(reason)) if quiz => Outcome::Failed { reason },
            _ => Outcome::Passed,
        };
        if let (true, Some(sub)) = (quiz, &self.submitted)
            && outcome == Outcome::Passed
            && let Some(reason) = compare_submitted(sub, &taken.join("answers.txt"), &mut log)
        {
            let log = self.save_log(stage, log)?;
            self.finish(stage, Outcome::Failed { reason }, t, records, None, log);
            return Ok((false, scored));
        }
        let log = self.save_log(stage, log)?;
        let (shown, counts) = if quiz {
            (records, None)
        } else {
            let counts = Counts::of(&records);
            let p = self.ev.out.join("private/exam-records.json");
            write_json(&p, &records)?;
            (Vec::new(), Some(counts))
        };
        let passed = self.finish(stage, outcome, t, shown, counts, log);
        Ok((passed, scored))
    }

    /// Folder and train-run interfaces: one run over the whole split.
    fn whole_split(
        &mut self,
        stage: Stage,
        items: &[Item],
        data: &Path,
        out: &Path,
        log: &mut Log,
    ) -> Result<(Vec<RecordStatus>, Option<Reason>), JudgeError> {
        let limits = self.c.run_limits(items.len());
        let r = match self.c.interface {
            Interface::Folder => self.sandbox(
                &["python3", "entry_2021.py", "/data", "/out"],
                vec![ro(data, "/data"), rw(out, "/out")],
                limits,
            ),
            _ => self.sandbox(
                &["python3", "/judge/run_model.py", "/model", "/data", "/out"],
                vec![
                    ro(data, "/data"),
                    rw(out, "/out"),
                    ro(&self.work.join("judge"), "/judge"),
                    ro(&self.work.join("model"), "/model"),
                ],
                limits,
            ),
        };
        log.run(
            &format!("{} run over {} records", stage.as_str(), items.len()),
            &r,
        );
        for _ in items {
            self.record_done();
        }
        let res = &r.result;
        let stopped = match res.verdict {
            Verdict::Ok => None,
            Verdict::InternalError => Some(Reason::Internal {
                message: message_of(res),
            }),
            v => Some(Reason::Run {
                record: None,
                verdict: v,
                exit_code: res.exit_code,
            }),
        };
        // Each record's state comes from its output once scored; the run's own failure
        // is the stage's.
        let records = items
            .iter()
            .map(|i| RecordStatus {
                record: i.id.clone(),
                state: RecordState::Ok,
                verdict: None,
                message: None,
                cpu_time_s: None,
                wall_time_s: None,
                peak_memory_bytes: None,
            })
            .collect();
        Ok((records, stopped))
    }

    /// Stream interface: one session over the split's subjects, the algorithm in one
    /// sandbox run whose CPU limit is the session's compute budget, pinned to the CPU of
    /// the thread that serves it. The session log (every report and trial) goes with the
    /// taken outputs: the participant's in the quiz, the organiser's in the exam. No
    /// score when the budget was exceeded (the run is invalid) or the judge failed.
    fn stream_split(
        &mut self,
        stage: Stage,
        items: &[Item],
        taken: &Path,
        log: &mut Log,
    ) -> Result<Streamed, JudgeError> {
        let data_err = |e: &dyn std::fmt::Display| JudgeError::data(Some(self.ev.data), e);
        let def = self
            .c
            .stream
            .ok_or_else(|| JudgeError::challenge(&self.c.id, "no [stream] table"))?;
        let subjects = items
            .iter()
            .enumerate()
            .map(|(i, item)| stream::load::subject(&self.ev.data.join(&item.id), i as u32 + 1))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| data_err(&e))?;
        let mut session = stream::Session::new(subjects, def.seed).map_err(|e| data_err(&e))?;
        let model = self.work.join("model");
        mkdir(&model)?;
        let limits = self.c.run_limits(items.len());
        let budget = limits.cpu_time;
        let argv = self.config.run_argv();
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let mut cfg = self.sandbox_config(
            &argv,
            vec![ro(&self.work.join("judge"), "/judge"), ro(&model, "/model")],
            limits,
        );
        cfg.cpu = crate::streaming::session_cpu(self.ev.slot);
        let (r, served) = sandbox::run_serving(
            &cfg,
            Some(|c: sandbox::Conversation| {
                stream::protocol::serve(&mut session, c.from_program, c.to_program)
            }),
        );
        let result = session.finish();
        log.run(
            &format!("{} session over {} subjects", stage.as_str(), items.len()),
            &r,
        );
        match &served {
            Some(Ok(s)) => log.line(&format!(
                "{} packets served, {} reports received",
                s.packets, s.reports
            )),
            Some(Err(e)) => log.line(&format!("the session ended: {e}")),
            None => {}
        }
        if result.dropped_reports > 0 {
            log.line(&format!(
                "{} reports beyond the session log's caps: counted, not listed in session.json",
                result.dropped_reports
            ));
        }
        if !result.finished {
            log.line(
                "the algorithm stopped before the session's last packet: the trials it did \
                 not answer count as wrong, 9 s each",
            );
        }
        for _ in items {
            self.record_done();
        }
        if stage == Stage::Quiz && !self.c.reveal_quiz_labels {
            write_json(&self.ev.out.join("private/quiz-session.json"), &result)?;
            let view = crate::visibility::quiz_session_view(self.c, &to_json(&result));
            write_json(&taken.join("session.json"), &view)?;
        } else {
            write_json(&taken.join("session.json"), &result)?;
        }
        let res = &r.result;
        let violation = match &served {
            Some(Err(e)) if e.is_violation() => Some(e.to_string()),
            Some(Err(e @ stream::protocol::ProtocolError::Truncated { .. }))
                if res.verdict == Verdict::Ok =>
            {
                Some(e.to_string())
            }
            _ => None,
        };
        let stopped = match (res.verdict, violation) {
            (Verdict::InternalError, _) => Some(Reason::Internal {
                message: message_of(res),
            }),
            (Verdict::TimeLimit, _) => Some(Reason::ComputeBudget {
                budget_s: secs(budget),
                used_s: res.cpu_time_s,
            }),
            (_, Some(message)) => Some(Reason::Protocol { message }),
            (Verdict::Ok, None) => None,
            (v, None) => Some(Reason::Run {
                record: None,
                verdict: v,
                exit_code: res.exit_code,
            }),
        };
        let state = match (&stopped, res.verdict) {
            (None, _) => RecordState::Ok,
            (_, Verdict::TimeLimit | Verdict::WallTimeLimit) => RecordState::TimedOut,
            _ => RecordState::Failed,
        };
        let records = items
            .iter()
            .map(|i| {
                let mut s = status(&i.id, state, Some(res.verdict), None);
                s.message = stopped.as_ref().map(|r| r.to_string());
                s
            })
            .collect();
        let score = match stopped {
            Some(Reason::Internal { .. } | Reason::ComputeBudget { .. }) => None,
            _ => Some(session_score(&self.c.id, &result)),
        };
        Ok((records, stopped, score))
    }

    /// Per-record interface: `next.sh REC` in its own sandbox per record, the record's
    /// files put in the entry folder for the run and removed after.
    fn per_record(
        &mut self,
        stage: Stage,
        items: &[Item],
        taken: &Path,
        log: &mut Log,
    ) -> Result<(Vec<RecordStatus>, Option<Reason>), JudgeError> {
        let quiz = stage == Stage::Quiz;
        let answers = self.entry.join("answers.txt");
        let mut all_answers = Vec::new();
        let mut records = Vec::with_capacity(items.len());
        let mut stopped = None;
        let started = Instant::now();
        for item in items {
            if stopped.is_none() && self.cancelled() {
                stopped = Some(Reason::Stopped);
            }
            if stopped.is_some() {
                records.push(status(&item.id, RecordState::NotRun, None, None));
                continue;
            }
            if started.elapsed() > Duration::from_secs(self.c.limits.stage_cap_s) {
                stopped = Some(Reason::StageTimeLimit {
                    cap_s: self.c.limits.stage_cap_s,
                });
                records.push(status(&item.id, RecordState::NotRun, None, None));
                continue;
            }
            // The record's unlabelled files, placed next to the entry's own. Each run
            // appends to an empty answers.txt: what is there afterwards is this record's
            // answer, whatever the entry did to the file before.
            let mut placed = Vec::new();
            let mut files = shown_files(item, Some(&self.c.labels))?;
            files.push(("answers.txt".into(), Vec::new()));
            for (name, content) in files {
                let to = self.entry.join(&name);
                if let Some(reason) = clear(&to)? {
                    stopped = Some(reason);
                    break;
                }
                place(&to, &content, self.uid)?;
                if name != "answers.txt" {
                    placed.push(to);
                }
            }
            if stopped.is_some() {
                records.push(status(&item.id, RecordState::NotRun, None, None));
                continue;
            }
            // No run may outlast what is left of the stage cap.
            let mut limits = self.c.run_limits(1);
            let left =
                Duration::from_secs(self.c.limits.stage_cap_s).saturating_sub(started.elapsed());
            limits.wall_time = limits.wall_time.min(left.max(Duration::from_secs(1)));
            limits.cpu_time = limits.cpu_time.min(limits.wall_time);
            let r = self.sandbox(&["/bin/bash", "next.sh", &item.id], Vec::new(), limits);
            for p in placed {
                let _ = std::fs::remove_file(p);
            }
            log.run(&format!("next.sh {}", item.id), &r);
            self.record_done();
            let new = match read_capped(&answers, ANSWER_CAP) {
                Ok(a) => a.unwrap_or_default(),
                Err(why) => {
                    log.line(&format!("answers.txt after {}: {why}; not taken", item.id));
                    Vec::new()
                }
            };
            all_answers.extend_from_slice(&new);
            if !all_answers.is_empty() && !all_answers.ends_with(b"\n") {
                all_answers.push(b'\n');
            }
            let res = &r.result;
            let state = match res.verdict {
                Verdict::Ok => RecordState::Ok,
                Verdict::TimeLimit | Verdict::WallTimeLimit => RecordState::TimedOut,
                Verdict::InternalError => {
                    let message = match quiz {
                        true => format!("record {}: {}", item.id, message_of(res)),
                        // The record's name stays in private/.
                        false => "a run failed in the sandbox (details in the private log)".into(),
                    };
                    stopped = Some(Reason::Internal { message });
                    RecordState::Failed
                }
                _ => RecordState::Failed,
            };
            let mut s = status(&item.id, state, Some(res.verdict), Some(res));
            if state != RecordState::Ok {
                s.message = Some(message_of(res));
                if quiz && stopped.is_none() {
                    stopped = Some(Reason::Run {
                        record: Some(item.id.clone()),
                        verdict: res.verdict,
                        exit_code: res.exit_code,
                    });
                }
            }
            records.push(s);
        }
        let to = taken.join("answers.txt");
        std::fs::write(&to, &all_answers).map_err(|e| io(&to, e))?;
        Ok((records, stopped))
    }

    // ---------------------------------------------------------------------------------
    // scoring (host)

    /// Scores the taken outputs against the split's reference (strict mode) and marks
    /// each record whose output was missing or unusable.
    fn score(
        &self,
        items: &[Item],
        taken: &Path,
        records: &mut [RecordStatus],
    ) -> Result<Option<ScoreSummary>, JudgeError> {
        let ids: std::collections::HashSet<&str> = items.iter().map(|i| i.id.as_str()).collect();
        let fail = |e: score::ScoreError| JudgeError::data(Some(self.ev.data), e);
        // (record, why its output was unusable; None: there was none)
        let (score, report, defaulted): (f64, serde_json::Value, Vec<(String, Option<String>)>) =
            match self.c.scorer {
                ScorerId::Cpsc2021 => {
                    let mut reference =
                        score::cpsc2021::load_reference(self.ev.data).map_err(fail)?;
                    reference.records.retain(|r| ids.contains(r.name.as_str()));
                    let rep = score::cpsc2021::score(&reference, taken, score::Mode::Strict)
                        .map_err(fail)?;
                    let items = rep.items.iter();
                    let d = unusable(
                        items.map(|i| (&i.record, i.defaulted, i.file.is_some())),
                        &rep.errors,
                    );
                    (rep.score, to_json(&rep), d)
                }
                ScorerId::Cinc2017 => {
                    let path = self.ev.data.join("REFERENCE.csv");
                    let text = std::fs::read_to_string(&path).map_err(|e| io(&path, e))?;
                    let mut reference =
                        score::cinc2017::parse_reference(&text, &path.display().to_string())
                            .map_err(fail)?;
                    reference.retain(|(r, _)| ids.contains(r.as_str()));
                    let answers = std::fs::read(taken.join("answers.txt")).unwrap_or_default();
                    let rep = score::cinc2017::score(
                        &reference,
                        &String::from_utf8_lossy(&answers),
                        "answers.txt",
                        score::Mode::Strict,
                    )
                    .map_err(fail)?;
                    let d = rep
                        .items
                        .iter()
                        .filter(|i| i.defaulted)
                        .map(|i| {
                            let why = problem(&rep.errors, &i.record)
                                .filter(|m| !m.contains(&format!("no answer for {}", i.record)));
                            (i.record.clone(), why)
                        })
                        .collect();
                    (rep.score, to_json(&rep), d)
                }
                ScorerId::Physionet2022 => {
                    let mut reference =
                        score::physionet2022::load_labels(self.ev.data).map_err(fail)?;
                    reference.patients.retain(|p| ids.contains(p.id.as_str()));
                    let rep = score::physionet2022::score(&reference, taken, score::Mode::Strict)
                        .map_err(fail)?;
                    let items = rep.items.iter();
                    let d = unusable(
                        items.map(|i| (&i.patient, i.defaulted, i.file.is_some())),
                        &rep.errors,
                    );
                    (rep.score, to_json(&rep), d)
                }
                ScorerId::Itr => return Ok(None),
            };
        for (id, why) in defaulted {
            if let Some(r) = records.iter_mut().find(|r| r.record == id)
                && r.state == RecordState::Ok
            {
                r.state = match why {
                    None => RecordState::MissingOutput,
                    Some(_) => RecordState::InvalidOutput,
                };
                r.message = Some(why.unwrap_or_else(|| "no output".into()));
            }
        }
        Ok(Some(ScoreSummary { score, report }))
    }
}

/// What a stream stage gives: every subject's state, why the stage stopped (if it did),
/// and the score (none when the run was invalid or the judge failed).
type Streamed = (Vec<RecordStatus>, Option<Reason>, Option<ScoreSummary>);

/// A session's score and report: the per-subject ITR table, and aggregates a
/// participant may see of an exam (numbers only, see [`exam_view`]).
fn session_score(challenge: &str, result: &stream::SessionResult) -> ScoreSummary {
    let subjects = &result.summary.subjects;
    let mean = |f: fn(&score::itr::Subject) -> f64| {
        subjects.iter().map(f).sum::<f64>() / subjects.len().max(1) as f64
    };
    let accepted = result
        .log
        .iter()
        .filter(|l| matches!(l.status, stream::ReportStatus::Accepted { .. }))
        .count();
    let report = serde_json::json!({
        "challenge": challenge,
        "score": result.summary.score,
        "accuracy": mean(|s| s.accuracy),
        "mean_trial_seconds": mean(|s| s.mean_seconds),
        "trials": result.trials.len(),
        "reports": result.reports,
        "accepted_reports": accepted,
        "finished": result.finished,
        "subjects": to_json(&result.summary.subjects),
    });
    ScoreSummary {
        score: result.summary.score,
        report,
    }
}

/// The defaulted items of a scorer's report, from (id, defaulted, had an output file):
/// each with why its output was unusable, or `None` when there was none.
fn unusable<'a>(
    items: impl Iterator<Item = (&'a String, bool, bool)>,
    errors: &[score::PredictionError],
) -> Vec<(String, Option<String>)> {
    items
        .filter(|(_, defaulted, _)| *defaulted)
        .map(|(id, _, had_file)| (id.clone(), had_file.then(|| problem(errors, id)).flatten()))
        .collect()
}

/// The error the scorer listed for an item: in its own output file, or naming it.
fn problem(errors: &[score::PredictionError], id: &str) -> Option<String> {
    errors
        .iter()
        .find(|e| {
            Path::new(&e.file)
                .file_stem()
                .is_some_and(|s| s.to_string_lossy() == id)
                || e.reason
                    .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .any(|token| token == id)
        })
        .map(|e| e.to_string())
}

/// A scorer report as JSON (the reports serialise without failing: plain data, and
/// non-finite numbers become `null`).
fn to_json(report: &impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(report).unwrap_or(serde_json::Value::Null)
}

fn record_reason(r: &RecordStatus) -> Reason {
    match (r.state, r.verdict) {
        (RecordState::Failed | RecordState::TimedOut, Some(v)) => Reason::Run {
            record: Some(r.record.clone()),
            verdict: v,
            exit_code: None,
        },
        _ => Reason::Output {
            record: r.record.clone(),
            problem: r
                .message
                .clone()
                .unwrap_or_else(|| format!("{:?}", r.state)),
        },
    }
}

fn status(
    record: &str,
    state: RecordState,
    verdict: Option<Verdict>,
    run: Option<&sandbox::RunResult>,
) -> RecordStatus {
    RecordStatus {
        record: record.to_string(),
        state,
        verdict,
        message: None,
        cpu_time_s: run.map(|r| r.cpu_time_s),
        wall_time_s: run.map(|r| r.wall_time_s),
        peak_memory_bytes: run.and_then(|r| r.peak_memory_bytes),
    }
}

/// How long removing what an entry left where the judge must put a file may take: a
/// tree that takes longer is the entry's doing ([`Reason::Leftovers`]).
const CLEAR_TIME: Duration = Duration::from_secs(60);

/// Removes whatever the entry left at `path` (a file, a symlink to a host file, a tree
/// of any depth), never following a link. `Ok(Some(reason))`: the entry left too much to
/// remove in [`CLEAR_TIME`].
fn clear(path: &Path) -> Result<Option<Reason>, JudgeError> {
    match remove_tree(path, Some(Instant::now() + CLEAR_TIME)) {
        Ok(()) => Ok(None),
        Err(e @ RemoveError::Timeout { .. }) => Ok(Some(Reason::Leftovers {
            message: e.to_string(),
        })),
        Err(e) => Err(JudgeError::Io {
            path: path.to_path_buf(),
            kind: std::io::ErrorKind::Other,
            message: e.to_string(),
        }),
    }
}

/// Writes a new file into a folder the sandbox uid owns, where [`clear`] made room.
fn place(path: &Path, bytes: &[u8], uid: u32) -> Result<(), JudgeError> {
    let mut f = std::fs::File::options()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| io(path, e))?;
    f.write_all(bytes).map_err(|e| io(path, e))?;
    give(path, uid)
}

/// Quiz of the per-record interface: the answers reproduced must match those submitted
/// with the entry, for every record the submission has.
fn compare_submitted(submitted: &[u8], produced: &Path, log: &mut Log) -> Option<Reason> {
    let parse = |bytes: &[u8]| -> std::collections::HashMap<String, String> {
        let mut m = std::collections::HashMap::new();
        for line in String::from_utf8_lossy(bytes).lines() {
            if let Some((r, l)) = line.split_once(',') {
                m.entry(r.trim().to_string())
                    .or_insert_with(|| l.trim().to_string());
            }
        }
        m
    };
    let sub = parse(submitted);
    let produced_bytes = std::fs::read(produced).unwrap_or_default();
    let text = String::from_utf8_lossy(&produced_bytes).into_owned();
    let mut compared = 0;
    for line in text.lines() {
        let Some((r, l)) = line.split_once(',') else {
            continue;
        };
        let (r, l) = (r.trim(), l.trim());
        match sub.get(r) {
            Some(s) if s == l => compared += 1,
            Some(s) => {
                return Some(Reason::Mismatch {
                    record: r.to_string(),
                    submitted: s.clone(),
                    produced: l.to_string(),
                });
            }
            None => log.line(&format!(
                "{r}: not in the submitted answers.txt, so not compared"
            )),
        }
    }
    log.line(&format!(
        "{compared} answers match the submitted answers.txt"
    ));
    None
}

fn non_empty(path: &Path) -> bool {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_file() => m.len() > 0,
        Ok(m) if m.is_dir() => std::fs::read_dir(path).is_ok_and(|mut d| d.next().is_some()),
        _ => false,
    }
}

fn message_of(r: &sandbox::RunResult) -> String {
    r.message.clone().unwrap_or_else(|| r.verdict.to_string())
}

fn ro(src: &Path, dst: &str) -> Bind {
    Bind {
        src: src.to_path_buf(),
        dst: PathBuf::from(dst),
        writable: false,
    }
}

fn rw(src: &Path, dst: &str) -> Bind {
    Bind {
        src: src.to_path_buf(),
        dst: PathBuf::from(dst),
        writable: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_names_a_record_only_as_a_whole_token() {
        let e = [score::PredictionError::new(
            "answers.txt",
            "no answer for data_1_10: scored as ~",
        )];
        assert!(problem(&e, "data_1_1").is_none());
        assert!(problem(&e, "data_1_10").is_some());
    }
}
