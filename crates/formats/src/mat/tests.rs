//! Tests of the MAT reader as a whole, and the builders of level-4 and level-5 bytes the
//! tests of every level share.

use super::*;
use proptest::prelude::*;
use std::io::Write;

// ----- builders -------------------------------------------------------------------

/// Builds level-5 bytes in either byte order.
pub(super) struct V5 {
    pub(super) big: bool,
}

impl V5 {
    pub(super) fn u32(&self, v: u32) -> [u8; 4] {
        if self.big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }
    pub(super) fn u16(&self, v: u16) -> [u8; 2] {
        if self.big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }
    pub(super) fn f64s(&self, v: &[f64]) -> Vec<u8> {
        v.iter()
            .flat_map(|x| {
                if self.big {
                    x.to_be_bytes()
                } else {
                    x.to_le_bytes()
                }
            })
            .collect()
    }
    pub(super) fn el(&self, ty: u32, data: &[u8]) -> Vec<u8> {
        let mut out = [self.u32(ty), self.u32(data.len() as u32)].concat();
        out.extend(data);
        out.resize(out.len().next_multiple_of(8), 0);
        out
    }
    pub(super) fn small(&self, ty: u32, data: &[u8]) -> Vec<u8> {
        assert!(data.len() <= 4);
        let mut out = self.u32(((data.len() as u32) << 16) | ty).to_vec();
        out.extend(data);
        out.resize(8, 0);
        out
    }
    pub(super) fn flags(&self, class: u32, flags: u32) -> Vec<u8> {
        self.el(6, &[self.u32(class | flags), [0; 4]].concat())
    }
    pub(super) fn dims(&self, dims: &[i32]) -> Vec<u8> {
        let d: Vec<u8> = dims.iter().flat_map(|&d| self.u32(d as u32)).collect();
        self.el(5, &d)
    }
    pub(super) fn name(&self, name: &str) -> Vec<u8> {
        if name.len() <= 4 {
            self.small(1, name.as_bytes())
        } else {
            self.el(1, name.as_bytes())
        }
    }
    pub(super) fn matrix(
        &self,
        class: u32,
        flags: u32,
        dims: &[i32],
        name: &str,
        parts: &[Vec<u8>],
    ) -> Vec<u8> {
        let mut body = self.flags(class, flags);
        body.extend(self.dims(dims));
        body.extend(self.name(name));
        for p in parts {
            body.extend(p);
        }
        self.el(14, &body)
    }
    pub(super) fn double(&self, name: &str, dims: &[i32], v: &[f64]) -> Vec<u8> {
        self.matrix(6, 0, dims, name, &[self.el(9, &self.f64s(v))])
    }
    pub(super) fn compressed(&self, element: &[u8]) -> Vec<u8> {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(element).unwrap();
        let z = z.finish().unwrap();
        let mut out = [self.u32(15), self.u32(z.len() as u32)].concat();
        out.extend(z);
        out
    }
    pub(super) fn header(&self, version: u16) -> Vec<u8> {
        let mut h = b"MATLAB 5.0 MAT-file, unit test".to_vec();
        h.resize(116, b' ');
        h.extend([0; 8]);
        h.extend(self.u16(version));
        h.extend(if self.big { b"MI" } else { b"IM" });
        h
    }
    pub(super) fn file(&self, elements: &[Vec<u8>]) -> Vec<u8> {
        let mut f = self.header(0x0100);
        for e in elements {
            f.extend(e);
        }
        f
    }
}

pub(super) const LE: V5 = V5 { big: false };
pub(super) const BE: V5 = V5 { big: true };

/// A level-4 matrix: header, name, data bytes (already in the right order).
pub(super) fn v4(
    big: bool,
    mopt: i32,
    rows: i32,
    cols: i32,
    imagf: i32,
    name: &str,
    data: &[u8],
) -> Vec<u8> {
    let mut out = Vec::new();
    for v in [mopt, rows, cols, imagf, name.len() as i32 + 1] {
        out.extend(if big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        });
    }
    out.extend(name.as_bytes());
    out.push(0);
    out.extend(data);
    out
}

pub(super) fn parse(bytes: &[u8]) -> MatFile {
    MatFile::parse(bytes, "t.mat").unwrap_or_else(|e| panic!("{e}"))
}

pub(super) fn parse_err(bytes: &[u8]) -> String {
    match MatFile::parse(bytes, "t.mat") {
        Ok(f) => panic!("parsed: {:?}", f.variables),
        Err(e) => e.to_string(),
    }
}

pub(super) fn numeric(f: &MatFile, name: &str) -> NumericArray {
    f.get(name).unwrap().as_numeric().unwrap().clone()
}

#[test]
fn io_errors_are_shown_once_in_the_error_chain() {
    // Found in an audit: the I/O error was in the message and also the `source()`,
    // so that `anyhow` printed it twice.
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.mat");
    let io = std::fs::read(&missing).unwrap_err();
    let e = MatFile::read(&missing).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("{}: cannot read the file: {io}", missing.display())
    );
    crate::test_util::assert_io_error_shown_once(&e, &io);
    let a = NumericArray::row(NumericData::Double(vec![1.0]));
    let unwritable = dir.path().join("no/such/dir.mat");
    let io = std::fs::write(&unwritable, b"").unwrap_err();
    let e = write_v4_file(&unwritable, &[("a", &a)]).unwrap_err();
    assert!(matches!(e.kind, MatErrorKind::WriteIo(_)), "{e}");
    crate::test_util::assert_io_error_shown_once(&e, &io);
    // Corrupt compressed data (a zlib error, also in the message).
    let w = LE;
    let mut z = w.compressed(&w.double("x", &[1, 1], &[1.0]));
    let n = z.len();
    z[n - 3] ^= 0xff;
    let e = MatFile::parse(&w.file(&[z]), "t.mat").unwrap_err();
    let MatErrorKind::Zlib(zlib) = &e.kind else {
        panic!("{e}")
    };
    crate::test_util::assert_io_error_shown_once(&e, zlib);
}

#[test]
fn nothing_allocates_by_dimensions_alone() {
    // Found by fuzzing: 335544330×0 text, no data; its rows come one at a time.
    let bytes = [
        11, 0, 0, 0, 10, 0, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    ];
    let f = parse(&bytes);
    let Value::Char(c) = f.get("").unwrap().value() else {
        panic!()
    };
    assert_eq!(c.dims(), &[335_544_330, 0]);
    assert_eq!(c.rows().take(3).collect::<Vec<_>>(), ["", "", ""]);
}

// ----- properties -----------------------------------------------------------------

fn a_valid_v5_file() -> Vec<u8> {
    let w = LE;
    let inner = w.double("", &[1, 2], &[1.0, 2.0]);
    let names = b"a\0\0\0b\0\0\0".to_vec();
    let st = w.matrix(
        2,
        0,
        &[1, 1],
        "s",
        &[
            w.small(5, &w.u32(4)),
            w.el(1, &names),
            inner.clone(),
            w.matrix(1, 0, &[1, 1], "", &[inner]),
        ],
    );
    w.file(&[
        st.clone(),
        w.compressed(&st),
        w.matrix(4, 0, &[1, 2], "c", &[w.small(16, b"hi")]),
    ])
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let _ = MatFile::parse(&bytes, "fuzz");
        let _ = MatFile::parse_v4(&bytes, "fuzz");
        let _ = MatFile::parse_v5(&bytes, "fuzz");
    }

    #[test]
    fn v5_header_then_arbitrary_bytes_never_panic(
        big in any::<bool>(),
        body in proptest::collection::vec(any::<u8>(), 0..400),
    ) {
        let w = if big { BE } else { LE };
        let _ = MatFile::parse(&[w.header(0x0100), body].concat(), "fuzz");
    }

    #[test]
    fn corrupted_valid_files_never_panic(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut v5 = a_valid_v5_file();
        let mut v4f = v4(false, 0, 2, 2, 1, "m", &[0u8; 64]);
        for (at, b) in &edits {
            let i = at.index(v5.len());
            v5[i] = *b;
            let j = at.index(v4f.len());
            v4f[j] = *b;
        }
        let _ = MatFile::parse(&v5, "fuzz");
        let _ = MatFile::parse(&v5[..cut.index(v5.len())], "fuzz");
        let _ = MatFile::parse(&v4f, "fuzz");
        let _ = MatFile::parse(&v4f[..cut.index(v4f.len())], "fuzz");
    }
}
