//! Publishing a phase's final leaderboard: checked, then kept as a fixed snapshot
//! (docs/service.md, "Publishing"). Publishing again makes the next version; every
//! version stays.

use crate::db::{Tx, args};
use crate::leaderboard::{FINAL_PICK, ranked_in};
use crate::{
    Error, Leaderboard, PhaseId, Publication, PublishBlocker, State, Store, SubmissionId, TeamId,
    UserId, count, time, us,
};

/// Live scored results of the phase's visible teams made under the current versions
/// (the leaderboard's candidates, by submission).
const CURRENT: &str = "SELECT s.id FROM submissions s \
                       JOIN challenges c ON c.id = s.challenge_id \
                       JOIN results r ON r.submission_id = s.id AND r.attempt = s.current_attempt \
                       AND r.replaced = FALSE \
                       JOIN phases p ON p.id = s.phase_id \
                       JOIN result_figures f ON f.result_id = r.id AND f.position = 0 \
                       AND f.split = p.scored_split \
                       WHERE s.phase_id = $1 AND s.state = 'scored' \
                       AND r.definition_sha256 = c.definition_sha256 \
                       AND r.manifest_sha256 = c.manifest_sha256 \
                       AND ($2 IS NULL OR r.scorer_version = $2)";

/// What stops a phase from being published now: its unfinished submissions, the final
/// entries (selected, or for a team that selected none, its scored submissions) with no
/// result under the current versions, and the deadline extensions still open at `now`.
async fn blockers(
    tx: &mut Tx,
    phase: PhaseId,
    scorer: Option<&str>,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<Vec<PublishBlocker>, Error> {
    let mut out = Vec::new();
    for r in tx
        .fetch_all(
            "SELECT id, team_id, state FROM submissions WHERE phase_id = $1 \
             AND state IN ('queued', 'running', 'error') ORDER BY received_at, id",
            args![phase],
        )
        .await?
    {
        out.push(PublishBlocker::Unfinished {
            submission: SubmissionId::parse_stored(&r.get::<String>("id")?)?,
            team: TeamId::parse_stored(&r.get::<String>("team_id")?)?,
            state: State::parse_stored(&r.get::<String>("state")?)?,
        });
    }
    // A selected entry without a current result; a team that selected nothing and has
    // scored submissions, none with a current result (its latest is named).
    let sql = format!(
        "SELECT s.id, s.team_id FROM submissions s JOIN teams t ON t.id = s.team_id \
         WHERE s.phase_id = $1 AND t.hidden = FALSE AND t.disqualified = FALSE \
         AND s.state = 'scored' AND ( \
           (s.selected = TRUE AND s.id NOT IN ({CURRENT})) \
           OR (NOT EXISTS (SELECT 1 FROM submissions o WHERE o.team_id = s.team_id \
                AND o.phase_id = s.phase_id AND o.selected = TRUE) \
               AND NOT EXISTS (SELECT 1 FROM submissions o WHERE o.team_id = s.team_id \
                AND o.phase_id = s.phase_id AND o.id IN ({CURRENT})) \
               AND s.received_at = (SELECT MAX(o.received_at) FROM submissions o \
                WHERE o.team_id = s.team_id AND o.phase_id = s.phase_id \
                AND o.state = 'scored'))) \
         ORDER BY s.received_at, s.id"
    );
    for r in tx
        .fetch_all(&sql, args![phase, scorer.map(str::to_owned)])
        .await?
    {
        out.push(PublishBlocker::NoExamResult {
            submission: SubmissionId::parse_stored(&r.get::<String>("id")?)?,
            team: TeamId::parse_stored(&r.get::<String>("team_id")?)?,
        });
    }
    for e in crate::team_rules::open_extensions_in(tx, phase, now).await? {
        out.push(PublishBlocker::ExtensionOpen {
            team: e.team,
            closes: e.closes,
        });
    }
    Ok(out)
}

fn publication_from(r: &crate::db::Row) -> Result<Publication, Error> {
    Ok(Publication {
        phase: PhaseId::parse_stored(&r.get::<String>("phase_id")?)?,
        version: count(r.get("version")?)?,
        published_at: time(r.get("published_at")?)?,
        published_by: r
            .get::<Option<String>>("published_by")?
            .map(|t| UserId::parse_stored(&t))
            .transpose()?,
        board: serde_json::from_str::<Leaderboard>(&r.get::<String>("board")?)
            .map_err(|e| Error::Corrupt(format!("published leaderboard: {e}")))?,
    })
}

impl Store {
    /// What stops the phase from being published now (empty: it can be).
    pub async fn publish_blockers(&self, phase: PhaseId) -> Result<Vec<PublishBlocker>, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            crate::submissions::phase_in(&mut tx, phase).await?;
            blockers(&mut tx, phase, self.scorer_version(), self.now()).await
        })
        .await;
        tx.finish(r).await
    }

    /// Publishes the phase's final leaderboard ([`Store::final_leaderboard`]) as a
    /// fixed snapshot, the next version. Refused with [`Error::NotPublishable`] (every
    /// blocker listed) while any submission of the phase is queued, running or in
    /// `error`, a final entry has no result under the current versions, or a team's
    /// deadline extension is still open.
    pub async fn publish(&self, phase: PhaseId, by: Option<UserId>) -> Result<Publication, Error> {
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            if tx.is_postgres() {
                // Publications of one phase, one at a time: the versions are 1, 2, ….
                tx.execute(
                    "SELECT id FROM phases WHERE id = $1 FOR UPDATE",
                    args![phase],
                )
                .await?;
            }
            let p = crate::submissions::phase_in(&mut tx, phase).await?;
            let blockers = blockers(&mut tx, phase, self.scorer_version(), self.now()).await?;
            if !blockers.is_empty() {
                return Err(Error::NotPublishable {
                    phase: p.name,
                    blockers,
                });
            }
            let board = ranked_in(
                &mut tx,
                phase,
                p.scored_split,
                p.rule,
                true,
                FINAL_PICK,
                self.scorer_version(),
            )
            .await?;
            let version: i64 = tx
                .fetch_one(
                    "SELECT COALESCE(MAX(version), 0) + 1 AS v FROM publications \
                     WHERE phase_id = $1",
                    args![phase],
                )
                .await?
                .get("v")?;
            let text = serde_json::to_string(&board)
                .map_err(|e| Error::Corrupt(format!("leaderboard as JSON: {e}")))?;
            let now = self.now();
            tx.execute(
                "INSERT INTO publications (phase_id, version, published_at, published_by, board) \
                 VALUES ($1, $2, $3, $4, $5)",
                args![phase, version, us(now), by.map(|u| u.to_string()), text],
            )
            .await?;
            for row in &board.rows {
                tx.execute(
                    "INSERT INTO publication_entries (phase_id, version, submission_id) \
                     VALUES ($1, $2, $3)",
                    args![phase, version, row.submission],
                )
                .await?;
            }
            Ok(Publication {
                phase,
                version: count(version)?,
                published_at: now,
                published_by: by,
                board,
            })
        })
        .await;
        let r = tx.finish(r).await;
        if r.is_ok() {
            self.boards_changed();
        }
        r
    }

    /// A published leaderboard of the phase: the given version, or the latest;
    /// `None` when there is none.
    pub async fn publication(
        &self,
        phase: PhaseId,
        version: Option<u32>,
    ) -> Result<Option<Publication>, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            let row = match version {
                Some(v) => {
                    tx.fetch_optional(
                        "SELECT phase_id, version, published_at, published_by, board \
                         FROM publications WHERE phase_id = $1 AND version = $2",
                        args![phase, i64::from(v)],
                    )
                    .await?
                }
                None => {
                    tx.fetch_optional(
                        "SELECT phase_id, version, published_at, published_by, board \
                         FROM publications WHERE phase_id = $1 ORDER BY version DESC LIMIT 1",
                        args![phase],
                    )
                    .await?
                }
            };
            row.as_ref().map(publication_from).transpose()
        })
        .await;
        tx.finish(r).await
    }

    /// Whether the submission is a final entry in the phase's latest published
    /// leaderboard (then its team may see its exam scores).
    pub async fn is_published_entry(
        &self,
        phase: PhaseId,
        id: SubmissionId,
    ) -> Result<bool, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            Ok(tx
                .fetch_optional(
                    "SELECT 1 AS found FROM publication_entries \
                     WHERE phase_id = $1 AND submission_id = $2 AND version = \
                     (SELECT MAX(version) FROM publications WHERE phase_id = $1)",
                    args![phase, id],
                )
                .await?
                .is_some())
        })
        .await;
        tx.finish(r).await
    }
}
