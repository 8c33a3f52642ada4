//! One job: checks, the judge's run beside the heartbeats, the report.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dispatch::{Assignment, Blame, DispatchError, Lease, RunProgress, Standing, WorkerRefusal};
use judge::{CancelToken, EvalResult, Judge, JudgeError, Request};
use store::{AttemptKey, Definition, Report};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::report::{self, ErrorReason};
use crate::{Ending, Event, Shared};

/// Reports that fail for a fault of the queue are tried again, the wait doubling from
/// `retry_wait` up to this: a finished result is kept and offered until the queue takes
/// or refuses it, however long the platform is down.
const REPORT_WAIT_MAX: Duration = Duration::from_secs(30);

/// Once stopping (the worker shuts down), a report that keeps failing is tried this
/// many times more, then given up: the lease lapses and the job is judged again.
const STOPPING_TRIES: u32 = 3;

/// How a run on the blocking thread ended.
#[allow(clippy::large_enum_variant)] // one per job, moved once: boxing buys nothing
pub(crate) enum RunEnd {
    /// Not judged: a check before judging refused the job.
    Refused(ErrorReason),
    /// The judge ran; with the warnings of a scored result ("degenerate output").
    Judged(Result<EvalResult, JudgeError>, Vec<String>),
}

/// Cancels the run when the job's task ends without finishing it (aborted, dropped):
/// the evaluation on its blocking thread would otherwise go on with nobody to report.
struct CancelOnDrop(CancelToken);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// Takes the judge's events to the heartbeat (through `progress`) and to the observer.
struct Sink<'a> {
    shared: &'a Shared,
    slot: usize,
    attempt: AttemptKey,
    progress: &'a Mutex<RunProgress>,
}

impl judge::Progress for Sink<'_> {
    fn event(&mut self, event: judge::Event<'_>) {
        let now = match event {
            judge::Event::Stage { stage, records } => RunProgress {
                stage: Some(stage.as_str().to_owned()),
                done: 0,
                total: records,
            },
            judge::Event::Record {
                stage, done, total, ..
            } => RunProgress {
                stage: Some(stage.as_str().to_owned()),
                done,
                total,
            },
            judge::Event::Done(_) => return,
        };
        *self.progress.lock().unwrap_or_else(|p| p.into_inner()) = now.clone();
        self.shared.tell(Event::Progress {
            slot: self.slot,
            attempt: self.attempt,
            progress: now,
        });
    }
}

/// The definition the platform registered: a built-in one by its id (as this judge has
/// it), or the registered TOML text itself. The TOML is judged as registered (its hash
/// is the challenge's), so a challenge registered after this worker started is judged
/// too, and a judge that has another definition under the same id never stands in for it.
fn judge_challenge(
    judge: &Judge,
    job_challenge: &str,
    definition: &Definition,
) -> Result<judge::Challenge, ErrorReason> {
    match definition {
        Definition::Builtin(id) => match judge.challenge(id) {
            Some(c) => Ok(c.clone()),
            None => Err(ErrorReason::UnknownChallenge {
                challenge: job_challenge.to_owned(),
                message: format!("the judge has no built-in challenge {id:?}"),
            }),
        },
        Definition::Toml(text) => judge::Challenge::parse(text, job_challenge).map_err(|e| {
            ErrorReason::UnknownChallenge {
                challenge: job_challenge.to_owned(),
                message: e.to_string(),
            }
        }),
    }
}

/// Everything done on the blocking thread: the checks, then the judge.
fn judge_one(
    shared: &Shared,
    slot: usize,
    a: &Assignment,
    out: &Path,
    token: &CancelToken,
    progress: &Mutex<RunProgress>,
) -> RunEnd {
    let challenge = match judge_challenge(&shared.judge, &a.job.challenge, &a.definition) {
        Ok(c) => c,
        Err(e) => return RunEnd::Refused(e),
    };
    // The entry as uploaded: the file the submission's sha256 names.
    match store::manifest::file_sha256(&a.entry) {
        Ok(sum) if sum == a.job.entry_sha256 => {}
        Ok(sum) => {
            return RunEnd::Refused(ErrorReason::EntryChanged {
                expected: a.job.entry_sha256.clone(),
                found: sum,
            });
        }
        Err(e) => {
            return RunEnd::Refused(ErrorReason::EntryUnreadable {
                message: e.to_string(),
            });
        }
    }
    // The data as registered (docs/service.md): a changed folder is refused, not judged.
    let data = match &shared.config.data_root {
        Some(root) => root.join(&a.job.challenge),
        None => a.data_path.clone(),
    };
    if let Err(e) = shared.verified.verify(&a.manifest, &data) {
        return RunEnd::Refused(match e {
            store::Error::DataChanged { .. } => ErrorReason::DataChanged {
                message: e.to_string(),
            },
            e => ErrorReason::DataUnreadable {
                message: e.to_string(),
            },
        });
    }
    let request = Request {
        challenge: &challenge.id,
        entry: &a.entry,
        data: &data,
        out,
        cancel: Some(token),
    };
    let mut sink = Sink {
        shared,
        slot,
        attempt: a.lease.attempt,
        progress,
    };
    let result = shared.judge.evaluate_as(&challenge, &request, &mut sink);
    let warnings = match &result {
        Ok(r) if r.verdict == judge::result::EntryVerdict::Scored => {
            judge::rescore::warnings(&challenge, out)
        }
        _ => Vec::new(),
    };
    RunEnd::Judged(result, warnings)
}

/// Runs one job to its end: see the crate documentation.
pub(crate) async fn job(
    shared: &Arc<Shared>,
    slot: usize,
    a: Assignment,
    stop: &mut watch::Receiver<bool>,
) {
    let key = a.lease.attempt;
    let out = dispatch::result_dir(&shared.config.state_dir, key);
    let token = CancelToken::new();
    let _cancel_on_drop = CancelOnDrop(token.clone());
    let progress = Arc::new(Mutex::new(RunProgress::default()));
    let mut run = {
        let (shared, a, out, token, progress) = (
            shared.clone(),
            a.clone(),
            out.clone(),
            token.clone(),
            progress.clone(),
        );
        tokio::task::spawn_blocking(move || judge_one(&shared, slot, &a, &out, &token, &progress))
    };
    let mut lease = a.lease.clone();
    let every = lease.heartbeat_every.max(Duration::from_millis(10));
    let mut tick = tokio::time::interval_at(Instant::now() + every, every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut held_at = Instant::now();
    let mut lost: Option<String> = None;
    let mut stopping: Option<String> = None;
    let ended = loop {
        tokio::select! {
            r = &mut run => break r,
            _ = tick.tick(), if lost.is_none() => {
                let now = progress.lock().unwrap_or_else(|p| p.into_inner()).clone();
                let beat = tokio::time::timeout(every, shared.dispatch.heartbeat(&lease, &now)).await;
                let why = match beat {
                    Ok(Ok(Standing::Held { until })) => {
                        lease.expires_at = until;
                        held_at = Instant::now();
                        None
                    }
                    Ok(Ok(Standing::Lost { why, state })) => Some(match state {
                        Some(s) => format!("lease lost: {why} (the submission is {s})"),
                        None => format!("lease lost: {why}"),
                    }),
                    Ok(Err(e)) => heartbeat_failed(&lease, held_at, &e.to_string()),
                    Err(_) => heartbeat_failed(&lease, held_at, "no answer in time"),
                };
                if let Some(why) = why {
                    // Not ours any more: stop, and report nothing (it would be refused).
                    tracing::warn!(slot, attempt = %key, "{why}: stopping the run");
                    token.cancel();
                    shared.tell(Event::Stopping { slot, attempt: key, why: why.clone() });
                    lost = Some(why);
                }
            }
            _ = crate::stopped(stop), if stopping.is_none() => {
                let why = "the worker is shutting down".to_owned();
                token.cancel();
                shared.tell(Event::Stopping { slot, attempt: key, why: why.clone() });
                stopping = Some(why);
            }
        }
    };
    let ended = ended.unwrap_or_else(|e| {
        RunEnd::Refused(ErrorReason::Panicked {
            message: e.to_string(),
        })
    });
    let ending = match lost {
        Some(why) => Ending::Abandoned { why },
        None => {
            let (report, reason) = report::build(ended, &out, stopping.as_deref());
            let ending = deliver(shared, &lease, &report, reason, stop).await;
            if let Ending::Reported { outcome, reason } = &ending {
                match reason {
                    Some(r) => tracing::warn!(slot, attempt = %key, "reported {outcome}: {r}"),
                    None => tracing::info!(slot, attempt = %key, "reported {outcome}"),
                }
            }
            ending
        }
    };
    shared.dispatch.finished(key).await;
    shared.tell(Event::Finished {
        slot,
        attempt: key,
        ending,
    });
}

/// A heartbeat that failed (the queue unreachable or failing). The run goes on: a
/// platform that fails does not lapse leases (the reconciler extends them when it
/// comes back), and the queue says `Lost` when the attempt is over; until it answers
/// again nothing is known. Only logged, with how long nothing got through.
fn heartbeat_failed(lease: &Lease, held_at: Instant, why: &str) -> Option<String> {
    tracing::warn!(
        attempt = %lease.attempt,
        "heartbeat failed ({:?} since one got through): {why}",
        held_at.elapsed()
    );
    None
}

/// Reports, trying again while the queue fails (not when it refuses), with the lease
/// heartbeated meanwhile: the result folder stays on this machine until the queue takes
/// the report, refuses it, or says the attempt is over.
async fn deliver(
    shared: &Shared,
    lease: &Lease,
    report: &Report,
    reason: Option<ErrorReason>,
    stop: &mut watch::Receiver<bool>,
) -> Ending {
    let mut wait = shared.config.retry_wait;
    let mut left_when_stopping = STOPPING_TRIES;
    // A run stopped because the worker is shutting down is no fault of the worker's: it
    // does not count towards disabling it after repeated errors.
    let blame = match &reason {
        Some(ErrorReason::Stopped { .. }) => Blame::Elsewhere,
        _ => Blame::Worker,
    };
    let every = lease.heartbeat_every.max(Duration::from_millis(10));
    let mut tick = tokio::time::interval_at(Instant::now() + every, every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        match shared.dispatch.report_blamed(lease, report, blame).await {
            Ok(_) => {
                return Ending::Reported {
                    outcome: report.outcome,
                    reason,
                };
            }
            Err(DispatchError::Refused(WorkerRefusal::Attempt { why, .. })) => {
                tracing::warn!(attempt = %lease.attempt, "report refused: {why}");
                return Ending::Refused { why };
            }
            Err(e) if !e.is_transient() => {
                tracing::error!(attempt = %lease.attempt, "report not delivered: {e}");
                return Ending::Undelivered { why: e.to_string() };
            }
            Err(e) => {
                if *stop.borrow() {
                    if left_when_stopping == 0 {
                        tracing::error!(attempt = %lease.attempt, "report not delivered: {e}");
                        return Ending::Undelivered { why: e.to_string() };
                    }
                    left_when_stopping -= 1;
                }
                tracing::warn!(attempt = %lease.attempt, "report failed, trying again in {wait:?}: {e}");
            }
        }
        // The wait, heartbeating: the queue that comes back sees the lease alive, or
        // says it is over (then the result is not ours to give).
        let until = Instant::now() + wait;
        loop {
            tokio::select! {
                _ = tokio::time::sleep_until(until) => break,
                _ = tick.tick() => {
                    let beat = tokio::time::timeout(
                        every,
                        shared.dispatch.heartbeat(lease, &RunProgress::default()),
                    )
                    .await;
                    if let Ok(Ok(Standing::Lost { why, .. })) = beat {
                        tracing::warn!(attempt = %lease.attempt, "lease lost while reporting: {why}");
                        return Ending::Refused { why: format!("lease lost: {why}") };
                    }
                }
            }
        }
        wait = wait.saturating_mul(2).min(REPORT_WAIT_MAX);
    }
}
