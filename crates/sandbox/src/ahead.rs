//! Cgroups made ahead and removed behind. Every run gets a cgroup of its own (so that its
//! accounting starts from nothing: no CPU time, peak memory or page cache of an earlier
//! run), but making one, limiting it, opening the files a program joins it by and removing it
//! again is ~0.5 ms of file system work on v1, which need not wait on the run. One
//! janitor thread per process removes each used cgroup after its run and readies the
//! next run's for that slot, with the limits the last run had (the usual case: a judge
//! runs one entry's records one after another); a run that finds none ready, or one
//! with other limits, does the rest itself.
//!
//! What is left when the process ends (a made-ahead cgroup, a removal not done yet) is
//! empty and carries the process's id, so the next runner's sweep removes it; a runner
//! that ends normally calls [`shutdown`] instead and leaves nothing.

use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use crate::cgroup::{Cgroup, CgroupError, CgroupLimits, Layout};

/// A run's cgroup, limited, with the files a program joins it by open for writing (one per
/// hierarchy, in [`Cgroup::dirs`] order).
pub(crate) struct Ready {
    pub cgroup: Cgroup,
    pub procs: Vec<OwnedFd>,
    limits: CgroupLimits,
}

impl Ready {
    fn make(layout: &Layout, slot: u32, limits: CgroupLimits) -> Result<Ready, CgroupError> {
        let cgroup = layout.make(&name(slot))?;
        cgroup.limit(limits)?;
        let procs = cgroup.open_joins()?;
        Ok(Ready {
            cgroup,
            procs,
            limits,
        })
    }
}

enum Job {
    /// Remove a used cgroup, then ready one for this layout and slot with these limits.
    Replace(Box<(Cgroup, Layout, u32, CgroupLimits)>),
    /// Say when everything sent before is done.
    Flush(Sender<()>),
}

type Spares = Mutex<HashMap<(Layout, u32), Ready>>;

fn spares() -> &'static Spares {
    static SPARES: OnceLock<Spares> = OnceLock::new();
    SPARES.get_or_init(Default::default)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A new cgroup name for a run in `slot`: `slot<N>-<runner pid>-<count>` (the runner's
/// pid tells the sweep whose it is).
fn name(slot: u32) -> String {
    static MADE: AtomicU64 = AtomicU64::new(0);
    format!(
        "slot{slot}-{}-{}",
        std::process::id(),
        MADE.fetch_add(1, Ordering::Relaxed)
    )
}

/// The janitor's queue; `None` if its thread could not be started (then cgroups are
/// removed on the run's own path, as before there was a janitor).
static JANITOR: OnceLock<Option<Mutex<Sender<Job>>>> = OnceLock::new();

fn janitor() -> Option<&'static Mutex<Sender<Job>>> {
    JANITOR
        .get_or_init(|| {
            let (tx, rx) = channel::<Job>();
            std::thread::Builder::new()
                .name("sandbox-cgroups".into())
                .spawn(move || {
                    for job in rx {
                        match job {
                            Job::Replace(job) => {
                                let (used, layout, slot, limits) = *job;
                                // A failure leaves an empty directory, which the Drop of a
                                // failed removal retries and the next runner's sweep takes.
                                let _ = used.remove();
                                let key = (layout, slot);
                                if !lock(spares()).contains_key(&key)
                                    && let Ok(ready) = Ready::make(&key.0, slot, limits)
                                {
                                    lock(spares()).insert(key, ready);
                                }
                            }
                            Job::Flush(done) => {
                                let _ = done.send(());
                            }
                        }
                    }
                })
                .ok()
                .map(|_| Mutex::new(tx))
        })
        .as_ref()
}

/// The cgroup for a run in `slot` with `limits`: one readied ahead, or a new one.
pub(crate) fn take(layout: &Layout, slot: u32, limits: CgroupLimits) -> Result<Ready, CgroupError> {
    match lock(spares()).remove(&(layout.clone(), slot)) {
        // One made for other limits is re-limited; should that fail, a new one is made.
        Some(mut ready) if ready.limits != limits => match ready.cgroup.limit(limits) {
            Ok(()) => {
                ready.limits = limits;
                Ok(ready)
            }
            Err(_) => Ready::make(layout, slot, limits),
        },
        Some(ready) => Ok(ready),
        None => Ready::make(layout, slot, limits),
    }
}

/// Hands over a run's cgroup, once empty: removed behind, and replaced ahead.
pub(crate) fn done(layout: &Layout, slot: u32, used: Ready) {
    let job = Job::Replace(Box::new((used.cgroup, layout.clone(), slot, used.limits)));
    let unsent = match janitor() {
        Some(j) => lock(j).send(job).err().map(|e| e.0),
        None => Some(job),
    };
    if let Some(Job::Replace(job)) = unsent {
        let _ = job.0.remove();
    }
}

/// Removes every cgroup this process made ahead and waits (a few seconds at most) for
/// the removals under way. For a runner that is about to exit.
pub fn shutdown() {
    if let Some(Some(janitor)) = JANITOR.get() {
        let (tx, rx) = channel();
        if lock(janitor).send(Job::Flush(tx)).is_ok() {
            let _ = rx.recv_timeout(Duration::from_secs(5));
        }
    }
    let left: Vec<Ready> = lock(spares()).drain().map(|(_, r)| r).collect();
    for r in left {
        let _ = r.cgroup.remove();
    }
}
