//! A new participant's journey (issue 35), in a headless Chromium, on SQLite and
//! PostgreSQL: from the challenge list to a final entry using only what the pages say.
//! The starter kit is downloaded through the page's own link and run locally through
//! the judge as `physiojudge evaluate` runs it (the sandbox, the Python runtime, the
//! generated CinC 2017 data `evaluate` makes without `--data`); the participant signs
//! up, forms a team, uploads the kit, and a real local worker pool judges it while its
//! page watches; the quiz report is read, a log downloaded, the entry made final.
//! Needs root, chromium and chromedriver; run under `flock /tmp/physiojudge-sandbox.lock`
//! (sandbox slots 72–73). Without root it fails when `PHYSIOJUDGE_REQUIRE_DATA=1`.
//!
//! No libtest harness: this binary is also the sandbox's init program
//! (`sandbox::reexec`), so its `main` must look at its arguments first.

mod common;

use std::process::ExitCode;
use std::sync::Arc;

use common::*;
use fantoccini::{Client, Locator};
use store::Backend;
use store::testing::TestStore;

/// The value of `attr` on the first element matching `css`.
async fn attr(c: &Client, css: &str, attr: &str) -> String {
    c.find(Locator::Css(css))
        .await
        .unwrap()
        .attr(attr)
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("{css} has no {attr}"))
}

/// Follows the link `css` as a reader would, by clicking it.
async fn follow(c: &Client, css: &str, want: &str) -> String {
    click(c, css).await;
    wait_text(c, "main", want).await
}

async fn journey(backend: Backend) {
    let Some((_driver, c)) = browser().await else {
        return;
    };
    let t = TestStore::new(backend).await;
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    // The judge's data stays on the server; the site's copy and the one `evaluate`
    // makes locally are the same generated set (its seed, fewer records: quick runs).
    served::open_cinc2017(&t, &dir.path().join("data")).await;

    // The platform as `physiojudge serve` assembles it; its workers start later.
    let (queue, base) = served::serve(&t, &state, None).await;

    // The list of challenges, then the challenge's page.
    c.goto(&base).await.unwrap();
    follow(
        &c,
        "main h2 a[href='/challenges/cinc2017']",
        "Getting started",
    )
    .await;
    let start = text_of(&c, "section[aria-labelledby=start]").await;
    let command = "sudo physiojudge evaluate --challenge cinc2017 --entry ./cinc2017-starter.zip";
    assert!(start.contains(command), "{start}");
    assert!(
        start.contains("makes a synthetic data set in the same layout"),
        "{start}"
    );
    assert!(start.contains("uploads as it is"), "{start}");

    // The starter kit, through the page's own link, fetched as a visitor.
    let kit_href = attr(&c, "section[aria-labelledby=start] a[download]", "href").await;
    let kit_url = c.current_url().await.unwrap().join(&kit_href).unwrap();
    let r = reqwest::get(kit_url.clone()).await.unwrap();
    assert_eq!(r.status(), 200, "{kit_url}");
    let disposition = r.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        disposition.contains("cinc2017-starter.zip"),
        "{disposition}"
    );
    let files = tempfile::tempdir().unwrap();
    let kit = files.path().join("cinc2017-starter.zip");
    std::fs::write(&kit, r.bytes().await.unwrap()).unwrap();

    // Run locally as the page says: `evaluate` on the kit as downloaded (the judge
    // crate as the binary drives it, in a sandbox slot of its own).
    let local_data = files.path().join("evaluate-data");
    synth::write_challenge("cinc2017", &local_data, 2026, Some(10)).unwrap();
    let local_out = files.path().join("evaluate-out");
    let local = {
        let (kit, local_data, local_out) = (kit.clone(), local_data.clone(), local_out.clone());
        let judge = served::judge(72..73);
        tokio::task::spawn_blocking(move || {
            let request = judge::Request {
                challenge: "cinc2017",
                entry: &kit,
                data: &local_data,
                out: &local_out,
                cancel: None,
            };
            judge.evaluate(&request, &mut ()).unwrap()
        })
        .await
        .unwrap()
    };
    assert_eq!(
        local.verdict,
        judge::result::EntryVerdict::Scored,
        "{local:?}"
    );
    let local_quiz = local.quiz_score.as_ref().expect("a quiz score").score;

    // Sign up from the header's "Sign in", then form a team from the challenge page.
    follow(&c, "header.site a[href='/login']", "No account yet?").await;
    follow(&c, "main a[href='/signup']", "Create an account").await;
    fill(&c, "#name", "newcomer").await;
    fill(&c, "#password", "a newcomer's password").await;
    click(&c, "form.stack button[type=submit]").await;
    wait_text(&c, "header.site", "newcomer").await;
    c.goto(&format!("{base}/challenges/cinc2017"))
        .await
        .unwrap();
    follow(&c, "nav.actions a[href$='/team']", "Create the team").await;
    fill(&c, "#team-name", "Newcomers").await;
    click(&c, "form[action='/challenges/cinc2017/team'] button").await;
    let formed = wait_text(&c, "main", "Your team is formed").await;
    assert!(formed.contains("Team Newcomers"), "{formed}");
    assert!(formed.contains("newcomer"), "{formed}");

    // Upload the kit through the submit page's form, as downloaded.
    follow(&c, "p.crumbs a", "Getting started").await;
    let team_line = text_of(&c, "main").await;
    assert!(
        team_line.contains("You are in team Newcomers"),
        "{team_line}"
    );
    follow(&c, "nav.actions a[href$='/submit']", "Upload").await;
    fill(&c, "#method", "starter kit").await;
    c.find(Locator::Css("#entry"))
        .await
        .unwrap()
        .send_keys(kit.to_str().unwrap())
        .await
        .unwrap();
    click(&c, "form#upload button[type=submit]").await;
    // No worker yet: the page shows it queued before anything judges it.
    wait_text(&c, "#summary", "queued").await;
    let page = c.current_url().await.unwrap();
    assert!(page.path().starts_with("/submissions/"), "{page}");
    c.execute("window.stayed = true", vec![]).await.unwrap();

    // A real worker pool starts; the page follows the entry to `scored` by itself.
    let judge = Arc::new(served::judge(73..74));
    let _pool =
        worker::Pool::start_local(&queue, "local", judge, worker::Config::new(&state, 1), None)
            .await
            .unwrap();
    wait_text(&c, "#summary", "scored").await;
    let stayed = c
        .execute("return window.stayed === true", vec![])
        .await
        .unwrap();
    assert_eq!(stayed, serde_json::json!(true), "the page was reloaded");
    wait_text(&c, "main", "Reproduce it locally").await;

    // The quiz report: the score `evaluate` gave locally, per class, the matrix.
    let quiz = text_of(&c, "section[aria-labelledby=quiz]").await;
    let shown: f64 = quiz
        .split("Quiz score: ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no quiz score in {quiz:?}"));
    assert!(
        (shown - local_quiz).abs() < 1e-6,
        "the site's quiz score {shown} is not the local {local_quiz}"
    );
    let per_class = text_of(&c, "section[aria-labelledby=quiz] table.per-class").await;
    for class in ["Per class", "N", "A", "O"] {
        assert!(per_class.contains(class), "{class}: {per_class}");
    }
    let matrix = text_of(&c, "section[aria-labelledby=quiz] table.confusion").await;
    assert!(
        matrix.contains("Rows: the truth; columns: your entry's answer"),
        "{matrix}"
    );
    let cells = c
        .execute(
            "return document.querySelectorAll('table.confusion td[class*=heat]').length",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(cells, serde_json::json!(16), "a 4×4 matrix: {matrix}");

    // A stage's log through the page's own link, with the session's cookie.
    let log_href = attr(&c, "section[aria-label='Log of quiz'] a.download", "href").await;
    let cookie = c.get_named_cookie("pj_session").await.unwrap();
    let r = reqwest::Client::new()
        .get(page.join(&log_href).unwrap())
        .header("cookie", format!("pj_session={}", cookie.value()))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "{log_href}");
    let disposition = r.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(disposition.starts_with("attachment"), "{disposition}");
    let log = r.text().await.unwrap();
    let shown_log = text_of(&c, "section[aria-label='Log of quiz'] pre.log").await;
    assert!(!log.trim().is_empty(), "an empty quiz log");
    let first_line = log.lines().find(|l| !l.trim().is_empty()).unwrap();
    assert!(
        shown_log.contains(first_line.trim()),
        "{first_line:?} not in {shown_log:?}"
    );
    // Without the session the link sends a visitor to sign in.
    let r = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .get(page.join(&log_href).unwrap())
        .send()
        .await
        .unwrap();
    assert!(
        r.status().is_redirection() || r.status() == 401,
        "{}",
        r.status()
    );

    // Make it the final entry; the page and the list say so.
    click(&c, "form[action$='/select'] button").await;
    let h1 = wait_text(&c, "h1", "final entry").await;
    assert!(h1.starts_with("Submission"), "{h1}");
    let facts = text_of(&c, "dl.facts").await;
    assert!(facts.contains("yes, selected"), "{facts}");
    assert!(
        c.find(Locator::Css("form[action$='/select']"))
            .await
            .is_err(),
        "still offered as final"
    );
    follow(&c, "p.crumbs a[href='/submissions']", "starter kit").await;
    let row = text_of(&c, "#submissions tbody tr").await;
    for want in ["starter kit", "scored", "final entry", "open"] {
        assert!(row.contains(want), "{want}: {row}");
    }
    c.close().await.unwrap();
}

fn main() -> ExitCode {
    served::main("journey", journey)
}
