//! Compiled Python (`.pyc`) shipped instead of source, as the BCI contest let teams do
//! for `AlgorithmImplement`: such a file runs only on the Python version that wrote it,
//! which its first two bytes (the "magic number", little-endian, then `\r\n`) tell.

use std::path::Path;

/// The magic numbers of released CPython versions (the last of each version's range is
/// what its final release writes; earlier numbers of a range are its pre-releases).
const MAGIC: [(u16, u16, &str); 11] = [
    (3320, 3351, "3.5"),
    (3360, 3379, "3.6"),
    (3390, 3394, "3.7"),
    (3400, 3413, "3.8"),
    (3420, 3425, "3.9"),
    (3430, 3439, "3.10"),
    (3450, 3495, "3.11"),
    (3500, 3531, "3.12"),
    (3550, 3571, "3.13"),
    (3600, 3699, "3.14"),
    (62211, 62211, "2.7"),
];

/// The Python version a magic number belongs to, if it is a known one.
pub fn version_of(magic: u16) -> Option<&'static str> {
    MAGIC
        .iter()
        .find(|(lo, hi, _)| (*lo..=*hi).contains(&magic))
        .map(|(_, _, v)| *v)
}

/// The magic number the runtime's interpreter (CPython `major.minor`) writes and loads.
pub fn runtime_magic((major, minor): (u32, u32)) -> Option<u16> {
    let v = format!("{major}.{minor}");
    MAGIC.iter().find(|(_, _, n)| *n == v).map(|(_, hi, _)| *hi)
}

/// Why a `.pyc` file (its first bytes `head`) cannot run on the runtime, if it cannot.
pub fn problem(name: &str, head: &[u8], runtime: (u32, u32)) -> Option<String> {
    let (major, minor) = runtime;
    let want = runtime_magic(runtime);
    if head.len() < 4 || head[2..4] != *b"\r\n" {
        return Some(format!("{name} is not a compiled Python file"));
    }
    let magic = u16::from_le_bytes([head[0], head[1]]);
    if Some(magic) == want {
        return None;
    }
    let theirs = match version_of(magic) {
        Some(v) => format!("Python {v}"),
        None => "an unknown Python version".to_string(),
    };
    Some(format!(
        "{name} was compiled by {theirs} (magic number {magic}), but the runtime is \
         Python {major}.{minor} (magic number {}): compile it with Python {major}.{minor} \
         (python{major}.{minor} -m py_compile), or ship the .py source",
        want.map_or("unknown".into(), |m| m.to_string())
    ))
}

/// Every `.pyc` file under `dir` (at most `cap` looked at) that cannot run on the runtime.
pub fn check_tree(dir: &Path, runtime: (u32, u32), cap: usize) -> Vec<String> {
    let mut problems = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    let mut seen = 0;
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            seen += 1;
            if seen > cap {
                return problems;
            }
            let path = e.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            // Python only loads a .pyc of __pycache__ written by its own version (the
            // name says which), so stray ones of another are harmless and not checked.
            if meta.is_dir() && e.file_name() != "__pycache__" {
                todo.push(path);
            } else if meta.is_file() && path.extension().is_some_and(|x| x == "pyc") {
                let mut head = [0u8; 4];
                let n = std::fs::File::open(&path)
                    .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
                    .unwrap_or(0);
                // The entry chose the name: escaped, like every text of its in a message.
                let name = super::parse::quote(
                    &path
                        .strip_prefix(dir)
                        .unwrap_or(&path)
                        .display()
                        .to_string(),
                );
                problems.extend(problem(&name, &head[..n], runtime));
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_numbers_name_their_versions() {
        assert_eq!(runtime_magic((3, 11)), Some(3495));
        assert_eq!(version_of(3413), Some("3.8"));
        assert_eq!(version_of(1), None);
        let ok = [0xa7, 0x0d, b'\r', b'\n'];
        assert_eq!(u16::from_le_bytes([0xa7, 0x0d]), 3495);
        assert_eq!(problem("a.pyc", &ok, (3, 11)), None);
        let p = problem(
            "a.pyc",
            &3413u16
                .to_le_bytes()
                .iter()
                .chain(b"\r\n")
                .copied()
                .collect::<Vec<_>>(),
            (3, 11),
        )
        .unwrap();
        assert!(p.contains("Python 3.8") && p.contains("Python 3.11"), "{p}");
        assert!(
            problem("a.pyc", b"abc", (3, 11))
                .unwrap()
                .contains("not a compiled")
        );
    }
}
