//! What the API takes and gives, as the OpenAPI document describes it. The store's
//! records stay the store's; these are the shapes of the contract (docs/architecture.md,
//! "HTTP API"), converted at the edge so that the two can change apart.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use uuid::Uuid;

macro_rules! word {
    ($(#[$doc:meta])* $name:ident <=> $store:ident { $($variant:ident),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
        #[serde(rename_all = "snake_case")]
        pub enum $name { $($variant),+ }

        impl From<store::$store> for $name {
            fn from(v: store::$store) -> $name {
                match v { $(store::$store::$variant => $name::$variant),+ }
            }
        }

        impl From<$name> for store::$store {
            fn from(v: $name) -> store::$store {
                match v { $($name::$variant => store::$store::$variant),+ }
            }
        }
    };
}

word!(
    /// What a user may do.
    RoleName <=> Role { Participant, Organiser }
);
word!(
    /// Which split a phase ranks by.
    SplitName <=> Split { Quiz, Exam }
);
word!(
    /// Which of a team's scored submissions a phase's leaderboard shows.
    RuleName <=> Rule { Best, Latest }
);
word!(
    /// Where a submission is in its life: `queued → running → scored | failed | error`,
    /// `queued → withdrawn`, `error → queued` (docs/service.md).
    StateName <=> State { Queued, Running, Scored, Failed, Error, Withdrawn }
);
word!(
    /// Which way a ranking number is better.
    BetterName <=> Better { Higher, Lower }
);
word!(
    /// What a worker may do: `enabled` takes jobs; `draining` finishes its running
    /// attempts and takes no new job; `disabled` takes nothing (docs/service.md,
    /// "Workers").
    WorkerStateName <=> WorkerState { Enabled, Draining, Disabled }
);

/// The error object every refusal carries. Refusals decided by figures carry them too:
/// `quota` and `next_slot_at` (409 `quota_spent`), `phase`, `opens`, `closes`, `at`
/// (409 `phase_closed`), `state` (409 `state_conflict`).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ErrorDetail {
    /// Stable and machine-readable: `bad_request`, `unauthenticated`, `bad_token`,
    /// `bad_credentials`, `worker_token`, `forbidden`, `not_member`, `not_found`,
    /// `exists`, `already_in_team`, `invitation_not_pending`, `state_conflict`,
    /// `quota_spent`, `phase_closed`, `no_open_phase`, `too_large`, `invalid`,
    /// `invalid_entry`, `rate_limited`, `internal`, `worker_state`, `pause_state`,
    /// `worker_draining`, `wrong_version`, …
    pub code: String,
    /// For the person.
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quota: Option<QuotaView>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_slot_at: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opens: Option<DateTime<Utc>>,
    /// For `phase_closed`: the caller's team's own close when it has an extension
    /// (`extended` true), else the phase's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closes: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extended: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<StateName>,
    /// With `worker_state`: the worker's state now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_state: Option<WorkerStateName>,
    /// With `pause_state`: whether the challenge's judging is paused now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judging_paused: Option<bool>,
}

// ---- accounts ----

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewUser {
    /// One line, at most 100 characters.
    #[schema(min_length = 1, max_length = 100)]
    pub name: String,
    /// Without one the user signs in with tokens only.
    #[serde(default)]
    #[schema(min_length = 8, max_length = 1024)]
    pub password: Option<String>,
    pub role: RoleName,
}

/// A new user and a token for it (shown once).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct CreatedUser {
    pub id: Uuid,
    pub name: String,
    pub role: RoleName,
    pub token: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct UserView {
    pub id: Uuid,
    pub name: String,
    pub role: RoleName,
}

impl From<&store::User> for UserView {
    fn from(u: &store::User) -> UserView {
        UserView {
            id: u.id.0,
            name: u.name.clone(),
            role: u.role.into(),
        }
    }
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Login {
    pub name: String,
    pub password: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct TokenView {
    /// `pj_` and 64 hex digits; shown once, kept hashed.
    pub token: String,
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewWorker {
    #[schema(min_length = 1, max_length = 100)]
    pub name: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct CreatedWorker {
    pub id: Uuid,
    pub name: String,
    /// Good only for taking jobs and reporting their results.
    pub token: String,
}

// ---- teams ----

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewTeam {
    /// One line, at most 100 characters; shown on leaderboards.
    #[schema(min_length = 1, max_length = 100)]
    pub name: String,
    /// The challenge's id.
    pub challenge: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct TeamView {
    pub id: Uuid,
    pub challenge: String,
    pub name: String,
    /// Left off leaderboards (organisers' teams, unless marked baseline).
    pub hidden: bool,
    pub disqualified: bool,
    /// A reference entry of the organisers': shown on leaderboards with a badge.
    pub baseline: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub members: Vec<UserView>,
}

impl TeamView {
    pub fn new(t: &store::Team, members: &[store::User]) -> TeamView {
        TeamView {
            id: t.id.0,
            challenge: t.challenge.clone(),
            name: t.name.clone(),
            hidden: t.hidden,
            disqualified: t.disqualified,
            baseline: t.baseline,
            reason: t.reason.clone(),
            members: members.iter().map(UserView::from).collect(),
        }
    }
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewInvitation {
    /// The invitee: a user's name or id.
    pub user: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum InvitationStateName {
    Pending,
    Accepted,
    Declined,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct InvitationView {
    pub id: Uuid,
    pub team: Uuid,
    pub user: Uuid,
    pub invited_by: Uuid,
    pub state: InvitationStateName,
    pub created_at: DateTime<Utc>,
}

impl From<&store::Invitation> for InvitationView {
    fn from(i: &store::Invitation) -> InvitationView {
        InvitationView {
            id: i.id.0,
            team: i.team.0,
            user: i.user.0,
            invited_by: i.invited_by.0,
            state: match i.state {
                store::InvitationState::Pending => InvitationStateName::Pending,
                store::InvitationState::Accepted => InvitationStateName::Accepted,
                store::InvitationState::Declined => InvitationStateName::Declined,
            },
            created_at: i.created_at,
        }
    }
}

// ---- challenges and phases ----

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewChallenge {
    #[schema(min_length = 1, max_length = 64, pattern = "^[a-z0-9_-]+$")]
    pub id: String,
    /// A built-in challenge's id (`cpsc2021`, `cinc2017`, `physionet2022`,
    /// `p300speller`) or the text of a TOML definition whose `id` is `id`.
    pub definition: String,
    /// The data folder, a path on the server; pinned by a manifest of its files'
    /// sha256 when the challenge is created.
    pub data: String,
    #[serde(default)]
    pub title: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DefinitionKind {
    Builtin,
    Toml,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct RankingView {
    /// The number's key in the scorer's report and in a row's `scores`.
    pub key: String,
    /// What people call it ("mean F1 of N, A and O").
    #[serde(default)]
    pub name: String,
    /// Its unit, when it has one ("bits/min").
    #[serde(default)]
    pub unit: Option<String>,
    pub better: BetterName,
    /// The least value it can take, when it has one (0 for an F1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    /// The greatest value it can take, when it has one (1 for an F1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ChallengeView {
    pub id: String,
    pub title: String,
    pub definition_kind: DefinitionKind,
    pub definition_sha256: String,
    /// The hash of the data folder's manifest (docs/service.md).
    pub manifest_sha256: String,
    /// Files in the data folder.
    pub files: usize,
    /// The data folder on the server (organisers only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_path: Option<String>,
    /// Decimals of the exam's ranking numbers a team is shown.
    pub score_precision: u32,
    /// The numbers entries are ranked by, the first the one the leaderboard sorts by.
    pub ranking: Vec<RankingView>,
    pub created_at: DateTime<Utc>,
    /// By opening time (in the list of challenges too).
    pub phases: Vec<PhaseView>,
    /// Whether its judging is paused: submissions are still accepted and queued, and
    /// no worker takes one until an organiser resumes judging.
    pub judging_paused: bool,
    /// Since when it is paused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_at: Option<DateTime<Utc>>,
    /// Why, in the organiser's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pause_reason: Option<String>,
}

/// A phase's quota per team: a number (the total over the phase) or the limits.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum QuotaInput {
    Total(u32),
    Limits(QuotaLimits),
}

/// Each limit absent or null is no limit.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct QuotaLimits {
    #[serde(default)]
    pub total: Option<u32>,
    /// Per UTC day (by the time the upload completed).
    #[serde(default)]
    pub per_day: Option<u32>,
    /// Queued or running at once.
    #[serde(default)]
    pub max_concurrent: Option<u32>,
}

impl From<store::Quota> for QuotaLimits {
    fn from(q: store::Quota) -> QuotaLimits {
        QuotaLimits {
            total: q.total,
            per_day: q.per_day,
            max_concurrent: q.max_concurrent,
        }
    }
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewPhase {
    #[schema(min_length = 1, max_length = 100)]
    pub name: String,
    pub opens: DateTime<Utc>,
    pub closes: DateTime<Utc>,
    #[serde(default)]
    pub selection_closes: Option<DateTime<Utc>>,
    /// Absent: no limit.
    #[serde(default)]
    pub quota: Option<QuotaInput>,
    pub scored_split: SplitName,
    /// Whether teams see exam scores before the phase closes.
    pub show_exam: bool,
    pub rule: RuleName,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct PhaseView {
    pub id: Uuid,
    pub challenge: String,
    pub name: String,
    pub opens: DateTime<Utc>,
    pub closes: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selection_closes: Option<DateTime<Utc>>,
    pub quota: QuotaLimits,
    pub scored_split: SplitName,
    pub show_exam: bool,
    pub rule: RuleName,
    /// Whether it accepts submissions now (from the caller's team, when it has an
    /// extension).
    pub open: bool,
    /// The caller's team's own close of the phase, when an organiser granted it an
    /// extension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_closes: Option<DateTime<Utc>>,
}

impl PhaseView {
    pub fn new(p: &store::Phase, now: DateTime<Utc>) -> PhaseView {
        PhaseView {
            id: p.id.0,
            challenge: p.challenge.clone(),
            name: p.name.clone(),
            opens: p.opens,
            closes: p.closes,
            selection_closes: p.selection_closes,
            quota: p.quota.into(),
            scored_split: p.scored_split.into(),
            show_exam: p.show_exam,
            rule: p.rule.into(),
            open: p.opens <= now && now < p.closes,
            team_closes: None,
        }
    }

    /// The phase as a team with this extension sees it.
    pub fn for_team(
        p: &store::Phase,
        extension: Option<&store::Extension>,
        now: DateTime<Utc>,
    ) -> PhaseView {
        let mut v = PhaseView::new(p, now);
        if let Some(e) = extension {
            v.team_closes = Some(p.closes_for(Some(e)));
            v.open = p.check_open(Some(e), now).is_ok();
        }
        v
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum QuotaLimitName {
    Total,
    PerDay,
    MaxConcurrent,
}

/// What remains of a team's quota in a phase.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct QuotaView {
    /// The phase's name (absent inside an error, which names it elsewhere).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// Null: no total limit.
    pub total_left: Option<u32>,
    /// Null: no daily limit.
    pub today_left: Option<u32>,
    /// Queued or running now.
    pub running: u32,
    /// Null: no limit.
    pub max_concurrent: Option<u32>,
    /// When the next submission can be accepted: now if nothing is spent; the next UTC
    /// midnight if the day's quota is; null when only a run ending frees a slot, or
    /// when the total is spent.
    pub next_slot_at: Option<DateTime<Utc>>,
    pub used_total: u32,
    pub used_today: u32,
    /// The limits spent now (empty: an upload would be accepted).
    pub spent: Vec<QuotaLimitName>,
    /// The limits in force: the phase's, with the team's own in place of some when
    /// an organiser overrode them (`overridden`).
    pub limits: QuotaLimits,
    pub overridden: bool,
    /// When the phase closes for the team: its extension's close (`extended`), else
    /// the phase's (absent inside an error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closes: Option<DateTime<Utc>>,
    #[serde(default)]
    pub extended: bool,
    /// The time these figures are for.
    pub at: DateTime<Utc>,
}

impl QuotaView {
    pub fn from_status(phase: Option<&str>, s: &store::QuotaStatus) -> QuotaView {
        QuotaView {
            phase: phase.map(str::to_owned),
            total_left: s.total_left,
            today_left: s.today_left,
            running: s.running,
            max_concurrent: s.quota.max_concurrent,
            next_slot_at: s.next_slot_at,
            used_total: s.used_total,
            used_today: s.used_today,
            spent: s
                .spent
                .iter()
                .map(|l| match l {
                    store::QuotaLimit::Total => QuotaLimitName::Total,
                    store::QuotaLimit::PerDay => QuotaLimitName::PerDay,
                    store::QuotaLimit::MaxConcurrent => QuotaLimitName::MaxConcurrent,
                })
                .collect(),
            limits: s.quota.into(),
            overridden: s.overridden,
            closes: None,
            extended: false,
            at: s.at,
        }
    }
}

// ---- submissions ----

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct CreatedSubmission {
    pub id: Uuid,
    pub state: StateName,
    /// sha256 of the archive as received, lower-case hex.
    pub entry_sha256: String,
    pub phase: String,
    pub received_at: DateTime<Utc>,
}

/// A stage's counts of records (the exam's are all a team learns of it).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema)]
pub struct CountsView {
    pub records: usize,
    pub ok: usize,
    pub failures: usize,
    pub timeouts: usize,
    pub defaulted: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum StageOutcome {
    Passed,
    Failed,
    Skipped,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct StageView {
    /// `prep`, `train`, `quiz`, `exam` or `score`.
    pub stage: String,
    pub outcome: StageOutcome,
    /// Wall time; a hidden stage's in whole seconds (the judge rounded it).
    pub seconds: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts: Option<CountsView>,
    /// Why it failed, or why it was skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Each record's status and resources (not the exam's, for a team).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub records: Vec<Value>,
    /// Whether `GET /submissions/{id}/logs/{stage}` has a log for the caller.
    pub log: bool,
}

/// How to reproduce the result locally, and the versions it was made with.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Reproduce {
    /// The `physiojudge evaluate` command, then (as a shell comment) every version and
    /// hash the result was made with.
    pub command: String,
    pub entry_sha256: String,
    pub definition_sha256: String,
    pub manifest_sha256: String,
    /// The Python runtime's lock id the entry ran with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_lock: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scorer_version: Option<String>,
}

/// The quiz's score and the scorer's report, as `result.json` holds them (per-item
/// references only where the challenge declares its quiz public).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct QuizView {
    pub score: f64,
    pub report: Value,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct HistoryView {
    pub seq: u32,
    pub from: Option<StateName>,
    pub to: StateName,
    pub at: DateTime<Utc>,
    /// The reason's kind (`submitted`, `taken`, `reported`, `worker_lost`, …).
    pub reason: String,
    /// The whole typed reason (organisers only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<Value>,
}

/// What only organisers see of a submission.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct OrganiserView {
    pub entry_path: String,
    /// The stored `result.json` of the current attempt, whole.
    pub result: Option<Value>,
    /// The organiser's private exam score.
    pub private: Option<Value>,
    /// Every stored result, replaced ones too.
    pub results: usize,
    pub history: Vec<HistoryView>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SubmissionView {
    pub id: Uuid,
    pub challenge: String,
    pub team: Uuid,
    pub team_name: String,
    pub phase: String,
    pub state: StateName,
    /// Why it failed or went wrong, or was withdrawn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Attempts so far.
    pub attempts: u32,
    pub received_at: DateTime<Utc>,
    pub state_changed_at: DateTime<Utc>,
    /// While queued: 1 + the queued submissions received before it (all teams).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_position: Option<u32>,
    /// The challenge's judging is paused: a queued submission waits (it keeps its
    /// place) until an organiser resumes judging.
    pub judging_paused: bool,
    pub selected: bool,
    /// From the current attempt's `result.json`, once it has one.
    pub stages: Vec<StageView>,
    /// The exam's ranking numbers at the challenge's precision, by key (empty until
    /// scored, and for a team while the phase hides exam scores).
    pub scores: BTreeMap<String, Option<f64>>,
    /// Set while the phase hides exam scores from teams: when they show.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scores_hidden_until: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quiz: Option<QuizView>,
    /// The scorer's remarks on the quiz (missing or invalid outputs, …) and on the
    /// scored outputs ("degenerate output: …": one answer for every record).
    pub warnings: Vec<Value>,
    pub reproduce: Reproduce,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub organiser: Option<OrganiserView>,
}

/// A submission in the organisers' listing.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SubmissionRow {
    pub id: Uuid,
    pub team: Uuid,
    pub phase: Uuid,
    pub state: StateName,
    pub attempts: u32,
    pub received_at: DateTime<Utc>,
    pub entry_sha256: String,
    pub selected: bool,
}

impl From<&store::Submission> for SubmissionRow {
    fn from(s: &store::Submission) -> SubmissionRow {
        SubmissionRow {
            id: s.id.0,
            team: s.team.0,
            phase: s.phase.0,
            state: s.state.into(),
            attempts: s.attempt,
            received_at: s.received_at,
            entry_sha256: s.entry_sha256.clone(),
            selected: s.selected,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SubmissionPage {
    /// Newest first.
    pub submissions: Vec<SubmissionRow>,
    /// Pass as `after` for the next page; absent on the last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<Uuid>,
}

/// A state change, as an event stream sends it (`event: state`, `id: <seq>`).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct StateEvent {
    pub submission: Uuid,
    #[serde(flatten)]
    pub change: HistoryView,
}

/// How far a running submission got (`event: progress`, no `id`). Of the exam a team
/// gets `done` and `total` as 0: only that it runs.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ProgressEvent {
    pub submission: Uuid,
    pub attempt: u32,
    /// `prep`, `train`, `quiz`, `exam` or `score`.
    pub stage: String,
    /// Records of the stage done, of `total` (0: no per-record progress shown).
    pub done: usize,
    pub total: usize,
}

/// One event of a submission's event stream as the stream carries it (the schema of
/// each event, as OpenAPI 3.1 reads a `text/event-stream` schema).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct StateEventFrame {
    /// `state` (a [`StateEvent`], with an `id`) or `progress` (a [`ProgressEvent`]).
    pub event: String,
    /// The change's sequence number (send it back as `Last-Event-ID` to resume).
    pub id: String,
    /// A [`StateEvent`] as JSON text.
    pub data: String,
}

// ---- leaderboards ----

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct LeaderboardRowView {
    /// Equal first figures share a rank (1, 1, 3).
    pub rank: u32,
    /// The team's name.
    pub team: String,
    pub team_id: Uuid,
    pub submission: Uuid,
    /// The first ranking number, as stored.
    pub score: Option<f64>,
    /// Every ranking number, as stored.
    pub scores: BTreeMap<String, Option<f64>>,
    /// The judge's time over all stages, in whole seconds.
    pub run_time_s: Option<f64>,
    pub submitted_at: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// The team is a baseline (a reference entry of the organisers'), shown with a
    /// badge.
    #[serde(default)]
    pub baseline: bool,
    /// The entry's language: `Python`, `MATLAB (Octave)` or `other` (absent for a
    /// result made before the judge told languages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct LeaderboardView {
    pub phase: String,
    /// Which leaderboard this is (`?board=`).
    pub board: BoardName,
    /// The published version shown (`board=published`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published: Option<PublishedView>,
    pub rule: RuleName,
    /// Each team's selected (else best) submission, not the rule's choice.
    pub final_entries: bool,
    /// The split whose ranking numbers rank it: the phase's scored split. `exam`
    /// figures are shown at the challenge's precision to all but organisers; `quiz`
    /// figures exactly (docs/service.md, "Visibility").
    pub split: SplitName,
    /// The ranking numbers and their direction, the first the one ranked by.
    pub ranking: Vec<RankingView>,
    /// Set while the phase ranks by hidden exam scores: the rows appear then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hidden_until: Option<DateTime<Utc>>,
    /// Set when the rows are withheld from the caller: a phase that hides exam scores
    /// shows teams its published leaderboard only (`?board=published`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub withheld: Option<String>,
    pub rows: Vec<LeaderboardRowView>,
}

mod about;
mod organiser;
pub use about::*;
pub use organiser::*;

// ---- operations ----

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Health {
    /// `ok`: the server answers and its database does.
    pub status: String,
}
