//! PhysioNet Challenge 2022 (heart murmur and clinical outcome from PCG): the official
//! `evaluate_model.py` (final version, with the cost metric), as `docs/scoring.md`
//! (*physionet2022*) defines it.
//!
//! One output CSV per patient (`#id`, class names, binary labels, scalar scores) against
//! the `#Murmur:` and `#Outcome:` lines of the patient `.txt` files. Two tasks, each with:
//! AUROC and AUPRC from the official threshold walk, F-measure, accuracy, weighted
//! accuracy (murmur: the ranking number) and the cost (outcome: the ranking number, lower
//! is better; for murmur the 3×2 variant against the outcome labels, reported only).
//!
//! Reading follows the official helper code to the character: fields are sanitised as it
//! does (quotes removed, Python's `float()`, `True`/`true`/`T`/`t`), class names compare
//! as `strip().casefold()`, the last duplicate class wins, and "enforce positives" turns a
//! row without exactly one positive into Present/Abnormal, for labels and outputs alike.
//!
//! Decisions (docs/architecture.md): in strict mode a missing output, or one the official
//! code would crash on (fewer than 4 lines, a matched class without a value, not UTF-8;
//! also four lines that do not end within the 4 MiB we read),
//! or whose lines 3–4 do not have one value per class of line 2, is scored as the "empty"
//! output (Present/Abnormal, scores 0) and listed in `errors`. Everything the official
//! code reads silently but that is probably a mistake (a wrong `#id`, unreadable values
//! read as 0, duplicate or unknown class names, a task with no class in the file,
//! identical predictions for every patient) is listed in `warnings`. In official-compat
//! mode the ragged lines are accepted as the official code accepts them, and what it
//! would crash on stops the run with its message (the failure it meets first, in its
//! order of work).
//!
//! Not reproduced: only the first four lines of an output file are decoded, where Python
//! decodes whole 8 KiB chunks (a broken byte after line 4 fails officially, not here).

mod labels;
mod metrics;
mod output;
mod report;

pub use labels::{Patient, Reference, load_labels, parse_labels};
pub use metrics::{PerClass, TaskMetrics};
pub use output::{OutputFile, OutputProblem, parse_output};
pub use report::{Item, Report, output_csv, score, score_folders};

/// The murmur classes in the official order.
pub const MURMUR_CLASSES: [&str; 3] = ["Present", "Unknown", "Absent"];
/// The outcome classes in the official order.
pub const OUTCOME_CLASSES: [&str; 2] = ["Abnormal", "Normal"];

/// One task's classes and the weights of its weighted accuracy (per label class). The
/// class that "enforce positives" falls back on, Present or Abnormal, is the first.
#[derive(Debug, Clone, Copy)]
struct Task {
    name: &'static str,
    /// The patient-file line that holds the label.
    label_prefix: &'static str,
    classes: &'static [&'static str],
    weights: &'static [f64],
}

const MURMUR: Task = Task {
    name: "murmur",
    label_prefix: "#Murmur:",
    classes: &MURMUR_CLASSES,
    weights: &[5.0, 3.0, 1.0],
};
const OUTCOME: Task = Task {
    name: "outcome",
    label_prefix: "#Outcome:",
    classes: &OUTCOME_CLASSES,
    weights: &[5.0, 1.0],
};

/// Enforce positives: the class of a row with exactly one positive, else the first
/// (Present / Abnormal).
fn enforce(row: &[bool]) -> usize {
    let mut positives = row.iter().enumerate().filter(|(_, b)| **b);
    match (positives.next(), positives.next()) {
        (Some((k, _)), None) => k,
        _ => 0,
    }
}

/// Bytes read of an output file; the four lines the scorer reads must end within them.
const MAX_OUTPUT_BYTES: u64 = 4 << 20;

#[cfg(test)]
mod tests;
