//! WAV bytes: decoding never panics; what decodes holds whole frames, and 16-bit files
//! re-encode to a file that decodes to the same samples.
#![no_main]

use formats::wav::{Encoding, Wav, encode_pcm16};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(w) = Wav::from_bytes(data, "fuzz.wav") else {
        return;
    };
    assert_eq!(w.samples().len() % usize::from(w.channels()), 0);
    for c in 0..w.channels().min(4) {
        assert!(w.channel(c).is_some());
    }
    assert!(w.channel(w.channels()).is_none());
    if w.encoding() == Encoding::Pcm16 {
        let samples: Vec<i16> = w.int_samples().unwrap().iter().map(|&s| s as i16).collect();
        let bytes = encode_pcm16(w.sample_rate(), w.channels(), &samples)
            .expect("what was read as 16-bit can be written as 16-bit");
        let back = Wav::from_bytes(&bytes, "again.wav").expect("what we write reads");
        assert_eq!(back.samples(), w.samples());
        assert_eq!((back.sample_rate(), back.channels()), (w.sample_rate(), w.channels()));
    }
});
