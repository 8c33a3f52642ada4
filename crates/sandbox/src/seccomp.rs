//! The system-call filter of every sandboxed program.
//!
//! Everything is allowed except what lets a program leave or widen its sandbox, attack
//! the kernel through rarely needed interfaces, or spy on other runs: new namespaces,
//! mounts, tracing other processes, kernel keyrings, BPF, io_uring, perf events,
//! userfaultfd, module and kexec loading, and packet or vsock sockets. Those kill the
//! process (the run's verdict is then `forbidden_syscall`). `clone3` is refused with
//! ENOSYS instead: its flags live in memory a filter cannot read, and libc falls back to
//! `clone`, whose flags the filter checks.

use std::collections::BTreeMap;

use nix::libc;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
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
];

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

fn arg0(op: SeccompCmpOp, value: u64) -> SeccompCondition {
    SeccompCondition::new(0, SeccompCmpArgLen::Qword, op, value).expect("a valid condition")
}

/// The two filters, compiled (in the parent, so the child only installs them): the one
/// that kills, and the one that answers `clone3` with ENOSYS.
pub fn filters() -> Result<[BpfProgram; 2], seccompiler::Error> {
    let mut kill: BTreeMap<i64, Vec<SeccompRule>> =
        FORBIDDEN.iter().map(|&s| (s, Vec::new())).collect();
    // clone with any namespace flag: one rule per flag (rules are OR-ed).
    let ns_rules = [
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
    .map(|&f| rule(vec![arg0(SeccompCmpOp::MaskedEq(f as u64), f as u64)]))
    .collect();
    kill.insert(libc::SYS_clone, ns_rules);
    kill.insert(
        libc::SYS_socket,
        [libc::AF_PACKET, libc::AF_VSOCK]
            .iter()
            .map(|&d| rule(vec![arg0(SeccompCmpOp::Eq, d as u64)]))
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
    Ok([kill.try_into()?, enosys.try_into()?])
}
