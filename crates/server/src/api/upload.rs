//! `POST /api/v1/challenges/{id}/submissions`: an entry archive, as the body.
//!
//! In order (docs/service.md, "HTTP API"):
//! 1. before a byte is read: the caller is in a team of the challenge, the phase is
//!    open, the quota has room (the cheap refusals, so a closed phase does not cost a
//!    512 MiB upload), and a declared `Content-Length` is within the limit;
//! 2. the body is streamed to `incoming/<uuid>.part` — never held whole — counting
//!    (past `Config::max_upload_bytes`: 413, the file removed) and hashing (sha256) as
//!    it arrives, then synced to disk;
//! 3. its kind is read from its first bytes (zip, gzip, tar) and it is moved to
//!    `entries/<uuid>.<zip|tar.gz|tar>`, the folder synced too;
//! 4. it is unpacked into a scratch folder with the judge's own rules and caps
//!    (`judge::unpack::unpack`), exactly as the prep stage will: an archive the judge
//!    would refuse is refused now (422 with the reason), not queued and not charged;
//! 5. the submission is recorded by the store, which checks the phase and the quota
//!    again in the transaction that inserts it (409 with the figures);
//! 6. `201 {id, state, entry_sha256, …}`.
//!
//! Whatever stops the request on the way (a refusal, an error, the client hanging up)
//! removes the file: only a recorded submission keeps one.
//!
//! An `Idempotency-Key` header makes a retry safe: the team's key is looked up first,
//! and when it made a submission in the last 24 hours the cheap refusals are skipped
//! (the first upload was the one charged), the body is read and hashed, and the same
//! request (entry, phase asked for, method) is answered `201` with that submission
//! (`Idempotent-Replayed: true`), another is 422 `idempotency_key_reused`. Two uploads
//! racing with one key are settled by the store, under the team's lock.

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path as FsPath, PathBuf};

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use futures_util::StreamExt;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use utoipa::{IntoParams, ToSchema};

use crate::api::{App, check_name, resolve_phase, team_of};
use crate::auth::Caller;
use crate::error::ApiError;
use crate::json::{Json, Query};
use crate::layout::ENTRIES;
use crate::views::{CreatedSubmission, ErrorBody};

/// The entry archive: `.zip`, `.tar.gz` or `.tar`, told apart by its first bytes.
#[derive(ToSchema)]
#[schema(value_type = String, format = Binary)]
#[allow(dead_code)]
pub(crate) struct EntryArchive(Vec<u8>);

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct UploadQuery {
    /// The phase's name (default: the open one).
    pub phase: Option<String>,
    /// A name for the method, shown on the leaderboard (at most 100 characters).
    pub method: Option<String>,
    /// A description of the method (at most 2000 characters).
    pub description: Option<String>,
}

/// After an upload goes over the limit, at most this much more is read (and thrown
/// away) so that a client that sent a little too much reads the 413 rather than a
/// reset connection; past it the connection is closed.
const DRAIN_CAP: u64 = 16 << 20;

/// A file that is removed when dropped, unless kept.
pub(crate) struct Scratch(Option<PathBuf>);

impl Scratch {
    fn keep(mut self) {
        self.0 = None;
    }

    /// The file's path (empty once kept).
    pub(crate) fn path(&self) -> &FsPath {
        self.0.as_deref().unwrap_or(FsPath::new(""))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = std::fs::remove_file(p);
        }
    }
}

fn io_error(path: &FsPath) -> impl FnOnce(std::io::Error) -> ApiError + '_ {
    move |e| ApiError::internal(&format_args!("{}: {e}", path.display()))
}

fn too_large(max: u64, what: &str) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "too_large",
        format!("{what} is at most {max} bytes"),
    )
    .with("max_bytes", max)
}

fn invalid_entry(message: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_entry", message)
}

/// Upload an entry for the caller's team (body: the archive). The upload's time, when
/// it completed, is the submission's `received_at`.
#[utoipa::path(post, path = "/api/v1/challenges/{id}/submissions", tag = "submissions",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "the challenge's id"), UploadQuery,
        ("Idempotency-Key" = Option<String>, Header,
            description = "1 to 255 visible ASCII characters, new for every upload and \
                sent again with its retries: a retry within 24 hours is answered with the \
                first one's submission (`Idempotent-Replayed: true`), not charged again")),
    request_body(content = EntryArchive, content_type = "application/octet-stream",
        description = "the entry archive (.zip, .tar.gz or .tar)"),
    responses(
        (status = 201, body = CreatedSubmission),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "the caller is in no team of it"),
        (status = 404, body = ErrorBody, description = "no such challenge or phase"),
        (status = 409, body = ErrorBody,
            description = "the phase is closed (`opens`, `closes`: the team's own close \
                when it has an extension, `extended`) or the quota spent (`quota`, \
                `next_slot_at`)"),
        (status = 413, body = ErrorBody, description = "larger than the server takes"),
        (status = 422, body = ErrorBody,
            description = "the judge would refuse the archive: the reason; not charged; \
                or `idempotency_key_reused`: the key was used for another request"),
    ))]
pub(crate) async fn upload(
    State(app): State<App>,
    Caller(user): Caller,
    Path(id): Path<String>,
    Query(q): Query<UploadQuery>,
    headers: HeaderMap,
    body: Body,
) -> Result<(StatusCode, HeaderMap, Json<CreatedSubmission>), ApiError> {
    // 1. The refusals that need no body.
    app.store.challenge(&id).await?;
    let team = team_of(&app, &user, &id).await?;
    let key = match headers.get(IDEMPOTENCY_KEY) {
        None => None,
        Some(v) => {
            let k = v.to_str().map_err(|_| {
                ApiError::invalid("Idempotency-Key: give 1 to 255 visible ASCII characters")
            })?;
            // Checked now, with its fingerprint filled in once the body is read.
            Some(store::UploadKey::new(k, String::new())?.key)
        }
    };
    let known = match &key {
        Some(k) => app.store.upload_key(team.id, k).await?,
        None => None,
    };
    // A replay skips the phase and quota checks: the first upload passed them and was
    // charged, and its answer was lost.
    let phase = match known {
        Some(_) => None,
        None => {
            let phase = resolve_phase(&app, &id, q.phase.as_deref()).await?;
            let now = app.store.now();
            let extension = app.store.extension(phase.id, team.id).await?;
            phase.check_open(extension.as_ref(), now)?;
            let quota = app.store.quota(phase.id, team.id).await?;
            if !quota.spent.is_empty() {
                return Err(store::Error::QuotaSpent(Box::new(quota)).into());
            }
            Some(phase)
        }
    };
    let method = q.method.filter(|m| !m.trim().is_empty());
    if let Some(m) = &method {
        check_name("method", m)?;
    }
    if q.description
        .as_ref()
        .is_some_and(|d| d.chars().count() > 2000)
    {
        return Err(ApiError::invalid(
            "description is longer than 2000 characters",
        ));
    }
    let max = app.config.max_upload_bytes;
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max) {
        return Err(too_large(max, ENTRY));
    }

    // 2. Streamed to disk, counted and hashed.
    let name = uuid::Uuid::now_v7().to_string();
    let part = app.config.incoming().join(format!("{name}.part"));
    let (bytes, sha256, part) = receive(body, &part, max, ENTRY).await?;
    if bytes == 0 {
        return Err(invalid_entry("the body is empty: send the archive's bytes"));
    }
    let description = q.description.filter(|d| !d.trim().is_empty());
    let key = key
        .map(|k| {
            let request = fingerprint(
                &id,
                q.phase.as_deref(),
                method.as_deref(),
                description.as_deref(),
                &sha256,
            );
            store::UploadKey::new(&k, request)
        })
        .transpose()?;
    let phase = match (phase, known, &key) {
        (Some(phase), _, _) => phase,
        (None, Some((request, submission)), Some(k)) => {
            // The scratch file `part` is dropped (removed) on the way out.
            if request != k.request_sha256 {
                return Err(store::Error::UploadKeyReused {
                    key: k.key.clone(),
                    submission,
                }
                .into());
            }
            let s = app.store.submission(submission).await?;
            return replayed(&app, s).await;
        }
        _ => return Err(ApiError::internal(&"an upload without its phase")),
    };

    // 3. Its kind, and its place.
    let ext = sniff(part.0.as_deref().unwrap_or(FsPath::new(""))).await?;
    let rel = format!("{ENTRIES}/{name}.{ext}");
    let entry = app.config.state_dir.join(&rel);
    let from = part.0.clone().unwrap_or_default();
    tokio::fs::rename(&from, &entry)
        .await
        .map_err(io_error(&entry))?;
    part.keep();
    let entry_file = Scratch(Some(entry.clone()));
    let entries = app.config.state_dir.join(ENTRIES);

    // 4. The judge's own unpack rules, while the file and its name go to disk: neither
    // needs the other, and both are done before the submission is recorded (a recorded
    // entry must survive a crash). Each takes 10-25 ms for 10 MB on a loaded VM here.
    let durable = async {
        for path in [&entry, &entries] {
            tokio::fs::File::open(path)
                .await
                .map_err(io_error(path))?
                .sync_all()
                .await
                .map_err(io_error(path))?;
        }
        Ok::<_, ApiError>(())
    };
    let (durable, checked) = tokio::join!(durable, check(&app, &entry, &name));
    checked?;
    durable?;

    // 5. Recorded: the store checks the phase and the quota again, atomically.
    let submitted = app
        .store
        .submit_keyed(
            &store::NewSubmission {
                team: team.id,
                phase: phase.id,
                entry_sha256: sha256.clone(),
                entry_path: rel,
                method_name: method,
                method_description: description,
            },
            key.as_ref(),
        )
        .await?;
    let s = match submitted {
        store::Submitted::New(s) => s,
        // Another request with the same key won the race: this one's file goes.
        store::Submitted::Replayed(s) => return replayed(&app, s).await,
    };
    entry_file.keep();
    app.config.queued();
    tracing::info!(
        "submission {} of team {} ({} bytes, sha256 {sha256})",
        s.id,
        team.id,
        bytes
    );
    Ok((
        StatusCode::CREATED,
        HeaderMap::new(),
        Json(CreatedSubmission {
            id: s.id.0,
            state: s.state.into(),
            entry_sha256: s.entry_sha256,
            phase: phase.name,
            received_at: s.received_at,
        }),
    ))
}

/// The request header that makes an upload's retries safe.
const IDEMPOTENCY_KEY: &str = "idempotency-key";

/// What makes an upload the same request as another: the challenge, the phase as asked
/// for (not as resolved: a replay after the phase closed resolves another), the method
/// and the entry's bytes.
fn fingerprint(
    challenge: &str,
    phase: Option<&str>,
    method: Option<&str>,
    description: Option<&str>,
    entry_sha256: &str,
) -> String {
    let mut h = Sha256::new();
    // Each part length-prefixed, so that no two requests hash the same text.
    for part in [
        Some(challenge),
        phase,
        method,
        description,
        Some(entry_sha256),
    ] {
        match part {
            None => h.update(b"-"),
            Some(p) => {
                h.update(format!("{}:", p.len()).as_bytes());
                h.update(p.as_bytes());
            }
        }
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The answer to an upload whose key made `s` already: the first answer's 201 with the
/// same submission (its state now), marked as a replay.
async fn replayed(
    app: &App,
    s: store::Submission,
) -> Result<(StatusCode, HeaderMap, Json<CreatedSubmission>), ApiError> {
    let phase = app.store.phase(s.phase).await?;
    let mut headers = HeaderMap::new();
    headers.insert(
        "idempotent-replayed",
        axum::http::HeaderValue::from_static("true"),
    );
    tracing::info!("upload replayed: submission {} by its key", s.id);
    Ok((
        StatusCode::CREATED,
        headers,
        Json(CreatedSubmission {
            id: s.id.0,
            state: s.state.into(),
            entry_sha256: s.entry_sha256,
            phase: phase.name,
            received_at: s.received_at,
        }),
    ))
}

/// What an upload's size limit is of, in its 413.
const ENTRY: &str = "an entry archive";

/// Streams `body` into a new file at `path`: its length, its sha256 and the file
/// (removed when dropped). Over `max` bytes, 413 saying `what` is at most that.
pub(crate) async fn receive(
    body: Body,
    path: &FsPath,
    max: u64,
    what: &str,
) -> Result<(u64, String, Scratch), ApiError> {
    let mut file = tokio::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .await
        .map_err(io_error(path))?;
    let scratch = Scratch(Some(path.to_path_buf()));
    let mut stream = body.into_data_stream();
    let mut hasher = Sha256::new();
    let mut n: u64 = 0;
    while let Some(chunk) = stream.next().await {
        let chunk =
            chunk.map_err(|e| ApiError::bad_request(format!("the upload broke off: {e}")))?;
        n += chunk.len() as u64;
        if n > max {
            drop(file);
            drop(scratch);
            let mut drained = 0u64;
            while drained < DRAIN_CAP {
                match stream.next().await {
                    Some(Ok(c)) => drained += c.len() as u64,
                    _ => break,
                }
            }
            return Err(too_large(max, what));
        }
        hasher.update(&chunk);
        file.write_all(&chunk).await.map_err(io_error(path))?;
    }
    // All written; the caller makes it durable (before it is recorded).
    file.flush().await.map_err(io_error(path))?;
    let sha256 = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>();
    Ok((n, sha256, scratch))
}

/// The archive's kind by its first bytes: the judge's unpacker goes by the name, and a
/// body has none.
async fn sniff(path: &FsPath) -> Result<&'static str, ApiError> {
    let mut head = Vec::with_capacity(512);
    tokio::fs::File::open(path)
        .await
        .map_err(io_error(path))?
        .take(512)
        .read_to_end(&mut head)
        .await
        .map_err(io_error(path))?;
    if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
        Ok("zip")
    } else if head.starts_with(b"\x1f\x8b") {
        Ok("tar.gz")
    } else if head.get(257..262) == Some(b"ustar") {
        Ok("tar")
    } else {
        Err(invalid_entry(
            "not a .zip, .tar.gz or .tar archive (by its first bytes)",
        ))
    }
}

/// Unpacks the entry into a scratch folder with the judge's caps, then removes it.
async fn check(app: &App, entry: &FsPath, name: &str) -> Result<(), ApiError> {
    let _permit = app
        .checks
        .acquire()
        .await
        .map_err(|e| ApiError::internal(&e))?;
    let scratch = app.config.incoming().join(format!("check-{name}"));
    let entry = entry.to_path_buf();
    let caps = app.config.unpack_caps;
    // Blocking file work; it runs to the end (and cleans up) even if the client hangs
    // up meanwhile.
    let outcome = tokio::task::spawn_blocking(move || {
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&scratch)
            .map_err(|e| format!("{}: {e}", scratch.display()))?;
        let r = judge::unpack::unpack(&entry, &scratch, caps);
        if let Err(e) = judge::workdir::remove_tree(&scratch, None) {
            tracing::warn!("removing the check folder: {e}");
        }
        Ok::<_, String>(r)
    })
    .await
    .map_err(|e| ApiError::internal(&e))?
    .map_err(|e| ApiError::internal(&e))?;
    match outcome {
        Ok(_) => Ok(()),
        Err(e) => Err(invalid_entry(format!("the entry cannot be unpacked: {e}"))),
    }
}
