//! CirCor patient files and segmentations: parsing arbitrary bytes never panics; a parsed
//! patient file renders back to exactly the input bytes and its participant view (labels
//! stripped) parses back equal; a parsed segmentation parses back equal from its rendering.
#![no_main]

use formats::circor::{PatientFile, Segmentation};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = PatientFile::parse(data, "fuzz.txt") {
        assert_eq!(p.to_text().as_bytes(), data, "a parsed patient file renders back as is");
        let view = p.without_labels();
        assert!(!view.has_hidden_content());
        let again = PatientFile::parse_str(&view.to_text(), "view.txt").expect("a view parses");
        assert_eq!(again, view);
    }
    if let Ok(s) = Segmentation::parse(data, "fuzz.tsv") {
        let text = s.to_text();
        let again = Segmentation::parse(text.as_bytes(), "again.tsv").expect("a rendering parses");
        assert_eq!(again, s);
        let _ = s.anomalies();
    }
});
