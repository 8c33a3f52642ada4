//! Unpacking an entry (a folder, `.zip`, `.tar.gz`/`.tgz` or `.tar`) into a fresh folder,
//! safely: no path leaves the folder (`..`, absolute paths), no links or devices, and caps
//! on the number of files and on the bytes actually written (counted while writing, never
//! taken from an archive's own headers), against archive bombs.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

/// Caps on what an entry may unpack to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    pub files: usize,
    pub bytes: u64,
}

impl Default for Caps {
    fn default() -> Self {
        Caps {
            files: 10_000,
            bytes: 512 << 20,
        }
    }
}

/// Why an entry could not be unpacked: shown to the participant as is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnpackError {
    #[error("{0}: not a folder, .zip, .tar.gz, .tgz or .tar")]
    UnknownKind(String),
    #[error("{path}: cannot be read as an archive: {why}")]
    Unreadable { path: String, why: String },
    #[error("{name}: a path outside the entry (absolute or with '..')")]
    PathEscapes { name: String },
    #[error("{name}: links and special files are not allowed in an entry")]
    Link { name: String },
    #[error("{name}: appears twice")]
    Duplicate { name: String },
    #[error("more than {cap} files")]
    TooManyFiles { cap: usize },
    #[error("unpacks to more than {cap} bytes (at {name})")]
    TooLarge { cap: u64, name: String },
    #[error("{0}")]
    Io(String),
}

/// Where an entry came from and what it unpacked to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unpacked {
    pub files: usize,
    pub bytes: u64,
    /// The single top-level folder the archive wrapped everything in, if it did (its
    /// contents are taken as the entry).
    pub unwrapped: Option<String>,
}

struct Writer<'a> {
    dest: &'a Path,
    caps: Caps,
    files: usize,
    bytes: u64,
    seen: std::collections::HashSet<PathBuf>,
}

impl Writer<'_> {
    /// The safe relative path of an archive member, or why not.
    fn relative(&self, name: &str) -> Result<Option<PathBuf>, UnpackError> {
        let mut rel = PathBuf::new();
        for c in Path::new(name).components() {
            match c {
                Component::Normal(p) => rel.push(p),
                Component::CurDir => {}
                _ => {
                    return Err(UnpackError::PathEscapes {
                        name: name.to_string(),
                    });
                }
            }
        }
        Ok((!rel.as_os_str().is_empty()).then_some(rel))
    }

    fn dir(&mut self, name: &str) -> Result<(), UnpackError> {
        // Folders count too: millions of empty ones would exhaust the host's inodes.
        self.files += 1;
        if self.files > self.caps.files {
            return Err(UnpackError::TooManyFiles {
                cap: self.caps.files,
            });
        }
        if let Some(rel) = self.relative(name)? {
            std::fs::create_dir_all(self.dest.join(&rel))
                .map_err(|e| UnpackError::Io(format!("{name}: {e}")))?;
        }
        Ok(())
    }

    fn file(&mut self, name: &str, executable: bool, data: impl Read) -> Result<(), UnpackError> {
        let Some(rel) = self.relative(name)? else {
            return Err(UnpackError::PathEscapes {
                name: name.to_string(),
            });
        };
        if !self.seen.insert(rel.clone()) {
            return Err(UnpackError::Duplicate {
                name: name.to_string(),
            });
        }
        self.files += 1;
        if self.files > self.caps.files {
            return Err(UnpackError::TooManyFiles {
                cap: self.caps.files,
            });
        }
        let path = self.dest.join(&rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| UnpackError::Io(format!("{name}: {e}")))?;
        }
        let io = |e: std::io::Error| UnpackError::Io(format!("{name}: {e}"));
        // create_new: never write through something already there.
        let mut out = File::options()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(io)?;
        let room = self.caps.bytes - self.bytes;
        let mut limited = data.take(room + 1);
        let n = std::io::copy(&mut limited, &mut out).map_err(io)?;
        if n > room {
            return Err(UnpackError::TooLarge {
                cap: self.caps.bytes,
                name: name.to_string(),
            });
        }
        self.bytes += n;
        out.flush().map_err(io)?;
        use std::os::unix::fs::PermissionsExt;
        let mode = if executable { 0o755 } else { 0o644 };
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).map_err(io)?;
        Ok(())
    }
}

/// Unpacks `src` into `dest` (an existing empty folder).
pub fn unpack(src: &Path, dest: &Path, caps: Caps) -> Result<Unpacked, UnpackError> {
    let shown = src.display().to_string();
    let meta = std::fs::metadata(src).map_err(|e| UnpackError::Io(format!("{shown}: {e}")))?;
    let mut w = Writer {
        dest,
        caps,
        files: 0,
        bytes: 0,
        seen: Default::default(),
    };
    let name = src
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_ascii_lowercase();
    let unreadable = |why: String| UnpackError::Unreadable {
        path: shown.clone(),
        why,
    };
    if meta.is_dir() {
        copy_folder(src, Path::new(""), &mut w)?;
    } else if name.ends_with(".zip") {
        let f = File::open(src).map_err(|e| unreadable(e.to_string()))?;
        let mut zip = zip::ZipArchive::new(f).map_err(|e| unreadable(e.to_string()))?;
        for i in 0..zip.len() {
            let entry = zip.by_index(i).map_err(|e| unreadable(e.to_string()))?;
            let member = entry
                .name()
                .map_err(|e| unreadable(e.to_string()))?
                .into_owned();
            if entry.is_symlink() {
                return Err(UnpackError::Link { name: member });
            }
            if entry.is_dir() {
                w.dir(&member)?;
            } else {
                let exec = entry.unix_mode().is_some_and(|m| m & 0o111 != 0);
                w.file(&member, exec, entry)?;
            }
        }
    } else if name.ends_with(".tar.gz") || name.ends_with(".tgz") || name.ends_with(".tar") {
        let f = File::open(src).map_err(|e| unreadable(e.to_string()))?;
        let reader: Box<dyn Read> = if name.ends_with(".tar") {
            Box::new(f)
        } else {
            Box::new(flate2::read::GzDecoder::new(f))
        };
        let mut ar = tar::Archive::new(reader);
        for entry in ar.entries().map_err(|e| unreadable(e.to_string()))? {
            let entry = entry.map_err(|e| unreadable(e.to_string()))?;
            let member = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
            let kind = entry.header().entry_type();
            if kind.is_dir() {
                w.dir(&member)?;
            } else if kind.is_file() {
                let exec = entry.header().mode().is_ok_and(|m| m & 0o111 != 0);
                w.file(&member, exec, entry)?;
            } else if kind.is_pax_global_extensions() || kind.is_pax_local_extensions() {
                continue;
            } else {
                return Err(UnpackError::Link { name: member });
            }
        }
    } else {
        return Err(UnpackError::UnknownKind(shown));
    }
    let unwrapped = unwrap_single_folder(dest)?;
    Ok(Unpacked {
        files: w.files,
        bytes: w.bytes,
        unwrapped,
    })
}

fn copy_folder(root: &Path, rel: &Path, w: &mut Writer) -> Result<(), UnpackError> {
    let dir = root.join(rel);
    let io = |e: std::io::Error| UnpackError::Io(format!("{}: {e}", dir.display()));
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .map_err(io)?
        .collect::<Result<_, _>>()
        .map_err(io)?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let child = rel.join(e.file_name());
        let name = child.display().to_string();
        let t = e.file_type().map_err(io)?;
        if t.is_dir() {
            w.dir(&name)?;
            copy_folder(root, &child, w)?;
        } else if t.is_file() {
            use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
            // Opened without following a link or blocking on a FIFO, and checked again
            // once open: the folder may change between the listing and the open.
            let f = File::options()
                .read(true)
                .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
                .open(root.join(&child))
                .map_err(|_| UnpackError::Link { name: name.clone() })?;
            let meta = f.metadata().map_err(io)?;
            if !meta.is_file() {
                return Err(UnpackError::Link { name });
            }
            let exec = meta.permissions().mode() & 0o111 != 0;
            w.file(&name, exec, f)?;
        } else {
            return Err(UnpackError::Link { name });
        }
    }
    Ok(())
}

/// An archive holding one folder and nothing else (`entry/setup.sh`, …) is taken to be
/// that folder's contents: a common way to pack, and unambiguous.
fn unwrap_single_folder(dest: &Path) -> Result<Option<String>, UnpackError> {
    let io = |e: std::io::Error| UnpackError::Io(format!("{}: {e}", dest.display()));
    let entries: Vec<_> = std::fs::read_dir(dest)
        .map_err(io)?
        .collect::<Result<_, _>>()
        .map_err(io)?;
    let [only] = entries.as_slice() else {
        return Ok(None);
    };
    if !only.file_type().map_err(io)?.is_dir() {
        return Ok(None);
    }
    let name = only.file_name().to_string_lossy().into_owned();
    let inner = only.path();
    // Move the folder aside first: one of its children may share its name.
    let aside = dest.join(".physiojudge-unwrap");
    std::fs::rename(&inner, &aside).map_err(io)?;
    for e in std::fs::read_dir(&aside).map_err(io)? {
        let e = e.map_err(io)?;
        std::fs::rename(e.path(), dest.join(e.file_name())).map_err(io)?;
    }
    std::fs::remove_dir(&aside).map_err(io)?;
    Ok(Some(name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn zip_with(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut buf = Cursor::new(Vec::new());
        {
            let mut z = zip::ZipWriter::new(&mut buf);
            let opts = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated)
                .unix_permissions(0o755);
            for (name, data) in entries {
                z.start_file(*name, opts).unwrap();
                z.write_all(data).unwrap();
            }
            z.finish().unwrap();
        }
        buf.into_inner()
    }

    fn unpack_bytes(
        name: &str,
        bytes: &[u8],
        caps: Caps,
    ) -> (tempfile::TempDir, Result<Unpacked, UnpackError>) {
        let src = tempfile::tempdir().unwrap();
        let path = src.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let dest = tempfile::tempdir().unwrap();
        let r = unpack(&path, dest.path(), caps);
        (dest, r)
    }

    #[test]
    fn zip_unpacks_with_modes_and_unwraps_a_single_folder() {
        let z = zip_with(&[("entry/next.sh", b"#!/bin/sh\n"), ("entry/sub/a.txt", b"a")]);
        let (dest, r) = unpack_bytes("entry.zip", &z, Caps::default());
        let u = r.unwrap();
        assert_eq!(u.files, 2);
        assert_eq!(u.unwrapped.as_deref(), Some("entry"));
        assert_eq!(std::fs::read(dest.path().join("sub/a.txt")).unwrap(), b"a");
        use std::os::unix::fs::PermissionsExt;
        let m = std::fs::metadata(dest.path().join("next.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(m & 0o777, 0o755);
    }

    #[test]
    fn zip_slip_is_refused() {
        for evil in ["../evil.txt", "/etc/evil", "a/../../evil"] {
            let z = zip_with(&[(evil, b"x")]);
            let (_d, r) = unpack_bytes("entry.zip", &z, Caps::default());
            // The zip crate may already refuse the name itself; either way, nothing is
            // written outside and the error names the member.
            let e = r.unwrap_err();
            assert!(
                matches!(
                    e,
                    UnpackError::PathEscapes { .. } | UnpackError::Unreadable { .. }
                ),
                "{evil}: {e}"
            );
        }
    }

    #[test]
    fn zip_bomb_stops_at_the_cap_whatever_the_header_says() {
        // 64 MiB of zeros compress to ~64 KiB.
        let zeros = vec![0u8; 64 << 20];
        let z = zip_with(&[("big.bin", &zeros)]);
        assert!(z.len() < 1 << 20);
        let caps = Caps {
            files: 10,
            bytes: 8 << 20,
        };
        let (dest, r) = unpack_bytes("entry.zip", &z, caps);
        assert!(matches!(r, Err(UnpackError::TooLarge { .. })), "{r:?}");
        let written = std::fs::metadata(dest.path().join("big.bin"))
            .unwrap()
            .len();
        assert!(written <= (8 << 20) + 1);
    }

    #[test]
    fn too_many_files() {
        let names: Vec<String> = (0..20).map(|i| format!("f{i}")).collect();
        let entries: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), &b"x"[..])).collect();
        let (_d, r) = unpack_bytes(
            "e.zip",
            &zip_with(&entries),
            Caps {
                files: 5,
                bytes: 1 << 20,
            },
        );
        assert_eq!(r, Err(UnpackError::TooManyFiles { cap: 5 }));
    }

    fn tar_gz(build: impl FnOnce(&mut tar::Builder<Vec<u8>>)) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        build(&mut b);
        let raw = b.into_inner().unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&raw).unwrap();
        gz.finish().unwrap()
    }

    #[test]
    fn tar_with_a_symlink_or_escape_is_refused() {
        let t = tar_gz(|b| {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(tar::EntryType::Symlink);
            h.set_size(0);
            b.append_link(&mut h, "labels", "/data/labels").unwrap();
        });
        let (_d, r) = unpack_bytes("entry.tar.gz", &t, Caps::default());
        assert_eq!(
            r,
            Err(UnpackError::Link {
                name: "labels".into()
            })
        );

        // `append_data` refuses '..', so write the name into the header by hand.
        let t = tar_gz(|b| {
            let mut h = tar::Header::new_old();
            h.as_old_mut().name[..9].copy_from_slice(b"../escape");
            h.set_size(1);
            h.set_entry_type(tar::EntryType::Regular);
            h.set_cksum();
            b.append(&h, &b"x"[..]).unwrap();
        });
        let (_d, r) = unpack_bytes("entry.tgz", &t, Caps::default());
        assert_eq!(
            r,
            Err(UnpackError::PathEscapes {
                name: "../escape".into()
            })
        );
    }

    #[test]
    fn tar_gz_unpacks() {
        let t = tar_gz(|b| {
            let mut h = tar::Header::new_gnu();
            h.set_size(3);
            h.set_mode(0o644);
            b.append_data(&mut h, "setup.sh", &b"abc"[..]).unwrap();
        });
        let (dest, r) = unpack_bytes("entry.tar.gz", &t, Caps::default());
        assert_eq!(r.unwrap().files, 1);
        assert_eq!(std::fs::read(dest.path().join("setup.sh")).unwrap(), b"abc");
    }

    #[test]
    fn folder_with_a_symlink_is_refused_and_unknown_kinds_named() {
        let src = tempfile::tempdir().unwrap();
        std::fs::write(src.path().join("a.py"), "x").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", src.path().join("p")).unwrap();
        let dest = tempfile::tempdir().unwrap();
        let e = unpack(src.path(), dest.path(), Caps::default()).unwrap_err();
        assert_eq!(e, UnpackError::Link { name: "p".into() });
        let (_d, r) = unpack_bytes("entry.rar", b"x", Caps::default());
        assert!(matches!(r, Err(UnpackError::UnknownKind(_))));
        let (_d, r) = unpack_bytes("entry.zip", b"not a zip", Caps::default());
        assert!(matches!(r, Err(UnpackError::Unreadable { .. })));
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..2048)) {
            for name in ["e.zip", "e.tar.gz", "e.tar"] {
                let _ = unpack_bytes(name, &bytes, Caps { files: 50, bytes: 1 << 20 });
            }
        }
    }
}
