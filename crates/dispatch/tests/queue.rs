//! The local backend on real databases: every test runs on a SQLite file and on a fresh
//! PostgreSQL database (`store::testing`). The store's clock is a manual one: a lease
//! lapses only when a test moves the clock.

use std::sync::Arc;
use std::time::Duration;

use dispatch::{
    Announcement, Blame, Build, Dispatch, DispatchError, LocalQueue, QueueConfig, RunProgress,
    Standing, WorkerRefusal,
};
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
    assert!(
        matches!(again, DispatchError::Refused(WorkerRefusal::Attempt { .. })),
        "{again}"
    );
    assert!(!again.is_transient());
    let mut failed = scored();
    failed.outcome = Outcome::Failed;
    failed.figures.clear();
    assert!(matches!(
        w.report(&a.lease, &failed).await.unwrap_err(),
        DispatchError::Refused(WorkerRefusal::Attempt { .. })
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
        DispatchError::Refused(WorkerRefusal::Attempt { .. })
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
        DispatchError::Refused(WorkerRefusal::Disabled(_))
    ));
}

async fn the_reconciler_task_requeues(backend: Backend) {
    let f = fixture(backend).await;
    let team = f.team("a").await;
    let s = f.submit(&team, 1).await;
    let (w1, w2) = (f.worker("w1").await, f.worker("w2").await);
    let a = w1.take(Duration::ZERO).await.unwrap().expect("a job");
    // A lease running when the reconciler starts is first extended by one lease from
    // the clock then (the server may have been down): it lapses only once the clock
    // passes that too. The clock is past the lease before the reconciler's first pass,
    // as after an outage, so that the extension does not depend on when the reconciler's
    // task first runs.
    let lease = a.lease.expires_at;
    f.t.clock.advance(chrono::Duration::seconds(31));
    let _reconciler = f.queue.spawn_reconciler();
    let clock = f.t.clock.clone();
    let advancing = tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_millis(100)).await;
            clock.advance(chrono::Duration::seconds(31));
        }
    });
    // The reconciler requeues and wakes the idle worker (whose poll is an hour away).
    let b = w2
        .take(Duration::from_secs(30))
        .await
        .unwrap()
        .expect("attempt 2, after the reconciler");
    advancing.abort();
    assert!(f.t.clock.now() > lease + chrono::Duration::seconds(30));
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
    // Each attempt is reported as the platform's error at once, until none are left:
    // not the worker's fault, so not charged to the entry's `max_attempts`, but bounded
    // by `max_attempts_total` all the same.
    assert!(w.take(Duration::ZERO).await.unwrap().is_none());
    assert_eq!(f.state(&s).await, State::Error);
    let attempts = f.t.attempts(s.id).await.unwrap();
    let cap = store::Policy::default().max_attempts_total as usize;
    assert_eq!(attempts.len(), cap);
    assert!(attempts.iter().all(|a| a.outcome == Some(Outcome::Error)));
    let history = f.t.history(s.id).await.unwrap();
    assert!(history.iter().any(|h| matches!(&h.reason,
        Reason::JudgeError { message, .. } if message.contains("leads out of the state folder"))));
}

both!(
    a_draining_worker_finishes_its_run_and_takes_nothing,
    a_disabled_worker_s_run_is_retried_elsewhere,
    a_worker_of_another_build_is_refused,
    repeated_errors_disable_a_worker,
    a_paused_challenge_s_job_waits_while_another_s_is_taken,
);

fn judge_error() -> Report {
    Report {
        outcome: Outcome::Error,
        result_json: None,
        private_json: None,
        figures: Vec::new(),
        quiz_figures: Vec::new(),
        scorer_version: "score 0.1.0".into(),
        judge_version: "0.1.0".into(),
        message: Some("judge error (machine fault): out of memory".into()),
        runtime_lock: None,
        warnings: Vec::new(),
    }
}

fn server_build() -> Build {
    Build {
        judge_version: "0.2.0".into(),
        runtime_lock: "sha256:00112233aabbccdd".into(),
    }
}

async fn a_draining_worker_finishes_its_run_and_takes_nothing(backend: Backend) {
    let f = fixture(backend).await;
    let (a, b) = (f.team("a").await, f.team("b").await);
    let a1 = f.submit(&a, 1).await;
    let b1 = f.submit(&b, 2).await;
    let w = f.worker("w1").await;
    let run = w.take(Duration::ZERO).await.unwrap().expect("a job");
    assert_eq!(run.job.attempt.submission, a1.id);
    f.t.drain_worker(w.worker(), None, "kernel update")
        .await
        .unwrap();
    // Its run goes on: heartbeats hold the lease, the report is accepted.
    assert!(matches!(
        w.heartbeat(&run.lease, &RunProgress::default())
            .await
            .unwrap(),
        Standing::Held { .. }
    ));
    w.report(&run.lease, &scored()).await.unwrap();
    assert_eq!(f.state(&a1).await, State::Scored);
    // No new take, with a refusal that says why and what to do.
    let e = w.take(Duration::ZERO).await.unwrap_err();
    assert!(
        matches!(e, DispatchError::Refused(WorkerRefusal::Draining(_))),
        "{e}"
    );
    assert!(e.to_string().contains("enable"), "{e}");
    assert!(!e.is_transient());
    assert_eq!(f.state(&b1).await, State::Queued);
    // Enabled again, it takes b1.
    f.t.enable_worker(w.worker(), None, "done").await.unwrap();
    let next = w.take(Duration::ZERO).await.unwrap().expect("a job");
    assert_eq!(next.job.attempt.submission, b1.id);
}

async fn a_disabled_worker_s_run_is_retried_elsewhere(backend: Backend) {
    let f = fixture(backend).await;
    let team = f.team("a").await;
    let s = f.submit(&team, 1).await;
    let (w1, w2) = (f.worker("w1").await, f.worker("w2").await);
    let run = w1.take(Duration::ZERO).await.unwrap().expect("a job");
    // An idle worker waiting (its poll is an hour away) is woken by the requeue.
    let waiting = tokio::spawn({
        let w2 = w2.clone();
        async move { w2.take(Duration::from_secs(30)).await }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (_, ended) =
        f.t.disable_worker(w1.worker(), None, "disk failing")
            .await
            .unwrap();
    assert_eq!(ended.requeued, vec![s.id]);
    f.queue.wake();
    // At its next heartbeat, w1 learns to stop; its report would be refused.
    assert!(matches!(
        w1.heartbeat(&run.lease, &RunProgress::default())
            .await
            .unwrap(),
        Standing::Lost { .. }
    ));
    assert!(matches!(
        w1.report(&run.lease, &scored()).await.unwrap_err(),
        DispatchError::Refused(WorkerRefusal::Disabled(_))
    ));
    let retry = waiting.await.unwrap().unwrap().expect("attempt 2");
    assert_eq!(retry.job.attempt.submission, s.id);
    assert_eq!(retry.job.attempt.number, 2);
    w2.report(&retry.lease, &scored()).await.unwrap();
    // Never charged: the error attempt is not the entry's, and not w1's own either.
    let attempts = f.t.attempts(s.id).await.unwrap();
    let outcomes: Vec<_> = attempts.iter().map(|a| a.outcome).collect();
    assert_eq!(outcomes, [Some(Outcome::Error), Some(Outcome::Scored)]);
    let status = f.t.worker_statuses().await.unwrap();
    let w1s = status.iter().find(|s| s.worker.id == w1.worker()).unwrap();
    assert_eq!(w1s.recent_errors, 0);
}

async fn a_worker_of_another_build_is_refused(backend: Backend) {
    let f = fixture(backend).await;
    let store = f.t.store.clone().with_build(server_build());
    let queue = LocalQueue::new(store, f.queue.config().clone());
    let team = f.team("a").await;
    let s = f.submit(&team, 1).await;
    let old_id = queue.register_worker("old").await.unwrap();
    let old = queue.dispatcher_as(
        old_id,
        None,
        Announcement {
            build: Build {
                judge_version: "0.1.0".into(),
                ..server_build()
            },
            slots: Some(2),
            host: Some("lab-3".into()),
            instance: None,
        },
    );
    match old.take(Duration::ZERO).await.unwrap_err() {
        DispatchError::Refused(WorkerRefusal::WrongVersion {
            worker,
            announced,
            server,
        }) => {
            assert_eq!(worker, "old");
            assert_eq!(announced.unwrap().judge_version, "0.1.0");
            assert_eq!(server, server_build());
        }
        e => panic!("{e}"),
    }
    let e = old.take(Duration::ZERO).await.unwrap_err();
    assert!(e.to_string().contains("judge 0.1.0"), "{e}");
    assert!(e.to_string().contains("judge 0.2.0"), "{e}");
    assert!(!e.is_transient());
    // The refusal is on the worker's record, with what it announced.
    let w = f.t.worker(old_id).await.unwrap();
    assert!(w.refusal.is_some());
    assert_eq!((w.slots, w.host.as_deref()), (Some(2), Some("lab-3")));
    assert_eq!(f.state(&s).await, State::Queued);
    // The local pool's dispatcher runs the server's build by construction.
    let local_id = queue.register_worker("local").await.unwrap();
    let local = queue.dispatcher(local_id, None);
    let a = local.take(Duration::ZERO).await.unwrap().expect("a job");
    assert_eq!(a.job.attempt.submission, s.id);
    assert_eq!(
        f.t.worker(local_id).await.unwrap().build,
        Some(server_build())
    );
}

async fn repeated_errors_disable_a_worker(backend: Backend) {
    let f = fixture(backend).await;
    let store = f.t.store.clone().with_policy(store::Policy {
        max_attempts: 10,
        ..store::Policy::default()
    });
    let queue = LocalQueue::new(store, f.queue.config().clone());
    let team = f.team("a").await;
    let s = f.submit(&team, 1).await;
    let id = queue.register_worker("flaky").await.unwrap();
    let w = queue.dispatcher(id, None);
    // Another worker takes jobs (seen asking, for no challenge): the flaky one is not
    // the last, which is never disabled automatically.
    let seen = queue.register_worker("seen").await.unwrap();
    let none = queue.dispatcher(seen, Some(Vec::new()));
    assert!(none.take(Duration::ZERO).await.unwrap().is_none());
    // Stopped runs (the worker shutting down) are not its fault.
    for _ in 0..3 {
        let a = w.take(Duration::ZERO).await.unwrap().expect("a job");
        w.report_blamed(&a.lease, &judge_error(), Blame::Elsewhere)
            .await
            .unwrap();
    }
    // Three errors of its own in a row: disabled, and the list says why.
    for _ in 0..3 {
        let a = w.take(Duration::ZERO).await.unwrap().expect("a job");
        w.report(&a.lease, &judge_error()).await.unwrap();
    }
    assert!(matches!(
        w.take(Duration::ZERO).await.unwrap_err(),
        DispatchError::Refused(WorkerRefusal::Disabled(_))
    ));
    let worker = f.t.worker(id).await.unwrap();
    assert_eq!(worker.state, store::WorkerState::Disabled);
    assert!(matches!(
        worker.state_reason,
        Some(store::WorkerStateReason::RepeatedErrors { count: 3, .. })
    ));
    // The submission waits for another worker (6 attempts of 10 used).
    assert_eq!(f.state(&s).await, State::Queued);
    let other = f.worker("steady").await;
    let a = other.take(Duration::ZERO).await.unwrap().expect("a job");
    assert_eq!(a.job.attempt.number, 7);
}

async fn a_paused_challenge_s_job_waits_while_another_s_is_taken(backend: Backend) {
    let f = fixture(backend).await;
    let data = f._dirs.path().join("data");
    f.t.create_challenge(
        "other",
        "Other",
        Definition::Builtin("cinc2017".into()),
        &data,
    )
    .await
    .unwrap();
    let now = f.t.now();
    let phase =
        f.t.create_phase(
            "other",
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
    f.t.pause_challenge("cinc2017", None, "data fix")
        .await
        .unwrap();
    let a = f.team("a").await;
    let paused = f.submit(&a, 1).await;
    let u =
        f.t.create_user("o-user", Role::Participant, None)
            .await
            .unwrap();
    let o = f.t.create_team("other", "o", u.id).await.unwrap();
    let later = f
        .queue
        .submit(&NewSubmission {
            team: o.id,
            phase: phase.id,
            entry_sha256: format!("{:064x}", 2),
            entry_path: format!("entries/{}/2.zip", o.id),
            method_name: None,
            method_description: None,
        })
        .await
        .unwrap();
    let w = f.worker("w1").await;
    let got = w.take(Duration::ZERO).await.unwrap().expect("a job");
    assert_eq!(got.job.attempt.submission, later.id);
    w.report(&got.lease, &scored()).await.unwrap();
    assert!(w.take(Duration::ZERO).await.unwrap().is_none());
    assert_eq!(f.state(&paused).await, State::Queued);
    f.t.resume_challenge("cinc2017").await.unwrap();
    let got = w.take(Duration::ZERO).await.unwrap().expect("a job");
    assert_eq!(got.job.attempt.submission, paused.id);
}
