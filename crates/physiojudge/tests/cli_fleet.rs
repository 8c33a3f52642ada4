//! A fleet end to end (docs/service.md, "A fleet"): the real `physiojudge serve` on
//! PostgreSQL with no local workers and job notices on the machine's NATS JetStream,
//! and real `physiojudge worker` processes that reach it over HTTP and NATS only, each
//! with its own state folder, judging real data (../shared/data's CinC 2017 subset).
//!
//! The first worker is killed with SIGKILL in the middle of a run: its sandbox
//! processes die with it, the lease lapses, the reconciler queues the submission again
//! and a second worker process, started on the same state folder (which it clears),
//! judges it; the lost attempt is `error` (worker lost, never charged). The second is
//! stopped with SIGTERM mid-run: the run is reported as stopped at once and queued
//! again, and the process exits 143. A third judges it, then idles asking the server
//! only when rung (`--poll 3600`), so a submission judged after that proves the notice
//! reached it. The
//! figures on the organiser's leaderboard are exactly the scorer's, from the result
//! folder the worker sent; the team reads its logs from it; the workers keep nothing.
//!
//! A second test kills the server with SIGKILL under a remote run and starts it again
//! on the same address and records: the worker, which only dials out, goes on, and the
//! submission is scored once.
//!
//! Others: a take whose reply dies with the server (a proxy holds it back while the
//! server is killed) is answered again with the same attempt; two `serve --replica`
//! processes on one database and state folder behind a round-robin proxy, one killed
//! under load, lose nothing and judge nothing twice; and the outage tests (PostgreSQL,
//! NATS) that take the machine's services alone.
//!
//! Needs root (the sandbox), the shared data, PostgreSQL and NATS; runs under
//! `flock /tmp/physiojudge-sandbox.lock` with the other sandbox tests. Sandbox slots
//! 52–60 and 68–71.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::platform::{Backend, Served, Site, history, is_final, processes_of};
use serde_json::{Value, json};

/// A running `physiojudge worker`; killed when dropped.
struct Worker {
    child: Child,
    lines: std::sync::mpsc::Receiver<String>,
    state: tempfile::TempDir,
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Worker {
    /// A worker process in sandbox slot `slot`, in a new state folder or `state` (an
    /// earlier process's).
    fn start(
        s: &Served,
        site: &Site,
        queue: &str,
        token: &str,
        slot: u32,
        state: Option<tempfile::TempDir>,
    ) -> Worker {
        Worker::start_at(&s.base, site, queue, token, slot, state)
    }

    /// [`Worker::start`] for the server at `base` (a proxy's address).
    fn start_at(
        base: &str,
        site: &Site,
        queue: &str,
        token: &str,
        slot: u32,
        state: Option<tempfile::TempDir>,
    ) -> Worker {
        let state = state.unwrap_or_else(|| tempfile::tempdir().unwrap());
        let mut child = testkit::physiojudge_command!()
            .args([
                "worker",
                "--server",
                base,
                "--queue",
                queue,
                "--token",
                token,
                "--slots",
                "1",
                "--first-slot",
                &slot.to_string(),
                "--state",
                state.path().to_str().unwrap(),
                "--poll",
                "3600",
            ])
            .env("TMPDIR", site.tmp.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for l in out.lines().map_while(Result::ok) {
                eprintln!("worker: {l}");
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        let first = lines.recv_timeout(Duration::from_secs(120)).unwrap();
        assert!(first.contains("taking jobs from"), "{first}");
        assert!(first.contains("notices from"), "{first}");
        Worker {
            child,
            lines,
            state,
        }
    }

    /// kill -9: its state folder, as the process left it.
    fn kill9(mut self) -> tempfile::TempDir {
        self.child.kill().unwrap();
        let _ = self.child.wait();
        self.take_state()
    }

    /// SIGTERM, as an operator stops it: how it exited, what it said meanwhile, and
    /// its state folder.
    fn terminate(mut self) -> (std::process::ExitStatus, Vec<String>, tempfile::TempDir) {
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let status = self.child.wait().unwrap();
        // Everything it wrote, up to the end of its stdout.
        let mut said = Vec::new();
        while let Ok(l) = self.lines.recv_timeout(Duration::from_secs(5)) {
            said.push(l);
        }
        (status, said, self.take_state())
    }

    fn take_state(&mut self) -> tempfile::TempDir {
        std::mem::replace(&mut self.state, tempfile::tempdir().unwrap())
    }

    /// The files of jobs in its state folder.
    fn files(&self) -> Vec<PathBuf> {
        let mut left = Vec::new();
        for sub in ["entries", "results", "outgoing"] {
            let dir = self.state.path().join(sub);
            let mut stack = vec![dir];
            while let Some(d) = stack.pop() {
                for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                    if e.file_type().unwrap().is_dir() {
                        stack.push(e.path());
                    } else {
                        left.push(e.path());
                    }
                }
            }
        }
        left
    }
}

/// The machine's PostgreSQL and NATS, which every test here uses: a test that stops
/// one holds this alone, the others share it, so that no test sees another's outage
/// as its own failure. (No other test binary runs beside this one: `scripts/test.sh`
/// runs it alone.)
static SERVICES: std::sync::RwLock<()> = std::sync::RwLock::new(());

fn services_shared() -> std::sync::RwLockReadGuard<'static, ()> {
    SERVICES.read().unwrap_or_else(|e| e.into_inner())
}

fn services_alone() -> std::sync::RwLockWriteGuard<'static, ()> {
    SERVICES.write().unwrap_or_else(|e| e.into_inner())
}

fn trivial_entry(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    for (name, text) in [
        ("next.sh", "echo \"$1,N\" >> answers.txt\n"),
        ("setup.sh", "true\n"),
        ("answers.txt", "none,N\n"),
        ("dependencies.txt", "# nothing\n"),
        ("AUTHORS.txt", "test\n"),
        ("LICENSE.txt", "MIT\n"),
    ] {
        std::fs::write(dir.join(name), text).unwrap();
    }
    dir.to_path_buf()
}

/// Deletes the test's JetStream stream when dropped.
struct Stream(fleet::QueueUrl);

impl Drop for Stream {
    fn drop(&mut self) {
        let url = self.0.clone();
        let _ = std::thread::spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(async {
                    if let Ok(bell) = fleet::Doorbell::connect(&url).await {
                        let _ = bell.delete().await;
                    }
                })
        })
        .join();
    }
}

#[test]
fn a_fleet_judges_on_remote_workers_and_survives_a_killed_one() {
    let _services = services_shared();
    let Some(Fleet {
        site,
        org,
        queue,
        _stream,
        s,
        token,
        alice,
    }) = fleet("fleet_end_to_end", 52)
    else {
        return;
    };
    let bob = s.participant(&org, "bob");
    s.team(&bob, "Beta", "cinc2017");

    let entries = tempfile::tempdir().unwrap();
    let good = testkit::workspace_root().join("entries/cinc2017");
    let trivial = trivial_entry(&entries.path().join("trivial"));
    let a_good = s.submit(&alice, "cinc2017", &good);
    let b_trivial = s.submit(&bob, "cinc2017", &trivial);

    // The first worker takes the oldest; kill it once the entry's processes are up.
    let first = Worker::start(&s, &site, &queue, &token, 52, None);
    wait_for_run(&s, &alice, &a_good, 60_052);
    let state = first.kill9();
    no_processes_of(60_052);
    let left: Vec<_> = std::fs::read_dir(state.path().join("entries"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        left.iter().any(|n| n.starts_with(&format!("{a_good}-1-"))),
        "the killed worker's entry: {left:?}"
    );

    // A second worker process on the same state folder (the same worker's token, a
    // new sandbox slot): what the killed one left is cleared at its start, and the
    // server ends the killed process's attempt as soon as the new one announces itself
    // (before it prints its first line), not after a lapse of the lease; it judges
    // the queued one and the lost one.
    let second = Worker::start(&s, &site, &queue, &token, 53, Some(state));
    let now = s.submission(&org, &a_good).json;
    assert_eq!(
        history(&now)
            .get(2)
            .map(|(to, why)| (to.as_str(), why.as_str())),
        Some(("error", "worker_restarted")),
        "{now}"
    );
    assert!(
        !second
            .files()
            .iter()
            .any(|p| p.to_string_lossy().contains(&format!("{a_good}-1-"))),
        "{:?}",
        second.files()
    );
    for id in [&a_good, &b_trivial] {
        s.wait_for(&org, id, Duration::from_secs(300), is_final);
    }
    let good_o = s.submission(&org, &a_good).json;
    assert_eq!(good_o["state"], "scored", "{good_o}");
    assert_eq!(good_o["attempts"], 2, "{good_o}");
    let h = history(&good_o);
    let states: Vec<&str> = h.iter().map(|(to, _)| to.as_str()).collect();
    assert_eq!(
        states,
        ["queued", "running", "error", "queued", "running", "scored"],
        "{good_o}"
    );
    assert_eq!(h[2].1, "worker_restarted", "{good_o}");
    // Not held against the worker: no error of its own on record.
    let workers = s.get(Some(&org), "/api/v1/workers");
    let me = workers.json["workers"]
        .as_array()
        .unwrap_or_else(|| panic!("{workers:?}"))
        .iter()
        .find(|w| w["name"] == "remote-1")
        .unwrap_or_else(|| panic!("{workers:?}"))
        .clone();
    assert_eq!(
        (me["error_streak"].clone(), me["recent_errors"].clone()),
        (json!(0), json!(0)),
        "{me}"
    );
    let trivial_o = s.submission(&org, &b_trivial).json;
    assert_eq!(trivial_o["state"], "scored", "{trivial_o}");
    assert_eq!(trivial_o["attempts"], 1, "{trivial_o}");

    // The organiser's figure is exactly the scorer's, in the folder the worker sent.
    let attempt = dispatch::result_dir(
        site.state.path(),
        store::AttemptKey {
            submission: a_good.parse().unwrap(),
            number: 2,
        },
    );
    let private: Value =
        serde_json::from_slice(&std::fs::read(attempt.join("private/exam-score.json")).unwrap())
            .unwrap();
    let board = s.get(
        Some(&org),
        "/api/v1/challenges/cinc2017/leaderboard?phase=open",
    );
    let row = board.json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["submission"] == a_good.as_str())
        .unwrap_or_else(|| panic!("{board:?}"))
        .clone();
    let key = row["scores"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    assert_eq!(row["scores"][&key], private[&key], "{row} {private}");
    // The team reads its quiz log from the sent folder.
    let log = s.get(
        Some(&alice),
        &format!("/api/v1/submissions/{a_good}/logs/quiz"),
    );
    assert_eq!(log.status, 200, "{log:?}");
    assert!(!log.text.is_empty());

    // Stopped by its operator mid-run (SIGTERM): the run is reported as stopped at
    // once, not left to lapse, and the process exits as the signal asks.
    let again = s.submit(&alice, "cinc2017", &good);
    wait_for_run(&s, &alice, &again, 60_053);
    let (status, said, state) = second.terminate();
    assert_eq!(status.code(), Some(128 + 15), "{said:?}");
    assert!(said.iter().any(|l| l.starts_with("stopping:")), "{said:?}");
    assert!(
        said.iter().any(|l| l.contains("reported error: stopped")),
        "{said:?}"
    );
    no_processes_of(60_053);
    let v = s.wait_for(&org, &again, Duration::from_secs(30), |v| {
        v["state"] == "queued"
    });
    let h = history(&v);
    assert_eq!(h[2], ("error".to_owned(), "judge_error".to_owned()), "{v}");

    // A third process judges it, then idles asking only when rung: a new submission
    // is judged all the same, so the notice reached it.
    let third = Worker::start(&s, &site, &queue, &token, 52, Some(state));
    let v = s.wait_for(&org, &again, Duration::from_secs(300), is_final);
    assert_eq!(v["state"], "scored", "{v}");
    let last = s.submit(&bob, "cinc2017", &trivial);
    let v = s.wait_for(&org, &last, Duration::from_secs(300), is_final);
    assert_eq!(v["state"], "scored", "{v}");
    let taken: Vec<String> = third.lines.try_iter().collect();
    assert!(
        taken.iter().any(|l| l.contains("reported scored")),
        "{taken:?}"
    );
    // Reported and sent: the worker keeps none of it.
    assert_eq!(third.files(), Vec::<PathBuf>::new());
    drop(third);
    drop(s);
}

/// A fresh stream's address on the test's NATS server.
fn queue_url() -> String {
    let nats = std::env::var("PHYSIOJUDGE_TEST_NATS")
        .unwrap_or_else(|_| "nats://127.0.0.1:4222".to_owned());
    format!(
        "{nats}/PJ_E2E_{}",
        uuid::Uuid::now_v7().simple().to_string()[16..].to_owned()
    )
}

/// A fleet's server (PostgreSQL, notices on a stream of its own, no local slots) with
/// the built-in cinc2017 on the shared data, an open phase (3 submissions a team), a
/// worker's token and Alice's team; `None` (the test says why) without root or data.
struct Fleet {
    site: Site,
    org: String,
    queue: String,
    _stream: Stream,
    s: Served,
    token: String,
    alice: String,
}

fn fleet(test: &str, slot: u32) -> Option<Fleet> {
    if !testkit::root(test) {
        return None;
    }
    let data = testkit::shared_data(test)?.join("cinc2017");
    let site = Site::new(Backend::Postgres, slot);
    let org = site.organiser("boss");
    let queue = queue_url();
    let stream = Stream(queue.parse().unwrap());
    let s = site.serve_with("127.0.0.1:0", 0, &["--queue", &queue]);
    let token = challenge_and_worker(&s, &org, &data);
    let alice = s.participant(&org, "alice");
    s.team(&alice, "Alpha", "cinc2017");
    Some(Fleet {
        site,
        org,
        queue,
        _stream: stream,
        s,
        token,
        alice,
    })
}

/// The built-in cinc2017 on `data` with an open phase (3 submissions a team), and a
/// worker's token.
fn challenge_and_worker(s: &Served, org: &str, data: &Path) -> String {
    let a = s.post(
        org,
        "/api/v1/challenges",
        json!({"id": "cinc2017", "definition": "cinc2017", "data": data.to_str().unwrap()}),
    );
    assert_eq!(a.status, 201, "{a:?}");
    let a = s.post(
        org,
        "/api/v1/challenges/cinc2017/phases",
        json!({"name": "open", "opens": "2026-01-01T00:00:00Z", "closes": "2099-01-01T00:00:00Z",
               "quota": {"total": 3}, "scored_split": "exam", "show_exam": true,
               "rule": "best"}),
    );
    assert_eq!(a.status, 201, "{a:?}");
    let a = s.post(org, "/api/v1/workers", json!({"name": "remote-1"}));
    assert_eq!(a.status, 201, "{a:?}");
    a.json["token"].as_str().unwrap().to_owned()
}

#[test]
fn a_server_killed_under_a_remote_run_loses_nothing() {
    let _services = services_shared();
    let Some(Fleet {
        site,
        org,
        queue,
        _stream,
        s,
        token,
        alice,
    }) = fleet("fleet_server_killed", 54)
    else {
        return;
    };
    let good = testkit::workspace_root().join("entries/cinc2017");
    // The worker starts idle (nothing queued) and asks only when rung: the upload's
    // notice must reach it even if it came before the worker's NATS connection did.
    let worker = Worker::start(&s, &site, &queue, &token, 54, None);
    let id = s.submit(&alice, "cinc2017", &good);
    wait_for_run(&s, &alice, &id, 60_054);

    // The server dies under the run and comes back on the same address and records;
    // the worker, which only dials out, goes on.
    let addr = s.base.trim_start_matches("http://").to_owned();
    s.kill9();
    std::thread::sleep(Duration::from_secs(2));
    let s = site.serve_with(&addr, 0, &["--queue", &queue]);
    let v = s.wait_for(&org, &id, Duration::from_secs(300), is_final);
    assert_eq!(v["state"], "scored", "{v}");
    // Scored once: one live result, whichever attempt made it; a lost attempt, if the
    // lease lapsed while the server was down, is `worker_lost` and was retried.
    let h = history(&v);
    assert_eq!(h.last().unwrap().0, "scored", "{v}");
    assert_eq!(h.iter().filter(|(to, _)| to == "scored").count(), 1, "{v}");
    for (to, why) in &h {
        if to == "error" {
            assert_eq!(why, "worker_lost", "{v}");
        }
    }
    let log = s.get(Some(&alice), &format!("/api/v1/submissions/{id}/logs/quiz"));
    assert_eq!(log.status, 200, "{log:?}");
    // The worker sent it all and keeps nothing; no sandbox process is left.
    let until = Instant::now() + Duration::from_secs(30);
    while !worker.files().is_empty() {
        assert!(Instant::now() < until, "{:?}", worker.files());
        std::thread::sleep(Duration::from_millis(200));
    }
    no_processes_of(60_054);
}

/// Waits until the submission runs and its entry's processes are up in `uid`'s slot.
fn wait_for_run(s: &Served, token: &str, id: &str, uid: u32) {
    s.wait_for(token, id, Duration::from_secs(120), |v| {
        v["state"] == "running"
    });
    let until = Instant::now() + Duration::from_secs(60);
    while processes_of(uid).is_empty() {
        assert!(Instant::now() < until, "no sandbox process seen");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Waits until no process runs as `uid` (a slot's runs die with their worker).
fn no_processes_of(uid: u32) {
    let until = Instant::now() + Duration::from_secs(10);
    while !processes_of(uid).is_empty() {
        assert!(
            Instant::now() < until,
            "sandbox processes left: {:?}",
            processes_of(uid)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// NATS stopped (SIGTERM), `meanwhile` done, and NATS started again with the command
/// the machine's service uses. Other tests on this machine see NATS gone for a moment.
fn restart_nats(meanwhile: impl FnOnce()) {
    let stop = std::process::Command::new("start-stop-daemon")
        .args([
            "--stop",
            "--oknodo",
            "--retry",
            "TERM/20/KILL/5",
            "--exec",
            "/usr/sbin/nats-server",
        ])
        .status()
        .unwrap();
    assert!(stop.success(), "stopping NATS: {stop}");
    meanwhile();
    let start = std::process::Command::new("start-stop-daemon")
        .args([
            "--start",
            "--oknodo",
            "--background",
            "--exec",
            "/usr/sbin/nats-server",
            "--",
            "-a",
            "127.0.0.1",
            "-p",
            "4222",
            "-js",
            "-sd",
            "/var/lib/nats-server",
            "-l",
            "/var/log/nats-server.log",
        ])
        .status()
        .unwrap();
    assert!(start.success(), "starting NATS: {start}");
    let until = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect("127.0.0.1:4222").is_err() {
        assert!(Instant::now() < until, "NATS did not come back");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Idle workers that ask the server only once an hour (`--poll 3600`) keep hearing
/// notices after NATS restarts with its store kept, and after it restarts without the
/// notices' stream and the workers' consumer (an empty store as this test's stream
/// sees it: only its own folder in the store is removed while NATS is down, so other
/// tests' streams are left alone). No worker is restarted; a job that starts long
/// before an hour is a job a notice started.
#[test]
fn idle_workers_hear_notices_after_nats_restarts_or_loses_its_stream() {
    let _services = services_alone();
    let Some(Fleet {
        site,
        org,
        queue,
        _stream,
        s,
        token,
        alice,
    }) = fleet("fleet_notices_heal", 56)
    else {
        return;
    };
    let entries = tempfile::tempdir().unwrap();
    let trivial = trivial_entry(&entries.path().join("trivial"));
    let mut workers = [
        Worker::start(&s, &site, &queue, &token, 56, None),
        Worker::start(&s, &site, &queue, &token, 57, None),
    ];
    // Far below the hour a deaf worker would wait, far above a notice's way.
    let soon = Duration::from_secs(45);
    let started = |v: &Value| v["state"] != "queued";
    let first = s.submit(&alice, "cinc2017", &trivial);
    s.wait_for(&org, &first, Duration::from_secs(120), is_final);
    // Both idle again, each with a pull request waiting on the NATS server.
    std::thread::sleep(Duration::from_secs(2));

    restart_nats(|| {});
    let second = s.submit(&alice, "cinc2017", &trivial);
    s.wait_for(&org, &second, soon, started);
    s.wait_for(&org, &second, Duration::from_secs(120), is_final);
    std::thread::sleep(Duration::from_secs(2));

    // The stream (and the consumer on it) gone: the server's next ring and the
    // workers' next pulls find nothing until each side makes again what it owns.
    let url: fleet::QueueUrl = queue.parse().unwrap();
    restart_nats(|| {
        let dir = Path::new("/var/lib/nats-server/jetstream/$G/streams").join(&url.stream);
        std::fs::remove_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    });
    let third = s.submit(&alice, "cinc2017", &trivial);
    s.wait_for(&org, &third, soon, started);
    let v = s.wait_for(&org, &third, Duration::from_secs(120), is_final);
    assert_eq!(v["state"], "scored", "{v}");
    for w in &mut workers {
        assert!(w.child.try_wait().unwrap().is_none(), "a worker exited");
    }
    // Each judged once, by the same two processes.
    for id in [&first, &second, &third] {
        let v = s.submission(&org, id).json;
        assert_eq!(v["state"], "scored", "{v}");
        assert_eq!(v["attempts"], 1, "{v}");
    }
}

/// PostgreSQL (the machine's, shared by every test on it) stopped and, after `down`,
/// started again with the command the machine's service uses.
fn postgres_outage(down: Duration) {
    let version = std::fs::read_dir("/etc/postgresql")
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .file_name();
    let version = version.to_str().unwrap();
    let ctl = |what: &str, extra: &[&str]| {
        let st = std::process::Command::new("pg_ctlcluster")
            .args(["--skip-systemctl-redirect", version, "main", what])
            .args(extra)
            .status()
            .unwrap();
        assert!(st.success(), "pg_ctlcluster {what}: {st}");
    };
    ctl("stop", &["-m", "fast"]);
    std::thread::sleep(down);
    ctl("start", &[]);
}

/// OUTAGE TEST: stops the machine's PostgreSQL three times for longer than a lease
/// (other tests on the machine fail meanwhile; kept to one test). Under two remote
/// workers judging, the platform's own outage is nobody's fault: no lease is lapsed
/// for it (the reconciler extends leases after failing passes), the workers keep their
/// runs going while heartbeats fail and keep their finished results until the server
/// takes them, so no worker is disabled, no attempt is used, and every submission is
/// scored once.
#[test]
fn database_outages_longer_than_the_lease_blame_no_one() {
    let _services = services_alone();
    let Some(Fleet {
        site,
        org,
        queue,
        _stream,
        s,
        token,
        alice,
    }) = fleet("fleet_database_outages", 58)
    else {
        return;
    };
    let bob = s.participant(&org, "bob");
    s.team(&bob, "Beta", "cinc2017");
    let good = testkit::workspace_root().join("entries/cinc2017");
    let _workers = [
        Worker::start(&s, &site, &queue, &token, 58, None),
        Worker::start(&s, &site, &queue, &token, 59, None),
    ];
    let mut ids = Vec::new();
    for who in [&alice, &bob, &alice, &bob] {
        ids.push(s.submit(who, "cinc2017", &good));
    }
    wait_for_run(&s, &alice, &ids[0], 60_058);
    for _ in 0..3 {
        // Longer than the 30 s lease, and than the 5 tries a report once had.
        postgres_outage(Duration::from_secs(40));
        // Back: the heartbeats and reports get through again.
        std::thread::sleep(Duration::from_secs(8));
    }
    for id in &ids {
        let v = s.wait_for(&org, id, Duration::from_secs(600), is_final);
        assert_eq!(v["state"], "scored", "{v}");
        assert_eq!(v["attempts"], 1, "{v}");
        let states: Vec<String> = history(&v).into_iter().map(|(to, _)| to).collect();
        assert_eq!(states, ["queued", "running", "scored"], "{v}");
    }
    let w = s.get(Some(&org), "/api/v1/workers");
    assert_eq!(w.status, 200, "{w:?}");
    for worker in w.json["workers"].as_array().unwrap() {
        assert_eq!(worker["state"], "enabled", "{worker}");
    }
}

/// A TCP proxy to `upstream` on a free loopback port that loses the answer of the
/// first connection: it passes the request on, waits until the server starts
/// answering (so the server has done all it does), then closes the client's side
/// unanswered, as a proxy that timed out does. Later connections pass both ways.
fn proxy_losing_the_first_answer(upstream: &str) -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let upstream = upstream.trim_start_matches("http://").to_owned();
    std::thread::spawn(move || {
        for (n, client) in listener.incoming().enumerate() {
            let Ok(client) = client else { continue };
            let Ok(server) = std::net::TcpStream::connect(&upstream) else {
                continue;
            };
            let (mut c_in, mut s_out) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut c_in, &mut s_out);
            });
            let (mut client, mut server) = (client, server);
            std::thread::spawn(move || {
                if n == 0 {
                    let mut first = [0u8; 1];
                    let _ = server.read(&mut first);
                    let _ = client.shutdown(std::net::Shutdown::Both);
                    let _ = server.shutdown(std::net::Shutdown::Both);
                } else {
                    let mut buf = [0u8; 16 << 10];
                    while let Ok(k) = server.read(&mut buf) {
                        if k == 0 || client.write_all(&buf[..k]).is_err() {
                            break;
                        }
                    }
                    let _ = client.shutdown(std::net::Shutdown::Both);
                }
            });
        }
    });
    format!("http://{addr}")
}

/// `physiojudge submit` through a proxy that loses the server's `201`: the CLI sends
/// the upload again with the same `Idempotency-Key`, and the server answers with the
/// submission the first one made: one submission, one charge to the quota.
#[test]
fn an_upload_whose_answer_is_lost_is_recorded_once() {
    let _services = services_shared();
    // Every part bound: the site (its database) and the stream live to the end.
    let Some(Fleet {
        site: _site,
        _stream,
        s,
        alice,
        org,
        ..
    }) = fleet("fleet_idempotent_upload", 60)
    else {
        return;
    };
    let entry_dir = tempfile::tempdir().unwrap();
    let entry = trivial_entry(&entry_dir.path().join("entry"));
    let proxy = proxy_losing_the_first_answer(&s.base);
    let o = testkit::physiojudge!([
        "submit",
        "--server",
        &proxy,
        "--token",
        &alice,
        "--challenge",
        "cinc2017",
        "--no-wait",
        entry.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("sending it again"), "{err}");
    let id = String::from_utf8(o.stdout).unwrap().trim().to_owned();
    let q = s.get(Some(&alice), "/api/v1/challenges/cinc2017/quota");
    assert_eq!(q.json["used_total"], 1, "{q:?}");
    let mine = s.get(Some(&org), "/api/v1/challenges/cinc2017/submissions");
    let listed: Vec<&str> = mine.json["submissions"]
        .as_array()
        .unwrap_or_else(|| panic!("{mine:?}"))
        .iter()
        .map(|x| x["id"].as_str().unwrap())
        .collect();
    assert_eq!(listed, [id.as_str()], "{mine:?}");
}

/// Copies `from` to `to` until either side ends, then closes both.
fn pipe(mut from: std::net::TcpStream, mut to: std::net::TcpStream) {
    let _ = std::io::copy(&mut from, &mut to);
    let _ = to.shutdown(std::net::Shutdown::Both);
    let _ = from.shutdown(std::net::Shutdown::Both);
}

/// A TCP proxy to `upstream` on a free loopback port that loses the answer of the
/// first take that leased a job (a `POST /api/v1/queue/take` answered 200): the
/// server has committed the take and replied, the reply goes no further. The proxy
/// says so on `lost`, waits on `killed` (the test kills the server meanwhile), then
/// closes the worker's connection unanswered. Everything else passes both ways.
fn proxy_losing_a_taken_job(
    upstream: &str,
) -> (
    String,
    std::sync::mpsc::Receiver<()>,
    std::sync::mpsc::Sender<()>,
) {
    use std::io::{Read, Write};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let upstream = upstream.trim_start_matches("http://").to_owned();
    let (lost_tx, lost) = std::sync::mpsc::channel();
    let (killed, killed_rx) = std::sync::mpsc::channel::<()>();
    let killed_rx = Arc::new(std::sync::Mutex::new(killed_rx));
    let fired = Arc::new(AtomicBool::new(false));
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { continue };
            let Ok(server) = std::net::TcpStream::connect(&upstream) else {
                // The server is down: the worker sees its connection closed.
                continue;
            };
            // Whether the answer the server sends next is a take's (HTTP/1.1: one
            // request at a time on a connection).
            let take = Arc::new(AtomicBool::new(false));
            let (mut c_in, mut s_out) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            let asking = take.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 16 << 10];
                while let Ok(k) = c_in.read(&mut buf) {
                    if k == 0 {
                        break;
                    }
                    if buf[..k].starts_with(b"POST /api/v1/queue/take ") {
                        asking.store(true, Ordering::SeqCst);
                    }
                    if s_out.write_all(&buf[..k]).is_err() {
                        break;
                    }
                }
                let _ = s_out.shutdown(std::net::Shutdown::Write);
            });
            let (lost_tx, killed_rx, fired) = (lost_tx.clone(), killed_rx.clone(), fired.clone());
            let (mut client, mut server) = (client, server);
            std::thread::spawn(move || {
                let mut buf = [0u8; 16 << 10];
                while let Ok(k) = server.read(&mut buf) {
                    if k == 0 {
                        break;
                    }
                    let chunk = &buf[..k];
                    if chunk.starts_with(b"HTTP/1.1 ")
                        && take.swap(false, Ordering::SeqCst)
                        && chunk.starts_with(b"HTTP/1.1 200")
                        && !fired.swap(true, Ordering::SeqCst)
                    {
                        let _ = lost_tx.send(());
                        let _ = killed_rx.lock().unwrap().recv();
                        break;
                    }
                    if client.write_all(chunk).is_err() {
                        break;
                    }
                }
                let _ = client.shutdown(std::net::Shutdown::Both);
                let _ = server.shutdown(std::net::Shutdown::Both);
            });
        }
    });
    (format!("http://{addr}"), lost, killed)
}

/// The server killed (SIGKILL) after a take's commit, its reply lost on the way: the
/// worker sends the same take id again until a server answers, the restarted server
/// answers with the attempt the lost reply carried, and the worker judges it. The
/// attempt is not left to lapse (35 s, `worker_lost`): the submission is scored on its
/// first attempt. Sandbox slot 68.
#[test]
fn a_take_whose_reply_died_with_the_server_is_not_lost() {
    let _services = services_shared();
    let Some(Fleet {
        site,
        org,
        queue,
        _stream,
        s,
        token,
        alice,
    }) = fleet("fleet_take_reply_lost", 68)
    else {
        return;
    };
    let entries = tempfile::tempdir().unwrap();
    let trivial = trivial_entry(&entries.path().join("trivial"));
    let (proxy, lost, killed) = proxy_losing_a_taken_job(&s.base);
    let worker = Worker::start_at(&proxy, &site, &queue, &token, 68, None);
    let id = s.submit(&alice, "cinc2017", &trivial);
    lost.recv_timeout(Duration::from_secs(120))
        .expect("no take was answered with a job");
    // The take is committed (the server answered it); the server dies before the
    // worker hears of it.
    let addr = s.base.trim_start_matches("http://").to_owned();
    let v = s.submission(&org, &id).json;
    assert_eq!(v["state"], "running", "{v}");
    s.kill9();
    killed.send(()).unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let s = site.serve_with(&addr, 0, &["--queue", &queue]);
    let v = s.wait_for(&org, &id, Duration::from_secs(300), is_final);
    assert_eq!(v["state"], "scored", "{v}");
    assert_eq!(v["attempts"], 1, "{v}");
    let states: Vec<String> = history(&v).into_iter().map(|(to, _)| to).collect();
    assert_eq!(states, ["queued", "running", "scored"], "{v}");
    let log = s.get(Some(&alice), &format!("/api/v1/submissions/{id}/logs/quiz"));
    assert_eq!(log.status, 200, "{log:?}");
    drop(worker);
}

/// A round-robin TCP proxy in front of `upstreams` on a free loopback port: each
/// connection goes to the next upstream that accepts it (a dead one is skipped).
fn round_robin(upstreams: Vec<String>) -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let upstreams: Vec<String> = upstreams
        .iter()
        .map(|u| u.trim_start_matches("http://").to_owned())
        .collect();
    let next = AtomicUsize::new(0);
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { continue };
            let server = (0..upstreams.len()).find_map(|_| {
                let i = next.fetch_add(1, Ordering::SeqCst) % upstreams.len();
                std::net::TcpStream::connect(&upstreams[i]).ok()
            });
            let Some(server) = server else { continue };
            let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            std::thread::spawn(move || pipe(client, server));
            std::thread::spawn(move || pipe(s2, c2));
        }
    });
    format!("http://{addr}")
}

/// `physiojudge submit --no-wait` to `base`: the submission's id (the CLI sends an
/// upload again, with its key, when the answer is lost).
fn submit_via(base: &str, token: &str, entry: &Path) -> String {
    let o = testkit::physiojudge!([
        "submit",
        "--server",
        base,
        "--token",
        token,
        "--challenge",
        "cinc2017",
        "--no-wait",
        entry.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap().trim().to_owned()
}

/// Two `serve` replicas (`--replica a` with one local slot, `--replica b` with none) on
/// one PostgreSQL database and one state folder, behind a round-robin proxy; two
/// remote workers and all uploads go through the proxy. Replica `a` is killed
/// (SIGKILL) while its local worker judges and uploads arrive: every upload is one
/// submission (a lost answer is sent again with its key), every submission is scored
/// exactly once, any lost attempt is `worker_lost`, and the team reads each log from
/// the shared folder through the replica left. Sandbox slots 69–71.
#[test]
fn two_replicas_one_killed_lose_nothing_and_judge_nothing_twice() {
    let _services = services_shared();
    let test = "fleet_two_replicas";
    if !testkit::root(test) {
        return;
    }
    let Some(data) = testkit::shared_data(test) else {
        return;
    };
    let site = Site::new(Backend::Postgres, 71);
    let org = site.organiser("boss");
    let queue = queue_url();
    let _stream = Stream(queue.parse().unwrap());
    let a = site.serve_with("127.0.0.1:0", 1, &["--queue", &queue, "--replica", "a"]);
    let b = site.serve_with("127.0.0.1:0", 0, &["--queue", &queue, "--replica", "b"]);
    let front = round_robin(vec![a.base.clone(), b.base.clone()]);
    let token1 = challenge_and_worker(&b, &org, &data.join("cinc2017"));
    let w = b.post(&org, "/api/v1/workers", json!({"name": "remote-2"}));
    assert_eq!(w.status, 201, "{w:?}");
    let token2 = w.json["token"].as_str().unwrap().to_owned();
    let teams: Vec<String> = (0..8)
        .map(|i| {
            let t = b.participant(&org, &format!("p{i}"));
            b.team(&t, &format!("Team {i}"), "cinc2017");
            t
        })
        .collect();
    let _workers = [
        Worker::start_at(&front, &site, &queue, &token1, 69, None),
        Worker::start_at(&front, &site, &queue, &token2, 70, None),
    ];
    let entries = tempfile::tempdir().unwrap();
    let trivial = trivial_entry(&entries.path().join("trivial"));

    // Eight teams upload three entries each, at once, through the proxy.
    let uploads: Vec<_> = teams
        .iter()
        .map(|t| {
            let (t, front, trivial) = (t.clone(), front.clone(), trivial.clone());
            std::thread::spawn(move || {
                (0..3)
                    .map(|_| {
                        let id = submit_via(&front, &t, &trivial);
                        std::thread::sleep(Duration::from_millis(300));
                        id
                    })
                    .collect::<Vec<String>>()
            })
        })
        .collect();
    // Replica a dies while its local worker judges.
    let until = Instant::now() + Duration::from_secs(120);
    while processes_of(60_071).is_empty() {
        assert!(Instant::now() < until, "replica a's worker never ran");
        std::thread::sleep(Duration::from_millis(50));
    }
    a.kill9();
    no_processes_of(60_071);
    let ids: Vec<Vec<String>> = uploads.into_iter().map(|u| u.join().unwrap()).collect();

    let mut lost = 0;
    for (t, mine) in teams.iter().zip(&ids) {
        // One submission per upload, one charge each.
        let q = b.get(Some(t), "/api/v1/challenges/cinc2017/quota");
        assert_eq!(q.json["used_total"], 3, "{q:?}");
        let mut distinct = mine.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 3, "{mine:?}");
        for id in mine {
            let v = b.wait_for(&org, id, Duration::from_secs(600), is_final);
            assert_eq!(v["state"], "scored", "{v}");
            let h = history(&v);
            assert_eq!(h.iter().filter(|(to, _)| to == "scored").count(), 1, "{v}");
            for (to, why) in &h {
                if to == "error" {
                    assert!(why == "worker_lost" || why == "worker_restarted", "{v}");
                    lost += 1;
                }
            }
            let log = b.get(Some(t), &format!("/api/v1/submissions/{id}/logs/quiz"));
            assert_eq!(log.status, 200, "{log:?}");
        }
    }
    // The run replica a held when it died was lost with it, and judged again.
    assert!(lost >= 1, "no attempt was lost with replica a");
    let all = b.get(Some(&org), "/api/v1/challenges/cinc2017/submissions");
    assert_eq!(
        all.json["submissions"].as_array().map(Vec::len),
        Some(24),
        "{all:?}"
    );
}
