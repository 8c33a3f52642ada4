//! The Octave runtime: a Debian bookworm root file system with Debian's `octave`,
//! `octave-signal` and `octave-statistics` (and what they depend on), built by
//! `mmdebstrap`, as the era runtimes are (docs/runtimes.md). Its Debian packages are
//! written to `debian.lock` in its folder and compared with `runtime/octave/debian.lock`;
//! `result.json` carries the versions of the three.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{MatlabError, io, run};

/// The release the runtime is built from: Octave 7.3 (bookworm's).
const RELEASE: &str = "bookworm";

/// What the root file system holds besides Debian's minimal base.
pub const PACKAGES: &str = "octave,octave-signal,octave-statistics,ca-certificates";

/// The recorded packages of the last build.
const DEBIAN_LOCK: &str = include_str!("../../../runtime/octave/debian.lock");

/// Marks a runtime complete: the recipe it was built from.
const STAMP: &str = "physiojudge-runtime.lock";

const ROOTFS: &str = "rootfs";

/// What the runtime is built from: a new recipe gets a new folder.
fn recipe() -> String {
    format!("release={RELEASE}\npackages={PACKAGES}\n")
}

/// 64-bit FNV-1a, a stable folder name for a recipe (the stamp holds it in full).
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A complete Octave runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Octave {
    dir: PathBuf,
}

impl Octave {
    /// `$PHYSIOJUDGE_RUNTIMES_DIR/octave-<recipe id>`, else `runtimes/` in the data
    /// folder, beside the era runtimes.
    pub fn default_dir() -> PathBuf {
        let base = std::env::var_os("PHYSIOJUDGE_RUNTIMES_DIR")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .unwrap_or_else(|| runtime::data_home().join("runtimes"));
        base.join(format!("octave-{:012x}", fnv1a(&recipe()) >> 16))
    }

    /// The runtime in `dir`, if it is complete and built from today's recipe.
    pub fn open(dir: &Path) -> Result<Octave, MatlabError> {
        let not = |why: &str| MatlabError::NotSetUp {
            dir: dir.to_path_buf(),
            why: why.to_string(),
        };
        match std::fs::read_to_string(dir.join(STAMP)) {
            Ok(s) if s == recipe() => {}
            Ok(_) => return Err(not("it was built from another recipe")),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(not("it is not set up"));
            }
            Err(e) => return Err(io(&dir.join(STAMP))(e)),
        }
        if std::fs::symlink_metadata(dir.join(ROOTFS).join("usr/bin/octave-cli")).is_err() {
            return Err(not("rootfs/usr/bin/octave-cli is missing"));
        }
        Ok(Octave {
            dir: dir.to_path_buf(),
        })
    }

    /// The runtime in its default folder.
    pub fn find() -> Result<Octave, MatlabError> {
        Octave::open(&Octave::default_dir())
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The root file system a sandbox shows as the whole system.
    pub fn system_root(&self) -> PathBuf {
        self.dir.join(ROOTFS)
    }

    /// `octave`, `octave-signal`, `octave-statistics` and their Debian versions, as
    /// this runtime was built.
    pub fn versions(&self) -> Vec<(String, String)> {
        let text = std::fs::read_to_string(self.dir.join("debian.lock")).unwrap_or_default();
        let mut out = Vec::new();
        for want in ["octave", "octave-signal", "octave-statistics"] {
            if let Some((_, v)) = text
                .lines()
                .filter_map(|l| l.split_once('='))
                .find(|(n, _)| *n == want)
            {
                out.push((want.to_string(), v.to_string()));
            }
        }
        out
    }

    /// `octave 7.3.0-2, octave-signal 1.4.3-1, octave-statistics 1.5.3-2`.
    pub fn describe(&self) -> String {
        self.versions()
            .iter()
            .map(|(n, v)| format!("{n} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Builds the Octave runtime in `dir` (or finds it built): `mmdebstrap` of bookworm
/// with [`PACKAGES`] from `mirror`, then its package list. Needs root, as `mmdebstrap`
/// does. Concurrent setups wait for each other. Returns the runtime and how its
/// packages differ from `runtime/octave/debian.lock`.
pub fn setup(dir: &Path, mirror: &str) -> Result<(Octave, Vec<String>), MatlabError> {
    let parent = dir.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(io(parent))?;
    let lock_path = PathBuf::from(format!("{}.setup-lock", dir.display()));
    let lock_file = std::fs::File::create(&lock_path).map_err(io(&lock_path))?;
    let _guard = nix::fcntl::Flock::lock(lock_file, nix::fcntl::FlockArg::LockExclusive)
        .map_err(|(_, e)| io(&lock_path)(e.into()))?;
    if let Ok(o) = Octave::open(dir) {
        return Ok((o, Vec::new()));
    }
    let partial = PathBuf::from(format!("{}.partial", dir.display()));
    remove_dir_if_present(&partial)?;
    let root = partial.join(ROOTFS);
    std::fs::create_dir_all(&root).map_err(io(&root))?;
    run(
        &format!("mmdebstrap {RELEASE} with Octave from {mirror}"),
        Command::new("mmdebstrap")
            .args(["--quiet", "--mode=root", "--variant=minbase"])
            .arg(format!("--include={PACKAGES}"))
            .arg(RELEASE)
            .arg(&root)
            .arg(mirror),
    )?;
    // Octave must start inside its own root, with our runner's packages.
    let said = run(
        "Octave in the root file system",
        Command::new("/usr/sbin/chroot")
            .arg(&root)
            .args([
                "/usr/bin/octave-cli",
                "--no-gui",
                "--quiet",
                "--norc",
                "--eval",
                "warning('off', 'Octave:shadowed-function'); pkg load signal statistics; \
                 printf('%s\\n', version())",
            ])
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", "/tmp")
            .env("LANG", "C.UTF-8"),
    )?;
    if !said.trim().starts_with('7') {
        return Err(MatlabError::Step {
            step: "Octave in the root file system".into(),
            output: said,
        });
    }
    let packages = run(
        "listing the Debian packages",
        Command::new("/usr/sbin/chroot")
            .arg(&root)
            .args(["dpkg-query", "-W", "-f", "${Package}=${Version}\\n"])
            .env_clear()
            .env("PATH", "/usr/bin:/bin"),
    )?;
    let mut got: Vec<&str> = packages.lines().filter(|l| !l.is_empty()).collect();
    got.sort_unstable();
    let listed = partial.join("debian.lock");
    std::fs::write(&listed, got.join("\n") + "\n").map_err(io(&listed))?;
    let differences = runtime::compare_lock(DEBIAN_LOCK, &got);
    let stamp = partial.join(STAMP);
    std::fs::write(&stamp, recipe()).map_err(io(&stamp))?;
    remove_dir_if_present(dir)?;
    std::fs::rename(&partial, dir).map_err(io(dir))?;
    Ok((Octave::open(dir)?, differences))
}

fn remove_dir_if_present(dir: &Path) -> Result<(), MatlabError> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io(dir)(e)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorded_lock_has_the_three_packages() {
        for want in ["octave=7.", "octave-signal=", "octave-statistics="] {
            assert!(
                DEBIAN_LOCK.lines().any(|l| l.starts_with(want)),
                "runtime/octave/debian.lock lacks {want}"
            );
        }
    }

    #[test]
    fn an_unset_folder_says_how_to_set_it_up() {
        let d = tempfile::tempdir().unwrap();
        let e = Octave::open(d.path()).unwrap_err().to_string();
        assert!(e.contains("runtime setup --octave"), "{e}");
        std::fs::write(d.path().join(STAMP), "other").unwrap();
        let e = Octave::open(d.path()).unwrap_err().to_string();
        assert!(e.contains("another recipe"), "{e}");
        assert!(
            Octave::default_dir()
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("octave-")
        );
    }

    #[test]
    fn differences_are_named() {
        let d = runtime::compare_lock("# x\na=1\nb=2\n", &["a=1", "b=3", "c=1"]);
        assert_eq!(
            d,
            ["b: recorded 2, got 3", "c: not recorded, got 1"].map(String::from)
        );
    }
}
