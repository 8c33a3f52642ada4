//! The web site with real workers: entries uploaded in a headless Chromium are judged
//! by a local worker pool (the sandbox, the Python runtime, generated CinC 2017 data)
//! while the page watches, on SQLite and PostgreSQL. Needs root, chromium and
//! chromedriver; run under `flock /tmp/physiojudge-sandbox.lock` (sandbox slots 54–55).
//!
//! No libtest harness: this binary is also the sandbox's init program
//! (`sandbox::reexec`), so its `main` must look at its arguments first.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::process::ExitCode;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use common::*;
use fantoccini::Locator;
use store::testing::TestStore;
use store::{Backend, Role};

fn tar_gz(path: &Path, files: &[(&str, &str)]) {
    let gz = flate2::write::GzEncoder::new(
        std::fs::File::create(path).unwrap(),
        flate2::Compression::fast(),
    );
    let mut tar = tar::Builder::new(gz);
    for (name, text) in files {
        let mut h = tar::Header::new_gnu();
        h.set_size(text.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        tar.append_data(&mut h, name, text.as_bytes()).unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap();
}

/// A per-record entry that answers `N` for every record (no Python: quick runs).
/// The example CinC 2017 entry as the repository ships it (`entries/cinc2017`): every
/// file of its folder, by name and text.
fn example_entry() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../entries/cinc2017");
    let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(e.path()).unwrap())
        })
        .collect();
    files.sort();
    assert!(files.iter().any(|(n, _)| n == "classify.py"), "{files:?}");
    files
}

/// An entry of the same layout whose `next.sh` fails with colours on its way out.
const BROKEN: [(&str, &str); 6] = [
    (
        "next.sh",
        "printf '\\033[31mboom <b>bold</b>\\033[0m\\n' >&2\nexit 3\n",
    ),
    ("setup.sh", "true\n"),
    ("answers.txt", "Z99999,N\n"),
    ("dependencies.txt", "# nothing\n"),
    ("AUTHORS.txt", "test\n"),
    ("LICENSE.txt", "MIT\n"),
];

/// Holds the first run at its first quiz progress until the page has shown it; and
/// keeps each run's progress for the server's event streams, as `physiojudge serve`
/// does.
#[derive(Default)]
struct Watch {
    progress: Mutex<HashMap<uuid::Uuid, server::RunProgress>>,
    gate: Mutex<(bool, bool)>, // (reached, released)
    changed: Condvar,
}

impl Watch {
    fn observe(&self, e: &worker::Event) {
        match e {
            worker::Event::Progress {
                attempt, progress, ..
            } => {
                let Some(stage) = &progress.stage else { return };
                self.progress.lock().unwrap().insert(
                    attempt.submission.0,
                    server::RunProgress {
                        attempt: attempt.number,
                        stage: stage.clone(),
                        done: progress.done,
                        total: progress.total,
                    },
                );
                if stage == "quiz" {
                    let mut g = self.gate.lock().unwrap();
                    if !g.0 {
                        g.0 = true;
                        self.changed.notify_all();
                        // A guard against a hang, not a timing: the test releases it.
                        let _ = self
                            .changed
                            .wait_timeout_while(g, Duration::from_secs(120), |g| !g.1);
                    }
                }
            }
            worker::Event::Finished { attempt, .. } => {
                self.progress.lock().unwrap().remove(&attempt.submission.0);
            }
            _ => {}
        }
    }

    fn release(&self) {
        self.gate.lock().unwrap().1 = true;
        self.changed.notify_all();
    }
}

async fn judged_live(backend: Backend) {
    let Some((_driver, c)) = browser().await else {
        return;
    };
    let t = TestStore::new(backend).await;
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    served::open_cinc2017(&t, &dir.path().join("data")).await;
    let alice = t
        .create_user("alice", Role::Participant, Some("alice's password"))
        .await
        .unwrap();
    t.create_team("cinc2017", "Alpha", alice.id).await.unwrap();

    // The platform as `physiojudge serve` assembles it: queue, workers, API, site.
    let watch = Arc::new(Watch::default());
    let seen = watch.clone();
    let progress = server::ProgressSource(Arc::new(move |id| {
        seen.progress.lock().unwrap().get(&id).cloned()
    }));
    let (queue, base) = served::serve(&t, &state, Some(progress)).await;
    let w = watch.clone();
    let observer: worker::Observer = Arc::new(move |e: &worker::Event| w.observe(e));
    let _pool = worker::Pool::start_local(
        &queue,
        "local",
        Arc::new(served::judge(54..55)),
        worker::Config::new(&state, 1),
        Some(observer),
    )
    .await
    .unwrap();

    sign_in(&c, &base, "alice", "alice's password").await;

    t.create_user("org", Role::Organiser, Some("organiser pass"))
        .await
        .unwrap();
    let files = tempfile::tempdir().unwrap();
    let mut scored_page = None;
    let example = example_entry();
    let example: Vec<(&str, &str)> = example
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    for (name, entry, want) in [
        ("example.tar.gz", example.as_slice(), "scored"),
        ("broken.tar.gz", BROKEN.as_slice(), "failed"),
    ] {
        let path = files.path().join(name);
        tar_gz(&path, entry);
        c.goto(&format!("{base}/challenges/cinc2017/submit"))
            .await
            .unwrap();
        c.find(Locator::Css("#entry"))
            .await
            .unwrap()
            .send_keys(path.to_str().unwrap())
            .await
            .unwrap();
        click(&c, "form#upload button[type=submit]").await;
        wait_text(&c, "#live", "").await;
        c.execute("window.stayed = true", vec![]).await.unwrap();
        if want == "scored" {
            // Held in its quiz: the page shows the stage under way, live.
            let running = wait_text(&c, "#summary", "— quiz").await;
            assert!(running.contains("running"), "{running}");
            if let Some(dir) = std::env::var_os("PHYSIOJUDGE_SCREENSHOTS")
                && backend == Backend::Sqlite
            {
                let png = c.screenshot().await.unwrap();
                std::fs::write(Path::new(&dir).join("submission-running-stage.png"), png).unwrap();
            }
            watch.release();
        }
        let summary = wait_text(&c, "#summary", want).await;
        let stayed = c
            .execute("return window.stayed === true", vec![])
            .await
            .unwrap();
        assert_eq!(stayed, serde_json::json!(true), "the page was reloaded");
        if want == "failed" {
            assert!(summary.contains("exited with status 3"), "{summary}");
            inert_page(&c).await;
        } else {
            wait_text(&c, "main", "Reproduce it locally").await;
            scored_page = Some(c.current_url().await.unwrap());
        }
    }

    // The record viewer on a quiz record the workers judged: the team may not look
    // (CinC 2017 keeps its quiz labels private), an organiser may.
    let scored_page = scored_page.unwrap();
    assert_eq!(
        c.execute(
            "return document.querySelectorAll('ul.records a').length",
            vec![]
        )
        .await
        .unwrap(),
        serde_json::json!(0),
        "the team is offered the viewer"
    );
    sign_out(&c).await;
    sign_in(&c, &base, "org", "organiser pass").await;
    c.goto(scored_page.as_str()).await.unwrap();
    click(&c, "ul.records a").await;
    wait_text(&c, "dl.facts", "Answered").await;
    let facts = text_of(&c, "dl.facts").await;
    assert!(facts.contains("N — normal rhythm"), "{facts}");
    assert!(
        facts.contains("right") || facts.contains("wrong"),
        "{facts}"
    );
    let d = c
        .execute(
            "return document.querySelector('figure.record path').getAttribute('d').length",
            vec![],
        )
        .await
        .unwrap();
    assert!(d.as_u64().unwrap() > 1000, "the ECG is drawn: {d}");
    if let Some(dir) = std::env::var_os("PHYSIOJUDGE_SCREENSHOTS")
        && backend == Backend::Sqlite
    {
        let png = c.screenshot().await.unwrap();
        std::fs::write(Path::new(&dir).join("record-viewer-cinc2017.png"), png).unwrap();
    }
    c.close().await.unwrap();
}

async fn inert_page(c: &fantoccini::Client) {
    assert!(c.get_alert_text().await.is_err());
    let html = c.source().await.unwrap();
    assert!(!html.contains('\u{1b}'), "an escape reached the page");
    assert!(!html.contains("<b>bold</b>"), "the log became markup");
}

fn main() -> ExitCode {
    served::main("judged_live", judged_live)
}
