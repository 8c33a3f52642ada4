//! What can go wrong, said so that the caller (and the person behind it) knows what to
//! do. A refusal the rules make (a spent quota, a transition the state machine does not
//! allow, a result that came too late) is its own variant with the figures that decided
//! it; a fault of the database itself is [`Error::Database`].

use std::path::PathBuf;

use crate::model::{AttemptKey, QuotaStatus, State, SubmissionId, WorkerState};

/// Everything this crate can return as an error.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The database failed or refused in a way no rule below explains.
    #[error("database: {0}")]
    Database(#[source] sqlx::Error),

    /// The schema could not be brought up to date.
    #[error("migrating the database schema: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),

    /// `Store::connect` got a URL it does not know.
    #[error("unsupported database {0:?}: give a path, sqlite:PATH or postgres://…")]
    BadUrl(String),

    /// A record that was named does not exist.
    #[error("no {what} {id:?}")]
    NotFound { what: &'static str, id: String },

    /// A name or id that must be unique is taken.
    #[error("{what} {value:?} already exists")]
    Exists { what: &'static str, value: String },

    /// A user or team name reads the same as one already in its scope once both are
    /// NFKC-normalised and case-folded (`ALPHA`, a full-width `Ａlpha` and `Alpha`):
    /// `existing` is the name as that user or team spells it (docs/service.md, "Names").
    #[error("{what} {name:?} {}", if .name == .existing { "already exists".to_owned() } else {
        format!("is taken: it reads the same as the existing {:?} (names are compared \
                 after NFKC normalisation and case folding)", .existing)
    })]
    NameTaken {
        what: &'static str,
        name: String,
        existing: String,
    },

    /// An input is out of its domain (an empty name, closes before opens, …).
    #[error("invalid {field}: {problem}")]
    Invalid {
        field: &'static str,
        problem: String,
    },

    /// The database refused a state change that is not in the state machine
    /// (docs/service.md, "Data model"), or the submission was no longer in `from`.
    #[error("submission {submission}: {from} → {to} refused ({})", match .actual {
        Some(a) if a == from => "not an allowed transition".to_owned(),
        Some(a) => format!("it is {a}, not {from}"),
        None => "no such submission".to_owned(),
    })]
    Transition {
        submission: SubmissionId,
        from: State,
        to: State,
        /// The state the submission is in now (`None`: there is no such submission).
        actual: Option<State>,
    },

    /// The team's quota for the phase is spent: the figures say which limit and when a
    /// slot frees.
    #[error("quota spent: {}", .0.describe())]
    QuotaSpent(Box<QuotaStatus>),

    /// An upload's `Idempotency-Key` was used by the team, within its life, for another
    /// request (another entry, phase or method): a client's bug, never a retry.
    #[error(
        "the Idempotency-Key {key:?} was used for another upload (submission {submission}) \
         in the last 24 hours; a retry must send the same request, a new upload a new key"
    )]
    UploadKeyReused {
        key: String,
        submission: crate::SubmissionId,
    },

    /// The phase does not accept submissions (of this team) at this time. `closes` is
    /// the team's own close when it has an extension (`extended`).
    #[error("phase {phase:?} accepts submissions{} from {opens} until {closes}; it is {at}",
        if *.extended { " of your team (extended)" } else { "" })]
    PhaseClosed {
        phase: String,
        opens: chrono::DateTime<chrono::Utc>,
        closes: chrono::DateTime<chrono::Utc>,
        /// `closes` is the team's extension, not the phase's.
        extended: bool,
        at: chrono::DateTime<chrono::Utc>,
    },

    /// A user is in at most one team per challenge.
    #[error("user {user:?} is already in a team of challenge {challenge:?}")]
    AlreadyInTeam { user: String, challenge: String },

    /// The acting user is not a member of the team.
    #[error("user {user:?} is not a member of team {team:?}")]
    NotMember { user: String, team: String },

    /// A member may leave a team only while it has no submission: a team's entries
    /// stay its members' (docs/service.md, "Teams").
    #[error("team {team:?} has submissions: its members cannot leave it")]
    TeamHasSubmissions { team: String },

    /// The invitation was already answered, or is for someone else.
    #[error("invitation {0:?} is not pending for this user")]
    InvitationNotPending(String),

    /// Wrong name or password (which of the two is not said).
    #[error("wrong user name or password")]
    BadCredentials,

    /// The token is unknown or revoked.
    #[error("unknown or revoked token")]
    BadToken,

    /// The queue refused a worker's call: the worker (disabled, draining, of another
    /// build) or the attempt it named (not its running one). One type for the store and
    /// the queue backends (`dispatch`), so that they say the same and map alike.
    #[error(transparent)]
    Refused(#[from] WorkerRefusal),

    /// A worker's state change the worker state machine does not allow.
    #[error("worker {worker:?} is {from}: it cannot become {to}{}", match (.from, .to) {
        (f, t) if f == t => String::new(),
        (WorkerState::Disabled, WorkerState::Draining) => " (enable it first)".to_owned(),
        _ => String::new(),
    })]
    WorkerState {
        worker: String,
        from: WorkerState,
        to: WorkerState,
    },

    /// Pausing a challenge whose judging is paused, or resuming one whose is not.
    #[error("judging of challenge {challenge:?} is {}", if *.paused { "already paused" } else { "not paused" })]
    PauseState { challenge: String, paused: bool },

    /// The challenge's data folder no longer matches the manifest it was registered with.
    #[error("data folder {} differs from its manifest: {}", .path.display(), .differences.join("; "))]
    DataChanged {
        path: PathBuf,
        differences: Vec<String>,
    },

    /// A phase's final leaderboard cannot be published yet: submissions are still to be
    /// judged (queued, running or in `error`), or a team's final entry has no exam
    /// result under the phase's current versions. Each blocker is listed.
    #[error("phase {phase:?} cannot be published: {}", .blockers.iter().map(|b| b.to_string()).collect::<Vec<_>>().join("; "))]
    NotPublishable {
        phase: String,
        blockers: Vec<crate::model::PublishBlocker>,
    },

    /// A file of a data folder could not be read.
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A stored value does not read back as what this crate wrote: a database edited
    /// by hand, or a newer schema.
    #[error("stored record unreadable: {0}")]
    Corrupt(String),

    /// Hashing or checking a password failed (not a wrong password: that is
    /// [`Error::BadCredentials`]).
    #[error("password hashing: {0}")]
    Password(String),

    /// Too many password checks wait already: this one waited its longest
    /// ([`crate::Store::with_hashing`]) and was given up. Try again in `retry_after`
    /// seconds.
    #[error("the server is busy checking passwords: try again in {retry_after} s")]
    Busy { retry_after: u64 },

    /// The system's random source failed.
    #[error("random source: {0}")]
    Random(String),
}

/// Why the queue refuses a worker's call: the worker may not take jobs (disabled,
/// draining, of another build than the server's), or the attempt it names is not its
/// running one. The store decides these ([`Error::Refused`]); `dispatch` carries the
/// same value to a worker, local or remote, so every side says the same words.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WorkerRefusal {
    /// A result or a heartbeat for an attempt that is not the submission's current,
    /// running one of this worker: a duplicate, a late report after the lease lapsed
    /// and the reconciler moved on, or a stranger's. (A rescoring's replacement of an
    /// attempt's result whose live result moved on is refused so too.)
    #[error("attempt {attempt} refused: {why}")]
    Attempt { attempt: AttemptKey, why: String },

    /// The worker is disabled: it may not take jobs, heartbeat or report.
    #[error(
        "worker {0:?} is disabled: it takes no job and its heartbeats and reports are \
         refused until an organiser enables it (POST /api/v1/workers/{{id}}/enable)"
    )]
    Disabled(String),

    /// The worker is draining: it finishes its running attempts and takes no new job.
    #[error(
        "worker {0:?} is draining: it finishes its running attempts and takes no new job \
         until an organiser enables it (POST /api/v1/workers/{{id}}/enable)"
    )]
    Draining(String),

    /// The worker runs another judge build than the server: it may not take jobs.
    #[error(
        "worker {worker:?} runs {}, this server runs {server}: install the server's \
         physiojudge (the same version and runtime lock) on that machine and start the \
         worker again", match .announced {
            Some(b) => b.to_string(),
            None => "a judge it did not announce".to_owned(),
        }
    )]
    WrongVersion {
        worker: String,
        /// What the worker announced (`None`: nothing).
        announced: Option<crate::model::Build>,
        server: crate::model::Build,
    },
}

impl From<sqlx::Error> for Error {
    fn from(e: sqlx::Error) -> Error {
        Error::Database(e)
    }
}

impl Error {
    /// The database's own error, if this is one.
    pub(crate) fn db(&self) -> Option<&(dyn sqlx::error::DatabaseError + 'static)> {
        match self {
            Error::Database(sqlx::Error::Database(e)) => Some(e.as_ref()),
            _ => None,
        }
    }

    pub(crate) fn is_unique_violation(&self) -> bool {
        self.db().is_some_and(|e| e.is_unique_violation())
    }

    /// The state guard (a trigger of the migrations) refused a state change, or the
    /// history row's foreign key to `state_transitions` did.
    pub(crate) fn is_transition_refusal(&self) -> bool {
        self.db().is_some_and(|e| {
            e.message().contains("state_transition_refused")
                || (e.is_foreign_key_violation() && e.message().contains("state_transitions"))
        })
    }
}
