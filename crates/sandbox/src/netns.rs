//! One network namespace per slot, made once per runner process and joined by every run
//! of that slot.
//!
//! Creating a network namespace is the dearest step of starting a sandbox on these
//! machines (1–15 ms, and its teardown runs on a kernel work queue that later creations
//! wait for), while an empty one is stateless enough to reuse: it holds only `lo`, no
//! run can change its configuration (that needs `CAP_NET_ADMIN`, which the program never
//! has), and every process of a run is dead before the slot's next run starts, taking its
//! sockets with it. Runs in different slots never share one, so concurrent runs cannot
//! reach each other over loopback or abstract Unix sockets.
//!
//! The namespace lives as long as the open descriptor kept here: nothing is left on the
//! host when the runner exits, however it exits.

use std::collections::HashMap;
use std::fs::File;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::sync::{Mutex, OnceLock};

use nix::libc;
use nix::sched::{CloneFlags, unshare};

/// The slot's namespace as a descriptor to `setns` into (open for the whole process).
pub fn for_slot(slot: u32) -> Result<BorrowedFd<'static>, String> {
    static SLOTS: OnceLock<Mutex<HashMap<u32, File>>> = OnceLock::new();
    let mut slots = SLOTS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some(f) = slots.get(&slot) {
        return Ok(borrow(f));
    }
    // Namespaces belong to threads: a short-lived thread makes it, so that the runner's
    // own threads stay in the host's namespace.
    let made = std::thread::spawn(|| -> Result<File, String> {
        unshare(CloneFlags::CLONE_NEWNET).map_err(|e| format!("new network namespace: {e}"))?;
        loopback_up()?;
        File::open("/proc/thread-self/ns/net").map_err(|e| format!("network namespace: {e}"))
    })
    .join()
    .map_err(|_| "the network namespace thread panicked".to_string())??;
    let fd = borrow(&made);
    slots.insert(slot, made);
    Ok(fd)
}

/// The descriptors are never closed (the map only grows), so they live for the process.
fn borrow(f: &File) -> BorrowedFd<'static> {
    // SAFETY: the file stays open until the process exits (see above).
    #[allow(unsafe_code)]
    unsafe {
        BorrowedFd::borrow_raw(f.as_raw_fd())
    }
}

/// Brings up `lo` in the calling thread's network namespace, so that programs may talk
/// to themselves over 127.0.0.1 (some libraries do).
fn loopback_up() -> Result<(), String> {
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
