//! A submission's quiz report as a page shows it: what the challenge's kind makes of it
//! (`judge::kinds::Kind::quiz_view`: figures, per-class tables, confusion matrices, each
//! record's answer, as plain data), drawn the same way for every kind, the matrices as
//! tables coloured by each row's share.
//!
//! It draws only what the API's answer holds (`SubmissionView::quiz`, already cut to
//! what this reader may see by `judge::visibility::quiz_view`): a challenge that keeps
//! its quiz labels private sends each record's answer without the truth, and so the
//! page shows the answers alone. Nothing here reads a result file.

use judge::kinds::quiz::{Confusion, Part, QuizView, Records};
use maud::{Markup, html};

/// Records listed at most on the page (a quiz of thousands would make it heavy); the
/// API's JSON has them all.
const RECORDS_SHOWN: usize = 500;

/// A confusion matrix: `m[t][a]` records of true class `t` answered `a`. Each cell is
/// coloured by its share of its row (the true class), in six steps; the words say the
/// count, so the colour only helps the eye.
fn confusion(c: &Confusion) -> Markup {
    let m = &c.counts;
    let total: u64 = m.iter().flatten().sum();
    let right: u64 = m.iter().enumerate().filter_map(|(i, r)| r.get(i)).sum();
    html! {
        div.scroll { table.confusion {
            caption { (c.caption) " Rows: the truth; columns: your entry's answer. "
                (right) " of " (total) " on the diagonal." }
            thead { tr { th scope="col" { "truth \\ answer" } @for c in &c.classes { th scope="col" { (c) } } th scope="col" { "records" } } }
            tbody {
                @for (i, row) in m.iter().enumerate() {
                    @let n: u64 = row.iter().sum();
                    tr {
                        th scope="row" { (c.classes.get(i).map(String::as_str).unwrap_or("?")) }
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

/// Each record's answer (and truth, where the API sent it), the record's name first.
fn records(r: &Records) -> Markup {
    html! {
        details.records {
            summary { "Each record's answer (" (r.rows.len()) ")"
                @if r.revealed == Some(false) { " — the truth of the quiz stays with the organisers in this challenge" } }
            div.scroll { table {
                thead { tr { @for c in &r.head { th scope="col" { (c.replace('_', " ")) } } } }
                tbody { @for row in r.rows.iter().take(RECORDS_SHOWN) {
                    tr { @for c in row { td { (c) } } }
                } }
            } }
            @if r.rows.len() > RECORDS_SHOWN { p.muted { "The first " (RECORDS_SHOWN) " are listed; the API's answer for this submission has them all." } }
        }
    }
}

/// The quiz report, whatever its kind.
pub(crate) fn report(v: &QuizView) -> Markup {
    html! {
        @for p in &v.parts {
            @match p {
                Part::Heading(h) => { h3 { (h) } }
                Part::Facts(f) => { (crate::viewer::facts(f)) }
                Part::Table(t) => { (crate::viewer::table(t, Some("per-class"))) }
                Part::Confusion(c) => { (confusion(c)) }
            }
        }
        @if let Some(r) = &v.records { (records(r)) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use judge::kinds::quiz::{Cell, Fact, Table};

    fn view(counts: Vec<Vec<u64>>, revealed: Option<bool>) -> QuizView {
        QuizView {
            parts: vec![
                Part::Heading("Task <1>".into()),
                Part::Facts(vec![Fact::new("Score", "0.5")]),
                Part::Table(Table {
                    caption: Some("Per class".into()),
                    head: vec!["Class".into(), "F1".into()],
                    rows: vec![vec![
                        Cell::text("A — atrial fibrillation"),
                        Cell::number("—"),
                    ]],
                }),
                Part::Confusion(Confusion {
                    caption: "Confusion matrix.".into(),
                    classes: ["N", "A", "O", "~"].map(String::from).to_vec(),
                    counts,
                }),
            ],
            records: Some(Records {
                head: vec!["record".into(), "class_pred".into()],
                rows: vec![vec!["A0001".into(), "N".into()]],
                revealed,
            }),
        }
    }

    #[test]
    fn a_view_has_its_tables_and_a_coloured_matrix() {
        let m = vec![
            vec![4, 1, 0, 0],
            vec![0, 1, 1, 0],
            vec![1, 0, 1, 0],
            vec![0, 0, 0, 0],
        ];
        let h = report(&view(m, Some(false))).into_string();
        assert!(h.contains("<h3>Task &lt;1&gt;</h3>"), "{h}");
        assert!(h.contains("<dt>Score</dt><dd>0.5</dd>"), "{h}");
        assert!(
            h.contains(r#"<table class="per-class"><caption>Per class"#),
            "{h}"
        );
        assert!(
            h.contains(r#"<th scope="row">A — atrial fibrillation</th><td class="num">—</td>"#),
            "{h}"
        );
        assert!(h.contains("6 of 9 on the diagonal"), "{h}");
        // 4 of 5 N records answered N: the fourth of five steps, on the diagonal.
        assert!(h.contains("class=\"num heat-4 hit\">4<"), "{h}");
        // An empty row is drawn without dividing by zero.
        assert!(h.contains("class=\"num heat-0 hit\">0<"), "{h}");
        // The items hold no truth: the page says it stays private.
        assert!(h.contains("stays with the organisers"), "{h}");
        assert!(h.contains("<th scope=\"col\">class pred</th>"), "{h}");
        assert!(h.contains("<td>A0001</td><td>N</td>"), "{h}");
    }

    #[test]
    fn revealed_or_unknown_truth_says_nothing_of_privacy() {
        for revealed in [Some(true), None] {
            let h = report(&view(vec![vec![1]], revealed)).into_string();
            assert!(!h.contains("stays with the organisers"), "{h}");
        }
    }

    #[test]
    fn at_most_a_page_of_records_is_listed() {
        let mut v = view(vec![vec![1]], None);
        let rows = vec![vec!["r".to_owned()]; RECORDS_SHOWN + 1];
        v.records = Some(Records {
            head: vec!["record".into()],
            rows,
            revealed: None,
        });
        let h = report(&v).into_string();
        assert_eq!(h.matches("<td>r</td>").count(), RECORDS_SHOWN, "{h}");
        assert!(h.contains(&format!("({})", RECORDS_SHOWN + 1)), "{h}");
        assert!(h.contains("The first 500 are listed"), "{h}");
    }
}
