//! Fuzz target: WFDB annotation files. Any bytes must parse or fail cleanly; whatever
//! parses must write back and read the same (inputs stay far below the 6 MB of SKIPs
//! that `MAX_SKIPS_PER_GAP` would need to refuse a rewrite).
#![no_main]

use formats::wfdb::annotation::{self, Definitions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(file) = annotation::parse(data, "fuzz.atr") {
        let bytes = annotation::to_bytes(&file.annotations, &Definitions::default(), "fuzz.atr")
            .expect("annotations that were read can be written");
        let again = annotation::parse(&bytes, "fuzz.atr").expect("what we write reads");
        assert_eq!(again.annotations, file.annotations);
        assert_eq!(again.definitions, file.definitions);
        assert_eq!(again.definition_annotations, file.definition_annotations);
        for a in &file.annotations {
            let _ = a.aux_str();
            let _ = file.symbol(a.code);
        }
    }
});
