//! CinC 2017's quiz report on a submission's page: the two means of F1, F1 per class
//! with how many records are of it and were answered it, and the 4×4 confusion matrix
//! (rows the truth, as the scorer keeps it).

use serde_json::Value;

use crate::kinds::quiz::{Cell, Confusion, Part, QuizView, Table, fact, figure, matrix, records};

/// The classes in the scorer's order, with their words.
const CLASSES: [(&str, &str); 4] = [
    ("N", "N — normal rhythm"),
    ("A", "A — atrial fibrillation"),
    ("O", "O — other rhythm"),
    ("~", "~ — too noisy"),
];

pub(super) fn quiz_view(r: &Value, prediction: &[&str]) -> QuizView {
    if r.get("f1").is_none() || r.get("confusion").is_none() {
        return QuizView::plain(r, Some(prediction), &[]);
    }
    let m = matrix(r.get("confusion"));
    let count = |n: Option<u64>| Cell::number(n.map_or("—".into(), |n| n.to_string()));
    let rows = CLASSES
        .iter()
        .enumerate()
        .map(|(i, (c, words))| {
            let truth = m
                .as_ref()
                .map(|m| m.get(i).map_or(0, |row| row.iter().sum()));
            let answered = m.as_ref().map(|m| {
                m.iter()
                    .map(|row| row.get(i).copied().unwrap_or(0))
                    .sum::<u64>()
            });
            vec![
                Cell::text(*words),
                // `~` is escaped in a JSON pointer.
                Cell::number(figure(r.pointer(&format!("/f1/{}", c.replace('~', "~0"))))),
                count(truth),
                count(answered),
            ]
        })
        .collect();
    let mut parts = vec![
        Part::Facts(vec![
            fact(r, "score", "Score (mean F1 of N, A and O)"),
            fact(r, "score_4class", "Mean F1 of all four classes"),
        ]),
        Part::Table(Table {
            caption: Some("Per class".into()),
            head: ["Class", "F1", "In the truth", "Answered"]
                .map(String::from)
                .to_vec(),
            rows,
        }),
    ];
    if let Some(counts) = m {
        parts.push(Part::Confusion(Confusion {
            caption: "Confusion matrix.".into(),
            classes: CLASSES.map(|(c, _)| c.to_owned()).to_vec(),
            counts,
        }));
    }
    QuizView {
        parts,
        records: records(r, Some(prediction), &[]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_report_has_its_classes_and_its_matrix() {
        let r = json!({
            "challenge": "cinc2017", "score": 0.5, "score_4class": 0.4,
            "f1": {"N": 0.8, "A": 0.5, "O": 0.2, "~": null},
            "confusion": [[4, 1, 0, 0], [0, 1, 1, 0], [1, 0, 1, 0], [0, 0, 0, 0]],
            "items": [{"record": "A0001", "answer": "N", "defaulted": false}],
        });
        let v = quiz_view(&r, &["record", "answer", "defaulted"]);
        let Part::Table(t) = &v.parts[1] else {
            panic!("{v:?}")
        };
        assert_eq!(t.rows[1][0].text, "A — atrial fibrillation");
        // 5 records are N, 5 were answered N.
        assert_eq!(
            (t.rows[0][2].text.as_str(), t.rows[0][3].text.as_str()),
            ("5", "5")
        );
        // The noisy class's F1 is undefined, said as "—", not as NaN or 0.
        assert_eq!(t.rows[3][1].text, "—");
        let Part::Confusion(c) = &v.parts[2] else {
            panic!("{v:?}")
        };
        assert_eq!(c.counts[0], [4, 1, 0, 0]);
        assert_eq!(c.classes, ["N", "A", "O", "~"]);
        // The items hold only the entry's answers: the truth stays private.
        let recs = v.records.unwrap();
        assert_eq!(recs.rows, [["A0001", "N", "no"]]);
        assert_eq!(recs.revealed, Some(false));
    }

    #[test]
    fn a_report_of_another_shape_shows_its_figures() {
        let v = quiz_view(&json!({"score": 0.61, "errors": ["A0003: no answer"]}), &[]);
        assert_eq!(
            v.parts,
            [Part::Facts(vec![crate::kinds::quiz::Fact::new(
                "score", "0.61"
            )])]
        );
    }
}
