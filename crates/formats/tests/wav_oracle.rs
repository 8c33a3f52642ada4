//! Our WAV reader and writer against scipy.io.wavfile (the oracle,
//! `tests/oracle/wav_oracle.py`): every sample of the 121 real CirCor recordings, files of
//! every width and several channel counts written by Python's `wave` module and by scipy,
//! and files we write, read back by scipy. Values must be equal (floats bit for bit).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use formats::wav::{Encoding, Samples, Wav, encode_pcm16, write_pcm16};
use serde_json::{Value, json};

struct Oracle {
    batch: testkit::OracleBatch,
    ids: Vec<String>,
}

/// What scipy read: metadata and the samples (int64, or float32 bits).
struct Read {
    meta: Value,
    ints: Vec<i64>,
    floats: Vec<u32>,
}

impl Oracle {
    fn new(test: &str) -> Option<Oracle> {
        Some(Oracle {
            batch: testkit::OracleBatch::new(test, "wav_oracle.py")?,
            ids: Vec::new(),
        })
    }

    fn path(&self, name: &str) -> PathBuf {
        self.batch.scratch().join(name)
    }

    fn read(&mut self, id: &str, path: &Path) {
        self.ids.push(id.to_string());
        self.batch
            .push(json!({"id": id, "read": path.to_str().unwrap()}));
    }

    fn make(&mut self, id: &str, spec: Value) {
        self.ids.push(id.to_string());
        self.batch.push(json!({"id": id, "make": spec}));
    }

    fn run(&mut self) -> BTreeMap<String, Read> {
        let out = self.batch.run();
        let mut results = BTreeMap::new();
        for id in self.ids.drain(..) {
            let meta = out.meta(&id);
            assert!(meta.get("error").is_none(), "oracle job {id}: {meta}");
            let bin = out.bytes(&id, "bin");
            let float = meta["dtype"].as_str().is_some_and(|d| d.contains('f'));
            let (mut ints, mut floats) = (Vec::new(), Vec::new());
            if float {
                floats = bin
                    .chunks_exact(4)
                    .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                    .collect();
            } else {
                ints = bin
                    .chunks_exact(8)
                    .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
                    .collect();
            }
            results.insert(id, Read { meta, ints, floats });
        }
        results
    }
}

/// Our samples in scipy's representation: 8-bit unsigned, 24-bit in the top of an int32.
fn as_scipy(w: &Wav) -> (Vec<i64>, Vec<u32>) {
    match w.samples() {
        Samples::Int(v) => {
            let shift = |s: i32| match w.encoding() {
                Encoding::Pcm8 => i64::from(s) + 128,
                Encoding::Pcm24 => i64::from(s) << 8,
                _ => i64::from(s),
            };
            (v.iter().map(|&s| shift(s)).collect(), Vec::new())
        }
        Samples::Float(v) => (Vec::new(), v.iter().map(|s| s.to_bits()).collect()),
    }
}

fn check_same(id: &str, ours: &Wav, theirs: &Read) {
    assert_eq!(theirs.meta["rate"], ours.sample_rate(), "{id}");
    let shape: Vec<usize> = if ours.channels() == 1 {
        vec![ours.frames()]
    } else {
        vec![ours.frames(), usize::from(ours.channels())]
    };
    assert_eq!(theirs.meta["shape"], json!(shape), "{id}");
    let want_dtype = match ours.encoding() {
        Encoding::Pcm8 => "|u1",
        Encoding::Pcm16 => "<i2",
        Encoding::Pcm24 | Encoding::Pcm32 => "<i4",
        Encoding::Float32 => "<f4",
    };
    assert_eq!(theirs.meta["dtype"], want_dtype, "{id}");
    let (ints, floats) = as_scipy(ours);
    assert_eq!(ints.len() + floats.len(), ours.samples().len(), "{id}");
    if let Some(k) = ints.iter().zip(&theirs.ints).position(|(a, b)| a != b) {
        panic!(
            "{id}: sample {k}: ours {} scipy {}",
            ints[k], theirs.ints[k]
        );
    }
    assert_eq!(ints, theirs.ints, "{id}");
    assert_eq!(floats, theirs.floats, "{id}");
}

#[test]
fn every_real_recording_reads_like_scipy_and_rewrites_byte_for_byte() {
    let test = "every_real_recording_reads_like_scipy_and_rewrites_byte_for_byte";
    let Some(data) = testkit::shared_data(test) else {
        return;
    };
    let Some(mut oracle) = Oracle::new(test) else {
        return;
    };
    let dir = data.join("circor2022/training_data");
    let mut wavs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "wav"))
        .collect();
    wavs.sort();
    assert_eq!(wavs.len(), 121);
    for p in &wavs {
        let stem = p.file_stem().unwrap().to_str().unwrap();
        oracle.read(stem, p);
    }
    let theirs = oracle.run();
    let mut total_frames = 0;
    for p in &wavs {
        let stem = p.file_stem().unwrap().to_str().unwrap();
        let w = Wav::read(p).unwrap();
        assert_eq!(
            (w.encoding(), w.channels(), w.sample_rate()),
            (Encoding::Pcm16, 1, 4000)
        );
        check_same(stem, &w, &theirs[stem]);
        total_frames += w.frames();

        // The WFDB header beside it: `<name> 1 4000 <sig_len>` then `<wav> 16+44 ...`.
        let hea = std::fs::read_to_string(p.with_extension("hea")).unwrap();
        let mut lines = hea.lines();
        let rec: Vec<&str> = lines.next().unwrap().split(' ').collect();
        assert_eq!(rec[3].parse::<usize>().unwrap(), w.frames(), "{stem}");
        let sig: Vec<&str> = lines.next().unwrap().split(' ').collect();
        assert_eq!(sig[1], format!("16+{}", w.data_offset()), "{stem}");

        // Writing the samples back gives the original file.
        let samples: Vec<i16> = w.int_samples().unwrap().iter().map(|&s| s as i16).collect();
        let again = encode_pcm16(w.sample_rate(), 1, &samples).unwrap();
        assert!(
            again == std::fs::read(p).unwrap(),
            "{stem}: rewritten bytes differ"
        );
    }
    // The README: 121 recordings, about 40.5 minutes at 4 kHz.
    let minutes = total_frames as f64 / 4000.0 / 60.0;
    assert!((40.0..41.0).contains(&minutes), "{minutes} min");
}

#[test]
fn files_python_writes_read_like_scipy() {
    let test = "files_python_writes_read_like_scipy";
    let Some(mut oracle) = Oracle::new(test) else {
        return;
    };
    let mut made = Vec::new();
    let mut seed = 1;
    for dtype in ["u1", "i2", "i3", "i4"] {
        for channels in [1, 2, 3, 5] {
            made.push(("wave", dtype, channels, 8000));
        }
    }
    for (dtype, channels) in [
        ("u1", 1),
        ("u1", 2),
        ("i2", 1),
        ("i2", 4),
        ("i4", 1),
        ("i4", 3),
        ("f4", 1),
        ("f4", 2),
    ] {
        made.push(("scipy", dtype, channels, 44100));
    }
    let mut ids = Vec::new();
    for (writer, dtype, channels, rate) in &made {
        let id = format!("{writer}_{dtype}_{channels}");
        let path = oracle.path(&format!("{id}.wav"));
        oracle.make(
            &format!("make_{id}"),
            json!({"path": path.to_str().unwrap(), "writer": writer, "dtype": dtype,
                   "channels": channels, "rate": rate, "frames": 257, "seed": seed}),
        );
        seed += 1;
        ids.push((id, path));
    }
    for (id, path) in &ids {
        oracle.read(id, path);
    }
    let theirs = oracle.run();
    let mut encodings = std::collections::BTreeSet::new();
    for (id, path) in &ids {
        let w = Wav::read(path).unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(w.frames(), 257, "{id}");
        encodings.insert(format!("{:?}", w.encoding()));
        check_same(id, &w, &theirs[id]);
    }
    // Every encoding we read was exercised.
    assert_eq!(encodings.len(), 5, "{encodings:?}");
}

#[test]
fn files_we_write_read_back_identically_in_scipy() {
    let test = "files_we_write_read_back_identically_in_scipy";
    let Some(mut oracle) = Oracle::new(test) else {
        return;
    };
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 48) as u16 as i16
    };
    let mut written = Vec::new();
    for (channels, rate, frames) in [
        (1u16, 4000u32, 4000usize),
        (2, 44100, 100),
        (3, 2000, 333),
        (8, 1, 17),
        (1, 4000, 0),
    ] {
        let mut samples: Vec<i16> = (0..frames * usize::from(channels))
            .map(|_| next())
            .collect();
        if let Some(s) = samples.first_mut() {
            *s = i16::MIN;
        }
        if let Some(s) = samples.last_mut() {
            *s = i16::MAX;
        }
        let id = format!("ours_{channels}ch_{rate}hz_{frames}");
        let path = oracle.path(&format!("{id}.wav"));
        write_pcm16(&path, rate, channels, &samples).unwrap();
        oracle.read(&id, &path);
        written.push((id, path, channels, rate, samples));
    }
    let theirs = oracle.run();
    for (id, path, channels, rate, samples) in &written {
        let t = &theirs[id];
        assert_eq!(t.meta["rate"], *rate, "{id}");
        assert_eq!(t.meta["dtype"], "<i2", "{id}");
        let want: Vec<i64> = samples.iter().map(|&s| i64::from(s)).collect();
        assert_eq!(t.ints, want, "{id}");
        let ours = Wav::read(path).unwrap();
        assert_eq!(ours.channels(), *channels);
        check_same(id, &ours, t);
    }
}
