//! CPSC 2021, paroxysmal AF event detection: one `<record>.json` of AF episodes per
//! record, scored by U (`score::cpsc2021`).

use std::collections::HashSet;
use std::path::Path;

use serde_json::Value;

use super::{Kind, Scored, data_error, item_count, one_value, to_json, unusable};
use crate::JudgeError;
use crate::challenge::RankingNumber;

mod entries;
mod quiz;
mod view;

pub(super) struct Cpsc2021;

impl Kind for Cpsc2021 {
    fn id(&self) -> &'static str {
        "cpsc2021"
    }

    /// The folder interface's `entry_2021.py` (a `Result.m` entry's MATLAB layout).
    fn python_main(&self, interface: crate::challenge::Interface) -> Option<&'static str> {
        (interface == crate::challenge::Interface::Folder).then_some("entry_2021.py")
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
        let mut reference = score::cpsc2021::load_reference(data).map_err(&fail)?;
        reference.records.retain(|r| ids.contains(r.name.as_str()));
        let rep = score::cpsc2021::score(&reference, taken, score::Mode::Strict).map_err(&fail)?;
        let defaulted = unusable(
            rep.items
                .iter()
                .map(|i| (&i.record, i.defaulted, i.file.is_some())),
            &rep.errors,
        );
        Ok(Some(Scored {
            score: rep.score,
            report: to_json(&rep),
            defaulted,
        }))
    }

    fn ranking(&self) -> &'static [RankingNumber] {
        const RANKING: &[RankingNumber] = &[RankingNumber::score("CPSC 2021 score U", None)];
        RANKING
    }

    fn prediction_fields(&self) -> &'static [&'static str] {
        &["record", "file", "class_pred", "defaulted"]
    }

    /// No AF episode in any record (every record N), or every record AF throughout.
    fn degenerate(&self, report: &Value, _session: Option<&Value>) -> Option<String> {
        let n = item_count(report);
        match one_value(report, "class_pred").as_deref() {
            Some("N") => Some(format!("no AF anywhere: every one of {n} records is N")),
            Some("AFf") => Some(format!("every one of {n} records is AF throughout")),
            _ => None,
        }
    }

    fn output_suffix(&self) -> &'static str {
        ".json"
    }

    fn scoring_text(&self) -> &'static str {
        "The CPSC 2021 score U: each record scores its class decision (normal, persistent or \
         paroxysmal AF) plus, for paroxysmal records, how well the onsets and offsets match the \
         truth; the challenge score is the mean. Higher is better."
    }
}
