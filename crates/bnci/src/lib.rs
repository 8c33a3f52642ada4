//! Converts the BNCI Horizon 2020 "Visual P300 speller (003-2015)" recordings (Guger et
//! al. 2009; MAT v5 files `sN.mat`) into the online P300 speller's organiser block layout,
//! so that real EEG can be streamed by `stream::Session` like the contest's own data.
//!
//! What it does, per file: reads the struct `sN` (fields `train` and `test`, each an
//! 11 × n run at 256 Hz: time, 8 EEG channels, flash id, target flag), checks the run
//! (a 1/256 s time step, whole flash ids 0–12, target flags 0/1 constant over each flash,
//! 15 repetitions of the 12 lines per character, one flagged row and one flagged column
//! per character) and writes `S<NN>/block_1.npy` (the train run) and `block_2.npy` (the
//! test run): float32, 65 × n at 250 Hz, rows 0–63 the Neuracle channels in
//! `p300::CHANNELS` order (the 8 BNCI channels in their named rows, the others
//! zero), row 64 the trigger row. Each BNCI character becomes two trials (repetitions
//! 1–5 and 11–15), each flash gets the contest's 2-of-12 group code by a seeded per-trial
//! relabelling of the 12 lines, and the triggers 101–136 (the true target code), 1–12,
//! 200 and 241 are placed as the contest's trials place them. Every decision and the
//! measured timing of the BNCI paradigm are in `docs/p300-data.md`.
//!
//! - [`resample`]: the 256 → 250 Hz polyphase filter;
//! - [`convert_bytes`] / [`convert_file`]: one file in memory, [`write`]: files to a
//!   folder.
//!
//! Not for: other BNCI data sets or other speller layouts, scoring or ranking entries
//! (the two trials of a character share its target, the paradigm's timing differs from
//! the contest's, only 8 of 64 channels carry signal, and an entry that knows BNCI's
//! public flash orders could narrow down the targets from the codes alone: see the
//! docs), or keeping the data: nothing here stores or ships the recordings, whose
//! licence is unclear; the converted files go wherever the caller says.
//!
//! Errors name the file, the place (variable and 0-based sample at 256 Hz) and the
//! problem; no input makes it panic.

use std::path::{Path, PathBuf};

use formats::mat::{MatFile, Matrix, Value};

mod layout;
mod paradigm;
pub mod resample;

pub use layout::{TRIAL_REPETITIONS, Trial};
pub use paradigm::{RUN_ROWS, Timing};

/// Sampling rate of the BNCI files.
pub const SOURCE_RATE: usize = 256;
/// The 8 EEG channels of rows 1–8 of a run, in file order. The files do not say;
/// Guger et al. 2009 name these channels and MOABB reads them in this order, and the
/// recordings agree (`docs/p300-data.md`: correlations between neighbours and the target
/// responses), up to a left–right mirror they cannot rule out.
pub const CHANNELS: [&str; 8] = ["Fz", "Cz", "P3", "Pz", "P4", "PO7", "Oz", "PO8"];
/// Lines of the matrix: 6 columns (ids 1–6), then 6 rows (ids 7–12).
pub const LINES: usize = 12;
/// Repetitions of the 12 lines per character.
pub const REPETITIONS: usize = 15;
pub const FLASHES_PER_CHARACTER: usize = REPETITIONS * LINES;
/// The relabelling's seed (fixed, so the output is the same bytes every time).
pub const SEED: u64 = 0x424E_4349_2015_0003;
/// The runs of a file and the blocks they become, in order.
pub const RUNS: [&str; 2] = ["train", "test"];

/// What went wrong.
#[derive(Debug, thiserror::Error)]
pub enum BnciError {
    #[error(transparent)]
    Mat(#[from] formats::mat::MatError),
    /// A problem with the data: the file, the place (`s6.train, sample 2452`) and what.
    #[error("{file}: {place}: {problem}")]
    Input {
        file: String,
        place: String,
        problem: String,
    },
    #[error(transparent)]
    Npy(#[from] formats::npy::NpyError),
    #[error("{dir}: {reason}")]
    OutDir { dir: String, reason: String },
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{first} and {second} both hold subject {subject}")]
    DuplicateSubject {
        subject: u32,
        first: String,
        second: String,
    },
}

/// One converted block, in memory.
#[derive(Clone)]
pub struct Block {
    /// The run it comes from: `s6.train`.
    pub source: String,
    /// Samples per row (250 Hz).
    pub samples: usize,
    /// [`p300::ROWS`] rows of `samples` values, row after row (the trigger row last).
    pub data: Vec<f32>,
    pub trials: Vec<Trial>,
    /// The run's measured timing, at 256 Hz.
    pub timing: Timing,
}

/// The summary, not the samples.
impl std::fmt::Debug for Block {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Block")
            .field("source", &self.source)
            .field("samples", &self.samples)
            .field("spelled", &self.spelled())
            .field("timing", &self.timing)
            .finish_non_exhaustive()
    }
}

impl Block {
    /// Row `r`.
    pub fn row(&self, r: usize) -> &[f32] {
        let start = r.saturating_mul(self.samples).min(self.data.len());
        let end = start.saturating_add(self.samples).min(self.data.len());
        &self.data[start..end]
    }

    /// The true target characters of its trials, in order.
    pub fn spelled(&self) -> String {
        self.trials.iter().map(|t| t.character).collect()
    }
}

/// One converted file: a subject's two blocks.
#[derive(Debug, Clone)]
pub struct Subject {
    /// N of the struct `sN`.
    pub number: u32,
    /// Its folder, `S06`.
    pub dir: String,
    /// `block_1` (train), `block_2` (test).
    pub blocks: Vec<Block>,
}

/// The subject number of a name `s<N>` (N 1–99), if it is one.
fn subject_number(name: &str) -> Option<u32> {
    let digits = name.strip_prefix('s')?;
    if digits.is_empty() || digits.len() > 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|n| (1..=99).contains(n))
}

/// The row of each BNCI channel in the output (its [`p300::CHANNELS`] index).
fn output_rows(file: &str) -> Result<[usize; 8], BnciError> {
    let mut rows = [0; 8];
    for (row, name) in rows.iter_mut().zip(CHANNELS) {
        *row = p300::CHANNELS
            .iter()
            .position(|&c| c == name)
            .ok_or_else(|| BnciError::Input {
                file: file.to_string(),
                place: "channels".into(),
                problem: format!("no Neuracle row for channel {name}"),
            })?;
    }
    Ok(rows)
}

/// Converts the MAT file `bytes`, called `name` in errors and told apart from other
/// subjects by its `sN` struct (and, when its file name is `sM.mat`, M must be N).
pub fn convert_bytes(bytes: &[u8], name: &str) -> Result<Subject, BnciError> {
    let file = MatFile::parse(bytes, name)?;
    let input = |place: &str, problem: String| BnciError::Input {
        file: name.to_string(),
        place: place.to_string(),
        problem,
    };
    let candidates: Vec<&str> = file
        .variables
        .iter()
        .filter(|v| subject_number(&v.name).is_some() && matches!(v.value, Value::Struct(_)))
        .map(|v| v.name.as_str())
        .collect();
    let variable = match candidates[..] {
        [one] => one.to_string(),
        _ => {
            let found: Vec<String> = file
                .variables
                .iter()
                .take(20)
                .map(|v| format!("{} ({})", v.name, v.value.describe()))
                .collect();
            return Err(input(
                "variables",
                format!(
                    "expected exactly one struct named s1 … s99, found {}",
                    if found.is_empty() {
                        "no variable".to_string()
                    } else {
                        found.join(", ")
                    }
                ),
            ));
        }
    };
    let number = subject_number(&variable).unwrap_or(0);
    let stem = Path::new(name)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("");
    if let Some(other) = subject_number(stem)
        && other != number
    {
        return Err(input(
            &variable,
            format!("the file is named for subject {other} but holds {variable}"),
        ));
    }
    let s = file.get(&variable)?;
    let mut blocks = Vec::with_capacity(RUNS.len());
    for (i, run) in RUNS.iter().enumerate() {
        let field = s.field(run)?;
        let matrix = field.as_f64_matrix()?;
        blocks.push(convert_run(name, field.path(), number, i + 1, &matrix)?);
    }
    Ok(Subject {
        number,
        dir: p300::subject_dir(number as usize),
        blocks,
    })
}

/// Reads and converts one `sN.mat` file.
pub fn convert_file(path: &Path) -> Result<Subject, BnciError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| BnciError::Io {
        path: name.clone(),
        source,
    })?;
    convert_bytes(&bytes, &name)
}

/// Converts one run (`variable`, e.g. `s6.train`, of `file`): block number `block` of
/// subject `subject` (both only seed the relabelling).
pub fn convert_run(
    file: &str,
    variable: &str,
    subject: u32,
    block: usize,
    m: &Matrix,
) -> Result<Block, BnciError> {
    let place = paradigm::Place { file, variable };
    let run = paradigm::read_run(&place, m)?;
    let rows = output_rows(file)?;
    let samples = resample::output_len(m.cols);
    let (events, trials) = layout::triggers(&place, &run, subject, block, samples)?;

    let total = p300::ROWS
        .checked_mul(samples)
        .ok_or_else(|| place.err(None, "too many samples"))?;
    let mut data = vec![0f32; total];
    let filter = resample::Resampler::new();
    for (k, &out_row) in rows.iter().enumerate() {
        let Some(source) = m.row(k + 1) else {
            return Err(place.err(None, format!("no EEG row {}", k + 1)));
        };
        let y = filter.run(&source);
        let dest = &mut data[out_row * samples..(out_row + 1) * samples];
        for (j, (d, &v)) in dest.iter_mut().zip(&y).enumerate() {
            *d = v as f32;
            if !d.is_finite() {
                return Err(place.err(
                    None,
                    format!(
                        "EEG row {} ({}) at 250 Hz sample {j}: {v} does not fit a float32",
                        k + 1,
                        CHANNELS[k]
                    ),
                ));
            }
        }
    }
    let trigger = &mut data[p300::TRIGGER_ROW * samples..];
    for &(pos, code) in &events {
        if let Some(t) = trigger.get_mut(pos) {
            *t = code as f32;
        }
    }
    Ok(Block {
        source: variable.to_string(),
        samples,
        data,
        trials,
        timing: run.timing,
    })
}

/// A block written by [`write`].
#[derive(Debug, Clone)]
pub struct Written {
    /// `S06/block_1.npy`, relative to the output folder.
    pub path: PathBuf,
    pub source: String,
    pub samples: usize,
    /// The true target character of each trial.
    pub spelled: String,
}

/// Creates `dir` if missing; it must be empty, so that no other set's files mix in.
fn prepare_dir(dir: &Path) -> Result<(), BnciError> {
    synth::prepare_out_dir(dir, "converted blocks are").map_err(|reason| BnciError::OutDir {
        dir: dir.display().to_string(),
        reason,
    })
}

/// Converts every file (all of them first, so that a bad one writes nothing), then
/// writes `<out>/S<NN>/block_1.npy` and `block_2.npy` per file into `out` (created if
/// missing, and it must be empty). Returns what was written, in the order of `files`.
pub fn write(out: &Path, files: &[PathBuf]) -> Result<Vec<Written>, BnciError> {
    let mut subjects: Vec<(String, Subject)> = Vec::with_capacity(files.len());
    for path in files {
        let subject = convert_file(path)?;
        let name = path.display().to_string();
        if let Some((first, _)) = subjects.iter().find(|(_, s)| s.number == subject.number) {
            return Err(BnciError::DuplicateSubject {
                subject: subject.number,
                first: first.clone(),
                second: name,
            });
        }
        subjects.push((name, subject));
    }
    prepare_dir(out)?;
    let mut written = Vec::new();
    for (_, subject) in subjects {
        let dir = out.join(&subject.dir);
        std::fs::create_dir(&dir).map_err(|source| BnciError::Io {
            path: dir.display().to_string(),
            source,
        })?;
        for (i, block) in subject.blocks.iter().enumerate() {
            let rel = Path::new(&subject.dir).join(format!("block_{}.npy", i + 1));
            formats::npy::write_f32(out.join(&rel), p300::ROWS, block.samples, &block.data)?;
            written.push(Written {
                path: rel,
                source: block.source.clone(),
                samples: block.samples,
                spelled: block.spelled(),
            });
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests;
