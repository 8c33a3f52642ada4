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
        walk(dir, dir, &mut files)?;
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

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn walk(root: &Path, dir: &Path, files: &mut BTreeMap<String, String>) -> Result<(), Error> {
    let mut entries: Vec<PathBuf> = Vec::new();
    for e in std::fs::read_dir(dir).map_err(io(dir))? {
        entries.push(e.map_err(io(dir))?.path());
    }
    for path in entries {
        let meta = std::fs::symlink_metadata(&path).map_err(io(&path))?;
        let kind = if meta.file_type().is_symlink() {
            std::fs::metadata(&path).map_err(io(&path))?.file_type()
        } else {
            meta.file_type()
        };
        if meta.file_type().is_dir() {
            walk(root, &path, files)?;
        } else if kind.is_file() {
            let rel = relative(root, &path)?;
            files.insert(rel, file_sha256(&path)?);
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
