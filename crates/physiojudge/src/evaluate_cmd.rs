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
use judge::result::{EntryVerdict, Outcome, Stage, StageReport};
use judge::{Challenge, EvalResult, Progress};

/// The seed of generated data, for `evaluate` without `--data` and for `demo`.
pub const DEFAULT_SEED: u64 = 2026;

/// Subjects of generated P300 speller data by default (half to train on, half examined).
pub const P300_SUBJECTS: usize = 6;

/// Writes a challenge's synthetic data set into `dir` and says what it holds: `records`
/// records (patients; P300 subjects), or the generator's default size.
pub fn generate(
    challenge: &str,
    dir: &Path,
    seed: u64,
    records: Option<usize>,
) -> Result<String, synth::SynthError> {
    if challenge == "p300speller" {
        let params = synth::p300::P300Params {
            subjects: records.unwrap_or(P300_SUBJECTS),
            seed,
            ..synth::p300::P300Params::default()
        };
        let written = synth::p300::write(dir, &params)?;
        return Ok(format!(
            "p300speller: {} subjects of {} characters, seed {seed}, snr {} in {}",
            written.len(),
            params.chars,
            params.snr,
            dir.display()
        ));
    }
    let which: synth::Challenge = challenge.parse()?;
    Ok(synth::write(which, dir, seed, records)?.to_string())
}

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

/// Progress bars on stderr, one per stage (hidden when stderr is not a terminal).
struct Bars {
    bar: Option<ProgressBar>,
    quiet: bool,
}

impl Progress for Bars {
    fn stage(&mut self, stage: Stage, items: usize) {
        if self.quiet {
            return;
        }
        let bar = if items > 0 {
            ProgressBar::new(items as u64).with_style(
                ProgressStyle::with_template(
                    "{prefix:>6} [{bar:30}] {pos}/{len} records {elapsed}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
            )
        } else {
            let b = ProgressBar::new_spinner();
            b.enable_steady_tick(Duration::from_millis(120));
            b
        };
        bar.set_draw_target(ProgressDrawTarget::stderr());
        bar.set_prefix(stage.as_str());
        self.bar = Some(bar);
    }

    fn record(&mut self) {
        if let Some(b) = &self.bar {
            b.inc(1);
        }
    }

    fn done(&mut self, report: &StageReport) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
        if !self.quiet {
            eprintln!(
                "{:>6}: {}",
                report.stage.as_str(),
                outcome_text(&report.outcome)
            );
        }
    }
}

fn outcome_text(o: &Outcome) -> String {
    match o {
        Outcome::Passed => "passed".into(),
        Outcome::Failed { reason } => format!("FAILED: {reason}"),
        Outcome::Skipped { why } => format!("skipped ({why})"),
    }
}

/// Runs one evaluation with progress on stderr.
pub fn evaluate(
    challenge: &Challenge,
    entry: &Path,
    data: &Path,
    out: &Path,
    slot: u32,
    quiet: bool,
) -> Result<EvalResult> {
    let rt = runtime::Runtime::open(&runtime::default_dir()).context(
        "the Python runtime entries run with is not set up: run `physiojudge runtime setup`",
    )?;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let ev = judge::Evaluation {
        challenge,
        entry,
        data,
        out,
        runtime: &rt,
        init: crate::sandbox_cmd::init_program()?,
        slot,
    };
    let mut bars = Bars { bar: None, quiet };
    Ok(judge::evaluate(&ev, &mut bars)?)
}

pub fn run(a: EvaluateArgs, out: &mut dyn Write) -> Result<()> {
    let challenge = match &a.challenge_file {
        Some(f) => Challenge::from_file(f)?,
        None => Challenge::built_in(&a.challenge)?,
    };
    if challenge.id != a.challenge {
        bail!(
            "--challenge {} but the definition file is for {}",
            a.challenge,
            challenge.id
        );
    }
    let quiet = !std::io::IsTerminal::is_terminal(&std::io::stderr());
    // Without --data, synthetic data lives as long as the evaluation.
    let generated;
    let data = match &a.data {
        Some(d) => d.clone(),
        None => {
            generated = tempfile::tempdir().context("a folder for the generated data")?;
            let dir = generated.path().join(&challenge.id);
            let summary = generate(&challenge.id, &dir, DEFAULT_SEED, None)
                .map_err(|e| anyhow::anyhow!("no --data given and {e}"))?;
            eprintln!("no --data: generated {summary}");
            dir
        }
    };
    let dest = match &a.out {
        Some(p) => p.clone(),
        None => crate::output::run_folder("evaluate", &format!("{}-", challenge.id))?,
    };
    let result = evaluate(&challenge, &a.entry, &data, &dest, a.slot, quiet);
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
        bail!("the entry failed in {}: {reason}", stage.as_str());
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
        let mut text = outcome_text(&s.outcome);
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
    if let Some(q) = &r.quiz_score {
        writeln!(out, "quiz score {:.4}", q.score)?;
    }
    match (r.verdict, r.score) {
        (EntryVerdict::Scored, Some(s)) => writeln!(out, "exam score {s:.4}")?,
        (EntryVerdict::DryRun, _) => writeln!(out, "dry run: no exam, no score")?,
        _ => writeln!(out, "not scored")?,
    }
    writeln!(out, "result     {}", dir.join("result.json").display())?;
    Ok(())
}
