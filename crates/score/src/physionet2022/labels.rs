//! Reference: the labels of the patient files (`#Murmur:` and `#Outcome:` lines), found
//! and read as the official helper code finds and reads them.

use std::path::{Path, PathBuf};

use formats::circor::{Murmur, Outcome};

use super::{MURMUR, OUTCOME, Task};
use crate::ScoreError;
use crate::python;

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
pub(super) fn task_label(
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
pub(super) fn label_files(dir: &Path) -> Result<Vec<(String, PathBuf)>, ScoreError> {
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

pub(super) fn label_text(path: &Path) -> Result<String, ScoreError> {
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
