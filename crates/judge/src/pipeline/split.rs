//! Quiz and exam: the entry run over a split by its interface's driver. The quiz is
//! scored here (its score and every record's diagnostics are the stage's report, and
//! the first failure fails it); the exam only runs, never stops for the entry's
//! failures, and is scored by the score stage.

use std::path::PathBuf;
use std::time::Instant;

use super::driver::{Ran, Split};
use super::{Evaluator, StageLog, chown_tree, mkdir};
use crate::JudgeError;
use crate::dataset::Item;
use crate::result::{Counts, Outcome, Reason, RecordState, RecordStatus, ScoreSummary, Stage};

/// What the exam leaves for the score stage.
pub(super) struct ExamRun<'a> {
    pub items: &'a [Item],
    pub records: Vec<RecordStatus>,
    /// Where the exam's outputs were kept.
    pub taken: PathBuf,
    /// A driver's own score (stream), else `None`.
    pub scored: Option<Option<ScoreSummary>>,
    /// Whether the exam finished (only the judge's failure, the stage cap, a compute
    /// budget overrun or a stop end it early).
    pub finished: bool,
}

impl Evaluator<'_, '_> {
    /// Makes the split's folders and runs the driver over it.
    fn run_split<'i>(
        &mut self,
        stage: Stage,
        items: &'i [Item],
        log: &mut StageLog,
    ) -> Result<(Split<'i>, Ran), JudgeError> {
        let dir = self.work.join(stage.as_str());
        // What is taken from the entry goes straight to where it is kept: quiz outputs
        // for the participant, exam outputs for the organiser (they would reveal the
        // hidden records' names).
        let taken = match stage {
            Stage::Exam => self.ev.out.join("private/exam-outputs"),
            _ => self.ev.out.join(format!("outputs/{}", stage.as_str())),
        };
        let split = Split {
            stage,
            items,
            data: dir.join("data"),
            out: dir.join("out"),
            taken,
        };
        for d in [&split.data, &split.out, &split.taken] {
            mkdir(d)?;
        }
        chown_tree(&split.out, self.uid)?;
        let mut ran = self.driver.run_split(self, &split, log)?;
        // A run the caller stopped ends the stage, quiz or exam, whatever it did.
        if ran.stopped.is_none() && self.cancelled() {
            ran.stopped = Some(Reason::Stopped);
        }
        Ok((split, ran))
    }

    /// The quiz: full diagnostics, scored here; the first failure fails it.
    pub(super) fn quiz(
        &mut self,
        items: &[Item],
    ) -> Result<(bool, Option<ScoreSummary>), JudgeError> {
        let stage = Stage::Quiz;
        let t = Instant::now();
        if items.is_empty() {
            self.skip(stage, "the split has no records");
            return Ok((true, None));
        }
        self.started(stage, items.len());
        let mut log = StageLog::new();
        let (split, ran) = self.run_split(stage, items, &mut log)?;
        let Ran {
            mut records,
            stopped,
            scored,
        } = ran;
        let taken = split.taken.clone();
        let scored = match scored {
            Some(score) => score,
            None => self.score(items, &taken, &mut records)?,
        };
        let first_failure = records
            .iter()
            .find(|r| r.state != RecordState::Ok)
            .map(record_reason);
        let mut outcome = match stopped.or(first_failure) {
            Some(reason) => Outcome::Failed { reason },
            None => Outcome::Passed,
        };
        if let Some(sub) = &self.submitted
            && outcome == Outcome::Passed
            && let Some(reason) =
                super::per_record::compare_submitted(sub, &taken.join("answers.txt"), &mut log)
        {
            outcome = Outcome::Failed { reason };
        }
        let log = self.save_log(stage, log)?;
        let passed = self.finish(stage, outcome, t, records, None, log);
        Ok((passed, scored))
    }

    /// The exam: failures never stop it (a record that fails gets the challenge's
    /// default answer when scored); counts only for the participant.
    pub(super) fn exam<'i>(&mut self, items: &'i [Item]) -> Result<ExamRun<'i>, JudgeError> {
        let stage = Stage::Exam;
        let t = Instant::now();
        self.started(stage, items.len());
        let mut log = StageLog::new();
        let (split, ran) = self.run_split(stage, items, &mut log)?;
        let taken = split.taken.clone();
        // Only the judge's own failure, the stage cap, a compute budget overrun, what the
        // entry left that cannot be removed, or a stop end the exam.
        let outcome = match ran.stopped {
            Some(
                reason @ (Reason::Internal { .. }
                | Reason::StageTimeLimit { .. }
                | Reason::ComputeBudget { .. }
                | Reason::Leftovers { .. }
                | Reason::Stopped),
            ) => Outcome::Failed { reason },
            _ => Outcome::Passed,
        };
        let log = self.save_log(stage, log)?;
        // Counts of the runs; the score stage completes them from the outputs and writes
        // the organiser's per-record file once, then.
        let counts = Counts::of(&ran.records);
        let finished = self.finish(stage, outcome, t, Vec::new(), Some(counts), log);
        Ok(ExamRun {
            items,
            records: ran.records,
            taken,
            scored: ran.scored,
            finished,
        })
    }
}

/// The stage's reason when a record is its first failure.
fn record_reason(r: &RecordStatus) -> Reason {
    match (r.state, r.verdict) {
        (RecordState::Failed | RecordState::TimedOut, Some(v)) => Reason::Run {
            record: Some(r.record.clone()),
            verdict: v,
            exit_code: None,
            last_line: None,
        },
        _ => Reason::Output {
            record: r.record.clone(),
            problem: r
                .message
                .clone()
                .unwrap_or_else(|| format!("{:?}", r.state)),
        },
    }
}
