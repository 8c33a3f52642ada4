//! Malformed WFDB records give an error that names the file, the place and the problem,
//! and never a panic (the proptests at the end feed arbitrary headers and bytes).

use std::path::Path;

use formats::wfdb::{
    Format, Header, ReadOptions, Record, RecordLine, SignalSpec, WriteSignal, write_record,
};
use proptest::prelude::*;

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::write(dir.join(name), bytes).unwrap();
}

/// Opens and reads the record `dir/rec`, returning the error message.
fn error_of(dir: &Path) -> String {
    match Record::open(dir.join("rec")).and_then(|r| r.read(&ReadOptions::default())) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

fn assert_mentions(msg: &str, parts: &[&str]) {
    for p in parts {
        assert!(msg.contains(p), "{msg:?} should mention {p:?}");
    }
}

#[test]
fn truncated_signal_file() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "rec.hea",
        b"rec 2 250 1000\nrec.dat 16\nrec.dat 16\n",
    );
    write(dir.path(), "rec.dat", &vec![0u8; 3001]);
    let msg = error_of(dir.path());
    assert_mentions(&msg, &["rec.dat", "truncated", "4000 bytes", "3001 bytes"]);
}

#[test]
fn header_longer_than_data_with_a_byte_offset() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "rec.hea",
        b"rec 1 300 9000\nrec.mat 16+24 1000/mV\n",
    );
    write(dir.path(), "rec.mat", &vec![0u8; 24 + 2 * 8999]);
    let msg = error_of(dir.path());
    assert_mentions(
        &msg,
        &["rec.mat", "byte offset 24", "18000 bytes", "17998 bytes"],
    );
}

#[test]
fn packed_format_tail_missing() {
    let dir = tempfile::tempdir().unwrap();
    // 3 samples of format 212 need 5 bytes.
    write(dir.path(), "rec.hea", b"rec 1 250 3\nrec.dat 212\n");
    write(dir.path(), "rec.dat", &[0, 0, 0, 0]);
    assert_mentions(&error_of(dir.path()), &["rec.dat", "need 5 bytes"]);
}

#[test]
fn missing_files_are_named() {
    let dir = tempfile::tempdir().unwrap();
    assert_mentions(&error_of(dir.path()), &["rec.hea", "cannot read the file"]);
    write(dir.path(), "rec.hea", b"rec 1 250 10\nrec.dat 16\n");
    assert_mentions(&error_of(dir.path()), &["rec.dat", "cannot read the file"]);
}

#[test]
fn unknown_formats() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "rec.hea", b"rec 1 250 10\nrec.dat 999\n");
    assert_mentions(
        &error_of(dir.path()),
        &["rec.hea", "line 2", "unknown signal format 999"],
    );
}

/// A FLAC record `rec` in `dir`: `n_sig` signals of `frames` frames in format `fmt`,
/// noisy enough that the stream has many frames. Returns the samples written.
fn write_flac(dir: &Path, fmt: Format, n_sig: usize, frames: usize) -> Vec<Vec<i32>> {
    let (lo, hi) = fmt.range();
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let data: Vec<Vec<i32>> = (0..n_sig)
        .map(|k| {
            (0..frames)
                .map(|t| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    let wave = ((t + 37 * k) % 400) as i32 - 200;
                    (wave + (state % 64) as i32 - 32).clamp(lo, hi)
                })
                .collect()
        })
        .collect();
    let signals: Vec<WriteSignal> = data
        .iter()
        .map(|d| WriteSignal {
            spec: SignalSpec::new("rec.dat", fmt),
            samples: d,
        })
        .collect();
    write_record(dir, &RecordLine::new("rec", 500.0), &signals, &[]).unwrap();
    data
}

/// Malformed FLAC signal files: each error names the file and what is wrong, with the
/// byte offset where there is one.
#[test]
fn malformed_flac_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_flac(d, Format::F516, 3, 20_000);
    let good = std::fs::read(d.join("rec.dat")).unwrap();
    let hea = std::fs::read_to_string(d.join("rec.hea")).unwrap();

    // A cut stream: the header's length is more than the frames left hold.
    write(d, "rec.dat", &good[..good.len() * 2 / 3]);
    assert_mentions(
        &error_of(d),
        &[
            "rec.dat",
            "byte ",
            "cut short",
            "runs past the end of the file",
        ],
    );
    // Cut inside the metadata.
    write(d, "rec.dat", &good[..30]);
    assert_mentions(&error_of(d), &["rec.dat", "byte 4", "runs past the end"]);
    // A damaged frame (a flipped bit in the middle of the stream).
    let mut damaged = good.clone();
    let mid = damaged.len() / 2;
    damaged[mid] ^= 0x10;
    write(d, "rec.dat", &damaged);
    assert_mentions(&error_of(d), &["rec.dat", "byte ", "FLAC frame"]);
    write(d, "rec.dat", &good);

    // The header puts two signals in the file, the stream has three channels.
    let two: String = hea.lines().take(3).collect::<Vec<_>>().join("\n");
    write(d, "rec.hea", two.replacen("rec 3", "rec 2", 1).as_bytes());
    assert_mentions(
        &error_of(d),
        &["rec.dat", "3 channel(s)", "2 signal(s) in this file"],
    );
    // Format 508 on a stream of 16-bit samples.
    write(d, "rec.hea", hea.replace(" 516 ", " 508 ").as_bytes());
    assert_mentions(
        &error_of(d),
        &["rec.dat", "16-bit samples", "format 508 stores at most 8"],
    );
    // A header longer than the stream.
    write(d, "rec.hea", hea.replacen("20000", "20001", 1).as_bytes());
    assert_mentions(
        &error_of(d),
        &["rec.dat", "truncated", "20001 frames", "holds 20000"],
    );
    // Not a FLAC stream at all.
    write(d, "rec.hea", hea.as_bytes());
    write(d, "rec.dat", &[0u8; 1000]);
    assert_mentions(&error_of(d), &["rec.dat", "byte 0", "\"fLaC\""]);

    // Nine signals in one FLAC file, or signals of different samples per frame.
    let line = "rec.dat 516 200 16 0 0 0 0 s\n";
    write(
        d,
        "rec.hea",
        format!("rec 9 250 10\n{}", line.repeat(9)).as_bytes(),
    );
    assert_mentions(&error_of(d), &["rec.hea", "at most 8"]);
    write(
        d,
        "rec.hea",
        b"rec 2 250 10\nrec.dat 516 200 16 0 0 0 0 a\nrec.dat 516x2 200 16 0 0 0 0 b\n",
    );
    assert_mentions(&error_of(d), &["rec.hea", "samples per frame"]);
}

/// The FLAC writer refuses what a FLAC file cannot hold: more than 8 signals in a file,
/// signals of different samples per frame in a file, values beyond the format's range.
#[test]
fn flac_writer_refuses_what_cannot_be_stored() {
    let dir = tempfile::tempdir().unwrap();
    let line = RecordLine::new("w", 250.0);
    let a = vec![0i32; 10];
    let b = vec![0i32; 20];
    let nine: Vec<WriteSignal> = (0..9)
        .map(|_| WriteSignal {
            spec: SignalSpec::new("w.dat", Format::F516),
            samples: &a,
        })
        .collect();
    let msg = write_record(dir.path(), &line, &nine, &[])
        .unwrap_err()
        .to_string();
    assert_mentions(&msg, &["w.hea", "at most 8"]);
    let mut two = SignalSpec::new("w.dat", Format::F516);
    two.samples_per_frame = Some(2);
    let mixed = [
        WriteSignal {
            spec: SignalSpec::new("w.dat", Format::F516),
            samples: &a,
        },
        WriteSignal {
            spec: two,
            samples: &b,
        },
    ];
    let msg = write_record(dir.path(), &line, &mixed, &[])
        .unwrap_err()
        .to_string();
    assert_mentions(&msg, &["samples per frame"]);
    let big = vec![128i32; 4];
    let over = [WriteSignal {
        spec: SignalSpec::new("w.dat", Format::F508),
        samples: &big,
    }];
    let msg = write_record(dir.path(), &line, &over, &[])
        .unwrap_err()
        .to_string();
    assert_mentions(&msg, &["value 128", "format 508", "-128 to 127"]);
    assert!(!dir.path().join("w.dat").exists());
}

#[test]
fn non_numeric_fields() {
    let cases: &[(&str, &[&str])] = &[
        (
            "rec 1 fast 10\nrec.dat 16\n",
            &["line 1", "sampling frequency", "fast"],
        ),
        ("rec x\n", &["line 1", "number of signals"]),
        (
            "rec 1 250 12x\nrec.dat 16\n",
            &["line 1", "number of samples", "12x"],
        ),
        (
            "rec 1 250 10\nrec.dat 16 abc/mV\n",
            &["line 2", "ADC gain", "abc"],
        ),
        (
            "rec 1 250 10\nrec.dat 16 200(x)/mV\n",
            &["line 2", "baseline"],
        ),
        (
            "rec 1 250 10\nrec.dat 16 200 twelve\n",
            &["line 2", "ADC resolution"],
        ),
        (
            "rec 1 250 10\nrec.dat 16x0\n",
            &["line 2", "samples per frame"],
        ),
        ("rec 1 250 10\nrec.dat 16:a\n", &["line 2", "skew"]),
        (
            "rec 1 250 10\nrec.dat 16 NaN\n",
            &["line 2", "ADC gain", "finite"],
        ),
        ("# just a comment\n\n", &["no record line"]),
        ("", &["no record line"]),
        (
            "rec 2 250 10\nrec.dat 16\n",
            &["announces 2 signals", "1 signal lines"],
        ),
        (
            "rec 1 250 10 12:00:00 32/13/2000\nrec.dat 16\n",
            &["line 1", "base date", "out of range"],
        ),
        ("rec/2 1 250 10\nseg 5\n", &["announces 2 segments"]),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (header, parts) in cases {
        write(dir.path(), "rec.hea", header.as_bytes());
        let msg = error_of(dir.path());
        assert_mentions(&msg, &["rec.hea"]);
        assert_mentions(&msg, parts);
    }
}

#[test]
fn bad_layouts_and_ranges() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "rec.hea",
        b"rec 3 250 10\na.dat 16\nb.dat 16\na.dat 16\n",
    );
    assert_mentions(&error_of(dir.path()), &["rec.hea", "consecutive"]);
    write(
        dir.path(),
        "rec.hea",
        b"rec 2 250 10\na.dat 16\na.dat 212\n",
    );
    assert_mentions(&error_of(dir.path()), &["share file", "formats 16 and 212"]);

    write(dir.path(), "rec.hea", b"rec 1 250 10\na.dat 16\n");
    write(dir.path(), "a.dat", &[0u8; 20]);
    let rec = Record::open(dir.path().join("rec")).unwrap();
    let err = |o: ReadOptions| rec.read(&o).unwrap_err().to_string();
    assert_mentions(
        &err(ReadOptions {
            to: Some(11),
            ..Default::default()
        }),
        &["frame 11", "10 frames"],
    );
    assert_mentions(
        &err(ReadOptions {
            from: 5,
            to: Some(4),
            ..Default::default()
        }),
        &["starts at frame 5"],
    );
    assert_mentions(
        &err(ReadOptions {
            signals: Some(vec![1]),
            ..Default::default()
        }),
        &["signal 1 does not exist"],
    );

    // A null signal claiming an absurd length is refused before any allocation.
    write(dir.path(), "rec.hea", b"rec 1 250 99999999999999\n~ 0\n");
    assert_mentions(&error_of(dir.path()), &["more than", "shorter range"]);
    write(
        dir.path(),
        "rec.hea",
        b"rec/2 1 250\nrec_a 18446744073709551615\nrec_b 2\n",
    );
    write(dir.path(), "rec_a.hea", b"rec_a 0 250\n");
    write(dir.path(), "rec_b.hea", b"rec_b 0 250\n");
    assert_mentions(&error_of(dir.path()), &["segment lengths"]);
}

#[test]
fn writer_refuses_what_cannot_be_stored() {
    let dir = tempfile::tempdir().unwrap();
    let line = RecordLine::new("w", 250.0);
    let write1 = |format: Format, samples: &[i32]| {
        let sig = [WriteSignal {
            spec: SignalSpec::new("w.dat", format),
            samples,
        }];
        write_record(dir.path(), &line, &sig, &[])
            .unwrap_err()
            .to_string()
    };
    assert_mentions(
        &write1(Format::F212, &[0, 2048]),
        &["w.hea", "sample 1", "2048", "-2048 to 2047"],
    );
    assert_mentions(
        &write1(Format::F8, &[0, 200]),
        &["sample 1", "differs", "200"],
    );
    let a = [1, 2, 3];
    let b = [1, 2];
    let sig = [
        WriteSignal {
            spec: SignalSpec::new("w.dat", Format::F16),
            samples: &a,
        },
        WriteSignal {
            spec: SignalSpec::new("w.dat", Format::F16),
            samples: &b,
        },
    ];
    let msg = write_record(dir.path(), &line, &sig, &[])
        .unwrap_err()
        .to_string();
    assert_mentions(&msg, &["3 frames", "2"]);
}

fn format_strategy() -> impl Strategy<Value = Format> {
    prop::sample::select(&Format::ALL[..])
}

/// A header built from random but plausible fields, so the reader's paths get exercised
/// (a purely random text almost never parses).
fn header_text() -> impl Strategy<Value = String> {
    let signal = (
        format_strategy(),
        0u32..4,
        0u32..4,
        0u64..12,
        prop::option::of(-5i32..5),
        any::<bool>(),
    );
    (
        prop::collection::vec(signal, 0..4),
        prop::option::of(0u64..40),
        prop::option::of(0u32..3),
    )
        .prop_map(|(signals, sig_len, n_seg)| {
            let mut s = String::from("rec");
            if let Some(n) = n_seg {
                s += &format!("/{n}");
            }
            s += &format!(" {} 250", signals.len());
            if let Some(l) = sig_len {
                s += &format!(" {l}");
            }
            s.push('\n');
            if let Some(n) = n_seg {
                for i in 0..n {
                    s += &format!("{} {}\n", if i == 1 { "~" } else { "rec" }, i * 3);
                }
                return s;
            }
            for (k, (f, spf, skew, off, init, second_file)) in signals.into_iter().enumerate() {
                let file = if f == Format::Null {
                    "~"
                } else if second_file && k > 0 {
                    "b.dat"
                } else {
                    "a.dat"
                };
                s += &format!("{file} {}x{}:{skew}+{off} 200 12 0", f.code(), spf.max(1));
                if let Some(i) = init {
                    s += &format!(" {i}");
                }
                s.push('\n');
            }
            s
        })
}

/// The bytes of a valid FLAC signal file of 2 signals and 9000 frames (format 516), and
/// its header, made once.
fn flac_sample() -> &'static (Vec<u8>, String) {
    static SAMPLE: std::sync::OnceLock<(Vec<u8>, String)> = std::sync::OnceLock::new();
    SAMPLE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        write_flac(dir.path(), Format::F516, 2, 9000);
        (
            std::fs::read(dir.path().join("rec.dat")).unwrap(),
            std::fs::read_to_string(dir.path().join("rec.hea")).unwrap(),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// A FLAC stream with bytes changed, cut, or read without a length in the header (so
    /// that its length is looked for at its end): every read gives samples or an error,
    /// never a panic.
    #[test]
    fn damaged_flac_streams_never_panic(
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..6),
        cut in prop::option::of(any::<prop::sample::Index>()),
        no_length in any::<bool>(),
        from in 0u64..9000,
        len in 0u64..3000,
    ) {
        let (good, hea) = flac_sample();
        let mut bytes = good.clone();
        for (at, v) in edits {
            let i = at.index(bytes.len());
            bytes[i] = v;
        }
        if let Some(c) = cut {
            bytes.truncate(c.index(bytes.len() + 1));
        }
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "rec.dat", &bytes);
        let hea = if no_length { hea.replacen("rec 2 500 9000", "rec 2 500", 1) } else { hea.clone() };
        write(dir.path(), "rec.hea", hea.as_bytes());
        if let Ok(rec) = Record::open(dir.path().join("rec")) {
            let _ = rec.read(&ReadOptions::default());
            let _ = rec.read_physical(&ReadOptions { from, to: Some((from + len).min(9000)), signals: Some(vec![1]) });
        }
    }

    #[test]
    fn arbitrary_header_text_never_panics(text in ".{0,300}") {
        let _ = Header::parse(&text, "x.hea");
    }

    #[test]
    fn arbitrary_header_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let _ = Header::parse(&String::from_utf8_lossy(&bytes), "x.hea");
    }

    #[test]
    fn arbitrary_records_never_panic(
        header in header_text(),
        a in prop::collection::vec(any::<u8>(), 0..120),
        b in prop::collection::vec(any::<u8>(), 0..60),
        from in 0u64..50,
        len in prop::option::of(0u64..50),
    ) {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "rec.hea", header.as_bytes());
        write(dir.path(), "a.dat", &a);
        write(dir.path(), "b.dat", &b);
        if let Ok(rec) = Record::open(dir.path().join("rec")) {
            let _ = rec.sig_len();
            // The physical-only read gives the bits of a read then `physical()`, or fails
            // when it does.
            let digital = rec.read(&ReadOptions::default());
            let physical = rec.read_physical(&ReadOptions::default());
            prop_assert_eq!(digital.is_ok(), physical.is_ok());
            if let (Ok(d), Ok(p)) = (&digital, &physical) {
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                for (x, y) in d.signals.iter().zip(&p.signals) {
                    prop_assert_eq!(bits(&x.physical()), bits(&y.values));
                }
            }
            let _ = rec.read(&ReadOptions { from, to: len.map(|l| from + l), signals: Some(vec![0]) });
        }
    }

    /// Write → read gives back the same samples and header, for every writable format,
    /// any number of signals (odd counts pair 212/310/311 samples across frames), several
    /// samples per frame and several files.
    #[test]
    fn write_read_round_trip(
        signals in prop::collection::vec((format_strategy(), 1u32..4, any::<bool>()), 1..6),
        frames in 0usize..40,
        seed in any::<u64>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut state = seed;
        let mut next = move || { state = state.wrapping_mul(6364136223846793005).wrapping_add(1); (state >> 33) as i64 };
        // Consecutive signals with the same format share a file unless the flag splits them
        // (or, in a FLAC file, their samples per frame differ).
        let mut specs = Vec::new();
        let mut file = 0;
        for (k, &(format, spf, split)) in signals.iter().enumerate() {
            let format = if format == Format::Null { Format::F16 } else { format };
            let apart = |s: &SignalSpec| {
                s.format != format
                    || (format.is_flac() && s.effective_samples_per_frame() != spf)
            };
            if k > 0 && (split || specs.last().is_some_and(apart)) {
                file += 1;
            }
            let mut s = SignalSpec::new(format!("f{file}.dat"), format);
            s.samples_per_frame = Some(spf);
            s.adc_gain = Some(100.0 + k as f64);
            s.baseline = Some(k as i32 - 2);
            s.units = Some("mV".into());
            s.description = Some(format!("s{k}"));
            specs.push(s);
        }
        let data: Vec<Vec<i32>> = specs.iter().map(|s| {
            let n = frames * s.effective_samples_per_frame() as usize;
            let (lo, hi) = s.format.range();
            let mut prev = 0i64;
            (0..n).map(|_| {
                let v = if s.format == Format::F8 {
                    prev += next() % 256 - 128;
                    prev
                } else {
                    lo as i64 + next() % (hi as i64 - lo as i64 + 1)
                };
                v as i32
            }).collect()
        }).collect();
        let ws: Vec<WriteSignal> = specs.iter().zip(&data).map(|(s, d)| WriteSignal { spec: s.clone(), samples: d }).collect();
        let line = RecordLine::new("rt", 500.0);
        let written = write_record(dir.path(), &line, &ws, &[" c".into()]).unwrap();
        let rec = Record::open(dir.path().join("rt")).unwrap();
        prop_assert_eq!(&rec.header, &written);
        let got = rec.read(&ReadOptions::default()).unwrap();
        for (k, s) in got.signals.iter().enumerate() {
            prop_assert_eq!(&s.digital, &data[k], "signal {}", k);
            let sum = data[k].iter().fold(0i16, |a, &v| a.wrapping_add(v as i16));
            prop_assert_eq!(written.signals[k].checksum, Some(sum as i32));
        }
    }
}

/// Review findings: headers alone must not be able to exhaust memory.
#[test]
fn headers_cannot_ask_for_unbounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    // Many null signals: each small, together too much for one read.
    let mut h = String::from("rec 200 250 5000000\n");
    for _ in 0..200 {
        h.push_str("~ 0\n");
    }
    write(dir.path(), "rec.hea", h.as_bytes());
    assert_mentions(
        &error_of(dir.path()),
        &["rec.hea", "200 signals", "shorter range"],
    );
    let rec = Record::open(dir.path().join("rec")).unwrap();
    let part = rec
        .read(&ReadOptions {
            from: 0,
            to: Some(10),
            signals: None,
        })
        .unwrap();
    assert_eq!(part.signals.len(), 200);

    // A segment named on thousands of lines is opened once and shared.
    write(
        dir.path(),
        "seg.hea",
        b"seg 2 250 3\nseg.dat 16\nseg.dat 16\n",
    );
    write(dir.path(), "seg.dat", &[1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0]);
    let mut h = String::from("rec/5000 2 250 15000\n");
    for _ in 0..5000 {
        h.push_str("seg 3\n");
    }
    write(dir.path(), "rec.hea", h.as_bytes());
    let rec = Record::open(dir.path().join("rec")).unwrap();
    let s = rec
        .read(&ReadOptions {
            from: 2,
            to: Some(5),
            signals: Some(vec![1]),
        })
        .unwrap();
    assert_eq!(s.signals[0].digital, [6, 2, 4]);

    // A header file of absurd size is refused before it is parsed.
    let big = vec![b'#'; (formats::wfdb::MAX_HEADER_BYTES + 1) as usize];
    write(dir.path(), "rec.hea", &big);
    assert_mentions(&error_of(dir.path()), &["rec.hea", "larger than"]);
}

#[test]
fn segments_must_have_the_record_signals() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "sa.hea", b"sa 1 250 3\nsa.dat 16\n");
    write(dir.path(), "sa.dat", &[0u8; 6]);
    // Fixed layout: every segment has all the record's signals.
    write(dir.path(), "rec.hea", b"rec/2 3 250 5\nsa 3\n~ 2\n");
    assert_mentions(
        &error_of(dir.path()),
        &["rec.hea", "3 signals", "fixed-layout segment \"sa\" has 1"],
    );
    // Variable layout: the layout segment lists them all.
    write(
        dir.path(),
        "lay.hea",
        b"lay 2 250 0\n~ 0 200 12 0 0 0 0 I\n~ 0 200 12 0 0 0 0 II\n",
    );
    write(dir.path(), "rec.hea", b"rec/2 3 250 3\nlay 0\nsa 3\n");
    assert_mentions(&error_of(dir.path()), &["layout segment \"lay\" has 2"]);
    // No segment describes the signals the record line claims (found by fuzzing).
    write(dir.path(), "rec.hea", b"rec/0 29512951\n");
    assert_mentions(
        &error_of(dir.path()),
        &["29512951 signals", "no segment describes them"],
    );
    write(dir.path(), "rec.hea", b"rec/1 2 250 5\n~ 5\n");
    assert_mentions(
        &error_of(dir.path()),
        &["2 signals", "no segment describes them"],
    );
}

#[test]
fn zero_sampling_frequency_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "rec.hea", b"rec 1 0 10\nrec.dat 16\n");
    assert_mentions(
        &error_of(dir.path()),
        &["rec.hea", "line 1", "not positive"],
    );
}

/// Skew is given in samples and read with a resolution of one frame, rounded, as the
/// WFDB library's readheader does; with one sample per frame, samples are frames.
#[test]
fn skew_in_samples_rounds_to_frames() {
    let dir = tempfile::tempdir().unwrap();
    let data: Vec<u8> = (0i16..8).flat_map(|v| v.to_le_bytes()).collect();
    write(dir.path(), "sk.dat", &data);
    // (skew in samples, first frame read, frames taken from past the end)
    for (skew, frame0, past_end) in [
        (0, [0, 1], 0),
        (1, [2, 3], 1),
        (2, [2, 3], 1),
        (3, [4, 5], 2),
    ] {
        write(
            dir.path(),
            "rec.hea",
            format!("rec 1 250 4\nsk.dat 16x2:{skew}\n").as_bytes(),
        );
        let rec = Record::open(dir.path().join("rec")).unwrap();
        let s = rec.read(&ReadOptions::default()).unwrap();
        assert_eq!(s.signals[0].digital[..2], frame0, "skew {skew}");
        // Samples from past the end of the record read as invalid.
        let p = s.signals[0].physical();
        let nan = p.iter().filter(|v| v.is_nan()).count();
        assert_eq!(nan, past_end * 2, "skew {skew}: {p:?}");
        assert!(p[8 - nan..].iter().all(|v| v.is_nan()));
    }
}

/// Format 8 has no invalid value of its own; samples past the end of a skewed format 8
/// signal are still invalid (NaN in physical units).
#[test]
fn format_8_skew_padding_is_invalid() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "rec.hea",
        b"rec 2 250 4\nf8.dat 8:2 100 8 0 10\nf8.dat 8 100 8 0 20\n",
    );
    write(dir.path(), "f8.dat", &[1, 1, 1, 1, 1, 1, 1, 1]);
    let rec = Record::open(dir.path().join("rec")).unwrap();
    let s = rec.read(&ReadOptions::default()).unwrap();
    assert_eq!(s.signals[0].digital[..2], [13, 14]);
    let p = s.signals[0].physical();
    assert_eq!(p[..2], [0.13, 0.14]);
    assert!(p[2].is_nan() && p[3].is_nan(), "{p:?}");
    assert_eq!(s.signals[1].digital, [21, 22, 23, 24]);
}

#[test]
fn writer_refuses_headers_it_could_not_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let line = RecordLine::new("w", 250.0);
    let samples = [1, 2, 3];
    let attempt = |edit: &dyn Fn(&mut SignalSpec)| {
        let mut spec = SignalSpec::new("w.dat", Format::F16);
        edit(&mut spec);
        let sig = [WriteSignal {
            spec,
            samples: &samples,
        }];
        write_record(dir.path(), &line, &sig, &[])
            .unwrap_err()
            .to_string()
    };
    assert_mentions(
        &attempt(&|s| s.samples_per_frame = Some(0)),
        &["signal 0", "at least 1"],
    );
    assert_mentions(
        &attempt(&|s| s.file_name = "w 2.dat".into()),
        &["file name", "white space"],
    );
    assert_mentions(
        &attempt(&|s| s.description = Some("a\nb".into())),
        &["description", "line break"],
    );
    assert_mentions(
        &attempt(&|s| s.adc_gain = Some(f64::NAN)),
        &["gain", "finite"],
    );
    assert_mentions(
        &attempt(&|s| s.units = Some("m V".into())),
        &["units", "white space"],
    );
    // Nothing was written by the refused attempts.
    assert!(!dir.path().join("w.hea").exists() && !dir.path().join("w.dat").exists());
    let sig = [WriteSignal {
        spec: SignalSpec::new("w.dat", Format::F16),
        samples: &samples,
    }];
    let msg = write_record(dir.path(), &line, &sig, &["two\nlines".into()])
        .unwrap_err()
        .to_string();
    assert_mentions(&msg, &["comment", "line break"]);
}
