//! The organiser's console (`/organiser`): challenges and phases, the queue and the
//! workers, every submission with filters, requeue, publishing a phase's final
//! leaderboard and rescoring a challenge's stored outputs (a pending rescoring is shown
//! with its changes, then applied or cancelled). Changes go through the API as the
//! organiser, so its checks (manifest, names, states, what blocks a publication) hold.

use axum::Form;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use maud::html;
use serde::Deserialize;

use server::views::{
    BlockerView, ChallengeView, ExtensionView, LeaderboardView, PhaseView, QuotaLimits,
    QuotaOverrideView, RescoreView, TeamView, WorkerView, WorkersView,
};

use crate::Web;
use crate::api::{self, seg};
use crate::html::{PageError, csrf, page, redirect, state_badge, time};
use crate::pages::word;
use crate::session::Ctx;

type PageResult = Result<Response, Response>;

fn internal(e: impl std::fmt::Display) -> Response {
    PageError::internal(&e).into_response()
}

#[derive(Deserialize, Default)]
pub(crate) struct Filters {
    challenge: Option<String>,
    state: Option<String>,
    team: Option<String>,
    /// What the last form did: `challenge`, `phase`, `requeued`, `worker`, `paused` or
    /// `resumed` (with `id`/`name`).
    done: Option<String>,
    id: Option<String>,
    name: Option<String>,
    /// For `worker`: its state now (one of [`STATE_WORDS`], else not shown).
    state_word: Option<String>,
}

const STATES: [&str; 6] = [
    "queued",
    "running",
    "scored",
    "failed",
    "error",
    "withdrawn",
];

pub(crate) async fn console(
    State(web): State<Web>,
    ctx: Ctx,
    Query(f): Query<Filters>,
) -> PageResult {
    console_page(&web, &ctx, f, None).await
}

/// A publication the API refused because of blockers, shown in place under its form.
struct Refused {
    challenge: String,
    phase: String,
    message: String,
    /// Each blocker with its team's name (empty when the team cannot be read).
    blockers: Vec<(BlockerView, String)>,
}

async fn console_page(web: &Web, ctx: &Ctx, f: Filters, refused: Option<Refused>) -> PageResult {
    let (_, token) = ctx.need_organiser()?;
    let web = web.clone();
    let challenges: Vec<ChallengeView> = api::get(&web, "/api/v1/challenges", Some(token))
        .await
        .json()
        .map_err(|e| PageError::from(e).into_response())?;
    let counts = web.store.state_counts(None).await.map_err(internal)?;
    let workers: WorkersView = api::get(&web, "/api/v1/workers", Some(token))
        .await
        .json()
        .map_err(|e| PageError::from(e).into_response())?;
    let now = web.store.now();
    let chosen = f.challenge.as_deref().filter(|c| !c.is_empty());
    let state = f.state.as_deref().filter(|s| STATES.contains(s));
    let team_filter = f.team.as_deref().map(str::trim).filter(|t| !t.is_empty());
    // Every submission of the chosen challenges, newest first, filtered here: the
    // store pages by challenge, and a console shows a few hundred at most.
    const SHOWN: usize = 300;
    let mut rows = Vec::new();
    for c in challenges
        .iter()
        .filter(|c| chosen.is_none_or(|w| w == c.id))
    {
        let mut after = None;
        loop {
            let page = web
                .store
                .challenge_submissions(&c.id, after, 500)
                .await
                .map_err(internal)?;
            let last = page.last().map(|s| s.id);
            for s in page {
                if state.is_some_and(|w| w != s.state.as_str()) {
                    continue;
                }
                let team = web.store.team(s.team).await.map_err(internal)?;
                if team_filter
                    .is_some_and(|w| !team.name.to_lowercase().contains(&w.to_lowercase()))
                {
                    continue;
                }
                let phase = c
                    .phases
                    .iter()
                    .find(|p| p.id == s.phase.0)
                    .map(|p| p.name.clone())
                    .unwrap_or_default();
                rows.push((c.id.clone(), phase, team.name, s));
            }
            match last {
                Some(l) if rows.len() < SHOWN => after = Some(l),
                _ => break,
            }
        }
    }
    rows.sort_by_key(|r| std::cmp::Reverse(r.3.received_at));
    let total = rows.len();
    rows.truncate(SHOWN);
    let mut team_rules = Vec::new();
    for c in &challenges {
        team_rules.push(team_rules_of(&web, token, c).await?);
    }
    let body = html! {
        h1 { "Organiser console" }
        @match (f.done.as_deref(), f.id.as_deref(), f.name.as_deref()) {
            (Some("challenge"), Some(id), _) => { p.notice role="status" { "Challenge " (id) " created." } }
            (Some("phase"), Some(id), Some(name)) => { p.notice role="status" { "Phase " (name) " of " (id) " added." } }
            (Some("requeued"), _, _) => { p.notice role="status" { "Requeued: a new attempt is in the queue." } }
            (Some("extension"), Some(id), Some(name)) => { p.notice role="status" { "Extension of team " (name) " in " (id) " saved." } }
            (Some("extension-revoked"), Some(id), Some(name)) => { p.notice role="status" { "Extension of team " (name) " in " (id) " revoked." } }
            (Some("quota"), Some(id), Some(name)) => { p.notice role="status" { "Quota of team " (name) " in " (id) " saved." } }
            (Some("quota-removed"), Some(id), Some(name)) => { p.notice role="status" { "Quota override of team " (name) " in " (id) " removed." } }
            (Some("baseline"), Some(id), Some(name)) => { p.notice role="status" { "Team " (name) " of " (id) " updated." } }
            (Some("worker"), _, Some(name)) => { p.notice role="status" { "Worker " (name) " is " (STATE_WORDS.iter().find(|w| **w == f.state_word.as_deref().unwrap_or("")).copied().unwrap_or("changed")) "." } }
            (Some("paused"), Some(id), _) => { p.notice role="status" { "Judging of " (id) " paused." } }
            (Some("resumed"), Some(id), _) => { p.notice role="status" { "Judging of " (id) " resumed." } }
            _ => {}
        }
        section aria-labelledby="queue" {
            h2 #queue { "Queue" }
            ul.plain.counts {
                @for (s, n) in &counts { li { (state_badge(s.as_str())) " " (n) } }
            }
            p { a href="/metrics" { "Prometheus metrics" } }
        }
        section aria-labelledby="workers" {
            h2 #workers { "Workers" }
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
                        td { @if let Some(t) = w.last_heartbeat { (time(t)) " (" (crate::html::duration((now - t).num_seconds() as f64)) " ago)" } @else { "never" } }
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
                                        (csrf(ctx)) button type="submit" { (label) }
                                    }
                                }
                            }
                        }
                    } } }
                } }
            }
        }
        section aria-labelledby="judging" {
            h2 #judging { "Judging" }
            p.muted { "Pausing a challenge's judging keeps accepting and queueing its submissions; no worker takes one until judging resumes, and runs under way finish." }
            @if challenges.is_empty() { p { "No challenge yet." } }
            @else {
                ul.plain { @for c in &challenges { li {
                    strong { (c.id) } " — "
                    @if c.judging_paused {
                        "judging paused" @if let Some(t) = c.paused_at { " since " (time(t)) } @if let Some(r) = &c.pause_reason { " (" (r) ")" } " "
                        form.inline method="post" action={"/organiser/challenges/" (seg(&c.id)) "/resume"} { (csrf(ctx)) button type="submit" { "Resume judging" } }
                    } @else {
                        "judging " " "
                        form.inline method="post" action={"/organiser/challenges/" (seg(&c.id)) "/pause"} { (csrf(ctx)) button type="submit" { "Pause judging" } }
                    }
                    " · " a href={"/organiser/challenges/" (seg(&c.id)) "/announcements"} { "Overview and announcements" }
                } } }
            }
        }
        section aria-labelledby="subs" {
            h2 #subs { "Submissions" }
            form.inline method="get" action="/organiser" {
                label for="f-challenge" { "Challenge" }
                select #f-challenge name="challenge" {
                    option value="" { "all" }
                    @for c in &challenges { option value=(c.id) selected[chosen == Some(c.id.as_str())] { (c.id) } }
                }
                label for="f-state" { "State" }
                select #f-state name="state" {
                    option value="" { "all" }
                    @for s in STATES { option value=(s) selected[state == Some(s)] { (s) } }
                }
                label for="f-team" { "Team" }
                input #f-team type="search" name="team" value=(team_filter.unwrap_or(""));
                button type="submit" { "Filter" }
            }
            @if rows.is_empty() { p { "No submission matches." } }
            @else {
                div.scroll { table data-sortable {
                    thead { tr { th scope="col" { "Received" } th scope="col" { "Challenge" } th scope="col" { "Phase" } th scope="col" { "Team" } th scope="col" { "State" } th scope="col" { "Attempts" } th scope="col" { "Action" } } }
                    tbody { @for (c, p, t, s) in &rows { tr {
                        td { a href={"/submissions/" (s.id.0)} { (time(s.received_at)) } }
                        td { (c) } td { (p) } td { (t) }
                        td { (state_badge(s.state.as_str())) }
                        td.num { (s.attempt) }
                        td { @if s.state.as_str() == "error" {
                            form.inline method="post" action={"/organiser/requeue/" (s.id.0)} { (csrf(ctx)) button type="submit" { "Requeue" } }
                        } }
                    } } }
                } }
                @if total > rows.len() { p.muted { "The " (rows.len()) " newest of " (total) " are shown." } }
            }
            @if let Some(c) = chosen {
                p { a href={"/organiser/results.csv?challenge=" (seg(c))} { "Download every submission of " (c) " with its figures (CSV)" } }
            } @else {
                p { "Download results (CSV): " @for c in &challenges { a href={"/organiser/results.csv?challenge=" (seg(&c.id))} { (c.id) } " " } }
            }
        }
        @if !challenges.is_empty() {
            section aria-labelledby="rules" {
                h2 #rules { "Publish and rescore" }
                p.muted {
                    "Publishing stores a phase's final leaderboard (each team's selected submission, else its best) as a new numbered version that never changes. "
                    "It is refused while a submission of the phase is queued, running or in error, or a final entry has no exam result under the current versions. "
                    "Rescoring scores every scored submission of a challenge again from the outputs its run kept; nothing changes until you apply it."
                }
                @for c in &challenges {
                    h3 { (c.id) }
                    @if c.phases.is_empty() { p { "No phase yet." } }
                    @for p in &c.phases {
                        div.publish {
                            // The fragment brings a refusal into view without a script.
                            form.inline method="post" action="/organiser/publish#publish-refusal" {
                                (csrf(ctx))
                                input type="hidden" name="challenge" value=(c.id);
                                input type="hidden" name="phase" value=(p.name);
                                button type="submit" { "Publish the final leaderboard of " (p.name) }
                            }
                            " "
                            a href={"/challenges/" (seg(&c.id)) "/leaderboard?phase=" (seg(&p.name)) "&board=published"} { "Published versions of " (p.name) }
                            @if let Some(r) = refused.as_ref().filter(|r| r.challenge == c.id && r.phase == p.name) {
                                section.refusal #publish-refusal role="alert" aria-labelledby="publish-refusal-h" {
                                    h4 #publish-refusal-h { "Not published: " (p.name) " of " (c.id) }
                                    // The API's message lists the blockers too; below they are
                                    // one a line with the team's name, so it is said once.
                                    @if r.blockers.is_empty() { p { (r.message) } }
                                    @else {
                                        p { "The phase cannot be published yet. Resolve these first, then publish again:" }
                                        ul.blockers {
                                            @for (b, team) in &r.blockers { li {
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
                            }
                        }
                    }
                    form.inline method="post" action="/organiser/rescore" {
                        (csrf(ctx))
                        input type="hidden" name="challenge" value=(c.id);
                        label for={"rescore-" (c.id)} { "Reason" }
                        input id={"rescore-" (c.id)} type="text" name="reason" required maxlength="1000";
                        button type="submit" { "Rescore every scored submission of " (c.id) }
                    }
                }
            }
        }
        @if !challenges.is_empty() { (team_rules_section(ctx, &team_rules)) }
        section aria-labelledby="new-challenge" {
            h2 #new-challenge { "Create a challenge" }
            form.stack method="post" action="/organiser/challenges" {
                (csrf(ctx))
                label for="c-id" { "Id (a-z, 0-9, - and _)" }
                input #c-id type="text" name="id" required pattern="[a-z0-9_-]+" maxlength="64";
                label for="c-title" { "Title (optional)" }
                input #c-title type="text" name="title" maxlength="200";
                label for="c-def" { "Definition: a built-in id (cpsc2021, cinc2017, physionet2022, p300speller) or TOML text" }
                textarea #c-def name="definition" rows="3" required {}
                label for="c-data" { "Data folder on the server" }
                input #c-data type="text" name="data" required;
                button type="submit" { "Create the challenge" }
            }
        }
        @if !challenges.is_empty() {
            section aria-labelledby="new-phase" {
                h2 #new-phase { "Add a phase" }
                form.stack method="post" action="/organiser/phases" {
                    (csrf(ctx))
                    label for="p-challenge" { "Challenge" }
                    select #p-challenge name="challenge" { @for c in &challenges { option value=(c.id) { (c.id) } } }
                    label for="p-name" { "Name" }
                    input #p-name type="text" name="name" required maxlength="64";
                    label for="p-opens" { "Opens (UTC)" }
                    input #p-opens type="datetime-local" name="opens" required;
                    label for="p-closes" { "Closes (UTC)" }
                    input #p-closes type="datetime-local" name="closes" required;
                    label for="p-total" { "Quota: submissions in all (empty: no limit)" }
                    input #p-total type="number" name="total" min="0";
                    label for="p-day" { "Quota: per UTC day" }
                    input #p-day type="number" name="per_day" min="0";
                    label for="p-conc" { "Quota: at once" }
                    input #p-conc type="number" name="max_concurrent" min="0";
                    label for="p-split" { "Scored on" }
                    select #p-split name="scored_split" { option value="exam" selected { "exam" } option value="quiz" { "quiz" } }
                    label for="p-rule" { "Leaderboard shows each team's" }
                    select #p-rule name="rule" { option value="best" { "best" } option value="latest" { "latest" } }
                    label { input type="checkbox" name="show_exam" value="true" checked; " show exam scores before the phase closes" }
                    button type="submit" { "Add the phase" }
                }
            }
        }
    };
    let mut r = page(ctx, "Organiser console", body);
    if refused.is_some() {
        *r.status_mut() = axum::http::StatusCode::CONFLICT;
    }
    Ok(r)
}

#[derive(Deserialize)]
pub(crate) struct ChallengeForm {
    csrf: String,
    id: String,
    title: Option<String>,
    definition: String,
    data: String,
}

/// Back to the console, saying what was done (in the console's own words: the address
/// carries only what was done and to what, so a link cannot put a message there).
fn done(what: &str, id: &str, name: &str) -> Response {
    redirect(&format!(
        "/organiser?done={what}&id={}&name={}",
        seg(id),
        seg(name)
    ))
}

pub(crate) async fn create_challenge(
    State(web): State<Web>,
    ctx: Ctx,
    Form(f): Form<ChallengeForm>,
) -> PageResult {
    let (_, token) = ctx.need_organiser()?;
    ctx.check_csrf(&f.csrf)
        .map_err(IntoResponse::into_response)?;
    let mut body = serde_json::json!({"id": f.id.trim(), "definition": f.definition.trim(), "data": f.data.trim()});
    if let Some(t) = f.title.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
        body["title"] = t.into();
    }
    let a = api::post_json(&web, "/api/v1/challenges", Some(token), &body).await;
    let c: ChallengeView = a.json().map_err(|e| PageError::from(e).into_response())?;
    Ok(done("challenge", &c.id, ""))
}

#[derive(Deserialize)]
pub(crate) struct PhaseForm {
    csrf: String,
    challenge: String,
    name: String,
    opens: String,
    closes: String,
    total: Option<String>,
    per_day: Option<String>,
    max_concurrent: Option<String>,
    scored_split: String,
    rule: String,
    show_exam: Option<String>,
}

/// A `datetime-local` value, read as UTC.
fn utc(s: &str) -> Result<String, Response> {
    let s = s.trim();
    let parsed = chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M")
        .or_else(|_| chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S"))
        .map_err(|_| {
            PageError::new(
                axum::http::StatusCode::UNPROCESSABLE_ENTITY,
                "Not a time",
                &format!(
                    "“{s}” is not a date and time (YYYY-MM-DDTHH:MM). Go back and correct it."
                ),
            )
            .into_response()
        })?;
    Ok(parsed.and_utc().to_rfc3339())
}

fn limit(s: &Option<String>) -> Result<Option<u32>, Response> {
    match s.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        None => Ok(None),
        Some(v) => v.parse().map(Some).map_err(|_| {
            PageError::new(
                axum::http::StatusCode::UNPROCESSABLE_ENTITY,
                "Not a number",
                &format!("“{v}” is not a whole number. Go back and correct it."),
            )
            .into_response()
        }),
    }
}

pub(crate) async fn create_phase(
    State(web): State<Web>,
    ctx: Ctx,
    Form(f): Form<PhaseForm>,
) -> PageResult {
    let (_, token) = ctx.need_organiser()?;
    ctx.check_csrf(&f.csrf)
        .map_err(IntoResponse::into_response)?;
    let body = serde_json::json!({
        "name": f.name.trim(),
        "opens": utc(&f.opens)?,
        "closes": utc(&f.closes)?,
        "quota": {"total": limit(&f.total)?, "per_day": limit(&f.per_day)?, "max_concurrent": limit(&f.max_concurrent)?},
        "scored_split": f.scored_split,
        "show_exam": f.show_exam.is_some(),
        "rule": f.rule,
    });
    let a = api::post_json(
        &web,
        &format!("/api/v1/challenges/{}/phases", seg(&f.challenge)),
        Some(token),
        &body,
    )
    .await;
    let p: PhaseView = a.json().map_err(|e| PageError::from(e).into_response())?;
    Ok(done("phase", &p.challenge, &p.name))
}

#[derive(Deserialize)]
pub(crate) struct CsrfOnly {
    csrf: String,
}

pub(crate) async fn requeue(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
    Form(f): Form<CsrfOnly>,
) -> PageResult {
    let (_, token) = ctx.need_organiser()?;
    ctx.check_csrf(&f.csrf)
        .map_err(IntoResponse::into_response)?;
    let a = api::post_json(
        &web,
        &format!("/api/v1/submissions/{}/requeue", seg(&id)),
        Some(token),
        &serde_json::json!({}),
    )
    .await;
    if !a.status.is_success() {
        return Err(PageError::from(a.refusal()).into_response());
    }
    Ok(done("requeued", &id, ""))
}

/// The worker states a notice may name (the address carries only a known word).
const STATE_WORDS: &[&str] = &["enabled", "draining", "disabled"];

/// Drains, disables or enables a worker through the API.
pub(crate) async fn worker_action(
    State(web): State<Web>,
    ctx: Ctx,
    Path((id, action)): Path<(String, String)>,
    Form(f): Form<CsrfOnly>,
) -> PageResult {
    let (_, token) = ctx.need_organiser()?;
    ctx.check_csrf(&f.csrf)
        .map_err(IntoResponse::into_response)?;
    if !["drain", "disable", "enable"].contains(&action.as_str()) {
        return Err(PageError::not_found("no such worker action").into_response());
    }
    let a = api::post_json(
        &web,
        &format!("/api/v1/workers/{}/{action}", seg(&id)),
        Some(token),
        &serde_json::json!({}),
    )
    .await;
    if !a.status.is_success() {
        return Err(PageError::from(a.refusal()).into_response());
    }
    let w: WorkerView = a.json().map_err(|e| PageError::from(e).into_response())?;
    Ok(redirect(&format!(
        "/organiser?done=worker&id={}&name={}&state_word={}#workers",
        w.id,
        seg(&w.name),
        word(&w.state)
    )))
}

/// Pauses or resumes the judging of a challenge through the API.
pub(crate) async fn judging_action(
    State(web): State<Web>,
    ctx: Ctx,
    Path((id, action)): Path<(String, String)>,
    Form(f): Form<CsrfOnly>,
) -> PageResult {
    let (_, token) = ctx.need_organiser()?;
    ctx.check_csrf(&f.csrf)
        .map_err(IntoResponse::into_response)?;
    let done_word = match action.as_str() {
        "pause" => "paused",
        "resume" => "resumed",
        _ => return Err(PageError::not_found("no such judging action").into_response()),
    };
    let a = api::post_json(
        &web,
        &format!("/api/v1/challenges/{}/{action}", seg(&id)),
        Some(token),
        &serde_json::json!({}),
    )
    .await;
    if !a.status.is_success() {
        return Err(PageError::from(a.refusal()).into_response());
    }
    Ok(done(done_word, &id, ""))
}

#[derive(Deserialize)]
pub(crate) struct PublishForm {
    csrf: String,
    challenge: String,
    phase: String,
}

/// Publishes a phase's final leaderboard and shows the published version; a refusal
/// for blockers is the console again with them listed under the phase's form.
pub(crate) async fn publish(
    State(web): State<Web>,
    ctx: Ctx,
    Form(f): Form<PublishForm>,
) -> PageResult {
    let (_, token) = ctx.need_organiser()?;
    ctx.check_csrf(&f.csrf)
        .map_err(IntoResponse::into_response)?;
    let a = api::post_json(
        &web,
        &format!("/api/v1/challenges/{}/publish", seg(&f.challenge)),
        Some(token),
        &serde_json::json!({"phase": f.phase}),
    )
    .await;
    match a.json::<LeaderboardView>() {
        Ok(b) => {
            let version = b.published.map(|p| p.version).unwrap_or_default();
            Ok(redirect(&format!(
                "/challenges/{}/leaderboard?phase={}&board=published&version={version}",
                seg(&f.challenge),
                seg(&b.phase)
            )))
        }
        Err(refusal) if refusal.code == "not_publishable" => {
            // The blockers are extra fields of the API's error body.
            let list: Vec<BlockerView> = serde_json::from_slice::<serde_json::Value>(&a.body)
                .ok()
                .and_then(|v| v.pointer("/error/blockers").cloned())
                .and_then(|v| serde_json::from_value(v).ok())
                .unwrap_or_default();
            let mut blockers = Vec::with_capacity(list.len());
            for b in list {
                let team = match web.store.team(store::TeamId(b.team)).await {
                    Ok(t) => t.name,
                    Err(_) => String::new(),
                };
                blockers.push((b, team));
            }
            let refused = Refused {
                challenge: f.challenge,
                phase: f.phase,
                message: refusal.message,
                blockers,
            };
            console_page(&web, &ctx, Filters::default(), Some(refused)).await
        }
        Err(refusal) => Err(PageError::from(refusal).into_response()),
    }
}

#[derive(Deserialize)]
pub(crate) struct RescoreForm {
    csrf: String,
    challenge: String,
    reason: String,
}

/// Asks the API to rescore a challenge; the pending rescoring's page follows.
pub(crate) async fn rescore(
    State(web): State<Web>,
    ctx: Ctx,
    Form(f): Form<RescoreForm>,
) -> PageResult {
    let (_, token) = ctx.need_organiser()?;
    ctx.check_csrf(&f.csrf)
        .map_err(IntoResponse::into_response)?;
    let a = api::post_json(
        &web,
        &format!("/api/v1/challenges/{}/rescore", seg(&f.challenge)),
        Some(token),
        &serde_json::json!({"reason": f.reason}),
    )
    .await;
    let r: RescoreView = a.json().map_err(|e| PageError::from(e).into_response())?;
    Ok(redirect(&format!("/organiser/rescores/{}", r.id)))
}

/// A rescoring: why, by which versions, what it covered, and each result it changes
/// with its ranking numbers before and after; Apply and Cancel while it is pending.
pub(crate) async fn rescore_page(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
) -> PageResult {
    let (_, token) = ctx.need_organiser()?;
    let r: RescoreView = api::get(&web, &format!("/api/v1/rescores/{}", seg(&id)), Some(token))
        .await
        .json()
        .map_err(|e| PageError::from(e).into_response())?;
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
        p.crumbs { a href="/organiser" { "Organiser console" } }
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
            div.decide {
                form.inline method="post" action={"/organiser/rescores/" (r.id) "/apply"} {
                    (csrf(&ctx)) button type="submit" { "Apply these changes" }
                }
                " "
                form.inline method="post" action={"/organiser/rescores/" (r.id) "/cancel"} {
                    (csrf(&ctx)) button type="submit" { "Cancel this rescoring" }
                }
            }
            p.muted { "Applying replaces every listed result at once (the old ones are kept, marked replaced); it is refused if any of them is no longer the live one. Cancelling keeps this record and changes nothing." }
        }
    };
    Ok(page(&ctx, "Rescoring", body))
}

/// Applies or cancels a pending rescoring, then shows it again.
pub(crate) async fn decide_rescore(
    State(web): State<Web>,
    ctx: Ctx,
    Path((id, decision)): Path<(String, String)>,
    Form(f): Form<CsrfOnly>,
) -> PageResult {
    let (_, token) = ctx.need_organiser()?;
    ctx.check_csrf(&f.csrf)
        .map_err(IntoResponse::into_response)?;
    if decision != "apply" && decision != "cancel" {
        return Err(PageError::not_found("There is no page at this address.").into_response());
    }
    let a = api::post_json(
        &web,
        &format!("/api/v1/rescores/{}/{decision}", seg(&id)),
        Some(token),
        &serde_json::json!({}),
    )
    .await;
    let r: RescoreView = a.json().map_err(|e| PageError::from(e).into_response())?;
    Ok(redirect(&format!("/organiser/rescores/{}", r.id)))
}

#[derive(Deserialize)]
pub(crate) struct ResultsQuery {
    challenge: String,
}

/// One CSV field: quoted when it holds a separator, a quote or a line break; a leading
/// `=`, `+`, `-` or `@` is prefixed with `'` so that a spreadsheet does not run a team's
/// name as a formula.
fn csv_field(s: &str) -> String {
    let s = if s.starts_with(['=', '+', '-', '@']) {
        format!("'{s}")
    } else {
        s.to_owned()
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

/// Every submission of a challenge with its live result's figures, exactly as stored
/// (the organiser's view), as CSV.
pub(crate) async fn results_csv(
    State(web): State<Web>,
    ctx: Ctx,
    Query(q): Query<ResultsQuery>,
) -> PageResult {
    ctx.need_organiser()?;
    web.store
        .challenge(&q.challenge)
        .await
        .map_err(|e| match e {
            store::Error::NotFound { .. } => {
                PageError::not_found("There is no such challenge.").into_response()
            }
            e => internal(e),
        })?;
    let phases = web.store.phases(&q.challenge).await.map_err(internal)?;
    let mut keys: Vec<String> = Vec::new();
    let mut rows = Vec::new();
    let mut after = None;
    loop {
        let page = web
            .store
            .challenge_submissions(&q.challenge, after, 500)
            .await
            .map_err(internal)?;
        let Some(last) = page.last().map(|s| s.id) else {
            break;
        };
        for s in page {
            let team = web.store.team(s.team).await.map_err(internal)?;
            let results = web.store.results(s.id).await.map_err(internal)?;
            let live = results
                .iter()
                .find(|r| !r.replaced && r.attempt.number == s.attempt);
            let figures: Vec<(String, Option<f64>)> = live
                .map(|r| r.figures.iter().map(|f| (f.key.clone(), f.value)).collect())
                .unwrap_or_default();
            for (k, _) in &figures {
                if !keys.contains(k) {
                    keys.push(k.clone());
                }
            }
            let phase = phases
                .iter()
                .find(|p| p.id == s.phase)
                .map(|p| p.name.clone())
                .unwrap_or_default();
            let versions = live
                .map(|r| (r.judge_version.clone(), r.scorer_version.clone()))
                .unwrap_or_default();
            rows.push((s, team.name, phase, figures, versions));
        }
        after = Some(last);
    }
    let mut out = String::from(
        "submission,phase,team,state,received_at,attempts,selected,entry_sha256,judge_version,scorer_version",
    );
    for k in &keys {
        out.push(',');
        out.push_str(&csv_field(k));
    }
    out.push('\n');
    for (s, team, phase, figures, (judge, scorer)) in &rows {
        let cells = [
            s.id.0.to_string(),
            phase.clone(),
            team.clone(),
            s.state.as_str().to_owned(),
            s.received_at.to_rfc3339(),
            s.attempt.to_string(),
            s.selected.to_string(),
            s.entry_sha256.clone(),
            judge.clone(),
            scorer.clone(),
        ];
        out.push_str(
            &cells
                .iter()
                .map(|c| csv_field(c))
                .collect::<Vec<_>>()
                .join(","),
        );
        for k in &keys {
            out.push(',');
            if let Some(Some(v)) = figures.iter().find(|(f, _)| f == k).map(|(_, v)| *v) {
                out.push_str(&v.to_string());
            }
        }
        out.push('\n');
    }
    let file = format!(
        "attachment; filename=\"{}-results.csv\"",
        q.challenge.replace(
            |c: char| !c.is_ascii_alphanumeric() && c != '-' && c != '_',
            "_"
        )
    );
    Ok((
        [
            (
                axum::http::header::CONTENT_TYPE,
                "text/csv; charset=utf-8".to_owned(),
            ),
            (axum::http::header::CONTENT_DISPOSITION, file),
        ],
        out,
    )
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::csv_field;

    #[test]
    fn csv_fields_are_quoted_and_never_formulas() {
        assert_eq!(csv_field("Alpha"), "Alpha");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
        assert_eq!(csv_field("-1"), "'-1");
        assert_eq!(csv_field("two\nlines"), "\"two\nlines\"");
    }
}

/// What the console shows of one challenge's per-team rules.
struct TeamRules {
    challenge: String,
    teams: Vec<store::Team>,
    /// Each phase with its extensions and quota overrides in force (each with the name
    /// of the organiser who set it).
    phases: Vec<PhaseRules>,
}

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

async fn team_rules_of(web: &Web, token: &str, c: &ChallengeView) -> Result<TeamRules, Response> {
    let teams = web.store.teams(&c.id).await.map_err(internal)?;
    let mut phases = Vec::new();
    for p in &c.phases {
        let base = format!("/api/v1/challenges/{}/phases/{}", seg(&c.id), seg(&p.name));
        let exts: Vec<ExtensionView> = api::get(web, &format!("{base}/extensions"), Some(token))
            .await
            .json()
            .map_err(|e| PageError::from(e).into_response())?;
        let quotas: Vec<QuotaOverrideView> = api::get(web, &format!("{base}/quotas"), Some(token))
            .await
            .json()
            .map_err(|e| PageError::from(e).into_response())?;
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
    Ok(TeamRules {
        challenge: c.id.clone(),
        teams,
        phases,
    })
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

fn team_rules_section(ctx: &Ctx, all: &[TeamRules]) -> maud::Markup {
    html! {
        section aria-labelledby="team-rules" {
            h2 #team-rules { "Per-team rules" }
            p.muted {
                "An extension gives one team a later close of a phase (its uploads received before it are accepted; every other team keeps the phase's close). "
                "A quota override gives one team its own limits (those left empty stay the phase's). "
                "Each needs a reason and is kept, with every earlier change, with who set it and when. "
                "A baseline team (organisers' teams are hidden otherwise) is shown on every leaderboard with a badge."
            }
            @for r in all {
                h3 { (r.challenge) }
                @if r.teams.is_empty() { p { "No team yet." } }
                @else {
                    @for pr in &r.phases {
                        @let p = &pr.phase;
                        h4 { "Phase " (p.name) " — closes " (time(p.closes)) }
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
                                    td { form.inline method="post" action="/organiser/extensions/revoke" {
                                        (csrf(ctx))
                                        input type="hidden" name="challenge" value=(r.challenge);
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
                                    td { form.inline method="post" action="/organiser/quotas/remove" {
                                        (csrf(ctx))
                                        input type="hidden" name="challenge" value=(r.challenge);
                                        input type="hidden" name="phase" value=(p.name);
                                        input type="hidden" name="team" value=(q.team_id);
                                        button type="submit" { "Remove" }
                                    } }
                                } } }
                            } }
                        }
                    }
                    @if !r.phases.is_empty() {
                        @let id = &r.challenge;
                        form.stack method="post" action="/organiser/extensions" {
                            (csrf(ctx))
                            input type="hidden" name="challenge" value=(id);
                            h4 { "Grant or change an extension" }
                            label for={"x-phase-" (id)} { "Phase" }
                            select id={"x-phase-" (id)} name="phase" { @for pr in &r.phases { option value=(pr.phase.name) { (pr.phase.name) } } }
                            label for={"x-team-" (id)} { "Team" }
                            select id={"x-team-" (id)} name="team" { @for t in &r.teams { option value=(t.id) { (t.name) } } }
                            label for={"x-closes-" (id)} { "Closes for the team (UTC)" }
                            input id={"x-closes-" (id)} type="datetime-local" name="closes" required;
                            label for={"x-reason-" (id)} { "Reason" }
                            input id={"x-reason-" (id)} type="text" name="reason" required maxlength="1000";
                            button type="submit" { "Grant the extension" }
                        }
                        form.stack method="post" action="/organiser/quotas" {
                            (csrf(ctx))
                            input type="hidden" name="challenge" value=(id);
                            h4 { "Set or change a team's quota" }
                            label for={"q-phase-" (id)} { "Phase" }
                            select id={"q-phase-" (id)} name="phase" { @for pr in &r.phases { option value=(pr.phase.name) { (pr.phase.name) } } }
                            label for={"q-team-" (id)} { "Team" }
                            select id={"q-team-" (id)} name="team" { @for t in &r.teams { option value=(t.id) { (t.name) } } }
                            label for={"q-total-" (id)} { "Submissions in all (empty: the phase's)" }
                            input id={"q-total-" (id)} type="number" name="total" min="0";
                            label for={"q-day-" (id)} { "Per UTC day (empty: the phase's)" }
                            input id={"q-day-" (id)} type="number" name="per_day" min="0";
                            label for={"q-conc-" (id)} { "At once (empty: the phase's)" }
                            input id={"q-conc-" (id)} type="number" name="max_concurrent" min="0";
                            label for={"q-reason-" (id)} { "Reason" }
                            input id={"q-reason-" (id)} type="text" name="reason" required maxlength="1000";
                            button type="submit" { "Set the team's quota" }
                        }
                    }
                    // A stack, not an inline form: a select as wide as the longest team
                    // name must shrink to a narrow screen, which only the stack lets it.
                    form.stack method="post" action="/organiser/baseline" {
                        (csrf(ctx))
                        input type="hidden" name="challenge" value=(r.challenge);
                        h4 { "Baseline teams" }
                        label for={"b-team-" (r.challenge)} { "Team" }
                        select id={"b-team-" (r.challenge)} name="team" { @for t in &r.teams { option value=(t.id) { (t.name) @if t.baseline { " (baseline)" } } } }
                        div.buttons {
                            button type="submit" name="baseline" value="true" { "Mark as baseline" }
                            " "
                            button type="submit" name="baseline" value="false" { "Unmark" }
                        }
                    }
                    @let marked: Vec<&str> = r.teams.iter().filter(|t| t.baseline).map(|t| t.name.as_str()).collect();
                    @if !marked.is_empty() { p { "Baselines: " (marked.join(", ")) } }
                }
            }
        }
    }
}

#[derive(Deserialize)]
pub(crate) struct ExtensionForm {
    csrf: String,
    challenge: String,
    phase: String,
    team: String,
    closes: String,
    reason: String,
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

pub(crate) async fn grant_extension(
    State(web): State<Web>,
    ctx: Ctx,
    Form(f): Form<ExtensionForm>,
) -> PageResult {
    let (_, token) = ctx.need_organiser()?;
    ctx.check_csrf(&f.csrf)
        .map_err(IntoResponse::into_response)?;
    let body = serde_json::json!({"closes": utc(&f.closes)?, "reason": f.reason});
    let a = api::send_json(
        &web,
        axum::http::Method::PUT,
        &rule_path(&f.challenge, &f.phase, "extensions", &f.team),
        Some(token),
        &body,
    )
    .await;
    let e: ExtensionView = a.json().map_err(|e| PageError::from(e).into_response())?;
    Ok(done("extension", &f.challenge, &e.team))
}

#[derive(Deserialize)]
pub(crate) struct RuleForm {
    csrf: String,
    challenge: String,
    phase: String,
    team: String,
}

async fn team_name(web: &Web, challenge: &str, team: &str) -> String {
    match web.store.team_by_ref(challenge, team).await {
        Ok(t) => t.name,
        Err(_) => team.to_owned(),
    }
}

pub(crate) async fn revoke_extension(
    State(web): State<Web>,
    ctx: Ctx,
    Form(f): Form<RuleForm>,
) -> PageResult {
    let (_, token) = ctx.need_organiser()?;
    ctx.check_csrf(&f.csrf)
        .map_err(IntoResponse::into_response)?;
    let path = rule_path(&f.challenge, &f.phase, "extensions", &f.team);
    let a = api::delete(&web, &path, Some(token)).await;
    if !a.status.is_success() {
        return Err(PageError::from(a.refusal()).into_response());
    }
    let name = team_name(&web, &f.challenge, &f.team).await;
    Ok(done("extension-revoked", &f.challenge, &name))
}

#[derive(Deserialize)]
pub(crate) struct QuotaForm {
    csrf: String,
    challenge: String,
    phase: String,
    team: String,
    total: Option<String>,
    per_day: Option<String>,
    max_concurrent: Option<String>,
    reason: String,
}

pub(crate) async fn set_quota(
    State(web): State<Web>,
    ctx: Ctx,
    Form(f): Form<QuotaForm>,
) -> PageResult {
    let (_, token) = ctx.need_organiser()?;
    ctx.check_csrf(&f.csrf)
        .map_err(IntoResponse::into_response)?;
    let mut body = serde_json::json!({"reason": f.reason});
    for (k, v) in [
        ("total", limit(&f.total)?),
        ("per_day", limit(&f.per_day)?),
        ("max_concurrent", limit(&f.max_concurrent)?),
    ] {
        if let Some(v) = v {
            body[k] = v.into();
        }
    }
    let a = api::send_json(
        &web,
        axum::http::Method::PUT,
        &rule_path(&f.challenge, &f.phase, "quotas", &f.team),
        Some(token),
        &body,
    )
    .await;
    let q: QuotaOverrideView = a.json().map_err(|e| PageError::from(e).into_response())?;
    Ok(done("quota", &f.challenge, &q.team))
}

pub(crate) async fn remove_quota(
    State(web): State<Web>,
    ctx: Ctx,
    Form(f): Form<RuleForm>,
) -> PageResult {
    let (_, token) = ctx.need_organiser()?;
    ctx.check_csrf(&f.csrf)
        .map_err(IntoResponse::into_response)?;
    let path = rule_path(&f.challenge, &f.phase, "quotas", &f.team);
    let a = api::delete(&web, &path, Some(token)).await;
    if !a.status.is_success() {
        return Err(PageError::from(a.refusal()).into_response());
    }
    let name = team_name(&web, &f.challenge, &f.team).await;
    Ok(done("quota-removed", &f.challenge, &name))
}

#[derive(Deserialize)]
pub(crate) struct BaselineForm {
    csrf: String,
    challenge: String,
    team: String,
    baseline: String,
}

pub(crate) async fn set_baseline(
    State(web): State<Web>,
    ctx: Ctx,
    Form(f): Form<BaselineForm>,
) -> PageResult {
    let (_, token) = ctx.need_organiser()?;
    ctx.check_csrf(&f.csrf)
        .map_err(IntoResponse::into_response)?;
    let a = api::send_json(
        &web,
        axum::http::Method::PUT,
        &format!("/api/v1/teams/{}/baseline", seg(&f.team)),
        Some(token),
        &serde_json::json!({"baseline": f.baseline == "true"}),
    )
    .await;
    let t: TeamView = a.json().map_err(|e| PageError::from(e).into_response())?;
    Ok(done("baseline", &f.challenge, &t.name))
}
