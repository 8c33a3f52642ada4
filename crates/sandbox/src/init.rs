//! The inside of a run. The runner executes this code once, as the single-threaded
//! spawner ([`crate::spawner`]), which forks a helper per run.
//!
//! Three processes per run:
//! - the **helper**, a fork of the spawner, puts the run's descriptors in place, joins its
//!   cgroups and the slot's network namespace, `unshare`s new mount, IPC, UTS and PID
//!   namespaces, forks the init and waits for it;
//! - the **init**, PID 1 of the new namespace, builds the minimal root (read-only binds,
//!   fresh `/proc`, `/dev` with a few devices, size-capped `/tmp`), `pivot_root`s into it,
//!   forks the program and reaps every orphan until the program ends. When the init
//!   exits, the kernel kills whatever is left in the namespace;
//! - the **program**, PID 2, sets its rlimits, drops to the slot's uid and gid with no
//!   capabilities and `no_new_privs`, installs the seccomp filters and `exec`s.
//!
//! The init reports the program's ending (or why the sandbox could not be built) as one
//! line on file descriptor 3: `exit N`, `signal N`, `setup MESSAGE` (the sandbox failed) or
//! `exec MESSAGE` (the program could not be started), after an `instructions N` line when
//! the program's instructions were counted.

use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};

use nix::mount::{MntFlags, MsFlags, mount, umount2};
use nix::sched::CloneFlags;
use nix::sys::resource::{Resource, setrlimit};
use nix::sys::signal::Signal;
use nix::sys::wait::{WaitStatus, waitpid};
use nix::unistd::{ForkResult, Gid, Uid, fork};
use serde::{Deserialize, Serialize};

/// The status descriptor the init reports on.
pub const STATUS_FD: i32 = 3;

/// A bind mount into the sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bind {
    pub src: PathBuf,
    pub dst: PathBuf,
    pub writable: bool,
}

/// Set in the environment of the spawner (the runner starts it; nobody else should).
pub const SPAWNER_ENV: &str = "PHYSIOJUDGE_SANDBOX_SPAWNER";

/// Everything the inside needs, sent to the spawner as JSON with each run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InitSpec {
    /// An empty host directory to build the new root in.
    pub root: PathBuf,
    /// Host paths shown read-only at the same place (system directories, symlinks kept).
    pub system: Vec<PathBuf>,
    pub binds: Vec<Bind>,
    pub tmp_bytes: u64,
    pub uid: u32,
    pub gid: u32,
    pub cpu_seconds: u64,
    pub file_size_bytes: u64,
    pub open_files: u64,
    pub env: Vec<(String, String)>,
    pub cwd: PathBuf,
    pub argv: Vec<String>,
    /// Count the program's user-space instructions (the machine has a counter).
    pub count_instructions: bool,
}

fn report(line: &str) {
    // SAFETY: descriptor 3 is the status pipe the runner set up for this process tree;
    // nothing else in this process opens or closes it.
    #[allow(unsafe_code)]
    let fd = unsafe { BorrowedFd::borrow_raw(STATUS_FD) };
    let mut line = line.replace('\n', " ");
    line.push('\n');
    let _ = nix::unistd::write(fd, line.as_bytes());
}

/// The entry point of the program the runner executes (once): the spawner, which forks
/// the helper of every run ([`crate::spawner`]). Never returns.
pub fn main() -> ! {
    crate::spawner::serve()
}

/// The helper of one run, in a fresh fork of the spawner: puts the run's descriptors in
/// place, joins its cgroups and namespaces, forks the init and waits for it.
pub(crate) fn helper(
    spawner_socket: RawFd,
    spawner: nix::unistd::Pid,
    request: &crate::spawner::Request,
    fds: [OwnedFd; 5],
) -> ! {
    let spec = &request.spec;
    // SAFETY: restoring the default disposition (the spawner ignores SIGCHLD so that
    // the kernel reaps its helpers; this process must wait for its init).
    #[allow(unsafe_code)]
    unsafe {
        let _ = nix::sys::signal::signal(Signal::SIGCHLD, nix::sys::signal::SigHandler::SigDfl);
    }
    let _ = nix::unistd::close(spawner_socket);
    let [stdin, stdout, stderr, status, netns] = fds;
    for (fd, target) in [
        (&stdin, 0),
        (&stdout, 1),
        (&stderr, 2),
        (&status, STATUS_FD),
    ] {
        // SAFETY: dup2 onto the standard descriptors and the status descriptor, which
        // this process owns (the spawner's own were 0–3; the received ones are above).
        #[allow(unsafe_code)]
        if unsafe { nix::libc::dup2(fd.as_raw_fd(), target) } != target {
            let e = std::io::Error::last_os_error();
            let _ = nix::unistd::write(&status, format!("setup dup2: {e}\n").as_bytes());
            std::process::exit(125);
        }
    }
    drop((stdin, stdout, stderr, status));
    let fail = |what: String| -> ! {
        report(&format!("setup {what}"));
        std::process::exit(125);
    };
    // Join the run's cgroups first, so that everything started later is in them.
    for procs in &request.cgroup_procs {
        if let Err(e) = std::fs::write(procs, "0") {
            fail(format!("joining the cgroup {}: {e}", procs.display()));
        }
    }
    if let Err(e) = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL) {
        fail(format!("PR_SET_PDEATHSIG: {e}"));
    }
    // The spawner may have died between the fork and the prctl, too early for the signal.
    if nix::unistd::getppid() != spawner {
        std::process::exit(125);
    }
    // A new session: no controlling terminal, so no TIOCSTI keystroke injection.
    if let Err(e) = nix::unistd::setsid() {
        fail(format!("setsid: {e}"));
    }
    if let Err(e) = nix::sched::setns(&netns, CloneFlags::CLONE_NEWNET) {
        fail(format!("joining the slot's network namespace: {e}"));
    }
    drop(netns);
    let flags = CloneFlags::CLONE_NEWNS
        | CloneFlags::CLONE_NEWIPC
        | CloneFlags::CLONE_NEWUTS
        | CloneFlags::CLONE_NEWPID;
    if let Err(e) = nix::sched::unshare(flags) {
        fail(format!("unshare: {e}"));
    }
    // The init cannot check its parent with getppid (0 across the PID namespace); it
    // checks that the helper still holds this pipe's write end instead.
    let alive = match nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC) {
        Ok(p) => p,
        Err(e) => fail(format!("pipe: {e}")),
    };
    // SAFETY: single-threaded process (a fork of the single-threaded spawner).
    #[allow(unsafe_code)]
    match unsafe { fork() } {
        Ok(ForkResult::Child) => {
            let (r, w) = alive;
            drop(w);
            init(spec, r)
        }
        Ok(ForkResult::Parent { child }) => {
            drop(alive.0);
            let _keep = alive.1;
            let _ = nix::unistd::close(STATUS_FD);
            loop {
                match waitpid(child, None) {
                    Err(nix::errno::Errno::EINTR) => continue,
                    _ => std::process::exit(0),
                }
            }
        }
        Err(e) => fail(format!("fork: {e}")),
    }
}

fn init(spec: &InitSpec, helper_alive: OwnedFd) -> ! {
    let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL);
    // End of file on the pipe: the helper died before the prctl could take effect.
    let mut poll = [nix::poll::PollFd::new(
        helper_alive.as_fd(),
        nix::poll::PollFlags::POLLIN,
    )];
    match nix::poll::poll(&mut poll, nix::poll::PollTimeout::ZERO) {
        Ok(0) => drop(helper_alive),
        _ => std::process::exit(125),
    }
    if let Err(e) = build_root(spec) {
        report(&format!("setup {e}"));
        std::process::exit(125);
    }
    // The program waits until its instruction counter is open (it must be before the
    // exec); without a counter there is nothing to wait for.
    let go = match spec.count_instructions {
        true => match nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC) {
            Ok(p) => Some(p),
            Err(e) => {
                report(&format!("setup pipe: {e}"));
                std::process::exit(125);
            }
        },
        false => None,
    };
    // SAFETY: single-threaded process (see `main`).
    #[allow(unsafe_code)]
    let program = match unsafe { fork() } {
        Ok(ForkResult::Child) => {
            if let Some((r, w)) = go {
                drop(w);
                // Returns when the init closes its end.
                let _ = nix::unistd::read(&r, &mut [0u8]);
            }
            program(spec)
        }
        Ok(ForkResult::Parent { child }) => child,
        Err(e) => {
            report(&format!("setup fork: {e}"));
            std::process::exit(125);
        }
    };
    let counter = go.and_then(|(_r, w)| {
        let counter = crate::instructions::count_from_exec(program.as_raw());
        drop(w); // lets the program go on
        counter
    });
    let report_count = || {
        if let Some(n) = counter.as_ref().and_then(crate::instructions::read) {
            report(&format!("instructions {n}"));
        }
    };
    loop {
        match waitpid(None, None) {
            Ok(WaitStatus::Exited(pid, code)) if pid == program => {
                report_count();
                report(&format!("exit {code}"));
                std::process::exit(0);
            }
            Ok(WaitStatus::Signaled(pid, sig, _)) if pid == program => {
                report_count();
                report(&format!("signal {}", sig as i32));
                std::process::exit(0);
            }
            Err(nix::errno::Errno::ECHILD) => {
                report("setup the program vanished");
                std::process::exit(125);
            }
            _ => continue,
        }
    }
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

/// Which mount flags a bind keeps.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
    ReadOnly,
    Writable,
}

fn bind(root: &Path, src: &Path, dst: &Path, access: Access) -> Result<(), String> {
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
    if meta.is_dir() {
        std::fs::create_dir_all(&target).map_err(io_step("mkdir", &target))?;
    } else {
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(io_step("mkdir", parent))?;
        }
        std::fs::write(&target, b"").map_err(io_step("create", &target))?;
    }
    mount(
        Some(src),
        &target,
        None::<&str>,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        None::<&str>,
    )
    .map_err(step("bind", src))?;
    let mut flags = MsFlags::MS_REMOUNT | MsFlags::MS_BIND | MsFlags::MS_NOSUID;
    match access {
        Access::ReadOnly => flags |= MsFlags::MS_RDONLY | MsFlags::MS_NODEV,
        Access::Writable => flags |= MsFlags::MS_NODEV,
    }
    mount(None::<&str>, &target, None::<&str>, flags, None::<&str>)
        .map_err(step("remount", &target))
}

/// Creates `dir` (and its parents) and mounts a new file system of `kind` on it.
fn mount_fs(dir: &Path, kind: &str, flags: MsFlags, options: &str) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(io_step("mkdir", dir))?;
    mount(Some(kind), dir, Some(kind), flags, Some(options))
        .map_err(step(&format!("mount {kind} on"), dir))
}

fn build_root(spec: &InitSpec) -> Result<(), String> {
    let root = &spec.root;
    // Nothing we mount may propagate back to the host.
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .map_err(step("make private", Path::new("/")))?;
    let (nosuid, nodev, noexec) = (MsFlags::MS_NOSUID, MsFlags::MS_NODEV, MsFlags::MS_NOEXEC);
    mount_fs(root, "tmpfs", nosuid | nodev, "size=16m,mode=0755")?;
    for dir in &spec.system {
        if std::fs::symlink_metadata(dir).is_ok() {
            bind(root, dir, dir, Access::ReadOnly)?;
        }
    }
    for b in &spec.binds {
        let access = if b.writable {
            Access::Writable
        } else {
            Access::ReadOnly
        };
        bind(root, &b.src, &b.dst, access)?;
    }
    let tmp_options = format!("size={},mode=1777", spec.tmp_bytes.max(4096));
    mount_fs(&root.join("tmp"), "tmpfs", nosuid | nodev, &tmp_options)?;
    // The program sees only its own processes, not the init that runs as root.
    mount_fs(
        &root.join("proc"),
        "proc",
        nosuid | nodev | noexec,
        "hidepid=invisible",
    )?;
    build_dev(root)?;
    build_etc(root, spec)?;

    let old = root.join(".oldroot");
    std::fs::create_dir_all(&old).map_err(io_step("mkdir", &old))?;
    nix::unistd::pivot_root(root, &old).map_err(step("pivot_root into", root))?;
    nix::unistd::chdir("/").map_err(step("chdir", Path::new("/")))?;
    umount2("/.oldroot", MntFlags::MNT_DETACH).map_err(step("detach", Path::new("/.oldroot")))?;
    std::fs::remove_dir("/.oldroot").map_err(io_step("rmdir", Path::new("/.oldroot")))?;
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        None::<&str>,
    )
    .map_err(step("remount read-only", Path::new("/")))?;
    nix::unistd::sethostname("sandbox").map_err(step("sethostname", Path::new("sandbox")))?;
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
    // Python's multiprocessing needs a shared-memory directory; this one is the run's own.
    let flags = MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC;
    mount_fs(&dev.join("shm"), "tmpfs", flags, "size=64m,mode=1777")
}

fn build_etc(root: &Path, spec: &InitSpec) -> Result<(), String> {
    let etc = root.join("etc");
    std::fs::create_dir_all(&etc).map_err(io_step("mkdir", &etc))?;
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
fn resolve(spec: &InitSpec) -> Result<PathBuf, String> {
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

fn program(spec: &InitSpec) -> ! {
    let e = match start(spec) {
        Err(e) => e,
        Ok(never) => match never {},
    };
    report(&format!("exec {e}"));
    std::process::exit(127);
}

fn start(spec: &InitSpec) -> Result<std::convert::Infallible, String> {
    let err = |what: &'static str| move |e: nix::errno::Errno| format!("{what}: {e}");
    let limit = |r: Resource, v: u64| setrlimit(r, v, v).map_err(err("setrlimit"));
    // The CPU limit is enforced by the runner from the cgroup; RLIMIT_CPU is the
    // per-process backstop (SIGXCPU at the soft limit, SIGKILL a second later).
    setrlimit(Resource::RLIMIT_CPU, spec.cpu_seconds, spec.cpu_seconds + 1)
        .map_err(err("setrlimit"))?;
    limit(Resource::RLIMIT_FSIZE, spec.file_size_bytes)?;
    limit(Resource::RLIMIT_NOFILE, spec.open_files)?;
    limit(Resource::RLIMIT_CORE, 0)?;
    nix::unistd::chdir(&spec.cwd).map_err(|e| format!("chdir {}: {e}", spec.cwd.display()))?;
    let exe = resolve(spec)?;
    let c = |s: &str| CString::new(s).map_err(|_| format!("{s:?} holds a NUL byte"));
    let argv: Vec<CString> = spec.argv.iter().map(|a| c(a)).collect::<Result<_, _>>()?;
    let env: Vec<CString> = spec
        .env
        .iter()
        .map(|(k, v)| c(&format!("{k}={v}")))
        .collect::<Result<_, _>>()?;
    let exe_c = c(&exe.to_string_lossy())?;
    let filters = crate::seccomp::filters().map_err(|e| format!("seccomp: {e}"))?;

    // Capabilities: empty the bounding set while still root, then drop to the slot's ids
    // (which clears the permitted and effective sets).
    for cap in 0..64 {
        // SAFETY: prctl with integer arguments only.
        #[allow(unsafe_code)]
        let r = unsafe { nix::libc::prctl(nix::libc::PR_CAPBSET_DROP, cap, 0, 0, 0) };
        if r != 0 {
            break;
        }
    }
    let (uid, gid) = (Uid::from_raw(spec.uid), Gid::from_raw(spec.gid));
    nix::unistd::setgroups(&[gid]).map_err(err("setgroups"))?;
    nix::unistd::setresgid(gid, gid, gid).map_err(err("setresgid"))?;
    nix::unistd::setresuid(uid, uid, uid).map_err(err("setresuid"))?;
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
    for f in &filters {
        seccompiler::apply_filter(f).map_err(|e| format!("seccomp: {e}"))?;
    }
    nix::unistd::execve(&exe_c, &argv, &env).map_err(|e| format!("{}: {e}", exe.display()))
}
