//! `physiojudge score <challenge>`: score predictions against a challenge's reference with
//! the official metric. Predictions that could not be used are listed in the report (and
//! scored as the challenge's default answer), not fatal; unusable reference data, or in
//! `--official-compat` mode a case where the official scorer would stop, exit with 1.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};
use score::Mode;

#[derive(Subcommand)]
pub enum ScoreCommand {
    /// CPSC 2021 (paroxysmal AF episodes): `<record>.json` files with `predict_endpoints`
    /// (or `.mat`, 1-based) against the labelled WFDB records.
    Cpsc2021(Cpsc2021Args),
    /// PhysioNet/CinC 2017 (AF classification): `answers.txt` against `REFERENCE.csv`.
    Cinc2017(Cinc2017Args),
    /// PhysioNet 2022 (heart murmur and clinical outcome): one `<patient>.csv` per
    /// patient against the `#Murmur:`/`#Outcome:` lines of the patient `.txt` files.
    Physionet2022(Physionet2022Args),
}

/// Options every scorer takes.
#[derive(Args)]
pub struct Common {
    /// Print one JSON object (challenge, score, mode, items, errors, warnings and the
    /// challenge's metrics; see docs/scoring.md) instead of the text report.
    #[arg(long)]
    pub json: bool,
    /// Reproduce the official scorer on inputs it accepts (and fail where it would crash)
    /// instead of scoring strictly over the reference.
    #[arg(long)]
    pub official_compat: bool,
}

impl Common {
    fn mode(&self) -> Mode {
        if self.official_compat {
            Mode::OfficialCompat
        } else {
            Mode::Strict
        }
    }
}

#[derive(Args)]
pub struct Cpsc2021Args {
    /// Folder of labelled records (headers with the class comment, `.atr` files, and a
    /// RECORDS list; signals are not read).
    #[arg(long)]
    pub reference: PathBuf,
    /// Folder of prediction files, one per record.
    #[arg(long)]
    pub predictions: PathBuf,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Args)]
pub struct Cinc2017Args {
    /// The reference labels, `record,label` per line (REFERENCE.csv).
    #[arg(long)]
    pub reference: PathBuf,
    /// The entry's answers, `record,label` per line (answers.txt).
    #[arg(long)]
    pub answers: PathBuf,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Args)]
pub struct Physionet2022Args {
    /// Folder of labelled patient files (`<patient>.txt` with `#Murmur:` and `#Outcome:`
    /// lines, e.g. a CirCor `training_data` folder; recordings are not read).
    #[arg(long)]
    pub labels: PathBuf,
    /// Folder of the entry's outputs, one `<patient>.csv` per patient.
    #[arg(long)]
    pub outputs: PathBuf,
    #[command(flatten)]
    pub common: Common,
}

fn print<R: serde::Serialize>(
    out: &mut dyn Write,
    json: bool,
    report: &R,
    text: impl FnOnce(&R) -> String,
) -> Result<()> {
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(report)?)?;
    } else {
        out.write_all(text(report).as_bytes())?;
    }
    Ok(())
}

pub fn run(cmd: ScoreCommand, out: &mut dyn Write) -> Result<()> {
    match cmd {
        ScoreCommand::Cpsc2021(a) => {
            let reference = score::cpsc2021::load_reference(&a.reference)?;
            let report = score::cpsc2021::score(&reference, &a.predictions, a.common.mode())?;
            print(out, a.common.json, &report, score::cpsc2021::Report::text)
        }
        ScoreCommand::Cinc2017(a) => {
            let report = score::cinc2017::score_files(&a.reference, &a.answers, a.common.mode())?;
            print(out, a.common.json, &report, score::cinc2017::Report::text)
        }
        ScoreCommand::Physionet2022(a) => {
            let report =
                score::physionet2022::score_folders(&a.labels, &a.outputs, a.common.mode())?;
            print(
                out,
                a.common.json,
                &report,
                score::physionet2022::Report::text,
            )
        }
    }
}
