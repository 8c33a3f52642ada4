//! The queue: taking a job under a lease, heartbeats, reports (accepted once per
//! attempt), the reconciler, and the stored results.

use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::db::{Row, Tx, args};
use crate::submissions::{submission_in, transition};
use crate::users::not_found;
use crate::{
    AttemptKey, Better, Blame, Build, Error, Figure, Job, Outcome, PhaseId, Reason, Reconciled,
    Report, RescoreId, ResultId, ResultRecord, Split, State, Store, SubmissionId, TeamId, WorkerId,
    WorkerRefusal, WorkerState, count, time, us,
};

/// How many times `take_job` starts over when a team turned out to be at its running cap
/// (PostgreSQL only: another worker took for the same team in the meantime).
const TAKE_TRIES: usize = 8;

fn lease_end(now: DateTime<Utc>, lease: Duration) -> Result<DateTime<Utc>, Error> {
    chrono::Duration::from_std(lease)
        .ok()
        .and_then(|d| now.checked_add_signed(d))
        .ok_or_else(|| Error::Invalid {
            field: "lease",
            problem: format!("{lease:?} is too long"),
        })
}

/// What a worker is seen doing: taking a job (refused unless it is enabled and runs the
/// server's build), or going on with one it holds (refused only when disabled).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    Take,
    Run,
}

/// Marks the worker seen; refuses an unknown one, a disabled one, a draining one's take
/// and the take of one that did not announce `build` (the server's, when the store
/// checks it). The update comes first: it locks the worker's row, so that a state change
/// committed meanwhile (a disable, which ends the worker's running attempts) is seen
/// here rather than missed.
async fn worker_seen(
    tx: &mut Tx,
    worker: WorkerId,
    now: i64,
    seen: Seen,
    build: Option<&Build>,
) -> Result<(), Error> {
    let r = tx
        .fetch_optional(
            "UPDATE workers SET last_seen_at = $2 WHERE id = $1 \
             RETURNING name, state, judge_version, runtime_lock",
            args![worker, now],
        )
        .await?
        .ok_or_else(|| not_found("worker", worker))?;
    let name: String = r.get("name")?;
    match WorkerState::parse_stored(&r.get::<String>("state")?)? {
        WorkerState::Disabled => return Err(Error::Refused(WorkerRefusal::Disabled(name))),
        WorkerState::Draining if seen == Seen::Take => {
            return Err(Error::Refused(WorkerRefusal::Draining(name)));
        }
        _ => {}
    }
    if seen == Seen::Take
        && let Some(server) = build
    {
        let announced = match (
            r.get::<Option<String>>("judge_version")?,
            r.get::<Option<String>>("runtime_lock")?,
        ) {
            (Some(judge_version), Some(runtime_lock)) => Some(Build {
                judge_version,
                runtime_lock,
            }),
            _ => None,
        };
        if announced.as_ref() != Some(server) {
            return Err(Error::Refused(WorkerRefusal::WrongVersion {
                worker: name,
                announced,
                server: server.clone(),
            }));
        }
    }
    Ok(())
}

/// The answer to a take sent again: `Some(job)` when the take `take` of `worker`
/// leased an attempt that still runs (its lease renewed to `expires`), `Some(None)`
/// when that attempt ended since, `None` when the take id is new.
async fn taken_before(
    tx: &mut Tx,
    worker: WorkerId,
    take: &str,
    expires: DateTime<Utc>,
) -> Result<Option<Option<Job>>, Error> {
    let Some(r) = tx
        .fetch_optional(
            "SELECT a.submission_id, a.number, a.ended_at, s.current_attempt, s.state, \
             s.challenge_id, s.phase_id, s.team_id, s.entry_sha256, s.entry_path \
             FROM attempts a JOIN submissions s ON s.id = a.submission_id \
             WHERE a.worker_id = $1 AND a.take_id = $2",
            args![worker, take],
        )
        .await?
    else {
        return Ok(None);
    };
    let key = AttemptKey {
        submission: SubmissionId::parse_stored(&r.get::<String>("submission_id")?)?,
        number: count(r.get("number")?)?,
    };
    let running = r.get::<Option<i64>>("ended_at")?.is_none()
        && r.get::<i64>("current_attempt")? == i64::from(key.number)
        && r.get::<String>("state")? == State::Running.as_str();
    if !running {
        return Ok(Some(None));
    }
    tx.execute(
        "UPDATE attempts SET lease_expires_at = $3 \
         WHERE submission_id = $1 AND number = $2 AND ended_at IS NULL",
        args![key.submission, i64::from(key.number), us(expires)],
    )
    .await?;
    Ok(Some(Some(Job {
        attempt: key,
        challenge: r.get("challenge_id")?,
        phase: PhaseId::parse_stored(&r.get::<String>("phase_id")?)?,
        team: TeamId::parse_stored(&r.get::<String>("team_id")?)?,
        entry_sha256: r.get("entry_sha256")?,
        entry_path: r.get("entry_path")?,
        lease_expires_at: expires,
    })))
}

/// Why an attempt is not this worker's current one (for [`WorkerRefusal::Attempt`]).
pub(crate) async fn why_refused(
    tx: &mut Tx,
    key: AttemptKey,
    worker: WorkerId,
) -> Result<Error, Error> {
    let r = tx
        .fetch_optional(
            "SELECT a.worker_id, a.ended_at, a.outcome, s.current_attempt, s.state \
             FROM attempts a JOIN submissions s ON s.id = a.submission_id \
             WHERE a.submission_id = $1 AND a.number = $2",
            args![key.submission, i64::from(key.number)],
        )
        .await?;
    let why = match r {
        None => "no such attempt".to_owned(),
        Some(r) => {
            let holder: String = r.get("worker_id")?;
            let ended: Option<i64> = r.get("ended_at")?;
            let outcome: Option<String> = r.get("outcome")?;
            let current: i64 = r.get("current_attempt")?;
            if holder != worker.to_string() {
                "the attempt is another worker's".to_owned()
            } else if let Some(ended) = ended {
                format!(
                    "the attempt already ended ({}, at {}): a result is accepted once",
                    outcome.as_deref().unwrap_or("?"),
                    time(ended)?.to_rfc3339()
                )
            } else if current != i64::from(key.number) {
                format!("the submission is on attempt {current} now")
            } else {
                format!(
                    "the submission is {}, not running",
                    r.get::<String>("state")?
                )
            }
        }
    };
    Ok(Error::Refused(WorkerRefusal::Attempt { attempt: key, why }))
}

fn figure_from(r: &Row) -> Result<Figure, Error> {
    Ok(Figure {
        key: r.get("key")?,
        value: r.get("value")?,
        better: Better::parse_stored(&r.get::<String>("better")?)?,
    })
}

fn check_report(r: &Report) -> Result<(), Error> {
    let json = |field: &'static str, text: &Option<String>| -> Result<(), Error> {
        if let Some(t) = text {
            serde_json::from_str::<serde::de::IgnoredAny>(t).map_err(|e| Error::Invalid {
                field,
                problem: format!("not JSON: {e}"),
            })?;
        }
        Ok(())
    };
    json("result.json", &r.result_json)?;
    json("private score", &r.private_json)?;
    if r.outcome != Outcome::Error && r.result_json.is_none() {
        return Err(Error::Invalid {
            field: "report",
            problem: format!("a {} report carries result.json", r.outcome),
        });
    }
    if let Some(f) = r
        .figures
        .iter()
        .chain(&r.quiz_figures)
        .find(|f| f.value.is_some_and(|v| !v.is_finite()))
    {
        // SQLite would store NaN as NULL and PostgreSQL as NaN: a missing figure is None.
        return Err(Error::Invalid {
            field: "report",
            problem: format!("ranking number {:?} is not finite (give None)", f.key),
        });
    }
    match r.outcome {
        Outcome::Scored if r.figures.is_empty() => Err(Error::Invalid {
            field: "report",
            problem: "a scored report carries its ranking numbers".to_owned(),
        }),
        Outcome::Failed | Outcome::Error if !r.figures.is_empty() || !r.quiz_figures.is_empty() => {
            Err(Error::Invalid {
                field: "report",
                problem: format!("a {} report has no ranking numbers", r.outcome),
            })
        }
        _ => Ok(()),
    }
}

/// The judge's time over all stages of a `result.json`, in whole seconds: the sum of
/// its stages' `wall_time_s` (a hidden stage's is whole already).
pub(crate) fn run_time_of(result_json: Option<&str>) -> Option<f64> {
    let v: serde_json::Value = serde_json::from_str(result_json?).ok()?;
    let total: f64 = v
        .get("stages")?
        .as_array()?
        .iter()
        .filter_map(|s| s.get("wall_time_s").and_then(serde_json::Value::as_f64))
        .sum();
    total.is_finite().then(|| total.round())
}

/// Stores a result and its figures for an attempt; a second live result for the same
/// attempt is refused by the database's unique index. What it was judged with (the
/// entry's sha256, the challenge's definition and manifest hashes) is recorded from the
/// submission and its challenge: the worker checked both before judging.
async fn insert_result(
    tx: &mut Tx,
    key: AttemptKey,
    r: &Report,
    now: i64,
    rescore: Option<RescoreId>,
) -> Result<ResultId, Error> {
    let id = ResultId::new();
    let warnings =
        serde_json::to_string(&r.warnings).map_err(|e| Error::Corrupt(format!("warnings: {e}")))?;
    tx.execute(
        "INSERT INTO results (id, submission_id, attempt, outcome, result_json, private_json, \
         scorer_version, judge_version, created_at, runtime_lock, run_time_s, warnings, \
         rescore_id, definition_sha256, manifest_sha256, entry_sha256) \
         SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, \
         c.definition_sha256, c.manifest_sha256, s.entry_sha256 \
         FROM submissions s JOIN challenges c ON c.id = s.challenge_id WHERE s.id = $2",
        args![
            id,
            key.submission,
            i64::from(key.number),
            r.outcome,
            r.result_json.clone(),
            r.private_json.clone(),
            &r.scorer_version,
            &r.judge_version,
            now,
            r.runtime_lock.clone(),
            run_time_of(r.result_json.as_deref()),
            warnings,
            rescore.map(|r| r.to_string()),
        ],
    )
    .await
    .map_err(|e| {
        if e.is_unique_violation() {
            Error::Refused(WorkerRefusal::Attempt {
                attempt: key,
                why: "a result for this attempt is already stored".to_owned(),
            })
        } else {
            e
        }
    })?;
    let exam = r.figures.iter().enumerate().map(|f| (Split::Exam, f));
    let quiz = r.quiz_figures.iter().enumerate().map(|f| (Split::Quiz, f));
    for (split, (position, f)) in exam.chain(quiz) {
        tx.execute(
            "INSERT INTO result_figures (result_id, split, position, key, value, better) \
             VALUES ($1, $2, $3, $4, $5, $6)",
            args![id, split, position as i64, &f.key, f.value, f.better],
        )
        .await
        .map_err(|e| {
            if e.is_unique_violation() {
                Error::Invalid {
                    field: "report",
                    problem: format!("{split} ranking number {:?} given twice", f.key),
                }
            } else {
                e
            }
        })?;
    }
    Ok(id)
}

/// After an attempt ended in `error`: queue the submission again if it has attempts
/// left. Returns whether it did.
///
/// Only the attempts charged to the run count toward [`crate::Policy::max_attempts`]:
/// those that ended in the worker's own error (a judge or machine fault, a lapsed
/// lease). An attempt ended by something else (the worker's process or the server
/// started again, an organiser disabled the worker, a stop) says nothing about the
/// entry and is not charged. All attempts, charged or not, are bounded by
/// [`crate::Policy::max_attempts_total`]: a run that keeps taking its worker down
/// with it ends somewhere, for an organiser to see.
async fn retry(
    tx: &mut Tx,
    id: SubmissionId,
    number: u32,
    policy: &crate::Policy,
    now: i64,
) -> Result<bool, Error> {
    let r = tx
        .fetch_one(
            "SELECT COUNT(*) AS n, \
             COUNT(CASE WHEN COALESCE(blame, 'worker') <> 'elsewhere' THEN 1 END) AS charged \
             FROM attempts WHERE submission_id = $1 AND ended_at IS NOT NULL",
            args![id],
        )
        .await?;
    let charged = count(r.get::<i64>("charged")?)?;
    let all = count(r.get::<i64>("n")?)?.max(number);
    if charged >= policy.max_attempts || all >= policy.max_attempts_total {
        return Ok(false);
    }
    transition(
        tx,
        id,
        State::Error,
        State::Queued,
        None,
        &Reason::Retry {
            next_attempt: number + 1,
        },
        now,
    )
    .await?;
    Ok(true)
}

impl Store {
    /// Hands the worker the next job, or `None` when nothing is eligible: the oldest
    /// queued submission (by `received_at`) of a team below its running cap
    /// ([`crate::Policy::team_running_cap`]), teams with fewer running first — so a
    /// team's second submission waits behind other teams' first ones. The submission
    /// becomes `running` on a new attempt, leased to the worker until `now + lease`.
    /// `challenges` limits the jobs to those the worker has data for.
    ///
    /// Atomic: on SQLite the transaction holds the one write lock; on PostgreSQL the
    /// candidate's team and the submission are locked, in that order, with
    /// `FOR UPDATE … SKIP LOCKED` (a worker skips what another is taking), and the
    /// team's running count is read again under the team's lock before the job is
    /// handed out.
    pub async fn take_job(
        &self,
        worker: WorkerId,
        lease: Duration,
        challenges: Option<&[String]>,
    ) -> Result<Option<Job>, Error> {
        self.take_job_once(worker, lease, challenges, None).await
    }

    /// [`Store::take_job`] with the take's own id (`take`, chosen by the worker, 1 to 64
    /// visible ASCII characters, sent again with every retry of the same take): a take
    /// whose answer was lost (the server killed after the commit, a proxy's timeout)
    /// and is sent again gets the same job, its lease renewed, rather than a second one
    /// while the first lapses unknown to anyone. If that attempt has ended since, the
    /// answer is `None`: a take id hands out one attempt at most.
    pub async fn take_job_once(
        &self,
        worker: WorkerId,
        lease: Duration,
        challenges: Option<&[String]>,
        take: Option<&str>,
    ) -> Result<Option<Job>, Error> {
        if let Some(t) = take
            && (t.is_empty() || t.len() > 64 || !t.bytes().all(|b| b.is_ascii_graphic()))
        {
            return Err(Error::Invalid {
                field: "take",
                problem: "give 1 to 64 visible ASCII characters".to_owned(),
            });
        }
        for _ in 0..TAKE_TRIES {
            match self.try_take(worker, lease, challenges, take).await {
                Ok(Some(outcome)) => return Ok(outcome),
                Ok(None) => {}
                Err(e @ Error::Refused(WorkerRefusal::WrongVersion { .. })) => {
                    // Shown to organisers (the take's own transaction was rolled back).
                    self.record_refusal(worker, &e.to_string()).await?;
                    return Err(e);
                }
                Err(e) => return Err(e),
            }
        }
        // Other workers kept taking for the teams first in line: nothing for now.
        Ok(None)
    }

    /// One try: `Some(job or none)`, or `None` to start over.
    async fn try_take(
        &self,
        worker: WorkerId,
        lease: Duration,
        challenges: Option<&[String]>,
        take: Option<&str>,
    ) -> Result<Option<Option<Job>>, Error> {
        let cap = i64::from(self.policy.team_running_cap);
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            let now = self.now_in(&mut tx).await?;
            worker_seen(&mut tx, worker, us(now), Seen::Take, self.build()).await?;
            if let Some(t) = take
                && let Some(again) =
                    taken_before(&mut tx, worker, t, lease_end(now, lease)?).await?
            {
                return Ok(Some(again));
            }
            let mut params = args![cap];
            let filter = match challenges {
                None => String::new(),
                Some([]) => return Ok(Some(None)),
                Some(list) => {
                    let mut marks = Vec::new();
                    for c in list {
                        params.push(c.into());
                        marks.push(format!("${}", params.len()));
                    }
                    format!(" AND s.challenge_id IN ({})", marks.join(", "))
                }
            };
            // The team's row first, then the submission's: a worker that reaches a team
            // another worker is taking for skips all of that team's submissions, so a
            // team's submissions are taken oldest first. (Locked the other way round, a
            // second worker could lock the team's second submission and then the team
            // while the first worker, holding the oldest, waited for the team.)
            let lock = if tx.is_postgres() {
                " FOR UPDATE OF t, s SKIP LOCKED"
            } else {
                ""
            };
            let running = "(SELECT COUNT(*) FROM submissions r \
                           WHERE r.team_id = s.team_id AND r.state = 'running')";
            let sql = format!(
                "SELECT s.id, s.team_id, s.phase_id, s.challenge_id, s.entry_sha256, s.entry_path, \
                 s.current_attempt, {running} AS team_running \
                 FROM teams t JOIN submissions s ON s.team_id = t.id \
                 JOIN challenges c ON c.id = s.challenge_id AND c.paused_at IS NULL \
                 WHERE s.state = 'queued' AND {running} < $1{filter} \
                 ORDER BY team_running, s.received_at, s.id LIMIT 1{lock}"
            );
            let Some(r) = tx.fetch_optional(&sql, params).await? else {
                return Ok(Some(None));
            };
            let id = SubmissionId::parse_stored(&r.get::<String>("id")?)?;
            let team = TeamId::parse_stored(&r.get::<String>("team_id")?)?;
            if tx.is_postgres() {
                // The team's row is ours now; a statement started now sees every take for it
                // that committed before.
                let n: i64 = tx
                    .fetch_one(
                        "SELECT COUNT(*) AS n FROM submissions \
                         WHERE team_id = $1 AND state = 'running'",
                        args![team],
                    )
                    .await?
                    .get("n")?;
                if n >= cap {
                    return Ok(None);
                }
            }
            let number = count(r.get::<i64>("current_attempt")? + 1)?;
            let expires = lease_end(now, lease)?;
            tx.execute(
                "UPDATE submissions SET current_attempt = $2 WHERE id = $1",
                args![id, i64::from(number)],
            )
            .await?;
            // The worker's process (its instance, as it announced it) is recorded with
            // the attempt: a later process of the worker ends it at once.
            tx.execute(
                "INSERT INTO attempts (submission_id, number, worker_id, started_at, \
                 lease_expires_at, take_id, instance) \
                 SELECT $1, $2, $3, $4, $5, $6, instance FROM workers WHERE id = $3",
                args![id, i64::from(number), worker, us(now), us(expires), take],
            )
            .await?;
            transition(
                &mut tx,
                id,
                State::Queued,
                State::Running,
                Some(number),
                &Reason::Taken {
                    worker,
                    attempt: number,
                },
                us(now),
            )
            .await?;
            let job = Job {
                attempt: AttemptKey {
                    submission: id,
                    number,
                },
                challenge: r.get("challenge_id")?,
                phase: PhaseId::parse_stored(&r.get::<String>("phase_id")?)?,
                team,
                entry_sha256: r.get("entry_sha256")?,
                entry_path: r.get("entry_path")?,
                lease_expires_at: expires,
            };
            Ok(Some(Some(job)))
        })
        .await;
        tx.finish(r).await
    }

    /// The worker is still on the attempt: its lease now ends at `now + lease`.
    /// [`WorkerRefusal::Attempt`] when the attempt is not this worker's running one any
    /// more (the reconciler ended it, or a result was reported): the worker should stop.
    pub async fn heartbeat(
        &self,
        worker: WorkerId,
        key: AttemptKey,
        lease: Duration,
    ) -> Result<DateTime<Utc>, Error> {
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            let now = self.now_in(&mut tx).await?;
            let expires = lease_end(now, lease)?;
            worker_seen(&mut tx, worker, us(now), Seen::Run, None).await?;
            let n = tx
                .execute(
                    "UPDATE attempts SET lease_expires_at = $4 \
                     WHERE submission_id = $1 AND number = $2 AND worker_id = $3 \
                     AND ended_at IS NULL",
                    args![key.submission, i64::from(key.number), worker, us(expires)],
                )
                .await?;
            if n == 0 {
                return Err(why_refused(&mut tx, key, worker).await?);
            }
            Ok(expires)
        })
        .await;
        tx.finish(r).await
    }

    /// The worker reports how an attempt ended. Accepted once: the attempt must be the
    /// submission's current, running attempt and this worker's, not yet ended; a
    /// duplicate, late or stranger's report is [`WorkerRefusal::Attempt`] and changes
    /// nothing. A report that arrives after the lease lapsed but before the reconciler
    /// ran is still accepted (the work is done). An `error` outcome (the judge's fault,
    /// not the entry's) queues the submission again for a new attempt while it has
    /// attempts left.
    ///
    /// An `error` is taken to be the worker's own ([`Blame::Worker`]): it counts towards
    /// disabling the worker ([`crate::Policy::worker_error_limit`]). A worker that
    /// reports an error that is not its doing (its run was stopped) calls
    /// [`Store::report_blamed`].
    pub async fn report(
        &self,
        worker: WorkerId,
        key: AttemptKey,
        report: &Report,
    ) -> Result<ResultId, Error> {
        self.report_blamed(worker, key, report, Blame::Worker).await
    }

    /// [`Store::report`], saying whose an `error` is (ignored for `scored` and
    /// `failed`). Once a worker's last [`crate::Policy::worker_error_limit`] attempts
    /// were errors of its own, it is disabled in the same transaction.
    pub async fn report_blamed(
        &self,
        worker: WorkerId,
        key: AttemptKey,
        report: &Report,
        blame: Blame,
    ) -> Result<ResultId, Error> {
        check_report(report)?;
        let blame = (report.outcome == Outcome::Error).then_some(blame);
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            let now = us(self.now_in(&mut tx).await?);
            worker_seen(&mut tx, worker, now, Seen::Run, None).await?;
            let n = tx
                .execute(
                    "UPDATE attempts SET ended_at = $4, outcome = $5, blame = $6 \
                     WHERE submission_id = $1 AND number = $2 AND worker_id = $3 \
                     AND ended_at IS NULL",
                    args![
                        key.submission,
                        i64::from(key.number),
                        worker,
                        now,
                        report.outcome,
                        blame.map(|b| b.as_str())
                    ],
                )
                .await?;
            if n == 0 {
                return Err(why_refused(&mut tx, key, worker).await?);
            }
            let reason = match report.outcome {
                Outcome::Error => Reason::JudgeError {
                    worker,
                    attempt: key.number,
                    message: report.message.clone().unwrap_or_default(),
                },
                _ => Reason::Reported {
                    worker,
                    attempt: key.number,
                },
            };
            let to = report.outcome.state();
            match transition(
                &mut tx,
                key.submission,
                State::Running,
                to,
                Some(key.number),
                &reason,
                now,
            )
            .await
            {
                Ok(()) => {}
                Err(Error::Transition { .. }) => {
                    return Err(Error::Refused(WorkerRefusal::Attempt {
                        attempt: key,
                        why: "the attempt is no longer the submission's running one".to_owned(),
                    }));
                }
                Err(e) => return Err(e),
            }
            let id = insert_result(&mut tx, key, report, now, None).await?;
            if report.outcome == Outcome::Error {
                retry(&mut tx, key.submission, key.number, &self.policy, now).await?;
                if blame == Some(Blame::Worker) {
                    crate::workers::check_errors(&mut tx, &self.policy, worker, now).await?;
                }
            }
            Ok(id)
        })
        .await;
        let r = tx.finish(r).await;
        if r.is_ok() {
            self.boards_changed();
        }
        r
    }

    /// Ends every running attempt whose lease lapsed: the attempt ends as `error`, the
    /// submission goes `running → error` (reason `worker_lost`) and, while it has
    /// attempts left ([`crate::Policy::max_attempts`]), `error → queued` for a new
    /// attempt; otherwise the `error` stays, for an organiser to see. A lost lease is
    /// its worker's error (it counts towards disabling the worker). Run it periodically
    /// (every few seconds; a lease is tens of seconds).
    pub async fn reconcile(&self) -> Result<Reconciled, Error> {
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            let now = us(self.now_in(&mut tx).await?);
            let done = end_running(&mut tx, &self.policy, Ending::Lapsed, now).await?;
            let mut workers: Vec<WorkerId> = done.lost_by.clone();
            workers.sort();
            workers.dedup();
            for w in workers {
                crate::workers::check_errors(&mut tx, &self.policy, w, now).await?;
            }
            Ok(done.done)
        })
        .await;
        tx.finish(r).await
    }

    /// Every running attempt's lease ends no sooner than `now + by`: the platform itself
    /// was failing (the store unreachable, the reconciler not running: a server start, a
    /// failed or late pass), so workers' heartbeats may not have got through, and a
    /// lease that lapsed meanwhile is no worker's fault. A worker still on its attempt
    /// heartbeats within the new lease; one that is gone lapses one lease later. Returns
    /// how many leases were moved.
    pub async fn extend_leases(&self, by: Duration) -> Result<u64, Error> {
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            let until = us(lease_end(self.now_in(&mut tx).await?, by)?);
            tx.execute(
                "UPDATE attempts SET lease_expires_at = $1 \
                 WHERE ended_at IS NULL AND lease_expires_at < $1",
                args![until],
            )
            .await
        })
        .await;
        tx.finish(r).await
    }

    /// Ends at once every running attempt leased to `worker`, whatever its lease, as
    /// [`Store::reconcile`] ends a lapsed one (reason `worker_restarted`, not charged,
    /// retried while attempts are left, not held against the worker). For a worker
    /// identity that belongs to one process which has just started again: what it held
    /// before cannot be alive (the process that ran it is gone), so waiting for the
    /// lease to lapse would only delay the retry. Never call it for a worker that may
    /// still be running somewhere.
    pub async fn reclaim_worker(&self, worker: WorkerId) -> Result<Reconciled, Error> {
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            let now = us(self.now_in(&mut tx).await?);
            Ok(
                end_running(&mut tx, &self.policy, Ending::Restarted(worker), now)
                    .await?
                    .done,
            )
        })
        .await;
        tx.finish(r).await
    }

    /// Every result stored for a submission (replaced ones too), by attempt and time.
    pub async fn results(&self, id: SubmissionId) -> Result<Vec<ResultRecord>, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            let rows = tx
                .fetch_all(
                    "SELECT id, submission_id, attempt, outcome, result_json, private_json, \
                     scorer_version, judge_version, created_at, replaced, runtime_lock, \
                     definition_sha256, manifest_sha256, entry_sha256, run_time_s, warnings, \
                     rescore_id FROM results \
                     WHERE submission_id = $1 ORDER BY attempt, created_at, id",
                    args![id],
                )
                .await?;
            let mut out = Vec::new();
            for r in &rows {
                let rid = ResultId::parse_stored(&r.get::<String>("id")?)?;
                let (mut figures, mut quiz_figures) = (Vec::new(), Vec::new());
                for f in tx
                    .fetch_all(
                        "SELECT split, key, value, better FROM result_figures \
                         WHERE result_id = $1 ORDER BY split, position",
                        args![rid],
                    )
                    .await?
                {
                    match Split::parse_stored(&f.get::<String>("split")?)? {
                        Split::Exam => figures.push(figure_from(&f)?),
                        Split::Quiz => quiz_figures.push(figure_from(&f)?),
                    }
                }
                out.push(ResultRecord {
                    id: rid,
                    attempt: AttemptKey {
                        submission: id,
                        number: count(r.get("attempt")?)?,
                    },
                    outcome: Outcome::parse_stored(&r.get::<String>("outcome")?)?,
                    result_json: r.get("result_json")?,
                    private_json: r.get("private_json")?,
                    figures,
                    quiz_figures,
                    scorer_version: r.get("scorer_version")?,
                    judge_version: r.get("judge_version")?,
                    created_at: time(r.get("created_at")?)?,
                    replaced: r.get("replaced")?,
                    runtime_lock: r.get("runtime_lock")?,
                    definition_sha256: r.get("definition_sha256")?,
                    manifest_sha256: r.get("manifest_sha256")?,
                    entry_sha256: r.get("entry_sha256")?,
                    run_time_s: r.get("run_time_s")?,
                    warnings: serde_json::from_str(&r.get::<String>("warnings")?)
                        .map_err(|e| Error::Corrupt(format!("result warnings: {e}")))?,
                    rescore: r
                        .get::<Option<String>>("rescore_id")?
                        .map(|t| RescoreId::parse_stored(&t))
                        .transpose()?,
                });
            }
            Ok(out)
        })
        .await;
        tx.finish(r).await
    }

    /// Rescoring: the attempt's live result is marked replaced (and kept) and `report`
    /// becomes its live result. The outcome cannot change (rescoring recomputes scores
    /// from stored outputs; it does not judge again).
    pub async fn replace_result(
        &self,
        key: AttemptKey,
        report: &Report,
    ) -> Result<ResultId, Error> {
        check_report(report)?;
        let now = us(self.now());
        let mut tx = self.db.write().await?;
        let r =
            crate::db::attempt(async { replace_in(&mut tx, key, report, now, None, None).await })
                .await;
        let r = tx.finish(r).await;
        if r.is_ok() {
            self.boards_changed();
        }
        r
    }
}

/// Which running attempts [`end_running`] ends, and why.
#[derive(Debug, Clone)]
pub(crate) enum Ending {
    /// Every one of the worker not taken by this process of it (its instance id): the
    /// worker started again (`worker_restarted`).
    Superseded(WorkerId, String),
    /// Those whose lease lapsed (`worker_lost`, the worker's error).
    Lapsed,
    /// Every one of the worker, whose process started again (`worker_restarted`).
    Restarted(WorkerId),
    /// Every one of the worker, which was disabled (`worker_disabled`).
    Disabled(WorkerId),
}

/// What [`end_running`] did, and whose attempts it ended.
pub(crate) struct Ended {
    pub done: Reconciled,
    /// The worker of each lost attempt, in the order of `done.lost`.
    pub lost_by: Vec<WorkerId>,
}

/// Ends the running current attempts that `ending` picks as `error` and retries them.
pub(crate) async fn end_running(
    tx: &mut Tx,
    policy: &crate::Policy,
    ending: Ending,
    now: i64,
) -> Result<Ended, Error> {
    let lock = if tx.is_postgres() {
        " FOR UPDATE OF a, s SKIP LOCKED"
    } else {
        ""
    };
    let (cond, params) = match &ending {
        Ending::Lapsed => ("a.lease_expires_at < $1", args![now]),
        Ending::Restarted(w) | Ending::Disabled(w) => ("a.worker_id = $1", args![*w]),
        Ending::Superseded(w, instance) => (
            "a.worker_id = $1 AND (a.instance IS NULL OR a.instance <> $2)",
            args![*w, instance],
        ),
    };
    let lost = tx
        .fetch_all(
            &format!(
                "SELECT a.submission_id, a.number, a.worker_id FROM attempts a \
                 JOIN submissions s ON s.id = a.submission_id \
                 AND s.current_attempt = a.number \
                 WHERE a.ended_at IS NULL AND {cond} \
                 AND s.state = 'running' ORDER BY a.lease_expires_at, a.submission_id{lock}"
            ),
            params,
        )
        .await?;
    let blame = match ending {
        Ending::Lapsed => Blame::Worker,
        Ending::Restarted(_) | Ending::Disabled(_) | Ending::Superseded(..) => Blame::Elsewhere,
    };
    let mut done = Reconciled::default();
    let mut lost_by = Vec::new();
    for r in &lost {
        let key = AttemptKey {
            submission: SubmissionId::parse_stored(&r.get::<String>("submission_id")?)?,
            number: count(r.get("number")?)?,
        };
        let worker = WorkerId::parse_stored(&r.get::<String>("worker_id")?)?;
        tx.execute(
            "UPDATE attempts SET ended_at = $3, outcome = 'error', blame = $4 \
             WHERE submission_id = $1 AND number = $2 AND ended_at IS NULL",
            args![key.submission, i64::from(key.number), now, blame],
        )
        .await?;
        let attempt = key.number;
        let reason = match ending {
            Ending::Lapsed => Reason::WorkerLost { worker, attempt },
            Ending::Restarted(_) | Ending::Superseded(..) => {
                Reason::WorkerRestarted { worker, attempt }
            }
            Ending::Disabled(_) => Reason::WorkerDisabled { worker, attempt },
        };
        transition(
            tx,
            key.submission,
            State::Running,
            State::Error,
            Some(key.number),
            &reason,
            now,
        )
        .await?;
        done.lost.push(key);
        lost_by.push(worker);
        if retry(tx, key.submission, key.number, policy, now).await? {
            done.requeued.push(key.submission);
        } else {
            done.gave_up.push(key.submission);
        }
    }
    Ok(Ended { done, lost_by })
}

/// [`Store::replace_result`] inside a transaction. `expected`: the live result the
/// replacement was computed from (a rescoring's): refused if another replaced it since.
/// `rescore`: the rescoring that makes the new result.
pub(crate) async fn replace_in(
    tx: &mut Tx,
    key: AttemptKey,
    report: &Report,
    now: i64,
    expected: Option<ResultId>,
    rescore: Option<RescoreId>,
) -> Result<ResultId, Error> {
    check_report(report)?;
    // Lock the submission (its row) so that two rescorings of it run one by one.
    submission_in(tx, key.submission).await?;
    tx.execute(
        "UPDATE submissions SET selected = selected WHERE id = $1",
        args![key.submission],
    )
    .await?;
    let live = tx
        .fetch_optional(
            "UPDATE results SET replaced = TRUE, replaced_at = $3 \
             WHERE submission_id = $1 AND attempt = $2 AND replaced = FALSE \
             AND ($4 IS NULL OR id = $4) RETURNING outcome",
            args![
                key.submission,
                i64::from(key.number),
                now,
                expected.map(|r| r.to_string())
            ],
        )
        .await?
        .ok_or_else(|| {
            Error::Refused(WorkerRefusal::Attempt {
                attempt: key,
                why: match expected {
                    Some(r) => format!("its live result is no longer {r}"),
                    None => "it has no result to replace".to_owned(),
                },
            })
        })?;
    let outcome = Outcome::parse_stored(&live.get::<String>("outcome")?)?;
    if outcome != report.outcome {
        return Err(Error::Invalid {
            field: "rescoring",
            problem: format!(
                "the result was {outcome}; a rescoring cannot make it {}",
                report.outcome
            ),
        });
    }
    insert_result(tx, key, report, now, rescore).await
}
