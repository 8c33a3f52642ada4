//! The official metrics of the challenges physiojudge hosts, reproduced to the last
//! decimal, with a clear account of every prediction that could not be scored.
//!
//! One module per challenge, each with a reference loader (labels from the organiser's
//! data), a prediction parser and validator, the metric, and a report (text and JSON):
//! - [`cpsc2021`]: paroxysmal AF episode detection (CPSC 2021), U = Ur + Ma/max(Ma,Mr)·Ue.
//! - [`cinc2017`]: AF classification (PhysioNet/CinC 2017), mean F1 of N, A and O.
//! - [`physionet2022`]: heart murmur and clinical outcome (PhysioNet 2022): weighted
//!   accuracy, cost, AUROC/AUPRC, F-measure, accuracy.
//! - [`itr`]: information transfer rate of the P300 speller.
//!
//! Two modes ([`Mode`]). *Strict* (the default) scores over the reference list and scores a
//! missing or invalid prediction as the challenge's default answer, listing it in the
//! report's `errors`. *Official-compat* reproduces what the official scorer does on inputs
//! it accepts, and gives a clear error where the official code would crash.
//!
//! Not here: running entries, reading signals (scoring needs only labels), or ranking
//! several entries against each other.

pub mod cinc2017;
pub mod cpsc2021;
pub mod itr;
mod numeric;
pub mod physionet2022;
mod python;

use serde::Serialize;

/// How a scorer treats what the official scorer mishandles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Score every reference item; a missing or invalid prediction gets the challenge's
    /// default answer and is listed in the report's errors.
    #[default]
    Strict,
    /// Reproduce the official scorer on inputs it accepts; fail with a clear message where
    /// it would crash.
    OfficialCompat,
}

/// A prediction that could not be used as given: the file, where in it, and why. Listed in
/// a report's `errors`; the item was scored with the challenge's default answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PredictionError {
    pub file: String,
    /// 1-based line, when the problem is on one line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    pub reason: String,
}

impl PredictionError {
    pub fn new(file: impl Into<String>, reason: impl Into<String>) -> Self {
        PredictionError {
            file: file.into(),
            line: None,
            reason: reason.into(),
        }
    }

    pub fn at_line(file: impl Into<String>, line: usize, reason: impl Into<String>) -> Self {
        PredictionError {
            file: file.into(),
            line: Some(line),
            reason: reason.into(),
        }
    }
}

impl std::fmt::Display for PredictionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}: line {l}: {}", self.file, self.reason),
            None => write!(f, "{}: {}", self.file, self.reason),
        }
    }
}

/// Why scoring could not be done at all: the reference data is unusable, or (in
/// official-compat mode) the official scorer would have crashed on these predictions.
#[derive(Debug, thiserror::Error)]
pub enum ScoreError {
    /// The organiser's reference data is missing or malformed.
    #[error("{file}: {reason}")]
    Reference { file: String, reason: String },
    /// Official-compat mode: the official scorer stops here; we say why instead.
    #[error("{file}: the official scorer would stop here: {reason}")]
    OfficialWouldFail { file: String, reason: String },
    #[error("{file}: cannot read: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
}

impl ScoreError {
    pub(crate) fn reference(file: impl Into<String>, reason: impl Into<String>) -> Self {
        ScoreError::Reference {
            file: file.into(),
            reason: reason.into(),
        }
    }
    pub(crate) fn official(file: impl Into<String>, reason: impl Into<String>) -> Self {
        ScoreError::OfficialWouldFail {
            file: file.into(),
            reason: reason.into(),
        }
    }
    pub(crate) fn io(file: impl Into<String>, source: std::io::Error) -> Self {
        ScoreError::Io {
            file: file.into(),
            source,
        }
    }
}
