//! The routes and the OpenAPI document they make; the state behind them is `app.rs`,
//! the lookups and input checks the handlers share `lookup.rs` and `checks.rs`.

pub(crate) mod accounts;
mod app;
pub(crate) mod challenges;
mod checks;
mod events;
mod lookup;
mod ops;
mod queue;
mod rules;
mod submissions;
mod team_rules;
mod teams;
mod upload;
mod workers;

use std::sync::OnceLock;
use std::time::Instant;

use axum::Router;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) use app::App;
pub(crate) use checks::{check_limits, check_name};
pub(crate) use lookup::{judge_challenge, parse_id, resolve_phase, team_of};

use crate::error::ApiError;

/// Every route with its OpenAPI entry: each module lists its own (`router()`), and
/// the document is what the routes say, so the two cannot drift.
fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(openapi_json))
        .merge(accounts::router())
        .merge(teams::router())
        .merge(challenges::router())
        .merge(team_rules::router())
        .merge(rules::router())
        .merge(submissions::router())
        .merge(events::router())
        .merge(ops::router())
        .merge(workers::router())
        .merge(queue::router())
}

pub(crate) fn router(app: App) -> Router {
    let (router, _) = routes().split_for_parts();
    router
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
    components(schemas(crate::views::StateEvent, crate::views::ProgressEvent)),
    modifiers(&Bearer),
    tags(
        (name = "accounts"), (name = "teams"), (name = "challenges"),
        (name = "submissions"), (name = "operations"), (name = "queue"), (name = "meta"),
    )
)]
struct ApiDoc;

/// The document, made once from the routes.
pub(crate) fn openapi() -> utoipa::openapi::OpenApi {
    static DOC: OnceLock<utoipa::openapi::OpenApi> = OnceLock::new();
    DOC.get_or_init(|| routes().split_for_parts().1).clone()
}

#[cfg(test)]
mod tests {
    /// The API as it is, committed (`crates/server/openapi.json`): a change to a route,
    /// a parameter or a body is a visible diff in review. After an intended change,
    /// `PHYSIOJUDGE_BLESS=1 cargo test -p server --lib openapi` writes the new one.
    #[test]
    fn openapi_document_matches_its_snapshot() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("openapi.json");
        let now = serde_json::to_string_pretty(&super::openapi()).unwrap() + "\n";
        if std::env::var_os("PHYSIOJUDGE_BLESS").is_some() {
            std::fs::write(&path, &now).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == now,
            "the OpenAPI document differs from {} (run with PHYSIOJUDGE_BLESS=1 to \
             accept the change, then review the diff)",
            path.display()
        );
    }
}
