//! PhysioNet/CinC 2017 (AF classification): `A00001.hea` + `A00001.mat`, `REFERENCE.csv`
//! and `RECORDS`, laid out as the challenge's training set is
//! (`docs/challenges.md`, checked on the records of `../shared/data`):
//!
//! - `.mat`: MATLAB level 4, one variable `val`, int16, 1×N, in µV (1000 per mV).
//! - `.hea`: `A00001 1 300 9000 2014-05-08 05:05:15` (date before time, as the real
//!   headers have it), then `A00001.mat 16+24 1000/mV 16 0 <first sample> 0 0 ECG`
//!   (checksum 0, as written by the organisers); every line ends in a space and CRLF.
//! - `REFERENCE.csv`: `A00001,N` lines; `RECORDS`: one name a line.
//!
//! Records are named `S00001`, `S00002`, … — the real naming pattern with `S` for
//! synthetic, so that no synthetic record takes a real record's name (an entry's
//! submitted `answers.txt` for the real records must not be compared with answers on
//! synthetic ones). The examples above show the real files' form.
//!
//! Classes come in shuffled blocks of ten: 4 N (sinus rhythm), 2 A (atrial fibrillation),
//! 3 O (another rhythm: bigeminy or trigeminy, frequent ectopic beats, brady- or
//! tachycardia, first-degree AV block or bundle-branch block) and 1 `~` (so noisy that the
//! rhythm cannot be read). Records last 30 s (most) or 9–60 s.

use std::path::Path;

use formats::mat::{NumericArray, NumericData, write_v4_file};
use formats::wfdb::{BaseDate, BaseTime, DateOrder, Format, Header, RecordLine, SignalSpec};

use crate::ecg::{self, Heart, Lead, Noise, Pattern, Rhythm, Scene, Timing};
use crate::rng::Rng;
use crate::{Challenge, Summary, SynthError};

const FS: f64 = 300.0;
const TAG: u64 = 2017;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Label {
    N,
    A,
    O,
    Noisy,
}

impl Label {
    pub fn as_str(self) -> &'static str {
        match self {
            Label::N => "N",
            Label::A => "A",
            Label::O => "O",
            Label::Noisy => "~",
        }
    }
}

const PATTERN: [Label; 10] = [
    Label::N,
    Label::N,
    Label::N,
    Label::N,
    Label::A,
    Label::A,
    Label::O,
    Label::O,
    Label::O,
    Label::Noisy,
];

/// The ECG (mV) of one record of class `label`.
fn signal(rng: &mut Rng, label: Label, len: usize) -> Vec<f64> {
    let mut timing = Timing::typical(rng);
    let hr = rng.range(55.0, 100.0);
    let mut heart = Heart::typical(rng, hr);
    heart.p_apc *= 0.4;
    heart.p_pvc *= 0.4;
    let mut rhythm = Rhythm::Sinus;
    match label {
        Label::N => {}
        Label::A => {
            rhythm = Rhythm::Af;
            heart.hr_af = rng.range(70.0, 140.0);
            heart.af_cv = rng.range(0.15, 0.32);
            heart.p_pvc = rng.range(0.0, 0.03);
        }
        Label::O => match rng.int(0, 6) {
            0 => {
                heart.pattern = if rng.chance(0.5) {
                    Pattern::Bigeminy
                } else {
                    Pattern::Trigeminy
                };
                heart.hr = rng.range(60.0, 95.0);
            }
            1 => heart.p_apc = rng.range(0.1, 0.25),
            2 => heart.p_pvc = rng.range(0.08, 0.2),
            3 => heart.hr = rng.range(36.0, 50.0),
            4 => heart.hr = rng.range(105.0, 150.0),
            5 => timing.pr = rng.range(0.26, 0.34),
            _ => timing.qrs = rng.range(1.9, 2.4),
        },
        Label::Noisy => {
            if rng.chance(0.3) {
                rhythm = Rhythm::Af;
            }
        }
    }
    let r_amp = rng.range(0.4, 1.6) * if label == Label::Noisy { 0.6 } else { 1.0 };
    let lead = Lead::new(rng, &timing, r_amp);
    let first = rng.int(0, (0.8 * FS) as u64) as usize;
    let beats = heart.beats(rng, FS, first, len - 1, &|_| rhythm);
    let (fib, flut) = ecg::atrial(rng, &beats, &heart, FS, len);
    let scene = Scene {
        heart: &heart,
        beats: &beats,
        fib: &fib,
        flut: &flut,
        fs: FS,
        len,
    };
    let noise = if label == Label::Noisy {
        Noise {
            wander: rng.range(0.2, 0.6),
            white: rng.range(0.04, 0.2),
            bursts: rng.int(3, 3 + len as u64 / (FS as u64 * 4)) as usize,
            burst_sd: rng.range(0.3, 0.9),
        }
    } else {
        Noise {
            // The device filters out most of the wander.
            wander: rng.range(0.01, 0.08),
            white: rng.range(0.005, 0.03),
            bursts: rng.int(0, 2) as usize,
            burst_sd: rng.range(0.03, 0.12),
        }
    };
    let mut x = ecg::render(rng, &lead, &noise, &scene);
    if label == Label::Noisy {
        artefacts(rng, &mut x);
    }
    // A lead placed the other way round.
    if rng.chance(0.12) {
        x.iter_mut().for_each(|v| *v = -*v);
    }
    let mean = x.iter().sum::<f64>() / x.len().max(1) as f64;
    x.iter_mut().for_each(|v| *v -= mean);
    x
}

/// Motion artefacts of a hand-held recording: large slow swings, electrode pops (a jump
/// that decays) and stretches of lost contact (flat, then saturated).
fn artefacts(rng: &mut Rng, x: &mut [f64]) {
    let len = x.len();
    // Large slow swings over most of the record (sometimes all of it).
    let swing = ecg::wander(rng, len, FS, 0.25);
    let amp = rng.range(0.4, 1.5);
    let span = (len as f64 * rng.range(0.5, 1.0)) as usize;
    let from = rng.int(0, (len - span) as u64) as usize;
    let ramp = FS;
    for (k, (v, s)) in x.iter_mut().zip(&swing).enumerate().skip(from).take(span) {
        let edge = ((k - from) as f64 / ramp)
            .min((from + span - k) as f64 / ramp)
            .min(1.0);
        *v += amp * edge * s;
    }
    for _ in 0..rng.int(2, 6) {
        let at = rng.int(0, len as u64 - 1) as usize;
        let jump = rng.range(-3.0, 3.0);
        let tau = rng.range(0.1, 0.6) * FS;
        for (k, v) in x[at..].iter_mut().enumerate().take((6.0 * tau) as usize) {
            *v += jump * crate::dmath::exp(-(k as f64) / tau);
        }
    }
    if rng.chance(0.5) {
        let dur = (rng.range(0.5, 3.0) * FS) as usize;
        let at = rng.int(0, len.saturating_sub(dur) as u64) as usize;
        let level = rng.pick(&[0.0, 0.0, 5.0, -5.0]);
        for v in x.iter_mut().skip(at).take(dur) {
            *v = level + 0.002 * *v;
        }
    }
}

/// The header of record `name`, as the organisers wrote it.
fn header(rng: &mut Rng, name: &str, first: i32, len: usize) -> Header {
    let record = RecordLine {
        n_signals: 1,
        sig_len: Some(len as u64),
        base_time: Some(BaseTime {
            hours: rng.int(0, 23) as u32,
            minutes: rng.int(0, 59) as u32,
            seconds: rng.int(0, 59) as u32,
            micros: 0,
        }),
        base_date: Some(BaseDate {
            year: rng.int(2014, 2016) as u32,
            month: rng.int(1, 12) as u32,
            day: rng.int(1, 28) as u32,
            order: DateOrder::YearMonthDay,
        }),
        date_before_time: true,
        ..RecordLine::new(name, FS)
    };
    let signal = SignalSpec {
        byte_offset: Some(24),
        adc_gain: Some(1000.0),
        units: Some("mV".into()),
        adc_res: Some(16),
        adc_zero: Some(0),
        initial_value: Some(first),
        checksum: Some(0),
        block_size: Some(0),
        description: Some("ECG".into()),
        ..SignalSpec::new(format!("{name}.mat"), Format::F16)
    };
    Header {
        record,
        signals: vec![signal],
        segments: None,
        comments: Vec::new(),
    }
}

/// The header's text with the real files' line ends: a space, then CRLF.
fn header_text(h: &Header) -> String {
    h.to_text().replace('\n', " \r\n")
}

pub fn write(out: &Path, seed: u64, count: usize) -> Result<Summary, SynthError> {
    let labels = crate::block_labels(seed, TAG, &PATTERN, count);
    let mut reference = String::new();
    let mut names = String::new();
    let mut samples = 0usize;
    for (i, &label) in labels.iter().enumerate() {
        let name = format!("S{:05}", i + 1);
        let mut rng = Rng::derive(seed, &[TAG, i as u64]);
        let seconds = if rng.chance(0.6) {
            30.0
        } else {
            rng.range(9.0, 61.0)
        };
        let len = (seconds * FS).round() as usize;
        let x = signal(&mut rng, label, len);
        let val: Vec<i16> = x
            .iter()
            .map(|&v| (v * 1000.0).round().clamp(-32768.0, 32767.0) as i16)
            .collect();
        let first = val.first().map_or(0, |&v| i32::from(v));
        let mat = NumericArray::row(NumericData::Int16(val));
        write_v4_file(out.join(format!("{name}.mat")), &[("val", &mat)])?;
        let h = header(&mut rng, &name, first, len);
        crate::write_text(&out.join(format!("{name}.hea")), &header_text(&h))?;
        reference.push_str(&format!("{name},{}\n", label.as_str()));
        names.push_str(&name);
        names.push('\n');
        samples += len;
    }
    crate::write_text(&out.join("REFERENCE.csv"), &reference)?;
    crate::write_text(&out.join("RECORDS"), &names)?;
    Ok(Summary {
        challenge: Challenge::Cinc2017,
        seed,
        out: out.to_path_buf(),
        items: count,
        recordings: count,
        labels: crate::count_labels(
            &["N", "A", "O", "~"],
            labels.iter().map(|l| l.as_str().to_string()),
        ),
        seconds: samples as f64 / FS,
        files: 2 * count + 2,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use formats::mat::MatFile;
    use formats::wfdb::{ReadOptions, Record};

    #[test]
    fn records_read_back_in_the_real_layout() {
        let dir = tempfile::tempdir().unwrap();
        let summary = crate::write(Challenge::Cinc2017, dir.path(), 4, Some(20)).unwrap();
        assert_eq!(summary.files, 42);
        let text = std::fs::read_to_string(dir.path().join("REFERENCE.csv")).unwrap();
        let reference = score::cinc2017::parse_reference(&text, "REFERENCE.csv").unwrap();
        assert_eq!(reference.len(), 20);
        let names = std::fs::read_to_string(dir.path().join("RECORDS")).unwrap();
        let names: Vec<&str> = names.lines().collect();
        for (k, (name, label)) in reference.iter().enumerate() {
            assert_eq!(name, &format!("S{:05}", k + 1));
            assert_eq!(names[k], name);
            let n = summary
                .labels
                .iter()
                .find(|(l, _)| l == label.as_str())
                .unwrap()
                .1;
            assert!(n > 0);

            let hea = std::fs::read_to_string(dir.path().join(format!("{name}.hea"))).unwrap();
            let lines: Vec<&str> = hea.split_inclusive('\n').collect();
            assert_eq!(lines.len(), 2);
            assert!(lines.iter().all(|l| l.ends_with(" \r\n")), "{hea:?}");
            let fields: Vec<&str> = lines[1].split_whitespace().collect();
            assert_eq!(
                fields[..4],
                [&format!("{name}.mat")[..], "16+24", "1000/mV", "16"]
            );
            assert_eq!(fields[4..], ["0", fields[5], "0", "0", "ECG"]);
            let date = lines[0].split_whitespace().nth(4).unwrap();
            assert!(date.len() == 10 && date.as_bytes()[4] == b'-', "{date}");

            let mat = MatFile::read(dir.path().join(format!("{name}.mat"))).unwrap();
            let val = mat.get("val").unwrap().as_numeric().unwrap().clone();
            assert_eq!(val.dims()[0], 1);
            let NumericData::Int16(v) = val.real() else {
                panic!("val is {:?}", val.class());
            };
            let secs = v.len() as f64 / FS;
            assert!((9.0..=61.0).contains(&secs), "{secs}");
            assert_eq!(fields[5], v[0].to_string());
            let bytes = std::fs::read(dir.path().join(format!("{name}.mat"))).unwrap();
            assert_eq!(bytes.len(), 24 + 2 * v.len());

            let rec = Record::open(dir.path().join(name)).unwrap();
            assert_eq!(rec.header.record.sig_len, Some(v.len() as u64));
            let sig = rec.read(&ReadOptions::default()).unwrap();
            let digital: Vec<i32> = v.iter().map(|&x| i32::from(x)).collect();
            assert_eq!(sig.signals[0].digital, digital);
        }
    }

    #[test]
    fn labels_are_mixed_and_noise_marks_the_noisy_class() {
        let dir = tempfile::tempdir().unwrap();
        let summary = crate::write(Challenge::Cinc2017, dir.path(), 8, Some(30)).unwrap();
        let counts: Vec<usize> = summary.labels.iter().map(|l| l.1).collect();
        assert_eq!(counts, [12, 6, 9, 3]);
        let text = std::fs::read_to_string(dir.path().join("REFERENCE.csv")).unwrap();
        let reference = score::cinc2017::parse_reference(&text, "REFERENCE.csv").unwrap();
        // Slow wander (relative to the QRS): low for readable records, high for noisy ones.
        let mut by_label: std::collections::BTreeMap<&str, Vec<f64>> = Default::default();
        for (name, label) in &reference {
            let mat = MatFile::read(dir.path().join(format!("{name}.mat"))).unwrap();
            let v = mat.get("val").unwrap().to_f64_vec().unwrap();
            let smooth: Vec<f64> = v.chunks(60).map(|c| c.iter().sum::<f64>() / 60.0).collect();
            let sd = |x: &[f64]| {
                let m = x.iter().sum::<f64>() / x.len() as f64;
                (x.iter().map(|a| (a - m) * (a - m)).sum::<f64>() / x.len() as f64).sqrt()
            };
            let mut sorted: Vec<f64> = v.iter().map(|x| x.abs()).collect();
            sorted.sort_by(f64::total_cmp);
            let peak = sorted[sorted.len() * 99 / 100];
            by_label
                .entry(label.as_str())
                .or_default()
                .push(sd(&smooth) / peak);
        }
        let worst_clean = ["N", "A", "O"]
            .iter()
            .flat_map(|l| by_label[l].iter().copied())
            .fold(0.0, f64::max);
        let noisy = &by_label["~"];
        let mean_noisy = noisy.iter().sum::<f64>() / noisy.len() as f64;
        assert!(mean_noisy > worst_clean, "{by_label:?}");
    }
}
