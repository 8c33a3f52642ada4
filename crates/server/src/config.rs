//! The server's configuration ([`Config`]): where it keeps files, the limits on the
//! work a request may cause, and the hooks `physiojudge serve` gives it (who is told of
//! a queued submission, where running submissions' progress comes from, the queue of
//! remote workers).

use std::path::PathBuf;
use std::time::Duration;

use crate::{Connections, layout};

/// Called after a submission was queued (an upload, a requeue): how local workers are
/// woken at once (`dispatch::LocalQueue::wake`) rather than at their next poll.
#[derive(Clone)]
pub struct OnQueued(pub std::sync::Arc<dyn Fn() + Send + Sync>);

impl std::fmt::Debug for OnQueued {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OnQueued")
    }
}

/// How far a running attempt got, as its worker last said: what a submission's event
/// stream sends as `progress` events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunProgress {
    /// The attempt's number.
    pub attempt: u32,
    /// The stage under way (`prep`, `train`, `quiz`, `exam`, `score`).
    pub stage: String,
    /// Records of the stage done, of `total` (0: no per-record progress).
    pub done: usize,
    pub total: usize,
}

/// Where the server learns the progress of running submissions (the local workers of
/// `physiojudge serve`): `None` when it knows nothing of that submission.
#[derive(Clone)]
pub struct ProgressSource(
    pub std::sync::Arc<dyn Fn(uuid::Uuid) -> Option<RunProgress> + Send + Sync>,
);

impl std::fmt::Debug for ProgressSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressSource")
    }
}

/// Where the server keeps files and how it bounds the work a request may cause.
#[derive(Debug, Clone)]
pub struct Config {
    /// The state folder: entries as uploaded (`entries/`), result folders
    /// (`results/<submission>/<attempt>/`, written by the workers), uploads in progress
    /// (`incoming/`). See [`layout`].
    pub state_dir: PathBuf,
    /// The largest entry archive accepted, in bytes; past it an upload is refused with
    /// 413 while it streams. The judge unpacks at most 512 MiB
    /// (`judge::unpack::Caps::default`), so a larger archive could never be judged.
    pub max_upload_bytes: u64,
    /// The caps an upload is checked against (the judge's own, by default).
    pub unpack_caps: judge::unpack::Caps,
    /// Uploads checked (unpacked into a scratch folder) at once: each may write up to
    /// `unpack_caps.bytes` to disk and keep a core busy.
    pub concurrent_checks: usize,
    /// How often an event stream looks for new state changes. The changes are the
    /// store's history rows, written by whichever process made them (this server, a
    /// worker on another machine), so the stream polls the database.
    pub events_poll: Duration,
    /// Failed logins (`POST /api/v1/tokens`) allowed per user name per minute before
    /// 429: every try costs an argon2 hash, and guessing must stay slow. Each try is
    /// counted before its password is checked (and given back if it was right), so
    /// concurrent guesses cannot all pass. 0: no limit.
    pub login_tries_per_minute: u32,
    /// Failed logins allowed per client address per minute, whatever the names tried
    /// (`ClientAddr`). 0: no limit.
    pub login_tries_per_address_per_minute: u32,
    /// Accounts the web site's sign-up makes per client address per hour. 0: no limit.
    pub signups_per_address_per_hour: u32,
    /// Live event streams one user may hold open at once (429 past it). 0: no limit.
    pub streams_per_user: u32,
    /// Live event streams one client address may hold open at once. 0: no limit.
    pub streams_per_address: u32,
    /// The largest request body read whole (JSON), in bytes; past it, 413. Uploads and
    /// result folders stream and have their own limits.
    pub max_body_bytes: usize,
    /// Header-read and idle timeouts, and where the client's address comes from.
    pub connections: Connections,
    /// Told when a submission was queued, if anyone must be.
    pub on_queued: Option<OnQueued>,
    /// Where event streams find a running submission's progress, if anywhere.
    pub progress: Option<ProgressSource>,
    /// The queue remote workers take jobs from (`/api/v1/queue/…`); `None`: the server
    /// hands out no jobs (503 there), as when only local workers judge.
    pub queue: Option<dispatch::LocalQueue>,
    /// This server's name among replicas that share the state folder and the database
    /// (docs/service.md, "A fleet"): its uploads in progress live in
    /// `incoming/<replica>/`, and only those are cleared at its start. `None`: the one
    /// server of its state folder (`incoming/` is its own).
    pub replica: Option<String>,
}

impl Config {
    /// Where this server's uploads in progress and their checks live.
    pub(crate) fn incoming(&self) -> PathBuf {
        let dir = self.state_dir.join(layout::INCOMING);
        match &self.replica {
            Some(r) => dir.join(r),
            None => dir,
        }
    }

    /// Tells whoever asked ([`Config::on_queued`]) that a submission was queued.
    pub(crate) fn queued(&self) {
        if let Some(OnQueued(f)) = &self.on_queued {
            f();
        }
    }
}

impl Config {
    /// The defaults for a state folder.
    pub fn new(state_dir: impl Into<PathBuf>) -> Config {
        Config {
            state_dir: state_dir.into(),
            max_upload_bytes: 512 << 20,
            unpack_caps: judge::unpack::Caps::default(),
            concurrent_checks: 2,
            events_poll: Duration::from_secs(1),
            login_tries_per_minute: 10,
            login_tries_per_address_per_minute: 30,
            signups_per_address_per_hour: 20,
            streams_per_user: 16,
            streams_per_address: 64,
            max_body_bytes: 1 << 20,
            connections: Connections::default(),
            on_queued: None,
            progress: None,
            queue: None,
            replica: None,
        }
    }
}
