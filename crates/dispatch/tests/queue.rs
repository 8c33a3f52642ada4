//! The local backend on real databases: every test runs on a SQLite file and on a fresh
//! PostgreSQL database (`store::testing`). The store's clock is a manual one: a lease
//! lapses only when a test moves the clock.

use std::sync::Arc;
use std::time::Duration;

use dispatch::{Dispatch, DispatchError, LocalQueue, QueueConfig, RunProgress, Standing};
use store::testing::TestStore;
use store::{
    Backend, Better, Definition, Figure, NewPhase, NewSubmission, Outcome, Phase, Quota, Reason,
    Report, Role, Rule, Split, State, Team,
};

macro_rules! both {
    ($($name:ident),+ $(,)?) => {$(
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn sqlite() {
                super::$name(store::Backend::Sqlite).await;
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn postgres() {
                super::$name(store::Backend::Postgres).await;
            }
        }
    )+};
}

both!(
    a_result_is_accepted_once,
    a_team_at_its_cap_waits_and_an_idle_worker_is_woken,
    a_lapsed_lease_is_lost_and_the_job_requeued,
    a_disabled_worker_loses_its_lease,
    the_reconciler_task_requeues,
    an_entry_path_out_of_the_state_folder_is_an_error,
);

struct Fixture {
    t: TestStore,
    queue: LocalQueue,
    phase: Phase,
    _dirs: tempfile::TempDir,
}

/// A cinc2017 challenge over a one-file data folder, an open phase without quota, and
/// a queue whose idle workers poll only once an hour (so a wake-up is what wakes them).
async fn fixture(backend: Backend) -> Fixture {
    let t = TestStore::new(backend).await;
    let dirs = tempfile::tempdir().unwrap();
    let data = dirs.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("REFERENCE.csv"), "A00001,N\n").unwrap();
    t.create_challenge(
        "cinc2017",
        "AF",
        Definition::Builtin("cinc2017".into()),
        &data,
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
    let mut config = QueueConfig::new(dirs.path().join("state"));
    config.poll_every = Duration::from_secs(3600);
    config.reconcile_every = Duration::from_millis(50);
    let queue = LocalQueue::new(t.store.clone(), config);
    Fixture {
        t,
        queue,
        phase,
        _dirs: dirs,
    }
}

impl Fixture {
    async fn team(&self, name: &str) -> Team {
        let u = self
            .t
            .create_user(&format!("{name}-user"), Role::Participant, None)
            .await
            .unwrap();
        self.t.create_team("cinc2017", name, u.id).await.unwrap()
    }

    async fn submit(&self, team: &Team, n: u32) -> store::Submission {
        self.queue
            .submit(&NewSubmission {
                team: team.id,
                phase: self.phase.id,
                entry_sha256: format!("{n:064x}"),
                entry_path: format!("entries/{}/{n}.zip", team.id),
                method_name: None,
                method_description: None,
            })
            .await
            .unwrap()
    }

    async fn worker(&self, name: &str) -> Arc<dyn Dispatch> {
        let id = self.queue.register_worker(name).await.unwrap();
        Arc::new(self.queue.dispatcher(id, None))
    }

    async fn state(&self, s: &store::Submission) -> State {
        self.t.submission(s.id).await.unwrap().state
    }
}

fn scored() -> Report {
    Report {
        outcome: Outcome::Scored,
        result_json: Some(r#"{"verdict":"scored"}"#.into()),
        private_json: Some(r#"{"score":0.5}"#.into()),
        figures: vec![Figure {
            key: "score".into(),
            value: Some(0.5),
            better: Better::Higher,
        }],
        quiz_figures: Vec::new(),
        scorer_version: "score 0.1.0".into(),
        judge_version: "0.1.0".into(),
        message: None,
        runtime_lock: None,
        warnings: Vec::new(),
    }
}

async fn a_result_is_accepted_once(backend: Backend) {
    let f = fixture(backend).await;
    let team = f.team("a").await;
    let s = f.submit(&team, 1).await;
    let w = f.worker("w1").await;
    let a = w.take(Duration::ZERO).await.unwrap().expect("a job");
    assert_eq!(a.job.attempt.submission, s.id);
    assert_eq!(a.job.attempt.number, 1);
    assert!(a.entry.ends_with(&s.entry_path));
    assert_eq!(a.definition, Definition::Builtin("cinc2017".into()));
    let progress = RunProgress {
        stage: Some("quiz".into()),
        done: 1,
        total: 4,
    };
    assert!(matches!(
        w.heartbeat(&a.lease, &progress).await.unwrap(),
        Standing::Held { .. }
    ));
    assert_eq!(
        f.queue.progress(s.id),
        Some((a.lease.attempt, progress.clone()))
    );
    w.report(&a.lease, &scored()).await.unwrap();
    assert_eq!(f.state(&s).await, State::Scored);
    assert_eq!(f.queue.progress(s.id), None);
    // The same report again, and a failed one: both refused, nothing changed.
    let again = w.report(&a.lease, &scored()).await.unwrap_err();
    assert!(matches!(again, DispatchError::Refused { .. }), "{again}");
    assert!(!again.is_transient());
    let mut failed = scored();
    failed.outcome = Outcome::Failed;
    failed.figures.clear();
    assert!(matches!(
        w.report(&a.lease, &failed).await.unwrap_err(),
        DispatchError::Refused { .. }
    ));
    assert_eq!(f.t.results(s.id).await.unwrap().len(), 1);
    // A heartbeat for the ended attempt: stop.
    assert!(matches!(
        w.heartbeat(&a.lease, &progress).await.unwrap(),
        Standing::Lost {
            state: Some(State::Scored),
            ..
        }
    ));
}

async fn a_team_at_its_cap_waits_and_an_idle_worker_is_woken(backend: Backend) {
    let f = fixture(backend).await;
    let (a, b) = (f.team("a").await, f.team("b").await);
    let a1 = f.submit(&a, 1).await;
    let a2 = f.submit(&a, 2).await;
    let (w1, w2) = (f.worker("w1").await, f.worker("w2").await);
    let first = w1.take(Duration::ZERO).await.unwrap().expect("a job");
    assert_eq!(first.job.attempt.submission, a1.id);
    // Team a is at its cap of 1: its second submission is not handed out.
    assert!(w2.take(Duration::ZERO).await.unwrap().is_none());
    // An idle worker waiting (its poll is an hour away) gets team b's submission as soon
    // as it is queued: the wake-up, not the poll.
    let waiting = tokio::spawn({
        let w2 = w2.clone();
        async move { w2.take(Duration::from_secs(30)).await }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let b1 = f.submit(&b, 1).await;
    let second = waiting.await.unwrap().unwrap().expect("woken with a job");
    assert_eq!(second.job.attempt.submission, b1.id);
    assert_eq!(f.state(&a2).await, State::Queued);
    // Once a's first run ends, its second is taken.
    w1.report(&first.lease, &scored()).await.unwrap();
    let third = w1.take(Duration::ZERO).await.unwrap().expect("a job");
    assert_eq!(third.job.attempt.submission, a2.id);
}

async fn a_lapsed_lease_is_lost_and_the_job_requeued(backend: Backend) {
    let f = fixture(backend).await;
    let team = f.team("a").await;
    let s = f.submit(&team, 1).await;
    let (w1, w2) = (f.worker("w1").await, f.worker("w2").await);
    let a = w1.take(Duration::ZERO).await.unwrap().expect("a job");
    // The worker goes silent; the lease lapses; the reconciler ends the attempt.
    f.t.clock.advance(chrono::Duration::seconds(31));
    let done = f.queue.reconcile().await.unwrap();
    assert_eq!(done.lost, vec![a.lease.attempt]);
    assert_eq!(done.requeued, vec![s.id]);
    // The worker, back: its heartbeat says stop, and its report is refused.
    match w1
        .heartbeat(&a.lease, &RunProgress::default())
        .await
        .unwrap()
    {
        Standing::Lost { state, why } => {
            assert_eq!(state, Some(State::Queued), "{why}");
        }
        held => panic!("{held:?}"),
    }
    assert!(matches!(
        w1.report(&a.lease, &scored()).await.unwrap_err(),
        DispatchError::Refused { .. }
    ));
    // Attempt 2 goes to another worker and is scored.
    let b = w2.take(Duration::ZERO).await.unwrap().expect("attempt 2");
    assert_eq!(b.job.attempt.number, 2);
    w2.report(&b.lease, &scored()).await.unwrap();
    let attempts = f.t.attempts(s.id).await.unwrap();
    let outcomes: Vec<_> = attempts.iter().map(|a| a.outcome).collect();
    assert_eq!(outcomes, [Some(Outcome::Error), Some(Outcome::Scored)]);
    let history = f.t.history(s.id).await.unwrap();
    assert!(
        history
            .iter()
            .any(|h| matches!(h.reason, Reason::WorkerLost { attempt: 1, .. })),
        "{history:?}"
    );
}

async fn a_disabled_worker_loses_its_lease(backend: Backend) {
    let f = fixture(backend).await;
    let team = f.team("a").await;
    f.submit(&team, 1).await;
    let w = f.worker("w1").await;
    let a = w.take(Duration::ZERO).await.unwrap().expect("a job");
    f.t.set_worker_disabled(w.worker(), true).await.unwrap();
    assert!(matches!(
        w.heartbeat(&a.lease, &RunProgress::default())
            .await
            .unwrap(),
        Standing::Lost { .. }
    ));
    assert!(matches!(
        w.take(Duration::ZERO).await.unwrap_err(),
        DispatchError::WorkerDisabled(_)
    ));
}

async fn the_reconciler_task_requeues(backend: Backend) {
    let f = fixture(backend).await;
    let team = f.team("a").await;
    let s = f.submit(&team, 1).await;
    let (w1, w2) = (f.worker("w1").await, f.worker("w2").await);
    let a = w1.take(Duration::ZERO).await.unwrap().expect("a job");
    let _reconciler = f.queue.spawn_reconciler();
    f.t.clock.advance(chrono::Duration::seconds(31));
    // The reconciler requeues and wakes the idle worker (whose poll is an hour away).
    let b = w2
        .take(Duration::from_secs(30))
        .await
        .unwrap()
        .expect("attempt 2, after the reconciler");
    assert_eq!(b.job.attempt.submission, s.id);
    assert_eq!(b.job.attempt.number, 2);
    assert!(matches!(
        w1.heartbeat(&a.lease, &RunProgress::default())
            .await
            .unwrap(),
        Standing::Lost { .. }
    ));
}

async fn an_entry_path_out_of_the_state_folder_is_an_error(backend: Backend) {
    let f = fixture(backend).await;
    let team = f.team("a").await;
    let s = f
        .queue
        .submit(&NewSubmission {
            team: team.id,
            phase: f.phase.id,
            entry_sha256: format!("{:064x}", 1),
            entry_path: "../../etc/passwd".into(),
            method_name: None,
            method_description: None,
        })
        .await
        .unwrap();
    let w = f.worker("w1").await;
    // Each attempt is reported as the platform's error at once, until none are left.
    assert!(w.take(Duration::ZERO).await.unwrap().is_none());
    assert_eq!(f.state(&s).await, State::Error);
    let attempts = f.t.attempts(s.id).await.unwrap();
    assert_eq!(attempts.len(), 3);
    assert!(attempts.iter().all(|a| a.outcome == Some(Outcome::Error)));
    let history = f.t.history(s.id).await.unwrap();
    assert!(history.iter().any(|h| matches!(&h.reason,
        Reason::JudgeError { message, .. } if message.contains("leads out of the state folder"))));
}
