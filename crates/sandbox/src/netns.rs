//! The network namespace of a run: its own, holding only `lo`, entered by its program
//! while it gets ready ([`crate::init::standby`], during the slot's run before).
//!
//! Not the slot's: a namespace holds more than its configuration, which no run can
//! change (that needs `CAP_NET_ADMIN`, which the program never has). An abstract Unix
//! socket can outlive every process of its run, kept alive by descriptors in flight in
//! its own queues until the kernel's collector gets to it, with a name the run chose; the
//! namespace's counters (`/proc/net/snmp`) add up what every run did. So a run's program
//! makes a new namespace, or enters the one of the slot's run before the last if that run
//! left it as it was made (its sockets and counters, hashed, unchanged: [`enter`]), which
//! saves making one, 0.6–1 ms here, and tearing one down, for runs that do not use the
//! network. The kernel tears a namespace down after its last process and the spawner's
//! descriptor are gone.

use std::hash::{BuildHasher, Hasher, RandomState};
use std::os::fd::OwnedFd;

use nix::libc;
use nix::sched::CloneFlags;

/// A run's network namespace, with a hash of what a run could see of it when it was made
/// ([`state`]): what the slot's spawner offers the program of a later run.
pub(crate) type Namespace = (OwnedFd, u64);

/// The files of `/proc/self/net` that show what a run did in its namespace: its sockets
/// (an abstract Unix socket left in flight among them) and its counters. Not `sockstat`,
/// whose memory figures are the whole host's.
const STATE: &[&str] = &[
    "unix", "udp", "udp6", "udplite", "udplite6", "raw", "raw6", "icmp", "icmp6", "snmp", "snmp6",
    "netstat", "dev", "igmp", "igmp6",
];

/// A hash of what a run could see of the calling process's network namespace, keyed by
/// `keys` (random per spawner, so that no run can make two states hash alike).
pub(crate) fn state(keys: &RandomState) -> u64 {
    let mut hash = keys.build_hasher();
    for name in STATE {
        hash.write(name.as_bytes());
        match std::fs::read(format!("/proc/self/net/{name}")) {
            Ok(bytes) => {
                hash.write_u8(1);
                hash.write(&bytes);
            }
            Err(_) => hash.write_u8(0),
        }
    }
    hash.finish()
}

/// Puts the calling process in a network namespace for its run: `previous` (a namespace
/// of the slot's run before the last, offered by the spawner) if it is as it was made,
/// else a new one with `lo` up. Making one costs 0.6–1 ms here and tearing it down more,
/// which back to back was on the run's path; most runs leave theirs as they found it.
pub(crate) fn enter(previous: Option<Namespace>, keys: &RandomState) -> Result<Namespace, String> {
    if let Some((ns, made)) = previous
        && nix::sched::setns(&ns, CloneFlags::CLONE_NEWNET).is_ok()
        && state(keys) == made
    {
        return Ok((ns, made));
    }
    nix::sched::unshare(CloneFlags::CLONE_NEWNET)
        .map_err(|e| format!("unshare a network namespace: {e}"))?;
    loopback_up()?;
    let ns = nix::fcntl::open(
        "/proc/self/ns/net",
        nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_CLOEXEC,
        nix::sys::stat::Mode::empty(),
    )
    .map_err(|e| format!("open /proc/self/ns/net: {e}"))?;
    Ok((ns, state(keys)))
}

/// Keeps the calling process in its network namespace for its run, with `lo` up: for
/// the one program of a one-shot slot, whose spawner made that namespace and runs
/// nothing else in it (it holds only the spawner's unnamed socket pairs, which no
/// program can reach by a name). Saves making and tearing down a second one. Its state
/// is not hashed (reading the files took 1 ms of a 10 ms one-shot run): a one-shot slot
/// offers it to no later program.
pub(crate) fn keep() -> Result<Namespace, String> {
    loopback_up()?;
    let ns = nix::fcntl::open(
        "/proc/self/ns/net",
        nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_CLOEXEC,
        nix::sys::stat::Mode::empty(),
    )
    .map_err(|e| format!("open /proc/self/ns/net: {e}"))?;
    Ok((ns, 0))
}

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
