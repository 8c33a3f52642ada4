//! Arbitrary bytes unpacked as a `.zip`, a `.tar` and a `.tar.gz` into a temporary folder
//! (docs/judge.md, prep): never a panic; what unpacks is regular files and folders only,
//! within the caps and the bytes counted; every refusal is a short message without
//! control characters, and leaves nothing written; and at most 32 MiB is ever allocated
//! at once, whatever the archive declares (the allocator refuses past it, which aborts
//! the run: libFuzzer reports it).
//! The unpacker needs about 1 MiB; the review's 261 KB archive took 1.6 GB.
#![no_main]

use std::path::Path;
use std::time::Duration;

use cap::Cap;
use judge::unpack::{Caps, UnpackError, unpack};
use libfuzzer_sys::fuzz_target;

#[global_allocator]
static ALLOCATOR: Cap<std::alloc::System> = Cap::new(std::alloc::System, 32 << 20);

/// Entries under `dir`: how many, and the bytes of the files. Panics on anything but a
/// folder or a regular file.
fn walk(dir: &Path) -> (usize, u64) {
    let (mut n, mut bytes) = (0, 0);
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).expect("a folder we made") {
            let p = e.expect("an entry").path();
            let meta = std::fs::symlink_metadata(&p).expect("metadata");
            n += 1;
            if meta.is_dir() {
                todo.push(p);
            } else {
                assert!(meta.is_file(), "{}: neither a file nor a folder", p.display());
                bytes += meta.len();
            }
        }
    }
    (n, bytes)
}

fuzz_target!(|data: &[u8]| {
    // Small caps: the fuzzer should find what breaks them, not fill the disk.
    let caps = Caps {
        files: 64,
        bytes: 1 << 20,
        time: Duration::from_secs(10),
    };
    let src = tempfile::tempdir().expect("a temporary folder");
    for name in ["entry.zip", "entry.tar", "entry.tar.gz"] {
        let path = src.path().join(name);
        std::fs::write(&path, data).expect("the archive written");
        let dest = tempfile::tempdir().expect("a temporary folder");
        match unpack(&path, dest.path(), caps) {
            Ok(u) => {
                assert!(u.files <= caps.files && u.bytes <= caps.bytes, "{u:?}");
                let (n, bytes) = walk(dest.path());
                assert!(n <= u.files, "{n} entries, {u:?}");
                assert_eq!(bytes, u.bytes);
            }
            Err(e) => {
                let m = e.to_string();
                assert!(m.chars().count() <= 600, "{m}");
                assert!(!m.chars().any(char::is_control), "{m:?}");
                // An archive is checked whole before anything is written: a refusal
                // leaves nothing behind (but for running out of time, or the disk,
                // while writing after the check).
                if !matches!(e, UnpackError::TimeLimit { .. } | UnpackError::Io(_)) {
                    assert_eq!(walk(dest.path()), (0, 0), "{m}");
                }
            }
        }
    }
});
