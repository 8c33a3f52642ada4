//! What differs between entry interfaces, behind one trait: how prep checks the entry,
//! whether and how it trains, what our code at `/judge` is, and how it is run over a
//! split. Everything else — the stages, logs, limits, scoring, what is shown — is the
//! same for all.

use std::path::{Path, PathBuf};

use super::{Evaluator, StageLog};
use crate::JudgeError;
use crate::challenge::Interface;
use crate::dataset::Item;
use crate::result::{Reason, RecordStatus, ScoreSummary, Stage};

/// One entry interface (see docs/judge.md, "Challenge definitions").
pub(super) trait Driver: Sync {
    /// What the entry asks for in files of its interface (2017's `dependencies.txt`),
    /// read before the runtime is chosen: requirements go to `ev.wanted`, Debian
    /// packages to `ev.debian`, problems to `problems`.
    fn needs(&self, _ev: &mut Evaluator, _log: &mut StageLog, _problems: &mut Vec<String>) {}

    /// Interface checks in prep, after unpacking and the required files: requirement
    /// problems go to `problems` (all are reported together); `Some(reason)` fails prep
    /// at once.
    fn prep(
        &self,
        _ev: &mut Evaluator,
        _log: &mut StageLog,
        _problems: &mut Vec<String>,
    ) -> Result<Option<Reason>, JudgeError> {
        Ok(None)
    }

    /// Whether `setup.sh` runs even when the entry ships none (and fails prep then).
    fn setup_required(&self) -> bool {
        false
    }

    /// Writes our code the entry's runs use at `/judge`; `false`: there is none.
    fn judge_files(&self, _dir: &Path) -> std::io::Result<bool> {
        Ok(false)
    }

    /// Environment of every run, beyond the sandbox's own.
    fn env(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// The train stage's command, or why there is no train stage.
    fn train_argv(&self, _ev: &Evaluator, _training: &[Item]) -> Result<Vec<String>, &'static str> {
        Err("this challenge has no train stage")
    }

    /// Runs the entry over a quiz or exam split.
    fn run_split(
        &self,
        ev: &mut Evaluator,
        split: &Split<'_>,
        log: &mut StageLog,
    ) -> Result<Ran, JudgeError>;
}

/// A quiz or exam split to run, and its folders.
pub(super) struct Split<'a> {
    pub stage: Stage,
    pub items: &'a [Item],
    /// `<stage>/data`: what the entry may see (read-only at `/data`), if the driver
    /// materialises the split.
    pub data: PathBuf,
    /// `<stage>/out`: where the entry writes (read-write at `/out`).
    pub out: PathBuf,
    /// Where what is taken from the entry is kept (the participant's quiz outputs, the
    /// organiser's exam outputs).
    pub taken: PathBuf,
}

/// What running a split gave.
pub(super) struct Ran {
    /// Every record's state as its run ended (outputs are judged when scored).
    pub records: Vec<RecordStatus>,
    /// Why the runs stopped early or failed as a whole, if they did.
    pub stopped: Option<Reason>,
    /// `Some` when the driver scored the split itself (a stream session's reports):
    /// the score, none when the run was invalid.
    pub scored: Option<Option<ScoreSummary>>,
}

/// The driver of an interface.
pub(super) fn for_interface(interface: Interface) -> &'static dyn Driver {
    match interface {
        Interface::Folder => &super::folder::Folder,
        Interface::PerRecord => &super::per_record::PerRecord,
        Interface::TrainRun => &super::train_run::TrainRun,
        Interface::Stream => &super::stream::Stream,
    }
}
