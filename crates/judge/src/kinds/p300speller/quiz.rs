//! The P300 speller's quiz report on a submission's page: the mean information transfer
//! rate, then the ITR, accuracy and time per subject.

use serde_json::Value;

use crate::kinds::quiz::{Cell, Fact, Part, QuizView, Table, figure, records};

pub(super) fn quiz_view(r: &Value, prediction: &[&str]) -> QuizView {
    let Some(subjects) = r.get("subjects").and_then(Value::as_array) else {
        return QuizView::plain(r, Some(prediction), &[]);
    };
    let rows = subjects
        .iter()
        .map(|s| {
            let name = s.get("subject").and_then(Value::as_str).unwrap_or("?");
            std::iter::once(Cell::text(name))
                .chain(
                    ["trials", "correct", "accuracy", "mean_seconds", "itr"]
                        .iter()
                        .map(|k| Cell::number(figure(s.get(*k)))),
                )
                .collect()
        })
        .collect();
    QuizView {
        parts: vec![
            Part::Facts(vec![Fact::new(
                "Mean information transfer rate",
                format!("{} bits/min", figure(r.get("score"))),
            )]),
            Part::Table(Table {
                caption: Some("Per subject".into()),
                head: [
                    "Subject",
                    "Trials",
                    "Correct",
                    "Accuracy",
                    "Seconds per trial",
                    "ITR (bits/min)",
                ]
                .map(String::from)
                .to_vec(),
                rows,
            }),
        ],
        records: records(r, Some(prediction), &[]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_session_report_is_a_row_per_subject() {
        let r = json!({"score": 12.5, "subjects": [
            {"subject": "S1", "trials": 12, "correct": 9, "accuracy": 0.75,
             "mean_seconds": 4.25, "itr": 12.5}]});
        let v = quiz_view(&r, &[]);
        assert_eq!(
            v.parts[0],
            Part::Facts(vec![Fact::new(
                "Mean information transfer rate",
                "12.5 bits/min"
            )])
        );
        let Part::Table(t) = &v.parts[1] else {
            panic!("{v:?}")
        };
        let row: Vec<&str> = t.rows[0].iter().map(|c| c.text.as_str()).collect();
        assert_eq!(row, ["S1", "12", "9", "0.75", "4.25", "12.5"]);
        assert!(v.records.is_none());
    }
}
