//! The queue's endpoints for remote workers (docs/service.md, "A fleet"): a worker's
//! token only, never a user's. They speak the [`dispatch::Dispatch`] trait over HTTP —
//! announce, take, the entry, heartbeats, the result folder and the report — through
//! the server's own [`dispatch::LocalQueue`], so a remote worker is held to exactly the
//! rules of a local one (the store's: builds, drain and disable, pauses, fairness,
//! leases, a result accepted once).
//!
//! A job's notice may come through NATS JetStream (`serve --queue nats://…`), but the
//! job itself is always taken here: the store decides which submission a worker gets.

use std::path::{Path as FsPath, PathBuf};

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use dispatch::wire::{Announced, ReportAnswer, ReportRequest, TakeRequest};
use dispatch::{Assignment, Dispatch, DispatchError, Lease, LocalQueue, RunProgress, Standing};
use store::{Announcement, AttemptKey, Outcome, SubmissionId, Worker};
use utoipa::ToSchema;

use crate::api::{App, parse_id};
use crate::auth::WorkerCaller;
use crate::error::ApiError;
use crate::json::{Body as JsonBody, Json};
use crate::layout::result_dir;
use crate::views::ErrorBody;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// This module's routes: each handler's `#[utoipa::path]` is its route and its OpenAPI
/// entry at once, so the two cannot drift.
pub(super) fn router() -> OpenApiRouter<App> {
    OpenApiRouter::new()
        .routes(routes!(announce))
        .routes(routes!(take))
        .routes(routes!(entry))
        .routes(routes!(heartbeat))
        .routes(routes!(put_result))
        .routes(routes!(report))
}

/// A JSON object whose shape is the Rust type the description names (`dispatch` and
/// `store`, docs/service.md "A fleet"): both ends of these calls are physiojudge's own.
#[derive(ToSchema)]
#[schema(value_type = Object)]
#[allow(dead_code)]
pub(crate) struct WireObject(serde_json::Value);

/// An archive's bytes: an entry as uploaded, or a result folder as a `.tar`.
#[derive(ToSchema)]
#[schema(value_type = String, format = Binary)]
#[allow(dead_code)]
pub(crate) struct Archive(Vec<u8>);

/// The largest result folder a worker may send, packed: outputs and capped logs of a
/// large challenge are tens of MiB; this leaves a wide margin and still bounds the disk.
const MAX_RESULT_BYTES: u64 = 4 << 30;

fn queue(app: &App) -> Result<&LocalQueue, ApiError> {
    app.config.queue.as_ref().ok_or_else(|| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "no_queue",
            "this server hands out no jobs to remote workers (it was started without its \
             queue)",
        )
    })
}

/// The HTTP answer for a queue that refused or failed: the store's refusals as the
/// rest of the API answers them.
fn refused(e: DispatchError) -> ApiError {
    match e {
        DispatchError::Refused(r) => store::Error::Refused(r).into(),
        DispatchError::Store(e) => e.into(),
        DispatchError::Unreachable(why) | DispatchError::Rejected(why) => ApiError::internal(&why),
    }
}

fn attempt_key(submission: &str, number: &str) -> Result<AttemptKey, ApiError> {
    Ok(AttemptKey {
        submission: parse_id::<SubmissionId>(submission, "attempt")?,
        number: parse_id(number, "attempt")?,
    })
}

/// The attempt, if it is this worker's running one (else 409, as a report would be).
async fn held(app: &App, worker: &Worker, key: AttemptKey) -> Result<(), ApiError> {
    let attempts = app.store.attempts(key.submission).await?;
    let mine = attempts
        .iter()
        .any(|a| a.key == key && a.worker == worker.id && a.ended_at.is_none());
    if mine {
        Ok(())
    } else {
        Err(ApiError::conflict(
            "attempt_refused",
            format!("attempt {key} is not this worker's running attempt"),
        ))
    }
}

/// The lease as this server's queue hands it out (a worker sends back only the key).
fn lease_of(queue: &LocalQueue, key: AttemptKey) -> Lease {
    Lease {
        attempt: key,
        expires_at: chrono::Utc::now(),
        length: queue.config().lease,
        heartbeat_every: queue.config().heartbeat_every,
    }
}

/// The worker says what it runs (judge version, runtime lock, slots, host) and learns
/// who its token speaks for. A worker of another build is refused at its takes.
#[utoipa::path(post, path = "/api/v1/queue/announce", tag = "queue",
    security(("bearer" = [])),
    request_body(content = WireObject, description = "store::Announcement"),
    responses(
        (status = 200, body = WireObject, description = "dispatch::wire::Announced"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "not a worker's token, or disabled"),
        (status = 409, body = ErrorBody, description = "another judge build than the server's"),
        (status = 422, body = ErrorBody),
    ))]
pub(crate) async fn announce(
    State(app): State<App>,
    WorkerCaller(worker): WorkerCaller,
    JsonBody(a): JsonBody<Announcement>,
) -> Result<Json<Announced>, ApiError> {
    let w = app.store.announce_worker(worker.id, &a).await?;
    if a.instance.is_some() {
        // A new process of the worker may have ended its predecessor's attempts, which
        // are queued again: ring for them.
        app.config.queued();
    }
    Ok(Json(Announced {
        worker: w.id,
        name: w.name,
        state: w.state,
    }))
}

/// The next job for this worker, leased to it: 200 with the assignment, 204 if none is
/// takeable now (the worker waits for a notice or its next poll).
#[utoipa::path(post, path = "/api/v1/queue/take", tag = "queue",
    security(("bearer" = [])),
    request_body(content = WireObject, description = "dispatch::wire::TakeRequest"),
    responses(
        (status = 200, body = WireObject, description = "dispatch::Assignment"),
        (status = 204, description = "no job now"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "not a worker's token, disabled or draining"),
        (status = 409, body = ErrorBody, description = "another judge build than the server's"),
        (status = 422, body = ErrorBody),
        (status = 503, body = ErrorBody, description = "the server hands out no jobs"),
    ))]
pub(crate) async fn take(
    State(app): State<App>,
    WorkerCaller(worker): WorkerCaller,
    JsonBody(t): JsonBody<TakeRequest>,
) -> Result<Response, ApiError> {
    let queue = queue(&app)?;
    let d = queue.dispatcher_announced(worker.id, t.challenges);
    match d.take_once(t.take.as_deref()).await.map_err(refused)? {
        Some(a) => Ok(Json::<Assignment>(a).into_response()),
        None => Ok(StatusCode::NO_CONTENT.into_response()),
    }
}

/// The entry archive of an attempt this worker holds, as uploaded.
#[utoipa::path(get, path = "/api/v1/queue/attempts/{submission}/{number}/entry", tag = "queue",
    security(("bearer" = [])),
    params(("submission" = String, Path, description = "the submission's id"),
           ("number" = u32, Path, description = "the attempt's number")),
    responses(
        (status = 200, body = Archive, content_type = "application/octet-stream"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "not this worker's running attempt"),
        (status = 503, body = ErrorBody),
    ))]
pub(crate) async fn entry(
    State(app): State<App>,
    WorkerCaller(worker): WorkerCaller,
    Path((submission, number)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    queue(&app)?;
    let key = attempt_key(&submission, &number)?;
    held(&app, &worker, key).await?;
    let s = app.store.submission(key.submission).await?;
    let path = dispatch::under(&app.config.state_dir, &s.entry_path)
        .ok_or_else(|| ApiError::internal(&format_args!("stored entry path {:?}", s.entry_path)))?;
    let file = tokio::fs::File::open(&path)
        .await
        .map_err(|e| ApiError::internal(&format_args!("{}: {e}", path.display())))?;
    let len = file
        .metadata()
        .await
        .map_err(|e| ApiError::internal(&format_args!("{}: {e}", path.display())))?
        .len();
    let body = Body::from_stream(tokio_util::io::ReaderStream::with_capacity(file, 256 << 10));
    Ok((
        [
            (header::CONTENT_TYPE, "application/octet-stream".to_owned()),
            (header::CONTENT_LENGTH, len.to_string()),
        ],
        body,
    )
        .into_response())
}

/// The worker is still on the attempt (with how far it got): the lease is extended, or
/// the answer says it is lost and the worker stops the run.
#[utoipa::path(post, path = "/api/v1/queue/attempts/{submission}/{number}/heartbeat",
    tag = "queue", security(("bearer" = [])),
    params(("submission" = String, Path, description = "the submission's id"),
           ("number" = u32, Path, description = "the attempt's number")),
    request_body(content = WireObject, description = "dispatch::RunProgress"),
    responses(
        (status = 200, body = WireObject, description = "dispatch::Standing"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody), (status = 503, body = ErrorBody),
    ))]
pub(crate) async fn heartbeat(
    State(app): State<App>,
    WorkerCaller(worker): WorkerCaller,
    Path((submission, number)): Path<(String, String)>,
    JsonBody(progress): JsonBody<RunProgress>,
) -> Result<Json<Standing>, ApiError> {
    let queue = queue(&app)?;
    let key = attempt_key(&submission, &number)?;
    let d = queue.dispatcher_announced(worker.id, None);
    let standing = d
        .heartbeat(&lease_of(queue, key), &progress)
        .await
        .map_err(refused)?;
    Ok(Json(standing))
}

/// The attempt's result folder (`result.json`, logs, outputs) as a `.tar`, before the
/// report: the server keeps it where its own workers write theirs. Sent again, it
/// replaces the first.
#[utoipa::path(put, path = "/api/v1/queue/attempts/{submission}/{number}/result",
    tag = "queue", security(("bearer" = [])),
    params(("submission" = String, Path, description = "the submission's id"),
           ("number" = u32, Path, description = "the attempt's number")),
    request_body(content = Archive, content_type = "application/octet-stream"),
    responses(
        (status = 204, description = "kept"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "not this worker's running attempt"),
        (status = 413, body = ErrorBody), (status = 422, body = ErrorBody),
        (status = 503, body = ErrorBody),
    ))]
pub(crate) async fn put_result(
    State(app): State<App>,
    WorkerCaller(worker): WorkerCaller,
    Path((submission, number)): Path<(String, String)>,
    headers: axum::http::HeaderMap,
    body: Body,
) -> Result<StatusCode, ApiError> {
    queue(&app)?;
    let key = attempt_key(&submission, &number)?;
    held(&app, &worker, key).await?;
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_RESULT_BYTES) {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            format!("a result folder is at most {MAX_RESULT_BYTES} bytes"),
        )
        .with("max_bytes", MAX_RESULT_BYTES));
    }
    let name = uuid::Uuid::now_v7().to_string();
    let incoming = app.config.incoming();
    let archive = incoming.join(format!("result-{name}.tar"));
    let (_, _, archive) =
        super::upload::receive(body, &archive, MAX_RESULT_BYTES, "a result folder").await?;
    // Unpacked and made durable in a scratch folder of its own, outside the lock: the
    // slow part, and no other request sees it.
    let folder = incoming.join(format!("result-{name}"));
    let from = archive.path().to_path_buf();
    let scratch = folder.clone();
    tokio::task::spawn_blocking(move || unpack_result(&from, &scratch))
        .await
        .map_err(|e| ApiError::internal(&e))??;
    drop(archive);
    // Put in place under the attempt's lock in the database, which reports, the
    // reconciler and every other server on the database respect, with the attempt
    // checked again: the lease may have lapsed during the upload, or a report ended
    // it, and a folder must never change behind an accepted result.
    let dest = result_dir(&app.config.state_dir, key);
    let scratch = folder.clone();
    let placed = app
        .store
        .while_holding(worker.id, key, async move {
            tokio::task::spawn_blocking(move || place_result(&scratch, &dest))
                .await
                .map_err(|e| ApiError::internal(&e))?
        })
        .await;
    if !matches!(placed, Ok(Ok(_))) {
        let _ =
            tokio::task::spawn_blocking(move || judge::workdir::remove_tree(&folder, None)).await;
    }
    placed?
}

fn io_error(p: &FsPath, e: &dyn std::fmt::Display) -> ApiError {
    ApiError::internal(&format_args!("{}: {e}", p.display()))
}

/// Unpacks a result archive into `folder` (new) and makes it durable; a refused
/// archive leaves nothing.
fn unpack_result(archive: &FsPath, folder: &FsPath) -> Result<(), ApiError> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(folder)
        .map_err(|e| io_error(folder, &e))?;
    // The judge's own unpacker, with caps that fit a result folder (many small files).
    let caps = judge::unpack::Caps {
        files: 1_000_000,
        bytes: 16 << 30,
        ..judge::unpack::Caps::default()
    };
    if let Err(e) = judge::unpack::unpack(archive, folder, caps) {
        let _ = judge::workdir::remove_tree(folder, None);
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_result",
            format!("the result folder cannot be unpacked: {e}"),
        ));
    }
    sync_tree(folder).map_err(|e| io_error(folder, &e))
}

/// Moves an unpacked result folder to the attempt's place, replacing an earlier copy;
/// a report accepted after this finds it even after a crash.
fn place_result(folder: &FsPath, dest: &FsPath) -> Result<StatusCode, ApiError> {
    let parent = dest.parent().unwrap_or(dest);
    std::fs::create_dir_all(parent).map_err(|e| io_error(parent, &e))?;
    if dest.exists() {
        judge::workdir::remove_tree(dest, None).map_err(|e| io_error(dest, &e))?;
    }
    std::fs::rename(folder, dest).map_err(|e| io_error(dest, &e))?;
    for dir in [parent, parent.parent().unwrap_or(parent)] {
        std::fs::File::open(dir)
            .and_then(|f| f.sync_all())
            .map_err(|e| io_error(dir, &e))?;
    }
    Ok(StatusCode::NO_CONTENT)
}

/// fsyncs every file and folder under `dir` (no links: the unpacker makes none).
fn sync_tree(dir: &FsPath) -> std::io::Result<()> {
    let mut stack: Vec<PathBuf> = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d)? {
            let e = e?;
            let path = e.path();
            if e.file_type()?.is_dir() {
                stack.push(path);
            } else {
                std::fs::File::open(&path)?.sync_all()?;
            }
        }
        std::fs::File::open(&d)?.sync_all()?;
    }
    Ok(())
}

/// How the attempt ended; accepted once (409 after that). A `scored` or `failed`
/// report needs its result folder sent first.
#[utoipa::path(post, path = "/api/v1/queue/attempts/{submission}/{number}/report",
    tag = "queue", security(("bearer" = [])),
    params(("submission" = String, Path, description = "the submission's id"),
           ("number" = u32, Path, description = "the attempt's number")),
    request_body(content = WireObject, description = "dispatch::wire::ReportRequest"),
    responses(
        (status = 200, body = WireObject, description = "dispatch::wire::ReportAnswer"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "refused: a duplicate, late or stranger's report, or no result folder"),
        (status = 422, body = ErrorBody), (status = 503, body = ErrorBody),
    ))]
pub(crate) async fn report(
    State(app): State<App>,
    WorkerCaller(worker): WorkerCaller,
    Path((submission, number)): Path<(String, String)>,
    JsonBody(r): JsonBody<ReportRequest>,
) -> Result<Json<ReportAnswer>, ApiError> {
    let queue = queue(&app)?;
    let key = attempt_key(&submission, &number)?;
    let judged = matches!(r.report.outcome, Outcome::Scored | Outcome::Failed);
    // Looked for under the attempt's lock (`put_result`): not while a folder of the
    // attempt is being put in place, by this server or another on the database.
    let dir = result_dir(&app.config.state_dir, key);
    let present = app
        .store
        .while_holding(worker.id, key, async move {
            Ok::<_, std::convert::Infallible>(dir.is_dir())
        })
        .await?;
    if judged && present != Ok(true) {
        // Logs, outputs and rescoring read the folder: a judged result without it would
        // be a score nobody can check.
        return Err(ApiError::conflict(
            "result_missing",
            format!(
                "attempt {key}: send its result folder (PUT …/result) before a {} report",
                r.report.outcome
            ),
        ));
    }
    let d = queue.dispatcher_announced(worker.id, None);
    let result = d
        .report_blamed(&lease_of(queue, key), &r.report, r.blame)
        .await
        .map_err(refused)?;
    Ok(Json(ReportAnswer { result }))
}
