//! Leaderboards: derived from the stored results whenever asked for, never stored (a
//! published final leaderboard is a snapshot of one: `publish.rs`).

use crate::db::{Tx, args};
use crate::{
    Error, Figure, Leaderboard, LeaderboardRow, PhaseId, Rule, Split, Store, SubmissionId, TeamId,
    count, time,
};

/// The scored submissions of a phase with their live result and its first ranking
/// number on the phase's scored split (a result without figures of that split is not
/// a candidate), signed so that larger is better (`goodness`), teams hidden or disqualified
/// left out (a baseline team is shown unless hidden, with its `baseline` mark), and only results made under the challenge's current definition and data
/// manifest and (when the store has one) the current scorer version (`$2`): a leaderboard
/// never mixes scores of different rules.
const CANDIDATES: &str = "SELECT s.id AS submission_id, s.team_id, t.name AS team_name, \
                          t.baseline, \
                          s.received_at, s.method_name, s.selected, r.id AS result_id, \
                          r.run_time_s, r.result_json, \
                          CASE WHEN f.better = 'lower' THEN -f.value ELSE f.value END AS goodness \
                          FROM submissions s \
                          JOIN teams t ON t.id = s.team_id \
                          JOIN challenges c ON c.id = s.challenge_id \
                          JOIN results r ON r.submission_id = s.id AND r.attempt = s.current_attempt \
                          AND r.replaced = FALSE \
                          JOIN phases p ON p.id = s.phase_id \
                          JOIN result_figures f ON f.result_id = r.id AND f.position = 0 \
                          AND f.split = p.scored_split \
                          WHERE s.phase_id = $1 AND s.state = 'scored' \
                          AND t.hidden = FALSE AND t.disqualified = FALSE \
                          AND r.definition_sha256 = c.definition_sha256 \
                          AND r.manifest_sha256 = c.manifest_sha256 \
                          AND ($2 IS NULL OR r.scorer_version = $2)";

/// How the final entry of a team is picked: its selected submission, else its best.
pub(crate) const FINAL_PICK: &str =
    "selected DESC, (goodness IS NULL), goodness DESC, received_at, submission_id";

impl Store {
    /// A phase's leaderboard: each visible team's best (or latest, by the phase's rule)
    /// scored submission, ranked by the first ranking number of the phase's scored split
    /// (`quiz` or `exam`) in its direction (a missing
    /// figure last); equal figures share a rank (1, 1, 3). Every ranking number is shown
    /// exactly as stored. Ties are listed by time received. Only results made under the
    /// phase's current versions count (see [`Store::with_scorer_version`]).
    pub async fn leaderboard(&self, phase: PhaseId) -> Result<Leaderboard, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            let p = crate::submissions::phase_in(&mut tx, phase).await?;
            let rule = p.rule;
            let pick = match rule {
                Rule::Best => "(goodness IS NULL), goodness DESC, received_at, submission_id",
                Rule::Latest => "received_at DESC, submission_id DESC",
            };
            ranked_in(
                &mut tx,
                phase,
                p.scored_split,
                rule,
                false,
                pick,
                self.scorer_version(),
            )
            .await
        })
        .await;
        tx.finish(r).await
    }

    /// The final entries of a phase, ranked as [`Store::leaderboard`] ranks: each
    /// visible team's selected submission ([`Store::select`]), or its best scored one
    /// if it selected none (whatever the phase's rule).
    pub async fn final_leaderboard(&self, phase: PhaseId) -> Result<Leaderboard, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            let p = crate::submissions::phase_in(&mut tx, phase).await?;
            ranked_in(
                &mut tx,
                phase,
                p.scored_split,
                p.rule,
                true,
                FINAL_PICK,
                self.scorer_version(),
            )
            .await
        })
        .await;
        tx.finish(r).await
    }
}

/// The ranked rows and their figures, in one query: the picked submission of each team,
/// ranked, joined to every ranking number of its result (one output row per figure).
pub(crate) async fn ranked_in(
    tx: &mut Tx,
    phase: PhaseId,
    split: Split,
    rule: Rule,
    final_entries: bool,
    pick: &str,
    scorer_version: Option<&str>,
) -> Result<Leaderboard, Error> {
    let sql = format!(
        "WITH cand AS ({CANDIDATES}), \
         picked AS (SELECT cand.*, ROW_NUMBER() OVER \
         (PARTITION BY team_id ORDER BY {pick}) AS pick FROM cand), \
         ranked AS (SELECT submission_id, team_id, team_name, baseline, received_at, \
         method_name, result_id, run_time_s, result_json, \
         RANK() OVER (ORDER BY (goodness IS NULL), goodness DESC) AS rank \
         FROM picked WHERE pick = 1) \
         SELECT ranked.*, f.position, f.key, f.value, f.better FROM ranked \
         JOIN result_figures f ON f.result_id = ranked.result_id AND f.split = $3 \
         ORDER BY rank, received_at, team_name, submission_id, f.position"
    );
    let rows = tx
        .fetch_all(&sql, args![phase, scorer_version.map(str::to_owned), split])
        .await?;
    let mut out: Vec<LeaderboardRow> = Vec::new();
    for r in &rows {
        let submission = SubmissionId::parse_stored(&r.get::<String>("submission_id")?)?;
        let figure = Figure {
            key: r.get("key")?,
            value: r.get("value")?,
            better: crate::Better::parse_stored(&r.get::<String>("better")?)?,
        };
        match out.last_mut() {
            Some(last) if last.submission == submission => last.figures.push(figure),
            _ => out.push(LeaderboardRow {
                rank: count(r.get("rank")?)?,
                team: TeamId::parse_stored(&r.get::<String>("team_id")?)?,
                team_name: r.get("team_name")?,
                submission,
                received_at: time(r.get("received_at")?)?,
                figures: vec![figure],
                method_name: r.get("method_name")?,
                run_time_s: r.get("run_time_s")?,
                baseline: r.get("baseline")?,
                language: language_of(r.get::<Option<String>>("result_json")?.as_deref()),
            }),
        }
    }
    Ok(Leaderboard {
        phase,
        rule,
        final_entries,
        split,
        rows: out,
    })
}

/// The `language` a stored `result.json` names, if it names one.
fn language_of(result_json: Option<&str>) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(result_json?).ok()?;
    v.get("language")?.as_str().map(str::to_owned)
}
