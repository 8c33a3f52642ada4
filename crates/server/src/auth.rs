//! Who is calling: the bearer token of `Authorization: Bearer <token>`, looked up by its
//! sha256 in the store (docs/service.md, "Data model": tokens are kept hashed).
//!
//! - no header, or a token the store does not know (or revoked): 401;
//! - a worker's token: 403 on every user endpoint — it is good for the queue only, so a
//!   worker machine that is broken into cannot read or change anyone's records;
//! - [`Organiser`]: a user token of an organiser, else 403.

use axum::extract::FromRequestParts;
use axum::http::StatusCode;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;

use store::{Principal, Role, User};

use crate::api::App;
use crate::error::ApiError;

/// A signed-in user (any role).
#[derive(Debug, Clone)]
pub struct Caller(pub User);

/// A signed-in organiser.
#[derive(Debug, Clone)]
pub struct Organiser(pub User);

/// A worker, by its own token (the queue's endpoints only). A user's token is 403: a
/// person takes no jobs.
#[derive(Debug, Clone)]
pub struct WorkerCaller(pub Box<store::Worker>);

/// A user if the request carries a token, else nobody (public endpoints that show an
/// organiser more). A token that is present but bad is still refused: a client with a
/// stale token should learn so rather than silently see the public view.
#[derive(Debug, Clone)]
pub struct MaybeCaller(pub Option<User>);

fn bearer(parts: &Parts) -> Result<Option<&str>, ApiError> {
    let Some(value) = parts.headers.get(AUTHORIZATION) else {
        return Ok(None);
    };
    let unauthorised = |m: &str| ApiError::new(StatusCode::UNAUTHORIZED, "unauthenticated", m);
    let value = value
        .to_str()
        .map_err(|_| unauthorised("the Authorization header is not text"))?;
    let (scheme, token) = value
        .split_once(' ')
        .ok_or_else(|| unauthorised("expected Authorization: Bearer <token>"))?;
    if !scheme.eq_ignore_ascii_case("bearer") || token.trim().is_empty() {
        return Err(unauthorised("expected Authorization: Bearer <token>"));
    }
    Ok(Some(token.trim()))
}

async fn user(parts: &Parts, app: &App) -> Result<Option<User>, ApiError> {
    let Some(token) = bearer(parts)? else {
        return Ok(None);
    };
    match app.store.authenticate(token).await? {
        Principal::User(u) => Ok(Some(u)),
        Principal::Worker(_) => Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "worker_token",
            "a worker's token is good for taking jobs and reporting results only",
        )),
    }
}

impl FromRequestParts<App> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &App) -> Result<Self, ApiError> {
        match user(parts, app).await? {
            Some(u) => Ok(Caller(u)),
            None => Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthenticated",
                "this needs a token: Authorization: Bearer <token> (POST /api/v1/tokens)",
            )),
        }
    }
}

impl FromRequestParts<App> for Organiser {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &App) -> Result<Self, ApiError> {
        let Caller(u) = Caller::from_request_parts(parts, app).await?;
        if u.role != Role::Organiser {
            return Err(ApiError::forbidden("only organisers may do this"));
        }
        Ok(Organiser(u))
    }
}

impl FromRequestParts<App> for MaybeCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &App) -> Result<Self, ApiError> {
        Ok(MaybeCaller(user(parts, app).await?))
    }
}

impl FromRequestParts<App> for WorkerCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &App) -> Result<Self, ApiError> {
        let Some(token) = bearer(parts)? else {
            return Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthenticated",
                "this needs a worker's token: Authorization: Bearer <token> \
                 (POST /api/v1/workers)",
            ));
        };
        match app.store.authenticate(token).await? {
            Principal::Worker(w) => Ok(WorkerCaller(w)),
            Principal::User(_) => Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "not_a_worker",
                "only a worker's token takes jobs and reports results (POST /api/v1/workers)",
            )),
        }
    }
}

/// Whether a user is an organiser.
pub fn is_organiser(u: &User) -> bool {
    u.role == Role::Organiser
}

/// Whether a caller (or nobody) is an organiser.
pub fn maybe_organiser(u: &Option<User>) -> bool {
    u.as_ref().is_some_and(is_organiser)
}
