//! FLAC read throughput (formats 508/516/524): our reader against wfdb-python's `rdrecord`
//! (whose FLAC path goes through `soundfile`, i.e. libsndfile and libFLAC) on the same
//! files, in one run, by the method of `wfdb_read.rs`: passes alternate with
//! wfdb-python's, each ratio is the median of the ratios of passes timed back to back.
//!
//! `cargo bench -p formats --bench flac_read` (wfdb-python from `.oracle-venv`). The
//! records are written by wfdb-python at the start of the run (`wrflac` jobs of
//! `benches/wfdb_python.py`), in a temporary folder, never committed: a 12-lead 500 Hz
//! 24-hour record (two files, as wfdb-python puts at most 8 signals in one), and sets of
//! small records. The 24-hour record is read in four 6-hour ranges by both sides: one read
//! of all of it would be 518 M samples, more than one read may return here
//! (`MAX_READ_SAMPLES`), and more than 4 GB of doubles in wfdb-python.

mod common;

use std::path::{Path, PathBuf};

use common::{Python, file_bytes, malloc_settings, ms, paired_n, paths, theirs};
use formats::wfdb::{ReadOptions, Record};

/// A set of records to read: a label, the records, the frame ranges each is read in
/// (`None`: whole), and the pairs of passes to time.
struct Set {
    label: String,
    records: Vec<PathBuf>,
    ranges: Option<Vec<(u64, u64)>>,
    pairs: usize,
}

/// Reads every record of a set as `rdrecord` does (digital values, or physical values
/// only), in its ranges; returns the samples read.
fn read_set(set: &Set, physical: bool) -> usize {
    let mut n = 0;
    for r in &set.records {
        let rec = Record::open(r).unwrap();
        let ranges = set
            .ranges
            .clone()
            .unwrap_or_else(|| vec![(0, rec.sig_len().unwrap())]);
        for (from, to) in ranges {
            let opts = ReadOptions {
                from,
                to: Some(to),
                signals: None,
            };
            if physical {
                let s = rec.read_physical(&opts).unwrap();
                n += s.signals.iter().map(|x| x.values.len()).sum::<usize>();
            } else {
                let s = rec.read(&opts).unwrap();
                n += s.signals.iter().map(|x| x.digital.len()).sum::<usize>();
            }
        }
    }
    n
}

/// Has wfdb-python write `count` FLAC records `<prefix>_<k>` in `dir`.
fn write_with_python(
    py: &mut Python,
    dir: &Path,
    prefix: &str,
    count: usize,
    spec: &str,
) -> Vec<PathBuf> {
    let records: Vec<PathBuf> = (0..count)
        .map(|k| dir.join(format!("{prefix}_{k}")))
        .collect();
    py.pass(&format!("wrflac:{}:{spec}", paths(&records)));
    records
}

fn main() {
    // `cargo test --benches` runs bench targets without `--bench`; only measure when
    // invoked through `cargo bench`.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let Some(python) = testkit::oracle_python("flac_read bench") else {
        println!("flac_read: no wfdb-python (PHYSIOJUDGE_ORACLE_PYTHON), nothing to compare");
        return;
    };
    let mut py = Python::start(&python);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let hours = 24;
    let day_frames = hours * 3600 * 500;
    let six_hours = day_frames / 4;
    let sets = [
        Set {
            label: "100 records, 12 leads, 500 Hz, 10 s, format 516 (two files each)".into(),
            records: write_with_python(&mut py, dir, "ecg", 100, "12,500,10,516"),
            ranges: None,
            pairs: 15,
        },
        Set {
            label: "20 records, 3 leads, 250 Hz, 30 min, format 524".into(),
            records: write_with_python(&mut py, dir, "holter", 20, "3,250,1800,524"),
            ranges: None,
            pairs: 15,
        },
        Set {
            label: "50 records, 1 lead, 100 Hz, 1 h, format 508".into(),
            records: write_with_python(&mut py, dir, "apnea", 50, "1,100,3600,508"),
            ranges: None,
            pairs: 15,
        },
        Set {
            label: format!(
                "{hours} h, 12 leads, 500 Hz, format 516 (two files), in four 6-hour ranges"
            ),
            records: write_with_python(
                &mut py,
                dir,
                "day",
                1,
                &format!("12,500,{},516", hours * 3600),
            ),
            ranges: Some(
                (0..4)
                    .map(|k| (k * six_hours, (k + 1) * six_hours))
                    .collect(),
            ),
            pairs: 5,
        },
    ];
    println!(
        "CPUs available to this process: {}; glibc malloc settings (ours only): {}",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        malloc_settings()
    );
    println!();
    println!(
        "| data | file MB | samples | ours digital | wfdb-python digital | ratio | ours physical | wfdb-python physical | ratio |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for set in &sets {
        let mb = file_bytes(&set.records) as f64 / 1e6;
        let samples = read_set(set, false);
        let ranges = set.ranges.as_ref().map_or(String::new(), |r| {
            let r: Vec<String> = r.iter().map(|(a, b)| format!("{a}-{b}")).collect();
            format!(":{}", r.join("/"))
        });
        let list = paths(&set.records);
        let (d, py_d) = paired_n(
            || read_set(set, false),
            Some(&mut py),
            &format!("rdrecord_digital:{list}{ranges}"),
            set.pairs,
        );
        let (p, py_p) = paired_n(
            || read_set(set, true),
            Some(&mut py),
            &format!("rdrecord:{list}{ranges}"),
            set.pairs,
        );
        println!(
            "| {} | {mb:.1} | {:.1} M | {} ({:.0} M/s) | {} | {} | {} |",
            set.label,
            samples as f64 / 1e6,
            ms(d),
            samples as f64 / d.as_secs_f64() / 1e6,
            theirs(py_d),
            ms(p),
            theirs(py_p),
        );
    }
}
