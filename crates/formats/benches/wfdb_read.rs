//! WFDB read throughput: our reader against wfdb-python on the same files, in one run.
//!
//! `cargo bench -p formats --bench wfdb_read` (wfdb-python from `.oracle-venv`, installed by
//! `scripts/test.sh`; the real records from `../shared/data`). Prints a Markdown table of
//! medians for BENCHMARKS.md. Our passes alternate with wfdb-python's (a Python process
//! kept running, one pass per request), so each ratio is the median of the ratios of
//! passes timed back to back: comparing medians taken a minute apart on these VMs moved
//! ratios by ±20%. Large reads use every CPU the process may run on (wfdb-python uses
//! one): `taskset -c 0 cargo bench ...` gives the single-thread figures.
//!
//! Memory comes from glibc's malloc, which gives most freed read outputs back to the
//! kernel, so each record's outputs fault in afresh. As a diagnostic of what that costs,
//! glibc can be told to keep freed memory (`MALLOC_TRIM_THRESHOLD_=4000000000
//! MALLOC_MMAP_THRESHOLD_=4000000000 MALLOC_TOP_PAD_=268435456 cargo bench ...`); those
//! settings are taken out of wfdb-python's environment, which keeps glibc's defaults.

mod common;

use std::path::{Path, PathBuf};

use common::{Python, file_bytes, malloc_settings, ms, paired, paths, theirs, time};

use formats::wfdb::annotation::{self, Annotation, Definitions};
use formats::wfdb::format::{self, Format};
use formats::wfdb::{ReadOptions, Record, RecordLine, SignalSpec, WriteSignal, write_record};

/// A 24-hour, 2-signal, 360 Hz record in format 212 (as MIT-BIH would store it), with an
/// ECG-like waveform plus noise so that every bit pattern occurs.
fn write_day_record(dir: &Path) -> PathBuf {
    let frames = 24 * 3600 * 360;
    let mut state = 1u64;
    let mut noise = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 40) % 41) as i32 - 20
    };
    let wave = |t: usize, lead: usize| {
        let phase = (t + lead * 37) % 300; // a beat every 0.83 s
        let qrs = if (100..110).contains(&phase) {
            900 - 180 * (phase as i32 - 105).abs()
        } else {
            0
        };
        let twave = if (160..220).contains(&phase) { 120 } else { 0 };
        qrs + twave
    };
    let a: Vec<i32> = (0..frames)
        .map(|t| (wave(t, 0) + noise()).clamp(-2047, 2047))
        .collect();
    let b: Vec<i32> = (0..frames)
        .map(|t| (wave(t, 1) / 2 + noise()).clamp(-2047, 2047))
        .collect();
    let spec = |name: &str| {
        let mut s = SignalSpec::new("day.dat", Format::F212);
        s.adc_gain = Some(200.0);
        s.baseline = Some(1024);
        s.units = Some("mV".into());
        s.description = Some(name.into());
        s
    };
    let line = RecordLine::new("day", 360.0);
    write_record(
        dir,
        &line,
        &[
            WriteSignal {
                spec: spec("MLII"),
                samples: &a,
            },
            WriteSignal {
                spec: spec("V5"),
                samples: &b,
            },
        ],
        &[],
    )
    .unwrap();
    dir.join("day")
}

/// Reads every signal of every record, as `rdrecord` does: digital values, or physical
/// values only (`rdrecord()` returns `p_signal` alone). Every sample is returned in a
/// fresh vector.
fn read_records(records: &[PathBuf], physical: bool) -> usize {
    let mut n = 0;
    for r in records {
        let rec = Record::open(r).unwrap();
        if physical {
            let s = rec.read_physical(&ReadOptions::default()).unwrap();
            n += s.signals.iter().map(|sig| sig.values.len()).sum::<usize>();
        } else {
            let s = rec.read(&ReadOptions::default()).unwrap();
            n += s.signals.iter().map(|sig| sig.digital.len()).sum::<usize>();
        }
    }
    n
}

fn main() {
    // `cargo test --benches` runs bench targets with `--bench`-less args; only measure
    // when invoked through `cargo bench`.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut sets: Vec<(String, Vec<PathBuf>)> = Vec::new();
    if let Some(data) = testkit::shared_data("wfdb_read bench") {
        let dir = data.join("cpsc2021");
        let names = std::fs::read_to_string(dir.join("RECORDS")).unwrap();
        sets.push((
            "23 CPSC 2021 records (format 16, 2×200 Hz, 102 min)".into(),
            names.lines().map(|n| dir.join(n.trim())).collect(),
        ));
        let dir = data.join("circor2022/training_data");
        let mut wavs: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "hea"))
            .map(|p| p.with_extension(""))
            .collect();
        wavs.sort();
        sets.push((
            "121 CirCor recordings (WAV via 16+44, 4 kHz, 40 min)".into(),
            wavs,
        ));
    }
    sets.push((
        "24 h record (format 212, 2×360 Hz)".into(),
        vec![write_day_record(tmp.path())],
    ));
    let mut python = testkit::oracle_python("wfdb_read bench").map(|p| Python::start(&p));
    println!(
        "CPUs available to this process: {}; glibc malloc settings (ours only): {}",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        malloc_settings()
    );
    println!();

    println!(
        "| data | file MB | ours digital | wfdb-python digital | ratio | ours physical | wfdb-python physical | ratio |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for (label, records) in &sets {
        let mb = file_bytes(records) as f64 / 1e6;
        let list = paths(records);
        let (d, py_d) = paired(
            || read_records(records, false),
            python.as_mut(),
            &format!("rdrecord_digital:{list}"),
        );
        let (p, py_p) = paired(
            || read_records(records, true),
            python.as_mut(),
            &format!("rdrecord:{list}"),
        );
        println!(
            "| {label} | {mb:.1} | {} ({:.0} MB/s) | {} | {} | {} |",
            ms(d),
            mb / d.as_secs_f64(),
            theirs(py_d),
            ms(p),
            theirs(py_p),
        );
    }

    // Annotation parsing: the real beat and rhythm files, and a day of beats (one every
    // 0.83 s at 360 Hz, a rhythm change with an aux string every 200 beats).
    let day_atr = tmp.path().join("day.atr");
    let beats: Vec<Annotation> = (0..104_000i64)
        .map(|k| {
            let mut a = Annotation::new(k * 300 + 105, if k % 200 == 0 { 28 } else { 1 });
            if k % 200 == 0 {
                a.aux = Some(if k % 400 == 0 {
                    b"(AFIB".to_vec()
                } else {
                    b"(N".to_vec()
                });
            }
            a
        })
        .collect();
    annotation::write(&day_atr, &beats, &Definitions::default()).unwrap();
    let mut ann_sets: Vec<(String, Vec<PathBuf>)> = Vec::new();
    if let Some((_, records)) = sets.iter().find(|(l, _)| l.contains("CPSC")) {
        ann_sets.push(("23 CPSC 2021 .atr files".into(), records.clone()));
    }
    ann_sets.push((
        "a day of beats (104,000 annotations)".into(),
        vec![tmp.path().join("day")],
    ));
    println!();
    println!("| annotations | count | ours | wfdb-python rdann | ratio |");
    println!("|---|---:|---:|---:|---:|");
    for (label, records) in &ann_sets {
        let read_all = || {
            records
                .iter()
                .map(|r| {
                    annotation::read_annotator(r, "atr")
                        .unwrap()
                        .annotations
                        .len()
                })
                .sum::<usize>()
        };
        let count = read_all();
        let (ours, py) = paired(
            read_all,
            python.as_mut(),
            &format!("rdann:{}:atr", paths(records)),
        );
        println!(
            "| {label} | {count} | {:.2} ms | {} |",
            ours.as_secs_f64() * 1e3,
            theirs(py)
        );
    }

    // Decoding alone, from memory: 256 MiB of stored samples.
    println!();
    println!("| format | decode from memory | samples/s |");
    println!("|---|---:|---:|");
    let bytes: Vec<u8> = (0..256u32 << 20)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    for f in [Format::F16, Format::F212, Format::F8, Format::F311] {
        let n = f.samples_in(bytes.len() as u64) as usize;
        let mut out = vec![0i32; n];
        let t = time(|| {
            format::decode(f, &bytes, &mut out);
            out[n / 2]
        });
        println!(
            "| {} | {:.2} GB/s | {:.0} M |",
            f.code(),
            bytes.len() as f64 / t.as_secs_f64() / 1e9,
            n as f64 / t.as_secs_f64() / 1e6
        );
    }
}
