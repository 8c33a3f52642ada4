//! Counting the user-space instructions a program executes, with the CPU's hardware
//! counter (`perf_event_open`), where there is one.
//!
//! Instructions are a measure of work that does not depend on how busy the machine is,
//! unlike CPU time. Many virtual machines expose no counter (this project's CI machines
//! among them); then the count is absent, never estimated.
//!
//! The spawner opens the counter for the program's process after forking it and before the
//! program `exec`s: `enable_on_exec` starts it at the exec (none of our own set-up is
//! counted), `inherit` adds in every thread and child the program starts, and the kernel
//! folds their counts into this one as they exit.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::OnceLock;

use nix::libc;

const PERF_TYPE_HARDWARE: u32 = 0;
const PERF_COUNT_HW_INSTRUCTIONS: u64 = 1;
/// The first (64-byte) layout of `struct perf_event_attr`, which every kernel accepts.
const ATTR_SIZE_VER0: u32 = 64;
// Bits of the attribute's flag word.
const DISABLED: u64 = 1 << 0;
const INHERIT: u64 = 1 << 1;
const EXCLUDE_KERNEL: u64 = 1 << 5;
const EXCLUDE_HV: u64 = 1 << 6;
const ENABLE_ON_EXEC: u64 = 1 << 12;
/// `perf_event_open`'s flag for a close-on-exec descriptor.
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;

/// `perf_event_attr` (version 0): type and size, config, sample period and type, read
/// format, then the flag word.
#[repr(C)]
struct Attr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
}

fn open(pid: libc::pid_t, flags: u64) -> Option<OwnedFd> {
    let attr = Attr {
        kind: PERF_TYPE_HARDWARE,
        size: ATTR_SIZE_VER0,
        config: PERF_COUNT_HW_INSTRUCTIONS,
        sample_period: 0,
        sample_type: 0,
        read_format: 0,
        flags: flags | EXCLUDE_KERNEL | EXCLUDE_HV,
        wakeup_events: 0,
        bp_type: 0,
        config1: 0,
    };
    const { assert!(std::mem::size_of::<Attr>() == ATTR_SIZE_VER0 as usize) };
    // SAFETY: the attribute is a valid version-0 `perf_event_attr` that outlives the call;
    // the other arguments are plain integers (any CPU, no group, close-on-exec).
    #[allow(unsafe_code)]
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const Attr,
            pid,
            -1 as libc::c_int,
            -1 as libc::c_int,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    // SAFETY: a non-negative return is a new descriptor that nothing else owns.
    #[allow(unsafe_code)]
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) })
}

/// Whether this machine has a hardware instruction counter we may use (asked once).
pub fn available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| open(0, DISABLED).is_some())
}

/// A counter for process `pid` and everything it starts, from its next `exec` on.
/// `None` when the counter cannot be opened (the count is then unknown, not zero).
pub fn count_from_exec(pid: libc::pid_t) -> Option<OwnedFd> {
    open(pid, DISABLED | INHERIT | ENABLE_ON_EXEC)
}

/// The count so far (the program's and its finished descendants').
pub fn read(counter: &OwnedFd) -> Option<u64> {
    let mut value = 0u64;
    // SAFETY: reads 8 bytes into a u64 we own.
    #[allow(unsafe_code)]
    let n = unsafe {
        libc::read(
            counter.as_raw_fd(),
            (&mut value as *mut u64).cast(),
            std::mem::size_of::<u64>(),
        )
    };
    (n == 8).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_agrees_with_opening_a_counter() {
        // Where the machine has a counter, one opens for this process and counts; where
        // it has none (most VMs), neither the probe nor a real open claims one.
        let own = open(0, EXCLUDE_KERNEL);
        assert_eq!(available(), own.is_some());
        if let Some(c) = own {
            let before = read(&c).expect("a counter reads 8 bytes");
            let mut x = 0u64;
            for i in 0..100_000u64 {
                x = std::hint::black_box(x.wrapping_add(i));
            }
            assert!(read(&c).unwrap() > before + 100_000, "{x}");
        }
    }
}
