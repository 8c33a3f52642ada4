//! Our WFDB annotation reader and writer against wfdb-python 4.3.1 (the oracle): every
//! `.atr` of `../shared/data/cpsc2021`, files we write read by `rdann`, and files `wrann`
//! writes read by us. Values must be equal, not close.
//!
//! wfdb-python's `rdann` drops two kinds of annotations that we return: every `NOTE` at
//! sample 0 (it takes them all for definitions) and every code-0 annotation (the null
//! annotation writers put after the definitions). [`as_rdann_sees_it`] removes exactly
//! those before comparing. Where wfdb-python departs from annotation(5)
//! (docs/formats.md), the tests at the end follow the specification and assert the
//! difference, so that a change on either side shows up.

use std::path::{Path, PathBuf};

use formats::wfdb::annotation::{
    self, Annotation, AnnotationFile, CustomLabel, Definitions, codes, standard_symbol,
};
use serde_json::{Value, json};

const ORACLE: &str = "annotation_oracle.py";

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The annotations `rdann` returns for this file: all but `NOTE`s at sample 0 and
/// code-0 annotations.
fn as_rdann_sees_it(f: &AnnotationFile) -> Vec<&Annotation> {
    f.annotations
        .iter()
        .filter(|a| !(a.code == codes::NOTQRS || (a.code == codes::NOTE && a.sample == 0)))
        .collect()
}

/// Asserts that `rdann`'s output (one object of the oracle's `read` list) equals our
/// reading of the same file.
fn assert_same_as_rdann(ours: &AnnotationFile, theirs: &Value, what: &str) {
    assert!(
        theirs.get("error").is_none(),
        "{what}: rdann failed: {theirs}"
    );
    let kept = as_rdann_sees_it(ours);
    let col = |k: &str| -> &Vec<Value> {
        theirs[k]
            .as_array()
            .unwrap_or_else(|| panic!("{what}: no {k}"))
    };
    assert_eq!(col("sample").len(), kept.len(), "{what}: annotation count");
    for (k, a) in kept.iter().enumerate() {
        let at = format!("{what}: annotation {k} (sample {})", a.sample);
        assert_eq!(col("sample")[k].as_i64(), Some(a.sample), "{at}: sample");
        assert_eq!(
            col("symbol")[k].as_str(),
            Some(&*ours.symbol(a.code)),
            "{at}: symbol"
        );
        assert_eq!(
            col("subtype")[k].as_i64(),
            Some(i64::from(a.subtype)),
            "{at}: subtype"
        );
        assert_eq!(
            col("chan")[k].as_i64(),
            Some(i64::from(a.chan)),
            "{at}: chan"
        );
        assert_eq!(col("num")[k].as_i64(), Some(i64::from(a.num)), "{at}: num");
        // rdann cannot tell "no aux" from an empty one: both are "".
        let aux = hex(a.aux.as_deref().unwrap_or(&[]));
        assert_eq!(col("aux_hex")[k].as_str(), Some(&*aux), "{at}: aux");
    }
}

fn oracle_json(python: &Path, args: &[&str]) -> Vec<Value> {
    let out = testkit::run_oracle(python, ORACLE, args);
    match serde_json::from_slice::<Value>(&out) {
        Ok(Value::Array(v)) => v,
        other => panic!("oracle {args:?}: not a JSON list: {other:?}"),
    }
}

fn read_ours(path: &Path) -> AnnotationFile {
    annotation::read(path).unwrap_or_else(|e| panic!("{e}"))
}

fn cpsc_records(data: &Path) -> Vec<PathBuf> {
    let dir = data.join("cpsc2021");
    let mut recs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            (p.extension()? == "atr").then(|| p.with_extension(""))
        })
        .collect();
    recs.sort();
    recs
}

/// Our standard table has wfdb-python's symbols, code for code.
#[test]
fn standard_symbols_equal_wfdb_python() {
    let Some(python) = testkit::oracle_python("standard_symbols_equal_wfdb_python") else {
        return;
    };
    let theirs: Vec<(u8, String)> = oracle_json(&python, &["labels"])
        .iter()
        .map(|r| {
            (
                r[0].as_u64().unwrap() as u8,
                r[1].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let ours: Vec<(u8, String)> = annotation::STANDARD_LABELS
        .iter()
        .map(|l| (l.code, l.symbol.to_string()))
        .collect();
    assert_eq!(ours, theirs);
}

/// (a) Every CPSC 2021 `.atr` reads as `rdann` reads it.
#[test]
fn cpsc2021_annotations_equal_rdann() {
    let test = "cpsc2021_annotations_equal_rdann";
    let (Some(data), Some(python)) = (testkit::shared_data(test), testkit::oracle_python(test))
    else {
        return;
    };
    let recs = cpsc_records(&data);
    assert_eq!(recs.len(), 23, "the README lists 23 CPSC 2021 records");
    let mut args = vec!["read", "atr"];
    args.extend(recs.iter().map(|r| r.to_str().unwrap()));
    let theirs = oracle_json(&python, &args);
    assert_eq!(theirs.len(), recs.len());
    for (rec, t) in recs.iter().zip(&theirs) {
        let ours = read_ours(&rec.with_extension("atr"));
        let name = rec.display().to_string();
        // These files hold no definitions, so rdann drops nothing: we compare everything.
        assert_eq!(
            as_rdann_sees_it(&ours).len(),
            ours.annotations.len(),
            "{name}"
        );
        assert_eq!(ours.definitions, Definitions::default(), "{name}");
        assert_eq!(ours.trailing_bytes, 0, "{name}");
        assert_same_as_rdann(&ours, t, &name);
        // rdann takes fs from the header when the file gives no time resolution.
        assert_eq!(t["fs"].as_f64(), Some(200.0), "{name}");
    }
}

struct LabelRow {
    record: String,
    class: String,
    sig_len: i64,
    n_beats: usize,
    episodes: Vec<(i64, i64)>,
}

fn labels_csv(data: &Path) -> Vec<LabelRow> {
    let text = std::fs::read_to_string(data.join("cpsc2021/labels.csv")).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let (rec, label, sig_len, n_beats, eps) = (
        col("record"),
        col("label"),
        col("sig_len"),
        col("n_beats"),
        col("af_episodes_samples"),
    );
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            LabelRow {
                record: f[rec].to_string(),
                class: f[label].to_string(),
                sig_len: f[sig_len].parse().unwrap(),
                n_beats: f[n_beats].parse().unwrap(),
                episodes: f[eps]
                    .split(';')
                    .filter(|s| !s.is_empty())
                    .map(|s| {
                        let (a, b) = s.split_once('-').unwrap();
                        (a.parse().unwrap(), b.parse().unwrap())
                    })
                    .collect(),
            }
        })
        .collect()
}

/// The quirks the data README lists, read with our reader alone.
#[test]
fn cpsc2021_quirks() {
    let Some(data) = testkit::shared_data("cpsc2021_quirks") else {
        return;
    };
    let rows = labels_csv(&data);
    assert_eq!(rows.len(), 23);
    let mut aff = 0;
    for row in &rows {
        let path = data.join("cpsc2021").join(format!("{}.atr", row.record));
        let f = read_ours(&path);
        let name = &row.record;
        let anns = &f.annotations;
        let rhythm: Vec<(i64, &str)> = anns
            .iter()
            .filter(|a| a.code == codes::RHYTHM)
            .map(|a| {
                (
                    a.sample,
                    std::str::from_utf8(a.aux.as_deref().unwrap()).unwrap(),
                )
            })
            .collect();
        let beats: Vec<&Annotation> = anns.iter().filter(|a| a.code != codes::RHYTHM).collect();
        assert_eq!(beats.len(), row.n_beats, "{name}: beats");
        assert!(
            beats
                .iter()
                .all(|a| matches!(standard_symbol(a.code), Some("N" | "V" | "A" | "a"))),
            "{name}: beat symbols"
        );
        // Episodes: each (AFIB/(AFL onset paired with the next (N.
        let mut episodes = Vec::new();
        let mut onset = None;
        for &(t, text) in &rhythm {
            match text {
                "(AFIB" | "(AFL" => onset = onset.or(Some(t)),
                "(N" => {
                    if let Some(s) = onset.take() {
                        episodes.push((s, t));
                    }
                }
                other => panic!("{name}: unexpected rhythm {other:?}"),
            }
        }
        assert_eq!(episodes, row.episodes, "{name}: episodes");
        if row.class == "AFf" {
            aff += 1;
            assert_eq!(
                rhythm,
                [(0, "(AFIB"), (row.sig_len - 1, "(N")],
                "{name}: AFf rhythm"
            );
            assert!(
                beats.iter().all(|a| a.aux.as_deref() == Some(&b"None"[..])
                    && a.aux_str().as_deref() == Some("None")),
                "{name}: every beat of an AFf record carries the literal aux `None`"
            );
        } else {
            assert!(beats.iter().all(|a| a.aux.is_none()), "{name}: beat aux");
        }
        if row.record == "data_25_24" {
            assert!(
                rhythm.iter().all(|r| r.1 != "(AFIB"),
                "{name}: flutter only"
            );
        }
    }
    assert_eq!(aff, 7);
    // data_101_6's last (N is one past the last sample.
    let f = read_ours(&data.join("cpsc2021/data_101_6.atr"));
    let last = f.annotations.last().unwrap();
    assert_eq!(
        (last.sample, last.code, last.aux.as_deref()),
        (22355, codes::RHYTHM, Some(&b"(N"[..]))
    );
}

/// A small deterministic generator (xorshift64*), so that the sets are the same each run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// Standard codes that have a symbol (code 0 aside).
fn symbol_codes() -> Vec<u8> {
    (1..=codes::ACMAX)
        .filter(|&c| standard_symbol(c).is_some())
        .collect()
}

/// A random annotation set exercising every field: SKIPs forward, backward and past
/// 2^31, same-sample annotations, num/chan changes, subtypes, odd/even/empty aux with
/// bytes above 0x7F, and (with `specials`) code-0 annotations and NOTEs at sample 0.
fn random_set(rng: &mut Rng, n: usize, specials: bool, extra_codes: &[u8]) -> Vec<Annotation> {
    let mut pool = symbol_codes();
    pool.extend_from_slice(extra_codes);
    let (mut t, mut chan, mut num) = (0i64, 0u8, 0i8);
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        t += match rng.below(100) {
            0..=54 => rng.range(1, 400),
            55..=69 => 0,
            70..=84 => rng.range(1024, 150_000),
            85..=91 => rng.range(1 << 31, 1 << 33),
            _ => rng.range(-20_000, -1),
        };
        let mut code = pool[rng.below(pool.len() as u64) as usize];
        if specials && rng.chance(6) {
            code = codes::NOTQRS;
        }
        if specials && rng.chance(4) {
            // Back to sample 0 for a NOTE there, which rdann takes for a definition.
            t = 0;
            code = codes::NOTE;
        }
        if rng.chance(15) {
            chan = rng.below(256) as u8;
        }
        if rng.chance(15) {
            num = rng.below(256) as u8 as i8;
        }
        let subtype = if rng.chance(20) {
            rng.below(256) as u8 as i8
        } else {
            0
        };
        let aux = if rng.chance(40) {
            let len = if rng.chance(10) {
                rng.below(256)
            } else {
                rng.below(12)
            };
            // Any byte but `#`, so that no aux looks like a definition to rdann.
            let bytes: Vec<u8> = (0..len)
                .map(|_| match rng.below(256) as u8 {
                    b'#' => b'x',
                    b => b,
                })
                .collect();
            Some(bytes)
        } else {
            None
        };
        out.push(Annotation {
            sample: t,
            code,
            subtype,
            chan,
            num,
            aux,
        });
    }
    out
}

/// (b) Files we write read back identically with rdann.
#[test]
fn rdann_reads_our_files() {
    let Some(python) = testkit::oracle_python("rdann_reads_our_files") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x005E_ED0F_A770);
    let custom = Definitions {
        time_resolution: Some(360.0),
        custom_labels: vec![
            CustomLabel {
                code: 42,
                symbol: "X".into(),
                description: "extra beat".into(),
            },
            CustomLabel {
                code: 43,
                symbol: "AFL".into(),
                description: "a multi-character symbol".into(),
            },
        ],
    };
    let mut sets: Vec<(String, Vec<Annotation>, Definitions)> = Vec::new();
    for k in 0..10 {
        let n = [1, 2, 30, 200, 1000][k % 5];
        sets.push((
            format!("r{k}"),
            random_set(&mut rng, n, k >= 5, &[]),
            Definitions::default(),
        ));
    }
    for k in 0..3 {
        sets.push((
            format!("d{k}"),
            random_set(&mut rng, 300, k == 1, &[42, 43]),
            custom.clone(),
        ));
    }
    let mut args = vec!["read".to_string(), "atr".to_string()];
    for (name, anns, defs) in &sets {
        annotation::write(dir.path().join(format!("{name}.atr")), anns, defs).unwrap();
        args.push(dir.path().join(name).to_str().unwrap().to_string());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let theirs = oracle_json(&python, &args);
    for ((name, anns, defs), t) in sets.iter().zip(&theirs) {
        let ours = read_ours(&dir.path().join(format!("{name}.atr")));
        // Our own reader gives back exactly what was written...
        assert_eq!(ours.content(), &anns[..], "{name}");
        assert_eq!(&ours.definitions, defs, "{name}");
        // ...and so does rdann, less what it drops.
        assert_same_as_rdann(&ours, t, name);
        let removed = ours.annotations.len() - as_rdann_sees_it(&ours).len();
        if ["r8", "r9", "d1"].contains(&name.as_str()) {
            assert!(removed > ours.definition_annotations, "{name}: no specials");
        }
        let fs = defs.time_resolution;
        assert_eq!(t["fs"].as_f64(), fs, "{name}: fs");
        let labels = t["custom_labels"].as_array().map(|v| {
            v.iter()
                .map(|l| CustomLabel {
                    code: l[0].as_u64().unwrap() as u8,
                    symbol: l[1].as_str().unwrap().into(),
                    description: l[2].as_str().unwrap().into(),
                })
                .collect::<Vec<_>>()
        });
        assert_eq!(labels.unwrap_or_default(), defs.custom_labels, "{name}");
    }
}

/// (c) Files wfdb-python's wrann writes read as their input says, and as rdann reads them.
#[test]
fn we_read_wrann_files() {
    let Some(python) = testkit::oracle_python("we_read_wrann_files") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let mut rng = Rng(0xC0FFEE);
    let codes_pool = symbol_codes();
    let mut jobs = Vec::new();
    let mut expected: Vec<(String, Vec<Annotation>, Definitions)> = Vec::new();
    for k in 0..6 {
        let name = format!("w{k}");
        let n = [1, 5, 50, 300, 1000, 200][k];
        let custom: Vec<CustomLabel> = if k >= 4 {
            vec![
                CustomLabel {
                    code: 44,
                    symbol: "Y".into(),
                    description: "custom why".into(),
                },
                CustomLabel {
                    code: 49,
                    symbol: "Z".into(),
                    description: "zed".into(),
                },
            ]
        } else {
            Vec::new()
        };
        let fs = match k {
            2 => Some(250.0),
            4 => Some(257.5),
            5 => Some(1000.0),
            _ => None,
        };
        let mut anns = Vec::new();
        let mut t = 0i64;
        for _ in 0..n {
            // wrann wants non-negative, non-decreasing samples.
            t += match rng.below(100) {
                0..=59 => rng.range(1, 500),
                60..=74 => 0,
                75..=91 => rng.range(1024, 200_000),
                _ => rng.range(1 << 31, 1 << 33),
            };
            let code = if !custom.is_empty() && rng.chance(20) {
                custom[rng.below(custom.len() as u64) as usize].code
            } else {
                codes_pool[rng.below(codes_pool.len() as u64) as usize]
            };
            // wrann: subtype -128..127, chan 0..255, num 0..127, aux without tabs/newlines.
            let aux = rng.chance(40).then(|| {
                let max = if rng.chance(10) { 255 } else { 9 };
                let len = rng.below(max) + 1;
                (0..len)
                    .map(|_| 0x20 + rng.below(95) as u8)
                    .map(|b| if b == b'#' { b'h' } else { b })
                    .collect::<Vec<u8>>()
            });
            anns.push(Annotation {
                sample: t,
                code,
                subtype: if rng.chance(20) {
                    rng.below(256) as u8 as i8
                } else {
                    0
                },
                chan: if rng.chance(30) {
                    rng.below(256) as u8
                } else {
                    0
                },
                num: if rng.chance(30) {
                    rng.below(128) as i8
                } else {
                    0
                },
                aux,
            });
        }
        let defs = Definitions {
            time_resolution: fs,
            custom_labels: custom.clone(),
        };
        let symbol = |c: u8| -> String { defs.symbol(c).into_owned() };
        jobs.push(json!({
            "dir": d, "name": name, "ext": "atr",
            "sample": anns.iter().map(|a| a.sample).collect::<Vec<_>>(),
            "symbol": anns.iter().map(|a| symbol(a.code)).collect::<Vec<_>>(),
            "subtype": anns.iter().map(|a| a.subtype).collect::<Vec<_>>(),
            "chan": anns.iter().map(|a| a.chan).collect::<Vec<_>>(),
            "num": anns.iter().map(|a| a.num).collect::<Vec<_>>(),
            "aux_note": anns.iter().map(|a| String::from_utf8(a.aux.clone().unwrap_or_default()).unwrap()).collect::<Vec<_>>(),
            "fs": fs,
            "custom_labels": (!custom.is_empty()).then(|| custom.iter().map(|l| json!([l.code, l.symbol, l.description])).collect::<Vec<_>>()),
        }));
        expected.push((name, anns, defs));
    }
    let jobs_path = dir.path().join("jobs.json");
    std::fs::write(&jobs_path, serde_json::to_vec(&jobs).unwrap()).unwrap();
    let written = oracle_json(&python, &["write", jobs_path.to_str().unwrap()]);
    for w in &written {
        assert_eq!(w["ok"], json!(true), "wrann failed: {w}");
    }
    let mut args = vec!["read".to_string(), "atr".to_string()];
    args.extend(expected.iter().map(|e| format!("{d}/{}", e.0)));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let theirs = oracle_json(&python, &args);
    for ((name, anns, defs), t) in expected.iter().zip(&theirs) {
        let ours = read_ours(&dir.path().join(format!("{name}.atr")));
        assert_eq!(ours.content(), &anns[..], "{name}");
        assert_eq!(&ours.definitions, defs, "{name}");
        assert_eq!(ours.trailing_bytes, 0, "{name}");
        assert_same_as_rdann(&ours, t, name);
        // Written by wfdb-python with definitions: the notes and the code-0 end are
        // there, as the C library writes them.
        let n_defs = match (defs.time_resolution.is_some(), defs.custom_labels.len()) {
            (false, 0) => 0,
            (true, 0) => 2,
            (tr, n) => usize::from(tr) + n + 3,
        };
        assert_eq!(ours.definition_annotations, n_defs, "{name}");
        // Our writer stores them in as many bytes or fewer (wfdb-python and we differ
        // only in the order of the fields after an annotation word).
        let again = annotation::to_bytes(&ours.annotations, &Definitions::default(), name).unwrap();
        let bytes = std::fs::read(dir.path().join(format!("{name}.atr"))).unwrap();
        assert_eq!(again.len(), bytes.len(), "{name}");
    }
}

/// Writes raw bytes as `<dir>/<name>.atr` and returns the record path.
fn raw(dir: &Path, name: &str, bytes: &[u8]) -> String {
    std::fs::write(dir.join(format!("{name}.atr")), bytes).unwrap();
    dir.join(name).to_str().unwrap().to_string()
}

fn w(a: u8, i: u16) -> [u8; 2] {
    ((u16::from(a) << 10) | i).to_le_bytes()
}

/// The corners of docs/formats.md and what this comparison found, one assertion each.
#[test]
fn documented_differences_from_wfdb_python() {
    let Some(python) = testkit::oracle_python("documented_differences_from_wfdb_python") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    let none = Definitions::default();
    let note = |sample: i64, text: &[u8]| Annotation {
        aux: Some(text.to_vec()),
        ..Annotation::new(sample, codes::NOTE)
    };

    // 1. A NOTE at sample 0 that is not a definition: rdann drops it, we keep it.
    let b1 = annotation::to_bytes(
        &[
            note(0, b"start of recording"),
            Annotation::new(5, codes::NORMAL),
        ],
        &none,
        "n",
    )
    .unwrap();
    // 2. A code with no symbol: rdann gives NaN (a float) for its symbol, which raises
    //    TypeError wherever a string is expected; we give the C library's `[45]`.
    let b2 = annotation::to_bytes(&[Annotation::new(5, 45)], &none, "c").unwrap();
    // 3. Bytes after the end marker: rdann reads on (the zero word becomes a code-0
    //    annotation it then drops), the C library and we stop.
    let b3 = [&w(1, 5)[..], &[0, 0], &w(5, 5), &[0, 0]].concat();
    // 4. No end marker (a cut file): rdann silently drops the last word, we refuse.
    let b4 = [w(1, 5), w(5, 5)].concat();
    // 5. A field after a SKIP belongs to the annotation before it (C `getann`); rdann
    //    takes the CHN word for an annotation of code 62 (no symbol, 3 samples later)
    //    and the next annotation lands 3 samples late with chan 0.
    let b5 = [
        &w(1, 5)[..],
        &w(codes::SKIP, 0),
        &[0, 0, 0x10, 0],
        &w(codes::CHN, 3),
        &w(5, 0),
        &[0, 0],
    ]
    .concat();
    // 6. An odd byte after the end marker: rdann cannot even reshape the file.
    let b6 = [&w(1, 5)[..], &[0, 0, 0x77]].concat();
    // 7. A label table with no end: rdann runs off its list (IndexError); we name the note.
    let b7 = annotation::to_bytes(
        &[
            note(0, b"## annotation type definitions"),
            note(0, b"42 X extra"),
            Annotation::new(5, codes::NORMAL),
        ],
        &none,
        "u",
    )
    .unwrap();
    let recs = [
        raw(p, "u", &b7),
        raw(p, "n", &b1),
        raw(p, "c", &b2),
        raw(p, "t", &b3),
        raw(p, "k", &b4),
        raw(p, "s", &b5),
        raw(p, "o", &b6),
    ];
    let mut args = vec!["read", "atr"];
    args.extend(recs.iter().map(String::as_str));
    let mut theirs = oracle_json(&python, &args);

    let theirs_u = theirs.remove(0);
    let e = annotation::parse(&b7, "u").unwrap_err();
    assert!(e.to_string().contains("no `## end of definitions`"), "{e}");
    assert!(
        theirs_u["error"]
            .as_str()
            .unwrap()
            .starts_with("IndexError"),
        "{theirs_u}"
    );

    let ours = annotation::parse(&b1, "n").unwrap();
    assert_eq!(ours.annotations.len(), 2);
    assert_eq!(ours.content().len(), 2, "an ordinary note is content");
    assert_eq!(theirs[0]["sample"], json!([5]));

    let ours = annotation::parse(&b2, "c").unwrap();
    assert_eq!(ours.symbol(45), "[45]");
    assert_eq!(theirs[1]["sample"], json!([5]));
    assert_eq!(theirs[1]["symbol"], json!([null]), "{}", theirs[1]);

    let ours = annotation::parse(&b3, "t").unwrap();
    assert_eq!(ours.annotations, [Annotation::new(5, 1)]);
    assert_eq!(ours.trailing_bytes, 4);
    assert_eq!(theirs[2]["sample"], json!([5, 10]));
    assert_eq!(theirs[2]["symbol"], json!(["N", "V"]));

    let e = annotation::parse(&b4, "k").unwrap_err();
    assert!(
        e.to_string().contains("without the end-of-file marker"),
        "{e}"
    );
    assert_eq!(theirs[3]["sample"], json!([5]));

    let ours = annotation::parse(&b5, "s").unwrap();
    let got: Vec<(i64, u8, u8)> = ours
        .annotations
        .iter()
        .map(|a| (a.sample, a.code, a.chan))
        .collect();
    assert_eq!(got, [(5, 1, 3), (5 + 0x10, 5, 3)]);
    assert_eq!(theirs[4]["sample"], json!([5, 24, 24]), "{}", theirs[4]);
    assert_eq!(theirs[4]["symbol"], json!(["N", null, "V"]));
    assert_eq!(theirs[4]["chan"], json!([0, 0, 0]));

    let ours = annotation::parse(&b6, "o").unwrap();
    assert_eq!((ours.annotations.len(), ours.trailing_bytes), (1, 1));
    assert!(
        theirs[5]["error"]
            .as_str()
            .unwrap()
            .starts_with("ValueError"),
        "{}",
        theirs[5]
    );
}

/// wfdb-python cannot write a multi-character custom symbol (its `custom_triplet_bytes`
/// takes `ord()` of the symbol); we can, and rdann reads ours (checked in
/// `rdann_reads_our_files`).
#[test]
fn wrann_cannot_write_multi_character_symbols() {
    let Some(python) = testkit::oracle_python("wrann_cannot_write_multi_character_symbols") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let jobs = json!([{
        "dir": dir.path().to_str().unwrap(), "name": "m", "ext": "atr",
        "sample": [1, 2], "symbol": ["AFL", "N"],
        "custom_labels": [[42, "AFL", "flutter"]],
    }]);
    let path = dir.path().join("jobs.json");
    std::fs::write(&path, jobs.to_string()).unwrap();
    let out = oracle_json(&python, &["write", path.to_str().unwrap()]);
    assert!(
        out[0]["error"].as_str().unwrap().starts_with("TypeError"),
        "{}",
        out[0]
    );
}
