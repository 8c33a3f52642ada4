//! `Store::score_points`, the store read behind the leaderboard's plot of the best score
//! over time (it lives with the site that uses it), on SQLite and on a fresh PostgreSQL
//! database: the leaderboard's candidates only (scored, the live result, teams neither
//! hidden nor disqualified), oldest first.

mod common;

use std::time::Duration;

use common::site::open_phase;
use store::testing::TestStore;
use store::{Backend, Better, Definition, Figure, NewSubmission, Outcome, Report, Role};

fn report(outcome: Outcome, value: Option<f64>) -> Report {
    Report {
        outcome,
        result_json: Some("{}".into()),
        private_json: None,
        figures: value
            .map(|v| {
                vec![Figure {
                    key: "outcome_cost".into(),
                    value: Some(v),
                    better: Better::Lower,
                }]
            })
            .unwrap_or_default(),
        // The quiz's figures too, as workers report them: the exam-scored phase's points
        // must be the exam's only.
        quiz_figures: value
            .map(|v| {
                vec![Figure {
                    key: "outcome_cost".into(),
                    value: Some(v + 100.0),
                    better: Better::Lower,
                }]
            })
            .unwrap_or_default(),
        scorer_version: "s".into(),
        judge_version: "j".into(),
        runtime_lock: None,
        warnings: Vec::new(),
        message: None,
    }
}

async fn points_are_the_leaderboards_candidates(backend: Backend) {
    let t = TestStore::new(backend).await;
    let data = tempfile::tempdir().unwrap();
    std::fs::write(data.path().join("REFERENCE.csv"), "A0001,N\n").unwrap();
    t.create_challenge(
        "c",
        "C",
        Definition::Builtin("cinc2017".into()),
        data.path(),
    )
    .await
    .unwrap();
    let now = t.now();
    let phase = t.create_phase("c", &open_phase("p", now)).await.unwrap();
    let (worker, _) = t.create_worker("w").await.unwrap();
    let mut teams = Vec::new();
    for name in ["a", "b", "hidden"] {
        let u = t.create_user(name, Role::Participant, None).await.unwrap();
        teams.push(t.create_team("c", name, u.id).await.unwrap());
    }
    t.set_team_hidden(teams[2].id, true, Some("test"))
        .await
        .unwrap();
    // a: 5.0, then a failed one; b: 3.0, later rescored to 4.0; hidden: 1.0.
    let plan = [
        (0, Outcome::Scored, Some(5.0)),
        (1, Outcome::Scored, Some(3.0)),
        (0, Outcome::Failed, None),
        (2, Outcome::Scored, Some(1.0)),
    ];
    let mut keys = Vec::new();
    for (team, outcome, value) in plan {
        t.submit(&NewSubmission {
            team: teams[team].id,
            phase: phase.id,
            entry_sha256: "0".repeat(64),
            entry_path: "entries/x.zip".into(),
            method_name: None,
            method_description: None,
        })
        .await
        .unwrap();
        let job = t
            .take_job(worker.id, Duration::from_secs(60), None)
            .await
            .unwrap()
            .unwrap();
        t.report(worker.id, job.attempt, &report(outcome, value))
            .await
            .unwrap();
        keys.push(job.attempt);
        t.clock.advance(chrono::Duration::minutes(1));
    }
    t.replace_result(keys[1], &report(Outcome::Scored, Some(4.0)))
        .await
        .unwrap();
    let points = t.score_points(phase.id).await.unwrap();
    let values: Vec<(f64, Better)> = points.iter().map(|p| (p.value, p.better)).collect();
    assert_eq!(values, vec![(5.0, Better::Lower), (4.0, Better::Lower)]);
    assert!(points[0].received_at < points[1].received_at);
}

mod points {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite() {
        super::points_are_the_leaderboards_candidates(store::Backend::Sqlite).await;
    }
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        super::points_are_the_leaderboards_candidates(store::Backend::Postgres).await;
    }
}
