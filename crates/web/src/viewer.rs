//! The record viewer: a quiz record drawn on the server with the entry's answer against
//! the truth. Each challenge kind says what to show (`judge::kinds::Kind::record_view`:
//! facts, a table, signals with labelled bands); this file draws any of them the same
//! way, the plot as SVG zoomable in time by links (no script needed).
//!
//! Who may look: organisers always; a team only where the challenge declares its quiz
//! split public (`reveal_quiz_labels`, the rule that already governs per-record
//! references in `result.json`). Only the quiz's records, never the exam's.
//!
//! Long records are decimated (by the kind) to one min/max pair per pixel column, so a
//! day of ECG is a few thousand points, and a zoomed window is read from disk alone.

use std::path::PathBuf;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use serde::Deserialize;

use judge::kinds::view::{Ask, Cell, Fact, Plot, RecordView, Source, Table};
use server::views::SubmissionView;

use crate::Web;
use crate::api::{self, seg};
use crate::html::{PageError, page};
use crate::pages::definition;
use crate::session::Ctx;

type PageResult = Result<Response, Response>;

const W: f64 = 1000.0;
const LEAD_H: f64 = 150.0;
const BAND_H: f64 = 34.0;
const LEFT: f64 = 8.0;

fn refuse(status: StatusCode, title: &str, msg: &str) -> Response {
    PageError::new(status, title, msg).into_response()
}

/// The records of a submission's quiz, as `result.json` lists them.
pub(crate) fn quiz_records(s: &SubmissionView) -> Vec<String> {
    s.stages
        .iter()
        .filter(|st| st.stage == "quiz")
        .flat_map(|st| st.records.iter())
        .filter_map(|r| r.get("record").and_then(|v| v.as_str()).map(str::to_owned))
        .collect()
}

/// Whether this reader may see the quiz's per-record truth.
pub(crate) async fn may_view(web: &Web, ctx: &Ctx, challenge: &str) -> bool {
    ctx.is_organiser() || may_view_by(ctx, definition(web, challenge).await.as_ref())
}

/// [`may_view`] for a challenge whose definition is read already.
pub(crate) fn may_view_by(ctx: &Ctx, def: Option<&judge::challenge::Challenge>) -> bool {
    ctx.is_organiser() || def.is_some_and(|d| d.reveal_quiz_labels)
}

#[derive(Deserialize)]
pub(crate) struct Window {
    /// Seconds from the record's start.
    from: Option<f64>,
    to: Option<f64>,
}

/// A lead as one SVG path: a vertical stroke per column from min to max, joined.
fn lead_path(cols: &[Option<(f64, f64)>], top: f64) -> String {
    let (lo, hi) = cols
        .iter()
        .flatten()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &(a, b)| {
            (lo.min(a), hi.max(b))
        });
    if !lo.is_finite() || !hi.is_finite() {
        return String::new();
    }
    let span = if hi - lo < 1e-9 { 1.0 } else { hi - lo };
    let y = |v: f64| top + 4.0 + (hi - v) / span * (LEAD_H - 8.0);
    let step = (W - LEFT) / cols.len().max(1) as f64;
    let mut d = String::new();
    let mut pen = false;
    for (i, c) in cols.iter().enumerate() {
        let x = LEFT + (i as f64 + 0.5) * step;
        match c {
            Some((a, b)) => {
                d.push_str(&format!(
                    "{}{x:.1},{:.1}L{x:.1},{:.1}",
                    if pen { "L" } else { "M" },
                    y(*b),
                    y(*a)
                ));
                pen = true;
            }
            None => pen = false,
        }
    }
    d
}

pub(crate) async fn record(
    State(web): State<Web>,
    ctx: Ctx,
    Path((id, name)): Path<(String, String)>,
    Query(w): Query<Window>,
) -> PageResult {
    let (_, token) = ctx.need_user(&format!("/submissions/{}", seg(&id)))?;
    let s: SubmissionView = api::get(
        &web,
        &format!("/api/v1/submissions/{}", seg(&id)),
        Some(token),
    )
    .await
    .json()
    .map_err(|e| PageError::from(e).into_response())?;
    if !may_view(&web, &ctx, &s.challenge).await {
        return Err(refuse(
            StatusCode::FORBIDDEN,
            "Not shown in this challenge",
            "The organisers have not made the quiz's labels public in this challenge, so its \
             records are not drawn. Your submission's page lists each quiz record's status.",
        ));
    }
    if !quiz_records(&s).contains(&name) {
        return Err(
            PageError::not_found("That record is not in this submission's quiz.").into_response(),
        );
    }
    let def = definition(&web, &s.challenge).await;
    let Some(kind) = def.as_ref().map(|d| judge::kinds::of(d.scorer)) else {
        return Err(refuse(
            StatusCode::NOT_IMPLEMENTED,
            "No viewer for this challenge yet",
            "The record viewer cannot read this challenge's definition. The submission's \
             page lists each quiz record's status.",
        ));
    };
    let challenge = web
        .store
        .challenge(&s.challenge)
        .await
        .map_err(|e| PageError::internal(&e).into_response())?;
    let data = PathBuf::from(&challenge.data_path);
    let outputs = server::layout::result_dir(
        web.state_dir.as_path(),
        store::AttemptKey {
            submission: store::SubmissionId(s.id),
            number: s.attempts,
        },
    )
    .join("outputs/quiz");
    let name2 = name.clone();
    let ask = Ask {
        from: w.from,
        to: w.to,
        columns: (W - LEFT) as usize,
    };
    let view = tokio::task::spawn_blocking(move || kind.record_view(&data, &outputs, &name2, ask))
        .await
        .map_err(|e| PageError::internal(&e).into_response())?
        .map_err(|e| PageError::internal(&e).into_response())?;
    let drawn = draw(&view);
    let body = html! {
        p.crumbs { a href={"/submissions/" (s.id)} { "Submission" } " · record " (name) }
        h1 { "Record " (name) }
        (drawn)
    };
    Ok(page(&ctx, &format!("Record {name}"), body))
}

/// A record view as HTML: its facts, notes, problems, table and plot, in that order.
fn draw(v: &RecordView) -> Markup {
    html! {
        @if !v.facts.is_empty() { (facts(&v.facts)) }
        @for n in &v.notes { p { (n) } }
        @for why in &v.problems { p.error { (why) } }
        @if let Some(t) = &v.table { (table(t, None)) }
        @if let Some(p) = &v.plot {
            (zoom_links(p.from, p.to, p.duration))
            (plot(p))
        }
    }
}

/// "right" or "wrong" (or `label`) as a coloured state word.
fn verdict(right: bool, label: Option<&str>) -> Markup {
    let text = label.unwrap_or(if right { "right" } else { "wrong" });
    html! {
        @if right { span.state.state-scored { (text) } } @else { span.state.state-failed { (text) } }
    }
}

fn cell(c: &Cell) -> Markup {
    html! {
        @match c.verdict {
            Some(right) => { (verdict(right, Some(&c.text))) }
            None => { (c.text) }
        }
        @if let Some(r) = &c.remark { span.muted { " " (r) } }
    }
}

/// Facts as a list of label and value, each verdict as a coloured word (here and in a
/// quiz report).
pub(crate) fn facts(facts: &[Fact]) -> Markup {
    html! {
        dl.facts {
            @for f in facts {
                dt { (f.label) }
                dd { (f.value) @if let Some(right) = f.verdict { " " (verdict(right, None)) } }
            }
        }
    }
}

/// A table of a kind's view (here and in a quiz report, there of `class` "per-class").
pub(crate) fn table(t: &Table, class: Option<&str>) -> Markup {
    html! {
        div.scroll { table class=[class] {
            @if let Some(c) = &t.caption { caption { (c) } }
            thead { tr { @for h in &t.head { th scope="col" { (h) } } } }
            tbody {
                @for row in &t.rows {
                    tr {
                        @for (i, c) in row.iter().enumerate() {
                            @if i == 0 { th scope="row" { (cell(c)) } }
                            @else if c.numeric { td.num { (cell(c)) } }
                            @else { td { (cell(c)) } }
                        }
                    }
                }
            }
        } }
    }
}

/// Spans (fractions of the window) as x ranges, at least 1.5 units wide to be seen.
fn xs(spans: &[(f64, f64)]) -> Vec<(f64, f64)> {
    spans
        .iter()
        .map(|&(a, b)| {
            let x = LEFT + a * (W - LEFT);
            (x, ((b - a) * (W - LEFT)).max(1.5))
        })
        .collect()
}

fn plot(p: &Plot) -> Markup {
    let n = p.traces.len() as f64;
    let rows = p.bands.len() as f64;
    let height = n * LEAD_H + rows * BAND_H + if p.bands.is_empty() { 24.0 } else { 26.0 };
    let band_top = n * LEAD_H + 6.0;
    let colour = |s: Source| match s {
        Source::Truth => "#b42318",
        Source::Entry => "#1f5fbf",
    };
    let shade = p.shade.and_then(|i| p.bands.get(i)).map(|b| {
        let fill = match b.source {
            Source::Truth => "#f6d5d2",
            Source::Entry => "#d6e4f7",
        };
        (fill, xs(&b.spans))
    });
    let (from, to) = (p.from, p.to);
    html! {
        figure.plot.record {
            svg viewBox={"0 0 " (W) " " (height)} role="img" aria-label=(p.summary) xmlns="http://www.w3.org/2000/svg" {
                @for (i, t) in p.traces.iter().enumerate() {
                    @let top = i as f64 * LEAD_H;
                    @if let Some((fill, spans)) = &shade {
                        @for (a, wdt) in spans { rect x=(format!("{a:.1}")) y=(top) width=(format!("{wdt:.1}")) height=(LEAD_H) fill=(fill) {} }
                    }
                    path d=(lead_path(&t.columns, top)) fill="none" stroke="#1b1f24" stroke-width=(if t.thin { "0.6" } else { "0.8" }) {}
                    text x=(LEFT + 4.0) y=(top + 14.0) font-size="12" fill="#333" { (t.label) }
                }
                @for (i, b) in p.bands.iter().enumerate() {
                    @let top = band_top + i as f64 * BAND_H;
                    text x=(LEFT) y=(top + 11.0) font-size="12" fill="#333" { (b.label) }
                    @for (a, wdt) in xs(&b.spans) { rect x=(format!("{a:.1}")) y=(top + 15.0) width=(format!("{wdt:.1}")) height=(BAND_H - 19.0) fill=(colour(b.source)) {} }
                }
                text x=(LEFT) y=(height - 4.0) font-size="12" fill="#333" { (format!("{from:.1} s")) }
                text x=(W - 2.0) y=(height - 4.0) font-size="12" text-anchor="end" fill="#333" { (format!("{to:.1} s")) }
            }
            figcaption { (p.summary) " " (p.legend) }
        }
    }
}

fn zoom_links(from: f64, to: f64, dur: f64) -> Markup {
    let mid = (from + to) / 2.0;
    let half = (to - from) / 2.0;
    let zoom = |f: f64, t: f64| format!("?from={:.3}&to={:.3}", f.max(0.0), t.min(dur));
    html! {
        nav.actions aria-label="Zoom" {
            a.button href=(zoom(mid - half / 2.0, mid + half / 2.0)) { "Zoom in" }
            a.button href=(zoom(mid - half * 2.0, mid + half * 2.0)) { "Zoom out" }
            a.button href=(zoom(from - half, to - half)) { "← Earlier" }
            a.button href=(zoom(from + half, to + half)) { "Later →" }
            a.button href="?" { "Whole record" }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use judge::kinds::view::{Bands, Trace};

    #[test]
    fn a_view_is_drawn_whole_and_escaped() {
        let v = RecordView {
            facts: vec![Fact::new("Answered", "<A>").judged(false)],
            notes: vec!["two trials".into()],
            problems: vec!["no log".into()],
            table: Some(Table {
                caption: Some("out".into()),
                head: vec!["Class".into(), "P".into()],
                rows: vec![vec![Cell::text("A"), Cell::number("0.5")]],
            }),
            plot: Some(Plot {
                from: 0.0,
                to: 10.0,
                duration: 20.0,
                traces: vec![Trace {
                    label: "lead 1 (mV)".into(),
                    columns: vec![Some((0.0, 1.0)), None, Some((-1.0, 0.5))],
                    thin: false,
                }],
                bands: vec![Bands {
                    label: "true AF".into(),
                    source: Source::Truth,
                    spans: vec![(0.25, 0.5)],
                }],
                shade: Some(0),
                summary: "one lead".into(),
                legend: "Red: truth.".into(),
            }),
        };
        let html = draw(&v).into_string();
        assert!(
            html.contains("&lt;A&gt;") && !html.contains("<A>"),
            "{html}"
        );
        assert!(html.contains("state-failed"), "{html}");
        assert!(html.contains(r#"<p class="error">no log</p>"#), "{html}");
        assert!(html.contains(r#"<td class="num">0.5</td>"#), "{html}");
        // the band drawn in its row and shaded behind the lead
        assert_eq!(html.matches(r##"fill="#b42318""##).count(), 1, "{html}");
        assert_eq!(html.matches(r##"fill="#f6d5d2""##).count(), 1, "{html}");
        assert!(html.contains("Later"), "zoom links: {html}");
    }
}
