//! The Debian packages of a 2017 `dependencies.txt` (the PhysioNet sandbox's stage 1),
//! installed for the entry from the chosen runtime's own release.
//!
//! The host's `apt` does the Debian part, pointed at the runtime's root file system:
//! its `sources.list` (the release and mirror it was built from), its dpkg status (what
//! is installed already), the host's archive keys (as `mmdebstrap` used them), and lists
//! and downloads in the judge's cache, never in the runtime. apt resolves the set
//! (`--simulate`, no recommends) and downloads each package checked against the
//! release's signed indexes. The packages are then unpacked (`dpkg-deb -x`, no
//! maintainer script runs: neither Debian's nor anyone's) over a copy of the runtime's
//! system made of hard links, and the release's `ldconfig` indexes the libraries. The
//! sandbox shows that copy as the entry's system (`RunConfig::system_root`).
//!
//! Cached like wheels: `debs/` holds every package file once, and
//! `debian/<key>/root` every system, `key` being the hash of the runtime's lock and the
//! resolved set (name, version, architecture), so a second entry with the same set pays
//! nothing. A name the release does not have is refused with the release and the
//! closest names it does have.
//!
//! Not here: reading `dependencies.txt` ([`super::parse::parse_debian`]), choosing the
//! runtime (an entry with Debian packages gets a release runtime), the sandbox.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant, SystemTime};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{EnvError, EnvSettings, hex, judge_err, run_host, tail};

/// One Debian package of an entry's system, as `result.json` names it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct DebianPackage {
    pub name: String,
    pub version: String,
    pub arch: String,
}

/// An entry's Debian packages, ready: the system root the sandbox shows.
#[derive(Debug, Clone)]
pub struct DebianSystem {
    pub key: String,
    /// Everything installed on top of the runtime (what was asked for and what it
    /// needs), by name.
    pub packages: Vec<DebianPackage>,
    /// `debian/<key>/root` in the cache.
    pub root: PathBuf,
    /// Found in the cache: nothing downloaded or unpacked.
    pub cached: bool,
}

/// The mark of a complete system (written last).
const COMPLETE: &str = "debian.json";

/// The top-level folders of a root file system the sandbox shows (its system
/// directories and `/etc`); nothing else of the runtime's root is copied.
const SHOWN: [&str; 8] = [
    "usr", "bin", "sbin", "lib", "lib64", "lib32", "libx32", "etc",
];

/// How old the release's package lists may be before they are fetched again.
const LISTS_MAX_AGE: Duration = Duration::from_secs(24 * 3600);

/// The apt settings that point the host's apt at a runtime's release and the judge's
/// cache (and at nothing of the host's but its archive keys and main config).
struct Apt {
    options: Vec<String>,
    /// `apt/<runtime>/` in the cache.
    state: PathBuf,
}

impl Apt {
    fn new(settings: &EnvSettings, rt: &runtime::Runtime) -> Result<Apt, EnvError> {
        let root = rt.dir().join(runtime::ROOTFS);
        let name = rt
            .dir()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| rt.name().to_string());
        let state = settings.cache.join("apt").join(name);
        for d in ["lists/partial", "archives/partial", "empty", "log"] {
            let p = state.join(d);
            std::fs::create_dir_all(&p).map_err(|e| judge_err(&p.display().to_string(), e))?;
        }
        let p = |x: &Path| x.display().to_string();
        let etc = root.join("etc/apt");
        let empty = state.join("empty");
        let options = [
            ("Dir::Etc::SourceList", p(&etc.join("sources.list"))),
            ("Dir::Etc::SourceParts", p(&etc.join("sources.list.d"))),
            // The host's configuration parts may add index targets or pins meant for
            // the host's own release.
            ("Dir::Etc::Parts", p(&empty)),
            ("Dir::Etc::Preferences", p(&empty.join("none"))),
            ("Dir::Etc::PreferencesParts", p(&empty)),
            ("Dir::State", p(&state)),
            ("Dir::State::Lists", p(&state.join("lists"))),
            ("Dir::State::status", p(&root.join("var/lib/dpkg/status"))),
            ("Dir::Cache", p(&state)),
            ("Dir::Cache::Archives", p(&state.join("archives"))),
            ("Dir::Log", p(&state.join("log"))),
            ("APT::Architecture", "amd64".into()),
            ("APT::Architectures", "amd64".into()),
            ("APT::Install-Recommends", "false".into()),
            ("APT::Install-Suggests", "false".into()),
            // The judge's own lock serialises its use of this state (the host's apt
            // locks are for the host's system).
            ("Debug::NoLocking", "true".into()),
            ("APT::Sandbox::User", "root".into()),
            ("Acquire::Languages", "none".into()),
        ]
        .into_iter()
        .flat_map(|(k, v)| ["-o".to_string(), format!("{k}={v}")])
        .collect();
        Ok(Apt { options, state })
    }

    fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.args(["-q"])
            .args(&self.options)
            .env("LANG", "C.UTF-8")
            .env("LC_ALL", "C.UTF-8")
            .env("DEBIAN_FRONTEND", "noninteractive");
        c
    }
}

/// Lines of `dependencies.txt` naming Debian packages: `(line, name)`.
pub type Wanted = [(usize, String)];

/// Resolves `wanted` in `rt`'s release and finds or builds the system that has them.
/// `file` names the entry's file in messages. `Ok(None)`: the runtime has every one
/// already. Refusals name the line, the release and the closest names.
pub fn prepare(
    settings: &EnvSettings,
    rt: &runtime::Runtime,
    file: &str,
    wanted: &Wanted,
    scratch: &Path,
    stop: Option<&AtomicBool>,
    log: &mut dyn FnMut(&str),
) -> Result<Option<DebianSystem>, EnvError> {
    let Some(release) = rt.release() else {
        return Err(EnvError::Refused(
            wanted
                .iter()
                .map(|(line, name)| {
                    format!(
                        "{file}: line {line}: {name}: Debian packages are installed only on a \
                         Debian release runtime (bullseye, bookworm, trixie), and this entry \
                         runs on {}",
                        rt.name()
                    )
                })
                .collect(),
        ));
    };
    if wanted.is_empty() {
        return Ok(None);
    }
    std::fs::create_dir_all(scratch).map_err(|e| judge_err("scratch folder", e))?;
    let apt = Apt::new(settings, rt)?;
    // One user of a release's apt state at a time, across this machine's evaluations.
    let lock_path = apt.state.with_extension("lock");
    let lock = std::fs::File::create(&lock_path).map_err(|e| judge_err("apt state lock", e))?;
    let _guard = nix::fcntl::Flock::lock(lock, nix::fcntl::FlockArg::LockExclusive)
        .map_err(|(_, e)| judge_err("apt state lock", e))?;
    update_lists(settings, &apt, release, scratch, stop, log)?;

    // 1. Every name must be a package of the release.
    let out = run_host(
        apt.command("apt-cache").arg("pkgnames"),
        &[],
        settings.step_timeout,
        scratch,
        stop,
    )
    .map_err(|e| judge_err("listing the release's packages", e))?;
    if !out.ok {
        return Err(EnvError::Judge(format!(
            "apt-cache pkgnames failed:\n{}",
            tail(&out.stderr, 10)
        )));
    }
    let known: std::collections::BTreeSet<&str> = out.stdout.lines().map(str::trim).collect();
    let release_name = format!("Debian {} ({})", release.debian_version(), release.name());
    let unknown: Vec<String> = wanted
        .iter()
        .filter(|(_, n)| !known.contains(n.as_str()))
        .map(|(line, name)| {
            let near = closest(name, known.iter().copied(), 3);
            let near = match near.is_empty() {
                true => "no name there is close".to_string(),
                false => format!("the closest names there: {}", near.join(", ")),
            };
            format!(
                "{file}: line {line}: {name} is not a package of {release_name}, the release \
                 of this entry's runtime; {near}"
            )
        })
        .collect();
    if !unknown.is_empty() {
        return Err(EnvError::Refused(unknown));
    }

    // 2. apt resolves the set against what the runtime has installed.
    let t = Instant::now();
    let names: Vec<&str> = wanted.iter().map(|(_, n)| n.as_str()).collect();
    let out = run_host(
        apt.command("apt-get")
            .args(["install", "--simulate", "--no-install-recommends"])
            .args(&names),
        &[],
        settings.step_timeout,
        scratch,
        stop,
    )
    .map_err(|e| judge_err("apt's resolution", e))?;
    if !out.ok {
        let said: Vec<&str> = out
            .stdout
            .lines()
            .chain(out.stderr.lines())
            .filter(|l| {
                let l = l.trim_start();
                !(l.is_empty()
                    || l.starts_with("Reading ")
                    || l.starts_with("Building ")
                    || l.starts_with("NOTE:"))
            })
            .collect();
        return Err(EnvError::Refused(vec![format!(
            "{file}: apt cannot install {} from {release_name}:\n{}",
            names.join(", "),
            said[said.len().saturating_sub(20)..].join("\n")
        )]));
    }
    let mut packages = simulated(&out.stdout);
    packages.sort();
    let already: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| !packages.iter().any(|p| p.name == *n))
        .collect();
    if !already.is_empty() {
        log(&format!(
            "{file}: already in the {} runtime: {}",
            release.name(),
            already.join(", ")
        ));
    }
    if packages.is_empty() {
        return Ok(None);
    }
    log(&format!(
        "apt resolved {file} in {release_name} in {:.1} s: to install {}",
        t.elapsed().as_secs_f64(),
        packages
            .iter()
            .map(|p| format!("{} {}", p.name, p.version))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    let key = system_key(rt.lock(), release.name(), &packages);
    let systems = settings.cache.join("debian");
    std::fs::create_dir_all(&systems).map_err(|e| judge_err("debian cache", e))?;
    let dir = systems.join(&key);
    let done = |cached| DebianSystem {
        key: key.clone(),
        packages: packages.clone(),
        root: dir.join("root"),
        cached,
    };
    if dir.join(COMPLETE).is_file() {
        log(&format!(
            "Debian system {key} found in the cache: nothing downloaded or unpacked"
        ));
        return Ok(Some(done(true)));
    }

    // 3. The package files the cache lacks, checked by apt against the signed indexes.
    let debs = settings.cache.join("debs");
    std::fs::create_dir_all(&debs).map_err(|e| judge_err("debian cache", e))?;
    let missing: Vec<&DebianPackage> = packages
        .iter()
        .filter(|p| !debs.join(deb_file(p)).is_file())
        .collect();
    if !missing.is_empty() {
        let t = Instant::now();
        let dest = tempfile::Builder::new()
            .prefix(".download-")
            .tempdir_in(&debs)
            .map_err(|e| judge_err("debian cache", e))?;
        let exact: Vec<String> = missing
            .iter()
            .map(|p| format!("{}={}", p.name, p.version))
            .collect();
        let out = run_host(
            apt.command("apt-get")
                .arg("download")
                .args(&exact)
                .current_dir(dest.path()),
            &[],
            settings.step_timeout,
            scratch,
            stop,
        )
        .map_err(|e| judge_err("downloading Debian packages", e))?;
        if !out.ok {
            return Err(EnvError::Judge(format!(
                "apt-get download failed:\n{}",
                tail(&out.stderr, 10)
            )));
        }
        let mut bytes = 0;
        for p in &missing {
            let f = deb_file(p);
            let got = dest.path().join(&f);
            bytes += std::fs::metadata(&got)
                .map_err(|e| judge_err(&format!("{f} (downloaded)"), e))?
                .len();
            std::fs::rename(&got, debs.join(&f)).map_err(|e| judge_err("debian cache", e))?;
        }
        log(&format!(
            "downloaded {} Debian package(s), {:.1} MiB, in {:.1} s; each checked by apt \
             against the release's signed index",
            missing.len(),
            bytes as f64 / (1 << 20) as f64,
            t.elapsed().as_secs_f64()
        ));
    }

    // 4. Unpacked over a hard-linked copy of the runtime's system.
    let t = Instant::now();
    let build = systems.join(format!("{key}.partial"));
    remove_if_present(&build)?;
    let root = build.join("root");
    std::fs::create_dir_all(&root).map_err(|e| judge_err("debian cache", e))?;
    link_system(&rt.dir().join(runtime::ROOTFS), &root)?;
    let staging = build.join("staging");
    std::fs::create_dir_all(&staging).map_err(|e| judge_err("debian cache", e))?;
    for p in &packages {
        let out = run_host(
            Command::new("dpkg-deb")
                .arg("-x")
                .arg(debs.join(deb_file(p)))
                .arg(&staging),
            &[],
            settings.step_timeout,
            scratch,
            stop,
        )
        .map_err(|e| judge_err("dpkg-deb -x", e))?;
        if !out.ok {
            return Err(EnvError::Judge(format!(
                "dpkg-deb -x {}: {}",
                deb_file(p),
                tail(&out.stderr, 5)
            )));
        }
    }
    let bytes = place(&staging, &root)?;
    remove_if_present(&staging)?;
    // The release's own ldconfig, in the new root: the linker cache names the new
    // libraries (written as a new file, never through a link to the runtime's).
    let out = run_host(
        Command::new("/usr/sbin/chroot")
            .arg(&root)
            .args(["/sbin/ldconfig"])
            .env_clear()
            .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin"),
        &[],
        settings.step_timeout,
        scratch,
        stop,
    )
    .map_err(|e| judge_err("ldconfig", e))?;
    if !out.ok {
        return Err(EnvError::Judge(format!(
            "ldconfig in the entry's system: {}",
            tail(&out.stderr, 5)
        )));
    }
    let mark = build.join(COMPLETE);
    let text = serde_json::json!({ "key": key, "release": release.name(), "packages": packages });
    std::fs::write(&mark, text.to_string()).map_err(|e| judge_err("debian cache", e))?;
    remove_if_present(&dir)?;
    std::fs::rename(&build, &dir).map_err(|e| judge_err("debian cache", e))?;
    log(&format!(
        "Debian system {key} made: {} package(s), {:.1} MiB unpacked over the runtime's \
         system (its files shared by hard links), in {:.1} s; no maintainer script ran",
        packages.len(),
        bytes as f64 / (1 << 20) as f64,
        t.elapsed().as_secs_f64()
    ));
    Ok(Some(done(false)))
}

/// Fetches the release's package lists when there are none or they are older than
/// [`LISTS_MAX_AGE`].
fn update_lists(
    settings: &EnvSettings,
    apt: &Apt,
    release: runtime::Release,
    scratch: &Path,
    stop: Option<&AtomicBool>,
    log: &mut dyn FnMut(&str),
) -> Result<(), EnvError> {
    let stamp = apt.state.join("lists/updated");
    let fresh = std::fs::metadata(&stamp)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|m| SystemTime::now().duration_since(m).ok())
        .is_some_and(|age| age < LISTS_MAX_AGE);
    if fresh {
        return Ok(());
    }
    let t = Instant::now();
    let out = run_host(
        apt.command("apt-get").arg("update"),
        &[],
        settings.step_timeout,
        scratch,
        stop,
    )
    .map_err(|e| judge_err("apt-get update", e))?;
    // apt-get update says "W:"/"E:" on stderr and may still exit 0 for a failed index.
    if !out.ok || out.stderr.lines().any(|l| l.starts_with("E:")) {
        return Err(EnvError::Judge(format!(
            "apt-get update for {} failed:\n{}",
            release.name(),
            tail(&out.stderr, 10)
        )));
    }
    std::fs::write(&stamp, b"").map_err(|e| judge_err("apt state", e))?;
    log(&format!(
        "apt: the package lists of {} fetched in {:.1} s",
        release.name(),
        t.elapsed().as_secs_f64()
    ));
    Ok(())
}

/// The packages `apt-get install --simulate` would install: its `Inst NAME [OLD]
/// (VERSION ARCHIVE [ARCH])` lines.
fn simulated(text: &str) -> Vec<DebianPackage> {
    text.lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("Inst ")?;
            let name = rest.split_whitespace().next()?.to_string();
            let open = rest.find('(')?;
            let inside = &rest[open + 1..rest.rfind(')')?];
            let version = inside.split_whitespace().next()?.to_string();
            let arch = inside
                .rsplit_once('[')
                .and_then(|(_, a)| a.split(']').next())
                .unwrap_or("amd64")
                .to_string();
            Some(DebianPackage {
                name,
                version,
                arch,
            })
        })
        .collect()
}

/// The file apt names a downloaded package (an epoch's `:` escaped as `%3a`).
fn deb_file(p: &DebianPackage) -> String {
    format!(
        "{}_{}_{}.deb",
        p.name,
        p.version.replace(':', "%3a"),
        p.arch
    )
}

/// The system's cache key: the runtime it goes on (its lock), the release and the set.
fn system_key(lock: &str, release: &str, packages: &[DebianPackage]) -> String {
    let mut h = Sha256::new();
    h.update(b"physiojudge debian system v1\n");
    h.update(lock.as_bytes());
    h.update(release.as_bytes());
    for p in packages {
        h.update(format!("\n{} {} {}", p.name, p.version, p.arch).as_bytes());
    }
    hex(&h.finalize())[..32].to_string()
}

/// Up to `n` names of `known` closest to `name` by edit distance (at most a third of
/// its length, and at least 2), nearest first, then by name.
pub fn closest<'a>(name: &str, known: impl Iterator<Item = &'a str>, n: usize) -> Vec<String> {
    let most = (name.chars().count() / 3).max(2);
    let mut found: Vec<(usize, &str)> = known
        .filter(|k| k.len().abs_diff(name.len()) <= most)
        .filter_map(|k| {
            let d = distance(name, k);
            (d <= most).then_some((d, k))
        })
        .collect();
    found.sort();
    found
        .into_iter()
        .take(n)
        .map(|(_, k)| k.to_string())
        .collect()
}

/// Levenshtein distance (insertions, deletions, substitutions), by characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = (here + 1)
                .min(row[j] + 1)
                .min(prev + usize::from(ca != *cb));
            prev = here;
        }
    }
    row[b.len()]
}

fn remove_if_present(path: &Path) -> Result<(), EnvError> {
    match std::fs::symlink_metadata(path) {
        Err(_) => Ok(()),
        Ok(_) => std::fs::remove_dir_all(path).map_err(|e| judge_err("debian cache", e)),
    }
}

/// Copies the system folders of the runtime's root `from` into `to` as hard links
/// (`cp -al`: new folders, the same files), so a system costs only what its packages
/// add.
fn link_system(from: &Path, to: &Path) -> Result<(), EnvError> {
    for name in SHOWN {
        let src = from.join(name);
        if std::fs::symlink_metadata(&src).is_err() {
            continue;
        }
        let out = Command::new("cp")
            .arg("-al")
            .arg(&src)
            .arg(to.join(name))
            .output()
            .map_err(|e| judge_err("cp -al", e))?;
        if !out.status.success() {
            return Err(EnvError::Judge(format!(
                "cp -al {}: {}",
                src.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
    }
    Ok(())
}

/// Moves the unpacked tree `staging` into `root`, following `root`'s own links for
/// folders (a merged-/usr `lib -> usr/lib`), and replacing a file by unlinking it
/// first: a file of `root` is a hard link to the runtime's, which must never be written
/// through. Returns the bytes of the files placed.
fn place(staging: &Path, root: &Path) -> Result<u64, EnvError> {
    let err = |p: &Path, e: std::io::Error| judge_err(&p.display().to_string(), e);
    let mut bytes = 0;
    let mut todo = vec![PathBuf::new()];
    while let Some(rel) = todo.pop() {
        let src = staging.join(&rel);
        for entry in std::fs::read_dir(&src).map_err(|e| err(&src, e))? {
            let entry = entry.map_err(|e| err(&src, e))?;
            let rel = rel.join(entry.file_name());
            let from = entry.path();
            let meta = std::fs::symlink_metadata(&from).map_err(|e| err(&from, e))?;
            let inside = Path::new("/").join(&rel);
            let parent = inside.parent().unwrap_or(Path::new("/"));
            let dest_parent =
                runtime::resolve_in(root, parent).map_err(|e| EnvError::Judge(e.to_string()))?;
            let dest = dest_parent.join(entry.file_name());
            if meta.is_dir() {
                // A folder, or a link to one, that is there already is used as it is.
                let there = runtime::resolve_in(root, &inside)
                    .map_err(|e| EnvError::Judge(e.to_string()))?;
                if !there.is_dir() {
                    if std::fs::symlink_metadata(&there).is_ok() {
                        std::fs::remove_file(&there).map_err(|e| err(&there, e))?;
                    }
                    std::fs::create_dir_all(&there).map_err(|e| err(&there, e))?;
                    std::fs::set_permissions(&there, meta.permissions())
                        .map_err(|e| err(&there, e))?;
                }
                todo.push(rel);
                continue;
            }
            if let Ok(old) = std::fs::symlink_metadata(&dest) {
                match old.is_dir() {
                    true => std::fs::remove_dir_all(&dest),
                    false => std::fs::remove_file(&dest),
                }
                .map_err(|e| err(&dest, e))?;
            }
            if meta.is_symlink() || meta.is_file() {
                bytes += if meta.is_file() { meta.len() } else { 0 };
                std::fs::rename(&from, &dest).map_err(|e| err(&dest, e))?;
            }
            // Packages hold no devices or pipes; anything else is left out.
        }
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apt_s_simulation_is_read() {
        let text = "Reading package lists...\nInst libonig5 (6.9.6-1.1 Debian:11.11/oldoldstable \
                    [amd64])\nInst libc6 [2.31-13] (2.31-13+deb11u11 Debian:11.11 [amd64])\n\
                    Inst jq (1.6-2.1 Debian:11.11/oldoldstable [amd64])\nConf jq (1.6-2.1 \
                    Debian:11.11/oldoldstable [amd64])\n";
        let got = simulated(text);
        assert_eq!(
            got.iter()
                .map(|p| format!("{} {} {}", p.name, p.version, p.arch))
                .collect::<Vec<_>>(),
            [
                "libonig5 6.9.6-1.1 amd64",
                "libc6 2.31-13+deb11u11 amd64",
                "jq 1.6-2.1 amd64"
            ]
        );
        assert_eq!(deb_file(&got[0]), "libonig5_6.9.6-1.1_amd64.deb");
        let epoch = DebianPackage {
            name: "gawk".into(),
            version: "1:5.1.0-1".into(),
            arch: "amd64".into(),
        };
        assert_eq!(deb_file(&epoch), "gawk_1%3a5.1.0-1_amd64.deb");
    }

    #[test]
    fn the_closest_names_come_first() {
        let known = [
            "libprotobuf23",
            "libprotobuf-dev",
            "octave-signal",
            "octave",
            "jq",
            "zzzzzzzzzzzzz",
        ];
        assert_eq!(
            closest("libprotobuf10", known.into_iter(), 3),
            ["libprotobuf23", "libprotobuf-dev"]
        );
        assert_eq!(
            closest("octave-signall", known.into_iter(), 3),
            ["octave-signal"]
        );
        assert!(closest("qqqqqq", known.into_iter(), 3).is_empty());
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("", "ab"), 2);
    }

    #[test]
    fn the_key_depends_on_the_set_and_the_runtime() {
        let p = |n: &str, v: &str| DebianPackage {
            name: n.into(),
            version: v.into(),
            arch: "amd64".into(),
        };
        let a = [p("jq", "1.6-2.1"), p("libjq1", "1.6-2.1")];
        let k = system_key("lock", "bullseye", &a);
        assert_eq!(k.len(), 32);
        assert_ne!(k, system_key("lock2", "bullseye", &a));
        assert_ne!(k, system_key("lock", "bullseye", &a[..1]));
        assert_ne!(
            k,
            system_key(
                "lock",
                "bullseye",
                &[p("jq", "1.6-2.2"), p("libjq1", "1.6-2.1")]
            )
        );
    }

    /// Placing never writes through a hard link to the runtime's file, and follows the
    /// root's own folder links.
    #[test]
    fn placing_replaces_links_and_follows_folder_links() {
        let t = tempfile::tempdir().unwrap();
        let (runtime_root, root, staging) = (
            t.path().join("rt"),
            t.path().join("root"),
            t.path().join("st"),
        );
        std::fs::create_dir_all(runtime_root.join("usr/lib")).unwrap();
        std::fs::write(runtime_root.join("usr/lib/libx.so"), b"runtime's").unwrap();
        std::os::unix::fs::symlink("usr/lib", runtime_root.join("lib")).unwrap();
        std::fs::create_dir_all(&root).unwrap();
        link_system(&runtime_root, &root).unwrap();
        std::fs::create_dir_all(staging.join("lib/new")).unwrap();
        std::fs::write(staging.join("lib/libx.so"), b"package's").unwrap();
        std::fs::write(staging.join("lib/new/liby.so"), b"y").unwrap();
        std::os::unix::fs::symlink("libx.so", staging.join("lib/libx.so.1")).unwrap();
        assert_eq!(place(&staging, &root).unwrap(), 10);
        assert_eq!(
            std::fs::read(runtime_root.join("usr/lib/libx.so")).unwrap(),
            b"runtime's"
        );
        assert_eq!(
            std::fs::read(root.join("usr/lib/libx.so")).unwrap(),
            b"package's"
        );
        assert!(
            std::fs::symlink_metadata(root.join("lib"))
                .unwrap()
                .is_symlink()
        );
        assert_eq!(
            std::fs::read(root.join("usr/lib/new/liby.so")).unwrap(),
            b"y"
        );
        assert_eq!(
            std::fs::read_link(root.join("usr/lib/libx.so.1")).unwrap(),
            Path::new("libx.so")
        );
    }
}
