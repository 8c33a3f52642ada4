//! Local worker slots (docs/service.md, "Queue and workers"): each slot takes a job from
//! a [`dispatch::Dispatch`], judges it with the same `judge::Judge::evaluate` that
//! `physiojudge evaluate` runs, keeps the lease alive with heartbeats while the run goes
//! on, stops the run when the lease is lost, and reports how it ended — once.
//!
//! - `scored` and `failed` are the entry's (the judge's verdict); `error` is ours: the
//!   data or the entry changed since they were registered, the judge or the machine
//!   failed, or the run was stopped. Each `error` says why ([`ErrorReason`]).
//! - A report carries the judge's `result.json` as written, the organiser's private exam
//!   score (`private/exam-score.json`) and the ranking numbers with their directions,
//!   taken exactly as the scorer gave them in that file: the participant's view in
//!   `result.json` is rounded, the stored figures are not (docs/judge.md, "What a
//!   participant sees").
//! - Each attempt gets its own result folder, `<state>/results/<submission>/<attempt>`.
//!
//! A run is a blocking call (`spawn_blocking`); the slot's task heartbeats beside it and
//! holds the run's [`judge::CancelToken`]. When the task is dropped — the pool aborted,
//! the process dying — the token is cancelled, so a run never outlives its worker for
//! long, and its lease lapses for the reconciler to retry.
//!
//! Not here: the queue (`dispatch`), what a verdict is (`judge`).

mod report;
mod run;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use dispatch::{Dispatch, DispatchError, RunProgress, WorkerRefusal};
use serde::{Deserialize, Serialize};
use store::{AttemptKey, Outcome};
use tokio::sync::watch;

pub use report::ErrorReason;

/// How a pool works.
#[derive(Debug, Clone)]
pub struct Config {
    /// The state folder: result folders go in `results/` under it.
    pub state_dir: PathBuf,
    /// Where this machine keeps challenges' data (`<root>/<challenge id>`); `None`: at
    /// the path the challenge was registered with.
    pub data_root: Option<PathBuf>,
    /// Slots: jobs judged at once (the judge needs as many sandbox slots).
    pub slots: usize,
    /// How long one take waits for a job before the slot asks again.
    pub take_wait: Duration,
    /// How long a slot waits after the queue failed (a database fault) before it asks
    /// again.
    pub retry_wait: Duration,
}

impl Config {
    pub fn new(state_dir: impl Into<PathBuf>, slots: usize) -> Config {
        Config {
            state_dir: state_dir.into(),
            data_root: None,
            slots,
            take_wait: Duration::from_secs(30),
            retry_wait: Duration::from_secs(2),
        }
    }
}

/// How a job ended, as far as this worker is concerned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Ending {
    /// Reported and accepted; `reason` for an `error`.
    Reported {
        outcome: Outcome,
        reason: Option<ErrorReason>,
    },
    /// The lease was lost while the run went on: it was stopped and nothing reported
    /// (the attempt is no longer this worker's).
    Abandoned { why: String },
    /// The queue refused the report (a duplicate or a late one).
    Refused { why: String },
    /// The report could not be delivered; the lease will lapse and the reconciler retry.
    Undelivered { why: String },
}

/// What a pool tells its observer (a server's live view, a log, a test).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Event {
    /// A slot took a job.
    Taken { slot: usize, attempt: AttemptKey },
    /// A run's progress changed (a stage started, a record is done). Called from the
    /// run's own thread: an observer that blocks holds the run up.
    Progress {
        slot: usize,
        attempt: AttemptKey,
        progress: RunProgress,
    },
    /// The run is being stopped: the lease was lost, or the pool is shutting down.
    Stopping {
        slot: usize,
        attempt: AttemptKey,
        why: String,
    },
    /// The job is over.
    Finished {
        slot: usize,
        attempt: AttemptKey,
        ending: Ending,
    },
}

/// Hears a pool's [`Event`]s. Called from the slots' tasks and the runs' threads: it
/// must be quick (queue the event elsewhere if there is more to do).
pub type Observer = Arc<dyn Fn(&Event) + Send + Sync>;

/// Running worker slots; see the crate documentation.
pub struct Pool {
    tasks: Vec<tokio::task::JoinHandle<()>>,
    stop: watch::Sender<bool>,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("slots", &self.tasks.len())
            .finish()
    }
}

/// What every slot shares.
pub(crate) struct Shared {
    pub dispatch: Arc<dyn Dispatch>,
    pub judge: Arc<judge::Judge>,
    pub config: Config,
    pub observer: Option<Observer>,
    /// The data folders that matched their manifests, so each is hashed once, not per job.
    pub verified: store::manifest::VerifiedFolders,
}

impl Shared {
    pub fn tell(&self, event: Event) {
        if let Some(o) = &self.observer {
            o(&event);
        }
    }
}

/// The judge build this worker runs: its judge's version and runtime lock id. A
/// server refuses a worker whose build is not its own (docs/service.md, "Workers").
pub fn this_build() -> store::Build {
    store::Build {
        judge_version: judge::rescore::JUDGE_VERSION.to_owned(),
        runtime_lock: judge::rescore::runtime_lock_id(),
    }
}

/// What this machine's worker of `slots` slots announces: its build, slots and host
/// name (`None` when the kernel does not say).
pub fn announcement(slots: usize) -> store::Announcement {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty());
    store::Announcement {
        build: this_build(),
        slots: u32::try_from(slots).ok(),
        host,
        instance: None,
    }
}

impl Pool {
    /// Starts `config.slots` slots on the current tokio runtime, taking jobs from
    /// `dispatch` and judging them with `judge`. `observer` hears what they do.
    pub fn start(
        dispatch: Arc<dyn Dispatch>,
        judge: Arc<judge::Judge>,
        config: Config,
        observer: Option<Observer>,
    ) -> Pool {
        let (stop, _) = watch::channel(false);
        let shared = Arc::new(Shared {
            dispatch,
            judge,
            config,
            observer,
            verified: Default::default(),
        });
        let tasks = (0..shared.config.slots)
            .map(|slot| tokio::spawn(slot_loop(shared.clone(), slot, stop.subscribe())))
            .collect();
        Pool { tasks, stop }
    }

    /// [`Pool::start`] on a machine's own queue, as worker `name` (registered if it is
    /// not yet): what `physiojudge serve` runs beside its server. The queue's reconciler
    /// ([`dispatch::LocalQueue::spawn_reconciler`]) runs apart from the pool.
    ///
    /// The name is this process's own: attempts still leased to it were started by a
    /// process that is gone (the server was killed), so they end at once as `error`
    /// (`worker_restarted`, not charged) and queue again, before the slots start, rather
    /// than after their leases lapse. Remote workers have their own names and ids and
    /// are not touched. Two live processes must never share a local worker's name.
    pub async fn start_local(
        queue: &dispatch::LocalQueue,
        name: &str,
        judge: Arc<judge::Judge>,
        config: Config,
        observer: Option<Observer>,
    ) -> Result<Pool, store::Error> {
        let id = queue.register_worker(name).await?;
        let done = queue.reclaim_worker(id).await?;
        if !done.lost.is_empty() {
            tracing::warn!(
                lost = done.lost.len(),
                requeued = done.requeued.len(),
                gave_up = done.gave_up.len(),
                "attempts of this worker's previous process ended"
            );
        }
        let announcement = announcement(config.slots);
        Ok(Pool::start(
            Arc::new(queue.dispatcher_as(id, None, announcement)),
            judge,
            config,
            observer,
        ))
    }

    /// Stops taking jobs, stops the runs under way (each reported as an `error`,
    /// "stopped", so that it is retried at once rather than after its lease lapses) and
    /// waits for the slots to end.
    pub async fn shutdown(self) {
        self.stop.send_replace(true);
        for t in self.tasks {
            let _ = t.await;
        }
    }

    /// Ends the slots at once, as if the process died: runs are cancelled, nothing is
    /// reported, leases lapse (the reconciler retries their jobs). Returns once every
    /// slot's task is gone (a run's blocking thread ends soon after: the judge stops at
    /// its next check of the cancelled token).
    pub async fn abort(self) {
        for t in &self.tasks {
            t.abort();
        }
        for t in self.tasks {
            let _ = t.await;
        }
    }
}

/// Resolves once the pool asks to stop; never, if the pool was dropped without asking
/// (its slots then go on, as a detached pool).
pub(crate) async fn stopped(stop: &mut watch::Receiver<bool>) {
    loop {
        if *stop.borrow_and_update() {
            return;
        }
        if stop.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// One slot: take, run, report, until the pool stops.
async fn slot_loop(shared: Arc<Shared>, slot: usize, mut stop: watch::Receiver<bool>) {
    loop {
        if *stop.borrow() {
            return;
        }
        let taken = tokio::select! {
            biased;
            _ = stopped(&mut stop) => return,
            r = shared.dispatch.take(shared.config.take_wait) => r,
        };
        match taken {
            Ok(Some(assignment)) => {
                shared.tell(Event::Taken {
                    slot,
                    attempt: assignment.lease.attempt,
                });
                run::job(&shared, slot, assignment, &mut stop).await;
            }
            Ok(None) => {}
            Err(e) => {
                // Disabled, draining, of another build or its token refused: an
                // organiser's decision or an upgrade is awaited, so ask again only after
                // a take's wait.
                let refused = matches!(
                    e,
                    DispatchError::Refused(
                        WorkerRefusal::Disabled(_)
                            | WorkerRefusal::Draining(_)
                            | WorkerRefusal::WrongVersion { .. }
                    ) | DispatchError::Rejected(_)
                );
                if refused {
                    tracing::warn!(slot, "{e}: not taking jobs");
                } else {
                    tracing::error!(slot, "taking a job: {e}");
                }
                let wait = if refused {
                    // At most a minute: an organiser's enable should not wait out a
                    // remote worker's long poll.
                    shared.config.take_wait.min(Duration::from_secs(60))
                } else {
                    shared.config.retry_wait
                };
                tokio::select! {
                    _ = stopped(&mut stop) => return,
                    _ = tokio::time::sleep(wait) => {}
                }
            }
        }
    }
}
