//! Score: the host scores what was taken from the entry against the split's reference
//! (strict mode, docs/scoring.md), and marks each record whose output was missing or
//! unusable. The quiz is scored as part of its stage; the exam by the score stage, which
//! then completes the exam's counts.

use std::path::Path;
use std::time::Instant;

use super::split::ExamRun;
use super::{Evaluator, io, write_json};
use crate::JudgeError;
use crate::challenge::ScorerId;
use crate::dataset::Item;
use crate::result::{Counts, Outcome, RecordState, RecordStatus, ScoreSummary, Stage};

impl Evaluator<'_, '_> {
    /// The score stage: the exam's score (none when the exam did not finish), with the
    /// exam's record states and counts completed from it.
    pub(super) fn score_stage(
        &mut self,
        exam: ExamRun,
    ) -> Result<Option<ScoreSummary>, JudgeError> {
        let t = Instant::now();
        self.started(Stage::Score, 0);
        let ExamRun {
            items,
            mut records,
            taken,
            scored,
            finished,
        } = exam;
        let score = match scored {
            Some(score) => score,
            None if finished || !self.cancelled() => self.score(items, &taken, &mut records)?,
            None => None,
        };
        // The organiser's full report (even of an exam that did not finish); what scoring
        // found of the outputs (missing, invalid) completes the exam's counts and the
        // organiser's per-record file.
        if let Some(s) = &score {
            write_json(&self.ev.out.join("private/exam-score.json"), &s.report)?;
        }
        write_json(&self.ev.out.join("private/exam-records.json"), &records)?;
        if let Some(exam) = self.stages.iter_mut().find(|s| s.stage == Stage::Exam) {
            exam.counts = Some(Counts::of(&records));
        }
        let outcome = match &score {
            Some(_) if finished => Outcome::Passed,
            _ if self.cancelled() => Outcome::Skipped {
                why: "the evaluation was stopped".into(),
            },
            _ => Outcome::Skipped {
                why: "the exam did not finish".into(),
            },
        };
        self.finish(Stage::Score, outcome, t, Vec::new(), None, None);
        Ok(score.filter(|_| finished))
    }

    /// Scores the taken outputs against the split's reference (strict mode) and marks
    /// each record whose output was missing or unusable.
    pub(super) fn score(
        &self,
        items: &[Item],
        taken: &Path,
        records: &mut [RecordStatus],
    ) -> Result<Option<ScoreSummary>, JudgeError> {
        score_outputs(self.c, self.ev.data, items, taken, records)
    }
}

/// Scores the outputs in `taken` against the reference of `items` in the data folder
/// (strict mode) and marks each of `records` whose output was missing or unusable. The
/// one scoring of a folder of outputs: the quiz and score stages use it, and so does
/// scoring a result folder again (`crate::rescore`). `None` for a challenge whose
/// driver scores its own outputs (stream).
pub(crate) fn score_outputs(
    c: &crate::Challenge,
    data: &Path,
    items: &[Item],
    taken: &Path,
    records: &mut [RecordStatus],
) -> Result<Option<ScoreSummary>, JudgeError> {
    let ids: std::collections::HashSet<&str> = items.iter().map(|i| i.id.as_str()).collect();
    let fail = |e: score::ScoreError| JudgeError::data(Some(data), e);
    // (record, why its output was unusable; None: there was none)
    let (score, report, defaulted): (f64, serde_json::Value, Vec<(String, Option<String>)>) =
        match c.scorer {
            ScorerId::Cpsc2021 => {
                let mut reference = score::cpsc2021::load_reference(data).map_err(fail)?;
                reference.records.retain(|r| ids.contains(r.name.as_str()));
                let rep =
                    score::cpsc2021::score(&reference, taken, score::Mode::Strict).map_err(fail)?;
                let items = rep.items.iter();
                let d = unusable(
                    items.map(|i| (&i.record, i.defaulted, i.file.is_some())),
                    &rep.errors,
                );
                (rep.score, to_json(&rep), d)
            }
            ScorerId::Cinc2017 => {
                let path = data.join("REFERENCE.csv");
                let text = std::fs::read_to_string(&path).map_err(|e| io(&path, e))?;
                let mut reference =
                    score::cinc2017::parse_reference(&text, &path.display().to_string())
                        .map_err(fail)?;
                reference.retain(|(r, _)| ids.contains(r.as_str()));
                let answers = std::fs::read(taken.join("answers.txt")).unwrap_or_default();
                let rep = score::cinc2017::score(
                    &reference,
                    &String::from_utf8_lossy(&answers),
                    "answers.txt",
                    score::Mode::Strict,
                )
                .map_err(fail)?;
                let d = rep
                    .items
                    .iter()
                    .filter(|i| i.defaulted)
                    .map(|i| {
                        let why = problem(&rep.errors, &i.record)
                            .filter(|m| !m.contains(&format!("no answer for {}", i.record)));
                        (i.record.clone(), why)
                    })
                    .collect();
                (rep.score, to_json(&rep), d)
            }
            ScorerId::Physionet2022 => {
                let mut reference = score::physionet2022::load_labels(data).map_err(fail)?;
                reference.patients.retain(|p| ids.contains(p.id.as_str()));
                let rep = score::physionet2022::score(&reference, taken, score::Mode::Strict)
                    .map_err(fail)?;
                let items = rep.items.iter();
                let d = unusable(
                    items.map(|i| (&i.patient, i.defaulted, i.file.is_some())),
                    &rep.errors,
                );
                (rep.score, to_json(&rep), d)
            }
            ScorerId::Itr => return Ok(None),
        };
    for (id, why) in defaulted {
        if let Some(r) = records.iter_mut().find(|r| r.record == id)
            && r.state == RecordState::Ok
        {
            r.state = match why {
                None => RecordState::MissingOutput,
                Some(_) => RecordState::InvalidOutput,
            };
            r.message = Some(why.unwrap_or_else(|| "no output".into()));
        }
    }
    Ok(Some(ScoreSummary { score, report }))
}

/// The defaulted items of a scorer's report, from (id, defaulted, had an output file):
/// each with why its output was unusable, or `None` when there was none.
fn unusable<'a>(
    items: impl Iterator<Item = (&'a String, bool, bool)>,
    errors: &[score::PredictionError],
) -> Vec<(String, Option<String>)> {
    items
        .filter(|(_, defaulted, _)| *defaulted)
        .map(|(id, _, had_file)| (id.clone(), had_file.then(|| problem(errors, id)).flatten()))
        .collect()
}

/// The error the scorer listed for an item: in its own output file, or naming it.
fn problem(errors: &[score::PredictionError], id: &str) -> Option<String> {
    errors
        .iter()
        .find(|e| {
            Path::new(&e.file)
                .file_stem()
                .is_some_and(|s| s.to_string_lossy() == id)
                || e.reason
                    .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .any(|token| token == id)
        })
        .map(|e| e.to_string())
}

/// A scorer report as JSON (the reports serialise without failing: plain data, and
/// non-finite numbers become `null`).
pub(super) fn to_json(report: &impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(report).unwrap_or(serde_json::Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_names_a_record_only_as_a_whole_token() {
        let e = [score::PredictionError::new(
            "answers.txt",
            "no answer for data_1_10: scored as ~",
        )];
        assert!(problem(&e, "data_1_1").is_none());
        assert!(problem(&e, "data_1_10").is_some());
    }
}
