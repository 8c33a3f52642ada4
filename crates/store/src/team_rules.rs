//! Rules an organiser sets for one team in one phase (docs/service.md, "Deadlines and
//! quotas per team"): a deadline extension and a quota override, each with a reason,
//! who set it and when, kept as an append-only history (the rule in force is the
//! latest change); and the baseline mark of a team.

use chrono::{DateTime, Utc};

use crate::db::{Row, Tx, args};
use crate::submissions::phase_in;
use crate::users::not_found;
use crate::{
    Error, Extension, Phase, PhaseId, Quota, QuotaOverride, RuleChange, Store, TeamId, UserId,
    count, time, us,
};

/// Longest reason kept (a sentence or a short paragraph, not a document).
pub const MAX_REASON_CHARS: usize = 1000;

fn reason_checked(reason: &str) -> Result<String, Error> {
    let r = reason.trim();
    if r.is_empty() {
        return Err(Error::Invalid {
            field: "reason",
            problem: "empty: say why this team gets its own rule".to_owned(),
        });
    }
    if r.chars().count() > MAX_REASON_CHARS {
        return Err(Error::Invalid {
            field: "reason",
            problem: format!("longer than {MAX_REASON_CHARS} characters"),
        });
    }
    if r.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        return Err(Error::Invalid {
            field: "reason",
            problem: "has a control character other than a line break or a tab".to_owned(),
        });
    }
    Ok(r.to_owned())
}

fn user_of(r: &Row) -> Result<Option<UserId>, Error> {
    r.get::<Option<String>>("set_by")?
        .map(|s| UserId::parse_stored(&s))
        .transpose()
}

const EXTENSION_COLUMNS: &str = "phase_id, team_id, seq, closes_at, reason, set_by, set_at";

fn extension_change(r: &Row) -> Result<RuleChange<Extension>, Error> {
    let phase = PhaseId::parse_stored(&r.get::<String>("phase_id")?)?;
    let team = TeamId::parse_stored(&r.get::<String>("team_id")?)?;
    let reason: Option<String> = r.get("reason")?;
    let set_by = user_of(r)?;
    let set_at = time(r.get("set_at")?)?;
    let value = match r.get::<Option<i64>>("closes_at")? {
        None => None,
        Some(closes) => Some(Extension {
            phase,
            team,
            closes: time(closes)?,
            reason: reason
                .clone()
                .ok_or_else(|| Error::Corrupt("an extension without a reason".to_owned()))?,
            set_by,
            set_at,
        }),
    };
    Ok(RuleChange {
        seq: count(r.get("seq")?)?,
        value,
        reason,
        set_by,
        set_at,
    })
}

const OVERRIDE_COLUMNS: &str = "phase_id, team_id, seq, active, quota_total, quota_per_day, \
                                quota_max_concurrent, reason, set_by, set_at";

fn override_change(r: &Row) -> Result<RuleChange<QuotaOverride>, Error> {
    let limit = |col: &str| -> Result<Option<u32>, Error> {
        r.get::<Option<i64>>(col)?.map(count).transpose()
    };
    let reason: Option<String> = r.get("reason")?;
    let set_by = user_of(r)?;
    let set_at = time(r.get("set_at")?)?;
    let value = if r.get::<bool>("active")? {
        Some(QuotaOverride {
            phase: PhaseId::parse_stored(&r.get::<String>("phase_id")?)?,
            team: TeamId::parse_stored(&r.get::<String>("team_id")?)?,
            limits: Quota {
                total: limit("quota_total")?,
                per_day: limit("quota_per_day")?,
                max_concurrent: limit("quota_max_concurrent")?,
            },
            reason: reason
                .clone()
                .ok_or_else(|| Error::Corrupt("a quota override without a reason".to_owned()))?,
            set_by,
            set_at,
        })
    } else {
        None
    };
    Ok(RuleChange {
        seq: count(r.get("seq")?)?,
        value,
        reason,
        set_by,
        set_at,
    })
}

/// The rows of `table` that are in force: the latest change of each team of the phase
/// (`$1`), and of one team only when `$2` is not NULL.
fn latest(table: &str, columns: &str) -> String {
    format!(
        "SELECT {columns} FROM {table} x WHERE x.phase_id = $1 \
         AND ($2 IS NULL OR x.team_id = $2) \
         AND x.seq = (SELECT MAX(y.seq) FROM {table} y \
         WHERE y.phase_id = x.phase_id AND y.team_id = x.team_id) \
         ORDER BY x.set_at, x.team_id"
    )
}

/// Where one kind of per-team rule is kept, and how a row of it reads: extensions and
/// quota overrides are both append-only changes per phase and team, read the same way.
struct RuleTable<T> {
    table: &'static str,
    columns: &'static str,
    decode: fn(&Row) -> Result<RuleChange<T>, Error>,
}

const EXTENSIONS: RuleTable<Extension> = RuleTable {
    table: "deadline_extensions",
    columns: EXTENSION_COLUMNS,
    decode: extension_change,
};

const OVERRIDES: RuleTable<QuotaOverride> = RuleTable {
    table: "quota_overrides",
    columns: OVERRIDE_COLUMNS,
    decode: override_change,
};

impl<T> RuleTable<T> {
    /// The team's rule of the phase in force, read in `tx`.
    async fn in_force_for(
        &self,
        tx: &mut Tx,
        phase: PhaseId,
        team: TeamId,
    ) -> Result<Option<T>, Error> {
        let r = tx
            .fetch_optional(
                &latest(self.table, self.columns),
                args![phase, Some(team.to_string())],
            )
            .await?;
        Ok(r.as_ref()
            .map(self.decode)
            .transpose()?
            .and_then(|c| c.value))
    }

    /// Every team's rule of the phase in force, oldest change first.
    async fn in_force(&self, tx: &mut Tx, phase: PhaseId) -> Result<Vec<T>, Error> {
        let rows = tx
            .fetch_all(
                &latest(self.table, self.columns),
                args![phase, None::<String>],
            )
            .await?;
        let mut out = Vec::new();
        for r in &rows {
            out.extend((self.decode)(r)?.value);
        }
        Ok(out)
    }

    /// Every change of the team's rule of the phase, in order.
    async fn history(
        &self,
        tx: &mut Tx,
        phase: PhaseId,
        team: TeamId,
    ) -> Result<Vec<RuleChange<T>>, Error> {
        let sql = format!(
            "SELECT {} FROM {} WHERE phase_id = $1 AND team_id = $2 ORDER BY seq",
            self.columns, self.table
        );
        tx.fetch_all(&sql, args![phase, team])
            .await?
            .iter()
            .map(self.decode)
            .collect()
    }
}

/// The team's extension of the phase in force, read in `tx`.
pub(crate) async fn extension_in(
    tx: &mut Tx,
    phase: PhaseId,
    team: TeamId,
) -> Result<Option<Extension>, Error> {
    EXTENSIONS.in_force_for(tx, phase, team).await
}

/// The phase's extensions in force that still run at `now`, read in `tx`.
pub(crate) async fn open_extensions_in(
    tx: &mut Tx,
    phase: PhaseId,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<Vec<Extension>, Error> {
    let all = EXTENSIONS.in_force(tx, phase).await?;
    Ok(all.into_iter().filter(|e| e.closes > now).collect())
}

/// The team's quota override of the phase in force, read in `tx`.
pub(crate) async fn override_in(
    tx: &mut Tx,
    phase: PhaseId,
    team: TeamId,
) -> Result<Option<QuotaOverride>, Error> {
    OVERRIDES.in_force_for(tx, phase, team).await
}

/// The phase, with the team locked (its row on PostgreSQL; the write lock on SQLite),
/// so that two changes of the same team's rules are numbered one after the other.
/// A team of another challenge is [`Error::NotFound`]: it has no rules in this phase.
async fn phase_and_team(tx: &mut Tx, phase: PhaseId, team: TeamId) -> Result<Phase, Error> {
    let p = phase_in(tx, phase).await?;
    let lock = if tx.is_postgres() {
        "SELECT challenge_id FROM teams WHERE id = $1 FOR UPDATE"
    } else {
        "SELECT challenge_id FROM teams WHERE id = $1"
    };
    let challenge: String = tx
        .fetch_optional(lock, args![team])
        .await?
        .ok_or_else(|| not_found("team", team))?
        .get("challenge_id")?;
    if challenge != p.challenge {
        return Err(not_found("team", team));
    }
    Ok(p)
}

/// The next `seq` of a team's changes in `table`.
async fn next_seq(tx: &mut Tx, table: &str, phase: PhaseId, team: TeamId) -> Result<i64, Error> {
    let r = tx
        .fetch_one(
            &format!(
                "SELECT COALESCE(MAX(seq), 0) + 1 AS next FROM {table} \
                 WHERE phase_id = $1 AND team_id = $2"
            ),
            args![phase, team],
        )
        .await?;
    r.get("next")
}

impl Store {
    /// Grants a team its own close of a phase (or changes it), with a reason. The new
    /// close must be later than the phase's, and no later than its selection deadline
    /// (a team could not choose among entries it sent after it): else
    /// [`Error::Invalid`]. Uploads already accepted are not affected.
    pub async fn grant_extension(
        &self,
        phase: PhaseId,
        team: TeamId,
        closes: DateTime<Utc>,
        reason: &str,
        by: Option<UserId>,
    ) -> Result<Extension, Error> {
        let reason = reason_checked(reason)?;
        let closes = DateTime::from_timestamp_micros(us(closes)).unwrap_or(closes);
        let now = us(self.now());
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            let p = phase_and_team(&mut tx, phase, team).await?;
            if closes <= p.closes {
                return Err(Error::Invalid {
                    field: "closes",
                    problem: format!(
                        "{} is not later than the phase's close, {}",
                        closes.to_rfc3339(),
                        p.closes.to_rfc3339()
                    ),
                });
            }
            if let Some(s) = p.selection_closes.filter(|&s| closes > s) {
                return Err(Error::Invalid {
                    field: "closes",
                    problem: format!(
                        "{} is after the phase's selection deadline, {}: the team could \
                         not choose a final entry among what it sends that late",
                        closes.to_rfc3339(),
                        s.to_rfc3339()
                    ),
                });
            }
            let seq = next_seq(&mut tx, "deadline_extensions", phase, team).await?;
            let r = tx
                .fetch_one(
                    &format!(
                        "INSERT INTO deadline_extensions (phase_id, team_id, challenge_id, seq, \
                         closes_at, reason, set_by, set_at) \
                         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING {EXTENSION_COLUMNS}"
                    ),
                    args![
                        phase,
                        team,
                        &p.challenge,
                        seq,
                        us(closes),
                        reason.as_str(),
                        by.map(|u| u.to_string()),
                        now
                    ],
                )
                .await?;
            extension_change(&r)?
                .value
                .ok_or_else(|| Error::Corrupt("a granted extension reads back revoked".into()))
        })
        .await;
        tx.finish(r).await
    }

    /// Revokes a team's extension of a phase (why is optional): the phase's own close
    /// holds for it again. [`Error::NotFound`] if it has none in force.
    pub async fn revoke_extension(
        &self,
        phase: PhaseId,
        team: TeamId,
        reason: Option<&str>,
        by: Option<UserId>,
    ) -> Result<(), Error> {
        let reason = match reason.map(str::trim).filter(|r| !r.is_empty()) {
            Some(r) => Some(reason_checked(r)?),
            None => None,
        };
        let now = us(self.now());
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            let p = phase_and_team(&mut tx, phase, team).await?;
            if extension_in(&mut tx, phase, team).await?.is_none() {
                return Err(not_found("extension of team", team));
            }
            let seq = next_seq(&mut tx, "deadline_extensions", phase, team).await?;
            tx.execute(
                "INSERT INTO deadline_extensions (phase_id, team_id, challenge_id, seq, \
                 closes_at, reason, set_by, set_at) VALUES ($1, $2, $3, $4, NULL, $5, $6, $7)",
                args![
                    phase,
                    team,
                    &p.challenge,
                    seq,
                    reason,
                    by.map(|u| u.to_string()),
                    now
                ],
            )
            .await?;
            Ok(())
        })
        .await;
        tx.finish(r).await
    }

    /// A team's extension of a phase in force, if any.
    pub async fn extension(
        &self,
        phase: PhaseId,
        team: TeamId,
    ) -> Result<Option<Extension>, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async { extension_in(&mut tx, phase, team).await }).await;
        tx.finish(r).await
    }

    /// Every extension of a phase in force, oldest change first.
    pub async fn extensions(&self, phase: PhaseId) -> Result<Vec<Extension>, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async { EXTENSIONS.in_force(&mut tx, phase).await }).await;
        tx.finish(r).await
    }

    /// Every change of a team's extension of a phase, in order.
    pub async fn extension_history(
        &self,
        phase: PhaseId,
        team: TeamId,
    ) -> Result<Vec<RuleChange<Extension>>, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async { EXTENSIONS.history(&mut tx, phase, team).await }).await;
        tx.finish(r).await
    }

    /// Sets a team's own quota for a phase (or changes it), with a reason: each limit
    /// given replaces the phase's (higher or lower), the others stay the phase's. At
    /// least one limit must be given ([`Error::Invalid`]).
    pub async fn set_quota_override(
        &self,
        phase: PhaseId,
        team: TeamId,
        limits: Quota,
        reason: &str,
        by: Option<UserId>,
    ) -> Result<QuotaOverride, Error> {
        let reason = reason_checked(reason)?;
        if limits == Quota::default() {
            return Err(Error::Invalid {
                field: "quota",
                problem: "no limit given: set total, per_day or max_concurrent \
                          (or remove the override)"
                    .to_owned(),
            });
        }
        let now = us(self.now());
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            let p = phase_and_team(&mut tx, phase, team).await?;
            let seq = next_seq(&mut tx, "quota_overrides", phase, team).await?;
            let r = tx
                .fetch_one(
                    &format!(
                        "INSERT INTO quota_overrides (phase_id, team_id, challenge_id, seq, \
                         active, quota_total, quota_per_day, quota_max_concurrent, reason, \
                         set_by, set_at) VALUES ($1, $2, $3, $4, TRUE, $5, $6, $7, $8, $9, $10) \
                         RETURNING {OVERRIDE_COLUMNS}"
                    ),
                    args![
                        phase,
                        team,
                        &p.challenge,
                        seq,
                        limits.total.map(i64::from),
                        limits.per_day.map(i64::from),
                        limits.max_concurrent.map(i64::from),
                        reason.as_str(),
                        by.map(|u| u.to_string()),
                        now
                    ],
                )
                .await?;
            override_change(&r)?
                .value
                .ok_or_else(|| Error::Corrupt("a quota override reads back removed".into()))
        })
        .await;
        tx.finish(r).await
    }

    /// Removes a team's quota override of a phase (why is optional): the phase's quota
    /// holds for it again. [`Error::NotFound`] if it has none in force.
    pub async fn remove_quota_override(
        &self,
        phase: PhaseId,
        team: TeamId,
        reason: Option<&str>,
        by: Option<UserId>,
    ) -> Result<(), Error> {
        let reason = match reason.map(str::trim).filter(|r| !r.is_empty()) {
            Some(r) => Some(reason_checked(r)?),
            None => None,
        };
        let now = us(self.now());
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            let p = phase_and_team(&mut tx, phase, team).await?;
            if override_in(&mut tx, phase, team).await?.is_none() {
                return Err(not_found("quota override of team", team));
            }
            let seq = next_seq(&mut tx, "quota_overrides", phase, team).await?;
            tx.execute(
                "INSERT INTO quota_overrides (phase_id, team_id, challenge_id, seq, active, \
                 reason, set_by, set_at) VALUES ($1, $2, $3, $4, FALSE, $5, $6, $7)",
                args![
                    phase,
                    team,
                    &p.challenge,
                    seq,
                    reason,
                    by.map(|u| u.to_string()),
                    now
                ],
            )
            .await?;
            Ok(())
        })
        .await;
        tx.finish(r).await
    }

    /// A team's quota override of a phase in force, if any.
    pub async fn quota_override(
        &self,
        phase: PhaseId,
        team: TeamId,
    ) -> Result<Option<QuotaOverride>, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async { override_in(&mut tx, phase, team).await }).await;
        tx.finish(r).await
    }

    /// Every quota override of a phase in force, oldest change first.
    pub async fn quota_overrides(&self, phase: PhaseId) -> Result<Vec<QuotaOverride>, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async { OVERRIDES.in_force(&mut tx, phase).await }).await;
        tx.finish(r).await
    }

    /// Every change of a team's quota override of a phase, in order.
    pub async fn quota_override_history(
        &self,
        phase: PhaseId,
        team: TeamId,
    ) -> Result<Vec<RuleChange<QuotaOverride>>, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async { OVERRIDES.history(&mut tx, phase, team).await }).await;
        tx.finish(r).await
    }

    /// Marks a team as a baseline (or not). A baseline team is shown on leaderboards
    /// with a badge: marking it also shows it (an organisers' team is hidden when it is
    /// made); hiding it afterwards hides it again.
    pub async fn set_team_baseline(&self, team: TeamId, baseline: bool) -> Result<(), Error> {
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            let sql = if baseline {
                "UPDATE teams SET baseline = TRUE, hidden = FALSE, \
                 reason = CASE WHEN hidden AND NOT disqualified THEN NULL ELSE reason END WHERE id = $1"
            } else {
                "UPDATE teams SET baseline = FALSE WHERE id = $1"
            };
            if tx.execute(sql, args![team]).await? == 0 {
                return Err(not_found("team", team));
            }
            Ok(())
        })
        .await;
        let r = tx.finish(r).await;
        self.boards_changed();
        r
    }
}
