//! The judge: challenge definitions and the staged pipeline an entry goes through —
//! prep (unpack, check, set up), train, quiz (validation data, full diagnostics), exam
//! (hidden data, counts only) and score (on the host) — ending in a result directory with
//! `result.json` and one capped log per stage.
//!
//! Labels never enter a sandbox: the data an entry sees in quiz and exam is a copy with
//! the challenge's label files withheld and label lines stripped, and scoring reads the
//! reference on the host. Every output an entry wrote is checked (regular files only,
//! size-capped, no symlinks followed) before the host reads it.
//!
//! Not here: how one run is isolated (`sandbox`), the metrics (`score`), file formats
//! (`formats`), or any user interface (the `physiojudge` binary draws progress and
//! tables from the events this crate reports).

pub mod challenge;
pub mod dataset;
mod judging;
pub mod kinds;
pub mod outputs;
pub mod pipeline;
pub mod pyenv;
pub mod rescore;
pub mod result;
pub mod runtimes;
pub mod shown;
pub mod streaming;
pub mod unpack;
pub mod visibility;
pub mod workdir;

pub use challenge::{Challenge, Interface};
pub use judging::{CancelToken, Judge, Request};
pub use pipeline::{Evaluation, Event, Progress, evaluate};
pub use result::{EvalResult, Outcome};
pub use workdir::WorkDir;

/// Whose fault a failure is: what a platform charges to a team (the entry's), shows an
/// organiser (the data's: the challenge's definition or data folder), or retries
/// elsewhere (the judge's own, the machine's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fault {
    Entry,
    Data,
    Judge,
    Machine,
}

/// What stops an evaluation before it has an outcome: never the entry's doing (what the
/// entry does wrong is a stage outcome in the result).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JudgeError {
    /// The challenge definition is unusable (`source` names the file or built-in).
    #[error("challenge definition {source_name}: {message}")]
    Challenge {
        source_name: String,
        message: String,
    },
    /// The challenge's data folder is unusable.
    #[error("data: {}{message}", path.as_ref().map(|p| format!("{}: ", p.display())).unwrap_or_default())]
    Data {
        path: Option<std::path::PathBuf>,
        message: String,
    },
    /// A file operation of the judge's own failed (disk full, permissions, the result
    /// folder not empty).
    #[error("{}: {message}", path.display())]
    Io {
        path: std::path::PathBuf,
        kind: std::io::ErrorKind,
        message: String,
    },
    /// The package index or the judge's package caches failed it (not the entry's
    /// requirements: those are refused in prep).
    #[error("packages: {message}")]
    Packages { message: String },
    /// The judge broke a rule of its own.
    #[error("judge error: {message}")]
    Internal { message: String },
}

impl JudgeError {
    pub fn fault(&self) -> Fault {
        match self {
            JudgeError::Challenge { .. } | JudgeError::Data { .. } => Fault::Data,
            JudgeError::Io { .. } | JudgeError::Packages { .. } => Fault::Machine,
            JudgeError::Internal { .. } => Fault::Judge,
        }
    }

    pub(crate) fn io(path: &std::path::Path, e: std::io::Error) -> JudgeError {
        JudgeError::Io {
            path: path.to_path_buf(),
            kind: e.kind(),
            message: e.to_string(),
        }
    }

    pub(crate) fn data(
        path: Option<&std::path::Path>,
        message: impl std::fmt::Display,
    ) -> JudgeError {
        JudgeError::Data {
            path: path.map(std::path::Path::to_path_buf),
            message: message.to_string(),
        }
    }

    pub(crate) fn challenge(source_name: &str, message: impl std::fmt::Display) -> JudgeError {
        JudgeError::Challenge {
            source_name: source_name.to_string(),
            message: message.to_string(),
        }
    }
}
