//! The web site in a real browser: Debian's Chromium, headless, driven over
//! chromedriver with `fantoccini`, against a real server over a real database (a
//! SQLite file, and a fresh PostgreSQL database). The queue's worker is played by the
//! store's own calls (take a job, report it), so each state change happens while the
//! browser watches.
//!
//! Needs `chromium` and `chromedriver` (scripts/test.sh installs them). Without them
//! the tests fail and say so, unless `PHYSIOJUDGE_SKIP_BROWSER=1`.
//! `PHYSIOJUDGE_SCREENSHOTS=DIR` saves a screenshot of every page visited (the SQLite
//! run), as docs/screenshots/ holds them.

mod common;

use std::path::PathBuf;
use std::time::Duration;

use common::*;
use fantoccini::{Client, Locator};
use serde_json::{Value, json};

use common::site::{good_entry, open_phase, zip};
use store::{Backend, Role};

/// The site (an organiser `org` in it, password "organiser pass") and where its
/// screenshots go, if anywhere.
struct Site {
    web: common::site::Site,
    shots: Option<PathBuf>,
}

impl std::ops::Deref for Site {
    type Target = common::site::Site;
    fn deref(&self) -> &common::site::Site {
        &self.web
    }
}

async fn site(backend: Backend) -> Site {
    let web = common::site::Site::with(backend, |c| {
        c.events_poll = Duration::from_millis(100);
    })
    .await;
    web.t
        .create_user("org", Role::Organiser, Some("organiser pass"))
        .await
        .unwrap();
    let shots = match backend {
        Backend::Sqlite => std::env::var_os("PHYSIOJUDGE_SCREENSHOTS").map(PathBuf::from),
        Backend::Postgres => None,
    };
    Site { web, shots }
}

impl Site {
    async fn shot(&self, c: &Client, name: &str) {
        if let Some(dir) = &self.shots {
            std::fs::create_dir_all(dir).unwrap();
            let png = c.screenshot().await.unwrap();
            std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
        }
    }

    /// Takes the next job as a worker would: the submission is `running`.
    async fn take(&self) -> store::Job {
        let worker = match self.t.workers().await.unwrap().into_iter().next() {
            Some(w) => w,
            None => self.t.create_worker("w1").await.unwrap().0,
        };
        self.t
            .take_job(worker.id, Duration::from_secs(600), None)
            .await
            .unwrap()
            .expect("a queued job")
    }

    /// Reports a taken job as the judge would have ended it.
    async fn report(&self, job: &store::Job, result: Value, log: &str, score: Option<f64>) {
        self.report_by(job, result, log, score, "score 0.1.0").await;
    }

    /// [`Site::report`] with the scorer version the result names.
    async fn report_by(
        &self,
        job: &store::Job,
        result: Value,
        log: &str,
        score: Option<f64>,
        scorer: &str,
    ) {
        let worker = self.t.workers().await.unwrap().remove(0);
        let dir = server::layout::result_dir(self.state.path(), job.attempt);
        std::fs::create_dir_all(dir.join("logs")).unwrap();
        std::fs::write(dir.join("logs/quiz.log"), log).unwrap();
        let outcome = if score.is_some() {
            store::Outcome::Scored
        } else {
            store::Outcome::Failed
        };
        self.t
            .report(
                worker.id,
                job.attempt,
                &store::Report {
                    outcome,
                    result_json: Some(result.to_string()),
                    private_json: score.map(|s| json!({"score": s}).to_string()),
                    figures: score
                        .map(|s| {
                            vec![store::Figure {
                                key: "score".into(),
                                value: Some(s),
                                better: store::Better::Higher,
                            }]
                        })
                        .unwrap_or_default(),
                    // As a worker reports them: the exam ranking's keys, valued from
                    // the quiz report (a phase may be scored on the quiz).
                    quiz_figures: score
                        .map(|_| {
                            vec![store::Figure {
                                key: "score".into(),
                                value: result["quiz_score"]["report"]["score"].as_f64(),
                                better: store::Better::Higher,
                            }]
                        })
                        .unwrap_or_default(),
                    scorer_version: scorer.into(),
                    judge_version: "judge 0.1.0".into(),
                    runtime_lock: None,
                    warnings: Vec::new(),
                    message: None,
                },
            )
            .await
            .unwrap();
    }
}

fn scored_result(score: f64) -> Value {
    json!({
        "challenge": "cinc2017", "entry": "entry.zip", "verdict": "scored", "score": score,
        "split": {"training": 10, "quiz": 5, "exam": 5},
        "stages": [
            {"stage": "prep", "status": "passed", "wall_time_s": 0.5},
            {"stage": "quiz", "status": "passed", "wall_time_s": 1.25,
             "records": [{"record": "A0001", "state": "ok"}], "log": "logs/quiz.log"},
            {"stage": "exam", "status": "passed", "wall_time_s": 3.0,
             "counts": {"records": 5, "ok": 4, "failures": 1, "timeouts": 0, "defaulted": 0}},
            {"stage": "score", "status": "passed", "wall_time_s": 0.0}
        ],
        // The quiz scored as the exam (a phase scored on either split ranks the same).
        "quiz_score": {"score": score, "report": {"score": score, "errors": ["A0003: no answer"]}},
        "exam_score": {"precision": 3, "ranking": [{"key": "score", "value": score, "better": "higher"}]},
        "judge_version": "judge 0.1.0"
    })
}

fn failed_result() -> Value {
    json!({
        "challenge": "cinc2017", "entry": "entry.zip", "verdict": "failed",
        "split": {"training": 10, "quiz": 5, "exam": 5},
        "stages": [
            {"stage": "prep", "status": "passed", "wall_time_s": 0.5},
            {"stage": "quiz", "status": "failed", "wall_time_s": 0.8,
             "reason": {"kind": "output", "record": "A0001", "problem": "answers.txt has no line for A0001"},
             "log": "logs/quiz.log"},
            {"stage": "exam", "status": "skipped", "why": "an earlier stage failed", "wall_time_s": 0.0}
        ],
        "judge_version": "judge 0.1.0"
    })
}

/// A good entry of about 3 MiB (a model file that does not compress): larger than any
/// default form limit, so the upload must stream.
fn big_entry() -> Vec<u8> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let model: Vec<u8> = (0..3 << 20)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    zip(&[
        ("setup.sh", b"#!/bin/sh\n"),
        ("next.sh", b"#!/bin/sh\necho \"$1,N\" >> answers.txt\n"),
        ("model.bin", &model),
    ])
}

/// No alert opened, and the page has only our own script element.
async fn inert(c: &Client) {
    assert!(c.get_alert_text().await.is_err(), "an alert opened");
    let scripts = c
        .execute("return document.scripts.length", vec![])
        .await
        .unwrap();
    assert_eq!(scripts, json!(1), "a script element was injected");
}

const HOSTILE: &str = "<script>alert(1)</script><img src=x onerror=alert(2)>";

async fn the_whole_flow(backend: Backend) {
    let Some((_driver, c)) = browser().await else {
        return;
    };
    let s = site(backend).await;
    let now = s.t.now();

    // An organiser signs in, creates a challenge and a phase in the console.
    c.goto(&s.url("/login")).await.unwrap();
    s.shot(&c, "login").await;
    sign_in(&c, &s.base, "org", "organiser pass").await;
    c.goto(&s.url("/organiser")).await.unwrap();
    fill(&c, "#c-id", "cinc2017").await;
    fill(&c, "#c-title", "CinC 2017: AF classification").await;
    fill(&c, "#c-def", "cinc2017").await;
    fill(&c, "#c-data", s.data.path().to_str().unwrap()).await;
    click(&c, "form[action='/organiser/challenges'] button").await;
    wait_text(&c, "main", "Challenge created").await;
    let opens = (now - chrono::Duration::days(1))
        .format("%Y-%m-%dT%H:%M")
        .to_string();
    let closes = (now + chrono::Duration::days(30))
        .format("%Y-%m-%dT%H:%M")
        .to_string();
    fill(&c, "#phase-new-name", "official").await;
    set_times(&c, "phase-new", &opens, &closes).await;
    fill(&c, "#phase-new-total", "10").await;
    click(
        &c,
        "form[action='/organiser/challenges/cinc2017/phases'] button",
    )
    .await;
    wait_text(&c, "main", "Phase official added").await;
    s.shot(&c, "organiser").await;
    sign_out(&c).await;

    // A participant signs up, forms a team with a hostile name.
    c.goto(&s.url("/signup")).await.unwrap();
    fill(&c, "#name", "alice").await;
    fill(&c, "#password", "alice's password").await;
    click(&c, "form.stack button").await;
    wait_text(&c, "header.site", "alice").await;
    s.shot(&c, "challenges").await;
    c.goto(&s.url("/challenges/cinc2017")).await.unwrap();
    wait_text(&c, "main", "physiojudge evaluate --challenge cinc2017").await;
    s.shot(&c, "challenge").await;
    c.goto(&s.url("/challenges/cinc2017/team")).await.unwrap();
    fill(&c, "#team-name", HOSTILE).await;
    click(&c, "form[action='/challenges/cinc2017/team'] button").await;
    let h1 = wait_text(&c, "h1", "Team").await;
    assert!(h1.contains(HOSTILE), "{h1}");
    inert(&c).await;
    s.shot(&c, "team").await;

    // An invalid archive is refused in place, after an upload with progress.
    c.goto(&s.url("/challenges/cinc2017/submit")).await.unwrap();
    wait_text(&c, ".quota", "10").await;
    s.shot(&c, "submit").await;
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.zip");
    std::fs::write(&broken, b"this is not a zip archive at all").unwrap();
    c.execute("window.stayed = true", vec![]).await.unwrap();
    c.find(Locator::Css("#entry"))
        .await
        .unwrap()
        .send_keys(broken.to_str().unwrap())
        .await
        .unwrap();
    click(&c, "form#upload button[type=submit]").await;
    let refusal = wait_text(&c, "#refusal", "refused").await;
    assert!(refusal.contains("nothing was charged"), "{refusal}");
    let stayed = c
        .execute(
            "return window.stayed === true && document.getElementById('progress').value",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        stayed,
        json!(100),
        "the upload did not go through the script with progress"
    );
    s.shot(&c, "submit-refused").await;

    // A good entry: queued, then running and scored while the page watches.
    let good = dir.path().join("entry.zip");
    std::fs::write(&good, big_entry()).unwrap();
    c.find(Locator::Css("#entry"))
        .await
        .unwrap()
        .send_keys(good.to_str().unwrap())
        .await
        .unwrap();
    click(&c, "form#upload button[type=submit]").await;
    wait_text(&c, "#summary", "queued").await;
    let alpha_url = c.current_url().await.unwrap();
    assert!(alpha_url.path().starts_with("/submissions/"), "{alpha_url}");
    s.shot(&c, "submission-queued").await;
    c.execute("window.stayed = true", vec![]).await.unwrap();
    let job = s.take().await;
    wait_text(&c, "#summary", "running").await;
    s.shot(&c, "submission-running").await;
    s.report(&job, scored_result(0.61), "quiz: A0001 ok\n", Some(0.61))
        .await;
    wait_text(&c, "#summary", "scored").await;
    wait_text(&c, "main", "Reproduce it locally").await;
    let stayed = c
        .execute("return window.stayed === true", vec![])
        .await
        .unwrap();
    assert_eq!(stayed, json!(true), "the page was reloaded");
    inert(&c).await;
    s.shot(&c, "submission-scored").await;

    // A broken entry is judged failed; its reason and a hostile log are shown inert.
    c.goto(&s.url("/challenges/cinc2017/submit")).await.unwrap();
    c.find(Locator::Css("#entry"))
        .await
        .unwrap()
        .send_keys(good.to_str().unwrap())
        .await
        .unwrap();
    click(&c, "form#upload button[type=submit]").await;
    wait_text(&c, "#summary", "queued").await;
    let job = s.take().await;
    let log = "\u{1b}[31mTraceback\u{1b}[0m <script>alert(3)</script>\u{1b}]0;pwned\u{7}\r\nline two\u{0}\n";
    s.report(&job, failed_result(), log, None).await;
    let summary = wait_text(&c, "#summary", "failed").await;
    assert!(
        summary.contains("answers.txt has no line for A0001"),
        "{summary}"
    );
    let pre = wait_text(&c, "pre.log", "Traceback").await;
    assert!(
        pre.contains("Traceback <script>alert(3)</script>"),
        "{pre:?}"
    );
    assert!(!pre.contains('\u{1b}') && !pre.contains("pwned"), "{pre:?}");
    inert(&c).await;
    s.shot(&c, "submission-failed").await;
    c.goto(&s.url("/submissions")).await.unwrap();
    wait_text(&c, "#submissions", "failed").await;
    s.shot(&c, "my-submissions").await;

    // The form without its CSRF token, and from another site: refused.
    let cookie = c.get_named_cookie("pj_session").await.unwrap();
    let http = reqwest::Client::new();
    let r = http
        .post(s.url("/token"))
        .header("cookie", format!("pj_session={}", cookie.value()))
        .form(&[("csrf", "")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let r = http
        .post(s.url("/logout"))
        .header("cookie", format!("pj_session={}", cookie.value()))
        .header("origin", "http://evil.example")
        .form(&[("csrf", "whatever")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let r = http.get(s.url("/")).send().await.unwrap();
    let csp = r.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"),
        "{csp}"
    );
    let session = r.headers().get_all("set-cookie").iter().count();
    assert_eq!(session, 1);
    c.goto(&s.url("/token")).await.unwrap();
    click(&c, "form[action='/token'] button").await;
    let token = wait_text(&c, "#token", "pj_").await;
    s.shot(&c, "token").await;
    let me = || {
        http.get(s.url("/api/v1/users/me"))
            .bearer_auth(token.trim())
            .send()
    };
    assert_eq!(me().await.unwrap().status(), 200);
    fill(&c, "#revoke", token.trim()).await;
    click(&c, "form[action='/token/revoke'] button").await;
    wait_text(&c, "main", "Revoked").await;
    assert_eq!(
        me().await.unwrap().status(),
        401,
        "the revoked token still works"
    );
    sign_out(&c).await;

    // A second team scores higher; it cannot see Alpha's submission.
    let bob =
        s.t.create_user("bob", Role::Participant, Some("bob's password"))
            .await
            .unwrap();
    let bob_token = s.t.issue_token(bob.id, "test").await.unwrap().token;
    let r = http
        .post(s.url("/api/v1/teams"))
        .bearer_auth(&bob_token)
        .json(&json!({"name": "Beta", "challenge": "cinc2017"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let r = http
        .post(s.url("/api/v1/challenges/cinc2017/submissions"))
        .bearer_auth(&bob_token)
        .header("content-type", "application/octet-stream")
        .body(good_entry())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let job = s.take().await;
    s.report(&job, scored_result(0.83), "ok\n", Some(0.83))
        .await;
    sign_in(&c, &s.base, "bob", "bob's password").await;
    c.goto(alpha_url.as_str()).await.unwrap();
    wait_text(&c, "h1", "Not found").await;
    // The error page is drawn in the reader's own frame.
    wait_text(&c, "header.site", "Signed in as bob").await;
    inert(&c).await;
    c.goto(&s.url("/challenges/cinc2017/leaderboard"))
        .await
        .unwrap();
    let board = text_of(&c, "table.board tbody").await;
    let (beta, alpha) = (board.find("Beta").unwrap(), board.find("<script>").unwrap());
    assert!(beta < alpha, "{board}");
    assert!(board.starts_with("1"), "{board}");
    inert(&c).await;
    let points = c
        .execute(
            "return document.querySelectorAll('figure.plot circle').length",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(points, json!(2), "the plot shows two improvements");
    s.shot(&c, "leaderboard").await;

    // The organiser's CSV of every submission with its exact figures; a participant's
    // session is refused.
    let org = s.t.user_by_name("org").await.unwrap();
    let org_token = s.t.issue_token(org.id, "test").await.unwrap().token;
    let r = s
        .get(
            Some(&org_token),
            "/organiser/results.csv?challenge=cinc2017",
        )
        .await;
    assert_eq!(r.status(), 200);
    assert!(
        r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/csv")
    );
    let csv = r.text().await.unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert!(
        lines[0].starts_with("submission,phase,team,state") && lines[0].ends_with(",score"),
        "{csv}"
    );
    assert_eq!(lines.len(), 4, "three submissions: {csv}");
    assert!(
        lines
            .iter()
            .any(|l| l.contains(",Beta,scored,") && l.ends_with(",0.83")),
        "{csv}"
    );
    assert!(lines.iter().any(|l| l.contains(",failed,")), "{csv}");
    let r = s
        .get(
            Some(&bob_token),
            "/organiser/results.csv?challenge=cinc2017",
        )
        .await;
    assert_eq!(r.status(), 403);

    // Readable at 360 px and at 1920 px.
    for (w, h) in [(360u32, 800u32), (1920, 1080)] {
        c.set_window_size(w, h).await.unwrap();
        for path in [
            "/",
            "/challenges/cinc2017",
            "/challenges/cinc2017/submit",
            "/submissions",
            "/challenges/cinc2017/team",
            "/token",
            "/organiser",
            "/challenges/cinc2017/leaderboard",
        ] {
            c.goto(&s.url(path)).await.unwrap();
            fits(&c, w).await;
        }
        s.shot(&c, &format!("leaderboard-{w}")).await;
    }
    c.close().await.unwrap();
}

/// The record viewer on a CPSC 2021 quiz record: organisers see both leads with the
/// true and predicted AF episodes as bands and can zoom; the team is refused, as the
/// built-in challenge keeps its quiz labels private.
async fn record_viewer(backend: Backend) {
    let Some((_driver, c)) = browser().await else {
        return;
    };
    let s = site(backend).await;
    let data = s.data.path().join("cpsc2021");
    synth::write_challenge("cpsc2021", &data, 7, Some(4)).unwrap();
    s.t.create_challenge(
        "cpsc2021",
        "CPSC 2021",
        store::Definition::Builtin("cpsc2021".into()),
        &data,
    )
    .await
    .unwrap();
    let now = s.t.now();
    s.t.create_phase("cpsc2021", &open_phase("open", now))
        .await
        .unwrap();
    let alice =
        s.t.create_user("alice", Role::Participant, Some("alice's password"))
            .await
            .unwrap();
    let token = s.t.issue_token(alice.id, "test").await.unwrap().token;
    s.t.create_team("cpsc2021", "Alpha", alice.id)
        .await
        .unwrap();
    let r = reqwest::Client::new()
        .post(s.url("/api/v1/challenges/cpsc2021/submissions"))
        .bearer_auth(&token)
        .header("content-type", "application/octet-stream")
        .body(good_entry())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let id = r.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // The record with the most true episodes, and a prediction that half overlaps one.
    let names = std::fs::read_to_string(data.join("RECORDS")).unwrap();
    let truth = names
        .lines()
        .map(|n| score::cpsc2021::load_record(&data, n.trim()).unwrap())
        .max_by_key(|r| r.episodes.len())
        .unwrap();
    let (a, b) = truth.episodes.first().copied().unwrap_or((1000, 3000));
    let predicted = json!({"predict_endpoints": [[a + (b - a) / 2, (b + (b - a) / 2).min(truth.len as i64 - 1)]]});
    let job = s.take().await;
    let dir = server::layout::result_dir(s.state.path(), job.attempt);
    std::fs::create_dir_all(dir.join("outputs/quiz")).unwrap();
    std::fs::write(
        dir.join(format!("outputs/quiz/{}.json", truth.name)),
        predicted.to_string(),
    )
    .unwrap();
    let mut result = scored_result(0.5);
    result["challenge"] = json!("cpsc2021");
    result["stages"][1]["records"] = json!([{"record": truth.name, "state": "ok"}]);
    s.report(&job, result, "ok\n", Some(0.5)).await;

    let viewer = format!("/submissions/{id}/records/{}", truth.name);
    sign_in(&c, &s.base, "org", "organiser pass").await;
    c.goto(&s.url(&format!("/submissions/{id}"))).await.unwrap();
    click(&c, "ul.records a").await;
    wait_text(&c, "h1", &truth.name).await;
    assert_eq!(c.current_url().await.unwrap().path(), viewer);
    let count = |sel: &'static str| {
        let c = c.clone();
        async move {
            c.execute(
                "return document.querySelectorAll(arguments[0]).length",
                vec![json!(sel)],
            )
            .await
            .unwrap()
            .as_u64()
            .unwrap()
        }
    };
    assert_eq!(count("figure.record path").await, 2, "two leads");
    let bands = count("figure.record rect[fill='#1f5fbf']").await;
    assert_eq!(bands, 1, "one predicted band");
    if !truth.episodes.is_empty() {
        assert!(
            count("figure.record rect[fill='#b42318']").await >= 1,
            "a true band"
        );
    }
    let d = c
        .execute(
            "return document.querySelector('figure.record path').getAttribute('d').length",
            vec![],
        )
        .await
        .unwrap();
    assert!(d.as_u64().unwrap() > 1000, "the lead is drawn: {d}");
    inert(&c).await;
    s.shot(&c, "record-viewer").await;
    click(&c, "nav.actions a.button").await;
    wait_text(&c, "figcaption", "leads from").await;
    assert!(
        c.current_url()
            .await
            .unwrap()
            .query()
            .unwrap_or("")
            .contains("from=")
    );
    sign_out(&c).await;

    sign_in(&c, &s.base, "alice", "alice's password").await;
    c.goto(&s.url(&viewer)).await.unwrap();
    wait_text(&c, "h1", "Not shown in this challenge").await;
    sign_out(&c).await;

    // PhysioNet 2022: a patient's recordings, the truth and the entry's probabilities.
    let data = s.data.path().join("physionet2022");
    synth::write_challenge("physionet2022", &data, 7, Some(3)).unwrap();
    s.t.create_challenge(
        "physionet2022",
        "PhysioNet 2022",
        store::Definition::Builtin("physionet2022".into()),
        &data,
    )
    .await
    .unwrap();
    s.t.create_phase("physionet2022", &open_phase("open", now))
        .await
        .unwrap();
    s.t.create_team("physionet2022", "Alpha", alice.id)
        .await
        .unwrap();
    let r = reqwest::Client::new()
        .post(s.url("/api/v1/challenges/physionet2022/submissions"))
        .bearer_auth(&token)
        .header("content-type", "application/octet-stream")
        .body(good_entry())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let id = r.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut patient = None;
    for e in walk(&data) {
        if e.extension().is_some_and(|x| x == "txt") {
            patient = Some(e.file_stem().unwrap().to_str().unwrap().to_owned());
            break;
        }
    }
    let patient = patient.expect("a patient file");
    let job = s.take().await;
    let dir = server::layout::result_dir(s.state.path(), job.attempt);
    std::fs::create_dir_all(dir.join("outputs/quiz")).unwrap();
    std::fs::write(
        dir.join(format!("outputs/quiz/{patient}.csv")),
        format!(
            "#{patient}\nPresent,Unknown,Absent,Abnormal,Normal\n0,0,1,0,1\n0.1,0.2,0.7,0.35,0.65\n"
        ),
    )
    .unwrap();
    let mut result = scored_result(0.5);
    result["challenge"] = json!("physionet2022");
    result["stages"][1]["records"] = json!([{"record": patient, "state": "ok"}]);
    s.report(&job, result, "ok\n", Some(0.5)).await;
    sign_in(&c, &s.base, "org", "organiser pass").await;
    c.goto(&s.url(&format!("/submissions/{id}/records/{patient}")))
        .await
        .unwrap();
    wait_text(&c, "h1", &patient).await;
    let table = text_of(&c, "main table").await;
    assert!(table.contains("Absent") && table.contains("0.7"), "{table}");
    assert!(table.contains("true class"), "{table}");
    let recordings = count("figure.record path").await;
    assert!(recordings >= 1, "the recordings are drawn");
    inert(&c).await;
    s.shot(&c, "record-viewer-physionet2022").await;

    // P300: per trial the target, the reported character, sequences and validity.
    let data = s.data.path().join("p300speller");
    synth::write_challenge("p300speller", &data, 7, Some(2)).unwrap();
    s.t.create_challenge(
        "p300speller",
        "P300",
        store::Definition::Builtin("p300speller".into()),
        &data,
    )
    .await
    .unwrap();
    s.t.create_phase("p300speller", &open_phase("open", now))
        .await
        .unwrap();
    s.t.create_team("p300speller", "Alpha", alice.id)
        .await
        .unwrap();
    let r = reqwest::Client::new()
        .post(s.url("/api/v1/challenges/p300speller/submissions"))
        .bearer_auth(&token)
        .header("content-type", "application/octet-stream")
        .body(good_entry())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let id = r.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let subject_dir = stream::load::subject_dirs(&data).unwrap().remove(0);
    let subject = stream::load::subject(&subject_dir, 0).unwrap();
    let block = &subject.blocks[0];
    let spans = block.trials().unwrap();
    assert!(spans.len() >= 2, "two trials in the first block");
    let wrong = if spans[1].code == 101 { 102 } else { 101 };
    let session = json!({
        "trials": [
            {"subject": subject.name, "block": block.name, "trial": 0, "outcome": "reported", "sequences": 3},
            {"subject": subject.name, "block": block.name, "trial": 1, "outcome": "reported", "sequences": 5}
        ],
        "log": [
            {"index": 0, "subject": subject.name, "block": block.name, "point": 10, "code": spans[0].code,
             "status": "accepted", "trial": 0, "sequences": 3},
            {"index": 1, "subject": subject.name, "block": block.name, "point": 20, "code": wrong,
             "status": "accepted", "trial": 1, "sequences": 5},
            {"index": 2, "subject": subject.name, "block": block.name, "point": 30, "code": 103,
             "status": "later", "trial": 1}
        ],
        "reports": 3, "dropped_reports": 0, "finished": true
    });
    let job = s.take().await;
    let dir = server::layout::result_dir(s.state.path(), job.attempt);
    std::fs::create_dir_all(dir.join("outputs/quiz")).unwrap();
    std::fs::write(dir.join("outputs/quiz/session.json"), session.to_string()).unwrap();
    let mut result = scored_result(0.5);
    result["challenge"] = json!("p300speller");
    result["stages"][1]["records"] = json!([{"record": subject.name, "state": "ok"}]);
    s.report(&job, result, "ok\n", Some(0.5)).await;
    c.goto(&s.url(&format!("/submissions/{id}/records/{}", subject.name)))
        .await
        .unwrap();
    let table = wait_text(&c, "main table tbody", "right").await;
    let lines: Vec<&str> = table.lines().collect();
    assert!(
        lines[0].contains("right") && lines[0].contains(" 3 "),
        "{table}"
    );
    assert!(
        lines[1].contains("wrong") && lines[1].contains("1 later report ignored"),
        "{table}"
    );
    assert!(
        lines
            .get(2)
            .is_none_or(|l| l.contains("no") && l.contains("wrong")),
        "{table}"
    );
    s.shot(&c, "record-viewer-p300").await;
    c.close().await.unwrap();
}

/// Every file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// The submit page's refusals, in place: a spent quota, then a phase that closed while
/// the page was open.
async fn refusals_in_place(backend: Backend) {
    let Some((_driver, c)) = browser().await else {
        return;
    };
    let s = site(backend).await;
    s.challenge("cinc2017", "CinC 2017").await;
    let now = s.t.now();
    s.t.create_phase(
        "cinc2017",
        &store::NewPhase {
            quota: store::Quota {
                total: Some(1),
                per_day: None,
                max_concurrent: None,
            },
            ..open_phase("open", now)
        },
    )
    .await
    .unwrap();
    let alice =
        s.t.create_user("alice", Role::Participant, Some("alice's password"))
            .await
            .unwrap();
    let alpha =
        s.t.create_team("cinc2017", "Alpha", alice.id)
            .await
            .unwrap();
    let bob =
        s.t.create_user("bob", Role::Participant, Some("bob's password"))
            .await
            .unwrap();
    s.t.create_team("cinc2017", "Beta", bob.id).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let entry = dir.path().join("entry.zip");
    std::fs::write(&entry, good_entry()).unwrap();
    let upload = |c: Client| {
        let entry = entry.clone();
        async move {
            c.find(Locator::Css("#entry"))
                .await
                .unwrap()
                .send_keys(entry.to_str().unwrap())
                .await
                .unwrap();
            click(&c, "form#upload button[type=submit]").await;
        }
    };

    sign_in(&c, &s.base, "alice", "alice's password").await;
    c.goto(&s.url("/challenges/cinc2017/submit")).await.unwrap();
    upload(c.clone()).await;
    wait_text(&c, "#summary", "queued").await;
    // Withdrawn while queued: not charged, the quota is whole again.
    click(&c, "form[action$='/withdraw'] button").await;
    wait_text(&c, "#summary", "withdrawn").await;
    c.goto(&s.url("/challenges/cinc2017/submit")).await.unwrap();
    wait_text(&c, ".quota", "In this phase: 1").await;
    upload(c.clone()).await;
    wait_text(&c, "#summary", "queued").await;
    c.goto(&s.url("/challenges/cinc2017/submit")).await.unwrap();
    wait_text(&c, ".quota", "Spent: total").await;
    upload(c.clone()).await;
    let r = wait_text(&c, "#refusal", "Your quota is spent").await;
    assert!(r.contains("never charged"), "{r}");
    s.shot(&c, "submit-quota-spent").await;
    let n =
        s.t.quota(s.t.phases("cinc2017").await.unwrap()[0].id, alpha.id)
            .await
            .unwrap();
    assert_eq!(
        n.used_total, 1,
        "the refused and the withdrawn uploads were not charged"
    );
    sign_out(&c).await;

    sign_in(&c, &s.base, "bob", "bob's password").await;
    c.goto(&s.url("/challenges/cinc2017/submit")).await.unwrap();
    wait_text(&c, "form#upload", "Upload").await;
    s.t.clock.advance(chrono::Duration::days(2));
    upload(c.clone()).await;
    let r = wait_text(&c, "#refusal", "The phase is closed").await;
    assert!(r.contains("closed"), "{r}");
    wait_text(&c, "main", "No phase of this challenge is open now").await;
    s.shot(&c, "submit-phase-closed").await;
    c.close().await.unwrap();
}

/// The console's page that publishes and rescores the test's challenge.
const PUBLISH: &str = "/organiser/challenges/cinc2017/publish";

/// Sets a phase form's two `datetime-local` fields (`{form}-opens`, `{form}-closes`),
/// which WebDriver cannot type into the same way in every locale.
async fn set_times(c: &Client, form: &str, opens: &str, closes: &str) {
    c.execute(
        "document.getElementById(arguments[0] + '-opens').value = arguments[1]; \
         document.getElementById(arguments[0] + '-closes').value = arguments[2];",
        vec![json!(form), json!(opens), json!(closes)],
    )
    .await
    .unwrap();
}

/// A scorer version before the server's (`judge::rescore::SCORER_VERSION`): its results
/// are left off a publication until a rescoring replaces them.
const OLD_SCORER: &str = "score 0.0.1-old";

/// Uploads an entry as `token`'s team; the new submission's id.
async fn upload(s: &Site, token: &str, challenge: &str) -> String {
    let r = reqwest::Client::new()
        .post(s.url(&format!("/api/v1/challenges/{challenge}/submissions")))
        .bearer_auth(token)
        .header("content-type", "application/octet-stream")
        .body(good_entry())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    r.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The organiser publishes and rescores in the console, without a script's help: a
/// publication is refused with its blockers listed (a queued submission, a final entry
/// scored by an older scorer, a team's deadline extension still open); a rescoring shows each result's figures before and after
/// and is applied; then the publication succeeds, and the leaderboard shows its
/// versions.
async fn publish_and_rescore(backend: Backend) {
    let Some((_driver, c)) = browser().await else {
        return;
    };
    let s = site(backend).await;
    let data = s.data.path().join("cinc2017");
    synth::write_challenge("cinc2017", &data, 7, Some(24)).unwrap();
    let j = judge::Challenge::built_in("cinc2017").unwrap();
    let exam = judge::dataset::Dataset::open(j.layout, &data)
        .unwrap()
        .split(&j.split, &j.id)
        .unwrap()
        .exam;
    assert!(exam.len() >= 2, "{} exam records", exam.len());
    s.t.create_challenge(
        "cinc2017",
        "CinC 2017",
        store::Definition::Builtin("cinc2017".into()),
        &data,
    )
    .await
    .unwrap();
    let now = s.t.now();
    let phase =
        s.t.create_phase("cinc2017", &open_phase("official", now))
            .await
            .unwrap();
    let mut tokens = Vec::new();
    let mut teams = Vec::new();
    for (user, team) in [("alice", "Alpha"), ("bob", HOSTILE)] {
        let u =
            s.t.create_user(user, Role::Participant, Some("a password"))
                .await
                .unwrap();
        tokens.push(s.t.issue_token(u.id, "test").await.unwrap().token);
        teams.push(s.t.create_team("cinc2017", team, u.id).await.unwrap().id);
    }
    // Each run keeps its exam outputs (one class for every record): what a rescoring
    // scores again. The stored scores are an older scorer's.
    let judged = |job: &store::Job| {
        let dir = server::layout::result_dir(s.state.path(), job.attempt);
        std::fs::create_dir_all(dir.join("private/exam-outputs")).unwrap();
        let answers: String = exam.iter().map(|r| format!("{},N\n", r.id)).collect();
        std::fs::write(dir.join("private/exam-outputs/answers.txt"), answers).unwrap();
    };
    let alpha = upload(&s, &tokens[0], "cinc2017").await;
    let job = s.take().await;
    judged(&job);
    s.report_by(&job, scored_result(0.812), "ok\n", Some(0.812), OLD_SCORER)
        .await;
    let beta = upload(&s, &tokens[1], "cinc2017").await;
    // Alpha may submit two days more: the final board waits for it.
    s.t.grant_extension(
        phase.id,
        teams[0],
        now + chrono::Duration::days(2),
        "a power cut",
        None,
    )
    .await
    .unwrap();

    sign_in(&c, &s.base, "org", "organiser pass").await;
    // Nothing published yet: said in place on the leaderboard.
    c.goto(&s.url("/challenges/cinc2017/leaderboard"))
        .await
        .unwrap();
    click(&c, "#board option[value=published]").await;
    click(&c, "main form.inline button").await;
    wait_text(
        &c,
        "#published-none",
        "Nothing of this phase has been published",
    )
    .await;

    // Refused, with both blockers listed under the phase's form.
    c.goto(&s.url(PUBLISH)).await.unwrap();
    click(
        &c,
        "form[action^='/organiser/challenges/cinc2017/publish'] button",
    )
    .await;
    let r = wait_text(&c, "#publish-refusal", "Not published").await;
    assert!(r.contains("Unfinished"), "{r}");
    assert!(r.contains(HOSTILE), "{r}");
    assert!(r.contains(&format!("submission {beta}")), "{r}");
    assert!(r.contains("queued"), "{r}");
    assert!(
        r.contains("No exam result under the current versions"),
        "{r}"
    );
    assert!(r.contains("Alpha"), "{r}");
    assert!(r.contains(&format!("submission {alpha}")), "{r}");
    assert!(r.contains("Deadline extension still open"), "{r}");
    assert!(r.contains("it may submit until"), "{r}");
    inert(&c).await;
    // The form's address names the refusal: the browser scrolls to it, no script
    // needed.
    let seen = c
        .execute(
            "const r = document.getElementById('publish-refusal').getBoundingClientRect(); \
             return r.top >= 0 && r.top < window.innerHeight;",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(seen, json!(true), "the refusal is not in view");
    s.shot(&c, "organiser-publish-refused").await;

    s.t.revoke_extension(phase.id, teams[0], None, None)
        .await
        .unwrap();
    // Beta's run ends; a rescoring brings both results to the current scorer.
    let job = s.take().await;
    judged(&job);
    s.report_by(&job, scored_result(0.9), "ok\n", Some(0.9), OLD_SCORER)
        .await;
    c.goto(&s.url(PUBLISH)).await.unwrap();
    fill(&c, "#rescore-reason", "scorer <b>fix</b> & versions").await;
    click(&c, "form[action$='/rescore'] button").await;
    wait_text(&c, "h1", "Rescoring of cinc2017").await;
    wait_text(&c, "#rescore-state", "pending").await;
    wait_text(&c, "main", "scorer <b>fix</b> & versions").await;
    let table = wait_text(&c, "#rescore-changes", "score before").await;
    assert!(table.contains("score after"), "{table}");
    assert!(table.contains("0.812") && table.contains("0.9"), "{table}");
    assert!(table.contains(&alpha) && table.contains(&beta), "{table}");
    assert!(table.contains("degenerate output"), "{table}");
    inert(&c).await;
    s.shot(&c, "organiser-rescore").await;
    let rescoring = c.current_url().await.unwrap().path().to_owned();
    click(&c, "form[action$='/apply'] button").await;
    wait_text(&c, "#rescore-state", "applied").await;
    assert!(
        c.find(Locator::Css("form[action$='/apply']"))
            .await
            .is_err(),
        "an applied rescoring still offers Apply"
    );
    let live =
        s.t.results(store::SubmissionId(alpha.parse().unwrap()))
            .await
            .unwrap();
    assert!(live.iter().any(|r| r.replaced), "nothing replaced");

    // The challenge's rescoring history lists it, applied, with its reason.
    c.goto(&s.url(PUBLISH)).await.unwrap();
    let history = wait_text(&c, "#rescore-history", "applied").await;
    assert!(
        history.contains("scorer <b>fix</b> & versions"),
        "{history}"
    );
    inert(&c).await;

    // Now it publishes: version 1, then version 2, each its own link.
    click(
        &c,
        "form[action^='/organiser/challenges/cinc2017/publish'] button",
    )
    .await;
    wait_text(&c, "#published-version", "version 1").await;
    let rows = wait_text(&c, "table.board", "Alpha").await;
    assert!(rows.contains(HOSTILE), "{rows}");
    inert(&c).await;
    c.goto(&s.url(PUBLISH)).await.unwrap();
    click(
        &c,
        "form[action^='/organiser/challenges/cinc2017/publish'] button",
    )
    .await;
    wait_text(&c, "#published-version", "version 2").await;
    let nav = wait_text(&c, "nav.versions", "(latest)").await;
    assert!(nav.contains('1') && nav.contains('2'), "{nav}");
    s.shot(&c, "leaderboard-published").await;
    click(&c, "nav.versions a").await;
    wait_text(&c, "#published-version", "version 1").await;
    // The new pages fit a phone and a wide screen, as an organiser sees them.
    for (w, h) in [(360u32, 800u32), (1920, 1080)] {
        c.set_window_size(w, h).await.unwrap();
        for path in [
            "/organiser",
            PUBLISH,
            rescoring.as_str(),
            "/challenges/cinc2017/leaderboard?phase=official&board=published",
        ] {
            c.goto(&s.url(path)).await.unwrap();
            fits(&c, w).await;
        }
    }
    c.close().await.unwrap();
}

/// An organiser from an empty site to a published board through the console's pages
/// only: a challenge hosted from a built-in definition under another id (its first try
/// refused in place, the form kept), a phase (likewise) then changed, the title
/// changed, judging paused with a reason participants see, a submission seen judged,
/// the metrics read with the session, a publication and the public board. Every
/// console page fits 360 px; the SQLite run saves each at 390 and 1366 px.
async fn console_from_empty_site(backend: Backend) {
    let Some((_driver, c)) = browser().await else {
        return;
    };
    let s = site(backend).await;
    let now = s.t.now();
    let id = "cpsc2021-course";
    let room = |r: &str| format!("/organiser/challenges/{id}{r}");

    sign_in(&c, &s.base, "org", "organiser pass").await;
    c.goto(&s.url("/organiser")).await.unwrap();
    wait_text(&c, "main", "No challenge yet").await;
    // A data folder that is not there: refused in place, nothing typed is lost.
    fill(&c, "#c-id", id).await;
    fill(&c, "#c-title", "CPSC 2021 for the course").await;
    fill(&c, "#c-def", "cpsc2021").await;
    fill(&c, "#c-data", "/no/such/folder").await;
    click(&c, "form[action='/organiser/challenges'] button").await;
    let refusal = wait_text(&c, "#refused-challenge-new", "Not done").await;
    assert!(refusal.contains("/no/such/folder"), "{refusal}");
    for (field, want) in [
        ("c-id", id),
        ("c-title", "CPSC 2021 for the course"),
        ("c-def", "cpsc2021"),
    ] {
        let v = c
            .execute(
                "return document.getElementById(arguments[0]).value",
                vec![json!(field)],
            )
            .await
            .unwrap();
        assert_eq!(v, json!(want), "{field} was not kept");
    }
    // A built-in definition under another id than its own is accepted.
    fill(&c, "#c-data", s.data.path().to_str().unwrap()).await;
    click(&c, "form[action='/organiser/challenges'] button").await;
    wait_text(&c, "main", "Challenge created").await;
    let ch = s.t.challenge(id).await.unwrap();
    assert_eq!(ch.definition, store::Definition::Builtin("cpsc2021".into()));

    // A phase that closes before it opens is refused in place; then added, then changed.
    let at = |days: i64| {
        (now + chrono::Duration::days(days))
            .format("%Y-%m-%dT%H:%M")
            .to_string()
    };
    fill(&c, "#phase-new-name", "open").await;
    set_times(&c, "phase-new", &at(1), &at(-1)).await;
    fill(&c, "#phase-new-total", "5").await;
    let add = format!("form[action='{}'] button", room("/phases"));
    click(&c, &add).await;
    wait_text(&c, "#refused-phase-new", "before it opens").await;
    let kept = c
        .execute(
            "return [document.getElementById('phase-new-name').value, \
             document.getElementById('phase-new-total').value]",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(kept, json!(["open", "5"]));
    set_times(&c, "phase-new", &at(-1), &at(30)).await;
    click(&c, &add).await;
    wait_text(&c, "main", "Phase open added").await;
    wait_text(&c, "#console-phases", "5 in all").await;
    click(&c, "details.edit summary").await;
    fill(&c, "details.edit input[name=total]", "7").await;
    c.execute(
        "document.querySelector('details.edit input[name=selection_closes]').value = arguments[0];",
        vec![json!(at(31))],
    )
    .await
    .unwrap();
    click(&c, "details.edit button").await;
    wait_text(&c, "main", "Phase open saved").await;
    wait_text(&c, "#console-phases", "7 in all").await;
    let phase = s.t.phases(id).await.unwrap().remove(0);
    assert_eq!(phase.quota.total, Some(7));
    assert_eq!(
        phase
            .selection_closes
            .map(|t| t.format("%Y-%m-%dT%H:%M").to_string()),
        Some(at(31))
    );

    // The overview: a new title; judging paused with a reason, which a participant
    // reads on the challenge's page; then resumed.
    c.goto(&s.url(&room(""))).await.unwrap();
    fill(&c, "#e-title", "CPSC 2021 — course run").await;
    click(&c, "form[action$='/edit'] button").await;
    wait_text(&c, "main", "Challenge saved").await;
    wait_text(&c, "h1", "CPSC 2021 — course run").await;
    fill(&c, "#pause-why", "the <i>data</i> is being checked").await;
    click(&c, "form[action$='/pause'] button").await;
    wait_text(&c, "#judging-state", "the <i>data</i> is being checked").await;
    inert(&c).await;
    let alice =
        s.t.create_user("alice", Role::Participant, Some("alice's password"))
            .await
            .unwrap();
    let alice_token = s.t.issue_token(alice.id, "test").await.unwrap().token;
    s.t.create_team(id, "Alpha", alice.id).await.unwrap();
    let (_, page) = s
        .page(Some(&alice_token), &format!("/challenges/{id}"))
        .await;
    assert!(page.contains("Judging paused."), "{page}");
    assert!(
        page.contains("the &lt;i&gt;data&lt;/i&gt; is being checked"),
        "{page}"
    );
    // An entry sent meanwhile waits, and its page says why.
    let sub = upload(&s, &alice_token, id).await;
    let (_, page) = s
        .page(Some(&alice_token), &format!("/submissions/{sub}"))
        .await;
    assert!(
        page.contains("judging paused (the &lt;i&gt;data&lt;/i&gt; is being checked)"),
        "{page}"
    );
    click(&c, "form[action$='/resume'] button").await;
    wait_text(&c, "#judging-state", "Running").await;

    // A team's entry is judged; the console's submissions page shows it scored.
    c.goto(&s.url(&room("/submissions"))).await.unwrap();
    wait_text(&c, "#console-submissions", "queued").await;
    let job = s.take().await;
    s.report(&job, scored_result(0.77), "ok\n", Some(0.77))
        .await;
    c.goto(&s.url(&room("/submissions?state=scored")))
        .await
        .unwrap();
    let rows = wait_text(&c, "#console-submissions", "scored").await;
    assert!(rows.contains("Alpha"), "{rows}");
    assert!(
        c.find(Locator::Css(&format!("a[href='/submissions/{sub}']")))
            .await
            .is_ok()
    );

    // The metrics, read with the session (the API alone wants a bearer token).
    c.goto(&s.url("/organiser/workers")).await.unwrap();
    wait_text(&c, "main", "w1").await;
    click(&c, "a[href='/organiser/metrics']").await;
    wait_text(&c, "body", "physiojudge_queue_length").await;
    let r = s.get(Some(&alice_token), "/organiser/metrics").await;
    assert_eq!(r.status(), 403, "a participant read the metrics");

    // Published from the console; the public board shows it to anyone.
    c.goto(&s.url(&room("/publish"))).await.unwrap();
    wait_text(&c, "#history-h", "Rescoring history").await;
    click(&c, &format!("form[action^='{}'] button", room("/publish"))).await;
    wait_text(&c, "#published-version", "version 1").await;
    sign_out(&c).await;
    c.goto(&s.url(&format!(
        "/challenges/{id}/leaderboard?phase=open&board=published"
    )))
    .await
    .unwrap();
    let board = wait_text(&c, "table.board", "Alpha").await;
    assert!(board.contains("0.77"), "{board}");

    // Every console page fits a phone; each is saved at 390 and 1366 px.
    sign_in(&c, &s.base, "org", "organiser pass").await;
    let pages = [
        ("console-challenges", "/organiser".to_owned()),
        ("console-overview", room("")),
        ("console-phases", room("/phases")),
        ("console-submissions", room("/submissions")),
        ("console-publish", room("/publish")),
        ("console-rules", room("/rules")),
        ("console-workers", "/organiser/workers".to_owned()),
    ];
    for (w, h) in [(360u32, 800u32), (390, 844), (1366, 900)] {
        c.set_window_size(w, h).await.unwrap();
        for (name, path) in &pages {
            c.goto(&s.url(path)).await.unwrap();
            fits(&c, w).await;
            inert(&c).await;
            if w != 360 {
                s.shot(&c, &format!("{name}-{w}")).await;
            }
        }
    }
    c.close().await.unwrap();
}

mod console {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite() {
        super::console_from_empty_site(store::Backend::Sqlite).await;
    }
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        super::console_from_empty_site(store::Backend::Postgres).await;
    }
}

mod publishing {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite() {
        super::publish_and_rescore(store::Backend::Sqlite).await;
    }
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        super::publish_and_rescore(store::Backend::Postgres).await;
    }
}

mod refusals {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite() {
        super::refusals_in_place(store::Backend::Sqlite).await;
    }
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        super::refusals_in_place(store::Backend::Postgres).await;
    }
}

mod viewer {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite() {
        super::record_viewer(store::Backend::Sqlite).await;
    }
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        super::record_viewer(store::Backend::Postgres).await;
    }
}

mod whole_flow {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite() {
        super::the_whole_flow(store::Backend::Sqlite).await;
    }
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        super::the_whole_flow(store::Backend::Postgres).await;
    }
}
