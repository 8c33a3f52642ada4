//! The rules an organiser applies to a whole phase or challenge: publishing a final
//! leaderboard, and rescoring stored outputs (docs/service.md, "Publishing" and
//! "Rescoring").

use std::collections::BTreeMap;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde_json::{Value, json};

use store::{AttemptKey, Figure, Outcome, Report, RescoreChange, RescoreId, WorkerRefusal};

use crate::api::challenges::leaderboard_view;
use crate::api::{App, judge_challenge, parse_id, resolve_phase};
use crate::auth::Organiser;
use crate::error::ApiError;
use crate::json::{Body, Json};
use crate::views::{
    BoardName, ErrorBody, LeaderboardView, PublishRequest, RescoreRequest, RescoreView,
};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// This module's routes: each handler's `#[utoipa::path]` is its route and its OpenAPI
/// entry at once, so the two cannot drift.
pub(super) fn router() -> OpenApiRouter<App> {
    OpenApiRouter::new()
        .routes(routes!(publish))
        .routes(routes!(rescore))
        .routes(routes!(list_rescores))
        .routes(routes!(get_rescore))
        .routes(routes!(apply_rescore))
        .routes(routes!(cancel_rescore))
}

/// An organiser publishes a phase's final leaderboard: each team's selected submission,
/// or its best scored one if it selected none, with their scores on the phase's scored
/// split, kept as a fixed snapshot (a new version each time). Refused (409
/// `not_publishable`, with `blockers`) while any submission of the phase is queued,
/// running or in `error`, or a final entry has no result with ranking numbers of that
/// split under the phase's current versions.
#[utoipa::path(post, path = "/api/v1/challenges/{id}/publish", tag = "challenges",
    request_body = PublishRequest, security(("bearer" = [])),
    params(("id" = String, Path, description = "the challenge's id")),
    responses(
        (status = 201, body = LeaderboardView, description = "the published leaderboard"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "not_publishable: see `blockers`"),
        (status = 422, body = ErrorBody, description = "the body is not a publish request"),
    ))]
pub(crate) async fn publish(
    State(app): State<App>,
    Organiser(by): Organiser,
    Path(id): Path<String>,
    Body(req): Body<PublishRequest>,
) -> Result<(StatusCode, Json<LeaderboardView>), ApiError> {
    let phase = resolve_phase(&app, &id, Some(&req.phase)).await?;
    let p = app.store.publish(phase.id, Some(by.id)).await?;
    let view = leaderboard_view(
        &app,
        &id,
        &phase,
        BoardName::Published,
        Some(p.version),
        true,
    )
    .await?;
    Ok((StatusCode::CREATED, Json(view)))
}

/// The figures of a rescored result from one split's full report (`report`): the keys
/// and directions of the ranking, each value exactly as the scorer wrote it (never the
/// rounded view), as a worker reports them.
fn figures(again: &judge::rescore::Rescored, report: &Value) -> Vec<Figure> {
    again
        .exam_score
        .ranking
        .iter()
        .map(|n| Figure {
            key: n.key.clone(),
            value: report
                .get(&n.key)
                .and_then(Value::as_f64)
                .filter(|v| v.is_finite()),
            better: match n.better {
                judge::challenge::Better::Higher => store::Better::Higher,
                judge::challenge::Better::Lower => store::Better::Lower,
            },
        })
        .collect()
}

/// The new result of a stored one scored again: the same run (its `result.json` with
/// the new exam view and score), the new private report, both splits' figures and
/// warnings, this scorer's version.
fn rescored_report(old: &store::ResultRecord, again: &judge::rescore::Rescored) -> Report {
    let result_json = old.result_json.as_deref().and_then(|t| {
        let mut r: judge::EvalResult = serde_json::from_str(t).ok()?;
        r.score = again.exam_score.get("score");
        r.exam_score = Some(again.exam_score.clone());
        serde_json::to_string(&r).ok()
    });
    Report {
        outcome: Outcome::Scored,
        result_json: result_json.or_else(|| old.result_json.clone()),
        private_json: serde_json::to_string(&again.report).ok(),
        figures: figures(again, &again.report),
        // The run kept no quiz outputs to score again (its quiz had no records): the
        // quiz's figures stay as they were.
        quiz_figures: match &again.quiz_report {
            Some(q) => figures(again, q),
            None => old.quiz_figures.clone(),
        },
        scorer_version: judge::rescore::SCORER_VERSION.to_owned(),
        judge_version: old.judge_version.clone(),
        message: None,
        runtime_lock: old.runtime_lock.clone(),
        warnings: again.warnings.clone(),
    }
}

async fn rescore_view(app: &App, r: &store::Rescore) -> Result<RescoreView, ApiError> {
    let mut scorers = BTreeMap::new();
    for c in &r.changes {
        for old in app.store.results(c.attempt.submission).await? {
            if old.id == c.result {
                scorers.insert(old.id.0, old.scorer_version.clone());
            }
        }
    }
    Ok(RescoreView::new(r, &scorers))
}

/// An organiser rescores a challenge: every stored score of its scored submissions is
/// computed again from the outputs kept in the attempt's result folder, with the
/// current scorer, without running any entry. Nothing changes yet: the answer is the
/// rescoring's record (pending) with every change it found; apply or cancel it as a
/// whole (`POST /api/v1/rescores/{id}/apply` or `/cancel`).
#[utoipa::path(post, path = "/api/v1/challenges/{id}/rescore", tag = "challenges",
    request_body = RescoreRequest, security(("bearer" = [])),
    params(("id" = String, Path, description = "the challenge's id")),
    responses(
        (status = 201, body = RescoreView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "data_changed: the data folder \
            differs from its manifest"),
        (status = 422, body = ErrorBody),
    ))]
pub(crate) async fn rescore(
    State(app): State<App>,
    Organiser(by): Organiser,
    Path(id): Path<String>,
    Body(req): Body<RescoreRequest>,
) -> Result<(StatusCode, Json<RescoreView>), ApiError> {
    let reason = req.reason.trim();
    if reason.is_empty() || reason.chars().count() > 1000 {
        return Err(ApiError::invalid("reason: 1 to 1000 characters"));
    }
    let c = app.store.challenge(&id).await?;
    let j = judge_challenge(&c)?;
    // The reference is read from the data folder: it must be the one registered.
    app.store.check_challenge_data(&id, None).await?;
    let stored = app.store.rescorable(&id).await?;
    let state_dir = app.config.state_dir.clone();
    let data = std::path::PathBuf::from(&c.data_path);
    let total = stored.len();
    let (changes, unscorable) = tokio::task::spawn_blocking(move || {
        let mut changes = Vec::new();
        let mut unscorable = Vec::new();
        for (s, old) in stored {
            let key = AttemptKey {
                submission: s.id,
                number: s.attempt,
            };
            let dir = crate::layout::result_dir(&state_dir, key);
            match judge::rescore::score_result_folder(&j, &data, &dir) {
                Ok(Some(again)) => {
                    let report = rescored_report(&old, &again);
                    let same = report.figures == old.figures
                        && report.quiz_figures == old.quiz_figures
                        && report.warnings == old.warnings
                        && report.scorer_version == old.scorer_version
                        && report
                            .private_json
                            .as_deref()
                            .and_then(|t| serde_json::from_str::<Value>(t).ok())
                            == old
                                .private_json
                                .as_deref()
                                .and_then(|t| serde_json::from_str::<Value>(t).ok());
                    if !same {
                        changes.push(RescoreChange {
                            result: old.id,
                            attempt: key,
                            before: old.figures.clone(),
                            before_quiz: old.quiz_figures.clone(),
                            report,
                        });
                    }
                }
                Ok(None) => {
                    unscorable.push(json!({"submission": s.id, "why": "no exam outputs kept"}))
                }
                Err(e) => unscorable.push(json!({"submission": s.id, "why": e.to_string()})),
            }
        }
        (changes, unscorable)
    })
    .await
    .map_err(|e| ApiError::internal(&e))?;
    let scope = json!({
        "results": total,
        "changed": changes.len(),
        "unscorable": unscorable,
    });
    let r = app
        .store
        .create_rescore(&store::NewRescore {
            challenge: id.clone(),
            requested_by: Some(by.id),
            reason: reason.to_owned(),
            scope,
            scorer_version: judge::rescore::SCORER_VERSION.to_owned(),
            judge_version: judge::rescore::JUDGE_VERSION.to_owned(),
            changes,
        })
        .await?;
    Ok((StatusCode::CREATED, Json(rescore_view(&app, &r).await?)))
}

/// Every rescoring of a challenge, newest first, with its changes: its history.
#[utoipa::path(get, path = "/api/v1/challenges/{id}/rescores", tag = "challenges",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "the challenge's id")),
    responses(
        (status = 200, body = Vec<RescoreView>),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
    ))]
pub(crate) async fn list_rescores(
    State(app): State<App>,
    Organiser(_by): Organiser,
    Path(id): Path<String>,
) -> Result<Json<Vec<RescoreView>>, ApiError> {
    app.store.challenge(&id).await?;
    let mut out = Vec::new();
    for r in app.store.rescores(&id).await? {
        out.push(rescore_view(&app, &r).await?);
    }
    Ok(Json(out))
}

/// A rescoring, with its changes.
#[utoipa::path(get, path = "/api/v1/rescores/{id}", tag = "challenges",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "the rescoring's id")),
    responses(
        (status = 200, body = RescoreView),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
    ))]
pub(crate) async fn get_rescore(
    State(app): State<App>,
    Organiser(_by): Organiser,
    Path(id): Path<String>,
) -> Result<Json<RescoreView>, ApiError> {
    let id: RescoreId = parse_id(&id, "rescore")?;
    let r = app.store.rescore(id).await?;
    Ok(Json(rescore_view(&app, &r).await?))
}

/// Applies a pending rescoring as a whole: each changed result is marked replaced (and
/// kept) and its new one becomes live. 409 if it is not pending or a result it replaces
/// changed since (nothing is applied then).
#[utoipa::path(post, path = "/api/v1/rescores/{id}/apply", tag = "challenges",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "the rescoring's id")),
    responses(
        (status = 200, body = RescoreView),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
    ))]
pub(crate) async fn apply_rescore(
    State(app): State<App>,
    Organiser(by): Organiser,
    Path(id): Path<String>,
) -> Result<Json<RescoreView>, ApiError> {
    let id: RescoreId = parse_id(&id, "rescore")?;
    let r = app
        .store
        .apply_rescore(id, Some(by.id))
        .await
        .map_err(decision_refused)?;
    Ok(Json(rescore_view(&app, &r).await?))
}

/// Cancels a pending rescoring: no score changes; the record stays.
#[utoipa::path(post, path = "/api/v1/rescores/{id}/cancel", tag = "challenges",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "the rescoring's id")),
    responses(
        (status = 200, body = RescoreView),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
    ))]
pub(crate) async fn cancel_rescore(
    State(app): State<App>,
    Organiser(by): Organiser,
    Path(id): Path<String>,
) -> Result<Json<RescoreView>, ApiError> {
    let id: RescoreId = parse_id(&id, "rescore")?;
    let r = app
        .store
        .cancel_rescore(id, Some(by.id))
        .await
        .map_err(decision_refused)?;
    Ok(Json(rescore_view(&app, &r).await?))
}

/// A rescoring no longer pending, or one whose results moved on: a state conflict.
fn decision_refused(e: store::Error) -> ApiError {
    match e {
        store::Error::Invalid { .. } | store::Error::Refused(WorkerRefusal::Attempt { .. }) => {
            ApiError::conflict("state_conflict", e.to_string())
        }
        e => e.into(),
    }
}
