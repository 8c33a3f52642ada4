//! Submissions: the quota-checked insert, state changes with their history, withdrawal,
//! requeueing and selection.

use chrono::{DateTime, Days, Duration, Utc};

use crate::challenges::phase_from;
use crate::db::{Row, Tx, args};
use crate::users::not_found;
use crate::{
    Attempt, AttemptKey, Error, FailureCount, HistoryEntry, NewSubmission, Outcome, Phase, PhaseId,
    QuotaLimit, QuotaStatus, Reason, State, Store, Submission, SubmissionId, Submitted, TeamId,
    UPLOAD_KEY_LIFE_HOURS, UploadKey, UserId, WorkerId, count, opt_time, time, us,
};

pub(crate) const SUBMISSION_COLUMNS: &str = "id, challenge_id, team_id, phase_id, \
                                             entry_sha256, entry_path, received_at, state, state_changed_at, current_attempt, selected, \
                                             method_name, method_description";

pub(crate) fn submission_from(r: &Row) -> Result<Submission, Error> {
    Ok(Submission {
        id: SubmissionId::parse_stored(&r.get::<String>("id")?)?,
        challenge: r.get("challenge_id")?,
        team: TeamId::parse_stored(&r.get::<String>("team_id")?)?,
        phase: PhaseId::parse_stored(&r.get::<String>("phase_id")?)?,
        entry_sha256: r.get("entry_sha256")?,
        entry_path: r.get("entry_path")?,
        received_at: time(r.get("received_at")?)?,
        state: State::parse_stored(&r.get::<String>("state")?)?,
        state_changed_at: time(r.get("state_changed_at")?)?,
        attempt: count(r.get("current_attempt")?)?,
        selected: r.get("selected")?,
        method_name: r.get("method_name")?,
        method_description: r.get("method_description")?,
    })
}

pub(crate) fn attempt_from(r: &Row) -> Result<Attempt, Error> {
    Ok(Attempt {
        key: AttemptKey {
            submission: SubmissionId::parse_stored(&r.get::<String>("submission_id")?)?,
            number: count(r.get("number")?)?,
        },
        worker: WorkerId::parse_stored(&r.get::<String>("worker_id")?)?,
        started_at: time(r.get("started_at")?)?,
        lease_expires_at: time(r.get("lease_expires_at")?)?,
        ended_at: opt_time(r.get("ended_at")?)?,
        outcome: r
            .get::<Option<String>>("outcome")?
            .map(|o| Outcome::parse_stored(&o))
            .transpose()?,
    })
}

fn reason_json(reason: &Reason) -> Result<String, Error> {
    serde_json::to_string(reason).map_err(|e| Error::Corrupt(format!("reason: {e}")))
}

/// Appends a history row (the next `seq` of the submission).
async fn record(
    tx: &mut Tx,
    id: SubmissionId,
    from: Option<State>,
    to: State,
    reason: &Reason,
    at: i64,
) -> Result<(), Error> {
    tx.execute(
        "INSERT INTO state_history (submission_id, seq, from_state, to_state, at, reason) \
         SELECT $1, COALESCE(MAX(seq), 0) + 1, $2, $3, $4, $5 \
         FROM state_history WHERE submission_id = $1",
        args![id, from.map(|s| s.as_str()), to, at, reason_json(reason)?],
    )
    .await
    .map_err(|e| refusal(e, id, from.unwrap_or(to), to, from))?;
    Ok(())
}

/// The database's refusal of a transition as [`Error::Transition`].
fn refusal(e: Error, id: SubmissionId, from: State, to: State, actual: Option<State>) -> Error {
    if e.is_transition_refusal() {
        Error::Transition {
            submission: id,
            from,
            to,
            actual,
        }
    } else {
        e
    }
}

/// Changes a submission's state from `from` to `to` (compare-and-set: it must be in
/// `from`, and, with `attempt`, on that attempt) and writes the history row, in `tx`.
/// The database refuses a change that is not in `state_transitions`; either refusal is
/// [`Error::Transition`], and after one the transaction must be dropped.
pub(crate) async fn transition(
    tx: &mut Tx,
    id: SubmissionId,
    from: State,
    to: State,
    attempt: Option<u32>,
    reason: &Reason,
    at: i64,
) -> Result<(), Error> {
    let n = tx
        .execute(
            "UPDATE submissions SET state = $3, state_changed_at = $4 \
             WHERE id = $1 AND state = $2 AND ($5 IS NULL OR current_attempt = $5)",
            args![id, from, to, at, attempt.map(i64::from)],
        )
        .await
        .map_err(|e| refusal(e, id, from, to, Some(from)))?;
    if n == 0 {
        let actual = tx
            .fetch_optional("SELECT state FROM submissions WHERE id = $1", args![id])
            .await?
            .map(|r| State::parse_stored(&r.get::<String>("state")?))
            .transpose()?;
        return Err(Error::Transition {
            submission: id,
            from,
            to,
            actual,
        });
    }
    record(tx, id, Some(from), to, reason, at).await
}

pub(crate) async fn submission_in(tx: &mut Tx, id: SubmissionId) -> Result<Submission, Error> {
    let r = tx
        .fetch_optional(
            &format!("SELECT {SUBMISSION_COLUMNS} FROM submissions WHERE id = $1"),
            args![id],
        )
        .await?
        .ok_or_else(|| not_found("submission", id))?;
    submission_from(&r)
}

pub(crate) async fn phase_in(tx: &mut Tx, id: PhaseId) -> Result<Phase, Error> {
    let r = tx
        .fetch_optional(
            "SELECT id, challenge_id, name, opens_at, closes_at, selection_closes_at, \
             quota_total, quota_per_day, quota_max_concurrent, scored_split, show_exam, rule \
             FROM phases WHERE id = $1",
            args![id],
        )
        .await?
        .ok_or_else(|| not_found("phase", id))?;
    phase_from(&r)
}

fn day_start(t: DateTime<Utc>) -> DateTime<Utc> {
    t.date_naive().and_time(chrono::NaiveTime::MIN).and_utc()
}

/// The quota figures of a team in a phase at `now`, read in `tx`: the phase's limits,
/// with the team's own in place of some if an organiser overrode them.
async fn quota_in(
    tx: &mut Tx,
    phase: &Phase,
    team: TeamId,
    now: DateTime<Utc>,
) -> Result<QuotaStatus, Error> {
    let today = day_start(now);
    let r = tx
        .fetch_one(
            "SELECT COUNT(*) AS used_total, \
             COALESCE(SUM(CASE WHEN s.received_at >= $3 THEN 1 ELSE 0 END), 0) AS used_today, \
             COALESCE(SUM(CASE WHEN s.state IN ('queued', 'running') THEN 1 ELSE 0 END), 0) \
             AS running \
             FROM submissions s JOIN submission_states st ON st.state = s.state \
             WHERE s.phase_id = $1 AND s.team_id = $2 AND st.counts_for_quota = TRUE",
            args![phase.id, team, us(today)],
        )
        .await?;
    let used_total = count(r.get("used_total")?)?;
    let used_today = count(r.get("used_today")?)?;
    let running = count(r.get("running")?)?;
    let overridden = crate::team_rules::override_in(tx, phase.id, team).await?;
    let q = match &overridden {
        Some(o) => o.apply(phase.quota),
        None => phase.quota,
    };
    let mut spent = Vec::new();
    if q.total.is_some_and(|t| used_total >= t) {
        spent.push(QuotaLimit::Total);
    }
    if q.per_day.is_some_and(|d| used_today >= d) {
        spent.push(QuotaLimit::PerDay);
    }
    if q.max_concurrent.is_some_and(|m| running >= m) {
        spent.push(QuotaLimit::MaxConcurrent);
    }
    let next_slot_at = if spent.is_empty() {
        Some(now)
    } else if spent.contains(&QuotaLimit::Total) {
        None
    } else if spent.contains(&QuotaLimit::PerDay) {
        today.checked_add_days(Days::new(1))
    } else {
        None
    };
    Ok(QuotaStatus {
        quota: q,
        used_total,
        used_today,
        running,
        total_left: q.total.map(|t| t.saturating_sub(used_total)),
        today_left: q.per_day.map(|d| d.saturating_sub(used_today)),
        spent,
        next_slot_at,
        at: now,
        overridden: overridden.is_some(),
    })
}

/// The request fingerprint and submission of a team's upload key recorded at or after
/// `since`.
async fn upload_key_in(
    tx: &mut Tx,
    team: TeamId,
    key: &str,
    since: i64,
) -> Result<Option<(String, SubmissionId)>, Error> {
    tx.fetch_optional(
        "SELECT request_sha256, submission_id FROM upload_keys \
         WHERE team_id = $1 AND key = $2 AND created_at >= $3",
        args![team, key, since],
    )
    .await?
    .map(|r| {
        Ok((
            r.get::<String>("request_sha256")?,
            SubmissionId::parse_stored(&r.get::<String>("submission_id")?)?,
        ))
    })
    .transpose()
}

fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

impl Store {
    /// What remains of a team's quota in a phase now.
    pub async fn quota(&self, phase: PhaseId, team: TeamId) -> Result<QuotaStatus, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            let phase = phase_in(&mut tx, phase).await?;
            let now = self.now_in(&mut tx).await?;
            quota_in(&mut tx, &phase, team, now).await
        })
        .await;
        tx.finish(r).await
    }

    /// Records a new submission, `queued`, received now. Refused with
    /// [`Error::PhaseClosed`] outside the phase's times (its close, or the team's
    /// extended close, [`Store::grant_extension`]) and [`Error::QuotaSpent`] (with
    /// the figures) when the team's quota is spent. Race-free: the check and the insert
    /// are one transaction holding the team's lock (the database's write lock on SQLite,
    /// the team's row on PostgreSQL), so concurrent submissions of a team are counted one
    /// after another.
    pub async fn submit(&self, new: &NewSubmission) -> Result<Submission, Error> {
        match self.submit_keyed(new, None).await? {
            Submitted::New(s) | Submitted::Replayed(s) => Ok(s),
        }
    }

    /// The submission an upload key made for the team within its life
    /// ([`crate::UPLOAD_KEY_LIFE_HOURS`]), with the fingerprint of the request that
    /// made it. A server asks before its cheap refusals, so that a retry is not refused
    /// for a quota the first upload spent.
    pub async fn upload_key(
        &self,
        team: TeamId,
        key: &str,
    ) -> Result<Option<(String, SubmissionId)>, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            let since = us(self.now_in(&mut tx).await? - Duration::hours(UPLOAD_KEY_LIFE_HOURS));
            upload_key_in(&mut tx, team, key, since).await
        })
        .await;
        tx.finish(r).await
    }

    /// [`Store::submit`] with an upload's key: when the team used the same key within
    /// its life for the same request, nothing is recorded and the earlier submission is
    /// [`Submitted::Replayed`] (not charged again); for another request,
    /// [`Error::UploadKeyReused`]. The key is looked up and recorded under the team's
    /// lock, in the transaction that inserts the submission, so two uploads racing with
    /// one key make one submission.
    pub async fn submit_keyed(
        &self,
        new: &NewSubmission,
        key: Option<&UploadKey>,
    ) -> Result<Submitted, Error> {
        if !is_sha256_hex(&new.entry_sha256) {
            return Err(Error::Invalid {
                field: "entry sha256",
                problem: format!("{:?} is not 64 lower-case hex digits", new.entry_sha256),
            });
        }
        crate::users::nonempty("entry path", &new.entry_path)?;
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            let lock = if tx.is_postgres() {
                "SELECT challenge_id FROM teams WHERE id = $1 FOR UPDATE"
            } else {
                "SELECT challenge_id FROM teams WHERE id = $1"
            };
            let team_challenge: String = tx
                .fetch_optional(lock, args![new.team])
                .await?
                .ok_or_else(|| not_found("team", new.team))?
                .get("challenge_id")?;
            let phase = phase_in(&mut tx, new.phase).await?;
            if phase.challenge != team_challenge {
                return Err(Error::Invalid {
                    field: "submission",
                    problem: format!(
                        "the team is of challenge {team_challenge:?}, the phase of {:?}",
                        phase.challenge
                    ),
                });
            }
            // Read the clock once the lock is held, so that submissions are stamped in the
            // order they are counted (the database's clock on PostgreSQL).
            let now = self.now_in(&mut tx).await?;
            if let Some(k) = key {
                let since = us(now - Duration::hours(UPLOAD_KEY_LIFE_HOURS));
                if let Some((request, id)) = upload_key_in(&mut tx, new.team, &k.key, since).await?
                {
                    if request != k.request_sha256 {
                        return Err(Error::UploadKeyReused {
                            key: k.key.clone(),
                            submission: id,
                        });
                    }
                    return Ok(Submitted::Replayed(submission_in(&mut tx, id).await?));
                }
                // Expired keys of the team are forgotten here, so the table holds at most
                // a day of each team's uploads.
                tx.execute(
                    "DELETE FROM upload_keys WHERE team_id = $1 AND created_at < $2",
                    args![new.team, since],
                )
                .await?;
            }
            let extension = crate::team_rules::extension_in(&mut tx, phase.id, new.team).await?;
            phase.check_open(extension.as_ref(), now)?;
            let status = quota_in(&mut tx, &phase, new.team, now).await?;
            if !status.spent.is_empty() {
                return Err(Error::QuotaSpent(Box::new(status)));
            }
            let id = SubmissionId::new();
            let r = tx
                .fetch_one(
                    &format!(
                        "INSERT INTO submissions (id, challenge_id, team_id, phase_id, \
                         entry_sha256, entry_path, received_at, state, state_changed_at, \
                         method_name, method_description) \
                         VALUES ($1, $2, $3, $4, $5, $6, $7, 'queued', $7, $8, $9) \
                         RETURNING {SUBMISSION_COLUMNS}"
                    ),
                    args![
                        id,
                        &phase.challenge,
                        new.team,
                        new.phase,
                        &new.entry_sha256,
                        &new.entry_path,
                        us(now),
                        new.method_name.clone(),
                        new.method_description.clone(),
                    ],
                )
                .await?;
            let s = submission_from(&r)?;
            record(
                &mut tx,
                id,
                None,
                State::Queued,
                &Reason::Submitted,
                us(now),
            )
            .await?;
            if let Some(k) = key {
                tx.execute(
                    "INSERT INTO upload_keys (team_id, key, request_sha256, submission_id, \
                     created_at) VALUES ($1, $2, $3, $4, $5)",
                    args![new.team, &k.key, &k.request_sha256, id, us(now)],
                )
                .await?;
            }
            Ok(Submitted::New(s))
        })
        .await;
        tx.finish(r).await
    }

    pub async fn submission(&self, id: SubmissionId) -> Result<Submission, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async { submission_in(&mut tx, id).await }).await;
        tx.finish(r).await
    }

    /// A team's submissions in a phase, oldest first.
    pub async fn submissions(
        &self,
        team: TeamId,
        phase: PhaseId,
    ) -> Result<Vec<Submission>, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            tx.fetch_all(
                &format!(
                    "SELECT {SUBMISSION_COLUMNS} FROM submissions WHERE team_id = $1 \
                     AND phase_id = $2 ORDER BY received_at, id"
                ),
                args![team, phase],
            )
            .await?
            .iter()
            .map(submission_from)
            .collect()
        })
        .await;
        tx.finish(r).await
    }

    /// A challenge's submissions, newest first, `limit` at a time: the next page starts
    /// after the last submission of the previous one (`after`).
    pub async fn challenge_submissions(
        &self,
        challenge: &str,
        after: Option<SubmissionId>,
        limit: u32,
    ) -> Result<Vec<Submission>, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            let (cursor, sql) = match after {
                None => (None, String::new()),
                Some(id) => {
                    let s = submission_in(&mut tx, id).await?;
                    (
                        Some((us(s.received_at), id)),
                        " AND (received_at < $3 OR (received_at = $3 AND id < $4))".to_owned(),
                    )
                }
            };
            let sql = format!(
                "SELECT {SUBMISSION_COLUMNS} FROM submissions WHERE challenge_id = $1{sql} \
                 ORDER BY received_at DESC, id DESC LIMIT $2"
            );
            let mut params = args![challenge, i64::from(limit)];
            if let Some((at, id)) = cursor {
                params.push(at.into());
                params.push(id.into());
            }
            tx.fetch_all(&sql, params)
                .await?
                .iter()
                .map(submission_from)
                .collect()
        })
        .await;
        tx.finish(r).await
    }

    /// How many submissions are in each state, for one challenge or all (the queue's
    /// length, what is running, what is stuck in `error`).
    pub async fn state_counts(&self, challenge: Option<&str>) -> Result<Vec<(State, u64)>, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            let rows = tx
                .fetch_all(
                    "SELECT st.state, COUNT(s.id) AS n FROM submission_states st \
                     LEFT JOIN submissions s ON s.state = st.state \
                     AND ($1 IS NULL OR s.challenge_id = $1) \
                     GROUP BY st.state",
                    args![challenge],
                )
                .await?;
            let mut out = Vec::new();
            for r in &rows {
                let state = State::parse_stored(&r.get::<String>("state")?)?;
                let n: i64 = r.get("n")?;
                out.push((state, u64::from(count(n)?)));
            }
            out.sort_by_key(|(s, _)| State::ALL.iter().position(|x| x == s));
            Ok(out)
        })
        .await;
        tx.finish(r).await
    }

    /// Why submissions failed and attempts went wrong, for the server's metrics
    /// (docs/service.md, "HTTP API"): for each submission now `failed`, the `kind` of
    /// the failing stage's reason in its live result (the judge's `result.json`:
    /// `stages[].reason.kind`, `unknown` when it has none); and for every change to
    /// `error` ever recorded, the `kind` of its history reason (`worker_lost`,
    /// `judge_error`). The JSON is read by the database (SQLite's `json_each`,
    /// PostgreSQL's `jsonb_array_elements`), so a scrape does not move every result
    /// document to the caller.
    pub async fn failure_counts(&self) -> Result<Vec<FailureCount>, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            let failed = if tx.is_postgres() {
                "SELECT COALESCE(( \
                 SELECT st->'reason'->>'kind' FROM jsonb_array_elements( \
                 CASE WHEN jsonb_typeof(r.result_json::jsonb->'stages') = 'array' \
                 THEN r.result_json::jsonb->'stages' ELSE '[]'::jsonb END) st \
                 WHERE st->>'status' = 'failed' LIMIT 1), 'unknown') AS kind, COUNT(*) AS n \
                 FROM submissions s JOIN results r ON r.submission_id = s.id \
                 AND r.attempt = s.current_attempt AND r.replaced = FALSE \
                 WHERE s.state = 'failed' GROUP BY 1"
            } else {
                "SELECT COALESCE(( \
                 SELECT json_extract(st.value, '$.reason.kind') \
                 FROM json_each(r.result_json, '$.stages') st \
                 WHERE json_extract(st.value, '$.status') = 'failed' LIMIT 1), 'unknown') \
                 AS kind, COUNT(*) AS n \
                 FROM submissions s JOIN results r ON r.submission_id = s.id \
                 AND r.attempt = s.current_attempt AND r.replaced = FALSE \
                 WHERE s.state = 'failed' GROUP BY 1"
            };
            let errors = if tx.is_postgres() {
                "SELECT COALESCE(reason::jsonb->>'kind', 'unknown') AS kind, COUNT(*) AS n \
                 FROM state_history WHERE to_state = 'error' GROUP BY 1"
            } else {
                "SELECT COALESCE(json_extract(reason, '$.kind'), 'unknown') AS kind, \
                 COUNT(*) AS n FROM state_history WHERE to_state = 'error' GROUP BY 1"
            };
            let mut out = Vec::new();
            for (state, sql) in [(State::Failed, failed), (State::Error, errors)] {
                for r in tx.fetch_all(sql, args![]).await? {
                    out.push(FailureCount {
                        state,
                        kind: r.get("kind")?,
                        count: u64::from(count(r.get("n")?)?),
                    });
                }
            }
            out.sort_by(|a, b| (a.state.as_str(), &a.kind).cmp(&(b.state.as_str(), &b.kind)));
            Ok(out)
        })
        .await;
        tx.finish(r).await
    }

    /// Where a queued submission stands in the queue: 1 + the queued submissions
    /// received before it (all teams), leaving out those of challenges whose judging is
    /// paused (no worker takes them), unless it is one of theirs: a submission of a
    /// paused challenge has the place it will have once judging resumes. The order it
    /// is taken in may differ, since the queue is fair across teams. `None` when it is
    /// not queued.
    pub async fn queue_position(&self, id: SubmissionId) -> Result<Option<u32>, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            let s = submission_in(&mut tx, id).await?;
            if s.state != State::Queued {
                return Ok(None);
            }
            let r = tx
                .fetch_one(
                    "SELECT COUNT(*) AS n FROM submissions q \
                     JOIN challenges c ON c.id = q.challenge_id \
                     WHERE q.state = 'queued' \
                     AND (c.paused_at IS NULL OR q.challenge_id = $3) \
                     AND (q.received_at < $1 OR (q.received_at = $1 AND q.id < $2))",
                    args![us(s.received_at), id, &s.challenge],
                )
                .await?;
            Ok(Some(count(r.get("n")?)? + 1))
        })
        .await;
        tx.finish(r).await
    }

    /// The submissions of a phase that are not finished (queued, running, or in
    /// `error`): publishing a phase's test leaderboard waits for these.
    pub async fn unfinished(&self, phase: PhaseId) -> Result<Vec<Submission>, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            tx.fetch_all(
                &format!(
                    "SELECT {SUBMISSION_COLUMNS} FROM submissions WHERE phase_id = $1 \
                     AND state IN ('queued', 'running', 'error') ORDER BY received_at, id"
                ),
                args![phase],
            )
            .await?
            .iter()
            .map(submission_from)
            .collect()
        })
        .await;
        tx.finish(r).await
    }

    /// Every state change of a submission, in order.
    pub async fn history(&self, id: SubmissionId) -> Result<Vec<HistoryEntry>, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            tx.fetch_all(
                "SELECT seq, from_state, to_state, at, reason FROM state_history \
                 WHERE submission_id = $1 ORDER BY seq",
                args![id],
            )
            .await?
            .iter()
            .map(|r| {
                Ok(HistoryEntry {
                    seq: count(r.get("seq")?)?,
                    from: r
                        .get::<Option<String>>("from_state")?
                        .map(|s| State::parse_stored(&s))
                        .transpose()?,
                    to: State::parse_stored(&r.get::<String>("to_state")?)?,
                    at: time(r.get("at")?)?,
                    reason: serde_json::from_str(&r.get::<String>("reason")?)
                        .map_err(|e| Error::Corrupt(format!("history reason: {e}")))?,
                })
            })
            .collect()
        })
        .await;
        tx.finish(r).await
    }

    /// A submission's attempts, in order.
    pub async fn attempts(&self, id: SubmissionId) -> Result<Vec<Attempt>, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            tx.fetch_all(
                "SELECT submission_id, number, worker_id, started_at, lease_expires_at, ended_at, \
                 outcome FROM attempts WHERE submission_id = $1 ORDER BY number",
                args![id],
            )
            .await?
            .iter()
            .map(attempt_from)
            .collect()
        })
        .await;
        tx.finish(r).await
    }

    /// The team takes back a queued submission (`queued → withdrawn`; it stops
    /// counting against the quota).
    pub async fn withdraw(&self, id: SubmissionId, by: Option<UserId>) -> Result<(), Error> {
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            transition(
                &mut tx,
                id,
                State::Queued,
                State::Withdrawn,
                None,
                &Reason::Withdrawn { by },
                us(self.now()),
            )
            .await?;
            Ok(())
        })
        .await;
        tx.finish(r).await
    }

    /// An organiser queues a submission in `error` again, for a new attempt (beyond the
    /// automatic retries).
    pub async fn requeue(
        &self,
        id: SubmissionId,
        by: Option<UserId>,
        why: &str,
    ) -> Result<(), Error> {
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            transition(
                &mut tx,
                id,
                State::Error,
                State::Queued,
                None,
                &Reason::Requeued {
                    by,
                    why: why.to_owned(),
                },
                us(self.now()),
            )
            .await?;
            Ok(())
        })
        .await;
        tx.finish(r).await
    }

    /// Makes a scored submission its team's one final entry for its phase (clearing any
    /// earlier choice). Refused once the phase's selection deadline has passed.
    pub async fn select(&self, id: SubmissionId) -> Result<(), Error> {
        let now = self.now();
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            let s = submission_in(&mut tx, id).await?;
            let phase = phase_in(&mut tx, s.phase).await?;
            if let Some(t) = phase.selection_closes.filter(|&t| now >= t) {
                return Err(Error::Invalid {
                    field: "selection",
                    problem: format!("the phase's selection closed at {}", t.to_rfc3339()),
                });
            }
            if s.state != State::Scored {
                return Err(Error::Invalid {
                    field: "selection",
                    problem: format!("submission {id} is {}, not scored", s.state),
                });
            }
            tx.execute(
                "UPDATE submissions SET selected = FALSE \
                 WHERE team_id = $1 AND phase_id = $2 AND selected = TRUE",
                args![s.team, s.phase],
            )
            .await?;
            tx.execute(
                "UPDATE submissions SET selected = TRUE WHERE id = $1",
                args![id],
            )
            .await?;
            Ok(())
        })
        .await;
        let r = tx.finish(r).await;
        self.boards_changed();
        r
    }
}

#[cfg(test)]
pub(crate) async fn force_transition(
    store: &Store,
    id: SubmissionId,
    from: State,
    to: State,
) -> Result<(), Error> {
    let mut tx = store.db.write().await?;
    let r = crate::db::attempt(async {
        transition(
            &mut tx,
            id,
            from,
            to,
            None,
            &Reason::Requeued {
                by: None,
                why: "test".to_owned(),
            },
            us(store.now()),
        )
        .await?;
        Ok(())
    })
    .await;
    tx.finish(r).await
}
