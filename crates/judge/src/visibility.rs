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

use crate::challenge::Challenge;
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

/// Who is asking for a view of a phase's figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Viewer {
    /// An organiser of the platform: sees every figure exactly.
    Organiser,
    /// A member of the team whose submission the view is about (a leaderboard is
    /// about every team: on a board a member is a [`Viewer::Public`]).
    OwnTeam,
    /// Anyone else, signed in or not.
    Public,
}

/// The kinds of view drawn from a phase's figures. Every view that shows a figure, a
/// rank or anything derived from them (a plot, its caption and `aria-label`, an export,
/// an event, a cached answer) is one of these, and asks [`sight`] what it may show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FigureView {
    /// A derived leaderboard (live or final entries) and what is drawn from it or from
    /// the same scored submissions (the plot of the best score over time).
    Board,
    /// A published leaderboard: the snapshot the organisers made public on purpose.
    Published,
    /// One submission's own figures; `published_entry` when it is its team's entry on
    /// the phase's published leaderboard.
    Submission { published_entry: bool },
}

/// What the rule reads of a phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PhaseFacts {
    /// The figures are of the exam split (a quiz's are never hidden).
    pub exam: bool,
    /// The phase shows exam figures while it runs (`show_exam`).
    pub show_exam: bool,
    /// The phase has closed.
    pub closed: bool,
}

/// What a caller may see of a figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sight {
    /// The figure as stored.
    Exact,
    /// The figure rounded to this many decimals (and ranks by the rounded figure).
    Rounded(u32),
    /// Nothing: no figure, no rank, nothing drawn from one; `until_close` when the
    /// phase has not closed yet (the figures may be shown on a later view: the
    /// published leaderboard).
    Withheld { until_close: bool },
}

impl Sight {
    /// `v` as the caller may see it (`None` when withheld).
    pub fn show(self, v: Option<f64>) -> Option<f64> {
        match self {
            Sight::Exact => v,
            Sight::Rounded(d) => v.map(|x| round_to(x, d)),
            Sight::Withheld { .. } => None,
        }
    }

    /// Whether anything at all may be shown.
    pub fn withheld(self) -> bool {
        matches!(self, Sight::Withheld { .. })
    }
}

/// The one rule for what a caller sees of a phase's figures (docs/service.md,
/// "Visibility"): organisers everything exactly; a quiz's figures exactly (each team
/// sees its own quiz report in full anyway); exam figures at the challenge's
/// `precision`, and in a phase that hides them (`show_exam = false`) none at all but
/// on the published leaderboard and, once the phase has closed, a team's own
/// published entry.
pub fn sight(viewer: Viewer, view: FigureView, phase: PhaseFacts, precision: u32) -> Sight {
    if viewer == Viewer::Organiser || !phase.exam {
        return Sight::Exact;
    }
    if phase.show_exam {
        return Sight::Rounded(precision);
    }
    let shown = match view {
        FigureView::Published => true,
        FigureView::Submission { published_entry } => {
            viewer == Viewer::OwnTeam && phase.closed && published_entry
        }
        FigureView::Board => false,
    };
    if shown {
        Sight::Rounded(precision)
    } else {
        Sight::Withheld {
            until_close: !phase.closed,
        }
    }
}

/// Ranks of rows as shown: `figures[i]` is row `i`'s shown figure (better first when
/// `higher`), `received[i]` when it was submitted. Returns the rows' order and each
/// one's rank: by the shown figure, a missing one last; equal shown figures share a
/// rank (1, 1, 3) and are listed by submission time. Ranking by the exact figure
/// behind a rounded one would tell its hidden digits.
pub fn shown_ranks<T: Ord + Copy>(
    figures: &[Option<f64>],
    received: &[T],
    higher: bool,
) -> Vec<(usize, u32)> {
    let mut order: Vec<usize> = (0..figures.len().min(received.len())).collect();
    let cmp = |a: &Option<f64>, b: &Option<f64>| match (a, b) {
        (Some(x), Some(y)) => {
            let o = x.partial_cmp(y).unwrap_or(std::cmp::Ordering::Equal);
            if higher { o.reverse() } else { o }
        }
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    };
    // A stable sort: rows equal in figure and time keep the order they came in.
    order.sort_by(|&a, &b| cmp(&figures[a], &figures[b]).then(received[a].cmp(&received[b])));
    let mut out: Vec<(usize, u32)> = Vec::with_capacity(order.len());
    for (i, &row) in order.iter().enumerate() {
        let rank = match out.last() {
            Some(&(prev, rk)) if cmp(&figures[prev], &figures[row]).is_eq() => rk,
            _ => u32::try_from(i + 1).unwrap_or(u32::MAX),
        };
        out.push((row, rank));
    }
    out
}

/// The quiz report as a participant sees it: whole when the challenge reveals quiz
/// labels, else with each item cut to the fields that come from the entry's output.
pub fn quiz_view(c: &Challenge, report: &Value) -> Value {
    if c.reveal_quiz_labels {
        return report.clone();
    }
    let keep = crate::kinds::of(c.scorer).prediction_fields();
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

    #[test]
    fn shown_ranks_share_equal_figures_and_list_ties_by_time() {
        let figs = [Some(0.731), None, Some(0.731), Some(0.9)];
        let at = [3, 0, 1, 2];
        assert_eq!(
            shown_ranks(&figs, &at, true),
            vec![(3, 1), (2, 2), (0, 2), (1, 4)]
        );
        assert_eq!(
            shown_ranks(&figs, &at, false),
            vec![(2, 1), (0, 1), (3, 3), (1, 4)]
        );
    }

    proptest! {
        /// The rule's promises, whatever the phase and caller: organisers and quiz
        /// figures see all; nobody else ever sees more than rounded figures; a phase
        /// that hides its exam shows a derived board to nobody but organisers, and
        /// a submission only to its own team once closed and published.
        #[test]
        fn the_rule_never_shows_a_hidden_exam(
            viewer in prop_oneof![Just(Viewer::Organiser), Just(Viewer::OwnTeam), Just(Viewer::Public)],
            view in prop_oneof![
                Just(FigureView::Board),
                Just(FigureView::Published),
                any::<bool>().prop_map(|p| FigureView::Submission { published_entry: p }),
            ],
            exam in any::<bool>(), show_exam in any::<bool>(), closed in any::<bool>(),
            precision in 0u32..=6,
        ) {
            let facts = PhaseFacts { exam, show_exam, closed };
            let s = sight(viewer, view, facts, precision);
            if viewer == Viewer::Organiser || !exam {
                prop_assert_eq!(s, Sight::Exact);
            } else {
                prop_assert_ne!(s, Sight::Exact);
            }
            if viewer != Viewer::Organiser && exam && !show_exam {
                let may = match view {
                    FigureView::Published => true,
                    FigureView::Board => false,
                    FigureView::Submission { published_entry } => {
                        viewer == Viewer::OwnTeam && closed && published_entry
                    }
                };
                prop_assert_eq!(!s.withheld(), may);
                if s.withheld() {
                    prop_assert_eq!(s, Sight::Withheld { until_close: !closed });
                }
            }
            if let Sight::Rounded(d) = s {
                prop_assert_eq!(d, precision);
            }
        }

        /// Ranks as shown: sorted by figure (missing last), equal figures sharing the
        /// first rank of their run, each row once.
        #[test]
        fn shown_ranks_are_a_ranking(
            figs in prop::collection::vec(prop::option::of(0u8..4), 0..12),
            higher in any::<bool>(),
        ) {
            let f: Vec<Option<f64>> = figs.iter().map(|v| v.map(f64::from)).collect();
            let at: Vec<usize> = (0..f.len()).rev().collect();
            let r = shown_ranks(&f, &at, higher);
            let mut seen: Vec<usize> = r.iter().map(|&(i, _)| i).collect();
            seen.sort_unstable();
            prop_assert_eq!(seen, (0..f.len()).collect::<Vec<_>>());
            for (k, w) in r.windows(2).enumerate() {
                let ((a, ra), (b, rb)) = (w[0], w[1]);
                if f[a] == f[b] {
                    prop_assert_eq!(ra, rb);
                    prop_assert!(at[a] <= at[b]);
                } else {
                    prop_assert_eq!(rb as usize, k + 2);
                }
            }
        }
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
