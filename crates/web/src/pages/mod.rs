//! The participant's pages: signing in, challenges, teams, uploads, submissions and
//! leaderboards (docs/web.md has each page's contract).

use std::collections::BTreeMap;

use axum::body::Body;
use axum::extract::{Multipart, Path, Query, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Form};
use maud::{Markup, html};
use serde::{Deserialize, Serialize};

use server::views::{
    ChallengeView, CreatedSubmission, InvitationView, LeaderboardRowView, LeaderboardView,
    PhaseView, QuotaView, SubmissionView, TeamView, TokenView,
};

use crate::api::{self, seg};
use crate::html::{self, PageError, csrf, page, redirect, state_badge, time};
use crate::session::{self, Ctx};
use crate::{Web, plot, text};

type PageResult = Result<Response, Response>;

fn err(e: impl Into<PageError>) -> Response {
    e.into().into_response()
}

fn internal(e: impl std::fmt::Display) -> Response {
    PageError::internal(&e).into_response()
}

/// An enum of the API as the word it serialises to.
pub(crate) fn word<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

/// A `next=` address is only ever a path of this site.
fn local_path(next: Option<&str>) -> String {
    match next {
        // Browsers drop tabs and line breaks in addresses and read `\` as `/`, so any
        // of them could turn `/…` into `//host`: only plain paths pass.
        Some(n)
            if n.starts_with('/')
                && !n.starts_with("//")
                && !n
                    .chars()
                    .any(|c| c == '\\' || c.is_whitespace() || c.is_control()) =>
        {
            n.to_owned()
        }
        _ => "/".to_owned(),
    }
}

// ---- signing in ----

#[derive(Deserialize)]
pub(crate) struct Next {
    next: Option<String>,
}

fn login_form(ctx: &Ctx, next: &str, error: Option<&str>, name: &str, signup: bool) -> Markup {
    html! {
        h1 { "Sign in" }
        @if let Some(e) = error { p.error role="alert" #refusal { (e) } }
        form.stack method="post" action="/login" {
            (csrf(ctx))
            input type="hidden" name="next" value=(next);
            label for="name" { "User name" }
            input #name type="text" name="name" autocomplete="username" required value=(name);
            label for="password" { "Password" }
            input #password type="password" name="password" autocomplete="current-password" required;
            button type="submit" { "Sign in" }
        }
        @if signup {
            p { "No account yet? " a href="/signup" { "Create one" } "." }
        }
    }
}

pub(crate) async fn login_page(
    State(web): State<Web>,
    ctx: Ctx,
    Query(q): Query<Next>,
) -> Response {
    let next = local_path(q.next.as_deref());
    if ctx.user.is_some() {
        return redirect(&next);
    }
    page(
        &ctx,
        "Sign in",
        login_form(&ctx, &next, None, "", web.config.signup),
    )
}

#[derive(Deserialize)]
pub(crate) struct LoginForm {
    csrf: String,
    name: String,
    password: String,
    next: Option<String>,
}

fn session_cookie(web: &Web, token: &str) -> Response {
    let c = session::cookie(
        session::SESSION,
        token,
        "Lax",
        Some(u64::from(web.config.session_days) * 86_400),
        web.config.secure_cookies,
    );
    let mut r = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(&c) {
        r.headers_mut().append(header::SET_COOKIE, v);
    }
    r
}

pub(crate) async fn login(
    State(web): State<Web>,
    ctx: Ctx,
    from: Option<Extension<server::ClientAddr>>,
    Form(f): Form<LoginForm>,
) -> PageResult {
    ctx.check_csrf(&f.csrf).map_err(err)?;
    let next = local_path(f.next.as_deref());
    // The API's own login: its checks and its limits on failed tries per name and per
    // address (this request's).
    let body = serde_json::to_vec(&serde_json::json!({"name": f.name, "password": f.password}))
        .unwrap_or_default();
    let a = api::call_from(
        &web,
        from.map(|Extension(a)| a),
        Method::POST,
        "/api/v1/tokens",
        None,
        Some("application/json"),
        Body::from(body),
    )
    .await;
    match a.json::<TokenView>() {
        Ok(t) => {
            let mut r = session_cookie(&web, &t.token);
            if let Ok(v) = HeaderValue::from_str(&next) {
                r.headers_mut().insert(header::LOCATION, v);
            }
            Ok(r)
        }
        Err(refusal) => {
            let msg = match refusal.status {
                StatusCode::TOO_MANY_REQUESTS => {
                    "Too many failed tries for this name or from your address. Wait a minute \
                     and try again."
                }
                StatusCode::SERVICE_UNAVAILABLE => {
                    "The server is busy checking passwords. Try again in a few seconds."
                }
                StatusCode::UNAUTHORIZED => {
                    "Wrong user name or password. Check both and try again."
                }
                _ => return Err(err(refusal)),
            };
            let mut r = page(
                &ctx,
                "Sign in",
                login_form(&ctx, &next, Some(msg), &f.name, web.config.signup),
            );
            *r.status_mut() = refusal.status;
            if let Some(wait) = refusal.retry_after {
                r.headers_mut().insert(header::RETRY_AFTER, wait.into());
            }
            Ok(r)
        }
    }
}

#[derive(Deserialize)]
pub(crate) struct CsrfOnly {
    csrf: String,
}

pub(crate) async fn logout(
    State(web): State<Web>,
    ctx: Ctx,
    Form(f): Form<CsrfOnly>,
) -> PageResult {
    ctx.check_csrf(&f.csrf).map_err(err)?;
    if let Some(t) = &ctx.token {
        match web.store.revoke_token(t).await {
            Ok(()) | Err(store::Error::BadToken) => {}
            Err(e) => return Err(internal(e)),
        }
    }
    let mut r = redirect("/");
    let gone = session::cookie(
        session::SESSION,
        "",
        "Lax",
        Some(0),
        web.config.secure_cookies,
    );
    if let Ok(v) = HeaderValue::from_str(&gone) {
        r.headers_mut().append(header::SET_COOKIE, v);
    }
    Ok(r)
}

fn signup_form(ctx: &Ctx, error: Option<&str>, name: &str) -> Markup {
    html! {
        h1 { "Create an account" }
        p { "A participant account lets you form or join a team and submit entries." }
        @if let Some(e) = error { p.error role="alert" #refusal { (e) } }
        form.stack method="post" action="/signup" {
            (csrf(ctx))
            label for="name" { "User name" }
            input #name type="text" name="name" autocomplete="username" required maxlength="64" value=(name);
            label for="password" { "Password (at least 8 characters)" }
            input #password type="password" name="password" autocomplete="new-password" required minlength="8";
            button type="submit" { "Create the account" }
        }
    }
}

pub(crate) async fn signup_page(State(web): State<Web>, ctx: Ctx) -> PageResult {
    if !web.config.signup {
        return Err(err(PageError::not_found(
            "Accounts are made by the organisers here.",
        )));
    }
    Ok(page(&ctx, "Create an account", signup_form(&ctx, None, "")))
}

#[derive(Deserialize)]
pub(crate) struct SignupForm {
    csrf: String,
    name: String,
    password: String,
}

pub(crate) async fn signup(
    State(web): State<Web>,
    ctx: Ctx,
    from: Option<Extension<server::ClientAddr>>,
    Form(f): Form<SignupForm>,
) -> PageResult {
    if !web.config.signup {
        return Err(err(PageError::not_found(
            "Accounts are made by the organisers here.",
        )));
    }
    ctx.check_csrf(&f.csrf).map_err(err)?;
    // Each sign-up costs a password hash and leaves an account: so many per address
    // (server::Config::signups_per_address_per_hour), counted before the work.
    let from = from.map(|Extension(server::ClientAddr(a))| a);
    if let Err(wait) = web.throttle.reserve_signup(from) {
        tracing::info!(
            "sign-up refused: too many from {}",
            from.map_or_else(String::new, |a| a.to_string())
        );
        let mut r = page(
            &ctx,
            "Create an account",
            signup_form(
                &ctx,
                Some("Too many accounts were made from your address. Try again later."),
                f.name.trim(),
            ),
        );
        *r.status_mut() = StatusCode::TOO_MANY_REQUESTS;
        r.headers_mut().insert(header::RETRY_AFTER, wait.into());
        return Ok(r);
    }
    let name = f.name.trim();
    let problem = if name.is_empty() || name.chars().count() > 64 {
        Some("A user name has 1 to 64 characters.")
    } else if name.chars().any(char::is_control) {
        Some("A user name cannot hold control characters.")
    } else if f.password.chars().count() < 8 || f.password.len() > 1024 {
        Some("A password has at least 8 characters.")
    } else {
        None
    };
    if let Some(p) = problem {
        web.throttle.release_signup(from);
        let mut r = page(&ctx, "Create an account", signup_form(&ctx, Some(p), name));
        *r.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
        return Ok(r);
    }
    let user = match web
        .store
        .create_user(name, store::Role::Participant, Some(&f.password))
        .await
    {
        Ok(u) => u,
        Err(e @ (store::Error::Exists { .. } | store::Error::NameTaken { .. })) => {
            // Say which account a look-alike reads as (`ALPHA` as `Alpha`): the form
            // escapes the message.
            let problem = match e {
                store::Error::NameTaken { name, existing, .. } if name != existing => format!(
                    "That name reads the same as the existing {existing:?} (names are \
                     compared ignoring case and width). Choose another."
                ),
                _ => "That name is taken. Choose another.".to_owned(),
            };
            let mut r = page(
                &ctx,
                "Create an account",
                signup_form(&ctx, Some(&problem), name),
            );
            *r.status_mut() = StatusCode::CONFLICT;
            return Ok(r);
        }
        Err(store::Error::Busy { retry_after }) => {
            web.throttle.release_signup(from);
            let mut r = page(
                &ctx,
                "Create an account",
                signup_form(
                    &ctx,
                    Some("The server is busy. Try again in a few seconds."),
                    name,
                ),
            );
            *r.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
            r.headers_mut()
                .insert(header::RETRY_AFTER, retry_after.into());
            return Ok(r);
        }
        Err(e) => return Err(internal(e)),
    };
    let token = web
        .store
        .issue_token(user.id, "web session")
        .await
        .map_err(internal)?;
    let mut r = session_cookie(&web, &token.token);
    r.headers_mut()
        .insert(header::LOCATION, HeaderValue::from_static("/"));
    Ok(r)
}

// ---- the token page ----

fn token_body(ctx: &Ctx, fresh: Option<&str>, revoked: Option<&str>) -> Markup {
    html! {
        h1 { "API token" }
        p { "Scripts and the command line call the API with a token: "
            code { "Authorization: Bearer <token>" } ". A token acts as you: keep it secret. "
            "Tokens made here stay valid when you sign out of the site; revoke one below." }
        @if let Some(m) = revoked { p.notice role="status" { (m) } }
        @if let Some(t) = fresh {
            section.notice aria-labelledby="fresh" {
                h2 #fresh { "Your new token" }
                p { "Copy it now: it is shown once and stored only as a hash." }
                pre.token { code #token { (t) } }
                p { "For example:" }
                pre { code { "curl -H 'Authorization: Bearer " (t) "' \\\n  --data-binary @entry.zip -H 'Content-Type: application/octet-stream' \\\n  <this site>/api/v1/challenges/<challenge>/submissions" } }
            }
        }
        form method="post" action="/token" {
            (csrf(ctx))
            button type="submit" { "Make a new token" }
        }
        h2 { "Revoke a token" }
        form.inline method="post" action="/token/revoke" {
            (csrf(ctx))
            label for="revoke" { "Token" }
            input #revoke type="password" name="token" required autocomplete="off" placeholder="pj_…";
            button type="submit" { "Revoke" }
        }
        p { "The API is described by its OpenAPI document: " a href="/api/v1/openapi.json" { "/api/v1/openapi.json" } "." }
    }
}

pub(crate) async fn token_page(ctx: Ctx) -> PageResult {
    ctx.need_user("/token")?;
    Ok(page(&ctx, "API token", token_body(&ctx, None, None)))
}

pub(crate) async fn new_token(
    State(web): State<Web>,
    ctx: Ctx,
    Form(f): Form<CsrfOnly>,
) -> PageResult {
    let (user, _) = ctx.need_user("/token")?;
    ctx.check_csrf(&f.csrf).map_err(err)?;
    let t = web
        .store
        .issue_token(user.id, "web: token page")
        .await
        .map_err(internal)?;
    Ok(page(
        &ctx,
        "API token",
        token_body(&ctx, Some(&t.token), None),
    ))
}

#[derive(Deserialize)]
pub(crate) struct RevokeForm {
    csrf: String,
    token: String,
}

/// Revokes one of the user's own tokens (another user's, or a worker's, is refused in
/// the same words as an unknown one, so the form tells nothing about others' tokens).
pub(crate) async fn revoke_token(
    State(web): State<Web>,
    ctx: Ctx,
    Form(f): Form<RevokeForm>,
) -> PageResult {
    let (user, session) = ctx.need_user("/token")?;
    ctx.check_csrf(&f.csrf).map_err(err)?;
    let token = f.token.trim();
    let mine = matches!(
        web.store.authenticate(token).await,
        Ok(store::Principal::User(u)) if u.id == user.id
    );
    let msg = if !mine {
        "That is not one of your valid tokens: nothing was revoked."
    } else if token == session {
        "That is this browser's session; use “Sign out” to end it."
    } else {
        web.store.revoke_token(token).await.map_err(internal)?;
        "Revoked: the token no longer works."
    };
    Ok(page(&ctx, "API token", token_body(&ctx, None, Some(msg))))
}

// ---- challenges ----

async fn challenges(web: &Web, ctx: &Ctx) -> Result<Vec<ChallengeView>, Response> {
    api::get(web, "/api/v1/challenges", ctx.token.as_deref())
        .await
        .json()
        .map_err(err)
}

async fn challenge_view(web: &Web, ctx: &Ctx, id: &str) -> Result<ChallengeView, Response> {
    api::get(
        web,
        &format!("/api/v1/challenges/{}", seg(id)),
        ctx.token.as_deref(),
    )
    .await
    .json()
    .map_err(err)
}

fn phase_status(p: &PhaseView, now: chrono::DateTime<chrono::Utc>) -> Markup {
    html! {
        @if p.open { span.badge.open { "open" } " until " (time(p.team_closes.unwrap_or(p.closes)))
            @if p.team_closes.is_some() { " (your team's extension)" } }
        @else if now < p.opens { span.badge { "opens" } " " (time(p.opens)) }
        @else { span.badge { "closed" } " " (time(p.team_closes.unwrap_or(p.closes))) }
    }
}

pub(crate) async fn home(State(web): State<Web>, ctx: Ctx) -> PageResult {
    let list = challenges(&web, &ctx).await?;
    let now = web.store.now();
    let body = html! {
        h1 { "Challenges" }
        @if list.is_empty() {
            p { "No challenge is open yet." @if ctx.is_organiser() { " Create one in the " a href="/organiser" { "organiser console" } "." } }
        }
        ul.cards {
            @for c in &list {
                li.card {
                    h2 { a href={"/challenges/" (seg(&c.id))} { (c.title) } }
                    p.muted { code { (c.id) } " · " (c.files) " data files" }
                    @if c.phases.is_empty() { p { "No phase yet." } }
                    ul.plain {
                        @for p in &c.phases {
                            li { strong { (p.name) } ": " (phase_status(p, now)) }
                        }
                    }
                    p {
                        a href={"/challenges/" (seg(&c.id)) "/leaderboard"} { "Leaderboard" }
                        @if c.phases.iter().any(|p| p.open) {
                            " · " a href={"/challenges/" (seg(&c.id)) "/submit"} { "Submit" }
                        }
                    }
                }
            }
        }
    };
    Ok(page(&ctx, "Challenges", body))
}

/// The judge's definition of a registered challenge, for the task and limits.
async fn definition(web: &Web, id: &str) -> Option<judge::challenge::Challenge> {
    let c = web.store.challenge(id).await.ok()?;
    match &c.definition {
        store::Definition::Builtin(b) => judge::challenge::Challenge::built_in(b).ok(),
        store::Definition::Toml(t) => judge::challenge::Challenge::parse(t, "definition").ok(),
    }
}

/// A ranking number as people read it: its name and unit (its report key for a view
/// from a server that does not name it).
fn metric(r: &server::views::RankingView) -> String {
    let name = if r.name.is_empty() { &r.key } else { &r.name };
    match &r.unit {
        Some(unit) => format!("{name} ({unit})"),
        None => name.clone(),
    }
}

fn task_text(def: &judge::challenge::Challenge) -> Markup {
    use judge::challenge::Interface;
    let interface = match def.interface {
        Interface::Folder => html! {
            p { "The judge runs your entry once per data set: "
                code { "python entry_2021.py DATA OUT" }
                ". It writes one " code { "<record>.json" } " per record in " code { "OUT" }
                " with the AF episodes it found as " code { "{\"predict_endpoints\": [[start, end], …]}" } " (sample indices)." }
        },
        Interface::PerRecord => html! {
            p { "The PhysioNet sandbox: the judge runs " code { "setup.sh" } " once, then "
                code { "next.sh RECORD" } " for each record, each in a fresh sandbox; every run appends "
                code { "RECORD,CLASS" } " to " code { "answers.txt" } " (N, A, O or ~)." }
        },
        Interface::TrainRun => html! {
            p { "Your " code { "team_code.py" } " is called twice: first to train a model on the labelled "
                "training patients, then to run it on each unlabelled patient, writing one CSV of "
                "murmur and outcome classes with their probabilities." }
        },
        Interface::Stream => html! {
            p { "Your algorithm's " code { "run()" } " loop reads EEG in 40 ms packets with "
                code { "get_data()" } " and reports the character it decoded with " code { "report()" }
                ", in simulated real time." }
        },
    };
    let scoring = judge::kinds::of(def.scorer).scoring_text();
    html! {
        (interface)
        h3 { "How scoring works" }
        p { (scoring) }
        p { "Missing or invalid outputs are scored as the challenge's default answer and listed as warnings on your submission's page." }
    }
}

pub(crate) async fn challenge(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
) -> PageResult {
    let c = challenge_view(&web, &ctx, &id).await?;
    let def = definition(&web, &c.id).await;
    let now = web.store.now();
    let team = match &ctx.user {
        Some(u) => web.store.team_of(u.id, &c.id).await.map_err(internal)?,
        None => None,
    };
    let base = format!("/challenges/{}", seg(&c.id));
    let body = html! {
        h1 { (c.title) }
        p.muted { "Challenge " code { (c.id) } " · definition " code.hash { (short(&c.definition_sha256)) }
            " · data manifest " code.hash { (short(&c.manifest_sha256)) } }
        nav.actions aria-label="Challenge" {
            a.button href={(base) "/submit"} { "Submit an entry" }
            a.button href={(base) "/leaderboard"} { "Leaderboard" }
            a.button href={(base) "/team"} { @if team.is_some() { "Your team" } @else { "Form a team" } }
        }
        @if let Some(t) = &team { p { "You are in team " strong { (t.name) } "." } }
        @if c.judging_paused {
            p.notice role="status" {
                strong { "Judging paused." }
                " Submissions are still accepted and keep their place in the queue; they are judged once the organisers resume judging."
                @if let Some(why) = &c.pause_reason { " (" (why) ")" }
            }
        }
        section aria-labelledby="phases" {
            h2 #phases { "Phases" }
            @if c.phases.is_empty() { p { "No phase yet: submissions open with the first." } }
            @else {
                div.scroll { table {
                    thead { tr { th scope="col" { "Phase" } th scope="col" { "Status" } th scope="col" { "Opens" } th scope="col" { "Closes" }
                        th scope="col" { "Scored on" } th scope="col" { "Quota" } th scope="col" { "Leaderboard shows" } } }
                    tbody {
                        @for p in &c.phases {
                            tr {
                                th scope="row" { (p.name) }
                                td { @if p.open { span.badge.open { "open" } } @else if now < p.opens { "not yet open" } @else { "closed" } }
                                td { (time(p.opens)) }
                                td { (time(p.closes))
                                    @if let Some(t) = p.team_closes { br; strong.extended { "for your team: " (time(t)) } " (an extension)" }
                                    @if let Some(s) = p.selection_closes { br; "final entry chosen by " (time(s)) } }
                                td { (word(&p.scored_split)) @if !p.show_exam { br; span.muted { "exam scores hidden until it closes" } } }
                                td { (quota_text(&p.quota)) }
                                td { "each team's " (word(&p.rule)) " submission" }
                            }
                        }
                    }
                } }
            }
        }
        @if let Some(def) = &def {
            section aria-labelledby="task" {
                h2 #task { "The task" }
                (task_text(def))
            }
            section aria-labelledby="layout" {
                h2 #layout { "Entry layout" }
                p { "Upload a " code { ".zip" } ", " code { ".tar.gz" } " or " code { ".tar" } " archive. It must contain:" }
                ul { @for f in &def.required_files { li { code { (f) } } } }
                @if let Some(r) = &def.requirements {
                    p { "Python packages your entry needs go in " code { (r) } "; they are checked against the judge's fixed runtime (numpy, scipy, wfdb, scikit-learn), not installed." }
                }
            }
            section aria-labelledby="limits" {
                h2 #limits { "Limits" }
                dl.limits {
                    dt { "Memory" } dd { (def.limits.memory_mb) " MB" }
                    dt { "Processes" } dd { (def.limits.pids) }
                    dt { "Set-up" } dd { (html::duration(def.limits.setup_time_s as f64)) }
                    @if let Some(t) = def.limits.train_s { dt { "Training" } dd { (html::duration(t as f64)) } }
                    dt { "Per record" } dd { (html::duration(def.limits.record_cpu_s as f64)) " CPU, " (html::duration(def.limits.record_wall_s as f64)) " wall" }
                    dt { "Start-up allowance" } dd { (html::duration(def.limits.startup_s as f64)) }
                    dt { "A stage in all" } dd { "at most " (html::duration(def.limits.stage_cap_s as f64)) }
                    dt { "No network" } dd { "entries run without network access" }
                }
            }
        }
        section aria-labelledby="data" {
            h2 #data { "Data" }
            p { (c.files) " files, pinned by the manifest hash above. Labels of the quiz and exam splits never reach your entry; "
                "the quiz returns full diagnostics, the exam only counts of failures and timeouts." }
            p { "Ranked by " @for (i, r) in c.ranking.iter().enumerate() { @if i > 0 { ", then " } (metric(r)) " (" (word(&r.better)) " is better)" } "; "
                "participants see exam figures to " (c.score_precision) " decimals." }
        }
        section aria-labelledby="local" {
            h2 #local { "Test locally first" }
            p { "The site judges with the same code as the command line. Run your entry on your own copy of the data:" }
            pre { code { "physiojudge evaluate --challenge " (c.id) " --entry ./my-entry --data ./data" } }
        }
    };
    Ok(page(&ctx, &c.title, body))
}

fn short(h: &str) -> &str {
    h.get(..12).unwrap_or(h)
}

fn quota_text(q: &server::views::QuotaLimits) -> String {
    let mut parts = Vec::new();
    if let Some(t) = q.total {
        parts.push(format!("{t} in all"));
    }
    if let Some(d) = q.per_day {
        parts.push(format!("{d} a day (UTC)"));
    }
    if let Some(c) = q.max_concurrent {
        parts.push(format!("{c} at once"));
    }
    if parts.is_empty() {
        "no limit".into()
    } else {
        parts.join(", ")
    }
}

// ---- teams ----

pub(crate) async fn team_page(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
) -> PageResult {
    let (user, token) = ctx.need_user(&format!("/challenges/{}/team", seg(&id)))?;
    let c = challenge_view(&web, &ctx, &id).await?;
    let team = web.store.team_of(user.id, &c.id).await.map_err(internal)?;
    let base = format!("/challenges/{}", seg(&c.id));
    let invitations: Vec<InvitationView> = api::get(&web, "/api/v1/invitations", Some(token))
        .await
        .json()
        .map_err(err)?;
    let mut pending = Vec::new();
    for i in invitations.iter().filter(|i| word(&i.state) == "pending") {
        if let Ok(t) = web.store.team(store::TeamId(i.team)).await
            && t.challenge == c.id
        {
            let by = web.store.user(store::UserId(i.invited_by)).await.ok();
            pending.push((i, t, by));
        }
    }
    let view: Option<TeamView> = match &team {
        Some(t) => Some(
            api::get(&web, &format!("/api/v1/teams/{}", t.id.0), Some(token))
                .await
                .json()
                .map_err(err)?,
        ),
        None => None,
    };
    let body = html! {
        p.crumbs { a href=(base) { (c.title) } }
        @match &view {
            Some(t) => {
                h1 { "Team " (t.name) }
                @if t.hidden { p.muted { "This team is hidden from the leaderboard." } }
                @if t.disqualified { p.error { "This team is disqualified" @if let Some(r) = &t.reason { ": " (r) } "." } }
                h2 { "Members" }
                ul { @for m in &t.members { li { (m.name) } } }
                h2 { "Invite someone" }
                p { "They join when they accept the invitation on this page. Someone who has already submitted with another team of this challenge cannot join." }
                form.inline method="post" action={(base) "/team/invite"} {
                    (csrf(&ctx))
                    label for="invitee" { "User name" }
                    input #invitee type="text" name="user" required maxlength="64";
                    button type="submit" { "Invite" }
                }
            }
            None => {
                h1 { "Form a team" }
                p { "A team submits entries; you can be in one team per challenge." }
                form.inline method="post" action={(base) "/team"} {
                    (csrf(&ctx))
                    label for="team-name" { "Team name" }
                    input #team-name type="text" name="name" required maxlength="64";
                    button type="submit" { "Create the team" }
                }
            }
        }
        @if !pending.is_empty() {
            h2 { "Invitations for you" }
            ul {
                @for (i, t, by) in &pending {
                    li {
                        "Team " strong { (t.name) }
                        @if let Some(by) = by { " (invited by " (by.name) ")" }
                        " "
                        form.inline method="post" action={"/invitations/" (i.id) "/accept"} { (csrf(&ctx)) button type="submit" { "Accept" } }
                        form.inline method="post" action={"/invitations/" (i.id) "/decline"} { (csrf(&ctx)) button type="submit" { "Decline" } }
                    }
                }
            }
        }
    };
    Ok(page(&ctx, "Team", body))
}

#[derive(Deserialize)]
pub(crate) struct NameForm {
    csrf: String,
    name: String,
}

pub(crate) async fn create_team(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
    Form(f): Form<NameForm>,
) -> PageResult {
    let (_, token) = ctx.need_user(&format!("/challenges/{}/team", seg(&id)))?;
    ctx.check_csrf(&f.csrf).map_err(err)?;
    api::post_json(
        &web,
        "/api/v1/teams",
        Some(token),
        &serde_json::json!({"name": f.name.trim(), "challenge": id}),
    )
    .await
    .json::<TeamView>()
    .map_err(err)?;
    Ok(redirect(&format!("/challenges/{}/team", seg(&id))))
}

#[derive(Deserialize)]
pub(crate) struct InviteForm {
    csrf: String,
    user: String,
}

pub(crate) async fn invite(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
    Form(f): Form<InviteForm>,
) -> PageResult {
    let (user, token) = ctx.need_user(&format!("/challenges/{}/team", seg(&id)))?;
    ctx.check_csrf(&f.csrf).map_err(err)?;
    let team = web
        .store
        .team_of(user.id, &id)
        .await
        .map_err(internal)?
        .ok_or_else(|| {
            err(PageError::new(
                StatusCode::CONFLICT,
                "No team",
                "Form a team first, then invite.",
            ))
        })?;
    api::post_json(
        &web,
        &format!("/api/v1/teams/{}/invitations", team.id.0),
        Some(token),
        &serde_json::json!({"user": f.user.trim()}),
    )
    .await
    .json::<InvitationView>()
    .map_err(err)?;
    Ok(redirect(&format!("/challenges/{}/team", seg(&id))))
}

pub(crate) async fn answer_invitation(
    State(web): State<Web>,
    ctx: Ctx,
    Path((id, answer)): Path<(String, String)>,
    Form(f): Form<CsrfOnly>,
) -> PageResult {
    let (_, token) = ctx.need_user("/")?;
    ctx.check_csrf(&f.csrf).map_err(err)?;
    if answer != "accept" && answer != "decline" {
        return Err(err(PageError::not_found("No such answer.")));
    }
    let a = api::post_json(
        &web,
        &format!("/api/v1/invitations/{}/{answer}", seg(&id)),
        Some(token),
        &serde_json::json!({}),
    )
    .await;
    if !a.status.is_success() {
        return Err(err(a.refusal()));
    }
    let to = match serde_json::from_slice::<TeamView>(&a.body) {
        Ok(t) => format!("/challenges/{}/team", seg(&t.challenge)),
        Err(_) => "/".to_owned(),
    };
    Ok(redirect(&to))
}

// ---- submitting ----

struct SubmitView<'a> {
    c: &'a ChallengeView,
    open: Vec<&'a PhaseView>,
    quota: Option<QuotaView>,
    team: Option<store::Team>,
    refusal: Option<Markup>,
    max_bytes: Option<u64>,
}

fn submit_body(ctx: &Ctx, v: &SubmitView) -> Markup {
    let base = format!("/challenges/{}", seg(&v.c.id));
    html! {
        p.crumbs { a href=(base) { (v.c.title) } }
        h1 { "Submit an entry" }
        div #refusal-slot {
            @if let Some(r) = &v.refusal { (r) }
        }
        @if v.team.is_none() {
            p { "You need a team to submit. " a href={(base) "/team"} { "Form or join a team" } "." }
        } @else if v.open.is_empty() {
            p.error role="alert" { "No phase of this challenge is open now; see the phases on the " a href=(base) { "challenge's page" } "." }
        } @else {
            @if let Some(q) = &v.quota {
                section.quota aria-labelledby="quota" {
                    h2 #quota { "Quota left" }
                    ul.plain {
                        @if let Some(c) = q.closes {
                            li { "The phase closes for your team " strong { (time(c)) } @if q.extended { " (an extension the organisers granted your team)" } }
                        }
                        @if q.overridden { li { "Your team's limits were set by the organisers." } }
                        li { "In this phase: " strong { (q.total_left.map_or("no limit".to_string(), |n| n.to_string())) } }
                        li { "Today (UTC): " strong { (q.today_left.map_or("no limit".to_string(), |n| n.to_string())) } }
                        li { "Running or queued now: " (q.running) @if let Some(m) = q.max_concurrent { " of " (m) } }
                        @if !q.spent.is_empty() {
                            li.error { "Spent: " (q.spent.iter().map(word).collect::<Vec<_>>().join(", "))
                                @if let Some(n) = q.next_slot_at { "; next slot " (time(n)) } }
                        }
                    }
                    p.muted { "Failed entries count; entries that end in error (our fault) never do." }
                }
            }
            form #upload.stack method="post" action={(base) "/submit"} enctype="multipart/form-data" {
                (csrf(ctx))
                // New with every page: the form sent twice (a double click, a retry
                // after a lost answer) is one submission (docs/service.md, "Uploads").
                input type="hidden" name="idempotency_key" value=(uuid::Uuid::now_v7());
                label for="phase" { "Phase" }
                select #phase name="phase" {
                    @for p in &v.open { option value=(p.name) { (p.name) " (closes " (p.team_closes.unwrap_or(p.closes).format("%Y-%m-%d %H:%M UTC")) @if p.team_closes.is_some() { " for your team" } ")" } }
                }
                label for="method" { "Method name (optional, shown on the leaderboard)" }
                input #method type="text" name="method" maxlength="100";
                div.drop #drop {
                    label for="entry" { "Entry archive (.zip, .tar.gz or .tar"
                        @if let Some(m) = v.max_bytes { ", at most " (html::bytes(m)) } ")" }
                    input #entry type="file" name="entry" required accept=".zip,.tar,.gz,.tgz,application/zip,application/gzip,application/x-tar";
                    p.hint.js-only { "or drop the file here" }
                }
                progress #progress max="100" value="0" hidden { "0%" }
                p #progress-text aria-live="polite" {}
                button type="submit" { "Upload" }
            }
        }
    }
}

async fn submit_view<'a>(
    web: &Web,
    ctx: &Ctx,
    c: &'a ChallengeView,
    phase: Option<&str>,
) -> Result<SubmitView<'a>, Response> {
    let (user, token) = ctx.need_user(&format!("/challenges/{}/submit", seg(&c.id)))?;
    let team = web.store.team_of(user.id, &c.id).await.map_err(internal)?;
    let open: Vec<&PhaseView> = c.phases.iter().filter(|p| p.open).collect();
    let chosen = phase.or(open.first().map(|p| p.name.as_str()));
    let quota = match (&team, chosen) {
        (Some(_), Some(p)) => api::get(
            web,
            &format!("/api/v1/challenges/{}/quota?phase={}", seg(&c.id), seg(p)),
            Some(token),
        )
        .await
        .json::<QuotaView>()
        .ok(),
        _ => None,
    };
    Ok(SubmitView {
        c,
        open,
        quota,
        team,
        refusal: None,
        max_bytes: None,
    })
}

pub(crate) async fn submit_page(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
) -> PageResult {
    let c = challenge_view(&web, &ctx, &id).await?;
    let v = submit_view(&web, &ctx, &c, None).await?;
    Ok(page(&ctx, "Submit", submit_body(&ctx, &v)))
}

fn refusal_markup(r: &api::Refusal) -> Markup {
    let detail = r.body.as_ref().map(|b| &b.error);
    let (title, advice) = match r.code.as_str() {
        "invalid_entry" => (
            "The archive was refused",
            "Fix the archive and upload it again; nothing was charged to your quota.",
        ),
        "phase_closed" => (
            "The phase is closed",
            "Uploads are accepted only while a phase is open; see the challenge's phases.",
        ),
        "quota_spent" => (
            "Your quota is spent",
            "Wait for the next slot; entries that end in error are never charged.",
        ),
        "too_large" => (
            "The archive is too large",
            "Make the archive smaller (leave data and caches out).",
        ),
        "not_member" => (
            "You are not in a team",
            "Form or join a team of this challenge first.",
        ),
        _ => (
            "The upload was refused",
            "Check the message, then try again.",
        ),
    };
    html! {
        section.refusal role="alert" #refusal data-code=(r.code) {
            h2 { (title) }
            p { (r.message) }
            @if let Some(d) = detail {
                @if let Some(n) = d.next_slot_at { p { "Next slot: " (time(n)) } }
                @if let Some(c) = d.closes {
                    @if d.extended == Some(true) { p { "The phase closed for your team " (time(c)) ", at the end of its extension." } }
                    @else { p { "The phase closed " (time(c)) "." } }
                }
            }
            p { (advice) }
        }
    }
}

/// The most a form part that is not the file may hold (the CSRF token, the phase, the
/// method name), in bytes.
const FIELD_CAP: usize = 4 << 10;
/// The most parts before the file.
const FIELDS: usize = 8;

/// A form part other than the file, read up to [`FIELD_CAP`]: past it, 413 without
/// reading the rest (the route has no body limit, so that the file can stream).
async fn capped_text(field: &mut axum::extract::multipart::Field<'_>) -> Result<String, Response> {
    let mut value = Vec::new();
    loop {
        match field.chunk().await {
            Ok(Some(b)) => {
                if value.len() + b.len() > FIELD_CAP {
                    return Err(err(PageError::new(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        "The form was too large",
                        &format!(
                            "A field of the upload form holds at most {} KiB (the entry \
                             archive is the only large part).",
                            FIELD_CAP >> 10
                        ),
                    )));
                }
                value.extend_from_slice(&b);
            }
            Ok(None) => break,
            Err(e) => {
                return Err(err(PageError::new(
                    StatusCode::BAD_REQUEST,
                    "The form was incomplete",
                    &format!("The upload broke off ({e}). Try again."),
                )));
            }
        }
    }
    String::from_utf8(value).map_err(|_| {
        err(PageError::new(
            StatusCode::BAD_REQUEST,
            "The form was incomplete",
            "A field of the form was not text.",
        ))
    })
}

/// The upload form. The file is streamed into the API's upload as it arrives (never
/// held whole). Before it, the form's other parts are read one by one, each capped
/// ([`FIELD_CAP`], [`FIELDS`] of them), and the CSRF token must be the first: a form
/// that starts otherwise is refused before anything else of it is read.
pub(crate) async fn submit(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
    mut form: Multipart,
) -> PageResult {
    let (_, token) = ctx.need_user(&format!("/challenges/{}/submit", seg(&id)))?;
    let token = token.to_owned();
    let bad = |m: &str| {
        err(PageError::new(
            StatusCode::BAD_REQUEST,
            "The form was incomplete",
            m,
        ))
    };
    let mut csrf_ok = false;
    let mut phase: Option<String> = None;
    let mut method: Option<String> = None;
    let mut key: Option<String> = None;
    let mut answer = None;
    let mut fields = 0;
    while let Some(mut field) = form
        .next_field()
        .await
        .map_err(|e| bad(&format!("The upload broke off ({e}). Try again.")))?
    {
        let name = field.name().unwrap_or("").to_owned();
        fields += 1;
        if fields == 1 && name != "csrf" {
            return Err(bad(
                "The form must start with its CSRF token. Reload the page and send it again.",
            ));
        }
        if fields > FIELDS {
            return Err(bad("The form has too many fields."));
        }
        if name == "entry" {
            if !csrf_ok {
                return Err(err(ctx.check_csrf("").err().unwrap_or_else(|| {
                    PageError::new(
                        StatusCode::FORBIDDEN,
                        "Refused",
                        "The form had no CSRF token.",
                    )
                })));
            }
            let mut q = Vec::new();
            if let Some(p) = phase.as_deref().filter(|p| !p.is_empty()) {
                q.push(format!("phase={}", seg(p)));
            }
            if let Some(m) = method.as_deref().map(str::trim).filter(|m| !m.is_empty()) {
                q.push(format!("method={}", seg(m)));
            }
            let path = format!(
                "/api/v1/challenges/{}/submissions{}{}",
                seg(&id),
                if q.is_empty() { "" } else { "?" },
                q.join("&")
            );
            let (tx, rx) =
                tokio::sync::mpsc::channel::<Result<axum::body::Bytes, std::io::Error>>(8);
            let stream = futures_util::stream::unfold(rx, |mut rx| async move {
                rx.recv().await.map(|item| (item, rx))
            });
            let pump = async {
                loop {
                    match field.chunk().await {
                        Ok(Some(b)) => {
                            if tx.send(Ok(b)).await.is_err() {
                                break;
                            }
                        }
                        Ok(None) => break,
                        Err(e) => {
                            let _ = tx.send(Err(std::io::Error::other(e.to_string()))).await;
                            break;
                        }
                    }
                }
                drop(tx);
            };
            let call = api::upload(
                &web,
                &path,
                &token,
                key.as_deref().filter(|k| !k.is_empty()),
                Body::from_stream(stream),
            );
            let ((), a) = tokio::join!(pump, call);
            answer = Some(a);
            break;
        }
        let value = capped_text(&mut field).await?;
        match name.as_str() {
            "csrf" => {
                ctx.check_csrf(&value).map_err(err)?;
                csrf_ok = true;
            }
            "phase" => phase = Some(value),
            "method" => method = Some(value),
            "idempotency_key" => key = Some(value),
            _ => {}
        }
    }
    let Some(a) = answer else {
        return Err(bad("Choose an entry archive to upload."));
    };
    match a.json::<CreatedSubmission>() {
        Ok(s) => Ok(redirect(&format!("/submissions/{}", s.id))),
        Err(r) if r.status.is_client_error() && r.status != StatusCode::NOT_FOUND => {
            let c = challenge_view(&web, &ctx, &id).await?;
            let mut v = submit_view(&web, &ctx, &c, phase.as_deref()).await?;
            v.refusal = Some(refusal_markup(&r));
            let mut resp = page(&ctx, "Submit", submit_body(&ctx, &v));
            *resp.status_mut() = r.status;
            Ok(resp)
        }
        Err(r) => Err(err(r)),
    }
}

// ---- submissions ----

async fn submission_view(web: &Web, token: &str, id: &str) -> Result<SubmissionView, Response> {
    api::get(
        web,
        &format!("/api/v1/submissions/{}", seg(id)),
        Some(token),
    )
    .await
    .json()
    .map_err(err)
}

/// A submission's state in a line; `now` is the server's time (for the elapsed time).
fn summary(s: &SubmissionView, now: chrono::DateTime<chrono::Utc>) -> Markup {
    let state = word(&s.state);
    html! {
        span #summary {
            (state_badge(&state))
            @match state.as_str() {
                "queued" => {
                    @if let Some(p) = s.queue_position { " position " (p) " in the queue" }
                    @if s.judging_paused { " — judging paused: it keeps its place and is judged once the organisers resume judging" }
                }
                "running" => { " since " (time(s.state_changed_at)) " " span.elapsed data-since=(s.state_changed_at.to_rfc3339()) data-now=(now.to_rfc3339()) {} " " span.run-stage {} }
                "failed" => {
                    @if let Some(st) = s.stages.iter().find(|st| word(&st.outcome) == "failed") {
                        " in " strong { (st.stage) } @if let Some(r) = &st.reason { ": " (r) }
                    } @else if let Some(r) = &s.reason { ": " (r) }
                }
                "error" => { " — our fault, not charged to your quota; it is retried" }
                "scored" => {
                    @for (k, v) in &s.scores { " " (k) " " strong { (html::num(*v, 6)) } }
                    @if let Some(u) = s.scores_hidden_until { " (scores shown " (time(u)) ")" }
                }
                _ => {}
            }
        }
    }
}

#[derive(Deserialize)]
pub(crate) struct ListQuery {
    challenge: Option<String>,
}

pub(crate) async fn my_submissions(
    State(web): State<Web>,
    ctx: Ctx,
    Query(q): Query<ListQuery>,
) -> PageResult {
    let (user, token) = ctx.need_user("/submissions")?;
    let mut rows = Vec::new();
    for c in web.store.challenges().await.map_err(internal)? {
        if q.challenge.as_deref().is_some_and(|w| w != c.id) {
            continue;
        }
        let Some(team) = web.store.team_of(user.id, &c.id).await.map_err(internal)? else {
            continue;
        };
        for p in web.store.phases(&c.id).await.map_err(internal)? {
            for s in web
                .store
                .submissions(team.id, p.id)
                .await
                .map_err(internal)?
            {
                rows.push((c.title.clone(), p.name.clone(), s));
            }
        }
    }
    rows.sort_by_key(|r| std::cmp::Reverse(r.2.received_at));
    // Each row as the API shows it to this user (state, reason, queue position).
    const SHOWN: usize = 100;
    let mut views = Vec::new();
    for (title, phase, s) in rows.iter().take(SHOWN) {
        let v = submission_view(&web, token, &s.id.0.to_string()).await?;
        views.push((title, phase, v));
    }
    let now = web.store.now();
    let body = html! {
        h1 { "My submissions" }
        @if views.is_empty() { p { "None yet. Pick a challenge on the " a href="/" { "challenges page" } " and submit an entry." } }
        @else {
            div.scroll { table #submissions {
                thead { tr { th scope="col" { "Received" } th scope="col" { "Challenge" } th scope="col" { "Phase" } th scope="col" { "State" } } }
                tbody {
                    @for (title, phase, v) in &views {
                        tr data-submission=(v.id) {
                            td { a href={"/submissions/" (v.id)} { (time(v.received_at)) } }
                            td { (title) }
                            td { (phase) }
                            td.live { (summary(v, now)) }
                        }
                    }
                }
            } }
            @if rows.len() > SHOWN { p.muted { "The " (SHOWN) " newest of " (rows.len()) " are shown." } }
        }
    };
    Ok(page(&ctx, "My submissions", body))
}

/// The submission's state changes as server-sent events: the API's stream, with the
/// session's token (a browser's `EventSource` cannot send one itself).
pub(crate) async fn events(
    State(web): State<Web>,
    ctx: Ctx,
    from: Option<Extension<server::ClientAddr>>,
    Path(id): Path<String>,
    headers: axum::http::HeaderMap,
) -> PageResult {
    let Some(token) = ctx.token.as_deref() else {
        return Err(err(PageError::from_api(
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
            "",
        )));
    };
    let mut b = axum::extract::Request::builder()
        .uri(format!("/api/v1/submissions/{}/events", seg(&id)))
        .header(header::AUTHORIZATION, format!("Bearer {token}"));
    if let Some(last) = headers.get("last-event-id") {
        b = b.header("last-event-id", last.clone());
    }
    // The API counts streams per address too.
    if let Some(Extension(a)) = from {
        b = b.extension(a);
    }
    let req = b.body(Body::empty()).map_err(internal)?;
    Ok(api::forward(&web, req).await)
}

pub(crate) async fn submission(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
) -> PageResult {
    let (_, token) = ctx.need_user(&format!("/submissions/{}", seg(&id)))?;
    let s = submission_view(&web, token, &id).await?;
    let mut logs = BTreeMap::new();
    for st in s.stages.iter().filter(|st| st.log) {
        let a = api::get(
            &web,
            &format!("/api/v1/submissions/{}/logs/{}", s.id, seg(&st.stage)),
            Some(token),
        )
        .await;
        if a.status.is_success() {
            logs.insert(
                st.stage.clone(),
                text::clean_log(&String::from_utf8_lossy(&a.body)),
            );
        }
    }
    let state = word(&s.state);
    let quiz_records = crate::viewer::quiz_records(&s);
    let viewable =
        !quiz_records.is_empty() && crate::viewer::may_view(&web, &ctx, &s.challenge).await;
    let now = web.store.now();
    let body = html! {
        p.crumbs { a href={"/challenges/" (seg(&s.challenge))} { (s.challenge) } " · " a href="/submissions" { "My submissions" } }
        h1 { "Submission" }
        div #live data-submission=(s.id) { p.lead { (summary(&s, now)) } }
        dl.facts {
            dt { "Team" } dd { (s.team_name) }
            dt { "Phase" } dd { (s.phase) }
            dt { "Received" } dd { (time(s.received_at)) }
            dt { "Attempts" } dd { (s.attempts) }
            dt { "Entry sha256" } dd { code.hash { (s.reproduce.entry_sha256) } }
            @if s.selected { dt { "Final entry" } dd { "yes, selected" } }
        }
        @if state == "queued" {
            form method="post" action={"/submissions/" (s.id) "/withdraw"} { (csrf(&ctx)) button type="submit" { "Withdraw (not charged)" } }
        }
        @if state == "scored" && !s.selected {
            form method="post" action={"/submissions/" (s.id) "/select"} { (csrf(&ctx)) button type="submit" { "Make this our final entry" } }
        }
        @if !s.scores.is_empty() || s.scores_hidden_until.is_some() {
            section aria-labelledby="scores" {
                h2 #scores { "Scores" }
                @if let Some(u) = s.scores_hidden_until { p { "Exam scores of this phase are shown after it closes, " (time(u)) "." } }
                dl.facts { @for (k, v) in &s.scores { dt { (k) } dd { (html::num(*v, 6)) } } }
            }
        }
        @if !s.stages.is_empty() {
            section aria-labelledby="stages" {
                h2 #stages { "Stages" }
                div.scroll { table {
                    thead { tr { th scope="col" { "Stage" } th scope="col" { "Verdict" } th scope="col" { "Time" } th scope="col" { "Records" } th scope="col" { "Why" } } }
                    tbody {
                        @for st in &s.stages {
                            tr {
                                th scope="row" { (st.stage) }
                                td { (state_badge(&word(&st.outcome))) }
                                td { (html::duration(st.seconds)) }
                                td { @if let Some(c) = &st.counts { (c.ok) " of " (c.records) " ok"
                                    @if c.failures > 0 { ", " (c.failures) " failed" }
                                    @if c.timeouts > 0 { ", " (c.timeouts) " timed out" }
                                    @if c.defaulted > 0 { ", " (c.defaulted) " defaulted" } } }
                                td { @if let Some(r) = &st.reason { (r) } }
                            }
                        }
                    }
                } }
                p.muted { "The exam shows counts only: its per-record results stay with the organisers." }
            }
        }
        @if let Some(q) = &s.quiz {
            section aria-labelledby="quiz" {
                h2 #quiz { "Quiz" }
                p { "Quiz score: " strong { (html::num(Some(q.score), 6)) } }
                @if viewable && !quiz_records.is_empty() {
                    p { "Draw a record with your entry's answer against the truth:" }
                    ul.records { @for r in &quiz_records { li { a href={"/submissions/" (s.id) "/records/" (seg(r))} { (r) } } } }
                }
            }
        }
        @if !s.warnings.is_empty() {
            section aria-labelledby="warnings" {
                h2 #warnings { "Warnings" }
                ul { @for w in s.warnings.iter().take(200) { li { (warning_text(w)) } } }
                @if s.warnings.len() > 200 { p.muted { (s.warnings.len() - 200) " more." } }
            }
        }
        @for (stage, (log, cut)) in &logs {
            section aria-label={"Log of " (stage)} {
                h2 { "Log: " (stage) }
                @if *cut { p.muted { "The first " (html::bytes(text::LOG_CAP as u64)) " are shown; the whole log is at "
                    a href={"/api/v1/submissions/" (s.id) "/logs/" (seg(stage))} { "the API" } " (with your token)." } }
                pre.log { (log) }
            }
        }
        section aria-labelledby="reproduce" {
            h2 #reproduce { "Reproduce it locally" }
            pre { code { (s.reproduce.command) } }
            dl.facts {
                @if let Some(v) = &s.reproduce.judge_version { dt { "Judge" } dd { (v) } }
                @if let Some(v) = &s.reproduce.scorer_version { dt { "Scorer" } dd { (v) } }
                dt { "Definition sha256" } dd { code.hash { (s.reproduce.definition_sha256) } }
                dt { "Data manifest sha256" } dd { code.hash { (s.reproduce.manifest_sha256) } }
                dt { "Entry sha256" } dd { code.hash { (s.reproduce.entry_sha256) } }
            }
        }
        @if let Some(o) = &s.organiser {
            section aria-labelledby="org" {
                h2 #org { "Organisers only" }
                p { "Entry on the server: " code { (o.entry_path) } "; results stored: " (o.results) }
                ol { @for h in &o.history { li { (time(h.at)) " " (h.from.map(|f| word(&f)).unwrap_or_default()) " → " (word(&h.to)) " (" (h.reason) ")" } } }
                form method="post" action={"/organiser/requeue/" (s.id)} { (csrf(&ctx)) button type="submit" { "Requeue" } }
            }
        }
    };
    Ok(page(&ctx, "Submission", body))
}

fn warning_text(w: &serde_json::Value) -> String {
    match w {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Object(o) => o
            .iter()
            .map(|(k, v)| match v {
                serde_json::Value::String(s) => format!("{k}: {s}"),
                v => format!("{k}: {v}"),
            })
            .collect::<Vec<_>>()
            .join(" · "),
        v => v.to_string(),
    }
}

pub(crate) async fn withdraw(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
    Form(f): Form<CsrfOnly>,
) -> PageResult {
    submission_action(&web, &ctx, &id, "withdraw", &f.csrf).await
}

pub(crate) async fn select(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
    Form(f): Form<CsrfOnly>,
) -> PageResult {
    submission_action(&web, &ctx, &id, "select", &f.csrf).await
}

async fn submission_action(web: &Web, ctx: &Ctx, id: &str, action: &str, sent: &str) -> PageResult {
    let (_, token) = ctx.need_user(&format!("/submissions/{}", seg(id)))?;
    ctx.check_csrf(sent).map_err(err)?;
    let a = api::post_json(
        web,
        &format!("/api/v1/submissions/{}/{action}", seg(id)),
        Some(token),
        &serde_json::json!({}),
    )
    .await;
    if !a.status.is_success() {
        return Err(err(a.refusal()));
    }
    Ok(redirect(&format!("/submissions/{}", seg(id))))
}

// ---- leaderboards ----

#[derive(Deserialize)]
pub(crate) struct BoardQuery {
    phase: Option<String>,
    /// `live` (default), `final` or `published`, as the API's `?board=`.
    board: Option<String>,
    /// With `board=published`: the version (default: the latest).
    version: Option<String>,
    /// The same as `board=final` (older links).
    #[serde(rename = "final", default)]
    final_entries: Option<String>,
}

/// Ranks rows by one ranking number in its direction, equal figures sharing a rank
/// and a missing figure last (the store's rule for the first number).
fn rank_by<'a>(
    rows: &'a [LeaderboardRowView],
    key: &str,
    higher: bool,
) -> Vec<(u32, &'a LeaderboardRowView)> {
    let mut v: Vec<&LeaderboardRowView> = rows.iter().collect();
    let fig = |r: &LeaderboardRowView| r.scores.get(key).copied().flatten();
    v.sort_by(|a, b| match (fig(a), fig(b)) {
        (Some(x), Some(y)) => {
            let o = x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal);
            (if higher { o.reverse() } else { o }).then(a.submitted_at.cmp(&b.submitted_at))
        }
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.submitted_at.cmp(&b.submitted_at),
    });
    let mut out = Vec::with_capacity(v.len());
    for (i, r) in v.iter().enumerate() {
        let rank = match out.last() {
            Some(&(rk, prev)) if fig(prev) == fig(r) => rk,
            _ => u32::try_from(i + 1).unwrap_or(u32::MAX),
        };
        out.push((rank, *r));
    }
    out
}

pub(crate) async fn leaderboard(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
    Query(q): Query<BoardQuery>,
) -> PageResult {
    let c = challenge_view(&web, &ctx, &id).await?;
    let board = match (q.board.as_deref(), q.final_entries.as_deref()) {
        (Some(b @ ("live" | "final" | "published")), _) => b,
        (_, Some("true")) => "final",
        _ => "live",
    };
    let version: Option<u32> = if board == "published" {
        q.version.as_deref().and_then(|v| v.trim().parse().ok())
    } else {
        None
    };
    let base = format!("/challenges/{}", seg(&c.id));
    // The API's address for this board (and, for the JSON link, as it is).
    let api_path = |phase: Option<&str>, version: Option<u32>| {
        let mut path = format!(
            "/api/v1/challenges/{}/leaderboard?board={board}",
            seg(&c.id)
        );
        if let Some(p) = phase {
            path.push_str(&format!("&phase={}", seg(p)));
        }
        if let Some(v) = version {
            path.push_str(&format!("&version={v}"));
        }
        path
    };
    let path = api_path(q.phase.as_deref(), version);
    let choose = |phase: &str| {
        html! {
            form.inline method="get" action={(base) "/leaderboard"} {
                label for="phase" { "Phase" }
                select #phase name="phase" {
                    @for p in &c.phases { option value=(p.name) selected[p.name == phase] { (p.name) } }
                }
                label for="board" { "Board" }
                select #board name="board" {
                    option value="live" selected[board == "live"] { "live (the phase's rule)" }
                    option value="final" selected[board == "final"] { "final entries" }
                    option value="published" selected[board == "published"] { "published" }
                }
                button type="submit" { "Show" }
            }
        }
    };
    let b: LeaderboardView = if c.phases.is_empty() {
        return Ok(page(
            &ctx,
            "Leaderboard",
            html! {
                p.crumbs { a href={"/challenges/" (seg(&c.id))} { (c.title) } }
                h1 { "Leaderboard" } p { "This challenge has no phase yet." }
            },
        ));
    } else {
        let a = api::get(&web, &path, ctx.token.as_deref()).await;
        match a.json() {
            Ok(b) => b,
            // Nothing published yet for a phase that exists: said in place, with the
            // other boards a click away.
            Err(r)
                if board == "published"
                    && r.code == "not_found"
                    && q.phase
                        .as_deref()
                        .is_none_or(|p| c.phases.iter().any(|x| x.name == p)) =>
            {
                let shown = q.phase.clone().unwrap_or_default();
                return Ok(page(
                    &ctx,
                    "Leaderboard",
                    html! {
                        p.crumbs { a href=(base) { (c.title) } }
                        h1 { "Leaderboard" }
                        (choose(&shown))
                        p.notice #published-none {
                            @if version.is_some() { "There is no published version " (version.unwrap_or_default()) " of this phase." }
                            @else { "Nothing of this phase has been published yet." }
                        }
                    },
                ));
            }
            Err(r) => return Err(err(r)),
        }
    };
    let phase = c.phases.iter().find(|p| p.name == b.phase);
    // Every published version, as links: versions are numbered 1, 2, … and all kept,
    // so the latest's number lists them all.
    let latest = match (&b.published, version) {
        (Some(p), None) => Some(p.version),
        (Some(_), Some(_)) => api::get(&web, &api_path(Some(&b.phase), None), ctx.token.as_deref())
            .await
            .json::<LeaderboardView>()
            .ok()
            .and_then(|l| l.published.map(|p| p.version)),
        (None, _) => None,
    };
    let now = web.store.now();
    // The plot: every visible scored submission's first ranking number on the phase's
    // scored split, drawn as the best so far. What it may show (a figure, rounded or
    // exact, or nothing at all) is what the caller may see of the live board, by the
    // one rule every view follows (`server::sight`): its line, axis, caption and
    // `aria-label` are all drawn from those figures.
    // A published board is a snapshot: the plot of live scores is not about it.
    let plot = match (phase, b.ranking.first()) {
        (Some(p), Some(first)) if b.published.is_none() => {
            let stored = web
                .store
                .phase(store::PhaseId(p.id))
                .await
                .map_err(internal)?;
            let split = match b.split {
                server::views::SplitName::Quiz => store::Split::Quiz,
                server::views::SplitName::Exam => store::Split::Exam,
            };
            let sight = server::sight::board(
                &stored,
                split,
                server::views::BoardName::Live,
                ctx.is_organiser(),
                c.score_precision,
                now,
            );
            if sight.withheld() {
                None
            } else {
                let points = web
                    .store
                    .score_points(store::PhaseId(p.id))
                    .await
                    .map_err(internal)?;
                let pts: Vec<_> = points
                    .iter()
                    .filter_map(|pt| Some((pt.received_at, sight.show(Some(pt.value))?)))
                    .collect();
                let higher = word(&first.better) == "higher";
                Some(plot::step_plot(
                    &plot::best_so_far(&pts, higher),
                    now,
                    &first.key,
                ))
            }
        }
        _ => None,
    };
    let body = html! {
        p.crumbs { a href=(base) { (c.title) } }
        h1 { "Leaderboard" }
        (choose(&b.phase))
        @if let Some(p) = &b.published {
            p.notice #published-version { "Published leaderboard, version " (p.version) ", published " (time(p.published_at)) ". It never changes; a later publication is a new version." }
            @if let Some(n) = latest {
                nav.versions aria-label="Published versions" {
                    "Versions: "
                    @for v in (1..=n).rev() {
                        @if v == p.version { strong aria-current="page" { (v) } }
                        @else { a href={(base) "/leaderboard?phase=" (seg(&b.phase)) "&board=published&version=" (v)} { (v) } }
                        @if v == n { " (latest)" }
                        " "
                    }
                }
            }
        }
        p.muted {
            @if b.final_entries { "Each team's selected submission (else its best)." }
            @else { "Each team's " (word(&b.rule)) " scored submission." }
            " Equal figures share a rank."
        }
        @if b.withheld.is_some() && b.hidden_until.is_none() {
            p.notice { "This phase shows exam scores on its "
                a href={(base) "/leaderboard?phase=" (seg(&b.phase)) "&board=published"} { "published leaderboard" }
                " only." }
        }
        @if let Some(u) = b.hidden_until {
            p.notice { "This phase ranks by exam scores, which are shown after it closes, " (time(u)) "." }
        }
        @for (i, r) in b.ranking.iter().enumerate() {
            @let higher = word(&r.better) == "higher";
            @let ranked = if i == 0 { b.rows.iter().map(|row| (row.rank, row)).collect::<Vec<_>>() } else { rank_by(&b.rows, &r.key, higher) };
            section aria-label={"Ranked by " (metric(r))} {
                @if b.ranking.len() > 1 { h2 { "Ranked by " (metric(r)) " (" (if higher { "higher" } else { "lower" }) " is better)" } }
                @if ranked.is_empty() && b.hidden_until.is_none() { p { "No scored submission yet." } }
                @else {
                    div.scroll { table.board data-sortable {
                        thead { tr {
                            th scope="col" { "Rank" } th scope="col" { "Team" }
                            @for k in &b.ranking { th scope="col" { (metric(k)) " " span.dir aria-label=(if word(&k.better) == "higher" { "higher is better" } else { "lower is better" }) { (if word(&k.better) == "higher" { "↑" } else { "↓" }) } } }
                            th scope="col" { "Run time" } th scope="col" { "Submitted" }
                        } }
                        tbody {
                            @for (rank, row) in &ranked {
                                tr {
                                    td.num { (rank) }
                                    td { (row.team) @if row.baseline { " " span.badge.baseline title="a reference entry of the organisers'" { "baseline" } } @if let Some(m) = &row.method { br; span.muted { (m) } } }
                                    @for k in &b.ranking { td.num { (html::num(row.scores.get(&k.key).copied().flatten(), 6)) } }
                                    td.num { (row.run_time_s.map(html::duration).unwrap_or_else(|| "—".into())) }
                                    td { (time(row.submitted_at)) }
                                }
                            }
                        }
                    } }
                }
            }
        }
        @if let Some(p) = plot {
            section aria-labelledby="progress-h" {
                h2 #progress-h { "Best score over time" }
                (p)
            }
        }
        p { a href=(api_path(Some(&b.phase), b.published.as_ref().map(|p| p.version))) { "This leaderboard as JSON" } }
    };
    Ok(page(&ctx, "Leaderboard", body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_is_a_local_path_only() {
        assert_eq!(local_path(Some("/submissions")), "/submissions");
        for bad in [
            "//evil.example",
            "/\\evil.example",
            "/\t/evil.example",
            "https://evil.example",
            "/\n/x",
            "",
        ] {
            assert_eq!(local_path(Some(bad)), "/", "{bad:?}");
        }
        assert_eq!(local_path(None), "/");
    }

    fn row(team: &str, score: Option<f64>, cost: Option<f64>, at: i64) -> LeaderboardRowView {
        LeaderboardRowView {
            rank: 0,
            team: team.into(),
            team_id: uuid::Uuid::nil(),
            submission: uuid::Uuid::nil(),
            score,
            scores: [
                ("score".to_string(), score),
                ("outcome_cost".to_string(), cost),
            ]
            .into(),
            run_time_s: None,
            submitted_at: chrono::DateTime::from_timestamp(at, 0).unwrap(),
            method: None,
            baseline: false,
        }
    }

    #[test]
    fn a_second_ranking_ranks_by_its_own_number_and_direction() {
        let rows = [
            row("A", Some(0.9), Some(12000.0), 1),
            row("B", Some(0.8), Some(9000.0), 2),
            row("C", Some(0.7), Some(9000.0), 3),
            row("D", Some(0.6), None, 0),
        ];
        let ranked: Vec<(u32, &str)> = rank_by(&rows, "outcome_cost", false)
            .into_iter()
            .map(|(r, row)| (r, row.team.as_str()))
            .collect();
        // lower is better; equal figures share a rank; a missing figure is last
        assert_eq!(ranked, vec![(1, "B"), (1, "C"), (3, "A"), (4, "D")]);
        let by_score: Vec<&str> = rank_by(&rows, "score", true)
            .into_iter()
            .map(|(_, r)| r.team.as_str())
            .collect();
        assert_eq!(by_score, vec!["A", "B", "C", "D"]);
    }
}
