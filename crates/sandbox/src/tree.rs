//! Detached mount trees (the kernel's new mount API): how a run's binds travel from the
//! runner, which sees the host's paths, into a sandbox whose processes no longer do.
//!
//! The runner clones each bind source into a detached tree (`open_tree`), sets its mount
//! flags on the whole tree (`mount_setattr`) and sends the descriptor with the run's
//! request; the run attaches it at its place in its own mount namespace (`move_mount`).
//! A tree that is never attached is dissolved when its last descriptor closes, so a
//! failed run leaves no mount behind. Linux 5.12 or later (`mount_setattr`).

use std::ffi::CString;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use nix::libc;

fn cstring(path: &Path) -> Result<CString, String> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| format!("{}: the path holds a NUL byte", path.display()))
}

/// A detached copy of the tree at `src` (itself and every mount below it), read-only
/// unless `writable`, never honouring set-uid bits or device nodes.
pub fn clone(src: &Path, writable: bool) -> Result<OwnedFd, String> {
    let path = cstring(src)?;
    let flags = libc::OPEN_TREE_CLONE | libc::OPEN_TREE_CLOEXEC | libc::AT_RECURSIVE as u32;
    // SAFETY: a NUL-terminated path and integer flags; a non-negative result is a new
    // descriptor owned by nobody else.
    #[allow(unsafe_code)]
    let fd = unsafe { libc::syscall(libc::SYS_open_tree, libc::AT_FDCWD, path.as_ptr(), flags) };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        return Err(format!("cannot bind {}: {e}", src.display()));
    }
    // SAFETY: see above.
    #[allow(unsafe_code)]
    let tree = unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) };
    let mut set = libc::MOUNT_ATTR_NOSUID | libc::MOUNT_ATTR_NODEV;
    if !writable {
        set |= libc::MOUNT_ATTR_RDONLY;
    }
    let attr = libc::mount_attr {
        attr_set: set,
        attr_clr: 0,
        propagation: libc::MS_PRIVATE,
        userns_fd: 0,
    };
    let empty = c"";
    // SAFETY: the descriptor is ours, the path is an empty C string, and the attribute
    // struct is passed with its size.
    #[allow(unsafe_code)]
    let r = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            tree.as_raw_fd(),
            empty.as_ptr(),
            libc::AT_EMPTY_PATH | libc::AT_RECURSIVE,
            &attr as *const libc::mount_attr,
            std::mem::size_of::<libc::mount_attr>(),
        )
    };
    if r < 0 {
        let e = std::io::Error::last_os_error();
        return Err(format!(
            "cannot set the mount flags of {}: {e}",
            src.display()
        ));
    }
    Ok(tree)
}

/// Attaches a detached tree at `dst` in the calling process's mount namespace.
pub fn attach(tree: BorrowedFd, dst: &Path) -> Result<(), String> {
    let path = cstring(dst)?;
    let empty = c"";
    // SAFETY: a descriptor we hold, an empty path for it, and a NUL-terminated target.
    #[allow(unsafe_code)]
    let r = unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            tree.as_raw_fd(),
            empty.as_ptr(),
            libc::AT_FDCWD,
            path.as_ptr(),
            libc::MOVE_MOUNT_F_EMPTY_PATH,
        )
    };
    if r < 0 {
        let e = std::io::Error::last_os_error();
        return Err(format!("attach {}: {e}", dst.display()));
    }
    Ok(())
}
