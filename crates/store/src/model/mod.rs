//! The records, as the rest of the platform sees them.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::error::Error;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $what:literal) => {
        $(#[$doc])*
        ///
        /// A UUID (version 7: it starts with its creation time), stored as text.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub uuid::Uuid);

        impl $name {
            pub(crate) fn new() -> $name {
                $name(uuid::Uuid::now_v7())
            }

            pub(crate) fn parse_stored(s: &str) -> Result<$name, Error> {
                s.parse()
                    .map_err(|_| Error::Corrupt(format!("{} id {s:?} is not a UUID", $what)))
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.hyphenated().fmt(f)
            }
        }

        impl FromStr for $name {
            type Err = uuid::Error;
            fn from_str(s: &str) -> Result<$name, uuid::Error> {
                uuid::Uuid::parse_str(s).map($name)
            }
        }

        impl From<$name> for crate::db::Val {
            fn from(id: $name) -> crate::db::Val {
                crate::db::Val::Text(Some(id.to_string()))
            }
        }
        impl From<&$name> for crate::db::Val {
            fn from(id: &$name) -> crate::db::Val {
                crate::db::Val::Text(Some(id.to_string()))
            }
        }
    };
}

id_type!(
    /// A user.
    UserId, "user"
);
id_type!(
    /// A worker (a machine that judges).
    WorkerId, "worker"
);
id_type!(
    /// A phase of a challenge.
    PhaseId, "phase"
);
id_type!(
    /// A team.
    TeamId, "team"
);
id_type!(
    /// An invitation to a team.
    InvitationId, "invitation"
);
id_type!(
    /// An organiser's announcement on a challenge's page.
    AnnouncementId, "announcement"
);
id_type!(
    /// A submission.
    SubmissionId, "submission"
);
id_type!(
    /// One stored result of an attempt.
    ResultId, "result"
);
id_type!(
    /// A rescoring of a challenge.
    RescoreId, "rescore"
);

/// An enum stored as one of a few words.
macro_rules! word_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $word:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum $name {
            $($(#[$vdoc])* $variant),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The word stored in the database (and used in the API).
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $word),+
                }
            }

            pub(crate) fn parse_stored(s: &str) -> Result<$name, Error> {
                match s {
                    $($word => Ok($name::$variant),)+
                    other => Err(Error::Corrupt(format!(
                        "{} {other:?} is not one of the known values",
                        stringify!($name)
                    ))),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl From<$name> for crate::db::Val {
            fn from(v: $name) -> crate::db::Val {
                crate::db::Val::Text(Some(v.as_str().to_owned()))
            }
        }
    };
}

word_enum!(
    /// What a user may do.
    Role {
        Participant = "participant",
        Organiser = "organiser",
    }
);

word_enum!(
    /// Where a submission is in its life (docs/service.md, "Data model"). The allowed
    /// changes are the rows of the `state_transitions` table; [`State::TRANSITIONS`] is
    /// the same list, for documentation and tests.
    State {
        /// Waiting for a worker (counts against the quota).
        Queued = "queued",
        /// A worker holds a lease on its current attempt (counts).
        Running = "running",
        /// Judged to the end with a score (counts).
        Scored = "scored",
        /// The entry's fault: a stage failed (counts).
        Failed = "failed",
        /// Ours: a lost worker, a judge fault, missing data (never counts); retried
        /// with a new attempt up to a limit.
        Error = "error",
        /// The team took it back while it was queued (never counts).
        Withdrawn = "withdrawn",
    }
);

impl State {
    /// The state machine: every allowed (from, to). `running → queued` is not in it: a
    /// lost run goes to `error`, and from there back to `queued` as a new attempt.
    pub const TRANSITIONS: &'static [(State, State)] = &[
        (State::Queued, State::Running),
        (State::Queued, State::Withdrawn),
        (State::Running, State::Scored),
        (State::Running, State::Failed),
        (State::Running, State::Error),
        (State::Error, State::Queued),
    ];

    /// Whether a submission in this state counts against its team's quota.
    pub fn counts_for_quota(self) -> bool {
        matches!(
            self,
            State::Queued | State::Running | State::Scored | State::Failed
        )
    }
}

word_enum!(
    /// Which split a phase ranks by.
    Split {
        Quiz = "quiz",
        Exam = "exam",
    }
);

word_enum!(
    /// Which of a team's scored submissions a phase's leaderboard shows.
    Rule {
        /// The best by the first ranking number (ties: the earliest).
        Best = "best",
        /// The most recently received.
        Latest = "latest",
    }
);

word_enum!(
    /// Which way a ranking number is better (as `judge`'s `Better` serialises).
    Better {
        Higher = "higher",
        Lower = "lower",
    }
);

word_enum!(
    /// How an attempt ended.
    Outcome {
        Scored = "scored",
        Failed = "failed",
        Error = "error",
    }
);

impl Outcome {
    /// The submission state this outcome moves a running submission to.
    pub fn state(self) -> State {
        match self {
            Outcome::Scored => State::Scored,
            Outcome::Failed => State::Failed,
            Outcome::Error => State::Error,
        }
    }
}

word_enum!(
    /// Where an invitation stands.
    InvitationState {
        Pending = "pending",
        Accepted = "accepted",
        Declined = "declined",
    }
);

/// A user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct User {
    pub id: UserId,
    pub name: String,
    pub role: Role,
    /// Whether the user can log in with a password (else with tokens only).
    pub has_password: bool,
    pub created_at: DateTime<Utc>,
}

word_enum!(
    /// What a worker may do (docs/service.md, "Workers"). The allowed changes are
    /// [`WorkerState::TRANSITIONS`], also the rows of the table `worker_transitions`
    /// that each `worker_history` row names.
    WorkerState {
        /// Takes jobs.
        Enabled = "enabled",
        /// Finishes its running attempts (heartbeats and reports are accepted) and
        /// takes no new job.
        Draining = "draining",
        /// Takes nothing; its heartbeats and reports are refused. Disabling it ends its
        /// running attempts as `error` (not charged, retried by another worker).
        Disabled = "disabled",
    }
);

impl WorkerState {
    /// Every allowed (from, to). A disabled worker is enabled before it may drain
    /// (draining is for a worker that has runs to finish).
    pub const TRANSITIONS: &'static [(WorkerState, WorkerState)] = &[
        (WorkerState::Enabled, WorkerState::Draining),
        (WorkerState::Enabled, WorkerState::Disabled),
        (WorkerState::Draining, WorkerState::Enabled),
        (WorkerState::Draining, WorkerState::Disabled),
        (WorkerState::Disabled, WorkerState::Enabled),
    ];

    /// Whether a worker in this state may become `to`.
    pub fn can_become(self, to: WorkerState) -> bool {
        WorkerState::TRANSITIONS.contains(&(self, to))
    }

    /// Whether a worker in this state is handed new jobs.
    pub fn takes_jobs(self) -> bool {
        self == WorkerState::Enabled
    }
}

/// Why a worker's state changed: stored as JSON with the worker and in its history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WorkerStateReason {
    /// An organiser (or an operator at the command line) decided, in these words.
    Organiser { why: String },
    /// Its last `count` attempts (of those that ended with a verdict or an error of
    /// its own) were errors of its own ([`crate::Policy::worker_error_limit`]).
    RepeatedErrors { count: u32, last: Vec<AttemptKey> },
}

impl fmt::Display for WorkerStateReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WorkerStateReason::Organiser { why } => f.write_str(why),
            WorkerStateReason::RepeatedErrors { count, last } => {
                let list: Vec<String> = last.iter().map(|k| k.to_string()).collect();
                write!(
                    f,
                    "disabled automatically: its last {count} attempts ended in errors of \
                     its own ({})",
                    list.join("; ")
                )
            }
        }
    }
}

/// The judge a worker runs: a worker of another build than the server's is refused.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Build {
    /// The judge's version (`physiojudge --version`).
    pub judge_version: String,
    /// The id of the runtime lock the judge installs entries' packages from.
    pub runtime_lock: String,
}

impl fmt::Display for Build {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "judge {} with runtime lock {}",
            self.judge_version, self.runtime_lock
        )
    }
}

/// What a worker says of itself before it takes jobs ([`crate::Store::announce_worker`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Announcement {
    pub build: Build,
    /// Jobs it judges at once, if it says.
    pub slots: Option<u32>,
    /// Its machine's name, if it says.
    pub host: Option<String>,
    /// The worker process's own id, new at every start (1 to 64 visible ASCII
    /// characters): what an earlier process of the same worker still held is ended at
    /// once, not after its lease (docs/service.md, "A fleet"). `None`: a worker that
    /// does not say (the server's own slots, which reclaim at start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
}

/// The last time a worker was refused for its build, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Refusal {
    pub at: DateTime<Utc>,
    pub message: String,
}

/// A worker: a machine that takes jobs and reports results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Worker {
    pub id: WorkerId,
    pub name: String,
    pub created_at: DateTime<Utc>,
    /// The last time it took a job, heartbeat or reported.
    pub last_seen_at: Option<DateTime<Utc>>,
    pub state: WorkerState,
    /// When, by whom (`None`: automatically, or at the command line) and why its state
    /// last changed; `None` if it never did.
    pub state_changed_at: Option<DateTime<Utc>>,
    pub state_changed_by: Option<UserId>,
    pub state_reason: Option<WorkerStateReason>,
    /// What it announced last (`None`: it never did).
    pub build: Option<Build>,
    pub slots: Option<u32>,
    pub host: Option<String>,
    pub announced_at: Option<DateTime<Utc>>,
    /// Its last refusal for another build, until it announces the server's.
    pub refusal: Option<Refusal>,
}

/// A worker as organisers see it ([`crate::Store::worker_statuses`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerStatus {
    pub worker: Worker,
    /// Its attempts running now.
    pub running: Vec<AttemptKey>,
    /// Attempts that ended in an error of its own in the last 24 hours.
    pub recent_errors: u32,
    /// Its latest attempts in a row that ended in errors of its own, since its state
    /// last changed: at [`crate::Policy::worker_error_limit`] it is disabled.
    pub error_streak: u32,
}

/// One change of a worker's state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerHistoryEntry {
    pub seq: u32,
    pub from: WorkerState,
    pub to: WorkerState,
    pub at: DateTime<Utc>,
    pub by: Option<UserId>,
    pub reason: WorkerStateReason,
}

word_enum!(
    /// Whose an attempt's `error` was, for a worker's record of repeated errors.
    Blame {
        /// The worker's: a judge or machine fault, a lost lease. Counts towards
        /// disabling it.
        Worker = "worker",
        /// Not the worker's: the run was stopped (a shutdown), an organiser disabled
        /// the worker, the platform could not hand the job out, the process restarted.
        Elsewhere = "elsewhere",
    }
);

/// A challenge whose judging is paused: since when, by whom, why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pause {
    pub at: DateTime<Utc>,
    pub by: Option<UserId>,
    pub why: String,
}

/// Who a token speaks for. A worker token is good only for the queue's functions
/// (`take_job`, `heartbeat`, `report`), which take a [`Worker`]'s id and nothing else.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Principal {
    User(User),
    /// Boxed: a worker's record is large beside a user's.
    Worker(Box<Worker>),
}

/// How a challenge is defined.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum Definition {
    /// A challenge built into the judge, by id (`cpsc2021`, …).
    Builtin(String),
    /// The text of a TOML definition (docs/judge.md, "Challenge definitions").
    Toml(String),
}

impl Definition {
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Definition::Builtin(_) => "builtin",
            Definition::Toml(_) => "toml",
        }
    }

    pub(crate) fn text(&self) -> &str {
        match self {
            Definition::Builtin(s) | Definition::Toml(s) => s,
        }
    }
}

/// A registered challenge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Challenge {
    pub id: String,
    pub title: String,
    pub definition: Definition,
    /// sha256 of the definition's text (the built-in id for a built-in one).
    pub definition_sha256: String,
    /// The data folder on the server.
    pub data_path: String,
    pub manifest: crate::manifest::Manifest,
    pub created_at: DateTime<Utc>,
    /// Set while its judging is paused: its submissions are accepted and queued, and
    /// no worker takes one.
    pub paused: Option<Pause>,
}

/// A phase's quota per team. `None` is no limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Quota {
    /// Submissions over the whole phase.
    pub total: Option<u32>,
    /// Submissions per UTC day.
    pub per_day: Option<u32>,
    /// Submissions queued or running at once.
    pub max_concurrent: Option<u32>,
}

/// What a new phase is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewPhase {
    pub name: String,
    pub opens: DateTime<Utc>,
    pub closes: DateTime<Utc>,
    pub selection_closes: Option<DateTime<Utc>>,
    pub quota: Quota,
    pub scored_split: Split,
    /// Whether exam scores show before the phase closes.
    pub show_exam: bool,
    pub rule: Rule,
}

/// A phase of a challenge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Phase {
    pub id: PhaseId,
    pub challenge: String,
    pub name: String,
    pub opens: DateTime<Utc>,
    pub closes: DateTime<Utc>,
    pub selection_closes: Option<DateTime<Utc>>,
    pub quota: Quota,
    pub scored_split: Split,
    pub show_exam: bool,
    pub rule: Rule,
}

/// A team (of one challenge).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Team {
    pub id: TeamId,
    pub challenge: String,
    pub name: String,
    /// Left off leaderboards (organisers' teams, say).
    pub hidden: bool,
    /// Left off leaderboards, with a reason.
    pub disqualified: bool,
    /// Why it is hidden or disqualified.
    pub reason: Option<String>,
    /// A reference entry of the organisers': shown on leaderboards with a badge
    /// ([`crate::Store::set_team_baseline`]).
    pub baseline: bool,
    pub created_at: DateTime<Utc>,
}

/// An invitation to join a team.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Invitation {
    pub id: InvitationId,
    pub team: TeamId,
    pub user: UserId,
    pub invited_by: UserId,
    pub state: InvitationState,
    pub created_at: DateTime<Utc>,
}

/// What a new submission is (its entry already stored by the caller).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewSubmission {
    pub team: TeamId,
    pub phase: PhaseId,
    /// sha256 of the entry archive as uploaded, lower-case hex.
    pub entry_sha256: String,
    /// Where the archive is, relative to the state folder.
    pub entry_path: String,
    pub method_name: Option<String>,
    pub method_description: Option<String>,
}

/// An upload's `Idempotency-Key` and the fingerprint of the request that carried it
/// (docs/service.md, "Uploads"): a retry with the same key and fingerprint, within
/// [`UPLOAD_KEY_LIFE_HOURS`], is answered with the submission the first one made; the
/// same key with another fingerprint is [`crate::Error::UploadKeyReused`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadKey {
    /// The client's key: 1 to 255 visible ASCII characters.
    pub key: String,
    /// sha256 (lower-case hex) of what makes the request this one.
    pub request_sha256: String,
}

/// How long an upload's key is remembered for its team.
pub const UPLOAD_KEY_LIFE_HOURS: i64 = 24;

impl UploadKey {
    /// A key as a client sent it, refused unless 1 to 255 visible ASCII characters.
    pub fn new(key: &str, request_sha256: String) -> Result<UploadKey, crate::Error> {
        if key.is_empty() || key.len() > 255 || !key.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(crate::Error::Invalid {
                field: "Idempotency-Key",
                problem: "give 1 to 255 visible ASCII characters (a UUID, say)".to_owned(),
            });
        }
        Ok(UploadKey {
            key: key.to_owned(),
            request_sha256,
        })
    }
}

/// What [`crate::Store::submit_keyed`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum Submitted {
    /// A new submission, charged to the quota.
    New(Submission),
    /// The upload key's earlier submission: nothing new recorded, nothing charged.
    Replayed(Submission),
}

impl Submitted {
    pub fn submission(&self) -> &Submission {
        match self {
            Submitted::New(s) | Submitted::Replayed(s) => s,
        }
    }
}

/// A submission.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Submission {
    pub id: SubmissionId,
    pub challenge: String,
    pub team: TeamId,
    pub phase: PhaseId,
    pub entry_sha256: String,
    pub entry_path: String,
    /// When its upload completed: the time deadlines and quotas go by.
    pub received_at: DateTime<Utc>,
    pub state: State,
    pub state_changed_at: DateTime<Utc>,
    /// The number of its current attempt (0: never taken).
    pub attempt: u32,
    /// The team's chosen final entry for the phase.
    pub selected: bool,
    pub method_name: Option<String>,
    pub method_description: Option<String>,
}

/// Names one attempt: a submission and the attempt's number (1, 2, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AttemptKey {
    pub submission: SubmissionId,
    pub number: u32,
}

impl fmt::Display for AttemptKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} of submission {}", self.number, self.submission)
    }
}

/// One run of a submission by a worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    pub key: AttemptKey,
    pub worker: WorkerId,
    pub started_at: DateTime<Utc>,
    pub lease_expires_at: DateTime<Utc>,
    pub ended_at: Option<DateTime<Utc>>,
    pub outcome: Option<Outcome>,
}

/// Why a submission's state changed: stored as JSON with each history row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Reason {
    /// It was received.
    Submitted,
    /// A worker took it.
    Taken { worker: WorkerId, attempt: u32 },
    /// The team withdrew it.
    Withdrawn { by: Option<UserId> },
    /// The worker reported an outcome.
    Reported { worker: WorkerId, attempt: u32 },
    /// The worker reported an error of the judge's (not the entry's doing).
    JudgeError {
        worker: WorkerId,
        attempt: u32,
        message: String,
    },
    /// The attempt's lease lapsed: the worker is taken to be lost.
    WorkerLost { worker: WorkerId, attempt: u32 },
    /// The worker's process started again while the attempt ran: the run died with the
    /// old process ([`crate::Store::reclaim_worker`]).
    WorkerRestarted { worker: WorkerId, attempt: u32 },
    /// An organiser disabled the worker (or it was disabled for repeated errors) while
    /// the attempt ran.
    WorkerDisabled { worker: WorkerId, attempt: u32 },
    /// Retried automatically after an error, as attempt `next_attempt`.
    Retry { next_attempt: u32 },
    /// An organiser requeued it.
    Requeued { by: Option<UserId>, why: String },
}

/// One change of a submission's state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryEntry {
    pub seq: u32,
    /// `None` for its creation.
    pub from: Option<State>,
    pub to: State,
    pub at: DateTime<Utc>,
    pub reason: Reason,
}

/// Which quota limit stops a new submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QuotaLimit {
    Total,
    PerDay,
    MaxConcurrent,
}

/// What remains of a team's quota in a phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuotaStatus {
    pub quota: Quota,
    /// Counted submissions over the phase.
    pub used_total: u32,
    /// Counted submissions received this UTC day.
    pub used_today: u32,
    /// Queued or running now.
    pub running: u32,
    /// `None`: no total limit.
    pub total_left: Option<u32>,
    /// `None`: no daily limit.
    pub today_left: Option<u32>,
    /// Every limit that is spent now (empty: a submission would be accepted).
    pub spent: Vec<QuotaLimit>,
    /// When the next submission can be accepted: now if nothing is spent; the next UTC
    /// midnight if the day's quota is (or later, if a run must end too); `None` when it
    /// cannot be known (only a run ending frees a slot) or never comes (total spent).
    pub next_slot_at: Option<DateTime<Utc>>,
    /// The time these figures are for.
    pub at: DateTime<Utc>,
    /// Whether `quota` is the phase's with the team's own limits in place of some
    /// ([`crate::Store::set_quota_override`]).
    #[serde(default)]
    pub overridden: bool,
}

impl QuotaStatus {
    pub(crate) fn describe(&self) -> String {
        let mut parts = Vec::new();
        for l in &self.spent {
            parts.push(match l {
                QuotaLimit::Total => format!(
                    "{} of {} submissions in the phase used",
                    self.used_total,
                    self.quota.total.unwrap_or(0)
                ),
                QuotaLimit::PerDay => format!(
                    "{} of {} submissions today (UTC) used",
                    self.used_today,
                    self.quota.per_day.unwrap_or(0)
                ),
                QuotaLimit::MaxConcurrent => format!(
                    "{} of {} submissions queued or running",
                    self.running,
                    self.quota.max_concurrent.unwrap_or(0)
                ),
            });
        }
        let next = match self.next_slot_at {
            Some(t) => format!("next slot at {}", t.to_rfc3339()),
            None if self.spent.contains(&QuotaLimit::Total) => "no more slots".to_owned(),
            None => "next slot when a queued or running submission ends".to_owned(),
        };
        format!("{}; {next}", parts.join(", "))
    }
}

/// One ranking number of a result, exactly as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// Its key in the scorer's report (`score`, `outcome_cost`, …).
    pub key: String,
    /// `None`: the scorer gave no finite figure.
    pub value: Option<f64>,
    pub better: Better,
}

/// A worker's report of how an attempt ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub outcome: Outcome,
    /// The judge's `result.json`, as text. Required for `scored` and `failed`; may be
    /// absent for `error` (the judge may not have got that far).
    pub result_json: Option<String>,
    /// The organiser's private exam score (JSON), if any.
    pub private_json: Option<String>,
    /// The exam's ranking numbers, the first the one a leaderboard ranks by (scored
    /// only), exactly as the scorer wrote them.
    pub figures: Vec<Figure>,
    /// The quiz's ranking numbers (same keys and directions), exactly as the scorer
    /// wrote them: what a phase whose scored split is the quiz ranks by (scored only;
    /// empty when the quiz had no records or was not scored).
    #[serde(default)]
    pub quiz_figures: Vec<Figure>,
    pub scorer_version: String,
    pub judge_version: String,
    /// For `error`: what went wrong (kept in the history).
    pub message: Option<String>,
    /// The Python runtime's lock the entry ran with (`judge::runtime_lock_id`).
    #[serde(default)]
    pub runtime_lock: Option<String>,
    /// What the scorer found odd about the outputs ("degenerate output: …"); shown to
    /// the team.
    #[serde(default)]
    pub warnings: Vec<String>,
}

/// A stored result of an attempt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultRecord {
    pub id: ResultId,
    pub attempt: AttemptKey,
    pub outcome: Outcome,
    pub result_json: Option<String>,
    pub private_json: Option<String>,
    /// The exam's ranking numbers.
    pub figures: Vec<Figure>,
    /// The quiz's ranking numbers (none for results stored before they were kept).
    pub quiz_figures: Vec<Figure>,
    pub scorer_version: String,
    pub judge_version: String,
    pub created_at: DateTime<Utc>,
    /// Superseded by a rescoring (kept, never deleted).
    pub replaced: bool,
    /// The Python runtime's lock id the entry ran with (none: not reported).
    pub runtime_lock: Option<String>,
    /// The challenge definition, data manifest and entry it was judged with (the
    /// store records them from the submission and its challenge when it accepts the
    /// result: the worker checked both before judging).
    pub definition_sha256: Option<String>,
    pub manifest_sha256: Option<String>,
    pub entry_sha256: Option<String>,
    /// The judge's time over all stages, in whole seconds.
    pub run_time_s: Option<f64>,
    pub warnings: Vec<String>,
    /// The rescoring that made it, if one did.
    pub rescore: Option<RescoreId>,
}

/// A job handed to a worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Job {
    pub attempt: AttemptKey,
    pub challenge: String,
    pub phase: PhaseId,
    pub team: TeamId,
    pub entry_sha256: String,
    pub entry_path: String,
    pub lease_expires_at: DateTime<Utc>,
}

/// One row of a leaderboard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LeaderboardRow {
    /// 1-based; equal first figures share a rank (1, 1, 3, …).
    pub rank: u32,
    pub team: TeamId,
    pub team_name: String,
    pub submission: SubmissionId,
    pub received_at: DateTime<Utc>,
    /// Every ranking number of the result on the phase's scored split
    /// ([`Leaderboard::split`]), the first the one ranked by.
    pub figures: Vec<Figure>,
    pub method_name: Option<String>,
    /// The judge's time over all stages, in whole seconds.
    #[serde(default)]
    pub run_time_s: Option<f64>,
    /// The team is a baseline (shown with a badge). A publication made before
    /// baselines were marked has none.
    #[serde(default)]
    pub baseline: bool,
    /// The entry's language as its result names it (`python`, `matlab`, `other`);
    /// `None` for a result that names none (made before the judge told languages).
    #[serde(default)]
    pub language: Option<String>,
}

fn exam_split() -> Split {
    Split::Exam
}

/// A phase's leaderboard, derived from the stored results when asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Leaderboard {
    pub phase: PhaseId,
    /// The phase's rule (which a leaderboard of final entries does not follow).
    pub rule: Rule,
    /// Each team's selected submission (else its best), not the rule's choice.
    pub final_entries: bool,
    /// The split whose figures rank it: the phase's scored split (a publication made
    /// before figures were kept per split ranked by the exam's).
    #[serde(default = "exam_split")]
    pub split: Split,
    pub rows: Vec<LeaderboardRow>,
}

/// What a reconciler pass did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Reconciled {
    /// Attempts whose lease had lapsed, now ended as `error`.
    pub lost: Vec<AttemptKey>,
    /// Of those, the submissions queued again for a new attempt.
    pub requeued: Vec<SubmissionId>,
    /// Of those, the submissions left in `error`: they used every attempt.
    pub gave_up: Vec<SubmissionId>,
}

/// How many submissions failed, or attempts went wrong, for one reason
/// ([`crate::Store::failure_counts`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailureCount {
    /// `failed` (submissions now failed, by their failing stage's reason) or `error`
    /// (every change to `error` so far, by its history reason).
    pub state: State,
    /// The reason's `kind` (`run`, `unpack`, …; `worker_lost`, `judge_error`), or
    /// `unknown`.
    pub kind: String,
    pub count: u64,
}

mod publishing;
pub use publishing::*;
