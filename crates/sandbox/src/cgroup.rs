//! One cgroup per run, on cgroup v2 or v1: it holds every process of the run, limits
//! their memory (swap off) and number, accounts their CPU time and peak memory, says
//! whether the OOM killer or the pids limit fired, and kills them all at the end.
//!
//! Layouts ([`Layout::detect`]):
//! - **v2**: a cgroup2 mount with the memory, pids and cpu controllers (at the cgroup
//!   root, or at `unified/` on a hybrid host that gives them to v2).
//! - **v1**: the memory and pids controllers each on their own v1 mount. On a hybrid host
//!   whose cgroup2 mount has no controllers (this project's machines:
//!   docs/sandbox.md, *Running it*), the run is also put in a controller-less v2 cgroup, whose
//!   `cpu.stat` counts its CPU time and whose `cgroup.kill` ends it. Without one, the
//!   cpuacct controller counts, and the freezer stops the processes before they are
//!   killed, so none can fork away. (Each hierarchy a run joins costs a move of the
//!   process at its start and a directory to make and remove.)
//!
//! Every cgroup lives under a `physiojudge` parent in each hierarchy. Everything here
//! works on a path given by the caller, so the file-level logic is tested on a simulated
//! cgroupfs tree as well as on the real one.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// The parent cgroup of every run, in every hierarchy.
pub const PARENT: &str = "physiojudge";

/// A cgroup operation that failed: the file and what went wrong.
#[derive(Debug, thiserror::Error)]
pub enum CgroupError {
    #[error(
        "no usable cgroup layout under {0}: need cgroup v2 with the memory, pids and cpu \
         controllers, or v1 memory and pids mounts with cpuacct or a cgroup2 mount"
    )]
    NoLayout(PathBuf),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: cannot read {what} from {text:?}")]
    Parse {
        path: PathBuf,
        what: &'static str,
        text: String,
    },
    #[error("{0}: processes are still alive after being killed")]
    Survivors(PathBuf),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CgroupError + '_ {
    move |source| CgroupError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn write(path: &Path, value: &str) -> Result<(), CgroupError> {
    std::fs::write(path, value).map_err(io(path))
}

fn read(path: &Path) -> Result<String, CgroupError> {
    std::fs::read_to_string(path).map_err(io(path))
}

/// The number after `key` in a flat keyed file (`key value` lines: `cpu.stat`,
/// `memory.events`, `pids.events`, v1 `memory.oom_control`).
fn keyed(path: &Path, key: &'static str) -> Result<u64, CgroupError> {
    let text = read(path)?;
    text.lines()
        .filter_map(|l| l.split_once(' '))
        .find(|(k, _)| *k == key)
        .and_then(|(_, v)| v.trim().parse().ok())
        .ok_or_else(|| CgroupError::Parse {
            path: path.to_path_buf(),
            what: key,
            text: text.chars().take(200).collect(),
        })
}

fn number(path: &Path, what: &'static str) -> Result<u64, CgroupError> {
    let text = read(path)?;
    text.trim().parse().map_err(|_| CgroupError::Parse {
        path: path.to_path_buf(),
        what,
        text: text.chars().take(200).collect(),
    })
}

/// Where the cgroup hierarchies are and which version to use: one directory per
/// hierarchy. A [`Cgroup`] has the same shape, one directory of its own in each.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Layout {
    V2 {
        root: PathBuf,
    },
    V1 {
        memory: PathBuf,
        pids: PathBuf,
        /// What counts CPU time and kills the processes at the end.
        control: V1Control,
    },
}

/// How a v1 layout counts CPU time and kills.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum V1Control {
    /// A controller-less cgroup2 mount (hybrid hosts): `cpu.stat` and `cgroup.kill`.
    Unified(PathBuf),
    /// The cpuacct controller, and the freezer where there is one.
    Cpuacct {
        cpuacct: PathBuf,
        freezer: Option<PathBuf>,
    },
}

/// The runner process named in a run's cgroup name (`<anything>-<pid>-<n>`).
pub fn owner(name: &str) -> Option<u32> {
    let mut parts = name.rsplit('-');
    let _n = parts.next()?;
    parts.next()?.parse().ok()
}

/// The limits a cgroup enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CgroupLimits {
    pub memory_bytes: u64,
    pub pids: u64,
}

fn v2_has_controllers(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("cgroup.controllers")).is_ok_and(|c| {
        let c: Vec<&str> = c.split_whitespace().collect();
        ["memory", "pids", "cpu"].iter().all(|k| c.contains(k))
    })
}

impl Layout {
    /// Finds the layout under `base` (normally `/sys/fs/cgroup`): v2 where it has the
    /// controllers, else v1 (with a controller-less cgroup2 mount where there is one).
    pub fn detect(base: &Path) -> Result<Layout, CgroupError> {
        Self::detect_preferring(base, true)
    }

    /// The layout of a one-shot run (`RunConfig::once`): as [`Layout::detect`], except
    /// that a v1 layout takes the cpuacct and freezer controllers over a controller-less
    /// cgroup2 mount where the host has both. Every hierarchy is then v1, which a
    /// single-threaded process joins through `tasks` without the lock every fork takes
    /// ([`Cgroup::open_joins`]); a move into a v2 cgroup takes that lock, and on a host
    /// without `favordynmods` the first move after a quiet spell waits for an RCU grace
    /// period (10–20 ms on a loaded VM), which a one-shot run would always pay. What a v1
    /// layout loses by it, `cgroup.kill`, the freezer stands in for.
    pub fn detect_for_one_shot(base: &Path) -> Result<Layout, CgroupError> {
        Self::detect_preferring(base, false)
    }

    fn detect_preferring(base: &Path, prefer_unified: bool) -> Result<Layout, CgroupError> {
        for root in [base.to_path_buf(), base.join("unified")] {
            if v2_has_controllers(&root) {
                return Ok(Layout::V2 { root });
            }
        }
        let (memory, pids, cpuacct) =
            (base.join("memory"), base.join("pids"), base.join("cpuacct"));
        if !memory.join("memory.limit_in_bytes").is_file()
            // The root of the pids hierarchy has no pids.* files.
            || !pids.join("cgroup.procs").is_file()
        {
            return Err(CgroupError::NoLayout(base.to_path_buf()));
        }
        let unified = base.join("unified");
        // The root of a cgroup2 hierarchy has no cgroup.kill, its children do.
        let unified = Some(unified)
            .filter(|u| u.join("cgroup.procs").is_file() && u.join("cpu.stat").is_file());
        let freezer = Some(base.join("freezer"))
            .filter(|f| f.join("freezer.state").exists() || f.join("cgroup.procs").is_file());
        let cpuacct = Some(cpuacct).filter(|c| c.join("cpuacct.usage").is_file());
        let control = match (unified, cpuacct) {
            (Some(u), _) if prefer_unified => V1Control::Unified(u),
            // Without the freezer, `cgroup.kill` is the better way to end a run.
            (Some(u), Some(_)) if freezer.is_none() => V1Control::Unified(u),
            (_, Some(cpuacct)) => V1Control::Cpuacct { cpuacct, freezer },
            (Some(u), None) => V1Control::Unified(u),
            (None, None) => return Err(CgroupError::NoLayout(base.to_path_buf())),
        };
        Ok(Layout::V1 {
            memory,
            pids,
            control,
        })
    }

    /// The directory in a cgroup2 hierarchy, if the layout has one.
    pub fn v2_dir(&self) -> Option<&Path> {
        match self {
            Layout::V2 { root } => Some(root),
            Layout::V1 {
                control: V1Control::Unified(u),
                ..
            } => Some(u),
            Layout::V1 { .. } => None,
        }
    }

    /// Every directory (one per hierarchy).
    pub fn all(&self) -> Vec<&Path> {
        match self {
            Layout::V2 { root } => vec![root],
            Layout::V1 {
                memory,
                pids,
                control,
            } => {
                let mut all = vec![memory.as_path(), pids.as_path()];
                match control {
                    V1Control::Unified(u) => all.push(u),
                    V1Control::Cpuacct { cpuacct, freezer } => {
                        all.push(cpuacct);
                        all.extend(freezer.as_deref());
                    }
                }
                all
            }
        }
    }

    /// The same shape with `f` applied to every directory.
    fn try_map<E>(&self, mut f: impl FnMut(&Path) -> Result<PathBuf, E>) -> Result<Layout, E> {
        Ok(match self {
            Layout::V2 { root } => Layout::V2 { root: f(root)? },
            Layout::V1 {
                memory,
                pids,
                control,
            } => Layout::V1 {
                memory: f(memory)?,
                pids: f(pids)?,
                control: match control {
                    V1Control::Unified(u) => V1Control::Unified(f(u)?),
                    V1Control::Cpuacct { cpuacct, freezer } => V1Control::Cpuacct {
                        cpuacct: f(cpuacct)?,
                        freezer: freezer.as_deref().map(&mut f).transpose()?,
                    },
                },
            },
        })
    }

    /// Removes the cgroups that runners which died (killed with SIGKILL, say) left behind:
    /// those under `physiojudge/` whose name carries the id of a process that no longer
    /// exists (`alive` says which do). Their processes are gone already (each run's init
    /// dies with its runner), so only empty directories remain. Returns how many went.
    pub fn sweep(&self, alive: impl Fn(u32) -> bool) -> usize {
        let mut removed = 0;
        for h in self.all() {
            let Ok(entries) = std::fs::read_dir(h.join(PARENT)) else {
                continue;
            };
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if owner(&name).is_some_and(|pid| !alive(pid))
                    && std::fs::remove_dir(e.path()).is_ok()
                {
                    removed += 1;
                }
            }
        }
        removed
    }

    /// Moves the calling process into the cgroup it is already in, in the hierarchy its
    /// runs join first: a move that changes nothing, made for its side effect. Without
    /// `favordynmods` on the host (docs/sandbox.md), the first move into a cgroup after a
    /// quiet spell waits for an RCU grace period (the kernel switches the lock every
    /// fork takes to its slow mode; 10–20 ms on a loaded VM here, the largest part of a
    /// one-shot run), and moves within about a grace period of the last one do not wait.
    /// A one-shot runner calls this on a thread of its own as it starts, so that the
    /// wait overlaps starting the slot rather than delaying the program's move.
    pub fn prime_moves(&self) -> Result<(), CgroupError> {
        let (hierarchy, want) = match self {
            Layout::V2 { root } => (root, None),
            Layout::V1 { pids, .. } => (pids, Some("pids")),
        };
        let own = Path::new("/proc/self/cgroup");
        let text = std::fs::read_to_string(own).map_err(io(own))?;
        // `ID:CONTROLLERS:PATH`; the v2 line has no controllers.
        let path = text
            .lines()
            .filter_map(|l| {
                let mut f = l.splitn(3, ':');
                Some((f.next()?, f.next()?, f.next()?))
            })
            .find(|(_, controllers, _)| match want {
                Some(c) => controllers.split(',').any(|x| x == c),
                None => controllers.is_empty(),
            })
            .map(|(_, _, path)| path.trim_start_matches('/'))
            .ok_or_else(|| CgroupError::Parse {
                path: own.to_path_buf(),
                what: "this process's cgroup",
                text: text.clone(),
            })?;
        write(&hierarchy.join(path).join("cgroup.procs"), "0")
    }

    pub fn version(&self) -> u8 {
        match self {
            Layout::V2 { .. } => 2,
            Layout::V1 { .. } => 1,
        }
    }

    /// Creates the cgroup `physiojudge/<name>` with its limits.
    pub fn create(&self, name: &str, limits: CgroupLimits) -> Result<Cgroup, CgroupError> {
        let cg = self.make(name)?;
        cg.limit(limits)?;
        Ok(cg)
    }

    /// Creates the cgroup `physiojudge/<name>`, without limits yet ([`Cgroup::limit`]).
    pub fn make(&self, name: &str) -> Result<Cgroup, CgroupError> {
        if let Layout::V2 { root } = self {
            // Controllers must be enabled in the parent of every cgroup that uses them:
            // the root gives them to `physiojudge`, which gives them to the runs.
            enable_v2_controllers(root)?;
        }
        let mut made = Vec::new();
        let dirs = self.try_map(|hierarchy| {
            let parent = hierarchy.join(PARENT);
            match std::fs::create_dir(&parent) {
                Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                    return Err(io(&parent)(e));
                }
                _ => {}
            }
            if matches!(self, Layout::V2 { .. }) {
                enable_v2_controllers(&parent)?;
            }
            let dir = parent.join(name);
            std::fs::create_dir(&dir).map_err(io(&dir))?;
            made.push(dir.clone());
            Ok(dir)
        });
        let dirs = match dirs {
            Ok(d) => d,
            Err(e) => {
                for d in made.iter().rev() {
                    let _ = std::fs::remove_dir(d);
                }
                return Err(e);
            }
        };
        // From here on, dropping the cgroup removes it.
        Ok(Cgroup {
            dirs,
            removed: false,
        })
    }
}

impl Cgroup {
    /// Sets the limits (before any process joins).
    pub fn limit(&self, limits: CgroupLimits) -> Result<(), CgroupError> {
        let bytes = limits.memory_bytes.to_string();
        let pids = limits.pids.to_string();
        match &self.dirs {
            Layout::V2 { root: dir } => {
                write(&dir.join("memory.max"), &bytes)?;
                // Optional files: absent without swap accounting, or on older kernels.
                optional(write(&dir.join("memory.swap.max"), "0"))?;
                optional(write(&dir.join("memory.oom.group"), "1"))?;
                write(&dir.join("pids.max"), &pids)?;
            }
            Layout::V1 {
                memory, pids: p, ..
            } => {
                // memory+swap no larger than memory: no swapping. Absent when the kernel
                // does no swap accounting, and then there is nothing to limit. The kernel
                // keeps memsw ≥ memory at every step, so a limit raised (a made-ahead
                // cgroup's) needs memsw lifted first.
                let memsw = memory.join("memory.memsw.limit_in_bytes");
                optional(write(&memsw, "-1"))?;
                write(&memory.join("memory.limit_in_bytes"), &bytes)?;
                optional(write(&memsw, &bytes))?;
                // v1 charges socket buffers to a cgroup only once this limit is set (v2
                // always does): without it a run could queue gigabytes in loopback TCP
                // connections it never reads, memory no limit of the run counts.
                optional(write(
                    &memory.join("memory.kmem.tcp.limit_in_bytes"),
                    &bytes,
                ))?;
                write(&p.join("pids.max"), &pids)?;
            }
        }
        Ok(())
    }
}

fn enable_v2_controllers(dir: &Path) -> Result<(), CgroupError> {
    let path = dir.join("cgroup.subtree_control");
    let enabled = std::fs::read_to_string(&path).unwrap_or_default();
    for c in ["memory", "pids", "cpu"] {
        if !enabled.split_whitespace().any(|e| e == c) {
            write(&path, &format!("+{c}"))?;
        }
    }
    Ok(())
}

/// Treats a missing interface file as "nothing to do".
fn optional(r: Result<(), CgroupError>) -> Result<(), CgroupError> {
    match r {
        Err(CgroupError::Io { source, .. })
            if matches!(
                source.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied
            ) =>
        {
            Ok(())
        }
        r => r,
    }
}

/// The cgroup of one run. Dropping it kills what is left in it and removes it.
#[derive(Debug)]
pub struct Cgroup {
    dirs: Layout,
    removed: bool,
}

impl Cgroup {
    /// Every directory of this cgroup (one per hierarchy).
    pub fn dirs(&self) -> Vec<&Path> {
        self.dirs.all()
    }

    /// The file of each directory that a single-threaded process writes `0` into to join
    /// the cgroup, open for writing: `tasks` in a v1 hierarchy, `cgroup.procs` in a v2
    /// one. `tasks` moves the writing thread alone, which the kernel does without taking
    /// the lock every fork takes (a process, moved through `cgroup.procs`, needs it: on a
    /// host without `favordynmods`, the first such move after a quiet spell waits for an
    /// RCU grace period). The thread is the whole process here: the program joins before
    /// it executes anything, with one thread.
    pub fn open_joins(&self) -> Result<Vec<std::os::fd::OwnedFd>, CgroupError> {
        let v2 = self.dirs.v2_dir();
        self.dirs()
            .iter()
            .map(|d| {
                let file = d.join(if Some(*d) == v2 {
                    "cgroup.procs"
                } else {
                    "tasks"
                });
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(&file)
                    .map(std::os::fd::OwnedFd::from)
                    .map_err(io(&file))
            })
            .collect()
    }

    /// Moves a process (and so its future children) into the cgroup.
    pub fn add(&self, pid: u32) -> Result<(), CgroupError> {
        for dir in self.dirs() {
            write(&dir.join("cgroup.procs"), &pid.to_string())?;
        }
        Ok(())
    }

    /// CPU time of every process that ran in the cgroup (user + system).
    pub fn cpu_time(&self) -> Result<Duration, CgroupError> {
        match &self.dirs {
            Layout::V2 { root: dir } => Ok(Duration::from_micros(keyed(
                &dir.join("cpu.stat"),
                "usage_usec",
            )?)),
            Layout::V1 {
                control: V1Control::Unified(dir),
                ..
            } => Ok(Duration::from_micros(keyed(
                &dir.join("cpu.stat"),
                "usage_usec",
            )?)),
            Layout::V1 {
                control: V1Control::Cpuacct { cpuacct, .. },
                ..
            } => Ok(Duration::from_nanos(number(
                &cpuacct.join("cpuacct.usage"),
                "CPU nanoseconds",
            )?)),
        }
    }

    /// Peak memory of the cgroup; `None` where the kernel does not record it (v2 before
    /// Linux 5.19).
    pub fn memory_peak(&self) -> Option<u64> {
        match &self.dirs {
            Layout::V2 { root: dir } => number(&dir.join("memory.peak"), "bytes").ok(),
            Layout::V1 { memory, .. } => {
                number(&memory.join("memory.max_usage_in_bytes"), "bytes").ok()
            }
        }
    }

    /// How many times the OOM killer killed a process of the cgroup.
    pub fn oom_kills(&self) -> Result<u64, CgroupError> {
        match &self.dirs {
            Layout::V2 { root: dir } => keyed(&dir.join("memory.events"), "oom_kill"),
            Layout::V1 { memory, .. } => keyed(&memory.join("memory.oom_control"), "oom_kill"),
        }
    }

    /// How many times a fork failed on the pids limit.
    pub fn pids_limit_hits(&self) -> Result<u64, CgroupError> {
        let dir = match &self.dirs {
            Layout::V2 { root: dir } => dir,
            Layout::V1 { pids, .. } => pids,
        };
        keyed(&dir.join("pids.events"), "max")
    }

    /// The processes in the cgroup now.
    pub fn procs(&self) -> Result<Vec<i32>, CgroupError> {
        let dir = match &self.dirs {
            Layout::V2 { root: dir } => dir,
            Layout::V1 { pids, .. } => pids,
        };
        let path = dir.join("cgroup.procs");
        Ok(read(&path)?
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect())
    }

    /// Kills every process in the cgroup and waits (up to a second) until none is left.
    /// With `cgroup.kill` the kernel does it atomically; otherwise the processes are
    /// frozen first (when the freezer exists), so that none forks during the sweep.
    pub fn kill_all(&self) -> Result<(), CgroupError> {
        let kill_file = match &self.dirs {
            Layout::V2 { root: dir } => Some(dir.join("cgroup.kill")),
            Layout::V1 {
                control: V1Control::Unified(u),
                ..
            } => Some(u.join("cgroup.kill")),
            Layout::V1 { .. } => None,
        }
        .filter(|k| k.exists());
        let deadline = Instant::now() + Duration::from_secs(1);
        loop {
            let procs = self.procs()?;
            if procs.is_empty() {
                return Ok(());
            }
            if let Some(k) = &kill_file {
                write(k, "1")?;
            } else {
                let freezer = match &self.dirs {
                    Layout::V1 {
                        control:
                            V1Control::Cpuacct {
                                freezer: Some(f), ..
                            },
                        ..
                    } => Some(f.join("freezer.state")),
                    _ => None,
                };
                if let Some(f) = &freezer {
                    optional(write(f, "FROZEN"))?;
                }
                for p in procs {
                    // Gone already is fine: that is what we want.
                    let _ = kill(Pid::from_raw(p), Signal::SIGKILL);
                }
                if let Some(f) = &freezer {
                    optional(write(f, "THAWED"))?;
                }
            }
            if Instant::now() > deadline {
                return Err(CgroupError::Survivors(self.dirs()[0].to_path_buf()));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Kills what is left and removes the cgroup's directories.
    pub fn remove(mut self) -> Result<(), CgroupError> {
        self.remove_dirs()
    }

    fn remove_dirs(&mut self) -> Result<(), CgroupError> {
        self.kill_all()?;
        let dirs: Vec<PathBuf> = self.dirs().into_iter().map(Path::to_path_buf).collect();
        for dir in dirs {
            // A cgroup directory can be removed once its last process is reaped; the
            // kernel may take a moment after the kill.
            let mut tries = 0;
            loop {
                match std::fs::remove_dir(&dir) {
                    Ok(()) => break,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
                    Err(e) if tries < 100 && e.raw_os_error() == Some(nix::libc::EBUSY) => {
                        tries += 1;
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    Err(e) => return Err(io(&dir)(e)),
                }
            }
        }
        self.removed = true;
        Ok(())
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        if self.removed {
            return;
        }
        if let Err(e) = self.remove_dirs() {
            eprintln!("physiojudge sandbox: cleaning up a cgroup: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A simulated cgroup v2 root: the interface files of the root only; the test plays
    /// the kernel by writing the files a real cgroupfs would provide.
    fn fake_v2() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(
            t.path().join("cgroup.controllers"),
            "cpuset cpu io memory hugetlb pids rdma misc\n",
        )
        .unwrap();
        std::fs::write(t.path().join("cgroup.subtree_control"), "").unwrap();
        t
    }

    /// The move that primes the kernel's lock goes to the cgroup this process is in
    /// (as `/proc/self/cgroup` names it), and to no other.
    #[test]
    fn priming_moves_this_process_where_it_already_is() {
        let t = fake_v2();
        let layout = Layout::detect(t.path()).unwrap();
        let text = std::fs::read_to_string("/proc/self/cgroup").unwrap();
        let Some(own) = text.lines().find_map(|l| l.strip_prefix("0::")) else {
            eprintln!("skipped: no cgroup2 line in /proc/self/cgroup");
            return;
        };
        let dir = t.path().join(own.trim_start_matches('/'));
        std::fs::create_dir_all(&dir).unwrap();
        layout.prime_moves().unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join("cgroup.procs")).unwrap(),
            "0"
        );
    }

    #[test]
    fn v2_layout_limits_and_accounting() {
        let t = fake_v2();
        let layout = Layout::detect(t.path()).unwrap();
        assert_eq!(
            layout,
            Layout::V2 {
                root: t.path().to_path_buf()
            }
        );
        let cg = layout
            .create(
                "run1",
                CgroupLimits {
                    memory_bytes: 64 << 20,
                    pids: 8,
                },
            )
            .unwrap();
        let dir = t.path().join("physiojudge/run1");
        let file = |n: &str| std::fs::read_to_string(dir.join(n)).unwrap();
        assert_eq!(file("memory.max"), "67108864");
        assert_eq!(file("memory.swap.max"), "0");
        assert_eq!(file("memory.oom.group"), "1");
        assert_eq!(file("pids.max"), "8");
        // Each `+controller` write replaces the simulated file; the last one stays.
        assert_eq!(
            std::fs::read_to_string(t.path().join("physiojudge/cgroup.subtree_control")).unwrap(),
            "+cpu"
        );

        std::fs::write(
            dir.join("cpu.stat"),
            "usage_usec 1500000\nuser_usec 1000000\nsystem_usec 500000\n",
        )
        .unwrap();
        std::fs::write(dir.join("memory.peak"), "12345678\n").unwrap();
        std::fs::write(
            dir.join("memory.events"),
            "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\noom_group_kill 1\n",
        )
        .unwrap();
        std::fs::write(dir.join("pids.events"), "max 2\n").unwrap();
        std::fs::write(dir.join("cgroup.procs"), "").unwrap();
        assert_eq!(cg.cpu_time().unwrap(), Duration::from_millis(1500));
        assert_eq!(cg.memory_peak(), Some(12345678));
        assert_eq!(cg.oom_kills().unwrap(), 1);
        assert_eq!(cg.pids_limit_hits().unwrap(), 2);
        cg.add(4242).unwrap();
        assert_eq!(file("cgroup.procs"), "4242");
        assert_eq!(cg.procs().unwrap(), [4242]);

        // A stat file the kernel would never write is an error naming the file.
        std::fs::write(dir.join("cpu.stat"), "garbage\n").unwrap();
        let e = cg.cpu_time().unwrap_err().to_string();
        assert!(e.contains("cpu.stat") && e.contains("usage_usec"), "{e}");
        std::fs::remove_file(dir.join("memory.peak")).unwrap();
        assert_eq!(cg.memory_peak(), None);
        // The simulated directory holds plain files, so it cannot be removed as a real
        // cgroup would be; clean-up reports that instead of panicking.
        std::fs::write(dir.join("cgroup.procs"), "").unwrap();
        assert!(cg.remove().is_err());
    }

    /// A simulated v1 tree with `extra` hierarchies (directory, file that marks it).
    fn fake_v1(extra: &[(&str, &str)]) -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let b = t.path();
        for (d, f) in [
            ("memory", "memory.limit_in_bytes"),
            ("pids", "cgroup.procs"),
        ]
        .iter()
        .chain(extra)
        {
            std::fs::create_dir_all(b.join(d)).unwrap();
            std::fs::write(b.join(d).join(f), "").unwrap();
        }
        t
    }

    fn limits() -> CgroupLimits {
        CgroupLimits {
            memory_bytes: 1 << 30,
            pids: 16,
        }
    }

    #[test]
    fn v1_layout_on_a_hybrid_tree() {
        // The cgroup2 mount has no controllers, but counts CPU time and kills.
        let t = fake_v1(&[
            ("cpuacct", "cpuacct.usage"),
            ("freezer", "cgroup.procs"),
            ("unified", "cgroup.procs"),
            ("unified", "cpu.stat"),
        ]);
        let b = t.path();
        std::fs::write(b.join("unified/cgroup.controllers"), "hugetlb\n").unwrap();
        let layout = Layout::detect(b).unwrap();
        assert_eq!(layout.version(), 1);
        let cg = layout.create("run2", limits()).unwrap();
        // memory, pids and the unified one: neither cpuacct nor the freezer is needed.
        let dirs: Vec<PathBuf> = cg.dirs().iter().map(|d| d.to_path_buf()).collect();
        let want = ["memory", "pids", "unified"].map(|h| b.join(h).join("physiojudge/run2"));
        assert_eq!(dirs, want);
        let m = b.join("memory/physiojudge/run2");
        assert_eq!(
            std::fs::read_to_string(m.join("memory.limit_in_bytes")).unwrap(),
            "1073741824"
        );
        assert_eq!(
            std::fs::read_to_string(m.join("memory.memsw.limit_in_bytes")).unwrap(),
            "1073741824"
        );
        assert_eq!(
            std::fs::read_to_string(b.join("pids/physiojudge/run2/pids.max")).unwrap(),
            "16"
        );
        std::fs::write(
            b.join("unified/physiojudge/run2/cpu.stat"),
            "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n",
        )
        .unwrap();
        std::fs::write(m.join("memory.max_usage_in_bytes"), "4096\n").unwrap();
        std::fs::write(
            m.join("memory.oom_control"),
            "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n",
        )
        .unwrap();
        assert_eq!(cg.cpu_time().unwrap(), Duration::from_millis(2500));
        assert_eq!(cg.memory_peak(), Some(4096));
        assert_eq!(cg.oom_kills().unwrap(), 2);
        // No cgroup.procs in the simulated pids directory: clean-up says so.
        assert!(
            cg.remove()
                .unwrap_err()
                .to_string()
                .contains("cgroup.procs")
        );
    }

    #[test]
    fn v1_layout_without_cgroup2_counts_with_cpuacct() {
        let t = fake_v1(&[("cpuacct", "cpuacct.usage"), ("freezer", "cgroup.procs")]);
        let b = t.path();
        let cg = Layout::detect(b).unwrap().create("run3", limits()).unwrap();
        let dirs: Vec<PathBuf> = cg.dirs().iter().map(|d| d.to_path_buf()).collect();
        let want =
            ["memory", "pids", "cpuacct", "freezer"].map(|h| b.join(h).join("physiojudge/run3"));
        assert_eq!(dirs, want);
        std::fs::write(
            b.join("cpuacct/physiojudge/run3/cpuacct.usage"),
            "2500000000\n",
        )
        .unwrap();
        assert_eq!(cg.cpu_time().unwrap(), Duration::from_millis(2500));
        // Without cpuacct or a cgroup2 mount there is nothing to count CPU time with.
        let t = fake_v1(&[("freezer", "cgroup.procs")]);
        assert!(matches!(
            Layout::detect(t.path()),
            Err(CgroupError::NoLayout(_))
        ));
    }

    /// A one-shot run takes cpuacct and the freezer over the controller-less cgroup2
    /// mount, so that it joins v1 hierarchies only, each through `tasks`; without the
    /// freezer it keeps the cgroup2 mount (for `cgroup.kill`), joined through
    /// `cgroup.procs`.
    #[test]
    fn a_one_shot_layout_on_a_hybrid_tree_is_all_v1_joined_through_tasks() {
        let t = fake_v1(&[
            ("cpuacct", "cpuacct.usage"),
            ("freezer", "cgroup.procs"),
            ("unified", "cgroup.procs"),
            ("unified", "cpu.stat"),
        ]);
        let b = t.path();
        let layout = Layout::detect_for_one_shot(b).unwrap();
        assert_eq!(layout.v2_dir(), None);
        assert_eq!(
            Layout::detect(b).unwrap().v2_dir(),
            Some(&*b.join("unified"))
        );
        let cg = layout.make("run4").unwrap();
        let want =
            ["memory", "pids", "cpuacct", "freezer"].map(|h| b.join(h).join("physiojudge/run4"));
        let dirs: Vec<PathBuf> = cg.dirs().iter().map(|d| d.to_path_buf()).collect();
        assert_eq!(dirs, want);
        for d in &want {
            std::fs::write(d.join("tasks"), "").unwrap();
        }
        assert_eq!(cg.open_joins().unwrap().len(), 4);

        std::fs::remove_dir_all(b.join("freezer")).unwrap();
        let layout = Layout::detect_for_one_shot(b).unwrap();
        assert_eq!(layout.v2_dir(), Some(&*b.join("unified")));
        let cg = layout.make("run5").unwrap();
        // The cgroup2 directory is joined through `cgroup.procs`, not `tasks`: only the
        // v1 ones have `tasks` here, so opening fails on the one that is missing.
        for h in ["memory", "pids"] {
            std::fs::write(b.join(h).join("physiojudge/run5/tasks"), "").unwrap();
        }
        let err = cg.open_joins().unwrap_err().to_string();
        assert!(
            err.contains("unified/physiojudge/run5/cgroup.procs"),
            "{err}"
        );
    }

    #[test]
    fn sweep_removes_only_the_cgroups_of_dead_runners() {
        let t = fake_v2();
        let layout = Layout::detect(t.path()).unwrap();
        let parent = t.path().join(PARENT);
        for name in ["slot0-100-0", "slot1-200-3", "slot0-100-1", "not-a-run"] {
            std::fs::create_dir_all(parent.join(name)).unwrap();
        }
        assert_eq!(owner("slot1-200-3"), Some(200));
        assert_eq!(layout.sweep(|pid| pid == 200), 2);
        let mut left: Vec<String> = std::fs::read_dir(&parent)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !n.contains('.'))
            .collect();
        left.sort();
        assert_eq!(left, ["not-a-run", "slot1-200-3"]);
    }

    #[test]
    fn no_layout_is_a_clear_error() {
        let t = tempfile::tempdir().unwrap();
        let e = Layout::detect(t.path()).unwrap_err().to_string();
        assert!(e.contains("no usable cgroup layout"), "{e}");
    }
}
