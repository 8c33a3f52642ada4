//! The record viewer: a quiz record drawn on the server with the entry's answer against
//! the truth. CPSC 2021 for now: both ECG leads, the true AF episodes and the predicted
//! ones as bands, zoomable in time by links (no script needed).
//!
//! Who may look: organisers always; a team only where the challenge declares its quiz
//! split public (`reveal_quiz_labels`, the rule that already governs per-record
//! references in `result.json`). Only the quiz's records, never the exam's.
//!
//! Long records are decimated to one min/max pair per pixel column, so a day of ECG is
//! a few thousand points, and a zoomed window is read from disk alone.

use std::path::{Path as FsPath, PathBuf};

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use serde::Deserialize;

use judge::challenge::ScorerId;
use server::views::SubmissionView;

use crate::Web;
use crate::api::{self, seg};
use crate::html::{PageError, page};
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
    if ctx.is_organiser() {
        return true;
    }
    definition(web, challenge)
        .await
        .is_some_and(|d| d.reveal_quiz_labels)
}

async fn definition(web: &Web, id: &str) -> Option<judge::challenge::Challenge> {
    let c = web.store.challenge(id).await.ok()?;
    match &c.definition {
        store::Definition::Builtin(b) => judge::challenge::Challenge::built_in(b).ok(),
        store::Definition::Toml(t) => judge::challenge::Challenge::parse(t, "definition").ok(),
    }
}

#[derive(Deserialize)]
pub(crate) struct Window {
    /// Seconds from the record's start.
    from: Option<f64>,
    to: Option<f64>,
}

/// One lead, decimated: per pixel column the min and max of the samples in it.
fn columns(values: &[f64], cols: usize) -> Vec<Option<(f64, f64)>> {
    let n = values.len();
    (0..cols)
        .map(|c| {
            let (a, b) = (
                c * n / cols,
                ((c + 1) * n / cols).max(c * n / cols + 1).min(n),
            );
            values.get(a..b).and_then(|run| {
                run.iter()
                    .filter(|v| v.is_finite())
                    .fold(None, |acc, &v| match acc {
                        None => Some((v, v)),
                        Some((lo, hi)) => Some((f64::min(lo, v), f64::max(hi, v))),
                    })
            })
        })
        .collect()
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

/// Bands `[s, e]` (samples) inside the window `[w0, w1)`, as x ranges.
fn bands(episodes: &[(f64, f64)], w0: f64, w1: f64) -> Vec<(f64, f64)> {
    let scale = (W - LEFT) / (w1 - w0).max(1.0);
    episodes
        .iter()
        .filter(|(s, e)| *e >= w0 && *s < w1)
        .map(|&(s, e)| {
            let a = LEFT + (s.max(w0) - w0) * scale;
            let b = LEFT + (e.min(w1) - w0) * scale;
            (a, (b - a).max(1.5))
        })
        .collect()
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
    let Some(scorer) = def.as_ref().map(|d| d.scorer) else {
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
    // Every kind has its drawing; a new kind fails to compile here until it has one.
    let drawn = tokio::task::spawn_blocking(move || match scorer {
        ScorerId::Cpsc2021 => draw(&data, &outputs, &name2, w.from, w.to),
        ScorerId::Cinc2017 => draw_cinc2017(&data, &outputs, &name2, w.from, w.to),
        ScorerId::Physionet2022 => draw_physionet2022(&data, &outputs, &name2, w.from, w.to),
        ScorerId::Itr => draw_p300(&data, &outputs, &name2),
    })
    .await
    .map_err(|e| PageError::internal(&e).into_response())?
    .map_err(|e| PageError::internal(&e).into_response())?;
    let body = html! {
        p.crumbs { a href={"/submissions/" (s.id)} { "Submission" } " · record " (name) }
        h1 { "Record " (name) }
        (drawn)
    };
    Ok(page(&ctx, &format!("Record {name}"), body))
}

fn draw(
    data: &FsPath,
    outputs: &FsPath,
    name: &str,
    from: Option<f64>,
    to: Option<f64>,
) -> Result<Markup, String> {
    if name.contains('/') || name.contains("..") {
        return Err(format!("record name {name:?}"));
    }
    let truth = score::cpsc2021::load_record(data, name).map_err(|e| e.to_string())?;
    let rec = formats::wfdb::Record::open(data.join(name)).map_err(|e| e.to_string())?;
    let fs = rec.header.record.fs.unwrap_or(200.0);
    let len = truth.len;
    let dur = len as f64 / fs;
    let (from, to, s0, s1) = window(from, to, fs, len);
    let sig = rec
        .read_physical(&formats::wfdb::ReadOptions {
            from: s0,
            to: Some(s1),
            signals: None,
        })
        .map_err(|e| e.to_string())?;
    let predicted: Result<Vec<(f64, f64)>, String> = match score_output(outputs, name) {
        Some(bytes) => score::cpsc2021::check_prediction(&bytes, &format!("{name}.json"), len),
        None => Err("no output for this record".into()),
    };
    let truth_eps: Vec<(f64, f64)> = truth
        .episodes
        .iter()
        .map(|&(a, b)| (a as f64, b as f64))
        .collect();
    let cols = (W - LEFT) as usize;
    let leads: Vec<_> = sig
        .signals
        .iter()
        .map(|p| {
            (
                p.name
                    .clone()
                    .unwrap_or_else(|| format!("lead {}", p.index + 1)),
                p.units.clone(),
                columns(&p.values, cols),
            )
        })
        .collect();
    let (w0, w1) = (s0 as f64, s1 as f64);
    let height = leads.len() as f64 * LEAD_H + 2.0 * BAND_H + 26.0;
    let true_bands = bands(&truth_eps, w0, w1);
    let pred_bands = predicted
        .as_ref()
        .map(|p| bands(p, w0, w1))
        .unwrap_or_default();
    let band_top = leads.len() as f64 * LEAD_H + 6.0;
    let summary = format!(
        "{} leads from {:.1} s to {:.1} s of {:.1} s; {} true AF episode(s), {} predicted.",
        leads.len(),
        from,
        to,
        dur,
        truth_eps.len(),
        predicted
            .as_ref()
            .map(|p| p.len().to_string())
            .unwrap_or_else(|_| "none".into())
    );
    Ok(html! {
        dl.facts {
            dt { "Class (truth)" } dd { (match truth.class {
                score::cpsc2021::Class::N => "non-AF",
                score::cpsc2021::Class::AFf => "persistent AF (the whole record)",
                score::cpsc2021::Class::AFp => "paroxysmal AF (episodes)",
            }) }
            dt { "Length" } dd { (len) " samples at " (fs) " Hz (" (crate::html::duration(dur)) ")" }
            dt { "True AF episodes" } dd { @if truth_eps.is_empty() { "none" } @for (a, b) in &truth_eps { (format!("[{a:.0}, {b:.0}] ")) } }
            dt { "Predicted" } dd { @match &predicted {
                Ok(p) => { @if p.is_empty() { "none" } @for (a, b) in p { (format!("[{a:.0}, {b:.0}] ")) } }
                Err(why) => { "scored as [] — " (why) }
            } }
        }
        (zoom_links(from, to, dur))
        figure.plot.record {
            svg viewBox={"0 0 " (W) " " (height)} role="img" aria-label=(summary) xmlns="http://www.w3.org/2000/svg" {
                @for (i, (lead, units, c)) in leads.iter().enumerate() {
                    @let top = i as f64 * LEAD_H;
                    @for (a, wdt) in &true_bands { rect x=(format!("{a:.1}")) y=(top) width=(format!("{wdt:.1}")) height=(LEAD_H) fill="#f6d5d2" {} }
                    path d=(lead_path(c, top)) fill="none" stroke="#1b1f24" stroke-width="0.8" {}
                    text x=(LEFT + 4.0) y=(top + 14.0) font-size="12" fill="#333" { (lead) " (" (units) ")" }
                }
                text x=(LEFT) y=(band_top + 11.0) font-size="12" fill="#333" { "true AF" }
                @for (a, wdt) in &true_bands { rect x=(format!("{a:.1}")) y=(band_top + 15.0) width=(format!("{wdt:.1}")) height=(BAND_H - 19.0) fill="#b42318" {} }
                text x=(LEFT) y=(band_top + BAND_H + 11.0) font-size="12" fill="#333" { "predicted AF" }
                @for (a, wdt) in &pred_bands { rect x=(format!("{a:.1}")) y=(band_top + BAND_H + 15.0) width=(format!("{wdt:.1}")) height=(BAND_H - 19.0) fill="#1f5fbf" {} }
                text x=(LEFT) y=(height - 4.0) font-size="12" fill="#333" { (format!("{from:.1} s")) }
                text x=(W - 2.0) y=(height - 4.0) font-size="12" text-anchor="end" fill="#333" { (format!("{to:.1} s")) }
            }
            figcaption { (summary) " Red: true AF episodes (also shaded behind the leads); blue: the entry's. One min/max pair per pixel column." }
        }
    })
}

/// The time window asked for, in seconds, clamped to a record of `dur` seconds, and the
/// frames it covers.
fn window(from: Option<f64>, to: Option<f64>, fs: f64, len: u64) -> (f64, f64, u64, u64) {
    let dur = len as f64 / fs;
    let from = from
        .filter(|f| f.is_finite())
        .unwrap_or(0.0)
        .clamp(0.0, dur);
    let to = to
        .filter(|t| t.is_finite())
        .unwrap_or(dur)
        .clamp(from + 1.0 / fs, dur.max(from + 1.0 / fs));
    let s0 = (from * fs) as u64;
    let s1 = ((to * fs).ceil() as u64).min(len).max(s0 + 1);
    (from, to, s0, s1)
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

/// A `.hea` file named `name` at the top of `data` or one folder down (CinC 2017's
/// training set keeps its records at the top; other copies put them in a folder).
fn find_record(data: &FsPath, name: &str) -> Option<PathBuf> {
    let direct = data.join(name);
    if data.join(format!("{name}.hea")).is_file() {
        return Some(direct);
    }
    std::fs::read_dir(data).ok()?.flatten().find_map(|e| {
        let p = e.path().join(name);
        (e.file_type().ok()?.is_dir() && e.path().join(format!("{name}.hea")).is_file())
            .then_some(p)
    })
}

fn label_name(l: &str) -> &'static str {
    match l {
        "N" => "N — normal rhythm",
        "A" => "A — atrial fibrillation",
        "O" => "O — another rhythm",
        "~" => "~ — too noisy to classify",
        _ => "not a class",
    }
}

/// CinC 2017: the single-lead ECG with the true class and the entry's answer.
fn draw_cinc2017(
    data: &FsPath,
    outputs: &FsPath,
    name: &str,
    from: Option<f64>,
    to: Option<f64>,
) -> Result<Markup, String> {
    if name.contains('/') || name.contains("..") {
        return Err(format!("record name {name:?}"));
    }
    let reference =
        std::fs::read_to_string(data.join("REFERENCE.csv")).map_err(|e| e.to_string())?;
    let truth = score::cinc2017::parse_reference(&reference, "REFERENCE.csv")
        .map_err(|e| e.to_string())?
        .into_iter()
        .find(|(r, _)| r == name)
        .map(|(_, l)| {
            serde_json::to_value(l)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default()
        });
    // The first answer for the record counts, as the scorer counts it.
    let answer = score_output_named(outputs, "answers.txt").and_then(|b| {
        String::from_utf8_lossy(&b).lines().find_map(|l| {
            let (r, a) = l.split_once(',')?;
            (r.trim() == name).then(|| a.trim().to_owned())
        })
    });
    let path = find_record(data, name).ok_or_else(|| format!("no header for {name}"))?;
    let rec = formats::wfdb::Record::open(&path).map_err(|e| e.to_string())?;
    let fs = rec.header.record.fs.unwrap_or(300.0);
    let len = rec.sig_len().map_err(|e| e.to_string())?;
    let dur = len as f64 / fs;
    let (from, to, s0, s1) = window(from, to, fs, len);
    let sig = rec
        .read_physical(&formats::wfdb::ReadOptions {
            from: s0,
            to: Some(s1),
            signals: None,
        })
        .map_err(|e| e.to_string())?;
    let cols = (W - LEFT) as usize;
    let leads: Vec<_> = sig
        .signals
        .iter()
        .map(|p| {
            (
                p.name
                    .clone()
                    .unwrap_or_else(|| format!("lead {}", p.index + 1)),
                p.units.clone(),
                columns(&p.values, cols),
            )
        })
        .collect();
    let right = truth.is_some() && truth == answer;
    let height = leads.len() as f64 * LEAD_H + 24.0;
    let summary = format!(
        "ECG from {from:.1} s to {to:.1} s of {dur:.1} s; true class {}, answered {}.",
        truth.as_deref().unwrap_or("unknown"),
        answer.as_deref().unwrap_or("nothing")
    );
    Ok(html! {
        dl.facts {
            dt { "True class" } dd { (truth.as_deref().map(label_name).unwrap_or("not in the reference")) }
            dt { "Answered" } dd { @match &answer {
                Some(a) => { (label_name(a)) " " @if right { span.state.state-scored { "right" } } @else { span.state.state-failed { "wrong" } } }
                None => { "nothing (scored as ~) " span.state.state-failed { "wrong" } }
            } }
            dt { "Length" } dd { (len) " samples at " (fs) " Hz (" (crate::html::duration(dur)) ")" }
        }
        (zoom_links(from, to, dur))
        figure.plot.record {
            svg viewBox={"0 0 " (W) " " (height)} role="img" aria-label=(summary) xmlns="http://www.w3.org/2000/svg" {
                @for (i, (lead, units, c)) in leads.iter().enumerate() {
                    @let top = i as f64 * LEAD_H;
                    path d=(lead_path(c, top)) fill="none" stroke="#1b1f24" stroke-width="0.8" {}
                    text x=(LEFT + 4.0) y=(top + 14.0) font-size="12" fill="#333" { (lead) " (" (units) ")" }
                }
                text x=(LEFT) y=(height - 4.0) font-size="12" fill="#333" { (format!("{from:.1} s")) }
                text x=(W - 2.0) y=(height - 4.0) font-size="12" text-anchor="end" fill="#333" { (format!("{to:.1} s")) }
            }
            figcaption { (summary) " One min/max pair per pixel column." }
        }
    })
}

/// A file named `file` at the top of `data` or one folder down.
fn find_file(data: &FsPath, file: &str) -> Option<PathBuf> {
    let direct = data.join(file);
    if direct.is_file() {
        return Some(direct);
    }
    std::fs::read_dir(data).ok()?.flatten().find_map(|e| {
        let p = e.path().join(file);
        (e.file_type().ok()?.is_dir() && p.is_file()).then_some(p)
    })
}

/// PhysioNet 2022: each of the patient's recordings (one row per location), the true
/// murmur and outcome, and the entry's classes and probabilities.
fn draw_physionet2022(
    data: &FsPath,
    outputs: &FsPath,
    name: &str,
    from: Option<f64>,
    to: Option<f64>,
) -> Result<Markup, String> {
    if name.contains('/') || name.contains("..") {
        return Err(format!("patient {name:?}"));
    }
    let txt = find_file(data, &format!("{name}.txt"))
        .ok_or_else(|| format!("no patient file for {name}"))?;
    let folder = txt.parent().map(FsPath::to_path_buf).unwrap_or_default();
    let patient = formats::circor::PatientFile::read(&txt).map_err(|e| e.to_string())?;
    let murmur = patient.annotation("Murmur").map(str::to_owned);
    let outcome = patient.annotation("Outcome").map(str::to_owned);
    let output = score_output_named(outputs, &format!("{name}.csv"))
        .ok_or_else(|| "no output for this patient".to_owned())
        .and_then(|b| score::physionet2022::parse_output(&b).map_err(|e| format!("{e:?}")));
    let cols = (W - LEFT) as usize;
    let mut rows = Vec::new();
    let mut longest: f64 = 0.0;
    for r in patient.recordings() {
        let wav = formats::wav::Wav::read(folder.join(&r.wav_file)).map_err(|e| e.to_string())?;
        let fs = f64::from(wav.sample_rate().max(1));
        let len = wav.frames() as u64;
        longest = longest.max(len as f64 / fs);
        let (_, _, s0, s1) = window(from, to, fs, len);
        let values: Vec<f64> = match wav.channel(0) {
            Some(formats::wav::Samples::Int(v)) => v
                .get(s0 as usize..s1 as usize)
                .unwrap_or(&[])
                .iter()
                .map(|&x| f64::from(x))
                .collect(),
            Some(formats::wav::Samples::Float(v)) => v
                .get(s0 as usize..s1 as usize)
                .unwrap_or(&[])
                .iter()
                .map(|&x| f64::from(x))
                .collect(),
            None => Vec::new(),
        };
        rows.push((r.record_name().to_owned(), columns(&values, cols)));
    }
    let (from, to, _, _) = window(from, to, 1000.0, (longest * 1000.0) as u64);
    let height = rows.len() as f64 * LEAD_H + 24.0;
    let summary = format!(
        "{} recordings from {from:.1} s to {to:.1} s; true murmur {}, outcome {}.",
        rows.len(),
        murmur.as_deref().unwrap_or("unknown"),
        outcome.as_deref().unwrap_or("unknown")
    );
    let truths = [
        murmur.clone().unwrap_or_default(),
        outcome.clone().unwrap_or_default(),
    ];
    Ok(html! {
        dl.facts {
            dt { "True murmur" } dd { (murmur.as_deref().unwrap_or("not labelled")) }
            dt { "True outcome" } dd { (outcome.as_deref().unwrap_or("not labelled")) }
        }
        @match &output {
            Ok(o) => {
                div.scroll { table {
                    caption { "The entry's output" }
                    thead { tr { th scope="col" { "Class" } th scope="col" { "Chosen" } th scope="col" { "Probability" } th scope="col" { "Truth" } } }
                    tbody {
                        @for (i, class) in o.classes.iter().enumerate() {
                            tr {
                                th scope="row" { (class) }
                                td { (o.binaries.get(i).map(String::as_str).unwrap_or("")) }
                                td.num { (o.scores.get(i).map(String::as_str).unwrap_or("")) }
                                td { @if truths.contains(class) { span.state.state-scored { "true class" } } }
                            }
                        }
                    }
                } }
            }
            Err(why) => { p.error { "No usable output: " (why) " (scored as the empty output)." } }
        }
        (zoom_links(from, to, longest))
        figure.plot.record {
            svg viewBox={"0 0 " (W) " " (height)} role="img" aria-label=(summary) xmlns="http://www.w3.org/2000/svg" {
                @for (i, (label, c)) in rows.iter().enumerate() {
                    @let top = i as f64 * LEAD_H;
                    path d=(lead_path(c, top)) fill="none" stroke="#1b1f24" stroke-width="0.6" {}
                    text x=(LEFT + 4.0) y=(top + 14.0) font-size="12" fill="#333" { (label) }
                }
                text x=(LEFT) y=(height - 4.0) font-size="12" fill="#333" { (format!("{from:.1} s")) }
                text x=(W - 2.0) y=(height - 4.0) font-size="12" text-anchor="end" fill="#333" { (format!("{to:.1} s")) }
            }
            figcaption { (summary) " One row per recording location; one min/max pair per pixel column." }
        }
    })
}

/// The speller's character for a target code (101 = A … 126 = Z, 127 = 1 … 135 = 9,
/// 136 = _), as docs/architecture.md fixes it.
fn speller_char(code: i64) -> Option<char> {
    match code {
        101..=126 => char::from_u32(u32::try_from(code - 101).ok()? + u32::from(b'A')),
        127..=135 => char::from_u32(u32::try_from(code - 127).ok()? + u32::from(b'1')),
        136 => Some('_'),
        _ => None,
    }
}

/// P300 speller: per trial of the subject's blocks, the target (from the data's
/// triggers), the reported character (the trial's accepted report in the session log),
/// the sequences used and whether the report was valid.
fn draw_p300(data: &FsPath, outputs: &FsPath, name: &str) -> Result<Markup, String> {
    if name.contains('/') || name.contains("..") {
        return Err(format!("subject {name:?}"));
    }
    let subject = stream::load::subject(&data.join(name), 0).map_err(|e| e.to_string())?;
    let session: serde_json::Value = score_output_named(outputs, "session.json")
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(serde_json::Value::Null);
    let list = |k: &str| -> Vec<serde_json::Value> {
        session
            .get(k)
            .and_then(|v| v.as_array())
            .cloned()
            .unwrap_or_default()
    };
    let (trials, log) = (list("trials"), list("log"));
    let is = |v: &serde_json::Value, block: &str, trial: usize| {
        v.get("block").and_then(|b| b.as_str()) == Some(block)
            && v.get("trial").and_then(serde_json::Value::as_u64) == Some(trial as u64)
    };
    let mut rows = Vec::new();
    for b in &subject.blocks {
        for (i, t) in b.trials().map_err(|e| e.to_string())?.iter().enumerate() {
            let accepted = log.iter().find(|r| {
                is(r, &b.name, i) && r.get("status").and_then(|s| s.as_str()) == Some("accepted")
            });
            let later = log
                .iter()
                .filter(|r| {
                    is(r, &b.name, i) && r.get("status").and_then(|s| s.as_str()) == Some("later")
                })
                .count();
            let outcome = trials.iter().find(|r| is(r, &b.name, i));
            let reported = accepted
                .and_then(|r| r.get("code"))
                .and_then(serde_json::Value::as_i64);
            let sequences = outcome
                .and_then(|o| o.get("sequences"))
                .and_then(serde_json::Value::as_u64);
            rows.push((
                b.name.clone(),
                i + 1,
                speller_char(i64::from(t.code)),
                reported,
                sequences,
                later,
            ));
        }
    }
    let right = rows
        .iter()
        .filter(|r| r.3.and_then(speller_char).is_some() && r.3.and_then(speller_char) == r.2)
        .count();
    Ok(html! {
        p { (rows.len()) " trials in " (subject.blocks.len()) @if subject.blocks.len() == 1 { " block; " } @else { " blocks; " } (right) " reported right. "
            "A trial without a valid report counts as wrong and takes the full 5 sequences (9 s)." }
        @if session.is_null() { p.error { "No session log was kept for this submission's quiz." } }
        div.scroll { table {
            thead { tr { th scope="col" { "Block" } th scope="col" { "Trial" } th scope="col" { "Target" } th scope="col" { "Reported" }
                th scope="col" { "Sequences used" } th scope="col" { "Valid report" } th scope="col" { "Result" } } }
            tbody {
                @for (block, n, target, reported, sequences, later) in &rows {
                    @let got = reported.and_then(speller_char);
                    tr {
                        td { (block) } td.num { (n) }
                        td { (target.map(String::from).unwrap_or_else(|| "?".into())) }
                        td { @match (reported, got) {
                            (Some(_), Some(ch)) => { (ch) }
                            (Some(code), None) => { "code " (code) }
                            (None, _) => { "—" }
                        } @if *later > 0 { span.muted { " (" (later) " later report" @if *later > 1 { "s" } " ignored)" } } }
                        td.num { (sequences.map_or("5 (none)".to_string(), |s| s.to_string())) }
                        td { @if reported.is_some() { "yes" } @else { "no" } }
                        td { @if got.is_some() && got == *target { span.state.state-scored { "right" } } @else { span.state.state-failed { "wrong" } } }
                    }
                }
            }
        } }
    })
}

fn score_output_named(outputs: &FsPath, file: &str) -> Option<Vec<u8>> {
    judge::outputs::read_capped(&outputs.join(file), 16 << 20)
        .ok()
        .flatten()
}

/// The entry's quiz output for a record, read without following links (the folder
/// holds what an untrusted entry wrote, already copied by the judge).
fn score_output(outputs: &FsPath, name: &str) -> Option<Vec<u8>> {
    for ext in ["json", "mat"] {
        if let Ok(Some(b)) =
            judge::outputs::read_capped(&outputs.join(format!("{name}.{ext}")), 16 << 20)
        {
            return Some(b);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_keep_each_columns_extremes() {
        let v: Vec<f64> = (0..1000)
            .map(|i| if i == 503 { 9.0 } else { (i % 7) as f64 })
            .collect();
        let c = columns(&v, 10);
        assert_eq!(c.len(), 10);
        assert_eq!(c[5], Some((0.0, 9.0)));
        assert_eq!(c[0], Some((0.0, 6.0)));
        // fewer samples than columns: every column still has one
        assert!(columns(&[1.0, 2.0], 5).iter().all(Option::is_some));
        assert_eq!(columns(&[f64::NAN; 4], 2), vec![None, None]);
    }

    #[test]
    fn speller_codes_are_row_major() {
        assert_eq!(speller_char(101), Some('A'));
        assert_eq!(speller_char(126), Some('Z'));
        assert_eq!(speller_char(127), Some('1'));
        assert_eq!(speller_char(135), Some('9'));
        assert_eq!(speller_char(136), Some('_'));
        assert_eq!(speller_char(100), None);
        assert_eq!(speller_char(137), None);
    }

    #[test]
    fn bands_are_clipped_to_the_window() {
        let b = bands(
            &[(0.0, 50.0), (900.0, 2000.0), (3000.0, 4000.0)],
            100.0,
            1100.0,
        );
        assert_eq!(b.len(), 1);
        assert!((b[0].0 - (LEFT + 800.0 * (W - LEFT) / 1000.0)).abs() < 1e-9);
    }
}
