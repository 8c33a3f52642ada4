//! The inside of the sandbox: a slot's persistent world, and each run's program.
//!
//! Every slot has a spawner ([`crate::spawner`]): a single-threaded process, executed
//! once per runner and slot, that lives in the slot's network, mount, UTS and (for its
//! children) PID namespaces. At its start it forks the slot's **init**, PID 1 of the
//! slot's PID namespace, which builds the slot's minimal root (read-only binds of the
//! system directories, a fresh `/proc`, `/dev` with a few devices, `/etc` stubs),
//! `pivot_root`s the whole mount namespace into it and then only reaps orphans. Building
//! that root, making the namespaces and tearing them down again is most of what starting
//! a sandbox costs, and none of it depends on the run, so it is done once per slot.
//!
//! Each run's **program** process is a fork of the spawner made ahead, while the slot's
//! previous run goes on ([`standby`]): it makes its own mount, IPC and network namespaces
//! (a copy of the slot's root, so that nothing a run mounts, or leaves in System V IPC or
//! its network namespace, reaches the next), mounts a fresh `/tmp` and `/dev/shm` there,
//! installs the seccomp filters and waits, still root, for its run. When the run comes,
//! the spawner attaches the run's binds into that mount namespace and hands the run over;
//! the program joins the run's cgroups, sets its rlimits, drops to the slot's uid and gid
//! with no capabilities and `no_new_privs`, and `exec`s. What it leaves running is killed
//! with the run's cgroup before the slot's next run starts; orphans are reaped by the
//! init.
//!
//! A program that could not be started says why on the run's status descriptor, in one
//! line: `setup MESSAGE` (the sandbox failed: the judge's fault) or `exec MESSAGE` (the
//! command could not be executed: the entry's). The spawner then reports how the
//! program ended, `exit N` or `signal N`, after an `instructions N` line when the
//! program's instructions were counted and a `forbidden CALL` line when a process of the
//! run made a forbidden call (which may also come after it, for a process the program
//! left); the runner reads the first line that says why.

use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};

use nix::mount::{MntFlags, MsFlags, mount, umount2};
use nix::sched::CloneFlags;
use nix::sys::resource::{Resource, setrlimit};
use nix::sys::signal::Signal;
use nix::unistd::{Gid, Uid};
use seccompiler::BpfProgram;

use crate::spec::{Mountpoint, RunSpec, SlotSpec};

/// The status descriptor a program reports a failed start on.
pub const STATUS_FD: i32 = 3;

fn report(line: &str) {
    // SAFETY: descriptor 3 is the status pipe the spawner put there for this process;
    // nothing else in this process opens or closes it.
    #[allow(unsafe_code)]
    let fd = unsafe { BorrowedFd::borrow_raw(STATUS_FD) };
    let mut line = line.replace('\n', " ");
    line.push('\n');
    let _ = nix::unistd::write(fd, line.as_bytes());
}

/// The entry point of the program the runner executes (once per slot): the spawner
/// ([`crate::spawner`]). Never returns.
pub fn main() -> ! {
    crate::spawner::serve()
}

/// Exits if the spawner died before this process's `PR_SET_PDEATHSIG` took effect:
/// `alive` is the read end of a pipe whose write end only the spawner holds (the caller
/// has closed its own copy), so end of file on it means the spawner is gone.
fn die_with_spawner(alive: &OwnedFd) {
    let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL);
    let mut poll = [nix::poll::PollFd::new(
        alive.as_fd(),
        nix::poll::PollFlags::POLLIN,
    )];
    if !matches!(
        nix::poll::poll(&mut poll, nix::poll::PollTimeout::ZERO),
        Ok(0)
    ) {
        std::process::exit(125);
    }
}

/// The slot's init, PID 1 of its PID namespace (a fork of the spawner, sharing its mount
/// namespace): builds the slot's root and moves the namespace into it, says so on
/// `ready` (`ok`, or what failed), then reaps orphans for the life of the slot.
pub(crate) fn slot_init(slot: &SlotSpec, alive: OwnedFd, ready: OwnedFd) -> ! {
    die_with_spawner(&alive);
    drop(alive);
    let answer = match build_root(slot) {
        Ok(()) => "ok".to_string(),
        Err(e) => e,
    };
    let _ = nix::unistd::write(&ready, answer.as_bytes());
    drop(ready);
    // Orphans of every run are re-parented here. SIGCHLD is blocked and waited for: a
    // PID 1 drops signals it has no handler for, but blocked ones stay pending.
    let mut chld = nix::sys::signal::SigSet::empty();
    chld.add(Signal::SIGCHLD);
    let _ = chld.thread_block();
    loop {
        let _ = chld.wait();
        while let Ok(status) = nix::sys::wait::waitpid(
            None,
            Some(nix::sys::wait::WaitPidFlag::WNOHANG | nix::sys::wait::WaitPidFlag::__WALL),
        ) {
            if status == nix::sys::wait::WaitStatus::StillAlive {
                break;
            }
        }
    }
}

/// A run's program, forked by the spawner ahead of the run (see [`crate::spawner`]): it
/// makes its own mount, IPC and network namespaces (see [`prepare`]), mounts a fresh `/tmp`
/// (of `tmp_bytes`) and `/dev/shm` there and installs the seccomp filters, then says
/// it is ready on `sock`, handing over its mount namespace. The spawner attaches the
/// run's binds into that namespace and sends the run: its request, its stdin, stdout,
/// stderr and status descriptors and the files it joins its cgroups by. The process then
/// takes the descriptors, joins the cgroups, sets its limits, drops its privileges and
/// `exec`s. Never returns.
///
/// Until the run comes it is root (only seccomp-filtered): a same-uid process left over
/// from the slot's last run could otherwise signal it, or reach into it, while it waits.
pub(crate) fn standby(
    slot: &SlotSpec,
    sock: OwnedFd,
    alive: OwnedFd,
    tmp_bytes: u64,
    filters: &[BpfProgram],
    net: Net,
    idle: bool,
) -> ! {
    // First of all: the spawner's descriptors of the run in progress (its status pipe
    // above all, whose closing tells the runner the run is over) must not stay open here.
    let mut keep = vec![sock.as_raw_fd(), alive.as_raw_fd()];
    if let Net::Enter(Some((ns, _)), _) = &net {
        keep.push(ns.as_raw_fd());
    }
    close_except(STATUS_FD, &keep);
    die_with_spawner(&alive);
    drop(alive);
    // Out of the way of 0–3 and of the descriptors the run brings.
    let sock = match high(sock) {
        Ok(s) => s,
        Err(_) => std::process::exit(125),
    };
    // Made while the slot's current run goes on: it must not take the CPU from that run
    // or from the spawner, which reports the run's end. (A spawner that needs it before
    // it is ready raises it back.) A slot's first one is made before any run.
    if idle {
        let _ = set_policy(nix::libc::SCHED_IDLE);
    }
    let ready = match prepare(tmp_bytes, filters, net) {
        // The listener goes to the spawner only: a program holding it could answer its
        // own forbidden calls. (It is close-on-exec too.)
        Ok((ns, listener, (netns, made))) => {
            let fds = [ns.as_raw_fd(), listener.as_raw_fd(), netns.as_raw_fd()];
            crate::spawner::send(&sock, format!("ok {made}").as_bytes(), &fds)
        }
        Err(e) => crate::spawner::send(&sock, format!("err {e}").as_bytes(), &[]),
    };
    if ready.is_err() {
        std::process::exit(125);
    }
    let mut buf = vec![0u8; crate::spawner::MAX_REQUEST + 1];
    let (n, fds) = match crate::spawner::receive(&sock, &mut buf) {
        Ok(Some(x)) => x,
        // The spawner has gone, or let this process go unused. (Never 0: were a run
        // handed over after all, that would read as the program's success.)
        _ => std::process::exit(125),
    };
    let cgroups = take_descriptors(fds);
    drop(sock);
    let fail = |what: String| -> ! {
        report(&format!("setup {what}"));
        std::process::exit(125);
    };
    let request: crate::spec::Request = match buf
        .get(..n)
        .map(serde_json::from_slice)
        .unwrap_or_else(|| Err(serde::de::Error::custom("request too large")))
    {
        Ok(r) => r,
        Err(e) => fail(format!("unreadable run: {e}")),
    };
    let spec = &request.spec;
    // First, so that the rest of its start is the run's, as the program's is: "0" is
    // the writing thread (v1 `tasks`) or process (`cgroup.procs`), the same here: this
    // process has one thread. Without its cgroups nothing of the program may run.
    for procs in cgroups {
        if let Err(e) = nix::unistd::write(&procs, b"0") {
            fail(format!("joining the run's cgroup: {e}"));
        }
    }
    if let Err(e) = set_policy(nix::libc::SCHED_OTHER) {
        fail(e);
    }
    if let Some(Err(e)) = spec.cpu.map(crate::run::pin_thread) {
        fail(e);
    }
    match start(slot, spec) {
        // The judge's side failed: not the program's doing.
        Err(Failed::Setup(e)) => fail(e),
        // The command could not be executed: the program's.
        Err(Failed::Exec(e)) => {
            report(&format!("exec {e}"));
            std::process::exit(127);
        }
        Ok(never) => match never {},
    }
}

/// The network namespace a standby gets ready in.
pub(crate) enum Net<'a> {
    /// One of its own: `previous` if it is as it was made, else a new one
    /// ([`crate::netns::enter`]); the keys hash namespaces' states.
    Enter(Option<crate::netns::Namespace>, &'a std::hash::RandomState),
    /// The one it was forked in, the spawner's, new and never used by a run: only for
    /// the one program of a one-shot slot ([`crate::netns::keep`]).
    Keep,
}

/// Why a program was not executed.
enum Failed {
    /// Limits, privileges, descriptors: the sandbox failed.
    Setup(String),
    /// The command itself: missing, not executable, or not a valid string.
    Exec(String),
}

/// Sets this process's scheduling policy (priority 0: `SCHED_IDLE` or `SCHED_OTHER`).
fn set_policy(policy: nix::libc::c_int) -> Result<(), String> {
    let param = nix::libc::sched_param { sched_priority: 0 };
    // SAFETY: sched_setscheduler on this process with a parameter that lives across the call.
    #[allow(unsafe_code)]
    let r = unsafe { nix::libc::sched_setscheduler(0, policy, &param) };
    if r == 0 {
        Ok(())
    } else {
        Err(format!(
            "sched_setscheduler: {}",
            std::io::Error::last_os_error()
        ))
    }
}

/// What a standby does before its run is known: a new session (no controlling terminal,
/// so no TIOCSTI keystroke injection) and session keyring, its own namespaces (network
/// included, [`crate::netns`]) and file systems, the filters. Returns its mount namespace
/// and the listener of its filter ([`crate::seccomp::install_notifying`]), and its
/// network namespace with the hash of its state when made.
fn prepare(
    tmp_bytes: u64,
    filters: &[BpfProgram],
    net: Net,
) -> Result<(OwnedFd, OwnedFd, crate::netns::Namespace), String> {
    nix::unistd::setsid().map_err(|e| format!("setsid: {e}"))?;
    // A new, empty session keyring: the program would otherwise possess the runner's (a
    // service manager gives each service one), had it a way to keyrings at all (the
    // filter forbids every keyring call).
    const KEYCTL_JOIN_SESSION_KEYRING: nix::libc::c_long = 1;
    // SAFETY: keyctl with a null name (an anonymous keyring) and no other argument.
    #[allow(unsafe_code)]
    let joined = unsafe {
        nix::libc::syscall(
            nix::libc::SYS_keyctl,
            KEYCTL_JOIN_SESSION_KEYRING,
            std::ptr::null::<nix::libc::c_char>(),
        )
    };
    if joined < 0 {
        return Err(format!(
            "a session keyring: {}",
            std::io::Error::last_os_error()
        ));
    }
    nix::sched::unshare(CloneFlags::CLONE_NEWNS | CloneFlags::CLONE_NEWIPC)
        .map_err(|e| format!("unshare: {e}"))?;
    let net = match net {
        Net::Enter(previous, keys) => crate::netns::enter(previous, keys)?,
        Net::Keep => crate::netns::keep()?,
    };
    let (nosuid, nodev, noexec) = (MsFlags::MS_NOSUID, MsFlags::MS_NODEV, MsFlags::MS_NOEXEC);
    mount_fs(
        Path::new("/tmp"),
        "tmpfs",
        nosuid | nodev,
        &tmp_options(tmp_bytes),
    )?;
    // Python's multiprocessing needs a shared-memory directory; this one is the run's own.
    mount_fs(
        Path::new("/dev/shm"),
        "tmpfs",
        nosuid | nodev | noexec,
        "size=64m,mode=1777",
    )?;
    let ns = own_mount_namespace()?;
    // The bounding set emptied now, while root: nothing an `exec` could regain. (This
    // process keeps the capabilities it has until it drops to the slot's ids.)
    for cap in 0..64 {
        // SAFETY: prctl with integer arguments only.
        #[allow(unsafe_code)]
        let r = unsafe { nix::libc::prctl(nix::libc::PR_CAPBSET_DROP, cap, 0, 0, 0) };
        if r != 0 {
            break;
        }
    }
    // The spawner, a Rust program, ignores SIGPIPE; the program gets the default.
    // SAFETY: restoring a default disposition installs no handler.
    #[allow(unsafe_code)]
    unsafe { nix::sys::signal::signal(Signal::SIGPIPE, nix::sys::signal::SigHandler::SigDfl) }
        .map_err(|e| format!("signal: {e}"))?;
    let (notifying, rest) = filters.split_first().ok_or("no seccomp filter")?;
    let listener = crate::seccomp::install_notifying(notifying)?;
    for f in rest {
        seccompiler::apply_filter(f).map_err(|e| format!("seccomp: {e}"))?;
    }
    Ok((ns, listener, net))
}

/// This process's mount namespace, to enter again with `setns`.
pub(crate) fn own_mount_namespace() -> Result<OwnedFd, String> {
    nix::fcntl::open(
        "/proc/self/ns/mnt",
        nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_CLOEXEC,
        nix::sys::stat::Mode::empty(),
    )
    .map_err(|e| format!("open /proc/self/ns/mnt: {e}"))
}

fn tmp_options(bytes: u64) -> String {
    format!("size={},mode=1777", bytes.max(4096))
}

/// `fd` moved to a number of 10 or more (close-on-exec).
fn high(fd: OwnedFd) -> nix::Result<OwnedFd> {
    let moved = nix::fcntl::fcntl(&fd, nix::fcntl::FcntlArg::F_DUPFD_CLOEXEC(10))?;
    // SAFETY: F_DUPFD_CLOEXEC returned a new descriptor that nothing else owns.
    #[allow(unsafe_code)]
    Ok(unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(moved) })
}

/// Puts the run's stdin, stdout, stderr and status descriptors on 0–3, and returns the
/// rest (its `cgroup.procs`). The spawner sends all of them or none; without a status
/// descriptor nothing can be reported, so a failure before it is placed only exits.
fn take_descriptors(mut fds: Vec<OwnedFd>) -> Vec<OwnedFd> {
    if fds.len() < 4 {
        std::process::exit(125);
    }
    let rest = fds.split_off(4);
    // Moved up first, so that none is overwritten before it is placed.
    let up: Vec<OwnedFd> = fds
        .into_iter()
        .map(|fd| high(fd).unwrap_or_else(|_| std::process::exit(125)))
        .collect();
    // The status descriptor first: a failure after it is reported.
    for target in [STATUS_FD, 0, 1, 2] {
        let Some(fd) = up.get(target as usize) else {
            std::process::exit(125);
        };
        // SAFETY: dup2 onto 0–3, which this process owns: the standard descriptors and
        // the status descriptor (`report` writes there).
        #[allow(unsafe_code)]
        if unsafe { nix::libc::dup2(fd.as_raw_fd(), target) } != target {
            report(&format!("setup dup2: {}", std::io::Error::last_os_error()));
            std::process::exit(125);
        }
    }
    rest
}

/// Closes every descriptor from `first` up, except those in `keep`.
fn close_except(first: RawFd, keep: &[RawFd]) {
    let mut keep: Vec<RawFd> = keep.iter().copied().filter(|&k| k >= first).collect();
    keep.sort_unstable();
    let mut lo = first;
    for hi in keep.into_iter().map(Some).chain([None]) {
        let end = hi.map_or(RawFd::MAX, |k| k - 1);
        if lo <= end {
            // SAFETY: close_range with integer bounds; only descriptors this process no
            // longer uses are in the range.
            #[allow(unsafe_code)]
            unsafe {
                nix::libc::syscall(nix::libc::SYS_close_range, lo as u32, end as u32, 0u32);
            }
        }
        lo = hi.map_or(RawFd::MAX, |k| k.saturating_add(1));
    }
}

pub(crate) fn close_all_from(first: RawFd) {
    close_except(first, &[]);
}

/// The run's own mounts, made by the spawner in the namespace of the run's standby
/// (a copy of the slot's root): the run's binds, and its `/tmp` resized to the run's
/// limit if the standby was made for another.
pub(crate) fn run_mounts(
    spec: &RunSpec,
    trees: &[OwnedFd],
    tmp_bytes_now: u64,
) -> Result<(), String> {
    if trees.len() != spec.binds.len() {
        return Err(format!(
            "{} bind sources for {} binds",
            trees.len(),
            spec.binds.len()
        ));
    }
    // Mount points missing from the slot's root are made once (the root is read-only
    // only through this mount, so it is made writable here, in this namespace alone).
    let missing: Vec<&Mountpoint> = spec
        .binds
        .iter()
        .filter(|b| std::fs::symlink_metadata(&b.dst).is_err())
        .collect();
    if !missing.is_empty() {
        remount_root(MsFlags::empty())?;
        for b in missing {
            make_mountpoint(&b.dst, b.file)?;
        }
        remount_root(MsFlags::MS_RDONLY)?;
    }
    for (b, tree) in spec.binds.iter().zip(trees) {
        crate::tree::attach(tree.as_fd(), &b.dst)?;
    }
    if spec.tmp_bytes.max(4096) != tmp_bytes_now.max(4096) {
        let tmp = Path::new("/tmp");
        let flags = MsFlags::MS_REMOUNT | MsFlags::MS_NOSUID | MsFlags::MS_NODEV;
        mount(
            None::<&str>,
            tmp,
            None::<&str>,
            flags,
            Some(tmp_options(spec.tmp_bytes).as_str()),
        )
        .map_err(step("resize", tmp))?;
    }
    Ok(())
}

fn remount_root(extra: MsFlags) -> Result<(), String> {
    let flags = MsFlags::MS_REMOUNT | MsFlags::MS_BIND | MsFlags::MS_NOSUID | MsFlags::MS_NODEV;
    mount(None::<&str>, "/", None::<&str>, flags | extra, None::<&str>)
        .map_err(step("remount", Path::new("/")))
}

/// An empty directory (or file, for a file bind) to mount on, and its parents.
fn make_mountpoint(dst: &Path, file: bool) -> Result<(), String> {
    if !file {
        return std::fs::create_dir_all(dst).map_err(io_step("mkdir", dst));
    }
    if let Some(parent) = dst.parent() {
        std::fs::create_dir_all(parent).map_err(io_step("mkdir", parent))?;
    }
    std::fs::write(dst, b"").map_err(io_step("create", dst))
}

/// A failed step of building the root: what was being done, to which path, and errno.
fn step(what: &str, path: &Path) -> impl FnOnce(nix::errno::Errno) -> String {
    let msg = format!("{what} {}", path.display());
    move |e| format!("{msg}: {e}")
}

fn io_step(what: &str, path: &Path) -> impl FnOnce(std::io::Error) -> String {
    let msg = format!("{what} {}", path.display());
    move |e| format!("{msg}: {e}")
}

/// `dst` (absolute) under the new root.
fn under(root: &Path, dst: &Path) -> PathBuf {
    root.join(dst.strip_prefix("/").unwrap_or(dst))
}

/// A read-only view of the host's `src` at the same place under `root`
/// ([`crate::tree::view`]: inodes of the slot's own, so that no inotify watch or lock on
/// them reaches another slot's runs).
fn bind_system(root: &Path, src: &Path, dst: &Path) -> Result<(), String> {
    let target = under(root, dst);
    let meta = std::fs::symlink_metadata(src).map_err(io_step("cannot bind", src))?;
    if meta.file_type().is_symlink() {
        // Merged-/usr systems have /bin -> usr/bin: keep the link, not a second mount.
        let link = std::fs::read_link(src).map_err(io_step("read link", src))?;
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(io_step("mkdir", parent))?;
        }
        return std::os::unix::fs::symlink(&link, &target).map_err(io_step("symlink", &target));
    }
    make_mountpoint(&target, !meta.is_dir())?;
    let view = crate::tree::view(src)?;
    crate::tree::attach(view.as_fd(), &target)
}

/// Creates `dir` (and its parents) and mounts a new file system of `kind` on it.
fn mount_fs(dir: &Path, kind: &str, flags: MsFlags, options: &str) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(io_step("mkdir", dir))?;
    mount(Some(kind), dir, Some(kind), flags, Some(options))
        .map_err(step(&format!("mount {kind} on"), dir))
}

/// Builds the slot's root and moves the mount namespace (which only the slot's
/// processes share) into it.
fn build_root(slot: &SlotSpec) -> Result<(), String> {
    // Nothing we mount may propagate back to the host.
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .map_err(step("make private", Path::new("/")))?;
    // The new root covers the host's /tmp in this namespace alone: it needs no directory
    // of its own on the host, so nothing is left there however the slot ends.
    let root = Path::new("/tmp");
    let (nosuid, nodev, noexec) = (MsFlags::MS_NOSUID, MsFlags::MS_NODEV, MsFlags::MS_NOEXEC);
    mount_fs(root, "tmpfs", nosuid | nodev, "size=16m,mode=0755")?;
    for dir in &slot.system {
        // From the runtime's root file system where the slot has one (its links, such as
        // a merged-/usr `/bin -> usr/bin`, are relative and stay inside it).
        let src = match &slot.root {
            Some(r) => under(r, dir),
            None => dir.clone(),
        };
        if std::fs::symlink_metadata(&src).is_ok() {
            bind_system(root, &src, dir)?;
        }
    }
    // Each run mounts its own /tmp here.
    let tmp = root.join("tmp");
    std::fs::create_dir(&tmp).map_err(io_step("mkdir", &tmp))?;
    // The programs see only their own processes, not the init that runs as root.
    mount_fs(
        &root.join("proc"),
        "proc",
        nosuid | nodev | noexec,
        "hidepid=invisible",
    )?;
    build_dev(root)?;
    build_etc(root, slot)?;

    let old = root.join(".oldroot");
    std::fs::create_dir_all(&old).map_err(io_step("mkdir", &old))?;
    nix::unistd::pivot_root(root, &old).map_err(step("pivot_root into", root))?;
    nix::unistd::chdir("/").map_err(step("chdir", Path::new("/")))?;
    umount2("/.oldroot", MntFlags::MNT_DETACH).map_err(step("detach", Path::new("/.oldroot")))?;
    std::fs::remove_dir("/.oldroot").map_err(io_step("rmdir", Path::new("/.oldroot")))?;
    // Read-only through this mount (not the file system: a run makes missing mount
    // points in its own namespace's writable copy of it).
    remount_root(MsFlags::MS_RDONLY)?;
    nix::unistd::sethostname("sandbox").map_err(step("sethostname", Path::new("sandbox")))?;
    Ok(())
}

/// The files of a runtime's `/etc` that the sandbox writes itself (accounts, hosts) or
/// that no program of a run may read (password hashes).
const OWN_ETC: &[&str] = &[
    "passwd", "group", "hosts", "shadow", "gshadow", "shadow-", "gshadow-",
];

/// Copies the tree `src` into `dst`: directories, links as links, regular files of at
/// most 1 MiB (the slot's root is a small tmpfs), with their modes; nothing else.
fn copy_etc(src: &Path, dst: &Path) -> Result<(), String> {
    let entries = std::fs::read_dir(src).map_err(io_step("read", src))?;
    for entry in entries {
        let entry = entry.map_err(io_step("read", src))?;
        let name = entry.file_name();
        if src.ends_with("etc") && OWN_ETC.iter().any(|n| name == *n) {
            continue;
        }
        let (from, to) = (entry.path(), dst.join(&name));
        let meta = std::fs::symlink_metadata(&from).map_err(io_step("stat", &from))?;
        if meta.is_symlink() {
            let link = std::fs::read_link(&from).map_err(io_step("read link", &from))?;
            std::os::unix::fs::symlink(&link, &to).map_err(io_step("symlink", &to))?;
        } else if meta.is_dir() {
            std::fs::create_dir(&to).map_err(io_step("mkdir", &to))?;
            copy_etc(&from, &to)?;
            std::fs::set_permissions(&to, meta.permissions()).map_err(io_step("chmod", &to))?;
        } else if meta.is_file() && meta.len() <= 1 << 20 {
            std::fs::copy(&from, &to).map_err(io_step("copy", &from))?;
        }
    }
    Ok(())
}

fn build_dev(root: &Path) -> Result<(), String> {
    let dev = root.join("dev");
    mount_fs(
        &dev,
        "tmpfs",
        MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC,
        "size=64k,mode=0755",
    )?;
    // Made afresh rather than bound from the host: a node costs one mknod, a bind two
    // mounts (and more at teardown).
    for (name, minor) in [
        ("null", 3),
        ("zero", 5),
        ("full", 7),
        ("random", 8),
        ("urandom", 9),
    ] {
        let path = dev.join(name);
        nix::sys::stat::mknod(
            &path,
            nix::sys::stat::SFlag::S_IFCHR,
            nix::sys::stat::Mode::from_bits_truncate(0o666),
            nix::sys::stat::makedev(1, minor),
        )
        .map_err(step("mknod", &path))?;
        // The umask may have taken bits away.
        nix::sys::stat::fchmodat(
            nix::fcntl::AT_FDCWD,
            &path,
            nix::sys::stat::Mode::from_bits_truncate(0o666),
            nix::sys::stat::FchmodatFlags::FollowSymlink,
        )
        .map_err(step("chmod", &path))?;
    }
    for (link, target) in [
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ] {
        let path = dev.join(link);
        std::os::unix::fs::symlink(target, &path).map_err(io_step("symlink", &path))?;
    }
    // Each run mounts its own /dev/shm here.
    let shm = dev.join("shm");
    std::fs::create_dir(&shm).map_err(io_step("mkdir", &shm))?;
    // Read-only from now on: the slot's runs share it, and a node's times or a new file
    // would carry from one run to the next.
    let flags = MsFlags::MS_REMOUNT
        | MsFlags::MS_BIND
        | MsFlags::MS_RDONLY
        | MsFlags::MS_NOSUID
        | MsFlags::MS_NOEXEC;
    mount(None::<&str>, &dev, None::<&str>, flags, None::<&str>).map_err(step("remount", &dev))
}

fn build_etc(root: &Path, spec: &SlotSpec) -> Result<(), String> {
    let etc = root.join("etc");
    std::fs::create_dir_all(&etc).map_err(io_step("mkdir", &etc))?;
    if let Some(system) = &spec.root {
        // A runtime's whole /etc (its alternatives, certificates, fonts, linker cache
        // belong to its packages), copied once per slot; the accounts and hosts are the
        // sandbox's own, written below.
        copy_etc(&system.join("etc"), &etc)?;
    }
    let files = [
        (
            "passwd",
            format!(
                "root:x:0:0:root:/nonexistent:/usr/sbin/nologin\nsandbox:x:{}:{}:sandbox:/tmp:/usr/sbin/nologin\n",
                spec.uid, spec.gid
            ),
        ),
        ("group", format!("root:x:0:\nsandbox:x:{}:\n", spec.gid)),
        (
            "hosts",
            "127.0.0.1 localhost sandbox\n::1 localhost\n".to_string(),
        ),
    ];
    for (name, text) in files {
        let path = etc.join(name);
        std::fs::write(&path, text).map_err(io_step("write", &path))?;
    }
    if spec.root.is_some() {
        return Ok(());
    }
    // What the dynamic linker and the C library read; nothing else of the host's /etc.
    // Copies (small files), not binds: cheaper to make and to tear down.
    for name in ["ld.so.cache", "ld.so.conf", "localtime"] {
        let host = Path::new("/etc").join(name);
        let copy = etc.join(name);
        match std::fs::symlink_metadata(&host) {
            Ok(m) if m.is_symlink() => {
                let link = std::fs::read_link(&host).map_err(io_step("read link", &host))?;
                std::os::unix::fs::symlink(&link, &copy).map_err(io_step("symlink", &copy))?;
            }
            Ok(m) if m.is_file() && m.len() <= 1 << 20 => {
                std::fs::copy(&host, &copy).map_err(io_step("copy", &host))?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// `argv[0]` as a path: itself when it has a slash, else the first executable file of
/// that name on the PATH the program gets.
fn resolve(spec: &RunSpec) -> Result<PathBuf, String> {
    let name = spec.argv.first().ok_or("no command")?;
    if name.contains('/') {
        return Ok(PathBuf::from(name));
    }
    let path = spec
        .env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.as_str())
        .unwrap_or("/usr/local/bin:/usr/bin:/bin");
    for dir in path.split(':').filter(|d| !d.is_empty()) {
        let candidate = Path::new(dir).join(name);
        if nix::unistd::access(&candidate, nix::unistd::AccessFlags::X_OK).is_ok()
            && candidate.is_file()
        {
            return Ok(candidate);
        }
    }
    Err(format!("{name}: command not found in PATH {path}"))
}

/// Limits and privileges, then the `exec`.
fn start(slot: &SlotSpec, spec: &RunSpec) -> Result<std::convert::Infallible, Failed> {
    let (exe, argv, env) = limits(spec).map_err(Failed::Setup)??;
    privileges(slot).map_err(Failed::Setup)?;
    nix::unistd::execve(&exe, &argv, &env)
        .map_err(|e| Failed::Exec(format!("{}: {e}", exe.to_string_lossy())))
}

/// The command as `execve` takes it.
type Command = (CString, Vec<CString>, Vec<CString>);

/// Sets the rlimits and working directory and resolves the command (an `Err` inside
/// `Ok`: the command is at fault).
fn limits(spec: &RunSpec) -> Result<Result<Command, Failed>, String> {
    let err = |what: &'static str| move |e: nix::errno::Errno| format!("{what}: {e}");
    let limit = |r: Resource, v: u64| setrlimit(r, v, v).map_err(err("setrlimit"));
    // The CPU limit is enforced by the runner from the cgroup; RLIMIT_CPU is the
    // per-process backstop (SIGXCPU at the soft limit, SIGKILL a second later), a second
    // above the limit: the kernel checks it against the process's clock at each tick,
    // which ran ahead of the cgroup's count, so a backstop at the limit itself stopped
    // programs at 0.985 s of a 1 s limit.
    setrlimit(
        Resource::RLIMIT_CPU,
        spec.cpu_seconds + 1,
        spec.cpu_seconds + 2,
    )
    .map_err(err("setrlimit"))?;
    limit(Resource::RLIMIT_FSIZE, spec.file_size_bytes)?;
    limit(Resource::RLIMIT_NOFILE, spec.open_files)?;
    limit(Resource::RLIMIT_CORE, 0)?;
    // POSIX message queues and locked memory (`mlock`, `SHM_LOCK`) are counted per user,
    // and a slot's runs share one: what a run held is freed only when its IPC namespace
    // is torn down, after the run, so the next run would find less. Entries need neither
    // (and the judge's own locked-memory limit must not leak into a run).
    limit(Resource::RLIMIT_MSGQUEUE, 0)?;
    limit(Resource::RLIMIT_MEMLOCK, 0)?;
    nix::unistd::chdir(&spec.cwd).map_err(|e| format!("chdir {}: {e}", spec.cwd.display()))?;
    Ok(command(spec).map_err(Failed::Exec))
}

fn command(spec: &RunSpec) -> Result<Command, String> {
    let exe = resolve(spec)?;
    let c = |s: &str| CString::new(s).map_err(|_| format!("{s:?} holds a NUL byte"));
    let argv: Vec<CString> = spec.argv.iter().map(|a| c(a)).collect::<Result<_, _>>()?;
    let env: Vec<CString> = spec
        .env
        .iter()
        .map(|(k, v)| c(&format!("{k}={v}")))
        .collect::<Result<_, _>>()?;
    Ok((c(&exe.to_string_lossy())?, argv, env))
}

/// Drops every privilege and closes every descriptor the program must not have.
fn privileges(slot: &SlotSpec) -> Result<(), String> {
    let err = |what: &'static str| move |e: nix::errno::Errno| format!("{what}: {e}");
    // Capabilities: the bounding set is empty (`prepare`); the change to the slot's ids
    // clears the permitted and effective sets.
    let (uid, gid) = (Uid::from_raw(slot.uid), Gid::from_raw(slot.gid));
    nix::unistd::setgroups(&[gid]).map_err(err("setgroups"))?;
    nix::unistd::setresgid(gid, gid, gid).map_err(err("setresgid"))?;
    nix::unistd::setresuid(uid, uid, uid).map_err(err("setresuid"))?;
    // A change of credentials clears the parent-death signal: set it again.
    nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(err("PR_SET_PDEATHSIG"))?;
    nix::sys::prctl::set_no_new_privs().map_err(err("no_new_privs"))?;
    // The status pipe must not reach the program.
    nix::fcntl::fcntl(
        // SAFETY: see `report`.
        #[allow(unsafe_code)]
        unsafe {
            BorrowedFd::borrow_raw(STATUS_FD)
        },
        nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::FD_CLOEXEC),
    )
    .map_err(err("fcntl"))?;
    // Nothing but 0–3 may reach the program: whatever the runner itself inherited and
    // left open (a shell's `exec 7</`) would otherwise pass through.
    close_all_from(STATUS_FD + 1);
    Ok(())
}
