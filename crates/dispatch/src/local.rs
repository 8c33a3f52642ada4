//! The backend of one machine: workers in the same process as the store.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use store::{
    Announcement, AttemptKey, Blame, Error, NewSubmission, Outcome, Reconciled, Report, ResultId,
    Store, Submission, SubmissionId, UserId, WorkerId, WorkerRefusal,
};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::{Assignment, BoxFuture, Dispatch, DispatchError, Lease, RunProgress, Standing};

/// The queue's timings (docs/service.md, "Queue and workers").
#[derive(Debug, Clone)]
pub struct QueueConfig {
    /// The state folder: entry paths are relative to it.
    pub state_dir: PathBuf,
    /// How long a take or a heartbeat holds an attempt.
    pub lease: Duration,
    /// How often a worker heartbeats (well under the lease).
    pub heartbeat_every: Duration,
    /// How often the reconciler looks for lapsed leases.
    pub reconcile_every: Duration,
    /// How often an idle worker looks at the queue without being woken: a safety net
    /// for submissions queued by another process on the same database (the wake-up
    /// reaches only this process's workers).
    pub poll_every: Duration,
}

impl QueueConfig {
    /// The documented defaults: a 30 s lease, a heartbeat every 10 s, the reconciler
    /// every 5 s (a lost worker is noticed within 35 s), a poll every 5 s.
    pub fn new(state_dir: impl Into<PathBuf>) -> QueueConfig {
        QueueConfig {
            state_dir: state_dir.into(),
            lease: Duration::from_secs(30),
            heartbeat_every: Duration::from_secs(10),
            reconcile_every: Duration::from_secs(5),
            poll_every: Duration::from_secs(5),
        }
    }
}

struct Inner {
    store: Store,
    config: QueueConfig,
    /// Bumped whenever something may have become takeable; idle workers wait on it.
    wake: watch::Sender<u64>,
    /// The last progress each running attempt reported.
    progress: Mutex<HashMap<AttemptKey, RunProgress>>,
}

/// The queue of one machine over a [`Store`]; cheap to clone. Whoever queues work
/// through something other than [`LocalQueue::submit`] and [`LocalQueue::requeue`] calls
/// [`LocalQueue::wake`], so that idle workers look at once rather than at their next
/// poll.
#[derive(Clone)]
pub struct LocalQueue {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for LocalQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalQueue")
            .field("store", &self.inner.store)
            .field("config", &self.inner.config)
            .finish()
    }
}

impl LocalQueue {
    pub fn new(store: Store, config: QueueConfig) -> LocalQueue {
        LocalQueue {
            inner: Arc::new(Inner {
                store,
                config,
                wake: watch::Sender::new(0),
                progress: Mutex::new(HashMap::new()),
            }),
        }
    }

    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    pub fn config(&self) -> &QueueConfig {
        &self.inner.config
    }

    /// Something was queued: every idle worker of this process looks at the queue now.
    pub fn wake(&self) {
        self.inner.wake.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Every wake-up from now on: the counter goes up by one per [`LocalQueue::wake`]
    /// (a receiver that looks late sees the sum). A fleet's doorbell rings remote
    /// workers with it.
    pub fn wakes(&self) -> watch::Receiver<u64> {
        self.inner.wake.subscribe()
    }

    /// [`Store::submit`], then wakes the workers.
    pub async fn submit(&self, new: &NewSubmission) -> Result<Submission, Error> {
        let s = self.inner.store.submit(new).await?;
        self.wake();
        Ok(s)
    }

    /// [`Store::requeue`], then wakes the workers.
    pub async fn requeue(
        &self,
        id: SubmissionId,
        by: Option<UserId>,
        why: &str,
    ) -> Result<(), Error> {
        self.inner.store.requeue(id, by, why).await?;
        self.wake();
        Ok(())
    }

    /// One reconciler pass ([`Store::reconcile`]); wakes the workers when it queued a
    /// submission again.
    pub async fn reconcile(&self) -> Result<Reconciled, Error> {
        let done = self.inner.store.reconcile().await?;
        for key in &done.lost {
            self.forget(*key);
        }
        if !done.requeued.is_empty() {
            self.wake();
        }
        Ok(done)
    }

    /// [`Store::reclaim_worker`]: ends at once the attempts still leased to `worker`,
    /// a local worker whose process has just started again; wakes the workers when it
    /// queued a submission again.
    pub async fn reclaim_worker(&self, worker: WorkerId) -> Result<Reconciled, Error> {
        let done = self.inner.store.reclaim_worker(worker).await?;
        for key in &done.lost {
            self.forget(*key);
        }
        if !done.requeued.is_empty() {
            self.wake();
        }
        Ok(done)
    }

    /// Runs [`LocalQueue::reconcile`] every `reconcile_every` until the returned value is
    /// dropped or stopped. A failed pass is logged and the next one tries again.
    ///
    /// A lease that lapses while the platform itself was failing is not a worker's
    /// fault: at its first pass (the server starting, maybe after being down), after a
    /// failed pass (the store unreachable) and after a gap in its own passes (the
    /// process stalled), the reconciler first extends every running lease by one lease
    /// length ([`Store::extend_leases`]), so that live workers' heartbeats get through
    /// before any lease is ended.
    pub fn spawn_reconciler(&self) -> Reconciler {
        let queue = self.clone();
        let every = self.inner.config.reconcile_every;
        let lease = self.inner.config.lease;
        let handle = tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            // Whether the platform was failing since the last good pass.
            let mut forgive = true;
            let mut last_pass = tokio::time::Instant::now();
            loop {
                tick.tick().await;
                if last_pass.elapsed() > every.saturating_mul(3) {
                    tracing::warn!(
                        "reconciler: no pass for {:?}; extending leases first",
                        last_pass.elapsed()
                    );
                    forgive = true;
                }
                if forgive {
                    match queue.inner.store.extend_leases(lease).await {
                        Ok(n) => {
                            if n > 0 {
                                tracing::warn!(
                                    extended = n,
                                    "reconciler: the platform was failing or starting; \
                                     leases extended by {lease:?}"
                                );
                            }
                            forgive = false;
                        }
                        Err(e) => {
                            tracing::error!("reconciler: extending leases: {e}");
                            continue;
                        }
                    }
                }
                match queue.reconcile().await {
                    Ok(done) if !done.lost.is_empty() => tracing::warn!(
                        lost = done.lost.len(),
                        requeued = done.requeued.len(),
                        gave_up = done.gave_up.len(),
                        "reconciler: leases lapsed"
                    ),
                    Ok(_) => {}
                    Err(e) => {
                        tracing::error!("reconciler: {e}");
                        forgive = true;
                        continue;
                    }
                }
                last_pass = tokio::time::Instant::now();
            }
        });
        Reconciler { handle }
    }

    /// The worker of that name, registered now if it is not yet (a local pool's
    /// workers are registered by the server itself; a remote one by an organiser).
    pub async fn register_worker(&self, name: &str) -> Result<WorkerId, Error> {
        if let Some(w) = self
            .inner
            .store
            .workers()
            .await?
            .into_iter()
            .find(|w| w.name == name)
        {
            return Ok(w.id);
        }
        match self.inner.store.create_worker(name).await {
            Ok((w, _token)) => Ok(w.id),
            // Registered by someone else in the meantime.
            Err(Error::Exists { .. }) => self
                .inner
                .store
                .workers()
                .await?
                .into_iter()
                .find(|w| w.name == name)
                .map(|w| w.id)
                .ok_or_else(|| Error::NotFound {
                    what: "worker",
                    id: name.to_owned(),
                }),
            Err(e) => Err(e),
        }
    }

    /// A worker's view of this queue. `challenges` limits its jobs to those (the ones it
    /// has data for); `None` takes any. It announces the server's own build (the
    /// store's, [`Store::build`]) before its first take: a worker in the server's
    /// process runs the server's judge by construction.
    pub fn dispatcher(&self, worker: WorkerId, challenges: Option<Vec<String>>) -> LocalDispatch {
        let announcement = self.inner.store.build().map(|build| Announcement {
            build: build.clone(),
            slots: None,
            host: None,
            instance: None,
        });
        self.dispatcher_announcing(worker, challenges, announcement)
    }

    /// [`LocalQueue::dispatcher`] for a worker that says what it runs: `announcement` is
    /// given to the store before the first take ([`Store::announce_worker`]), and a take
    /// of a worker of another build than the server's is refused
    /// ([`WorkerRefusal::WrongVersion`](crate::WorkerRefusal::WrongVersion)).
    pub fn dispatcher_as(
        &self,
        worker: WorkerId,
        challenges: Option<Vec<String>>,
        announcement: Announcement,
    ) -> LocalDispatch {
        self.dispatcher_announcing(worker, challenges, Some(announcement))
    }

    /// [`LocalQueue::dispatcher`] for a worker that announced itself to the store
    /// already ([`Store::announce_worker`]): a remote worker, whose takes arrive one
    /// request at a time. Its takes are checked against what it announced.
    pub fn dispatcher_announced(
        &self,
        worker: WorkerId,
        challenges: Option<Vec<String>>,
    ) -> LocalDispatch {
        self.dispatcher_announcing(worker, challenges, None)
    }

    fn dispatcher_announcing(
        &self,
        worker: WorkerId,
        challenges: Option<Vec<String>>,
        announcement: Option<Announcement>,
    ) -> LocalDispatch {
        LocalDispatch {
            queue: self.clone(),
            worker,
            challenges,
            announcement: announcement.map(Arc::new),
            announced: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The last progress reported for a submission's running attempt.
    pub fn progress(&self, submission: SubmissionId) -> Option<(AttemptKey, RunProgress)> {
        self.lock_progress()
            .iter()
            .find(|(k, _)| k.submission == submission)
            .map(|(k, p)| (*k, p.clone()))
    }

    fn lock_progress(&self) -> std::sync::MutexGuard<'_, HashMap<AttemptKey, RunProgress>> {
        self.inner
            .progress
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    fn forget(&self, key: AttemptKey) {
        self.lock_progress().remove(&key);
    }
}

/// The reconciler task: stopped when dropped.
#[derive(Debug)]
pub struct Reconciler {
    handle: tokio::task::JoinHandle<()>,
}

impl Reconciler {
    pub fn stop(self) {}
}

impl Drop for Reconciler {
    fn drop(&mut self) {
        self.handle.abort();
    }
}

/// One worker's view of a [`LocalQueue`].
#[derive(Debug, Clone)]
pub struct LocalDispatch {
    queue: LocalQueue,
    worker: WorkerId,
    challenges: Option<Vec<String>>,
    /// What the worker says it runs, announced before its first take.
    announcement: Option<Arc<Announcement>>,
    /// Whether the store accepted the announcement (shared by the dispatcher's clones:
    /// the slots of one worker).
    announced: Arc<AtomicBool>,
}

/// `rel` under `root`, if it is a plain relative path (no `..`, no root, no prefix): a
/// stored path (an entry's, relative to the state folder) must not lead out of it.
pub fn under(root: &Path, rel: &str) -> Option<PathBuf> {
    let p = Path::new(rel);
    let plain = !rel.is_empty() && p.components().all(|c| matches!(c, Component::Normal(_)));
    plain.then(|| root.join(p))
}

impl LocalDispatch {
    fn lease(&self, key: AttemptKey, expires_at: chrono::DateTime<chrono::Utc>) -> Lease {
        Lease {
            attempt: key,
            expires_at,
            length: self.queue.inner.config.lease,
            heartbeat_every: self.queue.inner.config.heartbeat_every,
        }
    }

    /// What the worker needs beside the job; `Err` with why a job cannot be judged.
    async fn assignment(&self, job: store::Job) -> Result<Assignment, String> {
        let store = &self.queue.inner.store;
        let challenge = store
            .challenge(&job.challenge)
            .await
            .map_err(|e| format!("challenge {:?}: {e}", job.challenge))?;
        let entry =
            under(&self.queue.inner.config.state_dir, &job.entry_path).ok_or_else(|| {
                format!(
                    "entry path {:?} leads out of the state folder",
                    job.entry_path
                )
            })?;
        Ok(Assignment {
            lease: self.lease(job.attempt, job.lease_expires_at),
            entry,
            definition: challenge.definition,
            data_path: PathBuf::from(challenge.data_path),
            manifest: challenge.manifest,
            job,
        })
    }

    /// Announces the worker once (again after a refusal: the refusal stays on record
    /// for organisers, and the store checks every take anyway).
    async fn announce(&self) -> Result<(), DispatchError> {
        let Some(a) = &self.announcement else {
            return Ok(());
        };
        if self.announced.load(Ordering::Acquire) {
            return Ok(());
        }
        self.queue
            .inner
            .store
            .announce_worker(self.worker, a)
            .await?;
        self.announced.store(true, Ordering::Release);
        Ok(())
    }

    /// One take at once, with the take's own id (a remote worker's, sent again with its
    /// retries): the attempt that id leased, if it runs still, or a new one
    /// ([`Store::take_job_once`]).
    pub async fn take_once(&self, take: Option<&str>) -> Result<Option<Assignment>, DispatchError> {
        self.take_with(Duration::ZERO, take).await
    }

    async fn take_inner(&self, wait: Duration) -> Result<Option<Assignment>, DispatchError> {
        self.take_with(wait, None).await
    }

    async fn take_with(
        &self,
        wait: Duration,
        take: Option<&str>,
    ) -> Result<Option<Assignment>, DispatchError> {
        self.announce().await?;
        let inner = &self.queue.inner;
        let deadline = Instant::now() + wait;
        let mut woken = inner.wake.subscribe();
        loop {
            // Marked seen before looking: a wake-up during the look is not lost.
            woken.borrow_and_update();
            let job = inner
                .store
                .take_job_once(
                    self.worker,
                    inner.config.lease,
                    self.challenges.as_deref(),
                    take,
                )
                .await?;
            if let Some(job) = job {
                let key = job.attempt;
                let expires = job.lease_expires_at;
                match self.assignment(job).await {
                    Ok(a) => return Ok(Some(a)),
                    Err(why) => {
                        // Not judgeable here: the platform's fault, reported at once so
                        // that it is retried (or shown) rather than left to lapse.
                        tracing::error!(attempt = %key, "cannot hand out the job: {why}");
                        let lease = self.lease(key, expires);
                        self.report_inner(&lease, &error_report(why), Blame::Elsewhere)
                            .await?;
                        continue;
                    }
                }
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            let nap = (deadline - now).min(inner.config.poll_every);
            tokio::select! {
                r = woken.changed() => {
                    // The sender lives as long as the queue: an error cannot come while
                    // this worker holds it; wait out the nap if it does.
                    if r.is_err() {
                        tokio::time::sleep(nap).await;
                    }
                }
                _ = tokio::time::sleep(nap) => {
                    // Out of time and not woken: no look after the wait (the caller
                    // takes again), so that a wait ends when it says.
                    if Instant::now() >= deadline {
                        return Ok(None);
                    }
                }
            }
        }
    }

    async fn heartbeat_inner(
        &self,
        lease: &Lease,
        progress: &RunProgress,
    ) -> Result<Standing, DispatchError> {
        let inner = &self.queue.inner;
        let key = lease.attempt;
        match inner
            .store
            .heartbeat(self.worker, key, inner.config.lease)
            .await
        {
            Ok(until) => {
                self.queue.lock_progress().insert(key, progress.clone());
                Ok(Standing::Held { until })
            }
            Err(Error::Refused(WorkerRefusal::Attempt { why, .. })) => {
                self.queue.forget(key);
                let state = inner
                    .store
                    .submission(key.submission)
                    .await
                    .ok()
                    .map(|s| s.state);
                Ok(Standing::Lost { why, state })
            }
            Err(Error::Refused(WorkerRefusal::Disabled(name))) => {
                self.queue.forget(key);
                Ok(Standing::Lost {
                    why: format!("worker {name:?} was disabled"),
                    state: None,
                })
            }
            Err(e) => Err(e.into()),
        }
    }

    async fn report_inner(
        &self,
        lease: &Lease,
        report: &Report,
        blame: Blame,
    ) -> Result<ResultId, DispatchError> {
        let inner = &self.queue.inner;
        let id = inner
            .store
            .report_blamed(self.worker, lease.attempt, report, blame)
            .await?;
        self.queue.forget(lease.attempt);
        if report.outcome == Outcome::Error {
            // It may be queued again for a new attempt.
            self.queue.wake();
        }
        Ok(id)
    }
}

/// A report of the platform's fault, with nothing judged.
pub fn error_report(message: String) -> Report {
    Report {
        outcome: Outcome::Error,
        result_json: None,
        private_json: None,
        figures: Vec::new(),
        quiz_figures: Vec::new(),
        scorer_version: String::new(),
        judge_version: String::new(),
        message: Some(message),
        runtime_lock: None,
        warnings: Vec::new(),
    }
}

impl Dispatch for LocalDispatch {
    fn worker(&self) -> WorkerId {
        self.worker
    }

    fn take(&self, wait: Duration) -> BoxFuture<'_, Result<Option<Assignment>, DispatchError>> {
        Box::pin(self.take_inner(wait))
    }

    fn heartbeat<'a>(
        &'a self,
        lease: &'a Lease,
        progress: &'a RunProgress,
    ) -> BoxFuture<'a, Result<Standing, DispatchError>> {
        Box::pin(self.heartbeat_inner(lease, progress))
    }

    fn report_blamed<'a>(
        &'a self,
        lease: &'a Lease,
        report: &'a Report,
        blame: Blame,
    ) -> BoxFuture<'a, Result<ResultId, DispatchError>> {
        Box::pin(self.report_inner(lease, report, blame))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_entry_paths_stay_in_the_state_folder() {
        let root = Path::new("/state");
        assert_eq!(
            under(root, "entries/t/1.zip"),
            Some(PathBuf::from("/state/entries/t/1.zip"))
        );
        for bad in ["", "/etc/passwd", "../x", "entries/../../x", "./x"] {
            assert_eq!(under(root, bad), None, "{bad:?}");
        }
    }
}
