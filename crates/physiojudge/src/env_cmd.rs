//! `physiojudge env seed`: an organiser builds the environment of a package stack into
//! the judge's cache before the challenge opens, so that the first entry asking for it
//! finds it built (docs/runtimes.md, "Seeding"). The same prep as an entry's: the
//! runtime is chosen, the Python packages resolved, downloaded and installed in the
//! sandbox, the Debian packages unpacked, every file shared through the content store.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use judge::Challenge;

#[derive(Subcommand)]
pub enum EnvCommand {
    /// Build a stack's environment into the cache, as an entry asking for it would get.
    Seed(SeedArgs),
}

#[derive(Args)]
pub struct SeedArgs {
    /// The challenge whose rules apply (its runtimes, package limits).
    #[arg(long)]
    pub challenge: String,
    /// A pip requirements file, read as an entry's requirements file is.
    #[arg(long, short = 'r')]
    pub requirements: Option<PathBuf>,
    /// A 2017 `dependencies.txt` (Debian packages), for a per-record challenge.
    #[arg(long)]
    pub dependencies: Option<PathBuf>,
    /// The runtime to build it on (default, bullseye, bookworm, trixie), as an entry's
    /// `runtime.txt` would name it; else the challenge's choice.
    #[arg(long)]
    pub runtime: Option<String>,
    /// A challenge definition file instead of the built-in one.
    #[arg(long)]
    pub challenge_file: Option<PathBuf>,
    /// The sandbox slot the install runs in.
    #[arg(long, default_value_t = 0)]
    pub slot: u32,
}

pub fn run(cmd: EnvCommand, out: &mut dyn Write) -> Result<()> {
    let EnvCommand::Seed(a) = cmd;
    let challenge = match &a.challenge_file {
        Some(f) => Challenge::from_file(f),
        None => Challenge::built_in(&a.challenge),
    }
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    if a.requirements.is_none() && a.dependencies.is_none() {
        bail!("nothing to seed: give --requirements and/or --dependencies");
    }
    // An entry of only the files that say what it needs.
    let tmp = tempfile::tempdir().context("a folder for the seed")?;
    let entry = tmp.path().join("entry");
    std::fs::create_dir(&entry)?;
    let copy = |from: &Option<PathBuf>, name: &str| -> Result<()> {
        if let Some(f) = from {
            std::fs::copy(f, entry.join(name)).with_context(|| format!("{}", f.display()))?;
        }
        Ok(())
    };
    let req_name = challenge
        .requirements
        .clone()
        .unwrap_or_else(|| "requirements.txt".into());
    copy(&a.requirements, &req_name)?;
    copy(&a.dependencies, "dependencies.txt")?;
    if let Some(r) = &a.runtime {
        std::fs::write(entry.join("runtime.txt"), format!("{r}\n"))?;
    }
    let mut judge = crate::evaluate_cmd::judge(a.slot)?;
    judge.add_challenge(challenge.clone());
    let dest = tmp.path().join("result");
    std::fs::create_dir(&dest)?;
    let request = judge::Request {
        challenge: &challenge.id,
        entry: &entry,
        data: &entry,
        out: &dest,
        cancel: None,
    };
    let t = std::time::Instant::now();
    let result = judge.seed(&request, &mut ())?;
    let log = std::fs::read_to_string(dest.join("logs/prep.log")).unwrap_or_default();
    if let Some((_, reason)) = result.failure() {
        eprint!("{log}");
        bail!("seeding failed: {reason}");
    }
    if let Some(rt) = &result.runtime {
        writeln!(out, "runtime      {} (CPython {})", rt.name, rt.python)?;
    }
    match &result.environment {
        None => writeln!(out, "environment  none needed: the runtime has everything")?,
        Some(env) => {
            writeln!(
                out,
                "environment  {} ({})",
                env.key,
                match env.cached {
                    true => "in the cache already",
                    false => "built",
                }
            )?;
            for p in &env.packages {
                writeln!(out, "  python     {} {}", p.name, p.version)?;
            }
            for p in &env.debian {
                writeln!(out, "  debian     {} {}", p.name, p.version)?;
            }
        }
    }
    writeln!(out, "time         {:.1} s", t.elapsed().as_secs_f64())?;
    Ok(())
}
