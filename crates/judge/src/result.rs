//! `result.json`: what happened to an entry, stage by stage, with typed reasons.
//!
//! The file is what a participant sees. Exam details (per-record statuses, the exam's
//! log) would leak hidden data, so the result holds only exam counts; the details go to
//! `private/` in the result directory, for the organiser.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use sandbox::Verdict;

use crate::challenge::Better;

/// The stages, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    Prep,
    Train,
    Quiz,
    Exam,
    Score,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Prep => "prep",
            Stage::Train => "train",
            Stage::Quiz => "quiz",
            Stage::Exam => "exam",
            Stage::Score => "score",
        }
    }
}

/// Why a stage failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Reason {
    /// The entry could not be unpacked (or was refused: traversal, links, bombs).
    Unpack { message: String },
    /// Required files missing or empty: "Required component(s) missing -- not scored".
    MissingFiles { files: Vec<String> },
    /// The entry's requirements were refused (a line, a package without a wheel for the
    /// runtime, the organiser's rules, the size limits) or could not be installed.
    Requirements { problems: Vec<String> },
    /// `setup.sh` failed or exceeded its limits (the verdict says which).
    Setup {
        verdict: Verdict,
        exit_code: Option<i32>,
        /// The last line the entry wrote (stderr, else stdout): usually the error.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        last_line: Option<String>,
    },
    /// A run of the entry failed (quiz: the first failing record, if per record).
    Run {
        record: Option<String>,
        verdict: Verdict,
        exit_code: Option<i32>,
        /// The last line the entry wrote (stderr, else stdout): usually the error. Never
        /// of a hidden stage's run (an exam's failing runs are not shown at all).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        last_line: Option<String>,
    },
    /// An output was missing or unusable (quiz: the first one).
    Output { record: String, problem: String },
    /// The quiz answers differ from those submitted with the entry.
    Mismatch {
        record: String,
        submitted: String,
        produced: String,
    },
    /// The whole stage ran past its cap.
    StageTimeLimit { cap_s: u64 },
    /// The entry's `config.toml` (stream interface) is unusable.
    Config { message: String },
    /// A streaming algorithm used more CPU time than the session's budget: the run is
    /// invalid, whatever it reported (the contest's rule).
    ComputeBudget { budget_s: f64, used_s: f64 },
    /// A streaming algorithm broke the protocol (docs/stream.md); its reports until then
    /// were kept.
    Protocol { message: String },
    /// The entry left a tree in its folders that could not be removed within the time
    /// allowed (before its next record, say): the entry's doing.
    Leftovers { message: String },
    /// A MATLAB-language entry called a function GNU Octave lacks (or that is nowhere
    /// in the entry either), as Octave's runner reported it (docs/matlab.md).
    UnsupportedMatlab {
        function: String,
        /// The entry's file that called it, and the line.
        file: String,
        line: u32,
        /// What Octave has instead, or why nothing.
        instead: String,
    },
    /// The judge or the sandbox failed: not the entry's fault.
    Internal { message: String },
    /// The caller stopped the evaluation during this stage.
    Stopped,
}

impl std::fmt::Display for Reason {
    /// Every string here may be the entry's (a member name, a requirement line, what it
    /// wrote): shown escaped and capped, as `crate::shown` makes it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::shown::line;
        let list = |items: &[String], sep: &str| {
            items.iter().map(|s| line(s)).collect::<Vec<_>>().join(sep)
        };
        match self {
            Reason::Unpack { message } => {
                write!(f, "the entry cannot be unpacked: {}", line(message))
            }
            Reason::MissingFiles { files } => write!(
                f,
                "required component(s) missing or empty: {} -- not scored",
                list(files, ", ")
            ),
            // A list, one problem a line; a problem's own lines (pip's text) kept as
            // lines, each shown safe.
            Reason::Requirements { problems } => {
                write!(f, "requirements refused:")?;
                for p in problems {
                    for (i, l) in p.lines().enumerate() {
                        let mark = if i == 0 { "  - " } else { "    " };
                        write!(f, "\n{mark}{}", line(l))?;
                    }
                }
                Ok(())
            }
            Reason::Setup {
                verdict,
                exit_code,
                last_line,
            } => {
                match (verdict, exit_code) {
                    (Verdict::RuntimeError, Some(c)) => {
                        write!(f, "setup.sh exited with status {c}")?
                    }
                    (v, _) => write!(f, "setup.sh: {v}")?,
                }
                last_line_of(f, last_line)
            }
            Reason::Run {
                record,
                verdict,
                exit_code,
                last_line,
            } => {
                if let Some(r) = record {
                    write!(f, "record {}: ", line(r))?;
                }
                match (verdict, exit_code) {
                    (Verdict::RuntimeError, Some(c)) => write!(f, "exited with status {c}")?,
                    (v, _) => write!(f, "{v}")?,
                }
                last_line_of(f, last_line)
            }
            Reason::Output { record, problem } => {
                write!(f, "record {}: {}", line(record), line(problem))
            }
            Reason::Mismatch {
                record,
                submitted,
                produced,
            } => write!(
                f,
                "record {}: output does not match submission (answers.txt says \"{}\", the \
                 judge's run gave \"{}\")",
                line(record),
                line(submitted),
                line(produced)
            ),
            Reason::StageTimeLimit { cap_s } => {
                write!(f, "the stage ran past its cap of {cap_s} s")
            }
            Reason::Config { message } => write!(f, "config.toml: {}", line(message)),
            Reason::ComputeBudget { budget_s, used_s } => write!(
                f,
                "compute budget of {budget_s:.0} s CPU exceeded ({used_s:.1} s used): the run is \
                 invalid"
            ),
            Reason::Protocol { message } => write!(f, "stream protocol: {}", line(message)),
            Reason::Leftovers { message } => {
                write!(
                    f,
                    "the entry left files the judge cannot remove: {}",
                    line(message)
                )
            }
            Reason::UnsupportedMatlab {
                function,
                file,
                line: at,
                instead,
            } => {
                write!(
                    f,
                    "unsupported MATLAB: {} is not in GNU Octave (called from {} line {at})",
                    line(function),
                    line(file)
                )?;
                if !instead.is_empty() {
                    write!(f, "; instead: {}", line(instead))?;
                }
                Ok(())
            }
            Reason::Stopped => write!(f, "stopped by the judge's caller (not the entry's doing)"),
            Reason::Internal { message } => {
                write!(f, "judge error (not the entry's fault): {}", line(message))
            }
        }
    }
}

/// ` — "<the entry's last line>"` when there is one.
fn last_line_of(f: &mut std::fmt::Formatter<'_>, last: &Option<String>) -> std::fmt::Result {
    match last {
        Some(l) => write!(f, " — \"{}\"", crate::shown::line(l)),
        None => Ok(()),
    }
}

/// How a stage ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    Passed,
    Failed {
        reason: Reason,
    },
    /// Not run: the interface has no such stage, an earlier stage failed, or a dry run.
    Skipped {
        why: String,
    },
}

/// How one record (or patient) went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordState {
    Ok,
    /// The run for it failed (per-record interface) — see the verdict.
    Failed,
    /// The run for it ran out of time (CPU or wall).
    TimedOut,
    MissingOutput,
    InvalidOutput,
    /// Not run: the stage stopped first.
    NotRun,
}

/// One record's status and, where it had its own run, resources.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordStatus {
    pub record: String,
    pub state: RecordState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_time_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wall_time_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_memory_bytes: Option<u64>,
}

/// What the participant learns of the exam.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub records: usize,
    pub ok: usize,
    pub failures: usize,
    pub timeouts: usize,
    /// Missing or invalid outputs (scored as the challenge's default answer).
    pub defaulted: usize,
}

impl Counts {
    pub fn of(records: &[RecordStatus]) -> Counts {
        let mut c = Counts {
            records: records.len(),
            ..Counts::default()
        };
        for r in records {
            match r.state {
                RecordState::Ok => c.ok += 1,
                RecordState::TimedOut => c.timeouts += 1,
                RecordState::Failed | RecordState::NotRun => c.failures += 1,
                RecordState::MissingOutput | RecordState::InvalidOutput => c.defaulted += 1,
            }
        }
        c
    }
}

/// One stage's report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageReport {
    pub stage: Stage,
    #[serde(flatten)]
    pub outcome: Outcome,
    pub wall_time_s: f64,
    /// Quiz (and train/prep runs): every record's status.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub records: Vec<RecordStatus>,
    /// Exam: counts only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<Counts>,
    /// The stage's log, relative to the result directory (capped at 1 MiB).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
}

/// The overall verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryVerdict {
    /// Every stage passed; `score` holds the exam score.
    Scored,
    /// A stage failed; see its reason.
    Failed,
    /// `DRYRUN` in the entry: stopped after the quiz, no score.
    DryRun,
    /// The judge could not finish (see `error`): not the entry's doing, never charged.
    Error,
    /// The caller stopped the evaluation (a cancelled submission, a judge shutting
    /// down): not the entry's doing.
    Stopped,
}

/// Why the judge could not finish an evaluation, and whose fault that is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeFailure {
    pub fault: crate::Fault,
    pub message: String,
}

/// A score and the scorer's report (its JSON, as `physiojudge score --json` prints; in
/// `result.json` the quiz's as [`crate::visibility::quiz_view`] shows it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoreSummary {
    pub score: f64,
    pub report: serde_json::Value,
}

/// One ranking number as a participant is shown it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankedNumber {
    /// Its key in the scorer's report (`score` first).
    pub key: String,
    /// Rounded to the challenge's precision; `None` when the scorer gave no finite figure.
    pub value: Option<f64>,
    pub better: Better,
}

/// What a participant sees of the exam's score: its ranking numbers at the challenge's
/// precision, nothing else (docs/judge.md, "What a participant sees").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExamScore {
    /// Decimals shown.
    pub precision: u32,
    pub ranking: Vec<RankedNumber>,
}

impl ExamScore {
    /// A ranking number by its key.
    pub fn get(&self, key: &str) -> Option<f64> {
        self.ranking
            .iter()
            .find(|r| r.key == key)
            .and_then(|r| r.value)
    }
}

/// How many subjects and items each split got.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SplitSizes {
    pub training: usize,
    pub quiz: usize,
    pub exam: usize,
}

/// The whole of `result.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalResult {
    pub challenge: String,
    pub entry: String,
    pub verdict: EntryVerdict,
    /// The exam score (the first ranking number) at the challenge's precision, when
    /// scored.
    pub score: Option<f64>,
    /// Items per split (the split is documented in docs/judge.md).
    pub split: SplitSizes,
    pub stages: Vec<StageReport>,
    /// The quiz score (full diagnostics, item references only if the quiz is public).
    pub quiz_score: Option<ScoreSummary>,
    /// The exam's ranking numbers, rounded (the full report is in `private/`).
    pub exam_score: Option<ExamScore>,
    /// Verdict `error`: what stopped the judge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<JudgeFailure>,
    /// The packages installed for the entry on top of the runtime, when any were (boxed:
    /// a result travels in enums beside small variants).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<Box<crate::pyenv::EnvironmentReport>>,
    /// What the team should know though nothing failed because of it, one line each
    /// (a requirement line read otherwise than written, an optional file missing, an
    /// optional import that fails).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The Python runtime the entry ran on and why it was chosen (docs/runtimes.md);
    /// absent when prep stopped before the choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<RuntimeChoice>,
    /// The language the entry is written in, as prep told it from its files (shown
    /// on leaderboards); absent when prep stopped before (an archive that would not
    /// unpack) and in results older than it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<Language>,
    pub judge_version: String,
}

/// An entry's language: a MATLAB layout (docs/matlab.md) is MATLAB, run on Octave; an
/// entry with a Python file is Python; anything else (a shell script, say) is other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Language {
    Python,
    Matlab,
    Other,
}

impl Language {
    /// As leaderboards show it.
    pub fn label(self) -> &'static str {
        match self {
            Language::Python => "Python",
            Language::Matlab => "MATLAB (Octave)",
            Language::Other => "other",
        }
    }
}

/// Which runtime an entry got, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuntimeChoice {
    /// `default`, `bullseye`, `bookworm` or `trixie`; `octave` for a MATLAB entry.
    pub name: String,
    /// Its CPython, `3.9` (absent for the Octave runtime, which has none).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub python: String,
    /// The Octave runtime's pinned packages and their Debian versions (`octave`,
    /// `octave-signal`, `octave-statistics`); absent for a Python runtime.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub versions: BTreeMap<String, String>,
    /// Why, in one sentence.
    pub why: String,
}

impl EvalResult {
    /// The first failed stage and why.
    pub fn failure(&self) -> Option<(Stage, &Reason)> {
        self.stages.iter().find_map(|s| match &s.outcome {
            Outcome::Failed { reason } => Some((s.stage, reason)),
            _ => None,
        })
    }
}
