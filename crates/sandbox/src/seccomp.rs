//! The system-call filter of every sandboxed program.
//!
//! Everything is allowed except what lets a program leave or widen its sandbox, attack
//! the kernel through rarely needed interfaces, or spy on other runs: new namespaces,
//! mounts, tracing other processes, children of another process (`CLONE_PARENT`), kernel
//! keyrings, BPF, io_uring, perf events, userfaultfd, module and kexec loading, and
//! packet or vsock sockets. Those kill the process (the run's verdict is then
//! `forbidden_syscall`). `clone3` is refused with ENOSYS instead: its flags live in
//! memory a filter cannot read, and libc falls back to `clone`, whose flags the filter
//! checks.
//!
//! Arguments the kernel reads as `int` are compared on their low 32 bits only: the
//! kernel ignores the upper half, so a filter comparing all 64 bits would let
//! `socket(AF_VSOCK | 1 << 32, ...)` through. On x86-64, system call numbers with the
//! x32 bit set are killed as a whole: the kernel may serve them as the same calls.

use std::collections::BTreeMap;

use nix::libc;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch, sock_filter,
};

/// Syscalls that end the program at once.
const FORBIDDEN: &[i64] = &[
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_bpf,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_reboot,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_acct,
    libc::SYS_quotactl,
    libc::SYS_open_by_handle_at,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_mount_setattr,
    SYS_OPEN_TREE_ATTR,
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

fn arg0(len: SeccompCmpArgLen, op: SeccompCmpOp, value: u64) -> SeccompCondition {
    SeccompCondition::new(0, len, op, value).expect("a valid condition")
}

/// The two filters, compiled (in the parent, so the child only installs them): the one
/// that kills, and the one that answers `clone3` with ENOSYS.
pub fn filters() -> Result<[BpfProgram; 2], seccompiler::Error> {
    let mut kill: BTreeMap<i64, Vec<SeccompRule>> =
        FORBIDDEN.iter().map(|&s| (s, Vec::new())).collect();
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
        rule(vec![arg0(
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
                rule(vec![arg0(
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
    let mut kill: BpfProgram = kill.try_into()?;
    kill.splice(0..0, x32_guard());
    Ok([kill, enosys.try_into()?])
}

/// Instructions put before the kill filter: on x86-64, a system call number with the
/// x32 bit (`__X32_SYSCALL_BIT`) set kills the process. The filter compiled by
/// seccompiler matches exact numbers, so `unshare | 0x40000000` would otherwise pass it
/// and reach the kernel's x32 table on kernels built with x32 support. BPF jumps are
/// relative and only forward, so the compiled filter after these is unchanged.
#[cfg(target_arch = "x86_64")]
fn x32_guard() -> Vec<sock_filter> {
    const AUDIT_ARCH_X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;
    const X32_SYSCALL_BIT: u32 = 0x4000_0000;
    // Offsets into `struct seccomp_data`.
    const NR: u32 = 0;
    const ARCH: u32 = 4;
    let ld = |k| stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, k);
    vec![
        ld(ARCH),
        // Another architecture: on to the compiled filter, which kills it.
        jump(libc::BPF_JEQ, AUDIT_ARCH_X86_64, 0, 3),
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
