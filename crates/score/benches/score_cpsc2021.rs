//! CPSC 2021 scoring throughput: loading the reference (headers and `.atr` files) and
//! scoring one prediction file per record, end to end, as `physiojudge score cpsc2021`
//! does.
//!
//! `cargo bench -p score --bench score_cpsc2021`. Sets: the 23 real records of
//! `../shared/data`, 2,000 generated records, and 1,436 generated records of the full
//! CPSC 2021 size (about 486 hours of 2-lead 200 Hz ECG, the target of issue 4). Each
//! figure is the median of 5 timed runs after a warm-up (files in the page cache).

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use formats::wfdb::annotation::{self, Annotation, Definitions, codes};
use formats::wfdb::{Format, Header, RecordLine, SignalSpec, write_header};
use score::Mode;
use score::cpsc2021::{Class, load_reference, score};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Writes a labelled record (header and `.atr`, no signals) of `minutes` minutes, and a
/// prediction close to the truth. Beats every 0.8 s; AFp records get episodes of 60 beats.
fn synth_record(dir: &Path, preds: &Path, i: usize, minutes: f64) {
    let name = format!("data_{}_{}", 1000 + i / 20, i % 20);
    let len = (minutes * 60.0 * 200.0) as u64;
    let class = [Class::N, Class::AFf, Class::AFp][i % 3];
    let comment = match class {
        Class::N => "non atrial fibrillation",
        Class::AFf => "persistent atrial fibrillation",
        Class::AFp => "paroxysmal atrial fibrillation",
    };
    let mut line = RecordLine::new(&name, 200.0);
    line.n_signals = 2;
    line.sig_len = Some(len);
    let signals = ["I", "II"]
        .iter()
        .map(|d| {
            let mut s = SignalSpec::new(format!("{name}.dat"), Format::F16);
            s.description = Some(d.to_string());
            s
        })
        .collect();
    let header = Header {
        record: line,
        signals,
        segments: None,
        comments: vec![format!(" {comment}")],
    };
    write_header(dir, &header).unwrap();

    let mut anns = Vec::new();
    let rhythm = |t: i64, aux: &[u8]| {
        let mut a = Annotation::new(t, codes::RHYTHM);
        a.aux = Some(aux.to_vec());
        a
    };
    let beats: Vec<i64> = (1..)
        .map(|k| k * 160)
        .take_while(|&t| t < len as i64 - 100)
        .collect();
    let mut episodes = Vec::new();
    if class == Class::AFf {
        anns.push(rhythm(0, b"(AFIB"));
    }
    for (k, &t) in beats.iter().enumerate() {
        if class == Class::AFp && k % 600 == 100 && k + 70 < beats.len() {
            anns.push(rhythm(t - 30, b"(AFIB"));
            episodes.push((t - 30, beats[k + 60] - 30));
        }
        if class == Class::AFp
            && k % 600 == 160
            && episodes.len()
                > anns
                    .iter()
                    .filter(|a| a.aux.as_deref() == Some(b"(N"))
                    .count()
        {
            anns.push(rhythm(t - 30, b"(N"));
        }
        anns.push(Annotation::new(t, codes::NORMAL));
    }
    if class == Class::AFf {
        anns.push(rhythm(len as i64 - 1, b"(N"));
        episodes.push((0, len as i64 - 1));
    }
    annotation::write(
        dir.join(format!("{name}.atr")),
        &anns,
        &Definitions::default(),
    )
    .unwrap();
    let rows: Vec<String> = episodes
        .iter()
        .map(|(s, e)| format!("[{},{}]", s + 40, e - 20))
        .collect();
    std::fs::write(
        preds.join(format!("{name}.json")),
        format!("{{\"predict_endpoints\": [{}]}}", rows.join(",")),
    )
    .unwrap();
    let mut list = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("RECORDS"))
        .unwrap();
    std::io::Write::write_all(&mut list, format!("{name}\n").as_bytes()).unwrap();
}

fn synth_set(n: usize, total_hours: f64) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, preds) = (tmp.path().join("ref"), tmp.path().join("pred"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&preds).unwrap();
    let mean_minutes = total_hours * 60.0 / n as f64;
    for i in 0..n {
        // Lengths spread from 0.2× to 1.8× the mean, as the real records vary.
        let minutes = mean_minutes * (0.2 + 1.6 * ((i * 7919) % n) as f64 / n as f64);
        synth_record(&dir, &preds, i, minutes);
    }
    (tmp, dir, preds)
}

fn measure(label: &str, dir: &Path, preds: &Path) {
    let run = || {
        let reference = load_reference(dir).unwrap();
        let report = score(&reference, preds, Mode::Strict).unwrap();
        let hours: f64 = reference
            .records
            .iter()
            .map(|r| r.len as f64 / 200.0 / 3600.0)
            .sum();
        (
            reference.records.len(),
            hours,
            report.score,
            report.errors.len(),
        )
    };
    let (n, hours, s, errors) = run();
    assert_eq!(errors, 0, "{label}: the predictions should all be valid");
    let t = median(
        (0..5)
            .map(|_| {
                let t = Instant::now();
                black_box(run());
                t.elapsed()
            })
            .collect(),
    );
    let secs = t.as_secs_f64();
    println!(
        "| {label} | {n} | {hours:.0} | {:.1} ms | {:.0} | {:.0} | {s:.4} |",
        secs * 1e3,
        n as f64 / secs,
        hours / secs
    );
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    println!("| set | records | ECG hours | load + score | records/s | ECG-hours/s | score |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    if let Some(data) = testkit::shared_data("score_cpsc2021 bench") {
        let dir = data.join("cpsc2021");
        let preds = tempfile::tempdir().unwrap();
        let reference = load_reference(&dir).unwrap();
        for r in &reference.records {
            let last = r.len as i64 - 1;
            let rows: Vec<String> = match r.class {
                Class::N => vec![],
                Class::AFf => vec![format!("[0,{last}]")],
                Class::AFp => r
                    .episodes
                    .iter()
                    .map(|&(s, e)| format!("[{s},{}]", e.min(last)))
                    .collect(),
            };
            std::fs::write(
                preds.path().join(format!("{}.json", r.name)),
                format!("{{\"predict_endpoints\": [{}]}}", rows.join(",")),
            )
            .unwrap();
        }
        measure("23 real CPSC 2021 records", &dir, preds.path());
    }
    let (_keep, dir, preds) = synth_set(2000, 2000.0 * 20.3 / 60.0);
    measure("2,000 generated records", &dir, &preds);
    let (_keep, dir, preds) = synth_set(1436, 486.0);
    measure("1,436 generated records, full CPSC 2021 size", &dir, &preds);
}
