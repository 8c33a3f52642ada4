//! A challenge's phases in the console (`/organiser/challenges/{id}/phases`): each with
//! its times, quota, scored split, exam visibility and rule, a form to change any of
//! them, and a form to add a phase. Times are read and shown as UTC.

use axum::Form;
use axum::extract::{Path, Query, State};
use maud::{Markup, html};

use server::views::{ChallengeView, PhaseView};

use super::{
    Call, Done, Failed, Kept, PageResult, Room, Sent, act, challenge, console_page, done,
    form_head, limit, local_field, organiser, room, utc,
};
use crate::Web;
use crate::api::seg;
use crate::html::time;
use crate::pages::word;
use crate::session::Ctx;

pub(crate) async fn page_of(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
    Query(d): Query<Done>,
) -> PageResult {
    draw(&web, &ctx, &id, d, Kept::default()).await
}

fn quota_text(p: &PhaseView) -> String {
    let q = &p.quota;
    let parts: Vec<String> = [
        q.total.map(|t| format!("{t} in all")),
        q.per_day.map(|d| format!("{d} a day")),
        q.max_concurrent.map(|m| format!("{m} at once")),
    ]
    .into_iter()
    .flatten()
    .collect();
    if parts.is_empty() {
        "no limit".into()
    } else {
        parts.join(", ")
    }
}

async fn draw(web: &Web, ctx: &Ctx, id: &str, d: Done, kept: Kept<'_>) -> PageResult {
    let token = organiser(ctx)?;
    let c = challenge(web, token, id).await?;
    let body = html! {
        @if c.phases.is_empty() { p { "No phase yet. A phase is when teams may submit; add one below." } }
        @else {
            div.scroll { table #console-phases {
                thead { tr {
                    th scope="col" { "Phase" } th scope="col" { "Opens" } th scope="col" { "Closes" }
                    th scope="col" { "Quota" } th scope="col" { "Scored on" } th scope="col" { "Board shows" } th scope="col" { "Exam scores" }
                } }
                tbody { @for p in &c.phases { tr {
                    th scope="row" { (p.name) }
                    td { (time(p.opens)) } td { (time(p.closes)) }
                    td { (quota_text(p)) }
                    td { (word(&p.scored_split)) } td { "each team's " (word(&p.rule)) }
                    td { @if p.show_exam { "shown while open" } @else { "hidden until it closes" } }
                } } }
            } }
            @for p in &c.phases {
                @let f = format!("phase-{}", p.id);
                // Open when its form was refused, so the reason and the values show.
                details.edit open[kept.of(&f).is_some()] {
                    summary { "Change " (p.name) }
                    (phase_form(ctx, kept, &f, &c, Some(p)))
                }
            }
        }
        section aria-labelledby="new-phase" {
            h2 #new-phase { "Add a phase" }
            (phase_form(ctx, kept, "phase-new", &c, None))
        }
    };
    Ok(console_page(
        ctx,
        kept,
        &format!("Phases of {}", c.title),
        room(&c, Room::Phases, d.notice(), body),
    ))
}

/// The form of a phase: empty to add one, filled with `p` to change it.
fn phase_form(ctx: &Ctx, kept: Kept, f: &str, c: &ChallengeView, p: Option<&PhaseView>) -> Markup {
    let action = match p {
        Some(p) => format!("{}/{}", Room::Phases.path(&c.id), seg(&p.name)),
        None => Room::Phases.path(&c.id),
    };
    // Field ids unique on the page: the form's name with the field's.
    let fid = |field: &str| format!("{f}-{field}");
    let num = |v: Option<u32>| v.map(|v| v.to_string()).unwrap_or_default();
    let split = kept.value(
        f,
        "scored_split",
        &p.map(|p| word(&p.scored_split))
            .unwrap_or_else(|| "exam".into()),
    );
    let rule = kept.value(
        f,
        "rule",
        &p.map(|p| word(&p.rule)).unwrap_or_else(|| "best".into()),
    );
    html! {
        (kept.refusal(f))
        form.stack method="post" action=(action) {
            (form_head(ctx, f))
            label for=(fid("name")) { "Name" }
            input id=(fid("name")) type="text" name="name" required maxlength="100" value=(kept.value(f, "name", p.map_or("", |p| p.name.as_str())));
            label for=(fid("opens")) { "Opens (UTC)" }
            input id=(fid("opens")) type="datetime-local" name="opens" required value=(kept.value(f, "opens", &p.map(|p| local_field(p.opens)).unwrap_or_default()));
            label for=(fid("closes")) { "Closes (UTC)" }
            input id=(fid("closes")) type="datetime-local" name="closes" required value=(kept.value(f, "closes", &p.map(|p| local_field(p.closes)).unwrap_or_default()));
            label for=(fid("selection")) { "Final entries chosen until (UTC; empty: when it closes)" }
            input id=(fid("selection")) type="datetime-local" name="selection_closes" value=(kept.value(f, "selection_closes", &p.and_then(|p| p.selection_closes).map(local_field).unwrap_or_default()));
            label for=(fid("total")) { "Quota: submissions in all (empty: no limit)" }
            input id=(fid("total")) type="number" name="total" min="0" value=(kept.value(f, "total", &num(p.and_then(|p| p.quota.total))));
            label for=(fid("day")) { "Quota: per UTC day" }
            input id=(fid("day")) type="number" name="per_day" min="0" value=(kept.value(f, "per_day", &num(p.and_then(|p| p.quota.per_day))));
            label for=(fid("conc")) { "Quota: at once" }
            input id=(fid("conc")) type="number" name="max_concurrent" min="0" value=(kept.value(f, "max_concurrent", &num(p.and_then(|p| p.quota.max_concurrent))));
            label for=(fid("split")) { "Scored on" }
            select id=(fid("split")) name="scored_split" {
                @for s in ["exam", "quiz"] { option value=(s) selected[split == s] { (s) } }
            }
            label for=(fid("rule")) { "Leaderboard shows each team's" }
            select id=(fid("rule")) name="rule" {
                @for r in ["best", "latest"] { option value=(r) selected[rule == r] { (r) } }
            }
            label { input type="checkbox" name="show_exam" value="true" checked[kept.checked(f, "show_exam", p.is_none_or(|p| p.show_exam))]; " show exam scores before the phase closes" }
            button type="submit" { @if p.is_some() { "Save " (p.map_or("", |p| p.name.as_str())) } @else { "Add the phase" } }
        }
    }
}

/// The API's body for a phase form (its times as UTC, its limits as numbers).
fn phase_body(s: &Sent) -> Result<serde_json::Value, Failed> {
    Ok(serde_json::json!({
        "name": s.get("name").trim(),
        "opens": utc("Opens", s.get("opens"))?,
        "closes": utc("Closes", s.get("closes"))?,
        // Sent always: a phase changed without it would lose its selection deadline.
        "selection_closes": s
            .opt("selection_closes")
            .map(|t| utc("Final entries chosen until", t))
            .transpose()?,
        "quota": {
            "total": limit("Submissions in all", s.opt("total"))?,
            "per_day": limit("Per UTC day", s.opt("per_day"))?,
            "max_concurrent": limit("At once", s.opt("max_concurrent"))?,
        },
        "scored_split": s.get("scored_split"),
        "show_exam": !s.get("show_exam").is_empty(),
        "rule": s.get("rule"),
    }))
}

pub(crate) async fn create(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
    Form(sent): Form<Sent>,
) -> PageResult {
    let (web, ctx) = (&web, &ctx);
    let id = id.as_str();
    act(
        web,
        ctx,
        sent,
        |s| {
            Ok(Call::post(
                format!("/api/v1/challenges/{}/phases", seg(id)),
                phase_body(s)?,
            ))
        },
        |p: PhaseView| done(&Room::Phases.path(&p.challenge), "phase", &p.name),
        |s| async move { draw(web, ctx, id, Done::default(), Kept(Some(&s))).await },
    )
    .await
}

pub(crate) async fn update(
    State(web): State<Web>,
    ctx: Ctx,
    Path((id, phase)): Path<(String, String)>,
    Form(sent): Form<Sent>,
) -> PageResult {
    let (web, ctx) = (&web, &ctx);
    let id = id.as_str();
    let phase = phase.as_str();
    act(
        web,
        ctx,
        sent,
        |s| {
            let path = format!("/api/v1/challenges/{}/phases/{}", seg(id), seg(phase));
            Ok(Call::put(path, phase_body(s)?))
        },
        |p: PhaseView| done(&Room::Phases.path(&p.challenge), "phase-saved", &p.name),
        |s| async move { draw(web, ctx, id, Done::default(), Kept(Some(&s))).await },
    )
    .await
}
