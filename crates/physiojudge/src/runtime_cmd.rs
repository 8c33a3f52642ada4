//! `physiojudge runtime setup|info`: the pinned Python runtime every sandbox sees at
//! `/runtime`.

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
    Info(DirArg),
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
}

pub fn run(cmd: RuntimeCommand, out: &mut dyn Write) -> Result<()> {
    match cmd {
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
            let dir = a.dir.unwrap_or_else(runtime::default_dir);
            writeln!(out, "directory: {}", dir.display())?;
            match runtime::Runtime::open(&dir) {
                Ok(_) => writeln!(out, "status: ready")?,
                Err(e) => writeln!(out, "status: {e}")?,
            }
            writeln!(out, "seen in the sandbox at: {}", runtime::MOUNT_POINT)?;
            for p in runtime::Lock::embedded().pins {
                writeln!(out, "{}=={}", p.name, p.version)?;
            }
        }
    }
    Ok(())
}
