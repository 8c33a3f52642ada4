//! One isolated run of an untrusted program, and a typed account of how it ended.
//!
//! The judge runs every stage of every entry through here: the program gets its own
//! mount, PID, network, IPC and UTS namespaces, a minimal read-only root, an unprivileged
//! uid, a seccomp filter and resource limits enforced by cgroups (v1 or v2) and rlimits.
//! The run ends in a [`RunResult`]: one flat record, like isolate's meta file, whose
//! [`Verdict`] says why it ended. An [`Verdict::InternalError`] is the sandbox's fault and
//! is never charged to an entry.
//!
//! Not here: what to run or which files to show (the judge decides), scoring, or any
//! notion of challenges. The kernel is the real boundary; production workers run on
//! dedicated VMs and this is the second wall.

mod ahead;
pub mod cgroup;
pub mod init;
pub mod instructions;
pub mod limits;
mod netns;
pub mod reexec;
pub mod result;
pub mod run;
mod seccomp;
mod spawner;
pub mod spec;
mod tree;

pub use ahead::shutdown;
pub use limits::Limits;
pub use result::{RunResult, Verdict};
pub use spec::Bind;
/// The uid (and gid) the programs of sandbox slot `slot` run as: what a caller gives a
/// folder the program may write to.
pub fn slot_uid(slot: u32) -> u32 {
    run::BASE_ID + slot
}

pub use run::{Conversation, InitProgram, Run, RunConfig, run, run_serving, start_slot};
