//! The spawner: a small single-threaded process per slot, executed once per runner and
//! slot, that holds the slot's namespaces and forks the program of each of its runs.
//!
//! At its start it makes new network, mount, UTS and PID namespaces and forks the slot's
//! init ([`crate::init::slot_init`]), which builds the slot's root; from then on the
//! spawner itself lives in that root. A run's program is a fork made ahead
//! ([`crate::init::standby`]; the next one is forked as soon as a run has been handed
//! over, and gets ready while that run goes on). A run is then: attach the run's binds in
//! the program's mount namespace (entered with `setns` for the time being), hand it the
//! run's descriptors, and wait: the spawner reports how the program ended on the run's
//! status pipe, which tells the runner to kill what the program left, and keeps the
//! listener of the run's seccomp filter until every process of the run is dead (one left
//! running would otherwise be unsupervised for a while, and could make a forbidden call
//! of its own). It then closes the status pipe, which tells the runner the run is over.
//! Only then does it let the program's mount namespace go, so that unmounting it is not
//! part of the run.
//!
//! The runner is multi-threaded, so between a fork of the runner and the next `exec`
//! nothing but raw system calls may run. The spawner has one thread, so its fork child
//! may run ordinary code.
//!
//! Protocol, over a `SOCK_SEQPACKET` socket pair: the runner sends one message per run,
//! the [`Request`] as JSON with descriptors attached (stdin, stdout, stderr, status pipe,
//! then one `cgroup.procs` per cgroup, then one detached mount tree per bind); the
//! spawner answers `ok PID` or `err MESSAGE`. Runs of a slot go one at a time: the runner
//! holds the slot for the whole run ([`with_slot`]). Between the spawner and a program
//! made ahead, over a socket pair of its own: `ok` with the program's mount namespace
//! attached (or `err MESSAGE`) when it is ready; then the request as the runner sent it,
//! with the stdin, stdout, stderr, status and `cgroup.procs` descriptors.
//!
//! Lifetimes: the spawner dies with the runner thread that started it (`PDEATHSIG`; that
//! thread lives as long as the spawner, waiting for it), the slot's init and each program
//! with the spawner, and everything in the slot's PID namespace with its init — so a
//! runner killed with SIGKILL takes every run with it.

use std::collections::HashMap;
use std::io::{IoSlice, IoSliceMut};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};

use nix::libc;
use nix::sched::CloneFlags;
use nix::sys::socket::{
    AddressFamily, ControlMessage, ControlMessageOwned, MsgFlags, SockFlag, SockType, recvmsg,
    sendmsg, socketpair,
};
use nix::sys::wait::{WaitStatus, waitpid};

use crate::run::InitProgram;
use crate::spec::{Request, RunSpec, SPAWNER_ENV, SlotSpec};

/// The descriptor the spawner finds its socket on.
const SOCKET_FD: RawFd = 3;
/// The largest request (the spec holds argv and environment; far below this in practice).
pub(crate) const MAX_REQUEST: usize = 128 << 10;
/// The most binds one run may have.
pub const MAX_BINDS: usize = 64;
/// The most cgroup directories one run may join (v1 has five).
const MAX_CGROUPS: usize = 8;
/// The descriptors every request carries first: stdin, stdout, stderr, status.
const N_FIXED: usize = 4;
/// The most descriptors one request may carry.
const MAX_FDS: usize = N_FIXED + MAX_CGROUPS + MAX_BINDS;
/// How long the runner waits for the spawner's answer (a fork: normally well under 1 ms;
/// the first request of a slot also waits for its root to be built).
const REPLY_TIMEOUT_S: i64 = 30;

/// The descriptors a run is started with.
pub struct Fds<'a> {
    pub stdin: BorrowedFd<'a>,
    pub stdout: BorrowedFd<'a>,
    pub stderr: BorrowedFd<'a>,
    pub status: BorrowedFd<'a>,
    /// `cgroup.procs` of each of the run's cgroups, open for writing.
    pub cgroups: &'a [OwnedFd],
    /// One detached mount tree per bind, in the order of the spec's binds.
    pub trees: &'a [OwnedFd],
}

/// The runner's end of a spawner.
struct Spawner {
    sock: OwnedFd,
    pid: nix::unistd::Pid,
}

impl Spawner {
    /// Kills the spawner, and with it the slot's init, its PID namespace and every
    /// process in it (for when the runner cannot trust the slot's state any more).
    fn kill(self) {
        let _ = nix::sys::signal::kill(self.pid, nix::sys::signal::Signal::SIGKILL);
    }
}

/// A connected pair of message sockets (close-on-exec): one end for each side.
fn seqpacket_pair() -> nix::Result<(OwnedFd, OwnedFd)> {
    socketpair(
        AddressFamily::Unix,
        SockType::SeqPacket,
        None,
        SockFlag::SOCK_CLOEXEC,
    )
}

fn io_err(what: &str, e: impl std::fmt::Display) -> String {
    format!("spawner: {what}: {e}")
}

impl Spawner {
    fn start(init: &InitProgram, slot: &SlotSpec) -> Result<Spawner, String> {
        // A one-shot run in a process that has no other thread yet forks its spawner
        // rather than executing it: executing this (large) binary again costs about as
        // much as the rest of a one-shot run's start. A fork of a single-threaded process
        // may run any code, which is what the exec is for otherwise.
        if slot.once && single_threaded() {
            return Self::fork(slot);
        }
        let (ours, theirs) = seqpacket_pair().map_err(|e| io_err("socketpair", e))?;
        let slot_json = serde_json::to_string(slot).map_err(|e| io_err("slot", e))?;
        let mut cmd = Command::new(&init.path);
        cmd.args(&init.args)
            .env_clear()
            .env(SPAWNER_ENV, slot_json)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        let from = theirs.as_raw_fd();
        // SAFETY: only system calls between fork and exec (no allocation, no locks).
        #[allow(unsafe_code)]
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // dup2 clears close-on-exec on the copy (onto itself it would not).
                let up = libc::fcntl(from, libc::F_DUPFD_CLOEXEC, 10);
                if up < 0 || libc::dup2(up, SOCKET_FD) != SOCKET_FD {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        // The spawner dies with the thread that started it (PDEATHSIG), so start it from
        // a thread that lives as long as it does: the one that waits for it.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("sandbox-spawner".into())
            .spawn(move || match cmd.spawn() {
                Ok(mut child) => {
                    let _ = tx.send(Ok(child.id()));
                    let _ = child.wait();
                }
                Err(e) => {
                    let _ = tx.send(Err(e.to_string()));
                }
            })
            .map_err(|e| io_err("thread", e))?;
        let pid = rx
            .recv()
            .map_err(|e| io_err("start", e))?
            .map_err(|e| io_err("start", e))?;
        drop(theirs);
        Self::connected(ours, nix::unistd::Pid::from_raw(pid as i32))
    }

    /// The runner's end of a started spawner.
    fn connected(ours: OwnedFd, pid: nix::unistd::Pid) -> Result<Spawner, String> {
        // A spawner that stops answering (stopped, or wedged in the kernel) must not hang
        // the runner: past this, it is taken for dead and replaced.
        nix::sys::socket::setsockopt(
            &ours,
            nix::sys::socket::sockopt::ReceiveTimeout,
            &nix::sys::time::TimeVal::new(REPLY_TIMEOUT_S, 0),
        )
        .map_err(|e| io_err("setsockopt", e))?;
        Ok(Spawner { sock: ours, pid })
    }

    /// Starts the spawner as a fork of this process, which must have one thread (the
    /// caller checked): the child is then the spawner as [`serve`] makes it after an
    /// exec, with the same descriptors (the socket on [`SOCKET_FD`], stdin and stdout on
    /// `/dev/null`, stderr shared), the same death signal and no environment read.
    fn fork(slot: &SlotSpec) -> Result<Spawner, String> {
        let (ours, theirs) = seqpacket_pair().map_err(|e| io_err("socketpair", e))?;
        let null = nix::fcntl::open(
            "/dev/null",
            nix::fcntl::OFlag::O_RDWR | nix::fcntl::OFlag::O_CLOEXEC,
            nix::sys::stat::Mode::empty(),
        )
        .map_err(|e| io_err("/dev/null", e))?;
        let parent = nix::unistd::getpid();
        // SAFETY: the process has one thread (checked by the caller just before), so the
        // child may run any code: no lock can be held by a thread that is not there.
        #[allow(unsafe_code)]
        match unsafe { nix::unistd::fork() } {
            Ok(nix::unistd::ForkResult::Child) => {
                drop(ours);
                // SAFETY: prctl and dup2 on descriptors this process owns.
                #[allow(unsafe_code)]
                let ok = unsafe {
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) == 0
                        && libc::dup2(theirs.as_raw_fd(), SOCKET_FD) == SOCKET_FD
                        && libc::dup2(null.as_raw_fd(), 0) == 0
                        && libc::dup2(null.as_raw_fd(), 1) == 1
                };
                // The runner may have died before the death signal was set.
                if !ok || nix::unistd::getppid() != parent {
                    // SAFETY: leaves at once, running nothing of the runner's.
                    #[allow(unsafe_code)]
                    unsafe {
                        libc::_exit(1)
                    }
                }
                serve_slot(Ok(slot.clone()))
            }
            Ok(nix::unistd::ForkResult::Parent { child }) => {
                drop(theirs);
                // Reaped by a thread of its own, as a spawner that was executed is: the
                // runner may start threads now.
                let _ = std::thread::Builder::new()
                    .name("sandbox-spawner".into())
                    .spawn(move || waitpid(child, None));
                Self::connected(ours, child)
            }
            Err(e) => Err(io_err("fork", e)),
        }
    }

    /// `Err(Refusal)`: the spawner refused the run (it stays usable); `Err(Gone)`: it has
    /// exited without starting the run (replace it, and try again); `Err(Lost)`: it took
    /// the request but gave no answer in time (kill it: the run may have started).
    fn spawn(&self, request: &[u8], fds: &Fds) -> Result<u32, Failure> {
        let mut raw = vec![
            fds.stdin.as_raw_fd(),
            fds.stdout.as_raw_fd(),
            fds.stderr.as_raw_fd(),
            fds.status.as_raw_fd(),
        ];
        raw.extend(fds.cgroups.iter().map(AsRawFd::as_raw_fd));
        raw.extend(fds.trees.iter().map(AsRawFd::as_raw_fd));
        send(&self.sock, request, &raw).map_err(|e| Failure::Gone(io_err("send", e)))?;
        let mut buf = [0u8; 4096];
        let n = loop {
            match nix::sys::socket::recv(self.sock.as_raw_fd(), &mut buf, MsgFlags::empty()) {
                Err(nix::errno::Errno::EINTR) => continue,
                r => break r.map_err(|e| Failure::Lost(io_err("receive", e)))?,
            }
        };
        let reply = String::from_utf8_lossy(&buf[..n]);
        if let Some(pid) = reply.strip_prefix("ok ") {
            pid.parse()
                .map_err(|_| Failure::Lost(io_err("reply", &reply)))
        } else if n == 0 {
            Err(Failure::Gone("spawner: it exited".into()))
        } else {
            Err(Failure::Refusal(format!(
                "spawner: {}",
                reply.strip_prefix("err ").unwrap_or(&reply)
            )))
        }
    }
}

/// This process has one thread (`/proc/self/stat`; false when it cannot tell).
fn single_threaded() -> bool {
    std::fs::read_to_string("/proc/self/stat").is_ok_and(|stat| {
        // The command's name, in parentheses, may hold spaces: fields count from the
        // last ')'. The number of threads is field 20, the 18th after it.
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(17))
            .is_some_and(|n| n == "1")
    })
}

/// Why a request to a spawner did not start a run.
enum Failure {
    Refusal(String),
    Gone(String),
    Lost(String),
}

/// A slot's spawner, held by one run at a time.
pub struct Slot<'a> {
    init: &'a InitProgram,
    spec: &'a SlotSpec,
    spawner: &'a mut Option<Spawner>,
}

impl Slot<'_> {
    /// Starts the slot's spawner if it has none, so that it sets the slot up while the
    /// caller gets the run ready (its cgroup, binds and pipes). A failure here is met
    /// again, and reported, by [`Slot::spawn`].
    pub fn start(&mut self) {
        if self.spawner.is_none() {
            *self.spawner = Spawner::start(self.init, self.spec).ok();
        }
    }

    /// Starts a run's program (the spawner is started on first use, and restarted once
    /// if it has died). Returns the program's PID.
    pub fn spawn(&mut self, request: &Request, fds: &Fds) -> Result<u32, String> {
        let json = serde_json::to_vec(request).map_err(|e| io_err("request", e))?;
        if json.len() > MAX_REQUEST {
            return Err(format!(
                "the run's description is too large ({} bytes; at most {MAX_REQUEST})",
                json.len()
            ));
        }
        if fds.trees.len() > MAX_BINDS {
            return Err(format!("too many binds (at most {MAX_BINDS})"));
        }
        if fds.cgroups.len() > MAX_CGROUPS {
            return Err(format!("too many cgroups (at most {MAX_CGROUPS})"));
        }
        let mut last = String::new();
        for _ in 0..2 {
            if self.spawner.is_none() {
                *self.spawner = Some(Spawner::start(self.init, self.spec)?);
            }
            match self.spawner.as_ref().map(|s| s.spawn(&json, fds)) {
                Some(Ok(pid)) => return Ok(pid),
                // A live spawner that refused says why, and stays.
                Some(Err(Failure::Refusal(why))) => return Err(why),
                // One that is gone is replaced, once.
                Some(Err(Failure::Gone(why))) => {
                    last = why;
                    self.discard();
                }
                // One that took the request and went silent may have started the run:
                // it is killed with everything in its slot, and the run not retried.
                Some(Err(Failure::Lost(why))) => {
                    self.discard();
                    return Err(why);
                }
                None => unreachable!("started above"),
            }
        }
        Err(last)
    }

    /// Kills the slot's spawner and everything it started (the next run starts a new
    /// one): for when a run's processes could not be accounted for.
    pub fn discard(&mut self) {
        if let Some(s) = self.spawner.take() {
            s.kill();
        }
    }
}

/// Runs `f` with slot `slot`'s spawner for `init`, which no other run uses meanwhile:
/// a slot's runs go one at a time, each from its start until its last process is gone.
pub fn with_slot<R>(
    init: &InitProgram,
    slot: u32,
    spec: &SlotSpec,
    f: impl FnOnce(&mut Slot) -> R,
) -> R {
    // A slot's root is part of its world: a run on another runtime's root file system
    // gets a spawner of its own.
    type Key = (PathBuf, Vec<String>, u32, Option<PathBuf>);
    type Spawners = Mutex<HashMap<Key, Arc<Mutex<Option<Spawner>>>>>;
    static SPAWNERS: OnceLock<Spawners> = OnceLock::new();
    let entry = SPAWNERS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .entry((
            init.path.clone(),
            init.args.clone(),
            slot,
            spec.root.clone(),
        ))
        .or_default()
        .clone();
    let mut spawner = entry.lock().unwrap_or_else(|p| p.into_inner());
    f(&mut Slot {
        init,
        spec,
        spawner: &mut spawner,
    })
}

/// The spawner's side, executed: set up the slot its environment describes, then serve
/// requests on [`SOCKET_FD`] until the runner goes away.
pub fn serve() -> ! {
    let spec = std::env::var(SPAWNER_ENV)
        .map_err(|e| e.to_string())
        .and_then(|j| serde_json::from_str(&j).map_err(|e| e.to_string()))
        .map_err(|e| format!("the slot's description: {e}"));
    serve_slot(spec)
}

/// The spawner's side, executed ([`serve`]) or forked ([`Spawner::fork`]).
fn serve_slot(spec: Result<SlotSpec, String>) -> ! {
    // SAFETY: descriptor 3 is the socket the runner set up for this process.
    #[allow(unsafe_code)]
    let sock = unsafe { OwnedFd::from_raw_fd(SOCKET_FD) };
    // Whatever else the runner inherited and left open must not reach a program.
    crate::init::close_all_from(SOCKET_FD + 1);
    // If the runner had closed any of 0–2, received descriptors would take those numbers
    // and a program's dup2 onto 0–3 could overwrite one before it is moved: fill them.
    for fd in 0..3 {
        // SAFETY: F_GETFD only reads the descriptor table.
        #[allow(unsafe_code)]
        let closed = unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1;
        if closed {
            // Lands on `fd`, the lowest free number; kept open for the process's life.
            let _ = nix::fcntl::open(
                "/dev/null",
                nix::fcntl::OFlag::O_RDWR,
                nix::sys::stat::Mode::empty(),
            )
            .map(std::mem::forget::<OwnedFd>);
        }
    }
    let mut slot = match spec.and_then(setup) {
        Ok(slot) => Ok(slot),
        Err(e) => Err(format!("the sandbox could not be set up: {e}")),
    };
    // The first run's program is made at once, while the runner gets the run ready
    // (should that fail, the run makes its own).
    if let Ok(slot) = &mut slot {
        slot.standby = Standby::fork(&sock, slot, slot.spec.tmp_bytes, None, true).ok();
    }
    let mut buf = vec![0u8; MAX_REQUEST + 1];
    loop {
        let (n, fds) = match receive(&sock, &mut buf) {
            Ok(Some(x)) => x,
            // The runner has gone (or the socket broke): nothing more to do.
            Ok(None) | Err(_) => std::process::exit(0),
        };
        // The slot's PID namespace ends with its init: a spawner without one can start
        // nothing more, and exits so that the runner starts a new one. The next run's
        // program, made ahead, dies only with that namespace (whose init cannot finish
        // dying before this process reaps it) or by a kill from outside: a slot that lost
        // it is not trusted either.
        if let Ok(slot) = &mut slot {
            let lost = slot.standby.take().is_some_and(|s| {
                slot.standby = s.alive();
                slot.standby.is_none()
            });
            let init_alive = matches!(
                waitpid(slot.init, Some(nix::sys::wait::WaitPidFlag::WNOHANG)),
                Ok(WaitStatus::StillAlive)
            );
            if lost || !init_alive {
                std::process::exit(1);
            }
        }
        let run = match &mut slot {
            Ok(slot) => start_program(&sock, slot, buf.get(..n).unwrap_or(&[]), n, fds),
            Err(e) => Err(e.clone()),
        };
        let reply = match &run {
            Ok(started) => format!("ok {}", started.pid),
            Err(e) => format!("err {e}"),
        };
        let _ = nix::sys::socket::send(sock.as_raw_fd(), reply.as_bytes(), MsgFlags::MSG_NOSIGNAL);
        if let Ok(started) = run {
            // The next run's program is made while this one runs (should that fail, the
            // next run makes its own). It cannot touch this run, nor this run it: it is
            // root, in none of the run's cgroups, and waits in namespaces of its own.
            // A slot that serves one run makes none.
            let mut uid = None;
            if let Ok(slot) = &mut slot {
                if !slot.spec.once {
                    let net = slot.net.take();
                    slot.standby = Standby::fork(&sock, slot, started.tmp_bytes, net, false).ok();
                }
                uid = Some(slot.spec.uid);
            }
            let net = started.see_through(uid);
            if let Ok(slot) = &mut slot {
                slot.net = net;
            }
        }
    }
}

/// The slot, once set up: its description, the liveness pipe its processes watch, the
/// seccomp filters (compiled once, installed by each program), the slot's own mount
/// namespace (to come back to) and the next run's program, if made yet.
struct Ready {
    spec: SlotSpec,
    init: nix::unistd::Pid,
    alive: (OwnedFd, OwnedFd),
    filters: [seccompiler::BpfProgram; 2],
    mnt: OwnedFd,
    standby: Option<Standby>,
    /// The network namespace of the slot's last run, over, for a later run's program
    /// ([`crate::netns::enter`]), and the keys of the hashes of namespaces' states.
    net: Option<crate::netns::Namespace>,
    net_keys: std::hash::RandomState,
}

/// Makes the slot's namespaces and has the slot's init build the root, which this
/// process then lives in too. The network namespace is only this process's own (each
/// run's program makes one of its own while it gets ready, [`crate::init::standby`]):
/// nothing of the slot is on the host's network.
fn setup(spec: SlotSpec) -> Result<Ready, String> {
    let filters = crate::seccomp::filters().map_err(|e| format!("seccomp: {e}"))?;
    // The pivot into the slot's root moves the working directory of every process whose
    // directory is the old root: this one's must be, or it would keep the host's tree.
    nix::unistd::chdir("/").map_err(|e| format!("chdir /: {e}"))?;
    let flags = CloneFlags::CLONE_NEWNET
        | CloneFlags::CLONE_NEWNS
        | CloneFlags::CLONE_NEWUTS
        | CloneFlags::CLONE_NEWPID;
    nix::sched::unshare(flags).map_err(|e| format!("unshare: {e}"))?;
    // Opened now, while /proc is still the host's (in which this process has a PID).
    let mnt = crate::init::own_mount_namespace()?;
    let pipe =
        || nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(|e| format!("pipe: {e}"));
    // The slot's processes check that the spawner lives by this pipe: only the spawner
    // keeps its write end.
    let alive = pipe()?;
    let (ready_r, ready_w) = pipe()?;
    // SAFETY: this process has one thread, so the child may run any code.
    #[allow(unsafe_code)]
    let init = match unsafe { nix::unistd::fork() } {
        Ok(nix::unistd::ForkResult::Child) => {
            let _ = nix::unistd::close(SOCKET_FD);
            let (r, w) = alive;
            drop((w, ready_r));
            crate::init::slot_init(&spec, r, ready_w)
        }
        Ok(nix::unistd::ForkResult::Parent { child }) => child,
        Err(e) => return Err(format!("fork: {e}")),
    };
    drop(ready_w);
    let mut answer = String::new();
    std::io::Read::read_to_string(&mut std::fs::File::from(ready_r), &mut answer)
        .map_err(|e| format!("the slot's init: {e}"))?;
    match answer.as_str() {
        "ok" => Ok(Ready {
            spec,
            init,
            alive,
            filters,
            mnt,
            standby: None,
            net: None,
            net_keys: std::hash::RandomState::new(),
        }),
        "" => Err("the slot's init died".into()),
        why => Err(why.to_string()),
    }
}

type Received = (usize, Vec<OwnedFd>);

/// Sends one message with descriptors attached.
pub(crate) fn send(sock: &OwnedFd, bytes: &[u8], fds: &[RawFd]) -> nix::Result<()> {
    let rights = [ControlMessage::ScmRights(fds)];
    let cmsgs: &[ControlMessage] = if fds.is_empty() { &[] } else { &rights };
    loop {
        match sendmsg::<()>(
            sock.as_raw_fd(),
            &[IoSlice::new(bytes)],
            cmsgs,
            MsgFlags::MSG_NOSIGNAL,
            None,
        ) {
            Err(nix::errno::Errno::EINTR) => continue,
            r => return r.map(drop),
        }
    }
}

/// Receives one message and the descriptors attached to it (close-on-exec). `None`: the
/// other end has gone. A message cut short comes back with the length `usize::MAX`.
pub(crate) fn receive(sock: &OwnedFd, buf: &mut [u8]) -> Result<Option<Received>, String> {
    let mut space = nix::cmsg_space!([RawFd; MAX_FDS]);
    let mut iov = [IoSliceMut::new(buf)];
    let msg = loop {
        match recvmsg::<()>(
            sock.as_raw_fd(),
            &mut iov,
            Some(&mut space),
            MsgFlags::MSG_CMSG_CLOEXEC,
        ) {
            Err(nix::errno::Errno::EINTR) => continue,
            r => break r.map_err(|e| e.to_string())?,
        }
    };
    let mut fds = Vec::new();
    for c in msg.cmsgs().map_err(|e| e.to_string())? {
        if let ControlMessageOwned::ScmRights(raw) = c {
            // SAFETY: descriptors just received are ours alone.
            #[allow(unsafe_code)]
            fds.extend(raw.into_iter().map(|f| unsafe { OwnedFd::from_raw_fd(f) }));
        }
    }
    let n = msg.bytes;
    if n == 0 && fds.is_empty() {
        return Ok(None);
    }
    let cut = msg.flags.contains(MsgFlags::MSG_TRUNC) || msg.flags.contains(MsgFlags::MSG_CTRUNC);
    if cut || n > MAX_REQUEST {
        return Ok(Some((usize::MAX, fds)));
    }
    Ok(Some((n, fds)))
}

/// A run's program made ahead ([`crate::init::standby`]): forked, in its own mount and
/// IPC namespaces with its `/tmp` and `/dev/shm`, filtered, waiting for its run on `sock`.
struct Standby {
    pid: nix::unistd::Pid,
    sock: OwnedFd,
    /// Its mount namespace, once it has said it is ready: the spawner mounts the run's
    /// binds into it, and keeps it until it has reported the run's ending, so that the
    /// namespace is torn down after the report rather than by the program's exit, before.
    mnt: Option<OwnedFd>,
    /// The size its `/tmp` was mounted with.
    tmp_bytes: u64,
    /// The listener of its seccomp filter, once it is ready (see [`Started::see_through`]).
    listener: Option<OwnedFd>,
    /// Its network namespace, once it is ready, with the hash of its state when made.
    net: Option<crate::netns::Namespace>,
}

impl Standby {
    /// Forks one, which gets ready meanwhile ([`Standby::ready`]). The `first` of a slot
    /// is made before any run: at normal priority, as nothing runs yet, and in a
    /// one-shot slot it keeps the spawner's network namespace ([`SlotSpec::once`]).
    fn fork(
        runner: &OwnedFd,
        slot: &Ready,
        tmp_bytes: u64,
        net: Option<crate::netns::Namespace>,
        first: bool,
    ) -> Result<Standby, String> {
        let (ours, theirs) = seqpacket_pair().map_err(|e| format!("socketpair: {e}"))?;
        let alive = slot.alive.0.try_clone().map_err(|e| format!("dup: {e}"))?;
        // SAFETY: this process has one thread, so the child may run any code.
        #[allow(unsafe_code)]
        let pid = match unsafe { nix::unistd::fork() } {
            Ok(nix::unistd::ForkResult::Child) => {
                // Only the spawner may hold the liveness pipe's write end, or the program
                // could not tell that the spawner died; the rest is closed by the standby.
                let _ = nix::unistd::close(slot.alive.1.as_raw_fd());
                let _ = nix::unistd::close(runner.as_raw_fd());
                drop(ours);
                let net = if first && slot.spec.once {
                    crate::init::Net::Keep
                } else {
                    crate::init::Net::Enter(net, &slot.net_keys)
                };
                let idle = !first;
                crate::init::standby(
                    &slot.spec,
                    theirs,
                    alive,
                    tmp_bytes,
                    &slot.filters,
                    net,
                    idle,
                )
            }
            Ok(nix::unistd::ForkResult::Parent { child }) => child,
            Err(e) => return Err(format!("fork: {e}")),
        };
        drop((theirs, alive));
        Ok(Standby {
            pid,
            sock: ours,
            mnt: None,
            tmp_bytes,
            listener: None,
            net: None,
        })
    }

    /// Waits until it is ready, and takes its mount namespace.
    fn ready(&mut self) -> Result<(), String> {
        if self.mnt.is_some() {
            return Ok(());
        }
        // Made at `SCHED_IDLE` so as to leave the run in progress alone, it is the run
        // now: on a busy machine an idle one may wait for a long time.
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: sched_setscheduler on a child of this process, with a parameter that
        // lives across the call. Failing leaves it idle: slower, not wrong.
        #[allow(unsafe_code)]
        unsafe {
            libc::sched_setscheduler(self.pid.as_raw(), libc::SCHED_OTHER, &param);
        }
        let mut buf = [0u8; 4096];
        let (n, fds) = match receive(&self.sock, &mut buf) {
            Ok(Some(x)) => x,
            Ok(None) => return Err("the run's program died while being made".into()),
            Err(e) => return Err(format!("the run's program: {e}")),
        };
        let answer = String::from_utf8_lossy(buf.get(..n).unwrap_or(b"cut"));
        // `ok HASH` with its mount namespace, listener and network namespace.
        let made = answer.strip_prefix("ok ").and_then(|h| h.parse().ok());
        match (made, <[OwnedFd; 3]>::try_from(fds)) {
            (Some(made), Ok([mnt, listener, net])) => {
                self.mnt = Some(mnt);
                self.listener = Some(listener);
                self.net = Some((net, made));
                Ok(())
            }
            _ => Err(answer.strip_prefix("err ").unwrap_or(&answer).to_string()),
        }
    }

    /// Itself if it still waits (a standby can only die by being killed).
    fn alive(self) -> Option<Standby> {
        match waitpid(self.pid, Some(nix::sys::wait::WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) => Some(self),
            _ => None,
        }
    }

    fn discard(self) {
        let _ = nix::sys::signal::kill(self.pid, nix::sys::signal::Signal::SIGKILL);
        let _ = waitpid(self.pid, None);
    }

    /// Makes the run's mounts in this standby's namespace (entered for the time being).
    fn mount(&self, slot: &Ready, spec: &RunSpec, trees: &[OwnedFd]) -> Result<(), String> {
        let mnt = self.mnt.as_ref().ok_or("the run's program is not ready")?;
        nix::sched::setns(mnt, CloneFlags::CLONE_NEWNS)
            .map_err(|e| format!("entering the run's mount namespace: {e}"))?;
        let made = crate::init::run_mounts(spec, trees, self.tmp_bytes);
        if nix::sched::setns(&slot.mnt, CloneFlags::CLONE_NEWNS).is_err() {
            // Stuck in a run's namespace: the runner replaces a spawner that has gone.
            std::process::exit(1);
        }
        made
    }
}

/// A program let go on its run: what the spawner needs to see it through.
struct Started {
    pid: nix::unistd::Pid,
    status: OwnedFd,
    /// The program's mount namespace (see [`Standby::mnt`]).
    mnt: Option<OwnedFd>,
    /// The program's instruction counter, if counted.
    counter: Option<OwnedFd>,
    tmp_bytes: u64,
    /// The listener of the program's seccomp filter (see [`crate::seccomp`]).
    listener: Option<OwnedFd>,
    /// The program's network namespace (see [`Standby::net`]).
    net: Option<crate::netns::Namespace>,
}

impl Started {
    /// Waits for the program and reports its ending on the run's status pipe, then for
    /// every other process of the run to be gone (the runner kills them when it reads the
    /// ending), and closes the pipe, which tells the runner the run is over. `uid` is the
    /// slot's, whose keyrings are then emptied (before the slot's next run is read).
    /// Returns the run's network namespace, which no process of the run is in any more.
    fn see_through(self, uid: Option<u32>) -> Option<crate::netns::Namespace> {
        let pid = self.pid;
        // A forbidden call by any process of the run ends it: the program is killed (the
        // runner kills the rest with the run's cgroup), and the call named in the report.
        let forbidden = self
            .listener
            .as_ref()
            .and_then(|l| forbidden_call_or_end(pid, l));
        let ending = loop {
            match waitpid(pid, None) {
                Err(nix::errno::Errno::EINTR) => continue,
                Ok(WaitStatus::Exited(_, code)) => break format!("exit {code}\n"),
                Ok(WaitStatus::Signaled(_, sig, _)) => break format!("signal {}\n", sig as i32),
                Ok(_) => continue,
                Err(e) => break format!("setup waiting for the program: {e}\n"),
            }
        };
        let report = |line: String| {
            let _ = nix::unistd::write(&self.status, line.as_bytes());
        };
        if let Some(n) = self.counter.as_ref().and_then(crate::instructions::read) {
            report(format!("instructions {n}\n"));
        }
        if let Some(call) = &forbidden {
            report(format!("forbidden {call}\n"));
        }
        report(ending);
        // What the program left runs on until the runner's kill, still under the filter:
        // its listener stays here until none of them is left (a filter's listener may
        // then be installed by nobody else: the kernel refuses a second one only while an
        // ancestor's is open), and a forbidden call they make meanwhile ends the run too.
        if let Some(call) = self.listener.as_ref().and_then(forbidden_call_until_gone)
            && forbidden.is_none()
        {
            report(format!("forbidden {call}\n"));
        }
        // Reported: now the run's mount namespace may go (unmounting takes a while), and
        // keys be looked for, off the run's path (before the slot's next request is read).
        drop(self.status);
        drop(self.listener);
        drop(self.mnt);
        if let Some(uid) = uid {
            clear_keys(uid);
        }
        self.net
    }
}

/// Waits until no process is left under the filter of `listener` (the kernel says so on
/// the listener: hang-up once the last one has been reaped), and returns the first
/// forbidden call one of them made meanwhile. Such a call waits for an answer that never
/// comes, so it never runs; the runner's kill ends its process.
fn forbidden_call_until_gone(listener: &OwnedFd) -> Option<String> {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    let mut first = None;
    loop {
        let mut fds = [PollFd::new(listener.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::NONE) {
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => return first,
            Ok(_) => {}
        }
        let heard = fds[0].revents().unwrap_or(PollFlags::empty());
        if heard.contains(PollFlags::POLLIN) {
            let call = crate::seccomp::forbidden_call(listener)
                .unwrap_or_else(|| "a forbidden system call".into());
            first.get_or_insert(call);
        } else if !heard.is_empty() {
            // Hang-up (every process gone), or an error: nothing more can come.
            return first;
        }
    }
}

/// The keys the slot's uid holds beyond its own two keyrings (user and user-session),
/// as `/proc/key-users` counts them. No run can reach a keyring (the filter forbids
/// `keyctl`, `add_key` and `request_key`), but keys are kept per user for as long as the
/// kernel lives: one left there would be the slot's next run's.
fn extra_keys(uid: u32) -> u64 {
    let Ok(text) = std::fs::read_to_string("/proc/key-users") else {
        return 0;
    };
    text.lines()
        .filter_map(|l| l.trim_start().split_once(':'))
        .find(|(u, _)| u.parse() == Ok(uid))
        .and_then(|(_, counts)| counts.split_whitespace().nth(1))
        .and_then(|keys| keys.split('/').next()?.parse::<u64>().ok())
        .map_or(0, |keys| keys.saturating_sub(2))
}

/// Empties the user and user-session keyrings of `uid` if it holds any key beyond them
/// (as that uid: a fork that changes its ids, which this single-threaded process may run
/// ordinary code in). Unlinked keys are freed by the kernel soon after.
fn clear_keys(uid: u32) {
    if extra_keys(uid) == 0 {
        return;
    }
    // SAFETY: this process has one thread, so the child may run any code.
    #[allow(unsafe_code)]
    match unsafe { nix::unistd::fork() } {
        Ok(nix::unistd::ForkResult::Child) => {
            let id = (
                nix::unistd::Gid::from_raw(uid),
                nix::unistd::Uid::from_raw(uid),
            );
            if nix::unistd::setresgid(id.0, id.0, id.0).is_err()
                || nix::unistd::setresuid(id.1, id.1, id.1).is_err()
            {
                std::process::exit(1);
            }
            // From linux/keyctl.h.
            const KEYCTL_CLEAR: libc::c_long = 7;
            const KEY_SPEC_USER_KEYRING: libc::c_long = -4;
            const KEY_SPEC_USER_SESSION_KEYRING: libc::c_long = -5;
            for ring in [KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING] {
                // SAFETY: keyctl with integer arguments only.
                #[allow(unsafe_code)]
                unsafe {
                    libc::syscall(libc::SYS_keyctl, KEYCTL_CLEAR, ring);
                }
            }
            std::process::exit(0);
        }
        Ok(nix::unistd::ForkResult::Parent { child }) => {
            while waitpid(child, None) == Err(nix::errno::Errno::EINTR) {}
        }
        Err(_) => {}
    }
}

/// Waits until the program ends or a process of its run makes a forbidden call; in
/// that case kills the program and returns the call. A listener that can no longer
/// notify (no process under the filter is left) is not watched further.
fn forbidden_call_or_end(pid: nix::unistd::Pid, listener: &OwnedFd) -> Option<String> {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    // SAFETY: pidfd_open with integer arguments; the result is checked below.
    #[allow(unsafe_code)]
    let raw = unsafe { libc::syscall(libc::SYS_pidfd_open, pid.as_raw(), 0) };
    // SAFETY: a descriptor the kernel has just returned, owned by nothing else.
    #[allow(unsafe_code)]
    let pidfd = RawFd::try_from(raw)
        .ok()
        .filter(|&fd| fd >= 0)
        .map(|fd| unsafe { OwnedFd::from_raw_fd(fd) })?;
    let mut watch_listener = true;
    loop {
        let mut fds = vec![PollFd::new(pidfd.as_fd(), PollFlags::POLLIN)];
        if watch_listener {
            fds.push(PollFd::new(listener.as_fd(), PollFlags::POLLIN));
        }
        match poll(&mut fds, PollTimeout::NONE) {
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => return None,
            Ok(_) => {}
        }
        let revents = |i: usize| {
            fds.get(i)
                .and_then(PollFd::revents)
                .unwrap_or(PollFlags::empty())
        };
        // Checked first: a forbidden call is the reason even if the program ended too.
        let heard = revents(1);
        if heard.contains(PollFlags::POLLIN) {
            let call = crate::seccomp::forbidden_call(listener)
                .unwrap_or_else(|| "a forbidden system call".into());
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
            return Some(call);
        }
        if heard.intersects(PollFlags::POLLHUP | PollFlags::POLLERR | PollFlags::POLLNVAL) {
            watch_listener = false;
        }
        if !revents(0).is_empty() {
            return None;
        }
    }
}

fn start_program(
    runner: &OwnedFd,
    slot: &mut Ready,
    bytes: &[u8],
    len: usize,
    fds: Vec<OwnedFd>,
) -> Result<Started, String> {
    if len > MAX_REQUEST {
        return Err("request too large".into());
    }
    let request: Request =
        serde_json::from_slice(bytes).map_err(|e| format!("unreadable request: {e}"))?;
    let expected = N_FIXED + request.cgroups + request.spec.binds.len();
    if fds.len() != expected {
        return Err(format!("{} descriptors instead of {expected}", fds.len()));
    }
    let mut fds = fds.into_iter();
    let mut next = || fds.next().ok_or("descriptors missing");
    let run = [next()?, next()?, next()?, next()?];
    let cgroups: Vec<OwnedFd> = (0..request.cgroups)
        .map(|_| next())
        .collect::<Result<_, _>>()?;
    let trees: Vec<OwnedFd> = (0..request.spec.binds.len())
        .map(|_| next())
        .collect::<Result<_, _>>()?;
    let mut standby = match slot.standby.take() {
        Some(s) => s,
        None => {
            let net = slot.net.take();
            Standby::fork(runner, slot, request.spec.tmp_bytes, net, false)?
        }
    };
    if let Err(e) = standby.ready() {
        standby.discard();
        return Err(e);
    }
    if let Err(e) = standby.mount(slot, &request.spec, &trees) {
        standby.discard();
        return Err(e);
    }
    // Opened while the program waits: `enable_on_exec` starts it at the program's exec.
    let counter = request
        .spec
        .count_instructions
        .then(|| crate::instructions::count_from_exec(standby.pid.as_raw()))
        .flatten();
    let raw: Vec<RawFd> = run.iter().chain(&cgroups).map(AsRawFd::as_raw_fd).collect();
    if let Err(e) = send(&standby.sock, bytes, &raw) {
        standby.discard();
        return Err(format!("handing the run to its program: {e}"));
    }
    // Only the program may hold the run's descriptors now: its output ends when it does.
    let [_stdin, _stdout, _stderr, status] = run;
    Ok(Started {
        pid: standby.pid,
        status,
        mnt: standby.mnt,
        counter,
        tmp_bytes: request.spec.tmp_bytes,
        listener: standby.listener,
        net: standby.net,
    })
}
