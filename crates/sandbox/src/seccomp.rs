//! The system-call filter of every sandboxed program.
//!
//! Everything is allowed except what lets a program leave or widen its sandbox, attack
//! the kernel through rarely needed interfaces, or spy on other runs: new namespaces,
//! mounts, tracing other processes, children of another process (`CLONE_PARENT`), kernel
//! keyrings, BPF, io_uring, perf events, userfaultfd, module and kexec loading, and
//! packet or vsock sockets, a seccomp filter with a listener of its own (which could
//! answer "continue" to its own forbidden calls), and any system call of another
//! architecture (a 32-bit `int 0x80` on x86-64). Such a call, by any process of the run,
//! is never carried out: the filter notifies the slot's spawner (a seccomp user
//! notification), which ends the run with `forbidden_syscall`, naming the call.
//!
//! Some calls are refused with an error instead, as by a kernel without them, where
//! programs have a fallback or no use for them: `clone3` with ENOSYS (its flags live in
//! memory a filter cannot read, and libc falls back to `clone`, whose flags the filter
//! checks) and `io_setup` with ENOSYS (its events come from one pool for the whole host,
//! `fs.aio-max-nr`, which one run could take from every other; glibc's POSIX AIO uses
//! threads); `fallocate` with `FALLOC_FL_KEEP_SIZE` with EOPNOTSUPP (as by a file system
//! without it: it reserves disk blocks without growing the file, which the file size
//! limit never sees); sockets of any family but Unix, IPv4 and IPv6 with EAFNOSUPPORT
//! (netlink above all: its queued messages are kernel memory that the memory cgroup does
//! not charge, and NETLINK_ROUTE's error acknowledgements echo the whole request, so
//! unread they held 800 MiB of the host's memory for a run limited to 64; glibc falls
//! back when it has no netlink, and the run's network namespace holds only `lo` anyway);
//! and TCP (any connection-oriented IPv4 or IPv6 socket) with EPROTONOSUPPORT. A TCP
//! connection is made by the kernel on the listening side, and charged to no cgroup
//! until it is accepted, with what it was sent; and every TCP socket may queue a packet
//! beyond its cgroup's limit. With the default limits a run held 2.6 GiB of the host's
//! memory in connections it never accepted, and 1.1 GiB in queued packets (on cgroup v1,
//! which counts TCP apart), under a 64 MiB limit. A run has no one to talk to but itself,
//! for which Unix sockets, pipes and UDP (charged and limited like the rest) serve.
//!
//! Errors take precedence over notifications when several filters match one call, so
//! no errno filter may match a call the notifying filter matches: that call would fail
//! quietly instead of ending the run. For the same reason the errno filters let a call
//! of another architecture through (the notifying filter stops it); their compiled
//! architecture check would otherwise kill the process, which outranks a notification,
//! and the spawner would never hear of it.
//!
//! Arguments the kernel reads as `int` are compared on their low 32 bits only: the
//! kernel ignores the upper half, so a filter comparing all 64 bits would let
//! `socket(AF_VSOCK | 1 << 32, ...)` through. On x86-64, system call numbers with the
//! x32 bit set are stopped as a whole: the kernel may serve them as the same calls.

use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use nix::libc;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch, sock_filter,
};

/// Syscalls that end the run at once, with their names for the verdict's message.
const FORBIDDEN: &[(i64, &str)] = &[
    (libc::SYS_mount, "mount"),
    (libc::SYS_umount2, "umount2"),
    (libc::SYS_pivot_root, "pivot_root"),
    (libc::SYS_chroot, "chroot"),
    (libc::SYS_unshare, "unshare"),
    (libc::SYS_setns, "setns"),
    (libc::SYS_ptrace, "ptrace"),
    (libc::SYS_process_vm_readv, "process_vm_readv"),
    (libc::SYS_process_vm_writev, "process_vm_writev"),
    (libc::SYS_keyctl, "keyctl"),
    (libc::SYS_add_key, "add_key"),
    (libc::SYS_request_key, "request_key"),
    (libc::SYS_bpf, "bpf"),
    (libc::SYS_io_uring_setup, "io_uring_setup"),
    (libc::SYS_io_uring_enter, "io_uring_enter"),
    (libc::SYS_io_uring_register, "io_uring_register"),
    (libc::SYS_perf_event_open, "perf_event_open"),
    (libc::SYS_userfaultfd, "userfaultfd"),
    (libc::SYS_kexec_load, "kexec_load"),
    (libc::SYS_kexec_file_load, "kexec_file_load"),
    (libc::SYS_init_module, "init_module"),
    (libc::SYS_finit_module, "finit_module"),
    (libc::SYS_delete_module, "delete_module"),
    (libc::SYS_reboot, "reboot"),
    (libc::SYS_swapon, "swapon"),
    (libc::SYS_swapoff, "swapoff"),
    (libc::SYS_acct, "acct"),
    (libc::SYS_quotactl, "quotactl"),
    (libc::SYS_open_by_handle_at, "open_by_handle_at"),
    (libc::SYS_fsopen, "fsopen"),
    (libc::SYS_fsconfig, "fsconfig"),
    (libc::SYS_fsmount, "fsmount"),
    (libc::SYS_fspick, "fspick"),
    (libc::SYS_move_mount, "move_mount"),
    (libc::SYS_open_tree, "open_tree"),
    (libc::SYS_mount_setattr, "mount_setattr"),
    (SYS_OPEN_TREE_ATTR, "open_tree_attr"),
];

/// `open_tree_attr` (Linux 6.15; the same number on every architecture), which the libc
/// crate does not name yet.
const SYS_OPEN_TREE_ATTR: i64 = 467;

fn arch() -> TargetArch {
    #[cfg(target_arch = "aarch64")]
    {
        TargetArch::aarch64
    }
    #[cfg(not(target_arch = "aarch64"))]
    {
        TargetArch::x86_64
    }
}

fn rule(conditions: Vec<SeccompCondition>) -> SeccompRule {
    SeccompRule::new(conditions).expect("a valid rule")
}

fn arg(index: u8, len: SeccompCmpArgLen, op: SeccompCmpOp, value: u64) -> SeccompCondition {
    SeccompCondition::new(index, len, op, value).expect("a valid condition")
}

/// The socket families a run may use; any other is refused (see the module's comment),
/// but for `AF_PACKET` and `AF_VSOCK`, which end the run.
const SOCKET_FAMILIES: [i32; 3] = [libc::AF_UNIX, libc::AF_INET, libc::AF_INET6];

/// The socket types refused over IPv4 and IPv6 (TCP, MPTCP, SCTP, DCCP): all but
/// datagrams, and raw sockets, which need a capability the program never has.
const CONNECTED_TYPES: [i32; 3] = [libc::SOCK_STREAM, libc::SOCK_SEQPACKET, libc::SOCK_DCCP];

/// The filters, compiled (in the parent, so the child only installs them): the one that
/// stops forbidden calls (installed first, with a listener), then the one that refuses
/// calls with an error: ENOSYS for `clone3` and `io_setup`, EOPNOTSUPP for
/// `fallocate(FALLOC_FL_KEEP_SIZE)`, EAFNOSUPPORT for the socket families a run has no
/// use for, EPROTONOSUPPORT for TCP. (One filter for all errors, [`chain`]: installing a
/// filter costs the kernel a pass over every system call number, for its cache, and a
/// run's program installs its filters while the slot's previous run goes on.)
pub fn filters() -> Result<[BpfProgram; 2], seccompiler::Error> {
    let mut kill: BTreeMap<i64, Vec<SeccompRule>> =
        FORBIDDEN.iter().map(|&(s, _)| (s, Vec::new())).collect();
    // clone with any namespace flag, or with CLONE_PARENT: one rule per flag (rules are
    // OR-ed). CLONE_PARENT would make the child a child of the slot's spawner, which
    // waits only for its programs: the child's zombie, with its name, would outlive the
    // run and be seen by the next, and enough of them would exhaust the host's PIDs.
    let clone_rules = [
        libc::CLONE_PARENT,
        libc::CLONE_NEWNS,
        libc::CLONE_NEWCGROUP,
        libc::CLONE_NEWUTS,
        libc::CLONE_NEWIPC,
        libc::CLONE_NEWUSER,
        libc::CLONE_NEWPID,
        libc::CLONE_NEWNET,
        libc::CLONE_NEWTIME,
    ]
    .iter()
    // clone's flags are an `unsigned long`, of which the kernel uses the low half; a
    // masked test of the whole word tests exactly those bits.
    .map(|&f| {
        rule(vec![arg(
            0,
            SeccompCmpArgLen::Qword,
            SeccompCmpOp::MaskedEq(f as u64),
            f as u64,
        )])
    })
    .collect();
    kill.insert(libc::SYS_clone, clone_rules);
    kill.insert(
        libc::SYS_socket,
        [libc::AF_PACKET, libc::AF_VSOCK]
            .iter()
            .map(|&d| {
                rule(vec![arg(
                    0,
                    SeccompCmpArgLen::Dword,
                    SeccompCmpOp::Eq,
                    d as u64,
                )])
            })
            .collect(),
    );
    // A filter of the run's own with a listener: while the spawner's listener is open the
    // kernel refuses a second one anyway, but a filter whose listener is the run's could
    // answer "continue" to the run's own forbidden calls.
    let flags = libc::SECCOMP_FILTER_FLAG_NEW_LISTENER;
    kill.insert(
        libc::SYS_seccomp,
        vec![rule(vec![
            arg(
                0,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Eq,
                libc::SECCOMP_SET_MODE_FILTER as u64,
            ),
            arg(
                1,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::MaskedEq(flags),
                flags,
            ),
        ])],
    );
    let kill = SeccompFilter::new(
        kill,
        SeccompAction::Allow,
        SeccompAction::KillProcess,
        arch(),
    )?;
    let enosys = SeccompFilter::new(
        [
            (libc::SYS_clone3, Vec::new()),
            (libc::SYS_io_setup, Vec::new()),
        ]
        .into_iter()
        .collect(),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch(),
    )?;
    // The mode is an `int`: its low 32 bits.
    let keep_size = libc::FALLOC_FL_KEEP_SIZE as u64;
    let eopnotsupp = SeccompFilter::new(
        [(
            libc::SYS_fallocate,
            vec![rule(vec![arg(
                1,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::MaskedEq(keep_size),
                keep_size,
            )])],
        )]
        .into_iter()
        .collect(),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EOPNOTSUPP as u32),
        arch(),
    )?;
    // Any family but the allowed ones and those the first filter stops (see the module's
    // comment on precedence); the family is an `int`.
    let unused_family = || {
        let others = [libc::AF_PACKET, libc::AF_VSOCK];
        let conditions = SOCKET_FAMILIES
            .iter()
            .chain(&others)
            .map(|&f| arg(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, f as u64))
            .collect();
        vec![rule(conditions)]
    };
    let eafnosupport = SeccompFilter::new(
        [
            (libc::SYS_socket, unused_family()),
            (libc::SYS_socketpair, unused_family()),
        ]
        .into_iter()
        .collect(),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EAFNOSUPPORT as u32),
        arch(),
    )?;
    // A connected socket type over IPv4 or IPv6: the type's low four bits (the rest are
    // SOCK_NONBLOCK and SOCK_CLOEXEC), both arguments `int`s.
    let connected = [libc::AF_INET, libc::AF_INET6]
        .iter()
        .flat_map(|&family| {
            CONNECTED_TYPES.iter().map(move |&kind| {
                rule(vec![
                    arg(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, family as u64),
                    arg(
                        1,
                        SeccompCmpArgLen::Dword,
                        SeccompCmpOp::MaskedEq(0xf),
                        kind as u64,
                    ),
                ])
            })
        })
        .collect();
    let eprotonosupport = SeccompFilter::new(
        [(libc::SYS_socket, connected)].into_iter().collect(),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPROTONOSUPPORT as u32),
        arch(),
    )?;
    let mut kill: BpfProgram = kill.try_into()?;
    kill.splice(0..0, x32_guard());
    // Every kill becomes a notification to the spawner, which ends the run: a process
    // killed by the filter could be a child, whose end its parent sees and the runner
    // does not, and the run would go on as if nothing had been tried.
    for insn in &mut kill {
        if insn.code == (libc::BPF_RET | libc::BPF_K) as u16
            && insn.k == libc::SECCOMP_RET_KILL_PROCESS
        {
            insn.k = libc::SECCOMP_RET_USER_NOTIF;
        }
    }
    let mut refusing = [
        enosys.try_into()?,
        eopnotsupp.try_into()?,
        eafnosupport.try_into()?,
        eprotonosupport.try_into()?,
    ];
    for filter in &mut refusing {
        allow_other_arches(filter);
    }
    Ok([kill, chain(refusing)])
}

/// One program that runs `filters` one after the other until one of them returns
/// something other than "allow" (seccompiler compiles one action per filter). Each
/// program's returns of "allow" become jumps to the next program, past its end; the
/// last one's stay. The refusing filters match disjoint calls, so the order is no matter.
fn chain(filters: impl IntoIterator<Item = BpfProgram>) -> BpfProgram {
    let filters: Vec<BpfProgram> = filters.into_iter().collect();
    let ret = (libc::BPF_RET | libc::BPF_K) as u16;
    let mut chained = Vec::new();
    let last = filters.len().saturating_sub(1);
    for (i, filter) in filters.into_iter().enumerate() {
        let len = filter.len();
        for (pc, mut insn) in filter.into_iter().enumerate() {
            if i < last && insn.code == ret && insn.k == libc::SECCOMP_RET_ALLOW {
                // To `len`, the next program's first instruction (jumps are relative to
                // the next instruction, and only forward).
                insn = sock_filter {
                    code: (libc::BPF_JMP | libc::BPF_JA) as u16,
                    jt: 0,
                    jf: 0,
                    k: (len - pc - 1) as u32,
                };
            }
            chained.push(insn);
        }
    }
    chained
}

/// Makes a compiled filter let calls of another architecture through instead of killing
/// the process (see the module's comment): seccompiler starts every filter with the
/// check `load arch; if native skip one; return KILL_PROCESS`, whose return is changed.
fn allow_other_arches(filter: &mut BpfProgram) {
    let load_arch = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
    let jump_if_native = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
    let ret = (libc::BPF_RET | libc::BPF_K) as u16;
    if let [load, check, kill, ..] = filter.as_mut_slice()
        && load.code == load_arch
        && load.k == 4
        && check.code == jump_if_native
        && check.k == native_arch()
        && (check.jt, check.jf) == (1, 0)
        && kill.code == ret
        && kill.k == libc::SECCOMP_RET_KILL_PROCESS
    {
        kill.k = libc::SECCOMP_RET_ALLOW;
    }
}

/// Installs the first of [`filters`] on this thread (before any other thread exists), with
/// a listener: the descriptor that becomes readable when a process under the filter makes
/// a forbidden call. That call waits until the listener answers it, which ours never
/// does, or is closed (it then fails with ENOSYS): it never runs.
pub(crate) fn install_notifying(filter: &BpfProgram) -> Result<OwnedFd, String> {
    nix::sys::prctl::set_no_new_privs().map_err(|e| format!("no_new_privs: {e}"))?;
    let len = u16::try_from(filter.len()).map_err(|_| "seccomp: filter too long".to_string())?;
    let prog = libc::sock_fprog {
        len,
        // seccompiler's `sock_filter` is `repr(C)` with the kernel's layout, as libc's is.
        filter: filter.as_ptr().cast::<libc::sock_filter>().cast_mut(),
    };
    // SAFETY: the kernel copies the program from `prog`, which lives across the call, and
    // does not keep the pointer.
    #[allow(unsafe_code)]
    let fd = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
            &prog,
        )
    };
    let fd = RawFd::try_from(fd)
        .ok()
        .filter(|&fd| fd >= 0)
        .ok_or_else(|| format!("seccomp: {}", std::io::Error::last_os_error()))?;
    // SAFETY: the kernel has just returned this new descriptor (close-on-exec), which
    // nothing else owns.
    #[allow(unsafe_code)]
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The forbidden call waiting on `listener`, described for the verdict's message; `None`
/// if it could not be read (its process died meanwhile, say).
pub(crate) fn forbidden_call(listener: &OwnedFd) -> Option<String> {
    // SAFETY: an all-zero `seccomp_notif` is valid (integers only), and the kernel
    // requires it zeroed.
    #[allow(unsafe_code)]
    let mut notif: libc::seccomp_notif = unsafe { std::mem::zeroed() };
    // SAFETY: SECCOMP_IOCTL_NOTIF_RECV fills the `seccomp_notif` it is given, which lives
    // across the call.
    #[allow(unsafe_code)]
    let r = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_RECV,
            &mut notif,
        )
    };
    (r == 0).then(|| describe(i64::from(notif.data.nr), notif.data.arch))
}

/// A forbidden call, as a participant would look it up.
fn describe(nr: i64, arch: u32) -> String {
    if arch != native_arch() {
        return "a system call of another architecture (32-bit)".into();
    }
    if cfg!(target_arch = "x86_64") && nr >= 0x4000_0000 {
        return format!("an x32 system call ({nr:#x})");
    }
    let name = match nr {
        libc::SYS_clone => "clone with a namespace flag or CLONE_PARENT",
        libc::SYS_socket => "socket of family AF_PACKET or AF_VSOCK",
        libc::SYS_seccomp => "seccomp filter with a listener",
        _ => match FORBIDDEN.iter().find(|&&(n, _)| n == nr) {
            Some((_, name)) => name,
            None => return format!("system call {nr}"),
        },
    };
    format!("{name} (system call {nr})")
}

/// The `AUDIT_ARCH_*` value of the architecture the filters are made for.
fn native_arch() -> u32 {
    const AUDIT_ARCH_64BIT_LE: u32 = 0x8000_0000 | 0x4000_0000;
    if cfg!(target_arch = "aarch64") {
        183 | AUDIT_ARCH_64BIT_LE
    } else {
        62 | AUDIT_ARCH_64BIT_LE
    }
}

/// Instructions put before the notifying filter: on x86-64, a system call number with
/// the x32 bit (`__X32_SYSCALL_BIT`) set is stopped (the return here becomes a
/// notification with the filter's others). The filter compiled by
/// seccompiler matches exact numbers, so `unshare | 0x40000000` would otherwise pass it
/// and reach the kernel's x32 table on kernels built with x32 support. BPF jumps are
/// relative and only forward, so the compiled filter after these is unchanged.
#[cfg(target_arch = "x86_64")]
fn x32_guard() -> Vec<sock_filter> {
    const X32_SYSCALL_BIT: u32 = 0x4000_0000;
    // Offsets into `struct seccomp_data`.
    const NR: u32 = 0;
    const ARCH: u32 = 4;
    let ld = |k| stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, k);
    vec![
        ld(ARCH),
        // Another architecture: on to the compiled filter, which stops it.
        jump(libc::BPF_JEQ, native_arch(), 0, 3),
        ld(NR),
        jump(libc::BPF_JGE, X32_SYSCALL_BIT, 0, 1),
        stmt(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_KILL_PROCESS),
    ]
}

#[cfg(not(target_arch = "x86_64"))]
fn x32_guard() -> Vec<sock_filter> {
    Vec::new()
}

#[cfg(target_arch = "x86_64")]
fn stmt(code: u32, k: u32) -> sock_filter {
    sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    }
}

#[cfg(target_arch = "x86_64")]
fn jump(op: u32, k: u32, jt: u8, jf: u8) -> sock_filter {
    sock_filter {
        code: (libc::BPF_JMP | op | libc::BPF_K) as u16,
        jt,
        jf,
        k,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel's `struct seccomp_data` for one call.
    struct Call {
        nr: i64,
        arch: u32,
        args: [u64; 6],
    }

    impl Call {
        fn native(nr: i64, args: &[u64]) -> Call {
            let mut all = [0; 6];
            all[..args.len()].copy_from_slice(args);
            Call {
                nr,
                arch: native_arch(),
                args: all,
            }
        }

        /// The 32-bit word at `offset` of `struct seccomp_data` (little-endian).
        fn word(&self, offset: u32) -> u32 {
            match offset {
                0 => self.nr as u32,
                4 => self.arch,
                8 | 12 => 0,
                o => {
                    let arg = self.args[((o - 16) / 8) as usize];
                    if o % 8 == 0 {
                        arg as u32
                    } else {
                        (arg >> 32) as u32
                    }
                }
            }
        }
    }

    /// Runs one classic BPF program, of the instructions seccompiler and this module emit.
    fn run(filter: &[sock_filter], call: &Call) -> u32 {
        let (mut acc, mut pc) = (0u32, 0usize);
        loop {
            let i = &filter[pc];
            let code = u32::from(i.code);
            pc += 1;
            match code {
                c if c == libc::BPF_LD | libc::BPF_W | libc::BPF_ABS => acc = call.word(i.k),
                c if c == libc::BPF_ALU | libc::BPF_AND | libc::BPF_K => acc &= i.k,
                c if c == libc::BPF_RET | libc::BPF_K => return i.k,
                c if c == libc::BPF_JMP | libc::BPF_JA => pc += i.k as usize,
                c if c & 0x07 == libc::BPF_JMP => {
                    let taken = match c & 0xf0 {
                        op if op == libc::BPF_JEQ => acc == i.k,
                        op if op == libc::BPF_JGT => acc > i.k,
                        op if op == libc::BPF_JGE => acc >= i.k,
                        op if op == libc::BPF_JSET => acc & i.k != 0,
                        op => panic!("jump {op:#x}"),
                    };
                    pc += usize::from(if taken { i.jt } else { i.jf });
                }
                c => panic!("instruction {c:#x}"),
            }
        }
    }

    /// What the kernel does with a call under all the filters: the action of the highest
    /// precedence (the lowest as a signed number: kill, then errors, then notification).
    fn verdict(call: &Call) -> u32 {
        filters()
            .unwrap()
            .iter()
            .map(|f| run(f, call))
            .min_by_key(|&r| (r & libc::SECCOMP_RET_ACTION_FULL) as i32)
            .unwrap()
    }

    const NOTIFY: u32 = libc::SECCOMP_RET_USER_NOTIF;
    const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;

    fn errno(e: i32) -> u32 {
        libc::SECCOMP_RET_ERRNO | e as u32
    }

    #[test]
    fn forbidden_calls_notify_the_spawner_and_others_are_allowed() {
        assert_eq!(verdict(&Call::native(libc::SYS_unshare, &[0])), NOTIFY);
        assert_eq!(verdict(&Call::native(libc::SYS_getpid, &[])), ALLOW);
        let clone = |flags: i32| verdict(&Call::native(libc::SYS_clone, &[flags as u64]));
        assert_eq!(clone(libc::SIGCHLD), ALLOW);
        assert_eq!(clone(libc::CLONE_NEWUSER | libc::SIGCHLD), NOTIFY);
    }

    #[test]
    fn a_filter_with_a_listener_is_forbidden_and_one_without_is_not() {
        let seccomp = |flags: u32| {
            let mode = libc::SECCOMP_SET_MODE_FILTER as u64;
            verdict(&Call::native(
                libc::SYS_seccomp,
                &[mode, u64::from(flags), 0],
            ))
        };
        assert_eq!(
            seccomp(libc::SECCOMP_FILTER_FLAG_NEW_LISTENER as u32),
            NOTIFY
        );
        let tsync = libc::SECCOMP_FILTER_FLAG_TSYNC as u32;
        let listener = libc::SECCOMP_FILTER_FLAG_NEW_LISTENER as u32;
        assert_eq!(seccomp(listener | tsync), NOTIFY);
        assert_eq!(seccomp(0), ALLOW);
        assert_eq!(seccomp(tsync), ALLOW);
    }

    /// Another architecture is stopped by the notifying filter, and the refusing filters
    /// let it through to it (their own check killed the process, which outranks the
    /// notification: the spawner never heard of the call).
    #[test]
    fn a_call_of_another_architecture_notifies() {
        const AUDIT_ARCH_I386: u32 = 3 | 0x4000_0000;
        let call = Call {
            nr: 20,
            arch: AUDIT_ARCH_I386,
            args: [0; 6],
        };
        assert_eq!(verdict(&call), NOTIFY);
        assert_eq!(run(&filters().unwrap()[1], &call), ALLOW);
    }

    #[test]
    fn socket_families_without_a_use_are_refused() {
        let datagrams = libc::SOCK_DGRAM as u64;
        let socket =
            |family: u64| verdict(&Call::native(libc::SYS_socket, &[family, datagrams, 0]));
        for family in SOCKET_FAMILIES {
            assert_eq!(socket(family as u64), ALLOW, "{family}");
        }
        let refused = errno(libc::EAFNOSUPPORT);
        assert_eq!(socket(libc::AF_NETLINK as u64), refused);
        assert_eq!(socket(libc::AF_ALG as u64), refused);
        // The kernel reads an int: the upper half neither hides nor reveals a family.
        assert_eq!(socket(libc::AF_NETLINK as u64 | 1 << 32), refused);
        assert_eq!(socket(libc::AF_UNIX as u64 | 1 << 32), ALLOW);
        // Packet and vsock sockets end the run, as before.
        assert_eq!(socket(libc::AF_PACKET as u64), NOTIFY);
        assert_eq!(socket(libc::AF_VSOCK as u64 | 1 << 32), NOTIFY);
        let pair = verdict(&Call::native(
            libc::SYS_socketpair,
            &[libc::AF_NETLINK as u64],
        ));
        assert_eq!(pair, refused);
    }

    #[test]
    fn tcp_is_refused_and_udp_is_not() {
        let socket = |family: i32, kind: i32| {
            verdict(&Call::native(
                libc::SYS_socket,
                &[family as u64, kind as u64, 0],
            ))
        };
        let refused = errno(libc::EPROTONOSUPPORT);
        let flags = libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC;
        for family in [libc::AF_INET, libc::AF_INET6] {
            assert_eq!(socket(family, libc::SOCK_STREAM), refused);
            assert_eq!(socket(family, libc::SOCK_STREAM | flags), refused);
            assert_eq!(socket(family, libc::SOCK_SEQPACKET), refused);
            assert_eq!(socket(family, libc::SOCK_DGRAM), ALLOW);
            assert_eq!(socket(family, libc::SOCK_DGRAM | flags), ALLOW);
        }
        assert_eq!(socket(libc::AF_UNIX, libc::SOCK_STREAM), ALLOW);
        assert_eq!(socket(libc::AF_UNIX, libc::SOCK_SEQPACKET | flags), ALLOW);
    }

    #[test]
    fn calls_with_a_fallback_are_refused_with_an_error() {
        let enosys = errno(libc::ENOSYS);
        assert_eq!(verdict(&Call::native(libc::SYS_clone3, &[0, 88])), enosys);
        assert_eq!(
            verdict(&Call::native(libc::SYS_io_setup, &[65536, 0])),
            enosys
        );
        let keep = libc::FALLOC_FL_KEEP_SIZE as u64;
        let fallocate = |mode| verdict(&Call::native(libc::SYS_fallocate, &[3, mode, 0, 1]));
        assert_eq!(fallocate(keep), errno(libc::EOPNOTSUPP));
        assert_eq!(fallocate(0), ALLOW);
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn x32_numbers_notify() {
        assert_eq!(verdict(&Call::native(0x4000_0000 | 39, &[])), NOTIFY);
    }
}
