//! A team's submissions list, a submission's page and the leaderboard, as served over
//! HTTP by a real server on SQLite and PostgreSQL: the quiz report drawn from what the
//! API shows (and no more), the final-entry button only for the team, the log as a
//! download from the browser's session under the API's rules, no placeholders before
//! judging, metric names and directions, the reader's own row, entries per team, one
//! plot per ranking number on the metric's own range, and which pages caches may keep.

mod common;

use std::time::Duration;

use chrono::Duration as Span;
use common::site::{csrf_of, open_phase};
use serde_json::{Value, json};
use store::{Backend, Role};

/// The site, its worker and its organiser's session.
struct Site {
    web: common::site::Site,
    worker: store::WorkerId,
    organiser: String,
}

impl std::ops::Deref for Site {
    type Target = common::site::Site;
    fn deref(&self) -> &common::site::Site {
        &self.web
    }
}

/// A user's session token (used as the site's cookie or the API's bearer).
struct Member {
    token: String,
    team: store::TeamId,
}

/// The site, its event streams polled often, with cinc2017 and physionet2022 each
/// open in a phase "official", an organiser and a worker.
async fn site(backend: Backend) -> Site {
    let web =
        common::site::Site::with(backend, |c| c.events_poll = Duration::from_millis(100)).await;
    for (id, title) in [
        ("cinc2017", "AF classification"),
        ("physionet2022", "Heart murmurs"),
    ] {
        web.challenge(id, title).await;
        web.t
            .create_phase(id, &open_phase("official", web.t.now()))
            .await
            .unwrap();
    }
    let (_, organiser) = web.user("org", Role::Organiser, None).await;
    let (worker, _) = web.t.create_worker("w1").await.unwrap();
    Site {
        web,
        worker: worker.id,
        organiser,
    }
}

/// A quiz report as the judge stores it for CinC 2017, which keeps its quiz labels: each
/// item cut to the entry's own answer (`judge::visibility::quiz_view`) before the
/// result is written, so the API sends no truth to anyone.
fn cinc_report(score: f64) -> Value {
    json!({
        "challenge": "cinc2017", "mode": "strict", "score": score, "score_4class": 0.4,
        "f1": {"N": 0.8, "A": 0.5, "O": 0.2, "~": null},
        "confusion": [[4, 1, 0, 0], [0, 1, 1, 0], [1, 0, 1, 0], [0, 0, 0, 0]],
        "items": [{"record": "A0001", "answer": "N", "defaulted": false}],
        "errors": [], "warnings": []
    })
}

fn result(challenge: &str, quiz_passed: bool, score: f64) -> Value {
    let quiz = if quiz_passed {
        json!({"stage": "quiz", "status": "passed", "wall_time_s": 1.0,
               "records": [{"record": "A0001", "state": "ok"}], "log": "logs/quiz.log"})
    } else {
        json!({"stage": "quiz", "status": "failed", "wall_time_s": 1.0,
               "reason": {"kind": "output", "record": "A0001", "problem": "answers.txt has no line for A0001"},
               "log": "logs/quiz.log"})
    };
    json!({
        "challenge": challenge, "entry": "entry.zip",
        "verdict": if quiz_passed { "scored" } else { "failed" },
        "score": score,
        "split": {"training": 1, "quiz": 1, "exam": 1},
        "stages": [
            {"stage": "prep", "status": "passed", "wall_time_s": 0.5},
            quiz,
            {"stage": "exam", "status": "passed", "wall_time_s": 3.0, "log": "logs/exam.log",
             "counts": {"records": 1, "ok": 1, "failures": 0, "timeouts": 0, "defaulted": 0}},
        ],
        // A failed quiz's result may still carry a number: the page must not show it.
        "quiz_score": {"score": if quiz_passed { score } else { 0.0 }, "report": cinc_report(score)},
        "exam_score": if quiz_passed {
            json!({"precision": 3, "ranking": [{"key": "score", "value": score, "better": "higher"}]})
        } else {
            Value::Null
        },
        "judge_version": "judge 0.1.0"
    })
}

impl Site {
    async fn member(&self, challenge: &str, user: &str, team: &str) -> Member {
        let u = match self.t.user_by_name(user).await {
            Ok(u) => u,
            Err(_) => self
                .t
                .create_user(user, Role::Participant, None)
                .await
                .unwrap(),
        };
        let tm = self.t.create_team(challenge, team, u.id).await.unwrap();
        Member {
            token: self.t.issue_token(u.id, "test").await.unwrap().token,
            team: tm.id,
        }
    }

    /// A submission of `team`, left queued when `figures` is `None`, else judged with
    /// `result` and those figures (scored) or none (failed).
    async fn entry(
        &self,
        challenge: &str,
        team: store::TeamId,
        method: Option<&str>,
        judged: Option<(Value, Vec<store::Figure>)>,
    ) -> String {
        let phase = self.t.phases(challenge).await.unwrap().remove(0);
        let s = self
            .t
            .submit(&store::NewSubmission {
                team,
                phase: phase.id,
                entry_sha256: format!("{:064x}", rand_ish(&team)),
                entry_path: "entries/x.zip".into(),
                method_name: method.map(str::to_owned),
                method_description: None,
            })
            .await
            .unwrap();
        if let Some((result, figures)) = judged {
            let job = self
                .t
                .take_job(self.worker, Duration::from_secs(60), None)
                .await
                .unwrap()
                .unwrap();
            let dir = server::layout::result_dir(self.state.path(), job.attempt);
            std::fs::create_dir_all(dir.join("logs")).unwrap();
            std::fs::write(dir.join("logs/quiz.log"), "quiz: A0001 ok\n").unwrap();
            // The exam's log is kept apart, for the organisers (the judge's layout).
            std::fs::create_dir_all(dir.join("private")).unwrap();
            std::fs::write(dir.join("private/exam.log"), "exam: secret things\n").unwrap();
            self.t
                .report(
                    self.worker,
                    job.attempt,
                    &store::Report {
                        outcome: if figures.is_empty() {
                            store::Outcome::Failed
                        } else {
                            store::Outcome::Scored
                        },
                        result_json: Some(result.to_string()),
                        private_json: None,
                        quiz_figures: figures.clone(),
                        figures,
                        scorer_version: judge::rescore::SCORER_VERSION.into(),
                        judge_version: "judge 0.1.0".into(),
                        message: None,
                        runtime_lock: None,
                        warnings: Vec::new(),
                    },
                )
                .await
                .unwrap();
        }
        self.t.clock.advance(Span::minutes(5));
        s.id.0.to_string()
    }
}

/// A distinct number per call, for distinct entry hashes.
fn rand_ish(team: &store::TeamId) -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(1);
    N.fetch_add(1, Ordering::Relaxed) ^ (team.0.as_u128() as u64)
}

fn figure(key: &str, value: f64, better: store::Better) -> store::Figure {
    store::Figure {
        key: key.into(),
        value: Some(value),
        better,
    }
}

async fn submission_page_and_list(b: Backend) {
    let s = site(b).await;
    let alice = s.member("cinc2017", "alice", "Alpha").await;
    let alice_pn = s.member("physionet2022", "alice", "Alpha PN").await;
    let bob = s.member("cinc2017", "bob", "Beta").await;
    let hi = store::Better::Higher;

    // Scored: the quiz report as tables, the final-entry button for the team only.
    let scored = s
        .entry(
            "cinc2017",
            alice.team,
            Some("CNN v2"),
            Some((
                result("cinc2017", true, 0.61),
                vec![figure("score", 0.61, hi)],
            )),
        )
        .await;
    let path = format!("/submissions/{scored}");
    let (_, page) = s.page(Some(&alice.token), &path).await;
    assert!(page.contains("Quiz score: <strong>0.61</strong>"), "{page}");
    assert!(page.contains("A — atrial fibrillation"), "{page}");
    assert!(page.contains("6 of 9 on the diagonal"), "{page}");
    assert!(page.contains("heat-4 hit"), "{page}");
    assert!(page.contains("Make this our final entry"), "{page}");
    assert!(
        !page.contains("judge ?") && !page.contains("lock ?"),
        "{page}"
    );
    // The built-in CinC 2017 keeps its quiz labels: each record's answer, no truth.
    assert!(page.contains("<td>A0001</td><td>N</td>"), "{page}");
    assert!(!page.contains(">reference<"), "{page}");
    assert!(page.contains("stays with the organisers"), "{page}");
    let (_, org_page) = s.page(Some(&s.organiser), &path).await;
    assert!(org_page.contains("Quiz score"), "{org_page}");
    assert!(
        !org_page.contains("Make this our final entry"),
        "{org_page}"
    );

    // The log as a download from the session: the team's quiz log, not its exam log;
    // nothing for another team or a visitor; everything for organisers.
    let log = |who: Option<String>, stage: &'static str| {
        let s = &s;
        let scored = scored.clone();
        async move {
            s.get(
                who.as_deref(),
                &format!("/submissions/{scored}/logs/{stage}"),
            )
            .await
        }
    };
    let r = log(Some(alice.token.clone()), "quiz").await;
    assert_eq!(r.status(), 200);
    assert!(
        r.headers()["content-disposition"]
            .to_str()
            .unwrap()
            .starts_with("attachment; filename=\"submission-"),
    );
    assert_eq!(r.headers()["cache-control"], "private, no-store");
    assert_eq!(r.text().await.unwrap(), "quiz: A0001 ok\n");
    let r = log(Some(alice.token.clone()), "exam").await;
    assert_eq!(r.status(), 403);
    assert!(!r.text().await.unwrap().contains("secret things"));
    let r = log(Some(bob.token.clone()), "quiz").await;
    assert_eq!(r.status(), 404);
    assert!(!r.text().await.unwrap().contains("A0001 ok"));
    let r = log(None, "quiz").await;
    assert_eq!(r.status(), 303, "a visitor is sent to sign in");
    let r = log(Some(s.organiser.clone()), "exam").await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.text().await.unwrap(), "exam: secret things\n");
    let (_, page) = s.page(Some(&alice.token), &path).await;
    assert!(
        page.contains(&format!("href=\"/submissions/{scored}/logs/quiz\"")),
        "{page}"
    );
    assert!(!page.contains("/logs/exam\""), "{page}");

    // A failed quiz shows why, never "Quiz score: 0".
    let failed = s
        .entry(
            "cinc2017",
            alice.team,
            None,
            Some((result("cinc2017", false, 0.0), Vec::new())),
        )
        .await;
    let (_, page) = s
        .page(Some(&alice.token), &format!("/submissions/{failed}"))
        .await;
    assert!(!page.contains("Quiz score"), "{page}");
    assert!(
        page.contains("The quiz stage failed, so it has no score"),
        "{page}"
    );

    // Before judging (the queue takes the oldest first: this one is sent last): no
    // "?" where versions will be.
    let queued = s
        .entry("cinc2017", alice.team, Some("first try"), None)
        .await;
    let (status, page) = s
        .page(Some(&alice.token), &format!("/submissions/{queued}"))
        .await;
    assert_eq!(status, 200, "{page}");
    assert!(
        page.contains("physiojudge evaluate --challenge cinc2017"),
        "{page}"
    );
    assert!(
        !page.contains("judge ?") && !page.contains("lock ?") && !page.contains(", ?,"),
        "a placeholder: {page}"
    );
    assert!(page.contains("named here once it is judged"), "{page}");

    // The team makes the scored one its final entry.
    let csrf = csrf_of(&s.page(Some(&alice.token), &path).await.1);
    let r = s
        .http
        .post(format!("{}{path}/select", s.base))
        .header("cookie", format!("pj_session={}", alice.token))
        .form(&[("csrf", csrf)])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    let (_, page) = s.page(Some(&alice.token), &path).await;
    assert!(page.contains("badge final"), "{page}");
    assert!(!page.contains("Make this our final entry"), "{page}");

    // The list: method, state, figures under the metric's name, the final badge, and
    // a filter by challenge.
    let pn = s
        .entry("physionet2022", alice_pn.team, Some("murmur net"), None)
        .await;
    let (_, list) = s.page(Some(&alice.token), "/submissions").await;
    for want in [
        "CNN v2",
        "first try",
        "murmur net",
        "data-label=\"State\"",
        "mean F1 of N, A and O <strong>0.61</strong>",
        "final entry",
        "All challenges",
    ] {
        assert!(list.contains(want), "{want}: {list}");
    }
    assert_eq!(list.matches("data-submission=").count(), 4, "{list}");
    let (_, only) = s
        .page(Some(&alice.token), "/submissions?challenge=cinc2017")
        .await;
    assert_eq!(only.matches("data-submission=").count(), 3, "{only}");
    assert!(
        !only.contains(&pn) && !only.contains("murmur net"),
        "{only}"
    );
    // Bob sees his own list only.
    let (_, his) = s.page(Some(&bob.token), "/submissions").await;
    assert!(!his.contains("CNN v2") && his.contains("None yet"), "{his}");
}

/// PhysioNet 2022's board: Alpha (alice) with two scored entries, Beta (bob) with one
/// and one withdrawn.
async fn seed_board(s: &Site) -> (Member, Member) {
    let alice = s.member("physionet2022", "alice", "Alpha").await;
    let bob = s.member("physionet2022", "bob", "Beta").await;
    let (hi, lo) = (store::Better::Higher, store::Better::Lower);
    for (team, wa, cost) in [
        (alice.team, 0.52, 14_000.0),
        (alice.team, 0.61, 12_500.0),
        (bob.team, 0.58, 11_900.0),
    ] {
        let mut r = result("physionet2022", true, wa);
        r["exam_score"]["ranking"] = json!([
            {"key": "score", "value": wa, "better": "higher"},
            {"key": "outcome_cost", "value": cost, "better": "lower"}
        ]);
        s.entry(
            "physionet2022",
            team,
            Some("murmur net"),
            Some((
                r,
                vec![figure("score", wa, hi), figure("outcome_cost", cost, lo)],
            )),
        )
        .await;
    }
    // A withdrawn entry is not counted.
    let w = s.entry("physionet2022", bob.team, None, None).await;
    s.t.withdraw(store::SubmissionId(w.parse().unwrap()), None)
        .await
        .unwrap();
    (alice, bob)
}

async fn leaderboard_names_rows_entries_and_plots(b: Backend) {
    let s = site(b).await;
    let (alice, _bob) = seed_board(&s).await;
    let path = "/challenges/physionet2022/leaderboard";
    let (status, page) = s.page(Some(&alice.token), path).await;
    assert_eq!(status, 200, "{page}");
    for want in [
        "murmur weighted accuracy<br><span class=\"dir\">higher is better</span>",
        "outcome cost<br><span class=\"dir\">lower is better</span>",
        "<th scope=\"col\">Entries</th>",
        "your team",
    ] {
        assert!(page.contains(want), "{want}: {page}");
    }
    assert!(!page.contains('↑') && !page.contains('↓'), "{page}");
    // Alice's row is hers, with her two entries; Bob's one (the withdrawn one not).
    let row = |team: &str| {
        let at = page.find(&format!("<td>{team}")).unwrap();
        let start = page[..at].rfind("<tr").unwrap();
        let end = at + page[at..].find("</tr>").unwrap();
        page[start..end].to_owned()
    };
    let (a, b2) = (row("Alpha"), row("Beta"));
    assert!(
        a.contains("class=\"mine\"") && a.contains("aria-current"),
        "{a}"
    );
    assert!(!b2.contains("mine"), "{b2}");
    assert!(a.contains("<td class=\"num entries\">2</td>"), "{a}");
    assert!(b2.contains("<td class=\"num entries\">1</td>"), "{b2}");
    // A plot per ranking number, each on its own range: the weighted accuracy on 0 to
    // 1, the cost on whole steps of its own values (never below 0).
    assert_eq!(page.matches("<figure class=\"plot\">").count(), 2, "{page}");
    let plots: Vec<&str> = page.split("<figure class=\"plot\">").skip(1).collect();
    assert!(
        plots[0].contains(">1</text>") && plots[0].contains(">0</text>"),
        "{}",
        plots[0]
    );
    assert!(
        plots[0].contains("rose from 0.52 to 0.61 (higher is better) in 1 improvement"),
        "{}",
        plots[0]
    );
    assert!(
        plots[1].contains("fell from 14000 to 11900 (lower is better) in 2 improvements"),
        "{}",
        plots[1]
    );
    assert!(page.contains("Best outcome cost over time"), "{page}");
    // A visitor: no row is anyone's own. The first answer sets the pre-session cookie
    // (no cache may keep it); with that cookie the public page may be kept a minute.
    let r = s.get(None, path).await;
    assert_eq!(r.headers()["cache-control"], "private, no-store");
    let pre = r.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let r = s
        .http
        .get(format!("{}{path}", s.base))
        .header("cookie", &pre)
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["cache-control"], "public, max-age=60");
    assert!(
        r.headers().get_all("vary").iter().any(|v| v == "cookie"),
        "{:?}",
        r.headers()
    );
    let page = r.text().await.unwrap();
    assert!(
        !page.contains("class=\"mine\"") && !page.contains("your team"),
        "{page}"
    );
    // A signed-in reader's page is personal; so is the sign-in form.
    let r = s.get(Some(&alice.token), path).await;
    assert_eq!(r.headers()["cache-control"], "private, no-store");
    let r = s.get(None, "/login").await;
    assert_eq!(r.headers()["cache-control"], "private, no-store");
}

/// The changed pages in Chromium at 360, 390 and 1366 px: none scrolls sideways, and
/// the submissions list stacks its rows on a phone. With `PHYSIOJUDGE_SCREENSHOTS=DIR`
/// (the SQLite run) each is saved at 390 and 1366 px, as docs/screenshots/ holds them.
async fn pages_fit_phones(b: Backend) {
    let Some((_driver, c)) = common::browser().await else {
        return;
    };
    let shots = match b {
        Backend::Sqlite => {
            std::env::var_os("PHYSIOJUDGE_SCREENSHOTS").map(std::path::PathBuf::from)
        }
        Backend::Postgres => None,
    };
    let s = site(b).await;
    let (alice, _) = seed_board(&s).await;
    let mine = s.member("cinc2017", "alice", "Alpha").await;
    let hi = store::Better::Higher;
    s.entry(
        "cinc2017",
        mine.team,
        Some("a rather long method name, to see it wrap on a phone"),
        Some((result("cinc2017", false, 0.0), Vec::new())),
    )
    .await;
    let scored = s
        .entry(
            "cinc2017",
            mine.team,
            Some("CNN v2"),
            Some((
                result("cinc2017", true, 0.61),
                vec![figure("score", 0.61, hi)],
            )),
        )
        .await;
    // Left queued: sent last, as the queue takes the oldest first.
    s.entry("cinc2017", mine.team, Some("first try"), None)
        .await;
    c.goto(&format!("{}/", s.base)).await.unwrap();
    // The session cookie, set by the page (WebDriver's own would be SameSite=None,
    // which Chromium refuses on plain http).
    c.execute(
        "document.cookie = arguments[0]",
        vec![json!(format!("pj_session={}; path=/", alice.token))],
    )
    .await
    .unwrap();
    let pages = [
        ("my-submissions", "/submissions".to_owned()),
        ("submission-quiz-report", format!("/submissions/{scored}")),
        (
            "leaderboard-board",
            "/challenges/physionet2022/leaderboard".to_owned(),
        ),
    ];
    for (w, h) in [(360u32, 800u32), (390, 1500), (1366, 1100)] {
        c.set_window_size(w, h).await.unwrap();
        for (name, path) in &pages {
            c.goto(&format!("{}{path}", s.base)).await.unwrap();
            common::wait_text(&c, "main", "").await;
            common::fits(&c, w).await;
            if let (Some(dir), true) = (&shots, w != 360) {
                // The whole page: the window as tall as the page (up to 5000 px).
                let tall = c
                    .execute("return document.documentElement.scrollHeight", vec![])
                    .await
                    .unwrap()
                    .as_u64()
                    .unwrap_or(u64::from(h));
                let tall = u32::try_from(tall.clamp(u64::from(h), 5000)).unwrap();
                c.set_window_size(w, tall + 100).await.unwrap();
                std::fs::create_dir_all(dir).unwrap();
                let png = c.screenshot().await.unwrap();
                std::fs::write(dir.join(format!("{name}-{w}.png")), png).unwrap();
                c.set_window_size(w, h).await.unwrap();
            }
        }
        if w == 390 {
            // Stacked: each cell under its column's name, the header row hidden.
            c.goto(&format!("{}/submissions", s.base)).await.unwrap();
            let shown = c
                .execute(
                    "const td = document.querySelector('#submissions td[data-label=State]'); \
                     return [getComputedStyle(td).display, \
                             getComputedStyle(td, '::before').content];",
                    vec![],
                )
                .await
                .unwrap();
            assert_eq!(shown, json!(["grid", "\"State\""]), "not stacked at {w} px");
        }
    }
    c.close().await.unwrap();
}

both!(
    submission_page_and_list,
    leaderboard_names_rows_entries_and_plots,
    pages_fit_phones
);
