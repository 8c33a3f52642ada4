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

mod leaderboards;
mod submissions;
mod submit;
pub(crate) use leaderboards::*;
pub(crate) use submissions::*;
pub(crate) use submit::*;

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
            language: None,
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
