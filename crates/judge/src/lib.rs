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
pub mod outputs;
pub mod pipeline;
pub mod requirements;
pub mod result;
pub mod shown;
pub mod streaming;
pub mod unpack;
pub mod visibility;

pub use challenge::{Challenge, Interface};
pub use pipeline::{Evaluation, Progress, evaluate};
pub use result::{EvalResult, Outcome};

/// What can stop an evaluation before any stage outcome exists (the judge's own
/// problems, not the entry's: those are stage outcomes in the result).
#[derive(Debug, thiserror::Error)]
pub enum JudgeError {
    #[error("challenge definition: {0}")]
    Challenge(String),
    #[error("data: {0}")]
    Data(String),
    #[error("{0}")]
    Io(String),
}
