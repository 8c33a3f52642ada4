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
fn unknown_and_unsupported_formats() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "rec.hea", b"rec 1 250 10\nrec.dat 999\n");
    assert_mentions(
        &error_of(dir.path()),
        &["rec.hea", "line 2", "unknown signal format 999"],
    );
    write(dir.path(), "rec.hea", b"rec 1 250 10\nrec.dat 516\n");
    assert_mentions(&error_of(dir.path()), &["line 2", "FLAC", "not supported"]);
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

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
        // Consecutive signals with the same format share a file unless the flag splits them.
        let mut specs = Vec::new();
        let mut file = 0;
        for (k, &(format, spf, split)) in signals.iter().enumerate() {
            let format = if format == Format::Null { Format::F16 } else { format };
            if k > 0 && (split || specs.last().is_some_and(|s: &SignalSpec| s.format != format)) {
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
