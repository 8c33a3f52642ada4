//! The toy kind: one answer a record, `RECORD,CLASS` lines in `answers.txt` (what the
//! per-record interface collects), scored by the fraction of records answered right
//! against `REFERENCE.csv` (the cinc2017 layout's reference). Everything a kind must say,
//! in one file outside the judge crate: what `judge::kinds::register` takes.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use judge::JudgeError;
use judge::challenge::RankingNumber;
use judge::kinds::view::{Ask, Fact, RecordView};
use judge::kinds::{Kind, Scored};
use serde_json::{Value, json};

pub struct Toy;

/// `RECORD,CLASS` lines as a map: blanks trimmed, a line without a comma skipped, the
/// last answer for a record kept.
pub fn pairs(text: &str) -> HashMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once(','))
        .map(|(r, c)| (r.trim().to_owned(), c.trim().to_owned()))
        .collect()
}

/// The reference of a data folder in the cinc2017 layout.
fn reference(data: &Path) -> Result<HashMap<String, String>, JudgeError> {
    let path = data.join("REFERENCE.csv");
    let text = std::fs::read_to_string(&path).map_err(|e| JudgeError::Data {
        path: Some(path.clone()),
        message: e.to_string(),
    })?;
    Ok(pairs(&text))
}

/// An output folder's answers (none when it has no `answers.txt`).
fn answers(outputs: &Path) -> HashMap<String, String> {
    std::fs::read_to_string(outputs.join("answers.txt"))
        .map(|t| pairs(&t))
        .unwrap_or_default()
}

impl Kind for Toy {
    fn id(&self) -> &'static str {
        "toy"
    }

    fn score_folder(
        &self,
        data: &Path,
        ids: &HashSet<&str>,
        taken: &Path,
    ) -> Result<Option<Scored>, JudgeError> {
        let truth = reference(data)?;
        let given = answers(taken);
        let mut ids: Vec<&str> = ids.iter().copied().collect();
        ids.sort_unstable();
        let items: Vec<Value> = ids
            .iter()
            .map(|id| {
                let answer = given.get(*id);
                json!({
                    "record": id,
                    "answer": answer,
                    "right": answer.is_some() && answer == truth.get(*id),
                })
            })
            .collect();
        let right = items.iter().filter(|i| i["right"] == true).count();
        let score = right as f64 / ids.len().max(1) as f64;
        let defaulted = ids
            .iter()
            .filter(|id| !given.contains_key(**id))
            .map(|id| (id.to_string(), None))
            .collect();
        Ok(Some(Scored {
            score,
            report: json!({"score": score, "right": right, "items": items}),
            defaulted,
        }))
    }

    fn ranking(&self) -> &'static [RankingNumber] {
        const RANKING: &[RankingNumber] =
            &[RankingNumber::score("fraction right", None).within(Some(0.0), Some(1.0))];
        RANKING
    }

    fn prediction_fields(&self) -> &'static [&'static str] {
        &["record", "answer"]
    }

    /// One answer (or none) for every record.
    fn degenerate(&self, report: &Value, _session: Option<&Value>) -> Option<String> {
        let items = report.get("items")?.as_array()?;
        let first = items.first()?.get("answer")?;
        (items.len() > 1 && items.iter().all(|i| i.get("answer") == Some(first)))
            .then(|| format!("every one of {} records is answered {first}", items.len()))
    }

    fn scoring_text(&self) -> &'static str {
        "The fraction of records answered right. Higher is better."
    }

    fn record_view(
        &self,
        data: &Path,
        outputs: &Path,
        name: &str,
        _ask: Ask,
    ) -> Result<RecordView, String> {
        let truth = reference(data).map_err(|e| e.to_string())?;
        let truth = truth
            .get(name)
            .ok_or_else(|| format!("no record {name} in REFERENCE.csv"))?;
        let mut view = RecordView::default();
        view.facts.push(Fact::new("Truth", truth));
        match answers(outputs).get(name) {
            Some(a) => view.facts.push(Fact::new("Answer", a).judged(a == truth)),
            None => view.problems.push("no answer".into()),
        }
        Ok(view)
    }
}
