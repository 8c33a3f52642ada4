//! An attempt's files put in place under the attempt's own lock in the database, so
//! that several server processes on one database (replicas) agree on when a result
//! folder may still change (docs/service.md, "A fleet").

use std::future::Future;

use crate::db::args;
use crate::queue::why_refused;
use crate::{AttemptKey, Error, Store, WorkerId};

impl Store {
    /// Runs `place` while `worker` holds the running attempt `key`, with the attempt's
    /// row locked until `place` is done: on PostgreSQL `SELECT … FOR UPDATE` (a report
    /// or a heartbeat of the attempt, in any process on the database, waits for it; the
    /// reconciler skips the attempt until the next pass), on SQLite the database's one
    /// write lock. So `place` never runs for an attempt that has ended, and an attempt
    /// never ends while `place` runs: a result folder never changes behind an accepted
    /// result, whichever server took the report.
    ///
    /// Refused with [`WorkerRefusal::Attempt`](crate::WorkerRefusal::Attempt) (saying why) when the attempt is not the
    /// worker's running one; `place`'s own failure is the inner `Err`. Nothing is
    /// written: the lock is the point. Keep `place` short (a rename and an fsync):
    /// writes of the attempt wait for it.
    pub async fn while_holding<T, E, F>(
        &self,
        worker: WorkerId,
        key: AttemptKey,
        place: F,
    ) -> Result<Result<T, E>, Error>
    where
        F: Future<Output = Result<T, E>>,
    {
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            let lock = if tx.is_postgres() {
                " FOR UPDATE OF a"
            } else {
                ""
            };
            let held = tx
                .fetch_optional(
                    &format!(
                        "SELECT a.number FROM attempts a \
                         JOIN submissions s ON s.id = a.submission_id \
                         WHERE a.submission_id = $1 AND a.number = $2 AND a.worker_id = $3 \
                         AND a.ended_at IS NULL AND s.current_attempt = a.number \
                         AND s.state = 'running'{lock}"
                    ),
                    args![key.submission, i64::from(key.number), worker],
                )
                .await?;
            if held.is_none() {
                return Err(why_refused(&mut tx, key, worker).await?);
            }
            Ok(place.await)
        })
        .await;
        tx.finish(r).await
    }
}
