//! Property tests for the scorers: scores do not depend on the order of files or lines,
//! and no prediction file content, however broken, makes a scorer panic.

use proptest::prelude::*;
use score::Mode;
use score::cinc2017::{self, Label};
use score::cpsc2021::{Class, RefRecord, Reference, score};
use score::physionet2022;

/// A synthetic AFp/AFf/N reference record with `episodes` episodes of 6 beats in a beat
/// train, one beat every 160 samples (200 Hz), built as the CPSC `.atr` files are.
fn synthetic(name: &str, class: Class, episodes: usize) -> RefRecord {
    let mut samples = Vec::new();
    let mut aux: Vec<&[u8]> = Vec::new();
    let mut t = 100;
    let beat = |samples: &mut Vec<i64>, aux: &mut Vec<&[u8]>, t: &mut i64| {
        samples.push(*t);
        aux.push(b"");
        *t += 160;
    };
    for _ in 0..5 {
        beat(&mut samples, &mut aux, &mut t);
    }
    for _ in 0..episodes {
        samples.push(t - 30);
        aux.push(b"(AFIB");
        for _ in 0..6 {
            beat(&mut samples, &mut aux, &mut t);
        }
        samples.push(t - 30);
        aux.push(b"(N");
        for _ in 0..5 {
            beat(&mut samples, &mut aux, &mut t);
        }
    }
    RefRecord::from_annotations(name, t as u64 + 100, class, &samples, &aux, "x.atr").unwrap()
}

fn write_predictions(dir: &std::path::Path, rows: &[(String, Vec<(f64, f64)>)]) {
    for (name, r) in rows {
        let list: Vec<String> = r.iter().map(|(s, e)| format!("[{s},{e}]")).collect();
        std::fs::write(
            dir.join(format!("{name}.json")),
            format!("{{\"predict_endpoints\": [{}]}}", list.join(",")),
        )
        .unwrap();
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Permuting the reference list (and so the order records are scored in) leaves the
    /// score identical to the last bit.
    #[test]
    fn cpsc2021_score_ignores_record_order(
        spec in prop::collection::vec((0usize..3, 0usize..4, prop::collection::vec((0u32..1500, 0u32..1500), 0..5)), 1..12),
        perm_seed in any::<u64>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut records = Vec::new();
        let mut preds = Vec::new();
        for (i, (class, eps, rows)) in spec.iter().enumerate() {
            let class = [Class::N, Class::AFf, Class::AFp][*class];
            let rec = synthetic(&format!("r{i:02}"), class, if class == Class::N { 0 } else { eps + 1 });
            let last = rec.len as f64 - 1.0;
            let rows: Vec<(f64, f64)> = rows.iter().map(|&(a, b)| {
                let (s, e) = (a.min(b) as f64 * 1.7, a.max(b) as f64 * 1.7);
                (s.min(last), e.min(last))
            }).collect();
            preds.push((rec.name.clone(), rows));
            records.push(rec);
        }
        write_predictions(dir.path(), &preds);
        let reference = Reference { dir: dir.path().to_path_buf(), records: records.clone() };
        let a = score(&reference, dir.path(), Mode::Strict).unwrap();
        let mut shuffled = records;
        let mut state = perm_seed;
        for i in (1..shuffled.len()).rev() {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            shuffled.swap(i, (state >> 33) as usize % (i + 1));
        }
        let reference = Reference { dir: dir.path().to_path_buf(), records: shuffled };
        let b = score(&reference, dir.path(), Mode::Strict).unwrap();
        prop_assert_eq!(a.score.to_bits(), b.score.to_bits());
        prop_assert!(a.errors.is_empty(), "{:?}", a.errors);
    }

    /// Any bytes as a prediction file: scored (as `[]` when invalid) or refused with a
    /// clear error in compat mode; never a panic.
    #[test]
    fn cpsc2021_any_prediction_bytes(bytes in prop::collection::vec(any::<u8>(), 0..200), json_shaped in any::<bool>(), as_mat in any::<bool>()) {
        let dir = tempfile::tempdir().unwrap();
        let rec = synthetic("r", Class::AFp, 2);
        let content = if json_shaped {
            let mut v = b"{\"predict_endpoints\": [[".to_vec();
            v.extend_from_slice(&bytes);
            v
        } else {
            bytes
        };
        let file = if as_mat { "r.mat" } else { "r.json" };
        std::fs::write(dir.path().join(file), content).unwrap();
        let reference = Reference { dir: dir.path().to_path_buf(), records: vec![rec] };
        let strict = score(&reference, dir.path(), Mode::Strict).unwrap();
        prop_assert_eq!(strict.items.len(), 1);
        let _ = score(&reference, dir.path(), Mode::OfficialCompat);
    }

    /// JSON-like text built from the tokens where Python's `json.load` and a standard
    /// parser differ (NaN, Infinity, huge numbers, lone surrogates, repeated keys, deep
    /// nesting): scored or refused with a reason in both modes, never a panic.
    #[test]
    fn cpsc2021_python_json_tokens(tokens in prop::collection::vec(prop::sample::select(vec![
        "[", "]", "[[", "]]", "{", "}", ",", ":", "\"predict_endpoints\"", "NaN", "Infinity",
        "-Infinity", "1e400", "-0", "0.5", "7", "-3", "18446744073709551616",
        "9223372036854775807", "\"\\ud800\"", "\"x\"", " ", "\r\n", "null", "true", "\u{feff}",
    ]), 0..40), class in 0usize..3) {
        let text: String = format!("{{\"predict_endpoints\": {}", tokens.concat());
        let _ = score::cpsc2021::check_prediction(text.as_bytes(), "r.json", 100);
        let _ = score::cpsc2021::check_prediction(tokens.concat().as_bytes(), "r.json", 100);
        let dir = tempfile::tempdir().unwrap();
        let rec = synthetic("r", [Class::N, Class::AFf, Class::AFp][class], 2);
        std::fs::write(dir.path().join("r.json"), &text).unwrap();
        let reference = Reference { dir: dir.path().to_path_buf(), records: vec![rec] };
        let strict = score(&reference, dir.path(), Mode::Strict).unwrap();
        prop_assert_eq!(strict.items.len(), 1);
        let _ = score(&reference, dir.path(), Mode::OfficialCompat);
    }

    /// Answer lines in any order give the same CinC 2017 report.
    #[test]
    fn cinc2017_score_ignores_line_order(
        answers in prop::collection::vec(0usize..4, 1..60),
        truth in prop::collection::vec(0usize..4, 60),
        perm_seed in any::<u64>(),
    ) {
        let refs: Vec<(String, Label)> = truth.iter().enumerate().map(|(i, &l)| (format!("A{i:05}"), Label::ALL[l])).collect();
        let mut lines: Vec<String> = answers.iter().enumerate().map(|(i, &l)| format!("A{i:05},{}", Label::ALL[l].as_str())).collect();
        let a = cinc2017::score(&refs, &lines.join("\n"), "answers.txt", Mode::Strict).unwrap();
        let mut state = perm_seed;
        for i in (1..lines.len()).rev() {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            lines.swap(i, (state >> 33) as usize % (i + 1));
        }
        let b = cinc2017::score(&refs, &lines.join("\n"), "answers.txt", Mode::Strict).unwrap();
        prop_assert_eq!(a.score.to_bits(), b.score.to_bits());
        prop_assert_eq!(a.confusion, b.confusion);
        prop_assert_eq!(a.items, b.items);
    }

    /// Any text as an answers file: never a panic, every reference record scored.
    #[test]
    fn cinc2017_any_answers_text(text in ".{0,300}", bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let refs: Vec<(String, Label)> = (0..5).map(|i| (format!("A{i:05}"), Label::ALL[i % 4])).collect();
        for t in [text, String::from_utf8_lossy(&bytes).into_owned()] {
            let r = cinc2017::score(&refs, &t, "answers.txt", Mode::Strict).unwrap();
            prop_assert_eq!(r.items.len(), 5);
            let _ = cinc2017::score(&refs, &t, "answers.txt", Mode::OfficialCompat);
        }
    }

    /// Scoring PhysioNet 2022 outputs in any patient order gives the same metrics to the
    /// last bit (scores on a coarse grid, so that the threshold walk meets ties).
    #[test]
    fn physionet2022_metrics_ignore_patient_order(
        patients in prop::collection::vec((0usize..3, 0usize..2, prop::collection::vec(0u8..3, 5), prop::collection::vec(0u8..5, 5)), 1..25),
        perm_seed in any::<u64>(),
    ) {
        use formats::circor::{Murmur, Outcome};
        let dir = tempfile::tempdir().unwrap();
        let mut list = Vec::new();
        for (i, (m, o, binaries, scores)) in patients.iter().enumerate() {
            let id = format!("{}", 1000 + i);
            let binaries: Vec<&str> = binaries.iter().map(|&b| ["0", "1", "x"][b as usize]).collect();
            let scores: Vec<String> = scores.iter().map(|&s| format!("{}", s as f64 / 4.0)).collect();
            std::fs::write(
                dir.path().join(format!("{id}.csv")),
                format!("#{id}\nPresent,Unknown,Absent,Abnormal,Normal\n{}\n{}\n", binaries.join(","), scores.join(",")),
            ).unwrap();
            list.push(physionet2022::Patient {
                label_file: dir.path().join(format!("{id}.txt")),
                id,
                murmur: Murmur::ALL[*m],
                outcome: Outcome::ALL[*o],
            });
        }
        let reference = |patients| physionet2022::Reference { dir: dir.path().to_path_buf(), patients, warnings: Vec::new() };
        let a = physionet2022::score(&reference(list.clone()), dir.path(), Mode::Strict).unwrap();
        let mut state = perm_seed;
        for i in (1..list.len()).rev() {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            list.swap(i, (state >> 33) as usize % (i + 1));
        }
        let b = physionet2022::score(&reference(list), dir.path(), Mode::Strict).unwrap();
        // Debug text compares NaN (an undefined per-class value) as equal to itself.
        prop_assert_eq!(format!("{:?}", a.murmur), format!("{:?}", b.murmur));
        prop_assert_eq!(format!("{:?}", a.outcome), format!("{:?}", b.outcome));
        prop_assert!(a.errors.is_empty(), "{:?}", a.errors);
    }

    /// Any bytes as a PhysioNet 2022 output file: scored (as the empty output when
    /// unusable) in strict mode, scored or refused in compat mode; never a panic.
    #[test]
    fn physionet2022_any_output_bytes(bytes in prop::collection::vec(any::<u8>(), 0..300), text in "[#a-zA-Z0-9,.\r\n \"'_-]{0,120}") {
        use formats::circor::{Murmur, Outcome};
        let dir = tempfile::tempdir().unwrap();
        let patients = vec![physionet2022::Patient {
            id: "1".into(),
            label_file: dir.path().join("1.txt"),
            murmur: Murmur::Absent,
            outcome: Outcome::Normal,
        }];
        let reference = physionet2022::Reference { dir: dir.path().to_path_buf(), patients, warnings: Vec::new() };
        for content in [bytes, text.into_bytes()] {
            let _ = physionet2022::parse_output(&content);
            std::fs::write(dir.path().join("1.csv"), &content).unwrap();
            let r = physionet2022::score(&reference, dir.path(), Mode::Strict).unwrap();
            prop_assert_eq!(r.items.len(), 1);
            let _ = physionet2022::score(&reference, dir.path(), Mode::OfficialCompat);
        }
    }

    /// Any text as a patient file: labels or a clear reference error, never a panic.
    #[test]
    fn physionet2022_any_label_text(text in "[#a-zA-Z:\r\n ]{0,120}") {
        let _ = physionet2022::parse_labels(&text, "1.txt");
    }
}
