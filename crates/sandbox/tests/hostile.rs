//! The hostile-entry suite: each test really runs an attack (or a plain program) in the
//! sandbox and asserts the exact verdict. Needs root (namespaces, cgroups, mounts); says
//! why it skips otherwise.

use std::time::Duration;

use sandbox::{InitProgram, RunConfig, Verdict, run};

fn config(test: &str, argv: &[&str]) -> Option<RunConfig> {
    if !nix::unistd::Uid::effective().is_root() {
        eprintln!("{test}: skipped: the sandbox needs root");
        return None;
    }
    let init = InitProgram {
        path: env!("CARGO_BIN_EXE_physiojudge-sandbox-init").into(),
        args: Vec::new(),
    };
    let mut cfg = RunConfig::new(argv.iter().map(|s| s.to_string()).collect(), init);
    cfg.limits.wall_time = Duration::from_secs(10);
    cfg.limits.cpu_time = Duration::from_secs(5);
    Some(cfg)
}

/// Asserts the verdict, showing the whole record and both outputs when it differs.
fn expect(r: &sandbox::Run, want: Verdict, what: &str) {
    assert_eq!(
        r.result.verdict,
        want,
        "{what}: {:?}\nstdout: {}\nstderr: {}",
        r.result,
        String::from_utf8_lossy(&r.stdout),
        String::from_utf8_lossy(&r.stderr)
    );
}

fn sh(test: &str, script: &str) -> Option<RunConfig> {
    config(test, &["/bin/sh", "-c", script])
}

#[test]
fn true_is_ok_and_exit_status_is_a_runtime_error() {
    let Some(cfg) = config("true_is_ok", &["/bin/true"]) else {
        return;
    };
    let r = run(&cfg);
    expect(&r, Verdict::Ok, "true");
    assert_eq!(r.result.exit_code, Some(0));
    // Counted exactly where the machine has a counter; never a made-up number.
    assert_eq!(
        r.result.instructions.is_some(),
        sandbox::instructions::available(),
        "{:?}",
        r.result
    );
    // Even /bin/true runs thousands of instructions in the dynamic linker.
    assert!(r.result.instructions.is_none_or(|n| n > 1000));
    let cfg = sh("exit_status", "echo out; echo err >&2; exit 3").unwrap();
    let r = run(&cfg);
    expect(&r, Verdict::RuntimeError, "exit status");
    assert_eq!(r.result.exit_code, Some(3));
    assert_eq!(
        (r.stdout.as_slice(), r.stderr.as_slice()),
        (&b"out\n"[..], &b"err\n"[..])
    );
}

/// A Python program that reports what it can reach of the network, sending one datagram
/// to the host's 127.0.0.1:`port`.
fn network_probe(port: u16) -> String {
    format!(
        "import socket, os\n\
         s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n\
         s.sendto(b'out', ('127.0.0.1', {port})); print('sent')\n\
         try:\n    socket.socket(); print('tcp')\n\
         except OSError as e:\n    print('no tcp', e.errno)\n\
         print(sorted(l.split(':')[0].strip() for l in list(open('/proc/net/dev'))[2:]))\n\
         try:\n    socket.if_nameindex(); print('netlink')\n\
         except OSError as e:\n    print('no netlink', e.errno)\n\
         try:\n    socket.getaddrinfo('localhost.invalid', 80); print('resolved')\n\
         except OSError:\n    print('no resolution')\n\
         own = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); own.bind(('127.0.0.1', 0))\n\
         s.sendto(b'ping', own.getsockname()); print('own loopback', own.recv(4).decode())\n"
    )
}

#[test]
fn network_is_loopback_only_and_the_host_is_unreachable() {
    // A UDP socket on the host's 127.0.0.1: the sandbox's loopback is another one.
    let host = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    host.set_nonblocking(true).unwrap();
    let script = network_probe(host.local_addr().unwrap().port());
    let Some(cfg) = config("network", &["/usr/bin/python3", "-c", &script]) else {
        return;
    };
    let r = run(&cfg);
    let out = String::from_utf8_lossy(&r.stdout);
    expect(&r, Verdict::Ok, "network");
    network_is_loopback_only(&out, &host);
}

/// A one-shot run's program keeps the network namespace its spawner made (rather than
/// making another): the same rules hold there.
#[test]
fn network_is_loopback_only_in_a_one_shot_run() {
    const TEST: &str = "network_is_loopback_only_in_a_one_shot_run";
    if serve_one_shot(TEST) {
        return;
    }
    let host = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    host.set_nonblocking(true).unwrap();
    let script = network_probe(host.local_addr().unwrap().port());
    let Some(mut cfg) = config(TEST, &["/usr/bin/python3", "-c", &script]) else {
        return;
    };
    cfg.slot = 23;
    let (result, out) = one_shot(TEST, &cfg);
    assert_eq!(result.verdict, Verdict::Ok, "{result:?}: {out}");
    network_is_loopback_only(&out, &host);
}

/// What [`network_probe`] printed, and what `host` received, are those of a run that
/// reaches its own loopback only.
fn network_is_loopback_only(out: &str, host: &std::net::UdpSocket) {
    // The datagram went to the sandbox's own 127.0.0.1, where nothing listens.
    assert!(out.starts_with("sent\n"), "{out}");
    let mut buf = [0u8; 16];
    assert_eq!(
        host.recv(&mut buf).map_err(|e| e.kind()),
        Err(std::io::ErrorKind::WouldBlock),
        "the host's port got a datagram"
    );
    // No TCP (EPROTONOSUPPORT: a connection not yet accepted is charged to no cgroup).
    assert!(out.contains("no tcp 93"), "{out}");
    assert!(out.contains("['lo']"), "{out}");
    // No netlink (refused: its queues are memory the run's cgroup does not count): libc's
    // interface list fails with EAFNOSUPPORT, and name resolution does without.
    assert!(out.contains("no netlink 97"), "{out}");
    assert!(out.contains("own loopback ping"), "{out}");
    assert!(out.contains("no resolution"), "{out}");
}

#[test]
fn filesystem_is_read_only_and_host_paths_are_invisible() {
    let work = tempfile::tempdir().unwrap();
    let labels = tempfile::tempdir().unwrap();
    std::fs::write(labels.path().join("REFERENCE.csv"), "A00001,N\n").unwrap();
    let script = format!(
        "for p in /usr/x /etc/x /x /proc/x; do touch $p 2>/dev/null && echo wrote $p; done; \
         touch /work/ok && echo wrote /work/ok; touch /tmp/ok && echo wrote /tmp/ok; \
         for p in /root {} {} {}; do [ -e $p ] && echo sees $p; done; \
         id -u; id -g; cat /proc/self/status | grep -E '^Cap(Eff|Prm|Bnd)'; ls /proc | grep -E '^[0-9]+$' | tr '\\n' ' '",
        std::env::current_dir().unwrap().display(),
        labels.path().display(),
        labels.path().join("REFERENCE.csv").display()
    );
    let Some(mut cfg) = sh("filesystem", &script) else {
        return;
    };
    cfg.binds.push(sandbox::Bind {
        src: work.path().into(),
        dst: "/work".into(),
        writable: true,
    });
    let r = run(&cfg);
    let out = String::from_utf8_lossy(&r.stdout);
    expect(&r, Verdict::Ok, "filesystem");
    let wrote: Vec<&str> = out.lines().filter(|l| l.starts_with("wrote")).collect();
    assert_eq!(wrote, ["wrote /work/ok", "wrote /tmp/ok"], "{out}");
    assert!(!out.contains("sees"), "{out}");
    assert!(work.path().join("ok").exists());
    assert!(out.contains("60000\n60000\n"), "not root: {out}");
    for cap in [
        "CapEff:\t0000000000000000",
        "CapPrm:\t0000000000000000",
        "CapBnd:\t0000000000000000",
    ] {
        assert!(out.contains(cap), "{cap}: {out}");
    }
    // Only the program's own processes (the shell and its children): no host PIDs, and
    // not even the sandbox's init (PID 1, root), which `hidepid` hides.
    let pids: Vec<u32> = out
        .lines()
        .last()
        .unwrap()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert!(
        !pids.is_empty() && !pids.contains(&1) && pids.iter().all(|&p| p < 100),
        "{pids:?}"
    );
}

#[test]
fn fork_bomb_is_contained() {
    // `exec`: the shell itself must not need a fork once the bomb has taken every pid
    // (a plain `sleep` then fails with "Cannot fork" and the shell exits 2).
    let Some(mut cfg) = sh("fork_bomb", "b() { b | b & }; b; exec sleep 30") else {
        return;
    };
    cfg.limits.pids = 16;
    cfg.limits.wall_time = Duration::from_secs(3);
    // The bomb's shells spin on refused forks and can keep every CPU busy: with the
    // usual 5 s of CPU, two cores spend it before 3 s of wall time and the verdict
    // would race between the two limits. More CPU than the wall clock can give on
    // any machine (3 s × 64 cores) leaves the wall clock as the one that ends it.
    cfg.limits.cpu_time = Duration::from_secs(3 * 64);
    let r = run(&cfg);
    // The bomb cannot grow past the pids limit; the wall clock ends it.
    expect(&r, Verdict::WallTimeLimit, "fork bomb");
    // When the program fails of it, the message names the process limit.
    let Some(mut cfg) = sh(
        "fork_limit",
        "for i in 1 2 3 4 5 6; do sleep 5 & done; wait",
    ) else {
        return;
    };
    cfg.limits.pids = 4;
    let r = run(&cfg);
    expect(&r, Verdict::RuntimeError, "forks refused");
    let message = r.result.message.unwrap_or_default();
    assert!(message.contains("at the limit of 4 processes"), "{message}");
    // The host can still start processes.
    assert!(
        std::process::Command::new("/bin/true")
            .status()
            .unwrap()
            .success()
    );
}

#[test]
fn memory_bomb_is_a_memory_limit() {
    let Some(mut cfg) = config(
        "memory_bomb",
        &["/usr/bin/python3", "-c", "b = bytearray(400 << 20)"],
    ) else {
        return;
    };
    cfg.limits.memory_bytes = 100 << 20;
    let r = run(&cfg);
    expect(&r, Verdict::MemoryLimit, "memory bomb");
    assert!(r.result.peak_memory_bytes.unwrap() <= 100 << 20);
}

#[test]
fn socket_buffers_count_against_the_memory_limit() {
    // Unix socket pairs that are written to and never read hold their data in kernel
    // socket buffers (up to several MiB per socket), not in the program's memory.
    let script = "import socket\n\
total, keep = 0, []\n\
for i in range(40):\n    \
keep += socket.socketpair()\n    \
for x in keep[-2:]:\n        \
x.setblocking(False); x.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 30)\n        \
while True:\n            \
try: total += x.send(b'y' * 65536)\n            \
except (BlockingIOError, MemoryError, OSError): break\n\
print(total >> 20)";
    let Some(mut cfg) = config("socket_buffers", &["/usr/bin/python3", "-c", script]) else {
        return;
    };
    cfg.limits.memory_bytes = 64 << 20;
    let r = run(&cfg);
    let queued_mib: Option<u64> = String::from_utf8_lossy(&r.stdout).trim().parse().ok();
    // Contained either way: the sends stop at the limit or the run is killed at it.
    match r.result.verdict {
        Verdict::Ok => assert!(
            queued_mib.is_some_and(|q| q < 96),
            "{queued_mib:?} MiB queued under a 64 MiB limit: {:?}",
            r.result
        ),
        _ => expect(&r, Verdict::MemoryLimit, "socket buffers"),
    }
}

#[test]
fn busy_loop_is_a_time_limit_and_sleep_a_wall_time_limit() {
    let Some(mut cfg) = sh("busy_loop", "while :; do :; done") else {
        return;
    };
    cfg.limits.cpu_time = Duration::from_millis(500);
    let r = run(&cfg);
    expect(&r, Verdict::TimeLimit, "busy loop");
    assert!(
        r.result.cpu_time_s >= 0.5 && r.result.cpu_time_s < 2.0,
        "{:?}",
        r.result
    );

    let mut cfg = sh("sleep", "sleep 30").unwrap();
    cfg.limits.wall_time = Duration::from_millis(500);
    let r = run(&cfg);
    expect(&r, Verdict::WallTimeLimit, "sleep");
    assert!(r.result.wall_time_s < 2.0, "{:?}", r.result);
}

#[test]
fn output_flood_is_an_output_limit() {
    let Some(mut cfg) = sh("output_flood", "yes flood") else {
        return;
    };
    cfg.limits.output_bytes = 64 << 10;
    let r = run(&cfg);
    expect(&r, Verdict::OutputLimit, "output flood");
    assert!(r.result.stdout_truncated);
    assert_eq!(r.stdout.len(), 64 << 10);
}

#[test]
fn forbidden_syscalls_are_fatal() {
    // Each attack as a direct system call through Python's ctypes (libc's syscall()).
    let attacks = [
        ("unshare", "libc.syscall(272, 0x10000000)"), // unshare(CLONE_NEWUSER)
        (
            "mount",
            "libc.syscall(165, b'none', b'/tmp', b'tmpfs', 0, None)",
        ),
        ("ptrace", "libc.syscall(101, 16, 1, 0, 0)"), // PTRACE_ATTACH to init
        ("bpf", "libc.syscall(321, 0, 0, 0)"),
        ("keyctl", "libc.syscall(250, 0, 0, 0, 0, 0)"),
        ("io_uring_setup", "libc.syscall(425, 1, 0)"),
        ("perf_event_open", "libc.syscall(298, 0, 0, -1, -1, 0)"),
        (
            "packet socket",
            "import socket; socket.socket(17, socket.SOCK_RAW)",
        ),
        // vsock ports are the VM host's, not the network namespace's.
        (
            "vsock socket",
            "import socket; socket.socket(40, socket.SOCK_STREAM)",
        ),
        // The kernel reads the family as an int: the upper half must not hide it.
        (
            "vsock socket, family with upper bits set",
            "libc.syscall(41, ctypes.c_long(40 | 1 << 32), 1, 0)",
        ),
        // unshare(CLONE_NEWUSER) through the x32 numbering.
        ("x32 unshare", "libc.syscall(0x40000000 | 272, 0x10000000)"),
        // A child of the slot's spawner (clone(CLONE_PARENT | SIGCHLD) with no stack: a
        // fork) would outlive the run as a zombie.
        (
            "clone with CLONE_PARENT",
            "libc.syscall(56, 0x8000 | 17, 0, 0, 0, 0)",
        ),
        (
            "open_tree_attr",
            "libc.syscall(467, -100, b'/', 0, None, 0)",
        ),
    ];
    if !cfg!(target_arch = "x86_64") {
        eprintln!("forbidden_syscalls_are_fatal: skipped: the syscall numbers are x86-64's");
        return;
    }
    for (name, code) in attacks {
        let script = format!(
            "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n{code}\nprint('survived')"
        );
        let Some(cfg) = config("forbidden_syscalls", &["/usr/bin/python3", "-c", &script]) else {
            return;
        };
        let r = run(&cfg);
        expect(&r, Verdict::ForbiddenSyscall, name);
        assert!(
            !String::from_utf8_lossy(&r.stdout).contains("survived"),
            "{name}: the call returned"
        );
    }
    // Tried in a child, which its parent outlives: the run still ends at the call, and
    // the message names it.
    let script = "import ctypes, os\n\
if os.fork() == 0:\n    \
ctypes.CDLL(None).syscall(272, 0x10000000)\n    \
os._exit(0)\n\
os.wait(); print('parent went on')";
    let r = run(&config("forbidden_in_child", &["/usr/bin/python3", "-c", script]).unwrap());
    expect(&r, Verdict::ForbiddenSyscall, "unshare in a child");
    assert_eq!(
        r.result.message.as_deref(),
        Some("stopped at a forbidden system call: unshare (system call 272)")
    );
    assert!(
        r.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&r.stdout)
    );
    // A program that raises SIGSYS itself made no forbidden call.
    let r = run(&sh("sigsys", "kill -SYS $$").unwrap());
    expect(&r, Verdict::Signalled, "SIGSYS raised by the program");
    // Threads still work (clone3 is refused with ENOSYS and libc falls back to clone).
    let script = "import threading\nt = threading.Thread(target=print, args=('thread',))\nt.start(); t.join()";
    let r = run(&config("threads", &["/usr/bin/python3", "-c", script]).unwrap());
    expect(&r, Verdict::Ok, "threads");
    assert_eq!(r.stdout, b"thread\n");
}

#[test]
fn a_daemonised_grandchild_is_killed_at_the_end() {
    // A unique sleep duration marks the daemon among the host's processes.
    let marker = format!("3600.{}", std::process::id());
    let script = format!(
        "(setsid sleep {marker} &); sleep 0.2; for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done | grep -c '^sleep {marker}'"
    );
    let Some(cfg) = sh("daemon", &script) else {
        return;
    };
    let r = run(&cfg);
    expect(&r, Verdict::Ok, "daemon");
    assert_eq!(r.stdout, b"1\n", "the daemon was running inside");
    std::thread::sleep(Duration::from_millis(100));
    let ps = std::process::Command::new("ps")
        .args(["-eo", "args"])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&ps.stdout).contains(&marker));
}

#[test]
fn concurrent_runs_in_separate_slots_do_not_see_each_other() {
    if config("concurrent", &["/bin/true"]).is_none() {
        return;
    }
    let handles: Vec<_> = [1u32, 2]
        .into_iter()
        .map(|slot| {
            std::thread::spawn(move || {
                let work = tempfile::tempdir().unwrap();
                std::fs::write(work.path().join("mine"), slot.to_string()).unwrap();
                let mut cfg = sh(
                    "concurrent",
                    "sleep 0.5 & id -u; ls /work; ls /proc | grep -cE '^[0-9]+$'; wait",
                )
                .unwrap();
                cfg.slot = slot;
                cfg.binds.push(sandbox::Bind {
                    src: work.path().into(),
                    dst: "/work".into(),
                    writable: true,
                });
                let r = run(&cfg);
                (slot, r, work)
            })
        })
        .collect();
    for h in handles {
        let (slot, r, _work) = h.join().unwrap();
        expect(&r, Verdict::Ok, "concurrent");
        let out = String::from_utf8_lossy(&r.stdout).into_owned();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], (60000 + slot).to_string(), "{out}");
        assert_eq!(lines[1], "mine", "{out}");
        // The shell, the sleep, ls and grep at most: nothing of the other run.
        let visible: usize = lines[2].parse().unwrap();
        assert!(visible <= 4, "{out}");
    }
}

/// A slot's namespaces and root outlive its runs (that is what makes a run cheap), so
/// each run must find nothing of the one before: not its `/tmp` or `/dev/shm` files, its
/// System V IPC objects, its binds, or its processes (a daemon it left and which would
/// otherwise read the next entry's inputs).
#[test]
fn a_slot_keeps_nothing_between_runs() {
    let Some(mut first) = sh(
        "slot_keeps_nothing",
        "echo secret > /tmp/left; echo secret > /dev/shm/left; ipcmk -M 4096 >/dev/null; \
         (setsid sleep 3600 &); cat /labels/answer; ipcs -m | grep -c '^0x'; \
         touch /dev/zero 2>/dev/null || echo read-only",
    ) else {
        return;
    };
    let labels = tempfile::tempdir().unwrap();
    std::fs::write(labels.path().join("answer"), "42\n").unwrap();
    first.slot = 5;
    first.binds.push(sandbox::Bind {
        src: labels.path().into(),
        dst: "/labels".into(),
        writable: false,
    });
    let r = run(&first);
    expect(&r, Verdict::Ok, "first run");
    assert_eq!(
        r.stdout, b"42\n1\nread-only\n",
        "the first run had its bind and IPC, and /dev (shared by the slot) is read-only"
    );

    let mut second = sh(
        "slot_keeps_nothing",
        "ls -A /tmp /dev/shm /labels; ipcs -m | grep -c '^0x'; \
         ls /proc | grep -cE '^[0-9]+$'; true",
    )
    .unwrap();
    second.slot = 5;
    let r = run(&second);
    expect(&r, Verdict::Ok, "second run");
    let out = String::from_utf8_lossy(&r.stdout);
    // Empty listings, no shared memory segment, and only the shell, ls and grep.
    assert_eq!(out, "/dev/shm:\n\n/labels:\n\n/tmp:\n0\n3\n", "{out}");
}

/// The next run's program is made while a run goes on, in the same slot: the running
/// program must not be able to stop it, signal it or look into it (it is root, waiting, in
/// namespaces of its own, and invisible in `/proc`), and a later run of the slot, with
/// another `/tmp` size, must find its `/tmp` at that size and empty.
#[test]
fn a_run_cannot_touch_the_next_runs_program() {
    let script = "import os, errno\n\
                  me, refused, killed = os.getpid(), 0, 0\n\
                  for pid in range(1, 4096):\n\
                  \x20   if pid == me: continue\n\
                  \x20   try: os.kill(pid, 19); killed += 1\n\
                  \x20   except ProcessLookupError: pass\n\
                  \x20   except PermissionError: refused += 1\n\
                  seen = [p for p in os.listdir('/proc') if p.isdigit() and int(p) != me]\n\
                  open('/tmp/left', 'w').write('x' * 3000000)\n\
                  print(refused >= 2, killed, seen)\n";
    let Some(mut cfg) = config("next_program", &["/usr/bin/python3", "-c", script]) else {
        return;
    };
    cfg.slot = 14;
    cfg.limits.tmp_bytes = 8 << 20;
    // Twice: the second time the program made during the first run is the one attacked.
    for round in ["first", "second"] {
        let r = run(&cfg);
        expect(&r, Verdict::Ok, round);
        // SIGSTOP refused for the slot's init and the waiting program (at least), none
        // sent, and no other process visible.
        assert_eq!(String::from_utf8_lossy(&r.stdout), "True 0 []\n", "{round}");
    }
    // A smaller /tmp for the next run (made ahead at 8 MiB), and empty.
    let mut small = sh(
        "next_program",
        "ls -A /tmp; head -c 3000000 /dev/zero > /tmp/big || echo full",
    )
    .unwrap();
    small.slot = 14;
    small.limits.tmp_bytes = 1 << 20;
    let r = run(&small);
    expect(&r, Verdict::Ok, "small /tmp");
    assert!(
        String::from_utf8_lossy(&r.stdout).ends_with("full\n"),
        "{r:?}"
    );
    assert!(
        !String::from_utf8_lossy(&r.stdout).contains("left"),
        "{r:?}"
    );
}

/// On a busy machine (every CPU taken by other slots' entries) a run must still end when
/// its program does: the next run's program, made meanwhile at idle priority, must not
/// hold anything of the run in progress (its status pipe would keep the run going until
/// the idle process got a turn, and the run would be charged a wall-time limit).
#[test]
fn a_busy_machine_does_not_stretch_a_run() {
    let Some(mut cfg) = config("busy_machine", &["/bin/true"]) else {
        return;
    };
    cfg.slot = 15;
    cfg.limits.wall_time = Duration::from_secs(2);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let busy: Vec<_> = (0..4 * cpus)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        })
        .collect();
    let verdicts: Vec<(Verdict, f64)> = (0..20)
        .map(|_| {
            let r = run(&cfg);
            (r.result.verdict, r.result.wall_time_s)
        })
        .collect();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    busy.into_iter().for_each(|t| t.join().unwrap());
    assert!(
        verdicts.iter().all(|(v, _)| *v == Verdict::Ok),
        "{verdicts:?}"
    );
}

/// Descriptors the runner itself inherited without close-on-exec (a shell's `exec 7</`)
/// must not reach a program: one on the host's `/` would be a way out.
#[test]
fn descriptors_the_runner_inherited_do_not_reach_the_program() {
    let Some(mut cfg) = config("inherited_fds", &["/bin/ls", "/proc/self/fd"]) else {
        return;
    };
    // Opened without O_CLOEXEC before the slot's spawner starts, as a parent's would be.
    let leak = nix::fcntl::open(
        "/",
        nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_DIRECTORY,
        nix::sys::stat::Mode::empty(),
    )
    .unwrap();
    cfg.slot = 11;
    let r = run(&cfg);
    drop(leak);
    expect(&r, Verdict::Ok, "ls");
    // 0–2, and the directory ls itself opened to list.
    assert_eq!(String::from_utf8_lossy(&r.stdout), "0\n1\n2\n3\n");
    // Nor does the spawner's own SIGPIPE disposition: the program starts with defaults.
    let mut cfg = config("sigpipe", &["/bin/grep", "SigIgn", "/proc/self/status"]).unwrap();
    cfg.slot = 11;
    let r = run(&cfg);
    expect(&r, Verdict::Ok, "grep");
    let out = String::from_utf8_lossy(&r.stdout);
    let ignored = u64::from_str_radix(out.trim().trim_start_matches("SigIgn:").trim(), 16).unwrap();
    assert_eq!(ignored & (1 << (nix::libc::SIGPIPE - 1)), 0, "{out}");
}

/// A slot's next run may raise the memory limit of the cgroup made ahead for it (v1
/// keeps memory+swap at least memory at every step).
#[test]
fn a_later_run_may_have_a_larger_memory_limit() {
    let Some(mut cfg) = config("raise_limit", &["/bin/true"]) else {
        return;
    };
    cfg.slot = 12;
    cfg.limits.memory_bytes = 100 << 20;
    expect(&run(&cfg), Verdict::Ok, "100 MiB");
    // Time for the cgroup janitor to make the next one ahead, with these limits.
    std::thread::sleep(Duration::from_millis(300));
    cfg.limits.memory_bytes = 2 << 30;
    expect(&run(&cfg), Verdict::Ok, "2 GiB");
    cfg.limits.memory_bytes = 50 << 20;
    std::thread::sleep(Duration::from_millis(300));
    expect(&run(&cfg), Verdict::Ok, "50 MiB");
}

/// A process in an uninterruptible wait outlives the kill at its run's end: here `sync`
/// of 1.9 GB written to a disk (1.3 s on this VM), left behind by a program that fails.
/// The slot is discarded, but the run is still judged by what it did. (It was the
/// runner's `internal_error` before, which is never charged to an entry, so any verdict,
/// a forbidden call's too, could hide behind one.) The slot's next run starts afresh.
#[test]
fn a_process_that_outlives_the_kill_does_not_hide_the_verdict() {
    let Some(mut cfg) = sh(
        "outlives_the_kill",
        "for i in 0 1 2 3 4 5 6 7; do head -c 240000000 /dev/zero > /work/f$i; done; \
         sync & sleep 0.1; exit 1",
    ) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    cfg.slot = 16;
    // Writing 1.9 GB is seconds of the kernel's time, charged to the run.
    cfg.limits.cpu_time = Duration::from_secs(60);
    cfg.limits.wall_time = Duration::from_secs(120);
    cfg.binds.push(sandbox::Bind {
        src: work.path().into(),
        dst: "/work".into(),
        writable: true,
    });
    let r = run(&cfg);
    expect(&r, Verdict::RuntimeError, "sync left behind");
    assert_eq!(r.result.exit_code, Some(1), "{:?}", r.result);
    let mut next = config("outlives_the_kill", &["/bin/true"]).unwrap();
    next.slot = 16;
    expect(&run(&next), Verdict::Ok, "the slot's next run");
}

/// What the kernel would not count right, as a run sees it: RLIMIT_CPU's backstop is a
/// second above the CPU limit (the kernel checks it against a per-process clock that
/// runs ahead of the cgroup's count: at the limit itself it stopped programs at 0.985 s
/// of 1 s); no POSIX message queue or locked memory (counted per user, and a slot's runs
/// share one, so a run's would be missing from the next run until freed); no
/// `fallocate` that reserves disk blocks without growing the file (the file size limit
/// never sees those: 1.9 GB in a file of size 0).
#[test]
fn limits_the_kernel_would_not_count_right() {
    let script = "import ctypes, os\n\
         wanted = ('Max cpu time', 'Max locked memory', 'Max msgqueue size')\n\
         print([l.split()[3:5] for l in open('/proc/self/limits') if l.startswith(wanted)])\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         q = libc.mq_open(b'/q', os.O_CREAT | os.O_RDWR, 0o600, None)\n\
         print('mq_open', q, ctypes.get_errno())\n\
         fd = os.open('/work/big', os.O_CREAT | os.O_WRONLY)\n\
         r = libc.fallocate(fd, 1, ctypes.c_long(0), ctypes.c_long(1 << 30))\n\
         print('fallocate', r, ctypes.get_errno(), os.fstat(fd).st_blocks)\n";
    let Some(mut cfg) = config("kernel_counts", &["/usr/bin/python3", "-c", script]) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    cfg.binds.push(sandbox::Bind {
        src: work.path().into(),
        dst: "/work".into(),
        writable: true,
    });
    let r = run(&cfg);
    expect(&r, Verdict::Ok, "limits");
    assert_eq!(
        String::from_utf8_lossy(&r.stdout),
        "[['6', '7'], ['0', '0'], ['0', '0']]\nmq_open -1 24\nfallocate -1 95 0\n",
        "CPU limit 5 s: backstop at 6 s; EMFILE; EOPNOTSUPP"
    );
}

/// A slot whose init died (a global OOM kill, say) is rebuilt for its next run, not left
/// unable to start anything.
#[test]
fn a_slot_whose_init_died_is_rebuilt() {
    let Some(mut cfg) = config("init_died", &["/bin/true"]) else {
        return;
    };
    cfg.slot = 13;
    expect(&run(&cfg), Verdict::Ok, "first run");
    // The slot's spawner is the one whose environment names the slot's uid; its children
    // are the slot's init (PID 1 of the slot) and the next run's program, made ahead.
    let me = std::process::id().to_string();
    let children = |of: &str| -> Vec<String> {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|p| p.chars().all(|c| c.is_ascii_digit()))
            .filter(|p| {
                std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|s| {
                    s.rsplit(") ").next().unwrap_or("").split(' ').nth(1) == Some(of)
                })
            })
            .collect()
    };
    let spawner = children(&me)
        .into_iter()
        .find(|p| {
            std::fs::read(format!("/proc/{p}/environ"))
                .is_ok_and(|e| String::from_utf8_lossy(&e).contains("\"uid\":60013"))
        })
        .expect("the slot's spawner");
    let init: Vec<String> = children(&spawner)
        .into_iter()
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/status")).is_ok_and(|s| {
                s.lines()
                    .any(|l| l.starts_with("NSpid:") && l.ends_with("\t1"))
            })
        })
        .collect();
    assert_eq!(init.len(), 1, "{init:?}");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(init[0].parse().unwrap()),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    expect(&run(&cfg), Verdict::Ok, "after the init died");
}

#[test]
fn a_served_program_talks_over_its_stdin_and_stdout_pinned_to_one_cpu() {
    use std::io::{BufRead, BufReader, Write};
    let script = "import sys\n\
                  for line in sys.stdin:\n    sys.stdout.write(line.upper()); sys.stdout.flush()\n\
                  print(open('/proc/self/status').read().split('Cpus_allowed_list:')[1].split()[0], file=sys.stderr)\n";
    let Some(mut cfg) = config("served", &["/usr/bin/python3", "-c", script]) else {
        return;
    };
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    cfg.cpu = Some(cpus - 1);
    let (r, served) = sandbox::run_serving(
        &cfg,
        Some(|c: sandbox::Conversation| {
            let mut to = c.to_program;
            let mut from = BufReader::new(c.from_program);
            let mut got = Vec::new();
            for word in ["abc\n", "def\n"] {
                to.write_all(word.as_bytes()).unwrap();
                let mut line = String::new();
                from.read_line(&mut line).unwrap();
                got.push(line);
            }
            got
        }),
    );
    expect(&r, Verdict::Ok, "served");
    assert_eq!(served.unwrap(), ["ABC\n", "DEF\n"]);
    // Its stdout went to the conversation, not to the record.
    assert_eq!(r.result.stdout_bytes, 0);
    assert_eq!(
        String::from_utf8_lossy(&r.stderr).trim(),
        (cpus - 1).to_string()
    );
}

#[test]
fn a_served_program_that_never_reads_is_stopped_by_its_limits_and_frees_the_server() {
    let Some(mut cfg) = sh("served_silent", "exec sleep 30") else {
        return;
    };
    cfg.limits.wall_time = Duration::from_secs(1);
    let (r, served) = sandbox::run_serving(
        &cfg,
        Some(|c: sandbox::Conversation| {
            use std::io::Write;
            // Far more than a pipe holds: blocks until the program is gone.
            let mut to = c.to_program;
            to.write_all(&vec![0u8; 4 << 20]).map_err(|e| e.kind())
        }),
    );
    expect(&r, Verdict::WallTimeLimit, "silent");
    assert_eq!(served.unwrap(), Err(std::io::ErrorKind::BrokenPipe));
}

/// Runs `cfg` in a runner process of its own (this test binary, started again for this
/// test alone): a slot's first run, with a new spawner and no program made ahead, as a
/// one-shot `physiojudge sandbox run` has it. Returns the record and the program's stdout.
fn one_shot(test: &str, cfg: &RunConfig) -> (sandbox::RunResult, String) {
    let o = std::process::Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture", "--test-threads", "1"])
        .env(
            ONE_SHOT,
            serde_json::to_string(&(&cfg.argv, cfg.slot)).unwrap(),
        )
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let line = out
        .lines()
        // libtest's own line ("test NAME ... ") may come first on the line.
        .find_map(|l| l.split_once("ONE-SHOT ").map(|(_, record)| record))
        .unwrap_or_else(|| panic!("{test}: no record from the runner process: {out}"));
    serde_json::from_str(line).unwrap()
}

/// Set in the environment of a runner started by [`one_shot`]: the argv and slot to run.
const ONE_SHOT: &str = "PHYSIOJUDGE_HOSTILE_ONE_SHOT";

/// In a runner started by [`one_shot`]: runs what it was given and prints the record.
/// `true` when this process is such a runner (the test itself then does nothing else).
fn serve_one_shot(test: &str) -> bool {
    let Ok(job) = std::env::var(ONE_SHOT) else {
        return false;
    };
    let (argv, slot): (Vec<String>, u32) = serde_json::from_str(&job).unwrap();
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let mut cfg = config(test, &argv).unwrap();
    cfg.slot = slot;
    // As `physiojudge sandbox run` runs it.
    cfg.once = true;
    let r = run(&cfg);
    let record = (r.result, String::from_utf8_lossy(&r.stdout).into_owned());
    println!("ONE-SHOT {}", serde_json::to_string(&record).unwrap());
    true
}

/// The race of the third audit. When a run's program ended, the slot's spawner closed the
/// listener of its seccomp filter before the runner killed what the program left; in that
/// window a child could install a filter with a listener of its own (the kernel refuses a
/// second listener only while an ancestor's is open) and answer "continue" to its own
/// forbidden calls: `add_key` into the slot uid's keyring, which outlives the run, and
/// `unshare(CLONE_NEWUSER | CLONE_NEWNS)` both ran, verdict `ok`.
///
/// Here the child tries once while the program waits for it (so the attempt is always
/// made), then the program ends and the child retries as fast as it can until the end of
/// the run, and has its forbidden calls answered if it ever gets a listener. No forbidden
/// call may ever run, and the attempt always ends the run as `forbidden_syscall`: in a
/// warm slot (the program made ahead) and in one-shot runners (a fresh slot each time).
const RACE: &str = r#"import ctypes, os, select, struct, time
libc = ctypes.CDLL(None, use_errno=True)
ADD_KEY, UNSHARE = 248, 272
def insn(code, jt, jf, k): return struct.pack('HBBI', code, jt, jf, k)
# ld nr; add_key or unshare: user notification; anything else: allow
prog = ctypes.create_string_buffer(insn(0x20, 0, 0, 0) + insn(0x15, 2, 0, ADD_KEY)
    + insn(0x15, 1, 0, UNSHARE) + insn(0x06, 0, 0, 0x7fff0000) + insn(0x06, 0, 0, 0x7fc00000))
fprog = ctypes.create_string_buffer(struct.pack('HxxxxxxQ', 5, ctypes.addressof(prog)))
def listener():  # seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER)
    return libc.syscall(317, 1, 8, fprog)
r, w = os.pipe()
if os.fork() == 0:
    fd = listener()
    os.write(w, b'x')
    end = time.time() + 0.5
    while fd < 0 and time.time() < end:
        fd = listener()
    if fd < 0:
        os._exit(0)
    if os.fork() == 0:
        k = libc.syscall(ADD_KEY, b'user', b'physiojudge-race', b'x', 1, -4)
        if k >= 0: print('ran add_key', k, flush=True)
        u = libc.syscall(UNSHARE, 0x10000000 | 0x20000)
        if u == 0: print('ran unshare', flush=True)
        os._exit(0)
    notif = ctypes.create_string_buffer(80)
    while select.select([fd], [], [], 1)[0]:
        ctypes.memset(notif, 0, 80)
        if libc.ioctl(fd, ctypes.c_ulong(0xc0502100), notif) != 0: break
        nid = struct.unpack_from('Q', notif.raw)[0]
        resp = ctypes.create_string_buffer(struct.pack('QqiI', nid, 0, 0, 1))
        libc.ioctl(fd, ctypes.c_ulong(0xc0182101), resp)
    os._exit(0)
os.close(w)
os.read(r, 1)
"#;

/// How many keys the user keyring of `uid` holds, looked at as that uid (a fork of this
/// process that changes its ids and asks the kernel); `None` if it has none yet.
fn user_keys(uid: u32) -> Option<usize> {
    use nix::libc;
    // SAFETY: the child makes raw system calls only (this process has other threads) and
    // exits; its status carries the answer.
    #[allow(unsafe_code)]
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: system calls with integer and buffer arguments, in the child only.
        #[allow(unsafe_code)]
        unsafe {
            if libc::syscall(libc::SYS_setresgid, uid, uid, uid) != 0
                || libc::syscall(libc::SYS_setresuid, uid, uid, uid) != 0
            {
                libc::_exit(201);
            }
            // KEYCTL_GET_KEYRING_ID of KEY_SPEC_USER_KEYRING, without creating it.
            let ring = libc::syscall(libc::SYS_keyctl, 0, -4, 0);
            if ring < 0 {
                libc::_exit(200);
            }
            let mut ids = [0i32; 64];
            // KEYCTL_READ of a keyring: the serials of the keys linked into it.
            let n = libc::syscall(libc::SYS_keyctl, 11, ring, ids.as_mut_ptr(), 256);
            libc::_exit(if n < 0 { 202 } else { (n / 4) as i32 });
        }
    }
    let status = nix::sys::wait::waitpid(nix::unistd::Pid::from_raw(pid), None).unwrap();
    match status {
        nix::sys::wait::WaitStatus::Exited(_, 200) => None,
        nix::sys::wait::WaitStatus::Exited(_, n) if n < 200 => Some(n as usize),
        other => panic!("looking at the keys of {uid}: {other:?}"),
    }
}

/// Adds a key to the user keyring of `uid`, as that uid.
fn plant_key(uid: u32) {
    use nix::libc;
    // SAFETY: as in `user_keys`.
    #[allow(unsafe_code)]
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: as in `user_keys`.
        #[allow(unsafe_code)]
        unsafe {
            if libc::syscall(libc::SYS_setresgid, uid, uid, uid) != 0
                || libc::syscall(libc::SYS_setresuid, uid, uid, uid) != 0
            {
                libc::_exit(1);
            }
            let k = libc::syscall(
                libc::SYS_add_key,
                c"user".as_ptr(),
                c"planted".as_ptr(),
                c"x".as_ptr(),
                1,
                -4,
            );
            libc::_exit(if k < 0 { 2 } else { 0 });
        }
    }
    let status = nix::sys::wait::waitpid(nix::unistd::Pid::from_raw(pid), None).unwrap();
    assert_eq!(
        status,
        nix::sys::wait::WaitStatus::Exited(nix::unistd::Pid::from_raw(pid), 0)
    );
}

#[test]
fn no_forbidden_call_runs_in_the_end_of_a_run() {
    const TEST: &str = "no_forbidden_call_runs_in_the_end_of_a_run";
    if serve_one_shot(TEST) {
        return;
    }
    if !cfg!(target_arch = "x86_64") {
        eprintln!("{TEST}: skipped: the syscall numbers are x86-64's");
        return;
    }
    let Some(mut cfg) = config(TEST, &["/usr/bin/python3", "-c", RACE]) else {
        return;
    };
    cfg.slot = 17;
    let check = |result: &sandbox::RunResult, stdout: &str, what: &str| {
        assert!(
            !stdout.contains("ran"),
            "{what}: a forbidden call ran: {stdout}"
        );
        assert_eq!(
            result.verdict,
            Verdict::ForbiddenSyscall,
            "{what}: {result:?}"
        );
    };
    for i in 0..200 {
        let r = run(&cfg);
        check(
            &r.result,
            &String::from_utf8_lossy(&r.stdout),
            &format!("warm {i}"),
        );
    }
    for i in 0..40 {
        let (result, stdout) = one_shot(TEST, &cfg);
        check(&result, &stdout, &format!("one-shot {i}"));
    }
    // Nothing reached the slot's keyring either.
    assert_eq!(user_keys(60017).unwrap_or(0), 0);
}

/// A child that outlives its program stays under the spawner's supervision until it is
/// dead: its forbidden call waits (it never returns, as it did once the listener was
/// closed, with ENOSYS: the sign that the run was no longer watched), and ends the run as
/// `forbidden_syscall` when the spawner hears of it before the end-of-run kill.
const LATE_CALL: &str = r#"import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
parent = os.getpid()
if os.fork() == 0:
    while os.getppid() == parent: pass
    end = time.time() + 0.5
    while time.time() < end:
        libc.syscall(248, b'user', b'late', b'x', 1, -4)
        print('returned', ctypes.get_errno(), flush=True)
    os._exit(0)
"#;

#[test]
fn a_process_left_by_the_program_stays_supervised() {
    let Some(mut cfg) = config("stays_supervised", &["/usr/bin/python3", "-c", LATE_CALL]) else {
        return;
    };
    if !cfg!(target_arch = "x86_64") {
        return;
    }
    cfg.slot = 22;
    for i in 0..100 {
        let r = run(&cfg);
        let out = String::from_utf8_lossy(&r.stdout);
        assert!(!out.contains("returned"), "{i}: unsupervised: {out}");
        assert!(
            matches!(r.result.verdict, Verdict::Ok | Verdict::ForbiddenSyscall),
            "{i}: {:?}",
            r.result
        );
    }
}

/// Keys are the kernel's, counted per user: a key left in the slot uid's keyring would
/// reach the slot's next run. None survives a run (here planted from outside, as uid
/// 60021 itself).
#[test]
fn the_slot_uid_keyring_is_cleared_between_runs() {
    let Some(mut cfg) = config("keyring", &["/bin/true"]) else {
        return;
    };
    cfg.slot = 21;
    plant_key(60021);
    assert_eq!(user_keys(60021), Some(1));
    expect(&run(&cfg), Verdict::Ok, "after the key");
    // The spawner empties the keyrings once a run is over, before it reads the slot's
    // next request: once the next run has started, that is done.
    expect(&run(&cfg), Verdict::Ok, "the next run");
    assert_eq!(user_keys(60021).unwrap_or(0), 0);
}

/// A 32-bit system call (`int 0x80`) is checked by the filters as another architecture;
/// by the main program or a child, it ends the run as a forbidden call (it was killed by
/// the later filters' architecture check, which the spawner never heard of: `signalled`
/// for the program, `ok` for a child).
#[test]
fn a_32_bit_call_is_a_forbidden_call() {
    if !cfg!(target_arch = "x86_64") {
        eprintln!("a_32_bit_call: skipped: x86-64 only");
        return;
    }
    let script = "import ctypes, mmap, os, sys\n\
        buf = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)\n\
        buf.write(b'\\xb8\\x14\\x00\\x00\\x00\\xcd\\x80\\xc3')  # mov eax, 20 (getpid); int 0x80; ret\n\
        call = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(buf)))\n\
        if sys.argv[1] == 'main': print('returned', call())\n\
        elif os.fork() == 0: print('returned', call()); os._exit(0)\n\
        else: os.wait(); print('parent went on')\n";
    for who in ["main", "child"] {
        let Some(cfg) = config("32_bit", &["/usr/bin/python3", "-c", script, who]) else {
            return;
        };
        let r = run(&cfg);
        expect(&r, Verdict::ForbiddenSyscall, who);
        assert_eq!(
            r.result.message.as_deref(),
            Some(
                "stopped at a forbidden system call: a system call of another architecture (32-bit)"
            ),
            "{who}"
        );
        assert!(
            r.stdout.is_empty(),
            "{who}: {}",
            String::from_utf8_lossy(&r.stdout)
        );
    }
}

/// Kernel memory the memory cgroup does not charge: NETLINK_ROUTE's error acknowledgements
/// echo the whole request, and queued unread they held 812 MiB of the host's memory for a
/// run limited to 64 MiB (peak 0.75 MiB, verdict `ok`); TCP connections not yet accepted
/// held 2.6 GiB, and TCP's packets queued beyond the limit 1.1 GiB. An entry has no use for
/// netlink (its network namespace holds only `lo`), for any family but Unix, IPv4 and
/// IPv6, nor for TCP with no one but itself to talk to: they are refused. UDP buffers
/// stay within the limit (v1 counts them apart from the rest, up to the limit).
#[test]
fn sockets_without_a_use_are_refused_and_udp_is_bounded() {
    let script = "import errno, socket\n\
        out = []\n\
        for family, kind, proto in ((16, 3, 0), (16, 2, 16), (38, 5, 0), (30, 2, 0), (2, 1, 0), (10, 2049, 0), (2, 1, 262)):\n\
        \x20   try: socket.socket(family, kind, proto); out.append('made')\n\
        \x20   except OSError as e: out.append(errno.errorcode[e.errno])\n\
        print(*out)\n\
        keep = []\n\
        for i in range(100):\n\
        \x20   a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n\
        \x20   b.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 30); b.bind(('127.0.0.1', 0))\n\
        \x20   a.connect(b.getsockname()); a.setblocking(False); keep += [a, b]\n\
        \x20   for j in range(200):\n\
        \x20       try: a.send(b'u' * 65000)\n\
        \x20       except OSError: break\n\
        print(sum(int(l.split()[4].split(':')[1], 16) for l in list(open('/proc/net/udp'))[1:]) >> 20)\n";
    let Some(mut cfg) = config("socket_families", &["/usr/bin/python3", "-c", script]) else {
        return;
    };
    cfg.limits.memory_bytes = 64 << 20;
    let r = run(&cfg);
    let out = String::from_utf8_lossy(&r.stdout);
    // NETLINK_ROUTE and NETLINK_GENERIC, AF_ALG and AF_TIPC (where the kernel has them);
    // then TCP over IPv4 and IPv6 (non-blocking) and MPTCP.
    assert!(
        out.starts_with(
            "EAFNOSUPPORT EAFNOSUPPORT EAFNOSUPPORT EAFNOSUPPORT \
             EPROTONOSUPPORT EPROTONOSUPPORT EPROTONOSUPPORT\n"
        ),
        "{out}"
    );
    match r.result.verdict {
        Verdict::Ok => {
            let queued: u64 = out.lines().nth(1).unwrap().parse().unwrap();
            assert!(queued < 96, "{queued} MiB of UDP queued under 64 MiB");
        }
        _ => expect(&r, Verdict::MemoryLimit, "UDP buffers"),
    }
}

/// A run leaves nothing in its network namespace for the slot's next run: not an
/// abstract Unix socket kept alive by descriptors in flight in the queues of a socket
/// pair that holds each other (which outlives every process of the run until the
/// kernel's collector gets to it, seconds later), nor a count of what it did (the
/// namespace's counters, a channel to the next run).
#[test]
fn a_run_leaves_no_socket_for_the_next() {
    let first = "import array, socket\n\
        def fds(*s): return [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [x.fileno() for x in s]))]\n\
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)\n\
        l = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); l.bind(b'\\0physiojudge-left'); l.listen()\n\
        a.sendmsg([b'x'], fds(b, l)); b.sendmsg([b'x'], fds(a))\n\
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(('127.0.0.1', 0))\n\
        for i in range(7): u.sendto(b'x', u.getsockname())\n\
        print('left')\n";
    let second = "import socket\n\
        udp = [l.split() for l in open('/proc/net/snmp') if l.startswith('Udp:')]\n\
        print([l.split()[-1] for l in open('/proc/net/unix') if '@' in l], dict(zip(*udp))['OutDatagrams'])\n\
        socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).bind(b'\\0physiojudge-left'); print('bound')\n";
    let Some(mut cfg) = config("leaves_no_socket", &["/usr/bin/python3", "-c", first]) else {
        return;
    };
    cfg.slot = 20;
    let r = run(&cfg);
    expect(&r, Verdict::Ok, "first");
    assert_eq!(r.stdout, b"left\n");
    // A run's program gets ready during the run before it, and may enter the namespace of
    // the run before that: here the first run's, which it must find changed and leave.
    let mut between = config("leaves_no_socket", &["/bin/true"]).unwrap();
    between.slot = 20;
    expect(&run(&between), Verdict::Ok, "between");
    let mut cfg = config("leaves_no_socket", &["/usr/bin/python3", "-c", second]).unwrap();
    cfg.slot = 20;
    let r = run(&cfg);
    expect(&r, Verdict::Ok, "second");
    assert_eq!(String::from_utf8_lossy(&r.stdout), "[] 0\nbound\n");
    // The second run left its namespace as it found it (its socket closed, no packet
    // sent), so the run after next may enter it: `lo` is up there, and nothing is left.
    expect(&run(&between), Verdict::Ok, "between");
    let third = format!(
        "{second}u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(('127.0.0.1', 0))\n\
         u.sendto(b'x', u.getsockname()); print('lo', u.recv(1))\n"
    );
    let mut cfg = config("leaves_no_socket", &["/usr/bin/python3", "-c", &third]).unwrap();
    cfg.slot = 20;
    let r = run(&cfg);
    expect(&r, Verdict::Ok, "third");
    assert_eq!(String::from_utf8_lossy(&r.stdout), "[] 0\nbound\nlo b'x'\n");
}

/// Concurrent slots share the host's read-only files (the system directories, and a data
/// directory bound into both): a run must not learn through them what another opens
/// (inotify) nor signal to it (a lock, by flock or fcntl, on a shared file).
#[test]
fn concurrent_slots_have_no_channel_through_shared_files() {
    let watcher = "import ctypes, fcntl, os, select, struct, time\n\
        libc = ctypes.CDLL(None, use_errno=True)\n\
        held = [open(p, 'rb') for p in ('/usr/bin/true', '/data/shared')]\n\
        for f in held:\n\
        \x20   fcntl.flock(f, fcntl.LOCK_EX)\n\
        \x20   fcntl.fcntl(f, fcntl.F_SETLK, struct.pack('hhqqi', fcntl.F_RDLCK, 0, 0, 0, 0))\n\
        fd = libc.inotify_init1(os.O_NONBLOCK)\n\
        watches = [libc.inotify_add_watch(fd, d, 0x1 | 0x20) for d in (b'/usr/bin', b'/data')]\n\
        open('/work/ready', 'w').close()\n\
        while not os.path.exists('/work/done'): time.sleep(0.01)\n\
        print(fd < 0 or min(watches) < 0 or not select.select([fd], [], [], 0)[0])\n";
    let other = "import fcntl, struct\n\
        out = []\n\
        for p in ('/usr/bin/true', '/data/shared'):\n\
        \x20   f = open(p, 'rb'); f.read(1)\n\
        \x20   try: fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB); out.append('free')\n\
        \x20   except OSError: out.append('held')\n\
        \x20   got = fcntl.fcntl(f, fcntl.F_GETLK, struct.pack('hhqqi', fcntl.F_WRLCK, 0, 0, 0, 0))\n\
        \x20   out.append('unlocked' if struct.unpack('hhqqi', got)[0] == fcntl.F_UNLCK else 'locked')\n\
        print(*out)\n";
    let Some(mut a) = config("shared_files", &["/usr/bin/python3", "-c", watcher]) else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    std::fs::write(data.path().join("shared"), "x").unwrap();
    let work = tempfile::tempdir().unwrap();
    let ro = sandbox::Bind {
        src: data.path().into(),
        dst: "/data".into(),
        writable: false,
    };
    a.slot = 18;
    a.limits.wall_time = Duration::from_secs(30);
    a.binds = vec![
        ro.clone(),
        sandbox::Bind {
            src: work.path().into(),
            dst: "/work".into(),
            writable: true,
        },
    ];
    let mut b = config("shared_files", &["/usr/bin/python3", "-c", other]).unwrap();
    b.slot = 19;
    b.binds = vec![ro];
    let ready = work.path().join("ready");
    let done = work.path().join("done");
    let watching = std::thread::spawn(move || run(&a));
    let start = std::time::Instant::now();
    while !ready.exists() && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let r = run(&b);
    std::fs::write(&done, "").unwrap();
    let w = watching.join().unwrap();
    expect(&w, Verdict::Ok, "watcher");
    expect(&r, Verdict::Ok, "other");
    assert_eq!(
        String::from_utf8_lossy(&r.stdout),
        "free unlocked free unlocked\n",
        "the other slot's locks"
    );
    assert_eq!(
        String::from_utf8_lossy(&w.stdout),
        "True\n",
        "inotify events"
    );
}

/// `fs.aio-max-nr` is one pool for the whole host: a run that reserved it all (65,536
/// events) made `io_setup` fail in every other slot until it ended. Refused, as by a
/// kernel without AIO (glibc's POSIX AIO uses threads, not this).
#[test]
fn io_setup_is_refused() {
    let script = "import ctypes\n\
        libc = ctypes.CDLL(None, use_errno=True)\n\
        ctx = ctypes.c_ulong(0)\n\
        print(libc.syscall(206, 65536, ctypes.byref(ctx)), ctypes.get_errno())\n";
    let Some(cfg) = config("io_setup", &["/usr/bin/python3", "-c", script]) else {
        return;
    };
    if !cfg!(target_arch = "x86_64") {
        return;
    }
    let r = run(&cfg);
    expect(&r, Verdict::Ok, "io_setup");
    assert_eq!(String::from_utf8_lossy(&r.stdout), "-1 38\n", "ENOSYS");
}
