//! Outputs: one CSV per patient, read as the official helper reads it (the first four
//! lines, sanitised values), with what strict mode rejects and official-compat mode
//! reports first.

use std::fmt::Display;
use std::io::Read;
use std::path::Path;

use super::labels::{label_files, label_text, task_label};
use super::report::not_found;
use super::{MAX_OUTPUT_BYTES, MURMUR, MURMUR_CLASSES, OUTCOME, OUTCOME_CLASSES, Task};
use crate::ScoreError;
use crate::python;

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
pub(super) fn sanitize_binary(raw: &str) -> (bool, bool) {
    let x = unquote(raw);
    let number = python::float(&x).filter(|v| v.is_finite());
    let one = number == Some(1.0) || matches!(x.as_str(), "True" | "true" | "T" | "t");
    let zero = number == Some(0.0) || matches!(x.as_str(), "False" | "false" | "F" | "f");
    (one, !one && !zero)
}

/// `sanitize_scalar_value`: a number (±inf included), else 0.0. The second value says the
/// field was not a number or was NaN.
pub(super) fn sanitize_scalar(raw: &str) -> (f64, bool) {
    match python::float(&unquote(raw)) {
        Some(v) if !v.is_nan() => (v, false),
        _ => (0.0, true),
    }
}

/// One task's values from an output file: binary labels and scores per class, in the
/// task's order.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct TaskValues {
    pub(super) binary: Vec<bool>,
    pub(super) scores: Vec<f64>,
}

impl TaskValues {
    /// The "empty" output: nothing positive, every score 0.
    pub(super) fn empty(task: Task) -> TaskValues {
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
    pub(super) fn notes(&self, patient: &str) -> Vec<String> {
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
pub(super) fn ragged(out: &OutputFile) -> Result<Option<String>, String> {
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
pub(super) fn read_output(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
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
pub(super) fn read_tasks(
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
pub(super) fn official_first_failure(labels: &Path, outputs: &Path) -> Result<(), ScoreError> {
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
