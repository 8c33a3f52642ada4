//! 256 Hz → 250 Hz: an exact 125/128 polyphase FIR (upsample by 125, low-pass, keep every
//! 128th sample), computed directly at the output times.
//!
//! Output sample `j` lies at `t = j · 128/125` input samples. Its value is
//! `Σ h(k − t) · x[k]` over the [`TAPS`] input samples `k` nearest to `t`, where `h` is a
//! Kaiser-windowed sinc (β [`KAISER_BETA`], −6 dB at [`CUTOFF_HZ`]): a sinusoid up to
//! 100 Hz keeps its amplitude and phase to within 5·10⁻⁵, and from 124 Hz on it is at
//! least 80 dB down, so nothing above the new Nyquist frequency (125 Hz) folds back. The fractional part of `t` takes only 125 values, so
//! the filter is 125 fixed sets of taps (the polyphase branches); each set is scaled to
//! sum to exactly 1, so a constant signal (the recordings' DC offsets) comes out
//! unchanged. Past the ends of the input the first and last samples are repeated.
//!
//! The taps are made with [`synth::dmath::sin`] and the sums run in a fixed order, so the
//! output is the same bits on every machine with IEEE doubles.

use synth::dmath;

/// Input and output rates (Hz).
pub const INPUT_RATE: usize = 256;
pub const OUTPUT_RATE: usize = 250;
/// 250/256 in lowest terms: up by 125, down by 128.
const UP: usize = 125;
const DOWN: usize = 128;
/// Taps each side of an output time, in input samples.
pub const HALF_TAPS: usize = 32;
/// Taps per output sample.
pub const TAPS: usize = 2 * HALF_TAPS;
/// Where the filter is 6 dB down (Hz, at 256 Hz input).
pub const CUTOFF_HZ: f64 = 112.5;
/// Kaiser window shape (about 86 dB stopband).
pub const KAISER_BETA: f64 = 8.6;

/// Samples of the output for `n` input samples: those whose time is within the input's
/// span, `⌊(n − 1) · 125/128⌋ + 1` (0 for no input).
pub fn output_len(n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    // (n − 1) · 125 overflows only beyond 2^57 samples: saturate rather than wrap.
    (n - 1).saturating_mul(UP) / DOWN + 1
}

/// The output sample nearest in time to input sample `i`: `round(i · 250/256)`, halves
/// up.
pub fn nearest_output(i: usize) -> usize {
    let scaled = (i as u128) * (UP as u128) + (DOWN as u128) / 2;
    usize::try_from(scaled / DOWN as u128).unwrap_or(usize::MAX)
}

/// The filter: one set of [`TAPS`] taps per phase.
pub struct Resampler {
    phases: Vec<[f64; TAPS]>,
}

impl Default for Resampler {
    fn default() -> Self {
        Self::new()
    }
}

/// I0(x), the modified Bessel function of the first kind, by its power series.
fn bessel_i0(x: f64) -> f64 {
    let q = x * x / 4.0;
    let (mut sum, mut term) = (1.0, 1.0);
    for k in 1..200 {
        let k = f64::from(k);
        term *= q / (k * k);
        sum += term;
        if term < sum * 1e-17 {
            break;
        }
    }
    sum
}

impl Resampler {
    pub fn new() -> Resampler {
        let fc = CUTOFF_HZ / INPUT_RATE as f64; // cycles per input sample
        let i0_beta = bessel_i0(KAISER_BETA);
        let pi = std::f64::consts::PI;
        let phases = (0..UP)
            .map(|phase| {
                let frac = phase as f64 / UP as f64;
                let mut taps = [0.0; TAPS];
                for (k, tap) in taps.iter_mut().enumerate() {
                    // Offset of input sample (m − HALF_TAPS + 1 + k) from the output time
                    // m + frac: within (−HALF_TAPS, HALF_TAPS].
                    let u = (k as f64 + 1.0 - HALF_TAPS as f64) - frac;
                    let x = 2.0 * fc * u;
                    let sinc = if x == 0.0 {
                        1.0
                    } else {
                        dmath::sin(pi * x) / (pi * x)
                    };
                    let v = u / HALF_TAPS as f64;
                    let window = bessel_i0(KAISER_BETA * (1.0 - v * v).max(0.0).sqrt()) / i0_beta;
                    *tap = sinc * window;
                }
                let sum: f64 = taps.iter().sum();
                for tap in &mut taps {
                    *tap /= sum;
                }
                taps
            })
            .collect();
        Resampler { phases }
    }

    /// `x` (at 256 Hz) at 250 Hz: [`output_len`]`(x.len())` samples, sample `j` at time
    /// `j / 250` s when `x[i]` is at `i / 256` s.
    pub fn run(&self, x: &[f64]) -> Vec<f64> {
        let n = x.len();
        let len = output_len(n);
        let mut out = Vec::with_capacity(len);
        let last = n.saturating_sub(1) as i64;
        for j in 0..len {
            let pos = j as u128 * DOWN as u128;
            let m = (pos / UP as u128) as i64;
            let phase = (pos % UP as u128) as usize;
            let Some(taps) = self.phases.get(phase) else {
                break;
            };
            let first = m - HALF_TAPS as i64 + 1;
            let mut acc = 0.0;
            for (k, &tap) in taps.iter().enumerate() {
                let i = (first + k as i64).clamp(0, last) as usize;
                acc += tap * x.get(i).copied().unwrap_or(0.0);
            }
            out.push(acc);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sine(n: usize, rate: f64, hz: f64, phase: f64) -> Vec<f64> {
        (0..n)
            .map(|i| (std::f64::consts::TAU * hz * i as f64 / rate + phase).sin())
            .collect()
    }

    /// Largest error against the exact sinusoid away from the ends (where the repeated
    /// edge samples are not the sinusoid's continuation).
    fn interior_error(hz: f64, phase: f64) -> f64 {
        let n = 2560;
        let y = Resampler::new().run(&sine(n, 256.0, hz, phase));
        let want = sine(y.len(), 250.0, hz, phase);
        let margin = HALF_TAPS + 2;
        y.iter()
            .zip(&want)
            .skip(margin)
            .take(y.len() - 2 * margin)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max)
    }

    #[test]
    fn lengths_and_positions() {
        assert_eq!(output_len(0), 0);
        assert_eq!(output_len(1), 1);
        assert_eq!(output_len(128), 125);
        assert_eq!(output_len(129), 126);
        // s6.train: 25327 samples at 256 Hz (98.93 s).
        assert_eq!(output_len(25327), 24733);
        assert_eq!(Resampler::new().run(&[]), Vec::<f64>::new());
        assert_eq!(nearest_output(0), 0);
        assert_eq!(nearest_output(128), 125);
        // 20 samples (one BNCI SOA) is 19.53 output samples.
        assert_eq!(nearest_output(20), 20);
        assert_eq!(nearest_output(40), 39);
        // 2452 · 250/256 = 2394.53 → 2395; 64 · 125/128 = 62.5 → 63 (halves up).
        assert_eq!(nearest_output(2452), 2395);
        assert_eq!(nearest_output(64), 63);
        assert_eq!(nearest_output(usize::MAX), usize::MAX / 128 * 125 + 124);
    }

    /// Sinusoids up to 100 Hz come out within 5·10⁻⁵ of the amplitude of the exact
    /// sinusoid at the new times: amplitude within 5·10⁻⁵ (relative), phase within
    /// 5·10⁻⁵ rad. (Measured: at most 2.3·10⁻⁵.)
    #[test]
    fn sinusoids_keep_amplitude_and_phase() {
        for hz in [0.5, 1.0, 10.0, 12.5, 40.0, 50.0, 80.0, 100.0] {
            for phase in [0.0, 1.0, 2.5] {
                let e = interior_error(hz, phase);
                assert!(e < 5e-5, "{hz} Hz, phase {phase}: error {e}");
            }
        }
    }

    /// What would fold back (above 124 Hz) is suppressed by at least 80 dB.
    #[test]
    fn no_aliasing() {
        for hz in [124.0, 125.0, 126.0, 127.5] {
            let y = Resampler::new().run(&sine(2560, 256.0, hz, 0.4));
            let margin = HALF_TAPS + 2;
            let peak = y[margin..y.len() - margin]
                .iter()
                .fold(0.0f64, |a, &b| a.max(b.abs()));
            assert!(peak < 1e-4, "{hz} Hz: {peak}");
        }
    }

    #[test]
    fn dc_offsets_are_kept_exactly_up_to_the_ends() {
        let y = Resampler::new().run(&vec![-1234.5; 700]);
        assert_eq!(y.len(), output_len(700));
        assert!(y.iter().all(|&v| (v + 1234.5).abs() < 1e-9), "{y:?}");
        // Each phase sums to 1.
        for taps in Resampler::new().phases {
            assert!((taps.iter().sum::<f64>() - 1.0).abs() < 1e-14);
        }
        // A short input works too (every tap reaches past the ends).
        let y = Resampler::new().run(&[3.0, 3.0, 3.0]);
        assert_eq!(y.len(), 2);
        assert!(y.iter().all(|&v| (v - 3.0).abs() < 1e-12));
    }

    #[test]
    fn deterministic() {
        let x = sine(1000, 256.0, 7.0, 0.1);
        let a = Resampler::new().run(&x);
        let b = Resampler::new().run(&x);
        assert!(a.iter().zip(&b).all(|(p, q)| p.to_bits() == q.to_bits()));
    }
}
