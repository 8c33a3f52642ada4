//! The console's front rooms: `/organiser` (the organiser's challenges, the queue, and
//! creating a challenge) and `/organiser/challenges/{id}` (one challenge's overview:
//! its facts, phases, queue, judging paused or not with the reason, its title).

use axum::Form;
use axum::extract::{Path, Query, State};
use maud::html;

use server::views::ChallengeView;

use super::{
    Call, Done, Kept, PageResult, Room, Sent, act, challenge, console_page, done, form_head,
    internal, organiser, room,
};
use crate::Web;
use crate::api::{self, seg};
use crate::html::{state_badge, time};
use crate::pages::word;
use crate::session::Ctx;

/// The built-in definitions a challenge may be created from.
fn built_ins() -> impl Iterator<Item = &'static str> {
    judge::challenge::BUILT_IN.iter().map(|(id, _)| *id)
}

pub(crate) async fn list(State(web): State<Web>, ctx: Ctx, Query(d): Query<Done>) -> PageResult {
    draw_list(&web, &ctx, d, Kept::default()).await
}

async fn draw_list(web: &Web, ctx: &Ctx, d: Done, kept: Kept<'_>) -> PageResult {
    let token = organiser(ctx)?;
    let challenges: Vec<ChallengeView> = api::get(web, "/api/v1/challenges", Some(token))
        .await
        .json()
        .map_err(super::refused)?;
    let counts = web.store.state_counts(None).await.map_err(internal)?;
    let f = "challenge-new";
    let body = html! {
        h1 { "Organiser console" }
        (d.notice())
        section aria-labelledby="challenges" {
            h2 #challenges { "Challenges" }
            @if challenges.is_empty() { p { "No challenge yet: create the first below." } }
            @else {
                div.scroll { table #console-challenges {
                    thead { tr { th scope="col" { "Challenge" } th scope="col" { "Title" } th scope="col" { "Phases" } th scope="col" { "Judging" } } }
                    tbody { @for c in &challenges { tr {
                        th scope="row" { a href=(Room::Overview.path(&c.id)) { (c.id) } }
                        td { (c.title) }
                        td.num { (c.phases.len()) }
                        td { @if c.judging_paused { strong { "paused" } } @else { "running" } }
                    } } }
                } }
            }
        }
        section aria-labelledby="queue" {
            h2 #queue { "Queue" }
            ul.plain.counts { @for (s, n) in &counts { li { (state_badge(s.as_str())) " " (n) } } }
            p { a href="/organiser/workers" { "Workers" } " · " a href="/organiser/metrics" { "Prometheus metrics" } }
        }
        section aria-labelledby="new-challenge" {
            h2 #new-challenge { "Create a challenge" }
            (kept.refusal(f))
            form.stack method="post" action="/organiser/challenges" {
                (form_head(ctx, f))
                label for="c-id" { "Id (a-z, 0-9, - and _)" }
                input #c-id type="text" name="id" required pattern="[a-z0-9_-]+" maxlength="64" value=(kept.value(f, "id", ""));
                label for="c-title" { "Title (optional: the definition's)" }
                input #c-title type="text" name="title" maxlength="100" value=(kept.value(f, "title", ""));
                label for="c-def" {
                    "Definition: a built-in id (" (built_ins().collect::<Vec<_>>().join(", "))
                    ") — under any id, for a second run — or the text of a TOML definition whose id is this one"
                }
                textarea #c-def name="definition" rows="3" required { (kept.value(f, "definition", "")) }
                label for="c-data" { "Data folder on the server (an absolute path)" }
                input #c-data type="text" name="data" required value=(kept.value(f, "data", ""));
                button type="submit" { "Create the challenge" }
            }
        }
    };
    Ok(console_page(ctx, kept, "Organiser console", body))
}

pub(crate) async fn create(State(web): State<Web>, ctx: Ctx, Form(sent): Form<Sent>) -> PageResult {
    let (web, ctx) = (&web, &ctx);
    act(
        web,
        ctx,
        sent,
        |s| {
            let mut body = serde_json::json!({
                "id": s.get("id").trim(),
                "definition": s.get("definition").trim(),
                "data": s.get("data").trim(),
            });
            if let Some(t) = s.opt("title") {
                body["title"] = t.into();
            }
            Ok(Call::post("/api/v1/challenges".into(), body))
        },
        |c: ChallengeView| done(&Room::Phases.path(&c.id), "challenge", &c.id),
        |s| async move { draw_list(web, ctx, Done::default(), Kept(Some(&s))).await },
    )
    .await
}

pub(crate) async fn show(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
    Query(d): Query<Done>,
) -> PageResult {
    draw(&web, &ctx, &id, d, Kept::default()).await
}

async fn draw(web: &Web, ctx: &Ctx, id: &str, d: Done, kept: Kept<'_>) -> PageResult {
    let token = organiser(ctx)?;
    let c = challenge(web, token, id).await?;
    let counts = web.store.state_counts(Some(id)).await.map_err(internal)?;
    let base = Room::Overview.path(&c.id);
    let now = web.store.now();
    let body = html! {
        dl.facts {
            dt { "Id" } dd { code { (c.id) } }
            dt { "Definition" } dd { (word(&c.definition_kind)) " " code.hash { (c.definition_sha256) } }
            @if let Some(p) = &c.data_path { dt { "Data folder" } dd { code { (p) } } }
            dt { "Data" } dd { (c.files) " files, manifest " code.hash { (c.manifest_sha256) } }
            dt { "Ranked by" } dd { @for (i, r) in c.ranking.iter().enumerate() {
                @if i > 0 { ", then " } (r.name) " (" (word(&r.better)) " is better)"
            } }
            dt { "Created" } dd { (time(c.created_at)) }
        }
        section aria-labelledby="phases-h" {
            h2 #phases-h { "Phases" }
            @if c.phases.is_empty() { p { "No phase yet: " a href=(Room::Phases.path(&c.id)) { "add the first" } "." } }
            @else { ul { @for p in &c.phases { li {
                strong { (p.name) } ": " (time(p.opens)) " to " (time(p.closes))
                @if p.opens <= now && now < p.closes { " — open now" }
            } } } }
        }
        section aria-labelledby="queue-h" {
            h2 #queue-h { "Its submissions" }
            @if counts.is_empty() { p { "None yet." } }
            @else { ul.plain.counts { @for (s, n) in &counts { li { (state_badge(s.as_str())) " " (n) } } } }
            p { a href=(Room::Submissions.path(&c.id)) { "Every submission, with filters" } " · "
                a href={"/organiser/results.csv?challenge=" (seg(&c.id))} { "all with their figures (CSV)" } }
        }
        section aria-labelledby="judging-h" {
            h2 #judging-h { "Judging" }
            p.muted { "Pausing keeps accepting and queueing submissions; no worker takes one until judging resumes, and runs under way finish. Participants see the reason on the challenge's page." }
            @if c.judging_paused {
                p #judging-state { strong { "Paused" } @if let Some(t) = c.paused_at { " since " (time(t)) }
                    @if let Some(r) = &c.pause_reason { ": " (r) } }
                (kept.refusal("resume"))
                form.inline method="post" action={(base) "/resume"} { (form_head(ctx, "resume")) button type="submit" { "Resume judging" } }
            } @else {
                p #judging-state { "Running." }
                (kept.refusal("pause"))
                form.stack method="post" action={(base) "/pause"} {
                    (form_head(ctx, "pause"))
                    label for="pause-why" { "Reason (shown to participants)" }
                    input #pause-why type="text" name="why" required maxlength="1000" value=(kept.value("pause", "why", ""));
                    button type="submit" { "Pause judging" }
                }
            }
        }
        section aria-labelledby="edit-h" {
            h2 #edit-h { "Edit" }
            (kept.refusal("edit"))
            form.stack method="post" action={(base) "/edit"} {
                (form_head(ctx, "edit"))
                label for="e-title" { "Title" }
                input #e-title type="text" name="title" required maxlength="100" value=(kept.value("edit", "title", &c.title));
                button type="submit" { "Save" }
            }
            p.muted { "The definition and the data folder are fixed when a challenge is created (its results are pinned to them); create another challenge to change them." }
        }
    };
    Ok(console_page(
        ctx,
        kept,
        &c.title,
        room(&c, Room::Overview, d.notice(), body),
    ))
}

pub(crate) async fn edit(
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
            Ok(Call {
                method: axum::http::Method::PATCH,
                path: format!("/api/v1/challenges/{}", seg(id)),
                body: serde_json::json!({"title": s.get("title").trim()}),
            })
        },
        |c: ChallengeView| done(&Room::Overview.path(&c.id), "edited", ""),
        |s| async move { draw(web, ctx, id, Done::default(), Kept(Some(&s))).await },
    )
    .await
}

pub(crate) async fn pause(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
    Form(sent): Form<Sent>,
) -> PageResult {
    judging(web, ctx, id, sent, "pause").await
}

pub(crate) async fn resume(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
    Form(sent): Form<Sent>,
) -> PageResult {
    judging(web, ctx, id, sent, "resume").await
}

/// Pauses (with the reason given) or resumes the judging of a challenge.
async fn judging(web: Web, ctx: Ctx, id: String, sent: Sent, action: &str) -> PageResult {
    let (web, ctx) = (&web, &ctx);
    let id = id.as_str();
    act(
        web,
        ctx,
        sent,
        |s| {
            let mut path = format!("/api/v1/challenges/{}/{action}", seg(id));
            if let Some(why) = s.opt("why") {
                path = format!("{path}?why={}", seg(why));
            }
            Ok(Call::post(path, serde_json::json!({})))
        },
        |c: ChallengeView| {
            let what = if c.judging_paused {
                "paused"
            } else {
                "resumed"
            };
            done(&Room::Overview.path(&c.id), what, "")
        },
        |s| async move { draw(web, ctx, id, Done::default(), Kept(Some(&s))).await },
    )
    .await
}
