//! Every test runs twice: once on a SQLite file, once on a fresh PostgreSQL database.

use std::path::Path;

use chrono::Duration;

use crate::testing::TestStore;
use crate::*;

mod clocks;
mod idempotency;
mod leaderboard;
mod names;
mod placing;
mod queue;
mod records;
mod rules;
mod state_machine;
mod team_rules;
mod workers;

/// `both!(name)`: the async fn `name(&TestStore)` as two tests, `name::sqlite` and
/// `name::postgres`.
macro_rules! both {
    ($($name:ident),+ $(,)?) => {$(
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn sqlite() {
                let t = crate::testing::TestStore::new(crate::Backend::Sqlite).await;
                super::$name(&t).await;
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn postgres() {
                let t = crate::testing::TestStore::new(crate::Backend::Postgres).await;
                super::$name(&t).await;
            }
        }
    )+};
}
pub(crate) use both;

/// A challenge with a one-file data folder, an open phase, and what tests need around
/// it.
pub(crate) struct Fixture {
    pub challenge: String,
    pub phase: Phase,
    pub worker: Worker,
    pub _data: tempfile::TempDir,
}

pub(crate) fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

pub(crate) async fn fixture(t: &TestStore, quota: Quota, rule: Rule) -> Fixture {
    let data = tempfile::tempdir().unwrap();
    write(data.path(), "a/rec1.hea", "rec1 2 200 1000\n");
    write(data.path(), "REFERENCE.csv", "rec1,N\n");
    let c = t
        .create_challenge(
            "cinc2017",
            "AF classification",
            Definition::Builtin("cinc2017".into()),
            data.path(),
        )
        .await
        .unwrap();
    let now = t.now();
    let phase = t
        .create_phase(
            &c.id,
            &NewPhase {
                name: "official".into(),
                opens: now - Duration::days(1),
                closes: now + Duration::days(30),
                selection_closes: None,
                quota,
                scored_split: Split::Exam,
                show_exam: false,
                rule,
            },
        )
        .await
        .unwrap();
    let (worker, _) = t.create_worker("w1").await.unwrap();
    Fixture {
        challenge: c.id,
        phase,
        worker,
        _data: data,
    }
}

/// A team of one fresh participant.
pub(crate) async fn team(t: &TestStore, f: &Fixture, name: &str) -> Team {
    let u = t
        .create_user(&format!("{name}-founder"), Role::Participant, None)
        .await
        .unwrap();
    t.create_team(&f.challenge, name, u.id).await.unwrap()
}

pub(crate) fn entry(team: &Team, f: &Fixture, n: u32) -> NewSubmission {
    NewSubmission {
        team: team.id,
        phase: f.phase.id,
        entry_sha256: format!("{n:064x}"),
        entry_path: format!("entries/{}/{n}.zip", team.id),
        method_name: None,
        method_description: None,
    }
}

pub(crate) fn scored(figures: &[(&str, f64, Better)]) -> Report {
    Report {
        outcome: Outcome::Scored,
        result_json: Some(r#"{"verdict":"scored"}"#.into()),
        private_json: Some(r#"{"score":0.5}"#.into()),
        figures: figures
            .iter()
            .map(|&(k, v, b)| Figure {
                key: k.into(),
                value: Some(v),
                better: b,
            })
            .collect(),
        quiz_figures: Vec::new(),
        scorer_version: "score 0.1.0".into(),
        judge_version: "judge 0.1.0".into(),
        message: None,
        runtime_lock: None,
        warnings: Vec::new(),
    }
}

pub(crate) fn failed() -> Report {
    Report {
        outcome: Outcome::Failed,
        result_json: Some(r#"{"verdict":"failed"}"#.into()),
        private_json: None,
        figures: vec![],
        quiz_figures: Vec::new(),
        scorer_version: "score 0.1.0".into(),
        judge_version: "judge 0.1.0".into(),
        message: None,
        runtime_lock: None,
        warnings: Vec::new(),
    }
}

pub(crate) fn judge_error() -> Report {
    Report {
        outcome: Outcome::Error,
        result_json: None,
        private_json: None,
        figures: vec![],
        quiz_figures: Vec::new(),
        scorer_version: "score 0.1.0".into(),
        judge_version: "judge 0.1.0".into(),
        message: Some("disk full".into()),
        runtime_lock: None,
        warnings: Vec::new(),
    }
}

pub(crate) const LEASE: std::time::Duration = std::time::Duration::from_secs(60);

/// One scored submission of `team` (entry `n`, exam score `v`), then a second passes.
pub(crate) async fn scored_one(
    t: &TestStore,
    f: &Fixture,
    team: &Team,
    n: u32,
    v: f64,
) -> AttemptKey {
    t.submit(&entry(team, f, n)).await.unwrap();
    let j = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
    t.report(
        f.worker.id,
        j.attempt,
        &scored(&[("score", v, Better::Higher)]),
    )
    .await
    .unwrap();
    t.clock.advance(Duration::seconds(1));
    j.attempt
}
