//! The P300 speller in simulated real time: the stream driver scores the session as it
//! runs, by the information transfer rate (`score::itr`); a stored session log is
//! scored again here.

use std::collections::HashSet;
use std::path::Path;

use serde_json::Value;

use super::{Kind, Scored};
use crate::challenge::RankingNumber;
use crate::result::ScoreSummary;
use crate::{Challenge, JudgeError};

mod entries;
mod quiz;
mod view;

pub(super) struct P300Speller;

impl Kind for P300Speller {
    /// Scored by the information transfer rate, as definitions have always named it.
    fn id(&self) -> &'static str {
        "itr"
    }

    fn streams(&self) -> bool {
        true
    }

    fn quiz_view(&self, report: &Value) -> super::quiz::QuizView {
        quiz::quiz_view(report, self.prediction_fields())
    }

    fn shipped(&self) -> super::Shipped {
        entries::SHIPPED
    }

    fn record_view(
        &self,
        data: &Path,
        outputs: &Path,
        name: &str,
        _ask: super::view::Ask,
    ) -> Result<super::view::RecordView, String> {
        view::record_view(data, outputs, name)
    }

    /// The stream driver scores its own session; there is no folder of outputs.
    fn score_folder(
        &self,
        _data: &Path,
        _ids: &HashSet<&str>,
        _taken: &Path,
    ) -> Result<Option<Scored>, JudgeError> {
        Ok(None)
    }

    fn score_session(
        &self,
        challenge: &Challenge,
        session: &Path,
    ) -> Option<Result<ScoreSummary, JudgeError>> {
        if !session.is_file() {
            return None;
        }
        Some(crate::rescore::read_json(session).and_then(|log| itr_again(challenge, &log, session)))
    }

    /// A session report has no items; its per-subject table holds aggregates.
    fn ranking(&self) -> &'static [RankingNumber] {
        const RANKING: &[RankingNumber] =
            &[
                RankingNumber::score("information transfer rate", Some("bits/min"))
                    // Zero when no character is right more often than chance; no upper bound.
                    .within(Some(0.0), None),
            ];
        RANKING
    }

    fn prediction_fields(&self) -> &'static [&'static str] {
        &[]
    }

    /// One character for every trial (the accepted reports of the session log).
    fn degenerate(&self, _report: &Value, session: Option<&Value>) -> Option<String> {
        let codes: Vec<i64> = session?
            .get("log")?
            .as_array()?
            .iter()
            .filter(|e| e.get("status").and_then(Value::as_str) == Some("accepted"))
            .filter_map(|e| e.get("code").and_then(Value::as_i64))
            .collect();
        let trials = session?.get("trials")?.as_array()?.len();
        // Every trial answered, and with one character.
        (trials >= 2 && codes.len() == trials && codes.iter().all(|c| *c == codes[0])).then(|| {
            format!(
                "character code {} for every one of {trials} trials",
                codes[0]
            )
        })
    }

    fn reads_session(&self) -> bool {
        true
    }

    fn scoring_text(&self) -> &'static str {
        "The information transfer rate in bits per minute, from the accuracy and the time each \
         character took; a report outside the valid window counts as wrong at 9 s. The mean over \
         subjects, higher is better."
    }
}

/// A stored session log's ITR, recomputed from its trials with this scorer: each
/// subject's trials (in the order the session listed its subjects) through
/// `score::itr`, and the report the session stage writes.
fn itr_again(
    challenge: &Challenge,
    session: &Value,
    path: &Path,
) -> Result<crate::result::ScoreSummary, JudgeError> {
    let bad = |what: &str| JudgeError::Internal {
        message: format!("{}: {what}", path.display()),
    };
    let trials = session
        .get("trials")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("no trials"))?;
    let mut order: Vec<String> = session
        .pointer("/summary/subjects")
        .and_then(Value::as_array)
        .map(|s| {
            s.iter()
                .filter_map(|s| s.get("subject").and_then(Value::as_str).map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let mut per: Vec<Vec<score::itr::Trial>> = vec![Vec::new(); order.len()];
    for t in trials {
        let subject = t
            .get("subject")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("a trial without its subject"))?;
        let trial = match t.get("outcome").and_then(Value::as_str) {
            Some("reported") => score::itr::Trial::Reported {
                correct: t
                    .get("correct")
                    .and_then(Value::as_bool)
                    .ok_or_else(|| bad("a reported trial without `correct`"))?,
                sequences: t
                    .get("sequences")
                    .and_then(Value::as_u64)
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| bad("a reported trial without `sequences`"))?,
            },
            Some("no_report") => score::itr::Trial::NoReport,
            _ => return Err(bad("a trial of unknown outcome")),
        };
        let i = match order.iter().position(|s| s == subject) {
            Some(i) => i,
            None => {
                order.push(subject.to_owned());
                per.push(Vec::new());
                order.len() - 1
            }
        };
        per[i].push(trial);
    }
    let subjects = order
        .iter()
        .zip(&per)
        .map(|(name, t)| score::itr::subject(name, t))
        .collect();
    let summary = score::itr::summarize(subjects);
    let accepted = session
        .get("log")
        .and_then(Value::as_array)
        .map(|l| {
            l.iter()
                .filter(|e| e.get("status").and_then(Value::as_str) == Some("accepted"))
                .count()
        })
        .unwrap_or(0);
    let count = |k: &str| session.get(k).and_then(Value::as_u64).unwrap_or(0) as usize;
    Ok(crate::pipeline::stream::itr_report(
        &challenge.id,
        &summary,
        trials.len(),
        count("reports"),
        accepted,
        session
            .get("finished")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn itr_again_recomputes_the_sessions_report() {
        let c = Challenge::built_in("p300speller").unwrap();
        let trials = [
            ("S1", Some((true, 2))),
            ("S1", Some((true, 3))),
            ("S2", Some((false, 5))),
            ("S2", None),
        ];
        let session = json!({
            "summary": {"subjects": [{"subject": "S1"}, {"subject": "S2"}]},
            "trials": trials.iter().map(|(s, t)| match t {
                Some((c, n)) => json!({"subject": s, "outcome": "reported", "correct": c,
                    "sequences": n}),
                None => json!({"subject": s, "outcome": "no_report"}),
            }).collect::<Vec<_>>(),
            "log": [{"status": "accepted"}, {"status": "accepted"}, {"status": "accepted"}],
            "reports": 5,
            "finished": true,
        });
        let got = itr_again(&c, &session, Path::new("session.json")).unwrap();
        let s1 = score::itr::subject(
            "S1",
            &[
                score::itr::Trial::Reported {
                    correct: true,
                    sequences: 2,
                },
                score::itr::Trial::Reported {
                    correct: true,
                    sequences: 3,
                },
            ],
        );
        assert_eq!(got.report["subjects"][0]["itr"].as_f64(), Some(s1.itr));
        assert_eq!(got.report["subjects"][1]["itr"].as_f64(), Some(0.0));
        assert_eq!(got.score, s1.itr / 2.0);
        assert_eq!(got.report["accepted_reports"], 3);
        assert_eq!(got.report["trials"], 4);
    }
}
