//! Plays a session to an algorithm on this machine, unsandboxed: a development tool for
//! writing and measuring entries without the judge.
//!
//! `cargo run --release -p stream --example play -- DATA_DIR SEED -- CMD ARGS...`
//!
//! Loads the subjects under DATA_DIR (the organiser layout, `stream::load`), makes a
//! session with SEED's subject order, spawns CMD with its standard input and output piped
//! to the session (`stream::protocol::serve`; its standard error is this one's), waits for
//! it, and prints the session's result as JSON on standard output (`summary`, `trials`,
//! `log`, `finished`, plus how the connection went and how the command ended), with one
//! line per subject (accuracy, mean sequences, ITR) on standard error.

use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use stream::protocol::serve;
use stream::{ReportStatus, Session};

const USAGE: &str = "usage: play DATA_DIR SEED -- CMD [ARGS...]";

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("play: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<ExitCode, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (ours, cmd) = match args.iter().position(|a| a == "--") {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => {
            eprintln!("{USAGE}");
            return Ok(ExitCode::from(2));
        }
    };
    let [data, seed] = ours else {
        eprintln!("{USAGE}");
        return Ok(ExitCode::from(2));
    };
    let Some((program, program_args)) = cmd.split_first() else {
        eprintln!("{USAGE}");
        return Ok(ExitCode::from(2));
    };
    let seed: u64 = seed
        .parse()
        .map_err(|_| format!("SEED must be a whole number, not {seed:?}"))?;
    let subjects = stream::load::subjects(&PathBuf::from(data)).map_err(|e| e.to_string())?;
    let mut session = Session::new(subjects, seed).map_err(|e| e.to_string())?;

    let started = Instant::now();
    let mut child = Command::new(program)
        .args(program_args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("{program}: {e}"))?;
    let (Some(to_child), Some(from_child)) = (child.stdin.take(), child.stdout.take()) else {
        return Err("the child's pipes were not made".into());
    };
    let served = serve(&mut session, from_child, to_child);
    let status = child
        .wait()
        .map_err(|e| format!("waiting for {program}: {e}"))?;
    let seconds = started.elapsed().as_secs_f64();

    let (packets, reports, connection) = match &served {
        Ok(s) => (s.packets, s.reports, "closed".to_string()),
        Err(e) => (0, 0, e.to_string()),
    };
    let result = session.finish();
    for s in &result.summary.subjects {
        let sequences: Vec<u32> = result
            .log
            .iter()
            .filter(|l| l.subject == s.subject)
            .filter_map(|l| match l.status {
                ReportStatus::Accepted { sequences, .. } => Some(sequences),
                _ => None,
            })
            .collect();
        let mean_m = if sequences.is_empty() {
            f64::NAN
        } else {
            f64::from(sequences.iter().sum::<u32>()) / sequences.len() as f64
        };
        eprintln!(
            "{}: accuracy {}/{} = {:.3}, mean sequences {:.2} over {} reported, mean {:.2} s, ITR {:.2} bits/min",
            s.subject,
            s.correct,
            s.trials,
            s.accuracy,
            mean_m,
            sequences.len(),
            s.mean_seconds,
            s.itr
        );
    }
    eprintln!(
        "score {:.2} bits/min; {packets} packets, {reports} reports in {seconds:.1} s ({:.0} packets/s); connection {connection}; {status}",
        result.summary.score,
        packets as f64 / seconds.max(1e-9),
    );
    let out = serde_json::json!({
        "summary": result.summary,
        "trials": result.trials,
        "log": result.log,
        "finished": result.finished,
        "packets": packets,
        "reports": reports,
        "connection": connection,
        "exit_code": status.code(),
        "seconds": seconds,
    });
    println!(
        "{}",
        serde_json::to_string_pretty(&out).map_err(|e| e.to_string())?
    );
    Ok(if served.is_ok() && status.success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
