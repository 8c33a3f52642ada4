//! Tests of reading records: reads against a whole-file decode for every format, FLAC
//! reads in parts, refusals of absurd headers, linear time on many signals, and the
//! conversion to physical units.

use super::super::format;
use super::sample::exact_reciprocal;
use super::single::PART_SAMPLES;
use super::*;

/// Writes record `r` in `dir`: one signal file `r.dat` of random bytes in `fmt`
/// holding `frames` frames of signals with the given (samples per frame, skew), after
/// `offset` bytes.
fn write(dir: &Path, fmt: Format, signals: &[(u32, u32)], frames: u64, offset: u64) {
    let tspf: u64 = signals.iter().map(|s| s.0 as u64).sum();
    let len = offset + fmt.bytes_written(frames * tspf);
    let mut state = 0x9E37_79B9_7F4A_7C15u64 ^ len;
    let bytes: Vec<u8> = (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect();
    std::fs::write(dir.join("r.dat"), bytes).unwrap();
    let mut hea = format!("r {} 360 {frames}\n", signals.len());
    for (i, &(spf, skew)) in signals.iter().enumerate() {
        hea += &format!(
            "r.dat {}x{spf}:{skew}+{offset} {}({})/mV 12 0 {} 0 0 s{i}\n",
            fmt.code(),
            [200.0, 38180.879946031266, 1.0, 0.25][i % 4],
            i as i32 * 37 - 50,
            i as i32 * 11 - 7,
        );
    }
    std::fs::write(dir.join("r.hea"), hea).unwrap();
}

/// What a read must return, from one decode of the whole file: stored frame
/// `t + skew` for frame `t`, padding past the end, format 8 summed from the start.
fn expected(dir: &Path, rec: &Record, from: u64, to: u64) -> Vec<Vec<i32>> {
    let specs = &rec.header.signals;
    let fmt = specs[0].format;
    let tspf: usize = specs
        .iter()
        .map(|s| s.effective_samples_per_frame() as usize)
        .sum();
    let sig_len = rec.sig_len().unwrap() as usize;
    let bytes = std::fs::read(dir.join("r.dat")).unwrap();
    let mut flat = vec![0; sig_len * tspf];
    format::decode(
        fmt,
        &bytes[specs[0].effective_byte_offset() as usize..],
        &mut flat,
    );
    let mut pos = 0;
    specs
        .iter()
        .map(|s| {
            let spf = s.effective_samples_per_frame() as usize;
            let mut values = Vec::with_capacity(sig_len * spf);
            for frame in flat.chunks_exact(tspf) {
                values.extend_from_slice(&frame[pos..pos + spf]);
            }
            if fmt == Format::F8 {
                let mut acc = s.effective_initial_value();
                for v in &mut values {
                    acc = acc.wrapping_add(*v);
                    *v = acc;
                }
            }
            pos += spf;
            let skew = skew_frames(s) as usize;
            let (lo, hi) = ((from as usize + skew) * spf, (to as usize + skew) * spf);
            let mut out = values[lo.min(values.len())..hi.min(values.len())].to_vec();
            out.resize((to - from) as usize * spf, padding_value(fmt));
            out
        })
        .collect()
}

/// A FLAC read large enough to be cut into parts decoded on several threads (on a
/// machine with more than one CPU) gives every sample of every signal, digital and
/// physical, whole and from an offset that falls inside a block.
#[test]
fn large_flac_reads_in_parts_give_every_sample() {
    let dir = tempfile::tempdir().unwrap();
    let frames = 300_000usize;
    let data: Vec<Vec<i32>> = (0..8)
        .map(|k| {
            (0..frames)
                .map(|t| ((t * 7 + k * 1013) % 3001) as i32 - 1500 + (t % 13) as i32)
                .collect()
        })
        .collect();
    let signals: Vec<super::super::WriteSignal> = data
        .iter()
        .map(|d| super::super::WriteSignal {
            spec: SignalSpec::new("big.dat", Format::F516),
            samples: d,
        })
        .collect();
    let line = super::super::RecordLine::new("big", 500.0);
    super::super::write_record(dir.path(), &line, &signals, &[]).unwrap();
    let rec = Record::open(dir.path().join("big")).unwrap();
    let all = rec.read(&ReadOptions::default()).unwrap();
    for (k, s) in all.signals.iter().enumerate() {
        assert!(s.digital == data[k], "signal {k}");
    }
    let physical = rec.read_physical(&ReadOptions::default()).unwrap();
    for (k, s) in physical.signals.iter().enumerate() {
        assert!(s.values == all.signals[k].physical(), "signal {k} physical");
    }
    let part = rec
        .read(&ReadOptions {
            from: 123_457,
            to: None,
            signals: Some(vec![7, 2]),
        })
        .unwrap();
    assert!(part.signals[0].digital == data[7][123_457..]);
    assert!(part.signals[1].digital == data[2][123_457..]);
}

/// A header whose frame claims billions of samples is refused, naming the file,
/// before any buffer is sized from it (such a read once tried to allocate 16 GB for a
/// read of no frames and aborted the process).
#[test]
fn an_absurd_frame_is_refused_without_allocating_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("r.dat"), b"").unwrap();
    for hea in [
        "r 1 360 0\nr.dat 32x4000000000 200 12 0 0 0 0 s\n",
        "r 1 360\nr.dat 32x4000000000 200 12 0 0 0 0 s\n",
    ] {
        std::fs::write(dir.path().join("r.hea"), hea).unwrap();
        let rec = Record::open(dir.path().join("r")).unwrap();
        let all = ReadOptions::default();
        for e in [
            rec.read(&all).err().map(|e| e.to_string()),
            rec.read_physical(&all).err().map(|e| e.to_string()),
        ] {
            let e = e.unwrap_or_default();
            assert!(
                e.contains("r.dat") && e.contains("4000000000 samples"),
                "{hea:?}: {e}"
            );
        }
    }
}

/// header(5): a `sig_len` of 0, like none, leaves the length unspecified: it comes
/// from the signal file, or from the segments of a multi-segment record (which the
/// record line's 0 must not contradict).
#[test]
fn a_length_of_zero_is_unspecified() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let samples: Vec<u8> = (0..20i16).flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(d.join("s.dat"), samples).unwrap();
    std::fs::write(d.join("s.hea"), "s 1 250 0\ns.dat 16 200 16 0 0 0 0 a\n").unwrap();
    let rec = Record::open(d.join("s")).unwrap();
    assert_eq!(rec.sig_len().unwrap(), 20);
    let read = rec.read(&ReadOptions::default()).unwrap();
    assert_eq!(read.signals[0].digital, (0..20).collect::<Vec<i32>>());
    std::fs::write(d.join("m.hea"), "m/2 1 250 0\ns 20\ns 20\n").unwrap();
    let rec = Record::open(d.join("m")).unwrap();
    assert_eq!(rec.sig_len().unwrap(), 40);
    assert_eq!(rec.read(&ReadOptions::default()).unwrap().frames, 40);
}

/// A multi-segment record whose first segment, of length 0, is null: taken as the
/// layout it would describe no signal and every sample would read as invalid.
#[test]
fn a_null_layout_segment_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let samples: Vec<u8> = (0..20i16).flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(d.join("s.dat"), samples).unwrap();
    std::fs::write(d.join("s.hea"), "s 1 250 20\ns.dat 16 200 16 0 0 0 0 a\n").unwrap();
    std::fs::write(d.join("m.hea"), "m/3 1 250 30\n~ 0\ns 20\n~ 10\n").unwrap();
    let e = Record::open(d.join("m")).unwrap_err().to_string();
    assert!(
        e.contains("m.hea") && e.contains("layout segment cannot be a null segment"),
        "{e}"
    );
    // A null segment of length 0 elsewhere is an empty gap.
    std::fs::write(d.join("m.hea"), "m/3 1 250 30\ns 20\n~ 0\n~ 10\n").unwrap();
    let read = Record::open(d.join("m"))
        .unwrap()
        .read(&ReadOptions::default())
        .unwrap();
    assert_eq!(read.signals[0].digital[..20], (0..20).collect::<Vec<i32>>());
}

/// A length whose byte count exceeds u64 is refused with a true message, not with a
/// saturated count of 18446744073709551615 bytes.
#[test]
fn a_length_beyond_addressable_bytes_is_refused_truthfully() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("r.dat"), [0u8; 40]).unwrap();
    for (hea, frames, spf) in [
        (
            "r 1 250 18446744073709551615\nr.dat 16\n",
            "18446744073709551615",
            1,
        ),
        (
            "r 1 250 18446744073709551615\nr.dat 16x2\n",
            "18446744073709551615",
            2,
        ),
        (
            "r 1 250 9223372036854775808\nr.dat 16\n",
            "9223372036854775808",
            1,
        ),
    ] {
        std::fs::write(d.join("r.hea"), hea).unwrap();
        let rec = Record::open(d.join("r")).unwrap();
        let e = rec
            .read(&ReadOptions {
                from: 0,
                to: Some(5),
                signals: None,
            })
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("r.dat")
                && e.contains(&format!("{frames} frames of {spf} samples"))
                && e.contains("more bytes than can be addressed")
                && !e.contains("18446744073709551615 bytes"),
            "{hea:?}: {e}"
        );
    }
    // Nor does a read's sample count saturate.
    std::fs::write(
        d.join("r.hea"),
        "r 2 250 18446744073709551615\nr.dat 16\nr.dat 16\n",
    )
    .unwrap();
    let e = Record::open(d.join("r"))
        .unwrap()
        .read(&ReadOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("r.hea") && e.contains("more than 2^64 samples"),
        "{e}"
    );
}

/// What header(5) and the WFDB library accept is read: modifiers in any order, a
/// negative block size, empty units, signal lines past the announced count.
#[test]
fn lenient_headers_read_as_the_wfdb_library_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut bytes = vec![0xFFu8; 4];
    bytes.extend((0..20i16).flat_map(|v| v.to_le_bytes()));
    std::fs::write(d.join("r.dat"), bytes).unwrap();
    std::fs::write(
        d.join("r.hea"),
        "r 1 250 20\nr.dat 16+4:1 100/ 16 0 0 0 -1 s\nr.dat 16\n",
    )
    .unwrap();
    let read = Record::open(d.join("r"))
        .unwrap()
        .read(&ReadOptions::default())
        .unwrap();
    let s = &read.signals[0];
    assert_eq!(s.units, "mV");
    // Skew 1: frame t is stored frame t + 1, and the last frame lies past the end.
    assert_eq!(s.digital[..19], (1..20).collect::<Vec<i32>>());
    assert_eq!(s.digital[19], GENERIC_INVALID);
}

/// Signals enough that work quadratic in their number takes minutes in a debug build
/// (opening a record of 100000 signal files took 36 s), while linear work takes a
/// moment.
const MANY_SIGNALS: usize = 100_000;

/// Writes `dir/name.hea`: the record line, then one line per signal.
fn write_header(dir: &Path, name: &str, record_line: &str, lines: impl Iterator<Item = String>) {
    let mut hea = format!("{record_line}\n");
    for line in lines {
        hea += &line;
        hea.push('\n');
    }
    std::fs::write(dir.join(format!("{name}.hea")), hea).unwrap();
}

#[test]
fn opening_a_record_of_many_files_takes_linear_time() {
    // Every signal in a file of its own: each file is looked for among the earlier
    // ones once, not compared with each of them.
    let dir = tempfile::tempdir().unwrap();
    let n = MANY_SIGNALS;
    let files = |n| (0..n).map(|i| format!("f{i:07}.dat 16"));
    write_header(dir.path(), "q", &format!("q {n} 250 0"), files(n));
    let rec = Record::open(dir.path().join("q")).unwrap();
    assert_eq!(rec.n_signals(), n);
    // A file used again after others is still found, with the same message.
    let again = files(n).chain(["f0000001.dat 16".to_string()]);
    write_header(dir.path(), "q", &format!("q {} 250 0", n + 1), again);
    let e = Record::open(dir.path().join("q")).unwrap_err();
    assert!(
        e.to_string().ends_with(&format!(
            "q.hea: signal {n} uses file \"f0000001.dat\", which earlier signals used too \
             but not just before it; signals sharing a file must be consecutive"
        )),
        "{e}"
    );
}

#[test]
fn reading_many_signals_takes_linear_time() {
    // Null signals, each in a group of its own: each group finds its selected
    // signals without going through the whole selection.
    let dir = tempfile::tempdir().unwrap();
    let n = MANY_SIGNALS;
    let nulls = (0..n).map(|i| format!("~ 0 200 12 0 0 0 0 s{i}"));
    write_header(dir.path(), "z", &format!("z {n} 250 1"), nulls);
    let rec = Record::open(dir.path().join("z")).unwrap();
    let s = rec.read(&ReadOptions::default()).unwrap();
    assert_eq!(s.signals.len(), n);
    assert!(
        s.signals
            .iter()
            .enumerate()
            .all(|(i, d)| d.index == i && d.digital == [GENERIC_INVALID])
    );
    // A selection in another order, with a signal twice.
    let picked = vec![n - 1, 3, n - 1, 0];
    let s = rec
        .read(&ReadOptions {
            signals: Some(picked.clone()),
            ..ReadOptions::default()
        })
        .unwrap();
    let indices: Vec<usize> = s.signals.iter().map(|d| d.index).collect();
    assert_eq!(indices, picked);
    assert_eq!(s.signals[1].name.as_deref(), Some("s3"));
}

#[test]
fn reading_many_signals_of_a_variable_layout_takes_linear_time() {
    // The layout names the signals; a segment holds them in another order, and one
    // it lacks reads as invalid. Each is found by name once, not by a search of the
    // segment's signals.
    let dir = tempfile::tempdir().unwrap();
    let n = MANY_SIGNALS;
    let null = |i: usize| format!("~ 0 200 12 0 0 0 0 s{i}");
    write_header(
        dir.path(),
        "lay",
        &format!("lay {n} 250 0"),
        (0..n).map(null),
    );
    // The segment's signal i is the layout's n-1-i; s0 is missing, s1 is there twice
    // (the first one counts).
    let seg = (1..n)
        .rev()
        .map(|i| match i {
            1 => null(1).replace("200", "400"),
            _ => null(i),
        })
        .chain([null(1)]);
    write_header(dir.path(), "seg", &format!("seg {n} 250 2"), seg);
    std::fs::write(
        dir.path().join("m.hea"),
        format!("m/2 {n} 250 2\nlay 0\nseg 2\n"),
    )
    .unwrap();
    let rec = Record::open(dir.path().join("m")).unwrap();
    let s = rec.read(&ReadOptions::default()).unwrap();
    assert_eq!(s.signals.len(), n);
    assert_eq!(s.signals[0].calibration[0].gain, 1.0);
    assert_eq!(s.signals[1].calibration[0].gain, 400.0);
    assert!(
        s.signals[2..]
            .iter()
            .enumerate()
            .all(|(i, d)| d.index == i + 2
                && d.name.as_deref() == Some(&format!("s{}", i + 2))
                && d.calibration[0].gain == 200.0
                && d.digital == [GENERIC_INVALID; 2])
    );
}

#[test]
fn io_errors_are_shown_once_in_the_error_chain() {
    // Found in an audit: `physiojudge wfdb rdsamp` printed "e14.dat: cannot read the
    // file: No such file or directory (os error 2): No such file or directory (os
    // error 2)", the I/O error being in the message and also the `source()`.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("e14.hea"), "e14 1 100 10\ne14.dat 16\n").unwrap();
    let dat = dir.path().join("e14.dat");
    let io = std::fs::read(&dat).unwrap_err();
    let rec = Record::open(dir.path().join("e14")).unwrap();
    let e = rec.read(&ReadOptions::default()).unwrap_err();
    assert_eq!(
        crate::test_util::chain(&e),
        format!("{}: cannot read the file: {io}", dat.display())
    );
    crate::test_util::assert_io_error_shown_once(&e, &io);
    let e = Record::open(dir.path().join("missing")).unwrap_err();
    crate::test_util::assert_io_error_shown_once(&e, &io);
}

fn check(fmt: Format, signals: &[(u32, u32)], frames: u64, offset: u64) {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), fmt, signals, frames, offset);
    let rec = Record::open(dir.path().join("r")).unwrap();
    for (from, to) in [(0, frames), (1, frames - 5), (frames / 3, frames / 3 + 7)] {
        if frames > 10_000 && (from, to) != (0, frames) {
            continue;
        }
        let opts = ReadOptions {
            from,
            to: Some(to),
            signals: None,
        };
        let want = expected(dir.path(), &rec, from, to);
        let got = rec.read(&opts).unwrap();
        let physical = rec.read_physical(&opts).unwrap();
        for ((w, g), p) in want.iter().zip(&got.signals).zip(&physical.signals) {
            assert!(w == &g.digital, "{fmt:?} {signals:?} {from}..{to}: digital");
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&g.physical()), bits(&p.values), "{fmt:?} {from}..{to}");
            assert_eq!(
                (&g.name, &g.units, g.samples_per_frame, g.index),
                (&p.name, &p.units, p.samples_per_frame, p.index)
            );
        }
    }
    // Selected signals, in another order.
    let opts = ReadOptions {
        from: 2,
        to: Some(frames),
        signals: Some(vec![signals.len() - 1, 0]),
    };
    let want = expected(dir.path(), &rec, 2, frames);
    let got = rec.read_physical(&opts).unwrap();
    let digital = rec.read(&opts).unwrap();
    assert_eq!(digital.signals[0].digital, want[signals.len() - 1]);
    assert_eq!(digital.signals[1].digital, want[0]);
    assert_eq!(got.signals[0].index, signals.len() - 1);
}

#[test]
fn power_of_two_gains_multiply_to_the_same_bits_as_they_divide() {
    let xs: Vec<f64> = [0i64, 1, -1, 3, -7, 2047, -2048, 32767, -32768, 65535]
        .into_iter()
        .chain([
            i32::MAX as i64 - i32::MIN as i64,
            i32::MIN as i64 - i32::MAX as i64,
        ])
        .chain((0..2000).map(|i| (i * 2654435761i64) % (1 << 33) - (1 << 32)))
        .map(|x| x as f64)
        .collect();
    for k in -1022..=1023 {
        for sign in [1.0, -1.0] {
            let gain = sign * 2f64.powi(k);
            let r = exact_reciprocal(gain).unwrap();
            for &x in &xs {
                assert_eq!((x / gain).to_bits(), (x * r).to_bits(), "{x} / 2^{k}");
            }
        }
    }
    for gain in [
        200.0,
        3.0,
        1.5,
        0.1,
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NAN,
        5e-324,
    ] {
        assert_eq!(exact_reciprocal(gain), None, "{gain}");
    }
    assert_eq!(exact_reciprocal(1.0), Some(1.0));
}

#[test]
fn only_the_invalid_value_of_a_run_becomes_nan() {
    // i32::MIN is format 32's invalid value: it must become NaN there and nowhere
    // else, by the multiplying (gain 1) and the dividing (gain 200) conversions.
    let digital = vec![
        i32::MIN,
        i32::MIN + 1,
        i32::MIN,
        7,
        i32::MIN,
        i32::MIN + 1,
        -32768,
    ];
    let run = |start, len, gain, baseline, invalid| Calibration {
        start,
        len,
        gain,
        baseline,
        invalid,
    };
    let data = SignalData {
        index: 0,
        name: None,
        units: "mV".into(),
        samples_per_frame: 1,
        digital,
        calibration: vec![
            run(0, 2, 1.0, 0, None),
            run(2, 2, 200.0, 3, None),
            run(4, 3, 200.0, 0, Some(i32::MIN)),
        ],
    };
    let p = data.physical();
    assert_eq!(p[..2], [-2147483648.0, -2147483647.0]);
    assert_eq!(p[2..4], [(i32::MIN as f64 - 3.0) / 200.0, 4.0 / 200.0]);
    assert!(p[4].is_nan());
    assert_eq!(p[5..], [(i32::MIN + 1) as f64 / 200.0, -32768.0 / 200.0]);
}

#[test]
fn small_reads_match_a_whole_file_decode() {
    for fmt in Format::PACKED.into_iter().filter(|&f| f != Format::Null) {
        check(fmt, &[(1, 0), (2, 3), (1, 1), (1, 0)], 1000, 7);
        check(fmt, &[(1, 0), (1, 0)], 999, 0);
        check(fmt, &[(1, 2)], 1001, 3);
    }
}

#[test]
fn large_reads_split_across_threads_match_a_whole_file_decode() {
    // More than 2 * PART_SAMPLES samples: cut into parts, decoded on every core (on a
    // machine with one, this checks the parts decoded in turn). Odd samples per frame
    // put part and chunk boundaries inside packing groups.
    let frames = (PART_SAMPLES / 2) as u64 + 123;
    for fmt in [Format::F16, Format::F212, Format::F311] {
        check(fmt, &[(1, 0), (2, 5), (1, 0)], frames, 5);
    }
}
