//! The organiser's console, by challenge (docs/web.md, "Organiser console"):
//! `/organiser` lists the challenges and creates one; `/organiser/challenges/{id}` is a
//! challenge's overview, with one page each for its phases, submissions, publishing
//! and rescoring, per-team rules and (server-wide) the workers.
//!
//! Every form of the console goes through [`act`]: the organiser and the CSRF token
//! checked, the API's own request made with the organiser's token, then the page the
//! change leads to; a refusal (the API's, or a field the form could not read) draws
//! the same page again with the reason above the form that was sent and that form's
//! values kept, so nothing typed is lost.

mod announcements;
mod overview;
mod phases;
mod publish;
mod rules;
mod submissions;
mod workers;

use std::collections::HashMap;
use std::future::Future;

use axum::Router;
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use maud::{Markup, html};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use server::views::ChallengeView;

use crate::Web;
use crate::api::{self, seg};
use crate::html::{PageError, page, redirect};
use crate::session::Ctx;

pub(crate) type PageResult = Result<Response, Response>;

/// The console's routes (merged into the site's router).
pub(crate) fn routes() -> Router<Web> {
    Router::new()
        .route("/organiser", get(overview::list))
        .route("/organiser/challenges", post(overview::create))
        .route("/organiser/challenges/{id}", get(overview::show))
        .route("/organiser/challenges/{id}/edit", post(overview::edit))
        .route("/organiser/challenges/{id}/pause", post(overview::pause))
        .route("/organiser/challenges/{id}/resume", post(overview::resume))
        .route(
            "/organiser/challenges/{id}/phases",
            get(phases::page_of).post(phases::create),
        )
        .route(
            "/organiser/challenges/{id}/phases/{phase}",
            post(phases::update),
        )
        .route(
            "/organiser/challenges/{id}/submissions",
            get(submissions::page_of),
        )
        .route(
            "/organiser/challenges/{id}/requeue/{submission}",
            post(submissions::requeue),
        )
        .route(
            "/organiser/requeue/{submission}",
            post(submissions::requeue_from_submission),
        )
        .route("/organiser/results.csv", get(submissions::results_csv))
        .route(
            "/organiser/challenges/{id}/publish",
            get(publish::page_of).post(publish::publish),
        )
        .route("/organiser/challenges/{id}/rescore", post(publish::rescore))
        .route("/organiser/rescores/{id}", get(publish::rescore_page))
        .route(
            "/organiser/rescores/{id}/{decision}",
            post(publish::decide_rescore),
        )
        .route(
            "/organiser/challenges/{id}/announcements",
            get(announcements::announcements_page),
        )
        .route(
            "/organiser/challenges/{id}/announcements/texts",
            post(announcements::save_texts),
        )
        .route(
            "/organiser/challenges/{id}/announcements/new",
            post(announcements::post_announcement),
        )
        .route(
            "/organiser/challenges/{id}/announcements/{announcement}/delete",
            post(announcements::delete_announcement),
        )
        .route("/organiser/challenges/{id}/rules", get(rules::page_of))
        .route(
            "/organiser/challenges/{id}/extensions",
            post(rules::grant_extension),
        )
        .route(
            "/organiser/challenges/{id}/extensions/revoke",
            post(rules::revoke_extension),
        )
        .route("/organiser/challenges/{id}/quotas", post(rules::set_quota))
        .route(
            "/organiser/challenges/{id}/quotas/remove",
            post(rules::remove_quota),
        )
        .route(
            "/organiser/challenges/{id}/baseline",
            post(rules::set_baseline),
        )
        .route("/organiser/workers", get(workers::page_of))
        .route(
            "/organiser/workers/{id}/{action}",
            post(workers::worker_action),
        )
        .route("/organiser/metrics", get(workers::metrics))
}

pub(crate) fn internal(e: impl std::fmt::Display) -> Response {
    PageError::internal(&e).into_response()
}

fn refused(e: api::Refusal) -> Response {
    PageError::from(e).into_response()
}

/// A console form as sent: its fields by name and which form it was (its `form`
/// field, so a page with several forms fills in and marks only that one).
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub(crate) struct Sent {
    fields: HashMap<String, String>,
    #[serde(skip)]
    failed: Option<Failed>,
}

/// Why a form's change was not made.
#[derive(Debug)]
pub(crate) struct Failed {
    pub status: StatusCode,
    pub message: String,
    /// The API's whole error body (a publication's blockers are in it).
    pub body: Option<Value>,
}

impl Sent {
    /// A field as sent ("" when absent).
    pub fn get(&self, name: &str) -> &str {
        self.fields.get(name).map_or("", String::as_str)
    }

    /// A field as sent, trimmed; `None` when absent or blank.
    pub fn opt(&self, name: &str) -> Option<&str> {
        Some(self.get(name).trim()).filter(|v| !v.is_empty())
    }

    fn form(&self) -> &str {
        self.get("form")
    }

    pub fn failed(&self) -> Option<&Failed> {
        self.failed.as_ref()
    }
}

/// What a page's forms are drawn with: the form the organiser just sent, when its
/// change was refused (its values kept, its refusal above it).
#[derive(Clone, Copy, Default)]
pub(crate) struct Kept<'a>(pub Option<&'a Sent>);

impl<'a> Kept<'a> {
    /// The sent form if it is `form`.
    pub fn of(&self, form: &str) -> Option<&'a Sent> {
        self.0.filter(|s| s.form() == form)
    }

    /// A field's value: as sent when `form` was refused, else `default`.
    pub fn value(&self, form: &str, field: &str, default: &str) -> String {
        match self.of(form) {
            Some(s) => s.get(field).to_owned(),
            None => default.to_owned(),
        }
    }

    /// A checkbox: as sent when `form` was refused, else `default`.
    pub fn checked(&self, form: &str, field: &str, default: bool) -> bool {
        match self.of(form) {
            Some(s) => !s.get(field).is_empty(),
            None => default,
        }
    }

    /// The refusal above `form`, if it was the one refused.
    pub fn refusal(&self, form: &str) -> Markup {
        let failed = self.of(form).and_then(Sent::failed);
        html! {
            @if let Some(f) = failed {
                p.error.refusal role="alert" id={"refused-" (form)} { "Not done: " (f.message) }
            }
        }
    }

    /// Whether any form was refused (the page answers with the refusal's status).
    fn status(&self) -> Option<StatusCode> {
        self.0.and_then(|s| s.failed.as_ref()).map(|f| f.status)
    }
}

/// The hidden fields every console form carries: the CSRF token and its name.
pub(crate) fn form_head(ctx: &Ctx, form: &str) -> Markup {
    html! {
        (crate::html::csrf(ctx))
        input type="hidden" name="form" value=(form);
    }
}

/// The API request a form makes.
pub(crate) struct Call {
    pub method: Method,
    pub path: String,
    /// Sent as JSON (not for `DELETE`, which has none).
    pub body: Value,
}

impl Call {
    pub fn post(path: String, body: Value) -> Call {
        Call {
            method: Method::POST,
            path,
            body,
        }
    }

    pub fn put(path: String, body: Value) -> Call {
        Call {
            method: Method::PUT,
            path,
            body,
        }
    }

    pub fn delete(path: String) -> Call {
        Call {
            method: Method::DELETE,
            path,
            body: Value::Null,
        }
    }
}

/// A refusal the form's own reading makes (before any request).
pub(crate) fn unreadable(message: String) -> Failed {
    Failed {
        status: StatusCode::UNPROCESSABLE_ENTITY,
        message,
        body: None,
    }
}

/// The console's one way to act on a form: checks the organiser and the CSRF token,
/// builds the API request from the form (`call`, which may refuse a field it cannot
/// read), makes it as the organiser, and answers with a redirect to `then(answer)`;
/// a refusal draws the same page again (`redraw`) with the reason and the form's
/// values.
pub(crate) async fn act<T, R, RF>(
    web: &Web,
    ctx: &Ctx,
    mut sent: Sent,
    call: impl FnOnce(&Sent) -> Result<Call, Failed>,
    then: impl FnOnce(T) -> String,
    redraw: R,
) -> PageResult
where
    T: DeserializeOwned,
    R: FnOnce(Sent) -> RF,
    RF: Future<Output = PageResult>,
{
    let (_, token) = ctx.need_organiser()?;
    ctx.check_csrf(sent.get("csrf"))
        .map_err(IntoResponse::into_response)?;
    let failed = match call(&sent) {
        Err(f) => f,
        Ok(c) => {
            let a = if c.method == Method::DELETE {
                api::delete(web, &c.path, Some(token)).await
            } else {
                api::send_json(web, c.method, &c.path, Some(token), &c.body).await
            };
            if a.status.is_success() {
                // A 204 has no body: read it as `null`.
                let body: &[u8] = if a.body.is_empty() { b"null" } else { &a.body };
                return match serde_json::from_slice::<T>(body) {
                    Ok(v) => Ok(redirect(&then(v))),
                    Err(e) => Err(internal(format_args!("the API's answer: {e}"))),
                };
            }
            let r = a.refusal();
            if r.status.is_server_error() || r.status == StatusCode::UNAUTHORIZED {
                return Err(refused(r));
            }
            Failed {
                status: r.status,
                message: r.message,
                body: serde_json::from_slice(&a.body).ok(),
            }
        }
    };
    sent.failed = Some(failed);
    redraw(sent).await
}

/// A page of the console: the frame, and the status of a refused form if one is
/// drawn again.
pub(crate) fn console_page(ctx: &Ctx, kept: Kept, title: &str, body: Markup) -> Response {
    let mut r = page(ctx, title, body);
    if let Some(s) = kept.status() {
        *r.status_mut() = s;
    }
    r
}

/// The organiser's token, or the page that says they must be one.
pub(crate) fn organiser(ctx: &Ctx) -> Result<&str, Response> {
    Ok(ctx.need_organiser()?.1)
}

/// A challenge as the API shows its organiser.
pub(crate) async fn challenge(web: &Web, token: &str, id: &str) -> Result<ChallengeView, Response> {
    api::get(web, &format!("/api/v1/challenges/{}", seg(id)), Some(token))
        .await
        .json()
        .map_err(refused)
}

/// The console's rooms of one challenge, in the sub-navigation's order.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Room {
    Overview,
    Phases,
    Submissions,
    Publish,
    Rules,
}

impl Room {
    const ALL: [Room; 5] = [
        Room::Overview,
        Room::Phases,
        Room::Submissions,
        Room::Publish,
        Room::Rules,
    ];

    fn label(self) -> &'static str {
        match self {
            Room::Overview => "Overview",
            Room::Phases => "Phases",
            Room::Submissions => "Submissions",
            Room::Publish => "Publish and rescore",
            Room::Rules => "Per-team rules",
        }
    }

    pub fn path(self, id: &str) -> String {
        let base = format!("/organiser/challenges/{}", seg(id));
        match self {
            Room::Overview => base,
            Room::Phases => format!("{base}/phases"),
            Room::Submissions => format!("{base}/submissions"),
            Room::Publish => format!("{base}/publish"),
            Room::Rules => format!("{base}/rules"),
        }
    }
}

/// A challenge's page in the console: where it is, its title, the sub-navigation
/// (the current room marked), then `body`.
pub(crate) fn room(c: &ChallengeView, here: Room, notice: Markup, body: Markup) -> Markup {
    html! {
        p.crumbs { a href="/organiser" { "Organiser console" } " › " (c.id) }
        h1 { (c.title) @if here != Room::Overview { " — " (here.label()) } }
        nav.rooms aria-label="This challenge in the console" { ul {
            @for r in Room::ALL {
                li { a href=(r.path(&c.id)) aria-current=[(r == here).then_some("page")] { (r.label()) } }
            }
            // The announcements' form is another page's (its own file); linked here.
            li { a href={"/organiser/challenges/" (seg(&c.id)) "/announcements"} { "Announcements" } }
            li { a href="/organiser/workers" { "Workers" } }
            li { a href={"/challenges/" (seg(&c.id))} { "Public page" } }
        } }
        (notice)
        (body)
    }
}

/// What the last form did, as a redirect's query says it (`done`, and the name it
/// concerned): a known word, drawn in the console's own words, so that a link cannot
/// put a message on the page.
#[derive(Deserialize, Default)]
pub(crate) struct Done {
    done: Option<String>,
    name: Option<String>,
}

impl Done {
    pub fn notice(&self) -> Markup {
        let name = self.name.as_deref().unwrap_or("");
        let text = match self.done.as_deref() {
            Some("challenge") => "Challenge created.".to_owned(),
            Some("edited") => "Challenge saved.".to_owned(),
            Some("phase") => format!("Phase {name} added."),
            Some("phase-saved") => format!("Phase {name} saved."),
            Some("requeued") => "Requeued: a new attempt is in the queue.".to_owned(),
            Some("extension") => format!("Extension of team {name} saved."),
            Some("extension-revoked") => format!("Extension of team {name} revoked."),
            Some("quota") => format!("Quota of team {name} saved."),
            Some("quota-removed") => format!("Quota override of team {name} removed."),
            Some("baseline") => format!("Team {name} updated."),
            Some("paused") => "Judging paused.".to_owned(),
            Some("resumed") => "Judging resumed.".to_owned(),
            Some(w @ ("enabled" | "draining" | "disabled")) => format!("Worker {name} is {w}."),
            _ => String::new(),
        };
        html! { @if !text.is_empty() { p.notice role="status" { (text) } } }
    }
}

/// Where a form's change leads: `path` with what was done and to whom.
pub(crate) fn done(path: &str, what: &str, name: &str) -> String {
    format!("{path}?done={what}&name={}", seg(name))
}

/// A `datetime-local` value, read as UTC (RFC 3339), or why it is not one.
pub(crate) fn utc(field: &str, s: &str) -> Result<String, Failed> {
    let s = s.trim();
    chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M")
        .or_else(|_| chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S"))
        .map(|t| t.and_utc().to_rfc3339())
        .map_err(|_| {
            unreadable(format!(
                "{field}: “{s}” is not a date and time (YYYY-MM-DDTHH:MM)."
            ))
        })
}

/// A time as a `datetime-local` field shows it (UTC).
pub(crate) fn local_field(t: chrono::DateTime<chrono::Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M").to_string()
}

/// An optional whole number (a limit), or why it is not one.
pub(crate) fn limit(field: &str, s: Option<&str>) -> Result<Option<u32>, Failed> {
    match s {
        None => Ok(None),
        Some(v) => v
            .parse()
            .map(Some)
            .map_err(|_| unreadable(format!("{field}: “{v}” is not a whole number."))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_that_cannot_be_read_say_which_and_why() {
        assert_eq!(
            utc("Opens", "2026-11-29T10:30").unwrap(),
            "2026-11-29T10:30:00+00:00"
        );
        let e = utc("Opens", "tomorrow").unwrap_err();
        assert!(e.message.starts_with("Opens: “tomorrow”"), "{}", e.message);
        assert_eq!(limit("Total", Some("12")).unwrap(), Some(12));
        assert_eq!(limit("Total", None).unwrap(), None);
        let e = limit("Total", Some("-1")).unwrap_err();
        assert!(e.message.contains("Total: “-1” is not a whole number"));
    }

    #[test]
    fn only_the_refused_form_keeps_its_values() {
        let mut fields = HashMap::new();
        fields.insert("form".to_owned(), "phase-new".to_owned());
        fields.insert("name".to_owned(), "final <b>".to_owned());
        let sent = Sent {
            fields,
            failed: Some(unreadable("no".into())),
        };
        let kept = Kept(Some(&sent));
        assert_eq!(kept.value("phase-new", "name", ""), "final <b>");
        assert_eq!(kept.value("phase-x", "name", "x"), "x");
        assert!(
            kept.refusal("phase-new")
                .into_string()
                .contains("Not done: no")
        );
        assert!(kept.refusal("phase-x").into_string().is_empty());
        assert_eq!(kept.status(), Some(StatusCode::UNPROCESSABLE_ENTITY));
    }
}
