//! Era runtimes: a Debian root file system of one release (`bullseye`, `bookworm`,
//! `trixie`), built by Debian's own `mmdebstrap` from the package mirror, with the
//! release's pinned base wheels (`runtime/<release>/requirements.lock`) installed in its
//! `/usr/local`. The sandbox shows its whole userland (`/usr`, `/lib`, `/bin`, `/etc`)
//! read-only as the entry's system, so the C library, the Python and any Debian package
//! all come from one release (docs/runtimes.md).
//!
//! On the host, the judge runs the release's Python (to ask the index and pip what an
//! entry needs) through the release's own dynamic linker and libraries: `bin/python` in
//! the runtime's folder is a small script that does so, so the rest of the judge treats
//! every runtime alike.
//!
//! Not here: choosing which runtime an entry gets (the judge), running entries (the
//! sandbox).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{RuntimeError, io, remove_dir_if_present, run};

/// A Debian release a runtime can be built from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Release {
    Bullseye,
    Bookworm,
    Trixie,
}

/// The Debian mirror used unless told otherwise.
pub const DEFAULT_MIRROR: &str = "http://deb.debian.org/debian";

/// What the root file system holds besides Debian's minimal base: the Python, the
/// certificates pip needs, and Debian's pip to install the locked wheels with (its own
/// copy is then shadowed by the locked pip in `/usr/local`).
const PACKAGES: &str = "python3,python3-pip,ca-certificates";

impl Release {
    /// Every release, oldest first.
    pub const ALL: [Release; 3] = [Release::Bullseye, Release::Bookworm, Release::Trixie];

    pub fn name(self) -> &'static str {
        match self {
            Release::Bullseye => "bullseye",
            Release::Bookworm => "bookworm",
            Release::Trixie => "trixie",
        }
    }

    /// By name (`bullseye`, …), or by Debian's version number (`11`, `12`, `13`).
    pub fn from_name(name: &str) -> Option<Release> {
        let n = name.trim().to_ascii_lowercase();
        Release::ALL
            .into_iter()
            .find(|r| r.name() == n || r.debian_version() == n)
    }

    /// Debian's version number.
    pub fn debian_version(self) -> &'static str {
        match self {
            Release::Bullseye => "11",
            Release::Bookworm => "12",
            Release::Trixie => "13",
        }
    }

    /// The release's CPython, major and minor.
    pub fn python(self) -> (u32, u32) {
        match self {
            Release::Bullseye => (3, 9),
            Release::Bookworm => (3, 11),
            Release::Trixie => (3, 13),
        }
    }

    /// The release whose CPython is `major.minor`, if any reachable one has it.
    pub fn for_python(version: (u32, u32)) -> Option<Release> {
        Release::ALL.into_iter().find(|r| r.python() == version)
    }

    /// The locked base wheels.
    pub fn lock(self) -> &'static str {
        match self {
            Release::Bullseye => include_str!("../../../runtime/bullseye/requirements.lock"),
            Release::Bookworm => include_str!("../../../runtime/bookworm/requirements.lock"),
            Release::Trixie => include_str!("../../../runtime/trixie/requirements.lock"),
        }
    }

    /// The Debian packages (`name=version`, one a line) of the release's last recorded
    /// build: a new build is compared with it.
    pub fn debian_lock(self) -> &'static str {
        match self {
            Release::Bullseye => include_str!("../../../runtime/bullseye/debian.lock"),
            Release::Bookworm => include_str!("../../../runtime/bookworm/debian.lock"),
            Release::Trixie => include_str!("../../../runtime/trixie/debian.lock"),
        }
    }

    /// Where the release's runtime lives unless told otherwise:
    /// `$PHYSIOJUDGE_RUNTIMES_DIR/<release>-<lock id>`, else `runtimes/` in
    /// [`crate::data_home`]. A new lock gets a new folder.
    pub fn default_dir(self) -> PathBuf {
        let base = std::env::var_os("PHYSIOJUDGE_RUNTIMES_DIR")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .unwrap_or_else(|| crate::data_home().join("runtimes"));
        base.join(format!(
            "{}-{:012x}",
            self.name(),
            crate::fnv1a(self.lock()) >> 16
        ))
    }
}

impl std::fmt::Display for Release {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (major, minor) = self.python();
        write!(
            f,
            "{} (Debian {}, CPython {major}.{minor})",
            self.name(),
            self.debian_version()
        )
    }
}

/// Where the root file system is in a release runtime's folder.
pub const ROOTFS: &str = "rootfs";

/// The host-side launcher: the release's own Python run by the release's own dynamic
/// linker with the release's libraries, so that it imports the release's standard
/// library and `/usr/local` packages (found from its path) and reports the release's C
/// library to pip.
fn launcher(built: &Path, root: &Path, release: Release) -> Result<String, RuntimeError> {
    // Resolved in the tree as built, named where it will be used.
    let linker = resolve_in(built, Path::new("/lib64/ld-linux-x86-64.so.2"))?;
    let linker = root.join(linker.strip_prefix(built).unwrap_or(&linker));
    let (major, minor) = release.python();
    let q = |p: &Path| format!("'{}'", p.display().to_string().replace('\'', r"'\''"));
    let libs = [
        root.join("lib/x86_64-linux-gnu"),
        root.join("usr/lib/x86_64-linux-gnu"),
    ]
    .iter()
    .map(|p| p.display().to_string())
    .collect::<Vec<_>>()
    .join(":");
    Ok(format!(
        "#!/bin/sh\n# The {name} runtime's CPython {major}.{minor}, run on the host with the \
         release's own linker and libraries (written by physiojudge runtime setup).\n\
         exec {linker} --library-path {libs} {python} \"$@\"\n",
        name = release.name(),
        linker = q(&linker),
        libs = q(Path::new(&libs)),
        python = q(&root.join(format!("usr/bin/python{major}.{minor}"))),
    ))
}

/// `path` (absolute, inside `root`) with its links followed inside `root`, as the root
/// file system itself would see it (an absolute link is taken from `root`, never from
/// the host's `/`).
pub fn resolve_in(root: &Path, path: &Path) -> Result<PathBuf, RuntimeError> {
    let mut cur = PathBuf::from("/");
    let mut todo: Vec<std::ffi::OsString> = path
        .components()
        .rev()
        .filter_map(|c| match c {
            std::path::Component::Normal(n) => Some(n.to_os_string()),
            _ => None,
        })
        .collect();
    let mut hops = 0;
    while let Some(part) = todo.pop() {
        if part == ".." {
            cur.pop();
            continue;
        }
        let next = cur.join(&part);
        let host = root.join(next.strip_prefix("/").unwrap_or(&next));
        match std::fs::read_link(&host) {
            Ok(target) => {
                hops += 1;
                if hops > 40 {
                    return Err(RuntimeError::Step {
                        step: "following links in the root file system".into(),
                        output: format!("too many links at {}", next.display()),
                    });
                }
                if target.is_absolute() {
                    cur = PathBuf::from("/");
                }
                for c in target.components().rev() {
                    match c {
                        std::path::Component::Normal(n) => todo.push(n.to_os_string()),
                        std::path::Component::ParentDir => todo.push("..".into()),
                        _ => {}
                    }
                }
            }
            Err(_) => cur = next,
        }
    }
    Ok(root.join(cur.strip_prefix("/").unwrap_or(&cur)))
}

/// Builds the `release` runtime in `dir` (or finds it built): `mmdebstrap` from
/// `mirror`, then the locked wheels installed inside it with its own pip (in a
/// `chroot`, with the host's name resolution for the download). Needs root, as
/// `mmdebstrap` and `chroot` do. Returns the runtime and the differences between the
/// Debian packages it got and the recorded `runtime/<release>/debian.lock` (empty when
/// the mirror gave exactly the recorded set).
pub fn setup_release(
    dir: &Path,
    release: Release,
    mirror: &str,
) -> Result<(crate::Runtime, Vec<String>), RuntimeError> {
    let parent = dir.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(io(parent))?;
    let lock_path = PathBuf::from(format!("{}.setup-lock", dir.display()));
    let lock_file = std::fs::File::create(&lock_path).map_err(io(&lock_path))?;
    let _guard = nix::fcntl::Flock::lock(lock_file, nix::fcntl::FlockArg::LockExclusive)
        .map_err(|(_, e)| io(&lock_path)(e.into()))?;
    if let Ok(r) = crate::Runtime::open_release(dir, release) {
        return Ok((r, Vec::new()));
    }
    let partial = PathBuf::from(format!("{}.partial", dir.display()));
    remove_dir_if_present(&partial)?;
    let root = partial.join(ROOTFS);
    std::fs::create_dir_all(&root).map_err(io(&root))?;
    run(
        &format!("mmdebstrap {} from {mirror}", release.name()),
        Command::new("mmdebstrap")
            .args(["--quiet", "--mode=root", "--variant=minbase"])
            .arg(format!("--include={PACKAGES}"))
            .arg(release.name())
            .arg(&root)
            .arg(mirror),
    )?;
    // Our root file system, not a system anyone manages with apt: pip may install into
    // it (PEP 668's marker would refuse).
    let (major, minor) = release.python();
    let marker = root.join(format!("usr/lib/python{major}.{minor}/EXTERNALLY-MANAGED"));
    if marker.exists() {
        std::fs::remove_file(&marker).map_err(io(&marker))?;
    }
    let lock_copy = root.join("runtime/requirements.lock");
    std::fs::create_dir_all(root.join("runtime/bin")).map_err(io(&root))?;
    std::fs::write(&lock_copy, release.lock()).map_err(io(&lock_copy))?;
    // The wheels come down on the host, through the release's own Python and Debian's
    // pip (the host's proxy and certificate settings apply), each checked against its
    // hash; the install inside the root file system is then offline.
    let early = partial.join("bin/python");
    std::fs::create_dir_all(partial.join("bin")).map_err(io(&partial))?;
    std::fs::write(&early, launcher(&root, &root, release)?).map_err(io(&early))?;
    std::fs::set_permissions(&early, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .map_err(io(&early))?;
    let wheels = root.join("tmp/wheels");
    run(
        "downloading the locked wheels",
        Command::new(&early)
            .args([
                "-m",
                "pip",
                "download",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(["--no-input", "--require-hashes", "--no-deps"])
            .args(["--only-binary", ":all:", "--dest"])
            .arg(&wheels)
            .arg("-r")
            .arg(&lock_copy),
    )?;
    run(
        "pip install of the locked wheels (in the root file system, offline)",
        Command::new("/usr/sbin/chroot")
            .arg(&root)
            .args(["/usr/bin/python3", "-m", "pip", "install", "--quiet"])
            .args([
                "--disable-pip-version-check",
                "--no-input",
                "--no-cache-dir",
            ])
            .args(["--no-index", "--find-links", "/tmp/wheels"])
            .args(["--require-hashes", "--no-deps", "--only-binary", ":all:"])
            // Into /usr/local beside Debian's own copies, never in place of them: trixie's
            // pip is Debian's, without the RECORD pip would need to remove it.
            .arg("--ignore-installed")
            .args(["-r", "/runtime/requirements.lock"])
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("LANG", "C.UTF-8"),
    )?;
    remove_dir_if_present(&wheels)?;
    // What the sandbox shows at /runtime: the same bin/ as the default runtime's.
    let python = format!("/usr/bin/python{major}.{minor}");
    for name in ["python", "python3", &format!("python{major}.{minor}")] {
        let link = root.join("runtime/bin").join(name);
        std::os::unix::fs::symlink(&python, &link).map_err(io(&link))?;
    }
    let pip = root.join("runtime/bin/pip");
    std::fs::write(&pip, format!("#!/bin/sh\nexec {python} -m pip \"$@\"\n")).map_err(io(&pip))?;
    std::fs::set_permissions(&pip, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .map_err(io(&pip))?;
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
    let differences = compare_lock(release.debian_lock(), &got);
    // The launcher names the final folder, where the runtime will be used.
    let bin = partial.join("bin");
    std::fs::create_dir_all(&bin).map_err(io(&bin))?;
    let script = bin.join("python");
    std::fs::write(&script, launcher(&root, &dir.join(ROOTFS), release)?).map_err(io(&script))?;
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .map_err(io(&script))?;
    let stamp = partial.join(crate::STAMP);
    std::fs::write(&stamp, release.lock()).map_err(io(&stamp))?;
    remove_dir_if_present(dir)?;
    std::fs::rename(&partial, dir).map_err(io(dir))?;
    let rt = crate::Runtime::open_release(dir, release)?;
    // The launcher must run the release's Python on this host.
    let said = run(
        "the release's Python on the host",
        Command::new(dir.join("bin/python")).args([
            "-I",
            "-c",
            "import sys, numpy; print(sys.version_info[:2])",
        ]),
    )?;
    if said.trim() != format!("({major}, {minor})") {
        return Err(RuntimeError::Step {
            step: "the release's Python on the host".into(),
            output: said,
        });
    }
    Ok((rt, differences))
}

/// `name=version` lines of `recorded` that `got` lacks or has at another version, and
/// packages `got` has that `recorded` lacks (nothing when nothing was recorded).
pub fn compare_lock(recorded: &str, got: &[&str]) -> Vec<String> {
    let want: std::collections::BTreeMap<&str, &str> = recorded
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.trim().split_once('='))
        .collect();
    if want.is_empty() {
        return Vec::new();
    }
    let have: std::collections::BTreeMap<&str, &str> =
        got.iter().filter_map(|l| l.split_once('=')).collect();
    let mut out = Vec::new();
    for (name, version) in &want {
        match have.get(name) {
            Some(v) if v == version => {}
            Some(v) => out.push(format!("{name}: recorded {version}, got {v}")),
            None => out.push(format!("{name}: recorded {version}, not installed")),
        }
    }
    for (name, version) in &have {
        if !want.contains_key(name) {
            out.push(format!("{name}: not recorded, got {version}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_by_name_number_and_python() {
        assert_eq!(Release::from_name("Bullseye"), Some(Release::Bullseye));
        assert_eq!(Release::from_name("13"), Some(Release::Trixie));
        assert_eq!(Release::from_name("buster"), None);
        assert_eq!(Release::for_python((3, 11)), Some(Release::Bookworm));
        assert_eq!(Release::for_python((3, 10)), None);
        assert_eq!(Release::for_python((3, 8)), None);
        assert_eq!(
            Release::Bullseye.to_string(),
            "bullseye (Debian 11, CPython 3.9)"
        );
    }

    #[test]
    fn every_release_lock_parses_and_pins_the_base_packages() {
        for r in Release::ALL {
            let lock = crate::Lock::parse(r.lock()).unwrap();
            for name in ["numpy", "scipy", "wfdb", "scikit-learn", "pip"] {
                assert!(lock.version_of(name).is_some(), "{r}: {name}");
            }
            assert!(r.default_dir().ends_with(format!(
                "{}-{:012x}",
                r.name(),
                crate::fnv1a(r.lock()) >> 16
            )));
        }
        let old = crate::Lock::parse(Release::Bullseye.lock()).unwrap();
        assert_eq!(old.version_of("numpy"), Some("2.0.2"));
    }

    #[test]
    fn links_are_followed_inside_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("usr/lib/x86_64-linux-gnu")).unwrap();
        std::fs::write(root.join("usr/lib/x86_64-linux-gnu/ld-2.31.so"), b"").unwrap();
        std::os::unix::fs::symlink("usr/lib", root.join("lib")).unwrap();
        std::fs::create_dir(root.join("lib64")).unwrap();
        std::os::unix::fs::symlink(
            "/lib/x86_64-linux-gnu/ld-2.31.so",
            root.join("lib64/ld-linux-x86-64.so.2"),
        )
        .unwrap();
        let got = resolve_in(root, Path::new("/lib64/ld-linux-x86-64.so.2")).unwrap();
        assert_eq!(got, root.join("usr/lib/x86_64-linux-gnu/ld-2.31.so"));
        std::os::unix::fs::symlink("loop", root.join("loop")).unwrap();
        assert!(resolve_in(root, Path::new("/loop")).is_err());
    }

    #[test]
    fn package_differences_are_named() {
        assert!(compare_lock("", &["a=1"]).is_empty());
        let d = compare_lock("# x\na=1\nb=2\n", &["a=1", "b=3", "c=1"]);
        assert_eq!(
            d,
            ["b: recorded 2, got 3", "c: not recorded, got 1"].map(String::from)
        );
    }
}
