//! The one visibility rule (`judge::visibility::sight`) against every view drawn from a
//! phase's figures, as served: the API's leaderboards (live, final, published: rows and
//! ranks), the leaderboard pages with their plot of the best score over time (line,
//! axis, caption, `aria-label`), a team's own submission (the API's record, its page,
//! its event stream from the API and the site), the organisers' results CSV and
//! `/metrics`, on SQLite and PostgreSQL. A phase that hides exam scores draws none of
//! them on any public view, before or after it closes, until it is published; public
//! ranks come from the figure as shown.

mod common;

use std::time::Duration;

use chrono::Duration as Span;
use common::site::open_phase;
use judge::visibility::{FigureView, PhaseFacts, Sight, Viewer};
use proptest::prelude::*;
use serde_json::{Value, json};
use store::{Backend, NewPhase, Role};

/// Alpha's exam figure (submitted first) and Beta's (later): both shown as 0.731, and
/// the later one better by its hidden digits.
const ALPHA: f64 = 0.7306;
const BETA: f64 = 0.7314;

/// The site and what the cases look at.
struct Site {
    web: common::site::Site,
    phase: store::Phase,
    organiser: String,
    alice: String,
    alpha_submission: String,
}

impl std::ops::Deref for Site {
    type Target = common::site::Site;
    fn deref(&self) -> &common::site::Site {
        &self.web
    }
}

/// A `result.json` as the judge writes it for a scored cinc2017 entry: the exam's
/// figure rounded, as `judge::visibility::exam_view` leaves it.
fn result_json(exam: f64) -> String {
    json!({
        "challenge": "cinc2017", "entry": "entry.zip", "verdict": "scored",
        "score": judge::visibility::round_to(exam, 3),
        "split": {"training": 1, "quiz": 1, "exam": 1},
        "stages": [
            {"stage": "exam", "status": "passed", "wall_time_s": 3.0,
             "counts": {"records": 1, "ok": 1, "failures": 0, "timeouts": 0, "defaulted": 0}},
            {"stage": "score", "status": "passed", "wall_time_s": 0.0}
        ],
        "exam_score": {"precision": 3, "ranking":
            [{"key": "score", "value": judge::visibility::round_to(exam, 3), "better": "higher"}]},
        "judge_version": "judge 0.1.0"
    })
    .to_string()
}

/// A site over a fresh store: cinc2017, one exam-scored phase (open now, for a day)
/// that shows exam scores or not, and two teams each with one scored submission.
async fn site(backend: Backend, show_exam: bool) -> Site {
    let web =
        common::site::Site::with(backend, |c| c.events_poll = Duration::from_millis(100)).await;
    web.challenge("cinc2017", "AF classification").await;
    let t = &web.t;
    let phase = t
        .create_phase(
            "cinc2017",
            &NewPhase {
                show_exam,
                ..open_phase("official", t.now())
            },
        )
        .await
        .unwrap();
    let token = |u: store::User| {
        let t = &t;
        async move { t.issue_token(u.id, "test").await.unwrap().token }
    };
    let org = t.create_user("org", Role::Organiser, None).await.unwrap();
    let organiser = token(org).await;
    let (worker, _) = t.create_worker("w1").await.unwrap();
    let mut alice = String::new();
    let mut alpha_submission = String::new();
    for (user, team, v) in [("alice", "Alpha", ALPHA), ("bob", "Beta", BETA)] {
        let u = t.create_user(user, Role::Participant, None).await.unwrap();
        let tm = t.create_team("cinc2017", team, u.id).await.unwrap();
        if user == "alice" {
            alice = token(u).await;
        }
        let s = t
            .submit(&store::NewSubmission {
                team: tm.id,
                phase: phase.id,
                entry_sha256: format!("{:064x}", (v * 1e4) as u64),
                entry_path: "entries/x.zip".into(),
                method_name: None,
                method_description: None,
            })
            .await
            .unwrap();
        if user == "alice" {
            alpha_submission = s.id.0.to_string();
        }
        let job = t
            .take_job(worker.id, Duration::from_secs(60), None)
            .await
            .unwrap()
            .unwrap();
        let figure = store::Figure {
            key: "score".into(),
            value: Some(v),
            better: store::Better::Higher,
        };
        t.report(
            worker.id,
            job.attempt,
            &store::Report {
                outcome: store::Outcome::Scored,
                result_json: Some(result_json(v)),
                private_json: None,
                figures: vec![figure.clone()],
                quiz_figures: vec![figure],
                scorer_version: judge::rescore::SCORER_VERSION.into(),
                judge_version: "judge 0.1.0".into(),
                message: None,
                runtime_lock: None,
                warnings: Vec::new(),
            },
        )
        .await
        .unwrap();
        // Beta's submission is received later.
        t.clock.advance(Span::minutes(5));
    }
    Site {
        web,
        phase,
        organiser,
        alice,
        alpha_submission,
    }
}

impl Site {
    /// Any answer as text, with `token` as a bearer token (none: a visitor).
    async fn text(&self, token: Option<&str>, path: &str) -> (u16, String) {
        let r = self.bearer(token, path).await;
        (r.status().as_u16(), r.text().await.unwrap())
    }

    /// An API answer to a GET as `token`'s caller (none: a visitor).
    async fn api_get(&self, token: Option<&str>, path: &str) -> (u16, Value) {
        let r = self.bearer(token, path).await;
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }
}

/// Finding 3: after the phase closes and before it is published, a phase that hides
/// exam scores drew the best hidden exam figure on the leaderboard page's plot (its
/// line, axis, caption and `aria-label`), on the live and the final board, to anyone.
async fn a_closed_unpublished_hidden_exam_is_drawn_nowhere(backend: Backend) {
    let s = site(backend, false).await;
    s.t.clock.set(s.phase.closes + Span::hours(1));
    for board in ["live", "final"] {
        let path = format!("/challenges/cinc2017/leaderboard?phase=official&board={board}");
        for who in [None, Some(s.alice.as_str())] {
            let (status, page) = s.page(who, &path).await;
            assert_eq!(status, 200, "{page}");
            assert!(!page.contains("0.73"), "{board} as {who:?}: {page}");
            assert!(!page.contains("figure class=\"plot\""), "{board}: {page}");
            assert!(!page.contains(" over time</h2>"), "{board}");
        }
        // Organisers still see it all, exactly.
        let (_, page) = s.page(Some(&s.organiser), &path).await;
        assert!(page.contains("figure class=\"plot\""), "{page}");
        assert!(page.contains("0.7314"), "{page}");
    }
}

/// Finding 6: in the API two teams shown 0.731 were ranked 2 and 1 by their hidden
/// digits; they share rank 1, listed by submission time (as the page lists them).
async fn equal_shown_figures_share_a_rank(backend: Backend) {
    let s = site(backend, true).await;
    for board in ["live", "final"] {
        let path = format!("/api/v1/challenges/cinc2017/leaderboard?board={board}");
        let (status, b) = s.api_get(Some(&s.alice), &path).await;
        assert_eq!(status, 200, "{b}");
        let rows: Vec<(String, u64, f64)> = b["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["team"].as_str().unwrap().to_owned(),
                    r["rank"].as_u64().unwrap(),
                    r["score"].as_f64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            rows,
            vec![("Alpha".into(), 1, 0.731), ("Beta".into(), 1, 0.731)],
            "{board}"
        );
        // Organisers rank by the exact figures.
        let (_, b) = s.api_get(Some(&s.organiser), &path).await;
        assert_eq!(b["rows"][0]["team"], "Beta");
        assert_eq!(
            (&b["rows"][0]["rank"], &b["rows"][1]["rank"]),
            (&json!(1), &json!(2))
        );
    }
}

mod both {
    macro_rules! both {
        ($($name:ident),+) => {$(
            mod $name {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    super::super::$name(store::Backend::Sqlite).await;
                }
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    super::super::$name(store::Backend::Postgres).await;
                }
            }
        )+};
    }
    both!(
        a_closed_unpublished_hidden_exam_is_drawn_nowhere,
        equal_shown_figures_share_a_rank
    );
}

/// Who asks, as the property test varies it.
#[derive(Debug, Clone, Copy)]
enum Who {
    Organiser,
    Team,
    Visitor,
}

/// One case: the phase's state and who asks; every view is checked against the rule.
async fn views_follow_the_rule(
    backend: Backend,
    show_exam: bool,
    closed: bool,
    published: bool,
    who: Who,
) {
    let s = site(backend, show_exam).await;
    if published {
        s.t.publish(s.phase.id, None).await.unwrap();
    }
    if closed {
        s.t.clock.set(s.phase.closes + Span::hours(1));
    }
    let token = match who {
        Who::Organiser => Some(s.organiser.as_str()),
        Who::Team => Some(s.alice.as_str()),
        Who::Visitor => None,
    };
    let facts = PhaseFacts {
        exam: true,
        show_exam,
        closed,
    };
    let board_viewer = match who {
        Who::Organiser => Viewer::Organiser,
        _ => Viewer::Public,
    };
    let case = format!("show_exam {show_exam}, closed {closed}, published {published}, {who:?}");
    let mut boards = vec![("live", FigureView::Board), ("final", FigureView::Board)];
    if published {
        boards.push(("published", FigureView::Published));
    }
    for (board, view) in boards {
        let sight = judge::visibility::sight(board_viewer, view, facts, 3);
        // The API's rows and ranks.
        let (status, b) = s
            .api_get(
                token,
                &format!("/api/v1/challenges/cinc2017/leaderboard?board={board}"),
            )
            .await;
        assert_eq!(status, 200, "{case}, {board}: {b}");
        let rows = b["rows"].as_array().unwrap();
        match sight {
            Sight::Withheld { until_close } => {
                assert!(rows.is_empty(), "{case}, {board}: {b}");
                assert_eq!(
                    b["hidden_until"].is_string(),
                    until_close,
                    "{case}, {board}"
                );
            }
            Sight::Rounded(_) | Sight::Exact => {
                let want: Vec<(&str, u64, f64)> = if sight == Sight::Exact {
                    vec![("Beta", 1, BETA), ("Alpha", 2, ALPHA)]
                } else {
                    vec![("Alpha", 1, 0.731), ("Beta", 1, 0.731)]
                };
                let got: Vec<(&str, u64, f64)> = rows
                    .iter()
                    .map(|r| {
                        (
                            r["team"].as_str().unwrap(),
                            r["rank"].as_u64().unwrap(),
                            r["scores"]["score"].as_f64().unwrap(),
                        )
                    })
                    .collect();
                assert_eq!(got, want, "{case}, {board}");
            }
        }
        // The page, with its plot (drawn on the live and final boards only).
        let (status, page) = s
            .page(
                token,
                &format!("/challenges/cinc2017/leaderboard?phase=official&board={board}"),
            )
            .await;
        assert_eq!(status, 200, "{case}, {board}: {page}");
        match sight {
            Sight::Withheld { .. } => {
                assert!(!page.contains("0.73"), "{case}, {board}: {page}");
                assert!(!page.contains("figure class=\"plot\""), "{case}, {board}");
            }
            Sight::Rounded(_) => {
                assert!(page.contains("0.731"), "{case}, {board}: {page}");
                assert!(!page.contains("0.7314"), "{case}, {board}: {page}");
                assert!(!page.contains("0.7306"), "{case}, {board}: {page}");
            }
            Sight::Exact => assert!(page.contains("0.7314"), "{case}, {board}: {page}"),
        }
        if view == FigureView::Board && !sight.withheld() {
            assert!(page.contains("figure class=\"plot\""), "{case}, {board}");
        }
    }
    // Alpha's own submission, as its team and organisers see it (to anyone else it
    // does not exist).
    let path = format!("/api/v1/submissions/{}", s.alpha_submission);
    let (status, sub) = s.api_get(token, &path).await;
    match who {
        Who::Visitor => assert!(matches!(status, 401 | 404), "{case}: {status} {sub}"),
        Who::Organiser | Who::Team => {
            assert_eq!(status, 200, "{case}: {sub}");
            let viewer = match who {
                Who::Organiser => Viewer::Organiser,
                _ => Viewer::OwnTeam,
            };
            // Alpha's entry is on the published board (its only submission).
            let sight = judge::visibility::sight(
                viewer,
                FigureView::Submission {
                    published_entry: published,
                },
                facts,
                3,
            );
            let shown = sub["scores"]["score"].as_f64();
            assert_eq!(shown.is_none(), sight.withheld(), "{case}: {sub}");
            if let Some(v) = shown {
                assert_eq!(v, 0.731, "{case}");
            }
            // Every other view of the submission: its page, and its event stream as
            // the API and the site serve it (the submission is scored, so each stream
            // sends its history and ends). None may carry more than the rule allows.
            let id = &s.alpha_submission;
            for (what, (status, body)) in [
                ("page", s.page(token, &format!("/submissions/{id}")).await),
                // The team's list, whose figures column is drawn from the same view.
                ("list", s.page(token, "/submissions").await),
                (
                    "API stream",
                    s.text(token, &format!("/api/v1/submissions/{id}/events"))
                        .await,
                ),
                (
                    "site stream",
                    s.page(token, &format!("/submissions/{id}/events")).await,
                ),
            ] {
                assert_eq!(status, 200, "{case}, {what}: {body}");
                shows_no_more_than(sight, &body, &format!("{case}, {what}"));
            }
        }
    }
    // The same views to anyone else: nothing of the submission at all.
    if let Who::Visitor = who {
        let id = &s.alpha_submission;
        for path in [
            format!("/submissions/{id}"),
            format!("/api/v1/submissions/{id}/events"),
            format!("/submissions/{id}/events"),
        ] {
            let (status, body) = s.page(token, &path).await;
            assert_ne!(status, 200, "{case}, {path}: {body}");
            assert!(!body.contains("0.73"), "{case}, {path}: {body}");
        }
    }
    // The organisers' own views: the results CSV (every submission with its figures,
    // exact) and `/metrics` (counts only). To anyone else they are refused and show no
    // figure.
    for (path, cookie) in [
        ("/organiser/results.csv?challenge=cinc2017", true),
        ("/metrics", false),
    ] {
        let (status, body) = if cookie {
            s.page(token, path).await
        } else {
            s.text(token, path).await
        };
        match who {
            Who::Organiser => {
                assert_eq!(status, 200, "{case}, {path}: {body}");
                if cookie {
                    assert!(
                        body.contains("0.7314") && body.contains("0.7306"),
                        "{case}, {path}: {body}"
                    );
                }
            }
            Who::Team | Who::Visitor => {
                assert_ne!(status, 200, "{case}, {path}: {body}");
                assert!(!body.contains("0.73"), "{case}, {path}: {body}");
            }
        }
    }
}

/// What a view drawn under `sight` may carry of Alpha's exam figure (0.7306, shown as
/// 0.731): nothing when withheld, never the hidden digits when rounded.
fn shows_no_more_than(sight: Sight, body: &str, case: &str) {
    match sight {
        Sight::Withheld { .. } => assert!(!body.contains("0.73"), "{case}: {body}"),
        Sight::Rounded(_) => assert!(!body.contains("0.7306"), "{case}: {body}"),
        Sight::Exact => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    /// Every view that exists, for any phase state and caller, shows what the rule
    /// says and nothing more.
    #[test]
    fn every_view_follows_the_one_rule(
        show_exam in any::<bool>(),
        closed in any::<bool>(),
        published in any::<bool>(),
        who in prop_oneof![Just(Who::Organiser), Just(Who::Team), Just(Who::Visitor)],
    ) {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
            .block_on(views_follow_the_rule(Backend::Sqlite, show_exam, closed, published, who));
    }

    /// The same on PostgreSQL (fewer cases: each makes a database of its own).
    #[test]
    fn every_view_follows_the_one_rule_on_postgres(
        show_exam in any::<bool>(),
        closed in any::<bool>(),
        published in any::<bool>(),
        who in prop_oneof![Just(Who::Organiser), Just(Who::Team), Just(Who::Visitor)],
    ) {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
            .block_on(views_follow_the_rule(Backend::Postgres, show_exam, closed, published, who));
    }
}
