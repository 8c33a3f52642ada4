//! CPSC 2021's quiz report on a submission's page: its figures and, where the items hold
//! the truth, the rhythm classes' confusion matrix counted from them (the scorer keeps
//! none).

use serde_json::Value;

use crate::kinds::quiz::{Confusion, Part, QuizView};

/// The rhythm classes in the scorer's order.
const CLASSES: [&str; 3] = ["N", "AFf", "AFp"];

pub(super) fn quiz_view(r: &Value, prediction: &[&str]) -> QuizView {
    let mut view = QuizView::plain(r, Some(prediction), &[]);
    if let Some(counts) = counts(r) {
        view.parts.push(Part::Confusion(Confusion {
            caption: "Rhythm classes (N non-AF, AFf persistent AF, AFp paroxysmal AF).".into(),
            classes: CLASSES.map(String::from).to_vec(),
            counts,
        }));
    }
    view
}

/// The matrix counted from the items, when every one has its true and answered class.
fn counts(r: &Value) -> Option<Vec<Vec<u64>>> {
    let items = r.get("items").and_then(Value::as_array)?;
    if items.is_empty() {
        return None;
    }
    let at = |v: Option<&Value>| {
        let c = v?.as_str()?;
        CLASSES.iter().position(|x| *x == c)
    };
    let mut m = vec![vec![0u64; CLASSES.len()]; CLASSES.len()];
    for it in items {
        m[at(it.get("class_true"))?][at(it.get("class_pred"))?] += 1;
    }
    Some(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const PREDICTION: [&str; 4] = ["record", "file", "class_pred", "defaulted"];

    #[test]
    fn a_revealed_quiz_gets_a_matrix_from_its_items() {
        let r = json!({"score": 0.9, "items": [
            {"record": "data_0_1", "class_true": "AFp", "class_pred": "AFp", "u": 1.2},
            {"record": "data_1_1", "class_true": "N", "class_pred": "AFf", "u": -1.0},
        ]});
        let v = quiz_view(&r, &PREDICTION);
        let Some(Part::Confusion(c)) = v.parts.last() else {
            panic!("{v:?}")
        };
        assert_eq!(c.counts, [[0, 1, 0], [0, 0, 0], [0, 0, 1]]);
        assert_eq!(v.records.unwrap().revealed, Some(true));
        // Kept private, the items carry no truth, and no matrix is drawn.
        let r = json!({"score": 0.9, "items": [{"record": "data_0_1", "class_pred": "AFp"}]});
        let v = quiz_view(&r, &PREDICTION);
        assert!(!v.parts.iter().any(|p| matches!(p, Part::Confusion(_))));
        assert_eq!(v.records.unwrap().revealed, Some(false));
    }
}
