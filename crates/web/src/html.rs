//! The page frame, error pages and the small formatting every page shares. `maud`
//! escapes every value it is given; nothing here writes unescaped text except the
//! server's own SVG (built from numbers, see `plot`).

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use maud::{DOCTYPE, Markup, html};

use crate::session::Ctx;

/// A whole page: the frame (header with the signed-in user, navigation, footer) around
/// `body`.
pub(crate) fn page(ctx: &Ctx, title: &str, body: Markup) -> Response {
    let r = frame(Some(ctx), title, body);
    ctx.finish(axum::response::Html(r.into_string()).into_response())
}

fn frame(ctx: Option<&Ctx>, title: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · physiojudge" }
                link rel="icon" href="/favicon.svg" type="image/svg+xml";
                link rel="stylesheet" href="/static/site.css";
                script src="/static/site.js" defer {}
            }
            body {
                a.skip href="#main" { "Skip to content" }
                header.site {
                    a.brand href="/" { "physiojudge" }
                    nav aria-label="Site" {
                        ul {
                            li { a href="/" { "Challenges" } }
                            @if let Some(ctx) = ctx {
                                @if let Some(u) = &ctx.user {
                                    li { a href="/submissions" { "My submissions" } }
                                    @if ctx.invitations > 0 {
                                        li { a.pending href="/invitations" { "Invitations (" (ctx.invitations) ")" } }
                                    }
                                    li { a href="/token" { "API token" } }
                                    @if ctx.is_organiser() {
                                        li { a href="/organiser" { "Organiser" } }
                                    }
                                    li.user {
                                        form method="post" action="/logout" {
                                            input type="hidden" name="csrf" value=(ctx.csrf);
                                            span { "Signed in as " strong { (u.name) } }
                                            " "
                                            button type="submit" { "Sign out" }
                                        }
                                    }
                                } @else {
                                    li { a href="/login" { "Sign in" } }
                                }
                            }
                        }
                    }
                }
                main #main { (body) }
                footer.site {
                    p { "physiojudge judges every entry with the same code as "
                        code { "physiojudge evaluate" } " on your machine." }
                }
            }
        }
    }
}

/// A page that could not be shown: its status, what happened and what to do next.
#[derive(Debug)]
pub(crate) struct PageError {
    pub status: StatusCode,
    pub title: String,
    pub message: String,
}

impl PageError {
    pub fn new(status: StatusCode, title: &str, message: &str) -> PageError {
        PageError {
            status,
            title: title.to_owned(),
            message: message.to_owned(),
        }
    }

    pub fn not_found(message: &str) -> PageError {
        PageError::new(
            StatusCode::NOT_FOUND,
            "Not found",
            &format!("{message} Check the address, or start again from the list of challenges."),
        )
    }

    pub fn internal(e: &dyn std::fmt::Display) -> PageError {
        tracing::error!("web page failed: {e}");
        PageError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Something went wrong on our side",
            "The cause is in the server's log. Try again in a minute; if it persists, tell \
             the organisers.",
        )
    }

    /// An API refusal as a page.
    pub fn from_api(status: StatusCode, code: &str, message: &str) -> PageError {
        match status {
            StatusCode::NOT_FOUND => PageError::not_found("There is nothing here for you."),
            StatusCode::UNAUTHORIZED => PageError::new(
                status,
                "Sign in first",
                "This page needs you to sign in. Use “Sign in” at the top of the page.",
            ),
            StatusCode::FORBIDDEN => PageError::new(
                status,
                "Not allowed",
                &format!("{message}. Go back to the challenge's page."),
            ),
            s if s.is_server_error() => PageError::internal(&format_args!("{code}: {message}")),
            _ => PageError::new(status, "Refused", message),
        }
    }
}

/// An error page's words, kept on its response so that the site's error layer can
/// draw it again inside the reader's own frame (signed in, with the navigation).
#[derive(Debug, Clone)]
pub(crate) struct ErrorPage {
    pub title: String,
    pub message: String,
}

pub(crate) fn error_body(title: &str, message: &str) -> Markup {
    html! {
        h1 { (title) }
        p.error role="alert" { (message) }
        p { a href="/" { "Back to the challenges" } }
    }
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        let body = error_body(&self.title, &self.message);
        let mut r = (
            self.status,
            axum::response::Html(frame(None, &self.title, body).into_string()),
        )
            .into_response();
        r.extensions_mut().insert(ErrorPage {
            title: self.title,
            message: self.message,
        });
        r
    }
}

/// "See other": after a form post, the page to show.
pub(crate) fn redirect(to: &str) -> Response {
    (StatusCode::SEE_OTHER, [(header::LOCATION, to.to_owned())]).into_response()
}

/// A time for people: UTC text that the script rewrites into the reader's local time.
pub(crate) fn time(t: DateTime<Utc>) -> Markup {
    html! {
        time datetime=(t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)) {
            (t.format("%Y-%m-%d %H:%M UTC"))
        }
    }
}

/// A number at most `decimals` places, without trailing zeros; "—" for none (the
/// wording the kinds' quiz views use too).
pub(crate) use judge::kinds::view::number as num;

/// Seconds as people read them: "42 s", "3 min 5 s", "1 h 2 min" (one wording for
/// the whole site and the record views the kinds make).
pub(crate) use judge::kinds::view::duration;

/// A byte count for people.
pub(crate) fn bytes(n: u64) -> String {
    match n {
        0..1024 => format!("{n} B"),
        1024..1_048_576 => format!("{:.0} KiB", n as f64 / 1024.0),
        _ => format!("{:.0} MiB", n as f64 / 1_048_576.0),
    }
}

/// The CSRF field every form carries.
pub(crate) fn csrf(ctx: &Ctx) -> Markup {
    html! { input type="hidden" name="csrf" value=(ctx.csrf); }
}

/// A state as a badge (its class colours it; the word says it).
pub(crate) fn state_badge(state: &str) -> Markup {
    html! { span class={"state state-" (state)} data-state=(state) { (state) } }
}
