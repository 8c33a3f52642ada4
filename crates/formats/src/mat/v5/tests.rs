//! Tests of the level-5 reader: both byte orders, compressed or not, every class and
//! encoding, unsupported classes kept, header and structural errors with their offsets,
//! and the limits on depth, decompressed size and memory.

use super::*;
use crate::mat::tests::{BE, LE, numeric, parse, parse_err};
use crate::mat::{Array, HDF5_SIGNATURE, NumericData};
use std::io::Write;

#[test]
fn v5_both_byte_orders_compressed_or_not() {
    for w in [LE, BE] {
        for compress in [false, true] {
            let m = w.double("x", &[2, 2], &[1.0, -2.0, 3.5, f64::MAX]);
            let el = if compress { w.compressed(&m) } else { m };
            let f = parse(&w.file(&[el, w.double("y", &[1, 1], &[7.0])]));
            let Level::V5(h) = &f.level else { panic!() };
            assert_eq!(
                h.byte_order,
                if w.big {
                    ByteOrder::Big
                } else {
                    ByteOrder::Little
                }
            );
            assert_eq!(h.text, "MATLAB 5.0 MAT-file, unit test");
            let x = f.get("x").unwrap().as_f64_matrix().unwrap();
            assert_eq!((x.rows, x.cols), (2, 2));
            assert_eq!(x.data, vec![1.0, -2.0, 3.5, f64::MAX]);
            assert_eq!(x.get(0, 1), Some(3.5));
            assert_eq!(x.row(1), Some(vec![-2.0, f64::MAX]));
            assert_eq!(f.get("y").unwrap().to_f64_vec().unwrap(), vec![7.0]);
        }
    }
}

#[test]
fn v5_data_stored_in_smaller_types_converts_to_the_class() {
    for w in [LE, BE] {
        let i16s: Vec<u8> = [-2i16, 300].iter().flat_map(|&v| w.u16(v as u16)).collect();
        let f = parse(&w.file(&[
            w.matrix(6, 0, &[1, 3], "d", &[w.small(2, &[0, 7, 255])]),
            w.matrix(
                6,
                FLAG_COMPLEX,
                &[1, 2],
                "z",
                &[w.el(3, &i16s), w.small(1, &[0xff, 1])],
            ),
            w.matrix(7, 0, &[1, 2], "s", &[w.small(3, &i16s)]),
            w.matrix(8, 0, &[1, 1], "i8", &[w.small(5, &w.u32(0xffff_fff6))]),
            w.matrix(15, 0, &[1, 1], "u64", &[w.small(6, &w.u32(u32::MAX))]),
        ]));
        assert_eq!(
            numeric(&f, "d").real(),
            &NumericData::Double(vec![0.0, 7.0, 255.0])
        );
        let z = numeric(&f, "z");
        assert_eq!(z.real(), &NumericData::Double(vec![-2.0, 300.0]));
        assert_eq!(z.imag(), Some(&NumericData::Double(vec![-1.0, 1.0])));
        assert_eq!(
            numeric(&f, "s").real(),
            &NumericData::Single(vec![-2.0, 300.0])
        );
        assert_eq!(numeric(&f, "i8").real(), &NumericData::Int8(vec![-10]));
        assert_eq!(
            numeric(&f, "u64").real(),
            &NumericData::UInt64(vec![u64::from(u32::MAX)])
        );
    }
    // A value that does not fit the class is an error, not a silent wrap.
    let e = parse_err(&LE.file(&[LE.matrix(8, 0, &[1, 1], "b", &[LE.small(4, &LE.u16(200))])]));
    assert!(
        e.contains("value 1 of the real part of 'b' (miUINT16) does not fit"),
        "{e}"
    );
    let e = parse_err(&LE.file(&[LE.matrix(10, 0, &[1, 1], "h", &[LE.el(9, &LE.f64s(&[0.5]))])]));
    assert!(e.contains("does not fit"), "{e}");
}

#[test]
fn v5_chars_in_every_encoding() {
    let w = LE;
    let utf16: Vec<u8> = "h\u{e9}\u{20ac}"
        .encode_utf16()
        .flat_map(|u| w.u16(u))
        .collect();
    let rows: Vec<u8> = "adbecf".encode_utf16().flat_map(|u| w.u16(u)).collect();
    let utf32: Vec<u8> = ['a', '\u{20ac}']
        .iter()
        .flat_map(|&c| w.u32(c as u32))
        .collect();
    let f = parse(&w.file(&[
        w.matrix(4, 0, &[1, 3], "u16", &[w.el(4, &utf16)]),
        w.matrix(4, 0, &[1, 3], "utf16", &[w.el(17, &utf16)]),
        w.matrix(
            4,
            0,
            &[1, 3],
            "utf8",
            &[w.el(16, "h\u{e9}\u{20ac}".as_bytes())],
        ),
        w.matrix(4, 0, &[1, 2], "utf32", &[w.el(18, &utf32)]),
        w.matrix(4, 0, &[1, 2], "u8", &[w.small(2, &[b'o', 0xe9])]),
        w.matrix(4, 0, &[2, 3], "rows", &[w.el(4, &rows)]),
        w.matrix(4, 0, &[1, 3], "blank", &[w.el(16, b"")]),
        w.matrix(4, 0, &[0, 0], "empty", &[w.el(4, b"")]),
    ]));
    for n in ["u16", "utf16", "utf8"] {
        assert_eq!(
            f.get(n).unwrap().as_string().unwrap(),
            "h\u{e9}\u{20ac}",
            "{n}"
        );
    }
    assert_eq!(f.get("utf32").unwrap().as_string().unwrap(), "a\u{20ac}");
    assert_eq!(f.get("u8").unwrap().as_string().unwrap(), "o\u{e9}");
    let Value::Char(r) = f.get("rows").unwrap().value() else {
        panic!()
    };
    assert_eq!(r.rows().collect::<Vec<_>>(), ["abc", "def"]);
    assert!(f.get("rows").unwrap().as_string().is_err());
    assert_eq!(f.get("blank").unwrap().as_string().unwrap(), "   ");
    assert_eq!(f.get("empty").unwrap().as_string().unwrap(), "");
    let e = parse_err(&w.file(&[w.matrix(4, 0, &[1, 4], "c", &[w.small(16, b"abc")])]));
    assert!(
        e.contains("holds 3 characters but its dimensions need 4"),
        "{e}"
    );
    let e = parse_err(&w.file(&[w.matrix(4, 0, &[1, 1], "c", &[w.small(16, &[0xff])])]));
    assert!(e.contains("not UTF-8"), "{e}");
}

#[test]
fn v5_logical_struct_cell_nested() {
    for w in [LE, BE] {
        let inner = w.double("", &[1, 1], &[4.0]);
        let cell = w.matrix(1, 0, &[2, 1], "", &[w.el(14, &[]), inner.clone()]);
        let names = [
            b"train\0\0\0".as_slice(),
            b"test\0\0\0\0",
            b"c\0\0\0\0\0\0\0",
        ]
        .concat();
        let st = w.matrix(
            2,
            0,
            &[1, 1],
            "s6",
            &[
                w.small(5, &w.u32(8)),
                w.el(1, &names),
                w.double("", &[2, 1], &[1.0, 2.0]),
                inner.clone(),
                cell,
            ],
        );
        let logical = w.matrix(
            9,
            FLAG_LOGICAL | FLAG_GLOBAL,
            &[1, 3],
            "ok",
            &[w.small(2, &[1, 0, 2])],
        );
        let f = parse(&w.file(&[w.compressed(&st), logical]));
        let s6 = f.get("s6").unwrap();
        let train = s6.field("train").unwrap().as_f64_matrix().unwrap();
        assert_eq!((train.rows, train.cols, train.data), (2, 1, vec![1.0, 2.0]));
        assert_eq!(s6.field("test").unwrap().to_f64_vec().unwrap(), vec![4.0]);
        let c = s6.field("c").unwrap();
        assert_eq!(c.path(), "s6.c");
        assert_eq!(c.cell(0).unwrap().value(), &Value::empty());
        assert_eq!(c.cell(1).unwrap().to_f64_vec().unwrap(), vec![4.0]);
        let e = c.cell(2).unwrap_err().to_string();
        assert_eq!(e, "t.mat: s6.c: index 2 is out of range for 2 elements");
        let e = s6.field("nope").unwrap_err().to_string();
        assert_eq!(
            e,
            "t.mat: s6: the struct has no field 'nope' (its fields: train, test, c)"
        );
        let e = s6
            .field("c")
            .unwrap()
            .cell(1)
            .unwrap()
            .field("x")
            .unwrap_err()
            .to_string();
        assert_eq!(e, "t.mat: s6.c{2}: is a 1×1 double array, not a 1×1 struct");
        let ok = f.variables.iter().find(|v| v.name == "ok").unwrap();
        assert!(ok.global);
        assert_eq!(
            ok.value,
            Value::Logical(Array {
                dims: vec![1, 3],
                data: vec![true, false, true]
            })
        );
        assert_eq!(
            f.get("nope").unwrap_err().to_string(),
            "t.mat: no variable named 'nope' in the file"
        );
    }
}

#[test]
fn v5_struct_arrays_and_fieldless_structs() {
    let w = LE;
    let names = b"x\0\0\0".to_vec();
    let sarr = w.matrix(
        2,
        0,
        &[1, 2],
        "sa",
        &[
            w.small(5, &w.u32(4)),
            w.small(1, &names),
            w.double("", &[1, 1], &[1.0]),
            w.double("", &[1, 1], &[2.0]),
        ],
    );
    // No fields but 2^31-1 × 2^31-1 elements: nothing to read, and no time spent.
    let none = w.matrix(
        2,
        0,
        &[i32::MAX, i32::MAX],
        "none",
        &[w.small(5, &w.u32(0)), w.el(1, &[])],
    );
    let f = parse(&w.file(&[sarr, none]));
    let sa = f.get("sa").unwrap();
    assert_eq!(
        sa.field_at(1, "x").unwrap().to_f64_vec().unwrap(),
        vec![2.0]
    );
    assert_eq!(sa.field_at(1, "x").unwrap().path(), "sa(2).x");
    assert!(sa.field("x").is_err());
    let Value::Struct(n) = f.get("none").unwrap().value() else {
        panic!()
    };
    assert_eq!(n.fields().len(), 0);
    // Two fields with one name.
    let dup = w.matrix(
        2,
        0,
        &[1, 1],
        "d",
        &[
            w.small(5, &w.u32(2)),
            w.small(1, b"a\0a\0"),
            w.double("", &[1, 1], &[1.0]),
            w.double("", &[1, 1], &[1.0]),
        ],
    );
    assert!(parse_err(&w.file(&[dup])).contains("two fields named 'a'"));
}

#[test]
fn v5_unsupported_classes_are_kept_by_name_and_skipped() {
    let w = LE;
    let sparse = w.matrix(
        5,
        0,
        &[3, 3],
        "sp",
        &[
            w.el(5, &[0; 8]),
            w.el(5, &[0; 16]),
            w.el(9, &w.f64s(&[1.0, 2.0])),
        ],
    );
    let func = w.matrix(16, 0, &[1, 1], "fh", &[w.el(14, &[])]);
    let object = w.matrix(3, 0, &[1, 1], "obj", &[w.name("myclass")]);
    let mut opaque = w.flags(17, 0);
    opaque.extend(w.name("str"));
    opaque.extend(w.el(1, b"MCOS"));
    let opaque = w.el(14, &opaque);
    let f = parse(&w.file(&[
        sparse,
        w.compressed(&func),
        object,
        opaque,
        w.double("after", &[1, 1], &[3.0]),
    ]));
    let kinds: Vec<(&str, &Value)> = f
        .variables
        .iter()
        .map(|v| (v.name.as_str(), &v.value))
        .collect();
    assert_eq!(
        kinds,
        [
            ("sp", &Value::Unsupported(UnsupportedClass::Sparse)),
            ("fh", &Value::Unsupported(UnsupportedClass::FunctionHandle)),
            ("obj", &Value::Unsupported(UnsupportedClass::Object)),
            ("str", &Value::Unsupported(UnsupportedClass::Opaque)),
            ("after", &f.variables[4].value),
        ]
    );
    assert_eq!(f.get("after").unwrap().to_f64_vec().unwrap(), vec![3.0]);
    let e = f.get("sp").unwrap().as_numeric().unwrap_err().to_string();
    assert_eq!(
        e,
        "t.mat: sp: is a sparse array (not supported), not a numeric array"
    );
}

#[test]
fn v5_level_detection_and_header_errors() {
    let mut h = LE.header(0x0200);
    h.resize(600, 0);
    h.splice(512..520, HDF5_SIGNATURE.iter().copied());
    assert_eq!(
        parse_err(&h),
        "t.mat: MAT v7.3 (HDF5) is not supported; save the file with -v7 or older"
    );
    // The version field alone (a v7.3 file cut short) says it too.
    assert_eq!(
        parse_err(&LE.header(0x0200)),
        "t.mat: byte 124: MAT v7.3 (HDF5) is not supported; save the file with -v7 or older"
    );
    assert_eq!(
        parse_err(&[HDF5_SIGNATURE, &[0; 100]].concat()),
        "t.mat: MAT v7.3 (HDF5) is not supported; save the file with -v7 or older"
    );
    assert!(parse_err(&LE.header(0x0300)).contains("MAT-file version 0x0300 is not supported"));
    assert!(parse_err(b"hello world, this is text").contains("not a MAT file"));
    assert!(parse_err(b"abc").contains("not a MAT file: only 3 bytes long"));
    let mut bad = LE.header(0x0100);
    bad[126] = b'X';
    assert!(parse_err(&bad).contains("byte 126: not a MAT file: no level-5 endian indicator"));
    // A header alone is a valid file with no variables.
    assert!(parse(&LE.header(0x0100)).variables.is_empty());
}

#[test]
fn v5_structural_errors_name_offsets() {
    let w = LE;
    let m = w.double("x", &[2, 2], &[1.0, 2.0, 3.0, 4.0]);
    // Truncated element: the tag at 128 claims more than the file has.
    let file = w.file(std::slice::from_ref(&m));
    let e = parse_err(&file[..file.len() - 8]);
    assert!(
        e.starts_with("t.mat: byte 128: truncated: a miMATRIX element of"),
        "{e}"
    );
    // Wrong count of values for the dimensions.
    let e = parse_err(&w.file(&[w.double("x", &[2, 2], &[1.0])]));
    assert!(
        e.contains("the real part of 'x' is 8 bytes of miDOUBLE, but its dimensions need 4 values"),
        "{e}"
    );
    // Dimensions whose product overflows.
    let e = parse_err(&w.file(&[w.matrix(
        6,
        0,
        &[i32::MAX, i32::MAX, i32::MAX, 8],
        "x",
        &[w.el(9, &[])],
    )]));
    assert!(e.contains("product overflows"), "{e}");
    // Negative dimension, unknown class, wrong top-level element, small top-level element.
    assert!(parse_err(&w.file(&[w.double("x", &[-1, 2], &[])])).contains("negative dimension -1"));
    assert!(
        parse_err(&w.file(&[w.matrix(99, 0, &[1, 1], "x", &[])]))
            .contains("unknown array class 99")
    );
    assert!(parse_err(&w.file(&[w.el(9, &[0; 8])])).contains("found miDOUBLE of 8 bytes"));
    assert!(parse_err(&w.file(&[w.small(14, &[0; 4])])).contains("a small miMATRIX"));
    // A small element claiming more than 4 bytes.
    assert!(parse_err(&w.file(&[w.el(14, &[1, 0, 5, 0, 0, 0, 0, 0])])).contains("claims 5 bytes"));
    // A cell whose dimensions claim more elements than bytes remain: refused up front.
    let e = parse_err(&w.file(&[w.matrix(1, 0, &[100_000, 100_000], "c", &[])]));
    assert!(
        e.contains("truncated: the 10000000000 elements of the cell 'c' needs 80000000000 bytes"),
        "{e}"
    );
    // Errors inside compressed data locate both the element and the offset in it.
    let e = parse_err(&w.file(&[w.compressed(&w.double("x", &[3, 1], &[1.0]))]));
    assert!(
        e.starts_with("t.mat: byte 48 of the data decompressed from the element at byte 128: "),
        "{e}"
    );
    // Corrupt compressed data.
    let mut z = w.compressed(&m);
    let n = z.len();
    z[n - 3] ^= 0xff;
    assert!(parse_err(&w.file(&[z])).contains("corrupt compressed data"));
}

#[test]
fn v5_limits_depth_and_decompressed_size() {
    let w = LE;
    let mut m = w.double("", &[1, 1], &[1.0]);
    for _ in 0..10 {
        m = w.matrix(1, 0, &[1, 1], "", &[m]);
    }
    let file = w.file(&[m]);
    let opts = |max_depth, max_decompressed| ReadOptions {
        max_depth,
        max_decompressed,
        ..ReadOptions::default()
    };
    assert!(MatFile::parse_with(&file, "t.mat", &opts(10, 1 << 20)).is_ok());
    let e = MatFile::parse_with(&file, "t.mat", &opts(9, 1 << 20)).unwrap_err();
    assert!(matches!(e.kind, MatErrorKind::TooDeep { limit: 9 }), "{e}");

    // 1 MB of zeros compresses to about 1 kB: the bomb is refused at the limit, and
    // the limit is for the whole file, not per element.
    let big = w.double("z", &[1, 131_072], &vec![0.0; 131_072]);
    let zfile = w.file(&[w.compressed(&big), w.compressed(&big)]);
    assert!(zfile.len() < 10_000);
    assert!(MatFile::parse_with(&zfile, "t.mat", &opts(8, 3 << 20)).is_ok());
    let e = MatFile::parse_with(&zfile, "t.mat", &opts(8, 1_500_000))
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("t.mat: byte "), "{e}");
    assert!(e.contains("decompresses to more than 1500000 bytes"), "{e}");
}

/// A 1×n cell array `c` of 1×65536 char arrays stored with no characters: 56 bytes
/// of file for 128 KiB of blanks each.
fn blank_chars_cell(n: usize) -> Vec<u8> {
    let w = LE;
    let blank = w.matrix(4, 0, &[1, 65536], "", &[w.el(4, &[])]);
    w.matrix(1, 0, &[1, n as i32], "c", &[blank.repeat(n)])
}

fn max_memory(max_memory: u64) -> ReadOptions {
    ReadOptions {
        max_memory,
        ..ReadOptions::default()
    }
}

#[test]
fn v5_blank_characters_count_against_the_memory_limit() {
    // Found in an audit: a cell of 200000 such arrays, 32 KB compressed, asked for 26
    // GB and aborted the process.
    let w = LE;
    let opts = max_memory(1 << 20);
    let f = MatFile::parse_with(&w.file(&[blank_chars_cell(7)]), "t.mat", &opts).unwrap();
    let c = f.get("c").unwrap();
    assert_eq!(c.cell(6).unwrap().as_string().unwrap(), " ".repeat(65536));
    // 1 MiB holds the cell, the dimensions and 7 arrays of blanks, not 8.
    let file = w.file(&[w.compressed(&blank_chars_cell(20))]);
    let e = MatFile::parse_with(&file, "t.mat", &opts).unwrap_err();
    assert!(matches!(e.kind, MatErrorKind::MemoryLimit { .. }), "{e}");
    assert_eq!(
        e.to_string(),
        "t.mat: byte 488 of the data decompressed from the element at byte 128: the 65536 \
         blank characters of 'c{8}' would take 131072 bytes of memory, but only 129168 of \
         the 1048576 bytes the values of a file may take are left (ReadOptions::max_memory)"
    );
}

#[test]
fn v5_a_small_file_cannot_ask_for_gigabytes_of_cells() {
    // Found in an audit: 2^24 empty cell elements take 8 bytes of file each (and
    // compress to next to nothing) but a `Value` in memory each: 1.5 GB, more than
    // the default limit, refused before anything is allocated for them (2^27 of
    // them, a 1.5 MB file, once asked for 11.8 GB and aborted the process).
    let w = LE;
    let n = 1 << 24;
    let empty = w.el(14, &[]);
    let mut body = w.flags(1, 0);
    body.extend(w.dims(&[1, n as i32]));
    body.extend(w.name("c"));
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    z.write_all(&w.u32(14)).unwrap();
    z.write_all(&w.u32((body.len() + n * empty.len()) as u32))
        .unwrap();
    z.write_all(&body).unwrap();
    let chunk = empty.repeat(1 << 12);
    for _ in 0..n >> 12 {
        z.write_all(&chunk).unwrap();
    }
    let z = z.finish().unwrap();
    let mut file = w.header(0x0100);
    file.extend(w.u32(15));
    file.extend(w.u32(z.len() as u32));
    file.extend(z);
    assert!(file.len() < 1_200_000, "{}", file.len());
    assert_eq!(
        parse_err(&file),
        "t.mat: byte 48 of the data decompressed from the element at byte 128: the 16777216 \
         cell elements of 'c' would take 1476395008 bytes of memory, but only 1073741808 \
         of the 1073741824 bytes the values of a file may take are left \
         (ReadOptions::max_memory)"
    );
}

#[test]
fn v5_the_memory_limit_counts_values_in_memory_and_names_them() {
    let w = LE;
    // 1000 doubles stored as miUINT8: 1000 bytes of file, 8000 of memory (and 16
    // for the dimensions).
    let x = w.matrix(6, 0, &[1, 1000], "x", &[w.el(2, &[1; 1000])]);
    let file = w.file(std::slice::from_ref(&x));
    assert!(MatFile::parse_with(&file, "t.mat", &max_memory(8016)).is_ok());
    let e = MatFile::parse_with(&file, "t.mat", &max_memory(8015)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.mat: byte 176: the real part (1000 values) of 'x' would take 8000 bytes of \
         memory, but only 7999 of the 8015 bytes the values of a file may take are left \
         (ReadOptions::max_memory)"
    );
    // Inside a struct's cell, the error names the way to the element.
    let inner = w.matrix(6, 0, &[1, 1000], "", &[w.el(2, &[1; 1000])]);
    let cell = w.matrix(1, 0, &[1, 2], "", &[inner.clone(), inner]);
    let st = w.matrix(
        2,
        0,
        &[1, 1],
        "s",
        &[w.small(5, &w.u32(2)), w.small(1, b"f\0"), cell.clone()],
    );
    let e = MatFile::parse_with(&w.file(&[st]), "t.mat", &max_memory(10_000)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.mat: byte 1344: the real part (1000 values) of 's.f{2}' would take 8000 bytes of \
         memory, but only 1672 of the 10000 bytes the values of a file may take are left \
         (ReadOptions::max_memory)"
    );
    let st2 = w.matrix(
        2,
        0,
        &[1, 2],
        "s",
        &[
            w.small(5, &w.u32(2)),
            w.small(1, b"f\0"),
            w.el(14, &[]),
            cell,
        ],
    );
    let e = MatFile::parse_with(&w.file(&[st2]), "t.mat", &max_memory(10_000)).unwrap_err();
    assert!(
        e.to_string()
            .contains("of 's(2).f{2}' would take 8000 bytes"),
        "{e}"
    );
    // The elements of a struct array count too.
    let many = w.matrix(
        2,
        0,
        &[1, 100],
        "s",
        &[
            w.small(5, &w.u32(2)),
            w.small(1, b"f\0"),
            w.el(14, &[]).repeat(100),
        ],
    );
    let e = MatFile::parse_with(&w.file(&[many]), "t.mat", &max_memory(1000)).unwrap_err();
    assert!(
        e.to_string()
            .contains("the 100 field values of 's' would take"),
        "{e}"
    );
}

#[test]
fn v5_default_depth_limit_on_a_real_chain() {
    // Cells nested as deep as the default allows read (on a test thread's stack, in a
    // debug build); one level more is refused.
    let w = LE;
    let nest = |levels: usize| {
        let mut m = w.double("", &[1, 1], &[1.0]);
        for _ in 0..levels {
            m = w.matrix(1, 0, &[1, 1], "", &[m]);
        }
        w.file(&[w.matrix(1, 0, &[1, 1], "c", &[m])])
    };
    let deep = nest(ReadOptions::DEFAULT_MAX_DEPTH - 1);
    let f = parse(&deep);
    let mut r = f.get("c").unwrap();
    for _ in 0..ReadOptions::DEFAULT_MAX_DEPTH {
        r = r.cell(0).unwrap();
    }
    assert_eq!(r.to_f64_vec().unwrap(), vec![1.0]);
    let e = parse_err(&nest(ReadOptions::DEFAULT_MAX_DEPTH));
    assert!(e.contains("nested more than 64 levels deep"), "{e}");
}

#[test]
fn v5_padding_after_the_last_element_is_tolerated() {
    let w = LE;
    let mut file = w.file(&[w.compressed(&w.double("x", &[1, 1], &[1.0]))]);
    file.extend([0; 5]);
    assert_eq!(parse(&file).variables.len(), 1);
    file.push(1);
    assert!(MatFile::parse(&file, "t.mat").is_err());
}

#[test]
fn v5_later_variable_of_the_same_name_wins() {
    let w = LE;
    let f = parse(&w.file(&[
        w.double("x", &[1, 1], &[1.0]),
        w.double("x", &[1, 1], &[2.0]),
    ]));
    assert_eq!(f.variables.len(), 2);
    assert_eq!(f.get("x").unwrap().to_f64_vec().unwrap(), vec![2.0]);
}
