//! Leaderboards: best or latest per team, both directions, ties, exact figures.

use std::collections::HashMap;

use chrono::Duration;

use super::*;

both!(
    ranks_ties_and_directions,
    latest_rule_and_lower_first,
    final_entries_are_the_selected_or_best,
    a_phase_ranks_by_its_scored_split,
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

/// A report with both splits' figures: `exam` and `quiz` scores, higher is better.
fn both_splits(exam: f64, quiz: f64) -> Report {
    let mut r = scored(&[("score", exam, Better::Higher)]);
    r.quiz_figures = vec![Figure {
        key: "score".into(),
        value: Some(quiz),
        better: Better::Higher,
    }];
    r
}

async fn a_phase_ranks_by_its_scored_split(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let now = t.now();
    let quiz_phase = t
        .create_phase(
            &f.challenge,
            &NewPhase {
                name: "validation".into(),
                opens: now - Duration::days(1),
                closes: now + Duration::days(30),
                selection_closes: None,
                quota: Quota::default(),
                scored_split: Split::Quiz,
                show_exam: false,
                rule: Rule::Best,
            },
        )
        .await
        .unwrap();
    let a = team(t, &f, "a").await;
    let b = team(t, &f, "b").await;
    let c = team(t, &f, "c").await;
    // The same entries in both phases: a is best on the exam, b on the quiz; c's result
    // has no quiz figures (as results stored before they were kept).
    let mut ids = HashMap::new();
    for (n, (phase, team, report)) in [
        (f.phase.id, &a, both_splits(0.9, 0.1 + 0.2)),
        (f.phase.id, &b, both_splits(0.5, 0.7)),
        (f.phase.id, &c, scored(&[("score", 0.95, Better::Higher)])),
        (quiz_phase.id, &a, both_splits(0.9, 0.1 + 0.2)),
        (quiz_phase.id, &b, both_splits(0.5, 0.7)),
        (
            quiz_phase.id,
            &c,
            scored(&[("score", 0.95, Better::Higher)]),
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let mut e = entry(team, &f, n as u32);
        e.phase = phase;
        let s = t.submit(&e).await.unwrap();
        let j = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
        t.report(f.worker.id, j.attempt, &report).await.unwrap();
        ids.insert((phase, team.id), s.id);
        t.clock.advance(Duration::seconds(1));
    }
    // Both splits are stored, each exactly.
    let r = t
        .results(ids[&(quiz_phase.id, a.id)])
        .await
        .unwrap()
        .remove(0);
    assert_eq!(r.figures[0].value, Some(0.9));
    assert_eq!(r.quiz_figures[0].value, Some(0.1 + 0.2));
    let row = |l: &Leaderboard| -> Vec<(String, Option<f64>)> {
        l.rows
            .iter()
            .map(|r| (r.team_name.clone(), r.figures[0].value))
            .collect()
    };
    let exam = t.leaderboard(f.phase.id).await.unwrap();
    assert_eq!(exam.split, Split::Exam);
    assert_eq!(
        row(&exam),
        [
            ("c".to_owned(), Some(0.95)),
            ("a".to_owned(), Some(0.9)),
            ("b".to_owned(), Some(0.5))
        ]
    );
    let quiz = t.leaderboard(quiz_phase.id).await.unwrap();
    assert_eq!(quiz.split, Split::Quiz);
    assert_eq!(
        row(&quiz),
        [
            ("b".to_owned(), Some(0.7)),
            ("a".to_owned(), Some(0.1 + 0.2))
        ]
    );
    // Final entries and publication rank by the same split; c has no quiz result.
    let fin = t.final_leaderboard(quiz_phase.id).await.unwrap();
    assert_eq!(row(&fin), row(&quiz));
    let blockers = t.publish_blockers(quiz_phase.id).await.unwrap();
    assert_eq!(
        blockers,
        [PublishBlocker::NoExamResult {
            submission: ids[&(quiz_phase.id, c.id)],
            team: c.id
        }]
    );
    t.set_team_hidden(c.id, true, Some("test")).await.unwrap();
    let p = t.publish(quiz_phase.id, None).await.unwrap();
    assert_eq!(p.board.split, Split::Quiz);
    assert_eq!(row(&p.board), row(&quiz));
    assert_eq!(
        t.publication(quiz_phase.id, Some(1))
            .await
            .unwrap()
            .unwrap()
            .board,
        p.board
    );
    // Rescoring gives c its quiz figures: it joins the quiz board.
    let key = AttemptKey {
        submission: ids[&(quiz_phase.id, c.id)],
        number: 1,
    };
    t.set_team_hidden(c.id, false, None).await.unwrap();
    t.replace_result(key, &both_splits(0.95, 0.8))
        .await
        .unwrap();
    assert_eq!(
        row(&t.leaderboard(quiz_phase.id).await.unwrap()),
        [
            ("c".to_owned(), Some(0.8)),
            ("b".to_owned(), Some(0.7)),
            ("a".to_owned(), Some(0.1 + 0.2))
        ]
    );
}
