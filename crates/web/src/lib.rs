//! The platform's web site: server-rendered pages for participants and organisers
//! (docs/web.md), beside the JSON API that `server` serves.
//!
//! - **One source of truth.** Every change a page makes (signing in, forming a team,
//!   uploading an entry, requeueing) is the API's own request, made in-process with the
//!   signed-in user's token, so the API's rules, checks and error codes hold unchanged.
//!   What a page shows of a submission or a leaderboard is the API's answer to that
//!   user, so a page can never show more than the API shows the same caller. A few
//!   lists the API has no endpoint for (a team's own submissions, the organiser's
//!   queue and workers, the best-score plot) are read from the store directly.
//! - **Sessions** are API tokens in an `HttpOnly`, `SameSite=Lax` cookie (`Secure`
//!   when [`Config::secure_cookies`]); signing out revokes the token. Every form carries
//!   a CSRF token derived from the session (or, before signing in, from a random
//!   pre-session cookie), and a cross-origin `Origin` on a form post is refused.
//! - **No inline script or style.** Pages are checked at compile time (`maud`, which
//!   escapes every value unless told otherwise), the one stylesheet and the one script
//!   are compiled into the binary, and `Content-Security-Policy` forbids anything else.
//!   Every page works without JavaScript; the script only adds local times, upload
//!   progress, drag-and-drop and live submission states.
//!
//! Not here: the API itself (`server`), the records (`store`), judging (`worker`).

// Handlers answer a refusal with the page that says so: a `Response` as the error.
#![allow(clippy::result_large_err)]

mod api;
mod console;
mod html;
mod markdown;
mod pages;
mod plot;
mod session;
mod text;
mod viewer;

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

/// How the site behaves.
#[derive(Debug, Clone)]
pub struct Config {
    /// Mark the session cookie `Secure`: set it when the site is served over https (a
    /// proxy in front), never on plain http (the browser would drop the cookie).
    pub secure_cookies: bool,
    /// Whether anyone may create a participant account at `/signup`. Organisers are
    /// made with `physiojudge admin` or by another organiser.
    pub signup: bool,
    /// How long a session cookie lives, in days (its token is revoked at sign-out).
    pub session_days: u32,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            secure_cookies: false,
            signup: true,
            session_days: 14,
        }
    }
}

/// The web site over a store and the API router that serves the same store.
#[derive(Clone)]
pub struct Web(Arc<Inner>);

/// What [`Web`] shares between requests (its fields are the crate's own).
#[doc(hidden)]
pub struct Inner {
    pub(crate) store: store::Store,
    pub(crate) api: Router,
    pub(crate) config: Config,
    /// The server's state folder: result folders (quiz outputs for the record viewer).
    pub(crate) state_dir: std::path::PathBuf,
    /// Sign-ups per address (the API's limits, shared).
    pub(crate) throttle: server::Throttle,
    /// How connections are kept (the API server's settings).
    pub(crate) connections: server::Connections,
}

impl std::ops::Deref for Web {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}

impl std::fmt::Debug for Web {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Web").field("config", &self.config).finish()
    }
}

impl Web {
    /// The site over `store`, making its changes through `api`'s router (a server
    /// over the same store) and reading result folders in its state folder.
    pub fn new(store: store::Store, api: &server::Server, config: Config) -> Web {
        Web(Arc::new(Inner {
            store,
            api: api.router(),
            config,
            state_dir: api.state_dir().to_path_buf(),
            throttle: api.throttle(),
            connections: api.connections().clone(),
        }))
    }

    /// The pages and their assets, with every other path (`/api/v1/…`, `/healthz`,
    /// `/metrics`) passed on to the API router: the one router to serve.
    pub fn router(&self) -> Router {
        let pages = Router::new()
            .route("/", get(pages::home))
            .route("/login", get(pages::login_page).post(pages::login))
            .route("/logout", post(pages::logout))
            .route("/signup", get(pages::signup_page).post(pages::signup))
            .route("/token", get(pages::token_page).post(pages::new_token))
            .route("/token/revoke", post(pages::revoke_token))
            .route("/challenges/{id}", get(pages::challenge))
            .route(
                "/challenges/{id}/team",
                get(pages::team_page).post(pages::create_team),
            )
            .route("/challenges/{id}/team/invite", post(pages::invite))
            // Getting started, teams and announcements (docs/web.md, "The challenge page").
            .route("/challenges/{id}/team/rename", post(pages::rename_team))
            .route("/challenges/{id}/team/leave", post(pages::leave_team))
            .route("/challenges/{id}/starter.zip", get(pages::starter))
            .route("/challenges/{id}/announcements.atom", get(pages::feed))
            .route("/invitations", get(pages::invitations_page))
            .route("/invitations/{id}/{answer}", post(pages::answer_invitation))
            .route(
                "/challenges/{id}/submit",
                // The upload streams into the API's, which counts the bytes against its
                // own limit (`server::Config::max_upload_bytes`); axum's default 2 MB
                // cap on a form would refuse any real entry first.
                // Its other parts are capped one by one (`pages::submit`).
                get(pages::submit_page)
                    .post(pages::submit)
                    .layer(axum::extract::DefaultBodyLimit::disable()),
            )
            .route("/challenges/{id}/leaderboard", get(pages::leaderboard))
            .route("/submissions", get(pages::my_submissions))
            .route("/submissions/{id}", get(pages::submission))
            .route("/submissions/{id}/events", get(pages::events))
            .route("/submissions/{id}/logs/{stage}", get(pages::log_download))
            .route("/submissions/{id}/records/{record}", get(viewer::record))
            .route("/submissions/{id}/withdraw", post(pages::withdraw))
            .route("/submissions/{id}/select", post(pages::select))
            // The organiser's console, by challenge (its routes are its own).
            .merge(console::routes())
            .route("/static/site.css", get(stylesheet))
            .route("/static/site.js", get(script))
            .route("/favicon.svg", get(favicon))
            .route("/favicon.ico", get(favicon))
            .fallback(fallback)
            // Every other form is read whole: a few fields of text. (A route's own
            // limit, the upload's, takes precedence over this one.)
            .layer(axum::extract::DefaultBodyLimit::max(FORM_CAP))
            .layer(middleware::from_fn_with_state(self.clone(), dress))
            .layer(middleware::from_fn(guard))
            // gzip for clients that ask: pages are mostly markup and tables (a board of a
            // hundred rows shrinks about tenfold). The default predicate leaves event
            // streams, images and bodies under 32 bytes alone.
            .layer(tower_http::compression::CompressionLayer::new());
        pages.with_state(self.clone())
    }

    /// Serves [`Web::router`] on `listener` until the process ends, with the API
    /// server's header-read and idle timeouts (`server::serve`).
    pub async fn serve(self, listener: tokio::net::TcpListener) -> std::io::Result<()> {
        let connections = self.connections.clone();
        server::serve(listener, self.router(), connections, std::future::pending()).await
    }
}

/// The largest form body read whole (every form but the upload's), in bytes: the
/// longest is the organiser's phase or challenge form, a few hundred bytes.
const FORM_CAP: usize = 64 << 10;

const CSS: &str = include_str!("../static/site.css");
const JS: &str = include_str!("../static/site.js");
const FAVICON: &str = include_str!("../static/favicon.svg");

async fn stylesheet() -> Response {
    asset("text/css; charset=utf-8", CSS)
}

async fn script() -> Response {
    asset("text/javascript; charset=utf-8", JS)
}

/// The site's icon (browsers ask for `/favicon.ico` when a page names none; both
/// addresses answer the same SVG).
async fn favicon() -> Response {
    asset("image/svg+xml", FAVICON)
}

fn asset(kind: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, kind),
            // The assets change with the binary: revalidate, never guess.
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

/// Paths that are not pages: the API's, passed on unchanged; anything else is the
/// site's "not found" page.
async fn fallback(State(web): State<Web>, req: Request) -> Response {
    let path = req.uri().path();
    if path.starts_with("/api/") || path == "/healthz" || path == "/metrics" {
        return api::forward(&web, req).await;
    }
    html::PageError::not_found("There is no page at this address.").into_response()
}

/// An error page drawn again in the reader's frame: who is signed in, the navigation,
/// sign-out. Only error responses pay for the session lookup a second time.
async fn dress(State(web): State<Web>, req: Request, next: Next) -> Response {
    let headers = req.headers().clone();
    let r = next.run(req).await;
    let Some(e) = r.extensions().get::<html::ErrorPage>().cloned() else {
        return r;
    };
    let Ok(ctx) = session::Ctx::from_headers(&web, &headers).await else {
        return r;
    };
    let status = r.status();
    let mut page = html::page(&ctx, &e.title, html::error_body(&e.title, &e.message));
    *page.status_mut() = status;
    page
}

/// Every page's headers; and a form post whose `Origin` is another site is refused
/// before any handler runs (the CSRF token is checked as well, in the handler).
async fn guard(req: Request, next: Next) -> Response {
    let is_api = req.uri().path().starts_with("/api/");
    // A page is personal when a session asks for it (its frame names the reader) or
    // it carries a form's token (sign-in and sign-up, before any session).
    let personal = req.method() != Method::GET
        || session::cookies(req.headers()).any(|(k, _)| k == session::SESSION)
        || ["/login", "/signup"].contains(&req.uri().path());
    if req.method() == Method::POST && !is_api && !session::same_origin(req.headers()) {
        return html::PageError::new(
            StatusCode::FORBIDDEN,
            "Refused",
            "This form was sent from another site. Open the page on this site and send it again.",
        )
        .into_response();
    }
    let mut r = next.run(req).await;
    if is_api {
        return r;
    }
    let status = r.status();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
             connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
        ),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    if !h.contains_key(header::CACHE_CONTROL) {
        // A personal page (or one setting a cookie, or an error) is kept by no cache; a
        // public one, the same for every reader without a session, briefly: a minute
        // old at most, and told apart by cookie from a signed-in reader's.
        let public = !personal && status.is_success() && !h.contains_key(header::SET_COOKIE);
        h.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static(if public {
                "public, max-age=60"
            } else {
                "private, no-store"
            }),
        );
        if public {
            h.append(header::VARY, HeaderValue::from_static("cookie"));
        }
    }
    r
}
