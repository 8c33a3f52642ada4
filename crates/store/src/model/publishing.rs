//! The records of publishing and rescoring, and of per-team rules: extensions and
//! quota overrides, with the phase's own times they change.

use super::*;

/// Why a phase cannot be published yet ([`crate::Error::NotPublishable`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PublishBlocker {
    /// A submission of the phase is still queued, running or in `error`.
    Unfinished {
        submission: SubmissionId,
        team: TeamId,
        state: State,
    },
    /// A team's final entry has no result to rank by (no ranking number of the phase's
    /// scored split, or none made under the phase's current definition, data and
    /// scorer). Named for the usual case, an exam-scored phase.
    NoExamResult {
        submission: SubmissionId,
        team: TeamId,
    },
    /// A team's deadline extension is still open: it may still submit, so it must not
    /// see the final leaderboard (its own exam score, the others') before its close.
    ExtensionOpen { team: TeamId, closes: DateTime<Utc> },
}

impl fmt::Display for PublishBlocker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PublishBlocker::Unfinished {
                submission, state, ..
            } => write!(f, "submission {submission} is {state}"),
            PublishBlocker::NoExamResult { submission, .. } => write!(
                f,
                "final entry {submission} has no result with ranking numbers of the phase's \
                 scored split under the current versions"
            ),
            PublishBlocker::ExtensionOpen { team, closes } => write!(
                f,
                "team {team} may submit until {} (a deadline extension): publish after \
                 that, or revoke the extension",
                closes.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            ),
        }
    }
}

/// A published final leaderboard: a fixed snapshot of a phase's final entries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Publication {
    pub phase: PhaseId,
    /// 1, 2, …: publishing again makes the next.
    pub version: u32,
    pub published_at: DateTime<Utc>,
    pub published_by: Option<UserId>,
    /// The final leaderboard as it was at publication.
    pub board: Leaderboard,
}

word_enum!(
    /// Where a rescoring stands: its changes are applied or cancelled as a whole.
    RescoreState {
        Pending = "pending",
        Applied = "applied",
        Cancelled = "cancelled",
    }
);

/// One stored result that a rescoring replaces, and the result it becomes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RescoreChange {
    /// The live result now.
    pub result: ResultId,
    pub attempt: AttemptKey,
    /// Its exam ranking numbers now.
    pub before: Vec<Figure>,
    /// Its quiz ranking numbers now.
    #[serde(default)]
    pub before_quiz: Vec<Figure>,
    /// The new result (same outcome; recomputed figures, report and warnings).
    pub report: Report,
}

/// A rescoring of a challenge: a record of who, why, what and with which versions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rescore {
    pub id: RescoreId,
    pub challenge: String,
    pub requested_by: Option<UserId>,
    pub reason: String,
    /// What was rescored (JSON: the caller's description of the scope).
    pub scope: serde_json::Value,
    pub scorer_version: String,
    pub judge_version: String,
    pub state: RescoreState,
    pub created_at: DateTime<Utc>,
    pub decided_at: Option<DateTime<Utc>>,
    pub decided_by: Option<UserId>,
    pub changes: Vec<RescoreChange>,
}

/// A rescoring to record ([`crate::Store::create_rescore`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewRescore {
    pub challenge: String,
    pub requested_by: Option<UserId>,
    pub reason: String,
    pub scope: serde_json::Value,
    pub scorer_version: String,
    pub judge_version: String,
    pub changes: Vec<RescoreChange>,
}

/// A team's own close of a phase, granted by an organiser with a reason: uploads of
/// the team received before it are accepted although the phase has closed
/// ([`crate::Store::grant_extension`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Extension {
    pub phase: PhaseId,
    pub team: TeamId,
    /// The team's close: later than the phase's.
    pub closes: DateTime<Utc>,
    pub reason: String,
    pub set_by: Option<UserId>,
    pub set_at: DateTime<Utc>,
}

/// A team's own quota for a phase, set by an organiser with a reason: each limit it
/// sets replaces the phase's, the others stay the phase's
/// ([`crate::Store::set_quota_override`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuotaOverride {
    pub phase: PhaseId,
    pub team: TeamId,
    /// The limits it sets (`None`: the phase's own).
    pub limits: Quota,
    pub reason: String,
    pub set_by: Option<UserId>,
    pub set_at: DateTime<Utc>,
}

impl QuotaOverride {
    /// The phase's quota with this override's limits in place.
    pub fn apply(&self, phase: Quota) -> Quota {
        Quota {
            total: self.limits.total.or(phase.total),
            per_day: self.limits.per_day.or(phase.per_day),
            max_concurrent: self.limits.max_concurrent.or(phase.max_concurrent),
        }
    }
}

/// One change of a team's rule for a phase (an extension or a quota override), kept
/// forever: the rule in force is the last change's `value`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleChange<T> {
    /// 1, 2, … per phase and team.
    pub seq: u32,
    /// What the rule became; `None`: revoked or removed.
    pub value: Option<T>,
    /// Why (required when a rule is set, optional when it is revoked).
    pub reason: Option<String>,
    pub set_by: Option<UserId>,
    pub set_at: DateTime<Utc>,
}

impl Phase {
    /// When the phase closes for a team with this extension (if any).
    pub fn closes_for(&self, extension: Option<&Extension>) -> DateTime<Utc> {
        extension.map_or(self.closes, |e| e.closes.max(self.closes))
    }

    /// Whether the phase accepts an upload of a team (with this extension, if any)
    /// received at `at`: [`crate::Error::PhaseClosed`] with the team's own times if not.
    pub fn check_open(
        &self,
        extension: Option<&Extension>,
        at: DateTime<Utc>,
    ) -> Result<(), crate::Error> {
        let closes = self.closes_for(extension);
        if at < self.opens || at >= closes {
            return Err(crate::Error::PhaseClosed {
                phase: self.name.clone(),
                opens: self.opens,
                closes,
                extended: extension.is_some(),
                at,
            });
        }
        Ok(())
    }
}
