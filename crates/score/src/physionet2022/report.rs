//! Scoring: a folder of outputs against the reference, the report (JSON and the official
//! text) and the output file a well-behaved entry writes.

use std::fmt::Display;
use std::path::Path;

use formats::circor::{Murmur, Outcome};
use serde::{Serialize, Serializer};

use super::labels::{Patient, Reference, load_labels};
use super::metrics::{TaskMetrics, mean_cost, task_metrics};
use super::output::{TaskValues, official_first_failure, ragged, read_output, read_tasks};
use super::{MURMUR, MURMUR_CLASSES, OUTCOME, OUTCOME_CLASSES, enforce};
use crate::python;
use crate::{Mode, PredictionError, ScoreError};

fn as_text<T: Display, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

/// Scores as JSON numbers, except ±inf (which the official reading accepts and JSON has
/// no number for): the strings `"inf"` and `"-inf"`.
fn scores_json<S: Serializer>(v: &[f64], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = s.serialize_seq(Some(v.len()))?;
    for &x in v {
        if x.is_infinite() {
            seq.serialize_element(if x > 0.0 { "inf" } else { "-inf" })?;
        } else {
            seq.serialize_element(&x)?;
        }
    }
    seq.end()
}

/// One patient and what was scored for it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Item {
    pub patient: String,
    /// The output file used, `None` when it was missing.
    pub file: Option<String>,
    #[serde(serialize_with = "as_text")]
    pub murmur_label: Murmur,
    #[serde(serialize_with = "as_text")]
    pub outcome_label: Outcome,
    /// The murmur output after enforcement.
    #[serde(serialize_with = "as_text")]
    pub murmur_output: Murmur,
    /// The outcome output after enforcement.
    #[serde(serialize_with = "as_text")]
    pub outcome_output: Outcome,
    /// Scores in the order Present, Unknown, Absent.
    #[serde(serialize_with = "scores_json")]
    pub murmur_scores: Vec<f64>,
    /// Scores in the order Abnormal, Normal.
    #[serde(serialize_with = "scores_json")]
    pub outcome_scores: Vec<f64>,
    /// The output was missing or unusable and was scored as the "empty" output.
    pub defaulted: bool,
}

/// The result of scoring a folder of outputs.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub challenge: &'static str,
    pub mode: Mode,
    /// The murmur ranking number: weighted accuracy (higher is better).
    pub score: f64,
    /// The outcome ranking number: mean cost per patient (lower is better).
    pub outcome_cost: f64,
    pub murmur: TaskMetrics,
    pub outcome: TaskMetrics,
    pub items: Vec<Item>,
    pub errors: Vec<PredictionError>,
    pub warnings: Vec<String>,
}

/// Scores the output folder against the reference. In official-compat mode it stops at
/// the first patient (in name order) the official scorer would fail on;
/// [`score_folders`] reports the failure it would meet first across all of them.
pub fn score(reference: &Reference, outputs: &Path, mode: Mode) -> Result<Report, ScoreError> {
    let mut errors = Vec::new();
    let mut warnings = reference.warnings.clone();
    let outputs_exist = outputs.is_dir();
    if mode == Mode::Strict && !outputs_exist {
        errors.push(PredictionError::new(
            outputs.display().to_string(),
            "the outputs folder does not exist: every patient is scored as the empty output",
        ));
    }
    let mut items = Vec::with_capacity(reference.patients.len());
    let mut murmur_scores = Vec::with_capacity(reference.patients.len());
    let mut outcome_scores = Vec::with_capacity(reference.patients.len());
    for p in &reference.patients {
        let name = format!("{}.csv", p.id);
        let path = outputs.join(&name);
        let read = read_output(&path)
            .map_err(|e| e.to_string())
            .and_then(|bytes| {
                bytes
                    .map(|b| read_tasks(&b).map_err(|e| e.to_string()))
                    .transpose()
            });
        let (file, values) = match read {
            Ok(None) => {
                if mode == Mode::OfficialCompat {
                    return Err(not_found(&path, &p.id, &label_name(p)));
                }
                if outputs_exist {
                    errors.push(PredictionError::new(
                        &name,
                        "missing: scored as the empty output (Present, Abnormal, scores 0)",
                    ));
                }
                (None, None)
            }
            Err(why) => {
                if mode == Mode::OfficialCompat {
                    return Err(ScoreError::official(path.display().to_string(), why));
                }
                errors.push(PredictionError::new(
                    &name,
                    format!("{why}; scored as the empty output (Present, Abnormal, scores 0)"),
                ));
                (Some(name), None)
            }
            Ok(Some((out, murmur, outcome, mut notes))) => {
                let rejected = match mode {
                    Mode::Strict => ragged(&out),
                    Mode::OfficialCompat => Ok(None),
                };
                if let Ok(Some(note)) = &rejected {
                    notes.push(note.clone());
                }
                if let Err(why) = rejected {
                    errors.push(PredictionError::new(
                        &name,
                        format!("{why}; scored as the empty output (Present, Abnormal, scores 0)"),
                    ));
                    (Some(name), None)
                } else {
                    notes.extend(out.notes(&p.id));
                    warnings.extend(notes.into_iter().map(|n| format!("{name}: {n}")));
                    (Some(name), Some((murmur, outcome)))
                }
            }
        };
        let defaulted = values.is_none();
        let (murmur, outcome) =
            values.unwrap_or_else(|| (TaskValues::empty(MURMUR), TaskValues::empty(OUTCOME)));
        items.push(Item {
            patient: p.id.clone(),
            file,
            murmur_label: p.murmur,
            outcome_label: p.outcome,
            murmur_output: Murmur::ALL[enforce(&murmur.binary)],
            outcome_output: Outcome::ALL[enforce(&outcome.binary)],
            murmur_scores: murmur.scores.clone(),
            outcome_scores: outcome.scores.clone(),
            defaulted,
        });
        murmur_scores.push(murmur.scores);
        outcome_scores.push(outcome.scores);
    }
    warnings.extend(stray_outputs(reference, outputs));
    warnings.extend(degenerate(&items));

    let murmur_labels: Vec<usize> = items.iter().map(|i| i.murmur_label as usize).collect();
    let murmur_outputs: Vec<usize> = items.iter().map(|i| i.murmur_output as usize).collect();
    let outcome_labels: Vec<usize> = items.iter().map(|i| i.outcome_label as usize).collect();
    let outcome_outputs: Vec<usize> = items.iter().map(|i| i.outcome_output as usize).collect();
    // The cost refers on Present, Unknown or Abnormal and treats by the outcome label.
    let abnormal: Vec<bool> = items
        .iter()
        .map(|i| i.outcome_label == Outcome::Abnormal)
        .collect();
    let murmur_referred: Vec<bool> = items
        .iter()
        .map(|i| i.murmur_output != Murmur::Absent)
        .collect();
    let outcome_referred: Vec<bool> = items
        .iter()
        .map(|i| i.outcome_output == Outcome::Abnormal)
        .collect();

    let murmur = task_metrics(
        MURMUR,
        &murmur_labels,
        &murmur_outputs,
        &murmur_scores,
        mean_cost(&murmur_referred, &abnormal),
    );
    let outcome = task_metrics(
        OUTCOME,
        &outcome_labels,
        &outcome_outputs,
        &outcome_scores,
        mean_cost(&outcome_referred, &abnormal),
    );
    Ok(Report {
        challenge: "physionet2022",
        mode,
        score: murmur.weighted_accuracy,
        outcome_cost: outcome.cost,
        murmur,
        outcome,
        items,
        errors,
        warnings,
    })
}

/// The official scorer's failure for a label file without its output.
pub(super) fn not_found(output: &Path, root: &str, label_file: &str) -> ScoreError {
    ScoreError::official(
        output.display().to_string(),
        format!("Output file {root}.csv not found for label file {label_file}."),
    )
}

fn label_name(p: &Patient) -> String {
    p.label_file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Output files for patients the reference does not have (ignored, as officially).
fn stray_outputs(reference: &Reference, outputs: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(outputs) else {
        return Vec::new();
    };
    let known: std::collections::HashSet<&str> =
        reference.patients.iter().map(|p| p.id.as_str()).collect();
    let mut stray: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| n.strip_suffix(".csv").is_some_and(|id| !known.contains(id)))
        .collect();
    stray.sort();
    stray
        .into_iter()
        .map(|n| {
            format!(
                "{n}: no patient {:?} in the labels; ignored",
                &n[..n.len() - 4]
            )
        })
        .collect()
}

/// Identical predictions for every patient usually mean a broken model.
fn degenerate(items: &[Item]) -> Vec<String> {
    let mut out = Vec::new();
    if items.len() < 2 {
        return out;
    }
    if items
        .iter()
        .all(|i| i.murmur_output == items[0].murmur_output)
    {
        out.push(format!(
            "every patient's murmur output is {}: a degenerate model?",
            items[0].murmur_output
        ));
    }
    if items
        .iter()
        .all(|i| i.outcome_output == items[0].outcome_output)
    {
        out.push(format!(
            "every patient's outcome output is {}: a degenerate model?",
            items[0].outcome_output
        ));
    }
    out
}

/// Loads the labels and scores the outputs.
pub fn score_folders(labels: &Path, outputs: &Path, mode: Mode) -> Result<Report, ScoreError> {
    if mode == Mode::OfficialCompat {
        official_first_failure(labels, outputs)?;
    }
    score(&load_labels(labels)?, outputs, mode)
}

/// Writes an output file in the official layout (`save_challenge_outputs` with the
/// official example's class order): what a well-behaved entry writes for a patient.
pub fn output_csv(patient: &str, murmur: Murmur, outcome: Outcome, scores: &[f64; 5]) -> String {
    let one = |b: bool| if b { "1" } else { "0" };
    let binaries = [
        one(murmur == Murmur::Present),
        one(murmur == Murmur::Unknown),
        one(murmur == Murmur::Absent),
        one(outcome == Outcome::Abnormal),
        one(outcome == Outcome::Normal),
    ];
    let scores: Vec<String> = scores.iter().map(|s| format!("{s:?}")).collect();
    format!(
        "#{patient}\n{}\n{}\n{}\n",
        MURMUR_CLASSES
            .iter()
            .chain(&OUTCOME_CLASSES)
            .copied()
            .collect::<Vec<_>>()
            .join(","),
        binaries.join(","),
        scores.join(",")
    )
}

impl Report {
    /// The official `evaluate_model.py` output (every value with 3 decimals, blocks in its
    /// order), then what could not be used.
    pub fn text(&self) -> String {
        let summary = |m: &TaskMetrics| {
            format!(
                "AUROC,AUPRC,F-measure,Accuracy,Weighted Accuracy,Cost\n{}\n",
                [
                    m.auroc,
                    m.auprc,
                    m.f_measure,
                    m.accuracy,
                    m.weighted_accuracy,
                    m.cost
                ]
                .map(python::fmt3)
                .join(",")
            )
        };
        let row = |v: &[f64]| {
            v.iter()
                .map(|&x| python::fmt3(x))
                .collect::<Vec<_>>()
                .join(",")
        };
        let per_class = |m: &TaskMetrics| {
            format!(
                "Classes,{}\nAUROC,{}\nAUPRC,{}\nF-measure,{}\nAccuracy,{}\n",
                m.classes.join(","),
                row(&m.per_class.auroc),
                row(&m.per_class.auprc),
                row(&m.per_class.f_measure),
                row(&m.per_class.accuracy)
            )
        };
        // `print` adds a newline after the official text, which ends with one.
        let mut s = format!(
            "#Murmur scores\n{}\n#Outcome scores\n{}\n#Murmur scores (per class)\n{}\n\
             #Outcome scores (per class)\n{}\n",
            summary(&self.murmur),
            summary(&self.outcome),
            per_class(&self.murmur),
            per_class(&self.outcome)
        );
        crate::cpsc2021::push_problems(&mut s, &self.errors, &self.warnings);
        s
    }
}
