//! How a queued submission reaches a worker (docs/service.md, "Queue and workers").
//!
//! The platform owns the lease; a worker only dials out. A worker sees the queue through
//! [`Dispatch`], one value per worker (it speaks for that worker, as a worker token does):
//!
//! - [`Dispatch::take`]: the next job, waiting up to a timeout. The job comes leased: its
//!   attempt is the worker's until [`Lease::expires_at`];
//! - [`Dispatch::heartbeat`]: the worker is still on the attempt (with how far it got);
//!   the lease is extended, or the answer is [`Standing::Lost`] — the reconciler ended
//!   the attempt, the worker was disabled — and the worker stops the run;
//! - [`Dispatch::report`]: how the attempt ended, accepted once.
//!
//! Before its first take a worker announces what it runs (judge version, runtime lock,
//! slots, host): a worker of another build than the server's is refused
//! ([`WorkerRefusal::WrongVersion`]), and so are a draining worker's takes and a
//! disabled worker's everything. These rules are the store's (`store::Store::
//! announce_worker`, `take_job`), so every backend keeps them alike.
//!
//! The trait returns boxed futures, so that backends are interchangeable behind
//! `Arc<dyn Dispatch>` (the binary picks one at run time). [`LocalQueue`] is the
//! backend of one machine: the store itself (`store::Store::take_job`, `heartbeat`,
//! `report`), a wake-up for idle workers when something is queued, and the reconciler
//! ([`LocalQueue::spawn_reconciler`]). A fleet backend (JetStream carrying jobs, the
//! server's API taking heartbeats and reports, the same store behind it) implements the
//! same trait; nothing in a worker changes.
//!
//! Not here: judging (`worker`), what a result means (`judge`), the records (`store`).

mod local;
pub mod wire;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

pub use local::{LocalDispatch, LocalQueue, QueueConfig, Reconciler, error_report, under};
pub use store::{
    Announcement, AttemptKey, Blame, Build, Definition, Job, Manifest, Report, ResultId, State,
    WorkerId, WorkerRefusal,
};

/// The folder of result folders under a state folder (the server's, a worker's).
pub const RESULTS: &str = "results";

/// An attempt's result folder under a worker's state folder: where the worker has the
/// judge write, and where the server keeps it (a remote worker sends it there):
/// `<state>/results/<submission>/<attempt>`.
pub fn result_dir(state_dir: &Path, attempt: AttemptKey) -> PathBuf {
    state_dir
        .join(RESULTS)
        .join(attempt.submission.to_string())
        .join(attempt.number.to_string())
}

/// A future a [`Dispatch`] returns (boxed, so that the trait is object safe).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// An attempt held by a worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Lease {
    pub attempt: AttemptKey,
    /// Without a heartbeat by then, the attempt is taken to be lost.
    pub expires_at: DateTime<Utc>,
    /// How far each heartbeat moves the deadline (from the platform's now): a worker
    /// whose heartbeats have all failed for this long takes the lease to be lost.
    pub length: Duration,
    /// How often the worker heartbeats: a fraction of the lease, so that one or two
    /// heartbeats may be late or lost without the lease lapsing.
    pub heartbeat_every: Duration,
}

/// A job and everything the worker needs to judge it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Assignment {
    pub job: Job,
    pub lease: Lease,
    /// The entry archive as uploaded, where this worker can read it (its sha256 is
    /// `job.entry_sha256`).
    pub entry: PathBuf,
    /// The challenge's definition as registered.
    pub definition: Definition,
    /// The challenge's data folder on the server (a worker may keep its copy elsewhere).
    pub data_path: PathBuf,
    /// What the data folder must hold, file by file: checked before judging.
    pub manifest: Manifest,
}

/// How far a run got, sent with each heartbeat (shown to whoever watches the
/// submission).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunProgress {
    /// The stage under way (`prep`, `train`, `quiz`, `exam`, `score`), if one started.
    pub stage: Option<String>,
    /// Records of the stage done, of `total` (0: the stage has no per-record progress).
    pub done: usize,
    pub total: usize,
}

/// What a heartbeat learns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Standing {
    /// The attempt is still the worker's, now until `until`.
    Held { until: DateTime<Utc> },
    /// The attempt is not the worker's any more: stop the run and report nothing (a
    /// report would be refused). `state` is the submission's state now, when known:
    /// `queued` or `error` after the reconciler took the attempt back.
    Lost { why: String, state: Option<State> },
}

/// What can go wrong talking to the queue.
#[derive(Debug, thiserror::Error)]
pub enum DispatchError {
    /// The queue refused the worker (disabled, draining, of another build: an
    /// organiser's decision or an upgrade is awaited) or the attempt it named (not its
    /// running one: a duplicate or late report, or a stranger's). Nothing was changed;
    /// asking again the same way cannot succeed.
    ///
    /// The refusal is the store's own value, which decides it, so that a local worker
    /// and a remote one say the same.
    #[error(transparent)]
    Refused(WorkerRefusal),
    /// The queue's store failed (a database fault, not a refusal): worth trying again.
    #[error(transparent)]
    Store(store::Error),
    /// The queue could not be reached, or answered in a way this worker cannot read (a
    /// remote worker's network or the server's fault, not a refusal): worth trying
    /// again.
    #[error("the queue could not be reached: {0}")]
    Unreachable(String),
    /// The queue refused the request itself (a token it does not take, a body it will
    /// not accept): asking again the same way cannot succeed.
    #[error("the queue refused the request: {0}")]
    Rejected(String),
}

impl From<store::Error> for DispatchError {
    fn from(e: store::Error) -> DispatchError {
        match e {
            store::Error::Refused(r) => DispatchError::Refused(r),
            e => DispatchError::Store(e),
        }
    }
}

impl DispatchError {
    /// Whether trying again later may succeed (a fault, not a refusal).
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            DispatchError::Store(_) | DispatchError::Unreachable(_)
        )
    }
}

/// One worker's view of the queue (see the crate documentation).
pub trait Dispatch: Send + Sync {
    /// The worker this value speaks for.
    fn worker(&self) -> WorkerId;

    /// The next job for this worker, waiting up to `wait` for one to be queued; `None`
    /// if none came. The job comes leased to this worker.
    fn take(&self, wait: Duration) -> BoxFuture<'_, Result<Option<Assignment>, DispatchError>>;

    /// The worker is still on the attempt: extends the lease (and passes on the
    /// progress), or says it is lost.
    fn heartbeat<'a>(
        &'a self,
        lease: &'a Lease,
        progress: &'a RunProgress,
    ) -> BoxFuture<'a, Result<Standing, DispatchError>>;

    /// How the attempt ended; accepted once ([`WorkerRefusal::Attempt`] after that). An
    /// `error` is the worker's own ([`Blame::Worker`]: it counts towards disabling the
    /// worker after repeated ones).
    fn report<'a>(
        &'a self,
        lease: &'a Lease,
        report: &'a Report,
    ) -> BoxFuture<'a, Result<ResultId, DispatchError>> {
        self.report_blamed(lease, report, Blame::Worker)
    }

    /// [`Dispatch::report`], saying whose an `error` is: [`Blame::Elsewhere`] for a run
    /// that was stopped (the worker shutting down), which is not held against it.
    fn report_blamed<'a>(
        &'a self,
        lease: &'a Lease,
        report: &'a Report,
        blame: Blame,
    ) -> BoxFuture<'a, Result<ResultId, DispatchError>>;

    /// The worker is done with the attempt, however it ended (reported, refused, lost,
    /// undelivered): a backend that copied files for it removes them. The local one
    /// keeps the result folder, which is the server's.
    fn finished(&self, _attempt: AttemptKey) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}
