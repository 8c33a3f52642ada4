//! The organiser's views: publishing and rescoring, per-team rules (extensions,
//! quota overrides, baselines) and workers.

use super::*;

// ---- publishing and rescoring ----

/// Which leaderboard of a phase: `live` (each team's best or latest by the phase's
/// rule), `final` (each team's selected, else best, submission; derived now), or
/// `published` (the fixed snapshot the organiser published; `version`, else the latest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum BoardName {
    #[default]
    Live,
    Final,
    Published,
}

/// A published leaderboard's version.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct PublishedView {
    pub version: u32,
    pub published_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PublishRequest {
    /// The phase's name.
    pub phase: String,
}

/// Why a phase cannot be published yet (409 `not_publishable`, in `blockers`).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct BlockerView {
    /// `unfinished` (queued, running or in `error`), `no_exam_result` (a final entry
    /// with no result under the phase's current versions) or `extension_open` (a team
    /// may still submit under a deadline extension, until `closes`).
    pub kind: String,
    /// The submission (not for `extension_open`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submission: Option<Uuid>,
    pub team: Uuid,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<StateName>,
    /// The team's own close (`extension_open` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closes: Option<DateTime<Utc>>,
    pub message: String,
}

impl From<&store::PublishBlocker> for BlockerView {
    fn from(b: &store::PublishBlocker) -> BlockerView {
        let (kind, submission, team, state, closes) = match b {
            store::PublishBlocker::Unfinished {
                submission,
                team,
                state,
            } => (
                "unfinished",
                Some(submission.0),
                team.0,
                Some((*state).into()),
                None,
            ),
            store::PublishBlocker::NoExamResult { submission, team } => {
                ("no_exam_result", Some(submission.0), team.0, None, None)
            }
            store::PublishBlocker::ExtensionOpen { team, closes } => {
                ("extension_open", None, team.0, None, Some(*closes))
            }
        };
        BlockerView {
            kind: kind.into(),
            submission,
            team,
            state,
            closes,
            message: b.to_string(),
        }
    }
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RescoreRequest {
    /// Why (kept with the record).
    #[schema(min_length = 1, max_length = 1000)]
    pub reason: String,
}

/// One result a rescoring replaces: its ranking numbers before and after.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct RescoreChangeView {
    pub submission: Uuid,
    pub attempt: u32,
    /// The result replaced.
    pub result: Uuid,
    /// The exam's ranking numbers before and after.
    pub before: BTreeMap<String, Option<f64>>,
    pub after: BTreeMap<String, Option<f64>>,
    /// The quiz's ranking numbers before and after (what a quiz-scored phase ranks by;
    /// empty before for results stored before they were kept).
    #[serde(default)]
    pub quiz_before: BTreeMap<String, Option<f64>>,
    #[serde(default)]
    pub quiz_after: BTreeMap<String, Option<f64>>,
    pub scorer_before: String,
    pub scorer_after: String,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RescoreStateName {
    Pending,
    Applied,
    Cancelled,
}

/// A rescoring: who, why, what and with which versions; its changes are applied or
/// cancelled as a whole.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct RescoreView {
    pub id: Uuid,
    pub challenge: String,
    pub state: RescoreStateName,
    pub reason: String,
    pub requested_by: Option<Uuid>,
    /// What was rescored: `{"results": N, "changed": N, "unscorable": [...]}`.
    pub scope: Value,
    pub scorer_version: String,
    pub judge_version: String,
    pub created_at: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_at: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<Uuid>,
    pub changes: Vec<RescoreChangeView>,
}

fn figures_map(f: &[store::Figure]) -> BTreeMap<String, Option<f64>> {
    f.iter().map(|f| (f.key.clone(), f.value)).collect()
}

impl RescoreView {
    pub fn new(r: &store::Rescore, before_scorers: &BTreeMap<Uuid, String>) -> RescoreView {
        RescoreView {
            id: r.id.0,
            challenge: r.challenge.clone(),
            state: match r.state {
                store::RescoreState::Pending => RescoreStateName::Pending,
                store::RescoreState::Applied => RescoreStateName::Applied,
                store::RescoreState::Cancelled => RescoreStateName::Cancelled,
            },
            reason: r.reason.clone(),
            requested_by: r.requested_by.map(|u| u.0),
            scope: r.scope.clone(),
            scorer_version: r.scorer_version.clone(),
            judge_version: r.judge_version.clone(),
            created_at: r.created_at,
            decided_at: r.decided_at,
            decided_by: r.decided_by.map(|u| u.0),
            changes: r
                .changes
                .iter()
                .map(|c| RescoreChangeView {
                    submission: c.attempt.submission.0,
                    attempt: c.attempt.number,
                    result: c.result.0,
                    before: figures_map(&c.before),
                    after: figures_map(&c.report.figures),
                    quiz_before: figures_map(&c.before_quiz),
                    quiz_after: figures_map(&c.report.quiz_figures),
                    scorer_before: before_scorers.get(&c.result.0).cloned().unwrap_or_default(),
                    scorer_after: c.report.scorer_version.clone(),
                    warnings: c.report.warnings.clone(),
                })
                .collect(),
        }
    }
}

// ---- per-team rules ----

/// A team's own close of a phase (`PUT …/extensions/{team}`).
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ExtensionRequest {
    /// Later than the phase's close, and no later than its selection deadline.
    pub closes: DateTime<Utc>,
    /// Why the team gets it (kept with who and when).
    #[schema(min_length = 1, max_length = 1000)]
    pub reason: String,
}

/// One change of a team's extension: `closes` null is a revocation.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ExtensionChangeView {
    pub seq: u32,
    pub closes: Option<DateTime<Utc>>,
    pub reason: Option<String>,
    /// The organiser who made the change.
    pub set_by: Option<Uuid>,
    pub set_at: DateTime<Utc>,
}

/// A team's extension of a phase in force, with every change of it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ExtensionView {
    pub phase: String,
    pub team: String,
    pub team_id: Uuid,
    /// The team's own close.
    pub closes: DateTime<Utc>,
    /// The phase's close, which every other team keeps.
    pub phase_closes: DateTime<Utc>,
    pub reason: String,
    pub set_by: Option<Uuid>,
    pub set_at: DateTime<Utc>,
    /// Every change, oldest first.
    pub history: Vec<ExtensionChangeView>,
}

impl ExtensionView {
    pub fn new(
        phase: &store::Phase,
        team: &store::Team,
        e: &store::Extension,
        history: &[store::RuleChange<store::Extension>],
    ) -> ExtensionView {
        ExtensionView {
            phase: phase.name.clone(),
            team: team.name.clone(),
            team_id: team.id.0,
            closes: e.closes,
            phase_closes: phase.closes,
            reason: e.reason.clone(),
            set_by: e.set_by.map(|u| u.0),
            set_at: e.set_at,
            history: history
                .iter()
                .map(|c| ExtensionChangeView {
                    seq: c.seq,
                    closes: c.value.as_ref().map(|v| v.closes),
                    reason: c.reason.clone(),
                    set_by: c.set_by.map(|u| u.0),
                    set_at: c.set_at,
                })
                .collect(),
        }
    }
}

/// A judge build: a worker of another than the server's is refused.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct BuildView {
    pub judge_version: String,
    pub runtime_lock: String,
}

impl From<&store::Build> for BuildView {
    fn from(b: &store::Build) -> BuildView {
        BuildView {
            judge_version: b.judge_version.clone(),
            runtime_lock: b.runtime_lock.clone(),
        }
    }
}

/// Why a worker's state last changed.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct WorkerReasonView {
    /// `organiser` (an organiser's or operator's decision) or `repeated_errors`
    /// (disabled automatically).
    pub kind: String,
    /// The reason in words.
    pub message: String,
    /// For `repeated_errors`: the attempts that ended in errors, newest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attempts: Vec<AttemptRef>,
}

/// One attempt of a submission.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct AttemptRef {
    pub submission: Uuid,
    pub attempt: u32,
}

impl From<&store::AttemptKey> for AttemptRef {
    fn from(k: &store::AttemptKey) -> AttemptRef {
        AttemptRef {
            submission: k.submission.0,
            attempt: k.number,
        }
    }
}

/// A team's own quota for a phase (`PUT …/quotas/{team}`): each limit given replaces
/// the phase's (higher or lower); those absent stay the phase's. At least one.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct QuotaOverrideRequest {
    #[serde(default)]
    pub total: Option<u32>,
    #[serde(default)]
    pub per_day: Option<u32>,
    #[serde(default)]
    pub max_concurrent: Option<u32>,
    /// Why the team gets it (kept with who and when).
    #[schema(min_length = 1, max_length = 1000)]
    pub reason: String,
}

/// One change of a team's quota override: `limits` null is a removal.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct QuotaOverrideChangeView {
    pub seq: u32,
    pub limits: Option<QuotaLimits>,
    pub reason: Option<String>,
    pub set_by: Option<Uuid>,
    pub set_at: DateTime<Utc>,
}

/// A team's quota override of a phase in force, with every change of it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct QuotaOverrideView {
    pub phase: String,
    pub team: String,
    pub team_id: Uuid,
    /// The limits the override sets (null: the phase's own).
    pub limits: QuotaLimits,
    /// The limits in force for the team: the phase's with the override's in place.
    pub effective: QuotaLimits,
    pub reason: String,
    pub set_by: Option<Uuid>,
    pub set_at: DateTime<Utc>,
    /// Every change, oldest first.
    pub history: Vec<QuotaOverrideChangeView>,
}

impl QuotaOverrideView {
    pub fn new(
        phase: &store::Phase,
        team: &store::Team,
        o: &store::QuotaOverride,
        history: &[store::RuleChange<store::QuotaOverride>],
    ) -> QuotaOverrideView {
        QuotaOverrideView {
            phase: phase.name.clone(),
            team: team.name.clone(),
            team_id: team.id.0,
            limits: o.limits.into(),
            effective: o.apply(phase.quota).into(),
            reason: o.reason.clone(),
            set_by: o.set_by.map(|u| u.0),
            set_at: o.set_at,
            history: history
                .iter()
                .map(|c| QuotaOverrideChangeView {
                    seq: c.seq,
                    limits: c.value.as_ref().map(|v| v.limits.into()),
                    reason: c.reason.clone(),
                    set_by: c.set_by.map(|u| u.0),
                    set_at: c.set_at,
                })
                .collect(),
        }
    }
}

/// The last time a worker was refused for its build, and the refusal's message (both
/// builds and what to do). Cleared when it announces the server's build.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct RefusalView {
    pub at: DateTime<Utc>,
    pub message: String,
}

/// A worker as organisers see it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct WorkerView {
    pub id: Uuid,
    pub name: String,
    pub state: WorkerStateName,
    /// When its state last changed, by whom (absent: automatically or at the command
    /// line) and why; absent if it never changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_changed_at: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_changed_by: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_reason: Option<WorkerReasonView>,
    /// The last time it took a job, heartbeat or reported (absent: never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_heartbeat: Option<DateTime<Utc>>,
    /// The judge version and runtime lock it announced (absent: it never did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_lock: Option<String>,
    /// Whether what it announced is the server's build (false: its takes are refused).
    pub build_matches: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slots: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub announced_at: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<RefusalView>,
    /// Its attempts running now.
    pub running_attempts: u32,
    pub running: Vec<AttemptRef>,
    /// Attempts that ended in an error of its own (a judge or machine fault, a lost
    /// lease; not an entry's failure, not a stop) in the last 24 hours.
    pub recent_errors: u32,
    /// Its latest attempts in a row that ended in errors of its own, since its state
    /// last changed; at `error_limit` it is disabled automatically.
    pub error_streak: u32,
    pub created_at: DateTime<Utc>,
}

impl WorkerView {
    pub fn new(s: &store::WorkerStatus, server: &store::Build) -> WorkerView {
        let w = &s.worker;
        WorkerView {
            id: w.id.0,
            name: w.name.clone(),
            state: w.state.into(),
            state_changed_at: w.state_changed_at,
            state_changed_by: w.state_changed_by.map(|u| u.0),
            state_reason: w.state_reason.as_ref().map(|r| WorkerReasonView {
                kind: match r {
                    store::WorkerStateReason::Organiser { .. } => "organiser",
                    store::WorkerStateReason::RepeatedErrors { .. } => "repeated_errors",
                }
                .to_owned(),
                message: r.to_string(),
                attempts: match r {
                    store::WorkerStateReason::RepeatedErrors { last, .. } => {
                        last.iter().map(Into::into).collect()
                    }
                    store::WorkerStateReason::Organiser { .. } => Vec::new(),
                },
            }),
            last_heartbeat: w.last_seen_at,
            version: w.build.as_ref().map(|b| b.judge_version.clone()),
            runtime_lock: w.build.as_ref().map(|b| b.runtime_lock.clone()),
            build_matches: w.build.as_ref() == Some(server),
            slots: w.slots,
            host: w.host.clone(),
            announced_at: w.announced_at,
            refusal: w.refusal.as_ref().map(|r| RefusalView {
                at: r.at,
                message: r.message.clone(),
            }),
            running_attempts: u32::try_from(s.running.len()).unwrap_or(u32::MAX),
            running: s.running.iter().map(Into::into).collect(),
            recent_errors: s.recent_errors,
            error_streak: s.error_streak,
            created_at: w.created_at,
        }
    }
}

/// Marks a team as a baseline or not (`PUT /api/v1/teams/{id}/baseline`).
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BaselineRequest {
    pub baseline: bool,
}

/// Every worker, and what they are checked against.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct WorkersView {
    /// The server's judge build: a worker of another is refused.
    pub server: BuildView,
    /// A worker whose last this many attempts ended in errors of its own is disabled
    /// automatically (0: never).
    pub error_limit: u32,
    /// By name.
    pub workers: Vec<WorkerView>,
}

/// What an organiser changes of a challenge (`PATCH /api/v1/challenges/{id}`): each
/// field given replaces the stored one; those left out stay.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ChallengeChange {
    /// Its title, as on its page and in lists (1 to 100 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1, max_length = 100)]
    pub title: Option<String>,
}
