//! Unpacking an entry (a folder, `.zip`, `.tar.gz`/`.tgz` or `.tar`) into a fresh folder,
//! safely (docs/judge.md, stage prep): no path leaves the folder (`..`, absolute paths), no
//! links or devices, no member twice, and every size bounded — the files and folders
//! created, the bytes written (counted while writing; an archive declaring more is refused
//! before), each name and its nesting, a tar's extension records, the time taken — so what
//! the judge holds in memory while unpacking does not grow with the archive.
//!
//! Zips are read by `zip_reader`, tars by `tar_reader`, folders copied here, all through one
//! `Writer` that keeps the counts and makes every file and folder.
//!
//! An archive is read twice: first a check that writes nothing (every member's name,
//! kind, size and data are read and checked, the files and folders kept as a list of
//! names in memory, bounded by `Caps::files`), then, only if the check passed, the
//! unpack. So a refused archive costs its reading, never the disk: an archive of 480 MiB
//! of zeros whose last member escapes is refused having written nothing. Messages name
//! the archive by its file name only, never the folder it is kept in (on a server, a
//! path of its own).

mod tar_reader;
#[cfg(test)]
mod tests;
mod zip_reader;

use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant};

use tar_reader::unpack_tar;
use zip_reader::unpack_zip;

/// A member's whole path, in bytes. A large Python site-packages (54,518 files) has no
/// path over 167 bytes; 1,024 leaves room for a virtual environment's prefix and more, and
/// keeps every name the judge holds or quotes small.
pub const MAX_PATH_BYTES: usize = 1024;
/// One component of a path, in bytes: Linux's NAME_MAX, past which no file can be made.
pub const MAX_COMPONENT_BYTES: usize = 255;
/// Components of a path (the folders it nests in, and itself). That site-packages nests
/// 14 deep; 64 leaves room for anything real. The folders a path makes count against
/// `Caps::files`, so this cap bounds a name's shape, not the work.
pub const MAX_DEPTH: usize = 64;
/// A tar's PAX record (one member's, or global), in bytes. Real ones hold a few keys (a
/// path, times, owner names, some extended attributes): a few hundred bytes.
pub const MAX_PAX_BYTES: u64 = 64 << 10;
/// Characters of a name (or of a reason) an error message quotes before cutting it with
/// "…": enough to recognise a file, never a large message.
pub const SHOWN_CHARS: usize = 100;

/// Caps on what an entry may unpack to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// Files and folders: each member (a folder listed, a tar's PAX global record) and
    /// each folder made for a member's path counts once; each costs an inode and work.
    pub files: usize,
    /// Bytes written.
    pub bytes: u64,
    /// Wall time for the whole unpack, from the call: checked at every read of the
    /// archive and every chunk written; past it the entry is refused.
    pub time: Duration,
}

impl Default for Caps {
    fn default() -> Self {
        Caps {
            files: 10_000,
            bytes: 512 << 20,
            // An entry near both caps above (9,951 files and folders, 510 MiB) unpacked
            // in 11 s from a .tar.gz and 6 s from a .zip with a debug build on a 2-core
            // machine; a minute leaves room for a slow or busy disk, and stops an archive
            // built to be slow long before a stage cap would.
            time: Duration::from_secs(60),
        }
    }
}

/// Why an entry could not be unpacked: shown to the participant as is. Every name and
/// reason in it is as [`shown`] quotes it: short and free of control characters.
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
    #[error("{name}: a folder on its path is a file")]
    NotAFolder { name: String },
    /// A name too long, too deep or unusable.
    #[error("{name}: {why}")]
    BadName { name: String, why: String },
    /// `folder`: where most of them are (the deepest folder holding at least half of
    /// the members read), so that a participant sees what to leave out.
    #[error("more than {cap} files and folders{}", .folder.as_ref().map(|f| format!(" (most of them in {f})")).unwrap_or_default())]
    TooManyFiles { cap: usize, folder: Option<String> },
    #[error("unpacks to more than {cap} bytes (at {name})")]
    TooLarge { cap: u64, name: String },
    #[error("unpacking took longer than the {} s allowed", .limit.as_secs_f64())]
    TimeLimit { limit: Duration },
    #[error("{0}")]
    Io(String),
}

/// Where an entry came from and what it unpacked to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unpacked {
    /// Files and folders, as `Caps::files` counts them.
    pub files: usize,
    pub bytes: u64,
    /// The single top-level folder the archive wrapped everything in, if it did (its
    /// contents are taken as the entry), as [`shown`] quotes it.
    pub unwrapped: Option<String>,
}

/// `text` as a message may quote it: control characters (terminal escapes, line breaks)
/// and bidirectional-text overrides escaped as `\u{…}`, and cut with "…" after
/// [`SHOWN_CHARS`] characters of the result.
pub fn shown(text: &str) -> String {
    crate::shown::clip(text, SHOWN_CHARS)
}

/// The start of a name read only in part, quoted.
fn shown_start(head: &[u8]) -> String {
    let s = shown(&String::from_utf8_lossy(head));
    if s.ends_with('…') { s } else { s + "…" }
}

/// The archive's bytes, refused once the deadline has passed, so that wherever time goes
/// reading an archive (the tar crate skipping data, a decoder working through empty
/// blocks) the limit is checked. The error's kind is `TimedOut`, which nothing else
/// reading a regular file gives.
struct Timed<R> {
    inner: R,
    deadline: Option<Instant>,
}

impl<R: Read> Read for Timed<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "out of time"));
        }
        self.inner.read(buf)
    }
}

impl<R: Seek> Seek for Timed<R> {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.inner.seek(pos)
    }
}

struct Writer<'a> {
    dest: &'a Path,
    /// The archive, as messages name it.
    src: String,
    caps: Caps,
    /// None when `caps.time` reaches past what an `Instant` can hold.
    deadline: Option<Instant>,
    files: usize,
    bytes: u64,
    /// A folder known to exist (the last member's): members come grouped by folder, so
    /// most need no folder made or checked.
    made: PathBuf,
    buf: Vec<u8>,
    /// Members read under each folder (to 4 levels), to name the folder that holds
    /// most of them when there are too many.
    tally: std::collections::HashMap<PathBuf, usize>,
    /// Members tallied.
    tallied: usize,
    /// The check that writes nothing: each path made so far, and whether it is a
    /// folder, in place of the folder being unpacked to. `None` when writing.
    shadow: Option<std::collections::HashMap<PathBuf, bool>>,
}

impl Writer<'_> {
    fn unreadable(&self, why: impl std::fmt::Display) -> UnpackError {
        UnpackError::Unreadable {
            path: self.src.clone(),
            // Room for a quoted name and what is wrong with it.
            why: crate::shown::clip(&why.to_string(), 3 * SHOWN_CHARS),
        }
    }

    /// A failed read of the archive: out of time (see `Timed`), or a broken archive.
    fn broken(&self, e: io::Error) -> UnpackError {
        match e.kind() {
            io::ErrorKind::TimedOut => self.out_of_time(),
            io::ErrorKind::UnexpectedEof => self.unreadable("it ends early"),
            _ => self.unreadable(e),
        }
    }

    fn broken_at(&self, name: &str, e: io::Error) -> UnpackError {
        match e.kind() {
            io::ErrorKind::TimedOut => self.out_of_time(),
            io::ErrorKind::UnexpectedEof => self.unreadable(format!("{}: truncated", shown(name))),
            _ => self.unreadable(format!("{}: {e}", shown(name))),
        }
    }

    fn out_of_time(&self) -> UnpackError {
        UnpackError::TimeLimit {
            limit: self.caps.time,
        }
    }

    fn tick(&self) -> Result<(), UnpackError> {
        match self.deadline {
            Some(d) if Instant::now() >= d => Err(self.out_of_time()),
            _ => Ok(()),
        }
    }

    /// Counts `rel` (a member's safe path) under each folder it is in, to 4 levels.
    fn note(&mut self, rel: &Path) {
        self.tallied += 1;
        let mut folder = PathBuf::new();
        for c in rel.parent().into_iter().flat_map(Path::components).take(4) {
            folder.push(c);
            *self.tally.entry(folder.clone()).or_default() += 1;
        }
    }

    /// Too many files and folders, naming the deepest folder that holds at least half
    /// of the members read.
    fn too_many(&self) -> UnpackError {
        let folder = self
            .tally
            .iter()
            .filter(|&(_, &n)| n * 2 >= self.tallied && n > 0)
            .max_by_key(|&(f, &n)| (f.components().count(), n))
            .map(|(f, _)| shown(&format!("{}/", f.display())));
        UnpackError::TooManyFiles {
            cap: self.caps.files,
            folder,
        }
    }

    fn count(&mut self) -> Result<(), UnpackError> {
        if self.files >= self.caps.files {
            return Err(self.too_many());
        }
        self.files += 1;
        Ok(())
    }

    fn room(&self) -> u64 {
        self.caps.bytes - self.bytes
    }

    /// The safe relative path of an archive member (None for the entry's root), or why
    /// not.
    fn relative(&self, name: &str) -> Result<Option<PathBuf>, UnpackError> {
        let bad = |why: String| UnpackError::BadName {
            name: shown(name),
            why,
        };
        if name.len() > MAX_PATH_BYTES {
            let why = format!("a name of {} bytes (at most {MAX_PATH_BYTES})", name.len());
            return Err(bad(why));
        }
        if name.contains('\0') {
            return Err(bad("a name holding a NUL character".into()));
        }
        let mut rel = PathBuf::new();
        let mut depth = 0;
        for c in Path::new(name).components() {
            match c {
                Component::Normal(p) => {
                    if p.len() > MAX_COMPONENT_BYTES {
                        let why = format!(
                            "a name with a part of {} bytes (at most {MAX_COMPONENT_BYTES})",
                            p.len()
                        );
                        return Err(bad(why));
                    }
                    depth += 1;
                    if depth > MAX_DEPTH {
                        return Err(bad(format!("nested more than {MAX_DEPTH} deep")));
                    }
                    rel.push(p);
                }
                Component::CurDir => {}
                _ => return Err(UnpackError::PathEscapes { name: shown(name) }),
            }
        }
        Ok((!rel.as_os_str().is_empty()).then_some(rel))
    }

    /// Makes the folder `path` (its parent exists) if it is not there. An `implied`
    /// folder (made for a member's path, not listed itself) counts as a file, so at the
    /// cap it may not be made.
    fn make_folder(&mut self, path: &Path, name: &str, implied: bool) -> Result<Made, UnpackError> {
        let io = |e: io::Error| {
            UnpackError::Io(crate::shown::clip(&format!("{}: {e}", shown(name)), 300))
        };
        let is_dir = |path: &Path| match std::fs::symlink_metadata(path) {
            Ok(m) => Ok(Some(m.is_dir())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io(e)),
        };
        if let Some(shadow) = &self.shadow {
            return match shadow.get(path) {
                Some(true) => Ok(Made::Existing),
                Some(false) => Ok(Made::File),
                None if implied && self.files >= self.caps.files => Err(self.too_many()),
                None => Ok(Made::New),
            }
            .inspect(|m| {
                if let Made::New = m
                    && let Some(shadow) = &mut self.shadow
                {
                    shadow.insert(path.to_path_buf(), true);
                }
            });
        }
        if implied && self.files >= self.caps.files && is_dir(path)? != Some(true) {
            return Err(self.too_many());
        }
        match std::fs::create_dir(path) {
            Ok(()) => Ok(Made::New),
            // Only folders and regular files are made here, never a link, so this is one
            // of the two.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => match is_dir(path)? {
                Some(true) => Ok(Made::Existing),
                _ => Ok(Made::File),
            },
            Err(e) => Err(io(e)),
        }
    }

    /// Makes the folders on the way to `rel`, each made counting as a file.
    fn folders(&mut self, rel: &Path, name: &str) -> Result<(), UnpackError> {
        let Some(parent) = rel.parent() else {
            return Ok(());
        };
        if parent.as_os_str().is_empty() || parent == self.made {
            return Ok(());
        }
        let mut path = self.dest.to_path_buf();
        for c in parent.components() {
            path.push(c);
            match self.make_folder(&path, name, true)? {
                Made::New => self.files += 1,
                Made::Existing => {}
                Made::File => return Err(UnpackError::NotAFolder { name: shown(name) }),
            }
        }
        self.made = parent.to_path_buf();
        Ok(())
    }

    fn dir(&mut self, name: &str) -> Result<(), UnpackError> {
        self.tick()?;
        let rel = self.relative(name)?;
        if let Some(rel) = &rel {
            self.note(rel);
        }
        self.count()?;
        if let Some(rel) = rel {
            self.folders(&rel, name)?;
            // Listing a folder twice is harmless and allowed (each listing counts).
            if let Made::File = self.make_folder(&self.dest.join(&rel), name, false)? {
                return Err(UnpackError::Duplicate { name: shown(name) });
            }
        }
        Ok(())
    }

    /// Writes the member `name` from `data`, at most the bytes left under the cap, and
    /// says how many it wrote. `declared` is the size the archive gives, refused at once
    /// when over the cap (the caller checks it against what was written).
    fn file(
        &mut self,
        name: &str,
        executable: bool,
        declared: Option<u64>,
        data: &mut dyn Read,
    ) -> Result<u64, UnpackError> {
        self.tick()?;
        let Some(rel) = self.relative(name)? else {
            return Err(UnpackError::PathEscapes { name: shown(name) });
        };
        self.note(&rel);
        self.count()?;
        let room = self.room();
        let cap = self.caps.bytes;
        let too_large = || UnpackError::TooLarge {
            cap,
            name: shown(name),
        };
        if declared.is_some_and(|n| n > room) {
            return Err(too_large());
        }
        self.folders(&rel, name)?;
        let io = |e: io::Error| {
            UnpackError::Io(crate::shown::clip(&format!("{}: {e}", shown(name)), 300))
        };
        let path = self.dest.join(&rel);
        if let Some(shadow) = &mut self.shadow {
            if shadow.contains_key(&path) {
                return Err(UnpackError::Duplicate { name: shown(name) });
            }
            shadow.insert(path, false);
            // Read through, as the unpack will, and count: the data is checked (its
            // size, its CRC, what follows it) before anything is written.
            let mut n = 0u64;
            loop {
                self.tick()?;
                let got = match data.read(&mut self.buf) {
                    Ok(0) => break,
                    Ok(k) => k,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(self.broken_at(name, e)),
                };
                n += got as u64;
                if n > room {
                    return Err(too_large());
                }
            }
            self.bytes += n;
            return Ok(n);
        }
        // create_new: never write through something already there (a member listed
        // twice, however spelt, finds its first copy here).
        let mut out = match File::options()
            .write(true)
            .create_new(true)
            .custom_flags(nix::libc::O_NOFOLLOW)
            .open(&path)
        {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                return Err(UnpackError::Duplicate { name: shown(name) });
            }
            Err(e) => return Err(io(e)),
        };
        let mut n = 0u64;
        loop {
            self.tick()?;
            let got = match data.read(&mut self.buf) {
                Ok(0) => break,
                Ok(k) => k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.broken_at(name, e)),
            };
            n += got as u64;
            if n > room {
                return Err(too_large());
            }
            out.write_all(&self.buf[..got]).map_err(io)?;
        }
        self.bytes += n;
        let mode = if executable { 0o755 } else { 0o644 };
        out.set_permissions(std::fs::Permissions::from_mode(mode))
            .map_err(io)?;
        Ok(n)
    }
}

enum Made {
    New,
    Existing,
    File,
}

/// Unpacks `src` into `dest` (an existing empty folder).
pub fn unpack(src: &Path, dest: &Path, caps: Caps) -> Result<Unpacked, UnpackError> {
    // Messages name the archive by its file name: the folder it is kept in is the
    // server's business (and a participant knows their own file by its name).
    let shown_src = shown(
        &src.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "the entry".to_owned()),
    );
    let meta = std::fs::metadata(src).map_err(|e| UnpackError::Io(format!("{shown_src}: {e}")))?;
    let deadline = Instant::now().checked_add(caps.time);
    let writer = |shadow: bool| Writer {
        dest,
        src: shown_src.clone(),
        caps,
        deadline,
        files: 0,
        bytes: 0,
        made: PathBuf::new(),
        buf: vec![0; 64 << 10],
        tally: std::collections::HashMap::new(),
        tallied: 0,
        shadow: shadow.then(std::collections::HashMap::new),
    };
    let name = src
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_ascii_lowercase();
    let open = |w: &Writer| {
        File::open(src)
            .map(|inner| Timed { inner, deadline })
            .map_err(|e| w.unreadable(e))
    };
    let mut w = writer(false);
    if meta.is_dir() {
        copy_folder(src, Path::new(""), &mut w, 0)?;
    } else if name.ends_with(".zip") {
        // The check, then the unpack (see the module's notes).
        let mut check = writer(true);
        unpack_zip(open(&check)?, &mut check)?;
        drop(check);
        unpack_zip(open(&w)?, &mut w)?;
    } else if name.ends_with(".tar.gz") || name.ends_with(".tgz") || name.ends_with(".tar") {
        let tar = |w: &mut Writer| {
            let f = open(w)?;
            let reader: Box<dyn Read> = if name.ends_with(".tar") {
                Box::new(BufReader::new(f))
            } else {
                Box::new(flate2::read::GzDecoder::new(f))
            };
            unpack_tar(reader, w)
        };
        let mut check = writer(true);
        tar(&mut check)?;
        drop(check);
        tar(&mut w)?;
    } else {
        return Err(UnpackError::UnknownKind(shown_src));
    }
    let unwrapped = unwrap_single_folder(dest)?;
    Ok(Unpacked {
        files: w.files,
        bytes: w.bytes,
        unwrapped,
    })
}

/// Copies the folder `root/rel` and what it holds. `pending` is how many entries the
/// listings of its parents hold that are not copied yet: they will count, so a listing
/// that would take the count over the cap is refused as it is read, and the listings held
/// at once never hold more entries than the cap.
fn copy_folder(root: &Path, rel: &Path, w: &mut Writer, pending: usize) -> Result<(), UnpackError> {
    let dir = root.join(rel);
    let io = |e: io::Error| {
        UnpackError::Io(crate::shown::clip(
            &format!(
                "{}: {e}",
                shown(&Path::new(".").join(rel).display().to_string())
            ),
            300,
        ))
    };
    let mut entries = Vec::new();
    for e in std::fs::read_dir(&dir).map_err(io)? {
        w.tick()?;
        if w.files + pending + entries.len() >= w.caps.files {
            // The listing that overflows names its folder.
            return Err(UnpackError::TooManyFiles {
                cap: w.caps.files,
                folder: Some(shown(&format!(
                    "{}/",
                    Path::new(".")
                        .join(rel)
                        .display()
                        .to_string()
                        .trim_end_matches('/')
                ))),
            });
        }
        entries.push(e.map_err(io)?);
    }
    entries.sort_by_key(|e| e.file_name());
    let total = entries.len();
    for (i, e) in entries.into_iter().enumerate() {
        let child = rel.join(e.file_name());
        let name = child.display().to_string();
        let t = e.file_type().map_err(io)?;
        if t.is_dir() {
            w.dir(&name)?;
            copy_folder(root, &child, w, pending + total - i - 1)?;
        } else if t.is_file() {
            // Opened without following a link or blocking on a FIFO, and checked again
            // once open: the folder may change between the listing and the open.
            let mut f = File::options()
                .read(true)
                .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
                .open(root.join(&child))
                .map_err(|_| UnpackError::Link { name: shown(&name) })?;
            let meta = f.metadata().map_err(io)?;
            if !meta.is_file() {
                return Err(UnpackError::Link { name: shown(&name) });
            }
            let exec = meta.permissions().mode() & 0o111 != 0;
            w.file(&name, exec, None, &mut f)?;
        } else {
            return Err(UnpackError::Link { name: shown(&name) });
        }
    }
    Ok(())
}

/// An archive holding one folder and nothing else (`entry/setup.sh`, …) is taken to be
/// that folder's contents: a common way to pack, and unambiguous.
fn unwrap_single_folder(dest: &Path) -> Result<Option<String>, UnpackError> {
    // The folder unpacked to is named for what it is, not by its path on this machine.
    let io = |e: io::Error| UnpackError::Io(format!("the unpacked entry's folder: {e}"));
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
    let name = shown(&only.file_name().to_string_lossy());
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
