//! Our `.npy` reader and writer against numpy (the oracle, `tests/oracle/npy_oracle.py`):
//! files numpy writes in every dtype, memory order and format version we read come back
//! with numpy's shape and values (bit for bit, in C order), and files we write load in
//! numpy with the same values and are byte-identical to what `np.save` writes.

use std::path::Path;

use formats::npy::{self, Dtype, Kind};
use serde_json::{Value, json};

/// float64 LE bytes as the bit patterns of the values.
fn f64_bits(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn files_numpy_writes_read_like_numpy() {
    let test = "files_numpy_writes_read_like_numpy";
    let Some(mut batch) = testkit::OracleBatch::new(test, "npy_oracle.py") else {
        return;
    };
    let dtypes = [
        "<f4", "<f8", ">f4", ">f8", "<i2", "<i4", ">i2", "|i1", "|u1", "<u2", "<u4",
    ];
    let shapes: [&[usize]; 7] = [&[3, 4], &[4, 3], &[1, 7], &[7], &[0, 5], &[5, 0], &[65, 37]];
    let mut jobs = Vec::new();
    let mut seed = 0;
    for dtype in dtypes {
        for shape in shapes {
            for order in ["C", "F"] {
                for version in [Value::Null, json!([2, 0]), json!([3, 0])] {
                    seed += 1;
                    let id = format!("m{seed}");
                    let path = batch.scratch().join(format!("{id}.npy"));
                    batch.push(json!({"id": id, "make": {
                        "path": path_str(&path), "dtype": dtype, "shape": shape,
                        "order": order, "version": version, "seed": seed,
                    }}));
                    jobs.push((id, path, dtype, shape, order));
                }
            }
        }
    }
    let out = batch.run();
    let mut fortran_files = 0;
    for (id, path, dtype, shape, order) in jobs {
        let meta = out.meta(&id);
        assert!(meta.get("error").is_none(), "{id}: {meta}");
        let what = format!("{id} ({dtype} {shape:?} {order})");
        let a = npy::read(&path).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(meta["shape"], json!(a.shape), "{what}");
        assert_eq!(meta["dtype"], a.dtype.descr(), "{what}");
        if meta["fortran_order"] == true {
            fortran_files += 1;
        }
        let ours: Vec<u64> = a.data.iter().map(|v| v.to_bits()).collect();
        assert_eq!(ours, f64_bits(&out.bytes(&id, "bin")), "{what}");
    }
    // Every dtype had 2-D arrays numpy stored column by column.
    assert!(fortran_files >= dtypes.len() * 3 * 3, "{fortran_files}");
}

#[test]
fn files_we_write_load_in_numpy_and_equal_np_save() {
    let test = "files_we_write_load_in_numpy_and_equal_np_save";
    let Some(mut batch) = testkit::OracleBatch::new(test, "npy_oracle.py") else {
        return;
    };
    let special = [
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        -0.0,
        f32::MIN_POSITIVE / 8.0,
        f32::MAX,
        f32::MIN,
        1.0e-30,
    ];
    let shapes = [
        (1, 1),
        (2, 4),
        (65, 250),
        (0, 0),
        (0, 3),
        (3, 0),
        (1_234_567, 0),
        (12_345_678_901, 0),
    ];
    let mut written = Vec::new();
    for (k, &(rows, cols)) in shapes.iter().enumerate() {
        let data: Vec<f32> = (0..rows * cols)
            .map(|i| {
                special
                    .get(i)
                    .copied()
                    .unwrap_or((i as f32 * 0.37).sin() * 1e3)
            })
            .collect();
        let id = format!("w{k}");
        let path = batch.scratch().join(format!("{id}.npy"));
        npy::write_f32(&path, rows, cols, &data).unwrap();
        batch.push(json!({"id": id, "read": path_str(&path)}));
        written.push((id, path, rows, cols, data));
    }
    let out = batch.run();
    for (id, path, rows, cols, data) in written {
        let meta = out.meta(&id);
        assert!(meta.get("error").is_none(), "{id}: {meta}");
        assert_eq!(meta["shape"], json!([rows, cols]), "{id}");
        assert_eq!(meta["dtype"], "<f4", "{id}");
        let want: Vec<u64> = data.iter().map(|&v| f64::from(v).to_bits()).collect();
        assert_eq!(f64_bits(&out.bytes(&id, "bin")), want, "{id}");
        let ours = std::fs::read(&path).unwrap();
        assert_eq!(ours, out.bytes(&id, "npy"), "{id}: not np.save's bytes");
        // And we read back what we wrote.
        let a = npy::parse(&ours, &id).unwrap();
        assert_eq!(
            a.dtype,
            Dtype {
                kind: Kind::Float,
                bytes: 4,
                big_endian: false
            }
        );
        assert_eq!(a.data.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), want);
    }
}
