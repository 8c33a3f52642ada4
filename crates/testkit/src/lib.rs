//! Test support shared by the workspace's tests: finds the public data in `../shared/data`
//! and the Python oracle venv (wfdb-python and friends) that `scripts/test.sh` installs.
//!
//! Tests that need either call [`shared_data`] or [`oracle_python`]. When the resource is
//! absent the test prints why it skips, unless the environment says it is required
//! (`PHYSIOJUDGE_REQUIRE_DATA=1`, `PHYSIOJUDGE_REQUIRE_ORACLE=1`, both set by the test
//! command and CI), in which case the test fails: CI can never pass by skipping.
//!
//! Not for production code: nothing outside `[dev-dependencies]` may use it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A [`Command`] for the `physiojudge` binary built for the calling test or bench (only
/// the `physiojudge` package's own tests and benches have it), set up by [`command`] with
/// that build's temporary folder.
#[macro_export]
macro_rules! physiojudge_command {
    () => {
        $crate::command(
            env!("CARGO_BIN_EXE_physiojudge"),
            env!("CARGO_TARGET_TMPDIR"),
        )
    };
}

/// Runs the `physiojudge` binary (as [`physiojudge_command!`] makes it) with the given
/// arguments and returns its [`Output`]; panics only when it cannot be started.
#[macro_export]
macro_rules! physiojudge {
    ($args:expr) => {
        $crate::output($crate::physiojudge_command!().args($args))
    };
}

/// What [`physiojudge_command!`] expands to: `bin` with `XDG_DATA_HOME` at
/// `<tmp>/xdg-data-home` (so that default output folders never land in `$HOME`) and
/// `PHYSIOJUDGE_RUNTIME_DIR` at `<tmp>/runtime` (one Python runtime for every test and
/// bench of the build; `runtime setup` builds it once). A test may override either.
pub fn command(bin: &str, tmp: &str) -> Command {
    let mut c = Command::new(bin);
    c.env("XDG_DATA_HOME", Path::new(tmp).join("xdg-data-home"))
        .env("PHYSIOJUDGE_RUNTIME_DIR", Path::new(tmp).join("runtime"));
    c
}

/// Runs `c` to the end and returns its output; panics only when it cannot be started.
pub fn output(c: &mut Command) -> Output {
    c.output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", c.get_program().to_string_lossy()))
}

/// The workspace root (two levels above this crate).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("testkit lives at <root>/crates/testkit")
        .to_path_buf()
}

fn required(var: &str) -> bool {
    std::env::var(var).is_ok_and(|v| v == "1")
}

/// `../shared/data` (or `$PHYSIOJUDGE_DATA`), or `None` after printing why the caller skips.
pub fn shared_data(test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("PHYSIOJUDGE_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("../shared/data"));
    if dir.join("README.md").is_file() {
        return Some(dir);
    }
    let msg = format!(
        "{test}: skipped: the public test data is not at {} (set PHYSIOJUDGE_DATA)",
        dir.display()
    );
    if required("PHYSIOJUDGE_REQUIRE_DATA") {
        panic!("{msg}, and PHYSIOJUDGE_REQUIRE_DATA=1 says it must be there");
    }
    eprintln!("{msg}");
    None
}

/// The oracle venv's Python (`$PHYSIOJUDGE_ORACLE_PYTHON`, else `<root>/.oracle-venv`),
/// or `None` after printing why the caller skips.
pub fn oracle_python(test: &str) -> Option<PathBuf> {
    let python = std::env::var_os("PHYSIOJUDGE_ORACLE_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join(".oracle-venv/bin/python"));
    let works = python.is_file()
        && Command::new(&python)
            .args(["-c", "import wfdb, scipy"])
            .output()
            .is_ok_and(|o| o.status.success());
    if works {
        return Some(python);
    }
    let msg = format!(
        "{test}: skipped: the Python oracle (wfdb-python, scipy) is not at {}; \
         `scripts/test.sh` installs it",
        python.display()
    );
    if required("PHYSIOJUDGE_REQUIRE_ORACLE") {
        panic!("{msg}, and PHYSIOJUDGE_REQUIRE_ORACLE=1 says it must be there");
    }
    eprintln!("{msg}");
    None
}

/// Runs `tests/oracle/<script>` with the oracle Python and returns its stdout; panics with
/// the script's stderr when it fails (a broken oracle must fail the test, not skip it).
pub fn run_oracle(python: &Path, script: &str, args: &[&str]) -> Vec<u8> {
    let path = workspace_root().join("tests/oracle").join(script);
    let out = Command::new(python)
        .arg(&path)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", path.display()));
    if !out.status.success() {
        panic!(
            "oracle {} {:?} failed ({}):\n{}",
            script,
            args,
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    out.stdout
}

/// A batch of jobs for an oracle script with the `SCRIPT JOBS.json OUTDIR` protocol: the
/// script reads a JSON list of jobs, each with an `"id"`, and writes `OUTDIR/<id>.json`
/// plus any `OUTDIR/<id>.<ext>` data files. One Python process runs the whole batch.
pub struct OracleBatch {
    python: PathBuf,
    script: &'static str,
    dir: tempfile::TempDir,
    jobs: Vec<serde_json::Value>,
    runs: usize,
}

/// The outputs of a batch that ran.
pub struct OracleOutputs {
    out: PathBuf,
}

impl OracleBatch {
    /// `None` (after printing why) when the oracle is absent and not required.
    pub fn new(test: &str, script: &'static str) -> Option<OracleBatch> {
        Some(OracleBatch {
            python: oracle_python(test)?,
            script,
            dir: tempfile::tempdir().expect("a temporary folder"),
            jobs: Vec::new(),
            runs: 0,
        })
    }

    /// A scratch folder that lives as long as the batch (for files the jobs read).
    pub fn scratch(&self) -> &Path {
        self.dir.path()
    }

    pub fn push(&mut self, job: serde_json::Value) {
        assert!(
            job["id"].is_string(),
            "an oracle job needs a string id: {job}"
        );
        self.jobs.push(job);
    }

    /// Runs the queued jobs (the queue empties) and returns their outputs.
    pub fn run(&mut self) -> OracleOutputs {
        self.runs += 1;
        let jobs = self
            .dir
            .path()
            .join(format!(".oracle-jobs-{}.json", self.runs));
        let out = self.dir.path().join(format!(".oracle-out-{}", self.runs));
        std::fs::create_dir_all(&out).expect("create the oracle output folder");
        if self.jobs.is_empty() {
            return OracleOutputs { out };
        }
        std::fs::write(
            &jobs,
            serde_json::to_vec(&self.jobs).expect("jobs serialize"),
        )
        .expect("write the oracle jobs");
        self.jobs.clear();
        run_oracle(
            &self.python,
            self.script,
            &[
                jobs.to_str().expect("UTF-8 path"),
                out.to_str().expect("UTF-8 path"),
            ],
        );
        OracleOutputs { out }
    }
}

impl OracleOutputs {
    /// The JSON the script wrote for job `id`.
    pub fn meta(&self, id: &str) -> serde_json::Value {
        let path = self.out.join(format!("{id}.json"));
        let bytes = std::fs::read(&path)
            .unwrap_or_else(|e| panic!("the oracle wrote no {}: {e}", path.display()));
        serde_json::from_slice(&bytes).expect("the oracle writes JSON")
    }

    /// The data file `<id>.<ext>` the script wrote, empty when it wrote none.
    pub fn bytes(&self, id: &str, ext: &str) -> Vec<u8> {
        std::fs::read(self.out.join(format!("{id}.{ext}"))).unwrap_or_default()
    }
}

/// Whether the test runs as root (the sandbox needs it); says why it skips otherwise.
pub fn root(test: &str) -> bool {
    let ok = std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"))
    });
    if !ok {
        eprintln!("{test}: skipped: the sandbox needs root");
    }
    ok
}

/// A finished command's stdout and stderr together, for assertion messages.
pub fn text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Every file under `dir`, recursively: its path relative to `dir` and its bytes, in path
/// order (to compare or pin generated data sets).
pub fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    fn walk(top: &Path, dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(top, &p, out);
            } else {
                let rel = p.strip_prefix(top).unwrap().to_path_buf();
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// FNV-1a over the relative paths and bytes of [`tree`]'s files.
pub fn digest(files: &[(PathBuf, Vec<u8>)]) -> u64 {
    let mut h = 0xCBF2_9CE4_8422_2325u64;
    for (name, bytes) in files {
        let name = name.to_string_lossy();
        for &b in name.as_bytes().iter().chain(&[0]).chain(bytes) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01B3);
        }
    }
    h
}
