//! What a participant is shown of a scored split (docs/judge.md, "What a participant
//! sees"). The organiser's full reports go to `private/`; these views are all that goes
//! into `result.json`.
//!
//! - The exam: the challenge's ranking numbers only, rounded to its `score_precision`.
//!   Anything more (AUROC, F-measure, accuracy, cost, per-class figures, even the exact
//!   ranking number) narrows the set of hidden label assignments that reproduce it: one
//!   submission whose outputs encode each patient's position, and nine exam patients,
//!   were enough to recover every label from the full figures.
//! - The quiz: the whole report, except that each item keeps only what comes from the
//!   entry's own output (its answer, whether it was defaulted) unless the challenge
//!   declares its quiz split public. An allow-list, so that a field a scorer adds later
//!   stays hidden until someone decides it may be shown.

use serde_json::Value;

use crate::challenge::{Challenge, ScorerId};
use crate::result::{ExamScore, RankedNumber};

/// `x` rounded to `decimals` decimal places, as its decimal text would be printed
/// (Rust's formatting rounds the exact binary value correctly, ties to even); a
/// non-finite `x` is returned as is.
pub fn round_to(x: f64, decimals: u32) -> f64 {
    if !x.is_finite() {
        return x;
    }
    // The text of a finite double always parses back.
    format!("{x:.*}", decimals as usize).parse().unwrap_or(x)
}

/// The exam as a participant sees it: each ranking number of the challenge, rounded.
pub fn exam_view(c: &Challenge, report: &Value) -> ExamScore {
    let ranking = c
        .scorer
        .ranking()
        .iter()
        .map(|r| RankedNumber {
            key: r.key.to_string(),
            value: report
                .get(r.key)
                .and_then(Value::as_f64)
                .filter(|v| v.is_finite())
                .map(|v| round_to(v, c.score_precision)),
            better: r.better,
        })
        .collect();
    ExamScore {
        precision: c.score_precision,
        ranking,
    }
}

/// The fields of a report's `items` that come from the entry's own output, by scorer.
fn prediction_fields(scorer: ScorerId) -> &'static [&'static str] {
    match scorer {
        ScorerId::Cpsc2021 => &["record", "file", "class_pred", "defaulted"],
        ScorerId::Cinc2017 => &["record", "answer", "defaulted"],
        ScorerId::Physionet2022 => &[
            "patient",
            "file",
            "murmur_output",
            "outcome_output",
            "murmur_scores",
            "outcome_scores",
            "defaulted",
        ],
        // A session report has no items; its per-subject table holds aggregates.
        ScorerId::Itr => &[],
    }
}

/// The quiz report as a participant sees it: whole when the challenge reveals quiz
/// labels, else with each item cut to the fields that come from the entry's output.
pub fn quiz_view(c: &Challenge, report: &Value) -> Value {
    if c.reveal_quiz_labels {
        return report.clone();
    }
    let keep = prediction_fields(c.scorer);
    let mut out = report.clone();
    if let Some(Value::Array(items)) = out.get_mut("items") {
        for item in items {
            if let Value::Object(o) = item {
                o.retain(|k, _| keep.contains(&k.as_str()));
            } else {
                *item = Value::Null;
            }
        }
    }
    out
}

/// A stream quiz's session log as a participant sees it: without whether each trial and
/// report was correct (which, beside the report's code, is the trial's target) unless
/// the challenge reveals quiz labels.
pub fn quiz_session_view(c: &Challenge, session: &Value) -> Value {
    let mut out = session.clone();
    if c.reveal_quiz_labels {
        return out;
    }
    for list in ["trials", "log"] {
        if let Some(Value::Array(entries)) = out.get_mut(list) {
            for e in entries {
                if let Value::Object(o) = e {
                    o.remove("correct");
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn challenge(id: &str) -> Challenge {
        Challenge::built_in(id).unwrap()
    }

    #[test]
    fn rounding_is_that_of_the_printed_decimals() {
        assert_eq!(round_to(0.123_456, 3), 0.123);
        assert_eq!(round_to(0.1236, 3), 0.124);
        assert_eq!(round_to(-12_345.678_9, 0), -12_346.0);
        assert_eq!(round_to(2.5, 0), 2.0);
        assert!(round_to(f64::NAN, 3).is_nan());
    }

    #[test]
    fn the_exam_shows_the_ranking_numbers_only() {
        let report = serde_json::json!({
            "challenge": "physionet2022",
            "mode": "strict",
            "score": 0.512_345,
            "outcome_cost": 12_000.456,
            "murmur": {"auroc": 0.7, "confusion": [[1, 2], [3, 4]]},
            "items": [{"patient": "85031"}],
            "errors": [{"file": "85031.csv", "reason": "x"}],
        });
        let v = serde_json::to_value(exam_view(&challenge("physionet2022"), &report)).unwrap();
        assert_eq!(
            v,
            serde_json::json!({
                "precision": 3,
                "ranking": [
                    {"key": "score", "value": 0.512, "better": "higher"},
                    {"key": "outcome_cost", "value": 12_000.456, "better": "lower"},
                ],
            })
        );
    }

    #[test]
    fn quiz_items_lose_their_references_unless_the_quiz_is_public() {
        let report = serde_json::json!({
            "score": 0.5,
            "items": [{"record": "data_1_1", "class_true": "AFp", "class_pred": "N",
                       "ma": 1, "mr": 2, "ur": -1.0, "ue": 0.0, "u": -1.0,
                       "file": "data_1_1.json", "defaulted": false}],
        });
        let mut c = challenge("cpsc2021");
        let v = quiz_view(&c, &report);
        assert_eq!(
            v["items"][0],
            serde_json::json!({"record": "data_1_1", "class_pred": "N",
                               "file": "data_1_1.json", "defaulted": false})
        );
        assert_eq!(v["score"], 0.5);
        c.reveal_quiz_labels = true;
        assert_eq!(quiz_view(&c, &report), report);
    }

    fn json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            any::<f64>().prop_map(|f| serde_json::json!(f)),
            any::<i64>().prop_map(|i| serde_json::json!(i)),
            "[a-z_]{0,8}".prop_map(Value::String),
            Just(Value::Null),
        ];
        leaf.prop_recursive(3, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::btree_map(
                    prop_oneof!["score", "outcome_cost", "items", "murmur", "[a-z]{1,6}"],
                    inner,
                    0..6
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// Whatever a scorer's report holds, the exam as shown carries the challenge's
        /// ranking numbers, at its precision, and nothing else.
        #[test]
        fn an_exam_view_carries_nothing_but_rounded_ranking_numbers(
            report in json(),
            id in prop_oneof!["cpsc2021", "cinc2017", "physionet2022", "p300speller"],
            precision in 0u32..=6,
        ) {
            let mut c = challenge(&id);
            c.score_precision = precision;
            let shown = exam_view(&c, &report);
            let keys: Vec<&str> = shown.ranking.iter().map(|r| r.key.as_str()).collect();
            let want: Vec<&str> = c.scorer.ranking().iter().map(|r| r.key).collect();
            prop_assert_eq!(keys, want);
            for r in &shown.ranking {
                if let Some(v) = r.value {
                    prop_assert!(v.is_finite());
                    prop_assert_eq!(round_to(v, precision), v);
                }
            }
            let text = serde_json::to_value(&shown).unwrap();
            let o = text.as_object().unwrap();
            prop_assert_eq!(o.len(), 2);
        }
    }
}
