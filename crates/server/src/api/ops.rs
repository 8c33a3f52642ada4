//! Liveness and metrics.

use std::fmt::Write as _;

use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::api::App;
use crate::auth::Organiser;
use crate::error::ApiError;
use crate::json::Json;
use crate::metrics::label;
use crate::views::{ErrorBody, Health};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// This module's routes: each handler's `#[utoipa::path]` is its route and its OpenAPI
/// entry at once, so the two cannot drift.
pub(super) fn router() -> OpenApiRouter<App> {
    OpenApiRouter::new()
        .routes(routes!(healthz))
        .routes(routes!(metrics))
}

/// Whether the server answers and reaches its database.
#[utoipa::path(get, path = "/healthz", tag = "operations",
    responses((status = 200, body = Health),
        (status = 503, body = Health, description = "the database does not answer")))]
pub(crate) async fn healthz(State(app): State<App>) -> Response {
    match app.store.state_counts(Some("")).await {
        Ok(_) => Json(Health {
            status: "ok".into(),
        })
        .into_response(),
        Err(e) => {
            tracing::warn!("health check: {e}");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(Health {
                    status: "unavailable".into(),
                }),
            )
                .into_response()
        }
    }
}

/// Prometheus text (organisers): the queue, submissions by state, failures by reason,
/// workers by state, API requests and their latency.
#[utoipa::path(get, path = "/metrics", tag = "operations", security(("bearer" = [])),
    responses(
        (status = 200, description = "Prometheus text format 0.0.4",
            content_type = "text/plain", body = String),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
    ))]
pub(crate) async fn metrics(
    State(app): State<App>,
    Organiser(_by): Organiser,
) -> Result<Response, ApiError> {
    let counts = app.store.state_counts(None).await?;
    let failures = app.store.failure_counts().await?;
    let of = |s: store::State| {
        counts
            .iter()
            .find(|(state, _)| *state == s)
            .map_or(0, |(_, n)| *n)
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# HELP physiojudge_queue_length Submissions queued for a worker.\n\
         # TYPE physiojudge_queue_length gauge\n\
         physiojudge_queue_length {}\n\
         # HELP physiojudge_running Submissions being judged.\n\
         # TYPE physiojudge_running gauge\n\
         physiojudge_running {}\n\
         # HELP physiojudge_submissions Submissions by state.\n\
         # TYPE physiojudge_submissions gauge",
        of(store::State::Queued),
        of(store::State::Running)
    );
    for (state, n) in &counts {
        let _ = writeln!(out, "physiojudge_submissions{{state=\"{state}\"}} {n}");
    }
    let _ = writeln!(
        out,
        "# HELP physiojudge_failed_submissions Submissions now failed (the entry's fault), \
         by the failing stage's reason.\n# TYPE physiojudge_failed_submissions gauge"
    );
    for f in failures.iter().filter(|f| f.state == store::State::Failed) {
        let _ = writeln!(
            out,
            "physiojudge_failed_submissions{{reason=\"{}\"}} {}",
            label(&f.kind),
            f.count
        );
    }
    let _ = writeln!(
        out,
        "# HELP physiojudge_errors_total Attempts that ended in error (the platform's \
         fault), by reason.\n# TYPE physiojudge_errors_total counter"
    );
    for f in failures.iter().filter(|f| f.state == store::State::Error) {
        let _ = writeln!(
            out,
            "physiojudge_errors_total{{reason=\"{}\"}} {}",
            label(&f.kind),
            f.count
        );
    }
    let workers = app.store.worker_statuses().await?;
    let _ = writeln!(
        out,
        "# HELP physiojudge_workers Workers by state (enabled, draining, disabled).\n\
         # TYPE physiojudge_workers gauge"
    );
    for state in store::WorkerState::ALL {
        let n = workers.iter().filter(|w| w.worker.state == *state).count();
        let _ = writeln!(out, "physiojudge_workers{{state=\"{state}\"}} {n}");
    }
    // Workers kept enabled though their errors in a row reached the limit: the last
    // ones taking jobs, which the store never disables automatically. Nonzero: look.
    let limit = app.store.policy().worker_error_limit;
    let alerts = workers
        .iter()
        .filter(|w| {
            limit > 0 && w.worker.state == store::WorkerState::Enabled && w.error_streak >= limit
        })
        .count();
    let _ = writeln!(
        out,
        "# HELP physiojudge_worker_alerts Enabled workers whose errors in a row reached the \
         limit, kept because no other worker takes jobs (look at them).\n\
         # TYPE physiojudge_worker_alerts gauge\nphysiojudge_worker_alerts {alerts}"
    );
    app.metrics.render(&mut out);
    Ok((
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        )],
        out,
    )
        .into_response())
}
