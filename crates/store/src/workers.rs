//! Worker and queue controls (docs/service.md, "Workers"): what a worker announces of
//! itself (refused when it is not the server's build), its state (`enabled`,
//! `draining`, `disabled`) changed by organisers or automatically after repeated errors
//! of its own, each change a row of its history, and pausing the judging of a
//! challenge.
//!
//! The rules are here, in the store, rather than in a dispatcher: the local queue and a
//! fleet's (jobs carried by JetStream, heartbeats and reports through the server) read
//! and write the same records, so neither needs rules of its own.

use crate::db::{Tx, args};
use crate::queue::{Ending, end_running};
use crate::users::{WORKER_COLUMNS, not_found, worker_from};
use crate::{
    Announcement, AttemptKey, Blame, Challenge, Error, Policy, Reconciled, Store, SubmissionId,
    UserId, Worker, WorkerHistoryEntry, WorkerId, WorkerRefusal, WorkerState, WorkerStateReason,
    WorkerStatus, count, time, us,
};

/// How far back [`WorkerStatus::recent_errors`] looks.
const RECENT: chrono::Duration = chrono::Duration::hours(24);

/// The longest error streak [`Store::worker_statuses`] counts (past the limit, the
/// number only says "many").
const STREAK_CAP: i64 = 100;

async fn worker_in(tx: &mut Tx, id: WorkerId) -> Result<Worker, Error> {
    let r = tx
        .fetch_optional(
            &format!("SELECT {WORKER_COLUMNS} FROM workers WHERE id = $1"),
            args![id],
        )
        .await?
        .ok_or_else(|| not_found("worker", id))?;
    worker_from(&r)
}

/// Changes a worker's state by compare-and-set, records who, when and why on the
/// worker and as a history row. A change the state machine does not allow is
/// [`Error::WorkerState`]; a disable ends the worker's running attempts (`error`, not
/// held against it, retried by another worker).
async fn change_state(
    tx: &mut Tx,
    policy: &Policy,
    id: WorkerId,
    to: WorkerState,
    by: Option<UserId>,
    reason: &WorkerStateReason,
    now: i64,
) -> Result<(Worker, Reconciled), Error> {
    let w = worker_in(tx, id).await?;
    if !w.state.can_become(to) {
        return Err(Error::WorkerState {
            worker: w.name,
            from: w.state,
            to,
        });
    }
    let json = serde_json::to_string(reason)
        .map_err(|e| Error::Corrupt(format!("worker state reason: {e}")))?;
    let n = tx
        .execute(
            "UPDATE workers SET state = $3, state_changed_at = $4, state_changed_by = $5, \
             state_reason = $6 WHERE id = $1 AND state = $2",
            args![
                id,
                w.state,
                to,
                now,
                by.map(|u| u.to_string()),
                json.clone()
            ],
        )
        .await?;
    if n == 0 {
        // Changed by someone else since it was read.
        let now_state = worker_in(tx, id).await?.state;
        return Err(Error::WorkerState {
            worker: w.name,
            from: now_state,
            to,
        });
    }
    tx.execute(
        "INSERT INTO worker_history (worker_id, seq, from_state, to_state, at, by_user, reason) \
         SELECT $1, COALESCE(MAX(seq), 0) + 1, $2, $3, $4, $5, $6 FROM worker_history \
         WHERE worker_id = $1",
        args![id, w.state, to, now, by.map(|u| u.to_string()), json],
    )
    .await?;
    let done = if to == WorkerState::Disabled {
        end_running(tx, policy, Ending::Disabled(id), now)
            .await?
            .done
    } else {
        Reconciled::default()
    };
    Ok((worker_in(tx, id).await?, done))
}

/// The worker's latest attempts that ended with a verdict or an error of its own (not
/// those ended by a stop, an organiser or the platform), newest first, since its state
/// last changed, at most `limit`: whether each was an error of its own.
async fn latest(
    tx: &mut Tx,
    worker: WorkerId,
    limit: i64,
) -> Result<Vec<(AttemptKey, bool)>, Error> {
    tx.fetch_all(
        "SELECT a.submission_id, a.number, a.blame FROM attempts a \
         JOIN workers w ON w.id = a.worker_id \
         WHERE a.worker_id = $1 AND a.ended_at IS NOT NULL \
         AND (a.outcome <> 'error' OR a.blame = 'worker') \
         AND (w.state_changed_at IS NULL OR a.started_at >= w.state_changed_at) \
         ORDER BY a.ended_at DESC, a.submission_id DESC, a.number DESC LIMIT $2",
        args![worker, limit],
    )
    .await?
    .iter()
    .map(|r| {
        Ok((
            AttemptKey {
                submission: SubmissionId::parse_stored(&r.get::<String>("submission_id")?)?,
                number: count(r.get("number")?)?,
            },
            r.get::<Option<String>>("blame")?
                .map(|b| Blame::parse_stored(&b))
                .transpose()?
                == Some(Blame::Worker),
        ))
    })
    .collect()
}

/// A worker seen (a take, a heartbeat, a report) this recently counts as taking jobs,
/// for [`check_errors`]: 5 minutes, in microseconds (a worker idle at `--poll 3600`
/// between notices is seen at each notice's take).
const LIVE_WITHIN_US: i64 = 5 * 60 * 1_000_000;

/// After an attempt of `worker` ended in an error of its own: disables the worker when
/// its last [`Policy::worker_error_limit`] attempts all did. Returns whether it did.
pub(crate) async fn check_errors(
    tx: &mut Tx,
    policy: &Policy,
    worker: WorkerId,
    now: i64,
) -> Result<bool, Error> {
    let k = policy.worker_error_limit;
    if k == 0 {
        return Ok(false);
    }
    let last = latest(tx, worker, i64::from(k)).await?;
    if last.len() < k as usize || !last.iter().all(|(_, own)| *own) {
        return Ok(false);
    }
    let state = worker_in(tx, worker).await?.state;
    if !state.can_become(WorkerState::Disabled) {
        return Ok(false);
    }
    // Never the last worker taking jobs: disabling it would stall the queue with no
    // one told. It stays enabled, its errors in a row at or past the limit, which
    // organisers see as an alert (`/metrics`' physiojudge_worker_alerts, the console).
    let others: i64 = tx
        .fetch_one(
            "SELECT COUNT(*) AS n FROM workers WHERE state = 'enabled' AND id <> $1 \
             AND last_seen_at >= $2",
            args![worker, now - LIVE_WITHIN_US],
        )
        .await?
        .get("n")?;
    if others == 0 {
        return Ok(false);
    }
    let reason = WorkerStateReason::RepeatedErrors {
        count: k,
        last: last.into_iter().map(|(key, _)| key).collect(),
    };
    change_state(
        tx,
        policy,
        worker,
        WorkerState::Disabled,
        None,
        &reason,
        now,
    )
    .await?;
    Ok(true)
}

impl Store {
    /// A worker says what it runs (its judge build, slots, host) before it takes jobs:
    /// recorded, for organisers to see. When the store checks builds
    /// ([`Store::with_build`]) and this is not the server's, the refusal is recorded on
    /// the worker too and returned as [`WorkerRefusal::WrongVersion`]; a later announcement of
    /// the right build clears it.
    pub async fn announce_worker(&self, id: WorkerId, a: &Announcement) -> Result<Worker, Error> {
        if let Some(i) = &a.instance
            && (i.is_empty() || i.len() > 64 || !i.bytes().all(|b| b.is_ascii_graphic()))
        {
            return Err(Error::Invalid {
                field: "instance",
                problem: "give 1 to 64 visible ASCII characters".to_owned(),
            });
        }
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            let now = us(self.now_in(&mut tx).await?);
            let w = worker_in(&mut tx, id).await?;
            let refusal = match self.build() {
                Some(server) if *server != a.build => {
                    Some(Error::Refused(WorkerRefusal::WrongVersion {
                        worker: w.name.clone(),
                        announced: Some(a.build.clone()),
                        server: server.clone(),
                    }))
                }
                _ => None,
            };
            if let Some(instance) = &a.instance {
                // A new process of this worker: whatever another process of it held is
                // dead (one process per worker token), so it ends now, not charged.
                tx.execute(
                    "UPDATE workers SET instance = $2 WHERE id = $1",
                    args![id, instance],
                )
                .await?;
                crate::queue::end_running(
                    &mut tx,
                    &self.policy,
                    crate::queue::Ending::Superseded(id, instance.clone()),
                    now,
                )
                .await?;
            }
            tx.execute(
                "UPDATE workers SET judge_version = $2, runtime_lock = $3, slots = $4, \
                 host = $5, announced_at = $6, last_seen_at = $6, \
                 refused_at = $7, refusal = $8 WHERE id = $1",
                args![
                    id,
                    &a.build.judge_version,
                    &a.build.runtime_lock,
                    a.slots.map(i64::from),
                    a.host.clone(),
                    now,
                    refusal.as_ref().map(|_| now),
                    refusal.as_ref().map(|e| e.to_string())
                ],
            )
            .await?;
            Ok((worker_in(&mut tx, id).await?, refusal))
        })
        .await;
        match tx.finish(r).await? {
            (_, Some(refused)) => Err(refused),
            (w, None) => Ok(w),
        }
    }

    /// Records that a worker was refused (shown to organisers until it announces the
    /// server's build).
    pub(crate) async fn record_refusal(&self, id: WorkerId, message: &str) -> Result<(), Error> {
        let now = us(self.now());
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            tx.execute(
                "UPDATE workers SET refused_at = $2, refusal = $3 WHERE id = $1",
                args![id, now, message],
            )
            .await?;
            Ok(())
        })
        .await;
        tx.finish(r).await
    }

    async fn set_worker_state(
        &self,
        id: WorkerId,
        to: WorkerState,
        by: Option<UserId>,
        why: &str,
    ) -> Result<(Worker, Reconciled), Error> {
        crate::users::nonempty("why", why)?;
        let reason = WorkerStateReason::Organiser {
            why: why.trim().to_owned(),
        };
        let now = us(self.now());
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            change_state(&mut tx, &self.policy, id, to, by, &reason, now).await
        })
        .await;
        tx.finish(r).await
    }

    /// Drains a worker: it finishes its running attempts (their heartbeats and reports
    /// are accepted) and takes no new job ([`WorkerRefusal::Draining`]) until enabled.
    pub async fn drain_worker(
        &self,
        id: WorkerId,
        by: Option<UserId>,
        why: &str,
    ) -> Result<Worker, Error> {
        Ok(self
            .set_worker_state(id, WorkerState::Draining, by, why)
            .await?
            .0)
    }

    /// Disables a worker: it takes nothing, its heartbeats and reports are refused, and
    /// its running attempts end now as `error` (`worker_disabled`: not charged, not held
    /// against the worker, retried by another worker while attempts are left; the
    /// worker learns it at its next heartbeat and stops the run). Returns what was
    /// ended, so that the caller can wake idle workers.
    pub async fn disable_worker(
        &self,
        id: WorkerId,
        by: Option<UserId>,
        why: &str,
    ) -> Result<(Worker, Reconciled), Error> {
        self.set_worker_state(id, WorkerState::Disabled, by, why)
            .await
    }

    /// Enables a draining or disabled worker: it takes jobs again, and its count of
    /// errors in a row starts again from nothing.
    pub async fn enable_worker(
        &self,
        id: WorkerId,
        by: Option<UserId>,
        why: &str,
    ) -> Result<Worker, Error> {
        Ok(self
            .set_worker_state(id, WorkerState::Enabled, by, why)
            .await?
            .0)
    }

    /// Disables (or enables again) a worker, if it is not so already: for an operator
    /// without an organiser's account (tests, the command line).
    pub async fn set_worker_disabled(&self, id: WorkerId, disabled: bool) -> Result<(), Error> {
        let state = self.worker(id).await?.state;
        match (disabled, state) {
            (true, WorkerState::Disabled) | (false, WorkerState::Enabled) => Ok(()),
            (true, _) => self
                .disable_worker(id, None, "disabled by an operator")
                .await
                .map(|_| ()),
            (false, _) => self
                .enable_worker(id, None, "enabled by an operator")
                .await
                .map(|_| ()),
        }
    }

    /// Every worker as organisers see it, by name: its record, its running attempts,
    /// its recent errors and its errors in a row.
    pub async fn worker_statuses(&self) -> Result<Vec<WorkerStatus>, Error> {
        let since = us(self.now() - RECENT);
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            let workers: Vec<Worker> = tx
                .fetch_all(
                    &format!("SELECT {WORKER_COLUMNS} FROM workers ORDER BY name, id"),
                    args![],
                )
                .await?
                .iter()
                .map(worker_from)
                .collect::<Result<_, _>>()?;
            let mut out = Vec::with_capacity(workers.len());
            for worker in workers {
                let running = tx
                    .fetch_all(
                        "SELECT submission_id, number FROM attempts \
                         WHERE worker_id = $1 AND ended_at IS NULL \
                         ORDER BY started_at, submission_id",
                        args![worker.id],
                    )
                    .await?
                    .iter()
                    .map(|r| {
                        Ok(AttemptKey {
                            submission: SubmissionId::parse_stored(
                                &r.get::<String>("submission_id")?,
                            )?,
                            number: count(r.get("number")?)?,
                        })
                    })
                    .collect::<Result<Vec<_>, Error>>()?;
                let recent_errors = count(
                    tx.fetch_one(
                        "SELECT COUNT(*) AS n FROM attempts WHERE worker_id = $1 \
                         AND blame = 'worker' AND ended_at >= $2",
                        args![worker.id, since],
                    )
                    .await?
                    .get("n")?,
                )?;
                let error_streak = latest(&mut tx, worker.id, STREAK_CAP)
                    .await?
                    .iter()
                    .take_while(|(_, own)| *own)
                    .count() as u32;
                out.push(WorkerStatus {
                    worker,
                    running,
                    recent_errors,
                    error_streak,
                });
            }
            Ok(out)
        })
        .await;
        tx.finish(r).await
    }

    /// Every change of a worker's state, in order.
    pub async fn worker_history(&self, id: WorkerId) -> Result<Vec<WorkerHistoryEntry>, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            worker_in(&mut tx, id).await?;
            tx.fetch_all(
                "SELECT seq, from_state, to_state, at, by_user, reason FROM worker_history \
                 WHERE worker_id = $1 ORDER BY seq",
                args![id],
            )
            .await?
            .iter()
            .map(|r| {
                Ok(WorkerHistoryEntry {
                    seq: count(r.get("seq")?)?,
                    from: WorkerState::parse_stored(&r.get::<String>("from_state")?)?,
                    to: WorkerState::parse_stored(&r.get::<String>("to_state")?)?,
                    at: time(r.get("at")?)?,
                    by: r
                        .get::<Option<String>>("by_user")?
                        .map(|u| UserId::parse_stored(&u))
                        .transpose()?,
                    reason: serde_json::from_str(&r.get::<String>("reason")?)
                        .map_err(|e| Error::Corrupt(format!("worker history reason: {e}")))?,
                })
            })
            .collect()
        })
        .await;
        tx.finish(r).await
    }

    /// Pauses the judging of a challenge: its submissions are still accepted and
    /// queued, and no worker takes one of its jobs until [`Store::resume_challenge`];
    /// attempts running now finish. [`Error::PauseState`] if it is paused already.
    pub async fn pause_challenge(
        &self,
        id: &str,
        by: Option<UserId>,
        why: &str,
    ) -> Result<Challenge, Error> {
        crate::users::nonempty("why", why)?;
        let now = us(self.now());
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            let n = tx
                .execute(
                    "UPDATE challenges SET paused_at = $2, paused_by = $3, pause_reason = $4 \
                     WHERE id = $1 AND paused_at IS NULL",
                    args![id, now, by.map(|u| u.to_string()), why.trim()],
                )
                .await?;
            if n == 0 {
                self.pause_refused(&mut tx, id, true).await?;
            }
            Ok(())
        })
        .await;
        tx.finish(r).await?;
        self.challenge(id).await
    }

    /// Resumes the judging of a paused challenge: its queued submissions are taken
    /// again, in their order. [`Error::PauseState`] if it is not paused.
    pub async fn resume_challenge(&self, id: &str) -> Result<Challenge, Error> {
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            let n = tx
                .execute(
                    "UPDATE challenges SET paused_at = NULL, paused_by = NULL, \
                     pause_reason = NULL WHERE id = $1 AND paused_at IS NOT NULL",
                    args![id],
                )
                .await?;
            if n == 0 {
                self.pause_refused(&mut tx, id, false).await?;
            }
            Ok(())
        })
        .await;
        tx.finish(r).await?;
        self.challenge(id).await
    }

    /// Why a pause or resume changed nothing: no such challenge, or it is (not) paused.
    async fn pause_refused(&self, tx: &mut Tx, id: &str, paused: bool) -> Result<(), Error> {
        let known = tx
            .fetch_optional("SELECT id FROM challenges WHERE id = $1", args![id])
            .await?;
        Err(match known {
            None => not_found("challenge", id),
            Some(_) => Error::PauseState {
                challenge: id.to_owned(),
                paused,
            },
        })
    }
}
