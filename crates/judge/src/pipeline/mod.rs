//! The stages: prep → train → quiz → exam → score, for each entry interface.
//!
//! One file a stage (`prep`, `train`, `split` for quiz and exam, `score`) and one a
//! driver per entry interface behind the [`driver::Driver`] trait (`folder`,
//! `per_record`, `train_run`, `stream`): a new interface is a new driver file and one
//! line in [`driver::for_interface`].
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
//! reports: the organiser's, never shown to a participant).

mod driver;
mod folder;
mod log;
mod matlab_entry;
mod per_record;
mod prep;
pub(crate) mod score;
mod split;
pub(crate) mod stream;
mod train;
mod train_run;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sandbox::Bind;
use sandbox::{InitProgram, RunConfig, Verdict};

use crate::challenge::Challenge;
use crate::dataset::Dataset;
pub use crate::judging::CancelToken;
use crate::result::{
    Counts, EntryVerdict, EvalResult, JudgeFailure, Outcome, Reason, RecordState, RecordStatus,
    ScoreSummary, SplitSizes, Stage, StageReport,
};
use crate::streaming::EntryConfig;
use crate::workdir::WorkDir;
use crate::{JudgeError, visibility};
use driver::Driver;
pub use log::LOG_CAP;
use log::StageLog;

/// The largest output file taken from an entry.
pub const OUTPUT_CAP: u64 = 16 << 20;
/// The most a per-record run may append to `answers.txt` (one line is expected).
pub const ANSWER_CAP: u64 = 64 << 10;

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
    /// The Python runtime, mounted at `/runtime` (`None`: not set up here; enough for
    /// a MATLAB entry, which runs on the Octave runtime).
    pub runtime: Option<&'a runtime::Runtime>,
    /// Where entries' own packages come from and are cached.
    pub envs: &'a crate::pyenv::EnvSettings,
    pub init: InitProgram,
    /// The sandbox slot (concurrent evaluations use different slots).
    pub slot: u32,
    /// Set by the caller to stop the evaluation (checked between records and stages,
    /// and by the sandbox while a run goes on).
    pub cancel: Option<CancelToken>,
    /// Build the entry's environment only (`physiojudge env seed`): prep reads what the
    /// entry asks for, chooses its runtime and builds its Python environment and Debian
    /// system into the cache; no required file is checked, no data read, nothing run.
    pub seed: bool,
}

fn io(path: &Path, e: std::io::Error) -> JudgeError {
    JudgeError::io(path, e)
}

fn mkdir(path: &Path) -> Result<(), JudgeError> {
    std::fs::create_dir_all(path).map_err(|e| io(path, e))
}

/// Gives a tree the judge made or unpacked (its depth bounded by the unpack caps) to
/// the sandbox uid, so the entry may write there. A list, not recursion.
fn chown_tree(path: &Path, uid: u32) -> Result<(), JudgeError> {
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
struct Evaluator<'a, 'p> {
    ev: &'a Evaluation<'a>,
    c: &'a Challenge,
    /// What differs by entry interface.
    driver: &'static dyn Driver,
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
    /// What the entry asks for beyond the runtime (read in prep).
    wanted: Vec<crate::pyenv::Requirement>,
    /// The entry's installed environment (host path of its `site` folder), shown
    /// read-only at [`ENV_MOUNT`] from prep's `setup.sh` on.
    env_site: Option<PathBuf>,
    environment: Option<Box<crate::pyenv::EnvironmentReport>>,
    /// What the team should know though nothing failed (a requirement line read
    /// otherwise than written, an optional file missing): `result.json`'s `warnings`.
    warnings: Vec<String>,
    /// What the entry asked for, as read (kept for the import check's advice).
    asked: Vec<crate::pyenv::Requirement>,
    /// The runtime the entry runs on: the evaluation's default until prep chooses
    /// (`None` without one: a MATLAB entry needs none, a Python entry fails in prep).
    runtime: Option<runtime::Runtime>,
    runtime_choice: Option<crate::result::RuntimeChoice>,
    /// Set in prep for a MATLAB-language entry: its runs get Octave's root and our
    /// shims instead of the Python runtime.
    matlab: Option<matlab_entry::MatlabRun>,
    /// The entry's language, told in prep once it is unpacked.
    language: Option<crate::result::Language>,
    /// The Debian packages `dependencies.txt` names (line, name), read in prep.
    debian: Vec<(usize, String)>,
    /// The entry's own system (its runtime's with its Debian packages), when it has
    /// Debian packages: shown instead of the runtime's root.
    system_root: Option<PathBuf>,
    debian_report: Option<crate::pyenv::debian::DebianSystem>,
    /// Requirement lines read before the runtime was chosen, to read again with its
    /// standard library: (file, lines, where their warnings go in `warnings`).
    unread: Vec<(String, Vec<crate::pyenv::Requirement>, usize)>,
}

/// A Python entry on a judge without the Python runtime.
fn no_python_runtime() -> JudgeError {
    JudgeError::Packages {
        message: "a Python entry, and the Python runtime entries run with is not set up \
                  here: run `physiojudge runtime setup` (MATLAB entries need only \
                  `physiojudge runtime setup --octave`)"
            .into(),
    }
}

/// Where a run sees the entry's own packages (on `PYTHONPATH`, in front of the
/// runtime's).
pub const ENV_MOUNT: &str = "/env";

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
    let mut run = Evaluator {
        ev,
        c: ev.challenge,
        driver: driver::for_interface(ev.challenge.interface),
        work: work_dir.path().to_path_buf(),
        entry,
        uid: sandbox::slot_uid(ev.slot),
        progress,
        current: (Stage::Prep, Instant::now(), 0, 0),
        stages: Vec::new(),
        submitted: None,
        dry_run: false,
        config: EntryConfig::default(),
        split: SplitSizes::default(),
        wanted: Vec::new(),
        env_site: None,
        environment: None,
        warnings: Vec::new(),
        asked: Vec::new(),
        runtime: ev.runtime.cloned(),
        runtime_choice: None,
        matlab: None,
        language: None,
        debian: Vec::new(),
        system_root: None,
        debian_report: None,
        unread: Vec::new(),
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
                environment: run.environment.take(),
                warnings: std::mem::take(&mut run.warnings),
                runtime: run.runtime_choice.take(),
                language: run.language,
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

fn write_json(path: &Path, value: &impl serde::Serialize) -> Result<(), JudgeError> {
    let mut text = serde_json::to_vec_pretty(value).map_err(|e| JudgeError::Internal {
        message: format!("{}: {e}", path.display()),
    })?;
    text.push(b'\n');
    std::fs::write(path, text).map_err(|e| io(path, e))
}

impl Evaluator<'_, '_> {
    /// Every stage in turn, and the result (not yet written).
    fn all_stages(&mut self) -> Result<EvalResult, JudgeError> {
        let (ev, c) = (self.ev, self.c);
        if ev.seed {
            mkdir(&self.entry)?;
            self.dry_run = true;
            self.prep()?;
            return self.result(
                Err("seeding: only the entry's environment is built"),
                None,
                None,
            );
        }
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
        // Why there is no train stage, if there is none.
        let train = self.driver.train_argv(self, &splits.training);
        let mut ok = self.prep()?;
        if let (true, Ok(argv)) = (ok && !self.cancelled(), &train) {
            ok = self.train(argv, &splits.training)?;
        }
        if ok && !self.cancelled() {
            let (passed, score) = self.quiz(&splits.quiz)?;
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
            let exam = self.exam(&splits.exam)?;
            exam_score = self.score_stage(exam)?;
        }
        self.result(train, quiz_score, exam_score)
    }

    /// The result once the stages ran: every stage in order, those not reached saying
    /// why (`train`: why there was no train stage, if there was none).
    fn result(
        &mut self,
        train: Result<Vec<String>, &'static str>,
        quiz_score: Option<ScoreSummary>,
        exam_score: Option<ScoreSummary>,
    ) -> Result<EvalResult, JudgeError> {
        let (ev, c) = (self.ev, self.c);
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
                let why = if let (Stage::Train, Err(why)) = (stage, &train) {
                    why
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
        // The organiser's full quiz report (the score stage wrote the exam's); the
        // participant's views (docs/judge.md).
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
            environment: self.environment.take(),
            warnings: std::mem::take(&mut self.warnings),
            runtime: self.runtime_choice.take(),
            language: self.language,
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
    fn save_log(&self, stage: Stage, log: StageLog) -> Result<Option<String>, JudgeError> {
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

    /// The Python runtime a Python entry runs on; an error of the machine's when this
    /// judge has none (prep asks first, so a Python entry fails there).
    fn python_runtime(&self) -> Result<&runtime::Runtime, JudgeError> {
        self.runtime.as_ref().ok_or_else(no_python_runtime)
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
        cfg.binds = vec![Bind {
            src: self.entry.clone(),
            dst: PathBuf::from("/entry"),
            writable: true,
        }];
        if let Some(rt) = &self.runtime {
            cfg.binds.extend(rt.binds());
        }
        cfg.system_root = self.system_root.clone().or_else(|| {
            self.runtime
                .as_ref()
                .and_then(runtime::Runtime::system_root)
        });
        cfg.binds.extend(binds);
        for (k, v) in &mut cfg.env {
            if k == "PATH" {
                *v = runtime::Runtime::sandbox_path();
            }
        }
        cfg.env.extend(self.driver.env());
        if let Some(m) = &self.matlab {
            // Octave's root as the whole system, our files instead of the Python runtime.
            cfg.binds
                .retain(|b| b.dst != Path::new(runtime::MOUNT_POINT));
            cfg.binds.push(matlab::bind(&m.files));
            cfg.system_root = Some(m.octave.system_root());
            for (k, v) in &mut cfg.env {
                if k == "PATH" {
                    *v = matlab::sandbox_path();
                }
            }
        } else if let Some(site) = &self.env_site {
            cfg.binds.push(ro(site, ENV_MOUNT));
            // After the judge's own (/judge), before the runtime's site-packages.
            match cfg.env.iter_mut().find(|(k, _)| k == "PYTHONPATH") {
                Some((_, v)) => *v = format!("{v}:{ENV_MOUNT}"),
                None => cfg.env.push(("PYTHONPATH".into(), ENV_MOUNT.into())),
            }
            // Its scripts last: none may stand in for the runtime's python.
            for (k, v) in &mut cfg.env {
                if k == "PATH" {
                    *v = format!("{v}:{ENV_MOUNT}/bin");
                }
            }
        }
        cfg.limits = limits;
        cfg.slot = self.ev.slot;
        cfg.stop = self.ev.cancel.as_ref().map(CancelToken::flag);
        cfg
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

/// How a run failed, as its stage's reason (`record` when it was one record's run):
/// `None` when it ended `ok`. The sandbox's own failure is never the entry's.
fn run_failure(run: &sandbox::Run, record: Option<String>) -> Option<Reason> {
    let r = &run.result;
    match r.verdict {
        Verdict::Ok => None,
        Verdict::InternalError => Some(Reason::Internal {
            message: message_of(r),
        }),
        v => Some(Reason::Run {
            record,
            verdict: v,
            exit_code: r.exit_code,
            last_line: last_line(run),
        }),
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

/// The last line a run wrote that says something (stderr, else stdout), at most 300
/// characters: in a Python traceback, the exception.
fn last_line(run: &sandbox::Run) -> Option<String> {
    [&run.stderr, &run.stdout].into_iter().find_map(|bytes| {
        let text = String::from_utf8_lossy(bytes);
        text.lines()
            .rev()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(|l| l.chars().take(300).collect())
    })
}
