//! The ECG model shared by CPSC 2021 and CinC 2017: a heart that fires beats (sinus rhythm
//! with respiratory variability and ectopic beats, atrial fibrillation, atrial flutter),
//! and leads that see each beat as a sum of Gaussian waves (P, Q, R, S, T), plus the
//! atrial activity of fibrillation and flutter, baseline wander and noise. Units are mV.

use std::f64::consts::TAU;

use formats::wfdb::annotation::codes;

use crate::dmath;
use crate::rng::Rng;

/// The rhythm a beat belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rhythm {
    Sinus,
    Af,
    Flutter,
}

impl Rhythm {
    /// Atrial fibrillation or flutter: what the challenges call AF.
    pub fn is_af(self) -> bool {
        self != Rhythm::Sinus
    }
}

/// How the ventricles were activated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BeatKind {
    /// Conducted from the atria (sinus, or through fibrillation/flutter): `N`.
    Normal,
    /// Premature atrial contraction: `A`.
    Apc,
    /// Premature ventricular contraction: `V`.
    Pvc,
}

impl BeatKind {
    /// The MIT annotation code of the beat.
    pub fn code(self) -> u8 {
        match self {
            BeatKind::Normal => codes::NORMAL,
            BeatKind::Apc => codes::APC,
            BeatKind::Pvc => codes::PVC,
        }
    }
}

/// One beat: the sample of its R peak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Beat {
    pub sample: usize,
    pub kind: BeatKind,
    pub rhythm: Rhythm,
}

/// A fixed pattern of ventricular ectopy (the "other rhythm" class of CinC 2017).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    None,
    /// Every second beat is a PVC.
    Bigeminy,
    /// Every third beat is a PVC.
    Trigeminy,
}

/// How the heart fires.
#[derive(Debug, Clone)]
pub struct Heart {
    /// Sinus rate (beats per minute).
    pub hr: f64,
    /// Relative RR modulation by respiration (respiratory sinus arrhythmia).
    pub rsa: f64,
    pub resp_hz: f64,
    /// Relative standard deviation of sinus RR intervals.
    pub jitter: f64,
    /// Mean ventricular rate in AF (beats per minute).
    pub hr_af: f64,
    /// Coefficient of variation of RR intervals in AF.
    pub af_cv: f64,
    /// Atrial rate in flutter (Hz).
    pub flutter_hz: f64,
    /// Probability that a sinus beat is a PAC, or a PVC.
    pub p_apc: f64,
    pub p_pvc: f64,
    pub pattern: Pattern,
    /// Shortest and longest RR interval allowed (s).
    pub rr_min: f64,
    pub rr_max: f64,
}

impl Heart {
    /// A heart with the given sinus rate and typical variability drawn from `rng`.
    pub fn typical(rng: &mut Rng, hr: f64) -> Heart {
        Heart {
            hr,
            rsa: rng.range(0.01, 0.05),
            resp_hz: rng.range(0.18, 0.33),
            jitter: rng.range(0.008, 0.025),
            hr_af: rng.range(75.0, 130.0),
            af_cv: rng.range(0.14, 0.30),
            flutter_hz: rng.range(4.2, 5.2),
            p_apc: rng.range(0.0, 0.01),
            p_pvc: rng.range(0.0, 0.006),
            pattern: Pattern::None,
            rr_min: 0.3,
            rr_max: 1.7,
        }
    }

    /// Beats with R peaks from sample `first` up to sample `last` (inclusive), at `fs`
    /// Hz; `rhythm_at(sample)` says which rhythm the heart is in.
    pub fn beats(
        &self,
        rng: &mut Rng,
        fs: f64,
        first: usize,
        last: usize,
        rhythm_at: &dyn Fn(usize) -> Rhythm,
    ) -> Vec<Beat> {
        let mut beats = Vec::new();
        let mut t = first as f64 / fs;
        let mut drift = 0.0f64;
        let mut pause: Option<f64> = None;
        let mut ratio = 2u32;
        let mut since_pvc = 0u32;
        let resp_phase = rng.range(0.0, TAU);
        let mut sample = first;
        let mut kind = BeatKind::Normal;
        loop {
            let rhythm = rhythm_at(sample);
            beats.push(Beat {
                sample,
                kind,
                rhythm,
            });
            drift = (drift + 0.004 * rng.normal()).clamp(-0.08, 0.08);
            let base = 60.0 / self.hr * (1.0 + drift);
            let resp = 1.0 + self.rsa * dmath::sin(TAU * self.resp_hz * t + resp_phase);
            let (rr, next_kind) = match rhythm {
                Rhythm::Sinus => {
                    let normal_rr = base * resp * (1.0 + self.jitter * rng.normal());
                    since_pvc += 1;
                    let pvc_due = match self.pattern {
                        Pattern::None => rng.chance(self.p_pvc),
                        Pattern::Bigeminy => since_pvc >= 2,
                        Pattern::Trigeminy => since_pvc >= 3,
                    };
                    if let Some(p) = pause.take() {
                        (p, BeatKind::Normal)
                    } else if pvc_due {
                        since_pvc = 0;
                        let early = normal_rr * rng.range(0.55, 0.75);
                        pause = Some(2.0 * normal_rr - early);
                        (early, BeatKind::Pvc)
                    } else if rng.chance(self.p_apc) {
                        let early = normal_rr * rng.range(0.6, 0.8);
                        pause = Some(normal_rr * rng.range(1.05, 1.25));
                        (early, BeatKind::Apc)
                    } else {
                        (normal_rr, BeatKind::Normal)
                    }
                }
                Rhythm::Af => {
                    pause = None;
                    let mean = 60.0 / self.hr_af * (1.0 + drift);
                    // Irregularly irregular: a skewed spread around the mean rate.
                    let x = rng.normal();
                    let rr = mean * (1.0 + self.af_cv * (x + 0.25 * x * x - 0.25));
                    let k = if rng.chance(self.p_pvc) {
                        BeatKind::Pvc
                    } else {
                        BeatKind::Normal
                    };
                    (rr, k)
                }
                Rhythm::Flutter => {
                    pause = None;
                    // Variable conduction: 2:1 mostly, runs of 3:1 and 4:1.
                    if rng.chance(0.3) {
                        ratio = [2, 2, 3, 4][rng.int(0, 3) as usize];
                    }
                    let rr = f64::from(ratio) / self.flutter_hz * (1.0 + 0.01 * rng.normal());
                    (rr, BeatKind::Normal)
                }
            };
            let rr = rr.clamp(self.rr_min, self.rr_max);
            t += rr;
            let next = (t * fs).round();
            if next > last as f64 {
                break;
            }
            sample = next as usize;
            kind = next_kind;
        }
        beats
    }
}

/// A Gaussian wave of a beat: centre (s from the R peak), width (s) and amplitude (mV).
#[derive(Debug, Clone, Copy)]
struct Wave {
    at: f64,
    width: f64,
    amp: f64,
}

/// When the waves of a beat come, the same in every lead.
#[derive(Debug, Clone)]
pub struct Timing {
    /// P wave centre before the R peak (s).
    pub pr: f64,
    /// QRS width factor (1 normal; about 2 in bundle-branch block).
    pub qrs: f64,
    /// T wave centre after the R peak (s).
    pub qt: f64,
    pub t_width: f64,
}

impl Timing {
    pub fn typical(rng: &mut Rng) -> Timing {
        Timing {
            pr: rng.range(0.13, 0.19),
            qrs: rng.range(0.9, 1.15),
            qt: rng.range(0.25, 0.32),
            t_width: rng.range(0.045, 0.065),
        }
    }
}

/// One lead's view of the beats and of the atria.
#[derive(Debug, Clone)]
pub struct Lead {
    normal: Vec<Wave>,
    apc_p: Wave,
    pvc: Vec<Wave>,
    /// Amplitude of fibrillatory waves, and of flutter waves (mV).
    pub f_amp: f64,
    pub flutter_amp: f64,
}

impl Lead {
    /// A lead whose R wave is `r_amp` mV high.
    pub fn new(rng: &mut Rng, timing: &Timing, r_amp: f64) -> Lead {
        let q = timing.qrs;
        let p = Wave {
            at: -timing.pr,
            width: rng.range(0.02, 0.028),
            amp: r_amp * rng.range(0.09, 0.18),
        };
        let normal = vec![
            p,
            Wave {
                at: -0.024 * q,
                width: 0.009 * q,
                amp: -r_amp * rng.range(0.04, 0.15),
            },
            Wave {
                at: 0.0,
                width: rng.range(0.009, 0.012) * q,
                amp: r_amp,
            },
            Wave {
                at: 0.026 * q,
                width: 0.01 * q,
                amp: -r_amp * rng.range(0.08, 0.35),
            },
            Wave {
                at: timing.qt,
                width: timing.t_width,
                amp: r_amp * rng.range(0.14, 0.35),
            },
        ];
        let apc_p = Wave {
            at: -timing.pr * rng.range(0.8, 0.95),
            width: p.width * 0.85,
            amp: p.amp * if rng.chance(0.3) { -0.6 } else { 0.7 },
        };
        let sign = if rng.chance(0.7) { 1.0 } else { -1.0 };
        let pvc = vec![
            Wave {
                at: 0.0,
                width: rng.range(0.028, 0.04),
                amp: sign * r_amp * rng.range(1.1, 1.8),
            },
            Wave {
                at: 0.06,
                width: 0.035,
                amp: -sign * r_amp * rng.range(0.2, 0.5),
            },
            Wave {
                at: timing.qt + 0.04,
                width: timing.t_width * 1.4,
                amp: -sign * r_amp * rng.range(0.3, 0.5),
            },
        ];
        Lead {
            normal,
            apc_p,
            pvc,
            f_amp: r_amp * rng.range(0.04, 0.12),
            flutter_amp: r_amp * rng.range(0.12, 0.22),
        }
    }
}

/// Template window around the R peak (s).
const BEFORE: f64 = 0.45;
const AFTER: f64 = 0.7;

fn template(waves: &[Wave], fs: f64) -> Vec<f64> {
    let n = ((BEFORE + AFTER) * fs).round() as usize + 1;
    (0..n)
        .map(|i| {
            let t = i as f64 / fs - BEFORE;
            waves
                .iter()
                .map(|w| {
                    let z = (t - w.at) / w.width;
                    if z.abs() > 6.0 {
                        0.0
                    } else {
                        w.amp * dmath::exp(-0.5 * z * z)
                    }
                })
                .sum()
        })
        .collect()
}

/// Maximal runs of AF beats: `(first index, last index, rhythm of the first)`.
pub fn af_runs(beats: &[Beat]) -> Vec<(usize, usize, Rhythm)> {
    let mut runs = Vec::new();
    let mut i = 0;
    while i < beats.len() {
        if beats[i].rhythm.is_af() {
            let mut j = i;
            while j + 1 < beats.len() && beats[j + 1].rhythm.is_af() {
                j += 1;
            }
            runs.push((i, j, beats[i].rhythm));
            i = j + 1;
        } else {
            i += 1;
        }
    }
    runs
}

/// An Ornstein–Uhlenbeck process of unit variance and correlation time `tau` (s), `n`
/// samples at `fs` Hz: a slowly wandering value.
pub fn wander(rng: &mut Rng, n: usize, fs: f64, tau: f64) -> Vec<f64> {
    let a = 1.0 / (tau * fs);
    let k = (2.0 * a).sqrt();
    let mut x = rng.normal();
    (0..n)
        .map(|_| {
            x += -a * x + k * rng.noise();
            x
        })
        .collect()
}

/// The atrial activity every lead sees, in units of each lead's `f_amp`/`flutter_amp`:
/// fibrillatory waves (4–9 Hz, wandering frequency and amplitude) during AF runs and a
/// sawtooth at the flutter rate during flutter runs, faded in and out over 0.2 s.
/// Returns (fibrillation, flutter).
pub fn atrial(
    rng: &mut Rng,
    beats: &[Beat],
    heart: &Heart,
    fs: f64,
    len: usize,
) -> (Vec<f64>, Vec<f64>) {
    let mut fib = vec![0.0; len];
    let mut flut = vec![0.0; len];
    let runs = af_runs(beats);
    if runs.is_empty() {
        return (fib, flut);
    }
    let mut gate_f = vec![0.0; len];
    let mut gate_l = vec![0.0; len];
    let ramp = 0.2 * fs;
    for &(i, j, rhythm) in &runs {
        let start = beats[i].sample as f64 - 0.4 * fs;
        let end = beats[j].sample as f64 + 0.3 * fs;
        let from = start.max(0.0) as usize;
        let to = (end.max(0.0) as usize).min(len);
        let gate = if rhythm == Rhythm::Flutter {
            &mut gate_l
        } else {
            &mut gate_f
        };
        for (n, g) in gate.iter_mut().enumerate().take(to).skip(from) {
            let x = n as f64;
            let v = ((x - start) / ramp).min((end - x) / ramp).clamp(0.0, 1.0);
            *g = v.max(*g);
        }
    }
    let f0 = rng.range(4.5, 8.0);
    let freq = wander(rng, len, fs, 3.0);
    let amp = wander(rng, len, fs, 1.5);
    let theta = rng.range(0.0, TAU);
    let mut phase = rng.range(0.0, TAU);
    let mut fphase = rng.range(0.0, TAU);
    for n in 0..len {
        let f = (f0 + 0.8 * freq[n]).clamp(3.5, 9.5);
        phase = dmath::wrap_phase(phase + TAU * f / fs);
        fphase = dmath::wrap_phase(fphase + TAU * heart.flutter_hz / fs);
        if gate_f[n] > 0.0 {
            let a = (1.0 + 0.35 * amp[n]).max(0.2);
            fib[n] =
                gate_f[n] * a * (dmath::sin(phase) + 0.35 * dmath::sin(2.0 * phase + theta)) / 1.1;
        }
        if gate_l[n] > 0.0 {
            // A smoothed sawtooth: the first three harmonics of a falling ramp.
            let s = dmath::sin(fphase)
                + dmath::sin(2.0 * fphase) / 2.0
                + dmath::sin(3.0 * fphase) / 3.0;
            flut[n] = gate_l[n] * s / 1.7;
        }
    }
    (fib, flut)
}

/// Noise and wander of one lead (mV).
#[derive(Debug, Clone)]
pub struct Noise {
    /// Amplitude of the baseline wander.
    pub wander: f64,
    /// Standard deviation of the white (instrument) noise.
    pub white: f64,
    /// Bursts of muscle noise: how many, and their standard deviation.
    pub bursts: usize,
    pub burst_sd: f64,
}

/// What every lead of a record sees: the beats and the atrial activity.
pub struct Scene<'a> {
    pub heart: &'a Heart,
    pub beats: &'a [Beat],
    /// Fibrillatory and flutter waves (see [`atrial`]).
    pub fib: &'a [f64],
    pub flut: &'a [f64],
    pub fs: f64,
    pub len: usize,
}

/// One lead's signal (mV): the beats as this lead sees them, the atrial activity, then
/// baseline wander and noise.
pub fn render(rng: &mut Rng, lead: &Lead, noise: &Noise, scene: &Scene<'_>) -> Vec<f64> {
    let Scene {
        heart,
        beats,
        fib,
        flut,
        fs,
        len,
    } = *scene;
    let mut x = vec![0.0; len];
    let mut no_p = lead.normal.clone();
    no_p.remove(0);
    let mut apc = no_p.clone();
    apc.push(lead.apc_p);
    let t_normal = template(&lead.normal, fs);
    let t_no_p = template(&no_p, fs);
    let t_apc = template(&apc, fs);
    let t_pvc = template(&lead.pvc, fs);
    let before = (BEFORE * fs).round() as i64;
    let resp_phase = rng.range(0.0, TAU);
    for b in beats {
        let t = b.sample as f64 / fs;
        // Amplitude breathes with respiration, and varies a little from beat to beat.
        let a = 1.0 + 0.06 * dmath::sin(TAU * heart.resp_hz * t + resp_phase) + 0.02 * rng.normal();
        let tpl = match (b.kind, b.rhythm) {
            (BeatKind::Pvc, _) => &t_pvc,
            (_, Rhythm::Af | Rhythm::Flutter) => &t_no_p,
            (BeatKind::Apc, Rhythm::Sinus) => &t_apc,
            (BeatKind::Normal, Rhythm::Sinus) => &t_normal,
        };
        let start = b.sample as i64 - before;
        for (k, v) in tpl.iter().enumerate() {
            let n = start + k as i64;
            if n >= 0 && (n as usize) < len {
                x[n as usize] += a * v;
            }
        }
    }
    for n in 0..len {
        x[n] += lead.f_amp * fib[n] + lead.flutter_amp * flut[n];
    }
    // Baseline wander: two respiratory-band sinusoids and a slow random drift.
    let comps: Vec<(f64, f64, f64)> = (0..2)
        .map(|_| {
            (
                rng.range(0.05, 0.4),
                noise.wander * rng.range(0.3, 1.0),
                rng.range(0.0, TAU),
            )
        })
        .collect();
    let drift = wander(rng, len, fs, 4.0);
    for (n, v) in x.iter_mut().enumerate() {
        let t = n as f64 / fs;
        let mut w = 0.3 * noise.wander * drift[n];
        for &(f, a, ph) in &comps {
            w += a * dmath::sin(TAU * f * t + ph);
        }
        *v += w + noise.white * rng.noise();
    }
    // Muscle noise bursts of 0.5–4 s, faded in and out.
    for _ in 0..noise.bursts {
        let dur = rng.range(0.5, 4.0) * fs;
        let start = rng.range(0.0, len as f64);
        let end = (start + dur).min(len as f64);
        let sd = noise.burst_sd * rng.range(0.5, 1.0);
        let (from, to) = (start as usize, end as usize);
        for (n, v) in x.iter_mut().enumerate().take(to).skip(from) {
            let u = (n as f64 - start) / dur;
            let env = dmath::sin(std::f64::consts::PI * u.clamp(0.0, 1.0));
            *v += sd * env * rng.noise();
        }
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rr_cv(beats: &[Beat], fs: f64) -> f64 {
        let rr: Vec<f64> = beats
            .windows(2)
            .map(|w| (w[1].sample - w[0].sample) as f64 / fs)
            .collect();
        let m = rr.iter().sum::<f64>() / rr.len() as f64;
        let v = rr.iter().map(|r| (r - m) * (r - m)).sum::<f64>() / rr.len() as f64;
        v.sqrt() / m
    }

    #[test]
    fn af_is_irregular_and_sinus_is_not() {
        let fs = 200.0;
        for seed in 0..10 {
            let mut rng = Rng::new(seed);
            let mut heart = Heart::typical(&mut rng, 70.0);
            heart.p_apc = 0.0;
            heart.p_pvc = 0.0;
            let sinus = heart.beats(&mut rng, fs, 30, 60_000, &|_| Rhythm::Sinus);
            let af = heart.beats(&mut rng, fs, 30, 60_000, &|_| Rhythm::Af);
            assert!(rr_cv(&sinus, fs) < 0.07, "{}", rr_cv(&sinus, fs));
            assert!(rr_cv(&af, fs) > 0.12, "{}", rr_cv(&af, fs));
            for b in [&sinus, &af] {
                assert_eq!(b[0].sample, 30);
                assert!(b.windows(2).all(|w| w[1].sample - w[0].sample >= 60));
                assert!(b.last().unwrap().sample <= 60_000);
            }
        }
    }

    #[test]
    fn patterns_place_ventricular_beats() {
        let mut rng = Rng::new(3);
        let mut heart = Heart::typical(&mut rng, 70.0);
        heart.p_apc = 0.0;
        heart.pattern = Pattern::Bigeminy;
        let b = heart.beats(&mut rng, 300.0, 0, 9000, &|_| Rhythm::Sinus);
        let pvcs = b.iter().filter(|b| b.kind == BeatKind::Pvc).count();
        assert!(
            pvcs * 2 + 2 >= b.len() && pvcs * 2 <= b.len() + 1,
            "{pvcs} of {}",
            b.len()
        );
        heart.pattern = Pattern::Trigeminy;
        let b = heart.beats(&mut rng, 300.0, 0, 9000, &|_| Rhythm::Sinus);
        let pvcs = b.iter().filter(|b| b.kind == BeatKind::Pvc).count();
        assert!(
            pvcs * 3 + 3 >= b.len() && pvcs * 3 <= b.len() + 2,
            "{pvcs} of {}",
            b.len()
        );
    }

    #[test]
    fn runs_are_found() {
        let beat = |r| Beat {
            sample: 0,
            kind: BeatKind::Normal,
            rhythm: r,
        };
        let b: Vec<Beat> = [0, 1, 1, 0, 2, 2, 2]
            .iter()
            .map(|&k| beat([Rhythm::Sinus, Rhythm::Af, Rhythm::Flutter][k]))
            .collect();
        assert_eq!(
            af_runs(&b),
            vec![(1, 2, Rhythm::Af), (4, 6, Rhythm::Flutter)]
        );
    }
}
