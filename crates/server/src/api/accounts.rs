//! Users, tokens and workers.

use axum::Extension;
use axum::extract::State;
use axum::http::StatusCode;

use crate::api::{App, check_name};
use crate::auth::{Caller, Organiser};
use crate::error::ApiError;
use crate::json::{Body, Json};
use crate::limits::ClientAddr;
use crate::views::{
    CreatedUser, CreatedWorker, ErrorBody, Login, NewUser, NewWorker, TokenView, UserView,
};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// This module's routes: each handler's `#[utoipa::path]` is its route and its OpenAPI
/// entry at once, so the two cannot drift.
pub(super) fn router() -> OpenApiRouter<App> {
    OpenApiRouter::new()
        .routes(routes!(create_user))
        .routes(routes!(me))
        .routes(routes!(create_token))
}

/// An organiser creates an account (participant or organiser) and gets its first token.
#[utoipa::path(post, path = "/api/v1/users", tag = "accounts", request_body = NewUser,
    security(("bearer" = [])),
    responses(
        (status = 201, body = CreatedUser),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "not an organiser"),
        (status = 409, body = ErrorBody, description = "the name is taken"),
        (status = 422, body = ErrorBody),
    ))]
pub(crate) async fn create_user(
    State(app): State<App>,
    Organiser(_by): Organiser,
    Body(new): Body<NewUser>,
) -> Result<(StatusCode, Json<CreatedUser>), ApiError> {
    check_name("name", &new.name)?;
    if new.password.as_deref().is_some_and(|p| p.len() < 8) {
        return Err(ApiError::invalid("a password has at least 8 characters"));
    }
    if new.password.as_deref().is_some_and(|p| p.len() > 1024) {
        return Err(ApiError::invalid("a password has at most 1024 bytes"));
    }
    let user = app
        .store
        .create_user(&new.name, new.role.into(), new.password.as_deref())
        .await?;
    let token = app
        .store
        .issue_token(user.id, "created with the user")
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(CreatedUser {
            id: user.id.0,
            name: user.name,
            role: user.role.into(),
            token: token.token,
        }),
    ))
}

/// The caller.
#[utoipa::path(get, path = "/api/v1/users/me", tag = "accounts", security(("bearer" = [])),
    responses((status = 200, body = UserView), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody)))]
pub(crate) async fn me(Caller(u): Caller) -> Json<UserView> {
    Json(UserView::from(&u))
}

/// A name and password for a new token. Failed tries are limited per name and per
/// client address (429 with `Retry-After`); a try waits its turn for the password
/// check, and past the longest wait is 503 with `Retry-After`.
#[utoipa::path(post, path = "/api/v1/tokens", tag = "accounts", request_body = Login,
    responses(
        (status = 201, body = TokenView),
        (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody, description = "wrong name or password"),
        (status = 422, body = ErrorBody),
        (status = 429, body = ErrorBody,
            description = "too many failed tries for this name or from this address"),
        (status = 503, body = ErrorBody, description = "too many password checks waiting"),
    ))]
pub(crate) async fn create_token(
    State(app): State<App>,
    addr: Option<Extension<ClientAddr>>,
    Body(login): Body<Login>,
) -> Result<(StatusCode, Json<TokenView>), ApiError> {
    if login.password.len() > 1024 || login.name.len() > 1024 {
        return Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "bad_credentials",
            "wrong user name or password",
        ));
    }
    // The try is counted before the (slow) check, so that concurrent guesses cannot
    // all be checked before the first failure is counted.
    let addr = addr.map(|Extension(ClientAddr(a))| a);
    let reserved = app.logins.reserve(&login.name, addr).inspect_err(|_| {
        tracing::info!(
            "sign-in refused: too many failed tries for {:?} or from {}",
            login.name,
            addr.map_or_else(|| "in-process".to_owned(), |a| a.to_string())
        );
    })?;
    match app.store.check_password(&login.name, &login.password).await {
        Ok(user) => {
            reserved.not_failed();
            let token = app.store.issue_token(user.id, "login").await?;
            Ok((StatusCode::CREATED, Json(TokenView { token: token.token })))
        }
        Err(e @ store::Error::BadCredentials) => {
            reserved.failed();
            Err(e.into())
        }
        // Busy, or the database: not the caller's failure (the try is given back).
        Err(e) => Err(e.into()),
    }
}

/// An organiser registers a worker and gets its token (good only for the queue).
#[utoipa::path(post, path = "/api/v1/workers", tag = "accounts", request_body = NewWorker,
    security(("bearer" = [])),
    responses(
        (status = 201, body = CreatedWorker),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 422, body = ErrorBody),
    ))]
pub(crate) async fn create_worker(
    State(app): State<App>,
    Organiser(_by): Organiser,
    Body(new): Body<NewWorker>,
) -> Result<(StatusCode, Json<CreatedWorker>), ApiError> {
    check_name("name", &new.name)?;
    let (worker, token) = app.store.create_worker(&new.name).await?;
    Ok((
        StatusCode::CREATED,
        Json(CreatedWorker {
            id: worker.id.0,
            name: worker.name,
            token: token.token,
        }),
    ))
}
