//! `physiojudge evaluate`: run an entry through a challenge's stages and print the result.
//!
//! Exit status: 0 when the entry was scored (or stopped after the quiz by `DRYRUN`), 1
//! when a stage failed (the result is still written and printed) or the judge could not
//! run, 2 on a usage error.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use judge::result::{EntryVerdict, Outcome};
use judge::{Challenge, EvalResult, Event, Progress};

/// The seed of generated data, for `evaluate` without `--data` and for `demo`.
pub const DEFAULT_SEED: u64 = 2026;

#[derive(Args)]
pub struct EvaluateArgs {
    /// Challenge id: cpsc2021, cinc2017, physionet2022, p300speller.
    #[arg(long)]
    pub challenge: String,
    /// The entry: a folder, or an archive (.zip, .tar.gz, .tgz, .tar).
    #[arg(long)]
    pub entry: PathBuf,
    /// A labelled data folder in the challenge's native layout (a CPSC folder with
    /// RECORDS, a CinC folder with REFERENCE.csv, a CirCor training_data folder). It is
    /// split into training / quiz / exam by subject (docs/judge.md). Default: a data set
    /// generated with `synth` (seed 2026, its default size).
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Where to write result.json and the logs (default: a new folder per run in
    /// physiojudge's data folder, $XDG_DATA_HOME/physiojudge/evaluate/<challenge>-<UTC
    /// time>, ~/.local/share without XDG_DATA_HOME).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// A challenge definition file instead of the built-in one.
    #[arg(long)]
    pub challenge_file: Option<PathBuf>,
    /// The sandbox slot (concurrent evaluations need different slots).
    #[arg(long, default_value_t = 0)]
    pub slot: u32,
    /// Print result.json instead of the summary.
    #[arg(long)]
    pub json: bool,
}

/// Progress on stderr: a bar per stage with its name and elapsed time on a terminal,
/// plain lines (at most one a second, and each stage's end) when stderr is a file or a
/// pipe (CI logs, `2>&1 | tee`). Fed by the judge's events (`evaluate`, `demo`) or by a
/// submission's event stream (`status`).
pub struct Bars {
    bar: Option<ProgressBar>,
    terminal: bool,
    /// When the last plain line was printed.
    last_line: Option<std::time::Instant>,
    /// When the stage under way started (for streams that do not say).
    started: std::time::Instant,
}

impl Bars {
    pub fn new() -> Bars {
        Bars {
            bar: None,
            terminal: std::io::IsTerminal::is_terminal(&std::io::stderr()),
            last_line: None,
            started: std::time::Instant::now(),
        }
    }

    /// A stage started, with `records` to do (0: no per-record progress).
    pub fn stage(&mut self, stage: &str, records: usize) {
        self.started = std::time::Instant::now();
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
        if self.terminal {
            let bar = if records > 0 {
                ProgressBar::new(records as u64).with_style(
                    ProgressStyle::with_template(
                        "{prefix:>6} [{bar:30}] {pos}/{len} records {elapsed}",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
                )
            } else {
                let b = ProgressBar::new_spinner().with_style(
                    ProgressStyle::with_template("{prefix:>6} {spinner} {elapsed}")
                        .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                );
                b.enable_steady_tick(Duration::from_millis(120));
                b
            };
            bar.set_draw_target(ProgressDrawTarget::stderr());
            bar.set_prefix(stage.to_owned());
            self.bar = Some(bar);
        } else {
            match records {
                0 => eprintln!("{stage:>6}: started"),
                n => eprintln!("{stage:>6}: started, {n} records"),
            }
            self.last_line = Some(std::time::Instant::now());
        }
    }

    /// `done` of the stage's `total` records are done, `elapsed` into it (when known).
    pub fn record(&mut self, stage: &str, done: usize, total: usize, elapsed: Option<Duration>) {
        if self.terminal {
            if let Some(b) = &self.bar {
                b.set_position(done as u64);
            }
            return;
        }
        let due = self
            .last_line
            .is_none_or(|t| t.elapsed() >= Duration::from_secs(1));
        if due || done == total {
            let elapsed = elapsed.unwrap_or_else(|| self.started.elapsed());
            eprintln!(
                "{stage:>6}: {done}/{total} records, {:.0} s",
                elapsed.as_secs_f64()
            );
            self.last_line = Some(std::time::Instant::now());
        }
    }

    /// A line of its own (a stage's end, a state change), below any bar.
    pub fn line(&mut self, text: &str) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
        eprintln!("{text}");
    }
}

impl Progress for Bars {
    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Stage { stage, records } => self.stage(stage.as_str(), records),
            Event::Record {
                stage,
                done,
                total,
                elapsed,
            } => self.record(stage.as_str(), done, total, Some(elapsed)),
            Event::Done(report) => self.line(&format!(
                "{:>6}: {} ({:.0} s)",
                report.stage.as_str(),
                stage_text(report, None),
                report.wall_time_s
            )),
        }
    }
}

/// A stage's outcome, pointing to its log when it failed (a hidden stage has none).
fn stage_text(report: &judge::result::StageReport, dir: Option<&Path>) -> String {
    let text = outcome_text(&report.outcome);
    match (&report.outcome, &report.log) {
        (Outcome::Failed { .. }, Some(log)) => {
            let log = dir.map_or_else(|| log.clone(), |d| d.join(log).display().to_string());
            format!("{text} (the whole log: {log})")
        }
        _ => text,
    }
}

fn outcome_text(o: &Outcome) -> String {
    match o {
        Outcome::Passed => "passed".into(),
        Outcome::Failed { reason } => format!("FAILED: {reason}"),
        Outcome::Skipped { why } => format!("skipped ({why})"),
    }
}

/// The judge of this process for one evaluation: the runtime set up by `physiojudge
/// runtime setup` if there is one (a MATLAB entry runs on the Octave runtime alone; a
/// Python entry's prep says what to set up), this binary as the sandbox's init
/// program, and the one sandbox slot `slot`.
pub fn judge(slot: u32) -> Result<judge::Judge> {
    let end = slot.checked_add(1).context("--slot is too large")?;
    let rt = match runtime::Runtime::open(&runtime::default_dir()) {
        Ok(rt) => Some(rt),
        Err(runtime::RuntimeError::NotSetUp { .. }) => None,
        Err(e) => return Err(e).context("opening the Python runtime entries run with"),
    };
    Ok(judge::Judge::with_runtime(
        rt,
        crate::sandbox_cmd::init_program()?,
        slot..end,
    )?)
}

/// The judge of a process that judges many entries (a server, a worker) with the
/// sandbox slots `slots`: the Python runtime must be set up.
pub fn judge_with_slots(slots: std::ops::Range<u32>) -> Result<judge::Judge> {
    let rt = runtime::Runtime::open(&runtime::default_dir()).context(
        "the Python runtime entries run with is not set up: run `physiojudge runtime setup`",
    )?;
    Ok(judge::Judge::new(
        rt,
        crate::sandbox_cmd::init_program()?,
        slots,
    )?)
}

/// Runs one evaluation with progress on stderr.
pub fn evaluate(
    judge: &judge::Judge,
    challenge: &str,
    entry: &Path,
    data: &Path,
    out: &Path,
) -> Result<EvalResult> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let request = judge::Request {
        challenge,
        entry,
        data,
        out,
        cancel: None,
    };
    Ok(judge.evaluate(&request, &mut Bars::new())?)
}

pub fn run(a: EvaluateArgs, out: &mut dyn Write) -> Result<()> {
    // A definition that cannot be used is the caller's input: exit 1 with the file named,
    // like any bad file, not 3 (the judge's failure), which a JudgeError would give.
    let challenge = match &a.challenge_file {
        Some(f) => Challenge::from_file(f),
        None => Challenge::built_in(&a.challenge),
    }
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    if challenge.id != a.challenge {
        bail!(
            "--challenge {} but the definition file is for {}",
            a.challenge,
            challenge.id
        );
    }
    let mut judge = judge(a.slot)?;
    judge.add_challenge(challenge.clone());
    // Without --data, synthetic data lives as long as the evaluation.
    let generated;
    let data = match &a.data {
        Some(d) => d.clone(),
        None => {
            generated = tempfile::tempdir().context("a folder for the generated data")?;
            let dir = generated.path().join(&challenge.id);
            let summary = synth::write_challenge(&challenge.id, &dir, DEFAULT_SEED, None)
                .map_err(|e| anyhow::anyhow!("no --data given and {e}"))?;
            eprintln!("no --data: generated {summary}");
            dir
        }
    };
    let dest = match &a.out {
        Some(p) => p.clone(),
        None => crate::output::run_folder("evaluate", &format!("{}-", challenge.id))?,
    };
    let result = evaluate(&judge, &challenge.id, &a.entry, &data, &dest);
    if result.is_err() && a.out.is_none() {
        // Nothing was judged: give back the folder reserved for it (only if still empty).
        let _ = std::fs::remove_dir(&dest);
    }
    let result = result?;
    if a.json {
        serde_json::to_writer_pretty(&mut *out, &result)?;
        writeln!(out)?;
        // stdout holds the JSON alone; the folder goes to stderr.
        eprintln!("result folder: {}", dest.display());
    } else {
        summary(&result, &dest, out)?;
    }
    if let Some((stage, reason)) = result.failure() {
        out.flush()?;
        let log = result
            .stages
            .iter()
            .find(|s| s.stage == stage)
            .and_then(|s| s.log.as_ref())
            .map(|l| format!("; the whole log: {}", dest.join(l).display()))
            .unwrap_or_default();
        bail!("the entry failed in {}: {reason}{log}", stage.as_str());
    }
    Ok(())
}

/// The human summary: one line per stage, then the score.
pub fn summary(r: &EvalResult, dir: &Path, out: &mut dyn Write) -> Result<()> {
    writeln!(out, "challenge  {}", r.challenge)?;
    writeln!(out, "entry      {}", r.entry)?;
    writeln!(
        out,
        "split      training {} / quiz {} / exam {} records",
        r.split.training, r.split.quiz, r.split.exam
    )?;
    writeln!(out)?;
    writeln!(out, "{:<6} {:>8}  outcome", "stage", "time")?;
    for s in &r.stages {
        let mut text = stage_text(s, Some(dir));
        if let Some(c) = &s.counts {
            text.push_str(&format!(
                " — {} records: {} ok, {} failed, {} timed out, {} without usable output",
                c.records, c.ok, c.failures, c.timeouts, c.defaulted
            ));
        }
        writeln!(
            out,
            "{:<6} {:>7.1}s  {text}",
            s.stage.as_str(),
            s.wall_time_s
        )?;
    }
    writeln!(out)?;
    if !r.warnings.is_empty() {
        writeln!(out, "warnings")?;
        for w in &r.warnings {
            writeln!(out, "  - {}", judge::shown::line(w))?;
        }
        writeln!(out)?;
    }
    // A stage that was not scored shows no number.
    let quiz_passed = r
        .stages
        .iter()
        .any(|s| s.stage == judge::result::Stage::Quiz && s.outcome == Outcome::Passed);
    if let (Some(q), true) = (&r.quiz_score, quiz_passed) {
        writeln!(out, "quiz score {:.4}", q.score)?;
    }
    match (r.verdict, &r.exam_score) {
        (EntryVerdict::Scored, Some(e)) => {
            for n in &e.ranking {
                let value = n
                    .value
                    .map_or("-".into(), |v| format!("{v:.*}", e.precision as usize));
                let better = match n.better {
                    judge::challenge::Better::Higher => "higher is better",
                    judge::challenge::Better::Lower => "lower is better",
                };
                writeln!(out, "exam {:<13} {value} ({better})", n.key)?;
            }
        }
        (EntryVerdict::DryRun, _) => writeln!(out, "dry run: no exam, no score")?,
        (EntryVerdict::Stopped, _) => writeln!(out, "stopped: no score")?,
        _ => writeln!(out, "not scored")?,
    }
    writeln!(out, "result     {}", dir.join("result.json").display())?;
    Ok(())
}
