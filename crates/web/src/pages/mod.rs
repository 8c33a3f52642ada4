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

/// A phase's state in words that cannot be read as its name (a phase may be named
/// "open"): "accepting entries until …", "opens …", "closed …".
fn phase_status(p: &PhaseView, now: chrono::DateTime<chrono::Utc>) -> Markup {
    html! {
        @if p.open { span.badge.open { "accepting entries" } " until " (time(p.team_closes.unwrap_or(p.closes)))
            @if p.team_closes.is_some() { " (your team's extension)" } }
        @else if now < p.opens { span.badge { "not open yet" } " opens " (time(p.opens)) }
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
                            li { "Phase " q { (p.name) } " " (phase_status(p, now)) }
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

/// A ranking number as people read it: its name and unit (its report key for a view
/// from a server that does not name it).
fn metric(r: &server::views::RankingView) -> String {
    let name = if r.name.is_empty() { &r.key } else { &r.name };
    match &r.unit {
        Some(unit) => format!("{name} ({unit})"),
        None => name.clone(),
    }
}

mod challenge;
mod leaderboards;
mod submissions;
mod submit;
mod teams;
pub(crate) use challenge::*;
pub(crate) use leaderboards::*;
pub(crate) use submissions::*;
pub(crate) use submit::*;
pub(crate) use teams::*;

/// The judge's definition of a registered challenge, for the task and limits.
pub(crate) async fn definition(web: &Web, id: &str) -> Option<judge::challenge::Challenge> {
    definition_of(&web.store.challenge(id).await.ok()?)
}

/// The judge's reading of a stored challenge's definition (`None` if it does not read).
pub(crate) fn definition_of(c: &store::Challenge) -> Option<judge::challenge::Challenge> {
    match &c.definition {
        store::Definition::Builtin(b) => judge::challenge::Challenge::built_in(b).ok(),
        store::Definition::Toml(t) => judge::challenge::Challenge::parse(t, "definition").ok(),
    }
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
