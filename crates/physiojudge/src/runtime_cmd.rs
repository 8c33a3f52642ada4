//! `physiojudge runtime setup|info`: the pinned Python runtimes every sandbox sees at
//! `/runtime`: the default one (the host's CPython) and the era runtimes built from a
//! Debian release (`--release`, docs/runtimes.md).

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};

#[derive(Subcommand)]
pub enum RuntimeCommand {
    /// Build the Python runtime (numpy, scipy, wfdb, scikit-learn at the locked versions)
    /// from PyPI, once; later calls find it built.
    Setup(SetupArgs),
    /// Say where the runtime is, whether it is set up, and what it pins.
    Info(InfoArgs),
}

#[derive(Args)]
pub struct InfoArgs {
    #[command(flatten)]
    pub dir: DirArg,
    /// A release runtime: bullseye, bookworm or trixie.
    #[arg(long, value_parser = parse_release)]
    pub release: Option<runtime::Release>,
}

fn parse_release(s: &str) -> Result<runtime::Release, String> {
    runtime::Release::from_name(s).ok_or_else(|| {
        format!(
            "no runtime is built from Debian {s:?}; the releases are {}",
            runtime::Release::ALL.map(|r| r.to_string()).join(", ")
        )
    })
}

#[derive(Args)]
pub struct DirArg {
    /// The runtime's directory [default: $PHYSIOJUDGE_RUNTIME_DIR, else
    /// ~/.local/share/physiojudge/runtime-<lock id>].
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

#[derive(Args)]
pub struct SetupArgs {
    #[command(flatten)]
    pub dir: DirArg,
    /// The interpreter to build from: a CPython 3.11 under /usr (the sandbox shows only
    /// the system directories).
    #[arg(long, default_value = runtime::DEFAULT_PYTHON)]
    pub python: PathBuf,
    /// Build an era runtime instead: a Debian root file system of this release
    /// (bullseye: CPython 3.9, bookworm: 3.11, trixie: 3.13) made by mmdebstrap, with the
    /// release's locked base wheels. Needs root and mmdebstrap.
    #[arg(long, value_parser = parse_release)]
    pub release: Option<runtime::Release>,
    /// The Debian mirror an era runtime is built from.
    #[arg(long, default_value = runtime::DEFAULT_MIRROR)]
    pub mirror: String,
    /// Build the Octave runtime for MATLAB-language entries instead: Debian bookworm
    /// with octave, octave-signal, octave-statistics (docs/matlab.md). Needs root and
    /// mmdebstrap.
    #[arg(long, conflicts_with = "release")]
    pub octave: bool,
}

pub fn run(cmd: RuntimeCommand, out: &mut dyn Write) -> Result<()> {
    match cmd {
        RuntimeCommand::Setup(a) if a.octave => {
            let dir = a.dir.dir.unwrap_or_else(matlab::Octave::default_dir);
            if matlab::Octave::open(&dir).is_err() {
                eprintln!(
                    "physiojudge: building the Octave runtime in {} from {} (mmdebstrap of \
                     bookworm with {})",
                    dir.display(),
                    a.mirror,
                    matlab::PACKAGES
                );
            }
            let t = std::time::Instant::now();
            let (o, differences) = matlab::setup(&dir, &a.mirror)?;
            for d in &differences {
                eprintln!(
                    "physiojudge: Debian package differs from runtime/octave/debian.lock: {d}"
                );
            }
            writeln!(
                out,
                "runtime ready: {} ({}, {:.0} s)",
                o.dir().display(),
                o.describe(),
                t.elapsed().as_secs_f64()
            )?;
        }
        RuntimeCommand::Setup(a) if a.release.is_some() => {
            let release = a.release.unwrap_or(runtime::Release::Bookworm);
            let dir = a.dir.dir.unwrap_or_else(|| release.default_dir());
            if runtime::Runtime::open_release(&dir, release).is_err() {
                eprintln!(
                    "physiojudge: building the {release} runtime in {} from {} (mmdebstrap, \
                     then the locked wheels from PyPI)",
                    dir.display(),
                    a.mirror
                );
            }
            let t = std::time::Instant::now();
            let (r, differences) = runtime::setup_release(&dir, release, &a.mirror)?;
            for d in &differences {
                eprintln!(
                    "physiojudge: Debian package differs from runtime/{}/debian.lock: {d}",
                    release.name()
                );
            }
            writeln!(
                out,
                "runtime ready: {} ({release}, {:.0} s)",
                r.dir().display(),
                t.elapsed().as_secs_f64()
            )?;
        }
        RuntimeCommand::Setup(a) => {
            let dir = a.dir.dir.unwrap_or_else(runtime::default_dir);
            if runtime::Runtime::open(&dir).is_err() {
                eprintln!(
                    "physiojudge: building the Python runtime in {} from {} (downloads from PyPI)",
                    dir.display(),
                    a.python.display()
                );
            }
            let r = runtime::setup(&dir, &a.python)?;
            writeln!(out, "runtime ready: {}", r.dir().display())?;
        }
        RuntimeCommand::Info(a) => {
            let (dir, opened, lock) = match a.release {
                Some(r) => {
                    let dir = a.dir.dir.unwrap_or_else(|| r.default_dir());
                    let opened = runtime::Runtime::open_release(&dir, r);
                    writeln!(out, "release: {r}")?;
                    (dir, opened, runtime::Lock::parse(r.lock())?)
                }
                None => {
                    let dir = a.dir.dir.unwrap_or_else(runtime::default_dir);
                    let opened = runtime::Runtime::open(&dir);
                    (dir, opened, runtime::Lock::embedded())
                }
            };
            writeln!(out, "directory: {}", dir.display())?;
            match opened {
                Ok(_) => writeln!(out, "status: ready")?,
                Err(e) => writeln!(out, "status: {e}")?,
            }
            writeln!(out, "seen in the sandbox at: {}", runtime::MOUNT_POINT)?;
            for p in lock.pins {
                writeln!(out, "{}=={}", p.name, p.version)?;
            }
        }
    }
    Ok(())
}
