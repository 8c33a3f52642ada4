//! The workers in the console (`/organiser/workers`, server-wide): each with its state
//! (who changed it and why), last heartbeat, the judge version and runtime lock it
//! announced against the server's, any refusal, its running attempts and errors, and
//! Drain, Disable and Enable where its state allows; and `/organiser/metrics`, the
//! Prometheus metrics read with the organiser's session.

use axum::Form;
use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::IntoResponse;
use maud::html;

use server::views::{WorkerView, WorkersView};

use super::{Call, Done, Kept, PageResult, Sent, act, console_page, done, form_head, organiser};
use crate::Web;
use crate::api::{self, seg};
use crate::html::{PageError, duration, time};
use crate::pages::word;
use crate::session::Ctx;

pub(crate) async fn page_of(State(web): State<Web>, ctx: Ctx, Query(d): Query<Done>) -> PageResult {
    draw(&web, &ctx, d, Kept::default()).await
}

async fn draw(web: &Web, ctx: &Ctx, d: Done, kept: Kept<'_>) -> PageResult {
    let token = organiser(ctx)?;
    let workers: WorkersView = api::get(web, "/api/v1/workers", Some(token))
        .await
        .json()
        .map_err(super::refused)?;
    let now = web.store.now();
    let body = html! {
        p.crumbs { a href="/organiser" { "Organiser console" } " › workers" }
        h1 { "Workers" }
        (d.notice())
        (kept.refusal("worker"))
        section {
            p.muted { "This server runs judge " code { (workers.server.judge_version) } " with runtime lock " code.hash { (workers.server.runtime_lock) }
                ": a worker of another is refused. A worker whose last " (workers.error_limit) " attempts ended in errors of its own is disabled automatically." }
            @if workers.workers.is_empty() { p { "No worker has registered." } }
            @else {
                div.scroll { table {
                    thead { tr {
                        th scope="col" { "Name" } th scope="col" { "State" } th scope="col" { "Last heartbeat" }
                        th scope="col" { "Version" } th scope="col" { "Running" } th scope="col" { "Errors (24 h · in a row)" } th scope="col" { "Actions" }
                    } }
                    tbody { @for w in &workers.workers { tr {
                        th scope="row" { (w.name) @if let Some(h) = &w.host { br; span.muted { (h) } } }
                        td {
                            (word(&w.state))
                            @if let Some(r) = &w.state_reason { br; span.muted { (r.message) } }
                            @if let Some(t) = w.state_changed_at { br; span.muted { "since " (time(t)) } }
                        }
                        td { @if let Some(t) = w.last_heartbeat { (time(t)) " (" (duration((now - t).num_seconds() as f64)) " ago)" } @else { "never" } }
                        td {
                            @match (&w.version, &w.runtime_lock) {
                                (Some(v), Some(l)) => { code { (v) } " " code.hash { (l) } @if !w.build_matches { br; strong { "not the server's: refused" } } }
                                _ => { "not announced" }
                            }
                            @if let Some(r) = &w.refusal { br; span.muted { "refused " (time(r.at)) ": " (r.message) } }
                        }
                        td { (w.running_attempts) @if let Some(n) = w.slots { " of " (n) " slots" } }
                        td {
                            (w.recent_errors) " · " (w.error_streak)
                            @if workers.error_limit > 0 && word(&w.state) == "enabled" && w.error_streak >= workers.error_limit {
                                br; strong.alert role="alert" { "at the limit, kept enabled: no other worker takes jobs" }
                            }
                        }
                        td {
                            @for (action, label, allowed) in [
                                ("drain", "Drain", word(&w.state) == "enabled"),
                                ("disable", "Disable", word(&w.state) != "disabled"),
                                ("enable", "Enable", word(&w.state) != "enabled"),
                            ] {
                                @if allowed {
                                    form.inline method="post" action={"/organiser/workers/" (w.id) "/" (action)} {
                                        (form_head(ctx, "worker")) button type="submit" { (label) }
                                    }
                                }
                            }
                        }
                    } } }
                } }
            }
        }
        p { a href="/organiser/metrics" { "Prometheus metrics" } " (the queue, the states, the failures and the API's answers, as text)" }
    };
    Ok(console_page(ctx, kept, "Workers", body))
}

/// Drains, disables or enables a worker through the API.
pub(crate) async fn worker_action(
    State(web): State<Web>,
    ctx: Ctx,
    Path((id, action)): Path<(String, String)>,
    Form(sent): Form<Sent>,
) -> PageResult {
    if !["drain", "disable", "enable"].contains(&action.as_str()) {
        return Err(PageError::not_found("no such worker action").into_response());
    }
    let (web, ctx) = (&web, &ctx);
    let id = id.as_str();
    let action = action.as_str();
    act(
        web,
        ctx,
        sent,
        |_| {
            let path = format!("/api/v1/workers/{}/{action}", seg(id));
            Ok(Call::post(path, serde_json::json!({})))
        },
        |w: WorkerView| done("/organiser/workers", &word(&w.state), &w.name),
        |s| async move { draw(web, ctx, Done::default(), Kept(Some(&s))).await },
    )
    .await
}

/// The API's `/metrics` for a signed-in organiser: the API wants a bearer token, which
/// a browser's link cannot send; the session's token is sent on its behalf.
pub(crate) async fn metrics(State(web): State<Web>, ctx: Ctx) -> PageResult {
    let token = organiser(&ctx)?;
    let a = api::get(&web, "/metrics", Some(token)).await;
    if !a.status.is_success() {
        return Err(super::refused(a.refusal()));
    }
    Ok(ctx.finish(
        (
            [(
                header::CONTENT_TYPE,
                "text/plain; version=0.0.4; charset=utf-8",
            )],
            a.body,
        )
            .into_response(),
    ))
}
