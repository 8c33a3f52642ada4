//! Reading one BNCI run (an 11 × n matrix) into its flashes, characters and targets, with
//! every check the conversion relies on.

use formats::mat::Matrix;

use crate::{BnciError, FLASHES_PER_CHARACTER, LINES, REPETITIONS, SOURCE_RATE};

/// Rows of a run matrix: time, 8 EEG channels, flash id, target flag.
pub const RUN_ROWS: usize = 11;
pub(crate) const TIME_ROW: usize = 0;
pub(crate) const FLASH_ROW: usize = 9;
pub(crate) const TARGET_ROW: usize = 10;

/// One flash: a run of samples holding the same nonzero line id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flash {
    /// First sample (0-based, 256 Hz).
    pub onset: usize,
    /// Samples the id is held.
    pub len: usize,
    /// The line: 1–6 columns left to right, 7–12 rows top to bottom.
    pub line: u8,
    /// Flagged as containing the target.
    pub target: bool,
}

/// One spelled character: 15 repetitions of the 12 lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Character {
    /// Index of its first flash in [`Run::flashes`].
    pub first_flash: usize,
    /// The flagged column (1–6) and row (7–12).
    pub column: u8,
    pub row: u8,
    /// Row-major index in [`p300::MATRIX`].
    pub index: usize,
}

/// Timing of a run, as measured (samples at 256 Hz).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// Samples in the run.
    pub samples: usize,
    /// Shortest and longest a flash id is held.
    pub flash_len: (usize, usize),
    /// The most common onset-to-onset interval within a repetition (the SOA), and the
    /// shortest and longest interval between successive flashes of a character
    /// (repetition boundaries included).
    pub soa: usize,
    pub soa_range: (usize, usize),
    /// Shortest and longest interval from a character's last flash onset to the next
    /// character's first (`None` with one character).
    pub character_gap: Option<(usize, usize)>,
    /// The first and last flash onsets.
    pub first_onset: usize,
    pub last_onset: usize,
}

/// A checked run.
#[derive(Debug, Clone)]
pub struct Run {
    pub flashes: Vec<Flash>,
    pub characters: Vec<Character>,
    pub timing: Timing,
}

/// Errors about this run name the file and the variable (`s6.train`).
pub(crate) struct Place<'a> {
    pub file: &'a str,
    pub variable: &'a str,
}

impl Place<'_> {
    pub fn err(&self, at: Option<usize>, problem: impl Into<String>) -> BnciError {
        BnciError::Input {
            file: self.file.to_string(),
            place: match at {
                Some(s) => format!("{}, sample {s}", self.variable),
                None => self.variable.to_string(),
            },
            problem: problem.into(),
        }
    }
}

/// A value of the flash or target row as a small whole number.
fn small_int(v: f64) -> Option<u8> {
    (v.is_finite() && v.fract() == 0.0 && (0.0..=255.0).contains(&v)).then_some(v as u8)
}

/// Checks `m` and finds its flashes and characters.
pub(crate) fn read_run(place: &Place<'_>, m: &Matrix) -> Result<Run, BnciError> {
    if m.rows != RUN_ROWS {
        return Err(place.err(
            None,
            format!(
                "a run must have {RUN_ROWS} rows (time, 8 EEG channels, flash id, target \
                 flag), found {} × {}",
                m.rows, m.cols
            ),
        ));
    }
    if m.data.len() != m.rows.saturating_mul(m.cols) {
        return Err(place.err(None, "the matrix holds fewer values than its size says"));
    }
    let n = m.cols;
    if n == 0 {
        return Err(place.err(None, "the run has no samples"));
    }
    let at = |r: usize, c: usize| m.data.get(c * RUN_ROWS + r).copied().unwrap_or(f64::NAN);

    // The time row: 1/256 s per sample, no gaps.
    let t0 = at(TIME_ROW, 0);
    for c in 0..n {
        let t = at(TIME_ROW, c);
        let want = t0 + c as f64 / SOURCE_RATE as f64;
        if !(t - want).abs().le(&(0.25 / SOURCE_RATE as f64)) {
            return Err(place.err(
                Some(c),
                format!(
                    "the time row says {t:?} s, but samples 1/{SOURCE_RATE} s apart from \
                     {t0:?} s put this one at {want:?} s (a gap, or another sampling rate)"
                ),
            ));
        }
    }
    for c in 0..n {
        for r in 1..=8 {
            let v = at(r, c);
            if !v.is_finite() {
                return Err(place.err(
                    Some(c),
                    format!("EEG row {r}: {v:?} is not a finite number"),
                ));
            }
        }
    }

    // Flashes: runs of equal nonzero ids.
    let mut flashes: Vec<Flash> = Vec::new();
    let mut open: Option<Flash> = None;
    for c in 0..n {
        let line = small_int(at(FLASH_ROW, c))
            .filter(|&l| usize::from(l) <= LINES)
            .ok_or_else(|| {
                place.err(
                    Some(c),
                    format!(
                        "flash id {:?} is not 0 (no flash) or a line 1–12",
                        at(FLASH_ROW, c)
                    ),
                )
            })?;
        let flag = match small_int(at(TARGET_ROW, c)) {
            Some(0) => false,
            Some(1) => true,
            _ => {
                return Err(place.err(
                    Some(c),
                    format!("target flag {:?} is not 0 or 1", at(TARGET_ROW, c)),
                ));
            }
        };
        if line == 0 && flag {
            return Err(place.err(Some(c), "the target flag is set while no line flashes"));
        }
        match open.as_mut() {
            Some(f) if f.line == line => {
                if f.target != flag {
                    return Err(place.err(
                        Some(c),
                        format!(
                            "the target flag changes within the flash of line {line} that \
                             began at sample {}",
                            f.onset
                        ),
                    ));
                }
                f.len += 1;
            }
            _ => {
                flashes.extend(open.take());
                if line != 0 {
                    open = Some(Flash {
                        onset: c,
                        len: 1,
                        line,
                        target: flag,
                    });
                }
            }
        }
    }
    flashes.extend(open.take());

    if flashes.is_empty() || !flashes.len().is_multiple_of(FLASHES_PER_CHARACTER) {
        return Err(place.err(
            None,
            format!(
                "{} flashes is not a whole number of characters of {REPETITIONS} \
                 repetitions × {LINES} lines",
                flashes.len()
            ),
        ));
    }

    let mut characters = Vec::with_capacity(flashes.len() / FLASHES_PER_CHARACTER);
    for (c, chunk) in flashes.chunks(FLASHES_PER_CHARACTER).enumerate() {
        characters.push(read_character(place, c, chunk)?);
    }
    let timing = measure(&flashes, n);
    Ok(Run {
        flashes,
        characters,
        timing,
    })
}

/// Checks one character's flashes (every repetition flashes each line once; each line is
/// flagged on all its flashes or on none; one column and one row are flagged) and finds
/// its target.
fn read_character(place: &Place<'_>, c: usize, flashes: &[Flash]) -> Result<Character, BnciError> {
    let first = flashes.first().map_or(0, |f| f.onset);
    let name = format!("character {}", c + 1);
    for (r, rep) in flashes.chunks(LINES).enumerate() {
        let mut seen = [false; LINES + 1];
        for f in rep {
            let slot = &mut seen[usize::from(f.line)];
            if *slot {
                return Err(place.err(
                    Some(f.onset),
                    format!(
                        "{name}, repetition {}: line {} flashes twice (a repetition must \
                         flash each of the {LINES} lines once)",
                        r + 1,
                        f.line
                    ),
                ));
            }
            *slot = true;
        }
    }
    let mut flagged = [None::<bool>; LINES + 1];
    for f in flashes {
        match flagged[usize::from(f.line)] {
            Some(t) if t != f.target => {
                return Err(place.err(
                    Some(f.onset),
                    format!(
                        "{name}: line {} is flagged as target on some of its flashes but \
                         not on this one",
                        f.line
                    ),
                ));
            }
            _ => flagged[usize::from(f.line)] = Some(f.target),
        }
    }
    let lines: Vec<u8> = (1..=LINES as u8)
        .filter(|&l| flagged[usize::from(l)] == Some(true))
        .collect();
    let (columns, rows): (Vec<u8>, Vec<u8>) = lines.iter().partition(|&&l| l <= 6);
    let (&[column], &[row]) = (&columns[..], &rows[..]) else {
        return Err(place.err(
            Some(first),
            format!(
                "{name}: the target flags mark lines {lines:?}, not one column (1–6) and one \
                 row (7–12)"
            ),
        ));
    };
    Ok(Character {
        first_flash: c * FLASHES_PER_CHARACTER,
        column,
        row,
        index: usize::from(row - 7) * 6 + usize::from(column - 1),
    })
}

fn measure(flashes: &[Flash], samples: usize) -> Timing {
    let lens = flashes.iter().map(|f| f.len);
    let within: Vec<usize> = flashes
        .chunks(FLASHES_PER_CHARACTER)
        .flat_map(|c| c.windows(2).map(|w| w[1].onset - w[0].onset))
        .collect();
    let in_repetition: Vec<usize> = flashes
        .chunks(LINES)
        .flat_map(|c| c.windows(2).map(|w| w[1].onset - w[0].onset))
        .collect();
    let gaps: Vec<usize> = flashes
        .chunks(FLASHES_PER_CHARACTER)
        .collect::<Vec<_>>()
        .windows(2)
        .filter_map(|w| Some(w[1].first()?.onset - w[0].last()?.onset))
        .collect();
    let range = |v: &[usize]| Some((v.iter().copied().min()?, v.iter().copied().max()?));
    Timing {
        samples,
        flash_len: (lens.clone().min().unwrap_or(0), lens.max().unwrap_or(0)),
        soa: mode(&in_repetition),
        soa_range: range(&within).unwrap_or((0, 0)),
        character_gap: range(&gaps),
        first_onset: flashes.first().map_or(0, |f| f.onset),
        last_onset: flashes.last().map_or(0, |f| f.onset),
    }
}

/// The most common value (the smallest of equally common ones; 0 for none).
fn mode(v: &[usize]) -> usize {
    let mut sorted = v.to_vec();
    sorted.sort_unstable();
    let mut best = (0, 0usize);
    let mut i = 0;
    while i < sorted.len() {
        let j = sorted[i..].iter().take_while(|&&x| x == sorted[i]).count();
        if j > best.1 {
            best = (sorted[i], j);
        }
        i += j;
    }
    best.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_picks_the_most_common() {
        assert_eq!(mode(&[]), 0);
        assert_eq!(mode(&[20, 20, 19, 21, 20]), 20);
        assert_eq!(mode(&[3, 2, 3, 2]), 2);
    }
}
