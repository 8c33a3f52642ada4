//! The spawner: a small single-threaded process, executed once per runner (per init
//! program), that forks the helper of every run.
//!
//! The runner is multi-threaded, so between a fork of the runner and the next `exec`
//! nothing but raw system calls may run — which is why each run used to `exec` a fresh
//! helper, at 1–1.5 ms a run on these machines. The spawner has one thread, so its fork
//! child may run ordinary code: it joins the run's cgroups and namespaces and becomes the
//! helper directly, without an `exec`.
//!
//! Protocol, over a `SOCK_SEQPACKET` socket pair: the runner sends one message per run,
//! the [`Request`] as JSON with five descriptors attached (stdin, stdout, stderr, status
//! pipe, the slot's network namespace); the spawner answers `ok PID` or `err MESSAGE`.
//! The helper reports the run's end on the status pipe as before; its closing (the init
//! has exited) tells the runner the run is over. Helpers are reaped by the kernel
//! (`SIGCHLD` ignored in the spawner).
//!
//! Lifetimes: the spawner dies with the runner thread that started it (`PDEATHSIG`; that
//! thread lives as long as the spawner, waiting for it), each helper with the spawner,
//! each init with its helper — so a runner killed with SIGKILL takes every run with it.

use std::collections::HashMap;
use std::io::{IoSlice, IoSliceMut};
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};

use nix::libc;
use nix::sys::socket::{
    AddressFamily, ControlMessage, ControlMessageOwned, MsgFlags, SockFlag, SockType, recvmsg,
    sendmsg, socketpair,
};
use serde::{Deserialize, Serialize};

use crate::init::{InitSpec, SPAWNER_ENV};
use crate::run::InitProgram;

/// The descriptor the spawner finds its socket on.
const SOCKET_FD: RawFd = 3;
/// The largest request (the spec holds argv and environment; far below this in practice).
const MAX_REQUEST: usize = 128 << 10;
/// Descriptors sent with a request, in this order.
const N_FDS: usize = 5;
/// How long the runner waits for the spawner's answer (a fork: normally well under 1 ms).
const REPLY_TIMEOUT_S: i64 = 30;

/// One run to start.
#[derive(Debug, Serialize, Deserialize)]
pub struct Request {
    pub spec: InitSpec,
    /// The `cgroup.procs` file of each of the run's cgroup directories.
    pub cgroup_procs: Vec<PathBuf>,
}

/// The descriptors a run is started with.
pub struct Fds<'a> {
    pub stdin: BorrowedFd<'a>,
    pub stdout: BorrowedFd<'a>,
    pub stderr: BorrowedFd<'a>,
    pub status: BorrowedFd<'a>,
    pub netns: BorrowedFd<'a>,
}

/// The runner's end of a spawner.
struct Spawner {
    sock: OwnedFd,
}

fn io_err(what: &str, e: impl std::fmt::Display) -> String {
    format!("spawner: {what}: {e}")
}

impl Spawner {
    fn start(init: &InitProgram) -> Result<Spawner, String> {
        let (ours, theirs) = socketpair(
            AddressFamily::Unix,
            SockType::SeqPacket,
            None,
            SockFlag::SOCK_CLOEXEC,
        )
        .map_err(|e| io_err("socketpair", e))?;
        let mut cmd = Command::new(&init.path);
        cmd.args(&init.args)
            .env_clear()
            .env(SPAWNER_ENV, "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        let theirs_raw = theirs.as_raw_fd();
        // SAFETY: only system calls between fork and exec (no allocation, no locks).
        #[allow(unsafe_code)]
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // dup2 onto itself would keep close-on-exec; clear the flag then.
                let ok = if theirs_raw == SOCKET_FD {
                    libc::fcntl(SOCKET_FD, libc::F_SETFD, 0) == 0
                } else {
                    libc::dup2(theirs_raw, SOCKET_FD) == SOCKET_FD
                };
                if ok {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            });
        }
        // The spawner dies with the thread that started it (PDEATHSIG), so start it from
        // a thread that lives as long as it does: the one that waits for it.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("sandbox-spawner".into())
            .spawn(move || match cmd.spawn() {
                Ok(mut child) => {
                    let _ = tx.send(Ok(()));
                    let _ = child.wait();
                }
                Err(e) => {
                    let _ = tx.send(Err(e.to_string()));
                }
            })
            .map_err(|e| io_err("thread", e))?;
        rx.recv()
            .map_err(|e| io_err("start", e))?
            .map_err(|e| io_err("start", e))?;
        drop(theirs);
        // A spawner that stops answering (stopped, or wedged in the kernel) must not hang
        // the runner: past this, it is taken for dead and replaced.
        nix::sys::socket::setsockopt(
            &ours,
            nix::sys::socket::sockopt::ReceiveTimeout,
            &nix::sys::time::TimeVal::new(REPLY_TIMEOUT_S, 0),
        )
        .map_err(|e| io_err("setsockopt", e))?;
        Ok(Spawner { sock: ours })
    }

    /// `Err(Ok(why))`: the spawner refused the run (it stays usable);
    /// `Err(Err(why))`: the spawner cannot be reached (replace it).
    fn spawn(&self, request: &[u8], fds: &Fds) -> Result<u32, Result<String, String>> {
        let raw = [
            fds.stdin.as_raw_fd(),
            fds.stdout.as_raw_fd(),
            fds.stderr.as_raw_fd(),
            fds.status.as_raw_fd(),
            fds.netns.as_raw_fd(),
        ];
        let _sent = loop {
            match sendmsg::<()>(
                self.sock.as_raw_fd(),
                &[IoSlice::new(request)],
                &[ControlMessage::ScmRights(&raw)],
                MsgFlags::MSG_NOSIGNAL,
                None,
            ) {
                Err(nix::errno::Errno::EINTR) => continue,
                r => break r.map_err(|e| Err(io_err("send", e)))?,
            }
        };
        let mut buf = [0u8; 4096];
        let n = loop {
            match nix::sys::socket::recv(self.sock.as_raw_fd(), &mut buf, MsgFlags::empty()) {
                Err(nix::errno::Errno::EINTR) => continue,
                r => break r.map_err(|e| Err(io_err("receive", e)))?,
            }
        };
        let reply = String::from_utf8_lossy(&buf[..n]);
        if let Some(pid) = reply.strip_prefix("ok ") {
            pid.parse().map_err(|_| Ok(io_err("reply", &reply)))
        } else if n == 0 {
            Err(Err("spawner: it exited".into()))
        } else {
            Err(Ok(format!(
                "spawner: {}",
                reply.strip_prefix("err ").unwrap_or(&reply)
            )))
        }
    }
}

/// Starts a run's helper through the spawner of `init` (started on first use, restarted
/// once if it has died). Returns the helper's PID.
pub fn spawn(init: &InitProgram, request: &Request, fds: &Fds) -> Result<u32, String> {
    type Spawners = Mutex<HashMap<(PathBuf, Vec<String>), Arc<Mutex<Option<Spawner>>>>>;
    static SPAWNERS: OnceLock<Spawners> = OnceLock::new();
    let json = serde_json::to_vec(request).map_err(|e| io_err("request", e))?;
    if json.len() > MAX_REQUEST {
        return Err(format!(
            "the run's description is too large ({} bytes; at most {MAX_REQUEST})",
            json.len()
        ));
    }
    let slot = SPAWNERS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .entry((init.path.clone(), init.args.clone()))
        .or_default()
        .clone();
    // Requests to one spawner go one at a time (each takes a fork, well under a ms).
    let mut spawner = slot.lock().unwrap_or_else(|p| p.into_inner());
    let mut last = String::new();
    for _ in 0..2 {
        if spawner.is_none() {
            *spawner = Some(Spawner::start(init)?);
        }
        match spawner.as_ref().map(|s| s.spawn(&json, fds)) {
            Some(Ok(pid)) => return Ok(pid),
            // A live spawner that refused says why, and stays: dropping it would kill
            // every run it is serving (their helpers die with it).
            Some(Err(Ok(refused))) => return Err(refused),
            // One that cannot be reached is replaced, once.
            Some(Err(Err(e))) => {
                last = e;
                *spawner = None;
            }
            None => unreachable!("started above"),
        }
    }
    Err(last)
}

/// The spawner's side: serve requests on [`SOCKET_FD`] until the runner goes away.
pub fn serve() -> ! {
    // SAFETY: descriptor 3 is the socket the runner set up for this process.
    #[allow(unsafe_code)]
    let sock = unsafe { OwnedFd::from_raw_fd(SOCKET_FD) };
    // If the runner had closed any of 0–2, received descriptors would take those numbers
    // and a helper's dup2 onto 0–3 could overwrite one before it is moved: fill them.
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
    // Helpers are reaped by the kernel; each restores the default for its own children.
    // SAFETY: no handler is installed; SIG_IGN is async-signal-safe by nature.
    #[allow(unsafe_code)]
    unsafe {
        let _ = nix::sys::signal::signal(
            nix::sys::signal::Signal::SIGCHLD,
            nix::sys::signal::SigHandler::SigIgn,
        );
    }
    let mut buf = vec![0u8; MAX_REQUEST + 1];
    loop {
        let (n, fds) = match receive(&sock, &mut buf) {
            Ok(Some(x)) => x,
            // The runner has gone (or the socket broke): nothing more to do.
            Ok(None) | Err(_) => std::process::exit(0),
        };
        // A cut message (longer than the buffer) is refused, not read in part.
        let reply = match start_helper(&sock, buf.get(..n).unwrap_or(&[]), n, fds) {
            Ok(pid) => format!("ok {pid}"),
            Err(e) => format!("err {e}"),
        };
        let _ = nix::sys::socket::send(sock.as_raw_fd(), reply.as_bytes(), MsgFlags::MSG_NOSIGNAL);
    }
}

type Received = (usize, Vec<OwnedFd>);

fn receive(sock: &OwnedFd, buf: &mut [u8]) -> Result<Option<Received>, String> {
    let mut space = nix::cmsg_space!([RawFd; N_FDS]);
    let mut iov = [IoSliceMut::new(buf)];
    let msg = recvmsg::<()>(
        sock.as_raw_fd(),
        &mut iov,
        Some(&mut space),
        MsgFlags::MSG_CMSG_CLOEXEC,
    )
    .map_err(|e| e.to_string())?;
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
    if msg.flags.contains(MsgFlags::MSG_TRUNC) || n > MAX_REQUEST {
        return Ok(Some((usize::MAX, fds)));
    }
    Ok(Some((n, fds)))
}

fn start_helper(
    sock: &OwnedFd,
    bytes: &[u8],
    len: usize,
    fds: Vec<OwnedFd>,
) -> Result<i32, String> {
    if len > MAX_REQUEST {
        return Err("request too large".into());
    }
    let fds: [OwnedFd; N_FDS] = fds
        .try_into()
        .map_err(|v: Vec<OwnedFd>| format!("{} descriptors instead of {N_FDS}", v.len()))?;
    let request: Request =
        serde_json::from_slice(bytes).map_err(|e| format!("unreadable request: {e}"))?;
    let spawner = nix::unistd::getpid();
    // SAFETY: this process has one thread, so the child may run any code.
    #[allow(unsafe_code)]
    match unsafe { nix::unistd::fork() } {
        Ok(nix::unistd::ForkResult::Child) => {
            crate::init::helper(sock.as_raw_fd(), spawner, &request, fds)
        }
        Ok(nix::unistd::ForkResult::Parent { child }) => Ok(child.as_raw()),
        Err(e) => Err(format!("fork: {e}")),
    }
}
