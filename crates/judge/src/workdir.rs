//! The judge's private work folders, and the removal of trees an entry made.
//!
//! An entry controls what it leaves in its writable folders: a folder 30,000 levels
//! deep, a million empty files. The standard library's `remove_dir_all` recurses with
//! one open descriptor per level (it fails with "Too many open files", or overflows the
//! judge's stack), and a path that deep is longer than the kernel takes. [`remove_tree`]
//! walks down and back up with one descriptor at a time, relative to the folder it is
//! in (never a path through the tree, never following a link), and stops at a deadline:
//! a tree that cannot be removed in time is the entry's fault, not the judge's.
//!
//! [`WorkDir`] is an evaluation's work folder: `0700`, root's, removed when dropped —
//! after a panic too — and, through [`remove_live`], by a signal handler of the binary
//! when the judge is told to stop (SIGTERM). A process killed outright (SIGKILL) leaves
//! its folder; its name carries the process's id, and [`sweep`] (run by every new
//! `Judge`) removes the folders of processes that are gone.

use std::ffi::CString;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use nix::dir::{Dir, Type};
use nix::errno::Errno;
use nix::fcntl::{OFlag, openat};
use nix::sys::stat::{Mode, SFlag};
use nix::unistd::{UnlinkatFlags, unlinkat};

/// Why a tree was not removed.
#[derive(Debug, thiserror::Error)]
pub enum RemoveError {
    /// The deadline came first: what is left is too big to remove in time.
    #[error("{}: not removed in time ({removed} entries removed)", path.display())]
    Timeout { path: PathBuf, removed: u64 },
    #[error("{}: {op}: {errno}", path.display())]
    Os {
        path: PathBuf,
        op: &'static str,
        errno: Errno,
    },
}

const DIR_FLAGS: OFlag = OFlag::O_RDONLY
    .union(OFlag::O_DIRECTORY)
    .union(OFlag::O_NOFOLLOW)
    .union(OFlag::O_CLOEXEC);

/// Removes `path` and everything under it, whatever its depth, holding at most two
/// directory descriptors at a time and no recursion; `deadline` (if any) is checked
/// between entries. A missing `path` is already removed. Nobody may be writing in the
/// tree meanwhile (the entry's processes are dead when the judge cleans up after them).
pub fn remove_tree(path: &Path, deadline: Option<Instant>) -> Result<(), RemoveError> {
    let os = |op, errno| RemoveError::Os {
        path: path.to_path_buf(),
        op,
        errno,
    };
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(os("stat", Errno::from_raw(e.raw_os_error().unwrap_or(0)))),
        Ok(m) if !m.is_dir() => {
            return std::fs::remove_file(path)
                .map_err(|e| os("unlink", Errno::from_raw(e.raw_os_error().unwrap_or(0))));
        }
        Ok(_) => {}
    }
    let mut fd: OwnedFd =
        nix::fcntl::open(path, DIR_FLAGS, Mode::empty()).map_err(|e| os("open", e))?;
    // The names of the folders walked down into, to remove each on the way back up: on
    // the heap, as long as the tree is deep.
    let mut names: Vec<CString> = Vec::new();
    let mut removed = 0u64;
    loop {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(RemoveError::Timeout {
                path: path.to_path_buf(),
                removed,
            });
        }
        // Remove what can be removed here; stop at the first folder that is not empty.
        let mut down = None;
        {
            let dup = fd
                .try_clone()
                .map_err(|e| os("dup", Errno::from_raw(e.raw_os_error().unwrap_or(0))))?;
            let mut dir = Dir::from_fd(dup).map_err(|e| os("opendir", e))?;
            for entry in dir.iter() {
                let entry = entry.map_err(|e| os("readdir", e))?;
                let name = entry.file_name();
                if name == c"." || name == c".." {
                    continue;
                }
                let is_dir = match entry.file_type() {
                    Some(t) => t == Type::Directory,
                    None => nix::sys::stat::fstatat(
                        fd.as_fd(),
                        name,
                        nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
                    )
                    .is_ok_and(|s| {
                        SFlag::from_bits_truncate(s.st_mode) & SFlag::S_IFMT == SFlag::S_IFDIR
                    }),
                };
                let how = if is_dir {
                    UnlinkatFlags::RemoveDir
                } else {
                    UnlinkatFlags::NoRemoveDir
                };
                match unlinkat(fd.as_fd(), name, how) {
                    Ok(()) => removed += 1,
                    Err(Errno::ENOENT) => {}
                    Err(Errno::ENOTEMPTY | Errno::EEXIST) if is_dir => {
                        down = Some(CString::from(name));
                        break;
                    }
                    Err(e) => return Err(os("unlink", e)),
                }
            }
        }
        if let Some(name) = down {
            let child = openat(fd.as_fd(), name.as_c_str(), DIR_FLAGS, Mode::empty())
                .map_err(|e| os("open", e))?;
            fd = child;
            names.push(name);
            continue;
        }
        // This folder is empty: go up and remove it.
        let Some(name) = names.pop() else {
            drop(fd);
            return std::fs::remove_dir(path)
                .map_err(|e| os("rmdir", Errno::from_raw(e.raw_os_error().unwrap_or(0))));
        };
        let parent =
            openat(fd.as_fd(), c"..", DIR_FLAGS, Mode::empty()).map_err(|e| os("open ..", e))?;
        fd = parent;
        match unlinkat(fd.as_fd(), name.as_c_str(), UnlinkatFlags::RemoveDir) {
            Ok(()) => removed += 1,
            Err(Errno::ENOENT) => {}
            Err(e) => return Err(os("rmdir", e)),
        }
    }
}

/// The start of every work folder's name.
const PREFIX: &str = "physiojudge-eval-";

/// Removes the work folders that processes which died without cleaning up (killed with
/// SIGKILL, say: a server killed mid-run) left in `std::env::temp_dir()`: those whose
/// name carries the id of a process that no longer exists. Their entries' processes
/// are gone (a run's processes die with their runner). Returns how many went.
pub fn sweep() -> usize {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(PREFIX)
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        match remove_tree(&e.path(), None) {
            Ok(()) => removed += 1,
            Err(err) => tracing::warn!("a dead process's work folder: {err}"),
        }
    }
    removed
}

/// Work folders of evaluations in progress, for [`remove_live`].
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// An evaluation's private work folder (`0700`, under the temporary folder), removed
/// when dropped.
#[derive(Debug)]
pub struct WorkDir {
    path: PathBuf,
}

impl WorkDir {
    /// A new folder `physiojudge-eval-<pid>-<random>` in `std::env::temp_dir()` (the
    /// process id lets [`sweep`] tell a dead process's folder from a live one's).
    pub fn new() -> std::io::Result<WorkDir> {
        use std::os::unix::fs::PermissionsExt;
        let path = tempfile::Builder::new()
            .prefix(&format!("{PREFIX}{}-", std::process::id()))
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir()?
            .keep();
        // The builder's mode is masked by the umask: set it outright.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700))?;
        LIVE.lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(path.clone());
        Ok(WorkDir { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        if let Err(e) = remove_tree(&self.path, None) {
            tracing::error!("work folder left behind: {e}");
        }
        LIVE.lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|p| p != &self.path);
    }
}

/// Removes the work folders of every evaluation in progress: for a signal handler of a
/// process about to exit (their `WorkDir`s will never be dropped).
pub fn remove_live() {
    let live = std::mem::take(&mut *LIVE.lock().unwrap_or_else(|e| e.into_inner()));
    for p in live {
        let _ = remove_tree(&p, None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dead process's folder goes (a pid above any pid_max cannot be alive); a live
    /// one's stays.
    #[test]
    fn sweep_removes_only_dead_processes_folders() {
        let dead = std::env::temp_dir().join(format!("{PREFIX}4294967-sweeptest"));
        std::fs::create_dir_all(dead.join("inside")).unwrap();
        std::fs::write(dead.join("inside/file"), "x").unwrap();
        let live = WorkDir::new().unwrap();
        sweep();
        assert!(!dead.exists());
        assert!(live.path().is_dir());
    }

    /// A folder 30,000 levels deep (a path of 60,000 bytes, past PATH_MAX) and a wide
    /// one, made with descriptors as an entry would, are removed whole.
    #[test]
    fn a_very_deep_tree_is_removed() {
        let top = tempfile::tempdir().unwrap();
        let root = top.path().join("tree");
        std::fs::create_dir(&root).unwrap();
        let mut fd = nix::fcntl::open(&root, DIR_FLAGS, Mode::empty()).unwrap();
        for i in 0..30_000 {
            nix::sys::stat::mkdirat(fd.as_fd(), c"a", Mode::from_bits_truncate(0o755)).unwrap();
            if i % 1000 == 0 {
                let f = openat(
                    fd.as_fd(),
                    c"f",
                    OFlag::O_CREAT | OFlag::O_WRONLY | OFlag::O_CLOEXEC,
                    Mode::from_bits_truncate(0o644),
                )
                .unwrap();
                drop(f);
                nix::unistd::symlinkat(c"/etc/passwd", fd.as_fd(), c"link").unwrap();
            }
            fd = openat(fd.as_fd(), c"a", DIR_FLAGS, Mode::empty()).unwrap();
        }
        drop(fd);
        for i in 0..2000 {
            std::fs::write(root.join(format!("w{i}")), b"").unwrap();
            std::fs::create_dir(root.join(format!("d{i}"))).unwrap();
        }
        remove_tree(&root, None).unwrap();
        assert!(!root.exists());
        assert!(Path::new("/etc/passwd").exists());
    }

    #[test]
    fn a_deadline_stops_the_removal_with_a_count() {
        let top = tempfile::tempdir().unwrap();
        for i in 0..100 {
            std::fs::write(top.path().join(format!("f{i}")), b"").unwrap();
        }
        let e = remove_tree(top.path(), Some(Instant::now())).unwrap_err();
        assert!(matches!(e, RemoveError::Timeout { removed: 0, .. }), "{e}");
        remove_tree(&top.path().join("missing"), None).unwrap();
        let file = top.path().join("f1");
        remove_tree(&file, None).unwrap();
        assert!(!file.exists());
    }

    #[test]
    fn a_work_folder_is_private_and_removed() {
        use std::os::unix::fs::PermissionsExt;
        let w = WorkDir::new().unwrap();
        let p = w.path().to_path_buf();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        std::fs::create_dir_all(p.join("x/y")).unwrap();
        drop(w);
        assert!(!p.exists());
    }
}
