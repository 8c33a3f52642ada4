//! Running one program in the sandbox: start the inside ([`crate::init`]) in new
//! namespaces and a fresh cgroup, watch the limits, collect the output, and turn what
//! happened into a [`RunResult`].

use std::collections::HashMap;
use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use nix::libc;

use crate::cgroup::{CgroupLimits, Layout};
use crate::spec::{Bind, Mountpoint, RunSpec, SlotSpec};
use crate::{Limits, RunResult, Verdict};

/// The first uid (and gid) of the sandbox slots: slot `n` runs as `BASE_ID + n`, so runs
/// in different slots cannot touch each other's files or processes.
pub const BASE_ID: u32 = 60000;

/// The host directories every sandbox sees read-only (those that exist).
pub const SYSTEM_DIRS: &[&str] = &["/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32"];

/// How to start the inside: a program (this binary, or the crate's own helper) and the
/// arguments that make it run [`crate::init::main`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitProgram {
    pub path: PathBuf,
    pub args: Vec<String>,
}

/// One run: what to execute, what it sees and what it may use.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub argv: Vec<String>,
    /// The program's whole environment (nothing of the caller's leaks in).
    pub env: Vec<(String, String)>,
    /// Working directory inside the sandbox.
    pub cwd: PathBuf,
    /// Extra binds. A writable bind's source directory is given to the slot's uid.
    pub binds: Vec<Bind>,
    /// Show the system directories and `/etc` of this root file system (a runtime's
    /// Debian userland) rather than the host's ([`SlotSpec::root`]).
    pub system_root: Option<PathBuf>,
    pub limits: Limits,
    /// Concurrent runs use different slots.
    pub slot: u32,
    /// A file fed on stdin (else `/dev/null`). Not used by [`run_serving`], whose caller
    /// talks to the program over its stdin and stdout.
    pub stdin: Option<PathBuf>,
    /// Pin the program to this CPU (and, in [`run_serving`], the thread that talks to it):
    /// a conversation of small messages costs several times more when its two ends wake
    /// each other across CPUs (an inter-processor interrupt each way, a VM exit on a
    /// virtual machine). The program may move itself within the host's allowed CPUs; this
    /// is about speed, not containment.
    pub cpu: Option<usize>,
    pub init: InitProgram,
    /// Where the cgroup hierarchies are mounted.
    pub cgroup_base: PathBuf,
    /// Set by the caller to end the run (checked as often as the limits): every process
    /// of the run is killed and the verdict is `stopped`.
    pub stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// This process runs this one program in its slot and then exits (a one-shot
    /// command): nothing is made ahead for a next run of the slot, neither the next
    /// program by the spawner nor the next cgroup by the runner, and the program keeps
    /// the spawner's network namespace, new and unused, rather than making one. A later
    /// run in the same slot still works, only without what was made ahead.
    pub once: bool,
}

impl RunConfig {
    /// A run of `argv` with the default limits and environment, in slot 0.
    pub fn new(argv: Vec<String>, init: InitProgram) -> RunConfig {
        RunConfig {
            argv,
            env: default_env(),
            cwd: PathBuf::from("/"),
            binds: Vec::new(),
            system_root: None,
            limits: Limits::default(),
            slot: 0,
            stdin: None,
            cpu: None,
            init,
            cgroup_base: PathBuf::from("/sys/fs/cgroup"),
            stop: None,
            once: false,
        }
    }
}

/// PATH, a writable HOME, UTF-8, and Python made reproducible (fixed hash seed) and
/// quiet on a read-only file system (no bytecode files).
pub fn default_env() -> Vec<(String, String)> {
    [
        ("PATH", "/usr/local/bin:/usr/bin:/bin"),
        ("HOME", "/tmp"),
        ("LANG", "C.UTF-8"),
        ("PYTHONHASHSEED", "0"),
        ("PYTHONDONTWRITEBYTECODE", "1"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// The record of a run and what it wrote (up to the output limit).
#[derive(Debug, Clone)]
pub struct Run {
    pub result: RunResult,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// The program's standard input and output as [`run_serving`] hands them to its caller.
pub struct Conversation {
    /// What is written here, the program reads on its standard input.
    pub to_program: std::fs::File,
    /// What the program writes on its standard output.
    pub from_program: std::fs::File,
}

/// One of the pipes a run writes to, read as it comes: the first `cap` bytes kept, all
/// counted. Closed at end of file, or once more than `cap` bytes came (the program may
/// then die of SIGPIPE: the flood is the reason either way).
struct Stream {
    fd: Option<OwnedFd>,
    kept: Vec<u8>,
    total: u64,
    cap: u64,
}

impl Stream {
    fn new(fd: OwnedFd, cap: u64) -> Stream {
        Stream {
            fd: Some(fd),
            kept: Vec::new(),
            total: 0,
            cap,
        }
    }

    /// Nothing to read (the stream goes elsewhere).
    fn none() -> Stream {
        Stream {
            fd: None,
            kept: Vec::new(),
            total: 0,
            cap: 0,
        }
    }

    fn read_some(&mut self) {
        let Some(fd) = &self.fd else { return };
        let mut buf = [0u8; 16384];
        match nix::unistd::read(fd, &mut buf) {
            Err(nix::errno::Errno::EINTR | nix::errno::Errno::EAGAIN) => {}
            Ok(0) | Err(_) => self.fd = None,
            Ok(n) => {
                let room = self.cap.saturating_sub(self.kept.len() as u64) as usize;
                self.kept.extend_from_slice(&buf[..n.min(room)]);
                self.total += n as u64;
                if self.total > self.cap {
                    self.fd = None;
                }
            }
        }
    }

    fn over(&self) -> bool {
        self.total > self.cap
    }
}

/// How much of the status pipe is read (only the sandbox's own code writes to it).
const STATUS_CAP: u64 = 64 << 10;
/// How often the limits are checked while the program runs.
const CHECK_EVERY: Duration = Duration::from_millis(10);

fn internal(message: String, wall: Duration) -> Run {
    Run {
        result: RunResult {
            verdict: Verdict::InternalError,
            exit_code: None,
            signal: None,
            cpu_time_s: 0.0,
            wall_time_s: wall.as_secs_f64(),
            peak_memory_bytes: None,
            instructions: None,
            stdout_bytes: 0,
            stderr_bytes: 0,
            stdout_truncated: false,
            stderr_truncated: false,
            message: Some(message),
        },
        stdout: Vec::new(),
        stderr: Vec::new(),
    }
}

/// Why the runner itself stopped the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Cpu,
    Wall,
    Output,
    /// The caller's `RunConfig::stop`.
    Caller,
}

/// The cgroup layout under `base`, found once per process (the hierarchies a host mounts
/// do not change under a running judge).
/// A one-shot run's may differ (`Layout::detect_for_one_shot`).
fn layout(base: &std::path::Path, once: bool) -> Result<Layout, String> {
    type Layouts = Mutex<HashMap<(PathBuf, bool), Layout>>;
    static LAYOUTS: OnceLock<Layouts> = OnceLock::new();
    let mut known = LAYOUTS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let key = (base.to_path_buf(), once);
    if let Some(l) = known.get(&key) {
        return Ok(l.clone());
    }
    let l = if once {
        Layout::detect_for_one_shot(base)
    } else {
        Layout::detect(base)
    }
    .map_err(|e| e.to_string())?;
    known.insert(key, l.clone());
    Ok(l)
}

/// The world of the slot `cfg` runs in.
fn slot_spec(cfg: &RunConfig) -> SlotSpec {
    SlotSpec {
        system: SYSTEM_DIRS.iter().map(PathBuf::from).collect(),
        root: cfg.system_root.clone(),
        uid: BASE_ID + cfg.slot,
        gid: BASE_ID + cfg.slot,
        tmp_bytes: cfg.limits.tmp_bytes,
        once: cfg.once,
    }
}

/// Starts the slot of a run to come now, rather than when it runs: for a one-shot run
/// ([`RunConfig::once`]) in a process that is about to start other threads. Called
/// while the process has one thread, it forks the slot's spawner instead of executing
/// the init program again, which saves the run about as long as the rest of its start
/// takes. Otherwise (or if starting fails) the run starts its slot as it always does.
pub fn start_slot(cfg: &RunConfig) {
    let slot = slot_spec(cfg);
    crate::spawner::with_slot(&cfg.init, cfg.slot, &slot, |spawner| spawner.start());
}

/// Runs the program and says how it ended. Never fails: a sandbox failure is a result
/// with the `internal_error` verdict and a message.
pub fn run(cfg: &RunConfig) -> Run {
    run_serving(cfg, None::<fn(Conversation)>).0
}

/// Runs the program while `serve` talks to it over its standard input and output, on a
/// thread of its own (pinned to [`RunConfig::cpu`] if set), and says how the run ended
/// and what `serve` returned. The run's limits hold as in [`run`]: when the program ends
/// or is stopped, its ends of the pipes close, so `serve` sees end of file or a broken
/// pipe; when `serve` returns, its ends close and the program sees the same. `serve`
/// does not run when the sandbox fails before the program starts (`None`).
/// Without `serve`, this is [`run`].
pub fn run_serving<T: Send>(
    cfg: &RunConfig,
    serve: Option<impl FnOnce(Conversation) -> T + Send>,
) -> (Run, Option<T>) {
    let start = Instant::now();
    let mut served = None;
    let slot = slot_spec(cfg);
    let run = crate::spawner::with_slot(&cfg.init, cfg.slot, &slot, |spawner| {
        run_in_slot(cfg, spawner, serve, &mut served)
    });
    match run {
        Ok(r) => (r, served),
        Err(e) => (internal(e, start.elapsed()), served),
    }
}

/// Pins the calling thread (or process, before it has threads) to `cpu`.
pub(crate) fn pin_thread(cpu: usize) -> Result<(), String> {
    let mut set = nix::sched::CpuSet::new();
    set.set(cpu)
        .and_then(|()| nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set))
        .map_err(|e| format!("pinning to CPU {cpu}: {e}"))
}

/// One run, holding its slot from the start until its last process is gone.
fn run_in_slot<T: Send>(
    cfg: &RunConfig,
    spawner: &mut crate::spawner::Slot,
    serve: Option<impl FnOnce(Conversation) -> T + Send>,
    served: &mut Option<T>,
) -> Result<Run, String> {
    let id = BASE_ID + cfg.slot;
    let layout = layout(&cfg.cgroup_base, cfg.once)?;
    // A slot's first run starts its spawner now: executing it and building the slot's
    // root then overlap with the cgroup and binds made below. First of all, so that a
    // one-shot run's process still has one thread and can fork it (`spawner::Spawner`).
    spawner.start();
    if cfg.once && layout.v2_dir().is_some() {
        // The program's move into a v2 cgroup would wait for an RCU grace period on a
        // host without `favordynmods`: started now, the wait overlaps starting the slot.
        // Nothing depends on it (a failure only leaves the wait where it was). A move
        // into v1 cgroups only does not wait (`Cgroup::open_joins`).
        let layout = layout.clone();
        let _ = std::thread::Builder::new()
            .name("sandbox-prime".into())
            .spawn(move || layout.prime_moves());
    }
    // What runners killed before they could clean up left behind: once per process, not
    // on every run (a runner that dies takes only its own runs with it).
    static SWEEP: std::sync::Once = std::sync::Once::new();
    SWEEP.call_once(|| {
        layout.sweep(|pid| std::path::Path::new(&format!("/proc/{pid}")).exists());
    });
    let limits = CgroupLimits {
        memory_bytes: cfg.limits.memory_bytes,
        pids: cfg.limits.pids,
    };
    let mut ready =
        crate::ahead::take(&layout, cfg.slot, limits).map_err(|e| format!("cgroup: {e}"))?;
    let cgroup_procs = std::mem::take(&mut ready.procs);
    let cgroup = &ready.cgroup;
    let mut mountpoints = Vec::with_capacity(cfg.binds.len());
    let mut trees = Vec::with_capacity(cfg.binds.len());
    for b in &cfg.binds {
        if !b.dst.is_absolute() {
            return Err(format!("bind target {} is not absolute", b.dst.display()));
        }
        let meta = std::fs::metadata(&b.src)
            .map_err(|e| format!("cannot bind {}: {e}", b.src.display()))?;
        if b.writable {
            nix::unistd::chown(
                &b.src,
                Some(nix::unistd::Uid::from_raw(id)),
                Some(nix::unistd::Gid::from_raw(id)),
            )
            .map_err(|e| format!("giving {} to the sandbox uid: {e}", b.src.display()))?;
        }
        // A read-only bind is a view with inodes of its own (inotify watches and locks on
        // it stay within the run); a writable one is the run's own directory.
        trees.push(if b.writable {
            crate::tree::clone(&b.src)?
        } else {
            crate::tree::view(&b.src)?
        });
        mountpoints.push(Mountpoint {
            dst: b.dst.clone(),
            file: !meta.is_dir(),
        });
    }
    let request = crate::spec::Request {
        spec: RunSpec {
            binds: mountpoints,
            tmp_bytes: cfg.limits.tmp_bytes,
            cpu_seconds: cfg.limits.cpu_time.as_secs_f64().ceil() as u64,
            file_size_bytes: cfg.limits.file_size_bytes,
            open_files: cfg.limits.open_files,
            env: cfg.env.clone(),
            cwd: cfg.cwd.clone(),
            argv: cfg.argv.clone(),
            count_instructions: crate::instructions::available(),
            cpu: cfg.cpu,
        },
        cgroups: cgroup_procs.len(),
    };
    let pipe =
        || nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(|e| format!("pipe: {e}"));
    let (status_r, status_w) = pipe()?;
    let (stdout_r, stdout_w) = pipe()?;
    let (stderr_r, stderr_w) = pipe()?;
    // Serving: the caller writes the program's stdin and reads its stdout.
    let (stdin, to_program): (OwnedFd, _) = if serve.is_some() {
        let (r, w) = pipe()?;
        (r, Some(w))
    } else {
        let stdin_path = cfg
            .stdin
            .as_deref()
            .unwrap_or(std::path::Path::new("/dev/null"));
        let file = std::fs::File::open(stdin_path)
            .map_err(|e| format!("stdin {}: {e}", stdin_path.display()))?;
        (file.into(), None)
    };
    spawner.spawn(
        &request,
        &crate::spawner::Fds {
            stdin: stdin.as_fd(),
            stdout: stdout_w.as_fd(),
            stderr: stderr_w.as_fd(),
            status: status_w.as_fd(),
            cgroups: &cgroup_procs,
            trees: &trees,
        },
    )?;
    // The run's clock starts once its program has it, not before: a slot's first run
    // also starts its spawner and builds its root, a run may have waited for its slot or
    // for its program to be ready, and none of that is the program's time.
    let start = Instant::now();
    // Only the run holds the write ends now, so their closing is the run's end.
    drop((stdin, status_w, stdout_w, stderr_w, cgroup_procs, trees));
    std::thread::scope(|scope| {
        if let (Some(serve), Some(to_program)) = (serve, to_program) {
            let from_program = stdout_r;
            let cpu = cfg.cpu;
            let server = std::thread::Builder::new()
                .name("sandbox-serve".into())
                .spawn_scoped(scope, move || {
                    if let Some(cpu) = cpu {
                        // Slower if it fails, not wrong.
                        let _ = pin_thread(cpu);
                    }
                    serve(Conversation {
                        to_program: to_program.into(),
                        from_program: from_program.into(),
                    })
                });
            let server = match server {
                Ok(s) => s,
                Err(e) => {
                    // Its pipes are gone with the closure: the program sees end of file.
                    let _ = kill_all(cgroup, spawner);
                    return Err(format!("starting the serving thread: {e}"));
                }
            };
            let run = follow(cfg, spawner, cgroup, None, stderr_r, status_r, start);
            // The program is gone, so its ends are closed and the thread returns.
            *served = server.join().ok();
            run
        } else {
            follow(
                cfg,
                spawner,
                cgroup,
                Some(stdout_r),
                stderr_r,
                status_r,
                start,
            )
        }
    })
    .and_then(|(streams, stop, ended)| {
        // A one-shot slot serves no other run: its spawner (and with it the slot's init
        // and namespaces) goes now rather than when this process exits, so that its end
        // overlaps the run's accounts. Its end is part of the caller's wait when they
        // share an output pipe, which they hold until they are gone.
        if cfg.once {
            spawner.discard();
        }
        finish(cfg, &layout, ready, streams, stop, ended, start)
    })
}

/// What following a run saw: its three streams, why the runner stopped it (if it did),
/// and when it ended.
type Followed = ([Stream; 3], Option<Stop>, Option<Duration>);

/// Follows the run until its last process is gone: the status pipe (on which the spawner
/// reports the program's end, and which it closes once every process of the run is gone),
/// the outputs, and the limits every `CHECK_EVERY`.
fn follow(
    cfg: &RunConfig,
    spawner: &mut crate::spawner::Slot,
    cgroup: &crate::cgroup::Cgroup,
    stdout: Option<OwnedFd>,
    stderr: OwnedFd,
    status: OwnedFd,
    start: Instant,
) -> Result<Followed, String> {
    let cap = cfg.limits.output_bytes;
    let mut streams = [
        Stream::new(status, STATUS_CAP),
        stdout.map_or_else(Stream::none, |fd| Stream::new(fd, cap)),
        Stream::new(stderr, cap),
    ];
    let mut stop = None;
    let mut ended: Option<Duration> = None;
    let mut checked = Instant::now();
    // Once a kill has left survivors the slot is gone, and killing again would only wait.
    let mut discarded = false;
    loop {
        if ended.is_none() && (streams[0].fd.is_none() || reports_an_end(&streams[0].kept)) {
            ended = Some(start.elapsed());
            // Whatever the program left running; its end closes the outputs, and the
            // status pipe (the spawner supervises the run's processes until then).
            discarded = discarded || kill_all(cgroup, spawner);
        }
        // Every process of the run is dead, so the outputs end at once; a descriptor kept
        // open elsewhere by mistake must not hang the runner.
        if ended.is_some_and(|e| start.elapsed() > e + Duration::from_secs(5)) {
            streams.iter_mut().for_each(|s| s.fd = None);
        }
        let open: Vec<usize> = (0..streams.len())
            .filter(|&i| streams[i].fd.is_some())
            .collect();
        if open.is_empty() {
            break;
        }
        let mut fds: Vec<nix::poll::PollFd> = open
            .iter()
            .filter_map(|&i| streams[i].fd.as_ref())
            .map(|fd| nix::poll::PollFd::new(fd.as_fd(), nix::poll::PollFlags::POLLIN))
            .collect();
        let wait =
            nix::poll::PollTimeout::try_from(CHECK_EVERY).unwrap_or(nix::poll::PollTimeout::NONE);
        match nix::poll::poll(&mut fds, wait) {
            Ok(_) | Err(nix::errno::Errno::EINTR) => {}
            Err(e) => return Err(format!("poll: {e}")),
        }
        let ready: Vec<bool> = fds
            .iter()
            .map(|f| f.revents().is_some_and(|r| !r.is_empty()))
            .collect();
        drop(fds);
        for (&i, ready) in open.iter().zip(ready) {
            if ready {
                streams[i].read_some();
            }
        }
        let over = streams[1].over() || streams[2].over();
        if ended.is_none() && (over || checked.elapsed() >= CHECK_EVERY) {
            checked = Instant::now();
            let stopped = cfg
                .stop
                .as_ref()
                .is_some_and(|f| f.load(std::sync::atomic::Ordering::SeqCst));
            let reason = if stopped {
                Some(Stop::Caller)
            } else if over {
                Some(Stop::Output)
            } else if start.elapsed() > cfg.limits.wall_time {
                Some(Stop::Wall)
            } else if cgroup.cpu_time().is_ok_and(|t| t > cfg.limits.cpu_time) {
                Some(Stop::Cpu)
            } else {
                None
            };
            if let Some(r) = reason {
                stop.get_or_insert(r);
                discarded = discarded || kill_all(cgroup, spawner);
            }
        }
    }
    Ok((streams, stop, ended))
}

/// Whether the status report says how the program ended: a whole line other than the
/// optional ones (see [`finish`]).
fn reports_an_end(report: &[u8]) -> bool {
    report
        .split_inclusive(|&b| b == b'\n')
        .filter(|l| l.ends_with(b"\n"))
        .any(|l| !l.starts_with(b"instructions ") && !l.starts_with(b"forbidden "))
}

/// The run's record, from what following it saw and its cgroup's accounts.
fn finish(
    cfg: &RunConfig,
    layout: &Layout,
    ready: crate::ahead::Ready,
    streams: [Stream; 3],
    mut stop: Option<Stop>,
    ended: Option<Duration>,
    start: Instant,
) -> Result<Run, String> {
    let cap = cfg.limits.output_bytes;
    let cgroup = &ready.cgroup;
    let wall = ended.unwrap_or_else(|| start.elapsed());
    let [status, out, err] = streams;
    let report = String::from_utf8_lossy(&status.kept).into_owned();
    let (stdout, stdout_bytes) = (out.kept, out.total);
    let (stderr, stderr_bytes) = (err.kept, err.total);
    // A stream that saw too much closes its pipe, and the program may die of that
    // (SIGPIPE) or end before the check above: the flood is still the reason.
    if (stdout_bytes > cap || stderr_bytes > cap) && stop.is_none() {
        stop = Some(Stop::Output);
    }
    let cpu = cgroup.cpu_time().map_err(|e| format!("cgroup: {e}"))?;
    let peak = cgroup.memory_peak();
    let oom = cgroup.oom_kills().map_err(|e| format!("cgroup: {e}"))? > 0;
    // Only to explain a failure: unreadable, it explains nothing.
    let forks_refused = cgroup.pids_limit_hits().unwrap_or(0);
    // Empty now (killed and checked above); removed off the run's path, or at once by a
    // process that runs nothing more (a removal that fails is retried by the next
    // runner's sweep).
    if cfg.once {
        let _ = ready.cgroup.remove();
    } else {
        crate::ahead::done(layout, cfg.slot, ready);
    }

    // The report: how the program ended (the program's own line if it could not be
    // started, then the spawner's), with optional lines before it, and after it a
    // forbidden call made by a process the program left.
    let (mut instructions, mut forbidden, mut line) = (None, None, None);
    for l in report.lines() {
        if let Some(n) = l.strip_prefix("instructions ") {
            instructions = n.parse().ok();
        } else if let Some(call) = l.strip_prefix("forbidden ") {
            forbidden.get_or_insert_with(|| call.to_string());
        } else {
            line.get_or_insert(l);
        }
    }
    let line = line.unwrap_or_default();
    let ending = ending(line.trim(), stop.is_some() || oom || forbidden.is_some())?;
    let (verdict, mut message) = classify(&ending, forbidden, stop, oom, &cfg.limits, cpu);
    // A program that fails after a fork failed was most likely failed by the process
    // limit, which nothing else would tell the participant.
    if let (Verdict::RuntimeError | Verdict::Signalled, Some(m)) = (verdict, &mut message)
        && forks_refused > 0
    {
        m.push_str(&format!(
            " (a new process was refused {forks_refused} times at the limit of {} processes)",
            cfg.limits.pids
        ));
    }
    let (exit_code, signal) = match ending {
        Ending::Exit(c) => (Some(c), None),
        Ending::Signal(s) => (None, Some(s)),
        Ending::NotStarted(_) => (Some(127), None),
    };
    Ok(Run {
        result: RunResult {
            verdict,
            exit_code,
            signal,
            cpu_time_s: cpu.as_secs_f64(),
            wall_time_s: wall.as_secs_f64(),
            peak_memory_bytes: peak,
            instructions,
            stdout_bytes,
            stderr_bytes,
            stdout_truncated: stdout_bytes > cap,
            stderr_truncated: stderr_bytes > cap,
            message,
        },
        stdout,
        stderr,
    })
}

/// Kills what is left of the run; says whether the slot had to be discarded. Should
/// processes survive, the slot cannot be trusted for its next run: its spawner is
/// killed, and with it the slot's whole PID namespace, so no process of the run executes
/// again. (A process in an uninterruptible wait, such as `sync` on a slow disk, outlives
/// the kill until the wait ends, then dies of the SIGKILL it has pending.) The run is
/// still judged by what it did: leaving such a process behind must not let a program
/// turn its verdict into the runner's `internal_error`, which is never charged to it.
fn kill_all(cgroup: &crate::cgroup::Cgroup, spawner: &mut crate::spawner::Slot) -> bool {
    let survived = cgroup.kill_all().is_err();
    if survived {
        spawner.discard();
    }
    survived
}

/// How the program ended, as the spawner reported it on the status pipe.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Ending {
    Exit(i32),
    Signal(i32),
    /// It could not be executed (the message says why).
    NotStarted(String),
}

/// Reads the status report. No report means the sandbox failed, unless the runner killed
/// the run (a limit hit while the program was starting).
fn ending(line: &str, killed: bool) -> Result<Ending, String> {
    let number = |n: &str| n.parse().map_err(|_| format!("unreadable report {line:?}"));
    if let Some(code) = line.strip_prefix("exit ") {
        Ok(Ending::Exit(number(code)?))
    } else if let Some(sig) = line.strip_prefix("signal ") {
        Ok(Ending::Signal(number(sig)?))
    } else if let Some(why) = line.strip_prefix("exec ") {
        Ok(Ending::NotStarted(why.to_string()))
    } else if killed {
        Ok(Ending::Signal(libc::SIGKILL))
    } else {
        let why = line.strip_prefix("setup ").unwrap_or(line);
        let why = if why.is_empty() {
            "no report from the spawner"
        } else {
            why
        };
        Err(format!("the sandbox could not be set up: {why}"))
    }
}

/// The verdict and its explanation, from the most to the least specific.
const STOPPED: &str = "stopped by the caller";

fn classify(
    ending: &Ending,
    forbidden: Option<String>,
    stop: Option<Stop>,
    oom: bool,
    limits: &Limits,
    cpu: Duration,
) -> (Verdict, Option<String>) {
    if let Some(call) = forbidden {
        let why = format!("stopped at a forbidden system call: {call}");
        return (Verdict::ForbiddenSyscall, Some(why));
    }
    // The caller's stop comes before every limit: what the program did after it was
    // stopped is not charged to it.
    if let Some(Stop::Caller) = stop {
        return (Verdict::Stopped, Some(STOPPED.into()));
    }
    if oom {
        let mib = limits.memory_bytes as f64 / (1 << 20) as f64;
        return (
            Verdict::MemoryLimit,
            Some(format!("memory limit of {mib:.0} MiB exceeded")),
        );
    }
    // The CPU limit is watched from outside, so a program may pass it and end before
    // that is seen, or while another limit stopped it: what it used decides, before wall
    // time and output (the documented order; the record would contradict its verdict
    // otherwise). RLIMIT_CPU's SIGXCPU comes only above the limit, so it is one of these.
    let stop = if cpu > limits.cpu_time {
        Some(Stop::Cpu)
    } else {
        stop
    };
    let (verdict, message) = match (stop, ending) {
        (Some(Stop::Cpu), _) => (
            Verdict::TimeLimit,
            format!(
                "CPU time limit of {:.3} s exceeded ({:.3} s used)",
                limits.cpu_time.as_secs_f64(),
                cpu.as_secs_f64()
            ),
        ),
        (Some(Stop::Wall), _) => (
            Verdict::WallTimeLimit,
            format!(
                "wall time limit of {:.3} s exceeded",
                limits.wall_time.as_secs_f64()
            ),
        ),
        (Some(Stop::Caller), _) => (Verdict::Stopped, STOPPED.into()),
        (Some(Stop::Output), _) => (
            Verdict::OutputLimit,
            format!("output limit of {} bytes exceeded", limits.output_bytes),
        ),
        (None, Ending::Signal(libc::SIGXFSZ)) => (
            Verdict::OutputLimit,
            format!(
                "file size limit of {} bytes exceeded",
                limits.file_size_bytes
            ),
        ),
        (None, Ending::Signal(s)) => (Verdict::Signalled, format!("killed by signal {s}")),
        (None, Ending::Exit(0)) => return (Verdict::Ok, None),
        (None, Ending::Exit(c)) => (Verdict::RuntimeError, format!("exited with status {c}")),
        (None, Ending::NotStarted(why)) => (
            Verdict::RuntimeError,
            format!("cannot start the program: {why}"),
        ),
    };
    (verdict, Some(message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_over_the_limit_is_a_time_limit_even_when_the_end_came_first() {
        let limits = Limits {
            cpu_time: Duration::from_millis(200),
            ..Limits::default()
        };
        let verdict = |ending: Ending, ms| {
            classify(
                &ending,
                None,
                None,
                false,
                &limits,
                Duration::from_millis(ms),
            )
            .0
        };
        assert_eq!(verdict(Ending::Exit(0), 205), Verdict::TimeLimit);
        assert_eq!(verdict(Ending::Exit(1), 205), Verdict::TimeLimit);
        assert_eq!(verdict(Ending::Exit(0), 200), Verdict::Ok);
        assert_eq!(verdict(Ending::Exit(1), 150), Verdict::RuntimeError);
        // Only the spawner's report of a forbidden call makes one: a program may raise
        // SIGSYS itself.
        assert_eq!(
            verdict(Ending::Signal(libc::SIGSYS), 150),
            Verdict::Signalled
        );
        // Likewise SIGXCPU below the limit: RLIMIT_CPU sends it only above.
        assert_eq!(
            verdict(Ending::Signal(libc::SIGXCPU), 150),
            Verdict::Signalled
        );
    }

    /// CPU time comes before wall time and output when several limits are hit, as
    /// documented; the runner's first reason to stop the run decides only among those.
    #[test]
    fn cpu_time_over_the_limit_comes_before_a_stop_for_wall_time_or_output() {
        let limits = Limits {
            cpu_time: Duration::from_millis(1500),
            ..Limits::default()
        };
        let verdict = |stop, ms| {
            let killed = Ending::Signal(libc::SIGKILL);
            classify(
                &killed,
                None,
                Some(stop),
                false,
                &limits,
                Duration::from_millis(ms),
            )
            .0
        };
        assert_eq!(verdict(Stop::Output, 1504), Verdict::TimeLimit);
        assert_eq!(verdict(Stop::Wall, 1504), Verdict::TimeLimit);
        assert_eq!(verdict(Stop::Output, 1400), Verdict::OutputLimit);
        assert_eq!(verdict(Stop::Wall, 1400), Verdict::WallTimeLimit);
    }

    #[test]
    fn a_forbidden_call_is_the_reason_before_any_limit() {
        let limits = Limits::default();
        let call = || Some("unshare (system call 272)".to_string());
        let over = limits.cpu_time * 2;
        let (verdict, message) = classify(
            &Ending::Signal(libc::SIGKILL),
            call(),
            Some(Stop::Wall),
            true,
            &limits,
            over,
        );
        assert_eq!(verdict, Verdict::ForbiddenSyscall);
        assert_eq!(
            message.as_deref(),
            Some("stopped at a forbidden system call: unshare (system call 272)")
        );
    }
}
