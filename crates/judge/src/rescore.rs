//! What a platform needs of a result folder after the run: scoring its stored outputs
//! again with this judge's scorer (rescoring, without running the entry), the warning
//! that an entry gave the same answer for every record ("degenerate output"), and the
//! versions a result names.
//!
//! Rescoring goes through the judge's own scoring (`pipeline::score::score_outputs`,
//! the function the quiz and score stages call; the stream challenge's ITR report,
//! `pipeline::stream::itr_report`), never a copy of it. It reads what the run kept:
//! the exam's outputs (`private/exam-outputs/`, a stream challenge's session log there),
//! the quiz's (`outputs/quiz/`; a stream challenge's full quiz session log in
//! `private/quiz-session.json` when the participant's copy hides labels), and the
//! reference in the challenge's data folder.

use std::path::Path;

use serde_json::Value;

use crate::challenge::ScorerId;
use crate::dataset::Dataset;
use crate::result::{ExamScore, RecordStatus};
use crate::{Challenge, JudgeError};

/// The scorer's version: the `score` crate ships with the judge under the workspace's
/// one version. What a platform stores with a score and compares when it combines scores.
pub const SCORER_VERSION: &str = concat!("score ", env!("CARGO_PKG_VERSION"));

/// The judge's version, as `result.json` names it.
pub const JUDGE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The id of the Python runtime lock entries run with: `sha256:` and the first 16 hex
/// digits of the sha256 of the lock file compiled into the judge
/// (`runtime/requirements.lock`). Two judges with the same id run entries on the same
/// packages.
pub fn runtime_lock_id() -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(runtime::LOCK.as_bytes());
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// Where a result folder keeps the exam's outputs (organisers only).
pub const EXAM_OUTPUTS: &str = "private/exam-outputs";
/// Where it keeps the organiser's full exam score report.
pub const EXAM_SCORE: &str = "private/exam-score.json";

/// Where a result folder keeps the quiz's outputs (the participant's).
pub const QUIZ_OUTPUTS: &str = "outputs/quiz";
/// Where a stream challenge keeps the quiz's full session log when the participant's
/// copy (in [`QUIZ_OUTPUTS`]) hides the labels.
pub const QUIZ_SESSION: &str = "private/quiz-session.json";

/// A result folder scored again.
#[derive(Debug, Clone, PartialEq)]
pub struct Rescored {
    /// The organiser's full report (what `private/exam-score.json` holds).
    pub report: Value,
    /// The quiz's full report scored again from the quiz outputs the run kept, when it
    /// kept any (what `private/quiz-score.json`, or with revealed labels the quiz report
    /// of `result.json`, holds): a quiz-scored phase ranks by its numbers.
    pub quiz_report: Option<Value>,
    /// The participant's view (what `result.json`'s `exam_score` holds).
    pub exam_score: ExamScore,
    /// The warnings of these outputs ([`warnings`]).
    pub warnings: Vec<String>,
}

/// Scores the exam outputs kept in the result folder `out` again, against the
/// reference in `data`, with this judge's scorer: the same function and the same exam
/// split as the run's score stage; and the quiz outputs it kept, as the run's quiz
/// stage scored them. `None` when the folder has no exam outputs to score (the run
/// never got to the exam).
pub fn score_result_folder(
    challenge: &Challenge,
    data: &Path,
    out: &Path,
) -> Result<Option<Rescored>, JudgeError> {
    let taken = out.join(EXAM_OUTPUTS);
    let Some(summary) = score_split(challenge, data, &taken, &taken.join("session.json"), false)?
    else {
        return Ok(None);
    };
    let quiz_session = if out.join(QUIZ_SESSION).is_file() {
        out.join(QUIZ_SESSION)
    } else {
        out.join(QUIZ_OUTPUTS).join("session.json")
    };
    let quiz_report = score_split(
        challenge,
        data,
        &out.join(QUIZ_OUTPUTS),
        &quiz_session,
        true,
    )?
    .map(|s| s.report);
    let exam_score = crate::visibility::exam_view(challenge, &summary.report);
    let warnings = warnings_of(challenge, &summary.report, &taken);
    Ok(Some(Rescored {
        report: summary.report,
        quiz_report,
        exam_score,
        warnings,
    }))
}

/// Scores one split's kept outputs (`taken`; a stream challenge's session log
/// `session`) against the reference in `data`, with the same function and split as the
/// run's quiz or score stage. `None` when the run kept nothing of that split.
fn score_split(
    challenge: &Challenge,
    data: &Path,
    taken: &Path,
    session: &Path,
    quiz: bool,
) -> Result<Option<crate::result::ScoreSummary>, JudgeError> {
    if !taken.is_dir() {
        return Ok(None);
    }
    let kind = crate::kinds::of(challenge.scorer);
    if let Some(scored) = kind.score_session(challenge, session) {
        return scored.map(Some);
    }
    let dataset = Dataset::open(challenge.layout, data)?;
    let splits = dataset.split(&challenge.split, &challenge.id)?;
    let items = if quiz { &splits.quiz } else { &splits.exam };
    if items.is_empty() {
        return Ok(None);
    }
    let mut records: Vec<RecordStatus> = Vec::new();
    crate::pipeline::score::score_outputs(challenge, data, items, taken, &mut records)
}

pub(crate) fn read_json(path: &Path) -> Result<Value, JudgeError> {
    let text = std::fs::read_to_string(path).map_err(|e| JudgeError::io(path, e))?;
    serde_json::from_str(&text).map_err(|e| JudgeError::Internal {
        message: format!("{}: not the JSON the judge wrote: {e}", path.display()),
    })
}

/// The warnings of a scored result folder: today "degenerate output" when the entry
/// gave the same answer for every record of the exam ([`degenerate`]). Reads the
/// organiser's exam report and outputs the run kept; a folder without them has none.
pub fn warnings(challenge: &Challenge, out: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(out.join(EXAM_SCORE)) else {
        return Vec::new();
    };
    let Ok(report) = serde_json::from_str::<Value>(&text) else {
        return Vec::new();
    };
    warnings_of(challenge, &report, &out.join(EXAM_OUTPUTS))
}

fn warnings_of(challenge: &Challenge, report: &Value, taken: &Path) -> Vec<String> {
    let kind = crate::kinds::of(challenge.scorer);
    let session = kind
        .reads_session()
        .then(|| std::fs::read_to_string(taken.join("session.json")).ok())
        .flatten()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok());
    degenerate(challenge.scorer, report, session.as_ref())
        .map(|why| format!("degenerate output: {why}"))
        .into_iter()
        .collect()
}

/// Why the outputs are degenerate — the same answer for every record, as scored (a
/// missing output counts as the default answer it was scored as) — or `None`. Needs
/// at least two records: one answer for one record says nothing. Each kind says what
/// "the same answer" is (`crate::kinds`); a stream kind reads the session log, `session`.
pub fn degenerate(scorer: ScorerId, report: &Value, session: Option<&Value>) -> Option<String> {
    crate::kinds::of(scorer).degenerate(report, session)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A built-in kind's scorer id, as a definition names it.
    fn kind(id: &str) -> ScorerId {
        ScorerId::named(id).unwrap()
    }

    #[test]
    fn cinc2017_one_class_for_every_record() {
        // The scorer's own report of an answers file.
        let reference =
            score::cinc2017::parse_reference("A1,N\nA2,A\nA3,O\n", "REFERENCE.csv").unwrap();
        let report = |answers: &str| {
            let r = score::cinc2017::score(&reference, answers, "answers.txt", score::Mode::Strict)
                .unwrap();
            serde_json::to_value(&r).unwrap()
        };
        let all_n = report("A1,N\nA2,N\nA3,N\n");
        let why = degenerate(kind("cinc2017"), &all_n, None).unwrap();
        assert!(why.contains("classed N"), "{why}");
        assert_eq!(
            degenerate(kind("cinc2017"), &report("A1,N\nA2,A\nA3,N\n"), None),
            None
        );
        // A missing answer is scored as `~`: three of them are one answer.
        assert!(degenerate(kind("cinc2017"), &report(""), None).is_some());
    }

    #[test]
    fn cpsc2021_no_af_anywhere() {
        let items = |classes: &[&str]| {
            json!({"items": classes.iter().map(|c| json!({"record": "r", "class_pred": c}))
                .collect::<Vec<_>>()})
        };
        let why = degenerate(kind("cpsc2021"), &items(&["N", "N", "N"]), None).unwrap();
        assert!(why.contains("no AF anywhere"), "{why}");
        assert!(degenerate(kind("cpsc2021"), &items(&["AFf", "AFf"]), None).is_some());
        assert_eq!(
            degenerate(kind("cpsc2021"), &items(&["N", "AFp", "N"]), None),
            None
        );
        // Two paroxysmal predictions differ by their episodes: not one answer.
        assert_eq!(
            degenerate(kind("cpsc2021"), &items(&["AFp", "AFp"]), None),
            None
        );
        // One record says nothing.
        assert_eq!(degenerate(kind("cpsc2021"), &items(&["N"]), None), None);
    }

    #[test]
    fn physionet2022_one_murmur_and_one_outcome_class() {
        let items = |pairs: &[(&str, &str)]| {
            json!({"items": pairs.iter().map(|(m, o)| json!({
                "patient": "p", "murmur_output": m, "outcome_output": o}))
                .collect::<Vec<_>>()})
        };
        let why = degenerate(
            kind("physionet2022"),
            &items(&[("Absent", "Normal"), ("Absent", "Normal")]),
            None,
        )
        .unwrap();
        assert!(why.contains("murmur Absent, outcome Normal"), "{why}");
        assert_eq!(
            degenerate(
                kind("physionet2022"),
                &items(&[("Absent", "Normal"), ("Absent", "Abnormal")]),
                None
            ),
            None
        );
        assert_eq!(
            degenerate(
                kind("physionet2022"),
                &items(&[("Present", "Normal"), ("Absent", "Normal")]),
                None
            ),
            None
        );
    }

    #[test]
    fn p300_one_character_for_every_trial() {
        let session = |codes: &[i64]| {
            json!({
                "trials": codes.iter().map(|_| json!({"subject": "S1", "outcome": "no_report"}))
                    .collect::<Vec<_>>(),
                "log": codes.iter().enumerate().map(|(i, c)| json!({
                    "index": i, "code": c, "status": "accepted", "trial": i,
                    "sequences": 2, "correct": false}))
                    .chain([json!({"index": 99, "code": 7, "status": "later", "trial": 0})])
                    .collect::<Vec<_>>(),
            })
        };
        let report = json!({"score": 0.0});
        let why = degenerate(kind("itr"), &report, Some(&session(&[101, 101, 101]))).unwrap();
        assert!(why.contains("101"), "{why}");
        assert_eq!(
            degenerate(kind("itr"), &report, Some(&session(&[101, 102, 101]))),
            None
        );
        assert_eq!(degenerate(kind("itr"), &report, None), None);
    }

    #[test]
    fn the_runtime_lock_id_names_the_compiled_lock() {
        let id = runtime_lock_id();
        assert!(id.starts_with("sha256:") && id.len() == 7 + 16, "{id}");
        assert_eq!(id, runtime_lock_id());
    }
}
