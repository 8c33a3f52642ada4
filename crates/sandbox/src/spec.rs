//! The sandbox's configuration types in one place: what a caller binds ([`Bind`]), what
//! a slot's spawner is started with ([`SlotSpec`]), and what the runner sends it for each
//! run ([`RunSpec`] in a [`Request`]). The runner (`run`), the spawner (`spawner`) and the
//! inside of a run (`init`) all speak these, and none of them needs another's module for
//! it.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// A bind mount into the sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bind {
    pub src: PathBuf,
    pub dst: PathBuf,
    pub writable: bool,
}

/// Set in the environment of the spawner (the runner starts it; nobody else should),
/// holding its [`SlotSpec`] as JSON.
pub const SPAWNER_ENV: &str = "PHYSIOJUDGE_SANDBOX_SPAWNER";

/// A slot's world, fixed for the life of its spawner.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlotSpec {
    /// Paths shown read-only at the same place (system directories, symlinks kept): the
    /// host's, or those under [`SlotSpec::root`].
    pub system: Vec<PathBuf>,
    /// A root file system (a runtime's Debian userland) whose system directories and
    /// `/etc` the slot shows instead of the host's, so that the C library, the Python
    /// and the Debian packages a program finds all come from one release.
    #[serde(default)]
    pub root: Option<PathBuf>,
    /// The slot's uid and gid, which every program of the slot runs as.
    pub uid: u32,
    pub gid: u32,
    /// The `/tmp` size of the slot's first program, which the spawner makes as soon as
    /// the slot is set up, before the first request (a run of another size resizes it).
    pub tmp_bytes: u64,
    /// The slot serves one run and its runner then exits (a one-shot command such as
    /// `physiojudge sandbox run`): nothing is made ahead for a next run, and the first
    /// program stays in the spawner's own network namespace, new and never used, rather
    /// than making another.
    pub once: bool,
}

/// Where a bind goes; its source travels as a detached mount tree ([`crate::tree`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mountpoint {
    pub dst: PathBuf,
    /// The source is a file, not a directory.
    pub file: bool,
}

/// Everything a run needs besides its descriptors, sent to the spawner as JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSpec {
    pub binds: Vec<Mountpoint>,
    pub tmp_bytes: u64,
    pub cpu_seconds: u64,
    pub file_size_bytes: u64,
    pub open_files: u64,
    pub env: Vec<(String, String)>,
    pub cwd: PathBuf,
    pub argv: Vec<String>,
    /// Count the program's user-space instructions (the machine has a counter).
    pub count_instructions: bool,
    /// Pin the program to this CPU (see [`crate::RunConfig::cpu`]).
    pub cpu: Option<usize>,
}

/// One run to start.
#[derive(Debug, Serialize, Deserialize)]
pub struct Request {
    pub spec: RunSpec,
    /// How many `cgroup.procs` descriptors follow the fixed ones.
    pub cgroups: usize,
}
