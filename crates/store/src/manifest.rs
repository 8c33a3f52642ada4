//! A data folder pinned by the sha256 of each file, so that a changed folder is noticed
//! and refused before anything is judged on it.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::Error;

/// Every regular file under a folder, by its path relative to the folder (`/`-separated),
/// with the sha256 of its content (lower-case hex).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Manifest {
    pub files: BTreeMap<String, String>,
}

impl Manifest {
    /// The manifest's own hash: the sha256 of the text `sha256sum` would print for the
    /// files in path order (`<hex>  <path>\n` per file), so
    /// `(cd DIR && find . -type f | sed 's|^\./||' | LC_ALL=C sort | xargs sha256sum | sha256sum)`
    /// gives the same figure.
    pub fn sha256(&self) -> String {
        let mut h = Sha256::new();
        for (path, sum) in &self.files {
            h.update(sum.as_bytes());
            h.update(b"  ");
            h.update(path.as_bytes());
            h.update(b"\n");
        }
        hex(&h.finalize())
    }

    /// Reads a folder and hashes every file in it. Links to files are read as the files
    /// they point to; a link to a folder, or any other kind of file, is refused (a loop
    /// or a device would make the manifest meaningless). Paths must be UTF-8 without
    /// line breaks. This reads every byte: call it off the async runtime
    /// (`tokio::task::spawn_blocking`) for a large folder.
    pub fn compute(dir: &Path) -> Result<Manifest, Error> {
        let mut files = BTreeMap::new();
        walk(dir, dir, &mut files, &mut |path, _| file_sha256(path))?;
        Ok(Manifest { files })
    }

    /// Checks a folder against this manifest: [`Error::DataChanged`] lists every file
    /// added, missing or changed.
    pub fn verify(&self, dir: &Path) -> Result<(), Error> {
        let now = Manifest::compute(dir)?;
        let mut differences = Vec::new();
        for (path, sum) in &self.files {
            match now.files.get(path) {
                None => differences.push(format!("{path} is missing")),
                Some(s) if s != sum => differences.push(format!("{path} changed")),
                Some(_) => {}
            }
        }
        for path in now.files.keys() {
            if !self.files.contains_key(path) {
                differences.push(format!("{path} is new"));
            }
        }
        if differences.is_empty() {
            Ok(())
        } else {
            Err(Error::DataChanged {
                path: dir.to_path_buf(),
                differences,
            })
        }
    }
}

/// Remembers the folders that passed [`Manifest::verify`], by a fingerprint of their
/// files' metadata, so that a worker judging job after job on the same data reads every
/// byte of it once, not once per job (the check is on each job's path). The fingerprint
/// is, per file, its size, inode, device, and modification and change times: a write,
/// a rename over it or a `chmod` changes the change time, which no one but root can set
/// back (the same trust git's index puts in it). A folder changed since it was verified
/// is hashed again, and so refused if it no longer matches.
#[derive(Debug)]
pub struct VerifiedFolders {
    seen: std::sync::Mutex<std::collections::HashMap<(PathBuf, String), String>>,
    /// Files changed less than this long before the fingerprint was taken are too fresh
    /// to trust it: the file system's clock ticks coarsely, and a write in the same tick
    /// after the fingerprint would leave it unchanged. Such a folder is not remembered.
    settle: std::time::Duration,
    hashed: std::sync::atomic::AtomicU64,
}

impl Default for VerifiedFolders {
    fn default() -> VerifiedFolders {
        VerifiedFolders::new(std::time::Duration::from_secs(2))
    }
}

impl VerifiedFolders {
    pub fn new(settle: std::time::Duration) -> VerifiedFolders {
        VerifiedFolders {
            seen: Default::default(),
            settle,
            hashed: Default::default(),
        }
    }

    /// [`Manifest::verify`], skipped when this folder passed it for this manifest and
    /// its files' metadata is unchanged since.
    pub fn verify(&self, manifest: &Manifest, dir: &Path) -> Result<(), Error> {
        use std::os::unix::fs::MetadataExt;
        let taken = std::time::SystemTime::now();
        let mut newest: i128 = i128::MIN;
        let mut files = BTreeMap::new();
        walk(dir, dir, &mut files, &mut |_, m| {
            let ns = |secs: i64, nsec: i64| i128::from(secs) * 1_000_000_000 + i128::from(nsec);
            newest = newest
                .max(ns(m.ctime(), m.ctime_nsec()))
                .max(ns(m.mtime(), m.mtime_nsec()));
            Ok(format!(
                "{} {} {} {}.{} {}.{}",
                m.len(),
                m.ino(),
                m.dev(),
                m.mtime(),
                m.mtime_nsec(),
                m.ctime(),
                m.ctime_nsec()
            ))
        })?;
        let fingerprint = Manifest { files }.sha256();
        let key = (dir.to_path_buf(), manifest.sha256());
        let seen = |k: &(PathBuf, String)| self.seen.lock().unwrap().get(k).cloned();
        if seen(&key).as_deref() == Some(fingerprint.as_str()) {
            return Ok(());
        }
        self.hashed
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        manifest.verify(dir)?;
        let settled = taken.duration_since(std::time::UNIX_EPOCH).is_ok_and(|t| {
            i128::try_from(t.as_nanos()).unwrap_or(i128::MAX) - newest
                > i128::try_from(self.settle.as_nanos()).unwrap_or(i128::MAX)
        });
        if settled {
            self.seen.lock().unwrap().insert(key, fingerprint);
        }
        Ok(())
    }

    /// How many times a folder was hashed whole (for tests and metrics).
    pub fn hashed(&self) -> u64 {
        self.hashed.load(std::sync::atomic::Ordering::Relaxed)
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Every file under `dir` (links to files followed), by relative path, with what
/// `each` makes of it from its path and its (followed) metadata.
fn walk(
    root: &Path,
    dir: &Path,
    files: &mut BTreeMap<String, String>,
    each: &mut dyn FnMut(&Path, &std::fs::Metadata) -> Result<String, Error>,
) -> Result<(), Error> {
    let mut entries: Vec<PathBuf> = Vec::new();
    for e in std::fs::read_dir(dir).map_err(io(dir))? {
        entries.push(e.map_err(io(dir))?.path());
    }
    for path in entries {
        let meta = std::fs::symlink_metadata(&path).map_err(io(&path))?;
        let followed = if meta.file_type().is_symlink() {
            std::fs::metadata(&path).map_err(io(&path))?
        } else {
            meta.clone()
        };
        if meta.file_type().is_dir() {
            walk(root, &path, files, each)?;
        } else if followed.is_file() {
            let rel = relative(root, &path)?;
            files.insert(rel, each(&path, &followed)?);
        } else {
            return Err(Error::Invalid {
                field: "data folder",
                problem: format!(
                    "{} is neither a file nor a folder (links to folders are refused)",
                    path.display()
                ),
            });
        }
    }
    Ok(())
}

fn relative(root: &Path, path: &Path) -> Result<String, Error> {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let mut parts = Vec::new();
    for c in rel.components() {
        match c.as_os_str().to_str() {
            Some(s) if !s.contains(['\n', '\r']) => parts.push(s),
            _ => {
                return Err(Error::Invalid {
                    field: "data folder",
                    problem: format!(
                        "{} has a name that is not UTF-8 or has a line break",
                        path.display()
                    ),
                });
            }
        }
    }
    Ok(parts.join("/"))
}

/// The sha256 of a file's content, lower-case hex.
pub fn file_sha256(path: &Path) -> Result<String, Error> {
    let mut f = File::open(path).map_err(io(path))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf).map_err(io(path))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex(&h.finalize()))
}

/// sha256 of some bytes, lower-case hex.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder() -> (tempfile::TempDir, Manifest) {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("sub")).unwrap();
        std::fs::write(d.path().join("a.txt"), b"one").unwrap();
        std::fs::write(d.path().join("sub/b.dat"), b"two").unwrap();
        let m = Manifest::compute(d.path()).unwrap();
        (d, m)
    }

    #[test]
    fn a_verified_folder_is_not_hashed_again_until_it_changes() {
        let (d, m) = folder();
        let v = VerifiedFolders::new(std::time::Duration::ZERO);
        v.verify(&m, d.path()).unwrap();
        v.verify(&m, d.path()).unwrap();
        assert_eq!(v.hashed(), 1);
        // Another manifest of the same folder is its own question.
        let other = Manifest::default();
        assert!(v.verify(&other, d.path()).is_err());
        assert_eq!(v.hashed(), 2);
        // A change the metadata shows (here the size) is hashed and refused.
        std::fs::write(d.path().join("sub/b.dat"), b"three").unwrap();
        let e = v.verify(&m, d.path()).unwrap_err();
        assert!(e.to_string().contains("sub/b.dat changed"), "{e}");
        assert_eq!(v.hashed(), 3);
        std::fs::write(d.path().join("new.txt"), b"").unwrap();
        assert!(v.verify(&m, d.path()).is_err());
    }

    #[test]
    fn a_folder_changed_moments_ago_is_never_trusted_by_its_metadata() {
        let (d, m) = folder();
        let v = VerifiedFolders::default();
        v.verify(&m, d.path()).unwrap();
        // Same size, maybe the same clock tick: only hashing can tell, so it hashes.
        std::fs::write(d.path().join("a.txt"), b"eno").unwrap();
        assert!(v.verify(&m, d.path()).is_err());
        assert_eq!(v.hashed(), 2);
    }
}
