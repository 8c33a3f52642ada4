//! `physiojudge p300 ...`: the P300 speller challenge's own commands: `synth`, which
//! writes deterministic speller blocks (the challenge is streamed to an entry, so it is
//! not one of `physiojudge synth`'s file-based challenges), and `convert-bnci`, which
//! turns the BNCI 2015-003 recordings into blocks of the same layout.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use synth::SynthError;
use synth::p300::{DEFAULT_CHARS, DEFAULT_SNR, P300Params};

use crate::output::UsageError;

#[derive(Subcommand)]
pub enum P300Command {
    /// Write deterministic P300 speller blocks: DIR/S01/block_1.npy, ... (float32, 65 rows
    /// = 64 EEG channels and the trigger row, 250 Hz; the trigger row holds the true
    /// target codes 101-136).
    Synth(SynthArgs),
    /// Convert BNCI 2015-003 speller recordings (sN.mat) into blocks of the same layout:
    /// DIR/S<NN>/block_1.npy (the train run) and block_2.npy (the test run), two trials
    /// per spelled character. Decisions and caveats: docs/p300-data.md.
    ConvertBnci(ConvertBnciArgs),
}

#[derive(Args)]
pub struct ConvertBnciArgs {
    /// Folder to write into: created if missing, and it must be empty.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The BNCI files, each a MAT v5 file holding the struct sN (N 1-99: the subject).
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
}

#[derive(Args)]
pub struct SynthArgs {
    /// Subjects, one block each (1-99).
    #[arg(long, value_name = "N")]
    pub subjects: usize,
    /// Seed: the same seed writes the same bytes on every machine.
    #[arg(long, value_name = "S")]
    pub seed: u64,
    /// Folder to write into: created if missing, and it must be empty.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Characters (trials) per block (1-200).
    #[arg(long, value_name = "C", default_value_t = DEFAULT_CHARS)]
    pub chars: usize,
    /// P300 peak at Pz over the background's standard deviation there (0-100; 0: no
    /// response at all).
    #[arg(long, value_name = "X", default_value_t = DEFAULT_SNR)]
    pub snr: f64,
}

pub fn run(cmd: P300Command, out: &mut dyn Write) -> Result<()> {
    match cmd {
        P300Command::Synth(a) => synth(a, out),
        P300Command::ConvertBnci(a) => convert_bnci(a, out),
    }
}

fn convert_bnci(a: ConvertBnciArgs, out: &mut dyn Write) -> Result<()> {
    // Every error names the file (or folder) and the place in it.
    let written = bnci::write(&a.out, &a.files).context("cannot convert the BNCI files")?;
    for w in &written {
        let spelled: Vec<String> = w.spelled.chars().map(String::from).collect();
        writeln!(
            out,
            "{}: {} -> {} × {} samples ({:.1} s at {} Hz), {} trials: {}",
            a.out.join(&w.path).display(),
            w.source,
            p300::ROWS,
            w.samples,
            w.samples as f64 / f64::from(p300::SAMPLE_RATE),
            p300::SAMPLE_RATE,
            spelled.len(),
            spelled.join(" ")
        )?;
    }
    Ok(())
}

fn synth(a: SynthArgs, out: &mut dyn Write) -> Result<()> {
    let params = P300Params {
        subjects: a.subjects,
        chars: a.chars,
        seed: a.seed,
        snr: a.snr,
    };
    let written = match synth::p300::write(&a.out, &params) {
        Ok(w) => w,
        Err(e @ SynthError::BadParams { .. }) => return Err(UsageError(e.to_string()).into()),
        Err(e) => {
            // The error names the folder or file already.
            return Err(e).context("cannot write the P300 blocks");
        }
    };
    let samples = p300::block_samples(params.chars);
    writeln!(
        out,
        "p300speller: {} subjects × {} characters, {} files of {} × {} samples ({:.1} s at {} Hz) in {} (seed {}, snr {})",
        params.subjects,
        params.chars,
        written.len(),
        p300::ROWS,
        samples,
        samples as f64 / f64::from(p300::SAMPLE_RATE),
        p300::SAMPLE_RATE,
        a.out.display(),
        params.seed,
        params.snr
    )?;
    Ok(())
}
