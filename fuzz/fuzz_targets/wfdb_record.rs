//! A whole record: the input is split into a header and the bytes of its signal file; open
//! and read (whole and partial) must never panic.
#![no_main]

use formats::wfdb::{ReadOptions, Record};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let split = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let (header, dat) = data.split_at(split);
    let Ok(dir) = tempfile_dir() else { return };
    let _ = std::fs::write(dir.join("r.hea"), header);
    let _ = std::fs::write(dir.join("r.dat"), dat.get(1..).unwrap_or_default());
    if let Ok(rec) = Record::open(dir.join("r")) {
        if let Ok(s) = rec.read(&ReadOptions::default()) {
            for sig in &s.signals {
                let _ = sig.physical();
            }
        }
        let _ = rec.read_physical(&ReadOptions::default());
        let _ = rec.read(&ReadOptions { from: 1, to: Some(3), signals: Some(vec![0]) });
    }
});

/// One scratch folder per fuzzing process (records are rewritten on every input).
fn tempfile_dir() -> std::io::Result<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!("physiojudge-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
