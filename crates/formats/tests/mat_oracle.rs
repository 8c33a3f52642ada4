//! Our MAT-file reader and level-4 writer against scipy.io (the oracle, through
//! `tests/oracle/mat_oracle.py`), on the real files of `../shared/data`, on files scipy
//! writes, on level-5 files built here byte by byte (big-endian, small elements, data
//! stored in smaller types, empty elements) and on files our writer writes.
//!
//! Equality is exact: numeric parts are compared as little-endian bytes, so NaN payloads,
//! signed zeros and every bit of every double must agree.

use std::io::Write;
use std::path::{Path, PathBuf};

use formats::mat::{
    MatFile, NumericArray, NumericClass, NumericData, Value, write_v4, write_v4_file,
};
use serde_json::Value as Json;

/// What scipy read from one file.
struct OracleFile {
    json: Json,
    blob: Vec<u8>,
}

/// Runs `mat_oracle.py dump` on the files and returns scipy's reading of each.
fn oracle_dump(python: &Path, files: &[PathBuf]) -> Vec<OracleFile> {
    let out = tempfile::tempdir().unwrap();
    let mut args = vec!["dump".to_string(), out.path().to_str().unwrap().to_string()];
    args.extend(files.iter().map(|f| f.to_str().unwrap().to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    testkit::run_oracle(python, "mat_oracle.py", &args);
    (0..files.len())
        .map(|i| OracleFile {
            json: serde_json::from_slice(
                &std::fs::read(out.path().join(format!("{i}.json"))).unwrap(),
            )
            .unwrap(),
            blob: std::fs::read(out.path().join(format!("{i}.bin"))).unwrap(),
        })
        .collect()
}

fn le_bytes(d: &NumericData) -> Vec<u8> {
    match d {
        NumericData::Double(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        NumericData::Single(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        NumericData::Int8(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        NumericData::UInt8(v) => v.clone(),
        NumericData::Int16(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        NumericData::UInt16(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        NumericData::Int32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        NumericData::UInt32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        NumericData::Int64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        NumericData::UInt64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
    }
}

fn dims_of(j: &Json) -> Vec<usize> {
    j["dims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect()
}

fn blob_part<'b>(blob: &'b [u8], r: &Json) -> &'b [u8] {
    let off = r[0].as_u64().unwrap() as usize;
    let len = r[1].as_u64().unwrap() as usize;
    &blob[off..off + len]
}

/// Compares our value with scipy's, appending every difference to `diffs`. Returns how
/// many numeric/char/logical elements were compared (so a test can insist on real work).
///
/// One documented difference is accepted and counted in `empty_quirks`: an miMATRIX
/// element with no data is MATLAB's `[]`, 0×0 double, as we read it; scipy returns 1×0.
fn compare(
    ours: &Value,
    theirs: &Json,
    blob: &[u8],
    path: &str,
    diffs: &mut Vec<String>,
    empty_quirks: &mut usize,
) -> usize {
    let kind = theirs["kind"].as_str().unwrap();
    if *ours == Value::empty()
        && kind == "numeric"
        && dims_of(theirs) == [1, 0]
        && theirs["class"] == "double"
    {
        *empty_quirks += 1;
        return 0;
    }
    let mut diff = |what: String| diffs.push(format!("{path}: {what}"));
    if ours.dims().map(<[usize]>::to_vec) != Some(dims_of(theirs)) {
        diff(format!(
            "dims {:?} vs scipy {:?}",
            ours.dims(),
            theirs["dims"]
        ));
        return 0;
    }
    match (ours, kind) {
        (Value::Numeric(a), "numeric") => {
            if a.class().name() != theirs["class"].as_str().unwrap() {
                diff(format!("class {} vs scipy {}", a.class(), theirs["class"]));
                return 0;
            }
            if le_bytes(a.real()) != blob_part(blob, &theirs["real"]) {
                diff("real parts differ".into());
            }
            match (a.imag(), theirs["imag"].is_null()) {
                (None, true) => {}
                (Some(im), false) => {
                    if le_bytes(im) != blob_part(blob, &theirs["imag"]) {
                        diff("imaginary parts differ".into());
                    }
                }
                (im, _) => diff(format!(
                    "complex {} vs scipy {}",
                    im.is_some(),
                    !theirs["imag"].is_null()
                )),
            }
            a.real().len()
        }
        (Value::Logical(a), "logical") => {
            let theirs: Vec<bool> = theirs["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap() != 0)
                .collect();
            if a.data() != theirs.as_slice() {
                diff(format!("logical {:?} vs scipy {theirs:?}", a.data()));
            }
            theirs.len()
        }
        (Value::Char(a), "char") => {
            let theirs: Vec<u16> = theirs["units"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap() as u16)
                .collect();
            if a.data() != theirs.as_slice() {
                diff(format!(
                    "chars {:?} vs scipy {:?}",
                    a.to_string_lossy(),
                    String::from_utf16_lossy(&theirs)
                ));
            }
            theirs.len()
        }
        (Value::Cell(a), "cell") => {
            let theirs = theirs["values"].as_array().unwrap();
            if a.data().len() != theirs.len() {
                diff(format!(
                    "{} cells vs scipy {}",
                    a.data().len(),
                    theirs.len()
                ));
                return 0;
            }
            let mut n = 0;
            for (i, (o, t)) in a.data().iter().zip(theirs).enumerate() {
                n += compare(
                    o,
                    t,
                    blob,
                    &format!("{path}{{{}}}", i + 1),
                    diffs,
                    empty_quirks,
                );
            }
            n
        }
        (Value::Struct(s), "struct") => {
            let names: Vec<&str> = theirs["fields"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect();
            if s.field_names().collect::<Vec<_>>() != names {
                diff(format!(
                    "fields {:?} vs scipy {names:?}",
                    s.field_names().collect::<Vec<_>>()
                ));
                return 0;
            }
            let elements = theirs["values"].as_array().unwrap();
            let mut n = 0;
            for (e, t) in elements.iter().enumerate() {
                for (f, (name, values)) in s.fields().iter().enumerate() {
                    n += compare(
                        &values[e],
                        &t[f],
                        blob,
                        &format!("{path}({}).{name}", e + 1),
                        diffs,
                        empty_quirks,
                    );
                }
            }
            n
        }
        (o, k) => {
            diff(format!("{} vs scipy {k}", o.describe()));
            0
        }
    }
}

/// Reads `path` with our reader and compares every variable with scipy's reading;
/// returns the number of elements compared. No empty-element quirk may occur.
fn assert_same(path: &Path, theirs: &OracleFile) -> usize {
    let (n, quirks) = assert_same_but_empty_elements(path, theirs);
    assert_eq!(quirks, 0, "{}: unexpected empty elements", path.display());
    n
}

/// [`assert_same`], returning also how many empty elements scipy read as 1×0.
fn assert_same_but_empty_elements(path: &Path, theirs: &OracleFile) -> (usize, usize) {
    assert!(
        theirs.json.get("error").is_none(),
        "scipy failed on {}: {}",
        path.display(),
        theirs.json["error"]
    );
    let ours = MatFile::read(path).unwrap_or_else(|e| panic!("{e}"));
    let vars = theirs.json["variables"].as_array().unwrap();
    let our_names: Vec<&str> = ours.variables.iter().map(|v| v.name.as_str()).collect();
    let their_names: Vec<&str> = vars.iter().map(|v| v["name"].as_str().unwrap()).collect();
    assert_eq!(our_names, their_names, "{}: variable names", path.display());
    let mut diffs = Vec::new();
    let (mut n, mut quirks) = (0, 0);
    for (v, t) in ours.variables.iter().zip(vars) {
        let path = format!("{}:{}", path.display(), v.name);
        n += compare(
            &v.value,
            &t["value"],
            &theirs.blob,
            &path,
            &mut diffs,
            &mut quirks,
        );
    }
    assert!(
        diffs.is_empty(),
        "differences from scipy:\n{}",
        diffs.join("\n")
    );
    (n, quirks)
}

/// Whether two readings hold the same variables. `Debug` rather than `==`, which NaN fails
/// (bit-exactness is what the comparisons with scipy check).
fn same(a: &MatFile, b: &MatFile) -> bool {
    format!("{:?}", a.variables) == format!("{:?}", b.variables)
}

#[test]
fn p300_files_equal_scipy_bit_for_bit() {
    let (Some(data), Some(python)) = (
        testkit::shared_data("p300_files_equal_scipy_bit_for_bit"),
        testkit::oracle_python("p300_files_equal_scipy_bit_for_bit"),
    ) else {
        return;
    };
    let dir = data.join("p300_bnci2015003");
    let files = vec![dir.join("s6.mat"), dir.join("s10.mat")];
    let theirs = oracle_dump(&python, &files);
    for (path, t) in files.iter().zip(&theirs) {
        let n = assert_same(path, t);
        // train and test, 11 rows each, about 100 s at 256 Hz.
        assert!(
            n > 2 * 11 * 25_000,
            "{}: only {n} values compared",
            path.display()
        );

        // The accessor path gives the same bits as the generic comparison.
        let file = MatFile::read(path).unwrap();
        let var = path.file_stem().unwrap().to_str().unwrap();
        let s = &t.json["variables"][0]["value"];
        for (f, field) in ["train", "test"].iter().enumerate() {
            let m = file
                .get(var)
                .unwrap()
                .field(field)
                .unwrap()
                .as_f64_matrix()
                .unwrap();
            let scipy = &s["values"][0][f];
            assert_eq!(vec![m.rows, m.cols], dims_of(scipy));
            assert_eq!(m.rows, 11);
            let bytes: Vec<u8> = m.data.iter().flat_map(|x| x.to_le_bytes()).collect();
            assert!(
                bytes == blob_part(&t.blob, &scipy["real"]),
                "{var}.{field} differs"
            );
            // Row 9 holds the flash codes 0..=12 (data README), a cheap sanity check on
            // the row/column order of `Matrix::row`.
            let flashes = m.row(9).unwrap();
            assert!(
                flashes
                    .iter()
                    .all(|&v| v.fract() == 0.0 && (0.0..=12.0).contains(&v))
            );
            assert!(flashes.contains(&12.0));
        }
    }
}

#[test]
fn cinc2017_level4_files_equal_scipy_and_rewrite_identically() {
    let (Some(data), Some(python)) = (
        testkit::shared_data("cinc2017_level4_files_equal_scipy_and_rewrite_identically"),
        testkit::oracle_python("cinc2017_level4_files_equal_scipy_and_rewrite_identically"),
    ) else {
        return;
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(data.join("cinc2017"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "mat"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 48);
    let theirs = oracle_dump(&python, &files);
    for (path, t) in files.iter().zip(&theirs) {
        assert_same(path, t);
        let bytes = std::fs::read(path).unwrap();
        let file = MatFile::parse(&bytes, &path.display().to_string()).unwrap();
        assert_eq!(file.variables.len(), 1);
        let Value::Numeric(val) = file.get("val").unwrap().value() else {
            panic!("{}: val is not numeric", path.display());
        };
        assert_eq!(val.class(), NumericClass::Int16);
        assert_eq!(val.dims()[0], 1);
        assert_eq!(bytes.len(), 24 + 2 * val.dims()[1], "{}", path.display());
        // Our writer reproduces the file byte for byte.
        let mut out = Vec::new();
        write_v4(&mut out, "rewrite", &[("val", val)]).unwrap();
        assert!(out == bytes, "{}: rewritten bytes differ", path.display());
    }
}

#[test]
fn files_scipy_writes_read_identically() {
    let Some(python) = testkit::oracle_python("files_scipy_writes_read_identically") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let listing = testkit::run_oracle(
        &python,
        "mat_oracle.py",
        &["gen", dir.path().to_str().unwrap()],
    );
    let names: Vec<String> = serde_json::from_slice(&listing).unwrap();
    assert_eq!(names.len(), 4, "{names:?}");
    let files: Vec<PathBuf> = names.iter().map(|n| dir.path().join(n)).collect();
    let theirs = oracle_dump(&python, &files);
    for (path, t) in files.iter().zip(&theirs) {
        let n = assert_same(path, t);
        let least = if path.ends_with("scipy_v5_long_names.mat") {
            2
        } else {
            100
        };
        assert!(n >= least, "{}: only {n} values compared", path.display());
    }
    // The two level-5 files hold the same content, one compressed: same values.
    let plain = MatFile::read(&files[0]).unwrap();
    let zlib = MatFile::read(&files[1]).unwrap();
    assert!(
        same(&plain, &zlib),
        "compressed and plain files read differently"
    );
    assert!(plain.variables.len() >= 30);
    // Spot checks that do not go through the oracle.
    let st = plain.get("st").unwrap();
    assert_eq!(st.field("b").unwrap().as_string().unwrap(), "text");
    assert_eq!(
        st.field("c")
            .unwrap()
            .field("nested")
            .unwrap()
            .to_f64_vec()
            .unwrap(),
        vec![0.0, 1.0, 2.0]
    );
    assert_eq!(
        plain.get("uni").unwrap().as_string().unwrap(),
        "h\u{e9}llo \u{20ac} \u{65e5}\u{672c}"
    );
    let Value::Char(rows) = plain.get("txt_rows").unwrap().value() else {
        panic!()
    };
    assert_eq!(rows.rows().collect::<Vec<_>>(), ["abc", "def"]);
    assert_eq!(
        plain
            .get("cel")
            .unwrap()
            .cell(1)
            .unwrap()
            .as_string()
            .unwrap(),
        "str"
    );
    assert_eq!(
        plain
            .get("sarr")
            .unwrap()
            .field_at(1, "y")
            .unwrap()
            .as_string()
            .unwrap(),
        "two"
    );
}

/// A level-5 file built byte by byte (see the builders below).
struct V5 {
    big: bool,
    body: Vec<u8>,
}

impl V5 {
    fn new(big: bool) -> V5 {
        V5 {
            big,
            body: Vec::new(),
        }
    }
    fn u32(&self, v: u32) -> [u8; 4] {
        if self.big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }
    /// A data element with the 8-byte tag, padded to 8 bytes.
    fn el(&self, ty: u32, data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend(self.u32(ty));
        out.extend(self.u32(data.len() as u32));
        out.extend(data);
        out.resize(out.len().next_multiple_of(8), 0);
        out
    }
    /// A small data element (at most 4 bytes of data inside the tag).
    fn small(&self, ty: u32, data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend(self.u32(((data.len() as u32) << 16) | ty));
        out.extend(data);
        out.resize(8, 0);
        out
    }
    fn matrix(
        &self,
        class: u32,
        flags: u32,
        dims: &[i32],
        name: &str,
        parts: &[Vec<u8>],
    ) -> Vec<u8> {
        let mut body = self.el(6, &[self.u32(class | flags), [0; 4]].concat());
        let dims: Vec<u8> = dims.iter().flat_map(|&d| self.u32(d as u32)).collect();
        body.extend(self.el(5, &dims));
        body.extend(if name.len() <= 4 {
            self.small(1, name.as_bytes())
        } else {
            self.el(1, name.as_bytes())
        });
        for p in parts {
            body.extend(p);
        }
        self.el(14, &body)
    }
    fn push(&mut self, element: Vec<u8>, compress: bool) {
        if compress {
            let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
            z.write_all(&element).unwrap();
            let z = z.finish().unwrap();
            self.body.extend(self.u32(15));
            self.body.extend(self.u32(z.len() as u32));
            self.body.extend(z);
        } else {
            self.body.extend(element);
        }
    }
    fn bytes(&self) -> Vec<u8> {
        let mut h = format!(
            "MATLAB 5.0 MAT-file, built by mat_oracle.rs, {}",
            if self.big {
                "big-endian"
            } else {
                "little-endian"
            }
        )
        .into_bytes();
        h.resize(116, b' ');
        h.extend([0; 8]);
        if self.big {
            h.extend([0x01, 0x00, b'M', b'I']);
        } else {
            h.extend([0x00, 0x01, b'I', b'M']);
        }
        [h, self.body.clone()].concat()
    }
}

fn be_or_le<const N: usize>(big: bool, le: [u8; N]) -> [u8; N] {
    let mut b = le;
    if big {
        b.reverse();
    }
    b
}

/// Variables as MATLAB writes them but scipy does not: data in smaller types, small
/// elements, empty elements, miUINT16 characters, both byte orders.
fn handmade(big: bool, compress: bool) -> Vec<u8> {
    let mut f = V5::new(big);
    let b16 = |v: i16| be_or_le(big, v.to_le_bytes());
    let bu16 = |v: u16| be_or_le(big, v.to_le_bytes());
    let b32 = |v: i32| be_or_le(big, v.to_le_bytes());
    let bf32 = |v: f32| be_or_le(big, v.to_le_bytes());
    let bf64 = |v: f64| be_or_le(big, v.to_le_bytes());
    // double stored as miUINT8 (MATLAB's choice for small non-negative integers).
    let m = f.matrix(
        6,
        0,
        &[2, 3],
        "dbl_u8",
        &[f.el(2, &[0, 1, 2, 200, 254, 255])],
    );
    f.push(m, compress);
    // double stored as miINT16 with negatives, complex with an miINT8 imaginary part.
    let re: Vec<u8> = [-300i16, 7, 32767, -32768]
        .iter()
        .flat_map(|&v| b16(v))
        .collect();
    let m = f.matrix(
        6,
        0x800,
        &[1, 4],
        "cplx_small",
        &[f.el(3, &re), f.el(1, &[1, 0xff, 0x80, 0x7f])],
    );
    f.push(m, compress);
    // A 1×1 double stored as a small miUINT16 element.
    let m = f.matrix(6, 0, &[1, 1], "scal", &[f.small(4, &bu16(40000))]);
    f.push(m, compress);
    // int16 class stored as miUINT8, uint32 class stored as miUINT16, int64 as miINT32.
    let m = f.matrix(10, 0, &[1, 2], "i16_u8", &[f.small(2, &[3, 250])]);
    f.push(m, compress);
    let d: Vec<u8> = [0u16, 65535, 12345].iter().flat_map(|&v| bu16(v)).collect();
    let m = f.matrix(13, 0, &[3, 1], "u32_u16", &[f.el(4, &d)]);
    f.push(m, compress);
    let d: Vec<u8> = [i32::MIN, -1, i32::MAX]
        .iter()
        .flat_map(|&v| b32(v))
        .collect();
    let m = f.matrix(14, 0, &[1, 3], "i64_i32", &[f.el(5, &d)]);
    f.push(m, compress);
    // single stored as miINT16, and single stored as miSINGLE with a NaN payload.
    let d: Vec<u8> = [-5i16, 1000].iter().flat_map(|&v| b16(v)).collect();
    let m = f.matrix(7, 0, &[1, 2], "sgl_i16", &[f.el(3, &d)]);
    f.push(m, compress);
    let d: Vec<u8> = [f32::from_bits(0x7fc1_2345), -0.0, 1.5]
        .iter()
        .flat_map(|&v| bf32(v))
        .collect();
    let m = f.matrix(7, 0, &[3, 1], "sgl", &[f.el(7, &d)]);
    f.push(m, compress);
    // Logical stored as miUINT8.
    let m = f.matrix(9, 0x200, &[2, 2], "lgc", &[f.small(2, &[1, 0, 0, 1])]);
    f.push(m, compress);
    // Chars as miUINT16 (ASCII: scipy keeps only the low byte of miUINT16 chars).
    let d: Vec<u8> = "ACGT-xyz".encode_utf16().flat_map(bu16).collect();
    let m = f.matrix(4, 0, &[2, 4], "chars16", &[f.el(4, &d)]);
    f.push(m, compress);
    // A cell holding an empty element (no data at all), a double and a nested cell.
    let inner = f.matrix(6, 0, &[1, 1], "", &[f.el(9, &bf64(-2.5))]);
    let nested = f.matrix(1, 0, &[1, 1], "", std::slice::from_ref(&inner));
    let m = f.matrix(
        1,
        0,
        &[1, 3],
        "cel",
        &[f.el(14, &[]), inner.clone(), nested],
    );
    f.push(m, compress);
    // A struct whose field names use the small format, with an empty field.
    let names = [b"ab\0\0".as_slice(), b"c\0\0\0"].concat();
    let m = f.matrix(
        2,
        0,
        &[1, 1],
        "st",
        &[f.small(5, &b32(4)), f.el(1, &names), inner, f.el(14, &[])],
    );
    f.push(m, compress);
    f.bytes()
}

#[test]
fn handmade_level5_files_read_as_scipy_reads_them() {
    let Some(python) = testkit::oracle_python("handmade_level5_files_read_as_scipy_reads_them")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for big in [false, true] {
        for compress in [false, true] {
            let path = dir.path().join(format!(
                "handmade_{}_{}.mat",
                if big { "be" } else { "le" },
                compress
            ));
            std::fs::write(&path, handmade(big, compress)).unwrap();
            files.push(path);
        }
    }
    let theirs = oracle_dump(&python, &files);
    for (path, t) in files.iter().zip(&theirs) {
        let (n, quirks) = assert_same_but_empty_elements(path, t);
        assert!(n >= 30, "{}: only {n} values compared", path.display());
        // cel{1} and st.c, both written as elements without data.
        assert_eq!(quirks, 2, "{}", path.display());
    }
    let le = MatFile::read(&files[0]).unwrap();
    for f in &files[1..] {
        assert!(
            same(&MatFile::read(f).unwrap(), &le),
            "{} reads differently",
            f.display()
        );
    }
    let Value::Numeric(d) = le.get("dbl_u8").unwrap().value() else {
        panic!()
    };
    assert_eq!(
        d.real(),
        &NumericData::Double(vec![0.0, 1.0, 2.0, 200.0, 254.0, 255.0])
    );
}

#[test]
fn files_our_level4_writer_writes_read_identically_in_scipy() {
    let Some(python) =
        testkit::oracle_python("files_our_level4_writer_writes_read_identically_in_scipy")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let arr = |dims: Vec<usize>, d: NumericData| NumericArray::new(dims, d, None).unwrap();
    let val: Vec<i16> = (0..9000)
        .map(|i| ((i * 7919) % 65536 - 32768) as i16)
        .collect();
    let specials = vec![
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        -0.0,
        5e-324,
        f64::MAX,
        0.1,
        -1.0 / 3.0,
    ];
    let sets: Vec<Vec<(&str, NumericArray)>> = vec![
        vec![("val", NumericArray::row(NumericData::Int16(val)))],
        vec![
            ("d", arr(vec![2, 4], NumericData::Double(specials))),
            (
                "f",
                arr(
                    vec![3, 1],
                    NumericData::Single(vec![1.5, -0.0, f32::MIN_POSITIVE]),
                ),
            ),
            (
                "i",
                arr(vec![1, 3], NumericData::Int32(vec![i32::MIN, 0, i32::MAX])),
            ),
            ("u16", arr(vec![1, 2], NumericData::UInt16(vec![0, 65535]))),
            (
                "u8",
                arr(vec![2, 2], NumericData::UInt8(vec![0, 1, 128, 255])),
            ),
            ("empty", arr(vec![0, 0], NumericData::Double(vec![]))),
            ("empty_cols", arr(vec![3, 0], NumericData::Int16(vec![]))),
            (
                "z",
                NumericArray::new(
                    vec![1, 2],
                    NumericData::Double(vec![1.0, -2.0]),
                    Some(NumericData::Double(vec![0.5, -7.25])),
                )
                .unwrap(),
            ),
            (
                "z32",
                NumericArray::new(
                    vec![2, 1],
                    NumericData::Single(vec![1.0, 2.0]),
                    Some(NumericData::Single(vec![-3.0, 4.0])),
                )
                .unwrap(),
            ),
        ],
        vec![(
            "zq",
            NumericArray::new(
                vec![1, 1],
                NumericData::Double(vec![1.0]),
                Some(NumericData::Double(vec![f64::NAN])),
            )
            .unwrap(),
        )],
    ];
    let mut files = Vec::new();
    for (i, set) in sets.iter().enumerate() {
        let path = dir.path().join(format!("ours_{i}.mat"));
        let refs: Vec<(&str, &NumericArray)> = set.iter().map(|(n, a)| (*n, a)).collect();
        write_v4_file(&path, &refs).unwrap();
        files.push(path);
    }
    let theirs = oracle_dump(&python, &files);
    for ((path, t), set) in files.iter().zip(&theirs).zip(&sets) {
        assert!(
            t.json.get("error").is_none(),
            "scipy failed: {}",
            t.json["error"]
        );
        let vars = t.json["variables"].as_array().unwrap();
        assert_eq!(vars.len(), set.len(), "{}", path.display());
        let mut diffs = Vec::new();
        for ((name, a), v) in set.iter().zip(vars) {
            assert_eq!(v["name"], *name);
            if *name == "zq" {
                continue;
            }
            compare(
                &Value::Numeric(a.clone()),
                &v["value"],
                &t.blob,
                name,
                &mut diffs,
                &mut 0,
            );
        }
        assert!(
            diffs.is_empty(),
            "scipy reads our file differently:\n{}",
            diffs.join("\n")
        );
    }
    // scipy reads level-4 complex data as `re + im * 1j`, so a NaN imaginary part turns the
    // real part into NaN as well; we keep the real part as stored.
    let zq = &theirs[2].json["variables"][0]["value"];
    let scipy_re = f64::from_le_bytes(blob_part(&theirs[2].blob, &zq["real"]).try_into().unwrap());
    assert!(scipy_re.is_nan());
    let ours = MatFile::read(&files[2]).unwrap();
    assert_eq!(
        ours.get("zq").unwrap().as_numeric().unwrap().real(),
        &NumericData::Double(vec![1.0])
    );
    // A CinC-like file is a 24-byte header then 2N bytes.
    assert_eq!(std::fs::metadata(&files[0]).unwrap().len(), 24 + 2 * 9000);
}
