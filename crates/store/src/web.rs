//! Reads the web site needs beyond the API's: the history a leaderboard's plot draws.

use crate::db::args;
use crate::{Better, Error, PhaseId, Store, time};

/// One scored submission of a phase as the leaderboard's plot sees it: when it was
/// received and its first ranking number on the phase's scored split (no team: the plot shows the best so far, not
/// who made it).
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
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            tx.fetch_all(
                "SELECT s.received_at, f.value, f.better FROM submissions s \
                 JOIN teams t ON t.id = s.team_id \
                 JOIN results r ON r.submission_id = s.id AND r.attempt = s.current_attempt \
                 AND r.replaced = FALSE \
                 JOIN phases p ON p.id = s.phase_id \
                 JOIN result_figures f ON f.result_id = r.id AND f.position = 0 \
                 AND f.split = p.scored_split \
                 WHERE s.phase_id = $1 AND s.state = 'scored' AND f.value IS NOT NULL \
                 AND t.hidden = FALSE AND t.disqualified = FALSE \
                 ORDER BY s.received_at, s.id",
                args![phase],
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
}
