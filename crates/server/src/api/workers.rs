//! Worker and queue controls for organisers (docs/service.md, "Workers"): the list of
//! workers with their build, heartbeat, running attempts and errors; drain, disable and
//! enable; pausing and resuming the judging of a challenge.

use axum::extract::{Path, State};
use serde::Deserialize;
use utoipa::IntoParams;

use store::{Build, WorkerId};

use crate::api::challenges::challenge_view;
use crate::api::{App, parse_id};
use crate::auth::Organiser;
use crate::error::ApiError;
use crate::json::{Json, Query};
use crate::views::{BuildView, ChallengeView, ErrorBody, WorkerView, WorkersView};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// This module's routes: each handler's `#[utoipa::path]` is its route and its OpenAPI
/// entry at once, so the two cannot drift.
pub(super) fn router() -> OpenApiRouter<App> {
    OpenApiRouter::new()
        .routes(routes!(list, super::accounts::create_worker))
        .routes(routes!(drain))
        .routes(routes!(disable))
        .routes(routes!(enable))
        .routes(routes!(pause))
        .routes(routes!(resume))
}

/// The judge build the server runs: its workers must run the same.
pub(crate) fn server_build() -> Build {
    Build {
        judge_version: judge::rescore::JUDGE_VERSION.to_owned(),
        runtime_lock: judge::rescore::runtime_lock_id(),
    }
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct WhyQuery {
    /// Why (kept with the worker's state, in its history, or with the pause).
    pub why: Option<String>,
}

fn why(q: WhyQuery, default: &str) -> Result<String, ApiError> {
    match q.why {
        None => Ok(default.to_owned()),
        Some(w) if w.trim().is_empty() => Err(ApiError::invalid("why: empty")),
        Some(w) if w.len() > 1000 => Err(ApiError::invalid("why: longer than 1000 bytes")),
        Some(w) => Ok(w),
    }
}

async fn view(app: &App, id: WorkerId) -> Result<WorkerView, ApiError> {
    let server = app.store.build().cloned().unwrap_or_else(server_build);
    let all = app.store.worker_statuses().await?;
    let s = all
        .iter()
        .find(|s| s.worker.id == id)
        .ok_or_else(|| ApiError::not_found("worker"))?;
    Ok(WorkerView::new(s, &server))
}

/// Every worker (organisers): state and who changed it why, last heartbeat, the judge
/// version and runtime lock it announced (and whether they are the server's), its
/// running attempts and its recent errors.
#[utoipa::path(get, path = "/api/v1/workers", tag = "operations", security(("bearer" = [])),
    responses(
        (status = 200, body = WorkersView),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
    ))]
pub(crate) async fn list(
    State(app): State<App>,
    Organiser(_by): Organiser,
) -> Result<Json<WorkersView>, ApiError> {
    let server = app.store.build().cloned().unwrap_or_else(server_build);
    let workers = app
        .store
        .worker_statuses()
        .await?
        .iter()
        .map(|s| WorkerView::new(s, &server))
        .collect();
    Ok(Json(WorkersView {
        server: BuildView::from(&server),
        error_limit: app.store.policy().worker_error_limit,
        workers,
    }))
}

/// Drains a worker (organisers): it finishes its running attempts and takes no new job
/// until enabled.
#[utoipa::path(post, path = "/api/v1/workers/{id}/drain", tag = "operations",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "the worker's id"), WhyQuery),
    responses(
        (status = 200, body = WorkerView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "it is draining or disabled"),
        (status = 422, body = ErrorBody),
    ))]
pub(crate) async fn drain(
    State(app): State<App>,
    Organiser(by): Organiser,
    Path(id): Path<String>,
    Query(q): Query<WhyQuery>,
) -> Result<Json<WorkerView>, ApiError> {
    let id: WorkerId = parse_id(&id, "worker")?;
    let why = why(q, "drained by an organiser")?;
    app.store.drain_worker(id, Some(by.id), &why).await?;
    Ok(Json(view(&app, id).await?))
}

/// Disables a worker (organisers): it takes nothing, and its running attempts end now
/// as `error` (never charged), queued again for another worker; the worker stops them
/// at its next heartbeat.
#[utoipa::path(post, path = "/api/v1/workers/{id}/disable", tag = "operations",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "the worker's id"), WhyQuery),
    responses(
        (status = 200, body = WorkerView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "it is disabled already"),
        (status = 422, body = ErrorBody),
    ))]
pub(crate) async fn disable(
    State(app): State<App>,
    Organiser(by): Organiser,
    Path(id): Path<String>,
    Query(q): Query<WhyQuery>,
) -> Result<Json<WorkerView>, ApiError> {
    let id: WorkerId = parse_id(&id, "worker")?;
    let why = why(q, "disabled by an organiser")?;
    let (_, ended) = app.store.disable_worker(id, Some(by.id), &why).await?;
    if !ended.requeued.is_empty() {
        app.config.queued();
    }
    Ok(Json(view(&app, id).await?))
}

/// Enables a draining or disabled worker (organisers): it takes jobs again, and its
/// count of errors in a row starts from nothing.
#[utoipa::path(post, path = "/api/v1/workers/{id}/enable", tag = "operations",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "the worker's id"), WhyQuery),
    responses(
        (status = 200, body = WorkerView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "it is enabled already"),
        (status = 422, body = ErrorBody),
    ))]
pub(crate) async fn enable(
    State(app): State<App>,
    Organiser(by): Organiser,
    Path(id): Path<String>,
    Query(q): Query<WhyQuery>,
) -> Result<Json<WorkerView>, ApiError> {
    let id: WorkerId = parse_id(&id, "worker")?;
    let why = why(q, "enabled by an organiser")?;
    app.store.enable_worker(id, Some(by.id), &why).await?;
    // Its slots may be idle, waiting for work.
    app.config.queued();
    Ok(Json(view(&app, id).await?))
}

/// Pauses the judging of a challenge (organisers): submissions are still accepted and
/// queued; no worker takes one of its jobs; attempts running now finish.
#[utoipa::path(post, path = "/api/v1/challenges/{id}/pause", tag = "operations",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "the challenge's id"), WhyQuery),
    responses(
        (status = 200, body = ChallengeView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "its judging is paused already"),
        (status = 422, body = ErrorBody),
    ))]
pub(crate) async fn pause(
    State(app): State<App>,
    Organiser(by): Organiser,
    Path(id): Path<String>,
    Query(q): Query<WhyQuery>,
) -> Result<Json<ChallengeView>, ApiError> {
    let why = why(q, "paused by an organiser")?;
    let c = app.store.pause_challenge(&id, Some(by.id), &why).await?;
    Ok(Json(challenge_view(&app, &c, Some(&by)).await?))
}

/// Resumes the judging of a paused challenge (organisers): its queued submissions are
/// taken again, in their order.
#[utoipa::path(post, path = "/api/v1/challenges/{id}/resume", tag = "operations",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "the challenge's id")),
    responses(
        (status = 200, body = ChallengeView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "its judging is not paused"),
    ))]
pub(crate) async fn resume(
    State(app): State<App>,
    Organiser(by): Organiser,
    Path(id): Path<String>,
) -> Result<Json<ChallengeView>, ApiError> {
    let c = app.store.resume_challenge(&id).await?;
    app.config.queued();
    Ok(Json(challenge_view(&app, &c, Some(&by)).await?))
}
