//! Cgroups made ahead and removed behind. Every run gets a cgroup of its own (so that its
//! accounting starts from nothing: no CPU time, peak memory or page cache of an earlier
//! run), but making one and removing it is ~0.4 ms of directory work on v1, which need
//! not wait on the run. One janitor thread per process removes each used cgroup after its
//! run and makes the next run's for that slot; a run that finds none ready makes its own.
//!
//! What is left when the process ends (a made-ahead cgroup, a removal not done yet) is
//! empty and carries the process's id, so the next runner's sweep removes it; a runner
//! that ends normally calls [`shutdown`] instead and leaves nothing.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use crate::cgroup::{Cgroup, CgroupError, Layout};

enum Job {
    /// Remove a used cgroup, then make one ready for this layout and slot.
    Replace(Cgroup, Layout, u32),
    /// Say when everything sent before is done.
    Flush(Sender<()>),
}

type Spares = Mutex<HashMap<(Layout, u32), Cgroup>>;

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

static JANITOR: OnceLock<Mutex<Sender<Job>>> = OnceLock::new();

fn janitor() -> &'static Mutex<Sender<Job>> {
    JANITOR.get_or_init(|| {
        let (tx, rx) = channel::<Job>();
        std::thread::Builder::new()
            .name("sandbox-cgroups".into())
            .spawn(move || {
                for job in rx {
                    match job {
                        Job::Replace(used, layout, slot) => {
                            // A failure leaves an empty directory, which the Drop of a
                            // failed removal retries and the next runner's sweep takes.
                            let _ = used.remove();
                            let key = (layout, slot);
                            if !lock(spares()).contains_key(&key)
                                && let Ok(cg) = key.0.make(&name(slot))
                            {
                                lock(spares()).insert(key, cg);
                            }
                        }
                        Job::Flush(done) => {
                            let _ = done.send(());
                        }
                    }
                }
            })
            .expect("a thread for the cgroup janitor");
        Mutex::new(tx)
    })
}

/// The cgroup for a run in `slot`: one made ahead, or a new one.
pub(crate) fn take(layout: &Layout, slot: u32) -> Result<Cgroup, CgroupError> {
    match lock(spares()).remove(&(layout.clone(), slot)) {
        Some(cg) => Ok(cg),
        None => layout.make(&name(slot)),
    }
}

/// Hands over a run's cgroup, once empty: removed behind, and replaced ahead.
pub(crate) fn done(layout: &Layout, slot: u32, used: Cgroup) {
    let job = Job::Replace(used, layout.clone(), slot);
    if let Err(std::sync::mpsc::SendError(Job::Replace(used, ..))) = lock(janitor()).send(job) {
        let _ = used.remove();
    }
}

/// Removes every cgroup this process made ahead and waits (a few seconds at most) for
/// the removals under way. For a runner that is about to exit.
pub fn shutdown() {
    if let Some(janitor) = JANITOR.get() {
        let (tx, rx) = channel();
        if lock(janitor).send(Job::Flush(tx)).is_ok() {
            let _ = rx.recv_timeout(Duration::from_secs(5));
        }
    }
    let left: Vec<Cgroup> = lock(spares()).drain().map(|(_, cg)| cg).collect();
    for cg in left {
        let _ = cg.remove();
    }
}
