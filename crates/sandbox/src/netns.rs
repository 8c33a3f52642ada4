//! The network namespace of a run: its own, made by its program while it gets ready
//! ([`crate::init::standby`], during the slot's run before), holding only `lo`.
//!
//! One per run, not per slot: a namespace holds more than its configuration, which no
//! run can change (that needs `CAP_NET_ADMIN`, which the program never has). An
//! abstract Unix socket can outlive every process of its run, kept alive by descriptors
//! in flight in its own queues until the kernel's collector gets to it, with a name the
//! run chose; TCP connections linger in TIME_WAIT for a minute; its counters
//! (`/proc/net/snmp`) add up what every run did. With a namespace per run the next run
//! sees none of it. Making one costs
//! 0.6–1 ms here (BENCHMARKS.md), off the run's path; the kernel tears a run's down after
//! its last process, on a work queue.

use nix::libc;

/// Brings up `lo` in the calling process's network namespace, so that programs may send
/// themselves datagrams over 127.0.0.1 (TCP is refused: [`crate::seccomp`]).
pub(crate) fn loopback_up() -> Result<(), String> {
    let err = |what: &str| {
        format!(
            "bringing up lo: {what}: {}",
            std::io::Error::last_os_error()
        )
    };
    // SAFETY: a plain socket; closed below.
    #[allow(unsafe_code)]
    let sock = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if sock < 0 {
        return Err(err("socket"));
    }
    // SAFETY: `ifreq` is plain data; the name is NUL-terminated within its 16 bytes and the
    // kernel only reads/writes the struct we pass.
    #[allow(unsafe_code)]
    let result = unsafe {
        let mut req: libc::ifreq = std::mem::zeroed();
        for (d, s) in req.ifr_name.iter_mut().zip(b"lo\0") {
            *d = *s as libc::c_char;
        }
        if libc::ioctl(sock, libc::SIOCGIFFLAGS, &mut req) < 0 {
            Err(err("SIOCGIFFLAGS"))
        } else {
            req.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
            if libc::ioctl(sock, libc::SIOCSIFFLAGS, &req) < 0 {
                Err(err("SIOCSIFFLAGS"))
            } else {
                Ok(())
            }
        }
    };
    // SAFETY: closing the socket made above.
    #[allow(unsafe_code)]
    unsafe {
        libc::close(sock);
    }
    result
}
