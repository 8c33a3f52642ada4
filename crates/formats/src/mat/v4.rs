//! Level 4: the reader (numeric and text matrices, either byte order) and the writer of
//! numeric matrices, the layout of the CinC 2017 files.

use std::io::Write;
use std::path::Path;

use super::stored::{ByteOrder, Stored, array_at};
use super::values::{Array, NumericArray, NumericClass, UnsupportedClass, Value, fmt_dims};
use super::{Level, Location, MatError, MatErrorKind, MatFile, Variable};

const V4_HEADER_LEN: usize = 20;

/// Decodes the MOPT type field, finding the byte order from the field itself: a valid
/// type is below 5000, which holds in only one of the two readings of the four bytes
/// (except 0, which reads the same both ways and means little-endian double).
fn v4_type(b: [u8; 4]) -> Result<(ByteOrder, i32), String> {
    let le = i32::from_le_bytes(b);
    let be = i32::from_be_bytes(b);
    let plausible = |v: i32| (0..5000).contains(&v);
    let (order, mopt) = match (plausible(le), plausible(be)) {
        (true, _) => (ByteOrder::Little, le),
        (false, true) => (ByteOrder::Big, be),
        (false, false) => {
            return Err(format!(
                "not a level-4 matrix header: the type field ({le} read little-endian, {be} \
                 big-endian) is not a MOPT code below 5000"
            ));
        }
    };
    let m = mopt / 1000;
    match (m, order) {
        (0, ByteOrder::Little) | (1, ByteOrder::Big) => Ok((order, mopt)),
        (0, ByteOrder::Big) => Err(format!(
            "the type field {mopt} says little-endian (M=0) but is stored big-endian"
        )),
        (1, ByteOrder::Little) => Err(format!(
            "the type field {mopt} says big-endian (M=1) but is stored little-endian"
        )),
        (2, _) => Err("VAX D-float numbers (type M=2)".into()),
        (3, _) => Err("VAX G-float numbers (type M=3)".into()),
        _ => Err("Cray numbers (type M=4)".into()),
    }
}

fn v4_precision(p: i32) -> Option<(Stored, NumericClass)> {
    Some(match p {
        0 => (Stored::Double, NumericClass::Double),
        1 => (Stored::Single, NumericClass::Single),
        2 => (Stored::Int32, NumericClass::Int32),
        3 => (Stored::Int16, NumericClass::Int16),
        4 => (Stored::UInt16, NumericClass::UInt16),
        5 => (Stored::UInt8, NumericClass::UInt8),
        _ => return None,
    })
}

pub(super) fn parse_v4(bytes: &[u8], source: &str) -> Result<MatFile, MatError> {
    let at = |pos: usize, kind| MatError::new(source, Location::Byte(pos as u64), kind);
    let malformed = |pos: usize, msg: String| at(pos, MatErrorKind::Malformed(msg));
    let truncated = |pos: usize, what: String, needed: usize| {
        at(
            pos,
            MatErrorKind::Truncated {
                what,
                needed: needed as u64,
                available: bytes.len().saturating_sub(pos) as u64,
            },
        )
    };
    if bytes.is_empty() {
        return Err(MatError::new(source, Location::File, MatErrorKind::Empty));
    }
    let mut variables = Vec::new();
    let mut pos = 0usize;
    while pos < bytes.len() {
        let start = pos;
        let header: [u8; V4_HEADER_LEN] = array_at(bytes, pos)
            .ok_or_else(|| truncated(pos, "a level-4 matrix header".into(), V4_HEADER_LEN))?;
        let field = |i: usize| -> [u8; 4] { array_at(&header, i * 4).unwrap_or_default() };
        let (order, mopt) = v4_type(field(0)).map_err(|msg| {
            if msg.starts_with("VAX") || msg.starts_with("Cray") {
                at(start, MatErrorKind::Unsupported(format!("level-4 {msg}")))
            } else {
                malformed(start, msg)
            }
        })?;
        let (o, p, t) = (mopt / 100 % 10, mopt / 10 % 10, mopt % 10);
        let [mrows, ncols, imagf, namlen] = [1, 2, 3, 4].map(|i| order.i32(field(i)));
        if o != 0 {
            return Err(malformed(
                start,
                format!("the type field {mopt} has O={o}; it must be 0"),
            ));
        }
        let (stored, class) = v4_precision(p).ok_or_else(|| {
            malformed(
                start,
                format!("the type field {mopt} has precision P={p}; it must be 0 to 5"),
            )
        })?;
        if t > 2 {
            return Err(malformed(
                start,
                format!("the type field {mopt} has matrix type T={t}; it must be 0, 1 or 2"),
            ));
        }
        let nonneg = |v: i32, what: &str, off: usize| {
            usize::try_from(v)
                .map_err(|_| malformed(start + off, format!("the {what} ({v}) is negative")))
        };
        let rows = nonneg(mrows, "row count", 4)?;
        let cols = nonneg(ncols, "column count", 8)?;
        let name_len = nonneg(namlen, "name length", 16)?;
        let complex = imagf != 0;
        pos += V4_HEADER_LEN;

        let name_bytes = bytes
            .get(pos..pos.saturating_add(name_len))
            .ok_or_else(|| truncated(pos, format!("the name ({name_len} bytes)"), name_len))?;
        let name_end = name_bytes
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(name_bytes.len());
        let name =
            String::from_utf8_lossy(name_bytes.get(..name_end).unwrap_or_default()).into_owned();
        pos += name_len;

        let too_big = || {
            malformed(
                start,
                format!("'{name}' claims {rows}×{cols} elements, more than can be addressed"),
            )
        };
        let count = rows.checked_mul(cols).ok_or_else(too_big)?;
        let part = count.checked_mul(stored.size()).ok_or_else(too_big)?;
        let total = part
            .checked_mul(if complex { 2 } else { 1 })
            .ok_or_else(too_big)?;
        let data = bytes.get(pos..pos.saturating_add(total)).ok_or_else(|| {
            truncated(
                pos,
                format!("the data of '{name}' ({rows}×{cols} {class})"),
                total,
            )
        })?;
        let (re, im) = data.split_at(part.min(data.len()));
        let dims = vec![rows, cols];
        let value = match t {
            0 => {
                let decode = |d: &[u8]| {
                    stored
                        .decode_class(class, d, order)
                        .map_err(|i| malformed(pos, format!("element {i} of '{name}' is invalid")))
                };
                let real = decode(re)?;
                let imag = if complex { Some(decode(im)?) } else { None };
                Value::Numeric(NumericArray { dims, real, imag })
            }
            1 => {
                if complex {
                    return Err(malformed(
                        start,
                        format!("the text matrix '{name}' has an imaginary part"),
                    ));
                }
                let units: Vec<u16> = stored.decode(re, order).map_err(|i| {
                    malformed(
                        pos,
                        format!(
                            "element {i} of the text matrix '{name}' is not a character code \
                             (an integer from 0 to 65535)"
                        ),
                    )
                })?;
                Value::Char(Array { dims, data: units })
            }
            _ => Value::Unsupported(UnsupportedClass::Sparse),
        };
        pos += total;
        variables.push(Variable {
            name,
            value,
            global: false,
        });
    }
    Ok(MatFile {
        source: source.to_string(),
        level: Level::V4,
        variables,
    })
}

/// Writes numeric matrices as a little-endian level-4 file, the layout of the CinC 2017
/// `.mat` files (a 20-byte header, the name with its NUL, then the data column-major).
/// Level 4 holds only 2-D double, single, int32, int16, uint16 and uint8 matrices; other
/// classes and shapes are refused. `dest` names the output in errors.
pub fn write_v4<W: Write>(
    mut out: W,
    dest: &str,
    variables: &[(&str, &NumericArray)],
) -> Result<(), MatError> {
    let refuse = |name: &str, reason: String| {
        MatError::new(
            dest,
            Location::File,
            MatErrorKind::CannotWrite {
                name: name.to_string(),
                reason,
            },
        )
    };
    for (name, array) in variables {
        let p = match array.class() {
            NumericClass::Double => 0,
            NumericClass::Single => 1,
            NumericClass::Int32 => 2,
            NumericClass::Int16 => 3,
            NumericClass::UInt16 => 4,
            NumericClass::UInt8 => 5,
            other => {
                return Err(refuse(
                    name,
                    format!(
                        "level 4 has no {other} type (only double, single, int32, int16, \
                         uint16, uint8)"
                    ),
                ));
            }
        };
        if name.is_empty() || name.contains('\0') {
            return Err(refuse(
                name,
                "a name must be non-empty and hold no NUL".into(),
            ));
        }
        let dims = array.dims();
        if dims.len() > 2 && dims.iter().skip(2).any(|&d| d != 1) {
            return Err(refuse(
                name,
                format!("level 4 holds 2-D matrices only, not {}", fmt_dims(dims)),
            ));
        }
        let as_i32 = |v: usize, what: &str| {
            i32::try_from(v).map_err(|_| refuse(name, format!("the {what} {v} exceeds 2^31-1")))
        };
        let rows = as_i32(dims.first().copied().unwrap_or(1), "row count")?;
        let cols = as_i32(dims.get(1).copied().unwrap_or(1), "column count")?;
        let namlen = as_i32(name.len() + 1, "name length")?;
        let mut buf = Vec::with_capacity(V4_HEADER_LEN + name.len() + 1);
        for v in [p * 10, rows, cols, i32::from(array.is_complex()), namlen] {
            buf.extend_from_slice(&v.to_le_bytes());
        }
        buf.extend_from_slice(name.as_bytes());
        buf.push(0);
        let io = |e| MatError::new(dest, Location::File, MatErrorKind::WriteIo(e));
        out.write_all(&buf).map_err(io)?;
        out.write_all(&array.real().to_le_bytes()).map_err(io)?;
        if let Some(im) = array.imag() {
            out.write_all(&im.to_le_bytes()).map_err(io)?;
        }
    }
    out.flush()
        .map_err(|e| MatError::new(dest, Location::File, MatErrorKind::WriteIo(e)))
}

/// [`write_v4`] to a file, created or truncated.
pub fn write_v4_file(
    path: impl AsRef<Path>,
    variables: &[(&str, &NumericArray)],
) -> Result<(), MatError> {
    let path = path.as_ref();
    let dest = path.display().to_string();
    let file = std::fs::File::create(path)
        .map_err(|e| MatError::new(&dest, Location::File, MatErrorKind::WriteIo(e)))?;
    write_v4(std::io::BufWriter::new(file), &dest, variables)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{numeric, parse, parse_err, v4};
    use super::*;
    use crate::mat::NumericData;
    use proptest::prelude::*;

    #[test]
    fn v4_cinc_layout_little_endian() {
        let data: Vec<u8> = [-127i16, -162, 300]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let bytes = v4(false, 30, 1, 3, 0, "val", &data);
        assert_eq!(bytes.len(), 24 + 6);
        let f = parse(&bytes);
        assert_eq!(f.level, Level::V4);
        let val = numeric(&f, "val");
        assert_eq!(val.dims(), &[1, 3]);
        assert_eq!(val.real(), &NumericData::Int16(vec![-127, -162, 300]));
        assert_eq!(val.to_f64(), vec![-127.0, -162.0, 300.0]);
    }

    #[test]
    fn v4_big_endian_every_precision_several_variables() {
        let mut bytes = Vec::new();
        bytes.extend(v4(
            true,
            1000,
            2,
            1,
            0,
            "d",
            &[1.5f64.to_be_bytes(), (-0.0f64).to_be_bytes()].concat(),
        ));
        bytes.extend(v4(true, 1010, 1, 1, 0, "f", &2.25f32.to_be_bytes()));
        bytes.extend(v4(true, 1020, 1, 1, 0, "i32", &(-7i32).to_be_bytes()));
        bytes.extend(v4(true, 1030, 1, 1, 0, "i16", &(-300i16).to_be_bytes()));
        bytes.extend(v4(true, 1040, 1, 1, 0, "u16", &65535u16.to_be_bytes()));
        bytes.extend(v4(true, 1050, 1, 2, 0, "u8", &[0, 255]));
        let f = parse(&bytes);
        let names: Vec<&str> = f.variables.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["d", "f", "i32", "i16", "u16", "u8"]);
        let d = numeric(&f, "d");
        assert_eq!(d.dims(), &[2, 1]);
        let NumericData::Double(dv) = d.real() else {
            panic!()
        };
        assert_eq!(dv[0], 1.5);
        assert!(dv[1] == 0.0 && dv[1].is_sign_negative());
        assert_eq!(numeric(&f, "f").real(), &NumericData::Single(vec![2.25]));
        assert_eq!(numeric(&f, "i32").real(), &NumericData::Int32(vec![-7]));
        assert_eq!(numeric(&f, "i16").real(), &NumericData::Int16(vec![-300]));
        assert_eq!(numeric(&f, "u16").real(), &NumericData::UInt16(vec![65535]));
        assert_eq!(numeric(&f, "u8").real(), &NumericData::UInt8(vec![0, 255]));
    }

    #[test]
    fn v4_complex_text_and_sparse() {
        let mut bytes = v4(
            false,
            0,
            1,
            2,
            1,
            "z",
            &[1.0f64, 2.0, -3.0, 4.0]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect::<Vec<_>>(),
        );
        bytes.extend(v4(false, 51, 1, 2, 0, "s", b"hi"));
        // A text matrix in double precision, as MATLAB writes it.
        bytes.extend(v4(false, 1, 1, 1, 0, "t", &65.0f64.to_le_bytes()));
        // Sparse: stored as an N×3 full matrix; kept as unsupported, the next variable reads.
        bytes.extend(v4(false, 2, 2, 3, 0, "sp", &[0u8; 48]));
        bytes.extend(v4(false, 50, 1, 1, 0, "after", &[9]));
        let f = parse(&bytes);
        let z = numeric(&f, "z");
        assert_eq!(z.real(), &NumericData::Double(vec![1.0, 2.0]));
        assert_eq!(z.imag(), Some(&NumericData::Double(vec![-3.0, 4.0])));
        assert_eq!(f.get("s").unwrap().as_string().unwrap(), "hi");
        assert_eq!(f.get("t").unwrap().as_string().unwrap(), "A");
        assert_eq!(
            f.get("sp").unwrap().value(),
            &Value::Unsupported(UnsupportedClass::Sparse)
        );
        let e = f
            .get("sp")
            .unwrap()
            .as_f64_matrix()
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "t.mat: sp: is a sparse array (not supported), not a real numeric matrix"
        );
        assert_eq!(numeric(&f, "after").real(), &NumericData::UInt8(vec![9]));
    }

    #[test]
    fn v4_errors_name_the_file_and_offset() {
        assert_eq!(parse_err(&[]), "t.mat: the file is empty");
        let ok = v4(false, 30, 1, 2, 0, "val", &[1, 0, 2, 0]);
        let e = parse_err(&ok[..ok.len() - 1]);
        assert!(e.starts_with("t.mat: byte 24: truncated: the data of 'val' (1×2 int16) needs 4 bytes but only 3 remain"), "{e}");
        let e = parse_err(&[&ok[..], &[0, 0, 0]].concat());
        assert!(
            e.starts_with("t.mat: byte 28: truncated: a level-4 matrix header needs 20 bytes"),
            "{e}"
        );
        assert!(
            parse_err(&v4(false, 30, -1, 2, 0, "v", &[]))
                .contains("byte 4: the row count (-1) is negative")
        );
        assert!(parse_err(&v4(false, 130, 1, 1, 0, "v", &[0, 0])).contains("O=1"));
        assert!(parse_err(&v4(false, 60, 1, 1, 0, "v", &[0])).contains("precision P=6"));
        assert!(parse_err(&v4(false, 3, 1, 1, 0, "v", &[0])).contains("matrix type T=3"));
        assert!(
            parse_err(&v4(false, 1030, 1, 1, 0, "v", &[0, 0]))
                .contains("says big-endian (M=1) but is stored little-endian")
        );
        assert!(
            parse_err(&v4(true, 30, 1, 1, 0, "v", &[0, 0]))
                .contains("says little-endian (M=0) but is stored big-endian")
        );
        let e = parse_err(&v4(false, 2000, 1, 1, 0, "v", &[0; 8]));
        assert_eq!(
            e,
            "t.mat: byte 0: level-4 VAX D-float numbers (type M=2) is not supported"
        );
        // Huge dimensions are refused before any allocation.
        let e = parse_err(&v4(false, 0, i32::MAX, i32::MAX, 1, "v", &[]));
        assert_eq!(
            e,
            "t.mat: byte 0: 'v' claims 2147483647×2147483647 elements, more than can be addressed"
        );
        let e = parse_err(&v4(false, 0, 100_000, 100_000, 0, "v", &[]));
        assert!(
            e.contains("truncated: the data of 'v' (100000×100000 double) needs 80000000000 bytes"),
            "{e}"
        );
        // Text that is not a character code.
        let e = parse_err(&v4(false, 1, 1, 1, 0, "t", &0.5f64.to_le_bytes()));
        assert!(e.contains("not a character code"), "{e}");
    }

    #[test]
    fn v4_writer_refuses_what_level_4_cannot_hold() {
        let mut out = Vec::new();
        let i8s = NumericArray::row(NumericData::Int8(vec![1]));
        let e = write_v4(&mut out, "o.mat", &[("x", &i8s)])
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "o.mat: cannot write 'x': level 4 has no int8 type (only double, single, int32, int16, uint16, uint8)"
        );
        let cube =
            NumericArray::new(vec![1, 2, 2], NumericData::Double(vec![0.0; 4]), None).unwrap();
        assert!(
            write_v4(&mut out, "o.mat", &[("x", &cube)])
                .unwrap_err()
                .to_string()
                .contains("2-D")
        );
        let d = NumericArray::row(NumericData::Double(vec![1.0]));
        assert!(write_v4(&mut out, "o.mat", &[("", &d)]).is_err());
        assert!(write_v4(&mut out, "o.mat", &[("a\0b", &d)]).is_err());
        // 2×1×1 is 2-D for MATLAB.
        let col =
            NumericArray::new(vec![2, 1, 1], NumericData::Double(vec![1.0, 2.0]), None).unwrap();
        out.clear();
        write_v4(&mut out, "o.mat", &[("c", &col)]).unwrap();
        assert_eq!(numeric(&parse(&out), "c").dims(), &[2, 1]);
    }

    proptest! {
        #[test]
        fn v4_write_then_read_round_trips(
            vars in proptest::collection::vec(
                ("[a-zA-Z][a-zA-Z0-9_]{0,20}", 0usize..6, 0usize..6, any::<bool>(), 0u8..6, any::<u64>()),
                1..5,
            ),
        ) {
            let arrays: Vec<(String, NumericArray)> = vars
                .iter()
                .map(|(name, rows, cols, complex, class, seed)| {
                    let n = rows * cols;
                    let mut s = *seed;
                    let mut next = move || {
                        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        s
                    };
                    let mut make = || match class {
                        0 => NumericData::Double((0..n).map(|_| f64::from_bits(next())).collect()),
                        1 => NumericData::Single((0..n).map(|_| f32::from_bits(next() as u32)).collect()),
                        2 => NumericData::Int32((0..n).map(|_| next() as i32).collect()),
                        3 => NumericData::Int16((0..n).map(|_| next() as i16).collect()),
                        4 => NumericData::UInt16((0..n).map(|_| next() as u16).collect()),
                        _ => NumericData::UInt8((0..n).map(|_| next() as u8).collect()),
                    };
                    let real = make();
                    let imag = complex.then(&mut make);
                    (name.clone(), NumericArray::new(vec![*rows, *cols], real, imag).unwrap())
                })
                .collect();
            let refs: Vec<(&str, &NumericArray)> = arrays.iter().map(|(n, a)| (n.as_str(), a)).collect();
            let mut out = Vec::new();
            write_v4(&mut out, "mem", &refs).unwrap();
            let back = MatFile::parse(&out, "mem").unwrap();
            prop_assert_eq!(back.variables.len(), arrays.len());
            for (v, (name, a)) in back.variables.iter().zip(&arrays) {
                prop_assert_eq!(&v.name, name);
                let Value::Numeric(b) = &v.value else { panic!("not numeric") };
                prop_assert_eq!(b.dims(), a.dims());
                // Compare bits: NaN payloads must survive too.
                prop_assert_eq!(format!("{:?}", b.real().to_le_bytes()), format!("{:?}", a.real().to_le_bytes()));
                prop_assert_eq!(b.imag().map(NumericData::to_le_bytes), a.imag().map(NumericData::to_le_bytes));
            }
        }
    }
}
