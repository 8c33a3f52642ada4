//! `.npy` bytes: parsing never panics; what parses has as many values as its shape says,
//! and a 2-D array re-encoded as float32 parses back to the same values (as f32).
#![no_main]

use formats::npy;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(a) = npy::parse(data, "fuzz.npy") else {
        return;
    };
    assert_eq!(a.data.len(), a.shape.iter().product::<usize>());
    let &[rows, cols] = a.shape.as_slice() else {
        assert!(a.row(0).is_none());
        return;
    };
    for r in 0..rows.min(4) {
        assert_eq!(a.row(r).map(<[f64]>::len), Some(cols));
    }
    assert!(a.row(rows).is_none());
    let f32s: Vec<f32> = a.data.iter().map(|&v| v as f32).collect();
    let bytes = npy::encode_f32(rows, cols, &f32s).expect("a parsed shape can be written");
    let back = npy::parse(&bytes, "again.npy").expect("what we write parses");
    assert_eq!(back.shape, a.shape);
    let bits = |v: &[f64]| -> Vec<Option<u32>> {
        v.iter()
            .map(|&x| (!x.is_nan()).then(|| (x as f32).to_bits()))
            .collect()
    };
    assert_eq!(bits(&back.data), bits(&a.data));
});
