//! [`Judge`]: what every evaluation needs, held once by whoever judges — the command
//! line for one run, a server or a worker for many at a time.
//!
//! A judge owns the Python runtime entries run with (none on a machine that judges only
//! MATLAB-language entries, which run on the Octave runtime), the program that starts
//! the inside of a sandbox run, a pool of sandbox slots and the challenge definitions. Its
//! [`Judge::evaluate`] may be called from many threads at once: each call takes a slot
//! from the pool for the whole evaluation (so no two runs ever share one) and gives it
//! back when it ends, whatever way it ends.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use sandbox::InitProgram;

use crate::JudgeError;
use crate::challenge::{BUILT_IN, Challenge};
use crate::pipeline::{Evaluation, Progress};
use crate::pyenv::EnvSettings;
use crate::result::EvalResult;

/// Asks an evaluation to stop. Clones share the flag: the caller keeps one and gives one
/// to the evaluation; the judge checks it between records and stages, and the sandbox
/// ends a run in progress when it is set.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    pub fn new() -> CancelToken {
        CancelToken::default()
    }

    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    /// The shared flag, as the sandbox watches it.
    pub fn flag(&self) -> Arc<AtomicBool> {
        self.0.clone()
    }
}

/// Sandbox slots handed out one per evaluation and given back when it ends.
#[derive(Debug)]
struct SlotPool {
    free: Mutex<Vec<u32>>,
    returned: Condvar,
}

/// A slot taken from the pool; back in the pool when dropped.
struct Slot<'a> {
    pool: &'a SlotPool,
    number: u32,
}

impl SlotPool {
    fn new(slots: std::ops::Range<u32>) -> SlotPool {
        // Taken from the end: the lowest numbers go first.
        SlotPool {
            free: Mutex::new(slots.rev().collect()),
            returned: Condvar::new(),
        }
    }

    /// Waits for a free slot.
    fn take(&self) -> Slot<'_> {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(number) = free.pop() {
                return Slot { pool: self, number };
            }
            free = self.returned.wait(free).unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.pool
            .free
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(self.number);
        self.pool.returned.notify_one();
    }
}

/// One evaluation asked of a [`Judge`].
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// A challenge id the judge knows.
    pub challenge: &'a str,
    /// A folder or archive.
    pub entry: &'a Path,
    /// A labelled folder in the challenge's native layout.
    pub data: &'a Path,
    /// The result folder to write (created; must not hold an older result).
    pub out: &'a Path,
    pub cancel: Option<&'a CancelToken>,
}

/// What every evaluation needs; see the module documentation.
#[derive(Debug)]
pub struct Judge {
    /// `None`: no Python runtime here; a Python entry's evaluation fails as the judge's
    /// (the machine's) fault, a MATLAB entry's needs none.
    runtime: Option<runtime::Runtime>,
    init: InitProgram,
    slots: SlotPool,
    challenges: BTreeMap<String, Challenge>,
    envs: EnvSettings,
}

impl Judge {
    /// A judge running entries with `runtime`, starting sandbox runs with `init` (see
    /// `sandbox::init`), in the sandbox slots `slots` (each a uid and cgroups of its own:
    /// two judges on one machine need disjoint ranges), knowing the built-in challenges.
    pub fn new(
        runtime: runtime::Runtime,
        init: InitProgram,
        slots: std::ops::Range<u32>,
    ) -> Result<Judge, JudgeError> {
        Judge::with_runtime(Some(runtime), init, slots)
    }

    /// [`Judge::new`], where the Python runtime may be missing (`None`): such a judge
    /// judges MATLAB-language entries (docs/matlab.md), which need only the Octave
    /// runtime, and fails a Python entry's evaluation saying what to set up.
    pub fn with_runtime(
        runtime: Option<runtime::Runtime>,
        init: InitProgram,
        slots: std::ops::Range<u32>,
    ) -> Result<Judge, JudgeError> {
        if slots.is_empty() {
            return Err(JudgeError::Internal {
                message: "a judge needs at least one sandbox slot".into(),
            });
        }
        // What evaluations of processes that died mid-run left behind (their work
        // folders hold copies of hidden data): before this judge makes any of its own.
        let swept = crate::workdir::sweep();
        if swept > 0 {
            tracing::info!("removed {swept} work folders of processes that died mid-run");
        }
        let mut challenges = BTreeMap::new();
        for (id, _) in BUILT_IN {
            challenges.insert(id.to_string(), Challenge::built_in(id)?);
        }
        Ok(Judge {
            runtime,
            init,
            slots: SlotPool::new(slots),
            challenges,
            envs: EnvSettings::from_env(),
        })
    }

    /// Where entries' environments are cached and which index they come from (by
    /// default [`EnvSettings::from_env`]).
    pub fn set_env_settings(&mut self, envs: EnvSettings) {
        self.envs = envs;
    }

    pub fn env_settings(&self) -> &EnvSettings {
        &self.envs
    }

    /// Adds (or replaces) a challenge definition.
    pub fn add_challenge(&mut self, challenge: Challenge) {
        self.challenges.insert(challenge.id.clone(), challenge);
    }

    pub fn challenge(&self, id: &str) -> Option<&Challenge> {
        self.challenges.get(id)
    }

    pub fn challenges(&self) -> impl Iterator<Item = &Challenge> {
        self.challenges.values()
    }

    /// The Python runtime, if this judge has one.
    pub fn runtime(&self) -> Option<&runtime::Runtime> {
        self.runtime.as_ref()
    }

    /// Runs one evaluation (waiting for a free slot first) and writes its result folder;
    /// see [`crate::pipeline::evaluate`] for what an `Err` means. A cancelled evaluation
    /// ends with verdict `stopped`.
    pub fn evaluate(
        &self,
        request: &Request,
        progress: &mut dyn Progress,
    ) -> Result<EvalResult, JudgeError> {
        let challenge = self.challenge(request.challenge).ok_or_else(|| {
            JudgeError::challenge(
                request.challenge,
                format_args!(
                    "unknown challenge (known: {})",
                    self.challenges
                        .keys()
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        })?;
        self.evaluate_as(challenge, request, progress)
    }

    /// [`Judge::evaluate`] of a definition the caller holds rather than one the judge
    /// knows: a platform judges the definition it registered (pinned by its hash), which
    /// may have been registered after this judge was made. `request.challenge` must be
    /// its id.
    pub fn evaluate_as(
        &self,
        challenge: &Challenge,
        request: &Request,
        progress: &mut dyn Progress,
    ) -> Result<EvalResult, JudgeError> {
        if challenge.id != request.challenge {
            return Err(JudgeError::challenge(
                request.challenge,
                format_args!("the definition given is for {:?}", challenge.id),
            ));
        }
        self.run(challenge, request, progress, false)
    }

    /// Builds into the cache the environment an entry of `request.challenge` that asks
    /// for what `request.entry` asks for would get (its requirements file,
    /// `dependencies.txt`, `runtime.txt`…), before the challenge opens: an organiser's
    /// `physiojudge env seed`. The result's prep says what was built; no other stage
    /// runs, and `request.data` is not read.
    pub fn seed(
        &self,
        request: &Request,
        progress: &mut dyn Progress,
    ) -> Result<EvalResult, JudgeError> {
        let challenge = self.challenge(request.challenge).ok_or_else(|| {
            JudgeError::challenge(request.challenge, format_args!("unknown challenge"))
        })?;
        self.run(challenge, request, progress, true)
    }

    fn run(
        &self,
        challenge: &Challenge,
        request: &Request,
        progress: &mut dyn Progress,
        seed: bool,
    ) -> Result<EvalResult, JudgeError> {
        let slot = self.slots.take();
        let ev = Evaluation {
            challenge,
            entry: request.entry,
            data: request.data,
            out: request.out,
            runtime: self.runtime.as_ref(),
            envs: &self.envs,
            init: self.init.clone(),
            slot: slot.number,
            cancel: request.cancel.cloned(),
            seed,
        };
        crate::pipeline::evaluate(&ev, progress)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Eight threads taking and giving back two slots: never the same slot twice at once.
    #[test]
    fn a_slot_is_never_held_twice() {
        let pool = SlotPool::new(3..5);
        let held = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    for _ in 0..200 {
                        let slot = pool.take();
                        {
                            let mut h = held.lock().unwrap();
                            assert!(!h.contains(&slot.number), "slot {} twice", slot.number);
                            assert!((3..5).contains(&slot.number));
                            h.push(slot.number);
                        }
                        std::thread::yield_now();
                        held.lock().unwrap().retain(|&n| n != slot.number);
                    }
                });
            }
        });
        assert_eq!(pool.free.lock().unwrap().len(), 2);
    }

    #[test]
    fn a_cancel_token_is_shared_by_its_clones() {
        let t = CancelToken::new();
        let given = t.clone();
        assert!(!given.is_cancelled());
        t.cancel();
        assert!(given.is_cancelled() && given.flag().load(Ordering::SeqCst));
    }
}
