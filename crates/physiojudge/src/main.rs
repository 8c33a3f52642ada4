//! `physiojudge`: the command-line front of the judge.
//!
//! Exit codes (the contract of docs/architecture.md): 0 success, 1 the work failed (the
//! message on stderr), 2 usage error.

use std::io::{self, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod demo_cmd;
mod evaluate_cmd;
mod output;
mod p300_cmd;
mod runtime_cmd;
mod sandbox_cmd;
mod score_cmd;
mod synth_cmd;
mod wfdb_cmd;

#[derive(Parser)]
#[command(
    name = "physiojudge",
    version,
    about = "Judge for physiological-signal algorithm challenges",
    long_about = "Judge for physiological-signal algorithm challenges: reads challenge data \
                  (WFDB, WAV, MAT, CirCor), and will run untrusted entries in a sandbox and \
                  score them with the official metrics."
)]
struct Cli {
    /// More log output on stderr (-v info, -vv debug, -vvv trace). PHYSIOJUDGE_LOG
    /// (a tracing filter such as `formats=debug`) overrides it.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Read WFDB records: header summary, samples, annotations.
    #[command(subcommand)]
    Wfdb(wfdb_cmd::WfdbCommand),
    /// Score predictions with a challenge's official metric.
    #[command(subcommand)]
    Score(score_cmd::ScoreCommand),
    /// Run a command in the sandbox and report how it ended.
    #[command(subcommand)]
    Sandbox(sandbox_cmd::SandboxCommand),
    /// Set up or inspect the Python runtime entries run with.
    #[command(subcommand)]
    Runtime(runtime_cmd::RuntimeCommand),
    /// Run an entry through a challenge's stages (prep, train, quiz, exam, score) in
    /// the sandbox and report the outcome and score. Needs root and the runtime.
    Evaluate(evaluate_cmd::EvaluateArgs),
    /// The main job: generate each challenge's data with synth, run every example entry
    /// and a trivial baseline through all stages, print a leaderboard. Needs root.
    Demo(demo_cmd::DemoArgs),
    /// Write a challenge's deterministic, labelled synthetic data in its native layout.
    Synth(synth_cmd::SynthArgs),
    /// The online P300 speller challenge: synthetic speller blocks, converted BNCI
    /// recordings.
    #[command(subcommand)]
    P300(p300_cmd::P300Command),
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("PHYSIOJUDGE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(io::stderr)
        .init();
}

fn main() -> ExitCode {
    // The inside of a sandbox run: this binary, re-executed by the runner (not a user
    // command, so not in the help).
    if std::env::args().nth(1).as_deref() == Some(sandbox_cmd::INIT_ARG) {
        sandbox::init::main();
    }
    // clap exits with 2 on a usage error and 0 for --help/--version.
    let cli = Cli::parse();
    init_logging(cli.verbose);
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let result = match cli.command {
        Command::Wfdb(cmd) => wfdb_cmd::run(cmd, &mut out),
        Command::Score(cmd) => score_cmd::run(cmd, &mut out),
        Command::Sandbox(cmd) => sandbox_cmd::run(cmd, &mut out),
        Command::Runtime(cmd) => runtime_cmd::run(cmd, &mut out),
        Command::Evaluate(a) => evaluate_cmd::run(a, &mut out),
        Command::Demo(a) => demo_cmd::run(a, &mut out),
        Command::Synth(a) => synth_cmd::run(a, &mut out),
        Command::P300(cmd) => p300_cmd::run(cmd, &mut out),
    }
    .and_then(|()| out.flush().map_err(anyhow::Error::from));
    // The cgroups the sandbox made ahead for further runs (nothing if none ran).
    sandbox::shutdown();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // A closed pipe (`| head`) is the reader's choice, not a failure.
        Err(e) if output::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) if e.is::<output::UsageError>() => {
            let _ = out.flush();
            eprintln!("physiojudge: usage error: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            let _ = out.flush();
            eprintln!("physiojudge: error: {e:#}");
            ExitCode::from(1)
        }
    }
}
