//! Detached mount trees (the kernel's new mount API): how a run's binds travel from the
//! runner, which sees the host's paths, into a sandbox whose processes no longer do.
//!
//! The runner clones each bind source into a detached tree (`open_tree`), sets its mount
//! flags on the whole tree (`mount_setattr`) and sends the descriptor with the run's
//! request; the run attaches it at its place in its own mount namespace (`move_mount`).
//! A tree that is never attached is dissolved when its last descriptor closes, so a
//! failed run leaves no mount behind. Linux 5.12 or later (`mount_setattr`).
//!
//! A read-only view of a host path is not a clone but a file system of its own
//! ([`view`]): an overlay whose only content is that path. Its files are the host's,
//! but its inodes are its own, so what is tied to an inode stays with the view: inotify
//! watches (a run watching `/usr` saw which files another slot's run opened) and locks
//! (`flock` or `fcntl` on a shared read-only file was a channel between concurrent
//! runs). Each slot's root and each run's read-only binds get views of their own. A view
//! shows the source's own file system, not what is mounted below it.

use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use nix::libc;

fn cstring(path: &Path) -> Result<CString, String> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| format!("{}: the path holds a NUL byte", path.display()))
}

/// A detached copy of the tree at `src` (itself and every mount below it), writable,
/// never honouring set-uid bits or device nodes: a run's own directory. (A read-only
/// bind is a [`view`].)
pub fn clone(src: &Path) -> Result<OwnedFd, String> {
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
    let attr = libc::mount_attr {
        attr_set: libc::MOUNT_ATTR_NOSUID | libc::MOUNT_ATTR_NODEV,
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

/// Constants of the kernel's mount API (linux/mount.h).
const FSOPEN_CLOEXEC: libc::c_uint = 1;
const FSCONFIG_SET_FD: libc::c_uint = 5;
const FSCONFIG_CMD_CREATE: libc::c_uint = 6;
const FSMOUNT_CLOEXEC: libc::c_uint = 1;

/// A new descriptor from a system call's result, or what failed.
fn owned(r: libc::c_long, what: impl FnOnce() -> String) -> Result<OwnedFd, String> {
    match libc::c_int::try_from(r) {
        // SAFETY: the kernel has just returned this new descriptor, which nothing else owns.
        #[allow(unsafe_code)]
        Ok(fd) if fd >= 0 => Ok(unsafe { OwnedFd::from_raw_fd(fd) }),
        _ => Err(format!("{}: {}", what(), std::io::Error::last_os_error())),
    }
}

/// A detached mount of a new file system of type `kind` (no options) with the mount
/// attributes `attrs`, made by the caller's `configure` between creating the context and
/// creating the file system.
fn new_mount(
    kind: &std::ffi::CStr,
    configure: impl FnOnce(BorrowedFd) -> Result<(), String>,
    attrs: u64,
) -> Result<OwnedFd, String> {
    let name = || kind.to_string_lossy().into_owned();
    // SAFETY: a NUL-terminated file system name and integer flags.
    #[allow(unsafe_code)]
    let context = unsafe { libc::syscall(libc::SYS_fsopen, kind.as_ptr(), FSOPEN_CLOEXEC) };
    let context = owned(context, || format!("fsopen {}", name()))?;
    configure(context.as_fd())?;
    // SAFETY: a context we hold; no key, value or auxiliary descriptor.
    #[allow(unsafe_code)]
    let r = unsafe {
        libc::syscall(
            libc::SYS_fsconfig,
            context.as_raw_fd(),
            FSCONFIG_CMD_CREATE,
            std::ptr::null::<libc::c_char>(),
            std::ptr::null::<libc::c_void>(),
            0,
        )
    };
    if r < 0 {
        let e = std::io::Error::last_os_error();
        return Err(format!("creating a {} file system: {e}", name()));
    }
    // SAFETY: a context we hold, and integer flags.
    #[allow(unsafe_code)]
    let mnt = unsafe {
        libc::syscall(
            libc::SYS_fsmount,
            context.as_raw_fd(),
            FSMOUNT_CLOEXEC,
            attrs,
        )
    };
    owned(mnt, || format!("fsmount {}", name()))
}

/// An empty read-only directory (the root of a detached tmpfs, made once per process):
/// the second layer of every view, since an overlay without an upper layer needs two.
fn empty_layer() -> Result<BorrowedFd<'static>, String> {
    static EMPTY: std::sync::OnceLock<Result<OwnedFd, String>> = std::sync::OnceLock::new();
    EMPTY
        .get_or_init(|| new_mount(c"tmpfs", |_| Ok(()), libc::MOUNT_ATTR_RDONLY))
        .as_ref()
        .map(AsFd::as_fd)
        .map_err(Clone::clone)
}

/// A read-only view of the host path `src` (a directory or a file) with inodes of its
/// own: a detached overlay whose layers are `src` (or, for a file, its directory) and an
/// empty directory, never honouring set-uid bits or device nodes. See the module's
/// comment for why.
pub fn view(src: &Path) -> Result<OwnedFd, String> {
    let fail = |what: &str, e: &dyn std::fmt::Display| format!("{what} {}: {e}", src.display());
    // The real path: a symlink inside the view would be followed on the host.
    let real = std::fs::canonicalize(src).map_err(|e| fail("cannot bind", &e))?;
    let is_dir = real.is_dir();
    let (dir, name) = match (is_dir, real.parent(), real.file_name()) {
        (true, _, _) => (real.as_path(), None),
        (false, Some(dir), Some(name)) => (dir, Some(name)),
        _ => return Err(fail("cannot bind", &"not a directory or a file")),
    };
    let layer = nix::fcntl::open(
        dir,
        nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_DIRECTORY | nix::fcntl::OFlag::O_CLOEXEC,
        nix::sys::stat::Mode::empty(),
    )
    .map_err(|e| fail("cannot bind", &e))?;
    let empty = empty_layer()?;
    let layers = |context: BorrowedFd| {
        for fd in [layer.as_fd(), empty] {
            // SAFETY: a context and a layer descriptor we hold, and a NUL-terminated key.
            #[allow(unsafe_code)]
            let r = unsafe {
                libc::syscall(
                    libc::SYS_fsconfig,
                    context.as_raw_fd(),
                    FSCONFIG_SET_FD,
                    c"lowerdir+".as_ptr(),
                    std::ptr::null::<libc::c_void>(),
                    fd.as_raw_fd(),
                )
            };
            if r < 0 {
                let e = std::io::Error::last_os_error();
                return Err(fail("a layer of the view of", &e));
            }
        }
        Ok(())
    };
    let attrs = libc::MOUNT_ATTR_RDONLY | libc::MOUNT_ATTR_NOSUID | libc::MOUNT_ATTR_NODEV;
    let view = new_mount(c"overlay", layers, attrs).map_err(|e| fail("the view of", &e))?;
    let Some(name) = name else {
        return Ok(view);
    };
    // A file: a detached bind of it, inside the view (with the view's attributes).
    let name = cstring(Path::new(name))?;
    let flags = libc::OPEN_TREE_CLONE | libc::OPEN_TREE_CLOEXEC;
    // SAFETY: a descriptor we hold, a NUL-terminated name in it, and integer flags.
    #[allow(unsafe_code)]
    let file =
        unsafe { libc::syscall(libc::SYS_open_tree, view.as_raw_fd(), name.as_ptr(), flags) };
    owned(file, || format!("cannot bind {}", src.display()))
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
