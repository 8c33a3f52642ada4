//! Teams and invitations (docs/architecture.md, "Rules the platform keeps": joining a
//! team needs the invitee's consent; a user is in at most one team per challenge).

use axum::extract::{Path, State};
use axum::http::StatusCode;

use store::{InvitationId, TeamId, User, UserId};

use crate::api::{App, check_name, parse_id};
use crate::auth::{Caller, is_organiser};
use crate::error::ApiError;
use crate::json::{Body, Json};
use crate::views::{ErrorBody, InvitationView, NewInvitation, NewTeam, TeamChange, TeamView};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// This module's routes: each handler's `#[utoipa::path]` is its route and its OpenAPI
/// entry at once, so the two cannot drift.
pub(super) fn router() -> OpenApiRouter<App> {
    OpenApiRouter::new()
        .routes(routes!(create_team))
        .routes(routes!(get_team, rename))
        .routes(routes!(sent_invitations, invite))
        .routes(routes!(leave))
        .routes(routes!(my_invitations))
        .routes(routes!(accept))
        .routes(routes!(decline))
}

async fn team_view(app: &App, team: &store::Team) -> Result<TeamView, ApiError> {
    let members = app.store.members(team.id).await?;
    Ok(TeamView::new(team, &members))
}

/// A new team of a challenge, the caller its first member. An organiser's team is
/// hidden from leaderboards (baselines, tests).
#[utoipa::path(post, path = "/api/v1/teams", tag = "teams", request_body = NewTeam,
    security(("bearer" = [])),
    responses(
        (status = 201, body = TeamView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "no such challenge"),
        (status = 409, body = ErrorBody,
            description = "the name is taken, or the caller is in a team of the challenge"),
        (status = 422, body = ErrorBody),
    ))]
pub(crate) async fn create_team(
    State(app): State<App>,
    Caller(user): Caller,
    Body(new): Body<NewTeam>,
) -> Result<(StatusCode, Json<TeamView>), ApiError> {
    check_name("name", &new.name)?;
    app.store.challenge(&new.challenge).await?;
    let team = app
        .store
        .create_team(&new.challenge, &new.name, user.id)
        .await?;
    let team = if is_organiser(&user) {
        app.store
            .set_team_hidden(team.id, true, Some("an organisers' team"))
            .await?;
        app.store.team(team.id).await?
    } else {
        team
    };
    Ok((StatusCode::CREATED, Json(team_view(&app, &team).await?)))
}

/// Whether `user` may see `team`: its members and organisers.
async fn may_see(app: &App, user: &User, team: &store::Team) -> Result<bool, ApiError> {
    if is_organiser(user) {
        return Ok(true);
    }
    Ok(app
        .store
        .team_of(user.id, &team.challenge)
        .await?
        .is_some_and(|t| t.id == team.id))
}

/// A team and its members (its members and organisers).
#[utoipa::path(get, path = "/api/v1/teams/{id}", tag = "teams", security(("bearer" = [])),
    params(("id" = String, Path, description = "the team's id")),
    responses(
        (status = 200, body = TeamView),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
    ))]
pub(crate) async fn get_team(
    State(app): State<App>,
    Caller(user): Caller,
    Path(id): Path<String>,
) -> Result<Json<TeamView>, ApiError> {
    let id: TeamId = parse_id(&id, "team")?;
    let team = app.store.team(id).await?;
    if !may_see(&app, &user, &team).await? {
        // Not its member: as if there were no such team.
        return Err(ApiError::not_found("team"));
    }
    Ok(Json(team_view(&app, &team).await?))
}

/// A member invites a user (by name or id); the user joins only by accepting.
#[utoipa::path(post, path = "/api/v1/teams/{id}/invitations", tag = "teams",
    request_body = NewInvitation, security(("bearer" = [])),
    params(("id" = String, Path, description = "the team's id")),
    responses(
        (status = 201, body = InvitationView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "the caller is not a member"),
        (status = 404, body = ErrorBody, description = "no such team or user"),
        (status = 409, body = ErrorBody, description = "already invited"),
        (status = 422, body = ErrorBody),
    ))]
pub(crate) async fn invite(
    State(app): State<App>,
    Caller(user): Caller,
    Path(id): Path<String>,
    Body(new): Body<NewInvitation>,
) -> Result<(StatusCode, Json<InvitationView>), ApiError> {
    let id: TeamId = parse_id(&id, "team")?;
    let team = app.store.team(id).await?;
    if !may_see(&app, &user, &team).await? {
        return Err(ApiError::not_found("team"));
    }
    let invitee = match new.user.parse::<UserId>() {
        Ok(uid) => app.store.user(uid).await?,
        Err(_) => app.store.user_by_name(&new.user).await?,
    };
    let inv = app.store.invite(team.id, invitee.id, user.id).await?;
    Ok((StatusCode::CREATED, Json(InvitationView::from(&inv))))
}

/// The caller's pending invitations.
#[utoipa::path(get, path = "/api/v1/invitations", tag = "teams", security(("bearer" = [])),
    responses(
        (status = 200, body = Vec<InvitationView>),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
    ))]
pub(crate) async fn my_invitations(
    State(app): State<App>,
    Caller(user): Caller,
) -> Result<Json<Vec<InvitationView>>, ApiError> {
    let list = app.store.invitations(user.id).await?;
    Ok(Json(list.iter().map(InvitationView::from).collect()))
}

/// The invitee accepts and joins the team (not while in another team of the
/// challenge: 409).
#[utoipa::path(post, path = "/api/v1/invitations/{id}/accept", tag = "teams",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "the invitation's id")),
    responses(
        (status = 200, body = TeamView),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody,
            description = "not pending for the caller, or the caller is in a team of the challenge"),
    ))]
pub(crate) async fn accept(
    State(app): State<App>,
    Caller(user): Caller,
    Path(id): Path<String>,
) -> Result<Json<TeamView>, ApiError> {
    let id: InvitationId = parse_id(&id, "invitation")?;
    let team = app.store.accept_invitation(id, user.id).await?;
    Ok(Json(team_view(&app, &team).await?))
}

/// The invitee declines.
#[utoipa::path(post, path = "/api/v1/invitations/{id}/decline", tag = "teams",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "the invitation's id")),
    responses(
        (status = 204, description = "declined"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "not pending for the caller"),
    ))]
pub(crate) async fn decline(
    State(app): State<App>,
    Caller(user): Caller,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let id: InvitationId = parse_id(&id, "invitation")?;
    app.store.decline_invitation(id, user.id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A member renames the team (the rules of a new team's name; 409 when the challenge
/// has a team of that name as people read it).
#[utoipa::path(patch, path = "/api/v1/teams/{id}", tag = "teams", request_body = TeamChange,
    security(("bearer" = [])),
    params(("id" = String, Path, description = "the team's id")),
    responses(
        (status = 200, body = TeamView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "the caller is not a member"),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "the name is taken"),
        (status = 422, body = ErrorBody),
    ))]
pub(crate) async fn rename(
    State(app): State<App>,
    Caller(user): Caller,
    Path(id): Path<String>,
    Body(change): Body<TeamChange>,
) -> Result<Json<TeamView>, ApiError> {
    check_name("name", &change.name)?;
    let id: TeamId = parse_id(&id, "team")?;
    let team = app.store.team(id).await?;
    if !may_see(&app, &user, &team).await? {
        return Err(ApiError::not_found("team"));
    }
    let team = app.store.rename_team(id, &change.name, user.id).await?;
    Ok(Json(team_view(&app, &team).await?))
}

/// The caller leaves the team, which must have no submission (409
/// `team_has_submissions`). A team left empty is deleted, its name free again.
#[utoipa::path(post, path = "/api/v1/teams/{id}/leave", tag = "teams",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "the team's id")),
    responses(
        (status = 204, description = "left"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "the caller is not a member"),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "the team has submissions"),
    ))]
pub(crate) async fn leave(
    State(app): State<App>,
    Caller(user): Caller,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let id: TeamId = parse_id(&id, "team")?;
    let team = app.store.team(id).await?;
    if !may_see(&app, &user, &team).await? {
        return Err(ApiError::not_found("team"));
    }
    app.store.leave_team(id, user.id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The invitations a team has sent that are still pending (its members and
/// organisers).
#[utoipa::path(get, path = "/api/v1/teams/{id}/invitations", tag = "teams",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "the team's id")),
    responses(
        (status = 200, body = Vec<InvitationView>),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
    ))]
pub(crate) async fn sent_invitations(
    State(app): State<App>,
    Caller(user): Caller,
    Path(id): Path<String>,
) -> Result<Json<Vec<InvitationView>>, ApiError> {
    let id: TeamId = parse_id(&id, "team")?;
    let team = app.store.team(id).await?;
    if !may_see(&app, &user, &team).await? {
        return Err(ApiError::not_found("team"));
    }
    let list = app.store.team_invitations(id).await?;
    Ok(Json(list.iter().map(InvitationView::from).collect()))
}
