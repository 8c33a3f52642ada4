//! What a submission's page shows of a quiz report, as plain data: figures, tables, and
//! confusion matrices under optional headings, then each item's answer. Each kind reads
//! its own report into a [`QuizView`] ([`super::Kind::quiz_view`]); the web site draws
//! any `QuizView` the same way, so a new kind needs no drawing code.
//!
//! The report is the one the reader may see (`visibility::quiz_view`): where a challenge
//! keeps its quiz labels private its items hold only the entry's answers, and the view
//! says so. What this is not: a drawing (no HTML, no colours: the drawer shades a
//! matrix by each row's share).

use serde_json::Value;

pub use super::view::{Cell, Fact, Table};

/// A quiz report as a submission's page shows it: its parts in order, then the items.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QuizView {
    pub parts: Vec<Part>,
    /// Each item's answer (and truth, where the reader may see it); `None` for a report
    /// without items.
    pub records: Option<Records>,
}

/// One part of a quiz view.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// A heading over the parts after it (a task of a report with several).
    Heading(String),
    /// Label → figure pairs, in order.
    Facts(Vec<Fact>),
    /// Figures per class or per subject: the first cell of a row heads it.
    Table(Table),
    Confusion(Confusion),
}

/// A confusion matrix with rows as the truth and columns as the entry's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Confusion {
    /// What it counts (the drawer adds how it reads and how much is on the diagonal).
    pub caption: String,
    pub classes: Vec<String>,
    /// `counts[t][a]`: items of true class `t` answered `a`.
    pub counts: Vec<Vec<u64>>,
}

/// The report's items as a table: one column per field, the item's name first.
#[derive(Debug, Clone, PartialEq)]
pub struct Records {
    /// The fields, as the report names them.
    pub head: Vec<String>,
    /// Per item, per field, its value for people ("—" where it has none).
    pub rows: Vec<Vec<String>>,
    /// Whether the items hold the truth: `Some(false)` when they hold only what came
    /// from the entry (the challenge keeps its quiz labels), `None` when unknown.
    pub revealed: Option<bool>,
}

impl QuizView {
    /// The report's top-level figures by name, then its items (`prediction`: the item
    /// fields that come from the entry, when known; `hidden`: fields not listed).
    pub fn plain(report: &Value, prediction: Option<&[&str]>, hidden: &[&str]) -> QuizView {
        let figures = figures(report);
        QuizView {
            parts: if figures.is_empty() {
                Vec::new()
            } else {
                vec![Part::Facts(figures)]
            },
            records: records(report, prediction, hidden),
        }
    }
}

/// A figure of a report: a number, or "—" where it is undefined (NaN is written as null
/// in JSON: a class in neither the truth nor the answers).
pub fn figure(v: Option<&Value>) -> String {
    super::view::number(v.and_then(Value::as_f64), 4)
}

/// A fact whose value is the figure `report[key]`.
pub fn fact(report: &Value, key: &str, label: &str) -> Fact {
    Fact::new(label, figure(report.get(key)))
}

/// The top-level figures of a report, named by their keys.
pub fn figures(report: &Value) -> Vec<Fact> {
    report
        .as_object()
        .map(|o| {
            o.iter()
                .filter(|(_, v)| v.is_number())
                .map(|(k, v)| Fact::new(k.as_str(), figure(Some(v))))
                .collect()
        })
        .unwrap_or_default()
}

/// `v` as a matrix of counts.
pub fn matrix(v: Option<&Value>) -> Option<Vec<Vec<u64>>> {
    v?.as_array()?
        .iter()
        .map(|r| -> Option<Vec<u64>> { r.as_array()?.iter().map(Value::as_u64).collect() })
        .collect()
}

/// A matrix with rows and columns swapped (for a scorer that keeps rows as the answer).
pub fn transpose(m: &[Vec<u64>]) -> Vec<Vec<u64>> {
    let cols = m.first().map_or(0, Vec::len);
    (0..cols)
        .map(|j| m.iter().map(|r| r.get(j).copied().unwrap_or(0)).collect())
        .collect()
}

/// The fields that name an item, listed first.
const NAMES: [&str; 3] = ["record", "patient", "subject"];

/// The report's items as a table: every field an item has, the name first (the others
/// in the report's order: by name), except `hidden`; `prediction` (when known) says
/// which fields came from the entry, any other being the truth.
pub fn records(report: &Value, prediction: Option<&[&str]>, hidden: &[&str]) -> Option<Records> {
    let items = report.get("items").and_then(Value::as_array)?;
    if items.is_empty() {
        return None;
    }
    let mut head: Vec<&str> = Vec::new();
    for o in items.iter().filter_map(Value::as_object) {
        for k in o.keys() {
            if !head.contains(&k.as_str()) && !hidden.contains(&k.as_str()) {
                head.push(k);
            }
        }
    }
    head.sort_by_key(|c| !NAMES.contains(c));
    let revealed = prediction.map(|p| head.iter().any(|c| !p.contains(c)));
    Some(Records {
        rows: items
            .iter()
            .map(|it| head.iter().map(|c| text(it.get(*c))).collect())
            .collect(),
        head: head.into_iter().map(str::to_owned).collect(),
        revealed,
    })
}

/// A field of an item for people.
fn text(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "—".into(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Bool(b)) => if *b { "yes" } else { "no" }.into(),
        Some(v @ Value::Number(_)) => figure(Some(v)),
        Some(v) => v.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_plain_view_has_the_figures_and_the_items_name_first() {
        let r = json!({"score": 0.61234, "mode": "strict", "items": [
            {"answer": "N", "record": "A0001", "defaulted": false, "scores": [1, 2]},
            {"answer": null, "record": "A0002", "defaulted": true, "scores": [0, 2]},
        ]});
        let v = QuizView::plain(&r, Some(&["record", "answer", "defaulted"]), &["scores"]);
        assert_eq!(
            v.parts,
            vec![Part::Facts(vec![Fact::new("score", "0.6123")])]
        );
        let recs = v.records.unwrap();
        assert_eq!(recs.head, ["record", "answer", "defaulted"]);
        assert_eq!(recs.rows[1], ["A0002", "—", "yes"]);
        // Only the entry's fields: the truth is not among them.
        assert_eq!(recs.revealed, Some(false));
        let v = QuizView::plain(&r, Some(&["record", "answer"]), &["scores"]);
        assert_eq!(v.records.unwrap().revealed, Some(true));
        // Not knowing the entry's fields, the view does not say.
        assert_eq!(
            QuizView::plain(&r, None, &[]).records.unwrap().revealed,
            None
        );
        assert!(
            QuizView::plain(&json!({"items": []}), None, &[])
                .records
                .is_none()
        );
    }

    #[test]
    fn matrices_are_read_and_turned() {
        let m = matrix(Some(&json!([[3, 1], [0, 2]]))).unwrap();
        assert_eq!(transpose(&m), vec![vec![3, 0], vec![1, 2]]);
        assert!(matrix(Some(&json!([[1, "x"]]))).is_none());
        assert!(matrix(None).is_none());
    }
}
