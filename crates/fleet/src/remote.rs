//! The queue over the server's HTTP API.

use std::path::{Path, PathBuf};
use std::time::Duration;

use dispatch::wire::{Announced, ReportAnswer, ReportRequest, TakeRequest};
use dispatch::{
    Assignment, Blame, BoxFuture, Dispatch, DispatchError, Lease, RunProgress, Standing,
};
use reqwest::StatusCode;
use serde::de::DeserializeOwned;
use store::{Announcement, AttemptKey, Build, Report, ResultId, WorkerId, WorkerRefusal};
use tokio::io::AsyncWriteExt;
use tokio::time::Instant;

use crate::Listener;

/// The state folder's parts: entries as downloaded, result folders as the judge writes
/// them, result archives being sent.
const ENTRIES: &str = "entries";
const OUTGOING: &str = "outgoing";

/// How a remote worker reaches its server.
#[derive(Debug, Clone)]
pub struct RemoteConfig {
    /// The server's address (`https://judge.example`), without `/api/v1`.
    pub server: String,
    /// The worker's token (`POST /api/v1/workers`).
    pub token: String,
    /// The worker's state folder: entries as downloaded (`entries/`) and result folders
    /// (`results/`) until the server has them.
    pub state_dir: PathBuf,
    /// How often an idle worker asks the server without a notice: what a lost notice
    /// costs, and all a worker without NATS has.
    pub poll_every: Duration,
    /// Only jobs of these challenges (the ones this machine has data for); `None`: any.
    pub challenges: Option<Vec<String>>,
}

impl RemoteConfig {
    pub fn new(server: &str, token: &str, state_dir: impl Into<PathBuf>) -> RemoteConfig {
        RemoteConfig {
            server: server.trim_end_matches('/').to_owned(),
            token: token.to_owned(),
            state_dir: state_dir.into(),
            poll_every: Duration::from_secs(10),
            challenges: None,
        }
    }
}

/// One remote worker's view of the server's queue (see the crate documentation);
/// shared by its slots.
#[derive(Debug)]
pub struct RemoteDispatch {
    http: reqwest::Client,
    config: RemoteConfig,
    me: Announced,
    build: Build,
    /// The doorbell's notices, once NATS is reached (it may be down at start: polls
    /// cover until then).
    listener: std::sync::Arc<std::sync::OnceLock<Listener>>,
    /// Whether notices come at all (a queue address was given).
    awaits_notices: bool,
    /// Takes that found nothing, and takes made because no notice came (polls).
    empty_takes: std::sync::atomic::AtomicU64,
    polls: std::sync::atomic::AtomicU64,
}

/// How a remote worker's takes went since it started (the figures its operator reads
/// when it stops, and a benchmark's): notices delivered and stale ones purged, takes
/// that found nothing, takes made because no notice came, and how often the doorbell's
/// stream and consumer were made again.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TakeCounts {
    pub notices: crate::NoticeCounts,
    pub empty_takes: u64,
    pub polls: u64,
}

impl std::fmt::Display for TakeCounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} notice(s) delivered, {} stale purged, {} empty take(s), {} poll(s), \
             notices' stream made again {} time(s)",
            self.notices.delivered,
            self.notices.purged,
            self.empty_takes,
            self.polls,
            self.notices.remade
        )
    }
}

/// The server's error object, as far as a worker needs it.
#[derive(Debug, Default, serde::Deserialize)]
struct ErrorObject {
    #[serde(default)]
    code: String,
    #[serde(default)]
    message: String,
    #[serde(default)]
    server: Option<Build>,
}

#[derive(serde::Deserialize)]
struct ErrorBody {
    error: ErrorObject,
}

fn unreachable(what: &str, e: impl std::fmt::Display) -> DispatchError {
    DispatchError::Unreachable(format!("{what}: {e}"))
}

/// What a refusal is read against: the worker's name and build, and the attempt the
/// call was about.
struct Refusing<'a> {
    name: &'a str,
    build: &'a Build,
    attempt: Option<AttemptKey>,
}

impl Refusing<'_> {
    fn nameless(build: &Build) -> Refusing<'_> {
        Refusing {
            name: "",
            build,
            attempt: None,
        }
    }

    /// A refusal or failure in the server's words, as the trait's error: the queue's
    /// refusals typed, a server or proxy fault (5xx, 408, 429, an answer that is not
    /// the server's) worth trying again, any other refusal of the request final.
    async fn read(&self, r: reqwest::Response, what: &str) -> DispatchError {
        let status = r.status();
        let e = r
            .json::<ErrorBody>()
            .await
            .map(|b| b.error)
            .unwrap_or_default();
        let name = self.name.to_owned();
        let said = format!("{what}: {status} {}: {}", e.code, e.message.trim());
        match (e.code.as_str(), self.attempt) {
            ("attempt_refused", Some(attempt)) => DispatchError::Refused(WorkerRefusal::Attempt {
                attempt,
                why: e.message,
            }),
            ("worker_disabled", _) => DispatchError::Refused(WorkerRefusal::Disabled(name)),
            ("worker_draining", _) => DispatchError::Refused(WorkerRefusal::Draining(name)),
            ("wrong_version", _) => DispatchError::Refused(WorkerRefusal::WrongVersion {
                worker: name,
                announced: Some(self.build.clone()),
                server: e.server.unwrap_or(Build {
                    judge_version: "(not said)".into(),
                    runtime_lock: "(not said)".into(),
                }),
            }),
            _ if status.is_server_error()
                || status == StatusCode::REQUEST_TIMEOUT
                || status == StatusCode::TOO_MANY_REQUESTS
                || e.code.is_empty() =>
            {
                DispatchError::Unreachable(said)
            }
            _ => DispatchError::Rejected(said),
        }
    }
}

/// A JSON answer, or the refusal.
async fn answer<T: DeserializeOwned>(
    r: Result<reqwest::Response, reqwest::Error>,
    what: &str,
    refusing: &Refusing<'_>,
) -> Result<T, DispatchError> {
    let r = r.map_err(|e| unreachable(what, e))?;
    if !r.status().is_success() {
        return Err(refusing.read(r, what).await);
    }
    r.json::<T>().await.map_err(|e| unreachable(what, e))
}

impl RemoteDispatch {
    /// Announces this worker (`announcement`: its build, slots, host) and learns who its
    /// token speaks for. `notices`: the platform's doorbell, dialled in the background
    /// (and again until it answers), so a NATS that is down costs polls, not the
    /// worker. Fails at once on a token or build the server refuses.
    ///
    /// The state folder is this process's: what an earlier process left in it (entries,
    /// result folders of jobs it never finished) is removed first.
    pub async fn connect(
        config: RemoteConfig,
        announcement: &Announcement,
        notices: Option<crate::QueueUrl>,
    ) -> Result<RemoteDispatch, DispatchError> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            // A stalled transfer ends a call rather than holding a slot for ever.
            .read_timeout(Duration::from_secs(120))
            .build()
            .map_err(|e| unreachable("making the HTTP client", e))?;
        let build = announcement.build.clone();
        let r = http
            .post(format!("{}/api/v1/queue/announce", config.server))
            .bearer_auth(&config.token)
            .json(announcement)
            .timeout(Duration::from_secs(30))
            .send()
            .await;
        let me = answer(r, "announcing", &Refusing::nameless(&build)).await?;
        for sub in [ENTRIES, dispatch::RESULTS, OUTGOING] {
            let dir = config.state_dir.join(sub);
            if let Err(e) = tokio::fs::remove_dir_all(&dir).await
                && e.kind() != std::io::ErrorKind::NotFound
            {
                return Err(unreachable(
                    "clearing the state folder",
                    format_args!("{}: {e}", dir.display()),
                ));
            }
        }
        let listener = std::sync::Arc::new(std::sync::OnceLock::new());
        let awaits_notices = notices.is_some();
        if let Some(url) = notices {
            let slot = listener.clone();
            tokio::spawn(async move {
                let mut wait = Duration::from_secs(1);
                loop {
                    match crate::Doorbell::connect(&url).await {
                        Ok(bell) => match bell.listener().await {
                            Ok(l) => {
                                let _ = slot.set(l);
                                tracing::info!("job notices from {}/{}", url.server, url.stream);
                                return;
                            }
                            Err(e) => tracing::warn!("job notices: {e}; polling meanwhile"),
                        },
                        Err(e) => tracing::warn!("job notices: {e}; polling meanwhile"),
                    }
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_secs(60));
                }
            });
        }
        Ok(RemoteDispatch {
            http,
            config,
            me,
            build,
            listener,
            awaits_notices,
            empty_takes: Default::default(),
            polls: Default::default(),
        })
    }

    /// How this worker's takes went so far.
    pub fn counts(&self) -> TakeCounts {
        let get = |a: &std::sync::atomic::AtomicU64| a.load(std::sync::atomic::Ordering::Relaxed);
        TakeCounts {
            notices: self
                .listener
                .get()
                .map(Listener::counts)
                .unwrap_or_default(),
            empty_takes: get(&self.empty_takes),
            polls: get(&self.polls),
        }
    }

    /// Who the server says this worker is.
    pub fn announced(&self) -> &Announced {
        &self.me
    }

    fn call(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.http
            .request(method, format!("{}/api/v1{path}", self.config.server))
            .bearer_auth(&self.config.token)
    }

    fn attempt_path(key: AttemptKey, what: &str) -> String {
        format!("/queue/attempts/{}/{}/{what}", key.submission, key.number)
    }

    /// How this worker reads a refusal, for a call about `attempt` (if any).
    fn refusing(&self, attempt: Option<AttemptKey>) -> Refusing<'_> {
        Refusing {
            name: &self.me.name,
            build: &self.build,
            attempt,
        }
    }

    /// One take, at once: the job leased to this worker (its entry not yet here), or
    /// `None` if no job is takeable now.
    ///
    /// The take carries an id of its own and is sent again, with the same id, until the
    /// server answers: a take whose answer was lost after the server committed it (the
    /// server killed, a proxy's timeout, this client's) is answered again with the same
    /// attempt, so no attempt is leased to a worker that does not know it holds it.
    async fn offer(&self) -> Result<Option<Assignment>, DispatchError> {
        let take = uuid::Uuid::now_v7().to_string();
        let mut wait = Duration::from_secs(1);
        loop {
            match self.offer_once(&take).await {
                Err(DispatchError::Unreachable(why)) => {
                    tracing::warn!("{why}; the same take again in {}s", wait.as_secs());
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_secs(30));
                }
                other => return other,
            }
        }
    }

    async fn offer_once(&self, take: &str) -> Result<Option<Assignment>, DispatchError> {
        let r = self
            .call(reqwest::Method::POST, "/queue/take")
            .json(&TakeRequest {
                challenges: self.config.challenges.clone(),
                take: Some(take.to_owned()),
            })
            .timeout(Duration::from_secs(60))
            .send()
            .await
            .map_err(|e| unreachable("taking a job", e))?;
        if r.status() == StatusCode::NO_CONTENT {
            self.empty_takes
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            return Ok(None);
        }
        answer(Ok(r), "taking a job", &self.refusing(None))
            .await
            .map(Some)
    }

    /// The job's entry brought here, heartbeating meanwhile: the assignment ready to
    /// judge. A download that fails is reported at once (not the worker's fault: the
    /// server's file or the network), so that the job is retried rather than left to
    /// lapse.
    async fn fetch(&self, mut a: Assignment) -> Result<Assignment, DispatchError> {
        match self.holding(&a.lease, self.download(&a)).await {
            Ok(path) => {
                a.entry = path;
                Ok(a)
            }
            Err(why) => {
                tracing::error!(attempt = %a.lease.attempt, "{why}");
                let report = dispatch::error_report(why.clone());
                let _ = self.report_inner(&a.lease, &report, Blame::Elsewhere).await;
                self.forget(a.lease.attempt).await;
                Err(DispatchError::Unreachable(why))
            }
        }
    }

    /// Runs `work` while heartbeating the lease every `heartbeat_every`, as the pool
    /// does while judging: a transfer longer than the lease must not lose it. A lost
    /// lease ends the work with why.
    async fn holding<T>(
        &self,
        lease: &Lease,
        work: impl std::future::Future<Output = Result<T, String>>,
    ) -> Result<T, String> {
        let every = lease.heartbeat_every.max(Duration::from_millis(10));
        let mut tick = tokio::time::interval_at(Instant::now() + every, every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tokio::pin!(work);
        loop {
            tokio::select! {
                r = &mut work => return r,
                _ = tick.tick() => {
                    match self.heartbeat_inner(lease, &RunProgress::default()).await {
                        Ok(Standing::Lost { why, .. }) => {
                            return Err(format!("attempt {}: lease lost: {why}", lease.attempt));
                        }
                        Ok(Standing::Held { .. }) => {}
                        // A failed heartbeat: the transfer goes on; the lease lapses
                        // only after several.
                        Err(e) => tracing::warn!(attempt = %lease.attempt, "heartbeat failed: {e}"),
                    }
                }
            }
        }
    }

    /// Downloads the attempt's entry into `entries/` under the state folder, keeping
    /// the stored file's name (its extension tells the unpacker its kind).
    async fn download(&self, a: &Assignment) -> Result<PathBuf, String> {
        let key = a.lease.attempt;
        let name = Path::new(&a.job.entry_path)
            .file_name()
            .and_then(|n| n.to_str())
            .filter(|n| !n.starts_with('.'))
            .ok_or_else(|| format!("attempt {key}: entry path {:?}", a.job.entry_path))?;
        let dir = self.config.state_dir.join(ENTRIES);
        tokio::fs::create_dir_all(&dir)
            .await
            .map_err(|e| format!("{}: {e}", dir.display()))?;
        let path = dir.join(format!("{}-{}-{name}", key.submission, key.number));
        let part = dir.join(format!("{}-{}.part", key.submission, key.number));
        let got = async {
            let mut r = self
                .call(reqwest::Method::GET, &Self::attempt_path(key, "entry"))
                .send()
                .await
                .map_err(|e| e.to_string())?;
            if !r.status().is_success() {
                return Err(self
                    .refusing(Some(key))
                    .read(r, "downloading the entry")
                    .await
                    .to_string());
            }
            let mut file = tokio::fs::File::create(&part)
                .await
                .map_err(|e| format!("{}: {e}", part.display()))?;
            while let Some(c) = r.chunk().await.map_err(|e| e.to_string())? {
                file.write_all(&c)
                    .await
                    .map_err(|e| format!("{}: {e}", part.display()))?;
            }
            file.flush()
                .await
                .map_err(|e| format!("{}: {e}", part.display()))?;
            drop(file);
            tokio::fs::rename(&part, &path)
                .await
                .map_err(|e| format!("{}: {e}", path.display()))
        }
        .await;
        match got {
            Ok(()) => Ok(path),
            Err(e) => {
                let _ = tokio::fs::remove_file(&part).await;
                Err(format!("downloading the entry of attempt {key}: {e}"))
            }
        }
    }

    async fn take_inner(&self, wait: Duration) -> Result<Option<Assignment>, DispatchError> {
        let deadline = Instant::now() + wait;
        // Whether to ask before waiting: not right after a notice's take.
        let mut look = true;
        loop {
            if look && let Some(a) = self.offer().await? {
                return self.fetch(a).await.map(Some);
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            let nap = (deadline - now).min(self.config.poll_every);
            match self.notice(nap).await {
                Some(n) => {
                    // The take the notice prompts, then the ack (before the download):
                    // a worker that dies between the two leaves the notice to another.
                    let taken = self.offer().await;
                    if let (Ok(None), None, Some(l)) =
                        (&taken, &self.config.challenges, self.listener.get())
                    {
                        l.stale(&n).await;
                    }
                    n.done().await;
                    if let Some(a) = taken? {
                        return self.fetch(a).await.map(Some);
                    }
                    look = false;
                }
                // A poll: no notice came within the nap.
                None => {
                    self.polls
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    look = true;
                }
            }
        }
    }

    /// The next job notice within `nap`, or `None` when the nap ends without one. While
    /// NATS is not reached yet (or fails), it keeps looking for the listener rather
    /// than sleeping the whole nap: a notice stored meanwhile is read once it is.
    async fn notice(&self, nap: Duration) -> Option<crate::Notice> {
        let until = Instant::now() + nap;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            match self.listener.get() {
                Some(l) => match l.wait(left).await {
                    Ok(n) => return n,
                    Err(e) => {
                        tracing::warn!("waiting for a job notice: {e}; polling meanwhile");
                        tokio::time::sleep(left.min(Duration::from_secs(1))).await;
                    }
                },
                None if self.awaits_notices => {
                    tokio::time::sleep(left.min(Duration::from_millis(500))).await;
                }
                None => {
                    tokio::time::sleep(left).await;
                    return None;
                }
            }
        }
    }

    async fn heartbeat_inner(
        &self,
        lease: &Lease,
        progress: &RunProgress,
    ) -> Result<Standing, DispatchError> {
        let r = self
            .call(
                reqwest::Method::POST,
                &Self::attempt_path(lease.attempt, "heartbeat"),
            )
            .json(progress)
            .timeout(lease.heartbeat_every.max(Duration::from_secs(1)))
            .send()
            .await;
        match answer::<Standing>(r, "heartbeat", &self.refusing(Some(lease.attempt))).await {
            // A disabled worker's attempts are over: as a local worker hears it.
            Err(DispatchError::Refused(WorkerRefusal::Disabled(name))) => Ok(Standing::Lost {
                why: format!("worker {name:?} was disabled"),
                state: None,
            }),
            other => other,
        }
    }

    /// Sends the attempt's result folder, if the worker wrote one, as a `.tar`,
    /// heartbeating meanwhile.
    async fn send_result(&self, lease: &Lease) -> Result<(), DispatchError> {
        let key = lease.attempt;
        let dir = dispatch::result_dir(&self.config.state_dir, key);
        if !tokio::fs::try_exists(&dir).await.unwrap_or(false) {
            return Ok(());
        }
        let archive = self
            .config
            .state_dir
            .join(OUTGOING)
            .join(format!("{}-{}.tar", key.submission, key.number));
        let packed = archive.clone();
        tokio::task::spawn_blocking(move || pack(&dir, &packed))
            .await
            .map_err(|e| unreachable("packing the result folder", e))?
            .map_err(|e| unreachable("packing the result folder", e))?;
        let sent = self
            .holding(lease, async {
                let file = tokio::fs::File::open(&archive)
                    .await
                    .map_err(|e| format!("{}: {e}", archive.display()))?;
                let len = file
                    .metadata()
                    .await
                    .map_err(|e| format!("{}: {e}", archive.display()))?
                    .len();
                self.call(reqwest::Method::PUT, &Self::attempt_path(key, "result"))
                    .header(reqwest::header::CONTENT_TYPE, "application/octet-stream")
                    .header(reqwest::header::CONTENT_LENGTH, len)
                    .body(reqwest::Body::from(file))
                    .send()
                    .await
                    .map_err(|e| e.to_string())
            })
            .await;
        let _ = tokio::fs::remove_file(&archive).await;
        let r = sent.map_err(|e| unreachable("sending the result folder", e))?;
        if !r.status().is_success() {
            return Err(self
                .refusing(Some(key))
                .read(r, "sending the result folder")
                .await);
        }
        Ok(())
    }

    async fn report_inner(
        &self,
        lease: &Lease,
        report: &Report,
        blame: Blame,
    ) -> Result<ResultId, DispatchError> {
        let key = lease.attempt;
        let fallback;
        let report = match self.send_result(lease).await {
            Ok(()) => report,
            // The server will not take this folder (too large, not an archive it
            // accepts): the judged outcome cannot stand without it, so the attempt is
            // reported as an `error` of this worker's, which the server retries.
            Err(DispatchError::Rejected(why)) if report.outcome != store::Outcome::Error => {
                tracing::error!(attempt = %key, "{why}");
                fallback = dispatch::error_report(format!("result folder refused: {why}"));
                &fallback
            }
            Err(DispatchError::Rejected(_)) => report,
            Err(e) => return Err(e),
        };
        let r = self
            .call(reqwest::Method::POST, &Self::attempt_path(key, "report"))
            .json(&ReportRequest {
                report: report.clone(),
                blame,
            })
            .timeout(Duration::from_secs(60))
            .send()
            .await;
        answer::<ReportAnswer>(r, "reporting", &self.refusing(Some(key)))
            .await
            .map(|a| a.result)
    }

    /// Removes the attempt's entry and result folder from this machine.
    async fn forget(&self, key: AttemptKey) {
        let dir = dispatch::result_dir(&self.config.state_dir, key);
        if let Err(e) = tokio::fs::remove_dir_all(&dir).await
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!("removing {}: {e}", dir.display());
        }
        // The submission's folder too, once its last attempt's is gone.
        if let Some(parent) = dir.parent() {
            let _ = tokio::fs::remove_dir(parent).await;
        }
        let entries = self.config.state_dir.join(ENTRIES);
        let prefix = format!("{}-{}-", key.submission, key.number);
        if let Ok(mut list) = tokio::fs::read_dir(&entries).await {
            while let Ok(Some(e)) = list.next_entry().await {
                if e.file_name().to_string_lossy().starts_with(&prefix) {
                    let _ = tokio::fs::remove_file(e.path()).await;
                }
            }
        }
    }
}

/// `dir` as a `.tar` at `archive`, everything under one folder `result/` (which the
/// server's unpacker takes off). Links are stored as links, never followed: the server
/// refuses them, so a link cannot carry a worker's file to the server.
fn pack(dir: &Path, archive: &Path) -> std::io::Result<()> {
    if let Some(parent) = archive.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let file = std::fs::File::create(archive)?;
    let mut b = tar::Builder::new(std::io::BufWriter::new(file));
    b.follow_symlinks(false);
    b.mode(tar::HeaderMode::Deterministic);
    b.append_dir_all("result", dir)?;
    b.into_inner()?
        .into_inner()
        .map_err(|e| e.into_error())?
        .sync_all()
}

impl Dispatch for RemoteDispatch {
    fn worker(&self) -> WorkerId {
        self.me.worker
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

    fn finished(&self, attempt: AttemptKey) -> BoxFuture<'_, ()> {
        Box::pin(self.forget(attempt))
    }
}
