//! PhysioNet 2022 (heart murmur and clinical outcome): a CirCor DigiScope
//! `training_data` folder, laid out as the challenge's training set is
//! (`docs/challenges.md`, checked on the patients of `../shared/data`):
//!
//! - `<pid>.txt`: `<pid> <n> 4000`, one `<loc> <pid>_<loc>.hea <…>.wav <…>.tsv` line per
//!   recording (sites in the order AV, PV, TV, MV, Phc; `_1`, `_2` for a site recorded
//!   twice), then the 21 `#Key: value` lines in the training files' order (Age, Sex,
//!   Height, Weight, Pregnancy status, Murmur, Murmur locations, Most audible location,
//!   five systolic and five diastolic murmur fields, Outcome, Campaign, Additional ID),
//!   LF line ends.
//! - `<pid>_<loc>.wav`: 16-bit mono PCM at 4000 Hz, 10–20 s.
//! - `<pid>_<loc>.hea`: `<rec> 1 4000 <n>` and `<rec>.wav 16+44 1 16 0 0 0 0 <site>`, CRLF.
//! - `<pid>_<loc>.tsv`: `start<TAB>end<TAB>state` (0 unannotated, 1 S1, 2 systole, 3 S2,
//!   4 diastole), from 0 to the recording's end.
//!
//! Murmur classes come in shuffled blocks of ten: 5 Absent, 3 Present, 2 Unknown. A
//! Present patient's systolic murmur (rarely an early-diastolic one) is band-limited noise
//! at its pitch, shaped by its timing and shape, as loud as its grade, and heard only at
//! the listed locations (loudest at the most audible one). Some Absent patients have a
//! faint innocent flow noise in early systole. Unknown patients' recordings are buried in
//! noise (friction, movement, crying). The outcome is Abnormal for about 75% of Present,
//! 55% of Unknown and 35% of Absent patients, whose hearts also beat a little faster.

use std::f64::consts::{PI, TAU};
use std::path::Path;

use formats::circor::{
    AgeGroup, Campaign, DiastolicGrade, DiastolicTiming, Murmur, MurmurShape, Outcome, PatientFile,
    PatientInfo, Pitch, Quality, Recording, Segment, SegmentState, Segmentation, Sex, Site,
    SystolicGrade, SystolicTiming,
};
use formats::wav::write_pcm16;
use formats::wfdb::{Format, Header, RecordLine, SignalSpec};

use crate::dmath;
use crate::rng::Rng;
use crate::{Challenge, Summary, SynthError};

const FS: f64 = 4000.0;
const TAG: u64 = 2022;

const PATTERN: [Murmur; 10] = [
    Murmur::Absent,
    Murmur::Absent,
    Murmur::Absent,
    Murmur::Absent,
    Murmur::Absent,
    Murmur::Present,
    Murmur::Present,
    Murmur::Present,
    Murmur::Unknown,
    Murmur::Unknown,
];

/// Where in systole (or diastole) a murmur sits, as fractions of the interval.
fn window(timing: SystolicTiming) -> (f64, f64) {
    match timing {
        SystolicTiming::Holo => (0.0, 1.0),
        SystolicTiming::Early => (0.0, 0.55),
        SystolicTiming::Mid => (0.2, 0.8),
        SystolicTiming::Late => (0.45, 1.0),
    }
}

/// The loudness of a murmur over its window, `v` in [0, 1].
fn shape(shape: MurmurShape, v: f64) -> f64 {
    let edge = (v / 0.08).min((1.0 - v) / 0.08).clamp(0.0, 1.0);
    let s = match shape {
        MurmurShape::Plateau => 1.0,
        MurmurShape::Crescendo => 0.25 + 0.75 * v,
        MurmurShape::Decrescendo => 1.0 - 0.75 * v,
        MurmurShape::Diamond => 1.0 - (2.0 * v - 1.0).abs() * 0.8,
    };
    s * edge
}

/// A murmur as heard at one recording site.
#[derive(Debug, Clone, Copy)]
struct MurmurSound {
    diastolic: bool,
    window: (f64, f64),
    shape: MurmurShape,
    /// Loudness relative to S1.
    amp: f64,
    /// Centre frequency (Hz) and quality factor of its band.
    freq: f64,
    q: f64,
    /// Share of a pure tone in the sound (musical murmurs).
    tone: f64,
}

/// What a patient is, and how each site sounds.
struct Patient {
    id: String,
    info: PatientInfo,
    sites: Vec<(Site, Option<u32>)>,
    hr: f64,
    /// The murmur (or innocent flow noise) heard at each site, by index in `sites`.
    sounds: Vec<Option<MurmurSound>>,
    noisy: bool,
}

fn age_and_size(rng: &mut Rng) -> (Option<AgeGroup>, Option<f64>, Option<f64>, f64) {
    let ages = [
        Some(AgeGroup::Neonate),
        Some(AgeGroup::Infant),
        Some(AgeGroup::Child),
        Some(AgeGroup::Adolescent),
        Some(AgeGroup::YoungAdult),
        None,
    ];
    let age = ages[rng.weighted(&[0.06, 0.3, 0.52, 0.09, 0.01, 0.02])];
    // Height (cm), weight (kg) and heart rate ranges by age group.
    let (h, w, hr) = match age {
        Some(AgeGroup::Neonate) => ((45.0, 55.0), (2.5, 4.5), (120.0, 160.0)),
        Some(AgeGroup::Infant) => ((55.0, 85.0), (4.0, 12.0), (100.0, 145.0)),
        Some(AgeGroup::Child) => ((85.0, 150.0), (11.0, 45.0), (70.0, 120.0)),
        Some(AgeGroup::Adolescent) => ((145.0, 180.0), (35.0, 75.0), (60.0, 95.0)),
        Some(AgeGroup::YoungAdult) => ((150.0, 185.0), (45.0, 85.0), (55.0, 90.0)),
        None => ((50.0, 170.0), (3.0, 70.0), (60.0, 130.0)),
    };
    let u = rng.uniform();
    let height = (age.is_some() && rng.chance(0.93)).then(|| (h.0 + u * (h.1 - h.0)).round());
    let weight = (age.is_some() && rng.chance(0.93)).then(|| {
        let w = w.0 + (u + rng.range(-0.15, 0.15)).clamp(0.0, 1.0) * (w.1 - w.0);
        (w * 10.0).round() / 10.0
    });
    (age, height, weight, rng.range(hr.0, hr.1))
}

fn sites(rng: &mut Rng) -> Vec<(Site, Option<u32>)> {
    let all = [Site::Av, Site::Pv, Site::Tv, Site::Mv];
    let n = [4, 3, 2, 1][rng.weighted(&[0.45, 0.15, 0.25, 0.15])];
    let mut chosen: Vec<Site> = all.to_vec();
    while chosen.len() > n {
        let k = rng.int(0, chosen.len() as u64 - 1) as usize;
        chosen.remove(k);
    }
    if rng.chance(0.03) {
        chosen.push(Site::Phc);
    }
    let twice = rng.chance(0.04).then(|| rng.pick(&chosen));
    let mut out = Vec::new();
    for s in chosen {
        if Some(s) == twice {
            out.push((s, Some(1)));
            out.push((s, Some(2)));
        } else {
            out.push((s, None));
        }
    }
    out
}

fn band(rng: &mut Rng, pitch: Pitch) -> f64 {
    match pitch {
        Pitch::Low => rng.range(60.0, 120.0),
        Pitch::Medium => rng.range(120.0, 250.0),
        Pitch::High => rng.range(250.0, 450.0),
    }
}

impl Patient {
    fn new(seed: u64, index: u64, murmur: Murmur) -> Patient {
        let mut rng = Rng::derive(seed, &[TAG, index]);
        let id = (40_000 + 13 * index + rng.int(0, 12)).to_string();
        let (age, height_cm, weight_kg, mut hr) = age_and_size(&mut rng);
        let sex = if rng.chance(0.5) {
            Sex::Female
        } else {
            Sex::Male
        };
        let grown = matches!(
            age,
            None | Some(AgeGroup::Adolescent | AgeGroup::YoungAdult)
        );
        let pregnant = sex == Sex::Female && grown && rng.chance(0.3);
        let sites = sites(&mut rng);
        let p_abnormal = match murmur {
            Murmur::Present => 0.75,
            Murmur::Unknown => 0.55,
            Murmur::Absent => 0.35,
        };
        let outcome = if rng.chance(p_abnormal) {
            hr *= rng.range(1.0, 1.12);
            Outcome::Abnormal
        } else {
            Outcome::Normal
        };
        let mut info = PatientInfo {
            age,
            sex: Some(sex),
            height_cm,
            weight_kg,
            pregnant: Some(pregnant),
            murmur: Some(murmur),
            outcome: Some(outcome),
            campaign: Some(if rng.chance(0.8) {
                Campaign::Cc2015
            } else {
                Campaign::Cc2014
            }),
            additional_id: rng
                .chance(0.15)
                .then(|| (30_000 + rng.int(0, 50_000)).to_string()),
            ..PatientInfo::default()
        };
        let mut sounds = vec![None; sites.len()];
        match murmur {
            Murmur::Present => {
                let heard: Vec<usize> = loop {
                    let h: Vec<usize> = (0..sites.len()).filter(|_| rng.chance(0.6)).collect();
                    if !h.is_empty() {
                        break h;
                    }
                };
                let loudest = heard[rng.int(0, heard.len() as u64 - 1) as usize];
                let mut locations: Vec<Site> = heard.iter().map(|&k| sites[k].0).collect();
                locations.sort_by_key(|s| s.as_str());
                locations.dedup();
                info.murmur_locations = Some(locations);
                info.most_audible_location = Some(sites[loudest].0);
                let pitch =
                    [Pitch::Low, Pitch::Medium, Pitch::High][rng.weighted(&[0.4, 0.35, 0.25])];
                let quality = [Quality::Harsh, Quality::Blowing, Quality::Musical]
                    [rng.weighted(&[0.5, 0.45, 0.05])];
                let diastolic = rng.chance(0.05);
                let (timing, form, grade_amp) = if diastolic {
                    info.diastolic.timing = Some(DiastolicTiming::Early);
                    info.diastolic.shape = Some(MurmurShape::Decrescendo);
                    info.diastolic.grading = Some(DiastolicGrade::Grade1);
                    info.diastolic.pitch = Some(pitch);
                    info.diastolic.quality = Some(Quality::Blowing);
                    (
                        SystolicTiming::Early,
                        MurmurShape::Decrescendo,
                        rng.range(0.14, 0.25),
                    )
                } else {
                    let timing = [
                        SystolicTiming::Holo,
                        SystolicTiming::Early,
                        SystolicTiming::Mid,
                        SystolicTiming::Late,
                    ][rng.weighted(&[0.5, 0.35, 0.1, 0.05])];
                    let form = [
                        MurmurShape::Plateau,
                        MurmurShape::Diamond,
                        MurmurShape::Decrescendo,
                        MurmurShape::Crescendo,
                    ][rng.weighted(&[0.5, 0.2, 0.2, 0.1])];
                    let (grade, amp) = match rng.weighted(&[0.5, 0.3, 0.2]) {
                        0 => (SystolicGrade::Grade1, rng.range(0.15, 0.25)),
                        1 => (SystolicGrade::Grade2, rng.range(0.25, 0.4)),
                        _ => (SystolicGrade::Grade3, rng.range(0.4, 0.6)),
                    };
                    info.systolic.timing = Some(timing);
                    info.systolic.shape = Some(form);
                    info.systolic.grading = Some(grade);
                    info.systolic.pitch = Some(pitch);
                    info.systolic.quality = Some(quality);
                    (timing, form, amp)
                };
                let freq = band(&mut rng, pitch);
                for &k in &heard {
                    let here = if k == loudest {
                        1.0
                    } else {
                        rng.range(0.55, 0.9)
                    };
                    sounds[k] = Some(MurmurSound {
                        diastolic,
                        window: window(timing),
                        shape: form,
                        amp: grade_amp * here,
                        freq,
                        q: rng.range(0.8, 1.6),
                        tone: if quality == Quality::Musical {
                            0.5
                        } else {
                            0.0
                        },
                    });
                }
            }
            Murmur::Absent if rng.chance(0.3) => {
                // An innocent flow noise: faint, early, low-pitched, at one or two sites.
                for sound in sounds.iter_mut() {
                    if rng.chance(0.5) {
                        *sound = Some(MurmurSound {
                            diastolic: false,
                            window: (0.0, rng.range(0.3, 0.5)),
                            shape: MurmurShape::Decrescendo,
                            amp: rng.range(0.03, 0.08),
                            freq: rng.range(70.0, 140.0),
                            q: 1.0,
                            tone: 0.0,
                        });
                    }
                }
            }
            Murmur::Unknown if rng.chance(0.4) => {
                // Perhaps a murmur nobody could grade under the noise.
                let freq = rng.range(80.0, 300.0);
                for sound in sounds.iter_mut() {
                    *sound = Some(MurmurSound {
                        diastolic: false,
                        window: (0.0, 1.0),
                        shape: MurmurShape::Plateau,
                        amp: rng.range(0.1, 0.3),
                        freq,
                        q: 1.2,
                        tone: 0.0,
                    });
                }
            }
            _ => {}
        }
        Patient {
            id,
            info,
            sites,
            hr,
            sounds,
            noisy: murmur == Murmur::Unknown,
        }
    }
}

/// A heart sound: damped oscillations at `freq` Hz under a smooth bump peaking at `tau`
/// seconds, peak 1.
fn burst(freq: f64, tau: f64, phase: f64) -> Vec<f64> {
    let n = (6.0 * tau * FS) as usize;
    let mut v: Vec<f64> = (0..n)
        .map(|i| {
            let t = i as f64 / FS;
            let x = t / tau;
            x * x * dmath::exp(2.0 * (1.0 - x)) * dmath::sin(TAU * freq * t + phase)
        })
        .collect();
    let peak = v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    if peak > 0.0 {
        v.iter_mut().for_each(|x| *x /= peak);
    }
    v
}

fn add(x: &mut [f64], at: f64, sound: &[f64], gain: f64) {
    let start = (at * FS).round() as usize;
    for (k, s) in sound.iter().enumerate() {
        if let Some(v) = x.get_mut(start + k) {
            *v += gain * s;
        }
    }
}

/// White noise through a band-pass biquad (RBJ cookbook, 0 dB peak), unit RMS.
fn band_noise(rng: &mut Rng, n: usize, freq: f64, q: f64) -> Vec<f64> {
    let w0 = TAU * freq / FS;
    let alpha = dmath::sin(w0) / (2.0 * q);
    let a0 = 1.0 + alpha;
    let (b0, b2) = (alpha / a0, -alpha / a0);
    let (a1, a2) = (-2.0 * dmath::cos(w0) / a0, (1.0 - alpha) / a0);
    let (mut x1, mut x2, mut y1, mut y2) = (0.0, 0.0, 0.0, 0.0);
    let mut out = Vec::with_capacity(n);
    let mut energy = 0.0;
    for _ in 0..n {
        let x0 = rng.noise();
        let y0 = b0 * x0 + b2 * x2 - a1 * y1 - a2 * y2;
        x2 = x1;
        x1 = x0;
        y2 = y1;
        y1 = y0;
        energy += y0 * y0;
        out.push(y0);
    }
    let rms = (energy / n.max(1) as f64).sqrt();
    if rms > 0.0 {
        out.iter_mut().for_each(|v| *v /= rms);
    }
    out
}

/// One cardiac cycle: S1 start, S1 end, S2 start, S2 end, next S1 start (s).
type Cycle = [f64; 5];

/// One recording: its samples and its segmentation.
fn recording(rng: &mut Rng, patient: &Patient, site: usize) -> (Vec<i16>, Vec<Segment>) {
    let seconds = rng.range(10.0, 20.0);
    let n = (seconds * FS).round() as usize;
    let dur = n as f64 / FS;
    let site_kind = patient.sites[site].0;

    // The cycles.
    let resp_hz = rng.range(0.2, 0.5);
    let resp_phase = rng.range(0.0, TAU);
    let s1_len = rng.range(0.09, 0.14);
    let s2_len = rng.range(0.08, 0.11);
    let mut cycles: Vec<Cycle> = Vec::new();
    let mut t = rng.range(0.1, 0.8);
    let period = 60.0 / patient.hr;
    while t < dur {
        let breath = dmath::sin(TAU * resp_hz * t + resp_phase);
        let rr = period * (1.0 + 0.04 * breath + 0.025 * rng.normal());
        let s1 = s1_len.min(0.25 * rr);
        let s2_at = (0.42 * rr + 0.04).min(0.36) * (1.0 + 0.02 * rng.normal());
        let s2 = s2_len.min(0.2 * rr);
        cycles.push([t, t + s1, t + s2_at, t + s2_at + s2, t + rr]);
        t += rr;
    }

    // Heart sounds.
    let mut x = vec![0.0; n];
    let m1 = burst(
        rng.range(35.0, 70.0),
        rng.range(0.008, 0.013),
        rng.range(0.0, TAU),
    );
    let t1 = burst(
        rng.range(35.0, 70.0),
        rng.range(0.008, 0.013),
        rng.range(0.0, TAU),
    );
    let a2 = burst(
        rng.range(50.0, 100.0),
        rng.range(0.006, 0.011),
        rng.range(0.0, TAU),
    );
    let p2 = burst(
        rng.range(50.0, 100.0),
        rng.range(0.006, 0.011),
        rng.range(0.0, TAU),
    );
    let t1_gap = rng.range(0.01, 0.025);
    let t1_amp = rng.range(0.4, 0.8);
    let s2_amp = match site_kind {
        Site::Av | Site::Pv => rng.range(0.8, 1.3),
        Site::Mv | Site::Tv => rng.range(0.4, 0.8),
        Site::Phc => rng.range(0.5, 1.0),
    };
    let p2_amp = rng.range(0.4, 0.8);
    let contact = if patient.noisy {
        rng.range(0.3, 0.8)
    } else {
        1.0
    };
    for c in &cycles {
        let breath = dmath::sin(TAU * resp_hz * c[0] + resp_phase);
        let a = contact * (1.0 + 0.08 * rng.normal()).max(0.3);
        add(&mut x, c[0] + 0.005, &m1, a);
        add(&mut x, c[0] + 0.005 + t1_gap, &t1, a * t1_amp);
        let b = a * s2_amp * (1.0 + 0.08 * rng.normal()).max(0.3);
        let split = 0.02 + 0.012 * breath;
        add(&mut x, c[2] + 0.003, &a2, b);
        add(&mut x, c[2] + 0.003 + split, &p2, b * p2_amp);
    }

    // The murmur, or flow noise.
    if let Some(m) = patient.sounds[site] {
        let noise = band_noise(rng, n, m.freq, m.q);
        let mut phase = rng.range(0.0, TAU);
        let step = TAU * m.freq / FS;
        for c in &cycles {
            let (from, to) = if m.diastolic {
                (c[3], c[4] - 0.02)
            } else {
                (c[1] - 0.01, c[2] + 0.005)
            };
            let span = to - from;
            let (w0, w1) = m.window;
            let (start, end) = (from + w0 * span, from + w1 * span);
            let beat_amp = contact * m.amp * (1.0 + 0.1 * rng.normal()).max(0.3);
            let (i0, i1) = ((start * FS) as usize, ((end * FS) as usize).min(n));
            for i in i0..i1 {
                let v = (i as f64 / FS - start) / (end - start);
                phase = dmath::wrap_phase(phase + step);
                let src = (1.0 - m.tone) * noise[i] + m.tone * 1.4 * dmath::sin(phase);
                x[i] += beat_amp * shape(m.shape, v) * src;
            }
        }
    }

    // Background: body and breath sounds, stethoscope noise, and bursts of friction or
    // movement; for Unknown patients, much more of it and some crying.
    let (floor, bursts, burst_sd) = if patient.noisy {
        (
            rng.range(0.08, 0.4),
            rng.int(4, 10) as usize,
            rng.range(0.6, 2.0),
        )
    } else {
        (
            rng.range(0.012, 0.05),
            rng.int(0, 2) as usize,
            rng.range(0.1, 0.5),
        )
    };
    let a = 1.0 - dmath::exp(-TAU * 150.0 / FS);
    let mut low = 0.0;
    for v in x.iter_mut() {
        // White noise and its low-passed self (body sounds): one draw per sample.
        let w = rng.noise();
        low += a * (w - low);
        *v += floor * (0.6 * w + 2.0 * low);
    }
    for _ in 0..bursts {
        let len = rng.range(0.2, 1.5);
        let start = rng.range(0.0, dur);
        let sd = burst_sd * rng.range(0.5, 1.0);
        let (i0, i1) = (
            (start * FS) as usize,
            (((start + len) * FS) as usize).min(n),
        );
        for (i, v) in x.iter_mut().enumerate().take(i1).skip(i0) {
            let u = (i as f64 / FS - start) / len;
            *v += sd * dmath::sin(PI * u) * rng.noise();
        }
    }
    if patient.noisy {
        for _ in 0..rng.int(1, 3) {
            let len = rng.range(0.5, 2.5);
            let start = rng.range(0.0, dur);
            let f0 = rng.range(300.0, 550.0);
            let amp = rng.range(0.4, 1.5);
            let mut phase = 0.0;
            let (i0, i1) = (
                (start * FS) as usize,
                (((start + len) * FS) as usize).min(n),
            );
            for (i, v) in x.iter_mut().enumerate().take(i1).skip(i0) {
                let u = (i as f64 / FS - start) / len;
                let f = f0 * (1.0 + 0.05 * dmath::sin(TAU * 5.0 * u * len));
                phase = dmath::wrap_phase(phase + TAU * f / FS);
                let voice = dmath::sin(phase)
                    + 0.5 * dmath::sin(2.0 * phase)
                    + 0.25 * dmath::sin(3.0 * phase);
                *v += amp * dmath::sin(PI * u) * voice;
            }
        }
    }

    let scale = rng.range(5000.0, 14000.0);
    let samples = x
        .iter()
        .map(|&v| (v * scale).round().clamp(-32768.0, 32767.0) as i16)
        .collect();
    (samples, segmentation(rng, &cycles, dur, patient.noisy))
}

/// Rounds a time to the microsecond, as the real files write it.
fn us(t: f64) -> f64 {
    (t * 1e6).round() / 1e6
}

/// The segmentation of the complete cycles (all of them, or a stretch for a noisy or
/// partly annotated recording), unannotated elsewhere.
fn segmentation(rng: &mut Rng, cycles: &[Cycle], dur: f64, noisy: bool) -> Vec<Segment> {
    let complete: Vec<&Cycle> = cycles.iter().filter(|c| c[4] <= dur).collect();
    let (from, to) = if complete.len() < 3 {
        (0, complete.len())
    } else if noisy {
        let k = complete.len();
        let len = rng.int((k as u64 * 3 / 10).max(1), (k as u64 * 8 / 10).max(1)) as usize;
        let from = rng.int(0, (k - len) as u64) as usize;
        (from, from + len)
    } else if rng.chance(0.25) {
        (
            0,
            rng.int(complete.len() as u64 / 2, complete.len() as u64) as usize,
        )
    } else {
        (0, complete.len())
    };
    let mut segs = Vec::new();
    let mut t = 0.0;
    let mut push = |start: f64, end: f64, state: SegmentState| {
        let (start, end) = (us(start), us(end));
        if end > start {
            segs.push(Segment {
                start_s: start,
                end_s: end,
                state,
            });
        }
    };
    for c in &complete[from..to] {
        push(t, c[0], SegmentState::Unannotated);
        push(c[0], c[1], SegmentState::S1);
        push(c[1], c[2], SegmentState::Systole);
        push(c[2], c[3], SegmentState::S2);
        push(c[3], c[4], SegmentState::Diastole);
        t = c[4];
    }
    push(t, dur, SegmentState::Unannotated);
    segs
}

/// The header of a recording, as in the dataset (CRLF line ends).
fn header_text(name: &str, site: Site, n: usize) -> String {
    let record = RecordLine {
        n_signals: 1,
        sig_len: Some(n as u64),
        ..RecordLine::new(name, FS)
    };
    let signal = SignalSpec {
        byte_offset: Some(44),
        adc_gain: Some(1.0),
        adc_res: Some(16),
        adc_zero: Some(0),
        initial_value: Some(0),
        checksum: Some(0),
        block_size: Some(0),
        description: Some(site.as_str().into()),
        ..SignalSpec::new(format!("{name}.wav"), Format::F16)
    };
    let h = Header {
        record,
        signals: vec![signal],
        segments: None,
        comments: Vec::new(),
    };
    h.to_text().replace('\n', "\r\n")
}

pub fn write(out: &Path, seed: u64, count: usize) -> Result<Summary, SynthError> {
    let murmurs = crate::block_labels(seed, TAG, &PATTERN, count);
    let mut labels = Vec::with_capacity(2 * count);
    let mut recordings = 0usize;
    let mut samples = 0usize;
    for (i, &murmur) in murmurs.iter().enumerate() {
        let patient = Patient::new(seed, i as u64, murmur);
        let mut lines = Vec::with_capacity(patient.sites.len());
        for (k, &(site, index)) in patient.sites.iter().enumerate() {
            let rec = Recording::named(&patient.id, site, index, true);
            let name = rec.record_name().to_string();
            let mut rng = Rng::derive(seed, &[TAG, i as u64, k as u64 + 1]);
            let (pcm, segments) = recording(&mut rng, &patient, k);
            write_pcm16(out.join(&rec.wav_file), FS as u32, 1, &pcm)?;
            crate::write_text(
                &out.join(&rec.header_file),
                &header_text(&name, site, pcm.len()),
            )?;
            let tsv = Segmentation::new(segments)?;
            if let Some(file) = &rec.segmentation_file {
                tsv.write(out.join(file))?;
            }
            samples += pcm.len();
            lines.push(rec);
        }
        recordings += lines.len();
        let file = PatientFile::from_info(&patient.id, FS as u32, lines, &patient.info)?;
        file.write(out.join(format!("{}.txt", patient.id)))?;
        labels.push(murmur.as_str().to_string());
        if let Some(o) = patient.info.outcome {
            labels.push(o.as_str().to_string());
        }
    }
    Ok(Summary {
        challenge: Challenge::Physionet2022,
        seed,
        out: out.to_path_buf(),
        items: count,
        recordings,
        labels: crate::count_labels(
            &["Present", "Unknown", "Absent", "Abnormal", "Normal"],
            labels,
        ),
        seconds: samples as f64 / FS,
        files: count + 3 * recordings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use formats::circor::keys;
    use formats::wav::{Encoding, Wav};
    use formats::wfdb::{ReadOptions, Record};

    #[test]
    fn patients_read_back_in_the_circor_layout() {
        let dir = tempfile::tempdir().unwrap();
        let summary = crate::write(Challenge::Physionet2022, dir.path(), 2, Some(20)).unwrap();
        let reference = score::physionet2022::load_labels(dir.path()).unwrap();
        assert!(reference.warnings.is_empty());
        assert_eq!(reference.patients.len(), 20);
        let mut recordings = 0;
        for p in &reference.patients {
            let file = PatientFile::read(&p.label_file).unwrap();
            assert_eq!(file.patient_id(), p.id);
            assert_eq!(file.frequency_hz(), 4000);
            assert_eq!(file.murmur().unwrap().as_str(), p.murmur.as_str());
            assert_eq!(file.outcome().unwrap().as_str(), p.outcome.as_str());
            let order: Vec<&str> = file.annotations().iter().map(|a| a.key()).collect();
            assert_eq!(order, keys::STANDARD_ORDER);
            let info = file.info();
            let sites: Vec<Site> = file.recordings().iter().map(|r| r.location.site).collect();
            match info.murmur.unwrap() {
                Murmur::Present => {
                    let locs = info.murmur_locations.clone().unwrap();
                    assert!(locs.iter().all(|s| sites.contains(s)));
                    assert!(locs.contains(&info.most_audible_location.unwrap()));
                    assert!(!info.systolic.is_empty() || !info.diastolic.is_empty());
                }
                _ => {
                    assert!(info.murmur_locations.is_none() && info.systolic.is_empty());
                }
            }
            for r in file.recordings() {
                recordings += 1;
                let wav = Wav::read(dir.path().join(&r.wav_file)).unwrap();
                assert_eq!((wav.sample_rate(), wav.channels()), (4000, 1));
                assert_eq!(wav.encoding(), Encoding::Pcm16);
                assert_eq!(wav.data_offset(), 44);
                assert!((10.0..=20.0).contains(&wav.duration_s()));

                let hea = std::fs::read_to_string(dir.path().join(&r.header_file)).unwrap();
                assert!(hea.ends_with("\r\n") && hea.matches("\r\n").count() == 2);
                let name = r.record_name();
                let second = hea.split('\n').nth(1).unwrap();
                assert_eq!(
                    second,
                    format!("{name}.wav 16+44 1 16 0 0 0 0 {}\r", r.location.site)
                );
                let rec = Record::open(dir.path().join(name)).unwrap();
                let sig = rec.read(&ReadOptions::default()).unwrap();
                assert_eq!(sig.signals[0].digital, wav.int_samples().unwrap());

                let tsv =
                    Segmentation::read(dir.path().join(r.segmentation_file.as_ref().unwrap()))
                        .unwrap();
                assert!(tsv.anomalies().is_empty(), "{:?}", tsv.anomalies());
                let segs = tsv.segments();
                assert_eq!(segs[0].start_s, 0.0);
                assert!((segs.last().unwrap().end_s - wav.duration_s()).abs() < 1e-6);
                for w in segs.windows(2) {
                    assert_eq!(w[0].end_s, w[1].start_s);
                    let (a, b) = (w[0].state.code(), w[1].state.code());
                    assert!(
                        a == 0 || b == 0 || b == a % 4 + 1,
                        "{a} then {b} in {}",
                        name
                    );
                }
                assert!(segs.iter().any(|s| s.state == SegmentState::S1));
            }
        }
        assert_eq!(recordings, summary.recordings);
        assert_eq!(summary.files, 20 + 3 * recordings);
    }

    /// Mean power in systole (or diastole) over mean power in S1, from the segmentation.
    fn murmur_ratio(dir: &Path, rec: &Recording, phase: SegmentState) -> f64 {
        let wav = Wav::read(dir.join(&rec.wav_file)).unwrap();
        let x = wav.int_samples().unwrap();
        let tsv = Segmentation::read(dir.join(rec.segmentation_file.as_ref().unwrap())).unwrap();
        let (mut sys, mut ns, mut s1, mut n1) = (0.0, 0usize, 0.0, 0usize);
        for s in tsv.segments() {
            let (a, b) = (
                (s.start_s * FS) as usize,
                ((s.end_s * FS) as usize).min(x.len()),
            );
            let e: f64 = x[a..b].iter().map(|&v| (v as f64).powi(2)).sum();
            if s.state == phase {
                (sys, ns) = (sys + e, ns + b - a);
            } else if s.state == SegmentState::S1 {
                (s1, n1) = (s1 + e, n1 + b - a);
            }
        }
        (sys / ns as f64) / (s1 / n1 as f64)
    }

    #[test]
    fn murmurs_fill_systole_and_unknown_recordings_are_noisy() {
        let dir = tempfile::tempdir().unwrap();
        let summary = crate::write(Challenge::Physionet2022, dir.path(), 6, Some(30)).unwrap();
        let counts: Vec<usize> = summary.labels.iter().map(|l| l.1).collect();
        assert_eq!(counts[..3], [9, 6, 15]);
        assert_eq!(counts[3] + counts[4], 30);
        assert!(counts[3] > 5 && counts[4] > 5, "{counts:?}");
        let mut by_class: std::collections::BTreeMap<&str, Vec<f64>> = Default::default();
        for p in score::physionet2022::load_labels(dir.path())
            .unwrap()
            .patients
        {
            let file = PatientFile::read(&p.label_file).unwrap();
            let loudest = file.info().most_audible_location;
            let phase = if file.info().diastolic.is_empty() {
                SegmentState::Systole
            } else {
                SegmentState::Diastole
            };
            let ratios: Vec<f64> = file
                .recordings()
                .iter()
                .filter(|r| loudest.is_none_or(|s| s == r.location.site))
                .map(|r| murmur_ratio(dir.path(), r, phase))
                .collect();
            let best = ratios.iter().copied().fold(0.0, f64::max);
            by_class.entry(p.murmur.as_str()).or_default().push(best);
        }
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let (present, absent, unknown) = (
            mean(&by_class["Present"]),
            mean(&by_class["Absent"]),
            mean(&by_class["Unknown"]),
        );
        assert!(present > 3.0 * absent, "{by_class:?}");
        assert!(unknown > present, "{by_class:?}");
        // Not trivially encoded: the classes overlap a little.
        let lowest_present = by_class["Present"].iter().copied().fold(f64::MAX, f64::min);
        let highest_absent = by_class["Absent"].iter().copied().fold(0.0, f64::max);
        assert!(lowest_present < 4.0 * highest_absent, "{by_class:?}");
    }
}
