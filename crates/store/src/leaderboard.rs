//! Leaderboards: derived from the stored results whenever asked for, never stored.

use std::collections::HashMap;

use crate::db::args;
use crate::{
    Error, Figure, Leaderboard, LeaderboardRow, PhaseId, Rule, Store, SubmissionId, TeamId, count,
    time,
};

/// The scored submissions of a phase with their live result and its first ranking
/// number, signed so that larger is better (`goodness`), teams hidden or disqualified
/// left out.
const CANDIDATES: &str = "SELECT s.id AS submission_id, s.team_id, t.name AS team_name, \
                          s.received_at, s.method_name, s.selected, r.id AS result_id, \
                          CASE WHEN f.better = 'lower' THEN -f.value ELSE f.value END AS goodness \
                          FROM submissions s \
                          JOIN teams t ON t.id = s.team_id \
                          JOIN results r ON r.submission_id = s.id AND r.attempt = s.current_attempt \
                          AND r.replaced = FALSE \
                          JOIN result_figures f ON f.result_id = r.id AND f.position = 0 \
                          WHERE s.phase_id = $1 AND s.state = 'scored' \
                          AND t.hidden = FALSE AND t.disqualified = FALSE";

impl Store {
    /// A phase's leaderboard: each visible team's best (or latest, by the phase's rule)
    /// scored submission, ranked by the first ranking number in its direction (a missing
    /// figure last); equal figures share a rank (1, 1, 3). Every ranking number is shown
    /// exactly as stored. Ties are listed by time received.
    pub async fn leaderboard(&self, phase: PhaseId) -> Result<Leaderboard, Error> {
        let rule = self.phase(phase).await?.rule;
        let pick = match rule {
            Rule::Best => "(goodness IS NULL), goodness DESC, received_at, submission_id",
            Rule::Latest => "received_at DESC, submission_id DESC",
        };
        self.ranked(phase, rule, false, pick).await
    }

    /// The final entries of a phase, ranked as [`Store::leaderboard`] ranks: each
    /// visible team's selected submission ([`Store::select`]), or its best scored one
    /// if it selected none (whatever the phase's rule).
    pub async fn final_leaderboard(&self, phase: PhaseId) -> Result<Leaderboard, Error> {
        let rule = self.phase(phase).await?.rule;
        let pick = "selected DESC, (goodness IS NULL), goodness DESC, received_at, submission_id";
        self.ranked(phase, rule, true, pick).await
    }

    async fn ranked(
        &self,
        phase: PhaseId,
        rule: Rule,
        final_entries: bool,
        pick: &str,
    ) -> Result<Leaderboard, Error> {
        let sql = format!(
            "WITH cand AS ({CANDIDATES}), \
             picked AS (SELECT cand.*, ROW_NUMBER() OVER \
             (PARTITION BY team_id ORDER BY {pick}) AS pick FROM cand) \
             SELECT submission_id, team_id, team_name, received_at, method_name, result_id, \
             RANK() OVER (ORDER BY (goodness IS NULL), goodness DESC) AS rank \
             FROM picked WHERE pick = 1 ORDER BY rank, received_at, team_name"
        );
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            let rows = tx.fetch_all(&sql, args![phase]).await?;
            let figures = tx
                .fetch_all(
                    "SELECT f.result_id, f.key, f.value, f.better FROM result_figures f \
                     JOIN results r ON r.id = f.result_id \
                     JOIN submissions s ON s.id = r.submission_id \
                     WHERE s.phase_id = $1 AND s.state = 'scored' AND r.replaced = FALSE \
                     ORDER BY f.result_id, f.position",
                    args![phase],
                )
                .await?;
            let mut by_result: HashMap<String, Vec<Figure>> = HashMap::new();
            for f in &figures {
                by_result
                    .entry(f.get("result_id")?)
                    .or_default()
                    .push(Figure {
                        key: f.get("key")?,
                        value: f.get("value")?,
                        better: crate::Better::parse_stored(&f.get::<String>("better")?)?,
                    });
            }
            let rows = rows
                .iter()
                .map(|r| {
                    Ok(LeaderboardRow {
                        rank: count(r.get("rank")?)?,
                        team: TeamId::parse_stored(&r.get::<String>("team_id")?)?,
                        team_name: r.get("team_name")?,
                        submission: SubmissionId::parse_stored(&r.get::<String>("submission_id")?)?,
                        received_at: time(r.get("received_at")?)?,
                        figures: by_result
                            .remove(&r.get::<String>("result_id")?)
                            .unwrap_or_default(),
                        method_name: r.get("method_name")?,
                    })
                })
                .collect::<Result<Vec<_>, Error>>()?;
            Ok(Leaderboard {
                phase,
                rule,
                final_entries,
                rows,
            })
        })
        .await;
        tx.finish(r).await
    }
}
