//! Reading what an entry wrote, from the host, without trusting it: the sandbox's uid
//! owns those folders, so any name in them may be a symlink to a host file, a FIFO that
//! blocks a reader, or a file of any size. Only regular files are taken, opened without
//! following links, up to a cap.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// One output that was not taken, and why (for quiz diagnostics).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub name: String,
    pub why: String,
}

/// Reads a regular file without following a final symlink, refusing more than `cap`
/// bytes. `Ok(None)`: it does not exist.
pub fn read_capped(path: &Path, cap: u64) -> Result<Option<Vec<u8>>, String> {
    let f = match File::options()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(nix::libc::ELOOP) => {
            return Err("is a symbolic link".into());
        }
        Err(e) => return Err(e.to_string()),
    };
    let meta = f.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("is not a regular file".into());
    }
    let mut buf = Vec::new();
    f.take(cap + 1)
        .read_to_end(&mut buf)
        .map_err(|e| e.to_string())?;
    if buf.len() as u64 > cap {
        return Err(format!("is larger than {cap} bytes"));
    }
    Ok(Some(buf))
}

/// Copies the regular files at the top of `src` whose names pass `wanted` into `dest`
/// (a host folder the sandbox never sees), each up to `cap` bytes. Everything else is
/// reported, not copied.
pub fn collect(
    src: &Path,
    dest: &Path,
    cap: u64,
    wanted: impl Fn(&str) -> bool,
) -> Result<Vec<Skipped>, String> {
    let mut skipped = Vec::new();
    let entries = std::fs::read_dir(src).map_err(|e| format!("{}: {e}", src.display()))?;
    let mut names: Vec<String> = Vec::new();
    for e in entries {
        let e = e.map_err(|e| format!("{}: {e}", src.display()))?;
        match e.file_name().into_string() {
            Ok(n) => names.push(n),
            Err(n) => skipped.push(Skipped {
                name: n.to_string_lossy().into_owned(),
                why: "the name is not UTF-8".into(),
            }),
        }
    }
    names.sort();
    for name in names.into_iter().filter(|n| wanted(n)) {
        match read_capped(&src.join(&name), cap) {
            Ok(Some(bytes)) => {
                std::fs::write(dest.join(&name), bytes)
                    .map_err(|e| format!("{}: {e}", dest.display()))?;
            }
            Ok(None) => {}
            Err(why) => skipped.push(Skipped { name, why }),
        }
    }
    Ok(skipped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_fifos_and_large_files_are_not_taken() {
        let src = tempfile::tempdir().unwrap();
        let dest = tempfile::tempdir().unwrap();
        std::fs::write(src.path().join("a.json"), "{}").unwrap();
        std::fs::write(src.path().join("big.json"), vec![b' '; 100]).unwrap();
        std::fs::write(src.path().join("other.txt"), "x").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", src.path().join("b.json")).unwrap();
        nix::unistd::mkfifo(&src.path().join("c.json"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        std::fs::create_dir(src.path().join("d.json")).unwrap();
        let skipped = collect(src.path(), dest.path(), 50, |n| n.ends_with(".json")).unwrap();
        let names: Vec<&str> = skipped.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            ["b.json", "big.json", "c.json", "d.json"],
            "{skipped:?}"
        );
        assert_eq!(skipped[0].why, "is a symbolic link");
        let taken: Vec<_> = std::fs::read_dir(dest.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(taken, ["a.json"]);
        assert_eq!(read_capped(&src.path().join("none"), 10), Ok(None));
    }
}
