//! The routes, the shared state behind them and the OpenAPI document they make.

pub(crate) mod accounts;
pub(crate) mod challenges;
mod events;
mod ops;
mod queue;
mod rules;
mod submissions;
mod team_rules;
mod teams;
mod workers;

use std::ops::Deref;
use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post, put};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::error::ApiError;
use crate::limits::{Logins, Streams};
use crate::metrics::Metrics;
use crate::{Config, Stopping};

/// What every handler shares. Cheap to clone.
#[derive(Clone)]
pub(crate) struct App(Arc<Inner>);

pub(crate) struct Inner {
    pub store: store::Store,
    /// Leaderboards as served (`challenges::leaderboard`).
    pub boards: crate::boards::Boards,
    pub config: Config,
    pub metrics: Metrics,
    /// Upload checks under way at once (`Config::concurrent_checks`).
    pub checks: tokio::sync::Semaphore,
    pub logins: Logins,
    /// Sign-ups per address, shared with the web site.
    pub throttle: crate::Throttle,
    /// Live event streams per user and address.
    pub streams: Arc<Streams>,
    /// The history of each followed submission, read once per poll for all its
    /// streams.
    pub histories: events::Histories,
    pub stopping: Stopping,
    /// Held while a remote worker's result folder is put in place or its report
    /// taken (`queue::put_result`, `queue::report`), so that neither sees the other
    /// half done.
    pub results: tokio::sync::Mutex<()>,
}

impl Deref for App {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}

impl App {
    pub(crate) fn new(store: store::Store, config: Config) -> App {
        // Leaderboards combine only scores of this judge's scorer (docs/service.md,
        // "Versions"); older ones wait for a rescoring.
        let store = store.with_scorer_version(judge::rescore::SCORER_VERSION);
        // Workers of another judge build than the server's are refused
        // (docs/service.md, "Workers").
        let store = match store.build() {
            Some(_) => store,
            None => store.with_build(workers::server_build()),
        };
        App(Arc::new(Inner {
            boards: Default::default(),
            store,
            checks: tokio::sync::Semaphore::new(config.concurrent_checks.max(1)),
            logins: Logins::new(
                config.login_tries_per_minute,
                config.login_tries_per_address_per_minute,
            ),
            throttle: crate::Throttle::new(config.signups_per_address_per_hour),
            streams: Arc::new(Streams::new(
                config.streams_per_user,
                config.streams_per_address,
            )),
            histories: Default::default(),
            config,
            metrics: Metrics::default(),
            stopping: Stopping::default(),
            results: tokio::sync::Mutex::new(()),
        }))
    }
}

pub(crate) fn router(app: App) -> Router {
    Router::new()
        .route("/api/v1/openapi.json", get(openapi_json))
        .route("/api/v1/users", post(accounts::create_user))
        .route("/api/v1/users/me", get(accounts::me))
        .route("/api/v1/tokens", post(accounts::create_token))
        .route(
            "/api/v1/workers",
            get(workers::list).post(accounts::create_worker),
        )
        .route("/api/v1/workers/{id}/drain", post(workers::drain))
        .route("/api/v1/workers/{id}/disable", post(workers::disable))
        .route("/api/v1/workers/{id}/enable", post(workers::enable))
        .route("/api/v1/challenges/{id}/pause", post(workers::pause))
        .route("/api/v1/challenges/{id}/resume", post(workers::resume))
        .route("/api/v1/teams", post(teams::create_team))
        .route(
            "/api/v1/teams/{id}",
            get(teams::get_team).patch(teams::rename),
        )
        .route(
            "/api/v1/teams/{id}/invitations",
            get(teams::sent_invitations).post(teams::invite),
        )
        .route("/api/v1/teams/{id}/leave", post(teams::leave))
        .route("/api/v1/teams/{id}/baseline", put(team_rules::put_baseline))
        .route("/api/v1/invitations", get(teams::my_invitations))
        .route("/api/v1/invitations/{id}/accept", post(teams::accept))
        .route("/api/v1/invitations/{id}/decline", post(teams::decline))
        .route(
            "/api/v1/challenges",
            get(challenges::list).post(challenges::create),
        )
        .route("/api/v1/challenges/{id}", get(challenges::get_one))
        .route(
            "/api/v1/challenges/{id}/phases",
            post(challenges::create_phase),
        )
        .route("/api/v1/challenges/{id}/quota", get(challenges::quota))
        .route(
            "/api/v1/challenges/{id}/about",
            get(challenges::about::get_about).put(challenges::about::put_about),
        )
        .route(
            "/api/v1/challenges/{id}/announcements",
            get(challenges::about::list_announcements).post(challenges::about::post_announcement),
        )
        .route(
            "/api/v1/challenges/{id}/announcements/{announcement}",
            delete(challenges::about::delete_announcement),
        )
        .route(
            "/api/v1/challenges/{id}/starter.zip",
            get(challenges::about::starter),
        )
        .route(
            "/api/v1/challenges/{id}/phases/{phase}/extensions",
            get(team_rules::list_extensions),
        )
        .route(
            "/api/v1/challenges/{id}/phases/{phase}/extensions/{team}",
            get(team_rules::get_extension)
                .put(team_rules::put_extension)
                .delete(team_rules::delete_extension),
        )
        .route(
            "/api/v1/challenges/{id}/phases/{phase}/quotas",
            get(team_rules::list_quotas),
        )
        .route(
            "/api/v1/challenges/{id}/phases/{phase}/quotas/{team}",
            get(team_rules::get_quota)
                .put(team_rules::put_quota)
                .delete(team_rules::delete_quota),
        )
        .route(
            "/api/v1/challenges/{id}/submissions",
            post(crate::upload::upload).get(submissions::list),
        )
        .route(
            "/api/v1/challenges/{id}/leaderboard",
            get(challenges::leaderboard),
        )
        .route("/api/v1/challenges/{id}/publish", post(rules::publish))
        .route("/api/v1/challenges/{id}/rescore", post(rules::rescore))
        .route("/api/v1/rescores/{id}", get(rules::get_rescore))
        .route("/api/v1/rescores/{id}/apply", post(rules::apply_rescore))
        .route("/api/v1/rescores/{id}/cancel", post(rules::cancel_rescore))
        .route("/api/v1/submissions/{id}", get(submissions::get_one))
        .route(
            "/api/v1/submissions/{id}/logs/{stage}",
            get(submissions::log),
        )
        .route("/api/v1/submissions/{id}/events", get(events::events))
        .route(
            "/api/v1/submissions/{id}/withdraw",
            post(submissions::withdraw),
        )
        .route("/api/v1/submissions/{id}/select", post(submissions::select))
        .route(
            "/api/v1/submissions/{id}/requeue",
            post(submissions::requeue),
        )
        .route("/api/v1/queue/announce", post(queue::announce))
        .route("/api/v1/queue/take", post(queue::take))
        .route(
            "/api/v1/queue/attempts/{submission}/{number}/entry",
            get(queue::entry),
        )
        .route(
            "/api/v1/queue/attempts/{submission}/{number}/heartbeat",
            post(queue::heartbeat),
        )
        .route(
            "/api/v1/queue/attempts/{submission}/{number}/result",
            put(queue::put_result),
        )
        .route(
            "/api/v1/queue/attempts/{submission}/{number}/report",
            post(queue::report),
        )
        .route("/healthz", get(ops::healthz))
        .route("/metrics", get(ops::metrics))
        .fallback(no_route)
        .method_not_allowed_fallback(no_method)
        .layer(middleware::from_fn_with_state(app.clone(), observe))
        // Every body read whole (JSON) is bounded; the streamed ones (uploads, result
        // folders) count their own bytes.
        .layer(axum::extract::DefaultBodyLimit::max(
            app.config.max_body_bytes,
        ))
        .with_state(app)
}

async fn no_route() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such endpoint")
}

async fn no_method() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "this endpoint does not take that method",
    )
}

/// Every answer: its latency and status counted by route (the route's pattern, not
/// the path, so ids do not make new series), and `nosniff` so that no browser reads a
/// JSON or text answer as HTML.
async fn observe(State(app): State<App>, req: Request, next: Next) -> Response {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_else(|| "unmatched".to_owned());
    let method = req.method().clone();
    let started = Instant::now();
    let mut response = next.run(req).await;
    app.metrics.observe(
        &method,
        &route,
        response.status(),
        started.elapsed().as_secs_f64(),
    );
    response.headers_mut().insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    if method == Method::GET && route.starts_with("/api/") {
        // Answers differ by caller: no shared cache may keep one.
        response
            .headers_mut()
            .entry(header::CACHE_CONTROL)
            .or_insert(HeaderValue::from_static("private, no-store"));
    }
    response
}

#[utoipa::path(get, path = "/api/v1/openapi.json", tag = "meta",
    responses((status = 200, description = "This document", content_type = "application/json")))]
async fn openapi_json() -> Response {
    crate::json::Json(openapi()).into_response()
}

struct Bearer;

impl Modify for Bearer {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "A user's token (`pj_…`): POST /api/v1/tokens, or \
                         `physiojudge admin user add` for the first organiser",
                    ))
                    .build(),
            ),
        );
    }
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "physiojudge",
        description = "The judge's platform API: accounts, teams, challenges, phases, \
            submissions, leaderboards (docs/architecture.md, \"HTTP API\"; docs/service.md). \
            Errors are {\"error\": {\"code\", \"message\", …}}; times are RFC 3339 UTC."
    ),
    paths(
        openapi_json,
        accounts::create_user,
        accounts::me,
        accounts::create_token,
        accounts::create_worker,
        teams::create_team,
        teams::get_team,
        teams::invite,
        teams::my_invitations,
        teams::accept,
        teams::decline,
        teams::rename,
        teams::leave,
        teams::sent_invitations,
        challenges::list,
        challenges::create,
        challenges::get_one,
        challenges::create_phase,
        challenges::quota,
        challenges::about::get_about,
        challenges::about::put_about,
        challenges::about::list_announcements,
        challenges::about::post_announcement,
        challenges::about::delete_announcement,
        challenges::about::starter,
        team_rules::list_extensions,
        team_rules::get_extension,
        team_rules::put_extension,
        team_rules::delete_extension,
        team_rules::list_quotas,
        team_rules::get_quota,
        team_rules::put_quota,
        team_rules::delete_quota,
        team_rules::put_baseline,
        challenges::leaderboard,
        rules::publish,
        rules::rescore,
        rules::get_rescore,
        rules::apply_rescore,
        rules::cancel_rescore,
        crate::upload::upload,
        submissions::list,
        submissions::get_one,
        submissions::log,
        events::events,
        submissions::withdraw,
        submissions::select,
        submissions::requeue,
        ops::healthz,
        ops::metrics,
        workers::list,
        workers::drain,
        workers::disable,
        workers::enable,
        workers::pause,
        workers::resume,
        queue::announce,
        queue::take,
        queue::entry,
        queue::heartbeat,
        queue::put_result,
        queue::report,
    ),
    components(schemas(crate::views::StateEvent, crate::views::ProgressEvent)),
    modifiers(&Bearer),
    tags(
        (name = "accounts"), (name = "teams"), (name = "challenges"),
        (name = "submissions"), (name = "operations"), (name = "queue"), (name = "meta"),
    )
)]
struct ApiDoc;

pub(crate) fn openapi() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}

/// A path's id as the store's id type; an id that does not parse names nothing (404,
/// as an unknown one).
pub(crate) fn parse_id<T: std::str::FromStr>(text: &str, what: &str) -> Result<T, ApiError> {
    text.parse().map_err(|_| ApiError::not_found(what))
}
