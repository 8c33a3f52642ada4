//! `physiojudge sandbox run`: one command in the sandbox, with its limits and mounts; the
//! result record goes to stdout (as the last line with `--json`), the program's own output
//! is passed through.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use sandbox::Bind;
use sandbox::{InitProgram, Limits, RunConfig, Verdict};

/// How this binary starts the inside of a sandbox run (itself: `sandbox::reexec`).
pub fn init_program() -> anyhow::Result<InitProgram> {
    sandbox::reexec::this_program().map_err(|e| anyhow::anyhow!("finding this program: {e}"))
}

#[derive(Subcommand)]
pub enum SandboxCommand {
    /// Run CMD ARGS… isolated (namespaces, read-only minimal root, unprivileged uid,
    /// seccomp) within limits, and print the result record. Needs root.
    Run(RunArgs),
}

#[derive(Args)]
pub struct RunArgs {
    /// CPU time limit, seconds (all processes together).
    #[arg(long, default_value_t = Limits::default().cpu_time.as_secs_f64())]
    pub time: f64,
    /// Wall-clock limit, seconds.
    #[arg(long, default_value_t = Limits::default().wall_time.as_secs_f64())]
    pub wall_time: f64,
    /// Memory limit, MiB (all processes together, no swap).
    #[arg(long, default_value_t = Limits::default().memory_bytes >> 20)]
    pub mem: u64,
    /// Processes and threads alive at once.
    #[arg(long, default_value_t = Limits::default().pids)]
    pub pids: u64,
    /// Largest file the program may write, MiB.
    #[arg(long, default_value_t = Limits::default().file_size_bytes >> 20)]
    pub fsize: u64,
    /// Bytes kept of stdout and of stderr each, KiB; more ends the run (output_limit).
    #[arg(long, default_value_t = Limits::default().output_bytes >> 10)]
    pub output_limit: u64,
    /// Show a host path read-only: SRC or SRC:DST (repeatable).
    #[arg(long, value_name = "SRC[:DST]")]
    pub ro: Vec<String>,
    /// Show a host directory writable: SRC or SRC:DST (repeatable). The directory is
    /// given to the sandbox's uid so that the program can write in it.
    #[arg(long, value_name = "SRC[:DST]")]
    pub rw: Vec<String>,
    /// Working directory inside the sandbox (default: the first --rw destination, else /).
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    /// Show the Python runtime (`physiojudge runtime setup`) read-only at /runtime, first
    /// on the PATH: `python` is then its interpreter with numpy, scipy, wfdb, scikit-learn.
    #[arg(long)]
    pub runtime: bool,
    /// Show an era runtime instead (`physiojudge runtime setup --release R`): its Debian
    /// root file system as the whole system (/usr, /lib, /bin, /etc) and its Python at
    /// /runtime.
    #[arg(long, value_name = "RELEASE", conflicts_with = "runtime")]
    pub release: Option<String>,
    /// Show the Octave runtime (`physiojudge runtime setup --octave`) as the whole
    /// system, and our `matlab`/`mcc` shims and MATLAB toolbox at /matlab, first on the
    /// PATH (docs/matlab.md).
    #[arg(long, conflicts_with_all = ["runtime", "release"])]
    pub octave: bool,
    /// Sandbox slot: concurrent runs must use different slots (uid 60000 + slot).
    #[arg(long, default_value_t = 0)]
    pub slot: u32,
    /// Print the result record as one JSON object, the last line of stdout.
    #[arg(long)]
    pub json: bool,
    /// The command and its arguments.
    #[arg(last = true, required = true, value_name = "CMD ARGS")]
    pub command: Vec<String>,
}

fn bind(spec: &str, writable: bool) -> Result<Bind> {
    let (src, dst) = match spec.split_once(':') {
        Some((s, d)) => (PathBuf::from(s), PathBuf::from(d)),
        None => (PathBuf::from(spec), PathBuf::from(spec)),
    };
    let src = std::fs::canonicalize(&src).map_err(|e| anyhow::anyhow!("{}: {e}", src.display()))?;
    if !dst.is_absolute() {
        bail!(crate::output::UsageError(format!(
            "{spec}: the destination must be an absolute path"
        )));
    }
    Ok(Bind { src, dst, writable })
}

fn seconds(s: f64, what: &str) -> Result<Duration> {
    Duration::try_from_secs_f64(s)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| {
            anyhow::Error::new(crate::output::UsageError(format!(
                "--{what} must be a positive number of seconds"
            )))
        })
}

pub fn run(cmd: SandboxCommand, out: &mut dyn Write) -> Result<()> {
    let SandboxCommand::Run(a) = cmd;
    let mut binds = Vec::new();
    for r in &a.ro {
        binds.push(bind(r, false)?);
    }
    for r in &a.rw {
        binds.push(bind(r, true)?);
    }
    let runtime = match (&a.release, a.runtime) {
        (Some(name), _) => {
            let release = runtime::Release::from_name(name).ok_or_else(|| {
                crate::output::UsageError(format!(
                    "--release {name}: the releases are {}",
                    runtime::Release::ALL.map(|r| r.to_string()).join(", ")
                ))
            })?;
            Some(runtime::Runtime::find(release)?)
        }
        (None, true) => Some(runtime::Runtime::open(&runtime::default_dir())?),
        (None, false) => None,
    };
    if let Some(r) = &runtime {
        binds.extend(r.binds());
    }
    // Our MATLAB files, written where this run can read them, kept until it ends.
    let mut matlab_files = None;
    let octave = if a.octave {
        let o = matlab::Octave::find()?;
        let files = tempfile::Builder::new()
            .prefix("physiojudge-matlab-")
            .tempdir()?;
        matlab::write_files(files.path())?;
        binds.push(matlab::bind(files.path()));
        matlab_files = Some(files);
        Some(o)
    } else {
        None
    };
    let init = init_program()?;
    let mut cfg = RunConfig::new(a.command.clone(), init);
    cfg.cwd = a
        .cwd
        .clone()
        .or_else(|| binds.iter().find(|b| b.writable).map(|b| b.dst.clone()))
        .unwrap_or_else(|| PathBuf::from("/"));
    cfg.binds = binds;
    cfg.system_root = runtime.as_ref().and_then(runtime::Runtime::system_root);
    if runtime.is_some() {
        for (k, v) in &mut cfg.env {
            if k == "PATH" {
                *v = runtime::Runtime::sandbox_path();
            }
        }
    }
    if let Some(o) = &octave {
        cfg.system_root = Some(o.system_root());
        for (k, v) in &mut cfg.env {
            if k == "PATH" {
                *v = matlab::sandbox_path();
            }
        }
    }
    cfg.slot = a.slot;
    // One program, then this process exits: nothing is made ahead for a next run.
    cfg.once = true;
    cfg.limits = Limits {
        cpu_time: seconds(a.time, "time")?,
        wall_time: seconds(a.wall_time, "wall-time")?,
        memory_bytes: a.mem << 20,
        pids: a.pids,
        file_size_bytes: a.fsize << 20,
        output_bytes: a.output_limit << 10,
        ..Limits::default()
    };
    // The slot starts while this process has one thread, so that its spawner is a fork
    // of this process rather than this binary executed again; then the signal watcher,
    // a second thread, may start (`sandbox::start_slot`).
    sandbox::start_slot(&cfg);
    crate::stop_on_signals();
    let r = sandbox::run(&cfg);
    out.write_all(&r.stdout)?;
    std::io::stderr().write_all(&r.stderr)?;
    if a.json {
        // The record must be a line of its own, whatever the program printed last on
        // either stream (`2>&1` puts both on one): else a program could print a record
        // of its own without a newline and have ours appended to it.
        if r.stderr.last().is_some_and(|&b| b != b'\n') {
            writeln!(std::io::stderr())?;
        }
        if r.stdout.last().is_some_and(|&b| b != b'\n') {
            writeln!(out)?;
        }
        writeln!(out, "{}", serde_json::to_string(&r.result)?)?;
    } else {
        eprintln!(
            "sandbox: {}{} (cpu {:.3} s, wall {:.3} s, peak memory {})",
            r.result.verdict,
            r.result
                .message
                .as_deref()
                .map(|m| format!(": {m}"))
                .unwrap_or_default(),
            r.result.cpu_time_s,
            r.result.wall_time_s,
            r.result
                .peak_memory_bytes
                .map_or("unknown".into(), |b| format!(
                    "{:.1} MiB",
                    b as f64 / 1048576.0
                )),
        );
    }
    drop(matlab_files);
    if r.result.verdict == Verdict::InternalError {
        bail!(
            "the sandbox failed: {}",
            r.result.message.unwrap_or_default()
        );
    }
    Ok(())
}
