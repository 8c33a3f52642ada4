//! The Python runtime that entries run with: a virtual environment with numpy, scipy,
//! wfdb and scikit-learn at the exact versions (and wheel hashes) of
//! `runtime/requirements.lock`, built once per machine from PyPI and shown read-only to
//! every sandbox at [`MOUNT_POINT`].
//!
//! Built from the system's interpreter (`/usr/bin/python3`), because the sandbox shows
//! only the system directories: an interpreter under `/root` or `/home` (pyenv, conda)
//! would not exist inside it. A runtime is complete only once its stamp (a copy of the
//! lock) is written, after every wheel installed and `pip check` passed; until then it
//! lives under a temporary name, so a half-built runtime is never used.
//!
//! Not here: running entries (the `sandbox` crate), or what an entry asks for beyond the
//! runtime (the judge's `pyenv` resolves it with this runtime's own pip and installs it
//! into an environment of the entry's own, shown in front of the runtime).

use std::path::{Path, PathBuf};
use std::process::Command;

mod release;
pub use release::{DEFAULT_MIRROR, ROOTFS, Release, compare_lock, resolve_in, setup_release};

/// The pinned requirements, embedded so that the binary works from anywhere.
pub const LOCK: &str = include_str!("../../../runtime/requirements.lock");

/// Where the sandbox shows the runtime.
pub const MOUNT_POINT: &str = "/runtime";

/// The interpreter the runtime is built from unless told otherwise.
pub const DEFAULT_PYTHON: &str = "/usr/bin/python3";

/// The Python version the locked wheels are built for.
pub const PYTHON_VERSION: (u32, u32) = (3, 11);

/// The file that marks a runtime complete: a copy of the lock it was built from.
pub(crate) const STAMP: &str = "physiojudge-runtime.lock";

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{python}: {message}")]
    Python { python: PathBuf, message: String },
    #[error("{step} failed:\n{output}")]
    Step { step: String, output: String },
    #[error(
        "no Python runtime in {dir}: {why}; run `physiojudge runtime setup` (it installs \
         numpy, scipy, wfdb and scikit-learn from PyPI once)"
    )]
    NotSetUp { dir: PathBuf, why: String },
    #[error("runtime/requirements.lock line {line}: {message}")]
    Lock { line: usize, message: String },
}

pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> RuntimeError + '_ {
    move |source| RuntimeError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// One pinned package of the lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    /// As written in the lock (compare with [`normalise`]).
    pub name: String,
    pub version: String,
}

/// The parsed lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lock {
    pub pins: Vec<Pin>,
}

impl Lock {
    /// Reads `name==version --hash=sha256:…` lines (comments and blank lines skipped).
    pub fn parse(text: &str) -> Result<Lock, RuntimeError> {
        let mut pins = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let err = |message: &str| RuntimeError::Lock {
                line: i + 1,
                message: message.to_string(),
            };
            let mut words = line.split_whitespace();
            let pin = words.next().unwrap_or_default();
            let (name, version) = pin
                .split_once("==")
                .ok_or_else(|| err("expected name==version"))?;
            if name.is_empty() || version.is_empty() {
                return Err(err("expected name==version"));
            }
            if !words.any(|w| w.starts_with("--hash=sha256:")) {
                return Err(err("every pin needs its --hash=sha256:"));
            }
            pins.push(Pin {
                name: name.to_string(),
                version: version.to_string(),
            });
        }
        Ok(Lock { pins })
    }

    /// The embedded lock.
    pub fn embedded() -> Lock {
        Lock::parse(LOCK).expect("the embedded lock is checked by a test")
    }

    /// The pinned version of a package, by its normalised name.
    pub fn version_of(&self, name: &str) -> Option<&str> {
        let want = normalise(name);
        self.pins
            .iter()
            .find(|p| normalise(&p.name) == want)
            .map(|p| p.version.as_str())
    }
}

/// A package name as PyPI compares them (PEP 503): lower case, runs of `-_.` as one `-`.
pub fn normalise(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// 64-bit FNV-1a: a stable name for a lock's runtime directory (not for security; the
/// stamp holds the whole lock and is compared in full).
pub(crate) fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// physiojudge's own data folder, where it keeps what outlives a command (the runtime,
/// the default output folders of `demo` and `evaluate`): `$XDG_DATA_HOME/physiojudge`,
/// else `~/.local/share/physiojudge` (an empty or relative `XDG_DATA_HOME` is ignored, as
/// the XDG base directory specification says), else `/var/lib/physiojudge`.
pub fn data_home() -> PathBuf {
    let absolute = |v: std::ffi::OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    std::env::var_os("XDG_DATA_HOME")
        .and_then(absolute)
        .or_else(|| {
            std::env::var_os("HOME")
                .and_then(absolute)
                .map(|h| h.join(".local/share"))
        })
        .unwrap_or_else(|| PathBuf::from("/var/lib"))
        .join("physiojudge")
}

/// Where the runtime lives unless told otherwise: `$PHYSIOJUDGE_RUNTIME_DIR`, else
/// `runtime-<lock id>` in [`data_home`]. A new lock gets a new directory, so a judge
/// never runs an entry with half-updated packages.
pub fn default_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("PHYSIOJUDGE_RUNTIME_DIR") {
        return PathBuf::from(d);
    }
    data_home().join(format!("runtime-{:012x}", fnv1a(LOCK) >> 16))
}

/// A complete runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Runtime {
    dir: PathBuf,
    /// `None`: the default runtime (a virtual environment of the host's Python, shown
    /// with the host's system directories); else a release's root file system.
    release: Option<Release>,
}

impl Runtime {
    /// The runtime in `dir`, if it is complete and built from the embedded lock.
    pub fn open(dir: &Path) -> Result<Runtime, RuntimeError> {
        let not = |why: &str| RuntimeError::NotSetUp {
            dir: dir.to_path_buf(),
            why: why.to_string(),
        };
        match std::fs::read_to_string(dir.join(STAMP)) {
            Ok(stamp) if stamp == LOCK => {}
            Ok(_) => return Err(not("it was built from another lock")),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(not("it is not set up"));
            }
            Err(e) => return Err(io(&dir.join(STAMP))(e)),
        }
        if !dir.join("bin/python").exists() {
            return Err(not("bin/python is missing"));
        }
        Ok(Runtime {
            dir: dir.to_path_buf(),
            release: None,
        })
    }

    /// The `release` runtime in `dir`, if it is complete and built from its embedded
    /// lock.
    pub fn open_release(dir: &Path, release: Release) -> Result<Runtime, RuntimeError> {
        let not = |why: &str| RuntimeError::NotSetUp {
            dir: dir.to_path_buf(),
            why: format!(
                "{why} (build it with `physiojudge runtime setup --release {}`)",
                release.name()
            ),
        };
        match std::fs::read_to_string(dir.join(STAMP)) {
            Ok(stamp) if stamp == release.lock() => {}
            Ok(_) => return Err(not("it was built from another lock")),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(not("it is not set up"));
            }
            Err(e) => return Err(io(&dir.join(STAMP))(e)),
        }
        for need in ["bin/python", "rootfs/runtime/bin/python", "rootfs/usr/bin"] {
            if std::fs::symlink_metadata(dir.join(need)).is_err() {
                return Err(not(&format!("{need} is missing")));
            }
        }
        Ok(Runtime {
            dir: dir.to_path_buf(),
            release: Some(release),
        })
    }

    /// The release's runtime in its default folder ([`Release::default_dir`]).
    pub fn find(release: Release) -> Result<Runtime, RuntimeError> {
        Runtime::open_release(&release.default_dir(), release)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The Debian release of a release runtime; `None` for the default runtime.
    pub fn release(&self) -> Option<Release> {
        self.release
    }

    /// `default` or the release's name: what `result.json` and prep.log call it.
    pub fn name(&self) -> &'static str {
        self.release.map_or("default", Release::name)
    }

    /// Its CPython, major and minor.
    pub fn python_version(&self) -> (u32, u32) {
        self.release.map_or(PYTHON_VERSION, Release::python)
    }

    /// The lock of its base wheels.
    pub fn lock(&self) -> &'static str {
        self.release.map_or(LOCK, Release::lock)
    }

    /// The root file system whose system directories and `/etc` a sandbox shows for a
    /// release runtime (`None`: the host's).
    pub fn system_root(&self) -> Option<PathBuf> {
        self.release.map(|_| self.dir.join(ROOTFS))
    }

    /// The read-only bind that shows the runtime in a sandbox.
    pub fn bind(&self) -> sandbox::Bind {
        let src = match self.release {
            Some(_) => self.dir.join(ROOTFS).join("runtime"),
            None => self.dir.clone(),
        };
        sandbox::Bind {
            src,
            dst: PathBuf::from(MOUNT_POINT),
            writable: false,
        }
    }

    /// What a sandbox run of a Python entry is shown: the runtime, and the host's
    /// fontconfig setup (`/etc/fonts`, read-only, where the host has one) so that
    /// matplotlib and anything else drawing text finds its fonts instead of printing
    /// "Fontconfig error: Cannot load default config file" in every log (the font cache
    /// goes to the run's writable `$HOME`).
    pub fn binds(&self) -> Vec<sandbox::Bind> {
        let mut binds = vec![self.bind()];
        if self.release.is_some() {
            // The release's own /etc (its fonts included) comes with its root.
            return binds;
        }
        let fonts = Path::new("/etc/fonts");
        if fonts.is_dir() {
            binds.push(sandbox::Bind {
                src: fonts.to_path_buf(),
                dst: fonts.to_path_buf(),
                writable: false,
            });
        }
        binds
    }

    /// The interpreter as the sandbox sees it.
    pub fn python_in_sandbox() -> PathBuf {
        Path::new(MOUNT_POINT).join("bin/python")
    }

    /// The sandbox's PATH with the runtime first (`python`, `python3`, `pip` are its own).
    pub fn sandbox_path() -> String {
        format!("{MOUNT_POINT}/bin:/usr/local/bin:/usr/bin:/bin")
    }
}

/// Runs a command, turning a failure into an error that shows its output.
pub(crate) fn run(step: &str, cmd: &mut Command) -> Result<String, RuntimeError> {
    let out = cmd.output().map_err(|e| RuntimeError::Step {
        step: step.to_string(),
        output: e.to_string(),
    })?;
    if !out.status.success() {
        let mut output = String::from_utf8_lossy(&out.stdout).into_owned();
        output.push_str(&String::from_utf8_lossy(&out.stderr));
        // pip's reason is at the end; keep the last 40 lines.
        let lines: Vec<&str> = output.lines().collect();
        let tail = lines[lines.len().saturating_sub(40)..].join("\n");
        return Err(RuntimeError::Step {
            step: format!("{step} ({})", out.status),
            output: tail,
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Checks that `python` is a CPython of the locked version that the sandbox can see.
pub fn check_python(python: &Path) -> Result<(), RuntimeError> {
    let err = |message: String| RuntimeError::Python {
        python: python.to_path_buf(),
        message,
    };
    let out = run(
        &format!("{} --version check", python.display()),
        Command::new(python).args([
            "-I",
            "-c",
            "import sys, platform; print(sys.version_info[0], sys.version_info[1], \
             platform.python_implementation()); print(sys.base_prefix)",
        ]),
    )?;
    let mut lines = out.lines();
    let version: Vec<&str> = lines.next().unwrap_or("").split_whitespace().collect();
    let prefix = lines.next().unwrap_or("").trim();
    let (major, minor) = PYTHON_VERSION;
    if version != [major.to_string(), minor.to_string(), "CPython".into()] {
        return Err(err(format!(
            "is {}, but the locked wheels are for CPython {major}.{minor}",
            version.join(" ")
        )));
    }
    // The interpreter must live in a directory every sandbox shows.
    if !sandbox::run::SYSTEM_DIRS
        .iter()
        .any(|d| Path::new(prefix).starts_with(d))
    {
        return Err(err(format!(
            "lives under {prefix}, which the sandbox does not show; build the runtime from \
             the system's interpreter (--python {DEFAULT_PYTHON})"
        )));
    }
    Ok(())
}

/// Builds the runtime in `dir` from `python` (or finds it built already). Downloads the
/// locked wheels from PyPI (pip's cache is used). Safe to run concurrently: the second
/// caller waits for the first and finds its runtime.
pub fn setup(dir: &Path, python: &Path) -> Result<Runtime, RuntimeError> {
    let parent = dir.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(io(parent))?;
    let lock_path = PathBuf::from(format!("{}.setup-lock", dir.display()));
    let lock_file = std::fs::File::create(&lock_path).map_err(io(&lock_path))?;
    let _guard = nix::fcntl::Flock::lock(lock_file, nix::fcntl::FlockArg::LockExclusive)
        .map_err(|(_, e)| io(&lock_path)(e.into()))?;
    if let Ok(r) = Runtime::open(dir) {
        return Ok(r);
    }
    check_python(python)?;
    let partial = PathBuf::from(format!("{}.partial", dir.display()));
    remove_dir_if_present(&partial)?;
    run(
        "creating the virtual environment",
        Command::new(python).arg("-m").arg("venv").arg(&partial),
    )?;
    let lock_copy = partial.join("requirements.lock");
    std::fs::write(&lock_copy, LOCK).map_err(io(&lock_copy))?;
    let venv_python = partial.join("bin/python");
    run(
        "pip install of the locked wheels",
        Command::new(&venv_python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(["--no-input", "--require-hashes", "--no-deps"])
            .args(["--only-binary", ":all:", "-r"])
            .arg(&lock_copy),
    )?;
    run(
        "pip check",
        Command::new(&venv_python).args(["-m", "pip", "check", "--disable-pip-version-check"]),
    )?;
    let stamp = partial.join(STAMP);
    std::fs::write(&stamp, LOCK).map_err(io(&stamp))?;
    remove_dir_if_present(dir)?;
    std::fs::rename(&partial, dir).map_err(io(dir))?;
    Runtime::open(dir)
}

pub(crate) fn remove_dir_if_present(dir: &Path) -> Result<(), RuntimeError> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io(dir)(e)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_lock_pins_the_four_packages_with_hashes() {
        let lock = Lock::parse(LOCK).unwrap();
        for (name, version) in [
            ("numpy", "2.4.6"),
            ("scipy", "1.17.1"),
            ("wfdb", "4.3.1"),
            ("scikit-learn", "1.9.1"),
        ] {
            assert_eq!(lock.version_of(name), Some(version), "{name}");
        }
        assert_eq!(lock.version_of("Scikit_Learn"), Some("1.9.1"));
        assert_eq!(lock.version_of("tensorflow"), None);
    }

    #[test]
    fn lock_lines_without_version_or_hash_are_errors_with_their_line() {
        let e = Lock::parse("# c\nnumpy\n").unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("name==version"), "{e}");
        let e = Lock::parse("numpy==2.4.6\n").unwrap_err().to_string();
        assert!(e.contains("line 1") && e.contains("--hash"), "{e}");
        assert!(Lock::parse("\n# only comments\n").unwrap().pins.is_empty());
    }

    #[test]
    fn names_are_normalised_like_pypi() {
        assert_eq!(normalise("Scikit_Learn"), "scikit-learn");
        assert_eq!(normalise("zope.interface"), "zope-interface");
        assert_eq!(normalise("a-_.b"), "a-b");
    }

    #[test]
    fn default_dir_depends_on_the_lock() {
        assert_ne!(fnv1a(LOCK), fnv1a("numpy==1 --hash=sha256:0"));
        assert_eq!(fnv1a(""), 0xcbf2_9ce4_8422_2325);
    }

    #[test]
    fn an_unset_directory_says_how_to_set_it_up() {
        let dir = tempfile::tempdir().unwrap();
        let e = Runtime::open(dir.path()).unwrap_err().to_string();
        assert!(e.contains("physiojudge runtime setup"), "{e}");
        std::fs::write(dir.path().join(STAMP), "other").unwrap();
        let e = Runtime::open(dir.path()).unwrap_err().to_string();
        assert!(e.contains("another lock"), "{e}");
    }

    #[test]
    fn an_interpreter_the_sandbox_cannot_see_is_refused() {
        // A fake "python" under a temporary directory reporting its own prefix.
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("python");
        std::fs::write(
            &fake,
            format!(
                "#!/bin/sh\necho 3 11 CPython\necho {}\n",
                dir.path().display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let e = check_python(&fake).unwrap_err().to_string();
        assert!(e.contains("does not show"), "{e}");
        std::fs::write(&fake, "#!/bin/sh\necho 3 12 CPython\necho /usr\n").unwrap();
        let e = check_python(&fake).unwrap_err().to_string();
        assert!(e.contains("CPython 3.11"), "{e}");
    }
}
