//! The synthetic records read with wfdb-python (the reference reader participants use)
//! exactly as with our `formats` readers: CPSC 2021 records and annotations, the CirCor
//! recordings' `.hea` + `.wav`, and CinC 2017's `.mat` through scipy.

use std::process::Command;

use formats::mat::MatFile;
use formats::wfdb::annotation;
use formats::wfdb::{ReadOptions, Record};
use synth::Challenge;

const SCRIPT: &str = r#"
import json, sys, glob, os
import numpy as np, scipy.io, wfdb
root = sys.argv[1]
out = {}
d = os.path.join(root, 'cpsc2021')
for name in open(os.path.join(d, 'RECORDS')).read().split():
    r = wfdb.rdrecord(os.path.join(d, name), physical=False)
    a = wfdb.rdann(os.path.join(d, name), 'atr')
    out[name] = {
        'fs': r.fs, 'len': r.sig_len, 'names': r.sig_name, 'units': r.units,
        'gain': [float(g) for g in r.adc_gain], 'baseline': [int(b) for b in r.baseline],
        'comments': r.comments,
        'sums': [int(s) for s in r.d_signal.astype(np.int64).sum(axis=0)],
        'ann': [[int(s) for s in a.sample], list(a.symbol), list(a.aux_note)],
    }
d = os.path.join(root, 'physionet2022')
for hea in sorted(glob.glob(os.path.join(d, '*.hea'))):
    name = os.path.basename(hea)[:-4]
    r = wfdb.rdrecord(os.path.join(d, name), physical=False)
    out[name] = {'fs': r.fs, 'len': r.sig_len, 'names': r.sig_name,
                 'sums': [int(r.d_signal.astype(np.int64).sum())]}
d = os.path.join(root, 'cinc2017')
for name in open(os.path.join(d, 'RECORDS')).read().split():
    v = scipy.io.loadmat(os.path.join(d, name + '.mat'))['val']
    out[name] = {'shape': list(v.shape), 'dtype': str(v.dtype), 'sums': [int(v.astype(np.int64).sum())]}
print(json.dumps(out))
"#;

fn sums(rec: &Record) -> Vec<i64> {
    let sig = rec.read(&ReadOptions::default()).unwrap();
    sig.signals
        .iter()
        .map(|s| s.digital.iter().map(|&d| i64::from(d)).sum())
        .collect()
}

#[test]
fn wfdb_python_reads_what_formats_reads() {
    let Some(python) = testkit::oracle_python("wfdb_python_reads_what_formats_reads") else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    for (c, n) in [
        (Challenge::Cpsc2021, 6),
        (Challenge::Physionet2022, 4),
        (Challenge::Cinc2017, 8),
    ] {
        synth::write(c, &root.path().join(c.id()), 9, Some(n)).unwrap();
    }
    let o = Command::new(&python)
        .args(["-c", SCRIPT])
        .arg(root.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let py: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let py = py.as_object().unwrap();

    let dir = root.path().join("cpsc2021");
    let names = std::fs::read_to_string(dir.join("RECORDS")).unwrap();
    for name in names.lines() {
        let p = &py[name];
        let rec = Record::open(dir.join(name)).unwrap();
        assert_eq!(p["fs"], 200.0);
        assert_eq!(p["len"], rec.sig_len().unwrap());
        assert_eq!(p["names"], serde_json::json!(["I", "II"]));
        assert_eq!(p["units"], serde_json::json!(["mV", "mV"]));
        let gains: Vec<f64> = rec
            .header
            .signals
            .iter()
            .map(|s| s.adc_gain.unwrap())
            .collect();
        assert_eq!(p["gain"], serde_json::json!(gains));
        let comment = rec.header.comments.last().unwrap().trim().to_string();
        assert_eq!(p["comments"], serde_json::json!([comment]));
        assert_eq!(p["sums"], serde_json::json!(sums(&rec)));

        let atr = annotation::read_annotator(dir.join(name), "atr").unwrap();
        let samples: Vec<i64> = atr.content().iter().map(|a| a.sample).collect();
        let symbols: Vec<String> = atr
            .content()
            .iter()
            .map(|a| atr.symbol(a.code).into_owned())
            .collect();
        let aux: Vec<String> = atr
            .content()
            .iter()
            .map(|a| a.aux_str().map(|s| s.into_owned()).unwrap_or_default())
            .collect();
        assert_eq!(
            p["ann"],
            serde_json::json!([samples, symbols, aux]),
            "{name}"
        );
    }

    let dir = root.path().join("physionet2022");
    let mut seen = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        let Some(name) = path
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .strip_suffix(".hea")
        else {
            continue;
        };
        seen += 1;
        let p = &py[name];
        let rec = Record::open(dir.join(name)).unwrap();
        assert_eq!(p["fs"], 4000.0);
        assert_eq!(p["len"], rec.sig_len().unwrap());
        let site = name.split('_').nth(1).unwrap();
        assert_eq!(p["names"], serde_json::json!([site]));
        assert_eq!(p["sums"], serde_json::json!(sums(&rec)));
    }
    assert!(seen >= 4);

    let dir = root.path().join("cinc2017");
    for k in 1..=8 {
        let name = format!("S{k:05}");
        let p = &py[&name];
        let mat = MatFile::read(dir.join(format!("{name}.mat"))).unwrap();
        let v = mat.get("val").unwrap().to_f64_vec().unwrap();
        assert_eq!(p["shape"], serde_json::json!([1, v.len()]));
        assert_eq!(p["dtype"], "int16");
        assert_eq!(p["sums"], serde_json::json!([v.iter().sum::<f64>() as i64]));
        let rec = Record::open(dir.join(&name)).unwrap();
        assert_eq!(sums(&rec), [v.iter().sum::<f64>() as i64]);
    }
}
