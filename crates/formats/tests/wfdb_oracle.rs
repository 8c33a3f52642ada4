//! Our WFDB record reader and writer against wfdb-python 4.3.1 (the oracle), on every
//! record of `../shared/data` and on records written by both sides.
//!
//! Equal digital values, physical values within 1e-9 relative, equal header fields.
//! Where wfdb-python departs from the WFDB specification (docs/formats.md), the test
//! follows the specification and asserts the documented difference, so that a change on
//! either side shows up.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use formats::wfdb::{
    Format, ReadOptions, Record, RecordLine, SegmentSpec, SignalSpec, Signals, WriteSignal,
    write_header, write_record,
};
use serde_json::{Value, json};

struct Oracle {
    batch: testkit::OracleBatch,
    ids: Vec<String>,
}

/// What wfdb-python read for one job.
struct OracleRead {
    meta: Value,
    digital: Vec<Vec<i64>>,
    physical: Vec<Vec<f64>>,
}

impl Oracle {
    fn new(test: &str) -> Option<Oracle> {
        Some(Oracle {
            batch: testkit::OracleBatch::new(test, "wfdb_oracle.py")?,
            ids: Vec::new(),
        })
    }

    fn read(
        &mut self,
        id: &str,
        record: &Path,
        from: u64,
        to: Option<u64>,
        channels: Option<&[usize]>,
    ) {
        self.ids.push(id.to_string());
        self.batch.push(json!({
            "id": id, "record": record.to_str().unwrap(),
            "from": from, "to": to, "channels": channels,
        }));
    }

    fn write(&mut self, id: &str, spec: Value) {
        self.ids.push(id.to_string());
        self.batch.push(json!({"id": id, "write": spec}));
    }

    /// Runs every queued job in one Python process and returns the results by id.
    fn run(&mut self) -> BTreeMap<String, OracleRead> {
        let out = self.batch.run();
        let mut results = BTreeMap::new();
        for id in self.ids.drain(..) {
            let meta = out.meta(&id);
            // Signals are stored one after another; the lengths say where each ends.
            let split = |ext: &str, lens: &Value| -> Vec<Vec<[u8; 8]>> {
                let words: Vec<[u8; 8]> = out
                    .bytes(&id, ext)
                    .chunks_exact(8)
                    .map(|c| c.try_into().unwrap())
                    .collect();
                let mut rest = &words[..];
                lens.as_array()
                    .map(|l| {
                        l.iter()
                            .map(|n| {
                                let (a, b) = rest.split_at(n.as_u64().unwrap() as usize);
                                rest = b;
                                a.to_vec()
                            })
                            .collect()
                    })
                    .unwrap_or_default()
            };
            let digital = split("d", &meta["digital_len"])
                .into_iter()
                .map(|s| s.into_iter().map(i64::from_le_bytes).collect())
                .collect();
            let physical = split("p", &meta["physical_len"])
                .into_iter()
                .map(|s| s.into_iter().map(f64::from_le_bytes).collect())
                .collect();
            results.insert(
                id,
                OracleRead {
                    meta,
                    digital,
                    physical,
                },
            );
        }
        results
    }
}

fn close(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

/// Asserts our samples equal the oracle's: digital exactly (unless `digital` is false),
/// physical within 1e-9 relative.
fn assert_same_samples(what: &str, ours: &Signals, oracle: &OracleRead, digital: bool) {
    assert!(
        oracle.meta.get("physical_error").is_none(),
        "{what}: the oracle failed: {}",
        oracle.meta
    );
    assert_eq!(
        ours.signals.len(),
        oracle.physical.len(),
        "{what}: signal count"
    );
    for (k, s) in ours.signals.iter().enumerate() {
        if digital {
            assert!(
                oracle.meta.get("digital_error").is_none(),
                "{what}: {}",
                oracle.meta
            );
            let theirs = &oracle.digital[k];
            assert_eq!(
                s.digital.len(),
                theirs.len(),
                "{what}: signal {k}: sample count"
            );
            if let Some(i) = (0..theirs.len()).find(|&i| s.digital[i] as i64 != theirs[i]) {
                panic!(
                    "{what}: signal {k}: digital sample {i}: ours {} oracle {}",
                    s.digital[i], theirs[i]
                );
            }
        }
        let ours_p = s.physical();
        let theirs = &oracle.physical[k];
        assert_eq!(
            ours_p.len(),
            theirs.len(),
            "{what}: signal {k}: physical count"
        );
        if let Some(i) = (0..theirs.len()).find(|&i| !close(ours_p[i], theirs[i])) {
            panic!(
                "{what}: signal {k}: physical sample {i}: ours {} oracle {}",
                ours_p[i], theirs[i]
            );
        }
    }
}

/// Asserts every header field wfdb-python reports equals ours (with the defaults it applies).
fn assert_same_header(what: &str, rec: &Record, oracle: &Value) {
    let h = &oracle["header"];
    assert!(
        !h.is_null(),
        "{what}: the oracle could not read the header: {oracle}"
    );
    let r = &rec.header.record;
    assert_eq!(h["record_name"], json!(r.name), "{what}: name");
    assert_eq!(h["n_sig"], json!(r.n_signals), "{what}: n_sig");
    assert_eq!(h["fs"].as_f64(), Some(r.effective_fs()), "{what}: fs");
    assert_eq!(
        h["counter_freq"].as_f64(),
        r.counter_freq,
        "{what}: counter_freq"
    );
    assert_eq!(
        h["base_counter"].as_f64(),
        r.base_counter,
        "{what}: base_counter"
    );
    assert_eq!(h["sig_len"].as_u64(), r.sig_len, "{what}: sig_len");
    let time = r.base_time.map(|t| {
        let s = format!("{:02}:{:02}:{:02}", t.hours, t.minutes, t.seconds);
        if t.micros == 0 {
            s
        } else {
            format!("{s}.{:06}", t.micros)
        }
    });
    assert_eq!(
        h["base_time"].as_str().map(str::to_string),
        time,
        "{what}: base_time"
    );
    let date = r
        .base_date
        .map(|d| format!("{:04}-{:02}-{:02}", d.year, d.month, d.day));
    assert_eq!(
        h["base_date"].as_str().map(str::to_string),
        date,
        "{what}: base_date"
    );
    let comments: Vec<String> = rec
        .header
        .comments
        .iter()
        .map(|c| c.trim_matches([' ', '\t', '#']).to_string())
        .collect();
    assert_eq!(h["comments"], json!(comments), "{what}: comments");
    if let Some(segs) = &rec.header.segments {
        let names: Vec<&str> = segs.iter().map(|s| s.name.as_str()).collect();
        let lens: Vec<u64> = segs.iter().map(|s| s.sig_len).collect();
        assert_eq!(h["seg_name"], json!(names), "{what}: seg_name");
        assert_eq!(h["seg_len"], json!(lens), "{what}: seg_len");
        return;
    }
    let col = |name: &str, k: usize| h[name].get(k).cloned().unwrap_or(Value::Null);
    for (k, s) in rec.header.signals.iter().enumerate() {
        let w = format!("{what}: signal {k}");
        assert_eq!(col("file_name", k), json!(s.file_name), "{w}: file_name");
        assert_eq!(
            col("fmt", k),
            json!(s.format.code().to_string()),
            "{w}: fmt"
        );
        assert_eq!(
            col("samps_per_frame", k),
            json!(s.effective_samples_per_frame()),
            "{w}: spf"
        );
        assert_eq!(col("skew", k), json!(s.skew), "{w}: skew");
        assert_eq!(
            col("byte_offset", k),
            json!(s.byte_offset),
            "{w}: byte_offset"
        );
        assert_eq!(
            col("adc_gain", k).as_f64(),
            Some(s.effective_gain()),
            "{w}: adc_gain"
        );
        assert_eq!(
            col("baseline", k),
            json!(s.effective_baseline()),
            "{w}: baseline"
        );
        assert_eq!(col("units", k), json!(s.effective_units()), "{w}: units");
        assert_eq!(col("adc_res", k), json!(s.adc_res), "{w}: adc_res");
        assert_eq!(col("adc_zero", k), json!(s.adc_zero), "{w}: adc_zero");
        assert_eq!(
            col("init_value", k),
            json!(s.initial_value),
            "{w}: init_value"
        );
        assert_eq!(col("checksum", k), json!(s.checksum), "{w}: checksum");
        assert_eq!(col("block_size", k), json!(s.block_size), "{w}: block_size");
        assert_eq!(col("sig_name", k), json!(s.description), "{w}: sig_name");
    }
}

fn read_all(rec: &Record) -> Signals {
    rec.read(&ReadOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", rec.path.display()))
}

fn records_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "hea"))
        .map(|p| p.with_extension(""))
        .collect();
    v.sort();
    v
}

#[test]
fn every_real_record_matches_the_oracle() {
    let Some(data) = testkit::shared_data("every_real_record_matches_the_oracle") else {
        return;
    };
    let Some(mut oracle) = Oracle::new("every_real_record_matches_the_oracle") else {
        return;
    };
    let mut checked = Vec::new();
    for sub in ["cpsc2021", "circor2022/training_data"] {
        for rec in records_in(&data.join(sub)) {
            let id = format!("{}", checked.len());
            oracle.read(&id, &rec, 0, None, None);
            checked.push((id, rec));
        }
    }
    let results = oracle.run();
    for (id, path) in &checked {
        let rec = Record::open(path).unwrap();
        let what = path.display().to_string();
        assert_same_header(&what, &rec, &results[id].meta);
        assert_same_samples(&what, &read_all(&rec), &results[id], true);
    }
    assert_eq!(checked.len(), 23 + 121, "every CPSC and CirCor record");
}

/// wfdb-python cannot parse the CinC 2017 headers' `YYYY-MM-DD HH:MM:SS` (docs/formats.md #11).
/// We read them; the oracle reads the same `.mat` files through a copy of each header
/// without the date and time, and everything else must agree.
#[test]
fn cinc2017_records_match_the_oracle_despite_their_dates() {
    let test = "cinc2017_records_match_the_oracle_despite_their_dates";
    let Some(data) = testkit::shared_data(test) else {
        return;
    };
    let Some(mut oracle) = Oracle::new(test) else {
        return;
    };
    let copies = tempfile::tempdir().unwrap();
    let records = records_in(&data.join("cinc2017"));
    for (i, path) in records.iter().enumerate() {
        let rec = Record::open(path).unwrap();
        let name = &rec.header.record.name;
        // Our reading of the original header keeps the date, in its own order.
        assert!(rec.header.record.date_before_time, "{name}");
        let text = std::fs::read_to_string(path.with_extension("hea")).unwrap();
        assert!(
            text.lines()
                .next()
                .unwrap()
                .contains(&rec.header.record.base_date.unwrap().to_string())
        );
        // The oracle fails on the original...
        oracle.read(&format!("orig{i}"), path, 0, None, None);
        // ...and reads a copy whose record line stops after sig_len.
        let mut h = rec.header.clone();
        h.record.base_date = None;
        h.record.base_time = None;
        write_header(copies.path(), &h).unwrap();
        let mat = format!("{name}.mat");
        std::os::unix::fs::symlink(data.join("cinc2017").join(&mat), copies.path().join(&mat))
            .unwrap();
        oracle.read(
            &format!("copy{i}"),
            &copies.path().join(name),
            0,
            None,
            None,
        );
    }
    let results = oracle.run();
    for (i, path) in records.iter().enumerate() {
        let what = path.display().to_string();
        let orig = &results[&format!("orig{i}")].meta;
        assert!(
            orig["header_error"]
                .as_str()
                .is_some_and(|e| e.starts_with("ValueError")),
            "{what}: wfdb-python now reads the 2017 date; update wfdb.md #11: {orig}"
        );
        let rec = Record::open(path).unwrap();
        let copy = &results[&format!("copy{i}")];
        let mut no_date = rec.clone();
        no_date.header.record.base_date = None;
        no_date.header.record.base_time = None;
        assert_same_header(&what, &no_date, &copy.meta);
        assert_same_samples(&what, &read_all(&rec), copy, true);
    }
    assert_eq!(records.len(), 48);
}

/// Partial reads (from/to) and signal subsets, on real records, against the oracle.
#[test]
fn partial_reads_match_the_oracle() {
    let test = "partial_reads_match_the_oracle";
    let Some(data) = testkit::shared_data(test) else {
        return;
    };
    let Some(mut oracle) = Oracle::new(test) else {
        return;
    };
    let mut cases = Vec::new();
    for (k, rec) in records_in(&data.join("cpsc2021")).into_iter().enumerate() {
        let r = Record::open(&rec).unwrap();
        let len = r.sig_len().unwrap();
        let ranges = [
            (0, Some(1)),
            (len / 3, Some(len / 3 + 777)),
            (len - 5, None),
            (len, None),
        ];
        for (j, (from, to)) in ranges.into_iter().enumerate() {
            let chans: Option<Vec<usize>> = match j % 3 {
                0 => None,
                1 => Some(vec![1]),
                _ => Some(vec![1, 0]),
            };
            let id = format!("{k}_{j}");
            oracle.read(&id, &rec, from, to, chans.as_deref());
            cases.push((id, rec.clone(), from, to, chans));
        }
    }
    let results = oracle.run();
    for (id, path, from, to, chans) in cases {
        let rec = Record::open(&path).unwrap();
        let ours = rec
            .read(&ReadOptions {
                from,
                to,
                signals: chans.clone(),
            })
            .unwrap();
        let what = format!("{} [{from}, {to:?}) {chans:?}", path.display());
        if from == to.unwrap_or(rec.sig_len().unwrap()) {
            // An empty range: wfdb-python refuses it; we return empty signals.
            assert!(results[&id].meta.get("physical_error").is_some(), "{what}");
            assert!(ours.signals.iter().all(|s| s.digital.is_empty()));
            continue;
        }
        assert_same_samples(&what, &ours, &results[&id], true);
    }
}

/// A deterministic pseudo-random generator, so that failures reproduce.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn in_range(&mut self, lo: i32, hi: i32) -> i32 {
        (lo as i64 + (self.next() % ((hi as i64 - lo as i64 + 1) as u64)) as i64) as i32
    }
}

/// Samples for a format: a random walk over its range, with its invalid value sprinkled in.
fn samples_for(format: Format, n: usize, rng: &mut Lcg) -> Vec<i32> {
    let (lo, hi) = match format {
        Format::F8 => (-3000, 3000),
        f => f.range(),
    };
    let mut v = Vec::with_capacity(n);
    let mut x = rng.in_range(lo, hi);
    for i in 0..n {
        if format == Format::F8 {
            x = (x + rng.in_range(-128, 127)).clamp(lo, hi);
            // Keep differences storable after clamping.
            if let Some(&p) = v.last() {
                x = x.clamp(p - 128, p + 127);
            }
        } else if i % 17 == 5 {
            x = lo; // the invalid-sample sentinel
        } else {
            x = rng.in_range(lo, hi);
        }
        v.push(x);
    }
    v
}

fn spec(file: &str, format: Format, spf: u32, k: usize) -> SignalSpec {
    let mut s = SignalSpec::new(file, format);
    s.samples_per_frame = (spf != 1).then_some(spf);
    s.adc_gain = Some([200.0, 1000.0, 38180.879946031266, 0.5][k % 4]);
    s.baseline = Some([0, -12, 4000, 7][k % 4]);
    s.units = Some(["mV", "uV", "mmHg", "mV"][k % 4].to_string());
    s.adc_res = Some(format.written_adc_res());
    s.adc_zero = Some(0);
    s.description = Some(format!("sig {k}"));
    s
}

fn record_line(name: &str) -> RecordLine {
    RecordLine::new(name, 360.0)
}

/// Records we write, in every format, read back by wfdb-python: odd signal counts (which
/// make 212/310/311 pair samples across frames), odd sample counts (partial last groups),
/// several samples per frame, several files per record.
#[test]
fn records_we_write_read_back_in_the_oracle() {
    let test = "records_we_write_read_back_in_the_oracle";
    let Some(mut oracle) = Oracle::new(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Lcg(7);
    let mut cases = Vec::new();
    for format in Format::PACKED.into_iter().filter(|&f| f != Format::Null) {
        for (n_sig, frames, spf) in [
            (1, 1, vec![1]),
            (1, 1001, vec![1]),
            (3, 1000, vec![1, 1, 1]),
            (2, 333, vec![1, 4]),
            (3, 101, vec![2, 1, 3]),
        ] {
            let name = format!(
                "w{}_{}_{}_{}",
                format.code(),
                n_sig,
                frames,
                spf.iter().map(u32::to_string).collect::<String>()
            );
            let data: Vec<Vec<i32>> = (0..n_sig)
                .map(|k| samples_for(format, frames * spf[k] as usize, &mut rng))
                .collect();
            let signals: Vec<WriteSignal> = (0..n_sig)
                .map(|k| WriteSignal {
                    spec: spec(&format!("{name}.dat"), format, spf[k], k),
                    samples: &data[k],
                })
                .collect();
            write_record(
                dir.path(),
                &record_line(&name),
                &signals,
                &["written by physiojudge".into()],
            )
            .unwrap();
            oracle.read(&name, &dir.path().join(&name), 0, None, None);
            cases.push((name, format, data));
        }
    }
    // Two files in one record, different formats.
    let a = samples_for(Format::F212, 500, &mut rng);
    let b = samples_for(Format::F16, 500, &mut rng);
    let c = samples_for(Format::F16, 500, &mut rng);
    let signals = [
        WriteSignal {
            spec: spec("two_a.dat", Format::F212, 1, 0),
            samples: &a,
        },
        WriteSignal {
            spec: spec("two_b.dat", Format::F16, 1, 1),
            samples: &b,
        },
        WriteSignal {
            spec: spec("two_b.dat", Format::F16, 1, 2),
            samples: &c,
        },
    ];
    write_record(dir.path(), &record_line("two"), &signals, &[]).unwrap();
    oracle.read("two", &dir.path().join("two"), 0, None, None);
    cases.push(("two".into(), Format::F16, vec![a, b, c]));

    let results = oracle.run();
    for (name, format, data) in cases {
        let rec = Record::open(dir.path().join(&name)).unwrap();
        let ours = read_all(&rec);
        // Our own reading gives back what we wrote.
        for (k, s) in ours.signals.iter().enumerate() {
            assert_eq!(s.digital, data[k], "{name}: signal {k} round trip");
        }
        let theirs = &results[&name];
        assert_same_header(&name, &rec, &theirs.meta);
        if format == Format::F61 {
            // docs/formats.md #5: wfdb-python crashes reading format 61 digitally without smoothing
            // frames (even at one sample per frame); compare physical values only.
            assert!(
                theirs.meta.get("digital_error").is_some(),
                "{name}: wfdb-python fixed #5: {}",
                theirs.meta
            );
            assert_same_samples(&name, &ours, theirs, false);
        } else {
            assert_same_samples(&name, &ours, theirs, true);
        }
    }
}

/// Records wfdb-python writes (formats 16, 212, 80, 24, 32: the ones it can write, #12)
/// read back identically by us.
#[test]
fn records_the_oracle_writes_read_back_here() {
    let test = "records_the_oracle_writes_read_back_here";
    let Some(mut oracle) = Oracle::new(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Lcg(11);
    let mut cases = Vec::new();
    for format in [
        Format::F16,
        Format::F212,
        Format::F80,
        Format::F24,
        Format::F32,
    ] {
        for (n_sig, frames) in [(1, 999), (2, 1000), (3, 777)] {
            let name = format!("o{}_{}_{}", format.code(), n_sig, frames);
            // wfdb-python writes its invalid value for NaN only, so keep clear of it here.
            let (lo, hi) = format.range();
            let data: Vec<Vec<i64>> = (0..n_sig)
                .map(|_| {
                    (0..frames)
                        .map(|_| rng.in_range(lo + 1, hi) as i64)
                        .collect()
                })
                .collect();
            oracle.write(&name, json!({
                "dir": dir.path().to_str().unwrap(), "name": name, "fs": 250,
                "fmt": vec![format.code().to_string(); n_sig],
                "adc_gain": vec![100.0; n_sig], "baseline": vec![3; n_sig],
                "units": vec!["mV"; n_sig], "sig_name": (0..n_sig).map(|k| format!("s{k}")).collect::<Vec<_>>(),
                "digital": data,
            }));
            cases.push((name, data));
        }
    }
    let results = oracle.run();
    for (name, data) in cases {
        assert_eq!(
            results[&name].meta["ok"],
            json!(true),
            "{name}: {}",
            results[&name].meta
        );
        let rec = Record::open(dir.path().join(&name)).unwrap();
        let ours = read_all(&rec);
        for (k, s) in ours.signals.iter().enumerate() {
            let want: Vec<i32> = data[k].iter().map(|&v| v as i32).collect();
            assert_eq!(s.digital, want, "{name}: signal {k}");
        }
    }
}

/// Skew: a signal's frame t is stored at frame t + skew; samples past the end are invalid.
#[test]
fn skewed_signals_match_the_oracle() {
    let test = "skewed_signals_match_the_oracle";
    let Some(mut oracle) = Oracle::new(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Lcg(3);
    let mut names = Vec::new();
    for (format, skews) in [
        (Format::F16, [0u32, 3]),
        (Format::F212, [5, 0]),
        (Format::F311, [0, 2]),
    ] {
        let name = format!("skew{}", format.code());
        let a = samples_for(format, 100, &mut rng);
        let b = samples_for(format, 100, &mut rng);
        let signals = [
            WriteSignal {
                spec: spec(&format!("{name}.dat"), format, 1, 0),
                samples: &a,
            },
            WriteSignal {
                spec: spec(&format!("{name}.dat"), format, 1, 1),
                samples: &b,
            },
        ];
        let mut h = write_record(dir.path(), &record_line(&name), &signals, &[]).unwrap();
        for (s, k) in h.signals.iter_mut().zip(skews) {
            s.skew = Some(k);
        }
        write_header(dir.path(), &h).unwrap();
        for (from, to) in [(0, None), (90, None), (10, Some(20))] {
            let id = format!("{name}_{from}");
            oracle.read(&id, &dir.path().join(&name), from, to, None);
            names.push((id, name.clone(), from, to, [a.clone(), b.clone()], skews));
        }
    }
    let results = oracle.run();
    for (id, name, from, to, data, skews) in names {
        let rec = Record::open(dir.path().join(&name)).unwrap();
        let ours = rec
            .read(&ReadOptions {
                from,
                to,
                signals: None,
            })
            .unwrap();
        for (k, s) in ours.signals.iter().enumerate() {
            let inv = rec.header.signals[k].format.invalid_value().unwrap();
            let want: Vec<i32> = (from..to.unwrap_or(100))
                .map(|t| {
                    data[k]
                        .get((t + skews[k] as u64) as usize)
                        .copied()
                        .unwrap_or(inv)
                })
                .collect();
            assert_eq!(s.digital, want, "{id}: signal {k}");
        }
        assert_same_samples(&id, &ours, &results[&id], true);
    }
}

/// Format 8 stores differences, so a read from frame N must sum the differences before it
/// (docs/formats.md). wfdb-python instead restarts from the header's initial value at `sampfrom`
/// (its own comment says so); we follow the specification and document the difference.
#[test]
fn format_8_partial_reads_sum_from_the_start() {
    let test = "format_8_partial_reads_sum_from_the_start";
    let Some(mut oracle) = Oracle::new(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Lcg(5);
    let a = samples_for(Format::F8, 500, &mut rng);
    let signals = [WriteSignal {
        spec: spec("f8.dat", Format::F8, 1, 0),
        samples: &a,
    }];
    write_record(dir.path(), &record_line("f8"), &signals, &[]).unwrap();
    oracle.read("part", &dir.path().join("f8"), 200, Some(300), None);
    let results = oracle.run();
    let rec = Record::open(dir.path().join("f8")).unwrap();
    let ours = rec
        .read(&ReadOptions {
            from: 200,
            to: Some(300),
            signals: None,
        })
        .unwrap();
    assert_eq!(ours.signals[0].digital, a[200..300]);
    let theirs = &results["part"].digital[0];
    let initial = rec.header.signals[0].initial_value.unwrap() as i64;
    // The oracle's values are ours shifted so that sample 200 starts from the initial value
    // plus its own difference.
    let shift = a[199] as i64 - initial;
    let expected: Vec<i64> = a[200..300].iter().map(|&v| v as i64 - shift).collect();
    assert_eq!(
        theirs, &expected,
        "wfdb-python's format 8 partial read changed"
    );
}

/// Multi-segment records, fixed and variable layout, with a null `~` segment.
#[test]
fn multi_segment_records_match_the_oracle() {
    let test = "multi_segment_records_match_the_oracle";
    let Some(mut oracle) = Oracle::new(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Lcg(9);
    let seg = |name: &str,
               format: Format,
               names: &[&str],
               gains: &[f64],
               frames: usize,
               rng: &mut Lcg|
     -> Vec<Vec<i32>> {
        let data: Vec<Vec<i32>> = names
            .iter()
            .map(|_| samples_for(format, frames, rng))
            .collect();
        let signals: Vec<WriteSignal> = names
            .iter()
            .enumerate()
            .map(|(k, n)| {
                let mut s = spec(&format!("{name}.dat"), format, 1, k);
                s.description = Some(n.to_string());
                s.adc_gain = Some(gains[k]);
                WriteSignal {
                    spec: s,
                    samples: &data[k],
                }
            })
            .collect();
        write_record(dir.path(), &record_line(name), &signals, &[]).unwrap();
        data
    };
    let multi = |name: &str, segments: &[(&str, u64)]| {
        let mut line = record_line(name);
        line.n_segments = Some(segments.len());
        line.n_signals = 2;
        line.sig_len = Some(segments.iter().map(|s| s.1).sum());
        let h = formats::wfdb::Header {
            record: line,
            signals: vec![],
            segments: Some(
                segments
                    .iter()
                    .map(|(n, l)| SegmentSpec {
                        name: n.to_string(),
                        sig_len: *l,
                    })
                    .collect(),
            ),
            comments: vec![" a multi-segment record".into()],
        };
        write_header(dir.path(), &h).unwrap();
    };
    // Fixed layout: same signals, same calibration, in every segment.
    seg(
        "fa",
        Format::F212,
        &["I", "II"],
        &[200.0, 200.0],
        300,
        &mut rng,
    );
    seg(
        "fb",
        Format::F212,
        &["I", "II"],
        &[200.0, 200.0],
        250,
        &mut rng,
    );
    multi("fixed", &[("fa", 300), ("fb", 250)]);
    // Variable layout: a layout segment, a gap, segments with other signals and gains.
    let mut lay = [spec("~", Format::Null, 1, 0), spec("~", Format::Null, 1, 1)];
    lay[0].description = Some("II".into());
    lay[1].description = Some("V".into());
    let signals: Vec<WriteSignal> = lay
        .iter()
        .map(|s| WriteSignal {
            spec: s.clone(),
            samples: &[],
        })
        .collect();
    write_record(dir.path(), &record_line("var_layout"), &signals, &[]).unwrap();
    seg(
        "va",
        Format::F16,
        &["V", "II"],
        &[100.0, 50.0],
        200,
        &mut rng,
    );
    seg("vb", Format::F16, &["II"], &[25.0], 120, &mut rng);
    multi(
        "variable",
        &[("var_layout", 0), ("va", 200), ("~", 80), ("vb", 120)],
    );
    // The same with one gain per signal: a gap, and a signal missing from a segment,
    // hold no valid sample and leave the calibration uniform.
    seg(
        "vc",
        Format::F16,
        &["II", "V"],
        &[50.0, 100.0],
        200,
        &mut rng,
    );
    seg("vd", Format::F16, &["II"], &[50.0], 120, &mut rng);
    multi(
        "uniform",
        &[("var_layout", 0), ("vc", 200), ("~", 80), ("vd", 120)],
    );
    let reads = [
        ("fixed", 0, None),
        ("uniform", 0, None),
        ("uniform", 190, Some(290)),
        ("variable", 0, None),
        ("variable", 150, Some(330)),
    ];
    for (id, from, to) in reads {
        oracle.read(&format!("{id}{from}"), &dir.path().join(id), from, to, None);
    }
    let results = oracle.run();
    let reads = [
        ("fixed", 0, None),
        ("uniform", 0, None),
        ("uniform", 190, Some(290)),
        ("variable", 0, None),
        ("variable", 150, Some(330)),
    ];
    for (id, from, to) in reads {
        let rec = Record::open(dir.path().join(id)).unwrap();
        let ours = rec
            .read(&ReadOptions {
                from,
                to,
                signals: None,
            })
            .unwrap();
        let key = format!("{id}{from}");
        assert_same_header(&key, &rec, &results[&key].meta);
        // Digital values of a variable layout come from segments with different gains:
        // wfdb-python refuses them, and we say they are not uniform.
        let digital = id != "variable";
        assert_eq!(
            ours.signals.iter().all(|s| s.has_uniform_calibration()),
            digital,
            "{key}"
        );
        assert_same_samples(&key, &ours, &results[&key], digital);
    }
}

/// The header's skew is in samples; the WFDB library reads it in frames, rounded
/// (`readheader`: `skew/spf + 0.5`). wfdb-python takes it as frames. They agree at one
/// sample per frame (covered above) and differ above; we follow the library.
#[test]
fn skew_with_several_samples_per_frame_follows_the_wfdb_library() {
    let test = "skew_with_several_samples_per_frame_follows_the_wfdb_library";
    let Some(mut oracle) = Oracle::new(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let data: Vec<u8> = (0i16..40).flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(dir.path().join("sk.dat"), data).unwrap();
    std::fs::write(
        dir.path().join("sk.hea"),
        "sk 1 250 20\nsk.dat 16x2:2 200 16 0 0\n",
    )
    .unwrap();
    oracle.read("sk", &dir.path().join("sk"), 0, None, None);
    let results = oracle.run();
    let ours = read_all(&Record::open(dir.path().join("sk")).unwrap());
    // Ours: 2 samples of skew = 1 frame, so frame 0 holds stored samples 2 and 3.
    assert_eq!(ours.signals[0].digital[..2], [2, 3]);
    // wfdb-python: 2 frames, so frame 0 holds stored samples 4 and 5.
    assert_eq!(
        results["sk"].digital[0][..2],
        [4, 5],
        "wfdb-python's skew changed"
    );
}

const FLAC: [Format; 3] = [Format::F508, Format::F516, Format::F524];

/// A FLAC record's shape: signals, frames, samples per frame (shared by the signals of a
/// FLAC file). Frames straddle FLAC's blocks of 4096 samples; 12 signals take two files.
const FLAC_SHAPES: [(usize, usize, u32); 7] = [
    (1, 1, 1),
    (1, 4097, 1),
    (2, 10007, 1),
    (3, 5000, 1),
    (5, 3001, 1),
    (12, 4500, 1),
    (3, 1500, 3),
];

/// Reads a record's frames `from..to` (all of them with `None`), or panics naming it.
fn read_range(rec: &Record, from: u64, to: Option<u64>) -> Signals {
    rec.read(&ReadOptions {
        from,
        to,
        signals: None,
    })
    .unwrap_or_else(|e| panic!("{}: {e}", rec.path.display()))
}

/// The ranges a FLAC test reads in part: across a block boundary, the end, one frame.
fn flac_ranges(frames: u64) -> Vec<(u64, Option<u64>)> {
    let mut v = vec![(frames - 1, None)];
    if frames > 4200 {
        v.push((4000, Some(4200)));
        v.push((frames / 2, Some(frames / 2 + 1)));
    }
    v
}

/// FLAC records (formats 508, 516, 524) that wfdb-python writes (through libsndfile)
/// read back here sample for sample, whole and in part, and as wfdb-python reads them:
/// 1 to 12 signals (wfdb-python puts at most 8 in a file, so 12 make two files), several
/// samples per frame, lengths that are no multiple of the block size, and each format's
/// invalid value.
#[test]
fn flac_records_the_oracle_writes_read_back_here() {
    let test = "flac_records_the_oracle_writes_read_back_here";
    let Some(mut oracle) = Oracle::new(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Lcg(23);
    let mut cases = Vec::new();
    for format in FLAC {
        for (n_sig, frames, spf) in FLAC_SHAPES {
            let name = format!("of{}_{n_sig}_{frames}_{spf}", format.code());
            let data: Vec<Vec<i64>> = (0..n_sig)
                .map(|_| {
                    samples_for(format, frames * spf as usize, &mut rng)
                        .into_iter()
                        .map(i64::from)
                        .collect()
                })
                .collect();
            let mut job = json!({
                "dir": dir.path().to_str().unwrap(), "name": name, "fs": 500,
                "fmt": vec![format.code().to_string(); n_sig],
                "adc_gain": vec![200.0; n_sig], "baseline": vec![-3; n_sig],
                "units": vec!["mV"; n_sig],
                "sig_name": (0..n_sig).map(|k| format!("s{k}")).collect::<Vec<_>>(),
                "digital": data,
            });
            if spf != 1 {
                job["samps_per_frame"] = json!(vec![spf; n_sig]);
            }
            oracle.write(&format!("w_{name}"), job);
            cases.push((name, frames as u64, data));
        }
    }
    let written = oracle.run();
    for (name, frames, _) in &cases {
        let w = &written[&format!("w_{name}")];
        assert_eq!(w.meta["ok"], json!(true), "{name}: {}", w.meta);
        let path = dir.path().join(name);
        oracle.read(name, &path, 0, None, None);
        for (j, (from, to)) in flac_ranges(*frames).into_iter().enumerate() {
            oracle.read(&format!("{name}_{j}"), &path, from, to, None);
        }
    }
    let results = oracle.run();
    for (name, frames, data) in cases {
        let rec = Record::open(dir.path().join(&name)).unwrap();
        let files: std::collections::BTreeSet<&str> = rec
            .header
            .signals
            .iter()
            .map(|s| s.file_name.as_str())
            .collect();
        assert_eq!(files.len(), data.len().div_ceil(8), "{name}: files");
        let ours = read_all(&rec);
        for (k, s) in ours.signals.iter().enumerate() {
            let want: Vec<i32> = data[k].iter().map(|&v| v as i32).collect();
            assert_eq!(s.digital, want, "{name}: signal {k}");
        }
        assert_same_header(&name, &rec, &results[&name].meta);
        assert_same_samples(&name, &ours, &results[&name], true);
        for (j, (from, to)) in flac_ranges(frames).into_iter().enumerate() {
            let what = format!("{name} [{from}, {to:?})");
            let part = read_range(&rec, from, to);
            assert_same_samples(&what, &part, &results[&format!("{name}_{j}")], true);
        }
    }
}

/// FLAC records we write read back identically in wfdb-python, whole and in part: every
/// format, 1 to 12 signals (12 in two files of 8 and 4), several samples per frame, the
/// invalid values, lengths across block boundaries.
#[test]
fn flac_records_we_write_read_back_in_the_oracle() {
    let test = "flac_records_we_write_read_back_in_the_oracle";
    let Some(mut oracle) = Oracle::new(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Lcg(29);
    let mut cases = Vec::new();
    for format in FLAC {
        for (n_sig, frames, spf) in FLAC_SHAPES {
            let name = format!("wf{}_{n_sig}_{frames}_{spf}", format.code());
            let data: Vec<Vec<i32>> = (0..n_sig)
                .map(|_| samples_for(format, frames * spf as usize, &mut rng))
                .collect();
            let signals: Vec<WriteSignal> = (0..n_sig)
                .map(|k| {
                    let file = format!("{name}_{}.dat", k / 8);
                    WriteSignal {
                        spec: spec(&file, format, spf, k),
                        samples: &data[k],
                    }
                })
                .collect();
            write_record(dir.path(), &record_line(&name), &signals, &[]).unwrap();
            let path = dir.path().join(&name);
            oracle.read(&name, &path, 0, None, None);
            for (j, (from, to)) in flac_ranges(frames as u64).into_iter().enumerate() {
                oracle.read(&format!("{name}_{j}"), &path, from, to, None);
            }
            cases.push((name, frames as u64, data));
        }
    }
    let results = oracle.run();
    for (name, frames, data) in cases {
        let rec = Record::open(dir.path().join(&name)).unwrap();
        let ours = read_all(&rec);
        for (k, s) in ours.signals.iter().enumerate() {
            assert_eq!(s.digital, data[k], "{name}: signal {k} round trip");
        }
        let theirs = &results[&name];
        assert_same_header(&name, &rec, &theirs.meta);
        for (k, d) in theirs.digital.iter().enumerate() {
            let want: Vec<i64> = data[k].iter().map(|&v| i64::from(v)).collect();
            assert_eq!(d, &want, "{name}: signal {k}: wfdb-python's samples");
        }
        assert_same_samples(&name, &ours, theirs, true);
        for (j, (from, to)) in flac_ranges(frames).into_iter().enumerate() {
            let what = format!("{name} [{from}, {to:?})");
            let part = read_range(&rec, from, to);
            assert_same_samples(&what, &part, &results[&format!("{name}_{j}")], true);
        }
    }
}
