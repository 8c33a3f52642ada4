//! Fuzz target for the MAT-file reader (`formats::mat`), levels 4 and 5.
//!
//! Any input must give `Ok` or `Err`: no panic, no hang, no allocation beyond what the
//! input and the decompression limit justify. Accepted files are walked through every
//! accessor, and level-4 files must survive a write-and-read-back unchanged.

#![no_main]

use formats::mat::{Level, MatFile, ReadOptions, Value, ValueRef, write_v4};
use libfuzzer_sys::fuzz_target;

/// Small enough that a decompression bomb stays far below libFuzzer's RSS limit.
const MAX_DECOMPRESSED: u64 = 64 << 20;

fn walk(r: &ValueRef<'_>) {
    let _ = r.value().describe();
    let _ = r.as_f64_matrix();
    let _ = r.to_f64_vec();
    let _ = r.as_string();
    match r.value() {
        Value::Char(c) => {
            // Rows may vastly outnumber the bytes (n×0): look at a bounded few.
            for row in c.rows().take(64) {
                let _ = row;
            }
        }
        Value::Cell(c) => {
            for i in 0..c.data().len() {
                if let Ok(child) = r.cell(i) {
                    walk(&child);
                }
            }
        }
        Value::Struct(s) => {
            let names: Vec<String> = s.field_names().map(str::to_string).collect();
            let _ = r.field("no such field");
            for name in &names {
                let len = s.field(name).map_or(0, <[Value]>::len);
                for i in 0..len {
                    if let Ok(child) = r.field_at(i, name) {
                        walk(&child);
                    }
                }
            }
        }
        _ => {}
    }
}

fuzz_target!(|data: &[u8]| {
    let opts = ReadOptions {
        max_decompressed: MAX_DECOMPRESSED,
        ..ReadOptions::default()
    };
    let _ = MatFile::parse_v4(data, "fuzz");
    let _ = MatFile::parse_v5_with(data, "fuzz", &opts);
    let Ok(file) = MatFile::parse_with(data, "fuzz", &opts) else {
        return;
    };
    for v in &file.variables {
        if let Ok(r) = file.get(&v.name) {
            walk(&r);
        }
    }
    // Level-4 numeric matrices written back (little-endian) read back unchanged.
    if file.level != Level::V4 {
        return;
    }
    for v in &file.variables {
        let Value::Numeric(a) = &v.value else { continue };
        let mut out = Vec::new();
        if write_v4(&mut out, "rewrite", &[(v.name.as_str(), a)]).is_err() {
            continue; // an empty name, which the writer refuses
        }
        let back = MatFile::parse(&out, "rewrite").expect("our own level-4 output must parse");
        let [w] = back.variables.as_slice() else {
            panic!("one variable written, {} read", back.variables.len());
        };
        assert_eq!(w.name, v.name);
        assert_eq!(format!("{:?}", w.value), format!("{:?}", v.value));
    }
});
