//! Per-entry Python environments: what an entry's `requirements.txt` (or 2017-style
//! `dependencies.txt`) asks for beyond the fixed runtime, as wheels, installed into a
//! folder of the entry's own that later stages see read-only in front of the runtime.
//!
//! The host only *resolves and downloads*: the runtime's own pip decides, without
//! building or importing anything (`--dry-run --only-binary :all:`), what must be
//! installed on top of what the runtime already has; each wheel is then downloaded by
//! its sha256 and checked again here. The *install* runs in the sandbox (no network,
//! prep's limits) from those files ([`crate::pipeline`]'s prep). See docs/judge.md,
//! "Entries' own packages".
//!
//! Two caches, in a folder the judging machine owns ([`EnvSettings::cache`]):
//! `wheels/<sha256>/<file name>` holds every wheel once, whoever asked for it, and
//! `envs/<key>/` every installed environment, `key` being the hash of its resolved set
//! (and the runtime it was made for): a second entry with the same set pays nothing.
//!
//! Not here: the sandbox run of the install, or what an entry sees (the pipeline).

mod advice;
pub mod debian;
pub mod dockerfile;
pub mod imports;
pub mod meaning;
pub mod parse;
pub mod pyc;
pub mod store;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::challenge::PackagesDef;
pub use advice::verify;
use advice::{Bulk, advise, too_big};
pub use parse::{Debian, Requirement};

/// The helper that asks the index what it has (run with the runtime's interpreter).
const INDEX_PY: &str = include_str!("index.py");

/// The package index used unless told otherwise.
pub const DEFAULT_INDEX: &str = "https://pypi.org/simple";

/// Where a judging machine keeps its caches and which index it asks: a worker's
/// setting, not a challenge's (an organiser's limits are in [`PackagesDef`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvSettings {
    /// Holds `wheels/`, `envs/` and pip's own HTTP cache.
    pub cache: PathBuf,
    /// A PEP 503/691 simple index: PyPI's or a mirror's.
    pub index_url: String,
    /// The longest one host step (the index check, pip's resolution, the download) may
    /// take.
    pub step_timeout: Duration,
}

impl EnvSettings {
    /// `$PHYSIOJUDGE_ENV_CACHE` (else `envs` in physiojudge's data folder) and
    /// `$PHYSIOJUDGE_INDEX_URL` (else PyPI).
    pub fn from_env() -> EnvSettings {
        let cache = std::env::var_os("PHYSIOJUDGE_ENV_CACHE")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .unwrap_or_else(|| runtime::data_home().join("envs"));
        let index_url = std::env::var("PHYSIOJUDGE_INDEX_URL")
            .ok()
            .filter(|u| u.starts_with("https://") || u.starts_with("http://"))
            .unwrap_or_else(|| DEFAULT_INDEX.to_string());
        EnvSettings {
            cache,
            index_url,
            step_timeout: Duration::from_secs(600),
        }
    }
}

/// One package of an entry's environment, as `result.json` names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Package {
    pub name: String,
    pub version: String,
    /// Of the wheel installed.
    pub sha256: String,
}

/// What ran besides the runtime: `result.json`'s `environment`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvironmentReport {
    /// The environment's cache key (the hash of the resolved set and the runtime): of
    /// the Python packages, else of the Debian ones; `PYTHON+DEBIAN` when both.
    pub key: String,
    /// What was installed on top of the runtime, by name.
    pub packages: Vec<Package>,
    /// The environment was found in the cache (nothing was downloaded or installed).
    pub cached: bool,
    /// The Debian packages of `dependencies.txt` and what they need, installed from the
    /// runtime's release (docs/runtimes.md, "Debian packages").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub debian: Vec<debian::DebianPackage>,
}

/// A resolved set ready to install (or installed already).
#[derive(Debug, Clone)]
pub struct Resolution {
    pub key: String,
    pub packages: Vec<Package>,
    /// The wheels, in the cache, in the order of `packages`.
    pub wheels: Vec<PathBuf>,
    /// Their total size.
    pub bytes: u64,
}

/// Why resolving stopped.
#[derive(Debug)]
pub enum EnvError {
    /// The entry asked for something it may not have: each message for the team.
    Refused(Vec<String>),
    /// The judge could not do its part (index unreachable, disk): not the entry's fault.
    Judge(String),
}

fn judge_err(what: &str, e: impl std::fmt::Display) -> EnvError {
    EnvError::Judge(format!("{what}: {e}"))
}

/// Lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The sha256 of a file, read in 1 MiB pieces.
pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex(&h.finalize()))
}

/// `%XX` escapes of a URL's last part decoded (PyPI writes a local version's `+` as
/// `%2B`); anything malformed is kept as it is, and then fails [`plain_wheel_name`].
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let hex = |c: u8| (c as char).to_digit(16);
    while i < b.len() {
        let (h, l) = (
            b.get(i + 1).copied().and_then(hex),
            b.get(i + 2).copied().and_then(hex),
        );
        match (b[i], h, l) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A wheel file name as the wheel format spells them (letters, digits, `._+!-`), so
/// that it is safe as a path part and inside the install's quoted shell words.
fn plain_wheel_name(f: &str) -> bool {
    f.len() <= 255
        && f.ends_with(".whl")
        && !f.starts_with('.')
        && !f.contains("..")
        && f.bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"._+!-".contains(&c))
}

/// A host step's error when the evaluation was stopped during it.
pub const STOPPED: &str = "stopped";

/// What a command left, when it ended in time.
struct Output {
    ok: bool,
    stdout: String,
    stderr: String,
}

/// Runs a host command with stdin `input`, output to files (no pipe to fill), killed
/// at `timeout`.
fn run_host(
    cmd: &mut Command,
    input: &[u8],
    timeout: Duration,
    scratch: &Path,
    stop: Option<&AtomicBool>,
) -> Result<Output, String> {
    let out_path = scratch.join("stdout");
    let err_path = scratch.join("stderr");
    let out = std::fs::File::create(&out_path).map_err(|e| e.to_string())?;
    let err = std::fs::File::create(&err_path).map_err(|e| e.to_string())?;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| e.to_string())?;
    if let Some(mut stdin) = child.stdin.take() {
        use std::io::Write;
        // A command that does not read its input is told so by its own failure.
        let _ = stdin.write_all(input);
    }
    let start = Instant::now();
    let status = loop {
        match child.try_wait().map_err(|e| e.to_string())? {
            Some(s) => break s,
            None if start.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("did not finish within {} s", timeout.as_secs()));
            }
            None if stop.is_some_and(|s| s.load(Ordering::SeqCst)) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(STOPPED.into());
            }
            None => std::thread::sleep(Duration::from_millis(50)),
        }
    };
    let read = |p: &Path| {
        let mut s = String::new();
        let _ = std::fs::File::open(p).and_then(|f| f.take(4 << 20).read_to_string(&mut s));
        s
    };
    Ok(Output {
        ok: status.success(),
        stdout: read(&out_path),
        stderr: read(&err_path),
    })
}

/// The last `n` lines of pip's output, for a message.
fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Resolves an entry's requirements against `rt`: what must be installed on top of it,
/// refused by `policy` or downloaded into the wheel cache. `Ok(None)`: the runtime meets
/// every requirement. `scratch` is a private folder of the evaluation; a host step under
/// way ends when `stop` is set (then [`EnvError::Judge`] says [`STOPPED`]); `log` hears
/// each step.
pub fn resolve(
    settings: &EnvSettings,
    rt: &runtime::Runtime,
    policy: &PackagesDef,
    reqs: &[Requirement],
    scratch: &Path,
    stop: Option<&AtomicBool>,
    log: &mut dyn FnMut(&str),
) -> Result<Option<Resolution>, EnvError> {
    if reqs.is_empty() {
        return Ok(None);
    }
    let denied: Vec<String> = reqs
        .iter()
        .filter(|r| policy.denies(&r.name))
        .map(|r| {
            format!(
                "line {}: {} is not allowed in this challenge (the organiser's deny list)",
                r.line, r.name
            )
        })
        .collect();
    if !denied.is_empty() {
        return Err(EnvError::Refused(denied));
    }
    std::fs::create_dir_all(scratch).map_err(|e| judge_err("scratch folder", e))?;
    let python = rt.dir().join("bin/python");
    let helper = scratch.join("index.py");
    std::fs::write(&helper, INDEX_PY).map_err(|e| judge_err("index helper", e))?;

    let asked: Vec<serde_json::Value> = reqs
        .iter()
        .map(|r| {
            serde_json::json!({
                "name": r.name, "specifier": r.clauses.join(","), "marker": r.marker,
                "extras": r.extras,
            })
        })
        .collect();
    let input = serde_json::to_vec(&asked).map_err(|e| judge_err("index check", e))?;
    // 0. What the runtime meets as it is needs neither the index nor pip: most entries
    // end here, and judging them never depends on the index being up.
    let out = run_host(
        Command::new(&python)
            .arg("-I")
            .arg(&helper)
            .arg("unmet")
            .arg(&settings.index_url),
        &input,
        settings.step_timeout,
        scratch,
        stop,
    )
    .map_err(|e| judge_err("comparing with the runtime", e))?;
    let unmet: Vec<String> = match out.ok {
        true => serde_json::from_str(&out.stdout)
            .map_err(|e| judge_err("the runtime comparison's answer", e))?,
        false => {
            return Err(EnvError::Judge(format!(
                "comparing with the runtime failed:\n{}",
                tail(&out.stderr, 10)
            )));
        }
    };
    if unmet.is_empty() {
        log("the runtime meets every requirement: no environment of the entry's own");
        return Ok(None);
    }
    log(&format!("not met by the runtime: {}", unmet.join(", ")));

    // 1. Every requirement the runtime does not meet must have a wheel for it.
    let t = Instant::now();
    let out = run_host(
        Command::new(&python)
            .arg("-I")
            .arg(&helper)
            .arg("check")
            .arg(&settings.index_url),
        &input,
        settings.step_timeout,
        scratch,
        stop,
    )
    .map_err(|e| judge_err("asking the index", e))?;
    if !out.ok {
        return Err(EnvError::Judge(format!(
            "asking the index {} failed:\n{}",
            settings.index_url,
            tail(&out.stderr, 10)
        )));
    }
    let problems: Vec<WheelProblem> =
        serde_json::from_str(&out.stdout).map_err(|e| judge_err("the index helper's answer", e))?;
    if !problems.is_empty() {
        let mut refused: Vec<String> = problems.iter().map(|p| p.message.clone()).collect();
        // Advice is printed only once pip resolved it, with the runtime, as a whole.
        if problems.iter().all(|p| !p.advice.is_empty()) {
            refused.push(advise(
                settings,
                &python,
                &python_name(rt),
                &helper,
                reqs,
                &problems,
                scratch,
                stop,
                log,
            )?);
        }
        return Err(EnvError::Refused(refused));
    }
    log(&format!(
        "index {}: every requirement has a wheel for the runtime ({:.1} s)",
        settings.index_url,
        t.elapsed().as_secs_f64()
    ));

    // 2. pip resolves against what the runtime has, reading wheel metadata only.
    let lines: Vec<String> = reqs.iter().map(|r| r.pip_line()).collect();
    let t = Instant::now();
    let resolved = match resolve_set(settings, &python, &helper, &lines, scratch, stop, log)? {
        Ok(r) => r,
        Err(said) => {
            return Err(EnvError::Refused(vec![format!(
                "the requirements cannot be met together with the runtime's packages \
                 (pip, wheels only):\n{said}"
            )]));
        }
    };
    let Resolved {
        mut items,
        requested,
        requires,
    } = resolved;
    log(&format!(
        "pip resolved the requirements against the runtime in {:.1} s: {}",
        t.elapsed().as_secs_f64(),
        match items.is_empty() {
            true => "the runtime has everything".to_string(),
            false => format!(
                "to install {}",
                items
                    .iter()
                    .map(|(p, _)| format!("{} {}", p.name, p.version))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    ));
    if items.is_empty() {
        return Ok(None);
    }
    let mut refused: Vec<String> = items
        .iter()
        .filter(|(p, _)| policy.denies(&p.name))
        .map(|(p, _)| {
            format!(
                "{} {} (needed by the requirements) is not allowed in this challenge (the \
                 organiser's deny list)",
                p.name, p.version
            )
        })
        .collect();
    if !policy.extra {
        refused.push(format!(
            "this challenge allows only the runtime's packages, and the requirements need \
             {} on top of them; the runtime has {}",
            named(&items),
            runtime_summary(rt.lock())
        ));
    }
    if !refused.is_empty() {
        return Err(EnvError::Refused(refused));
    }
    items.sort_by_key(|a| runtime::normalise(&a.0.name));
    let key = env_key(rt.lock(), items.iter().map(|(p, _)| p));

    // 3. Sizes (each package's: the cached wheel's, else the index's), then the wheels
    // the cache lacks.
    let cached = |p: &Package, f: &str| settings.cache.join("wheels").join(&p.sha256).join(f);
    let missing: Vec<&(Package, String)> = items
        .iter()
        .filter(|(p, f)| !cached(p, f).is_file())
        .collect();
    let mut size_of: std::collections::BTreeMap<String, u64> = items
        .iter()
        .filter_map(|(p, f)| {
            let m = std::fs::metadata(cached(p, f)).ok()?;
            Some((runtime::normalise(&p.name), m.len()))
        })
        .collect();
    let limit = policy.download_mb.saturating_mul(1 << 20);
    if !missing.is_empty() {
        let asked: Vec<serde_json::Value> = missing
            .iter()
            .map(|(p, f)| serde_json::json!({"name": p.name, "filename": f}))
            .collect();
        let input = serde_json::to_vec(&asked).map_err(|e| judge_err("sizes", e))?;
        let out = run_host(
            Command::new(&python)
                .arg("-I")
                .arg(&helper)
                .arg("sizes")
                .arg(&settings.index_url),
            &input,
            settings.step_timeout,
            scratch,
            stop,
        )
        .map_err(|e| judge_err("asking the index for sizes", e))?;
        let sizes: std::collections::BTreeMap<String, Option<u64>> = match out.ok {
            true => serde_json::from_str(&out.stdout).unwrap_or_default(),
            false => Default::default(),
        };
        for (p, f) in &missing {
            if let Some(n) = sizes.get(f).copied().flatten() {
                size_of.insert(runtime::normalise(&p.name), n);
            }
        }
    }
    let bulk = Bulk {
        summary: runtime_summary(rt.lock()),
        items: &items,
        size_of: &size_of,
        requested: &requested,
        requires: &requires,
    };
    let bytes: u64 = size_of.values().sum();
    if bytes > limit {
        return Err(EnvError::Refused(too_big(&bulk, bytes, policy)));
    }
    if !missing.is_empty() {
        download(settings, &python, &missing, scratch, stop, log)?;
    }
    let wheels: Vec<PathBuf> = items.iter().map(|(p, f)| cached(p, f)).collect();
    let bytes: u64 = wheels
        .iter()
        .filter_map(|w| std::fs::metadata(w).ok())
        .map(|m| m.len())
        .sum();
    if bytes > limit {
        return Err(EnvError::Refused(too_big(&bulk, bytes, policy)));
    }
    Ok(Some(Resolution {
        key,
        packages: items.into_iter().map(|(p, _)| p).collect(),
        wheels,
        bytes,
    }))
}

/// A requirement without a wheel for the runtime, as the index helper words it.
#[derive(Deserialize)]
struct WheelProblem {
    name: String,
    message: String,
    /// The requirements the judge would write instead, narrowest first, when it has
    /// them.
    #[serde(default)]
    advice: Vec<String>,
}

/// What pip's resolution gave: the wheels to install, and for each package whether the
/// entry asked for it and what it needs (for naming what brings the bulk).
struct Resolved {
    items: Vec<(Package, String)>,
    /// Normalised names of the packages asked for.
    requested: std::collections::BTreeSet<String>,
    /// Normalised name → the normalised names it requires (markers not evaluated).
    requires: std::collections::BTreeMap<String, Vec<String>>,
}

/// The runtime's Python as messages name it.
fn python_name(rt: &runtime::Runtime) -> String {
    let (major, minor) = rt.python_version();
    format!("CPython {major}.{minor}")
}

/// pip's text as the team is shown it: its own lines, without the judge's folders.
fn pip_text(text: &str, scratch: &Path, settings: &EnvSettings) -> String {
    // From pip's first error on, without its generic "To fix this you could try"
    // list: the conflict's own lines are the part a team needs.
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let from = lines
        .iter()
        .position(|l| l.starts_with("ERROR:"))
        .unwrap_or(lines.len().saturating_sub(12));
    let mut kept = Vec::new();
    let mut skipping = false;
    for l in &lines[from..] {
        if l.starts_with("To fix this you could try") {
            skipping = true;
            continue;
        }
        if skipping && (l.trim_start().starts_with(|c: char| c.is_ascii_digit())) {
            continue;
        }
        skipping = false;
        kept.push(*l);
    }
    let mut t = kept[kept.len().saturating_sub(30)..].join("\n");
    for (dir, shown) in [(scratch, ""), (settings.cache.as_path(), "<cache>/")] {
        t = t.replace(&format!("{}/", dir.display()), shown);
        t = t.replace(&dir.display().to_string(), shown.trim_end_matches('/'));
    }
    t
}

/// Resolves `lines` with pip against the runtime, then makes the set consistent with
/// the runtime: a runtime package whose own requirements the set breaks (the runtime's
/// scipy under an older numpy) is resolved again with the set (`scipy!=1.17.0`), so
/// that pip picks a version that fits, up to a few rounds. `Ok(Err(text))`: pip refused
/// (its text, for the team).
#[allow(clippy::too_many_arguments)]
fn resolve_set(
    settings: &EnvSettings,
    python: &Path,
    helper: &Path,
    lines: &[String],
    scratch: &Path,
    stop: Option<&AtomicBool>,
    log: &mut dyn FnMut(&str),
) -> Result<Result<Resolved, String>, EnvError> {
    let mut lines = lines.to_vec();
    for _round in 0..4 {
        let resolved = match dry_run(settings, python, &lines, scratch, stop)? {
            Ok(r) => r,
            Err(said) => return Ok(Err(said)),
        };
        let overlay: std::collections::BTreeMap<&str, &str> = resolved
            .items
            .iter()
            .map(|(p, _)| (p.name.as_str(), p.version.as_str()))
            .collect();
        let input = serde_json::to_vec(&overlay).map_err(|e| judge_err("runtime check", e))?;
        let out = run_host(
            Command::new(python)
                .arg("-I")
                .arg(helper)
                .arg("broken")
                .arg(&settings.index_url),
            &input,
            settings.step_timeout,
            scratch,
            stop,
        )
        .map_err(|e| judge_err("checking the runtime's packages", e))?;
        let broken: Vec<(String, String)> = match out.ok {
            true => serde_json::from_str(&out.stdout)
                .map_err(|e| judge_err("the runtime check's answer", e))?,
            false => {
                return Err(EnvError::Judge(format!(
                    "checking the runtime's packages failed:\n{}",
                    tail(&out.stderr, 10)
                )));
            }
        };
        if broken.is_empty() {
            return Ok(Ok(resolved));
        }
        log(&format!(
            "the set would break the runtime's {}: resolved again with a version of each \
             that fits",
            broken
                .iter()
                .map(|(n, v)| format!("{n} {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        lines.extend(broken.into_iter().map(|(n, v)| format!("{n}!={v}")));
    }
    Ok(Err(
        "the set and the runtime's packages did not settle in four rounds of resolution".into(),
    ))
}

/// One `pip install --dry-run --report` of `lines` against the runtime.
fn dry_run(
    settings: &EnvSettings,
    python: &Path,
    lines: &[String],
    scratch: &Path,
    stop: Option<&AtomicBool>,
) -> Result<Result<Resolved, String>, EnvError> {
    let req_file = scratch.join("requirements.txt");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&req_file, text).map_err(|e| judge_err("requirements copy", e))?;
    let report_path = scratch.join("report.json");
    let _ = std::fs::remove_file(&report_path);
    let pip_cache = settings.cache.join("pip");
    let out = run_host(
        Command::new(python)
            .args(["-I", "-m", "pip", "install", "--dry-run", "--quiet"])
            .args(["--isolated", "--no-input", "--disable-pip-version-check"])
            .args(["--only-binary", ":all:", "--index-url", &settings.index_url])
            .arg("--cache-dir")
            .arg(&pip_cache)
            .arg("--report")
            .arg(&report_path)
            .arg("-r")
            .arg(&req_file),
        &[],
        settings.step_timeout,
        scratch,
        stop,
    )
    .map_err(|e| judge_err("pip's resolution", e))?;
    if !out.ok {
        let said = pip_text(&out.stderr, scratch, settings);
        let entry_fault = [
            "ResolutionImpossible",
            "No matching distribution",
            "conflict",
        ]
        .iter()
        .any(|s| said.contains(s));
        return match entry_fault {
            true => Ok(Err(said)),
            false => Err(EnvError::Judge(format!("pip's resolution failed:\n{said}"))),
        };
    }
    let report: serde_json::Value = std::fs::read(&report_path)
        .map_err(|e| e.to_string())
        .and_then(|b| serde_json::from_slice(&b).map_err(|e| e.to_string()))
        .map_err(|e| judge_err("pip's report", e))?;
    let mut resolved = Resolved {
        items: Vec::new(),
        requested: Default::default(),
        requires: Default::default(),
    };
    for item in report["install"].as_array().into_iter().flatten() {
        let s = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
        let name = s(&item["metadata"]["name"]);
        let version = s(&item["metadata"]["version"]);
        let url = s(&item["download_info"]["url"]);
        let sha256 = s(&item["download_info"]["archive_info"]["hashes"]["sha256"]);
        let last = url.rsplit('/').next().unwrap_or_default();
        let filename = percent_decode(last.split(['#', '?']).next().unwrap_or_default());
        if name.is_empty()
            || version.is_empty()
            || sha256.len() != 64
            || !sha256.bytes().all(|b| b.is_ascii_hexdigit())
            || !plain_wheel_name(&filename)
        {
            return Err(EnvError::Judge(format!(
                "pip's report names {name:?} {version:?} without a wheel and its sha256"
            )));
        }
        let key = runtime::normalise(&name);
        if item["requested"].as_bool() == Some(true) {
            resolved.requested.insert(key.clone());
        }
        let needs = item["metadata"]["requires_dist"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|d| d.as_str())
            .map(|d| {
                let end = d
                    .find(|c: char| !(c.is_ascii_alphanumeric() || "-_.".contains(c)))
                    .unwrap_or(d.len());
                runtime::normalise(&d[..end])
            })
            .collect();
        resolved.requires.insert(key, needs);
        resolved.items.push((
            Package {
                name,
                version,
                sha256: sha256.to_ascii_lowercase(),
            },
            filename,
        ));
    }
    Ok(Ok(resolved))
}

/// What stops `reqs` on `rt`: for each requirement the runtime does not meet, whether
/// some allowed version has a wheel for its Python (the index helper's `check`); empty
/// when every one has. Used to choose a runtime by the entry's pins.
pub fn wheel_problems(
    settings: &EnvSettings,
    rt: &runtime::Runtime,
    reqs: &[Requirement],
    scratch: &Path,
    stop: Option<&AtomicBool>,
) -> Result<Vec<String>, EnvError> {
    std::fs::create_dir_all(scratch).map_err(|e| judge_err("scratch folder", e))?;
    let helper = scratch.join("index.py");
    std::fs::write(&helper, INDEX_PY).map_err(|e| judge_err("index helper", e))?;
    let asked: Vec<serde_json::Value> = reqs
        .iter()
        .map(|r| {
            serde_json::json!({
                "name": r.name, "specifier": r.clauses.join(","), "marker": r.marker,
                "extras": r.extras,
            })
        })
        .collect();
    let input = serde_json::to_vec(&asked).map_err(|e| judge_err("index check", e))?;
    let out = run_host(
        Command::new(rt.dir().join("bin/python"))
            .arg("-I")
            .arg(&helper)
            .arg("check")
            .arg(&settings.index_url),
        &input,
        settings.step_timeout,
        scratch,
        stop,
    )
    .map_err(|e| judge_err("asking the index", e))?;
    if !out.ok {
        return Err(EnvError::Judge(format!(
            "asking the index {} failed:\n{}",
            settings.index_url,
            tail(&out.stderr, 10)
        )));
    }
    #[derive(Deserialize)]
    struct Problem {
        message: String,
    }
    let problems: Vec<Problem> =
        serde_json::from_str(&out.stdout).map_err(|e| judge_err("the index helper's answer", e))?;
    Ok(problems.into_iter().map(|p| p.message).collect())
}

/// `name version` of each package, at most ten named.
fn named(items: &[(Package, String)]) -> String {
    let mut s: Vec<String> = items
        .iter()
        .take(10)
        .map(|(p, _)| format!("{} {}", p.name, p.version))
        .collect();
    if items.len() > 10 {
        s.push(format!("and {} more", items.len() - 10));
    }
    s.join(", ")
}

/// The main packages of the runtime whose lock is `lock`, for messages.
pub fn runtime_summary(lock: &str) -> String {
    let Ok(lock) = runtime::Lock::parse(lock) else {
        return "its locked packages".into();
    };
    [
        "numpy",
        "scipy",
        "scikit-learn",
        "wfdb",
        "pandas",
        "matplotlib",
    ]
    .iter()
    .filter_map(|n| lock.version_of(n).map(|v| format!("{n} {v}")))
    .collect::<Vec<_>>()
    .join(", ")
}

/// The environment's cache key: the runtime it goes on (its lock) and its set.
fn env_key<'a>(lock: &str, packages: impl Iterator<Item = &'a Package>) -> String {
    let mut h = Sha256::new();
    h.update(b"physiojudge environment v1\n");
    h.update(lock.as_bytes());
    for p in packages {
        h.update(
            format!(
                "{} {} {}\n",
                runtime::normalise(&p.name),
                p.version,
                p.sha256
            )
            .as_bytes(),
        );
    }
    hex(&h.finalize())[..32].to_string()
}

/// Downloads `missing` wheels by hash with pip (wheels only, no dependencies: the set is
/// resolved already) and moves each, checked, into the wheel cache.
fn download(
    settings: &EnvSettings,
    python: &Path,
    missing: &[&(Package, String)],
    scratch: &Path,
    stop: Option<&AtomicBool>,
    log: &mut dyn FnMut(&str),
) -> Result<(), EnvError> {
    let wheels = settings.cache.join("wheels");
    std::fs::create_dir_all(&wheels).map_err(|e| judge_err("wheel cache", e))?;
    // In the cache's file system, so that a checked wheel moves in by a rename.
    let dest = tempfile::Builder::new()
        .prefix(".download-")
        .tempdir_in(&wheels)
        .map_err(|e| judge_err("wheel cache", e))?;
    let hashed = scratch.join("download.txt");
    let text: String = missing
        .iter()
        .map(|(p, _)| format!("{}=={} --hash=sha256:{}\n", p.name, p.version, p.sha256))
        .collect();
    std::fs::write(&hashed, text).map_err(|e| judge_err("download list", e))?;
    let t = Instant::now();
    let out = run_host(
        Command::new(python)
            .args(["-I", "-m", "pip", "download", "--quiet", "--no-deps"])
            .args(["--isolated", "--no-input", "--disable-pip-version-check"])
            .args(["--require-hashes", "--only-binary", ":all:"])
            .args(["--index-url", &settings.index_url])
            .arg("--cache-dir")
            .arg(settings.cache.join("pip"))
            .arg("--dest")
            .arg(dest.path())
            .arg("-r")
            .arg(&hashed),
        &[],
        settings.step_timeout,
        scratch,
        stop,
    )
    .map_err(|e| judge_err("downloading wheels", e))?;
    if !out.ok {
        return Err(EnvError::Judge(format!(
            "downloading wheels failed:\n{}",
            tail(&out.stderr, 8)
        )));
    }
    let mut bytes = 0;
    for (p, f) in missing {
        let got = dest.path().join(f);
        let sum = sha256_file(&got).map_err(|e| judge_err(f, e))?;
        if sum != p.sha256 {
            return Err(EnvError::Judge(format!(
                "{f}: sha256 {sum}, but the index listed {}",
                p.sha256
            )));
        }
        bytes += std::fs::metadata(&got).map(|m| m.len()).unwrap_or(0);
        let dir = wheels.join(&p.sha256);
        std::fs::create_dir_all(&dir).map_err(|e| judge_err("wheel cache", e))?;
        // Another evaluation may have put the same file there meanwhile: same bytes.
        std::fs::rename(&got, dir.join(f)).map_err(|e| judge_err("wheel cache", e))?;
    }
    log(&format!(
        "downloaded {} wheel(s), {:.1} MiB, in {:.1} s; each checked against its sha256",
        missing.len(),
        bytes as f64 / (1 << 20) as f64,
        t.elapsed().as_secs_f64()
    ));
    Ok(())
}

/// An installed environment in the cache: `envs/<key>/site`.
pub fn env_dir(settings: &EnvSettings, key: &str) -> PathBuf {
    settings.cache.join("envs").join(key)
}

/// The mark of a complete environment (written last, after the install was checked).
pub const COMPLETE: &str = "resolved.json";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_depends_on_every_part_of_the_set() {
        let p = |n: &str, v: &str, h: &str| Package {
            name: n.into(),
            version: v.into(),
            sha256: h.into(),
        };
        let a = [p("peakutils", "1.3.5", "aa"), p("x", "1", "bb")];
        let k = env_key(runtime::LOCK, a.iter());
        assert_eq!(k.len(), 32);
        assert_eq!(
            k,
            env_key(
                runtime::LOCK,
                [p("PeakUtils", "1.3.5", "aa"), p("x", "1", "bb")].iter()
            )
        );
        assert_ne!(
            k,
            env_key(
                runtime::LOCK,
                [p("peakutils", "1.3.6", "aa"), p("x", "1", "bb")].iter()
            )
        );
        assert_ne!(
            k,
            env_key(
                runtime::LOCK,
                [p("peakutils", "1.3.5", "ab"), p("x", "1", "bb")].iter()
            )
        );
        assert_ne!(k, env_key(runtime::LOCK, a[..1].iter()));
    }

    #[test]
    fn pips_text_keeps_the_conflict_and_drops_the_judges_folders() {
        let scratch = Path::new("/tmp/.tmpAbc/resolve");
        let settings = EnvSettings {
            cache: PathBuf::from("/var/cache/pj"),
            index_url: DEFAULT_INDEX.into(),
            step_timeout: Duration::from_secs(1),
        };
        let text = "Collecting numpy\n  Downloading x\nERROR: Cannot install -r \
                    /tmp/.tmpAbc/resolve/requirements.txt (line 2) because these package \
                    versions have conflicting dependencies.\n\nThe conflict is caused by:\n    \
                    wfdb 3.0.0 depends on numpy==1.18.5\n\nTo fix this you could try to:\n\
                    1. loosen the range\n2. remove package versions\n\nERROR: \
                    ResolutionImpossible: for help visit https://pip.pypa.io/x\n";
        assert_eq!(
            pip_text(text, scratch, &settings),
            "ERROR: Cannot install -r requirements.txt (line 2) because these package \
             versions have conflicting dependencies.\nThe conflict is caused by:\n    \
             wfdb 3.0.0 depends on numpy==1.18.5\nERROR: ResolutionImpossible: for help \
             visit https://pip.pypa.io/x"
        );
    }

    #[test]
    fn wheel_names_from_the_index_are_decoded_and_checked() {
        assert_eq!(
            percent_decode("a-1.0%2Bcpu-py3-none-any.whl"),
            "a-1.0+cpu-py3-none-any.whl"
        );
        assert_eq!(percent_decode("bad%2"), "bad%2");
        assert!(plain_wheel_name("PeakUtils-1.3.5-py3-none-any.whl"));
        for bad in [
            "x'; rm -rf ~; '.whl",
            ".hidden.whl",
            "a..b.whl",
            "a.tar.gz",
            "a b.whl",
        ] {
            assert!(!plain_wheel_name(bad), "{bad}");
        }
    }

    #[test]
    fn a_host_command_past_its_time_is_killed() {
        let dir = tempfile::tempdir().unwrap();
        let t = Instant::now();
        let e = run_host(
            Command::new("/bin/sleep").arg("30"),
            &[],
            Duration::from_millis(300),
            dir.path(),
            None,
        )
        .err()
        .unwrap();
        assert!(e.contains("did not finish"), "{e}");
        assert!(t.elapsed() < Duration::from_secs(5));
        let out = run_host(
            &mut Command::new("/bin/cat"),
            b"hello",
            Duration::from_secs(5),
            dir.path(),
            None,
        )
        .unwrap();
        assert!(out.ok && out.stdout == "hello");
        // A stopped evaluation stops its host step at once.
        let stop = AtomicBool::new(true);
        let t = Instant::now();
        let e = run_host(
            Command::new("/bin/sleep").arg("30"),
            &[],
            Duration::from_secs(60),
            dir.path(),
            Some(&stop),
        )
        .err()
        .unwrap();
        assert_eq!(e, STOPPED);
        assert!(t.elapsed() < Duration::from_secs(5));
    }
}
