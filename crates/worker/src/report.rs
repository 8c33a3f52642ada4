//! What a worker reports of a run: the outcome, whose fault, the stored result.

use std::path::Path;

use judge::result::EntryVerdict;
use judge::{EvalResult, Fault};
use serde::{Deserialize, Serialize};
use store::{Better, Figure, Outcome, Report};

use crate::run::RunEnd;

/// Why an attempt ended in `error` (the platform's fault, never the entry's). The stored
/// message is this reason's text, which starts with what kind of reason it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ErrorReason {
    /// The challenge's data folder differs from its manifest: not judged.
    #[error("data changed: {message}")]
    DataChanged { message: String },
    /// The data folder could not be read.
    #[error("data unreadable: {message}")]
    DataUnreadable { message: String },
    /// The entry file is not the one uploaded.
    #[error("entry changed: its sha256 is {found}, the submission's {expected}")]
    EntryChanged { expected: String, found: String },
    /// The entry file could not be read.
    #[error("entry unreadable: {message}")]
    EntryUnreadable { message: String },
    /// The judge does not know the challenge as registered.
    #[error("unknown challenge {challenge:?}: {message}")]
    UnknownChallenge { challenge: String, message: String },
    /// The judge could not finish (`fault`: the data's, the judge's, the machine's).
    #[error("judge error ({} fault): {message}", fault_word(.fault))]
    Judge { fault: Fault, message: String },
    /// The judge scored the entry but its private report has no usable ranking number.
    #[error("no ranking numbers: {message}")]
    NoFigures { message: String },
    /// The run was stopped (the worker shutting down).
    #[error("stopped: {why}")]
    Stopped { why: String },
    /// The judge's thread panicked.
    #[error("judge panicked: {message}")]
    Panicked { message: String },
}

/// A fault as `result.json` spells it.
fn fault_word(f: &Fault) -> &'static str {
    match f {
        Fault::Entry => "entry",
        Fault::Data => "data",
        Fault::Judge => "judge",
        Fault::Machine => "machine",
    }
}

/// The scorer's version (the judge's, which ships the `score` crate).
fn scorer_version() -> String {
    judge::rescore::SCORER_VERSION.to_owned()
}

fn read_text(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

fn error(
    result_json: Option<String>,
    judge_version: String,
    reason: ErrorReason,
) -> (Report, Option<ErrorReason>) {
    (
        Report {
            outcome: Outcome::Error,
            result_json,
            private_json: None,
            figures: Vec::new(),
            quiz_figures: Vec::new(),
            scorer_version: scorer_version(),
            judge_version,
            message: Some(reason.to_string()),
            runtime_lock: Some(judge::rescore::runtime_lock_id()),
            warnings: Vec::new(),
        },
        Some(reason),
    )
}

/// The ranking numbers of a scored result: the keys and directions the participant's
/// view lists (`exam_score.ranking`), each value exactly as the scorer wrote it in
/// `private/exam-score.json` — never the rounded one.
fn figures(r: &EvalResult, private: Option<&str>) -> Result<Vec<Figure>, String> {
    let ranking = r
        .exam_score
        .as_ref()
        .map(|s| s.ranking.as_slice())
        .unwrap_or_default();
    if ranking.is_empty() {
        return Err("result.json lists no ranking numbers".to_owned());
    }
    let private = private.ok_or("private/exam-score.json is missing")?;
    let report: serde_json::Value = serde_json::from_str(private)
        .map_err(|e| format!("private/exam-score.json is not JSON: {e}"))?;
    Ok(ranking
        .iter()
        .map(|n| Figure {
            key: n.key.clone(),
            value: report
                .get(&n.key)
                .and_then(serde_json::Value::as_f64)
                .filter(|v| v.is_finite()),
            better: match n.better {
                judge::challenge::Better::Higher => Better::Higher,
                judge::challenge::Better::Lower => Better::Lower,
            },
        })
        .collect())
}

/// The quiz's ranking numbers: the keys and directions of the exam's ranking, each
/// value exactly as the scorer wrote it in the quiz's score report —
/// `private/quiz-score.json` when the challenge hides quiz labels, else the report in
/// `result.json` (the participant's view differs from the full report only in its
/// per-item fields, never in the ranking numbers). None when the quiz was not scored.
fn quiz_figures(r: &EvalResult, out: &Path) -> Vec<Figure> {
    let report = read_text(&out.join("private/quiz-score.json"))
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .or_else(|| r.quiz_score.as_ref().map(|s| s.report.clone()));
    let (Some(report), Some(exam)) = (report, r.exam_score.as_ref()) else {
        return Vec::new();
    };
    exam.ranking
        .iter()
        .map(|n| Figure {
            key: n.key.clone(),
            value: report
                .get(&n.key)
                .and_then(serde_json::Value::as_f64)
                .filter(|v| v.is_finite()),
            better: match n.better {
                judge::challenge::Better::Higher => Better::Higher,
                judge::challenge::Better::Lower => Better::Lower,
            },
        })
        .collect()
}

/// The report of a run whose result folder is `out`. `stopping`: why the worker stopped
/// the run, if it did.
pub(crate) fn build(
    ended: RunEnd,
    out: &Path,
    stopping: Option<&str>,
) -> (Report, Option<ErrorReason>) {
    let ours = env!("CARGO_PKG_VERSION").to_owned();
    let result_json = read_text(&out.join("result.json"));
    let (r, warnings) = match ended {
        RunEnd::Refused(reason) => return error(None, ours, reason),
        RunEnd::Judged(Err(e), _) => {
            // The judge writes a result.json with verdict `error` once it made the
            // folder: kept with the report, for the organiser.
            let reason = ErrorReason::Judge {
                fault: e.fault(),
                message: e.to_string(),
            };
            return error(result_json, ours, reason);
        }
        // The judge's own (requirement lines read as meant, optional files missing)
        // first, then the scored outputs'.
        RunEnd::Judged(Ok(r), warnings) => {
            let mut all = r.warnings.clone();
            all.extend(warnings);
            (r, all)
        }
    };
    // result.json as the judge wrote it; as it serialises if the file cannot be read
    // back (the same value: the judge's own tests pin that).
    let result_json = result_json.or_else(|| serde_json::to_string(&r).ok());
    let judge_version = r.judge_version.clone();
    let private_json = read_text(&out.join("private/exam-score.json"));
    match r.verdict {
        EntryVerdict::Scored => match figures(&r, private_json.as_deref()) {
            Ok(figures) => (
                Report {
                    outcome: Outcome::Scored,
                    result_json,
                    private_json,
                    figures,
                    quiz_figures: quiz_figures(&r, out),
                    scorer_version: scorer_version(),
                    judge_version,
                    message: None,
                    runtime_lock: Some(judge::rescore::runtime_lock_id()),
                    warnings,
                },
                None,
            ),
            Err(message) => error(
                result_json,
                judge_version,
                ErrorReason::NoFigures { message },
            ),
        },
        // A dry run is the entry's choice (`DRYRUN`): judged to the quiz, never ranked,
        // counted like a failed one.
        EntryVerdict::Failed | EntryVerdict::DryRun => (
            Report {
                outcome: Outcome::Failed,
                result_json,
                private_json,
                figures: Vec::new(),
                quiz_figures: Vec::new(),
                scorer_version: scorer_version(),
                judge_version,
                message: None,
                runtime_lock: Some(judge::rescore::runtime_lock_id()),
                warnings,
            },
            None,
        ),
        EntryVerdict::Error => {
            let reason = match &r.error {
                Some(f) => ErrorReason::Judge {
                    fault: f.fault,
                    message: f.message.clone(),
                },
                None => ErrorReason::Judge {
                    fault: Fault::Judge,
                    message: "verdict error without a reason".to_owned(),
                },
            };
            error(result_json, judge_version, reason)
        }
        EntryVerdict::Stopped => {
            let why = stopping.unwrap_or("the run was stopped").to_owned();
            error(result_json, judge_version, ErrorReason::Stopped { why })
        }
    }
}

#[cfg(test)]
mod tests {
    use judge::challenge::Better as JudgeBetter;
    use judge::result::{ExamScore, JudgeFailure, RankedNumber, SplitSizes};

    use super::*;

    fn result(verdict: EntryVerdict) -> EvalResult {
        EvalResult {
            challenge: "physionet2022".into(),
            entry: "entry.zip".into(),
            verdict,
            score: None,
            split: SplitSizes::default(),
            stages: Vec::new(),
            quiz_score: None,
            exam_score: Some(ExamScore {
                precision: 3,
                ranking: vec![
                    RankedNumber {
                        key: "score".into(),
                        value: Some(0.148),
                        better: JudgeBetter::Higher,
                    },
                    RankedNumber {
                        key: "outcome_cost".into(),
                        value: Some(15010.123),
                        better: JudgeBetter::Lower,
                    },
                ],
            }),
            error: None,
            environment: None,
            warnings: Vec::new(),
            runtime: None,
            language: None,
            judge_version: "0.1.0".into(),
        }
    }

    fn folder(private: Option<&str>) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("result.json"), "{\"as\": \"written\"}\n").unwrap();
        if let Some(p) = private {
            std::fs::create_dir(dir.path().join("private")).unwrap();
            std::fs::write(dir.path().join("private/exam-score.json"), p).unwrap();
        }
        dir
    }

    #[test]
    fn figures_are_the_scorers_own_not_the_rounded_view() {
        let private =
            r#"{"score": 0.14814814814814814, "outcome_cost": 15010.12345678901, "auroc": 0.5}"#;
        let dir = folder(Some(private));
        let (report, reason) = build(
            RunEnd::Judged(Ok(result(EntryVerdict::Scored)), Vec::new()),
            dir.path(),
            None,
        );
        assert_eq!(reason, None);
        assert_eq!(report.outcome, Outcome::Scored);
        assert_eq!(
            report.figures,
            [
                Figure {
                    key: "score".into(),
                    value: Some(0.14814814814814814),
                    better: Better::Higher,
                },
                Figure {
                    key: "outcome_cost".into(),
                    value: Some(15010.12345678901),
                    better: Better::Lower,
                },
            ]
        );
        assert_eq!(
            report.result_json.as_deref(),
            Some("{\"as\": \"written\"}\n")
        );
        assert_eq!(report.private_json.as_deref(), Some(private));
    }

    #[test]
    fn quiz_figures_are_the_quiz_reports_own() {
        let dir = folder(Some(r#"{"score": 0.25, "outcome_cost": 9000.5}"#));
        let mut r = result(EntryVerdict::Scored);
        // Without a quiz score: no quiz figures, the exam's still there.
        let (report, _) = build(RunEnd::Judged(Ok(r.clone()), Vec::new()), dir.path(), None);
        assert_eq!(report.outcome, Outcome::Scored);
        assert!(report.quiz_figures.is_empty());
        // The quiz report in result.json (labels revealed): its figures, unrounded.
        r.quiz_score = Some(judge::result::ScoreSummary {
            score: 0.3,
            report: serde_json::json!({"score": 0.3333333333333333, "outcome_cost": 12.345678}),
        });
        let (report, _) = build(RunEnd::Judged(Ok(r.clone()), Vec::new()), dir.path(), None);
        let values: Vec<_> = report
            .quiz_figures
            .iter()
            .map(|f| (f.key.as_str(), f.value))
            .collect();
        assert_eq!(
            values,
            [
                ("score", Some(0.3333333333333333)),
                ("outcome_cost", Some(12.345678))
            ]
        );
        assert_eq!(report.quiz_figures[1].better, Better::Lower);
        // The organiser's full quiz report, when the judge wrote one, is the source.
        std::fs::write(
            dir.path().join("private/quiz-score.json"),
            r#"{"score": 0.123456789, "outcome_cost": null}"#,
        )
        .unwrap();
        let (report, _) = build(RunEnd::Judged(Ok(r), Vec::new()), dir.path(), None);
        let values: Vec<_> = report
            .quiz_figures
            .iter()
            .map(|f| (f.key.as_str(), f.value))
            .collect();
        assert_eq!(
            values,
            [("score", Some(0.123456789)), ("outcome_cost", None)]
        );
        // The exam's figures are untouched by the quiz's.
        assert_eq!(report.figures[0].value, Some(0.25));
    }

    #[test]
    fn a_scored_result_without_its_private_report_is_our_error() {
        let dir = folder(None);
        let (report, reason) = build(
            RunEnd::Judged(Ok(result(EntryVerdict::Scored)), Vec::new()),
            dir.path(),
            None,
        );
        assert_eq!(report.outcome, Outcome::Error);
        assert!(matches!(reason, Some(ErrorReason::NoFigures { .. })));
        assert!(report.figures.is_empty());
    }

    #[test]
    fn verdicts_map_to_outcomes() {
        let dir = folder(None);
        let out = |verdict, stopping| {
            build(
                RunEnd::Judged(Ok(result(verdict)), Vec::new()),
                dir.path(),
                stopping,
            )
        };
        assert_eq!(out(EntryVerdict::Failed, None).0.outcome, Outcome::Failed);
        assert_eq!(out(EntryVerdict::DryRun, None).0.outcome, Outcome::Failed);
        let (r, reason) = out(EntryVerdict::Stopped, Some("the worker is shutting down"));
        assert_eq!(r.outcome, Outcome::Error);
        assert_eq!(
            r.message.as_deref(),
            Some("stopped: the worker is shutting down")
        );
        assert!(matches!(reason, Some(ErrorReason::Stopped { .. })));
        let mut e = result(EntryVerdict::Error);
        e.error = Some(JudgeFailure {
            fault: Fault::Machine,
            message: "disk full".into(),
        });
        let (r, _) = build(RunEnd::Judged(Ok(e), Vec::new()), dir.path(), None);
        assert_eq!(r.outcome, Outcome::Error);
        assert_eq!(
            r.message.as_deref(),
            Some("judge error (machine fault): disk full")
        );
        // Refused before judging: no result.json is sent, even if a folder has one.
        let (r, _) = build(
            RunEnd::Refused(ErrorReason::DataChanged {
                message: "a changed".into(),
            }),
            dir.path(),
            None,
        );
        assert_eq!((r.outcome, r.result_json), (Outcome::Error, None));
        assert_eq!(r.message.as_deref(), Some("data changed: a changed"));
    }
}
