//! A challenge's per-team rules in the console (`/organiser/challenges/{id}/rules`):
//! per phase, the deadline extensions and quota overrides in force (each with its
//! reason, who set it and when, and how often it changed), forms to grant, change,
//! revoke or remove them, and the baseline teams.

use axum::Form;
use axum::extract::{Path, Query, State};
use axum::response::Response;
use maud::html;

use server::views::{
    ChallengeView, ExtensionView, PhaseView, QuotaLimits, QuotaOverrideView, TeamView,
};

use super::{
    Call, Done, Kept, PageResult, Room, Sent, act, challenge, console_page, done, form_head,
    internal, limit, organiser, room, utc,
};
use crate::Web;
use crate::api::{self, seg};
use crate::html::time;
use crate::session::Ctx;

/// One phase with its extensions and quota overrides in force (each with the name of
/// the organiser who set it).
struct PhaseRules {
    phase: PhaseView,
    extensions: Vec<(ExtensionView, String)>,
    quotas: Vec<(QuotaOverrideView, String)>,
}

async fn user_name(web: &Web, id: Option<uuid::Uuid>) -> String {
    match id {
        Some(id) => match web.store.user(store::UserId(id)).await {
            Ok(u) => u.name,
            Err(_) => id.to_string(),
        },
        None => "—".to_owned(),
    }
}

async fn phase_rules(
    web: &Web,
    token: &str,
    c: &ChallengeView,
) -> Result<Vec<PhaseRules>, Response> {
    let mut phases = Vec::new();
    for p in &c.phases {
        let base = format!("/api/v1/challenges/{}/phases/{}", seg(&c.id), seg(&p.name));
        let exts: Vec<ExtensionView> = api::get(web, &format!("{base}/extensions"), Some(token))
            .await
            .json()
            .map_err(super::refused)?;
        let quotas: Vec<QuotaOverrideView> = api::get(web, &format!("{base}/quotas"), Some(token))
            .await
            .json()
            .map_err(super::refused)?;
        let mut extensions = Vec::new();
        for e in exts {
            let by = user_name(web, e.set_by).await;
            extensions.push((e, by));
        }
        let mut qs = Vec::new();
        for q in quotas {
            let by = user_name(web, q.set_by).await;
            qs.push((q, by));
        }
        phases.push(PhaseRules {
            phase: p.clone(),
            extensions,
            quotas: qs,
        });
    }
    Ok(phases)
}

fn limits_text(q: &QuotaLimits) -> String {
    let mut parts = Vec::new();
    if let Some(t) = q.total {
        parts.push(format!("{t} in all"));
    }
    if let Some(d) = q.per_day {
        parts.push(format!("{d} a day"));
    }
    if let Some(m) = q.max_concurrent {
        parts.push(format!("{m} at once"));
    }
    if parts.is_empty() {
        "no limit".to_owned()
    } else {
        parts.join(", ")
    }
}

pub(crate) async fn page_of(
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
    let teams = web.store.teams(&c.id).await.map_err(internal)?;
    let phases = phase_rules(web, token, &c).await?;
    let base = format!("/organiser/challenges/{}", seg(&c.id));
    // A select keeps the team and phase sent when its form was refused.
    let chosen = |f: &str, field: &str| kept.value(f, field, "");
    let body = html! {
        p.muted {
            "An extension gives one team a later close of a phase (its uploads received before it are accepted; every other team keeps the phase's close). "
            "A quota override gives one team its own limits (those left empty stay the phase's). "
            "Each needs a reason and is kept, with every earlier change, with who set it and when. "
            "A baseline team (organisers' teams are hidden otherwise) is shown on every leaderboard with a badge."
        }
        (kept.refusal("rule-remove"))
        @if teams.is_empty() { p { "No team yet." } }
        @else {
            @for pr in &phases {
                @let p = &pr.phase;
                h2 { "Phase " (p.name) " — closes " (time(p.closes)) }
                @if pr.extensions.is_empty() { p.muted { "No extension." } }
                @else {
                    div.scroll { table.extensions {
                        caption { "Extensions of " (p.name) }
                        thead { tr { th scope="col" { "Team" } th scope="col" { "Closes for it" } th scope="col" { "Reason" } th scope="col" { "Set by" } th scope="col" { "Action" } } }
                        tbody { @for (e, by) in &pr.extensions { tr {
                            th scope="row" { (e.team) }
                            td { (time(e.closes)) }
                            td { (e.reason) }
                            td { (by) ", " (time(e.set_at)) @if e.history.len() > 1 { br; span.muted { (e.history.len()) " changes" } } }
                            td { form.inline method="post" action={(base) "/extensions/revoke"} {
                                (form_head(ctx, "rule-remove"))
                                input type="hidden" name="phase" value=(p.name);
                                input type="hidden" name="team" value=(e.team_id);
                                button type="submit" { "Revoke" }
                            } }
                        } } }
                    } }
                }
                @if pr.quotas.is_empty() { p.muted { "No quota override." } }
                @else {
                    div.scroll { table.quotas {
                        caption { "Quota overrides of " (p.name) }
                        thead { tr { th scope="col" { "Team" } th scope="col" { "Its limits" } th scope="col" { "Reason" } th scope="col" { "Set by" } th scope="col" { "Action" } } }
                        tbody { @for (q, by) in &pr.quotas { tr {
                            th scope="row" { (q.team) }
                            td { (limits_text(&q.effective)) }
                            td { (q.reason) }
                            td { (by) ", " (time(q.set_at)) @if q.history.len() > 1 { br; span.muted { (q.history.len()) " changes" } } }
                            td { form.inline method="post" action={(base) "/quotas/remove"} {
                                (form_head(ctx, "rule-remove"))
                                input type="hidden" name="phase" value=(p.name);
                                input type="hidden" name="team" value=(q.team_id);
                                button type="submit" { "Remove" }
                            } }
                        } } }
                    } }
                }
            }
            @if !phases.is_empty() {
                @let f = "extension";
                section aria-labelledby="extension-h" {
                    h2 #extension-h { "Grant or change an extension" }
                    (kept.refusal(f))
                    form.stack method="post" action={(base) "/extensions"} {
                        (form_head(ctx, f))
                        label for="x-phase" { "Phase" }
                        select #x-phase name="phase" { @for pr in &phases { option value=(pr.phase.name) selected[chosen(f, "phase") == pr.phase.name] { (pr.phase.name) } } }
                        label for="x-team" { "Team" }
                        select #x-team name="team" { @for t in &teams { option value=(t.id) selected[chosen(f, "team") == t.id.to_string()] { (t.name) } } }
                        label for="x-closes" { "Closes for the team (UTC)" }
                        input #x-closes type="datetime-local" name="closes" required value=(kept.value(f, "closes", ""));
                        label for="x-reason" { "Reason" }
                        input #x-reason type="text" name="reason" required maxlength="1000" value=(kept.value(f, "reason", ""));
                        button type="submit" { "Grant the extension" }
                    }
                }
                @let f = "quota";
                section aria-labelledby="quota-h" {
                    h2 #quota-h { "Set or change a team's quota" }
                    (kept.refusal(f))
                    form.stack method="post" action={(base) "/quotas"} {
                        (form_head(ctx, f))
                        label for="q-phase" { "Phase" }
                        select #q-phase name="phase" { @for pr in &phases { option value=(pr.phase.name) selected[chosen(f, "phase") == pr.phase.name] { (pr.phase.name) } } }
                        label for="q-team" { "Team" }
                        select #q-team name="team" { @for t in &teams { option value=(t.id) selected[chosen(f, "team") == t.id.to_string()] { (t.name) } } }
                        label for="q-total" { "Submissions in all (empty: the phase's)" }
                        input #q-total type="number" name="total" min="0" value=(kept.value(f, "total", ""));
                        label for="q-day" { "Per UTC day (empty: the phase's)" }
                        input #q-day type="number" name="per_day" min="0" value=(kept.value(f, "per_day", ""));
                        label for="q-conc" { "At once (empty: the phase's)" }
                        input #q-conc type="number" name="max_concurrent" min="0" value=(kept.value(f, "max_concurrent", ""));
                        label for="q-reason" { "Reason" }
                        input #q-reason type="text" name="reason" required maxlength="1000" value=(kept.value(f, "reason", ""));
                        button type="submit" { "Set the team's quota" }
                    }
                }
            }
            section aria-labelledby="baseline-h" {
                h2 #baseline-h { "Baseline teams" }
                (kept.refusal("baseline"))
                // A stack, not an inline form: a select as wide as the longest team name
                // must shrink to a narrow screen, which only the stack lets it.
                form.stack method="post" action={(base) "/baseline"} {
                    (form_head(ctx, "baseline"))
                    label for="b-team" { "Team" }
                    select #b-team name="team" { @for t in &teams { option value=(t.id) { (t.name) @if t.baseline { " (baseline)" } } } }
                    div.buttons {
                        button type="submit" name="baseline" value="true" { "Mark as baseline" }
                        " "
                        button type="submit" name="baseline" value="false" { "Unmark" }
                    }
                }
                @let marked: Vec<&str> = teams.iter().filter(|t| t.baseline).map(|t| t.name.as_str()).collect();
                @if !marked.is_empty() { p { "Baselines: " (marked.join(", ")) } }
            }
        }
    };
    Ok(console_page(
        ctx,
        kept,
        &format!("Per-team rules of {}", c.title),
        room(&c, Room::Rules, d.notice(), body),
    ))
}

/// The path of a team's rule of a phase in the API (`kind`: `extensions` or `quotas`).
fn rule_path(challenge: &str, phase: &str, kind: &str, team: &str) -> String {
    format!(
        "/api/v1/challenges/{}/phases/{}/{kind}/{}",
        seg(challenge),
        seg(phase),
        seg(team)
    )
}

async fn team_name(web: &Web, challenge: &str, team: &str) -> String {
    match web.store.team_by_ref(challenge, team).await {
        Ok(t) => t.name,
        Err(_) => team.to_owned(),
    }
}

pub(crate) async fn grant_extension(
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
            let body = serde_json::json!({"closes": utc("Closes", s.get("closes"))?, "reason": s.get("reason")});
            Ok(Call::put(rule_path(id, s.get("phase"), "extensions", s.get("team")), body))
        },
        |e: ExtensionView| done(&Room::Rules.path(id), "extension", &e.team),
        |s| async move { draw(web, ctx, id, Done::default(), Kept(Some(&s))).await },
    )
    .await
}

pub(crate) async fn set_quota(
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
            let mut body = serde_json::json!({"reason": s.get("reason")});
            for (k, label) in [
                ("total", "Submissions in all"),
                ("per_day", "Per UTC day"),
                ("max_concurrent", "At once"),
            ] {
                if let Some(v) = limit(label, s.opt(k))? {
                    body[k] = v.into();
                }
            }
            Ok(Call::put(
                rule_path(id, s.get("phase"), "quotas", s.get("team")),
                body,
            ))
        },
        |q: QuotaOverrideView| done(&Room::Rules.path(id), "quota", &q.team),
        |s| async move { draw(web, ctx, id, Done::default(), Kept(Some(&s))).await },
    )
    .await
}

pub(crate) async fn revoke_extension(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
    Form(sent): Form<Sent>,
) -> PageResult {
    remove(web, ctx, id, sent, "extensions", "extension-revoked").await
}

pub(crate) async fn remove_quota(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
    Form(sent): Form<Sent>,
) -> PageResult {
    remove(web, ctx, id, sent, "quotas", "quota-removed").await
}

/// Revokes an extension or removes a quota override (`kind`) of a team in a phase.
async fn remove(web: Web, ctx: Ctx, id: String, sent: Sent, kind: &str, what: &str) -> PageResult {
    // Named before the change: the notice says whose rule went.
    let name = team_name(&web, &id, sent.get("team")).await;
    let (web, ctx) = (&web, &ctx);
    let id = id.as_str();
    act(
        web,
        ctx,
        sent,
        |s| {
            Ok(Call::delete(rule_path(
                id,
                s.get("phase"),
                kind,
                s.get("team"),
            )))
        },
        |_: serde::de::IgnoredAny| done(&Room::Rules.path(id), what, &name),
        |s| async move { draw(web, ctx, id, Done::default(), Kept(Some(&s))).await },
    )
    .await
}

pub(crate) async fn set_baseline(
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
            let path = format!("/api/v1/teams/{}/baseline", seg(s.get("team")));
            Ok(Call::put(
                path,
                serde_json::json!({"baseline": s.get("baseline") == "true"}),
            ))
        },
        |t: TeamView| done(&Room::Rules.path(id), "baseline", &t.name),
        |s| async move { draw(web, ctx, id, Done::default(), Kept(Some(&s))).await },
    )
    .await
}
