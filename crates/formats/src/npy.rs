//! NumPy `.npy` files: the one-array format of `np.save` / `np.load`, which is how the
//! project stores P300 speller blocks (the organisers' pickled dicts hold the same
//! 2-D float array; `.npy` is the part of that any language can read).
//!
//! Reading accepts format versions 1.0, 2.0 and 3.0, 1-D and 2-D arrays in C or Fortran
//! order, and the numeric dtypes `f4`, `f8`, `i1`, `i2`, `i4`, `i8`, `u1`, `u2`, `u4`,
//! `u8` in either byte order. Values come back as `f64` in C (row-major) order whatever
//! the file's order; every `f4`/`f8` and every integer up to 2^53 in magnitude converts
//! exactly, and a 64-bit integer beyond that is an error rather than a rounded value.
//! The header is parsed as the small subset of Python literal syntax `np.save` writes (a
//! dict of strings, booleans and tuples of integers), never evaluated.
//!
//! Writing produces version 1.0, dtype `<f4`, C order, 2-D: what the project stores. The
//! bytes are exactly those `np.save` writes for the same array (header padding included),
//! so a file can be checked against numpy byte for byte.
//!
//! Not for: `.npz` archives, structured or object dtypes (and so no pickles), complex,
//! half-precision, boolean, string or datetime dtypes, arrays of other than 1 or 2
//! dimensions, or memory-mapping files too large to hold in memory.

use std::fmt;
use std::io;
use std::path::Path;

/// The first six bytes of every `.npy` file.
const MAGIC: &[u8; 6] = b"\x93NUMPY";
/// numpy pads the header so that the data starts on a multiple of this.
const ALIGN: usize = 64;
/// numpy leaves room in the header for the first axis to grow to this many digits (in
/// place, by `np.lib.format.open_memmap` users); we copy it so our bytes equal numpy's.
const GROWTH_AXIS_MAX_DIGITS: usize = 21;
/// Nesting deeper than this in a header is refused: no real header nests beyond 3, and
/// the parser is recursive.
const MAX_DEPTH: usize = 32;
/// Largest integer magnitude an `f64` holds exactly.
const EXACT_INT: u64 = 1 << 53;

/// What kind of number a dtype holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// IEEE float (`f`).
    Float,
    /// Signed integer (`i`).
    Int,
    /// Unsigned integer (`u`).
    Uint,
}

/// The element type of a file, as its `descr` spells it (`<f4`, `>i2`, `|u1`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Dtype {
    pub kind: Kind,
    /// Bytes per element.
    pub bytes: usize,
    /// Byte order; irrelevant (false) for one-byte types.
    pub big_endian: bool,
}

impl Dtype {
    /// Little-endian 32-bit float: what [`write_f32`] writes.
    pub const F4: Dtype = Dtype {
        kind: Kind::Float,
        bytes: 4,
        big_endian: false,
    };

    /// The dtype of a `descr` string, when it is one this module reads.
    fn from_descr(descr: &str) -> Option<Dtype> {
        let b = descr.as_bytes();
        let (&order, rest) = b.split_first()?;
        let (&kind, size) = rest.split_first()?;
        let kind = match kind {
            b'f' => Kind::Float,
            b'i' => Kind::Int,
            b'u' => Kind::Uint,
            _ => return None,
        };
        let bytes = match (kind, size) {
            (Kind::Float, b"4" | b"8") | (Kind::Int | Kind::Uint, b"1" | b"2" | b"4" | b"8") => {
                usize::from(size[0] - b'0')
            }
            _ => return None,
        };
        let big_endian = match order {
            b'<' => false,
            b'>' => bytes > 1,
            // "Not applicable" only makes sense for one-byte types.
            b'|' if bytes == 1 => false,
            _ => return None,
        };
        Some(Dtype {
            kind,
            bytes,
            big_endian,
        })
    }

    /// The `descr` string numpy writes for this dtype.
    pub fn descr(&self) -> String {
        let order = if self.bytes == 1 {
            '|'
        } else if self.big_endian {
            '>'
        } else {
            '<'
        };
        let kind = match self.kind {
            Kind::Float => 'f',
            Kind::Int => 'i',
            Kind::Uint => 'u',
        };
        format!("{order}{kind}{}", self.bytes)
    }

    /// The bits of one element (`b` has `self.bytes` bytes), as a little-endian number
    /// zero-extended to 64 bits.
    fn raw(&self, b: &[u8]) -> u64 {
        let mut le = [0u8; 8];
        let n = self.bytes.min(8).min(b.len());
        le[..n].copy_from_slice(&b[..n]);
        if self.big_endian {
            le[..n].reverse();
        }
        u64::from_le_bytes(le)
    }

    /// One element as `f64`, or `Err` with its value written out when it is a 64-bit
    /// integer `f64` cannot hold exactly.
    fn decode(&self, b: &[u8]) -> Result<f64, String> {
        let u = self.raw(b);
        match (self.kind, self.bytes) {
            (Kind::Float, 4) => Ok(f64::from(f32::from_bits(u as u32))),
            (Kind::Float, _) => Ok(f64::from_bits(u)),
            (Kind::Uint, _) if u <= EXACT_INT => Ok(u as f64),
            (Kind::Uint, _) => Err(u.to_string()),
            (Kind::Int, n) => {
                // Sign-extend from n bytes.
                let shift = 64 - 8 * (n.clamp(1, 8) as u32);
                let v = ((u << shift) as i64) >> shift;
                if v.unsigned_abs() <= EXACT_INT {
                    Ok(v as f64)
                } else {
                    Err(v.to_string())
                }
            }
        }
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.descr())
    }
}

/// An array read from a `.npy` file, values in C (row-major) order.
#[derive(Debug, Clone, PartialEq)]
pub struct Array {
    /// One or two dimensions; for two, `[rows, cols]`.
    pub shape: Vec<usize>,
    /// `shape`'s product values, row after row.
    pub data: Vec<f64>,
    /// The element type the file stored (the values are converted to `f64`).
    pub dtype: Dtype,
}

impl Array {
    /// Row `i` of a 2-D array (`None` for a 1-D array or a row past the end).
    pub fn row(&self, i: usize) -> Option<&[f64]> {
        let [rows, cols] = self.shape[..] else {
            return None;
        };
        if i >= rows {
            return None;
        }
        // Checked: the fields are public, so the shape may not match the data.
        let start = i.checked_mul(cols)?;
        self.data.get(start..start.checked_add(cols)?)
    }
}

/// What went wrong, without the file name (see [`NpyError`]).
#[derive(Debug, thiserror::Error)]
pub enum NpyErrorKind {
    #[error("cannot read the file: {0}")]
    Read(io::Error),
    #[error("cannot write the file: {0}")]
    Write(io::Error),
    #[error("not a NumPy .npy file: it starts with {found} instead of \\x93NUMPY")]
    BadMagic { found: String },
    #[error("only {len} bytes: too short for the .npy preamble, which takes {need}")]
    TooShort { len: usize, need: usize },
    #[error("format version {major}.{minor} is not supported (1.0, 2.0 and 3.0 are)")]
    UnsupportedVersion { major: u8, minor: u8 },
    #[error("truncated header: its length field says {declared} bytes but only {available} follow")]
    TruncatedHeader { declared: usize, available: usize },
    #[error("the version 3.0 header is not valid UTF-8")]
    HeaderEncoding,
    #[error("the header is not a Python literal: {0}")]
    HeaderSyntax(String),
    #[error("the header is not a dict but {found}")]
    HeaderNotDict { found: String },
    #[error("the header dict has no {0:?} key")]
    MissingKey(&'static str),
    #[error(
        "the header dict has the key {0}; numpy only accepts 'descr', 'fortran_order' and 'shape'"
    )]
    UnexpectedKey(String),
    #[error("the header dict has the key {0:?} twice")]
    DuplicateKey(&'static str),
    #[error("'{key}' is {found}, {want}")]
    BadValue {
        key: &'static str,
        found: String,
        want: &'static str,
    },
    #[error(
        "unsupported dtype {0:?}: supported are f4 and f8, i1 to i8 and u1 to u8, \
         little- (<) or big-endian (>)"
    )]
    UnknownDtype(String),
    #[error("structured dtypes (a list of fields) are not supported, only plain numbers")]
    StructuredDtype,
    #[error("{0}-D arrays are not supported, only 1-D and 2-D")]
    Dimensions(usize),
    #[error("shape {shape} of {dtype} is too large to address")]
    TooLarge { shape: String, dtype: Dtype },
    #[error(
        "truncated data: shape {shape} of {dtype} needs {want} bytes but only {found} follow \
         the header"
    )]
    Truncated {
        shape: String,
        dtype: Dtype,
        want: usize,
        found: usize,
    },
    #[error(
        "shape {shape} of {dtype} needs {want} bytes but {found} follow the header \
         (the shape does not match the data)"
    )]
    TrailingBytes {
        shape: String,
        dtype: Dtype,
        want: usize,
        found: usize,
    },
    #[error("element {index} ({value}) is too large to convert to f64 exactly")]
    InexactInteger { index: usize, value: String },
    #[error("cannot encode: {0}")]
    Encode(String),
}

/// A `.npy` error that names the file, the byte offset when there is one, and the problem.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {}{kind}", at_byte(*.offset))]
pub struct NpyError {
    /// The source name the caller gave (or the path).
    pub file: String,
    /// 0-based byte offset in the file of the field or value at fault, when there is one.
    pub offset: Option<u64>,
    pub kind: NpyErrorKind,
}

fn at_byte(offset: Option<u64>) -> String {
    offset.map(|o| format!("byte {o}: ")).unwrap_or_default()
}

impl NpyError {
    fn new(file: &str, offset: Option<usize>, kind: NpyErrorKind) -> Self {
        NpyError {
            file: file.to_string(),
            offset: offset.map(|o| o as u64),
            kind,
        }
    }
}

/// Reads the `.npy` file at `path`.
pub fn read(path: impl AsRef<Path>) -> Result<Array, NpyError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let bytes =
        std::fs::read(path).map_err(|e| NpyError::new(&name, None, NpyErrorKind::Read(e)))?;
    parse(&bytes, &name)
}

/// Parses the bytes of a `.npy` file; `name` is what errors call it.
pub fn parse(bytes: &[u8], name: &str) -> Result<Array, NpyError> {
    let err = |at: Option<usize>, kind| NpyError::new(name, at, kind);
    let head = &bytes[..bytes.len().min(MAGIC.len())];
    if head != &MAGIC[..head.len()] {
        return Err(err(
            Some(0),
            NpyErrorKind::BadMagic {
                found: escape(head),
            },
        ));
    }
    if bytes.len() < 8 {
        return Err(err(
            None,
            NpyErrorKind::TooShort {
                len: bytes.len(),
                need: 10,
            },
        ));
    }
    let (major, minor) = (bytes[6], bytes[7]);
    let (start, declared) = match (major, minor) {
        (1, 0) => (
            10,
            bytes
                .get(8..10)
                .map(|b| usize::from(b[0]) | usize::from(b[1]) << 8),
        ),
        (2 | 3, 0) => (
            12,
            bytes
                .get(8..12)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize),
        ),
        _ => {
            return Err(err(
                Some(6),
                NpyErrorKind::UnsupportedVersion { major, minor },
            ));
        }
    };
    let Some(declared) = declared else {
        return Err(err(
            None,
            NpyErrorKind::TooShort {
                len: bytes.len(),
                need: start,
            },
        ));
    };
    let available = bytes.len() - start;
    if declared > available {
        return Err(err(
            Some(8),
            NpyErrorKind::TruncatedHeader {
                declared,
                available,
            },
        ));
    }
    let raw = &bytes[start..start + declared];
    // Versions 1 and 2 are latin-1 (every byte is the char of the same number), version 3
    // is UTF-8.
    let text: String = if major == 3 {
        match std::str::from_utf8(raw) {
            Ok(s) => s.to_string(),
            Err(e) => {
                return Err(err(
                    Some(start + e.valid_up_to()),
                    NpyErrorKind::HeaderEncoding,
                ));
            }
        }
    } else {
        raw.iter().map(|&b| char::from(b)).collect()
    };
    // The parser's positions index the UTF-8 `text`: the file's bytes for version 3, but a
    // latin-1 char above 0x7F is one byte in the file and two in `text`, so count chars.
    let byte_at = |pos: usize| {
        start
            + if major == 3 {
                pos
            } else {
                text.get(..pos).map_or(pos, |t| t.chars().count())
            }
    };
    let header = Header::parse(&text).map_err(|(pos, kind)| err(Some(byte_at(pos)), kind))?;
    let data_at = start + declared;
    decode(header, &bytes[data_at..], data_at).map_err(|(at, kind)| err(at, kind))
}

/// The three things a header says.
struct Header {
    dtype: Dtype,
    fortran: bool,
    shape: Vec<usize>,
}

type HeaderError = (usize, NpyErrorKind);

impl Header {
    fn parse(text: &str) -> Result<Header, HeaderError> {
        let mut p = Parser { text, pos: 0 };
        p.skip_space();
        let first = p.pos;
        let lit = p.value(0)?;
        p.skip_space();
        if p.pos < text.len() {
            return Err(p.syntax(format!(
                "unexpected {} after the end of the value",
                p.describe_here()
            )));
        }
        let Lit::Dict(entries) = lit else {
            return Err((
                first,
                NpyErrorKind::HeaderNotDict {
                    found: lit.describe(),
                },
            ));
        };
        let mut descr = None;
        let mut fortran = None;
        let mut shape = None;
        for (key_pos, key, (val_pos, val)) in entries {
            let slot = match &key {
                Lit::Str(k) if k == "descr" => ("descr", &mut descr),
                Lit::Str(k) if k == "fortran_order" => ("fortran_order", &mut fortran),
                Lit::Str(k) if k == "shape" => ("shape", &mut shape),
                other => return Err((key_pos, NpyErrorKind::UnexpectedKey(other.repr()))),
            };
            if slot.1.is_some() {
                return Err((key_pos, NpyErrorKind::DuplicateKey(slot.0)));
            }
            *slot.1 = Some((val_pos, val));
        }
        let (descr_pos, descr) = descr.ok_or((0, NpyErrorKind::MissingKey("descr")))?;
        let (fortran_pos, fortran) =
            fortran.ok_or((0, NpyErrorKind::MissingKey("fortran_order")))?;
        let (shape_pos, shape) = shape.ok_or((0, NpyErrorKind::MissingKey("shape")))?;

        let dtype = match descr {
            Lit::Str(s) => {
                Dtype::from_descr(&s).ok_or((descr_pos, NpyErrorKind::UnknownDtype(s.clone())))?
            }
            Lit::List(_) => return Err((descr_pos, NpyErrorKind::StructuredDtype)),
            other => {
                return Err((
                    descr_pos,
                    NpyErrorKind::BadValue {
                        key: "descr",
                        found: other.describe(),
                        want: "not a dtype string",
                    },
                ));
            }
        };
        let fortran = match fortran {
            Lit::Bool(b) => b,
            other => {
                return Err((
                    fortran_pos,
                    NpyErrorKind::BadValue {
                        key: "fortran_order",
                        found: other.describe(),
                        want: "not True or False",
                    },
                ));
            }
        };
        let bad_shape = |found: &Lit| {
            (
                shape_pos,
                NpyErrorKind::BadValue {
                    key: "shape",
                    found: found.describe(),
                    want: "not a tuple of sizes (non-negative integers)",
                },
            )
        };
        let Lit::Tuple(dims) = &shape else {
            return Err(bad_shape(&shape));
        };
        let mut sizes = Vec::with_capacity(dims.len());
        for d in dims {
            match d {
                Lit::Int(n) => match usize::try_from(*n) {
                    Ok(n) => sizes.push(n),
                    Err(_) => return Err(bad_shape(&shape)),
                },
                _ => return Err(bad_shape(&shape)),
            }
        }
        if !(1..=2).contains(&sizes.len()) {
            return Err((shape_pos, NpyErrorKind::Dimensions(sizes.len())));
        }
        Ok(Header {
            dtype,
            fortran,
            shape: sizes,
        })
    }
}

/// The shape as Python prints a tuple: `(3,)`, `(65, 1000)`.
fn shape_repr(shape: &[usize]) -> String {
    match shape {
        [n] => format!("({n},)"),
        _ => {
            let parts: Vec<String> = shape.iter().map(usize::to_string).collect();
            format!("({})", parts.join(", "))
        }
    }
}

/// The values of `data` (everything after the header, which starts at file offset `at`).
fn decode(h: Header, data: &[u8], at: usize) -> Result<Array, (Option<usize>, NpyErrorKind)> {
    let shape = shape_repr(&h.shape);
    let count = h.shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
    let Some(want) = count.and_then(|c| c.checked_mul(h.dtype.bytes)) else {
        return Err((
            None,
            NpyErrorKind::TooLarge {
                shape,
                dtype: h.dtype,
            },
        ));
    };
    if data.len() != want {
        let (shape, dtype, found) = (shape, h.dtype, data.len());
        let kind = if found < want {
            NpyErrorKind::Truncated {
                shape,
                dtype,
                want,
                found,
            }
        } else {
            NpyErrorKind::TrailingBytes {
                shape,
                dtype,
                want,
                found,
            }
        };
        return Err((Some(at), kind));
    }
    let mut values = Vec::with_capacity(want / h.dtype.bytes.max(1));
    for (i, chunk) in data.chunks_exact(h.dtype.bytes).enumerate() {
        match h.dtype.decode(chunk) {
            Ok(v) => values.push(v),
            Err(value) => {
                return Err((
                    Some(at + i * h.dtype.bytes),
                    NpyErrorKind::InexactInteger { index: i, value },
                ));
            }
        }
    }
    // With one row or one column the orders agree; and with no elements at all a shape
    // may claim 2^63 rows, too many to go through even doing nothing with each.
    if let (true, &[rows, cols]) = (h.fortran, &h.shape[..])
        && rows > 1
        && cols > 1
    {
        // Column-major on disk: element (r, c) sits at c·rows + r.
        let mut c_order = Vec::with_capacity(values.len());
        for r in 0..rows {
            c_order.extend((0..cols).map(|c| values[c * rows + r]));
        }
        values = c_order;
    }
    Ok(Array {
        shape: h.shape,
        data: values,
        dtype: h.dtype,
    })
}

/// Bytes as a quoted string with non-printable ones escaped (`"\x93NUMPZ"`).
fn escape(b: &[u8]) -> String {
    let mut s = String::from("\"");
    for &c in b {
        match c {
            b'"' => s.push_str("\\\""),
            b'\\' => s.push_str("\\\\"),
            0x20..=0x7e => s.push(char::from(c)),
            _ => s.push_str(&format!("\\x{c:02x}")),
        }
    }
    s.push('"');
    s
}

/// A Python literal, as far as `.npy` headers use them.
#[derive(Debug, Clone, PartialEq)]
enum Lit {
    Str(String),
    Bool(bool),
    None,
    Int(i128),
    Tuple(Vec<Lit>),
    List(Vec<Lit>),
    /// Entries with the positions of each key and value.
    Dict(Vec<(usize, Lit, (usize, Lit))>),
}

impl Lit {
    /// "a tuple (3, 4)"-style words for error messages.
    fn describe(&self) -> String {
        let what = match self {
            Lit::Str(_) => "a string",
            Lit::Bool(_) => "a boolean",
            Lit::None => "None",
            Lit::Int(_) => "an integer",
            Lit::Tuple(_) => "a tuple",
            Lit::List(_) => "a list",
            Lit::Dict(_) => "a dict",
        };
        if matches!(self, Lit::None) {
            return what.into();
        }
        format!("{what} {}", self.repr())
    }

    /// Python's repr, cut short after about 60 characters.
    fn repr(&self) -> String {
        let mut s = String::new();
        self.repr_into(&mut s);
        if s.chars().count() > 60 {
            s = s.chars().take(57).collect::<String>() + "...";
        }
        s
    }

    fn repr_into(&self, s: &mut String) {
        if s.len() > 80 {
            return;
        }
        let seq = |s: &mut String, open: &str, close: &str, items: &[Lit]| {
            s.push_str(open);
            for (i, it) in items.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                it.repr_into(s);
            }
            if open == "(" && items.len() == 1 {
                s.push(',');
            }
            s.push_str(close);
        };
        match self {
            Lit::Str(v) => {
                s.push('\'');
                for c in v.chars() {
                    match c {
                        '\'' => s.push_str("\\'"),
                        '\\' => s.push_str("\\\\"),
                        c if c.is_control() => s.push_str(&format!("\\x{:02x}", u32::from(c))),
                        c => s.push(c),
                    }
                }
                s.push('\'');
            }
            Lit::Bool(true) => s.push_str("True"),
            Lit::Bool(false) => s.push_str("False"),
            Lit::None => s.push_str("None"),
            Lit::Int(n) => s.push_str(&n.to_string()),
            Lit::Tuple(items) => seq(s, "(", ")", items),
            Lit::List(items) => seq(s, "[", "]", items),
            Lit::Dict(entries) => {
                s.push('{');
                for (i, (_, k, (_, v))) in entries.iter().enumerate() {
                    if i > 0 {
                        s.push_str(", ");
                    }
                    k.repr_into(s);
                    s.push_str(": ");
                    v.repr_into(s);
                }
                s.push('}');
            }
        }
    }
}

/// A recursive-descent parser of Python literals over the header text.
struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            self.pos += 1;
        }
    }

    fn syntax(&self, msg: String) -> HeaderError {
        (self.pos, NpyErrorKind::HeaderSyntax(msg))
    }

    fn describe_here(&self) -> String {
        match self.peek() {
            None => "end of header".into(),
            Some(c) => format!("{c:?}"),
        }
    }

    fn value(&mut self, depth: usize) -> Result<Lit, HeaderError> {
        if depth > MAX_DEPTH {
            return Err(self.syntax(format!("nested more than {MAX_DEPTH} levels deep")));
        }
        self.skip_space();
        match self.peek() {
            Some('{') => self.dict(depth),
            Some('(') => self.sequence(depth, ')').map(Lit::Tuple),
            Some('[') => self.sequence(depth, ']').map(Lit::List),
            Some('\'' | '"') => self.string().map(Lit::Str),
            Some(c) if c.is_ascii_digit() || c == '-' || c == '+' => self.int(),
            Some(c) if c.is_ascii_alphabetic() || c == '_' => self.word(),
            _ => Err(self.syntax(format!("expected a value, found {}", self.describe_here()))),
        }
    }

    fn expect(&mut self, want: char) -> Result<(), HeaderError> {
        self.skip_space();
        if self.peek() == Some(want) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.syntax(format!("expected {want:?}, found {}", self.describe_here())))
        }
    }

    fn dict(&mut self, depth: usize) -> Result<Lit, HeaderError> {
        self.expect('{')?;
        let mut entries = Vec::new();
        loop {
            self.skip_space();
            if self.peek() == Some('}') {
                self.pos += 1;
                return Ok(Lit::Dict(entries));
            }
            let key_pos = self.pos;
            let key = self.value(depth + 1)?;
            if matches!(key, Lit::List(_) | Lit::Dict(_)) {
                return Err((
                    key_pos,
                    NpyErrorKind::HeaderSyntax(format!(
                        "{} cannot be a dict key (it is unhashable)",
                        key.describe()
                    )),
                ));
            }
            self.expect(':')?;
            self.skip_space();
            let val_pos = self.pos;
            let val = self.value(depth + 1)?;
            entries.push((key_pos, key, (val_pos, val)));
            self.skip_space();
            match self.peek() {
                Some(',') => self.pos += 1,
                Some('}') => {}
                _ => {
                    return Err(self.syntax(format!(
                        "expected ',' or '}}' in a dict, found {}",
                        self.describe_here()
                    )));
                }
            }
        }
    }

    /// The items of a tuple or list; `(x)` without a comma is just `x` in Python, which
    /// a header never needs, so we call it a one-tuple only when the comma is there.
    fn sequence(&mut self, depth: usize, close: char) -> Result<Vec<Lit>, HeaderError> {
        let open_pos = self.pos;
        self.pos += 1;
        let mut items = Vec::new();
        let mut comma_after_last = false;
        loop {
            self.skip_space();
            if self.peek() == Some(close) {
                self.pos += 1;
                if close == ')' && items.len() == 1 && !comma_after_last {
                    return Err((
                        open_pos,
                        NpyErrorKind::HeaderSyntax(
                            "a parenthesised value without a comma is not a tuple \
                             (a one-item tuple is written (n,))"
                                .into(),
                        ),
                    ));
                }
                return Ok(items);
            }
            items.push(self.value(depth + 1)?);
            self.skip_space();
            match self.peek() {
                Some(',') => {
                    self.pos += 1;
                    comma_after_last = true;
                }
                Some(c) if c == close => comma_after_last = false,
                _ => {
                    return Err(self.syntax(format!(
                        "expected ',' or {close:?}, found {}",
                        self.describe_here()
                    )));
                }
            }
        }
    }

    fn string(&mut self) -> Result<String, HeaderError> {
        let start = self.pos;
        let Some(quote) = self.bump() else {
            return Err(self.syntax("expected a string".into()));
        };
        let mut s = String::new();
        loop {
            match self.bump() {
                None | Some('\n') => {
                    return Err((
                        start,
                        NpyErrorKind::HeaderSyntax("a string is not closed".into()),
                    ));
                }
                Some('\\') => match self.bump() {
                    None => {
                        return Err((
                            start,
                            NpyErrorKind::HeaderSyntax("a string is not closed".into()),
                        ));
                    }
                    // Only the escapes a dtype or key could contain are decoded; the
                    // others keep their backslash, as Python keeps unknown escapes.
                    Some(c @ ('\\' | '\'' | '"')) => s.push(c),
                    Some(c) => {
                        s.push('\\');
                        s.push(c);
                    }
                },
                Some(c) if c == quote => return Ok(s),
                Some(c) => s.push(c),
            }
        }
    }

    fn int(&mut self) -> Result<Lit, HeaderError> {
        let start = self.pos;
        let negative = match self.peek() {
            Some('-') => {
                self.pos += 1;
                true
            }
            Some('+') => {
                self.pos += 1;
                false
            }
            _ => false,
        };
        let digits_at = self.pos;
        let mut n: i128 = 0;
        while let Some(d) = self.peek().and_then(|c| c.to_digit(10)) {
            self.pos += 1;
            n = n
                .checked_mul(10)
                .and_then(|n| n.checked_add(i128::from(d)))
                .ok_or((
                    start,
                    NpyErrorKind::HeaderSyntax("an integer too large to be a size".into()),
                ))?;
        }
        if self.pos == digits_at {
            return Err(self.syntax(format!("expected digits, found {}", self.describe_here())));
        }
        // Python 2 wrote long integers with an L suffix (numpy still reads them).
        if matches!(self.peek(), Some('L' | 'l')) {
            self.pos += 1;
        }
        if self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_')
        {
            return Err(self.syntax(format!(
                "expected an integer, found {} inside a number",
                self.describe_here()
            )));
        }
        Ok(Lit::Int(if negative { -n } else { n }))
    }

    fn word(&mut self) -> Result<Lit, HeaderError> {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            self.pos += 1;
        }
        let word = &self.text[start..self.pos];
        match word {
            "True" => Ok(Lit::Bool(true)),
            "False" => Ok(Lit::Bool(false)),
            "None" => Ok(Lit::None),
            // Python 2 unicode literals (u'<f4'), as old numpy wrote with unicode_literals.
            "u" | "U" if matches!(self.peek(), Some('\'' | '"')) => self.string().map(Lit::Str),
            _ => Err((
                start,
                NpyErrorKind::HeaderSyntax(format!("{word:?} is not a literal")),
            )),
        }
    }
}

/// Encodes a `rows × cols` float32 array (C order, `data` row after row) as the bytes of a
/// version 1.0 `.npy` file, exactly as `np.save` writes it. Errors call it
/// `<in-memory .npy>`.
pub fn encode_f32(rows: usize, cols: usize, data: &[f32]) -> Result<Vec<u8>, NpyError> {
    encode_named(rows, cols, data, "<in-memory .npy>")
}

/// Writes a `rows × cols` float32 array (C order, `data` row after row) to `path` as a
/// version 1.0 `.npy` file that `np.load` reads (the bytes `np.save` writes).
pub fn write_f32(
    path: impl AsRef<Path>,
    rows: usize,
    cols: usize,
    data: &[f32],
) -> Result<(), NpyError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let bytes = encode_named(rows, cols, data, &name)?;
    std::fs::write(path, bytes).map_err(|e| NpyError::new(&name, None, NpyErrorKind::Write(e)))
}

fn encode_named(rows: usize, cols: usize, data: &[f32], name: &str) -> Result<Vec<u8>, NpyError> {
    let fail = |msg: String| NpyError::new(name, None, NpyErrorKind::Encode(msg));
    match rows.checked_mul(cols) {
        Some(n) if n == data.len() => {}
        _ => {
            return Err(fail(format!(
                "{rows} rows × {cols} columns is not the {} values given",
                data.len()
            )));
        }
    }
    // numpy's _write_array_header: the dict with sorted keys, room for the first axis to
    // grow, then spaces and a newline up to the alignment.
    let mut header = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
        Dtype::F4.descr(),
        shape_repr(&[rows, cols])
    );
    let digits = rows.to_string().len();
    header.push_str(&" ".repeat(GROWTH_AXIS_MAX_DIGITS.saturating_sub(digits)));
    let unpadded = MAGIC.len() + 2 + 2 + header.len() + 1;
    let pad = ALIGN - unpadded % ALIGN;
    header.push_str(&" ".repeat(pad));
    header.push('\n');
    // The header is at most ~200 bytes: two 20-digit sizes and the padding.
    let header_len = u16::try_from(header.len())
        .map_err(|_| fail(format!("a header of {} bytes", header.len())))?;
    let mut out = Vec::with_capacity(10 + header.len() + 4 * data.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&header_len.to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    for v in data {
        out.extend_from_slice(&v.to_le_bytes());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A file with the given version and header text (padded as numpy does) and data.
    fn npy(version: (u8, u8), header: &str, data: &[u8]) -> Vec<u8> {
        let prefix = if version.0 == 1 { 10 } else { 12 };
        let mut h = header.to_string();
        let pad = ALIGN - (prefix + h.len() + 1) % ALIGN;
        h.push_str(&" ".repeat(pad));
        h.push('\n');
        let mut b = MAGIC.to_vec();
        b.extend_from_slice(&[version.0, version.1]);
        if version.0 == 1 {
            b.extend_from_slice(&(h.len() as u16).to_le_bytes());
        } else {
            b.extend_from_slice(&(h.len() as u32).to_le_bytes());
        }
        b.extend_from_slice(h.as_bytes());
        b.extend_from_slice(data);
        b
    }

    fn dict(descr: &str, fortran: bool, shape: &str) -> String {
        let f = if fortran { "True" } else { "False" };
        format!("{{'descr': '{descr}', 'fortran_order': {f}, 'shape': {shape}, }}")
    }

    fn err(bytes: &[u8]) -> String {
        parse(bytes, "t.npy").unwrap_err().to_string()
    }

    fn assert_mentions(msg: &str, parts: &[&str]) {
        for p in parts {
            assert!(msg.contains(p), "{msg:?} should mention {p:?}");
        }
    }

    #[test]
    fn f32_round_trip_and_numpy_layout() {
        let data: Vec<f32> = (0..12).map(|i| i as f32 * 0.5 - 2.0).collect();
        let bytes = encode_f32(3, 4, &data).unwrap();
        assert_eq!(&bytes[..10], b"\x93NUMPY\x01\x00\x76\x00");
        assert_eq!(bytes.len(), 128 + 48);
        let header = std::str::from_utf8(&bytes[10..128]).unwrap();
        assert!(header.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }"));
        assert!(header.ends_with(" \n"));
        let a = parse(&bytes, "rt.npy").unwrap();
        assert_eq!(a.shape, vec![3, 4]);
        assert_eq!(a.dtype, Dtype::F4);
        let want: Vec<f64> = data.iter().map(|&v| f64::from(v)).collect();
        assert_eq!(a.data, want);
        assert_eq!(a.row(1).unwrap(), &want[4..8]);
        assert!(a.row(3).is_none());
    }

    #[test]
    fn special_values_and_empty_arrays_round_trip() {
        let special = [
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            -0.0,
            f32::MIN_POSITIVE / 4.0,
            f32::MAX,
        ];
        let a = parse(&encode_f32(2, 3, &special).unwrap(), "s.npy").unwrap();
        for (got, want) in a.data.iter().zip(special) {
            assert_eq!((*got as f32).to_bits(), want.to_bits());
        }
        for (r, c) in [(0, 0), (0, 5), (5, 0)] {
            let a = parse(&encode_f32(r, c, &[]).unwrap(), "e.npy").unwrap();
            assert_eq!(a.shape, vec![r, c]);
            assert!(a.data.is_empty());
        }
    }

    #[test]
    fn the_header_is_aligned_whatever_the_shape() {
        for (r, c) in [(1, 1), (65, 2_500), (123_456_789, 0), (0, usize::MAX)] {
            let bytes = encode_f32(r, c, &vec![0.0; r * c]).unwrap_or_else(|e| panic!("{e}"));
            let header_len = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
            assert_eq!((10 + header_len) % 64, 0, "{r}×{c}");
            assert_eq!(bytes[9 + header_len], b'\n');
        }
    }

    #[test]
    fn encode_rejects_a_shape_that_does_not_match() {
        let e = encode_f32(2, 3, &[0.0; 5]).unwrap_err().to_string();
        assert_mentions(&e, &["<in-memory .npy>", "2 rows × 3 columns", "5 values"]);
        assert!(encode_f32(usize::MAX, 2, &[]).is_err());
    }

    #[test]
    fn write_and_read_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.npy");
        write_f32(&p, 2, 2, &[1.0, 2.0, 3.0, 4.0]).unwrap();
        let a = read(&p).unwrap();
        assert_eq!(a.data, vec![1.0, 2.0, 3.0, 4.0]);
        let missing = dir.path().join("missing.npy");
        let e = read(&missing).unwrap_err();
        let io = std::fs::read(&missing).unwrap_err();
        crate::test_util::assert_io_error_shown_once(&e, &io);
        let e = e.to_string();
        assert_mentions(&e, &["missing.npy", "cannot read"]);
        let e = write_f32(dir.path().join("no/such/dir.npy"), 1, 1, &[0.0])
            .unwrap_err()
            .to_string();
        assert_mentions(&e, &["dir.npy", "cannot write"]);
    }

    #[test]
    fn fortran_order_comes_back_in_c_order() {
        // The 2×3 matrix [[1, 2, 3], [4, 5, 6]] stored column by column.
        let data: Vec<u8> = [1.0f64, 4.0, 2.0, 5.0, 3.0, 6.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let a = parse(&npy((1, 0), &dict("<f8", true, "(2, 3)"), &data), "f.npy").unwrap();
        assert_eq!(a.shape, vec![2, 3]);
        assert_eq!(a.data, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        // 1-D Fortran is the same as C.
        let a = parse(&npy((1, 0), &dict("<f8", true, "(6,)"), &data), "f.npy").unwrap();
        assert_eq!(a.data, vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
        assert!(a.row(0).is_none());
    }

    #[test]
    fn fortran_order_with_no_elements_is_not_walked_row_by_row() {
        // Found in an audit: the reorder went through every row, 2^63-1 of them here,
        // each with no element.
        for shape in ["(9223372036854775807, 0)", "(0, 9223372036854775807)"] {
            let a = parse(&npy((1, 0), &dict("<f8", true, shape), &[]), "f.npy").unwrap();
            assert!(a.data.is_empty(), "{shape}");
        }
        let a = parse(
            &npy((1, 0), &dict("<f8", true, "(1000000, 0)"), &[]),
            "f.npy",
        )
        .unwrap();
        assert_eq!(a.shape, vec![1_000_000, 0]);
    }

    #[test]
    fn every_dtype_and_version() {
        let cases: [(&str, Vec<u8>, Vec<f64>); 11] = [
            (
                "<f4",
                [1.5f32, -2.0]
                    .iter()
                    .flat_map(|v| v.to_le_bytes())
                    .collect(),
                vec![1.5, -2.0],
            ),
            (
                ">f4",
                [1.5f32, -2.0]
                    .iter()
                    .flat_map(|v| v.to_be_bytes())
                    .collect(),
                vec![1.5, -2.0],
            ),
            (
                ">f8",
                [0.1f64, 1e300]
                    .iter()
                    .flat_map(|v| v.to_be_bytes())
                    .collect(),
                vec![0.1, 1e300],
            ),
            ("|i1", vec![0x80, 0x7f], vec![-128.0, 127.0]),
            ("|u1", vec![0x80, 0xff], vec![128.0, 255.0]),
            (
                "<i2",
                [-32768i16, 7]
                    .iter()
                    .flat_map(|v| v.to_le_bytes())
                    .collect(),
                vec![-32768.0, 7.0],
            ),
            (
                ">i2",
                [-3i16, 300].iter().flat_map(|v| v.to_be_bytes()).collect(),
                vec![-3.0, 300.0],
            ),
            (
                "<i4",
                [i32::MIN, 1].iter().flat_map(|v| v.to_le_bytes()).collect(),
                vec![-2147483648.0, 1.0],
            ),
            (
                "<u4",
                [u32::MAX, 0].iter().flat_map(|v| v.to_le_bytes()).collect(),
                vec![4294967295.0, 0.0],
            ),
            (
                "<i8",
                [-(1i64 << 53), 5]
                    .iter()
                    .flat_map(|v| v.to_le_bytes())
                    .collect(),
                vec![-9007199254740992.0, 5.0],
            ),
            (
                ">u2",
                [65535u16, 1].iter().flat_map(|v| v.to_be_bytes()).collect(),
                vec![65535.0, 1.0],
            ),
        ];
        for version in [(1, 0), (2, 0), (3, 0)] {
            for (descr, data, want) in &cases {
                let bytes = npy(version, &dict(descr, false, "(2,)"), data);
                let a = parse(&bytes, "d.npy").unwrap_or_else(|e| panic!("{descr}: {e}"));
                assert_eq!(&a.data, want, "{descr} {version:?}");
                assert_eq!(a.shape, vec![2]);
                // The descr we report is numpy's normal form.
                let normal = descr.replace("<i1", "|i1");
                assert_eq!(a.dtype.descr(), normal);
            }
        }
        // '<' is accepted on one-byte types too (numpy reads it).
        let a = parse(&npy((1, 0), &dict("<u1", false, "(1,)"), &[9]), "d.npy").unwrap();
        assert_eq!(a.data, vec![9.0]);
    }

    #[test]
    fn unusual_but_valid_headers() {
        // Keys in any order, double quotes, no trailing comma, Python 2 longs and u''.
        let h = "{\"shape\": (2L, 1L), u'descr': \"<f4\", 'fortran_order': False}";
        let data: Vec<u8> = [1.0f32, 2.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        let a = parse(&npy((1, 0), h, &data), "u.npy").unwrap();
        assert_eq!((a.shape.clone(), a.data), (vec![2, 1], vec![1.0, 2.0]));
        // A UTF-8 header in version 3 (numpy uses it for non-latin-1 field names).
        let h = format!("{} ", dict("<f4", false, "(2,)"));
        assert!(parse(&npy((3, 0), &h, &data), "v3.npy").is_ok());
    }

    #[test]
    fn inexact_64_bit_integers_are_refused() {
        let data: Vec<u8> = [1i64, (1 << 53) + 1]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let e = err(&npy((1, 0), &dict("<i8", false, "(2,)"), &data));
        assert_mentions(&e, &["t.npy", "element 1", "9007199254740993", "byte 136"]);
        let data: Vec<u8> = [u64::MAX].iter().flat_map(|v| v.to_be_bytes()).collect();
        let e = err(&npy((1, 0), &dict(">u8", false, "(1,)"), &data));
        assert_mentions(&e, &["element 0", "18446744073709551615"]);
    }

    #[test]
    fn malformed_files_name_the_file_and_the_problem() {
        let ok_header = dict("<f4", false, "(2, 3)");
        let data = vec![0u8; 24];
        let cases: Vec<(Vec<u8>, Vec<&str>)> = vec![
            (
                b"PK\x03\x04zipfile".to_vec(),
                vec!["byte 0", "not a NumPy .npy file", "\"PK\\x03\\x04zi\""],
            ),
            (b"".to_vec(), vec!["only 0 bytes", "takes 10"]),
            (b"\x93NUM".to_vec(), vec!["only 4 bytes"]),
            (
                b"\x93NUMPY\x01\x00\x05".to_vec(),
                vec!["only 9 bytes", "takes 10"],
            ),
            (
                b"\x93NUMPY\x02\x00\x05\x00".to_vec(),
                vec!["only 10 bytes", "takes 12"],
            ),
            (
                b"\x93NUMPY\x04\x00\x00\x00\x00\x00".to_vec(),
                vec!["byte 6", "version 4.0"],
            ),
            (
                b"\x93NUMPY\x01\x00\xff\x00{}".to_vec(),
                vec!["byte 8", "truncated header", "255 bytes", "only 2"],
            ),
            (
                npy((1, 0), "[1, 2]", &[]),
                vec!["byte 10", "not a dict but a list [1, 2]"],
            ),
            (
                npy((1, 0), "{'descr': '<f4', 'shape': (2, 3)}", &data),
                vec!["no \"fortran_order\" key"],
            ),
            (
                npy((1, 0), "{'descr': '<f4', 'fortran_order': False}", &data),
                vec!["no \"shape\" key"],
            ),
            (
                npy((1, 0), "{'fortran_order': False, 'shape': (2, 3)}", &data),
                vec!["no \"descr\" key"],
            ),
            (
                npy((1, 0), &ok_header.replace("}", "'extra': 1}"), &data),
                vec!["key 'extra'"],
            ),
            (
                npy((1, 0), &ok_header.replace("}", "'shape': (6,)}"), &data),
                vec!["\"shape\" twice"],
            ),
            (
                npy((1, 0), &dict("<c16", false, "(2, 3)"), &data),
                vec!["byte 20", "unsupported dtype \"<c16\""],
            ),
            (
                npy((1, 0), &dict("|f4", false, "(2, 3)"), &data),
                vec!["unsupported dtype \"|f4\""],
            ),
            (
                npy((1, 0), &dict("O", false, "(2, 3)"), &data),
                vec!["unsupported dtype \"O\""],
            ),
            (
                npy(
                    (1, 0),
                    "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}",
                    &data,
                ),
                vec!["structured dtypes"],
            ),
            (
                npy(
                    (1, 0),
                    "{'descr': 4, 'fortran_order': False, 'shape': (2,)}",
                    &data,
                ),
                vec!["'descr' is an integer 4, not a dtype string"],
            ),
            (
                npy((1, 0), &ok_header.replace("False", "0"), &data),
                vec!["'fortran_order' is an integer 0, not True or False"],
            ),
            (
                npy((1, 0), &dict("<f4", false, "[2, 3]"), &data),
                vec!["'shape' is a list [2, 3]"],
            ),
            (
                npy((1, 0), &dict("<f4", false, "(2, -3)"), &data),
                vec!["'shape' is a tuple (2, -3)"],
            ),
            (
                npy((1, 0), &dict("<f4", false, "(2, 'a')"), &data),
                vec!["'shape' is a tuple (2, 'a')"],
            ),
            (
                npy((1, 0), &dict("<f4", false, "()"), &data),
                vec!["0-D arrays are not supported"],
            ),
            (
                npy((1, 0), &dict("<f4", false, "(1, 2, 3)"), &data),
                vec!["3-D arrays"],
            ),
            (
                npy((1, 0), &dict("<f4", false, "(6)"), &data),
                vec!["without a comma is not a tuple"],
            ),
            (
                npy((1, 0), &dict("<f4", false, "(2, 3)"), &data[..20]),
                vec![
                    "byte 128",
                    "truncated data",
                    "shape (2, 3) of <f4 needs 24 bytes but only 20",
                ],
            ),
            (
                npy((1, 0), &dict("<f4", false, "(5,)"), &data),
                vec![
                    "byte 128",
                    "shape (5,) of <f4 needs 20 bytes but 24",
                    "does not match",
                ],
            ),
            (
                npy(
                    (1, 0),
                    &dict("<f8", false, "(4611686018427387904, 4)"),
                    &data,
                ),
                vec!["too large to address"],
            ),
            (
                npy(
                    (1, 0),
                    &dict("<f8", false, "(99999999999999999999999999999999999999999,)"),
                    &data,
                ),
                vec!["integer too large"],
            ),
            (
                npy(
                    (1, 0),
                    "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } x",
                    &data,
                ),
                vec!["unexpected 'x' after the end"],
            ),
            (
                npy((1, 0), "{'descr': '<f4' 'shape': (2,)}", &data),
                vec!["expected ',' or '}' in a dict"],
            ),
            (
                npy((1, 0), "{'descr: '<f4'}", &data),
                vec!["byte 20", "expected ':', found '<'"],
            ),
            (
                npy((1, 0), "{'descr': '<f4", &data),
                vec!["byte 20", "string is not closed"],
            ),
            (
                npy((1, 0), "{'descr': nan}", &data),
                vec!["\"nan\" is not a literal"],
            ),
            (
                npy((1, 0), "{'descr': 1.5}", &data),
                vec!["'.' inside a number"],
            ),
            (npy((1, 0), "{[1]: 2}", &data), vec!["cannot be a dict key"]),
            (npy((1, 0), "{'a' 1}", &data), vec!["expected ':'"]),
            (
                npy((1, 0), "", &data),
                vec!["expected a value, found end of header"],
            ),
            (
                npy((1, 0), &"[".repeat(100), &data),
                vec!["nested more than 32 levels"],
            ),
        ];
        for (bytes, parts) in cases {
            let msg = err(&bytes);
            assert!(msg.starts_with("t.npy: "), "{msg}");
            assert_mentions(&msg, &parts);
        }
        // A version 3 header that is not UTF-8.
        let mut b = npy((3, 0), &dict("<f4", false, "(2, 3)"), &data);
        b[14] = 0xff;
        assert_mentions(&err(&b), &["byte 14", "not valid UTF-8"]);
        // In a latin-1 header the same byte is a character: the place is still a byte.
        let mut b = npy((1, 0), &dict("<f4", false, "(2, 3)"), &data);
        b[22] = 0xe9;
        assert_mentions(&err(&b), &["byte 20", "unsupported dtype \"<é4\""]);
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = parse(&bytes, "fuzz.npy");
        }

        /// Arbitrary headers behind a valid preamble reach the literal parser.
        #[test]
        fn arbitrary_headers_never_panic(
            header in "[\\{\\}\\(\\)\\[\\]',: 0-9a-zA-Z<>|\"\\\\-]{0,80}",
            data in proptest::collection::vec(any::<u8>(), 0..40),
        ) {
            for version in [(1, 0), (3, 0)] {
                let _ = parse(&npy(version, &header, &data), "fuzz.npy");
            }
        }

        /// Valid headers with arbitrary dtypes, shapes, orders and data never panic, and
        /// what parses has as many values as its shape says.
        #[test]
        fn arbitrary_valid_headers_never_panic(
            descr in "[<>|=]?[fiucbO][0-9]{1,2}",
            fortran in any::<bool>(),
            dims in proptest::collection::vec(0usize..6, 0..4),
            data in proptest::collection::vec(any::<u8>(), 0..120),
        ) {
            let shape = if dims.len() == 1 { format!("({},)", dims[0]) } else {
                format!("({})", dims.iter().map(usize::to_string).collect::<Vec<_>>().join(", "))
            };
            if let Ok(a) = parse(&npy((1, 0), &dict(&descr, fortran, &shape), &data), "p.npy") {
                prop_assert_eq!(a.data.len(), a.shape.iter().product::<usize>());
            }
        }

        #[test]
        fn f32_round_trip(rows in 0usize..6, cols in 0usize..6, seed in any::<u32>()) {
            let data: Vec<f32> = (0..rows * cols)
                .map(|i| f32::from_bits(seed.wrapping_mul(2_654_435_761).wrapping_add(i as u32 * 40_503)))
                .collect();
            let a = parse(&encode_f32(rows, cols, &data).unwrap(), "p.npy").unwrap();
            prop_assert_eq!(a.shape, vec![rows, cols]);
            // NaNs compare as NaN: the f32 -> f64 conversion may quiet a signalling one.
            let key = |v: f32| if v.is_nan() { None } else { Some(v.to_bits()) };
            let back: Vec<_> = a.data.iter().map(|&v| key(v as f32)).collect();
            let want: Vec<_> = data.iter().map(|&v| key(v)).collect();
            prop_assert_eq!(back, want);
        }
    }
}
