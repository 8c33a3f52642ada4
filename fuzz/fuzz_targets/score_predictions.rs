//! The scorers' prediction parsers: a CPSC 2021 prediction (as JSON and as MAT), a CinC
//! 2017 answers file, a PhysioNet 2022 output file and the labels of a patient file; any
//! bytes give a result or a reason, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use score::Mode;
use score::cinc2017::{self, Label};

fuzz_target!(|data: &[u8]| {
    for file in ["r.json", "r.mat"] {
        if let Ok(rows) = score::cpsc2021::check_prediction(data, file, 10_000) {
            assert!(rows.iter().all(|&(s, e)| 0.0 <= s && s <= e && e <= 9_999.0));
        }
    }
    let refs: Vec<(String, Label)> = (0..4).map(|i| (format!("A{i:05}"), Label::ALL[i])).collect();
    if let Ok(out) = score::physionet2022::parse_output(data) {
        assert!(!out.patient_id.contains('#'));
    }
    let text = String::from_utf8_lossy(data);
    let _ = score::physionet2022::parse_labels(&text, "1.txt");
    for mode in [Mode::Strict, Mode::OfficialCompat] {
        if let Ok(r) = cinc2017::score(&refs, &text, "answers.txt", mode) {
            assert_eq!(r.items.len(), 4);
        }
    }
});
