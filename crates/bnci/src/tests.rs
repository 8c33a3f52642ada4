//! Tests of the whole conversion on runs made to BNCI's layout (and, when the shared data
//! is there, on the real files).

use super::*;
use p300::{CUE, GAP, GROUPS, MATRIX, TRIGGER_ROW};
use proptest::prelude::*;

/// A run's timing, in 256 Hz samples.
#[derive(Clone, Copy)]
struct Shape {
    lead: usize,
    soa: usize,
    marker: usize,
    /// Last flash onset of a character to the next character's first.
    gap: usize,
    tail: usize,
}

/// BNCI's measured timing (s6.train).
const BNCI: Shape = Shape {
    lead: 2452,
    soa: 20,
    marker: 4,
    gap: 976,
    tail: 1071,
};

/// Onset of flash `k` of repetition `r` of character `c`.
fn onset(s: Shape, c: usize, r: usize, k: usize) -> usize {
    s.lead + c * ((FLASHES_PER_CHARACTER - 1) * s.soa + s.gap) + (r * LINES + k) * s.soa
}

/// A run spelling `targets` (row-major indices), each repetition a fresh permutation of
/// the lines, EEG rows with DC offsets and a sinusoid.
fn fake_run(s: Shape, targets: &[usize]) -> Matrix {
    let last = onset(s, targets.len() - 1, REPETITIONS - 1, LINES - 1);
    let n = last + s.tail;
    let mut rows = vec![vec![0.0f64; n]; RUN_ROWS];
    for (i, t) in rows[0].iter_mut().enumerate() {
        *t = i as f64 / 256.0;
    }
    for (r, eeg) in rows.iter_mut().enumerate().take(9).skip(1) {
        for (i, v) in eeg.iter_mut().enumerate() {
            *v = -300.0 * r as f64 + 5.0 * (i as f64 * 0.05 * r as f64).sin();
        }
    }
    let mut state = 12345u64;
    for (c, &target) in targets.iter().enumerate() {
        let (col, row) = ((target % 6) as u8 + 1, (target / 6) as u8 + 7);
        for r in 0..REPETITIONS {
            let mut order: Vec<u8> = (1..=12).collect();
            for i in (1..12).rev() {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                order.swap(i, (state >> 33) as usize % (i + 1));
            }
            for (k, &line) in order.iter().enumerate() {
                let at = onset(s, c, r, k);
                let flag = f64::from(u8::from(line == col || line == row));
                rows[9][at..at + s.marker].fill(f64::from(line));
                rows[10][at..at + s.marker].fill(flag);
            }
        }
    }
    let mut data = Vec::with_capacity(RUN_ROWS * n);
    for i in 0..n {
        for row in &rows {
            data.push(row[i]);
        }
    }
    Matrix {
        rows: RUN_ROWS,
        cols: n,
        data,
    }
}

fn set(m: &mut Matrix, r: usize, c: usize, v: f64) {
    m.data[c * RUN_ROWS + r] = v;
}

fn get(m: &Matrix, r: usize, c: usize) -> f64 {
    m.data[c * RUN_ROWS + r]
}

fn index_of(c: char) -> usize {
    MATRIX.iter().position(|&m| m == c).unwrap()
}

fn events(b: &Block) -> Vec<(usize, u32)> {
    b.row(TRIGGER_ROW)
        .iter()
        .enumerate()
        .filter(|(_, v)| **v != 0.0)
        .map(|(i, &v)| (i, v as u32))
        .collect()
}

fn as_stream(b: &Block, name: &str) -> stream::Block {
    stream::Block::new(name, p300::ROWS, b.samples, b.data.clone()).unwrap()
}

#[test]
fn triggers_follow_the_contest_layout() {
    let word: Vec<usize> = "HI_".chars().map(index_of).collect();
    let m = fake_run(BNCI, &word);
    let b = convert_run("f.mat", "s3.train", 3, 1, &m).unwrap();
    assert_eq!(b.samples, resample::output_len(m.cols));
    assert_eq!(b.data.len(), 65 * b.samples);
    assert_eq!(b.spelled(), "HHII__");
    let ev = events(&b);
    assert_eq!(ev.len(), 6 * (2 + 5 * 13));
    let at250 = resample::nearest_output;
    let mut it = ev.iter().copied();
    let mut previous_end = 0;
    for (t, trial) in b.trials.iter().enumerate() {
        let (c, rep0) = (t / 2, TRIAL_REPETITIONS[t % 2]);
        assert_eq!(
            (trial.source_character, trial.first_repetition),
            (c + 1, rep0 + 1)
        );
        let index = word[c];
        assert_eq!(trial.code, 101 + index as u32);
        let first = at250(onset(BNCI, c, rep0, 0));
        let (start, code) = it.next().unwrap();
        assert_eq!((start, code), (first - CUE, trial.code), "trial {t}");
        assert!(start > previous_end);
        assert_eq!(trial.start, start);
        let (col, row) = (index % 6, index / 6 + 6);
        let (g1, g2) = GROUPS[index];
        let mut last200 = 0;
        for s in 0..5 {
            for k in 0..12 {
                let at = onset(BNCI, c, rep0 + s, k);
                let line = get(&m, 9, at) as usize;
                let (pos, code) = it.next().unwrap();
                assert_eq!(pos, at250(at), "trial {t} seq {s} flash {k}");
                assert_eq!(code, u32::from(trial.groups[line - 1]));
                // Target lines, and only they, carry the target's groups.
                let is_target_group = code == u32::from(g1) || code == u32::from(g2);
                assert_eq!(is_target_group, line - 1 == col || line - 1 == row);
                assert_eq!(is_target_group, get(&m, 10, at) == 1.0);
            }
            let (pos, code) = it.next().unwrap();
            let twelfth = onset(BNCI, c, rep0 + s, 11);
            assert_eq!(
                (pos, code),
                (at250(twelfth + 20) - 1, 200),
                "trial {t} seq {s}"
            );
            last200 = pos;
        }
        let (end, code) = it.next().unwrap();
        assert_eq!((end, code), (last200 + GAP, 241), "trial {t}");
        assert_eq!(trial.end, end);
        previous_end = end;
    }
    assert!(it.next().is_none());

    // The host reads it: 6 trials of 5 sequences of 12 flashes.
    let spans = as_stream(&b, "S03/block_1").trials().unwrap();
    assert_eq!(spans.len(), 6);
    for (span, trial) in spans.iter().zip(&b.trials) {
        assert_eq!(
            (span.start, span.code, span.end),
            (trial.start, trial.code, trial.end)
        );
        assert_eq!(span.sequences.len(), 5);
        assert!(span.sequences.iter().all(|s| s.flashes.len() == 12));
    }

    // The EEG is in the named rows, with its DC offset; the other rows are zero.
    for (k, name) in CHANNELS.iter().enumerate() {
        let row = p300::CHANNELS.iter().position(|c| c == name).unwrap();
        let x = b.row(row);
        let mean = x.iter().map(|&v| f64::from(v)).sum::<f64>() / x.len() as f64;
        assert!(
            (mean + 300.0 * (k + 1) as f64).abs() < 1.0,
            "{name}: {mean}"
        );
    }
    let named: Vec<usize> = CHANNELS
        .iter()
        .map(|n| p300::CHANNELS.iter().position(|c| c == n).unwrap())
        .collect();
    for r in (0..64).filter(|r| !named.contains(r)) {
        assert!(b.row(r).iter().all(|&v| v == 0.0), "row {r}");
    }
}

#[test]
fn close_characters_move_the_trial_end_and_start() {
    // 0.3 s from a character's last flash to the next one's first: the trial end comes
    // just before the next first flash (with a sample for its start), which comes right
    // after that end instead of a cue before.
    let shape = Shape { gap: 77, ..BNCI };
    let m = fake_run(shape, &[0, 7]);
    let b = convert_run("f.mat", "s1.test", 1, 2, &m).unwrap();
    let at250 = resample::nearest_output;
    let next_first = at250(onset(shape, 1, 0, 0));
    let t = &b.trials;
    assert_eq!(t[1].end, next_first - 2);
    assert_eq!(t[2].start, next_first - 1);
    // The others keep the contest's gaps.
    assert_eq!(t[0].start, at250(onset(shape, 0, 0, 0)) - CUE);
    assert_eq!(t[2].end, at250(onset(shape, 1, 4, 11) + 20) - 1 + GAP);
    assert_eq!(t[3].end, at250(onset(shape, 1, 14, 11) + 20) - 1 + GAP);
    assert_eq!(as_stream(&b, "b").trials().unwrap().len(), 4);

    // A block that ends soon after the last flash cuts the last trial end short.
    let shape = Shape { tail: 60, ..BNCI };
    let m = fake_run(shape, &[3]);
    let b = convert_run("f.mat", "s1.test", 1, 2, &m).unwrap();
    assert_eq!(b.trials[1].end, b.samples - 1);
    // One with no room after the last sequence end is refused.
    let shape = Shape { tail: 10, ..BNCI };
    let e = convert_run("f.mat", "s1.test", 1, 2, &fake_run(shape, &[3]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("no room for the trial-end trigger"), "{e}");
}

#[test]
fn bad_runs_are_named() {
    let good = fake_run(BNCI, &[0, 35]);
    let second_char = onset(BNCI, 1, 0, 0);
    type Spoil = Box<dyn Fn(&mut Matrix)>;
    let cases: Vec<(Spoil, &str)> = vec![
        (
            Box::new(|m| set(m, 0, 100, 5.0)),
            "s2.train, sample 100: the time row says 5.0 s",
        ),
        (
            Box::new(|m| set(m, 3, 7, f64::NAN)),
            "s2.train, sample 7: EEG row 3: NaN is not a finite number",
        ),
        (
            Box::new(|m| set(m, 9, 9, 13.0)),
            "sample 9: flash id 13.0 is not 0 (no flash) or a line 1–12",
        ),
        (Box::new(|m| set(m, 9, 9, 2.5)), "sample 9: flash id 2.5"),
        (
            Box::new(|m| set(m, 10, 9, 1.0)),
            "sample 9: the target flag is set while no line flashes",
        ),
        (
            Box::new(move |m| {
                let at = onset(BNCI, 0, 0, 0);
                let v = get(m, 10, at + 2);
                set(m, 10, at + 2, 1.0 - v);
            }),
            "the target flag changes within the flash",
        ),
        (
            Box::new(move |m| {
                // Character 2 is '_' (column 6, row 12): unflag its row's flash in
                // repetition 4.
                for k in 0..12 {
                    let at = onset(BNCI, 1, 3, k);
                    if get(m, 9, at) == 12.0 {
                        for i in at..at + 4 {
                            set(m, 10, i, 0.0);
                        }
                    }
                }
            }),
            "character 2: line 12 is flagged as target on some of its flashes but not on this one",
        ),
        (
            Box::new(move |m| {
                // Character 2 flags line 11 too, on all its flashes.
                for r in 0..15 {
                    for k in 0..12 {
                        let at = onset(BNCI, 1, r, k);
                        if get(m, 9, at) == 11.0 {
                            for i in at..at + 4 {
                                set(m, 10, i, 1.0);
                            }
                        }
                    }
                }
            }),
            "character 2: the target flags mark lines [6, 11, 12], not one column",
        ),
        (
            Box::new(move |m| {
                // A line flashes twice in repetition 1 of character 2.
                let line = get(m, 9, second_char);
                let at = onset(BNCI, 1, 0, 1);
                for i in at..at + 4 {
                    set(m, 9, i, line);
                    set(m, 10, i, get(m, 10, second_char));
                }
            }),
            "character 2, repetition 1: line",
        ),
        (
            Box::new(move |m| {
                // The last flash is lost.
                let at = onset(BNCI, 1, 14, 11);
                for i in at..at + 4 {
                    set(m, 9, i, 0.0);
                    set(m, 10, i, 0.0);
                }
            }),
            "s2.train: 359 flashes is not a whole number of characters of 15 repetitions × 12 lines",
        ),
    ];
    for (i, (spoil, want)) in cases.iter().enumerate() {
        let mut m = good.clone();
        spoil(&mut m);
        let e = convert_run("x.mat", "s2.train", 2, 1, &m)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("x.mat: s2.train"), "case {i}: {e}");
        assert!(e.contains(want), "case {i}: {e}\nwant: {want}");
    }
    let short = Matrix {
        rows: 10,
        cols: 2,
        data: vec![0.0; 20],
    };
    let e = convert_run("x.mat", "s2.test", 2, 2, &short)
        .unwrap_err()
        .to_string();
    assert!(e.contains("a run must have 11 rows"), "{e}");
    let empty = Matrix {
        rows: 11,
        cols: 0,
        data: vec![],
    };
    let e = convert_run("x.mat", "s2.test", 2, 2, &empty)
        .unwrap_err()
        .to_string();
    assert!(e.contains("no samples"), "{e}");
    // Flashes too close to keep apart at 250 Hz: onsets 2453 and 2454 (21 and 22 past a
    // multiple of 128) both become 2396.
    let shape = Shape {
        lead: 128 * 19 + 21,
        ..BNCI
    };
    let mut m = fake_run(shape, &[4]);
    let o = onset(shape, 0, 0, 0);
    let (line, flag) = (get(&m, 9, o + 20), get(&m, 10, o + 20));
    for i in o + 20..o + 24 {
        set(&mut m, 9, i, 0.0);
        set(&mut m, 10, i, 0.0);
    }
    for i in o + 1..o + 5 {
        set(&mut m, 9, i, line);
        set(&mut m, 10, i, flag);
    }
    let e = convert_run("x.mat", "s2.test", 2, 2, &m)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("would fall at sample 2396 and trigger")
            && e.contains("at sample 2396: flashes or sequences too close together to convert"),
        "{e}"
    );
}

// ---------------------------------------------------------------------------------------
// A minimal MAT v5 writer (uncompressed): structs of double matrices.
// ---------------------------------------------------------------------------------------

fn element(ty: u32, payload: &[u8]) -> Vec<u8> {
    let mut e = ty.to_le_bytes().to_vec();
    e.extend((payload.len() as u32).to_le_bytes());
    e.extend(payload);
    while !e.len().is_multiple_of(8) {
        e.push(0);
    }
    e
}

fn matrix(name: &str, class: u32, dims: &[usize], body: &[u8]) -> Vec<u8> {
    let mut p = element(6, &[class.to_le_bytes(), 0u32.to_le_bytes()].concat());
    let dims: Vec<u8> = dims
        .iter()
        .flat_map(|&d| (d as i32).to_le_bytes())
        .collect();
    p.extend(element(5, &dims));
    p.extend(element(1, name.as_bytes()));
    p.extend(body);
    element(14, &p)
}

fn double(m: &Matrix) -> Vec<u8> {
    let bytes: Vec<u8> = m.data.iter().flat_map(|v| v.to_le_bytes()).collect();
    matrix("", 6, &[m.rows, m.cols], &element(9, &bytes))
}

fn struct_var(name: &str, fields: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let mut body = element(5, &32i32.to_le_bytes());
    let mut names = Vec::new();
    for (f, _) in fields {
        let mut n = f.as_bytes().to_vec();
        n.resize(32, 0);
        names.extend(n);
    }
    body.extend(element(1, &names));
    for (_, v) in fields {
        body.extend(v);
    }
    matrix(name, 2, &[1, 1], &body)
}

fn mat_file(vars: &[Vec<u8>]) -> Vec<u8> {
    let mut h = b"MATLAB 5.0 MAT-file, written by the bnci tests".to_vec();
    h.resize(116, b' ');
    h.extend([0u8; 8]);
    h.extend(0x0100u16.to_le_bytes());
    h.extend(b"IM");
    for v in vars {
        h.extend(v);
    }
    h
}

fn subject_file(var: &str, train: &Matrix, test: &Matrix) -> Vec<u8> {
    mat_file(&[struct_var(
        var,
        &[("train", double(train)), ("test", double(test))],
    )])
}

#[test]
fn a_file_becomes_two_blocks_of_its_subject() {
    let (train, test) = (
        fake_run(BNCI, &[index_of('H'), index_of('I')]),
        fake_run(Shape { lead: 300, ..BNCI }, &[index_of('9')]),
    );
    let bytes = subject_file("s7", &train, &test);
    let s = convert_bytes(&bytes, "data/s7.mat").unwrap();
    assert_eq!((s.number, s.dir.as_str()), (7, "S07"));
    assert_eq!(s.blocks.len(), 2);
    assert_eq!(
        (s.blocks[0].source.as_str(), s.blocks[0].spelled().as_str()),
        ("s7.train", "HHII")
    );
    assert_eq!(
        (s.blocks[1].source.as_str(), s.blocks[1].spelled().as_str()),
        ("s7.test", "99")
    );
    // A run starting 300 samples (1.17 s) in still has room for the cue.
    assert_eq!(
        s.blocks[1].trials[0].start,
        resample::nearest_output(300) - CUE
    );
    // The relabelling differs between the blocks and between the trials.
    assert_ne!(s.blocks[0].trials[0].groups, s.blocks[0].trials[1].groups);
    // Any file name works; a file named for another subject does not.
    assert_eq!(convert_bytes(&bytes, "renamed.mat").unwrap().number, 7);
    let e = convert_bytes(&bytes, "s8.mat").unwrap_err().to_string();
    assert!(
        e.contains("s8.mat: s7: the file is named for subject 8 but holds s7"),
        "{e}"
    );
    // The same bytes every time.
    let again = convert_bytes(&bytes, "data/s7.mat").unwrap();
    assert_eq!(again.blocks[0].data, s.blocks[0].data);
    assert_eq!(again.blocks[1].data, s.blocks[1].data);

    let cases = [
        (
            mat_file(&[]),
            "expected exactly one struct named s1 … s99, found no variable",
        ),
        (
            mat_file(&[double(&train)]),
            "expected exactly one struct named s1 … s99, found  (a 11×",
        ),
        (
            mat_file(&[struct_var("s100", &[("train", double(&train))])]),
            "found s100 (a 1×1 struct array)",
        ),
        (
            mat_file(&[
                struct_var("s1", &[("train", double(&train))]),
                struct_var("s2", &[("train", double(&train))]),
            ]),
            "found s1 (a 1×1 struct array), s2",
        ),
        (
            mat_file(&[struct_var("s4", &[("train", double(&train))])]),
            "s4: the struct has no field 'test' (its fields: train)",
        ),
        (
            mat_file(&[struct_var(
                "s4",
                &[("train", double(&train)), ("test", struct_var("", &[]))],
            )]),
            "s4.test: is a 1×1 struct array, not a real numeric matrix",
        ),
    ];
    for (bytes, want) in cases {
        let e = convert_bytes(&bytes, "bad.mat").unwrap_err().to_string();
        assert!(e.starts_with("bad.mat: "), "{e}");
        assert!(e.contains(want), "{e}\nwant: {want}");
    }
}

#[test]
fn written_blocks_load_and_play() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = |word: &str| fake_run(BNCI, &word.chars().map(index_of).collect::<Vec<_>>());
    let a = tmp.path().join("s6.mat");
    std::fs::write(&a, subject_file("s6", &runs("AB"), &runs("C"))).unwrap();
    let b = tmp.path().join("s10.mat");
    std::fs::write(&b, subject_file("s10", &runs("Z"), &runs("12"))).unwrap();
    let out = tmp.path().join("out");
    let written = write(&out, &[b.clone(), a.clone()]).unwrap();
    let summary: Vec<(String, &str, &str)> = written
        .iter()
        .map(|w| {
            (
                w.path.display().to_string(),
                w.source.as_str(),
                w.spelled.as_str(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("S10/block_1.npy".to_string(), "s10.train", "ZZ"),
            ("S10/block_2.npy".to_string(), "s10.test", "1122"),
            ("S06/block_1.npy".to_string(), "s6.train", "AABB"),
            ("S06/block_2.npy".to_string(), "s6.test", "CC"),
        ]
    );
    let subjects = stream::load::subjects(&out).unwrap();
    let names: Vec<&str> = subjects.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["S06", "S10"]);
    let codes: Vec<Vec<u32>> = subjects
        .iter()
        .flat_map(|s| &s.blocks)
        .map(|b| b.trials().unwrap().iter().map(|t| t.code).collect())
        .collect();
    assert_eq!(
        codes,
        [
            vec![101, 101, 102, 102],
            vec![103, 103],
            vec![126, 126],
            vec![127, 127, 128, 128]
        ]
    );
    // A session plays it to the end.
    let mut session = stream::Session::new(subjects, 1).unwrap();
    let mut buf = Vec::new();
    let mut packets = 0;
    while !session.next_packet(&mut buf).finished {
        packets += 1;
    }
    assert!(packets > 1000);
    assert!(session.finish().finished);

    // Not into a folder that is not empty; a subject given twice is refused (and
    // nothing is written).
    let e = write(&out, std::slice::from_ref(&a))
        .unwrap_err()
        .to_string();
    assert!(e.contains("not empty"), "{e}");
    let other = tmp.path().join("other");
    let e = write(&other, &[a.clone(), a.clone()])
        .unwrap_err()
        .to_string();
    assert!(e.contains("both hold subject 6"), "{e}");
    assert!(!other.exists());
    let e = write(&other, &[tmp.path().join("none.mat")])
        .unwrap_err()
        .to_string();
    assert!(e.contains("none.mat"), "{e}");
    assert!(!other.exists());
}

// ---------------------------------------------------------------------------------------
// No input panics.
// ---------------------------------------------------------------------------------------

fn small_file() -> Vec<u8> {
    let shape = Shape {
        lead: 40,
        tail: 80,
        ..BNCI
    };
    subject_file("s5", &fake_run(shape, &[1]), &fake_run(shape, &[2]))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let _ = convert_bytes(&bytes, "fuzz.mat");
        // Behind a valid level-5 header too.
        let mut file = mat_file(&[]);
        file.extend(&bytes);
        let _ = convert_bytes(&file, "fuzz.mat");
    }

}

proptest! {
    // A valid file takes a tenth of a second to convert in a debug build.
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn mutated_files_never_panic(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)
    ) {
        let mut bytes = small_file();
        for (at, v) in edits {
            let i = at.index(bytes.len());
            bytes[i] = v;
        }
        let _ = convert_bytes(&bytes, "fuzz.mat");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Runs with flash and target rows drawn from a few values (so that flashes, runs and
    /// flags of every kind come up) never panic.
    #[test]
    fn arbitrary_runs_never_panic(
        cols in 0usize..400,
        seed in any::<u64>(),
        rows in prop::sample::select(vec![10usize, 11, 12]),
    ) {
        let mut state = seed;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            state >> 33
        };
        let mut data = Vec::with_capacity(rows * cols);
        for c in 0..cols {
            for r in 0..rows {
                data.push(match r {
                    0 => c as f64 / 256.0,
                    9 => [0.0, 0.0, 1.0, 7.0, 12.0, 13.0, -1.0, 0.5][next() as usize % 8],
                    10 => [0.0, 0.0, 1.0, 2.0][next() as usize % 4],
                    _ => [0.0, 1e300, f64::NAN, -5.0][next() as usize % 4],
                });
            }
        }
        let m = Matrix { rows, cols, data };
        let _ = convert_run("fuzz.mat", "s1.train", 1, 1, &m);
    }
}

#[test]
fn the_small_file_converts() {
    // The file the mutation test starts from is a valid one.
    let s = convert_bytes(&small_file(), "s5.mat").unwrap();
    assert_eq!(s.blocks[0].spelled(), "BB");
}

// ---------------------------------------------------------------------------------------
// The real files.
// ---------------------------------------------------------------------------------------

#[test]
fn the_real_files_spell_lukas_and_water_with_the_documented_timing() {
    let Some(data) = testkit::shared_data("bnci::the_real_files") else {
        return;
    };
    let dir = data.join("p300_bnci2015003");
    for (file, number) in [("s6.mat", 6), ("s10.mat", 10)] {
        let s = convert_file(&dir.join(file)).unwrap();
        assert_eq!(s.number, number);
        assert_eq!(s.blocks[0].spelled(), "LLUUKKAASS");
        assert_eq!(s.blocks[1].spelled(), "WWAATTEERR");
        for b in &s.blocks {
            let t = b.timing;
            // docs/p300-data.md: a 4-sample flash marker, 20 samples (78.1 ms) from one
            // flash to the next with no pause between repetitions, 976 samples (3.81 s)
            // from a character's last flash to the next one's first.
            assert_eq!(t.flash_len, (4, 4), "{}", b.source);
            assert_eq!((t.soa, t.soa_range), (20, (20, 20)), "{}", b.source);
            assert_eq!(t.character_gap, Some((976, 976)), "{}", b.source);
            assert_eq!(b.samples, resample::output_len(t.samples));
            let spans = as_stream(b, &b.source).trials().unwrap();
            assert_eq!(spans.len(), 10);
            // Every trial has the contest's 1.0 s cue and 850 ms gap.
            for (span, trial) in spans.iter().zip(&b.trials) {
                assert_eq!(span.sequences[0].flashes[0] - span.start, CUE);
                let last200 = b.row(TRIGGER_ROW)[..span.end]
                    .iter()
                    .rposition(|&v| v == 200.0)
                    .unwrap();
                assert_eq!(span.end - last200, GAP);
                assert_eq!(span.code, trial.code);
            }
        }
    }
}
