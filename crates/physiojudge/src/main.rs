//! `physiojudge`: the command-line front of the judge.
//!
//! Exit codes (the contract of docs/architecture.md and docs/judge.md): 0 success, 1 the
//! work failed (the message on stderr; for `evaluate`, a stage failed), 2 usage error, 3
//! the judge itself could not finish an evaluation (its data, its machine or a fault of
//! its own: never the entry's doing; `result.json` says which), 128 + N when stopped by
//! signal N.

use std::io::{self, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod admin_cmd;
mod client_cmd;
mod demo_cmd;
mod env_cmd;
mod evaluate_cmd;
mod output;
mod p300_cmd;
mod runtime_cmd;
mod sandbox_cmd;
mod score_cmd;
mod serve_cmd;
mod synth_cmd;
mod wfdb_cmd;
mod worker_cmd;

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
    /// Entries' environments: `seed` builds a package stack's into the cache before a
    /// challenge opens.
    #[command(subcommand)]
    Env(env_cmd::EnvCommand),
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
    /// The platform's HTTP API (/api/v1) over its database and state folder.
    Serve(serve_cmd::ServeArgs),
    /// A worker machine of a fleet: takes jobs from a platform's server (and its job
    /// notices over NATS), judges them in the sandbox, sends the results back. Needs
    /// root and the runtime.
    Worker(worker_cmd::WorkerArgs),
    /// The platform's records without the server running: the first organiser account.
    Admin(admin_cmd::AdminArgs),
    /// Upload an entry to a platform (an archive, or a folder packed as .tar.gz) and
    /// follow its submission to its end (exit 0 scored, 1 failed, 3 error).
    Submit(client_cmd::SubmitArgs),
    /// A submission on a platform: its state, its stages' progress as they run, then
    /// its stages, reasons and scores (exit 0 scored, 1 failed, 3 error).
    Status(client_cmd::StatusArgs),
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

/// SIGTERM, SIGINT or SIGHUP: remove the work folders of evaluations in progress (they
/// hold copies of hidden data and whatever the entry wrote) and the sandbox's cgroups
/// made ahead, then exit with 128 + the signal. A thread of its own, woken through
/// signal-hook's pipe, so nothing unsafe runs in the handler.
pub(crate) fn stop_on_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP]) else {
        return;
    };
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            judge::workdir::remove_live();
            sandbox::shutdown();
            std::process::exit(128 + signal);
        }
    });
}

fn main() -> ExitCode {
    // The inside of a sandbox run: this binary, re-executed by the runner (not a user
    // command, so not in the help).
    sandbox::reexec::hook();
    // clap exits with 2 on a usage error and 0 for --help/--version.
    let cli = Cli::parse();
    init_logging(cli.verbose);
    // `sandbox run` starts the watcher itself, once its slot is started; `worker`
    // watches for itself, to report its runs as stopped before it exits.
    if !matches!(cli.command, Command::Sandbox(_) | Command::Worker(_)) {
        stop_on_signals();
    }
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let result = match cli.command {
        Command::Wfdb(cmd) => wfdb_cmd::run(cmd, &mut out),
        Command::Score(cmd) => score_cmd::run(cmd, &mut out),
        Command::Sandbox(cmd) => sandbox_cmd::run(cmd, &mut out),
        Command::Runtime(cmd) => runtime_cmd::run(cmd, &mut out),
        Command::Env(cmd) => env_cmd::run(cmd, &mut out),
        Command::Evaluate(a) => evaluate_cmd::run(a, &mut out),
        Command::Demo(a) => demo_cmd::run(a, &mut out),
        Command::Synth(a) => synth_cmd::run(a, &mut out),
        Command::P300(cmd) => p300_cmd::run(cmd, &mut out),
        Command::Serve(a) => serve_cmd::run(a, &mut out),
        Command::Worker(a) => worker_cmd::run(a, &mut out),
        Command::Admin(a) => admin_cmd::run(a, &mut out),
        Command::Submit(a) => client_cmd::submit(a, &mut out),
        Command::Status(a) => client_cmd::status(a, &mut out),
    }
    .and_then(|()| out.flush().map_err(anyhow::Error::from));
    // The cgroups the sandbox made ahead for further runs (nothing if none ran).
    sandbox::shutdown();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // A closed pipe (`| head`) is the reader's choice, not a failure.
        Err(e) if output::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) if e.downcast_ref::<judge::JudgeError>().is_some() => {
            let _ = out.flush();
            eprintln!("physiojudge: the judge could not finish (not the entry's fault): {e:#}");
            ExitCode::from(3)
        }
        Err(e) if e.is::<output::Exit>() => {
            let _ = out.flush();
            let code = e.downcast_ref::<output::Exit>().map_or(1, |x| x.code);
            eprintln!("physiojudge: {e}");
            ExitCode::from(code)
        }
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
