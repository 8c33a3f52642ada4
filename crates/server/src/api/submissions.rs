//! A submission as its team and as organisers see it, its logs, and what a team or an
//! organiser may do with it.
//!
//! Visibility (docs/architecture.md, "The platform"; docs/judge.md, "What a participant
//! sees of each split"):
//! - another team's submission does not exist for a caller (404: an id is no oracle);
//! - a team sees its own: the stages of the stored `result.json` — which the judge
//!   already reduced: the exam as counts, its ranking numbers at the challenge's
//!   precision, hidden stages' times in whole seconds — the quiz's diagnostics, and the
//!   logs of every stage but the exam. While the phase hides exam scores
//!   (`show_exam = false` until it closes), the exam's numbers are left out too;
//! - organisers see everything: the whole `result.json`, the private exam score, the
//!   history with its typed reasons, the exam's log.

use std::collections::BTreeMap;

use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::Value;
use tokio::io::AsyncReadExt;
use utoipa::IntoParams;

use judge::result::{EntryVerdict, Outcome as StageOutcomeJ, Stage};
use store::{AttemptKey, Definition, ResultRecord, State as SubState, Submission, SubmissionId};

use crate::api::{App, parse_id};
use crate::auth::{Caller, Organiser, is_organiser};
use crate::error::ApiError;
use crate::json::{Json, Query};
use crate::views::{
    CountsView, ErrorBody, HistoryView, OrganiserView, QuizView, Reproduce, StageOutcome,
    StageView, SubmissionPage, SubmissionRow, SubmissionView,
};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// This module's routes: each handler's `#[utoipa::path]` is its route and its OpenAPI
/// entry at once, so the two cannot drift.
pub(super) fn router() -> OpenApiRouter<App> {
    OpenApiRouter::new()
        .routes(routes!(get_one))
        .routes(routes!(log))
        .routes(routes!(list, super::upload::upload))
        .routes(routes!(withdraw))
        .routes(routes!(select))
        .routes(routes!(requeue))
}

/// How the caller stands to a submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// A member of its team.
    Team,
    Organiser,
}

/// The submission of a path, if the caller may see it: its team's members and
/// organisers; for anyone else it does not exist.
pub(crate) async fn visible(
    app: &App,
    user: &store::User,
    id: &str,
) -> Result<(Submission, Access), ApiError> {
    let id: SubmissionId = parse_id(id, "submission")?;
    let s = app.store.submission(id).await?;
    if is_organiser(user) {
        return Ok((s, Access::Organiser));
    }
    match app.store.team_of(user.id, &s.challenge).await? {
        Some(t) if t.id == s.team => Ok((s, Access::Team)),
        _ => Err(ApiError::not_found("submission")),
    }
}

/// The result of a submission's current attempt that is not replaced.
pub(crate) fn live_result<'a>(
    s: &Submission,
    results: &'a [ResultRecord],
) -> Option<&'a ResultRecord> {
    results
        .iter()
        .rev()
        .find(|r| r.attempt.number == s.attempt && !r.replaced)
}

/// The log file of a stage in an attempt's result folder: the judge writes
/// `logs/<stage>.log`, and the exam's as `private/exam.log` (docs/judge.md).
fn log_path(app: &App, s: &Submission, stage: Stage) -> Option<std::path::PathBuf> {
    if s.attempt == 0 {
        return None;
    }
    let dir = crate::layout::result_dir(
        &app.config.state_dir,
        AttemptKey {
            submission: s.id,
            number: s.attempt,
        },
    );
    Some(match stage {
        Stage::Exam => dir.join("private/exam.log"),
        other => dir.join("logs").join(format!("{}.log", other.as_str())),
    })
}

fn stage_named(name: &str) -> Option<Stage> {
    [
        Stage::Prep,
        Stage::Train,
        Stage::Quiz,
        Stage::Exam,
        Stage::Score,
    ]
    .into_iter()
    .find(|s| s.as_str() == name)
}

pub(crate) fn history_view(h: &store::HistoryEntry, organiser: bool) -> HistoryView {
    let detail = serde_json::to_value(&h.reason).unwrap_or(Value::Null);
    HistoryView {
        seq: h.seq,
        from: h.from.map(Into::into),
        to: h.to.into(),
        at: h.at,
        reason: detail
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("unknown")
            .to_owned(),
        detail: organiser.then_some(detail),
    }
}

/// A submission, as the caller may see it.
#[utoipa::path(get, path = "/api/v1/submissions/{id}", operation_id = "get_submission", tag = "submissions",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "the submission's id")),
    responses(
        (status = 200, body = SubmissionView),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "no such submission, or another team's"),
    ))]
pub(crate) async fn get_one(
    State(app): State<App>,
    Caller(user): Caller,
    Path(id): Path<String>,
) -> Result<Json<SubmissionView>, ApiError> {
    let (s, access) = visible(&app, &user, &id).await?;
    let organiser = access == Access::Organiser;
    let phase = app.store.phase(s.phase).await?;
    let team = app.store.team(s.team).await?;
    let challenge = app.store.challenge(&s.challenge).await?;
    let results = app.store.results(s.id).await?;
    let live = live_result(&s, &results);
    let result_value: Option<Value> = live
        .and_then(|r| r.result_json.as_deref())
        .and_then(|t| serde_json::from_str(t).ok());
    let parsed: Option<judge::EvalResult> = live
        .and_then(|r| r.result_json.as_deref())
        .and_then(|t| serde_json::from_str(t).ok());
    let now = app.store.now();
    // A phase that hides exam scores shows a team none before it closes, and after it
    // closes only those of its final entry once published (docs/service.md,
    // "Publishing"): no other exam score ever reaches a team.
    // The one rule every view of figures follows (`crate::sight`).
    let facts = crate::sight::facts(&phase, store::Split::Exam, now);
    let published_entry = !organiser
        && !phase.show_exam
        && facts.closed
        && app.store.is_published_entry(phase.id, s.id).await?;
    let viewer = if organiser {
        judge::visibility::Viewer::Organiser
    } else {
        judge::visibility::Viewer::OwnTeam
    };
    let exam_hidden = judge::visibility::sight(
        viewer,
        judge::visibility::FigureView::Submission { published_entry },
        facts,
        // Only whether anything is shown is asked here: the exam's figures in
        // `result.json` are rounded by the judge already.
        0,
    )
    .withheld();

    let mut stages = Vec::new();
    let mut scores = BTreeMap::new();
    let mut quiz = None;
    let mut warnings = Vec::new();
    if let Some(r) = &parsed {
        for st in &r.stages {
            let hidden_stage = st.stage == Stage::Exam && !organiser;
            let (outcome, reason) = match &st.outcome {
                StageOutcomeJ::Passed => (StageOutcome::Passed, None),
                StageOutcomeJ::Failed { reason } => {
                    (StageOutcome::Failed, Some(reason.to_string()))
                }
                StageOutcomeJ::Skipped { why } => (
                    StageOutcome::Skipped,
                    Some(judge::shown::line(why).into_owned()),
                ),
            };
            let log = match log_path(&app, &s, st.stage) {
                Some(p) if !hidden_stage => tokio::fs::metadata(&p).await.is_ok(),
                _ => false,
            };
            stages.push(StageView {
                stage: st.stage.as_str().to_owned(),
                outcome,
                seconds: st.wall_time_s,
                counts: st.counts.map(|c| CountsView {
                    records: c.records,
                    ok: c.ok,
                    failures: c.failures,
                    timeouts: c.timeouts,
                    defaulted: c.defaulted,
                }),
                reason,
                // The judge keeps no per-record exam statuses in result.json; should one
                // appear, a team still does not get it.
                records: if hidden_stage {
                    Vec::new()
                } else {
                    st.records
                        .iter()
                        .filter_map(|r| serde_json::to_value(r).ok())
                        .collect()
                },
                log,
            });
        }
        if !exam_hidden && let Some(exam) = &r.exam_score {
            for n in &exam.ranking {
                scores.insert(n.key.clone(), n.value);
            }
        }
        if let Some(q) = &r.quiz_score {
            if let Some(Value::Array(errors)) = q.report.get("errors") {
                warnings = errors.clone();
            }
            quiz = Some(QuizView {
                score: q.score,
                report: q.report.clone(),
            });
        }
    }

    // The warnings of the scored outputs ("degenerate output: …").
    if let Some(r) = live {
        warnings.extend(r.warnings.iter().map(|w| Value::String(w.clone())));
    }

    let reason = match s.state {
        SubState::Failed => Some(match parsed.as_ref().and_then(|r| r.failure()) {
            Some((stage, why)) => format!("{}: {why}", stage.as_str()),
            None => "the entry failed".to_owned(),
        }),
        SubState::Error => {
            let history = app.store.history(s.id).await?;
            let last = history.iter().rev().find(|h| h.to == SubState::Error);
            Some(if organiser {
                match last {
                    Some(h) => serde_json::to_string(&h.reason).unwrap_or_default(),
                    None => "error".to_owned(),
                }
            } else {
                let p = app.store.policy();
                format!(
                    "a fault of the platform, not of the entry (never charged): it is retried \
                     up to {} attempts ended by a judge or worker fault ({} in all), then the \
                     organisers look at it",
                    p.max_attempts, p.max_attempts_total
                )
            })
        }
        SubState::Withdrawn => Some("withdrawn by the team".to_owned()),
        _ => match parsed.as_ref().map(|r| r.verdict) {
            Some(EntryVerdict::DryRun) => Some("a dry run: stopped after the quiz".to_owned()),
            _ => None,
        },
    };

    let ext = entry_extension(&s.entry_path);
    let entry = if organiser {
        app.config
            .state_dir
            .join(&s.entry_path)
            .display()
            .to_string()
    } else {
        format!("entry.{ext}")
    };
    let data = if organiser {
        challenge.data_path.clone()
    } else {
        "DATA".to_owned()
    };
    let definition = match &challenge.definition {
        Definition::Builtin(_) => String::new(),
        Definition::Toml(_) => " --challenge-file challenge.toml".to_owned(),
    };
    // What the result was made with (what the store recorded with it; the
    // submission's and challenge's own before it has one).
    let entry_sha256 = live
        .and_then(|r| r.entry_sha256.clone())
        .unwrap_or_else(|| s.entry_sha256.clone());
    let definition_sha256 = live
        .and_then(|r| r.definition_sha256.clone())
        .unwrap_or_else(|| challenge.definition_sha256.clone());
    let manifest_sha256 = live
        .and_then(|r| r.manifest_sha256.clone())
        .unwrap_or_else(|| challenge.manifest.sha256());
    let judge_version = live.map(|r| r.judge_version.clone());
    let scorer_version = live.map(|r| r.scorer_version.clone());
    let runtime_lock = live.and_then(|r| r.runtime_lock.clone());
    // The comment names what the result was made with; before a result there are no
    // versions to name (never a "?" in their place), only the hashes.
    let mut made_with: Vec<String> = [
        judge_version.as_ref().map(|v| format!("judge {v}")),
        scorer_version.clone(),
        runtime_lock.as_ref().map(|l| format!("runtime lock {l}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    made_with.push(format!("definition sha256 {definition_sha256}"));
    made_with.push(format!("data manifest sha256 {manifest_sha256}"));
    made_with.push(format!("entry sha256 {entry_sha256}"));
    let reproduce = Reproduce {
        command: format!(
            "physiojudge evaluate --challenge {}{definition} --entry {} --data {}  # {}",
            shell_word(&challenge.id),
            shell_word(&entry),
            shell_word(&data),
            made_with.join(", "),
        ),
        entry_sha256,
        definition_sha256,
        manifest_sha256,
        runtime_lock,
        judge_version,
        scorer_version,
    };

    let organiser_view = if organiser {
        let history = app.store.history(s.id).await?;
        Some(OrganiserView {
            entry_path: s.entry_path.clone(),
            result: result_value,
            private: live
                .and_then(|r| r.private_json.as_deref())
                .and_then(|t| serde_json::from_str(t).ok()),
            results: results.len(),
            history: history.iter().map(|h| history_view(h, true)).collect(),
        })
    } else {
        None
    };
    Ok(Json(SubmissionView {
        id: s.id.0,
        challenge: s.challenge.clone(),
        team: s.team.0,
        team_name: team.name,
        phase: phase.name.clone(),
        state: s.state.into(),
        reason,
        attempts: s.attempt,
        received_at: s.received_at,
        state_changed_at: s.state_changed_at,
        queue_position: app.store.queue_position(s.id).await?,
        judging_paused: challenge.paused.is_some(),
        selected: s.selected,
        stages,
        scores,
        scores_hidden_until: exam_hidden.then_some(phase.closes),
        quiz,
        warnings,
        reproduce,
        organiser: organiser_view,
    }))
}

fn entry_extension(path: &str) -> &'static str {
    if path.ends_with(".tar.gz") {
        "tar.gz"
    } else if path.ends_with(".tar") {
        "tar"
    } else {
        "zip"
    }
}

/// A word as a POSIX shell reads it: quoted when it has anything but plain characters.
fn shell_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:@%+".contains(&b));
    if plain {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The most of a log sent: the judge caps each at 1 MiB (and marks the cut).
const LOG_SEND_CAP: u64 = 2 << 20;

/// A stage's capped log, as text: a team gets every stage's but the exam's.
#[utoipa::path(get, path = "/api/v1/submissions/{id}/logs/{stage}", tag = "submissions",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "the submission's id"),
        ("stage" = String, Path, description = "prep, train, quiz, exam or score")),
    responses(
        (status = 200, description = "the log", content_type = "text/plain", body = String),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "the exam's log, for a team"),
        (status = 404, body = ErrorBody, description = "no such submission, stage or log"),
    ))]
pub(crate) async fn log(
    State(app): State<App>,
    Caller(user): Caller,
    Path((id, stage)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let (s, access) = visible(&app, &user, &id).await?;
    let stage = stage_named(&stage).ok_or_else(|| ApiError::not_found("stage"))?;
    if stage == Stage::Exam && access != Access::Organiser {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "not_visible",
            "the exam's log is kept for the organisers: it could carry hidden data \
             (docs/judge.md)",
        ));
    }
    let path = log_path(&app, &s, stage).ok_or_else(|| ApiError::not_found("log"))?;
    let file = match tokio::fs::File::open(&path).await {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ApiError::not_found("log"));
        }
        Err(e) => return Err(ApiError::internal(&format_args!("{}: {e}", path.display()))),
    };
    let mut bytes = Vec::new();
    file.take(LOG_SEND_CAP)
        .read_to_end(&mut bytes)
        .await
        .map_err(|e| ApiError::internal(&format_args!("{}: {e}", path.display())))?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    Ok((
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        )],
        text,
    )
        .into_response())
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct PageQuery {
    /// The last submission of the previous page.
    pub after: Option<String>,
    /// At most this many (1 to 500; default 50).
    pub limit: Option<u32>,
}

/// Every submission of a challenge, newest first, a page at a time (organisers).
#[utoipa::path(get, path = "/api/v1/challenges/{id}/submissions", operation_id = "list_submissions", tag = "submissions",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "the challenge's id"), PageQuery),
    responses(
        (status = 200, body = SubmissionPage),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
    ))]
pub(crate) async fn list(
    State(app): State<App>,
    Organiser(_by): Organiser,
    Path(id): Path<String>,
    Query(q): Query<PageQuery>,
) -> Result<Json<SubmissionPage>, ApiError> {
    app.store.challenge(&id).await?;
    let limit = q.limit.unwrap_or(50).clamp(1, 500);
    let after = match q.after.as_deref() {
        None | Some("") => None,
        Some(a) => Some(parse_id::<SubmissionId>(a, "submission")?),
    };
    let page = app.store.challenge_submissions(&id, after, limit).await?;
    let next = (page.len() as u32 == limit)
        .then(|| page.last().map(|s| s.id.0))
        .flatten();
    Ok(Json(SubmissionPage {
        submissions: page.iter().map(SubmissionRow::from).collect(),
        next,
    }))
}

async fn team_only(app: &App, user: &store::User, id: &str) -> Result<Submission, ApiError> {
    let (s, access) = visible(app, user, id).await?;
    if access != Access::Team {
        return Err(ApiError::forbidden(
            "only the submission's team may do this",
        ));
    }
    Ok(s)
}

/// The team takes back a queued submission (it stops counting against the quota).
#[utoipa::path(post, path = "/api/v1/submissions/{id}/withdraw", tag = "submissions",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "the submission's id")),
    responses(
        (status = 200, body = SubmissionRow),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "it is no longer queued"),
    ))]
pub(crate) async fn withdraw(
    State(app): State<App>,
    Caller(user): Caller,
    Path(id): Path<String>,
) -> Result<Json<SubmissionRow>, ApiError> {
    let s = team_only(&app, &user, &id).await?;
    app.store.withdraw(s.id, Some(user.id)).await?;
    Ok(Json(SubmissionRow::from(
        &app.store.submission(s.id).await?,
    )))
}

/// The team makes a scored submission its one final entry for the phase.
#[utoipa::path(post, path = "/api/v1/submissions/{id}/select", tag = "submissions",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "the submission's id")),
    responses(
        (status = 200, body = SubmissionRow),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody,
            description = "not scored, or the selection deadline has passed"),
    ))]
pub(crate) async fn select(
    State(app): State<App>,
    Caller(user): Caller,
    Path(id): Path<String>,
) -> Result<Json<SubmissionRow>, ApiError> {
    let s = team_only(&app, &user, &id).await?;
    match app.store.select(s.id).await {
        Ok(()) => {}
        // The store says "invalid selection" for a state or a deadline: a conflict with
        // where things stand, not bad input.
        Err(e @ store::Error::Invalid { .. }) => {
            return Err(ApiError::conflict("state_conflict", e.to_string())
                .with("state", crate::views::StateName::from(s.state)));
        }
        Err(e) => return Err(e.into()),
    }
    Ok(Json(SubmissionRow::from(
        &app.store.submission(s.id).await?,
    )))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct RequeueQuery {
    /// Why (kept in the submission's history).
    pub why: Option<String>,
}

/// An organiser queues a submission in `error` again, for a new attempt.
#[utoipa::path(post, path = "/api/v1/submissions/{id}/requeue", tag = "submissions",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "the submission's id"), RequeueQuery),
    responses(
        (status = 200, body = SubmissionRow),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "it is not in error"),
    ))]
pub(crate) async fn requeue(
    State(app): State<App>,
    Organiser(by): Organiser,
    Path(id): Path<String>,
    Query(q): Query<RequeueQuery>,
) -> Result<Json<SubmissionRow>, ApiError> {
    let id: SubmissionId = parse_id(&id, "submission")?;
    // An unknown id is 404, not a refused transition.
    app.store.submission(id).await?;
    let why = q
        .why
        .unwrap_or_else(|| "requeued by an organiser".to_owned());
    app.store.requeue(id, Some(by.id), &why).await?;
    app.config.queued();
    Ok(Json(SubmissionRow::from(&app.store.submission(id).await?)))
}
