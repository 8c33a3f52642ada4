//! PhysioNet 2022's quiz report on a submission's page: the two ranking numbers, then per
//! task (murmur, outcome) its figures, its figures per class, and its confusion matrix
//! (which the scorer keeps with rows as the answer; shown, like the others, with rows
//! as the truth).

use serde_json::Value;

use crate::kinds::quiz::{
    Cell, Confusion, Part, QuizView, Table, fact, figure, matrix, records, transpose,
};

/// Item fields not listed: each patient's class scores (numbers that say little there).
const HIDDEN: [&str; 2] = ["murmur_scores", "outcome_scores"];

/// A task's figures per class, in the table's column order.
const PER_CLASS: [&str; 4] = ["auroc", "auprc", "f_measure", "accuracy"];

pub(super) fn quiz_view(r: &Value, prediction: &[&str]) -> QuizView {
    if r.get("murmur").is_none() || r.get("outcome").is_none() {
        return QuizView::plain(r, Some(prediction), &HIDDEN);
    }
    let mut parts = vec![Part::Facts(vec![
        fact(r, "score", "Murmur weighted accuracy"),
        fact(r, "outcome_cost", "Outcome cost"),
    ])];
    for (key, name) in [("murmur", "Murmur"), ("outcome", "Outcome")] {
        let Some(t) = r.get(key) else { continue };
        let classes: Vec<String> = t
            .get("classes")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|c| c.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        parts.push(Part::Heading(name.into()));
        parts.push(Part::Facts(
            [
                ("auroc", "AUROC"),
                ("auprc", "AUPRC"),
                ("f_measure", "F-measure"),
                ("accuracy", "Accuracy"),
                ("weighted_accuracy", "Weighted accuracy"),
                ("cost", "Cost"),
            ]
            .iter()
            .map(|(k, label)| fact(t, k, label))
            .collect(),
        ));
        parts.push(Part::Table(Table {
            caption: Some(format!("{name}, per class")),
            head: ["Class", "AUROC", "AUPRC", "F-measure", "Accuracy"]
                .map(String::from)
                .to_vec(),
            rows: classes
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    std::iter::once(Cell::text(c.as_str()))
                        .chain(PER_CLASS.iter().map(|k| {
                            Cell::number(figure(t.pointer(&format!("/per_class/{k}/{i}"))))
                        }))
                        .collect()
                })
                .collect(),
        }));
        if let Some(m) = matrix(t.get("confusion")) {
            parts.push(Part::Confusion(Confusion {
                caption: format!("{name}: confusion matrix."),
                classes,
                counts: transpose(&m),
            }));
        }
    }
    QuizView {
        parts,
        records: records(r, Some(prediction), &HIDDEN),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn matrices_are_turned_to_rows_of_truth() {
        let task = |classes: Value, confusion: Value| {
            json!({"classes": classes, "auroc": 0.7, "auprc": 0.6, "f_measure": 0.5,
                "accuracy": 0.5, "weighted_accuracy": 0.6, "cost": 100.0,
                "per_class": {"auroc": [0.7, 0.7], "auprc": [0.6, 0.6], "f_measure": [0.5, 0.5], "accuracy": [0.5, 0.5]},
                "confusion": confusion})
        };
        let r = json!({
            "score": 0.6, "outcome_cost": 12000.0,
            "murmur": task(json!(["Present", "Absent"]), json!([[3, 1], [0, 2]])),
            "outcome": task(json!(["Abnormal", "Normal"]), json!([[1, 0], [0, 1]])),
        });
        let v = quiz_view(&r, &[]);
        let headings: Vec<&Part> = v
            .parts
            .iter()
            .filter(|p| matches!(p, Part::Heading(_)))
            .collect();
        assert_eq!(headings.len(), 2, "{v:?}");
        let Some(Part::Confusion(c)) = v.parts.iter().find(|p| matches!(p, Part::Confusion(_)))
        else {
            panic!("{v:?}")
        };
        // The scorer's rows are answers: [[3,1],[0,2]] means 1 Absent answered Present.
        // Turned, the Absent row reads 1 then 2.
        assert_eq!(c.classes, ["Present", "Absent"]);
        assert_eq!(c.counts[1], [1, 2]);
        assert_eq!(c.caption, "Murmur: confusion matrix.");
    }

    #[test]
    fn class_scores_are_not_listed() {
        let r = json!({"score": 0.6, "items": [
            {"patient": "1", "murmur_output": "Absent", "murmur_scores": [0.1, 0.2, 0.7]}]});
        let recs = quiz_view(&r, &["patient", "murmur_output", "murmur_scores"])
            .records
            .unwrap();
        assert_eq!(recs.head, ["patient", "murmur_output"]);
        assert_eq!(recs.revealed, Some(false));
    }
}
