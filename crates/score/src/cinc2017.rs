//! PhysioNet/CinC Challenge 2017 (AF classification from a short single-lead ECG): the
//! official scoring of `answers.txt` against `REFERENCE.csv`, as `docs/scoring.md`
//! (*cinc2017*) defines it.
//!
//! Per class k of N (normal), A (AF), O (other rhythm), ~ (noisy):
//! F1_k = 2·AA[k][k] / (Σ reference k + Σ answered k). The ranking number of the official
//! phase is (F1n + F1a + F1o)/3; the 4-class mean of the sample entry and unofficial
//! phase is reported too.
//!
//! Decisions (docs/architecture.md): a missing answer counts as `~`; the first answer for a
//! record counts and later ones are errors; labels outside {N, A, O, ~} are errors that
//! name the line (the official scorer stops on them, which official-compat mode
//! reproduces as a clear failure). A class that neither the reference nor the answers
//! hold has no F1 (NaN): strict mode leaves it out of the means, official-compat mode lets
//! it make the mean NaN as MATLAB does.

use std::collections::HashMap;
use std::path::Path;

use serde::Serialize;

use crate::{Mode, PredictionError, ScoreError};

/// A rhythm class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Label {
    /// `N`: normal sinus rhythm.
    N,
    /// `A`: atrial fibrillation.
    A,
    /// `O`: another rhythm.
    O,
    /// `~`: too noisy to classify.
    #[serde(rename = "~")]
    Noisy,
}

impl Label {
    pub const ALL: [Label; 4] = [Label::N, Label::A, Label::O, Label::Noisy];

    pub fn parse(s: &str) -> Option<Label> {
        match s {
            "N" => Some(Label::N),
            "A" => Some(Label::A),
            "O" => Some(Label::O),
            "~" => Some(Label::Noisy),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Label::N => "N",
            Label::A => "A",
            Label::O => "O",
            Label::Noisy => "~",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Splits `record,label`, trimming both (and a CR).
fn split_line(line: &str) -> Option<(&str, &str)> {
    let (r, l) = line.split_once(',')?;
    Some((r.trim(), l.trim()))
}

/// Reads `REFERENCE.csv`: one `record,label` line per record.
pub fn parse_reference(text: &str, file: &str) -> Result<Vec<(String, Label)>, ScoreError> {
    let mut out = Vec::new();
    let mut seen = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |why: String| ScoreError::reference(file, format!("line {}: {why}", i + 1));
        let (record, label) =
            split_line(line).ok_or_else(|| bad(format!("{line:?} is not `record,label`")))?;
        let label = Label::parse(label)
            .ok_or_else(|| bad(format!("label {label:?} is not one of N, A, O, ~")))?;
        if record.is_empty() {
            return Err(bad("the record name is empty".into()));
        }
        if let Some(first) = seen.insert(record.to_string(), i + 1) {
            return Err(bad(format!(
                "record {record} is listed again (first on line {first})"
            )));
        }
        out.push((record.to_string(), label));
    }
    if out.is_empty() {
        return Err(ScoreError::reference(
            file,
            "the reference lists no records",
        ));
    }
    Ok(out)
}

/// One reference record and the answer scored for it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Item {
    pub record: String,
    pub reference: Label,
    pub answer: Label,
    /// No valid answer was given: scored as `~`.
    pub defaulted: bool,
}

/// F1 per class (NaN when the class is in neither the reference nor the answers).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct F1 {
    #[serde(rename = "N")]
    pub n: f64,
    #[serde(rename = "A")]
    pub a: f64,
    #[serde(rename = "O")]
    pub o: f64,
    #[serde(rename = "~")]
    pub noisy: f64,
}

/// The result of scoring an answers file.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub challenge: &'static str,
    pub mode: Mode,
    /// The ranking number: (F1n + F1a + F1o)/3.
    pub score: f64,
    /// (F1n + F1a + F1o + F1~)/4, the sample entry's and unofficial phase's number.
    pub score_4class: f64,
    pub f1: F1,
    /// Confusion matrix: rows = reference, columns = answer, both in the order N, A, O, ~.
    pub confusion: [[u64; 4]; 4],
    pub items: Vec<Item>,
    pub errors: Vec<PredictionError>,
    pub warnings: Vec<String>,
}

/// Scores the text of an answers file against the reference.
pub fn score(
    reference: &[(String, Label)],
    answers: &str,
    answers_file: &str,
    mode: Mode,
) -> Result<Report, ScoreError> {
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let known: HashMap<&str, Label> = reference.iter().map(|(r, l)| (r.as_str(), *l)).collect();
    let mut given: HashMap<String, (Label, usize)> = HashMap::new();
    for (i, line) in answers.lines().enumerate() {
        let line_no = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let Some((record, label)) = split_line(line) else {
            let why = format!("{line:?} is not `record,label`");
            if mode == Mode::OfficialCompat {
                return Err(ScoreError::official(
                    answers_file,
                    format!("line {line_no}: {why}"),
                ));
            }
            errors.push(PredictionError::at_line(
                answers_file,
                line_no,
                format!("{why}; ignored"),
            ));
            continue;
        };
        let Some(label) = Label::parse(label) else {
            let why = format!("label {label:?} for {record} is not one of N, A, O, ~");
            if mode == Mode::OfficialCompat {
                return Err(ScoreError::official(
                    answers_file,
                    format!("line {line_no}: {why}"),
                ));
            }
            errors.push(PredictionError::at_line(
                answers_file,
                line_no,
                format!("{why}; ignored"),
            ));
            continue;
        };
        if !known.contains_key(record) {
            warnings.push(format!(
                "{answers_file}: line {line_no}: {record} is not in the reference; ignored"
            ));
            continue;
        }
        match given.get(record) {
            Some(&(_, first)) => errors.push(PredictionError::at_line(
                answers_file,
                line_no,
                format!("a second answer for {record}; the first, on line {first}, counts"),
            )),
            None => {
                given.insert(record.to_string(), (label, line_no));
            }
        }
    }

    let mut confusion = [[0u64; 4]; 4];
    let mut items = Vec::with_capacity(reference.len());
    for (record, truth) in reference {
        let (answer, defaulted) = match given.get(record) {
            Some(&(l, _)) => (l, false),
            None => {
                errors.push(PredictionError::new(
                    answers_file,
                    format!("no answer for {record}: scored as ~"),
                ));
                (Label::Noisy, true)
            }
        };
        confusion[truth.index()][answer.index()] += 1;
        items.push(Item {
            record: record.clone(),
            reference: *truth,
            answer,
            defaulted,
        });
    }
    let f1_of = |k: usize| {
        let row: u64 = confusion[k].iter().sum();
        let col: u64 = confusion.iter().map(|r| r[k]).sum();
        2.0 * confusion[k][k] as f64 / (row + col) as f64
    };
    let f1 = F1 {
        n: f1_of(0),
        a: f1_of(1),
        o: f1_of(2),
        noisy: f1_of(3),
    };
    let mean = |values: &[f64]| -> f64 {
        match mode {
            Mode::OfficialCompat => values.iter().sum::<f64>() / values.len() as f64,
            Mode::Strict => {
                let defined: Vec<f64> = values.iter().copied().filter(|v| !v.is_nan()).collect();
                defined.iter().sum::<f64>() / defined.len() as f64
            }
        }
    };
    for (label, v) in Label::ALL.iter().zip([f1.n, f1.a, f1.o, f1.noisy]) {
        if v.is_nan() {
            warnings.push(format!(
                "class {} is in neither the reference nor the answers: its F1 is undefined{}",
                label.as_str(),
                if mode == Mode::Strict {
                    " and left out of the means"
                } else {
                    ""
                }
            ));
        }
    }
    Ok(Report {
        challenge: "cinc2017",
        mode,
        score: mean(&[f1.n, f1.a, f1.o]),
        score_4class: mean(&[f1.n, f1.a, f1.o, f1.noisy]),
        f1,
        confusion,
        items,
        errors,
        warnings,
    })
}

/// Reads both files and scores.
pub fn score_files(reference: &Path, answers: &Path, mode: Mode) -> Result<Report, ScoreError> {
    let ref_name = reference.display().to_string();
    let ref_text = std::fs::read(reference).map_err(|e| ScoreError::io(&ref_name, e))?;
    let ref_text = String::from_utf8(ref_text)
        .map_err(|_| ScoreError::reference(&ref_name, "not UTF-8 text"))?;
    let reference = parse_reference(&ref_text, &ref_name)?;
    let ans_name = answers.display().to_string();
    let text = match std::fs::read(answers) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        // No answers file at all: every record is scored as `~`, and the report says why.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && mode == Mode::Strict => String::new(),
        Err(e) => return Err(ScoreError::io(&ans_name, e)),
    };
    let mut report = score(&reference, &text, &ans_name, mode)?;
    if !answers.exists() {
        report.errors.insert(
            0,
            PredictionError::new(&ans_name, "the answers file is missing"),
        );
    }
    Ok(report)
}

impl Report {
    /// The official figures (as the sample's `score2017Challenge` prints them), then the
    /// confusion matrix and what could not be used.
    pub fn text(&self) -> String {
        let mut s = String::new();
        s.push_str(&format!(
            "F1 measure for Normal rhythm:  {:.4}\n",
            self.f1.n
        ));
        s.push_str(&format!("F1 measure for AF rhythm:  {:.4}\n", self.f1.a));
        s.push_str(&format!("F1 measure for Other rhythm:  {:.4}\n", self.f1.o));
        s.push_str(&format!(
            "F1 measure for Noisy recordings:  {:.4}\n",
            self.f1.noisy
        ));
        s.push_str(&format!("Final F1 measure (N, A, O):  {:.4}\n", self.score));
        s.push_str(&format!(
            "Mean F1 over the 4 classes:  {:.4}\n",
            self.score_4class
        ));
        s.push_str("\nreference \\ answer,N,A,O,~\n");
        for (label, row) in Label::ALL.iter().zip(&self.confusion) {
            s.push_str(&format!(
                "{},{},{},{},{}\n",
                label.as_str(),
                row[0],
                row[1],
                row[2],
                row[3]
            ));
        }
        crate::cpsc2021::push_problems(&mut s, &self.errors, &self.warnings);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(counts: &[(Label, usize)]) -> Vec<(String, Label)> {
        let mut v = Vec::new();
        for &(l, n) in counts {
            for _ in 0..n {
                v.push((format!("A{:05}", v.len() + 1), l));
            }
        }
        v
    }

    /// The 2017 sample entry on the 300 validation records (sample README): N 0.7500,
    /// A 0.5698, O 0, ~ 0, final 0.3299 with the 4-class mean, 0.4399 with the official
    /// 3-class mean. The answers below are one confusion matrix with exactly those F1s
    /// (the sample answers only N or A).
    #[test]
    fn sample_entry_figures() {
        let refs = reference(&[
            (Label::N, 150),
            (Label::A, 50),
            (Label::O, 70),
            (Label::Noisy, 30),
        ]);
        // (reference, answered N, answered A)
        let plan = [
            (Label::N, 123, 27),
            (Label::A, 1, 49),
            (Label::O, 24, 46),
            (Label::Noisy, 30, 0),
        ];
        let mut answers = String::new();
        let mut it = refs.iter();
        for (label, to_n, to_a) in plan {
            for k in 0..to_n + to_a {
                let (rec, truth) = it.next().unwrap();
                assert_eq!(*truth, label);
                answers += &format!("{rec},{}\n", if k < to_n { "N" } else { "A" });
            }
        }
        let r = score(&refs, &answers, "answers.txt", Mode::Strict).unwrap();
        assert_eq!(format!("{:.4}", r.f1.n), "0.7500");
        assert_eq!(format!("{:.4}", r.f1.a), "0.5698");
        assert_eq!((r.f1.o, r.f1.noisy), (0.0, 0.0));
        assert_eq!(format!("{:.4}", r.score_4class), "0.3299");
        assert_eq!(format!("{:.4}", r.score), "0.4399");
        assert!(r.errors.is_empty() && r.warnings.is_empty());
        assert!(r.text().contains("Final F1 measure (N, A, O):  0.4399"));
    }

    #[test]
    fn missing_duplicate_and_invalid_answers() {
        let refs = reference(&[(Label::N, 2), (Label::A, 1), (Label::O, 1)]);
        let answers = "A00001,N\nA00001,A\nA00002,X\nA00003,A\r\nA09999,N\ngarbage\n";
        let r = score(&refs, answers, "answers.txt", Mode::Strict).unwrap();
        let answered: Vec<_> = r.items.iter().map(|i| (i.answer, i.defaulted)).collect();
        assert_eq!(
            answered,
            [
                (Label::N, false),
                (Label::Noisy, true),
                (Label::A, false),
                (Label::Noisy, true)
            ]
        );
        let reasons: Vec<String> = r.errors.iter().map(ToString::to_string).collect();
        assert!(
            reasons[0].contains("line 2") && reasons[0].contains("the first, on line 1"),
            "{reasons:?}"
        );
        assert!(
            reasons[1].contains("line 3") && reasons[1].contains("\"X\""),
            "{reasons:?}"
        );
        assert!(
            reasons[2].contains("line 6") && reasons[2].contains("garbage"),
            "{reasons:?}"
        );
        assert!(reasons[3].contains("no answer for A00002"), "{reasons:?}");
        assert!(reasons[4].contains("no answer for A00004"), "{reasons:?}");
        assert!(r.warnings[0].contains("A09999"));

        // The official scorer stops at the invalid label.
        let e = score(&refs, answers, "answers.txt", Mode::OfficialCompat).unwrap_err();
        assert!(
            e.to_string().contains("line 3") && e.to_string().contains("would stop"),
            "{e}"
        );
    }

    #[test]
    fn empty_classes_have_no_f1() {
        let refs = reference(&[(Label::N, 3), (Label::A, 1)]);
        let r = score(
            &refs,
            "A00001,N\nA00002,N\nA00003,N\nA00004,A\n",
            "a",
            Mode::Strict,
        )
        .unwrap();
        assert_eq!((r.f1.n, r.f1.a), (1.0, 1.0));
        assert!(r.f1.o.is_nan() && r.f1.noisy.is_nan());
        assert_eq!((r.score, r.score_4class), (1.0, 1.0));
        let json = serde_json::to_value(&r).unwrap();
        assert!(json["f1"]["O"].is_null());
        let c = score(
            &refs,
            "A00001,N\nA00002,N\nA00003,N\nA00004,A\n",
            "a",
            Mode::OfficialCompat,
        )
        .unwrap();
        assert!(c.score.is_nan());
    }

    #[test]
    fn reference_errors_name_the_line() {
        let e = parse_reference("A00001,N\nA00002,Q\n", "REFERENCE.csv")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("REFERENCE.csv") && e.contains("line 2") && e.contains("\"Q\""),
            "{e}"
        );
        let e = parse_reference("A00001,N\nA00001,A\n", "R")
            .unwrap_err()
            .to_string();
        assert!(e.contains("listed again"), "{e}");
        assert!(parse_reference("\n", "R").is_err());
    }
}
