//! The lookups several API modules share: a path's id, the challenge's definition as
//! the judge reads it, the phase a request means, the caller's team.

use axum::http::StatusCode;
use store::{Definition, Phase};

use crate::api::App;
use crate::error::ApiError;

/// A path's id as the store's id type; an id that does not parse names nothing (404,
/// as an unknown one).
pub(crate) fn parse_id<T: std::str::FromStr>(text: &str, what: &str) -> Result<T, ApiError> {
    text.parse().map_err(|_| ApiError::not_found(what))
}

/// The judge's reading of a stored definition (its precision, its ranking numbers).
pub(crate) fn judge_challenge(c: &store::Challenge) -> Result<judge::Challenge, ApiError> {
    match &c.definition {
        Definition::Builtin(id) => judge::Challenge::built_in(id),
        Definition::Toml(text) => judge::Challenge::parse(text, &format!("challenge {}", c.id)),
    }
    .map_err(|e| ApiError::internal(&format_args!("stored definition of {}: {e}", c.id)))
}

/// Which phase a request means: the one named, else the open one, else the latest
/// that opened, else the first to open.
pub(crate) async fn resolve_phase(
    app: &App,
    challenge: &str,
    name: Option<&str>,
) -> Result<Phase, ApiError> {
    let phases = app.store.phases(challenge).await?;
    if phases.is_empty() {
        // Tell a missing challenge from one without phases.
        app.store.challenge(challenge).await?;
    }
    if let Some(name) = name {
        return phases
            .into_iter()
            .find(|p| p.name == name)
            .ok_or_else(|| ApiError::not_found("phase"));
    }
    let now = app.store.now();
    if let Some(p) = app.store.open_phase(challenge, now).await? {
        return Ok(p);
    }
    let latest_opened = phases
        .iter()
        .filter(|p| p.opens <= now)
        .max_by_key(|p| p.opens);
    let first_upcoming = phases
        .iter()
        .filter(|p| p.opens > now)
        .min_by_key(|p| p.opens);
    latest_opened
        .or(first_upcoming)
        .cloned()
        .ok_or_else(|| ApiError::not_found("phase"))
}

/// The caller's team (in this challenge).
pub(crate) async fn team_of(
    app: &App,
    user: &store::User,
    challenge: &str,
) -> Result<store::Team, ApiError> {
    app.store.team_of(user.id, challenge).await?.ok_or_else(|| {
        ApiError::new(
            StatusCode::FORBIDDEN,
            "not_member",
            "you are in no team of this challenge (POST /api/v1/teams)",
        )
    })
}
