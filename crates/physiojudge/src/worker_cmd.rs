//! `physiojudge worker`: a worker machine of a fleet (docs/service.md, "A fleet"). It
//! dials out only — to the server's API for jobs, entries, heartbeats and results, and
//! to NATS for job notices — and judges with the same pool and judge as `serve`'s
//! local slots.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;

#[derive(Args)]
pub struct WorkerArgs {
    /// The platform's address, as its site is reached (`https://judge.example`).
    #[arg(long)]
    pub server: String,
    /// Job notices over NATS JetStream: nats://host:port[/STREAM], as the server was
    /// given. Without it, the worker asks the server every --poll seconds.
    #[arg(long)]
    pub queue: Option<String>,
    /// The worker's token (an organiser makes it: POST /api/v1/workers).
    #[arg(long)]
    pub token: String,
    /// Jobs judged at once, one sandbox slot each (default: the number of CPUs).
    #[arg(long)]
    pub slots: Option<usize>,
    /// The first sandbox slot: the worker uses slots K, K+1, … (uids 60000+K, …). Two
    /// judges on one machine need disjoint slots.
    #[arg(long, default_value_t = 0)]
    pub first_slot: u32,
    /// Where this machine keeps challenges' data: a challenge's at DIR/<challenge id>
    /// (default: the path the server registered it with). Checked against the
    /// challenge's manifest before each job.
    #[arg(long)]
    pub data_root: Option<PathBuf>,
    /// The worker's state folder: entries as downloaded and result folders until the
    /// server has them. Default: physiojudge's data folder's `worker/`.
    #[arg(long)]
    pub state: Option<PathBuf>,
    /// Seconds between looks at the queue when no notice comes.
    #[arg(long, default_value_t = 10.0)]
    pub poll: f64,
    /// Only jobs of this challenge (repeat for more; default: any).
    #[arg(long = "challenge")]
    pub challenges: Vec<String>,
}

pub fn run(a: WorkerArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    if !a.server.starts_with("http://") && !a.server.starts_with("https://") {
        return Err(crate::output::UsageError(format!(
            "--server {:?}: expected http://… or https://…",
            a.server
        ))
        .into());
    }
    if !(a.poll.is_finite() && a.poll > 0.0 && a.poll <= 3600.0) {
        return Err(crate::output::UsageError(
            "--poll: seconds, more than 0 and at most 3600".into(),
        )
        .into());
    }
    let queue: Option<fleet::QueueUrl> = match &a.queue {
        Some(q) => Some(
            q.parse()
                .map_err(|e: fleet::FleetError| crate::output::UsageError(e.to_string()))?,
        ),
        None => None,
    };
    if !nix::unistd::Uid::effective().is_root() {
        bail!("a worker judges entries in the sandbox, which needs root (namespaces, cgroups)");
    }
    let slots = a.slots.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    if slots == 0 {
        return Err(crate::output::UsageError("--slots: at least 1".into()).into());
    }
    let end = u32::try_from(slots)
        .ok()
        .and_then(|n| a.first_slot.checked_add(n))
        .context("--slots or --first-slot is too large")?;
    let judge = Arc::new(crate::evaluate_cmd::judge_with_slots(a.first_slot..end)?);
    let state = a
        .state
        .clone()
        .unwrap_or_else(|| runtime::data_home().join("worker"));
    std::fs::create_dir_all(&state).with_context(|| format!("creating {}", state.display()))?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    rt.block_on(async {
        let mut config = fleet::RemoteConfig::new(&a.server, &a.token, &state);
        config.poll_every = Duration::from_secs_f64(a.poll);
        config.challenges = (!a.challenges.is_empty()).then(|| a.challenges.clone());
        // This process's own id: the server ends at once what an earlier process of
        // this worker (killed, say) still held, rather than waiting for its leases.
        let mut announcement = worker::announcement(slots);
        announcement.instance = Some(uuid::Uuid::now_v7().to_string());
        let remote = fleet::RemoteDispatch::connect(config, &announcement, queue.clone())
            .await
            .with_context(|| format!("announcing this worker to {}", a.server))?;
        let me = remote.announced().clone();
        writeln!(
            out,
            "physiojudge worker {:?} ({}) taking jobs from {} with {slots} slot(s); {}",
            me.name,
            me.worker,
            a.server,
            match &queue {
                Some(q) => format!("notices from {}/{}", q.server, q.stream),
                None => format!("asking every {} s", a.poll),
            }
        )?;
        out.flush()?;
        let mut pool_config = worker::Config::new(&state, slots);
        pool_config.data_root = a.data_root.clone();
        // A take waits for a notice as long as a poll's interval: an idle worker asks
        // the server only then, or when rung.
        pool_config.take_wait = Duration::from_secs_f64(a.poll);
        let (lines, mut said) = tokio::sync::mpsc::unbounded_channel();
        let remote = Arc::new(remote);
        let pool = worker::Pool::start(remote.clone(), judge, pool_config, Some(observer(lines)));
        let mut signal = signals()?;
        // The lines are written here, where `out` (stdout, locked for the whole
        // command) lives, until a signal: then the runs under way are stopped and
        // reported as stopped (retried at once elsewhere, not held against this
        // worker), and the process exits as the signal asks.
        let signal = loop {
            tokio::select! {
                line = said.recv() => match line {
                    Some(line) => {
                        writeln!(out, "{line}")?;
                        out.flush()?;
                    }
                    None => std::future::pending::<()>().await,
                },
                s = signal.recv() => break s.unwrap_or(signal_hook::consts::SIGTERM),
            }
        };
        writeln!(out, "stopping: the runs under way are reported as stopped")?;
        out.flush()?;
        pool.shutdown().await;
        while let Ok(line) = said.try_recv() {
            writeln!(out, "{line}")?;
        }
        writeln!(out, "takes: {}", remote.counts())?;
        out.flush()?;
        judge::workdir::remove_live();
        sandbox::shutdown();
        std::process::exit(128 + signal);
    })
}

/// SIGTERM, SIGINT and SIGHUP, as a channel the runtime can wait on (signal-hook's
/// thread, so nothing runs in the handler).
fn signals() -> anyhow::Result<tokio::sync::mpsc::UnboundedReceiver<i32>> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP])
        .context("watching for signals")?;
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for s in signals.forever() {
            if tx.send(s).is_err() {
                break;
            }
        }
    });
    Ok(rx)
}

/// One line per job taken and ended, for stdout (the worker's log for its operator).
fn observer(lines: tokio::sync::mpsc::UnboundedSender<String>) -> worker::Observer {
    Arc::new(move |e: &worker::Event| match e {
        worker::Event::Taken { slot, attempt } => {
            let _ = lines.send(format!("slot {slot}: took attempt {attempt}"));
        }
        worker::Event::Finished {
            slot,
            attempt,
            ending,
        } => {
            let how = match ending {
                worker::Ending::Reported { outcome, reason } => match reason {
                    Some(r) => format!("reported {outcome}: {r}"),
                    None => format!("reported {outcome}"),
                },
                worker::Ending::Abandoned { why } => format!("abandoned: {why}"),
                worker::Ending::Refused { why } => format!("report refused: {why}"),
                worker::Ending::Undelivered { why } => format!("report not delivered: {why}"),
            };
            let _ = lines.send(format!("slot {slot}: attempt {attempt} {how}"));
        }
        _ => {}
    })
}
