//! A FLAC signal file (formats 508/516/524): the first input byte picks the format, the
//! number of signals and whether the header gives a length (without one, it is looked
//! for at the stream's end); the rest is the file. Open and read (whole, physical,
//! partial) must never panic.
#![no_main]

use formats::wfdb::{ReadOptions, Record};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, flac)) = data.split_first() else {
        return;
    };
    let format = [508, 516, 524][(pick % 3) as usize];
    let n_sig = 1 + (pick / 3 % 4) as usize;
    let length = if pick & 0x80 != 0 { " 5000" } else { "" };
    let Ok(dir) = tempfile_dir() else { return };
    let mut hea = format!("r {n_sig} 250{length}\n");
    for k in 0..n_sig {
        hea += &format!("r.dat {format} 200 16 0 0 0 0 s{k}\n");
    }
    let _ = std::fs::write(dir.join("r.hea"), hea);
    let _ = std::fs::write(dir.join("r.dat"), flac);
    if let Ok(rec) = Record::open(dir.join("r")) {
        let _ = rec.read(&ReadOptions::default());
        let _ = rec.read_physical(&ReadOptions::default());
        let _ = rec.read(&ReadOptions { from: 4000, to: Some(4100), signals: Some(vec![0]) });
    }
});

/// One scratch folder per fuzzing process (records are rewritten on every input).
fn tempfile_dir() -> std::io::Result<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!("physiojudge-fuzz-flac-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
