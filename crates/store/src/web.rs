//! Reads the web site needs beyond the API's: the history a leaderboard's plot draws
//! and how many entries each team sent.

use std::collections::HashMap;

use crate::db::args;
use crate::{Better, Error, PhaseId, Store, TeamId, count, time};

/// One scored submission of a phase as the leaderboard's plot sees it: when it was
/// received and one of its ranking numbers on the phase's scored split (no team: the
/// plot shows the best so far, not who made it).
#[derive(Debug, Clone, PartialEq)]
pub struct ScorePoint {
    pub received_at: chrono::DateTime<chrono::Utc>,
    pub value: f64,
    pub better: Better,
}

impl Store {
    /// Every scored submission of a phase with its live result's first ranking number,
    /// oldest first, teams that are hidden or disqualified left out (the leaderboard's
    /// own candidates, so the plot never shows a score the leaderboard would not).
    pub async fn score_points(&self, phase: PhaseId) -> Result<Vec<ScorePoint>, Error> {
        self.score_points_at(phase, 0).await
    }

    /// [`Store::score_points`] of the ranking number at `position` (0 the first).
    pub async fn score_points_at(
        &self,
        phase: PhaseId,
        position: u32,
    ) -> Result<Vec<ScorePoint>, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            tx.fetch_all(
                "SELECT s.received_at, f.value, f.better FROM submissions s \
                 JOIN teams t ON t.id = s.team_id \
                 JOIN results r ON r.submission_id = s.id AND r.attempt = s.current_attempt \
                 AND r.replaced = FALSE \
                 JOIN phases p ON p.id = s.phase_id \
                 JOIN result_figures f ON f.result_id = r.id AND f.position = $2 \
                 AND f.split = p.scored_split \
                 WHERE s.phase_id = $1 AND s.state = 'scored' AND f.value IS NOT NULL \
                 AND t.hidden = FALSE AND t.disqualified = FALSE \
                 ORDER BY s.received_at, s.id",
                args![phase, i64::from(position)],
            )
            .await?
            .iter()
            .map(|r| {
                Ok(ScorePoint {
                    received_at: time(r.get("received_at")?)?,
                    value: r.get("value")?,
                    better: Better::parse_stored(&r.get::<String>("better")?)?,
                })
            })
            .collect()
        })
        .await;
        tx.finish(r).await
    }

    /// How many entries each team sent in a phase: every submission but the withdrawn
    /// ones (a failed entry was an entry too; a withdrawn one never ran).
    pub async fn entries_per_team(&self, phase: PhaseId) -> Result<HashMap<TeamId, u32>, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            let rows = tx
                .fetch_all(
                    "SELECT team_id, COUNT(*) AS n FROM submissions \
                     WHERE phase_id = $1 AND state <> 'withdrawn' GROUP BY team_id",
                    args![phase],
                )
                .await?;
            let mut out = HashMap::new();
            for r in &rows {
                let team = TeamId::parse_stored(&r.get::<String>("team_id")?)?;
                out.insert(team, count(r.get::<i64>("n")?)?);
            }
            Ok(out)
        })
        .await;
        tx.finish(r).await
    }
}
