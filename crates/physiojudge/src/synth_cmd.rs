//! `physiojudge synth <challenge> --out DIR --seed S [--records N]`: write a challenge's
//! deterministic, labelled synthetic data set in its native layout (the demo's data,
//! fixtures, benchmark sets). Prints a one-line summary.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use synth::{Challenge, SynthError};

use crate::output::UsageError;

#[derive(Args)]
pub struct SynthArgs {
    /// The challenge: cpsc2021, cinc2017 or physionet2022.
    #[arg(value_parser = parse_challenge)]
    pub challenge: Challenge,
    /// Folder to write into: created if missing, and it must be empty.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Seed: the same seed writes the same bytes on every machine.
    #[arg(long, value_name = "S")]
    pub seed: u64,
    /// How many records (patients for physionet2022) [default: cpsc2021 12, cinc2017
    /// 40, physionet2022 30].
    #[arg(long, value_name = "N")]
    pub records: Option<usize>,
}

fn parse_challenge(s: &str) -> Result<Challenge, String> {
    s.parse().map_err(|e: SynthError| e.to_string())
}

pub fn run(args: SynthArgs, out: &mut dyn Write) -> Result<()> {
    match synth::write(args.challenge, &args.out, args.seed, args.records) {
        Ok(summary) => writeln!(out, "{summary}")?,
        Err(e @ SynthError::BadCount { .. }) => return Err(UsageError(e.to_string()).into()),
        Err(e) => return Err(e.into()),
    }
    Ok(())
}
