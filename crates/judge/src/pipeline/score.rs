//! Score: the host scores what was taken from the entry against the split's reference
//! (strict mode, docs/scoring.md), and marks each record whose output was missing or
//! unusable. The quiz is scored as part of its stage; the exam by the score stage, which
//! then completes the exam's counts.

use std::path::Path;
use std::time::Instant;

use super::split::ExamRun;
use super::{Evaluator, write_json};
use crate::JudgeError;
use crate::dataset::Item;
use crate::kinds::Scored;
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
    let Some(Scored {
        score,
        report,
        defaulted,
    }) = crate::kinds::of(c.scorer).score_folder(data, &ids, taken)?
    else {
        return Ok(None);
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
