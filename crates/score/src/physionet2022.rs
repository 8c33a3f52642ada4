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

use std::fmt::Display;
use std::io::Read;
use std::path::{Path, PathBuf};

use formats::circor::{Murmur, Outcome};
use serde::{Serialize, Serializer};

use crate::numeric::pairwise_sum;
use crate::python;
use crate::{Mode, PredictionError, ScoreError};

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

// ---------------------------------------------------------------------------------------
// Reference: the labels of the patient files.

/// One labelled patient.
#[derive(Debug, Clone, PartialEq)]
pub struct Patient {
    /// The label file's name without `.txt`; the output file is `<id>.csv`.
    pub id: String,
    pub label_file: PathBuf,
    /// The murmur label after enforcement (a label that is no class reads as Present).
    pub murmur: Murmur,
    /// The outcome label after enforcement (a label that is no class reads as Abnormal).
    pub outcome: Outcome,
}

/// The labelled patients of a folder, in file-name order.
#[derive(Debug, Clone)]
pub struct Reference {
    pub dir: PathBuf,
    pub patients: Vec<Patient>,
    /// Labels that name no class and were enforced to the positive class.
    pub warnings: Vec<String>,
}

/// The value of the last line that starts with `prefix`, taken as the helper code does:
/// the piece after the first `": "` and before the next one.
fn label_value<'a>(lines: &[&'a str], prefix: &str) -> Option<&'a str> {
    lines
        .iter()
        .filter(|l| l.starts_with(prefix))
        .filter_map(|l| l.split(": ").nth(1))
        .next_back()
}

/// The class index of one task's label in a patient file's lines (the positive class,
/// with a warning, when the label names no class).
fn task_label(
    lines: &[&str],
    task: Task,
    file: &str,
    warnings: &mut Vec<String>,
) -> Result<usize, ScoreError> {
    let prefix = task.label_prefix;
    let value = label_value(lines, prefix).ok_or_else(|| {
        ScoreError::reference(
            file,
            format!(
                "no `{prefix} <class>` line: this file has no {} label (a file of the hidden \
                 sets, whose labels are withheld?)",
                task.name
            ),
        )
    })?;
    match task
        .classes
        .iter()
        .position(|c| python::same_class(value, c))
    {
        Some(k) => Ok(k),
        None => {
            warnings.push(format!(
                "{file}: {} label {:?} is none of {}: scored as {}, as the official scorer \
                 does",
                task.name,
                python::strip(value),
                task.classes.join(", "),
                task.classes[0]
            ));
            Ok(0)
        }
    }
}

/// Reads the two labels of a patient file's text. `file` names it in errors and warnings.
pub fn parse_labels(text: &str, file: &str) -> Result<(Murmur, Outcome, Vec<String>), ScoreError> {
    let lines = python::text_lines(text);
    let mut warnings = Vec::new();
    let murmur = Murmur::ALL[task_label(&lines, MURMUR, file, &mut warnings)?];
    let outcome = Outcome::ALL[task_label(&lines, OUTCOME, file, &mut warnings)?];
    Ok((murmur, outcome, warnings))
}

/// The label files of a folder as the official scorer finds them: regular files (or links
/// to them) whose name ends in `.txt` in any case and does not start with a dot, sorted.
fn label_files(dir: &Path) -> Result<Vec<(String, PathBuf)>, ScoreError> {
    let dir_name = dir.display().to_string();
    let entries = std::fs::read_dir(dir).map_err(|e| ScoreError::io(&dir_name, e))?;
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| ScoreError::io(&dir_name, e))?;
        let path = entry.path();
        let raw = entry.file_name();
        let Some(name) = raw.to_str().map(str::to_string) else {
            // Only a would-be label file matters; recordings and the like are ignored.
            if raw
                .as_encoded_bytes()
                .to_ascii_lowercase()
                .ends_with(b".txt")
            {
                return Err(ScoreError::reference(
                    path.display().to_string(),
                    "the name of this patient file is not UTF-8",
                ));
            }
            continue;
        };
        let lower = name.to_lowercase();
        if lower.ends_with(".txt") && !name.starts_with('.') && path.is_file() {
            files.push((name, path));
        }
    }
    files.sort();
    Ok(files)
}

fn label_text(path: &Path) -> Result<String, ScoreError> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| ScoreError::io(&shown, e))?;
    String::from_utf8(bytes).map_err(|e| {
        ScoreError::reference(
            &shown,
            format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
        )
    })
}

/// Loads the labels of every patient file in `dir`.
pub fn load_labels(dir: &Path) -> Result<Reference, ScoreError> {
    let files = label_files(dir)?;
    if files.is_empty() {
        return Err(ScoreError::reference(
            dir.display().to_string(),
            "no patient .txt files: nothing to score (the official scorer fails with \
             \"No label or output files found.\")",
        ));
    }
    let mut patients = Vec::with_capacity(files.len());
    let mut warnings = Vec::new();
    for (name, path) in files {
        let shown = path.display().to_string();
        let text = label_text(&path)?;
        let (murmur, outcome, w) = parse_labels(&text, &shown)?;
        warnings.extend(w);
        patients.push(Patient {
            id: name[..name.len() - ".txt".len()].to_string(),
            label_file: path,
            murmur,
            outcome,
        });
    }
    Ok(Reference {
        dir: dir.to_path_buf(),
        patients,
        warnings,
    })
}

// ---------------------------------------------------------------------------------------
// Outputs: one CSV per patient.

/// The four lines of an output file, split on commas, as the official helper reads them.
/// Values are kept as written; they are sanitised when a task takes them.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputFile {
    /// Line 1 without any `#`, stripped.
    pub patient_id: String,
    /// Line 2's fields, stripped.
    pub classes: Vec<String>,
    /// Line 3's fields as written.
    pub binaries: Vec<String>,
    /// Line 4's fields as written.
    pub scores: Vec<String>,
}

/// Why an output file cannot be read at all. Each is a crash of the official scorer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputProblem {
    /// Fewer than the four lines read (Python: `UnboundLocalError`).
    TooFewLines(usize),
    /// A line is not UTF-8 (Python: `UnicodeDecodeError`).
    NotUtf8 { line: usize },
    /// The four lines do not end within the bytes we read.
    TooLarge,
    /// Class `class` of line 2 (column `column`, 1-based) has no value on `line` (Python:
    /// `IndexError`).
    MissingValue {
        class: String,
        column: usize,
        line: usize,
        values: usize,
    },
}

impl Display for OutputProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OutputProblem::TooFewLines(n) => write!(
                f,
                "{n} line(s), but an output has 4: `#patient id`, the classes, the binary \
                 labels and the scores (the official scorer fails with an unassigned \
                 variable)"
            ),
            OutputProblem::NotUtf8 { line } => write!(
                f,
                "line {line} is not UTF-8 text (the official scorer fails with \
                 UnicodeDecodeError)"
            ),
            OutputProblem::TooLarge => write!(
                f,
                "the first 4 lines do not end within {} MiB: not read",
                MAX_OUTPUT_BYTES >> 20
            ),
            OutputProblem::MissingValue {
                class,
                column,
                line,
                values,
            } => write!(
                f,
                "class {class:?} is column {column} of line 2 but line {line} has only \
                 {values} value(s) (the official scorer fails with IndexError)"
            ),
        }
    }
}

/// Parses the bytes of an output file (only the first four lines are read).
pub fn parse_output(bytes: &[u8]) -> Result<OutputFile, OutputProblem> {
    let lines: Vec<python::Line> = python::lines(bytes).take(4).collect();
    if lines.len() < 4 {
        return Err(OutputProblem::TooFewLines(lines.len()));
    }
    let text: Vec<&str> = lines
        .iter()
        .enumerate()
        .map(|(k, l)| {
            std::str::from_utf8(&bytes[l.start..l.end])
                .map_err(|_| OutputProblem::NotUtf8 { line: k + 1 })
        })
        .collect::<Result<_, _>>()?;
    let fields = |l: &str| l.split(',').map(str::to_string).collect::<Vec<_>>();
    Ok(OutputFile {
        patient_id: python::strip(&text[0].replace('#', "")).to_string(),
        classes: text[1]
            .split(',')
            .map(|c| python::strip(c).to_string())
            .collect(),
        binaries: fields(text[2]),
        scores: fields(text[3]),
    })
}

fn unquote(raw: &str) -> String {
    python::strip(&raw.replace(['"', '\''], "")).to_string()
}

/// `sanitize_binary_value`: true for a finite number equal to 1 or `True`/`true`/`T`/`t`,
/// false for anything else. The second value says whether the field was unclear (neither
/// a 0 nor a 1 in any spelling the helper code writes or reads), which deserves a warning.
fn sanitize_binary(raw: &str) -> (bool, bool) {
    let x = unquote(raw);
    let number = python::float(&x).filter(|v| v.is_finite());
    let one = number == Some(1.0) || matches!(x.as_str(), "True" | "true" | "T" | "t");
    let zero = number == Some(0.0) || matches!(x.as_str(), "False" | "false" | "F" | "f");
    (one, !one && !zero)
}

/// `sanitize_scalar_value`: a number (±inf included), else 0.0. The second value says the
/// field was not a number or was NaN.
fn sanitize_scalar(raw: &str) -> (f64, bool) {
    match python::float(&unquote(raw)) {
        Some(v) if !v.is_nan() => (v, false),
        _ => (0.0, true),
    }
}

/// One task's values from an output file: binary labels and scores per class, in the
/// task's order.
#[derive(Debug, Clone, PartialEq)]
struct TaskValues {
    binary: Vec<bool>,
    scores: Vec<f64>,
}

impl TaskValues {
    /// The "empty" output: nothing positive, every score 0.
    fn empty(task: Task) -> TaskValues {
        TaskValues {
            binary: vec![false; task.classes.len()],
            scores: vec![0.0; task.classes.len()],
        }
    }
}

impl OutputFile {
    /// Takes a task's values as the official loader does: for every class of the task,
    /// every matching column overwrites the previous one (the last duplicate wins); a
    /// class absent from the file stays 0 / 0.0. Unclear values are described in
    /// `notes`.
    fn task_values(
        &self,
        task: Task,
        notes: &mut Vec<String>,
    ) -> Result<TaskValues, OutputProblem> {
        let mut v = TaskValues::empty(task);
        for (j, class) in task.classes.iter().enumerate() {
            for (k, name) in self.classes.iter().enumerate() {
                if !python::same_class(name, class) {
                    continue;
                }
                let missing = |line: usize, values: usize| OutputProblem::MissingValue {
                    class: name.clone(),
                    column: k + 1,
                    line,
                    values,
                };
                let raw_b = self
                    .binaries
                    .get(k)
                    .ok_or_else(|| missing(3, self.binaries.len()))?;
                let raw_s = self
                    .scores
                    .get(k)
                    .ok_or_else(|| missing(4, self.scores.len()))?;
                let (b, unclear_b) = sanitize_binary(raw_b);
                let (s, unclear_s) = sanitize_scalar(raw_s);
                if unclear_b {
                    notes.push(format!(
                        "binary label {:?} for {class} is neither 0 nor 1: read as 0",
                        raw_b.trim()
                    ));
                }
                if unclear_s {
                    notes.push(format!(
                        "score {:?} for {class} is not a number: read as 0",
                        raw_s.trim()
                    ));
                }
                v.binary[j] = b;
                v.scores[j] = s;
            }
        }
        Ok(v)
    }

    /// What the official scorer reads without complaint but is probably a mistake.
    fn notes(&self, patient: &str) -> Vec<String> {
        let mut notes = Vec::new();
        if self.patient_id != patient {
            notes.push(format!(
                "line 1 names patient {:?}, not {patient:?} (the file name decides; the \
                 line is not checked)",
                self.patient_id
            ));
        }
        let all = MURMUR_CLASSES.iter().chain(&OUTCOME_CLASSES);
        for class in all {
            let n = self
                .classes
                .iter()
                .filter(|c| python::same_class(c, class))
                .count();
            if n > 1 {
                notes.push(format!(
                    "class {class} is given {n} times: the last one counts"
                ));
            }
        }
        for c in &self.classes {
            let known = MURMUR_CLASSES
                .iter()
                .chain(&OUTCOME_CLASSES)
                .any(|k| python::same_class(c, k));
            if !known && !c.is_empty() {
                notes.push(format!(
                    "class {c:?} is not a class of this challenge: ignored"
                ));
            }
        }
        for task in [MURMUR, OUTCOME] {
            let any = self
                .classes
                .iter()
                .any(|c| task.classes.iter().any(|k| python::same_class(c, k)));
            if !any {
                notes.push(format!(
                    "no {} class ({}): scored as {} with scores 0",
                    task.name,
                    task.classes.join(", "),
                    task.classes[0]
                ));
            }
        }
        notes
    }
}

/// Whether lines 3 and 4 have one value per class of line 2 (strict mode requires it: a
/// missing comma would silently shift every later value to another class). `Err` is the
/// mismatch; `Ok(Some(_))` is the one mismatch that shifts nothing: a class line ending
/// with a comma (a common artefact of CSV writers) has an empty last class name, which
/// names no class, so a line that gives one value fewer still matches every named class.
/// The official code reads such a file as intended.
fn ragged(out: &OutputFile) -> Result<Option<String>, String> {
    let n = out.classes.len();
    let trailing_empty = n > 1 && out.classes.last().is_some_and(|c| c.is_empty());
    let mut short = Vec::new();
    for (line, values) in [(3, &out.binaries), (4, &out.scores)] {
        if values.len() == n {
            continue;
        }
        if trailing_empty && values.len() == n - 1 {
            short.push(line.to_string());
            continue;
        }
        return Err(format!(
            "line 2 names {n} class(es) but line {line} has {} value(s): the values \
             cannot be matched to their classes",
            values.len()
        ));
    }
    Ok((!short.is_empty()).then(|| {
        format!(
            "line 2 ends with a comma: its last class name (column {n}) is empty and has no \
             value on line {}; ignored",
            short.join(" or ")
        )
    }))
}

/// Reads the start of an output file: `Ok(None)` when there is no such regular file.
fn read_output(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    if !path.is_file() {
        return Ok(None);
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_OUTPUT_BYTES + 1)
        .read_to_end(&mut bytes)?;
    Ok(Some(bytes))
}

/// Reads an output file's bytes as the official helper does (the first four lines).
fn output_file(bytes: &[u8]) -> Result<OutputFile, OutputProblem> {
    // More bytes than we read: the four lines must all end within them, or line 4 (or
    // an earlier one) is cut and would read differently from the whole file.
    let within = |limit: usize| {
        python::lines(&bytes[..limit])
            .take(4)
            .filter(|l| l.terminated)
            .count()
    };
    if bytes.len() as u64 > MAX_OUTPUT_BYTES && within(MAX_OUTPUT_BYTES as usize) < 4 {
        return Err(OutputProblem::TooLarge);
    }
    parse_output(bytes)
}

/// Parses an output file's bytes into both tasks' values (and notes on unclear values).
fn read_tasks(
    bytes: &[u8],
) -> Result<(OutputFile, TaskValues, TaskValues, Vec<String>), OutputProblem> {
    let out = output_file(bytes)?;
    let mut notes = Vec::new();
    let murmur = out.task_values(MURMUR, &mut notes)?;
    let outcome = out.task_values(OUTCOME, &mut notes)?;
    Ok((out, murmur, outcome, notes))
}

/// Official-compat mode: finds the failure the official scorer would report first, in
/// its order of work: pair every label file with its output, read every murmur label,
/// read every output for murmur, every outcome label, every output for outcome.
fn official_first_failure(labels: &Path, outputs: &Path) -> Result<(), ScoreError> {
    let files = label_files(labels)?;
    let mut pairs = Vec::with_capacity(files.len());
    for (name, path) in &files {
        let root = &name[..name.len() - ".txt".len()];
        let output = outputs.join(format!("{root}.csv"));
        if !output.is_file() {
            return Err(not_found(&output, root, name));
        }
        pairs.push((path, output));
    }
    let mut texts = Vec::with_capacity(pairs.len());
    for (label, _) in &pairs {
        texts.push(label_text(label)?);
    }
    let mut ignored = Vec::new();
    let mut outs = Vec::with_capacity(pairs.len());
    for task in [MURMUR, OUTCOME] {
        for ((label, _), text) in pairs.iter().zip(&texts) {
            let lines = python::text_lines(text);
            task_label(&lines, task, &label.display().to_string(), &mut ignored)?;
        }
        for (k, (_, output)) in pairs.iter().enumerate() {
            let fail = |why: String| ScoreError::official(output.display().to_string(), why);
            if outs.len() <= k {
                let bytes = read_output(output)
                    .map_err(|e| fail(e.to_string()))?
                    .unwrap_or_default();
                outs.push(output_file(&bytes).map_err(|e| fail(e.to_string()))?);
            }
            outs[k]
                .task_values(task, &mut ignored)
                .map_err(|e| fail(e.to_string()))?;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Metrics.

/// The per-class values of one task, in the task's class order; NaN where undefined.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PerClass {
    pub auroc: Vec<f64>,
    pub auprc: Vec<f64>,
    pub f_measure: Vec<f64>,
    pub accuracy: Vec<f64>,
}

/// Every metric of one task, as the official scorer computes it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskMetrics {
    pub classes: Vec<&'static str>,
    pub auroc: f64,
    pub auprc: f64,
    pub f_measure: f64,
    pub accuracy: f64,
    pub weighted_accuracy: f64,
    /// Mean cost per patient (for murmur, the 3×2 variant against the outcome labels).
    pub cost: f64,
    pub per_class: PerClass,
    /// Rows = enforced output class, columns = label class, in the task's order.
    pub confusion: Vec<Vec<u64>>,
}

fn ratio(a: f64, b: f64) -> f64 {
    if b != 0.0 { a / b } else { f64::NAN }
}

/// `np.nanmean`, or NaN when no value is finite (the official guard).
fn nanmean(v: &[f64]) -> f64 {
    if !v.iter().any(|x| x.is_finite()) {
        return f64::NAN;
    }
    let replaced: Vec<f64> = v
        .iter()
        .map(|&x| if x.is_nan() { 0.0 } else { x })
        .collect();
    let count = v.iter().filter(|x| !x.is_nan()).count();
    pairwise_sum(&replaced) / count as f64
}

/// AUROC and AUPRC of one class from its scores, by the official threshold walk: the
/// distinct scores plus (largest + 1), in descending order; at each threshold every
/// patient scoring at least that much is predicted positive.
fn auc(positive: &[bool], scores: &[f64]) -> (f64, f64) {
    let n = scores.len();
    let mut thresholds = scores.to_vec();
    thresholds.sort_by(f64::total_cmp);
    thresholds.dedup_by(|a, b| a == b);
    let Some(&top) = thresholds.last() else {
        return (f64::NAN, f64::NAN);
    };
    thresholds.push(top + 1.0);
    thresholds.reverse();
    let t = thresholds.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));

    let positives = positive.iter().filter(|&&p| p).count() as f64;
    let (mut tp, mut fp, mut fn_, mut tn) =
        (vec![0.0; t], vec![0.0; t], vec![0.0; t], vec![0.0; t]);
    fn_[0] = positives;
    tn[0] = n as f64 - positives;
    let mut i = 0;
    for j in 1..t {
        (tp[j], fp[j], fn_[j], tn[j]) = (tp[j - 1], fp[j - 1], fn_[j - 1], tn[j - 1]);
        while i < n && scores[order[i]] >= thresholds[j] {
            if positive[order[i]] {
                tp[j] += 1.0;
                fn_[j] -= 1.0;
            } else {
                fp[j] += 1.0;
                tn[j] -= 1.0;
            }
            i += 1;
        }
    }
    let tpr: Vec<f64> = (0..t).map(|j| ratio(tp[j], tp[j] + fn_[j])).collect();
    let tnr: Vec<f64> = (0..t).map(|j| ratio(tn[j], fp[j] + tn[j])).collect();
    let ppv: Vec<f64> = (0..t).map(|j| ratio(tp[j], tp[j] + fp[j])).collect();
    let (mut auroc, mut auprc) = (0.0, 0.0);
    for j in 0..t - 1 {
        auroc += 0.5 * (tpr[j + 1] - tpr[j]) * (tnr[j + 1] + tnr[j]);
        auprc += (tpr[j + 1] - tpr[j]) * ppv[j + 1];
    }
    (auroc, auprc)
}

/// The mean cost per patient from referral decisions: `referred` (the algorithm says
/// Present, Unknown or Abnormal) against `abnormal` (the outcome label).
fn mean_cost(referred: &[bool], abnormal: &[bool]) -> f64 {
    let (mut tp, mut fp, mut fn_, mut tn) = (0.0, 0.0, 0.0, 0.0);
    for (&r, &a) in referred.iter().zip(abnormal) {
        match (r, a) {
            (true, true) => tp += 1.0,
            (true, false) => fp += 1.0,
            (false, true) => fn_ += 1.0,
            (false, false) => tn += 1.0,
        }
    }
    let n: f64 = tp + fp + fn_ + tn;
    if n <= 0.0 {
        return f64::NAN;
    }
    let x: f64 = (tp + fp) / n;
    // numpy raises a float64 to a power with the C library's pow; black_box keeps the
    // compiler from rewriting the call into multiplications, which could round differently.
    let pow = |e: f64| x.powf(std::hint::black_box(e));
    let expert = (25.0 + 397.0 * x - 1718.0 * pow(2.0) + 11296.0 * pow(4.0)) * n;
    let total = 10.0 * n + expert + 10000.0 * tp + 50000.0 * fn_;
    total / n
}

/// Every metric of a task from enforced labels and outputs (class indices) and the
/// scores (one row per patient). `cost` is computed by the caller, as it mixes tasks.
fn task_metrics(
    task: Task,
    labels: &[usize],
    outputs: &[usize],
    scores: &[Vec<f64>],
    cost: f64,
) -> TaskMetrics {
    let c = task.classes.len();
    let mut confusion = vec![vec![0u64; c]; c];
    for (&l, &o) in labels.iter().zip(outputs) {
        confusion[o][l] += 1;
    }
    let column = |k: usize| -> f64 { (0..c).map(|i| confusion[i][k] as f64).sum() };
    let total: f64 = (0..c).map(column).sum();
    let trace: f64 = (0..c).map(|i| confusion[i][i] as f64).sum();

    let mut per_class = PerClass {
        auroc: Vec::with_capacity(c),
        auprc: Vec::with_capacity(c),
        f_measure: Vec::with_capacity(c),
        accuracy: Vec::with_capacity(c),
    };
    for k in 0..c {
        let positive: Vec<bool> = labels.iter().map(|&l| l == k).collect();
        let class_scores: Vec<f64> = scores.iter().map(|s| s[k]).collect();
        let (roc, prc) = auc(&positive, &class_scores);
        per_class.auroc.push(roc);
        per_class.auprc.push(prc);
        let tp = confusion[k][k] as f64;
        let fp = (0..c)
            .filter(|&j| j != k)
            .map(|j| confusion[k][j] as f64)
            .sum::<f64>();
        let fn_ = column(k) - tp;
        let denominator = 2.0 * tp + fp + fn_;
        per_class.f_measure.push(if denominator > 0.0 {
            2.0 * tp / denominator
        } else {
            f64::NAN
        });
        per_class.accuracy.push(ratio(tp, column(k)));
    }
    let weighted_total: f64 = (0..c).map(|k| task.weights[k] * column(k)).sum();
    let weighted_trace: f64 = (0..c)
        .map(|k| task.weights[k] * confusion[k][k] as f64)
        .sum();
    TaskMetrics {
        classes: task.classes.to_vec(),
        auroc: nanmean(&per_class.auroc),
        auprc: nanmean(&per_class.auprc),
        f_measure: nanmean(&per_class.f_measure),
        accuracy: if total > 0.0 { trace / total } else { f64::NAN },
        weighted_accuracy: if weighted_total > 0.0 {
            weighted_trace / weighted_total
        } else {
            f64::NAN
        },
        cost,
        per_class,
        confusion,
    }
}

// ---------------------------------------------------------------------------------------
// Scoring.

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
fn not_found(output: &Path, root: &str, label_file: &str) -> ScoreError {
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

#[cfg(test)]
mod tests {
    use super::*;

    const CLASS_LINE: &str = "Present,Unknown,Absent,Abnormal,Normal";

    /// A labels folder and an outputs folder. `labels`: (patient, murmur, outcome);
    /// `outputs`: (patient, file text).
    fn folders(labels: &[(&str, &str, &str)], outputs: &[(&str, String)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("labels")).unwrap();
        std::fs::create_dir(dir.path().join("outputs")).unwrap();
        for (p, m, o) in labels {
            let text = format!(
                "{p} 1 4000\nAV {p}_AV.hea {p}_AV.wav\n#Age: Child\n#Murmur: {m}\n#Murmur locations: nan\n#Outcome: {o}\n"
            );
            std::fs::write(dir.path().join(format!("labels/{p}.txt")), text).unwrap();
        }
        for (p, text) in outputs {
            std::fs::write(dir.path().join(format!("outputs/{p}.csv")), text).unwrap();
        }
        dir
    }

    fn run(dir: &tempfile::TempDir, mode: Mode) -> Result<Report, ScoreError> {
        score_folders(
            &dir.path().join("labels"),
            &dir.path().join("outputs"),
            mode,
        )
    }

    fn standard(p: &str, binaries: &str, scores: &str) -> String {
        format!("#{p}\n{CLASS_LINE}\n{binaries}\n{scores}\n")
    }

    /// Test vector T2 (`docs/scoring.md`): 12 patients exercising the edge cases, with the
    /// figures the official evaluate_model.py gives.
    fn t2() -> tempfile::TempDir {
        let labels = [
            ("1", "Present", "Abnormal"),
            ("2", "Present", "Normal"),
            ("3", "Unknown", "Abnormal"),
            ("4", "Unknown", "Normal"),
            ("5", "Absent", "Normal"),
            ("6", "Absent", "Abnormal"),
            ("7", "Absent", "Normal"),
            ("8", "Absent", "Abnormal"),
            ("9", "Present", "Abnormal"),
            ("10", "Absent", "Normal"),
            ("11", "Absent", "Normal"),
            ("12", "Maybe", "Normal"),
        ];
        let outputs = [
            ("1", standard("1", "1,0,0,1,0", "0.7,0.2,0.1,0.8,0.2")),
            ("2", standard("2", "0,0,1,0,1", "0.3,0.1,0.6,0.4,0.6")),
            ("3", standard("3", "0,1,0,1,0", "0.2,0.5,0.3,0.6,0.4")),
            ("4", standard("4", "1,0,0,0,1", "0.5,0.3,0.2,0.3,0.7")),
            ("5", standard("5", "0,0,1,0,1", "0.1,0.1,0.8,0.2,0.8")),
            ("6", standard("6", "0,0,1,0,1", "0.2,0.2,0.6,0.45,0.55")),
            ("7", standard("7", "0,0,1,0,1", "0.05,0.15,0.8,0.1,0.9")),
            ("8", standard("8", "0,1,0,1,0", "0.3,0.4,0.3,0.7,0.3")),
            (
                "9",
                "#9\nNormal, abnormal ,ABSENT,unknown,present\n0,1,0,0,TRUE\n0.3,0.7,nan,0.1,0.9\n"
                    .to_string(),
            ),
            ("10", standard("10", "0,1,1,0,0", "0.1,0.45,0.45,0.4,0.6")),
            ("11", "#11\n\n\n\n".to_string()),
            ("12", standard("12", "0,0,1,0,1", "0.1,0.1,0.8,0.2,0.8")),
        ];
        folders(&labels, &outputs)
    }

    fn close(got: f64, want: f64) {
        assert!((got - want).abs() < 1e-10, "got {got}, want {want}");
    }

    fn close_all(got: &[f64], want: &[f64]) {
        assert_eq!(got.len(), want.len());
        for (&g, &w) in got.iter().zip(want) {
            close(g, w);
        }
    }

    #[test]
    fn t2_matches_the_official_scorer() {
        let dir = t2();
        for mode in [Mode::Strict, Mode::OfficialCompat] {
            let r = run(&dir, mode).unwrap();
            let m = &r.murmur;
            close(m.auroc, 0.7832175926);
            close(m.auprc, 0.7069444444);
            close(m.f_measure, 0.4966329966);
            close(m.accuracy, 0.5);
            close(m.weighted_accuracy, 0.5);
            close(m.cost, 8489.9382716049);
            close_all(&m.per_class.auroc, &[0.796875, 0.9, 0.6527777778]);
            close_all(&m.per_class.auprc, &[0.75, 0.75, 0.6208333333]);
            close_all(&m.per_class.f_measure, &[0.4444444444, 0.5, 0.5454545455]);
            close_all(&m.per_class.accuracy, &[0.5, 0.5, 0.5]);
            let o = &r.outcome;
            close(o.auroc, 0.9285714286);
            close(o.auprc, 0.9702380952);
            close(o.f_measure, 0.7482517483);
            close(o.accuracy, 0.75);
            close(o.weighted_accuracy, 0.78125);
            close(o.cost, 8010.0);
            close_all(&o.per_class.auroc, &[1.0, 0.8571428571]);
            close_all(&o.per_class.auprc, &[1.0, 0.9404761905]);
            close_all(&o.per_class.f_measure, &[0.7272727273, 0.7692307692]);
            close_all(&o.per_class.accuracy, &[0.8, 0.7142857143]);
            assert_eq!((r.score, r.outcome_cost), (m.weighted_accuracy, o.cost));
            assert!(r.errors.is_empty(), "{:?}", r.errors);
            // What the official code reads silently is named.
            let w = r.warnings.join("\n");
            assert!(
                w.contains("12.txt: murmur label \"Maybe\" is none of"),
                "{w}"
            );
            assert!(
                w.contains("9.csv: binary label \"TRUE\" for Present"),
                "{w}"
            );
            assert!(w.contains("9.csv: score \"nan\" for Absent"), "{w}");
            assert!(w.contains("11.csv: no murmur class"), "{w}");
            let p11 = r.items.iter().find(|i| i.patient == "11").unwrap();
            assert_eq!(
                (p11.murmur_output, p11.outcome_output),
                (Murmur::Present, Outcome::Abnormal)
            );
            assert!(!p11.defaulted);
        }
    }

    #[test]
    fn t2_text_report_has_the_official_layout() {
        let r = run(&t2(), Mode::Strict).unwrap();
        let text = r.text();
        let official = "#Murmur scores\nAUROC,AUPRC,F-measure,Accuracy,Weighted Accuracy,Cost\n\
            0.783,0.707,0.497,0.500,0.500,8489.938\n\n\
            #Outcome scores\nAUROC,AUPRC,F-measure,Accuracy,Weighted Accuracy,Cost\n\
            0.929,0.970,0.748,0.750,0.781,8010.000\n\n\
            #Murmur scores (per class)\nClasses,Present,Unknown,Absent\n\
            AUROC,0.797,0.900,0.653\nAUPRC,0.750,0.750,0.621\nF-measure,0.444,0.500,0.545\n\
            Accuracy,0.500,0.500,0.500\n\n\
            #Outcome scores (per class)\nClasses,Abnormal,Normal\nAUROC,1.000,0.857\n\
            AUPRC,1.000,0.940\nF-measure,0.727,0.769\nAccuracy,0.800,0.714\n\n";
        assert!(text.starts_with(official), "{text}");
    }

    /// Test vector T1 (`docs/scoring.md`): the official test set's composition, every output
    /// Present/Abnormal with constant scores; the published trivial-baseline rows.
    #[test]
    fn t1_constant_outputs_on_the_test_set_composition() {
        let mut labels = Vec::new();
        let murmurs = [("Present", 99), ("Unknown", 35), ("Absent", 343)];
        let mut murmur_of = murmurs.iter().flat_map(|&(m, n)| std::iter::repeat_n(m, n));
        let ids: Vec<String> = (0..477).map(|i| format!("{}", 10000 + i)).collect();
        for (k, id) in ids.iter().enumerate() {
            let outcome = if k < 242 { "Abnormal" } else { "Normal" };
            labels.push((id.as_str(), murmur_of.next().unwrap(), outcome));
        }
        let outputs: Vec<(&str, String)> = ids
            .iter()
            .map(|id| (id.as_str(), standard(id, "1,0,0,1,0", "1,0,0,1,0")))
            .collect();
        let dir = folders(&labels, &outputs);
        let r = run(&dir, Mode::Strict).unwrap();
        let text = r.text();
        assert!(
            text.starts_with(
                "#Murmur scores\nAUROC,AUPRC,F-measure,Accuracy,Weighted Accuracy,Cost\n\
             0.500,0.333,0.115,0.208,0.525,15083.375\n\n\
             #Outcome scores\nAUROC,AUPRC,F-measure,Accuracy,Weighted Accuracy,Cost\n\
             0.500,0.500,0.337,0.507,0.837,15083.375\n"
            ),
            "{text}"
        );
        assert!(text.contains("AUPRC,0.208,0.073,0.719\n"), "{text}");
        assert!(text.contains("Accuracy,1.000,0.000,0.000\n"), "{text}");
        assert_eq!(r.score, 495.0 / 943.0);
        assert!(r.warnings.iter().any(|w| w.contains("degenerate")));
    }

    #[test]
    fn official_failures_are_reproduced_as_clear_errors() {
        let labels = [
            ("1", "Present", "Abnormal"),
            ("2", "Absent", "Normal"),
            ("5", "Absent", "Normal"),
        ];
        let ok = |p: &str| {
            (
                p.to_string(),
                standard(p, "1,0,0,1,0", "0.9,0.05,0.05,0.8,0.2"),
            )
        };
        let cases: [(&str, String, &str); 4] = [
            (
                "5",
                String::new(),
                "Output file 5.csv not found for label file 5.txt.",
            ),
            ("5", "#5\nPresent\n".into(), "2 line(s)"),
            (
                "5",
                format!("#5\n{CLASS_LINE}\n1,0\n0.1,0.2,0.3,0.4,0.5\n"),
                "IndexError",
            ),
            (
                "5",
                b"#5\nPresent\n1\n0.\xff\n"
                    .iter()
                    .map(|&b| b as char)
                    .collect(),
                "UnicodeDecodeError",
            ),
        ];
        for (p, text, official) in cases {
            let mut outputs: Vec<(String, String)> = vec![ok("1"), ok("2")];
            let dir = folders(&labels, &[]);
            if !text.is_empty() {
                outputs.push((p.into(), text));
            }
            for (p, t) in &outputs {
                std::fs::write(dir.path().join(format!("outputs/{p}.csv")), t).unwrap();
            }
            if official == "UnicodeDecodeError" {
                std::fs::write(
                    dir.path().join("outputs/5.csv"),
                    b"#5\nPresent\n1\n0.\xff\n",
                )
                .unwrap();
            }
            let e = run(&dir, Mode::OfficialCompat).unwrap_err().to_string();
            assert!(e.contains(official) && e.contains("5.csv"), "{e}");
            // Strict mode scores the patient as the empty output and says why.
            let r = run(&dir, Mode::Strict).unwrap();
            let item = r.items.iter().find(|i| i.patient == "5").unwrap();
            assert!(item.defaulted);
            assert_eq!(
                (item.murmur_output, item.outcome_output),
                (Murmur::Present, Outcome::Abnormal)
            );
            assert_eq!(r.errors.len(), 1, "{:?}", r.errors);
            assert_eq!(r.errors[0].file, "5.csv");
        }
    }

    #[test]
    fn ragged_lines_are_errors_only_in_strict_mode() {
        let labels = [("1", "Absent", "Normal"), ("2", "Present", "Abnormal")];
        // An extra value on line 3: the official code reads the first five silently.
        let outputs = [
            ("1", standard("1", "0,0,1,0,1,1", "0.1,0.1,0.8,0.3,0.7")),
            ("2", standard("2", "1,0,0,1,0", "0.8,0.1,0.1,0.7,0.3")),
        ];
        let dir = folders(&labels, &outputs);
        let strict = run(&dir, Mode::Strict).unwrap();
        assert!(
            strict.errors[0]
                .reason
                .contains("line 2 names 5 class(es) but line 3 has 6"),
            "{:?}",
            strict.errors
        );
        assert!(strict.items[0].defaulted);
        let compat = run(&dir, Mode::OfficialCompat).unwrap();
        assert!(compat.errors.is_empty());
        assert_eq!(compat.score, 1.0);

        // The website's own example misses a comma: "0         1" becomes one field, the
        // values shift, and Normal (column 5) has none: the official code crashes.
        std::fs::write(
            dir.path().join("outputs/1.csv"),
            standard("1", "0,0         1,0,1", "0.1,0.1,0.8,0.3,0.7"),
        )
        .unwrap();
        let e = run(&dir, Mode::OfficialCompat).unwrap_err().to_string();
        assert!(
            e.contains("\"Normal\" is column 5 of line 2 but line 3 has only 4"),
            "{e}"
        );
        let strict = run(&dir, Mode::Strict).unwrap();
        assert!(
            strict.errors[0].reason.contains("IndexError"),
            "{:?}",
            strict.errors
        );
    }

    /// A class line that ends with a comma (a CSV writer's artefact) has an empty last
    /// class name: values one fewer than the names still match every class, as the
    /// official code reads them. Strict mode warns and scores it; other mismatches stay
    /// errors.
    #[test]
    fn a_trailing_comma_on_the_class_line_is_not_a_mismatch() {
        let labels = [("1", "Absent", "Normal"), ("2", "Present", "Abnormal")];
        let trailing = |p: &str, b: &str, s: &str| format!("#{p}\n{CLASS_LINE},\n{b}\n{s}\n");
        let outputs = [
            ("1", trailing("1", "0,0,1,0,1", "0.1,0.1,0.8,0.3,0.7")),
            // Line 4 ends with a comma too: six values for six names.
            ("2", trailing("2", "1,0,0,1,0", "0.8,0.1,0.1,0.7,0.3,")),
        ];
        let dir = folders(&labels, &outputs);
        let strict = run(&dir, Mode::Strict).unwrap();
        assert!(strict.errors.is_empty(), "{:?}", strict.errors);
        assert_eq!(strict.score, 1.0);
        assert!(strict.items.iter().all(|i| !i.defaulted));
        assert_eq!(strict.items[0].murmur_scores, [0.1, 0.1, 0.8]);
        let named: Vec<&String> = strict
            .warnings
            .iter()
            .filter(|w| w.contains("ends with a comma"))
            .collect();
        assert_eq!(named.len(), 2, "{:?}", strict.warnings);
        assert!(named[0].starts_with("1.csv: ") && named[0].contains("column 6"));
        assert!(named[0].contains("line 3 or 4"), "{}", named[0]);
        assert!(named[1].starts_with("2.csv: ") && named[1].contains("on line 3;"));
        let compat = run(&dir, Mode::OfficialCompat).unwrap();
        assert_eq!(compat.score, 1.0);

        // Any other mismatch stays an error: two values fewer, or an empty name that is
        // not the last.
        for (binaries, class_line) in [
            ("0,0,1,0", format!("{CLASS_LINE},")),
            (
                "0,0,1,0,1",
                "Present,,Unknown,Absent,Abnormal,Normal".to_string(),
            ),
        ] {
            let text = format!("#1\n{class_line}\n{binaries}\n0.1,0.1,0.8,0.3,0.7\n");
            std::fs::write(dir.path().join("outputs/1.csv"), text).unwrap();
            let strict = run(&dir, Mode::Strict).unwrap();
            assert!(
                strict.errors[0].reason.contains("but line 3 has"),
                "{class_line}: {:?}",
                strict.errors
            );
            assert!(strict.items[0].defaulted);
        }
    }

    /// Findings of a differential test against the official code (8,710 random cases
    /// bit-identical; these are the ones it caught).
    #[test]
    fn compat_reports_the_failure_the_official_scorer_reports_first() {
        fn ok(p: &str) -> (&str, String) {
            (p, standard(p, "0,0,1,0,1", "0.1,0.1,0.8,0.2,0.8"))
        }
        let labels = [("1", "Absent", "Normal"), ("2", "Absent", "Normal")];
        let e = |dir: &tempfile::TempDir| run(dir, Mode::OfficialCompat).unwrap_err().to_string();
        // A missing outcome label and a missing output: the pairing comes first.
        let dir = folders(&labels, &[ok("1")]);
        std::fs::write(dir.path().join("labels/1.txt"), "#Murmur: Absent\n").unwrap();
        assert!(
            e(&dir).contains("Output file 2.csv not found"),
            "{}",
            e(&dir)
        );
        // Missing outcome label in 1, missing murmur label in 2: murmur labels first.
        let dir = folders(&labels, &[ok("1"), ok("2")]);
        std::fs::write(dir.path().join("labels/1.txt"), "#Murmur: Absent\n").unwrap();
        std::fs::write(dir.path().join("labels/2.txt"), "#Outcome: Normal\n").unwrap();
        assert!(
            e(&dir).contains("2.txt") && e(&dir).contains("#Murmur:"),
            "{}",
            e(&dir)
        );
        // Missing outcome label, two-line output: murmur outputs are read first.
        let dir = folders(&labels, &[("1", "#1\nPresent\n".into()), ok("2")]);
        std::fs::write(dir.path().join("labels/1.txt"), "#Murmur: Absent\n").unwrap();
        assert!(e(&dir).contains("2 line(s)"), "{}", e(&dir));
        // An outcome IndexError in 1 and a one-line 2: every murmur read comes first.
        let dir = folders(
            &labels,
            &[
                ("1", format!("#1\n{CLASS_LINE}\n0,0,1\n0.1,0.1,0.8\n")),
                ("2", "#2".into()),
            ],
        );
        assert!(
            e(&dir).contains("2.csv") && e(&dir).contains("1 line(s)"),
            "{}",
            e(&dir)
        );
    }

    #[test]
    fn a_fourth_line_cut_at_the_read_limit_is_not_read() {
        let labels = [("1", "Absent", "Normal"), ("2", "Present", "Abnormal")];
        let mut long = standard("2", "1,0,0,1,0", "0.1,0.1,0.8,0.9,").into_bytes();
        long.pop();
        long.extend(std::iter::repeat_n(b' ', 5 << 20));
        long.extend_from_slice(b"0.1\n");
        let dir = folders(
            &labels,
            &[("1", standard("1", "0,0,1,0,1", "0.1,0.1,0.8,0.05,0.9"))],
        );
        std::fs::write(dir.path().join("outputs/2.csv"), &long).unwrap();
        let r = run(&dir, Mode::Strict).unwrap();
        assert!(
            r.errors[0].reason.contains("do not end within 4 MiB"),
            "{:?}",
            r.errors
        );
        assert!(run(&dir, Mode::OfficialCompat).is_err());
    }

    #[test]
    fn stray_names_are_ignored_and_infinite_scores_keep_their_sign() {
        use std::os::unix::ffi::OsStrExt;
        let labels = [("1", "Absent", "Normal"), ("2", "Present", "Abnormal")];
        let dir = folders(
            &labels,
            &[
                ("1", standard("1", "0,0,1,0,1", "-inf,0.1,inf,0.2,0.8")),
                ("2", standard("2", "1,0,0,1,0", "0.8,0.1,0.1,0.7,0.3")),
            ],
        );
        let odd = std::ffi::OsStr::from_bytes(b"rec\xff.wav");
        std::fs::write(dir.path().join("labels").join(odd), b"").unwrap();
        let r = run(&dir, Mode::OfficialCompat).unwrap();
        assert_eq!(r.score, 1.0);
        let json = serde_json::to_value(&r.items[0]).unwrap();
        assert_eq!(
            json["murmur_scores"],
            serde_json::json!(["-inf", 0.1, "inf"])
        );
        std::fs::write(
            dir.path()
                .join("labels")
                .join(std::ffi::OsStr::from_bytes(b"3\xff.TXT")),
            b"",
        )
        .unwrap();
        assert!(
            run(&dir, Mode::Strict)
                .unwrap_err()
                .to_string()
                .contains("not UTF-8")
        );
    }

    #[test]
    fn wrong_patient_id_changes_nothing_but_is_named() {
        let labels = [("1", "Absent", "Normal"), ("2", "Present", "Abnormal")];
        let a = folders(
            &labels,
            &[
                ("1", standard("1", "0,0,1,0,1", "0.1,0.1,0.8,0.3,0.7")),
                ("2", standard("2", "1,0,0,1,0", "0.8,0.1,0.1,0.7,0.3")),
            ],
        );
        let b = folders(
            &labels,
            &[
                ("1", standard("99", "0,0,1,0,1", "0.1,0.1,0.8,0.3,0.7")),
                ("2", standard("2", "1,0,0,1,0", "0.8,0.1,0.1,0.7,0.3")),
            ],
        );
        let (ra, rb) = (
            run(&a, Mode::Strict).unwrap(),
            run(&b, Mode::Strict).unwrap(),
        );
        // Debug text, so that NaN per-class values compare equal.
        assert_eq!(format!("{:?}", ra.murmur), format!("{:?}", rb.murmur));
        assert_eq!(format!("{:?}", ra.outcome), format!("{:?}", rb.outcome));
        assert!(
            rb.warnings
                .iter()
                .any(|w| w.contains("1.csv: line 1 names patient \"99\""))
        );
        assert_eq!(ra.score, 1.0);
    }

    #[test]
    fn missing_labels_and_empty_folders_are_reference_errors() {
        let dir = folders(&[("1", "Present", "Abnormal")], &[]);
        std::fs::write(
            dir.path().join("labels/2.txt"),
            "2 1 4000\nAV a b\n#Murmur: Absent\n",
        )
        .unwrap();
        let e = run(&dir, Mode::Strict).unwrap_err().to_string();
        assert!(
            e.contains("2.txt") && e.contains("no `#Outcome: <class>` line"),
            "{e}"
        );
        let empty = tempfile::tempdir().unwrap();
        let e = score_folders(empty.path(), empty.path(), Mode::Strict)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no patient .txt files"), "{e}");
    }

    #[test]
    fn labels_are_read_as_the_helper_code_reads_them() {
        // CRLF, the last matching line wins, `#Murmur locations:` is not `#Murmur:`, and
        // a line without ": " is skipped.
        let text = "1 1 4000\r\n#Murmur: Absent\r\n#Murmur locations: AV\r\n#Murmur:Present\r\n#Murmur:  unknown \r\n#Outcome: normal\r\n";
        let (m, o, w) = parse_labels(text, "1.txt").unwrap();
        assert_eq!((m, o), (Murmur::Unknown, Outcome::Normal));
        assert!(w.is_empty());
    }

    #[test]
    fn sanitising_follows_the_helper_code() {
        for (raw, one) in [
            ("1", true),
            ("1.0", true),
            (" \"1\" ", true),
            ("'T'", true),
            ("t", true),
            ("TRUE", false),
            ("yes", false),
            ("0.999", false),
            ("", false),
            ("inf", false),
        ] {
            assert_eq!(sanitize_binary(raw).0, one, "{raw:?}");
        }
        assert!(!sanitize_binary("0").1 && !sanitize_binary("False").1 && sanitize_binary("yes").1);
        assert_eq!(sanitize_scalar("-inf"), (f64::NEG_INFINITY, false));
        assert_eq!(sanitize_scalar("1_0"), (10.0, false));
        assert_eq!(sanitize_scalar("NaN"), (0.0, true));
        assert_eq!(sanitize_scalar("0.5\n"), (0.5, false));
    }

    #[test]
    fn auc_walk_handles_ties_and_infinities() {
        // Constant scores: AUROC 0.5, AUPRC = prevalence.
        let (roc, prc) = auc(&[true, false, false, false], &[0.3; 4]);
        assert_eq!((roc, prc), (0.5, 0.25));
        // Perfect separation with an infinite score (largest + 1 stays inf).
        let (roc, prc) = auc(&[true, false], &[f64::INFINITY, 0.0]);
        assert_eq!((roc, prc), (1.0, 1.0));
        // No positives: undefined.
        assert!(auc(&[false, false], &[0.1, 0.2]).0.is_nan());
        assert!(nanmean(&[f64::NAN, f64::NAN]).is_nan());
        assert_eq!(nanmean(&[f64::NAN, 1.0, 0.5]), 0.75);
    }

    #[test]
    fn cost_sanity_figures() {
        // Always refer: 10 + 10000 + 10000·p; never refer: 35 + 50000·p (docs/scoring.md).
        let abnormal = [true, false, false, false];
        close(mean_cost(&[true; 4], &abnormal), 10.0 + 10000.0 + 2500.0);
        close(mean_cost(&[false; 4], &abnormal), 35.0 + 12500.0);
    }

    #[test]
    fn output_lines_split_like_python_text_mode() {
        let out = parse_output(b"#1\rPresent,Normal\r\n1,1\n0.5,0.5").unwrap();
        assert_eq!(out.classes, ["Present", "Normal"]);
        assert_eq!(out.scores, ["0.5", "0.5"]);
        assert_eq!(
            parse_output(b"#1\n\n\n").unwrap_err(),
            OutputProblem::TooFewLines(3)
        );
        assert_eq!(
            parse_output(b"").unwrap_err(),
            OutputProblem::TooFewLines(0)
        );
        let written = output_csv(
            "7",
            Murmur::Unknown,
            Outcome::Normal,
            &[0.1, 0.6, 0.3, 0.25, 0.75],
        );
        assert_eq!(
            written,
            "#7\nPresent,Unknown,Absent,Abnormal,Normal\n0,1,0,0,1\n0.1,0.6,0.3,0.25,0.75\n"
        );
    }
}
