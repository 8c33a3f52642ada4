//! Worker pools judging for real, on SQLite and on a fresh PostgreSQL database each
//! (`store::testing`): a worker killed mid-run (its job retried and scored), a lease
//! lost mid-run (the run stopped, nothing reported), changed data (refused before
//! judging), and two slots keeping a team's running cap. Needs root and the Python
//! runtime (built once in `target/tmp/runtime`); sandbox slots 50–51.
//!
//! No libtest harness: this binary is also the sandbox's init program
//! (`sandbox::reexec`), so its `main` must look at its arguments first.
//!
//! A run is held in the middle by a gate in the pool's observer (which the judge calls
//! from the run's own thread), so that a test acts while a run is certainly under way,
//! without timing. The store's clock is a manual one: a lease lapses when a test moves
//! it.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

use dispatch::{LocalQueue, QueueConfig};
use store::testing::TestStore;
use store::{
    Backend, Definition, NewPhase, NewSubmission, Outcome, Quota, Reason, Role, Rule, Split, State,
    Submission, SubmissionId, Team,
};
use worker::{Config, Ending, ErrorReason, Event, Pool};

/// Records of the generated CinC 2017 data: 3 in the quiz, 7 in the exam.
const RECORDS: usize = 10;
/// Long enough for nothing in a test to wait this long unless it is broken.
const PATIENCE: Duration = Duration::from_secs(300);

fn judge() -> Arc<judge::Judge> {
    static JUDGE: OnceLock<Arc<judge::Judge>> = OnceLock::new();
    JUDGE
        .get_or_init(|| {
            let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("runtime");
            let runtime = runtime::setup(&dir, Path::new(runtime::DEFAULT_PYTHON))
                .expect("the Python runtime");
            let init = sandbox::reexec::this_program().unwrap();
            Arc::new(judge::Judge::new(runtime, init, 50..52).unwrap())
        })
        .clone()
}

/// Generated CinC 2017 data, made once, copied for each test (one test changes it).
fn data() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        synth::write_challenge(
            "cinc2017",
            &dir.path().join("cinc2017"),
            2026,
            Some(RECORDS),
        )
        .unwrap();
        dir
    })
    .path()
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// A tiny per-record entry (every record is `N`; no Python, so runs are quick) as a
/// `.tar.gz`, as uploaded.
fn entry_archive(path: &Path) {
    let files = [
        ("next.sh", "echo \"$1,N\" >> answers.txt\n"),
        ("setup.sh", "true\n"),
        // Nothing submitted for the generated records: nothing to compare.
        ("answers.txt", "Z99999,N\n"),
        ("dependencies.txt", "# nothing\n"),
        ("AUTHORS.txt", "test\n"),
        ("LICENSE.txt", "MIT\n"),
    ];
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
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

/// Holds the first run of one submission when its quiz starts, until released.
#[derive(Default)]
struct Gate {
    target: Mutex<Option<SubmissionId>>,
    state: Mutex<(bool, bool)>, // (reached, released)
    changed: Condvar,
}

impl Gate {
    fn arm(&self, s: SubmissionId) {
        *self.target.lock().unwrap() = Some(s);
    }

    /// In the observer (the run's thread).
    fn pass(&self, e: &Event) {
        let Event::Progress {
            attempt, progress, ..
        } = e
        else {
            return;
        };
        if *self.target.lock().unwrap() != Some(attempt.submission)
            || attempt.number != 1
            || progress.stage.as_deref() != Some("quiz")
        {
            return;
        }
        let mut st = self.state.lock().unwrap();
        if st.0 {
            return;
        }
        st.0 = true;
        self.changed.notify_all();
        let (_st, timeout) = self
            .changed
            .wait_timeout_while(st, PATIENCE, |s| !s.1)
            .unwrap();
        assert!(!timeout.timed_out(), "the gate was never released");
    }

    async fn reached(&self) {
        wait_for("the run to reach the gate", || self.state.lock().unwrap().0).await;
    }

    fn release(&self) {
        self.state.lock().unwrap().1 = true;
        self.changed.notify_all();
    }
}

async fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !cond() {
        assert!(start.elapsed() < PATIENCE, "waited too long for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

struct Fixture {
    t: TestStore,
    queue: LocalQueue,
    phase: store::Phase,
    state_dir: PathBuf,
    data_dir: PathBuf,
    sha256: String,
    events: Arc<Mutex<Vec<Event>>>,
    gate: Arc<Gate>,
    _dir: tempfile::TempDir,
}

impl Fixture {
    async fn new(backend: Backend) -> Fixture {
        let t = TestStore::new(backend).await;
        let dir = tempfile::tempdir().unwrap();
        let state_dir = dir.path().join("state");
        let data_dir = dir.path().join("data");
        copy_tree(&data().join("cinc2017"), &data_dir);
        entry_archive(&state_dir.join("entries/entry.tar.gz"));
        let sha256 = store::manifest::file_sha256(&state_dir.join("entries/entry.tar.gz")).unwrap();
        t.create_challenge(
            "cinc2017",
            "AF",
            Definition::Builtin("cinc2017".into()),
            &data_dir,
        )
        .await
        .unwrap();
        let now = t.now();
        let phase = t
            .create_phase(
                "cinc2017",
                &NewPhase {
                    name: "open".into(),
                    opens: now - chrono::Duration::days(1),
                    closes: now + chrono::Duration::days(1),
                    selection_closes: None,
                    quota: Quota::default(),
                    scored_split: Split::Exam,
                    show_exam: false,
                    rule: Rule::Best,
                },
            )
            .await
            .unwrap();
        let mut config = QueueConfig::new(&state_dir);
        config.heartbeat_every = Duration::from_millis(100);
        let queue = LocalQueue::new(t.store.clone(), config);
        Fixture {
            t,
            queue,
            phase,
            state_dir,
            data_dir,
            sha256,
            events: Arc::default(),
            gate: Arc::default(),
            _dir: dir,
        }
    }

    async fn team(&self, name: &str) -> Team {
        let u = self
            .t
            .create_user(&format!("{name}-user"), Role::Participant, None)
            .await
            .unwrap();
        self.t.create_team("cinc2017", name, u.id).await.unwrap()
    }

    async fn submit(&self, team: &Team) -> Submission {
        self.queue
            .submit(&NewSubmission {
                team: team.id,
                phase: self.phase.id,
                entry_sha256: self.sha256.clone(),
                entry_path: "entries/entry.tar.gz".into(),
                method_name: None,
                method_description: None,
            })
            .await
            .unwrap()
    }

    /// A pool of `slots` as worker `name`, its events recorded and gated.
    /// A machine's own pool ([`Pool::start_local`]), as `physiojudge serve` starts it.
    async fn local_pool(&self, name: &str, slots: usize) -> Pool {
        let (events, gate) = (self.events.clone(), self.gate.clone());
        let observer: worker::Observer = Arc::new(move |e: &Event| {
            events.lock().unwrap().push(e.clone());
            gate.pass(e);
        });
        let mut config = Config::new(&self.state_dir, slots);
        config.take_wait = Duration::from_secs(5);
        Pool::start_local(&self.queue, name, judge(), config, Some(observer))
            .await
            .unwrap()
    }

    async fn pool(&self, name: &str, slots: usize) -> Pool {
        let id = self.queue.register_worker(name).await.unwrap();
        let (events, gate) = (self.events.clone(), self.gate.clone());
        let observer: worker::Observer = Arc::new(move |e: &Event| {
            events.lock().unwrap().push(e.clone());
            gate.pass(e);
        });
        let mut config = Config::new(&self.state_dir, slots);
        config.take_wait = Duration::from_secs(5);
        Pool::start(
            Arc::new(self.queue.dispatcher(id, None)),
            judge(),
            config,
            Some(observer),
        )
    }

    fn endings(&self, s: SubmissionId) -> Vec<(u32, Ending)> {
        self.events
            .lock()
            .unwrap()
            .iter()
            .filter_map(|e| match e {
                Event::Finished {
                    attempt, ending, ..
                } if attempt.submission == s => Some((attempt.number, ending.clone())),
                _ => None,
            })
            .collect()
    }

    async fn ended(&self, s: SubmissionId, n: usize) -> Vec<(u32, Ending)> {
        wait_for("jobs to end", || self.endings(s).len() >= n).await;
        self.endings(s)
    }

    fn result_json(&self, s: SubmissionId, attempt: u32) -> serde_json::Value {
        let path = self
            .state_dir
            .join(format!("results/{s}/{attempt}/result.json"));
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
    }

    fn private_score(&self, s: SubmissionId, attempt: u32) -> f64 {
        let path = self
            .state_dir
            .join(format!("results/{s}/{attempt}/private/exam-score.json"));
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        v["score"].as_f64().unwrap()
    }

    async fn outcomes(&self, s: SubmissionId) -> Vec<Option<Outcome>> {
        let attempts = self.t.attempts(s).await.unwrap();
        attempts.iter().map(|a| a.outcome).collect()
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        // A failed test must not leave a run held at the gate.
        self.gate.release();
    }
}

fn scored() -> Ending {
    Ending::Reported {
        outcome: Outcome::Scored,
        reason: None,
    }
}

/// The stored figures are the scorer's own, to the bit; result.json's the rounded view.
async fn check_scored(f: &Fixture, s: SubmissionId, attempt: u32) {
    let results = f.t.results(s).await.unwrap();
    let r = results
        .iter()
        .find(|r| r.attempt.number == attempt)
        .expect("a stored result");
    assert_eq!(r.outcome, Outcome::Scored);
    let exact = f.private_score(s, attempt);
    assert_eq!(r.figures.len(), 1);
    assert_eq!(r.figures[0].key, "score");
    assert_eq!(r.figures[0].better, store::Better::Higher);
    assert_eq!(r.figures[0].value.map(f64::to_bits), Some(exact.to_bits()));
    let stored: serde_json::Value =
        serde_json::from_str(r.result_json.as_deref().unwrap()).unwrap();
    assert_eq!(stored, f.result_json(s, attempt));
    assert_eq!(stored["verdict"], "scored");
    println!(
        "  {s} attempt {attempt}: exam score {exact:?} stored, {} shown; stages {}",
        stored["score"],
        stored["stages"]
            .as_array()
            .map(|st| st
                .iter()
                .map(|x| format!("{}={}", x["stage"], x["status"]))
                .collect::<Vec<_>>()
                .join(" "))
            .unwrap_or_default()
    );
    let private: serde_json::Value =
        serde_json::from_str(r.private_json.as_deref().unwrap()).unwrap();
    assert_eq!(private["score"].as_f64(), Some(exact));
}

async fn killed_mid_run_then_retried_and_scored(backend: Backend) {
    let f = Fixture::new(backend).await;
    let team = f.team("a").await;
    let s = f.submit(&team).await;
    f.gate.arm(s.id);
    let first = f.pool("first", 1).await;
    f.gate.reached().await;
    // The worker dies mid-run: no heartbeat, no report; its run is cancelled.
    first.abort().await;
    f.gate.release();
    // Its lease lapses; the reconciler ends the attempt and queues the submission again.
    f.t.clock.advance(chrono::Duration::seconds(31));
    // A pass of the pool's own reconciler may hold SQLite's write lock at this moment
    // (seen once as "database is locked"): try again, as the reconciler does at its next
    // pass.
    let mut tries = 0;
    let done = loop {
        match f.queue.reconcile().await {
            Ok(d) => break d,
            Err(e) if tries < 5 => {
                tries += 1;
                eprintln!("reconcile: {e}; again");
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            }
            Err(e) => panic!("reconcile: {e}"),
        }
    };
    assert_eq!(done.requeued, vec![s.id]);
    let second = f.pool("second", 1).await;
    let endings = f.ended(s.id, 1).await;
    assert_eq!(endings, [(2, scored())]);
    second.shutdown().await;
    assert_eq!(
        f.outcomes(s.id).await,
        [Some(Outcome::Error), Some(Outcome::Scored)]
    );
    assert_eq!(f.t.submission(s.id).await.unwrap().state, State::Scored);
    let history = f.t.history(s.id).await.unwrap();
    assert!(
        history
            .iter()
            .any(|h| matches!(h.reason, Reason::WorkerLost { attempt: 1, .. }))
    );
    check_scored(&f, s.id, 2).await;
}

async fn a_local_pool_started_again_retries_at_once(backend: Backend) {
    let f = Fixture::new(backend).await;
    let team = f.team("a").await;
    let s = f.submit(&team).await;
    f.gate.arm(s.id);
    let first = f.local_pool("local", 1).await;
    f.gate.reached().await;
    // The process dies mid-run: no heartbeat, no report; its run is cancelled.
    first.abort().await;
    f.gate.release();
    // The same machine's pool starts again, its lease far from lapsed (the clock does
    // not move): the attempt of the dead process ends at once and is retried.
    let second = f.local_pool("local", 1).await;
    let endings = f.ended(s.id, 1).await;
    assert_eq!(endings, [(2, scored())]);
    second.shutdown().await;
    assert_eq!(
        f.outcomes(s.id).await,
        [Some(Outcome::Error), Some(Outcome::Scored)]
    );
    let history = f.t.history(s.id).await.unwrap();
    let to: Vec<State> = history.iter().map(|h| h.to).collect();
    assert_eq!(
        to,
        [
            State::Queued,
            State::Running,
            State::Error,
            State::Queued,
            State::Running,
            State::Scored
        ]
    );
    assert!(
        matches!(
            history[2].reason,
            Reason::WorkerRestarted { attempt: 1, .. }
        ),
        "{:?}",
        history[2].reason
    );
    check_scored(&f, s.id, 2).await;
}

async fn a_lost_lease_stops_the_run(backend: Backend) {
    let f = Fixture::new(backend).await;
    let team = f.team("a").await;
    let s = f.submit(&team).await;
    f.gate.arm(s.id);
    let pool = f.pool("w", 1).await;
    f.gate.reached().await;
    // The platform takes the attempt back while the run goes on (its lease lapsed).
    f.t.clock.advance(chrono::Duration::seconds(31));
    f.queue.reconcile().await.unwrap();
    wait_for("the worker to stop the run", || {
        f.events.lock().unwrap().iter().any(|e| {
            matches!(e, Event::Stopping { attempt, why, .. }
                if attempt.number == 1 && why.contains("lease lost"))
        })
    })
    .await;
    f.gate.release();
    // Stopped, not reported; attempt 2 is taken by the same slot and scored.
    let endings = f.ended(s.id, 2).await;
    assert!(
        matches!(&endings[0], (1, Ending::Abandoned { .. })),
        "{endings:?}"
    );
    assert_eq!(endings[1], (2, scored()));
    pool.shutdown().await;
    assert_eq!(f.result_json(s.id, 1)["verdict"], "stopped");
    assert_eq!(
        f.outcomes(s.id).await,
        [Some(Outcome::Error), Some(Outcome::Scored)]
    );
    check_scored(&f, s.id, 2).await;
}

async fn changed_data_is_an_error_not_judged(backend: Backend) {
    let f = Fixture::new(backend).await;
    let team = f.team("a").await;
    let reference = f.data_dir.join("REFERENCE.csv");
    let mut text = std::fs::read_to_string(&reference).unwrap();
    text.push_str("A99999,N\n");
    std::fs::write(&reference, text).unwrap();
    let s = f.submit(&team).await;
    let pool = f.pool("w", 1).await;
    // Every attempt refused before judging, until none are left.
    let endings = f.ended(s.id, 3).await;
    pool.shutdown().await;
    for (_, e) in &endings {
        assert!(
            matches!(e, Ending::Reported { outcome: Outcome::Error, reason: Some(ErrorReason::DataChanged { message }) }
                if message.contains("REFERENCE.csv changed")),
            "{e:?}"
        );
    }
    assert_eq!(f.t.submission(s.id).await.unwrap().state, State::Error);
    assert!(
        !f.state_dir
            .join(format!("results/{}/1/result.json", s.id))
            .exists()
    );
    let history = f.t.history(s.id).await.unwrap();
    assert!(history.iter().any(|h| matches!(&h.reason,
        Reason::JudgeError { message, .. } if message.starts_with("data changed"))));
}

async fn two_slots_keep_the_team_cap(backend: Backend) {
    let f = Fixture::new(backend).await;
    let (a, b) = (f.team("a").await, f.team("b").await);
    let a1 = f.submit(&a).await;
    let a2 = f.submit(&a).await;
    f.gate.arm(a1.id);
    let pool = f.pool("w", 2).await;
    f.gate.reached().await;
    // a1 is held mid-run; the other slot is idle while team a is at its cap of 1 ...
    assert_eq!(f.t.submission(a2.id).await.unwrap().state, State::Queued);
    // (a team withdraws only what is queued: a1 runs on, docs/service.md)
    assert!(matches!(
        f.t.withdraw(a1.id, None).await,
        Err(store::Error::Transition {
            actual: Some(State::Running),
            ..
        })
    ));
    // ... and takes team b's submission as soon as it comes.
    let b1 = f.submit(&b).await;
    let b_end = f.ended(b1.id, 1).await;
    assert_eq!(b_end, [(1, scored())]);
    assert_eq!(f.t.submission(a2.id).await.unwrap().state, State::Queued);
    f.gate.release();
    assert_eq!(f.ended(a1.id, 1).await, [(1, scored())]);
    assert_eq!(f.ended(a2.id, 1).await, [(1, scored())]);
    pool.shutdown().await;
    // Never two of team a at once: a2 was taken only after a1 ended.
    let events = f.events.lock().unwrap().clone();
    let at = |want: &dyn Fn(&Event) -> bool| events.iter().position(want).unwrap();
    let a1_done =
        at(&|e| matches!(e, Event::Finished { attempt, .. } if attempt.submission == a1.id));
    let a2_taken =
        at(&|e| matches!(e, Event::Taken { attempt, .. } if attempt.submission == a2.id));
    assert!(a1_done < a2_taken, "{events:?}");
    for s in [&a1, &a2, &b1] {
        check_scored(&f, s.id, 1).await;
    }
}

async fn a_shutdown_stops_the_run_and_reports_it(backend: Backend) {
    let f = Fixture::new(backend).await;
    let team = f.team("a").await;
    let s = f.submit(&team).await;
    f.gate.arm(s.id);
    let pool = f.pool("w", 1).await;
    f.gate.reached().await;
    let stopping = tokio::spawn(pool.shutdown());
    wait_for("the worker to stop the run", || {
        f.events
            .lock()
            .unwrap()
            .iter()
            .any(|e| matches!(e, Event::Stopping { why, .. } if why.contains("shutting down")))
    })
    .await;
    f.gate.release();
    stopping.await.unwrap();
    // Reported as ours (stopped), so it is queued again at once for attempt 2.
    let endings = f.endings(s.id);
    assert!(
        matches!(
            &endings[..],
            [(
                1,
                Ending::Reported {
                    outcome: Outcome::Error,
                    reason: Some(ErrorReason::Stopped { .. })
                }
            )]
        ),
        "{endings:?}"
    );
    assert_eq!(f.result_json(s.id, 1)["verdict"], "stopped");
    let after = f.t.submission(s.id).await.unwrap();
    assert_eq!((after.state, after.attempt), (State::Queued, 1));
}

type Test = fn(Backend) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>;

fn main() -> ExitCode {
    sandbox::reexec::hook();
    let tests: [(&str, Test); 6] = [
        ("a_local_pool_started_again_retries_at_once", |b| {
            Box::pin(a_local_pool_started_again_retries_at_once(b))
        }),
        ("killed_mid_run_then_retried_and_scored", |b| {
            Box::pin(killed_mid_run_then_retried_and_scored(b))
        }),
        ("a_lost_lease_stops_the_run", |b| {
            Box::pin(a_lost_lease_stops_the_run(b))
        }),
        ("changed_data_is_an_error_not_judged", |b| {
            Box::pin(changed_data_is_an_error_not_judged(b))
        }),
        ("a_shutdown_stops_the_run_and_reports_it", |b| {
            Box::pin(a_shutdown_stops_the_run_and_reports_it(b))
        }),
        ("two_slots_keep_the_team_cap", |b| {
            Box::pin(two_slots_keep_the_team_cap(b))
        }),
    ];
    let mut cases = Vec::new();
    for (name, test) in tests {
        for (backend, suffix) in [(Backend::Sqlite, "sqlite"), (Backend::Postgres, "postgres")] {
            cases.push((format!("{name}::{suffix}"), test, backend));
        }
    }
    // Arguments that are not flags filter by name, as libtest's do.
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    cases.retain(|(name, ..)| {
        filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str()))
    });
    if !testkit::root("pool") {
        println!("0 passed, 0 failed, {} skipped", cases.len());
        return ExitCode::SUCCESS;
    }
    let (mut passed, mut failed) = (0, 0);
    for (name, test, backend) in cases {
        println!("test {name} ...");
        let ok = std::panic::catch_unwind(|| {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(4)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(test(backend));
        })
        .is_ok();
        if ok {
            println!("test {name} ... ok");
            passed += 1;
        } else {
            println!("test {name} ... FAILED");
            failed += 1;
        }
    }
    sandbox::shutdown();
    println!("{passed} passed, {failed} failed");
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
