//! WFDB header text: parsing never panics, and what parses renders and parses again to
//! the same header.
#![no_main]

use formats::wfdb::Header;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(h) = Header::parse(&text, "fuzz.hea") {
        let again = Header::parse(&h.to_text(), "fuzz.hea").expect("a rendered header parses");
        assert_eq!(again, h);
    }
});
