//! PhysioNet/CinC 2017, AF classification from a short single-lead ECG: one line
//! `RECORD,CLASS` per record in `answers.txt`, scored by the mean F1 of N, A and O
//! (`score::cinc2017`).

use std::collections::HashSet;
use std::path::Path;

use serde_json::Value;

use super::{Kind, Scored, data_error, item_count, one_value, problem, to_json};
use crate::JudgeError;
use crate::challenge::RankingNumber;

mod entries;
mod quiz;
mod view;

pub(super) struct Cinc2017;

impl Kind for Cinc2017 {
    fn id(&self) -> &'static str {
        "cinc2017"
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
        ask: super::view::Ask,
    ) -> Result<super::view::RecordView, String> {
        view::record_view(data, outputs, name, ask)
    }

    fn score_folder(
        &self,
        data: &Path,
        ids: &HashSet<&str>,
        taken: &Path,
    ) -> Result<Option<Scored>, JudgeError> {
        let fail = data_error(data);
        let path = data.join("REFERENCE.csv");
        let text = std::fs::read_to_string(&path).map_err(|e| JudgeError::io(&path, e))?;
        let mut reference =
            score::cinc2017::parse_reference(&text, &path.display().to_string()).map_err(&fail)?;
        reference.retain(|(r, _)| ids.contains(r.as_str()));
        let answers = std::fs::read(taken.join("answers.txt")).unwrap_or_default();
        let rep = score::cinc2017::score(
            &reference,
            &String::from_utf8_lossy(&answers),
            "answers.txt",
            score::Mode::Strict,
        )
        .map_err(&fail)?;
        let defaulted = rep
            .items
            .iter()
            .filter(|i| i.defaulted)
            .map(|i| {
                // A record without an answer had no output, rather than an unusable one.
                let why = problem(&rep.errors, &i.record)
                    .filter(|m| !m.contains(&format!("no answer for {}", i.record)));
                (i.record.clone(), why)
            })
            .collect();
        Ok(Some(Scored {
            score: rep.score,
            report: to_json(&rep),
            defaulted,
        }))
    }

    fn ranking(&self) -> &'static [RankingNumber] {
        const RANKING: &[RankingNumber] =
            &[RankingNumber::score("mean F1 of N, A and O", None).within(Some(0.0), Some(1.0))];
        RANKING
    }

    fn prediction_fields(&self) -> &'static [&'static str] {
        &["record", "answer", "defaulted"]
    }

    /// One class for every record.
    fn degenerate(&self, report: &Value, _session: Option<&Value>) -> Option<String> {
        let n = item_count(report);
        one_value(report, "answer").map(|a| format!("every one of {n} records is classed {a}"))
    }

    fn scoring_text(&self) -> &'static str {
        "The mean F1 of the classes Normal, AF and Other (the noisy class is scored but not \
         averaged). A missing answer counts as noisy. Higher is better."
    }
}
