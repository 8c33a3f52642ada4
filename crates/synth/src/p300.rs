//! Online P300 speller blocks (`docs/challenges.md`, *BCI contest*) in the organiser
//! layout, stored as `.npy`: `<out>/S01/block_1.npy`, `<out>/S02/block_1.npy`, … (one block
//! per subject), each a float32 array of shape (65, n) at 250 Hz. Rows 0–63 are the 64
//! channels of the Neuracle cap in [`p300::CHANNELS`] order (in µV), row 64 the trigger
//! row: 0 except at event samples, which hold the event code.
//!
//! # Trial layout
//!
//! The `p300` crate's, to the sample (its documentation has the table): a block of
//! `chars` trials is [`p300::block_samples`]`(chars)` samples long, [`p300::LEAD`] of them
//! before the first trial and [`p300::TRIAL_SAMPLES`] (15.24 s) per trial, the last 250
//! after the final 241. Each trial opens with its target's true code 101–136 (the host
//! masks it to 101 when it streams), then 5 sequences of the 12 group codes, each sequence
//! in a fresh random order and followed by 200, then 241. The target of each trial is
//! drawn uniformly from the 36 characters.
//!
//! # Signal model
//!
//! Background, per subject: on every channel an AR(1) (first-order low-pass of white
//! noise) of its own, plus a slower AR(1) source shared by all channels (as a common
//! reference and volume conduction make it), a posterior alpha rhythm (8.5–11.5 Hz, with a
//! wandering envelope) and 50 Hz mains interference: the data are unfiltered, as the
//! organisers' are.
//!
//! Responses: every flash evokes a small visual response (P1/N1) over occipital channels;
//! a flash of either of the target's two groups also evokes a P300: a small N200 and a
//! positive Gaussian peak with a subject-specific latency (280–420 ms) and width (40–80 ms
//! σ), weighted toward central, parietal and occipital channels (Pz most, then POz, CP1,
//! CP2, P3, P4, PO3, PO4, Cz, ...). Each subject has its own amplitude (×0.6–1.4), a small
//! per-flash latency and amplitude jitter, and a rate (0–15 %) of target flashes that evoke
//! nothing (lapses), so that some subjects are harder than others. `snr` sets the
//! P300 peak at Pz of a subject of amplitude factor 1 to `snr` times the standard
//! deviation of that block's background at Pz (the other responses scale with it); at
//! `snr` 0 the block is background only. The ECG and EOG rows (ECG, HEOR, HEOL, VEOU,
//! VEOL) carry noise only.
//!
//! For scale, a plain decoder (the mean of Pz, POz, CP1, CP2, P3, P4, PO3, PO4 and Cz,
//! 250–500 ms after each flash minus the 100 ms before it, summed per group over the
//! sequences, a character scoring the sum of its two groups) picked the right character
//! in 6 subjects × 32 trials (seed 5) after 1 to 5 sequences:
//!
//! | snr | 1 | 2 | 3 | 4 | 5 |
//! |---|---|---|---|---|---|
//! | 1 | 19 % | 28 % | 33 % | 40 % | 46 % |
//! | 2 (default) | 34 % | 53 % | 70 % | 76 % | 80 % |
//! | 3 | 46 % | 71 % | 82 % | 85 % | 92 % |
//!
//! Filtering, spatial filters and a trained classifier do better.
//!
//! Determinism: the generator is the crate's SplitMix64 and the maths [`crate::dmath`], so
//! the same parameters give byte-identical files on every machine. Subject *k*'s block
//! depends only on the seed, *k*, `chars` and `snr`; its trigger row (targets and flash
//! orders) only on the seed and *k* (and `chars`, as a prefix).
//!
//! Not for: modelling real EEG faithfully (no artefacts, no non-stationarity beyond the
//! alpha envelope, no realistic covariance between channels), judging how an algorithm
//! does on real subjects, or writing the organisers' pickles (`.npy` is the project's
//! canonical block format).

use std::path::{Path, PathBuf};

use p300::{
    CHANNELS, FLASHES, GROUPS, LEAD, MATRIX, PZ, ROWS, SAMPLE_RATE, SEQUENCE_END,
    SEQUENCE_END_AFTER, SEQUENCES, TRIAL_END, TRIAL_SAMPLES, TRIGGER_ROW, block_samples,
    flash_offset, sequence_offset, subject_dir, target_code, trial_end_offset,
};

use crate::SynthError;
use crate::dmath;
use crate::rng::Rng;

/// What errors and folders call the challenge.
const CHALLENGE: &str = "p300speller";
/// Stream tag of this generator (kept apart from the other challenges' streams).
const TAG: u64 = 300;

/// Rows from here on are ECG and EOG, not EEG.
const FIRST_NON_EEG: usize = 59;

/// Limits of the parameters: subject folders keep two digits; a trial is ~0.99 MB of
/// float32, so 200 characters make a ~200 MB file.
pub const MAX_SUBJECTS: usize = 99;
pub const MAX_CHARS: usize = 200;
pub const MAX_SNR: f64 = 100.0;
/// The default `snr`: a P300 that a plain decoder reads after a few sequences, not one.
pub const DEFAULT_SNR: f64 = 2.0;
/// Characters per block by default (the contest's 32).
pub const DEFAULT_CHARS: usize = 32;

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct P300Params {
    /// Subjects, one block each: 1 to [`MAX_SUBJECTS`].
    pub subjects: usize,
    /// Characters (trials) per block: 1 to [`MAX_CHARS`].
    pub chars: usize,
    pub seed: u64,
    /// P300 peak at Pz over the background's standard deviation there (0 to
    /// [`MAX_SNR`]); see the module documentation.
    pub snr: f64,
}

impl Default for P300Params {
    fn default() -> Self {
        P300Params {
            subjects: 1,
            chars: DEFAULT_CHARS,
            seed: 0,
            snr: DEFAULT_SNR,
        }
    }
}

impl P300Params {
    /// Checks the limits, naming the parameter at fault.
    pub fn check(&self) -> Result<(), SynthError> {
        let bad = |reason: String| {
            Err(SynthError::BadParams {
                challenge: CHALLENGE,
                reason,
            })
        };
        if !(1..=MAX_SUBJECTS).contains(&self.subjects) {
            return bad(format!(
                "the number of subjects must be 1 to {MAX_SUBJECTS}, not {}",
                self.subjects
            ));
        }
        if !(1..=MAX_CHARS).contains(&self.chars) {
            return bad(format!(
                "the number of characters per block must be 1 to {MAX_CHARS}, not {}",
                self.chars
            ));
        }
        if !(self.snr.is_finite() && (0.0..=MAX_SNR).contains(&self.snr)) {
            return bad(format!(
                "the snr must be a number from 0 to {MAX_SNR}, not {}",
                self.snr
            ));
        }
        Ok(())
    }
}

/// One generated block, in memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    /// Samples per row.
    pub samples: usize,
    /// [`p300::ROWS`] rows of `samples` values, row after row (the trigger row last).
    pub data: Vec<f32>,
    /// The target of each trial, as a row-major index into [`p300::MATRIX`].
    pub targets: Vec<usize>,
}

impl Block {
    /// Row `r` (0–64).
    pub fn row(&self, r: usize) -> &[f32] {
        let start = r.saturating_mul(self.samples).min(self.data.len());
        let end = start.saturating_add(self.samples).min(self.data.len());
        &self.data[start..end]
    }
}

/// Writes one block per subject, `<out>/S01/block_1.npy`, … into `out` (created if
/// missing; it must be empty, so that no other set's files can mix in). Returns the files
/// written, in subject order.
pub fn write(out: &Path, params: &P300Params) -> Result<Vec<PathBuf>, SynthError> {
    params.check()?;
    crate::prepare_dir(out)?;
    let mut written = Vec::with_capacity(params.subjects);
    for subject in 1..=params.subjects {
        let b = block(params, subject)?;
        let dir = out.join(subject_dir(subject));
        std::fs::create_dir(&dir).map_err(|source| SynthError::Io {
            path: dir.clone(),
            source,
        })?;
        let path = dir.join("block_1.npy");
        formats::npy::write_f32(&path, ROWS, b.samples, &b.data)?;
        written.push(path);
    }
    Ok(written)
}

/// Generates subject `subject`'s block (1-based) in memory.
pub fn block(params: &P300Params, subject: usize) -> Result<Block, SynthError> {
    params.check()?;
    if !(1..=params.subjects).contains(&subject) {
        return Err(SynthError::BadParams {
            challenge: CHALLENGE,
            reason: format!("subject {subject} is not one of 1 to {}", params.subjects),
        });
    }
    let s = subject as u64;
    let person = Subject::draw(&mut Rng::derive(params.seed, &[TAG, s, 0]));
    let n = block_samples(params.chars);
    let layout = Layout::draw(&mut Rng::derive(params.seed, &[TAG, s, 1, 0]), params.chars);
    let shared = Shared::make(&mut Rng::derive(params.seed, &[TAG, s, 1, 3]), &person, n);
    let channel_rng = |c: usize| Rng::derive(params.seed, &[TAG, s, 1, 2, c as u64]);

    // The background at Pz first (each channel has its own stream, so the order does not
    // matter), to scale the responses to it.
    let pz = background(&mut channel_rng(PZ), &person, &shared, PZ, n);
    let amplitude = params.snr * person.amplitude * std_dev(&pz);
    let (p300, vep) = responses(
        &mut Rng::derive(params.seed, &[TAG, s, 1, 1]),
        &person,
        &layout,
        amplitude,
        n,
    );

    let mut data = Vec::with_capacity(ROWS * n);
    for c in 0..TRIGGER_ROW {
        let bg = if c == PZ {
            pz.clone()
        } else {
            background(&mut channel_rng(c), &person, &shared, c, n)
        };
        let (wp, wv) = (person.p300_weights[c], person.vep_weights[c]);
        data.extend(
            bg.iter()
                .zip(&p300)
                .zip(&vep)
                .map(|((&b, &p), &v)| (b + wp * p + wv * v) as f32),
        );
    }
    let mut trigger = vec![0f32; n];
    for &(pos, code) in &layout.events {
        if let Some(t) = trigger.get_mut(pos) {
            *t = code as f32;
        }
    }
    data.extend(trigger);
    Ok(Block {
        samples: n,
        data,
        targets: layout.targets,
    })
}

/// A subject's fixed traits.
struct Subject {
    /// Background: the base noise level (µV) and the per-channel AR(1) traits.
    noise: f64,
    channel_scale: [f64; 64],
    channel_ar: [f64; 64],
    shared_weight: [f64; 64],
    alpha_hz: f64,
    alpha_uv: f64,
    mains_uv: f64,
    /// P300 traits: latency and width (s), amplitude factor, lapse rate, N200 latency.
    latency: f64,
    width: f64,
    amplitude: f64,
    lapses: f64,
    n200: f64,
    /// Spatial weights of the P300 (Pz exactly 1) and of the visual response.
    p300_weights: [f64; 64],
    vep_weights: [f64; 64],
}

/// Relative P300 weight of the channels near its centro-parietal maximum (others 0.15).
const P300_TOPOGRAPHY: [(&str, f64); 33] = [
    ("Pz", 1.0),
    ("POz", 0.95),
    ("CP1", 0.9),
    ("CP2", 0.9),
    ("P3", 0.85),
    ("P4", 0.85),
    ("PO3", 0.85),
    ("PO4", 0.85),
    ("Cz", 0.8),
    ("CP3", 0.75),
    ("CP4", 0.75),
    ("C1", 0.7),
    ("C2", 0.7),
    ("PO5", 0.7),
    ("PO6", 0.7),
    ("PO7", 0.7),
    ("PO8", 0.7),
    ("P5", 0.65),
    ("P6", 0.65),
    ("Oz", 0.6),
    ("O1", 0.55),
    ("O2", 0.55),
    ("FCz", 0.5),
    ("C3", 0.5),
    ("C4", 0.5),
    ("CP5", 0.5),
    ("CP6", 0.5),
    ("P7", 0.45),
    ("P8", 0.45),
    ("FC1", 0.45),
    ("FC2", 0.45),
    ("Fz", 0.3),
    ("TP7", 0.3),
];

/// Relative weight of the visual response (P1/N1), occipital (others 0.05).
const VEP_TOPOGRAPHY: [(&str, f64); 17] = [
    ("Oz", 1.0),
    ("O1", 0.9),
    ("O2", 0.9),
    ("POz", 0.8),
    ("PO7", 0.8),
    ("PO8", 0.8),
    ("PO3", 0.7),
    ("PO4", 0.7),
    ("PO5", 0.7),
    ("PO6", 0.7),
    ("P7", 0.5),
    ("P8", 0.5),
    ("Pz", 0.4),
    ("P3", 0.4),
    ("P4", 0.4),
    ("P5", 0.4),
    ("P6", 0.4),
];

fn topography(table: &[(&str, f64)], default: f64, channel: usize) -> f64 {
    if channel >= FIRST_NON_EEG {
        return 0.0;
    }
    let name = CHANNELS.get(channel).copied().unwrap_or_default();
    table
        .iter()
        .find(|(n, _)| *n == name)
        .map_or(default, |&(_, w)| w)
}

impl Subject {
    fn draw(rng: &mut Rng) -> Subject {
        let noise = rng.range(6.0, 12.0);
        let mut s = Subject {
            noise,
            channel_scale: [1.0; 64],
            channel_ar: [0.95; 64],
            shared_weight: [0.0; 64],
            alpha_hz: rng.range(8.5, 11.5),
            alpha_uv: noise * rng.range(0.2, 0.6),
            mains_uv: rng.range(0.5, 3.0),
            latency: rng.range(0.28, 0.42),
            width: rng.range(0.04, 0.08),
            amplitude: rng.range(0.6, 1.4),
            lapses: rng.range(0.0, 0.15),
            n200: rng.range(0.18, 0.25),
            p300_weights: [0.0; 64],
            vep_weights: [0.0; 64],
        };
        for c in 0..64 {
            // The ECG and EOG rows see other sources: louder, and no evoked response.
            let non_eeg = if c >= FIRST_NON_EEG { 2.0 } else { 1.0 };
            s.channel_scale[c] = non_eeg * rng.range(0.8, 1.25);
            s.channel_ar[c] = rng.range(0.92, 0.97);
            s.shared_weight[c] = rng.range(0.5, 1.0);
            // Pz stays exactly 1: `snr` is defined there.
            let jitter = if c == PZ {
                1.0
            } else {
                (1.0 + 0.1 * rng.normal()).max(0.0)
            };
            s.p300_weights[c] = jitter * topography(&P300_TOPOGRAPHY, 0.15, c);
            s.vep_weights[c] =
                (1.0 + 0.1 * rng.normal()).max(0.0) * topography(&VEP_TOPOGRAPHY, 0.05, c);
        }
        s
    }
}

/// A block's trial structure: its events and targets.
struct Layout {
    /// (sample, trigger code) in time order.
    events: Vec<(usize, u32)>,
    targets: Vec<usize>,
    /// (sample, group 1–12) of every flash.
    flashes: Vec<(usize, u8)>,
    /// For each flash, whether its group holds the trial's target.
    is_target: Vec<bool>,
}

impl Layout {
    fn draw(rng: &mut Rng, chars: usize) -> Layout {
        let mut l = Layout {
            events: Vec::with_capacity(chars * (2 + SEQUENCES * (FLASHES + 1))),
            targets: Vec::with_capacity(chars),
            flashes: Vec::with_capacity(chars * SEQUENCES * FLASHES),
            is_target: Vec::with_capacity(chars * SEQUENCES * FLASHES),
        };
        for t in 0..chars {
            let t0 = LEAD + t * TRIAL_SAMPLES;
            let target = rng.int(0, MATRIX.len() as u64 - 1) as usize;
            let (g1, g2) = GROUPS[target.min(GROUPS.len() - 1)];
            l.targets.push(target);
            l.events.push((t0, target_code(target)));
            for s in 0..SEQUENCES {
                let start = t0 + sequence_offset(s);
                let mut order: [u8; FLASHES] = std::array::from_fn(|k| k as u8 + 1);
                // Fisher–Yates.
                for i in (1..FLASHES).rev() {
                    let j = rng.int(0, i as u64) as usize;
                    order.swap(i, j);
                }
                for (k, &group) in order.iter().enumerate() {
                    let pos = start + flash_offset(k);
                    l.events.push((pos, u32::from(group)));
                    l.flashes.push((pos, group));
                    l.is_target.push(group == g1 || group == g2);
                }
                l.events.push((start + SEQUENCE_END_AFTER, SEQUENCE_END));
            }
            l.events.push((t0 + trial_end_offset(), TRIAL_END));
        }
        l
    }
}

/// Sources every channel sees, one value per sample.
struct Shared {
    /// Slow AR(1), unit variance.
    common: Vec<f64>,
    /// Alpha rhythm (µV, before the channel weight).
    alpha: Vec<f64>,
    /// 50 Hz mains (µV).
    mains: Vec<f64>,
}

impl Shared {
    fn make(rng: &mut Rng, p: &Subject, n: usize) -> Shared {
        let fs = f64::from(SAMPLE_RATE);
        let tau = std::f64::consts::TAU;
        let a: f64 = 0.97;
        let drive = (1.0 - a * a).sqrt();
        let mut x = rng.normal();
        // The alpha envelope wanders with a ~4 s time constant.
        let ea: f64 = 1.0 - 1.0 / (4.0 * fs);
        let edrive = (1.0 - ea * ea).sqrt();
        let mut env = 0.0;
        let mut phase = rng.range(0.0, tau);
        let mains_phase = rng.range(0.0, tau);
        let mut s = Shared {
            common: Vec::with_capacity(n),
            alpha: Vec::with_capacity(n),
            mains: Vec::with_capacity(n),
        };
        for i in 0..n {
            x = a * x + drive * rng.noise();
            s.common.push(x);
            env = ea * env + edrive * rng.noise();
            phase = dmath::wrap_phase(phase + tau * p.alpha_hz / fs + 0.02 * rng.noise());
            s.alpha
                .push(p.alpha_uv * (1.0 + 0.5 * env).max(0.0) * dmath::sin(phase));
            // 50 Hz at 250 Hz repeats every 5 samples: no phase drift to keep.
            let m = mains_phase + tau * 50.0 * (i % 5) as f64 / fs;
            s.mains.push(p.mains_uv * dmath::sin(m));
        }
        s
    }
}

/// The background of channel `c`: its own AR(1) plus the shared sources.
fn background(rng: &mut Rng, p: &Subject, shared: &Shared, c: usize, n: usize) -> Vec<f64> {
    let a = p.channel_ar[c];
    let sigma = p.noise * p.channel_scale[c];
    let drive = sigma * (1.0 - a * a).sqrt();
    let common = 0.5 * p.noise * p.shared_weight[c];
    // Alpha is posterior: as strong as the visual response's topography says.
    let alpha = topography(&VEP_TOPOGRAPHY, 0.2, c);
    let mut x = sigma * rng.normal();
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        x = a * x + drive * rng.noise();
        let shared = common * shared.common.get(i).copied().unwrap_or(0.0)
            + alpha * shared.alpha.get(i).copied().unwrap_or(0.0)
            + shared.mains.get(i).copied().unwrap_or(0.0);
        out.push(x + shared);
    }
    out
}

/// Population standard deviation (0 for an empty slice).
fn std_dev(x: &[f64]) -> f64 {
    if x.is_empty() {
        return 0.0;
    }
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    (x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n).sqrt()
}

/// A Gaussian bump of unit height centred at `mu` s with σ `sigma` s, at `t` s.
fn bump(t: f64, mu: f64, sigma: f64) -> f64 {
    let z = (t - mu) / sigma;
    dmath::exp(-0.5 * z * z)
}

/// How long after a flash its responses are drawn (they are ~0 beyond).
const RESPONSE_SAMPLES: usize = 200;

/// The P300 source (peak `amplitude` at weight 1) and the visual response source, one
/// value per sample.
fn responses(
    rng: &mut Rng,
    p: &Subject,
    l: &Layout,
    amplitude: f64,
    n: usize,
) -> (Vec<f64>, Vec<f64>) {
    let fs = f64::from(SAMPLE_RATE);
    let mut p300 = vec![0.0; n];
    let mut vep = vec![0.0; n];
    for (&(pos, _), &target) in l.flashes.iter().zip(&l.is_target) {
        // Drawn for every flash, so that a flash's jitter does not depend on the others'.
        let vep_gain = amplitude * 0.3 * (1.0 + 0.2 * rng.normal()).max(0.0);
        let jitter = 0.012 * rng.normal();
        let gain = amplitude * (1.0 + 0.25 * rng.normal()).max(0.0);
        let lapse = rng.chance(p.lapses);
        let end = (pos + RESPONSE_SAMPLES).min(n);
        for (k, i) in (pos..end).enumerate() {
            let t = k as f64 / fs;
            vep[i] += vep_gain * (bump(t, 0.10, 0.015) - 0.8 * bump(t, 0.16, 0.02));
            if target && !lapse {
                p300[i] += gain
                    * (bump(t, p.latency + jitter, p.width)
                        - 0.3 * bump(t, p.n200 + jitter, 0.025));
            }
        }
    }
    (p300, vep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_non_eeg_rows_are_the_last_five() {
        assert_eq!(CHANNELS[FIRST_NON_EEG], "ECG");
        assert_eq!(CHANNELS.len() - FIRST_NON_EEG, 5);
    }

    fn small(chars: usize, snr: f64, seed: u64) -> P300Params {
        P300Params {
            subjects: 2,
            chars,
            seed,
            snr,
        }
    }

    #[test]
    fn the_trigger_row_has_the_exact_trial_layout() {
        let chars = 3;
        let b = block(&small(chars, 1.0, 7), 2).unwrap();
        assert_eq!(b.samples, 250 + chars * 3810);
        assert_eq!(b.data.len(), 65 * b.samples);
        let events: Vec<(usize, u32)> = b
            .row(TRIGGER_ROW)
            .iter()
            .enumerate()
            .filter(|(_, v)| **v != 0.0)
            .map(|(i, &v)| {
                assert_eq!(v.fract(), 0.0);
                (i, v as u32)
            })
            .collect();
        assert_eq!(events.len(), chars * 67);
        let mut it = events.iter().copied();
        let mut next = || it.next().unwrap();
        let mut t0 = 250;
        for t in 0..chars {
            let (pos, code) = next();
            assert_eq!(pos, t0, "trial {t} start");
            assert_eq!(code, 101 + b.targets[t] as u32);
            let mut first = t0 + 250;
            for s in 0..5 {
                let mut seen = Vec::new();
                let mut prev = None;
                for k in 0..12 {
                    let (pos, code) = next();
                    assert_eq!(
                        pos,
                        first + (k as f64 * 37.5).round() as usize,
                        "trial {t} seq {s} flash {k}"
                    );
                    if let Some(p) = prev {
                        assert!([37, 38].contains(&(pos - p)), "{}", pos - p);
                    }
                    prev = Some(pos);
                    seen.push(code);
                }
                seen.sort();
                assert_eq!(seen, (1..=12).collect::<Vec<u32>>(), "trial {t} seq {s}");
                assert_eq!(next(), (first + 450, 200), "trial {t} seq {s} end");
                // 150 ms after the 12th flash.
                assert_eq!(first + 450 - prev.unwrap(), 37);
                first += 450 + 212;
            }
            let (end, code) = next();
            assert_eq!((end, code), (first, 241), "trial {t} end");
            t0 = end + 250;
        }
        assert_eq!(t0, b.samples, "the block ends 1 s after the last 241");
        // Flash orders change between sequences.
        let orders: Vec<Vec<u32>> = events
            .iter()
            .filter(|e| e.1 <= 12)
            .map(|e| e.1)
            .collect::<Vec<_>>()
            .chunks(12)
            .map(<[u32]>::to_vec)
            .collect();
        assert!(orders.windows(2).any(|w| w[0] != w[1]));
        // The layout does not depend on the snr.
        let quiet = block(&small(chars, 0.0, 7), 2).unwrap();
        assert_eq!(quiet.row(TRIGGER_ROW), b.row(TRIGGER_ROW));
        assert_ne!(quiet.row(PZ), b.row(PZ));
    }

    /// Mean over epochs of `row` from `from` to `to` s after each flash of the kind asked.
    fn epoch_mean(b: &Block, row: usize, target: bool, from: f64, to: f64) -> (f64, usize) {
        let trig = b.row(TRIGGER_ROW);
        let x = b.row(row);
        let (a, z) = ((from * 250.0) as usize, (to * 250.0) as usize);
        let mut trial = 0usize;
        let (mut sum, mut count, mut epochs) = (0.0, 0usize, 0usize);
        for (i, &v) in trig.iter().enumerate() {
            let code = v as u32;
            if (101..=136).contains(&code) {
                trial = code as usize - 101;
                continue;
            }
            if !(1..=12).contains(&code) {
                continue;
            }
            let (g1, g2) = GROUPS[trial];
            if (code as u8 == g1 || code as u8 == g2) != target {
                continue;
            }
            // Baseline: the 100 ms before the flash.
            let base: f64 = x[i - 25..i].iter().map(|&v| f64::from(v)).sum::<f64>() / 25.0;
            for &v in &x[i + a..i + z] {
                sum += f64::from(v) - base;
                count += 1;
            }
            epochs += 1;
        }
        (sum / count as f64, epochs)
    }

    #[test]
    fn target_flashes_evoke_a_p300_at_pz() {
        let b = block(&small(4, 4.0, 11), 1).unwrap();
        let (t, nt) = (
            epoch_mean(&b, PZ, true, 0.25, 0.5),
            epoch_mean(&b, PZ, false, 0.25, 0.5),
        );
        assert_eq!(t.1, 4 * 5 * 2);
        assert_eq!(nt.1, 4 * 5 * 10);
        let pz_std = std_dev(&b.row(PZ).iter().map(|&v| f64::from(v)).collect::<Vec<_>>());
        assert!(
            t.0 - nt.0 > 0.8 * pz_std,
            "target {} non-target {} std {pz_std}",
            t.0,
            nt.0
        );
        // It is posterior: much smaller over the frontal pole, absent on the ECG row.
        let fpz = epoch_mean(&b, 0, true, 0.25, 0.5).0 - epoch_mean(&b, 0, false, 0.25, 0.5).0;
        assert!(fpz < 0.5 * (t.0 - nt.0), "{fpz}");
        // Without a response, targets and non-targets look alike.
        let q = block(&small(4, 0.0, 11), 1).unwrap();
        let d = epoch_mean(&q, PZ, true, 0.25, 0.5).0 - epoch_mean(&q, PZ, false, 0.25, 0.5).0;
        assert!(d.abs() < 0.3 * pz_std, "{d} vs {pz_std}");
    }

    #[test]
    fn parameters_are_checked() {
        let ok = P300Params::default();
        assert!(ok.check().is_ok());
        for (p, msg) in [
            (
                P300Params { subjects: 0, ..ok },
                "subjects must be 1 to 99, not 0",
            ),
            (
                P300Params {
                    subjects: 100,
                    ..ok
                },
                "not 100",
            ),
            (
                P300Params { chars: 0, ..ok },
                "characters per block must be 1 to 200, not 0",
            ),
            (P300Params { chars: 201, ..ok }, "not 201"),
            (
                P300Params { snr: -1.0, ..ok },
                "snr must be a number from 0 to 100, not -1",
            ),
            (
                P300Params {
                    snr: f64::NAN,
                    ..ok
                },
                "not NaN",
            ),
        ] {
            let e = p.check().unwrap_err().to_string();
            assert!(e.starts_with("p300speller: ") && e.contains(msg), "{e}");
        }
        let e = block(&ok, 2).unwrap_err().to_string();
        assert!(e.contains("subject 2 is not one of 1 to 1"), "{e}");
    }

    #[test]
    fn the_same_seed_writes_the_same_bytes() {
        let p = small(2, 1.0, 42);
        let (a, b, c) = (
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
        );
        let written = write(a.path(), &p).unwrap();
        assert_eq!(
            written,
            vec![
                a.path().join("S01/block_1.npy"),
                a.path().join("S02/block_1.npy")
            ]
        );
        write(b.path(), &p).unwrap();
        let fa = testkit::tree(a.path());
        assert_eq!(fa.len(), 2);
        assert_eq!(fa, testkit::tree(b.path()));
        write(c.path(), &P300Params { seed: 43, ..p }).unwrap();
        assert_ne!(fa, testkit::tree(c.path()));
        // The files hold the blocks, as float32 (65, n).
        let arr = formats::npy::read(a.path().join("S02/block_1.npy")).unwrap();
        let blk = block(&p, 2).unwrap();
        assert_eq!(arr.shape, vec![65, blk.samples]);
        assert_eq!(arr.dtype, formats::npy::Dtype::F4);
        assert!(
            arr.data
                .iter()
                .zip(&blk.data)
                .all(|(&x, &y)| x == f64::from(y))
        );
        // Subject k does not depend on how many subjects there are.
        let one = block(&P300Params { subjects: 1, ..p }, 1).unwrap();
        assert_eq!(one, block(&p, 1).unwrap());
        // A folder that is not empty is refused.
        let e = write(a.path(), &p).unwrap_err().to_string();
        assert!(e.contains("not empty"), "{e}");
    }

    /// The bytes written for seed 1, pinned: the maths is meant to be bit-stable across
    /// machines. If a change is deliberate, print the new digest with
    /// `cargo test -p synth p300::tests::pinned -- --nocapture` and update it.
    #[test]
    fn pinned_output_for_seed_1() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            &P300Params {
                subjects: 1,
                chars: 2,
                seed: 1,
                snr: 1.0,
            },
        )
        .unwrap();
        let d = testkit::digest(&testkit::tree(dir.path()));
        println!("p300speller: {d:#018x}");
        assert_eq!(d, 0x945c_12bb_887c_58ff);
    }
}
