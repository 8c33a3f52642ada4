//! Rules an organiser sets for one team (docs/service.md, "Deadlines and quotas per
//! team"): a deadline extension and a quota override of a phase, each with a reason
//! and kept with its history; and the baseline mark of a team.
//!
//! `{phase}` is a phase's name, `{team}` a team's id or name (of the challenge): the
//! same words an organiser sees on the console.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Deserialize;
use utoipa::IntoParams;

use store::{Phase, Quota, Team, TeamId};

use crate::api::{App, check_limits, parse_id, resolve_phase};
use crate::auth::Organiser;
use crate::error::ApiError;
use crate::json::{Body, Json, Query};
use crate::views::{
    BaselineRequest, ErrorBody, ExtensionRequest, ExtensionView, QuotaOverrideRequest,
    QuotaOverrideView, TeamView,
};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// This module's routes: each handler's `#[utoipa::path]` is its route and its OpenAPI
/// entry at once, so the two cannot drift.
pub(super) fn router() -> OpenApiRouter<App> {
    OpenApiRouter::new()
        .routes(routes!(list_extensions))
        .routes(routes!(get_extension, put_extension, delete_extension))
        .routes(routes!(list_quotas))
        .routes(routes!(get_quota, put_quota, delete_quota))
        .routes(routes!(put_baseline))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct RevokeQuery {
    /// Why (optional; kept with who and when).
    pub reason: Option<String>,
}

async fn phase_and_team(
    app: &App,
    challenge: &str,
    phase: &str,
    team: &str,
) -> Result<(Phase, Team), ApiError> {
    let p = resolve_phase(app, challenge, Some(phase)).await?;
    let t = app.store.team_by_ref(challenge, team).await?;
    Ok((p, t))
}

async fn extension_view(app: &App, p: &Phase, t: &Team) -> Result<ExtensionView, ApiError> {
    let e = app
        .store
        .extension(p.id, t.id)
        .await?
        .ok_or_else(|| ApiError::not_found("extension for this team"))?;
    let history = app.store.extension_history(p.id, t.id).await?;
    Ok(ExtensionView::new(p, t, &e, &history))
}

async fn override_view(app: &App, p: &Phase, t: &Team) -> Result<QuotaOverrideView, ApiError> {
    let o = app
        .store
        .quota_override(p.id, t.id)
        .await?
        .ok_or_else(|| ApiError::not_found("quota override for this team"))?;
    let history = app.store.quota_override_history(p.id, t.id).await?;
    Ok(QuotaOverrideView::new(p, t, &o, &history))
}

/// Every deadline extension of a phase in force (organisers).
#[utoipa::path(get, path = "/api/v1/challenges/{id}/phases/{phase}/extensions",
    tag = "challenges", security(("bearer" = [])),
    params(("id" = String, Path, description = "the challenge's id"),
        ("phase" = String, Path, description = "the phase's name")),
    responses(
        (status = 200, body = Vec<ExtensionView>),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "no such challenge or phase"),
    ))]
pub(crate) async fn list_extensions(
    State(app): State<App>,
    Organiser(_by): Organiser,
    Path((id, phase)): Path<(String, String)>,
) -> Result<Json<Vec<ExtensionView>>, ApiError> {
    let p = resolve_phase(&app, &id, Some(&phase)).await?;
    let mut out = Vec::new();
    for e in app.store.extensions(p.id).await? {
        let t = app.store.team(e.team).await?;
        let history = app.store.extension_history(p.id, t.id).await?;
        out.push(ExtensionView::new(&p, &t, &e, &history));
    }
    Ok(Json(out))
}

/// A team's deadline extension of a phase, with its history (organisers; a team sees
/// its own close in `GET …/quota` and in the challenge's phases).
#[utoipa::path(get, path = "/api/v1/challenges/{id}/phases/{phase}/extensions/{team}",
    tag = "challenges", security(("bearer" = [])),
    params(("id" = String, Path, description = "the challenge's id"),
        ("phase" = String, Path, description = "the phase's name"),
        ("team" = String, Path, description = "the team's id or name")),
    responses(
        (status = 200, body = ExtensionView),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody,
            description = "no such challenge, phase or team, or no extension in force"),
    ))]
pub(crate) async fn get_extension(
    State(app): State<App>,
    Organiser(_by): Organiser,
    Path((id, phase, team)): Path<(String, String, String)>,
) -> Result<Json<ExtensionView>, ApiError> {
    let (p, t) = phase_and_team(&app, &id, &phase, &team).await?;
    Ok(Json(extension_view(&app, &p, &t).await?))
}

/// An organiser grants a team its own close of a phase, or changes it, with a reason:
/// the team's uploads received before `closes` are accepted; every other team keeps the
/// phase's close. `closes` must be later than the phase's close and no later than its
/// selection deadline (422).
#[utoipa::path(put, path = "/api/v1/challenges/{id}/phases/{phase}/extensions/{team}",
    tag = "challenges", request_body = ExtensionRequest, security(("bearer" = [])),
    params(("id" = String, Path, description = "the challenge's id"),
        ("phase" = String, Path, description = "the phase's name"),
        ("team" = String, Path, description = "the team's id or name")),
    responses(
        (status = 200, body = ExtensionView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "not an organiser"),
        (status = 404, body = ErrorBody, description = "no such challenge, phase or team"),
        (status = 422, body = ErrorBody, description = "an empty reason, or `closes` not \
            later than the phase's close or after its selection deadline"),
    ))]
pub(crate) async fn put_extension(
    State(app): State<App>,
    Organiser(by): Organiser,
    Path((id, phase, team)): Path<(String, String, String)>,
    Body(req): Body<ExtensionRequest>,
) -> Result<Json<ExtensionView>, ApiError> {
    let (p, t) = phase_and_team(&app, &id, &phase, &team).await?;
    app.store
        .grant_extension(p.id, t.id, req.closes, &req.reason, Some(by.id))
        .await?;
    Ok(Json(extension_view(&app, &p, &t).await?))
}

/// An organiser revokes a team's extension: the phase's close holds for it again
/// (what it uploaded meanwhile stays and is judged).
#[utoipa::path(delete, path = "/api/v1/challenges/{id}/phases/{phase}/extensions/{team}",
    tag = "challenges", security(("bearer" = [])),
    params(("id" = String, Path, description = "the challenge's id"),
        ("phase" = String, Path, description = "the phase's name"),
        ("team" = String, Path, description = "the team's id or name"), RevokeQuery),
    responses(
        (status = 204, description = "revoked"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody,
            description = "no such challenge, phase or team, or no extension in force"),
        (status = 422, body = ErrorBody, description = "the reason is unusable"),
    ))]
pub(crate) async fn delete_extension(
    State(app): State<App>,
    Organiser(by): Organiser,
    Path((id, phase, team)): Path<(String, String, String)>,
    Query(q): Query<RevokeQuery>,
) -> Result<StatusCode, ApiError> {
    let (p, t) = phase_and_team(&app, &id, &phase, &team).await?;
    app.store
        .revoke_extension(p.id, t.id, q.reason.as_deref(), Some(by.id))
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Every quota override of a phase in force (organisers).
#[utoipa::path(get, path = "/api/v1/challenges/{id}/phases/{phase}/quotas",
    tag = "challenges", security(("bearer" = [])),
    params(("id" = String, Path, description = "the challenge's id"),
        ("phase" = String, Path, description = "the phase's name")),
    responses(
        (status = 200, body = Vec<QuotaOverrideView>),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "no such challenge or phase"),
    ))]
pub(crate) async fn list_quotas(
    State(app): State<App>,
    Organiser(_by): Organiser,
    Path((id, phase)): Path<(String, String)>,
) -> Result<Json<Vec<QuotaOverrideView>>, ApiError> {
    let p = resolve_phase(&app, &id, Some(&phase)).await?;
    let mut out = Vec::new();
    for o in app.store.quota_overrides(p.id).await? {
        let t = app.store.team(o.team).await?;
        let history = app.store.quota_override_history(p.id, t.id).await?;
        out.push(QuotaOverrideView::new(&p, &t, &o, &history));
    }
    Ok(Json(out))
}

/// A team's quota override of a phase, with its history (organisers; a team sees its
/// limits in force in `GET …/quota`).
#[utoipa::path(get, path = "/api/v1/challenges/{id}/phases/{phase}/quotas/{team}",
    tag = "challenges", security(("bearer" = [])),
    params(("id" = String, Path, description = "the challenge's id"),
        ("phase" = String, Path, description = "the phase's name"),
        ("team" = String, Path, description = "the team's id or name")),
    responses(
        (status = 200, body = QuotaOverrideView),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody,
            description = "no such challenge, phase or team, or no override in force"),
    ))]
pub(crate) async fn get_quota(
    State(app): State<App>,
    Organiser(_by): Organiser,
    Path((id, phase, team)): Path<(String, String, String)>,
) -> Result<Json<QuotaOverrideView>, ApiError> {
    let (p, t) = phase_and_team(&app, &id, &phase, &team).await?;
    Ok(Json(override_view(&app, &p, &t).await?))
}

/// An organiser sets a team's own quota for a phase, or changes it, with a reason: each
/// limit given replaces the phase's (higher or lower), the others stay the phase's.
/// Submissions already accepted stay; the next upload is counted against the new
/// limits.
#[utoipa::path(put, path = "/api/v1/challenges/{id}/phases/{phase}/quotas/{team}",
    tag = "challenges", request_body = QuotaOverrideRequest, security(("bearer" = [])),
    params(("id" = String, Path, description = "the challenge's id"),
        ("phase" = String, Path, description = "the phase's name"),
        ("team" = String, Path, description = "the team's id or name")),
    responses(
        (status = 200, body = QuotaOverrideView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "not an organiser"),
        (status = 404, body = ErrorBody, description = "no such challenge, phase or team"),
        (status = 422, body = ErrorBody,
            description = "an empty reason, no limit given, or a limit over 2147483647"),
    ))]
pub(crate) async fn put_quota(
    State(app): State<App>,
    Organiser(by): Organiser,
    Path((id, phase, team)): Path<(String, String, String)>,
    Body(req): Body<QuotaOverrideRequest>,
) -> Result<Json<QuotaOverrideView>, ApiError> {
    let (p, t) = phase_and_team(&app, &id, &phase, &team).await?;
    let limits = Quota {
        total: req.total,
        per_day: req.per_day,
        max_concurrent: req.max_concurrent,
    };
    check_limits(&limits)?;
    app.store
        .set_quota_override(p.id, t.id, limits, &req.reason, Some(by.id))
        .await?;
    Ok(Json(override_view(&app, &p, &t).await?))
}

/// An organiser removes a team's quota override: the phase's quota holds for it again.
#[utoipa::path(delete, path = "/api/v1/challenges/{id}/phases/{phase}/quotas/{team}",
    tag = "challenges", security(("bearer" = [])),
    params(("id" = String, Path, description = "the challenge's id"),
        ("phase" = String, Path, description = "the phase's name"),
        ("team" = String, Path, description = "the team's id or name"), RevokeQuery),
    responses(
        (status = 204, description = "removed"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody,
            description = "no such challenge, phase or team, or no override in force"),
        (status = 422, body = ErrorBody, description = "the reason is unusable"),
    ))]
pub(crate) async fn delete_quota(
    State(app): State<App>,
    Organiser(by): Organiser,
    Path((id, phase, team)): Path<(String, String, String)>,
    Query(q): Query<RevokeQuery>,
) -> Result<StatusCode, ApiError> {
    let (p, t) = phase_and_team(&app, &id, &phase, &team).await?;
    app.store
        .remove_quota_override(p.id, t.id, q.reason.as_deref(), Some(by.id))
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// An organiser marks a team as a baseline (a reference entry), or unmarks it. A
/// baseline team is shown on leaderboards with a badge (`baseline: true` on its rows),
/// ranked among the others; marking it also shows it, since an organisers' team is
/// hidden when it is made.
#[utoipa::path(put, path = "/api/v1/teams/{id}/baseline", tag = "teams",
    request_body = BaselineRequest, security(("bearer" = [])),
    params(("id" = String, Path, description = "the team's id")),
    responses(
        (status = 200, body = TeamView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "not an organiser"),
        (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody),
    ))]
pub(crate) async fn put_baseline(
    State(app): State<App>,
    Organiser(_by): Organiser,
    Path(id): Path<String>,
    Body(req): Body<BaselineRequest>,
) -> Result<Json<TeamView>, ApiError> {
    let id: TeamId = parse_id(&id, "team")?;
    app.store.set_team_baseline(id, req.baseline).await?;
    let team = app.store.team(id).await?;
    let members = app.store.members(team.id).await?;
    Ok(Json(TeamView::new(&team, &members)))
}
