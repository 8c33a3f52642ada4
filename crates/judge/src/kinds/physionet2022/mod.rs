//! PhysioNet 2022, heart murmurs from PCG: one CSV of murmur and outcome classes with
//! their probabilities per patient, scored by the murmur's weighted accuracy and the
//! outcome's cost (`score::physionet2022`).

use std::collections::HashSet;
use std::path::Path;

use serde_json::Value;

use super::{Kind, Scored, data_error, item_count, one_value, to_json, unusable};
use crate::JudgeError;
use crate::challenge::{Better, RankingNumber};

mod entries;
mod quiz;
mod view;

pub(super) struct Physionet2022;

impl Kind for Physionet2022 {
    fn id(&self) -> &'static str {
        "physionet2022"
    }

    /// The train-run interface's `team_code.py` (the `train_model.m`, `run_model.m`
    /// MATLAB layout).
    fn python_main(&self, interface: crate::challenge::Interface) -> Option<&'static str> {
        (interface == crate::challenge::Interface::TrainRun).then_some("team_code.py")
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
        let mut reference = score::physionet2022::load_labels(data).map_err(&fail)?;
        reference.patients.retain(|p| ids.contains(p.id.as_str()));
        let rep =
            score::physionet2022::score(&reference, taken, score::Mode::Strict).map_err(&fail)?;
        let defaulted = unusable(
            rep.items
                .iter()
                .map(|i| (&i.patient, i.defaulted, i.file.is_some())),
            &rep.errors,
        );
        Ok(Some(Scored {
            score: rep.score,
            report: to_json(&rep),
            defaulted,
        }))
    }

    /// Murmur weighted accuracy and outcome cost, ranked separately.
    fn ranking(&self) -> &'static [RankingNumber] {
        const RANKING: &[RankingNumber] = &[
            RankingNumber::score("murmur weighted accuracy", None).within(Some(0.0), Some(1.0)),
            // A mean cost per patient: no upper bound.
            RankingNumber {
                key: "outcome_cost",
                name: "outcome cost",
                unit: None,
                better: Better::Lower,
                min: Some(0.0),
                max: None,
            },
        ];
        RANKING
    }

    fn prediction_fields(&self) -> &'static [&'static str] {
        &[
            "patient",
            "file",
            "murmur_output",
            "outcome_output",
            "murmur_scores",
            "outcome_scores",
            "defaulted",
        ]
    }

    /// One murmur class and one outcome class for every patient.
    fn degenerate(&self, report: &Value, _session: Option<&Value>) -> Option<String> {
        let n = item_count(report);
        let murmur = one_value(report, "murmur_output")?;
        let outcome = one_value(report, "outcome_output")?;
        Some(format!(
            "every one of {n} patients is murmur {murmur}, outcome {outcome}"
        ))
    }

    fn scoring_text(&self) -> &'static str {
        "Two rankings: the murmur's weighted accuracy (higher is better) and the outcome's cost \
         (lower is better), each ranked on its own."
    }
}
