//! Server-sent events of a submission's state changes.
//!
//! The changes are the store's history rows, which any process may write (this server,
//! a worker, the reconciler on another machine), so the stream reads the history every
//! `Config::events_poll` and sends the rows it has not sent: `event: state`, `id: <seq>`
//! and the change as JSON. A client that reconnects with `Last-Event-ID` gets the rows
//! after it. The stream ends after a final state (`scored`, `failed`, `withdrawn`);
//! `error` is not final (it is retried or requeued).
//!
//! While the submission runs, and the server knows its progress (`Config::progress`),
//! each poll that finds it changed sends an `event: progress` (no `id`: it is not a
//! change to resume after) with the stage and its records done. Of the exam, a team
//! learns only that it runs: records done one by one would time each hidden record, a
//! channel for whatever an entry encodes in its run time (docs/judge.md, "Why so
//! little").

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::Extension;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::Stream;

use store::{HistoryEntry, State as SubState, SubmissionId};

use crate::api::App;
use crate::api::submissions::{Access, history_view, visible};
use crate::auth::Caller;
use crate::error::ApiError;
use crate::limits::{ClientAddr, StreamSlot};
use crate::views::{ErrorBody, ProgressEvent, StateEvent, StateEventFrame};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// This module's routes: each handler's `#[utoipa::path]` is its route and its OpenAPI
/// entry at once, so the two cannot drift.
pub(super) fn router() -> OpenApiRouter<App> {
    OpenApiRouter::new().routes(routes!(events))
}

/// The last history read of each followed submission: a stream whose poll finds it
/// younger than half a poll takes it rather than reading the store again, so N streams
/// of one submission cost one read per poll, not N.
#[derive(Default)]
pub(crate) struct Histories(Mutex<HashMap<SubmissionId, Arc<tokio::sync::Mutex<Read>>>>);

#[derive(Default)]
struct Read {
    at: Option<Instant>,
    rows: Arc<Vec<HistoryEntry>>,
}

/// Submissions remembered before the ones nobody reads are forgotten.
const REMEMBERED: usize = 1024;

impl Histories {
    async fn get(&self, app: &App, id: SubmissionId) -> Result<Arc<Vec<HistoryEntry>>, ApiError> {
        let cell = {
            let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
            if map.len() >= REMEMBERED {
                let fresh = app.config.events_poll * 4;
                map.retain(|_, c| {
                    Arc::strong_count(c) > 1
                        || c.try_lock()
                            .map_or(true, |r| r.at.is_some_and(|at| at.elapsed() < fresh))
                });
            }
            map.entry(id).or_default().clone()
        };
        // Streams of one submission wait here for the one read under way.
        let mut read = cell.lock().await;
        if let Some(at) = read.at
            && at.elapsed() < app.config.events_poll / 2
        {
            return Ok(read.rows.clone());
        }
        let rows = Arc::new(app.store.history(id).await?);
        *read = Read {
            at: Some(Instant::now()),
            rows: rows.clone(),
        };
        Ok(rows)
    }
}

struct Follow {
    app: App,
    /// This stream's place in the per-user and per-address counts, given back when
    /// the stream ends.
    _slot: StreamSlot,
    id: SubmissionId,
    organiser: bool,
    sent: u32,
    pending: VecDeque<HistoryEntry>,
    done: bool,
    stopping: tokio::sync::watch::Receiver<bool>,
    first: bool,
    /// The last progress sent (to send only changes).
    progress: Option<crate::RunProgress>,
    /// A progress event to send once the state changes found are sent.
    progress_due: Option<crate::RunProgress>,
}

fn is_final(s: SubState) -> bool {
    matches!(s, SubState::Scored | SubState::Failed | SubState::Withdrawn)
}

impl Follow {
    /// The next event, or `None` when the stream ends.
    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(h) = self.pending.pop_front() {
                self.sent = h.seq;
                let data = StateEvent {
                    submission: self.id.0,
                    change: history_view(&h, self.organiser),
                };
                let json = crate::json::to_vec(&data).ok()?;
                return Some(
                    Event::default()
                        .event("state")
                        .id(h.seq.to_string())
                        .data(String::from_utf8_lossy(&json)),
                );
            }
            if let Some(p) = self.progress_due.take() {
                let data = ProgressEvent {
                    submission: self.id.0,
                    attempt: p.attempt,
                    stage: p.stage.clone(),
                    done: p.done,
                    total: p.total,
                };
                self.progress = Some(p);
                let json = crate::json::to_vec(&data).ok()?;
                return Some(
                    Event::default()
                        .event("progress")
                        .data(String::from_utf8_lossy(&json)),
                );
            }
            if self.done || *self.stopping.borrow() {
                return None;
            }
            if !self.first {
                let wait = tokio::time::sleep(self.app.config.events_poll);
                tokio::select! {
                    () = wait => {}
                    _ = self.stopping.changed() => return None,
                }
            }
            self.first = false;
            let history = match self.app.histories.get(&self.app, self.id).await {
                Ok(h) => h,
                Err(e) => {
                    tracing::warn!("event stream of {}: {e}", self.id);
                    return None;
                }
            };
            let last_state = history.last().map(|h| h.to);
            self.pending
                .extend(history.iter().filter(|h| h.seq > self.sent).cloned());
            if self.pending.is_empty() && last_state.is_some_and(is_final) {
                self.done = true;
            }
            if last_state == Some(SubState::Running) {
                self.progress_due = self
                    .progress_now()
                    .filter(|p| Some(p) != self.progress.as_ref());
            }
        }
    }
}

impl Follow {
    /// The running attempt's progress as the caller may see it: a team sees the exam
    /// without its records.
    fn progress_now(&self) -> Option<crate::RunProgress> {
        let source = self.app.config.progress.as_ref()?;
        let mut p = (source.0)(self.id.0)?;
        if p.stage == "exam" && !self.organiser {
            p.done = 0;
            p.total = 0;
        }
        Some(p)
    }
}

/// Server-sent events of the submission's state changes (`event: state`, `id` the
/// change's sequence number; `Last-Event-ID` resumes after it).
#[utoipa::path(get, path = "/api/v1/submissions/{id}/events", tag = "submissions",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "the submission's id"),
        ("Last-Event-ID" = Option<u32>, Header, description = "resume after this change")),
    responses(
        (status = 200, description = "a stream of `state` events, each carrying a StateEvent \
            as JSON, and while it runs `progress` events, each carrying a ProgressEvent",
            content_type = "text/event-stream", body = StateEventFrame),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "no such submission, or another team's"),
        (status = 429, body = ErrorBody,
            description = "too many streams open for this user or from this address"),
    ))]
pub(crate) async fn events(
    State(app): State<App>,
    Caller(user): Caller,
    addr: Option<Extension<ClientAddr>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let (s, access) = visible(&app, &user, &id).await?;
    let addr = addr.map(|Extension(ClientAddr(a))| a);
    let slot = app.streams.open(user.id.0, addr).inspect_err(|_| {
        tracing::info!(
            "event stream refused: {:?} from {} holds too many",
            user.name,
            addr.map_or_else(|| "in-process".to_owned(), |a| a.to_string())
        );
    })?;
    let sent = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u32>().ok())
        .unwrap_or(0);
    let follow = Follow {
        _slot: slot,
        stopping: app.stopping.subscribe(),
        app,
        id: s.id,
        organiser: access == Access::Organiser,
        sent,
        pending: VecDeque::new(),
        done: false,
        first: true,
        progress: None,
        progress_due: None,
    };
    let stream =
        futures_util::stream::unfold(
            follow,
            |mut f| async move { f.next().await.map(|e| (Ok(e), f)) },
        );
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}
