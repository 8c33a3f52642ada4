//! Publishing and rescoring a challenge in the console
//! (`/organiser/challenges/{id}/publish`): per phase, publishing its final leaderboard
//! (a refusal lists its blockers in place, each with its team and what to do); a
//! rescoring with a reason; and the challenge's rescoring history, each rescoring with
//! its own page (`/organiser/rescores/{id}`: its changes; Apply or Cancel while
//! pending).

use axum::Form;
use axum::extract::{Path, Query, State};
use axum::response::IntoResponse;
use maud::{Markup, html};

use server::views::{BlockerView, LeaderboardView, RescoreView};

use super::{
    Call, Done, Kept, PageResult, Room, Sent, act, challenge, console_page, form_head, organiser,
    room,
};
use crate::Web;
use crate::api::{self, seg};
use crate::html::{PageError, state_badge, time};
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

/// A refused publication's blockers (in the API's error body), each with its team's
/// name (empty when the team cannot be read).
async fn blockers(web: &Web, sent: Option<&Sent>) -> Vec<(BlockerView, String)> {
    let list: Vec<BlockerView> = sent
        .and_then(Sent::failed)
        .and_then(|f| f.body.as_ref())
        .and_then(|v| v.pointer("/error/blockers").cloned())
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default();
    let mut out = Vec::with_capacity(list.len());
    for b in list {
        let team = match web.store.team(store::TeamId(b.team)).await {
            Ok(t) => t.name,
            Err(_) => String::new(),
        };
        out.push((b, team));
    }
    out
}

fn blocker_list(blockers: &[(BlockerView, String)]) -> Markup {
    html! {
        p { "The phase cannot be published yet. Resolve these first, then publish again:" }
        ul.blockers {
            @for (b, team) in blockers { li {
                @if b.kind == "unfinished" { strong { "Unfinished" } } @else if b.kind == "no_exam_result" { strong { "No exam result under the current versions" } } @else if b.kind == "extension_open" { strong { "Deadline extension still open" } } @else { strong { (b.kind) } }
                ": team " (if team.is_empty() { b.team.to_string() } else { team.clone() })
                @if let Some(sub) = &b.submission {
                    ", submission " a href={"/submissions/" (sub)} { code { (sub) } }
                }
                @if let Some(st) = &b.state { " " (state_badge(word(st).as_str())) }
                @if b.kind == "unfinished" { " — wait for it to end, or requeue it if it is in error" }
                @else if b.kind == "no_exam_result" { " — rescore the challenge, or the team selects another entry" }
                @else if let (true, Some(c)) = (b.kind == "extension_open", b.closes) { " — it may submit until " (time(c)) "; publish after that, or revoke the extension" }
                @else { " — " (b.message) }
            } }
        }
    }
}

async fn draw(web: &Web, ctx: &Ctx, id: &str, d: Done, kept: Kept<'_>) -> PageResult {
    let token = organiser(ctx)?;
    let c = challenge(web, token, id).await?;
    let history: Vec<RescoreView> = api::get(
        web,
        &format!("/api/v1/challenges/{}/rescores", seg(&c.id)),
        Some(token),
    )
    .await
    .json()
    .map_err(super::refused)?;
    let blockers = blockers(web, kept.of("publish")).await;
    let refused_phase = kept.of("publish").map(|s| s.get("phase").to_owned());
    let base = Room::Publish.path(&c.id);
    let body = html! {
        p.muted {
            "Publishing stores a phase's final leaderboard (each team's selected submission, else its best) as a new numbered version that never changes. "
            "It is refused while a submission of the phase is queued, running or in error, or a final entry has no exam result under the current versions."
        }
        @if c.phases.is_empty() { p { "No phase yet." } }
        @for p in &c.phases {
            div.publish {
                // The fragment brings a refusal into view without a script.
                form.inline method="post" action={(base) "#publish-refusal"} {
                    (form_head(ctx, "publish"))
                    input type="hidden" name="phase" value=(p.name);
                    button type="submit" { "Publish the final leaderboard of " (p.name) }
                }
                " "
                a href={"/challenges/" (seg(&c.id)) "/leaderboard?phase=" (seg(&p.name)) "&board=published"} { "Published versions of " (p.name) }
                @if let (Some(f), true) = (kept.of("publish").and_then(Sent::failed), refused_phase.as_deref() == Some(p.name.as_str())) {
                    section.refusal #publish-refusal role="alert" aria-labelledby="publish-refusal-h" {
                        h2 #publish-refusal-h { "Not published: " (p.name) " of " (c.id) }
                        // The API's message lists the blockers too; below they are one a
                        // line with the team's name, so it is said once.
                        @if blockers.is_empty() { p { (f.message) } } @else { (blocker_list(&blockers)) }
                    }
                }
            }
        }
        section aria-labelledby="rescore-h" {
            h2 #rescore-h { "Rescore" }
            p.muted { "Rescoring scores every scored submission of the challenge again from the outputs its run kept; nothing changes until you apply it." }
            (kept.refusal("rescore"))
            form.stack method="post" action={"/organiser/challenges/" (seg(&c.id)) "/rescore"} {
                (form_head(ctx, "rescore"))
                label for="rescore-reason" { "Reason" }
                input #rescore-reason type="text" name="reason" required maxlength="1000" value=(kept.value("rescore", "reason", ""));
                button type="submit" { "Rescore every scored submission of " (c.id) }
            }
        }
        section aria-labelledby="history-h" {
            h2 #history-h { "Rescoring history" }
            @if history.is_empty() { p { "No rescoring yet." } }
            @else {
                div.scroll { table #rescore-history {
                    thead { tr { th scope="col" { "Asked" } th scope="col" { "State" } th scope="col" { "Reason" } th scope="col" { "Results that change" } th scope="col" { "Decided" } th scope="col" { "Scorer" } } }
                    tbody { @for r in &history { tr {
                        td { a href={"/organiser/rescores/" (r.id)} { (time(r.created_at)) } }
                        td { (state_badge(&word(&r.state))) }
                        td { (r.reason) }
                        td.num { (r.changes.len()) }
                        td { @if let Some(t) = r.decided_at { (time(t)) } @else { "—" } }
                        td { code { (r.scorer_version) } }
                    } } }
                } }
            }
        }
    };
    Ok(console_page(
        ctx,
        kept,
        &format!("Publish and rescore {}", c.title),
        room(&c, Room::Publish, d.notice(), body),
    ))
}

/// Publishes a phase's final leaderboard and shows the published version; a refusal
/// (its blockers listed) is this page again.
pub(crate) async fn publish(
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
            let path = format!("/api/v1/challenges/{}/publish", seg(id));
            Ok(Call::post(
                path,
                serde_json::json!({"phase": s.get("phase")}),
            ))
        },
        |b: LeaderboardView| {
            let version = b.published.map(|p| p.version).unwrap_or_default();
            format!(
                "/challenges/{}/leaderboard?phase={}&board=published&version={version}",
                seg(id),
                seg(&b.phase)
            )
        },
        |s| async move { draw(web, ctx, id, Done::default(), Kept(Some(&s))).await },
    )
    .await
}

/// Asks the API to rescore a challenge; the pending rescoring's page follows.
pub(crate) async fn rescore(
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
            let path = format!("/api/v1/challenges/{}/rescore", seg(id));
            Ok(Call::post(
                path,
                serde_json::json!({"reason": s.get("reason")}),
            ))
        },
        |r: RescoreView| format!("/organiser/rescores/{}", r.id),
        |s| async move { draw(web, ctx, id, Done::default(), Kept(Some(&s))).await },
    )
    .await
}

/// A rescoring: why, by which versions, what it covered, and each result it changes
/// with its ranking numbers before and after; Apply and Cancel while it is pending.
pub(crate) async fn rescore_page(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
) -> PageResult {
    draw_rescore(&web, &ctx, &id, Kept::default()).await
}

async fn draw_rescore(web: &Web, ctx: &Ctx, id: &str, kept: Kept<'_>) -> PageResult {
    let token = organiser(ctx)?;
    let r: RescoreView = api::get(web, &format!("/api/v1/rescores/{}", seg(id)), Some(token))
        .await
        .json()
        .map_err(super::refused)?;
    let mut keys: Vec<&String> = Vec::new();
    for c in &r.changes {
        for k in c.before.keys().chain(c.after.keys()) {
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    let mut teams = Vec::with_capacity(r.changes.len());
    for c in &r.changes {
        let name = match web
            .store
            .submission(store::SubmissionId(c.submission))
            .await
        {
            Ok(s) => web
                .store
                .team(s.team)
                .await
                .map(|t| t.name)
                .unwrap_or_default(),
            Err(_) => String::new(),
        };
        teams.push(name);
    }
    let count = |k: &str| r.scope.get(k).and_then(serde_json::Value::as_u64);
    let unscorable: Vec<(String, String)> = r
        .scope
        .get("unscorable")
        .and_then(serde_json::Value::as_array)
        .map(|a| {
            a.iter()
                .map(|u| {
                    let s = u.get("submission").and_then(|v| v.as_str()).unwrap_or("");
                    let why = u.get("why").and_then(|v| v.as_str()).unwrap_or("");
                    (s.to_owned(), why.to_owned())
                })
                .collect()
        })
        .unwrap_or_default();
    let state = word(&r.state);
    let body = html! {
        p.crumbs { a href="/organiser" { "Organiser console" } " › " a href=(Room::Publish.path(&r.challenge)) { (r.challenge) } }
        h1 { "Rescoring of " (r.challenge) }
        dl.facts {
            dt { "State" } dd #rescore-state { (state_badge(&state)) }
            dt { "Reason" } dd { (r.reason) }
            dt { "Asked" } dd { (time(r.created_at)) }
            @if let Some(t) = r.decided_at { dt { "Decided" } dd { (time(t)) } }
            dt { "Scorer" } dd { code { (r.scorer_version) } }
            dt { "Judge" } dd { code { (r.judge_version) } }
            dt { "Results scored again" } dd { (count("results").map(|n| n.to_string()).unwrap_or_else(|| "—".into())) }
            dt { "Results that change" } dd { (r.changes.len()) }
        }
        @if !unscorable.is_empty() {
            section aria-labelledby="unscorable-h" {
                h2 #unscorable-h { "Not rescored" }
                ul { @for (s, why) in &unscorable { li {
                    "submission " a href={"/submissions/" (seg(s))} { code { (s) } } ": " (why)
                } } }
            }
        }
        section aria-labelledby="changes-h" {
            h2 #changes-h { "Changes" }
            @if r.changes.is_empty() { p { "No result changes: every score is the same when scored again." } }
            @else {
                div.scroll { table #rescore-changes {
                    thead { tr {
                        th scope="col" { "Submission" } th scope="col" { "Team" } th scope="col" { "Attempt" }
                        @for k in &keys { th scope="col" { (k) " before" } th scope="col" { (k) " after" } }
                        th scope="col" { "Scorer" } th scope="col" { "Warnings" }
                    } }
                    tbody { @for (c, team) in r.changes.iter().zip(&teams) { tr {
                        th scope="row" { a href={"/submissions/" (c.submission)} { code.hash { (c.submission) } } }
                        td { (team) }
                        td.num { (c.attempt) }
                        @for k in &keys {
                            td.num { (crate::html::num(c.before.get(*k).copied().flatten(), 12)) }
                            td.num { (crate::html::num(c.after.get(*k).copied().flatten(), 12)) }
                        }
                        td { @if c.scorer_before == c.scorer_after { code { (c.scorer_after) } } @else { code { (c.scorer_before) } " → " code { (c.scorer_after) } } }
                        td { @for w in &c.warnings { (w) br; } }
                    } } }
                } }
            }
        }
        @if state == "pending" {
            (kept.refusal("decide"))
            div.decide {
                form.inline method="post" action={"/organiser/rescores/" (r.id) "/apply"} {
                    (form_head(ctx, "decide")) button type="submit" { "Apply these changes" }
                }
                " "
                form.inline method="post" action={"/organiser/rescores/" (r.id) "/cancel"} {
                    (form_head(ctx, "decide")) button type="submit" { "Cancel this rescoring" }
                }
            }
            p.muted { "Applying replaces every listed result at once (the old ones are kept, marked replaced); it is refused if any of them is no longer the live one. Cancelling keeps this record and changes nothing." }
        }
    };
    Ok(console_page(ctx, kept, "Rescoring", body))
}

/// Applies or cancels a pending rescoring, then shows it again (a refusal, say it is
/// no longer pending, in place above the buttons).
pub(crate) async fn decide_rescore(
    State(web): State<Web>,
    ctx: Ctx,
    Path((id, decision)): Path<(String, String)>,
    Form(sent): Form<Sent>,
) -> PageResult {
    if decision != "apply" && decision != "cancel" {
        return Err(PageError::not_found("There is no page at this address.").into_response());
    }
    let (web, ctx) = (&web, &ctx);
    let id = id.as_str();
    let decision = decision.as_str();
    act(
        web,
        ctx,
        sent,
        |_| {
            let path = format!("/api/v1/rescores/{}/{decision}", seg(id));
            Ok(Call::post(path, serde_json::json!({})))
        },
        |r: RescoreView| format!("/organiser/rescores/{}", r.id),
        |s| async move { draw_rescore(web, ctx, id, Kept(Some(&s))).await },
    )
    .await
}
