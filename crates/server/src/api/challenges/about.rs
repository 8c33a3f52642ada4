//! A challenge's page for newcomers: its texts (overview, data, rules), its
//! announcements and its starter kit (docs/web.md, "The challenge page").

use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use store::AnnouncementId;

use crate::api::{App, judge_challenge, parse_id};
use crate::auth::{MaybeCaller, Organiser};
use crate::error::ApiError;
use crate::json::{Body, Json};
use crate::views::{AboutView, AnnouncementView, ErrorBody, NewAbout, NewAnnouncement};

/// A challenge's overview, data and rules texts (Markdown; empty until written).
#[utoipa::path(get, path = "/api/v1/challenges/{id}/about", tag = "challenges",
    security((), ("bearer" = [])),
    params(("id" = String, Path, description = "the challenge's id")),
    responses((status = 200, body = AboutView), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "a worker's token"),
        (status = 404, body = ErrorBody)))]
pub(crate) async fn get_about(
    State(app): State<App>,
    MaybeCaller(_): MaybeCaller,
    Path(id): Path<String>,
) -> Result<Json<AboutView>, ApiError> {
    Ok(Json(app.store.about(&id).await?.into()))
}

/// An organiser writes a challenge's texts, all at once.
#[utoipa::path(put, path = "/api/v1/challenges/{id}/about", tag = "challenges",
    request_body = NewAbout, security(("bearer" = [])),
    params(("id" = String, Path, description = "the challenge's id")),
    responses(
        (status = 200, body = AboutView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody,
            description = "a text too long, or a data address that is not http(s)"),
    ))]
pub(crate) async fn put_about(
    State(app): State<App>,
    Organiser(by): Organiser,
    Path(id): Path<String>,
    Body(new): Body<NewAbout>,
) -> Result<Json<AboutView>, ApiError> {
    app.store.challenge(&id).await?;
    let about = app.store.set_about(&id, &new.into(), by.id).await?;
    Ok(Json(about.into()))
}

/// A challenge's announcements, newest first.
#[utoipa::path(get, path = "/api/v1/challenges/{id}/announcements", tag = "challenges",
    security((), ("bearer" = [])),
    params(("id" = String, Path, description = "the challenge's id")),
    responses((status = 200, body = Vec<AnnouncementView>), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "a worker's token"),
        (status = 404, body = ErrorBody)))]
pub(crate) async fn list_announcements(
    State(app): State<App>,
    MaybeCaller(_): MaybeCaller,
    Path(id): Path<String>,
) -> Result<Json<Vec<AnnouncementView>>, ApiError> {
    app.store.challenge(&id).await?;
    let list = app.store.announcements(&id).await?;
    Ok(Json(list.iter().map(AnnouncementView::from).collect()))
}

/// An organiser posts an announcement.
#[utoipa::path(post, path = "/api/v1/challenges/{id}/announcements", tag = "challenges",
    request_body = NewAnnouncement, security(("bearer" = [])),
    params(("id" = String, Path, description = "the challenge's id")),
    responses(
        (status = 201, body = AnnouncementView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody, description = "an empty or too long title or body"),
    ))]
pub(crate) async fn post_announcement(
    State(app): State<App>,
    Organiser(by): Organiser,
    Path(id): Path<String>,
    Body(new): Body<NewAnnouncement>,
) -> Result<(StatusCode, Json<AnnouncementView>), ApiError> {
    app.store.challenge(&id).await?;
    let a = app
        .store
        .announce(&id, &new.title, &new.body, by.id)
        .await?;
    Ok((StatusCode::CREATED, Json(AnnouncementView::from(&a))))
}

/// An organiser takes an announcement down.
#[utoipa::path(delete, path = "/api/v1/challenges/{id}/announcements/{announcement}",
    tag = "challenges", security(("bearer" = [])),
    params(("id" = String, Path, description = "the challenge's id"),
        ("announcement" = String, Path, description = "the announcement's id")),
    responses(
        (status = 204, description = "taken down"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
    ))]
pub(crate) async fn delete_announcement(
    State(app): State<App>,
    Organiser(_): Organiser,
    Path((id, announcement)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    let aid: AnnouncementId = parse_id(&announcement, "announcement")?;
    app.store.delete_announcement(&id, aid).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A challenge's starter kit: the example entry of its definition as a zip, to run
/// with `physiojudge evaluate` and to upload as it is (404 for a definition with none).
#[utoipa::path(get, path = "/api/v1/challenges/{id}/starter.zip", tag = "challenges",
    security((), ("bearer" = [])),
    params(("id" = String, Path, description = "the challenge's id")),
    responses(
        (status = 200, description = "the kit", content_type = "application/zip"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "a worker's token"),
        (status = 404, body = ErrorBody, description = "no such challenge, or no kit for its definition"),
    ))]
pub(crate) async fn starter(
    State(app): State<App>,
    MaybeCaller(_): MaybeCaller,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let c = app.store.challenge(&id).await?;
    let j = judge_challenge(&c)?;
    let folder = format!("{}-starter", c.id);
    let bytes = crate::starter::kit_zip(&j, &folder)
        .ok_or_else(|| ApiError::not_found("starter kit"))?
        .map_err(|e| ApiError::internal(&format_args!("packing the starter kit: {e}")))?;
    Ok((
        [
            (header::CONTENT_TYPE, "application/zip".to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{folder}.zip\""),
            ),
            // The same bytes for everyone until the server is upgraded.
            (header::CACHE_CONTROL, "public, max-age=3600".to_owned()),
        ],
        bytes,
    )
        .into_response())
}
