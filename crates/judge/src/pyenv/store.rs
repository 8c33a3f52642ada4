//! The content store every environment shares its files through: `store/<sha256>-<mode>`
//! in the cache holds each distinct file once, and an environment's files are hard
//! links to it. Ten entries with the same heavy packages (NumPy, SciPy, a deep-learning
//! stack) in ten different sets then cost one copy of those files, not ten: an
//! environment's own cost is its folders and the files no other one has.
//!
//! Safe because nothing ever writes an environment's files: they are root's and
//! read-only (sealed before they are shared), sandbox runs see them read-only, and a
//! file is replaced, never written, when its environment is built again. The mode is
//! part of a stored file's name because links share it.
//!
//! Not here: building environments (`pipeline::prep`).

use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

/// What sharing a tree did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Shared {
    /// Regular files in the tree.
    pub files: u64,
    pub bytes: u64,
    /// Of those, already in the store (now links to it): what the tree did not add.
    pub reused_files: u64,
    pub reused_bytes: u64,
}

/// Replaces every regular file of `tree` by a hard link to its copy in `store` (adding
/// it there when the store lacks it). `tree` and `store` must be on one file system.
/// Links are never followed. A file the store cannot take another link to (the file
/// system's link limit) stays a copy of its own.
pub fn share(store: &Path, tree: &Path) -> io::Result<Shared> {
    std::fs::create_dir_all(store)?;
    let mut done = Shared::default();
    let mut todo = vec![tree.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            let meta = std::fs::symlink_metadata(&path)?;
            if meta.is_dir() {
                todo.push(path);
                continue;
            }
            if !meta.is_file() {
                continue;
            }
            done.files += 1;
            done.bytes += meta.len();
            let mode = meta.permissions().mode() & 0o7777;
            let name = format!("{}-{mode:o}", super::sha256_file(&path)?);
            let stored = store.join(&name);
            match std::fs::symlink_metadata(&stored) {
                Ok(s) if s.ino() == meta.ino() && s.dev() == meta.dev() => {
                    done.reused_files += 1;
                    done.reused_bytes += meta.len();
                }
                Ok(s) if s.is_file() && s.len() == meta.len() => {
                    // Into the tree's folder under a new name, then over the file: the
                    // path is never missing.
                    let tmp = dir.join(".store-link");
                    let _ = std::fs::remove_file(&tmp);
                    match std::fs::hard_link(&stored, &tmp) {
                        Ok(()) => {
                            std::fs::rename(&tmp, &path)?;
                            done.reused_files += 1;
                            done.reused_bytes += meta.len();
                        }
                        // EMLINK: too many links to the stored file already.
                        Err(e) if e.raw_os_error() == Some(31) => {}
                        Err(e) => return Err(e),
                    }
                }
                _ => {
                    // First of its content: the stored copy is this file itself. A
                    // concurrent build that stored it meanwhile makes this fail, and the
                    // file simply stays a copy.
                    let _ = std::fs::hard_link(&path, &stored);
                }
            }
        }
    }
    Ok(done)
}

/// Removes stored files no environment links to any more (link count 1): for a cache
/// clean-up after environments were removed. Returns the bytes freed.
pub fn sweep(store: &Path) -> io::Result<u64> {
    let mut freed = 0;
    for entry in std::fs::read_dir(store)? {
        let path = entry?.path();
        let meta = std::fs::symlink_metadata(&path)?;
        if meta.is_file() && meta.nlink() == 1 {
            std::fs::remove_file(&path)?;
            freed += meta.len();
        }
    }
    Ok(freed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_files_become_one_and_modes_stay_apart() {
        let t = tempfile::tempdir().unwrap();
        let store = t.path().join("store");
        let (a, b) = (t.path().join("a"), t.path().join("b"));
        for tree in [&a, &b] {
            std::fs::create_dir_all(tree.join("pkg")).unwrap();
            std::fs::write(tree.join("pkg/big.so"), vec![7u8; 4096]).unwrap();
            std::os::unix::fs::symlink("big.so", tree.join("pkg/link.so")).unwrap();
        }
        std::fs::write(a.join("own.py"), b"a").unwrap();
        std::fs::write(b.join("run.sh"), b"x").unwrap();
        std::fs::write(b.join("data.txt"), b"x").unwrap();
        std::fs::set_permissions(b.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(b.join("data.txt"), std::fs::Permissions::from_mode(0o644))
            .unwrap();
        let first = share(&store, &a).unwrap();
        assert_eq!((first.files, first.reused_files), (2, 0));
        let second = share(&store, &b).unwrap();
        assert_eq!(second.files, 3);
        assert_eq!((second.reused_files, second.reused_bytes), (1, 4096));
        let ino = |p: &Path| std::fs::metadata(p).unwrap().ino();
        assert_eq!(ino(&a.join("pkg/big.so")), ino(&b.join("pkg/big.so")));
        // Same bytes, another mode: not one inode.
        assert_ne!(ino(&b.join("run.sh")), ino(&b.join("data.txt")));
        assert_eq!(
            std::fs::metadata(b.join("run.sh"))
                .unwrap()
                .permissions()
                .mode()
                & 0o777,
            0o755
        );
        assert!(
            std::fs::symlink_metadata(b.join("pkg/link.so"))
                .unwrap()
                .is_symlink()
        );
        // Sharing again changes nothing.
        assert_eq!(share(&store, &b).unwrap().reused_files, 3);
        std::fs::remove_dir_all(&a).unwrap();
        std::fs::remove_dir_all(&b).unwrap();
        assert_eq!(sweep(&store).unwrap(), 4096 + 1 + 1 + 1);
        assert_eq!(std::fs::read_dir(&store).unwrap().count(), 0);
    }
}
