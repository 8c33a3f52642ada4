//! A submission's quiz report as a page shows it: the figures, a per-class table, the
//! confusion matrix as a table coloured by each row's share, and each record's answer.
//!
//! It draws only what the API's answer holds (`SubmissionView::quiz`, already cut to
//! what this reader may see by `judge::visibility::quiz_view`): a challenge that keeps
//! its quiz labels private sends each record's answer without the truth, and so the
//! page shows the answers alone. Nothing here reads a result file.
//!
//! The reports differ by scorer; each is recognised by its shape (`f1` and a 4×4
//! `confusion` for CinC 2017, `murmur` and `outcome` tasks for PhysioNet 2022,
//! `subjects` for the P300 speller's ITR, items with classes for CPSC 2021), and any
//! other shows its top-level figures.

use maud::{Markup, html};
use serde_json::Value;

use crate::html::num;

/// Records listed at most on the page (a quiz of thousands would make it heavy); the
/// API's JSON has them all.
const RECORDS_SHOWN: usize = 500;

/// A figure of the report: a number, or "—" where it is undefined (NaN is written as
/// null in JSON: a class in neither the truth nor the answers).
fn fig(v: Option<&Value>) -> String {
    num(v.and_then(Value::as_f64), 4)
}

/// The words for CinC 2017's classes.
fn cinc_class(c: &str) -> &'static str {
    match c {
        "N" => "N — normal rhythm",
        "A" => "A — atrial fibrillation",
        "O" => "O — other rhythm",
        "~" => "~ — too noisy",
        _ => "another class",
    }
}

/// A confusion matrix: `m[t][a]` records of true class `t` answered `a`. Each cell is
/// coloured by its share of its row (the true class), in six steps; the words say the
/// count, so the colour only helps the eye.
fn confusion(caption: &str, classes: &[String], m: &[Vec<u64>]) -> Markup {
    let total: u64 = m.iter().flatten().sum();
    let right: u64 = m.iter().enumerate().filter_map(|(i, r)| r.get(i)).sum();
    html! {
        div.scroll { table.confusion {
            caption { (caption) " Rows: the truth; columns: your entry's answer. "
                (right) " of " (total) " on the diagonal." }
            thead { tr { th scope="col" { "truth \\ answer" } @for c in classes { th scope="col" { (c) } } th scope="col" { "records" } } }
            tbody {
                @for (i, row) in m.iter().enumerate() {
                    @let n: u64 = row.iter().sum();
                    tr {
                        th scope="row" { (classes.get(i).map(String::as_str).unwrap_or("?")) }
                        @for (j, v) in row.iter().enumerate() {
                            @let step = if n == 0 { 0 } else { ((*v as f64 / n as f64) * 5.0).round() as u64 };
                            @let class = format!("num heat-{step}{}", if i == j { " hit" } else { "" });
                            td class=(class) { (v) }
                        }
                        td.num { (n) }
                    }
                }
            }
        } }
    }
}

/// `report[key]` as a matrix of counts.
fn matrix(v: Option<&Value>) -> Option<Vec<Vec<u64>>> {
    v?.as_array()?
        .iter()
        .map(|r| -> Option<Vec<u64>> { r.as_array()?.iter().map(Value::as_u64).collect() })
        .collect()
}

fn transpose(m: &[Vec<u64>]) -> Vec<Vec<u64>> {
    let cols = m.first().map_or(0, Vec::len);
    (0..cols)
        .map(|j| m.iter().map(|r| r.get(j).copied().unwrap_or(0)).collect())
        .collect()
}

/// CinC 2017: F1 per class and the 4×4 matrix (rows the reference, as the scorer keeps it).
fn cinc2017(r: &Value) -> Markup {
    let classes = ["N", "A", "O", "~"];
    let m = matrix(r.get("confusion"));
    html! {
        dl.facts {
            dt { "Score (mean F1 of N, A and O)" } dd { (fig(r.get("score"))) }
            dt { "Mean F1 of all four classes" } dd { (fig(r.get("score_4class"))) }
        }
        div.scroll { table.per-class {
            caption { "Per class" }
            thead { tr { th scope="col" { "Class" } th scope="col" { "F1" } th scope="col" { "In the truth" } th scope="col" { "Answered" } } }
            tbody { @for (i, c) in classes.iter().enumerate() {
                tr {
                    th scope="row" { (cinc_class(c)) }
                    td.num { (fig(r.pointer(&format!("/f1/{}", c.replace('~', "~0"))))) }
                    td.num { @if let Some(m) = &m { (m.get(i).map_or(0, |row| row.iter().sum::<u64>())) } @else { "—" } }
                    td.num { @if let Some(m) = &m { (m.iter().map(|row| row.get(i).copied().unwrap_or(0)).sum::<u64>()) } @else { "—" } }
                }
            } }
        } }
        @if let Some(m) = &m {
            (confusion("Confusion matrix.", &classes.map(String::from), m))
        }
    }
}

/// PhysioNet 2022: each task's figures, per class, and its matrix (which the scorer
/// keeps with rows as the answer; shown, like the others, with rows as the truth).
fn physionet2022(r: &Value) -> Markup {
    html! {
        dl.facts {
            dt { "Murmur weighted accuracy" } dd { (fig(r.get("score"))) }
            dt { "Outcome cost" } dd { (fig(r.get("outcome_cost"))) }
        }
        @for (key, name) in [("murmur", "Murmur"), ("outcome", "Outcome")] {
            @if let Some(t) = r.get(key) {
                @let classes: Vec<String> = t.get("classes").and_then(Value::as_array).map(|a| a.iter().filter_map(|c| c.as_str().map(str::to_owned)).collect()).unwrap_or_default();
                h3 { (name) }
                dl.facts {
                    @for (k, label) in [("auroc", "AUROC"), ("auprc", "AUPRC"), ("f_measure", "F-measure"), ("accuracy", "Accuracy"), ("weighted_accuracy", "Weighted accuracy"), ("cost", "Cost")] {
                        dt { (label) } dd { (fig(t.get(k))) }
                    }
                }
                div.scroll { table.per-class {
                    caption { (name) ", per class" }
                    thead { tr { th scope="col" { "Class" } th scope="col" { "AUROC" } th scope="col" { "AUPRC" } th scope="col" { "F-measure" } th scope="col" { "Accuracy" } } }
                    tbody { @for (i, c) in classes.iter().enumerate() {
                        tr {
                            th scope="row" { (c) }
                            @for k in ["auroc", "auprc", "f_measure", "accuracy"] {
                                td.num { (fig(t.pointer(&format!("/per_class/{k}/{i}")))) }
                            }
                        }
                    } }
                } }
                @if let Some(m) = matrix(t.get("confusion")) {
                    (confusion(&format!("{name}: confusion matrix."), &classes, &transpose(&m)))
                }
            }
        }
    }
}

/// The P300 speller: ITR, accuracy and time per subject.
fn itr(r: &Value, subjects: &[Value]) -> Markup {
    html! {
        dl.facts { dt { "Mean information transfer rate" } dd { (fig(r.get("score"))) " bits/min" } }
        div.scroll { table.per-class {
            caption { "Per subject" }
            thead { tr { th scope="col" { "Subject" } th scope="col" { "Trials" } th scope="col" { "Correct" } th scope="col" { "Accuracy" } th scope="col" { "Seconds per trial" } th scope="col" { "ITR (bits/min)" } } }
            tbody { @for s in subjects {
                tr {
                    th scope="row" { (s.get("subject").and_then(Value::as_str).unwrap_or("?")) }
                    @for k in ["trials", "correct", "accuracy", "mean_seconds", "itr"] { td.num { (fig(s.get(k))) } }
                }
            } }
        } }
    }
}

/// The top-level figures of a report this page has no table for.
fn figures(r: &Value) -> Markup {
    html! {
        dl.facts {
            @if let Some(o) = r.as_object() {
                @for (k, v) in o.iter().filter(|(_, v)| v.is_number()) { dt { (k) } dd { (fig(Some(v))) } }
            }
        }
    }
}

/// The truth's field in an item of a report, when the API sent it (only where the
/// challenge reveals its quiz labels).
const TRUTH: [&str; 4] = ["reference", "class_true", "murmur_label", "outcome_label"];

/// CPSC 2021 keeps no matrix; when the truth is there, one is counted from the items.
fn cpsc2021(items: &[Value]) -> Option<Markup> {
    let classes = ["N", "AFf", "AFp"];
    let at = |v: Option<&Value>| {
        let c = v?.as_str()?;
        classes.iter().position(|x| *x == c)
    };
    let mut m = vec![vec![0u64; 3]; 3];
    for it in items {
        let (Some(t), Some(a)) = (at(it.get("class_true")), at(it.get("class_pred"))) else {
            return None;
        };
        m[t][a] += 1;
    }
    Some(confusion(
        "Rhythm classes (N non-AF, AFf persistent AF, AFp paroxysmal AF).",
        &classes.map(String::from),
        &m,
    ))
}

/// Each record's answer (and truth, where the API sent it): every item field the API
/// kept, the record's name first.
fn records(items: &[Value]) -> Markup {
    let mut cols: Vec<&str> = Vec::new();
    for it in items.iter().take(RECORDS_SHOWN) {
        if let Some(o) = it.as_object() {
            for k in o.keys() {
                if !cols.contains(&k.as_str())
                    && !matches!(k.as_str(), "murmur_scores" | "outcome_scores")
                {
                    cols.push(k);
                }
            }
        }
    }
    // The item's name first (the report's map keeps its fields in name order).
    cols.sort_by_key(|c| !matches!(*c, "record" | "patient" | "subject"));
    let revealed = cols.iter().any(|c| TRUTH.contains(c));
    html! {
        details.records {
            summary { "Each record's answer (" (items.len()) ")"
                @if !revealed { " — the truth of the quiz stays with the organisers in this challenge" } }
            div.scroll { table {
                thead { tr { @for c in &cols { th scope="col" { (c.replace('_', " ")) } } } }
                tbody { @for it in items.iter().take(RECORDS_SHOWN) {
                    tr { @for c in &cols { td { (cell(it.get(*c))) } } }
                } }
            } }
            @if items.len() > RECORDS_SHOWN { p.muted { "The first " (RECORDS_SHOWN) " are listed; the API's answer for this submission has them all." } }
        }
    }
}

fn cell(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "—".into(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Bool(b)) => if *b { "yes" } else { "no" }.into(),
        Some(v @ Value::Number(_)) => fig(Some(v)),
        Some(v) => v.to_string(),
    }
}

/// The quiz report, whatever its scorer.
pub(crate) fn report(r: &Value) -> Markup {
    let items: &[Value] = r
        .get("items")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let body = if r.get("f1").is_some() && r.get("confusion").is_some() {
        cinc2017(r)
    } else if r.get("murmur").is_some() && r.get("outcome").is_some() {
        physionet2022(r)
    } else if let Some(subjects) = r.get("subjects").and_then(Value::as_array) {
        itr(r, subjects)
    } else {
        html! { (figures(r)) @if let Some(m) = cpsc2021(items) { (m) } }
    };
    html! {
        (body)
        @if !items.is_empty() { (records(items)) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_cinc_report_has_its_classes_and_a_coloured_matrix() {
        let r = json!({
            "challenge": "cinc2017", "score": 0.5, "score_4class": 0.4,
            "f1": {"N": 0.8, "A": 0.5, "O": 0.2, "~": null},
            "confusion": [[4, 1, 0, 0], [0, 1, 1, 0], [1, 0, 1, 0], [0, 0, 0, 0]],
            "items": [{"record": "A0001", "answer": "N", "defaulted": false}],
        });
        let h = report(&r).into_string();
        assert!(h.contains("A — atrial fibrillation"), "{h}");
        assert!(h.contains("6 of 9 on the diagonal"), "{h}");
        // 4 of 5 N records answered N: the fourth of five steps, on the diagonal.
        assert!(h.contains("class=\"num heat-4 hit\">4<"), "{h}");
        // The noisy class's F1 is undefined, said as "—", not as NaN or 0.
        assert!(!h.contains("NaN"), "{h}");
        // The API sent no truth per record: the page says it stays private.
        assert!(h.contains("stays with the organisers"), "{h}");
        assert!(!h.contains(">reference<"), "{h}");
    }

    #[test]
    fn physionet_matrices_are_turned_to_rows_of_truth() {
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
        let h = report(&r).into_string();
        // The scorer's rows are answers: [[3,1],[0,2]] means 1 Absent answered Present.
        // Turned, the Absent row reads 1 then 2.
        let absent = h.find("<th scope=\"row\">Absent</th><td class=\"num heat-2\">1<");
        assert!(absent.is_some(), "{h}");
    }

    #[test]
    fn a_revealed_cpsc_quiz_gets_a_matrix_from_its_items() {
        let r = json!({"score": 0.9, "items": [
            {"record": "data_0_1", "class_true": "AFp", "class_pred": "AFp", "u": 1.2},
            {"record": "data_1_1", "class_true": "N", "class_pred": "AFf", "u": -1.0},
        ]});
        let h = report(&r).into_string();
        assert!(h.contains("1 of 2 on the diagonal"), "{h}");
        assert!(!h.contains("stays with the organisers"), "{h}");
        // Kept private, the items carry no truth, and no matrix is drawn.
        let r = json!({"score": 0.9, "items": [{"record": "data_0_1", "class_pred": "AFp"}]});
        let h = report(&r).into_string();
        assert!(
            !h.contains("diagonal") && h.contains("stays with the organisers"),
            "{h}"
        );
    }
}
