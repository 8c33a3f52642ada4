//! Leaderboards: best or latest per team, both directions, ties, exact figures.

use chrono::Duration;

use super::*;

both!(
    ranks_ties_and_directions,
    latest_rule_and_lower_first,
    final_entries_are_the_selected_or_best,
);

/// Submits, takes and scores one entry for a team.
async fn score(
    t: &TestStore,
    f: &Fixture,
    team: &Team,
    n: u32,
    figures: &[(&str, f64, Better)],
) -> SubmissionId {
    let s = t.submit(&entry(team, f, n)).await.unwrap();
    let j = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
    assert_eq!(j.attempt.submission, s.id);
    t.report(f.worker.id, j.attempt, &scored(figures))
        .await
        .unwrap();
    t.clock.advance(Duration::seconds(1));
    s.id
}

async fn ranks_ties_and_directions(t: &TestStore) {
    use Better::*;
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let a = team(t, &f, "a").await;
    let b = team(t, &f, "b").await;
    let c = team(t, &f, "c").await;
    let hidden = team(t, &f, "organisers").await;
    let dq = team(t, &f, "cheats").await;
    let d = team(t, &f, "d").await;
    // PhysioNet 2022: murmur weighted accuracy (higher) first, outcome cost (lower).
    let a_worse = score(
        t,
        &f,
        &a,
        1,
        &[("score", 0.6, Higher), ("outcome_cost", 7000.0, Lower)],
    )
    .await;
    let a_best = score(
        t,
        &f,
        &a,
        2,
        &[("score", 0.8, Higher), ("outcome_cost", 12000.5, Lower)],
    )
    .await;
    let b_best = score(
        t,
        &f,
        &b,
        3,
        &[("score", 0.8, Higher), ("outcome_cost", 9000.0, Lower)],
    )
    .await;
    let exact = 0.1 + 0.2; // 0.30000000000000004: shown exactly as stored
    let c_best = score(
        t,
        &f,
        &c,
        4,
        &[("score", exact, Higher), ("outcome_cost", 8000.0, Lower)],
    )
    .await;
    score(
        t,
        &f,
        &hidden,
        5,
        &[("score", 0.99, Higher), ("outcome_cost", 1.0, Lower)],
    )
    .await;
    score(
        t,
        &f,
        &dq,
        6,
        &[("score", 0.95, Higher), ("outcome_cost", 1.0, Lower)],
    )
    .await;
    // A failed and a queued submission do not show.
    let s = t.submit(&entry(&d, &f, 7)).await.unwrap();
    let j = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
    assert_eq!(j.attempt.submission, s.id);
    t.report(f.worker.id, j.attempt, &failed()).await.unwrap();
    t.submit(&entry(&d, &f, 8)).await.unwrap();
    t.set_team_hidden(hidden.id, true, Some("organisers' team"))
        .await
        .unwrap();
    t.set_team_disqualified(dq.id, true, Some("label probing"))
        .await
        .unwrap();

    let lb = t.leaderboard(f.phase.id).await.unwrap();
    let rows: Vec<_> = lb
        .rows
        .iter()
        .map(|r| (r.rank, r.team_name.as_str(), r.submission))
        .collect();
    assert_eq!(
        rows,
        [(1, "a", a_best), (1, "b", b_best), (3, "c", c_best)],
        "ties share a rank; a's better submission is the one shown"
    );
    let _ = a_worse;
    assert_eq!(
        lb.rows[0].figures,
        [
            Figure {
                key: "score".into(),
                value: Some(0.8),
                better: Higher
            },
            Figure {
                key: "outcome_cost".into(),
                value: Some(12000.5),
                better: Lower
            },
        ]
    );
    assert_eq!(
        lb.rows[2].figures[0].value.unwrap().to_bits(),
        exact.to_bits()
    );
    assert_eq!(
        t.team(dq.id).await.unwrap().reason.as_deref(),
        Some("label probing")
    );

    t.set_team_hidden(hidden.id, false, None).await.unwrap();
    let lb = t.leaderboard(f.phase.id).await.unwrap();
    assert_eq!(lb.rows[0].team_name, "organisers");
    assert_eq!(
        lb.rows.iter().map(|r| r.rank).collect::<Vec<_>>(),
        [1, 2, 2, 4]
    );
}

async fn latest_rule_and_lower_first(t: &TestStore) {
    use Better::*;
    let f = fixture(t, Quota::default(), Rule::Latest).await;
    let a = team(t, &f, "a").await;
    let b = team(t, &f, "b").await;
    let c = team(t, &f, "c").await;
    // A cost: lower is better, and it is the first ranking number.
    score(t, &f, &a, 1, &[("cost", 5.0, Lower)]).await;
    let a_latest = score(t, &f, &a, 2, &[("cost", 9.0, Lower)]).await;
    let b1 = score(t, &f, &b, 3, &[("cost", 7.0, Lower)]).await;
    let c1 = score(t, &f, &c, 4, &[("cost", 9.0, Lower)]).await;
    let lb = t.leaderboard(f.phase.id).await.unwrap();
    assert_eq!(lb.rule, Rule::Latest);
    let rows: Vec<_> = lb.rows.iter().map(|r| (r.rank, r.submission)).collect();
    assert_eq!(rows, [(1, b1), (2, a_latest), (2, c1)]);
    // Rows are the figures as stored: the latest of a (9.0), not its best (5.0).
    assert_eq!(lb.rows[1].figures[0].value, Some(9.0));
}

async fn final_entries_are_the_selected_or_best(t: &TestStore) {
    use Better::*;
    let f = fixture(t, Quota::default(), Rule::Latest).await;
    let a = team(t, &f, "a").await;
    let b = team(t, &f, "b").await;
    let a_good = score(t, &f, &a, 1, &[("score", 0.9, Higher)]).await;
    let a_later = score(t, &f, &a, 2, &[("score", 0.4, Higher)]).await;
    let b_good = score(t, &f, &b, 3, &[("score", 0.7, Higher)]).await;
    let b_later = score(t, &f, &b, 4, &[("score", 0.5, Higher)]).await;
    // a chooses its later, worse entry; b chooses nothing and gets its best.
    t.select(a_later).await.unwrap();
    let lb = t.final_leaderboard(f.phase.id).await.unwrap();
    assert!(lb.final_entries);
    let rows: Vec<_> = lb.rows.iter().map(|r| (r.rank, r.submission)).collect();
    assert_eq!(rows, [(1, b_good), (2, a_later)]);
    // The phase's own leaderboard follows its rule (latest).
    let lb = t.leaderboard(f.phase.id).await.unwrap();
    assert!(!lb.final_entries);
    let rows: Vec<_> = lb.rows.iter().map(|r| (r.rank, r.submission)).collect();
    assert_eq!(rows, [(1, b_later), (2, a_later)]);
    // Choosing again replaces the choice.
    t.select(a_good).await.unwrap();
    assert!(!t.submission(a_later).await.unwrap().selected);
    let lb = t.final_leaderboard(f.phase.id).await.unwrap();
    assert_eq!(lb.rows[0].submission, a_good);
}
