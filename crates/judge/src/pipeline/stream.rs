//! The stream interface (the P300 speller): the algorithm is streamed its data packet by
//! packet in one sandbox run whose CPU limit is the session's compute budget, pinned to
//! the CPU of the thread that serves it, and reports as it goes (docs/stream.md).

use std::path::Path;

use sandbox::Verdict;

use super::driver::{Driver, Ran, Split};
use super::{Evaluator, StageLog, message_of, mkdir, ro, secs, status, write_json};
use crate::JudgeError;
use crate::dataset::Item;
use crate::kinds::to_json;
use crate::outputs::read_capped;
use crate::result::{Reason, RecordState, ScoreSummary, Stage};
use crate::streaming::EntryConfig;

pub(super) struct Stream;

impl Driver for Stream {
    /// The entry's `config.toml` (its own commands, if any) must be usable.
    fn prep(
        &self,
        ev: &mut Evaluator,
        log: &mut StageLog,
        _problems: &mut Vec<String>,
    ) -> Result<Option<Reason>, JudgeError> {
        let path = ev.entry.join("config.toml");
        let parsed = match read_capped(&path, 1 << 20) {
            Ok(Some(bytes)) => match std::str::from_utf8(&bytes) {
                Ok(text) => EntryConfig::parse(text),
                Err(e) => Err(format!("not UTF-8 text: {e}")),
            },
            Ok(None) => Err("missing".into()),
            Err(why) => Err(why),
        };
        match parsed {
            Ok(c) => {
                ev.config = c;
                Ok(None)
            }
            Err(message) => {
                log.line(&format!("config.toml: {message}"));
                Ok(Some(Reason::Config { message }))
            }
        }
    }

    /// Our client package at `/judge`.
    fn judge_files(&self, dir: &Path) -> std::io::Result<bool> {
        crate::streaming::write_client(dir)?;
        Ok(true)
    }

    /// The client package, importable from anywhere.
    fn env(&self) -> Vec<(String, String)> {
        vec![("PYTHONPATH".into(), "/judge".into())]
    }

    /// A stream challenge trains when the split has training subjects.
    fn train_argv(&self, ev: &Evaluator, training: &[Item]) -> Result<Vec<String>, &'static str> {
        match training.is_empty() {
            true => Err("the split has no training subjects"),
            false => Ok(ev.config.train_argv()),
        }
    }

    /// One session over the split's subjects. The session log (every report and trial)
    /// goes with the taken outputs: the participant's in the quiz, the organiser's in
    /// the exam. No score when the budget was exceeded (the run is invalid) or the
    /// judge failed.
    fn run_split(
        &self,
        ev: &mut Evaluator,
        split: &Split<'_>,
        log: &mut StageLog,
    ) -> Result<Ran, JudgeError> {
        let (stage, items, taken) = (split.stage, split.items, &split.taken);
        let data_err = |e: &dyn std::fmt::Display| JudgeError::data(Some(ev.ev.data), e);
        let def =
            ev.c.stream
                .ok_or_else(|| JudgeError::challenge(&ev.c.id, "no [stream] table"))?;
        let subjects = items
            .iter()
            .enumerate()
            .map(|(i, item)| stream::load::subject(&ev.ev.data.join(&item.id), i as u32 + 1))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| data_err(&e))?;
        let mut session = stream::Session::new(subjects, def.seed).map_err(|e| data_err(&e))?;
        let model = ev.work.join("model");
        mkdir(&model)?;
        let limits = ev.c.run_limits(items.len());
        let budget = limits.cpu_time;
        let argv = ev.config.run_argv();
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let mut cfg = ev.sandbox_config(
            &argv,
            vec![ro(&ev.work.join("judge"), "/judge"), ro(&model, "/model")],
            limits,
        );
        cfg.cpu = crate::streaming::session_cpu(ev.ev.slot);
        let (r, served) = sandbox::run_serving(
            &cfg,
            Some(|c: sandbox::Conversation| {
                stream::protocol::serve(&mut session, c.from_program, c.to_program)
            }),
        );
        let result = session.finish();
        log.run(
            &format!("{} session over {} subjects", stage.as_str(), items.len()),
            &r,
        );
        match &served {
            Some(Ok(s)) => log.line(&format!(
                "{} packets served, {} reports received",
                s.packets, s.reports
            )),
            Some(Err(e)) => log.line(&format!("the session ended: {e}")),
            None => {}
        }
        if result.dropped_reports > 0 {
            log.line(&format!(
                "{} reports beyond the session log's caps: counted, not listed in session.json",
                result.dropped_reports
            ));
        }
        if !result.finished {
            log.line(
                "the algorithm stopped before the session's last packet: the trials it did \
                 not answer count as wrong, 9 s each",
            );
        }
        for _ in items {
            ev.record_done();
        }
        if stage == Stage::Quiz && !ev.c.reveal_quiz_labels {
            write_json(&ev.ev.out.join("private/quiz-session.json"), &result)?;
            let view = crate::visibility::quiz_session_view(ev.c, &to_json(&result));
            write_json(&taken.join("session.json"), &view)?;
        } else {
            write_json(&taken.join("session.json"), &result)?;
        }
        let res = &r.result;
        let violation = match &served {
            Some(Err(e)) if e.is_violation() => Some(e.to_string()),
            Some(Err(e @ stream::protocol::ProtocolError::Truncated { .. }))
                if res.verdict == Verdict::Ok =>
            {
                Some(e.to_string())
            }
            _ => None,
        };
        let stopped = match (res.verdict, violation) {
            (Verdict::InternalError, _) => Some(Reason::Internal {
                message: message_of(res),
            }),
            (Verdict::TimeLimit, _) => Some(Reason::ComputeBudget {
                budget_s: secs(budget),
                used_s: res.cpu_time_s,
            }),
            (_, Some(message)) => Some(Reason::Protocol { message }),
            (Verdict::Ok, None) => None,
            (v, None) => Some(Reason::Run {
                record: None,
                verdict: v,
                exit_code: res.exit_code,
                last_line: super::last_line(&r),
            }),
        };
        let state = match (&stopped, res.verdict) {
            (None, _) => RecordState::Ok,
            (_, Verdict::TimeLimit | Verdict::WallTimeLimit) => RecordState::TimedOut,
            _ => RecordState::Failed,
        };
        let records = items
            .iter()
            .map(|i| {
                let mut s = status(&i.id, state, Some(res.verdict), None);
                s.message = stopped.as_ref().map(|r| r.to_string());
                s
            })
            .collect();
        let score = match stopped {
            Some(Reason::Internal { .. } | Reason::ComputeBudget { .. }) => None,
            _ => Some(session_score(&ev.c.id, &result)),
        };
        Ok(Ran {
            records,
            stopped,
            scored: Some(score),
        })
    }
}

/// A session's score and report: the mean ITR, the per-subject ITR table and aggregates
/// over subjects (of an exam, a participant sees the score only).
fn session_score(challenge: &str, result: &stream::SessionResult) -> ScoreSummary {
    let accepted = result
        .log
        .iter()
        .filter(|l| matches!(l.status, stream::ReportStatus::Accepted { .. }))
        .count();
    itr_report(
        challenge,
        &result.summary,
        result.trials.len(),
        result.reports,
        accepted,
        result.finished,
    )
}

/// The ITR score and report of a session's summary and counts: the session's own
/// scoring, and scoring a stored session log again (`crate::rescore`).
pub(crate) fn itr_report(
    challenge: &str,
    summary: &score::itr::Summary,
    trials: usize,
    reports: usize,
    accepted: usize,
    finished: bool,
) -> ScoreSummary {
    let subjects = &summary.subjects;
    let mean = |f: fn(&score::itr::Subject) -> f64| {
        subjects.iter().map(f).sum::<f64>() / subjects.len().max(1) as f64
    };
    let report = serde_json::json!({
        "challenge": challenge,
        "score": summary.score,
        "accuracy": mean(|s| s.accuracy),
        "mean_trial_seconds": mean(|s| s.mean_seconds),
        "trials": trials,
        "reports": reports,
        "accepted_reports": accepted,
        "finished": finished,
        "subjects": to_json(&summary.subjects),
    });
    ScoreSummary {
        score: summary.score,
        report,
    }
}
