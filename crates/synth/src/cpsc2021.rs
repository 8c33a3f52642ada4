//! CPSC 2021 (paroxysmal AF episodes): `RECORDS` and `data_<subject>_<n>.hea/.dat/.atr`,
//! laid out as the challenge's training records are (`docs/challenges.md`, checked on the
//! records of `../shared/data`):
//!
//! - header: 2 signals `I` and `II`, 200 Hz, format 16, a floating-point gain and a
//!   baseline chosen as wfdb-python's `wrsamp` chooses them (the full 16-bit range spans
//!   the signal), units mV; a physical offset of a few mV, as in the real records; the
//!   last line `# non atrial fibrillation`, `# persistent atrial fibrillation` or
//!   `# paroxysmal atrial fibrillation`.
//! - annotations: a beat (`N`, `A` or `V`) at each R peak, the first at sample 30 and the
//!   last 30 samples before the end; rhythm changes as `+` with aux `(AFIB` (or `(AFL`)
//!   30 samples before the first AF R peak and `(N` 30 samples after the last one. A
//!   persistent-AF record has `(AFIB` at 0, `(N` at L−1 and the aux `None` on every beat.
//!   Episodes and the gaps between them have at least 5 beats.
//!
//! One deliberate difference: when AF runs to the end of a paroxysmal record, `(N` is put
//! at L−1, not at L (one past the end) as in the real `data_101_6`, so that every
//! episode can be predicted within the record. The checksum field is written as the
//! WFDB library writes it (signed), where wfdb-python writes it unsigned.
//!
//! Subjects are persistent-AF, paroxysmal-AF or non-AF patients (in shuffled blocks of
//! three) with 2–4 records each; a paroxysmal patient's records are mostly AFp, a few N or
//! AFf. Records last 1–5 minutes.

use std::path::Path;

use formats::wfdb::annotation::{self, Annotation, Definitions, codes};
use formats::wfdb::{Format, RecordLine, SignalSpec, WriteSignal, write_record};

use crate::ecg::{self, Beat, Heart, Lead, Noise, Rhythm, Scene, Timing};
use crate::rng::Rng;
use crate::{Challenge, Summary, SynthError};

const FS: f64 = 200.0;
const TAG: u64 = 2021;
/// Samples between a rhythm marker and the R peak it refers to; also the distance of the
/// first and last beats from the ends of the record.
const MARGIN: usize = 30;
/// Fewest beats in an AF episode and in a gap between episodes.
const MIN_BEATS: usize = 5;

/// The class of a record (the last header comment line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    N,
    AFf,
    AFp,
}

impl Class {
    fn label(self) -> &'static str {
        match self {
            Class::N => "N",
            Class::AFf => "AFf",
            Class::AFp => "AFp",
        }
    }
    fn comment(self) -> &'static str {
        match self {
            Class::N => "non atrial fibrillation",
            Class::AFf => "persistent atrial fibrillation",
            Class::AFp => "paroxysmal atrial fibrillation",
        }
    }
}

/// A patient: the heart, how the two leads see it, and the class of patient.
struct Subject {
    id: u64,
    records: u64,
    heart: Heart,
    leads: [Lead; 2],
    /// Physical offsets of the leads (mV).
    offsets: [f64; 2],
}

impl Subject {
    fn new(seed: u64, id: u64) -> Subject {
        let mut rng = Rng::derive(seed, &[TAG, id]);
        let records = rng.int(2, 4);
        let hr = rng.range(55.0, 90.0);
        let mut heart = Heart::typical(&mut rng, hr);
        heart.rr_max = 1.5;
        let timing = Timing::typical(&mut rng);
        let r_amps = [rng.range(0.3, 0.9), rng.range(0.6, 1.5)];
        let leads = r_amps.map(|r| Lead::new(&mut rng, &timing, r));
        let offsets = [rng.range(3.5, 5.5), rng.range(3.5, 5.5)];
        Subject {
            id,
            records,
            heart,
            leads,
            offsets,
        }
    }
}

/// A record's rhythm plan: `(end time in s, rhythm)` segments in order.
fn plan(rng: &mut Rng, class: Class) -> Vec<(f64, Rhythm)> {
    match class {
        Class::N => vec![(rng.range(60.0, 300.0), Rhythm::Sinus)],
        Class::AFf => vec![(rng.range(60.0, 240.0), Rhythm::Af)],
        Class::AFp => {
            let episodes = rng.int(1, 3);
            let starts_af = rng.chance(0.2);
            let ends_af = rng.chance(0.2) && !(episodes == 1 && starts_af);
            let mut segments = Vec::new();
            let mut t = 0.0;
            let mut push = |dur: f64, r: Rhythm| {
                t += dur;
                segments.push((t, r));
            };
            if !starts_af {
                push(rng.range(15.0, 50.0), Rhythm::Sinus);
            }
            for e in 0..episodes {
                let af = if rng.chance(0.12) {
                    Rhythm::Flutter
                } else {
                    Rhythm::Af
                };
                push(rng.range(15.0, 60.0), af);
                if e + 1 < episodes || !ends_af {
                    push(rng.range(15.0, 50.0), Rhythm::Sinus);
                }
            }
            // 1 to 5 minutes in all; segments stay above 11 s (at least 7 beats).
            let total = t;
            let k = if total > 300.0 {
                300.0 / total
            } else if total < 60.0 {
                60.0 / total
            } else {
                1.0
            };
            segments.iter().map(|&(end, r)| (end * k, r)).collect()
        }
    }
}

/// Makes every AF run and every gap between AF runs at least [`MIN_BEATS`] long, by
/// giving the beats of a shorter run the rhythm around them.
fn enforce_min_runs(beats: &mut [Beat]) {
    loop {
        let mut runs: Vec<(usize, usize)> = Vec::new();
        let mut i = 0;
        while i < beats.len() {
            let mut j = i;
            while j + 1 < beats.len() && beats[j + 1].rhythm.is_af() == beats[i].rhythm.is_af() {
                j += 1;
            }
            runs.push((i, j));
            i = j + 1;
        }
        let short = runs
            .iter()
            .enumerate()
            .find(|(_, (a, b))| b - a + 1 < MIN_BEATS);
        let Some((k, &(a, b))) = short else {
            return;
        };
        if runs.len() == 1 {
            return;
        }
        let neighbour = if k > 0 { runs[k - 1].1 } else { runs[k + 1].0 };
        let rhythm = beats[neighbour].rhythm;
        for beat in &mut beats[a..=b] {
            beat.rhythm = rhythm;
        }
    }
}

/// A record ready to write.
struct Made {
    name: String,
    class: Class,
    len: usize,
    digital: [Vec<i32>; 2],
    calibration: [(f64, i32); 2],
    annotations: Vec<Annotation>,
}

fn make(seed: u64, subject: &Subject, n: u64, class: Class) -> Result<Made, SynthError> {
    let name = format!("data_{}_{}", subject.id, n);
    let mut rng = Rng::derive(seed, &[TAG, subject.id, n]);
    let mut heart = subject.heart.clone();
    heart.hr *= rng.range(0.92, 1.08);
    heart.hr_af *= rng.range(0.9, 1.1);
    let segments = plan(&mut rng, class);
    let total = segments.last().map_or(60.0, |s| s.0);
    let last = (total * FS).round() as usize;
    let rhythm_at = |sample: usize| {
        let t = sample as f64 / FS;
        segments
            .iter()
            .find(|s| t < s.0)
            .or(segments.last())
            .map_or(Rhythm::Sinus, |s| s.1)
    };
    let mut beats = heart.beats(&mut rng, FS, MARGIN, last - MARGIN, &rhythm_at);
    enforce_min_runs(&mut beats);
    let last_beat = beats.last().map_or(MARGIN, |b| b.sample);
    let len = last_beat + MARGIN;
    let runs = ecg::af_runs(&beats);
    let ok = match class {
        Class::N => runs.is_empty(),
        Class::AFf => runs.len() == 1 && runs[0].0 == 0 && runs[0].1 + 1 == beats.len(),
        Class::AFp => !runs.is_empty() && beats.iter().any(|b| !b.rhythm.is_af()),
    };
    if !ok || beats.len() < 2 * MIN_BEATS {
        return Err(SynthError::Internal(format!(
            "{name}: the beats generated do not make a {} record",
            class.label()
        )));
    }

    let (fib, flut) = ecg::atrial(&mut rng, &beats, &heart, FS, len);
    let scene = Scene {
        heart: &heart,
        beats: &beats,
        fib: &fib,
        flut: &flut,
        fs: FS,
        len,
    };
    let mut digital: [Vec<i32>; 2] = [Vec::new(), Vec::new()];
    let mut calibration = [(1.0, 0); 2];
    let minutes = len as f64 / FS / 60.0;
    for k in 0..2 {
        let noise = Noise {
            wander: rng.range(0.05, 0.25),
            white: rng.range(0.006, 0.025),
            bursts: rng.int(0, (2.0 * minutes).ceil() as u64) as usize,
            burst_sd: rng.range(0.03, 0.12),
        };
        let mut x = ecg::render(&mut rng, &subject.leads[k], &noise, &scene);
        for v in &mut x {
            *v += subject.offsets[k];
        }
        let (d, gain, baseline) = digitize(&x);
        digital[k] = d;
        calibration[k] = (gain, baseline);
    }

    let annotations = annotate(&beats, &runs, class, len);
    Ok(Made {
        name,
        class,
        len,
        digital,
        calibration,
        annotations,
    })
}

/// Digital samples, gain and baseline for a physical signal, as wfdb-python's `wrsamp`
/// chooses them for format 16: the range [pmin, pmax] spans [−32767, 32767], the
/// baseline rounded to an integer away from the signal and the gain adjusted to it.
fn digitize(x: &[f64]) -> (Vec<i32>, f64, i32) {
    const DMIN: f64 = -32767.0;
    const DMAX: f64 = 32767.0;
    let pmin = x.iter().copied().fold(f64::INFINITY, f64::min);
    let pmax = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (gain, baseline) = if pmax > pmin {
        let g = (DMAX - DMIN) / (pmax - pmin);
        let b = DMIN - g * pmin;
        let b = if pmin > 0.0 { b.ceil() } else { b.floor() };
        let g = if b != DMIN { (DMIN - b) / pmin } else { g };
        (g, b)
    } else {
        // A flat (or empty) signal: the CinC convention of 1000 per mV.
        (1000.0, 0.0)
    };
    let d = x
        .iter()
        .map(|&p| (p * gain + baseline).round().clamp(DMIN, DMAX) as i32)
        .collect();
    (d, gain, baseline as i32)
}

fn rhythm_note(sample: usize, aux: &str) -> Annotation {
    Annotation {
        aux: Some(aux.as_bytes().to_vec()),
        ..Annotation::new(sample as i64, codes::RHYTHM)
    }
}

/// Beat and rhythm annotations, in time order.
fn annotate(
    beats: &[Beat],
    runs: &[(usize, usize, Rhythm)],
    class: Class,
    len: usize,
) -> Vec<Annotation> {
    let mut anns: Vec<Annotation> = beats
        .iter()
        .map(|b| Annotation {
            aux: (class == Class::AFf).then(|| b"None".to_vec()),
            ..Annotation::new(b.sample as i64, b.kind.code())
        })
        .collect();
    match class {
        Class::N => {}
        Class::AFf => {
            anns.push(rhythm_note(0, "(AFIB"));
            anns.push(rhythm_note(len - 1, "(N"));
        }
        Class::AFp => {
            for &(i, j, rhythm) in runs {
                let onset = if rhythm == Rhythm::Flutter {
                    "(AFL"
                } else {
                    "(AFIB"
                };
                anns.push(rhythm_note(beats[i].sample - MARGIN, onset));
                anns.push(rhythm_note((beats[j].sample + MARGIN).min(len - 1), "(N"));
            }
        }
    }
    // Stable: a marker never shares a sample with a beat (RR ≥ 0.3 s > 2 × 30 samples).
    anns.sort_by_key(|a| a.sample);
    anns
}

fn write_made(out: &Path, m: &Made) -> Result<(), SynthError> {
    let specs: Vec<SignalSpec> = ["I", "II"]
        .iter()
        .zip(&m.calibration)
        .map(|(desc, &(gain, baseline))| SignalSpec {
            adc_gain: Some(gain),
            baseline: Some(baseline),
            units: Some("mV".into()),
            adc_res: Some(16),
            adc_zero: Some(0),
            block_size: Some(0),
            description: Some((*desc).into()),
            ..SignalSpec::new(format!("{}.dat", m.name), Format::F16)
        })
        .collect();
    let signals: Vec<WriteSignal<'_>> = specs
        .into_iter()
        .zip(&m.digital)
        .map(|(spec, samples)| WriteSignal { spec, samples })
        .collect();
    write_record(
        out,
        &RecordLine::new(&m.name, FS),
        &signals,
        &[format!(" {}", m.class.comment())],
    )?;
    annotation::write(
        out.join(format!("{}.atr", m.name)),
        &m.annotations,
        &Definitions::default(),
    )?;
    Ok(())
}

pub fn write(out: &Path, seed: u64, count: usize) -> Result<Summary, SynthError> {
    let kinds = crate::block_labels(seed, TAG, &[Class::N, Class::AFf, Class::AFp], count);
    let mut names = String::new();
    let mut labels = Vec::with_capacity(count);
    let mut samples = 0usize;
    let mut done = 0usize;
    'subjects: for (id, &kind) in kinds.iter().enumerate() {
        let subject = Subject::new(seed, id as u64);
        let mut rng = Rng::derive(seed, &[TAG, subject.id, 0xC1A5]);
        for n in 1..=subject.records {
            if done == count {
                break 'subjects;
            }
            let class = match kind {
                Class::AFp if n > 1 => {
                    [Class::AFp, Class::N, Class::AFf][rng.weighted(&[0.85, 0.1, 0.05])]
                }
                k => k,
            };
            let made = make(seed, &subject, n, class)?;
            write_made(out, &made)?;
            names.push_str(&made.name);
            names.push('\n');
            labels.push(class.label().to_string());
            samples += made.len;
            done += 1;
        }
    }
    crate::write_text(&out.join("RECORDS"), &names)?;
    Ok(Summary {
        challenge: Challenge::Cpsc2021,
        seed,
        out: out.to_path_buf(),
        items: done,
        recordings: done,
        labels: crate::count_labels(&["N", "AFf", "AFp"], labels),
        seconds: samples as f64 / FS,
        files: 3 * done + 1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use formats::wfdb::{ReadOptions, Record};
    use score::Mode;
    use score::cpsc2021 as official;

    fn written(seed: u64, count: usize) -> (tempfile::TempDir, Summary) {
        let dir = tempfile::tempdir().unwrap();
        let s = crate::write(Challenge::Cpsc2021, dir.path(), seed, Some(count)).unwrap();
        (dir, s)
    }

    fn records(dir: &Path) -> Vec<String> {
        std::fs::read_to_string(dir.join("RECORDS"))
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn loads_as_a_reference_and_its_own_labels_score_perfectly() {
        let (dir, summary) = written(5, 12);
        let reference = official::load_reference(dir.path()).unwrap();
        assert_eq!(reference.records.len(), 12);
        for (label, n) in &summary.labels {
            let found = reference
                .records
                .iter()
                .filter(|r| format!("{:?}", r.class) == *label)
                .count();
            assert_eq!(found, *n, "{label}");
            assert!(*n > 0, "no {label} record in {:?}", summary.labels);
        }
        let pred = tempfile::tempdir().unwrap();
        let mut expected = Vec::new();
        for r in &reference.records {
            let last = r.len - 1;
            let rows: Vec<String> = match r.class {
                official::Class::N => vec![],
                official::Class::AFf => vec![format!("[0, {last}]")],
                official::Class::AFp => r
                    .episodes
                    .iter()
                    .map(|&(s, e)| format!("[{s}, {}]", (e as u64).min(last)))
                    .collect(),
            };
            let json = format!("{{\"predict_endpoints\": [{}]}}", rows.join(", "));
            std::fs::write(pred.path().join(format!("{}.json", r.name)), json).unwrap();
            expected.push(if r.class == official::Class::N {
                1.0
            } else {
                1.0 + 2.0 * r.ma() as f64
            });
        }
        for mode in [Mode::Strict, Mode::OfficialCompat] {
            let report = official::score(&reference, pred.path(), mode).unwrap();
            assert!(report.errors.is_empty(), "{:?}", report.errors);
            for (item, want) in report.items.iter().zip(&expected) {
                assert_eq!(item.class_pred, item.class_true, "{}", item.record);
                assert_eq!(item.u, *want, "{}: {item:?}", item.record);
            }
            let mean = expected.iter().sum::<f64>() / expected.len() as f64;
            assert!((report.score - mean).abs() < 1e-12);
        }
    }

    #[test]
    fn records_follow_the_real_layout() {
        let (dir, summary) = written(11, 9);
        assert_eq!(summary.files, 9 * 3 + 1);
        let names = records(dir.path());
        assert_eq!(names.len(), 9);
        let mut subjects = std::collections::BTreeMap::new();
        for name in &names {
            let parts: Vec<&str> = name.split('_').collect();
            assert_eq!(parts.len(), 3, "{name}");
            assert_eq!(parts[0], "data");
            *subjects.entry(parts[1].to_string()).or_insert(0) += 1;

            let rec = Record::open(dir.path().join(name)).unwrap();
            let h = &rec.header;
            assert_eq!(h.record.fs, Some(200.0));
            let class = h.comments.last().unwrap();
            assert!(
                [
                    " non atrial fibrillation",
                    " persistent atrial fibrillation",
                    " paroxysmal atrial fibrillation"
                ]
                .contains(&class.as_str()),
                "{class:?}"
            );
            let descs: Vec<_> = h.signals.iter().map(|s| s.description.clone()).collect();
            assert_eq!(descs, [Some("I".to_string()), Some("II".to_string())]);
            for s in &h.signals {
                assert_eq!(s.format, Format::F16);
                assert_eq!(s.units.as_deref(), Some("mV"));
                assert!(s.baseline.is_some() && s.adc_gain.unwrap() > 1000.0);
                assert_eq!(s.file_name, format!("{name}.dat"));
            }
            let len = rec.sig_len().unwrap() as usize;
            assert!((59 * 200..=300 * 200).contains(&len), "{name}: {len}");
            let dat = std::fs::metadata(dir.path().join(format!("{name}.dat"))).unwrap();
            assert_eq!(dat.len() as usize, len * 4);
            let sig = rec.read(&ReadOptions::default()).unwrap();
            for s in &sig.signals {
                assert!(s.digital.iter().all(|&d| (-32767..=32767).contains(&d)));
                let p = s.physical();
                let mean = p.iter().sum::<f64>() / p.len() as f64;
                assert!((3.0..6.5).contains(&mean), "{name}: mean {mean} mV");
            }

            let atr = annotation::read_annotator(dir.path().join(name), "atr").unwrap();
            let anns = atr.content();
            let beats: Vec<_> = anns.iter().filter(|a| a.code != codes::RHYTHM).collect();
            assert_eq!(beats[0].sample, 30, "{name}");
            assert_eq!(beats.last().unwrap().sample as usize, len - 30, "{name}");
            assert!(
                beats
                    .iter()
                    .all(|b| [codes::NORMAL, codes::APC, codes::PVC].contains(&b.code))
            );
            let af_f = class.contains("persistent");
            for b in &beats {
                let aux = b.aux.as_deref();
                assert_eq!(aux, af_f.then_some(&b"None"[..]), "{name}");
            }
            // Rhythm markers 30 samples from the R peak they refer to; every episode and
            // every gap between episodes at least 5 beats.
            let mut in_af = false;
            let mut run = 0;
            let mut episodes = 0;
            for (k, a) in anns.iter().enumerate() {
                if a.code != codes::RHYTHM {
                    run += 1;
                    continue;
                }
                let aux = a.aux_str().unwrap().into_owned();
                if aux == "(N" {
                    assert!(in_af, "{name}: (N outside AF");
                    assert!(run >= 5, "{name}: an episode of {run} beats");
                    if af_f {
                        assert_eq!(a.sample as usize, len - 1);
                    } else {
                        let prev = anns[k - 1].sample;
                        assert!(a.sample - prev == 30 || a.sample as usize == len - 1);
                    }
                    in_af = false;
                } else {
                    assert!(aux == "(AFIB" || aux == "(AFL", "{name}: {aux}");
                    assert!(!in_af);
                    if episodes > 0 {
                        assert!(run >= 5, "{name}: a gap of {run} beats");
                    }
                    if af_f {
                        assert_eq!(a.sample, 0);
                    } else {
                        assert_eq!(anns[k + 1].sample - a.sample, 30, "{name}");
                    }
                    in_af = true;
                    episodes += 1;
                }
                run = 0;
            }
            assert!(!in_af);
            match class.trim() {
                "non atrial fibrillation" => assert_eq!(episodes, 0),
                "persistent atrial fibrillation" => assert_eq!(episodes, 1),
                _ => assert!(episodes >= 1),
            }
        }
        assert!(subjects.values().all(|&n| n <= 4));
        assert!(subjects.values().any(|&n| n >= 2));
    }

    #[test]
    fn af_is_irregular_without_p_waves_and_sinus_is_regular() {
        let (dir, _) = written(3, 9);
        let (mut af, mut sinus) = (Vec::new(), Vec::new());
        for name in records(dir.path()) {
            let atr = annotation::read_annotator(dir.path().join(&name), "atr").unwrap();
            let mut state = false;
            let mut prev: Option<(i64, bool, u8)> = None;
            let (mut a, mut s) = (Vec::new(), Vec::new());
            for x in atr.content() {
                if x.code == codes::RHYTHM {
                    state = x.aux.as_deref() != Some(b"(N");
                    prev = None;
                    continue;
                }
                if let Some((t, st, code)) = prev
                    && st == state
                    && code == codes::NORMAL
                    && x.code == codes::NORMAL
                {
                    let rr = (x.sample - t) as f64 / FS;
                    if state { a.push(rr) } else { s.push(rr) }
                }
                prev = Some((x.sample, state, x.code));
            }
            // Mean absolute successive difference over the mean RR.
            let irregularity = |v: &[f64]| {
                let m = v.iter().sum::<f64>() / v.len() as f64;
                v.windows(2).map(|w| (w[1] - w[0]).abs()).sum::<f64>() / (v.len() - 1) as f64 / m
            };
            if a.len() > 20 {
                af.push(irregularity(&a));
            }
            if s.len() > 20 {
                sinus.push(irregularity(&s));
            }
        }
        assert!(!af.is_empty() && !sinus.is_empty());
        let max_sinus = sinus.iter().copied().fold(0.0, f64::max);
        let min_af = af.iter().copied().fold(1.0, f64::min);
        assert!(max_sinus < 0.06, "{sinus:?}");
        assert!(min_af > 0.08, "{af:?}");
    }

    #[test]
    fn every_plan_keeps_the_episode_rules() {
        for seed in 0..25 {
            let subject = Subject::new(seed, 0);
            let made = make(seed, &subject, 1, Class::AFp).unwrap();
            assert!(made.annotations.iter().any(|a| a.code == codes::RHYTHM));
        }
    }

    #[test]
    fn short_runs_take_the_rhythm_around_them() {
        let beat = |r| Beat {
            sample: 0,
            kind: ecg::BeatKind::Normal,
            rhythm: r,
        };
        let (s, a) = (Rhythm::Sinus, Rhythm::Af);
        let mut b: Vec<Beat> = [
            s, s, s, s, s, s, a, a, s, s, s, s, s, s, a, a, a, a, a, s, s,
        ]
        .iter()
        .map(|&r| beat(r))
        .collect();
        enforce_min_runs(&mut b);
        let got: Vec<bool> = b.iter().map(|b| b.rhythm.is_af()).collect();
        let want: Vec<bool> = (0..21).map(|i| (14..21).contains(&i)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn digitising_spans_the_sixteen_bits() {
        let x: Vec<f64> = (0..1000).map(|i| 4.0 + (i as f64 * 0.01).sin()).collect();
        let (d, gain, baseline) = digitize(&x);
        let (lo, hi) = (d.iter().min().unwrap(), d.iter().max().unwrap());
        assert!(
            *lo >= -32767 && *hi <= 32767 && *hi - *lo > 65000,
            "{lo} {hi}"
        );
        for (p, &v) in x.iter().zip(&d) {
            assert!(((v - baseline) as f64 / gain - p).abs() < 1.0 / gain);
        }
        let flat = digitize(&[2.0; 10]);
        assert_eq!(flat.0, vec![2000; 10]);
    }
}
