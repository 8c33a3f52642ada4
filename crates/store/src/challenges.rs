//! Challenges (a definition and a data folder pinned by a manifest) and their phases.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

use crate::db::{Row, args};
use crate::manifest::{Manifest, sha256_hex};
use crate::users::{exists, missing, nonempty, not_found};
use crate::{
    Challenge, Definition, Error, NewPhase, Pause, Phase, PhaseId, Quota, Rule, Split, Store,
    UserId, opt_time, time, us,
};

const CHALLENGE_COLUMNS: &str = "id, title, definition_kind, definition, definition_sha256, \
                                 data_path, data_manifest, manifest_sha256, created_at, \
                                 paused_at, paused_by, pause_reason";

fn challenge_from(r: &Row) -> Result<Challenge, Error> {
    let kind: String = r.get("definition_kind")?;
    let text: String = r.get("definition")?;
    let definition = match kind.as_str() {
        "builtin" => Definition::Builtin(text),
        "toml" => Definition::Toml(text),
        other => return Err(Error::Corrupt(format!("definition kind {other:?}"))),
    };
    let manifest: Manifest = serde_json::from_str(&r.get::<String>("data_manifest")?)
        .map_err(|e| Error::Corrupt(format!("data manifest: {e}")))?;
    let stored: String = r.get("manifest_sha256")?;
    if manifest.sha256() != stored {
        return Err(Error::Corrupt(format!(
            "challenge manifest hashes to {}, stored {stored}",
            manifest.sha256()
        )));
    }
    Ok(Challenge {
        id: r.get("id")?,
        title: r.get("title")?,
        definition,
        definition_sha256: r.get("definition_sha256")?,
        data_path: r.get("data_path")?,
        manifest,
        created_at: time(r.get("created_at")?)?,
        paused: match opt_time(r.get("paused_at")?)? {
            None => None,
            Some(at) => Some(Pause {
                at,
                by: r
                    .get::<Option<String>>("paused_by")?
                    .map(|u| UserId::parse_stored(&u))
                    .transpose()?,
                why: r.get::<Option<String>>("pause_reason")?.unwrap_or_default(),
            }),
        },
    })
}

const PHASE_COLUMNS: &str = "id, challenge_id, name, opens_at, closes_at, selection_closes_at, \
                             quota_total, quota_per_day, quota_max_concurrent, scored_split, show_exam, rule";

pub(crate) fn phase_from(r: &Row) -> Result<Phase, Error> {
    let limit = |col: &str| -> Result<Option<u32>, Error> {
        r.get::<Option<i64>>(col)?.map(crate::count).transpose()
    };
    Ok(Phase {
        id: PhaseId::parse_stored(&r.get::<String>("id")?)?,
        challenge: r.get("challenge_id")?,
        name: r.get("name")?,
        opens: time(r.get("opens_at")?)?,
        closes: time(r.get("closes_at")?)?,
        selection_closes: opt_time(r.get("selection_closes_at")?)?,
        quota: Quota {
            total: limit("quota_total")?,
            per_day: limit("quota_per_day")?,
            max_concurrent: limit("quota_max_concurrent")?,
        },
        scored_split: Split::parse_stored(&r.get::<String>("scored_split")?)?,
        show_exam: r.get("show_exam")?,
        rule: Rule::parse_stored(&r.get::<String>("rule")?)?,
    })
}

/// What any phase must be: named, closing after it opens, its selection deadline (if
/// any) not before it closes.
fn check_phase(p: &NewPhase) -> Result<(), Error> {
    nonempty("phase name", &p.name)?;
    if p.closes <= p.opens {
        return Err(Error::Invalid {
            field: "phase",
            problem: format!("it closes ({}) before it opens ({})", p.closes, p.opens),
        });
    }
    if p.selection_closes.is_some_and(|s| s < p.closes) {
        return Err(Error::Invalid {
            field: "phase",
            problem: "the selection deadline is before the phase closes".to_owned(),
        });
    }
    Ok(())
}

impl Store {
    /// Registers a challenge: its definition (hashed) and its data folder, whose
    /// manifest is computed now (every file read and hashed, off the async runtime).
    pub async fn create_challenge(
        &self,
        id: &str,
        title: &str,
        definition: Definition,
        data_path: &Path,
    ) -> Result<Challenge, Error> {
        nonempty("challenge id", id)?;
        nonempty("challenge definition", definition.text())?;
        let Some(data) = data_path.to_str() else {
            return Err(Error::Invalid {
                field: "data path",
                problem: format!("{} is not UTF-8", data_path.display()),
            });
        };
        let dir = data_path.to_path_buf();
        let manifest = tokio::task::spawn_blocking(move || Manifest::compute(&dir))
            .await
            .map_err(|e| Error::Corrupt(format!("manifest task: {e}")))??;
        let manifest_json =
            serde_json::to_string(&manifest).map_err(|e| Error::Corrupt(e.to_string()))?;
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            let r = tx
                .fetch_one(
                    &format!(
                        "INSERT INTO challenges (id, title, definition_kind, definition, \
                         definition_sha256, data_path, data_manifest, manifest_sha256, created_at) \
                         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING {CHALLENGE_COLUMNS}"
                    ),
                    args![
                        id,
                        title,
                        definition.kind(),
                        definition.text(),
                        sha256_hex(definition.text().as_bytes()),
                        data,
                        manifest_json,
                        manifest.sha256(),
                        us(self.now()),
                    ],
                )
                .await
                .map_err(|e| exists(e, "challenge", id))?;
            let c = challenge_from(&r)?;
            Ok(c)
        })
        .await;
        tx.finish(r).await
    }

    pub async fn challenge(&self, id: &str) -> Result<Challenge, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            let r = tx
                .fetch_optional(
                    &format!("SELECT {CHALLENGE_COLUMNS} FROM challenges WHERE id = $1"),
                    args![id],
                )
                .await?
                .ok_or_else(|| not_found("challenge", id))?;
            challenge_from(&r)
        })
        .await;
        tx.finish(r).await
    }

    /// Every challenge, by id.
    pub async fn challenges(&self) -> Result<Vec<Challenge>, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            tx.fetch_all(
                &format!("SELECT {CHALLENGE_COLUMNS} FROM challenges ORDER BY id"),
                args![],
            )
            .await?
            .iter()
            .map(challenge_from)
            .collect()
        })
        .await;
        tx.finish(r).await
    }

    /// Checks a challenge's data folder (at `data_root/<id>` when given, as a worker
    /// keeps it, else at the registered path) against its manifest:
    /// [`Error::DataChanged`] if any file was added, removed or changed.
    pub async fn check_challenge_data(
        &self,
        id: &str,
        data_root: Option<&Path>,
    ) -> Result<(), Error> {
        let c = self.challenge(id).await?;
        let dir = match data_root {
            Some(root) => root.join(&c.id),
            None => PathBuf::from(&c.data_path),
        };
        tokio::task::spawn_blocking(move || c.manifest.verify(&dir))
            .await
            .map_err(|e| Error::Corrupt(format!("manifest task: {e}")))?
    }

    /// Gives a challenge a new title (its definition and data stay as registered).
    pub async fn set_challenge_title(&self, id: &str, title: &str) -> Result<Challenge, Error> {
        nonempty("challenge title", title)?;
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            tx.fetch_optional(
                &format!(
                    "UPDATE challenges SET title = $2 WHERE id = $1 RETURNING {CHALLENGE_COLUMNS}"
                ),
                args![id, title.trim()],
            )
            .await?
            .ok_or_else(|| not_found("challenge", id))
            .and_then(|r| challenge_from(&r))
        })
        .await;
        tx.finish(r).await
    }

    /// Changes a phase of a challenge (`name` is its name now; `p.name` may rename it):
    /// its times, limits, scored split, exam visibility and ranking rule, under the
    /// checks a new phase passes. Its submissions, extensions and published boards stay
    /// with it (they name its id).
    pub async fn update_phase(
        &self,
        challenge: &str,
        name: &str,
        p: &NewPhase,
    ) -> Result<Phase, Error> {
        check_phase(p)?;
        let limit = |v: Option<u32>| v.map(i64::from);
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            tx.fetch_optional(
                &format!(
                    "UPDATE phases SET name = $3, opens_at = $4, closes_at = $5, \
                     selection_closes_at = $6, quota_total = $7, quota_per_day = $8, \
                     quota_max_concurrent = $9, scored_split = $10, show_exam = $11, rule = $12 \
                     WHERE challenge_id = $1 AND name = $2 RETURNING {PHASE_COLUMNS}"
                ),
                args![
                    challenge,
                    name,
                    &p.name,
                    us(p.opens),
                    us(p.closes),
                    p.selection_closes.map(us),
                    limit(p.quota.total),
                    limit(p.quota.per_day),
                    limit(p.quota.max_concurrent),
                    p.scored_split,
                    p.show_exam,
                    p.rule,
                ],
            )
            .await
            .map_err(|e| exists(e, "phase", &p.name))?
            .ok_or_else(|| not_found("phase", name))
            .and_then(|r| phase_from(&r))
        })
        .await;
        let r = tx.finish(r).await;
        if r.is_ok() {
            // Its split, rule or visibility may rank its boards differently now.
            self.boards_changed();
        }
        r
    }

    /// A new phase of a challenge.
    pub async fn create_phase(&self, challenge: &str, p: &NewPhase) -> Result<Phase, Error> {
        check_phase(p)?;
        let limit = |v: Option<u32>| v.map(i64::from);
        let id = PhaseId::new();
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            let r = tx
                .fetch_one(
                    &format!(
                        "INSERT INTO phases (id, challenge_id, name, opens_at, closes_at, \
                         selection_closes_at, quota_total, quota_per_day, quota_max_concurrent, \
                         scored_split, show_exam, rule, created_at) \
                         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) \
                         RETURNING {PHASE_COLUMNS}"
                    ),
                    args![
                        id,
                        challenge,
                        &p.name,
                        us(p.opens),
                        us(p.closes),
                        p.selection_closes.map(us),
                        limit(p.quota.total),
                        limit(p.quota.per_day),
                        limit(p.quota.max_concurrent),
                        p.scored_split,
                        p.show_exam,
                        p.rule,
                        us(self.now()),
                    ],
                )
                .await
                .map_err(|e| exists(e, "phase", &p.name))
                .map_err(|e| missing(e, "challenge", challenge))?;
            let phase = phase_from(&r)?;
            Ok(phase)
        })
        .await;
        tx.finish(r).await
    }

    pub async fn phase(&self, id: PhaseId) -> Result<Phase, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            let r = tx
                .fetch_optional(
                    &format!("SELECT {PHASE_COLUMNS} FROM phases WHERE id = $1"),
                    args![id],
                )
                .await?
                .ok_or_else(|| not_found("phase", id))?;
            phase_from(&r)
        })
        .await;
        tx.finish(r).await
    }

    /// A challenge's phases, by opening time.
    pub async fn phases(&self, challenge: &str) -> Result<Vec<Phase>, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            tx.fetch_all(
                &format!(
                    "SELECT {PHASE_COLUMNS} FROM phases WHERE challenge_id = $1 \
                     ORDER BY opens_at, name"
                ),
                args![challenge],
            )
            .await?
            .iter()
            .map(phase_from)
            .collect()
        })
        .await;
        tx.finish(r).await
    }

    /// The phase of a challenge open at `at` (the latest opened, if several overlap).
    pub async fn open_phase(
        &self,
        challenge: &str,
        at: DateTime<Utc>,
    ) -> Result<Option<Phase>, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            tx.fetch_optional(
                &format!(
                    "SELECT {PHASE_COLUMNS} FROM phases WHERE challenge_id = $1 \
                     AND opens_at <= $2 AND $2 < closes_at ORDER BY opens_at DESC, name LIMIT 1"
                ),
                args![challenge, us(at)],
            )
            .await?
            .as_ref()
            .map(phase_from)
            .transpose()
        })
        .await;
        tx.finish(r).await
    }
}
