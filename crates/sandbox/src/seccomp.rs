//! The system-call filter of every sandboxed program.
//!
//! Everything is allowed except what lets a program leave or widen its sandbox, attack
//! the kernel through rarely needed interfaces, or spy on other runs: new namespaces,
//! mounts, tracing other processes, children of another process (`CLONE_PARENT`), kernel
//! keyrings, BPF, io_uring, perf events, userfaultfd, module and kexec loading, and
//! packet or vsock sockets. Such a call, by any process of the run, is never carried
//! out: the filter notifies the slot's spawner (a seccomp user notification), which
//! ends the run with `forbidden_syscall`, naming the call. `clone3` is refused with
//! ENOSYS instead: its flags live in memory a filter cannot read, and libc falls back to
//! `clone`, whose flags the filter checks. `fallocate` with `FALLOC_FL_KEEP_SIZE` is
//! refused with EOPNOTSUPP (as by a file system without it): it reserves disk blocks
//! without growing the file, which the file size limit never sees.
//!
//! Arguments the kernel reads as `int` are compared on their low 32 bits only: the
//! kernel ignores the upper half, so a filter comparing all 64 bits would let
//! `socket(AF_VSOCK | 1 << 32, ...)` through. On x86-64, system call numbers with the
//! x32 bit set are killed as a whole: the kernel may serve them as the same calls.

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

/// The filters, compiled (in the parent, so the child only installs them): the one that
/// kills (installed first, with a listener), the one that answers `clone3` with ENOSYS,
/// and the one that refuses `fallocate(FALLOC_FL_KEEP_SIZE)` with EOPNOTSUPP.
pub fn filters() -> Result<[BpfProgram; 3], seccompiler::Error> {
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
    let kill = SeccompFilter::new(
        kill,
        SeccompAction::Allow,
        SeccompAction::KillProcess,
        arch(),
    )?;
    let enosys = SeccompFilter::new(
        [(libc::SYS_clone3, Vec::new())].into_iter().collect(),
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
    Ok([kill, enosys.try_into()?, eopnotsupp.try_into()?])
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

/// Instructions put before the kill filter: on x86-64, a system call number with the
/// x32 bit (`__X32_SYSCALL_BIT`) set kills the process. The filter compiled by
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
        // Another architecture: on to the compiled filter, which kills it.
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
