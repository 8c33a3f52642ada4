//! Rescoring as a record (docs/service.md, "Rescoring"): who asked and why, its scope
//! and versions, and the changes it computed; applied or cancelled as a whole, once.
//! The store does not score: the caller computes each new result from the stored
//! outputs (the judge's own score stage) and records them here.

use crate::db::{Row, Tx, args};
use crate::queue::replace_in;
use crate::submissions::{SUBMISSION_COLUMNS, submission_from};
use crate::users::not_found;
use crate::{
    Error, NewRescore, Rescore, RescoreChange, RescoreId, RescoreState, ResultRecord, Store,
    Submission, UserId, opt_time, time, us,
};

fn rescore_from(r: &Row, changes: Vec<RescoreChange>) -> Result<Rescore, Error> {
    let user = |col: &str| -> Result<Option<UserId>, Error> {
        r.get::<Option<String>>(col)?
            .map(|t| UserId::parse_stored(&t))
            .transpose()
    };
    Ok(Rescore {
        id: RescoreId::parse_stored(&r.get::<String>("id")?)?,
        challenge: r.get("challenge_id")?,
        requested_by: user("requested_by")?,
        reason: r.get("reason")?,
        scope: serde_json::from_str(&r.get::<String>("scope")?)
            .map_err(|e| Error::Corrupt(format!("rescore scope: {e}")))?,
        scorer_version: r.get("scorer_version")?,
        judge_version: r.get("judge_version")?,
        state: RescoreState::parse_stored(&r.get::<String>("state")?)?,
        created_at: time(r.get("created_at")?)?,
        decided_at: opt_time(r.get("decided_at")?)?,
        decided_by: user("decided_by")?,
        changes,
    })
}

async fn rescore_in(tx: &mut Tx, id: RescoreId) -> Result<Rescore, Error> {
    let row = tx
        .fetch_optional(
            "SELECT id, challenge_id, requested_by, reason, scope, scorer_version, \
             judge_version, state, created_at, decided_at, decided_by FROM rescores \
             WHERE id = $1",
            args![id],
        )
        .await?
        .ok_or_else(|| not_found("rescore", id))?;
    let mut changes = Vec::new();
    for c in tx
        .fetch_all(
            "SELECT report FROM rescore_changes WHERE rescore_id = $1 \
             ORDER BY submission_id, attempt",
            args![id],
        )
        .await?
    {
        changes.push(
            serde_json::from_str::<RescoreChange>(&c.get::<String>("report")?)
                .map_err(|e| Error::Corrupt(format!("rescore change: {e}")))?,
        );
    }
    rescore_from(&row, changes)
}

impl Store {
    /// The scored submissions of a challenge with their live result: what a rescoring
    /// recomputes.
    pub async fn rescorable(
        &self,
        challenge: &str,
    ) -> Result<Vec<(Submission, ResultRecord)>, Error> {
        let subs: Vec<Submission> = {
            let mut tx = self.db.read().await?;
            let r = crate::db::attempt(async {
                tx.fetch_all(
                    &format!(
                        "SELECT {SUBMISSION_COLUMNS} FROM submissions WHERE challenge_id = $1 \
                         AND state = 'scored' ORDER BY received_at, id"
                    ),
                    args![challenge],
                )
                .await?
                .iter()
                .map(submission_from)
                .collect()
            })
            .await;
            tx.finish(r).await?
        };
        let mut out = Vec::new();
        for s in subs {
            let live = self
                .results(s.id)
                .await?
                .into_iter()
                .rev()
                .find(|r| r.attempt.number == s.attempt && !r.replaced);
            if let Some(r) = live {
                out.push((s, r));
            }
        }
        Ok(out)
    }

    /// Records a rescoring, `pending`, with the changes it computed.
    pub async fn create_rescore(&self, new: &NewRescore) -> Result<Rescore, Error> {
        crate::users::nonempty("reason", &new.reason)?;
        let id = RescoreId::new();
        let now = us(self.now());
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            // The challenge must exist (the foreign key would say so less clearly).
            tx.fetch_optional(
                "SELECT id FROM challenges WHERE id = $1",
                args![&new.challenge],
            )
            .await?
            .ok_or_else(|| not_found("challenge", &new.challenge))?;
            let scope = serde_json::to_string(&new.scope)
                .map_err(|e| Error::Corrupt(format!("rescore scope: {e}")))?;
            tx.execute(
                "INSERT INTO rescores (id, challenge_id, requested_by, reason, scope, \
                 scorer_version, judge_version, state, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', $8)",
                args![
                    id,
                    &new.challenge,
                    new.requested_by.map(|u| u.to_string()),
                    &new.reason,
                    scope,
                    &new.scorer_version,
                    &new.judge_version,
                    now
                ],
            )
            .await?;
            for c in &new.changes {
                let text = serde_json::to_string(c)
                    .map_err(|e| Error::Corrupt(format!("rescore change: {e}")))?;
                tx.execute(
                    "INSERT INTO rescore_changes (rescore_id, result_id, submission_id, \
                     attempt, report) VALUES ($1, $2, $3, $4, $5)",
                    args![
                        id,
                        c.result.to_string(),
                        c.attempt.submission,
                        i64::from(c.attempt.number),
                        text
                    ],
                )
                .await?;
            }
            rescore_in(&mut tx, id).await
        })
        .await;
        tx.finish(r).await
    }

    /// Every rescoring of a challenge, newest first, each with its changes: its
    /// history, applied, cancelled and pending alike.
    pub async fn rescores(&self, challenge: &str) -> Result<Vec<Rescore>, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            let ids = tx
                .fetch_all(
                    "SELECT id FROM rescores WHERE challenge_id = $1 \
                     ORDER BY created_at DESC, id",
                    args![challenge],
                )
                .await?;
            let mut out = Vec::with_capacity(ids.len());
            for row in ids {
                let id = RescoreId::parse_stored(&row.get::<String>("id")?)?;
                out.push(rescore_in(&mut tx, id).await?);
            }
            Ok(out)
        })
        .await;
        tx.finish(r).await
    }

    pub async fn rescore(&self, id: RescoreId) -> Result<Rescore, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async { rescore_in(&mut tx, id).await }).await;
        tx.finish(r).await
    }

    /// Applies a pending rescoring as a whole, in one transaction: each changed
    /// result is marked replaced (and kept) and its new result becomes live. Refused
    /// (nothing changes) if the rescoring is not pending, or if any result it would
    /// replace is no longer live (judged or rescored since).
    pub async fn apply_rescore(&self, id: RescoreId, by: Option<UserId>) -> Result<Rescore, Error> {
        self.decide(id, by, RescoreState::Applied).await
    }

    /// Cancels a pending rescoring: no score changes; the record stays.
    pub async fn cancel_rescore(
        &self,
        id: RescoreId,
        by: Option<UserId>,
    ) -> Result<Rescore, Error> {
        self.decide(id, by, RescoreState::Cancelled).await
    }

    async fn decide(
        &self,
        id: RescoreId,
        by: Option<UserId>,
        to: RescoreState,
    ) -> Result<Rescore, Error> {
        let now = us(self.now());
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            let n = tx
                .execute(
                    "UPDATE rescores SET state = $2, decided_at = $3, decided_by = $4 \
                     WHERE id = $1 AND state = 'pending'",
                    args![id, to, now, by.map(|u| u.to_string())],
                )
                .await?;
            if n == 0 {
                let r = rescore_in(&mut tx, id).await?;
                return Err(Error::Invalid {
                    field: "rescore",
                    problem: format!("rescore {id} is {}, not pending", r.state),
                });
            }
            let r = rescore_in(&mut tx, id).await?;
            if to == RescoreState::Applied {
                for c in &r.changes {
                    replace_in(&mut tx, c.attempt, &c.report, now, Some(c.result), Some(id))
                        .await?;
                }
            }
            Ok(r)
        })
        .await;
        let r = tx.finish(r).await;
        if r.is_ok() {
            self.boards_changed();
        }
        r
    }
}
