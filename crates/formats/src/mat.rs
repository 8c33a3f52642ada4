//! MATLAB `.mat` files: a reader for level 4 and level 5 (v5, v6, v7) files and a writer for
//! level-4 numeric matrices.
//!
//! What it is for: the challenges' data. PhysioNet/CinC 2017 ships each ECG as a level-4
//! file holding one `val` 1×N int16 matrix, and the BNCI P300 speller files are level-5
//! files holding a struct of double matrices inside compressed elements. The reader is a
//! general one: any level-4 numeric or text matrix; any level-5 numeric class (including
//! data stored in a smaller type, converted as MATLAB does), complex parts, logical and
//! char arrays, structs and cell arrays nested to any depth up to a limit, in either byte
//! order, compressed or not.
//!
//! What it is not: it does not read MAT v7.3 files (those are HDF5 containers and are
//! refused with a clear error), and it does not decode sparse arrays, objects, function
//! handles or MCOS opaque values (`string`, `table`, ...): those variables are kept, in
//! file order and with their names, as [`Value::Unsupported`], so that the rest of the
//! file stays readable and asking for such a variable's data names it and says why. The
//! only writer is the level-4 one, which is what the synthetic CinC 2017 data needs.
//!
//! ```no_run
//! use formats::mat::MatFile;
//! let file = MatFile::read("s6.mat")?;
//! let train = file.get("s6")?.field("train")?.as_f64_matrix()?;
//! println!("{} rows × {} columns", train.rows, train.cols);
//! # Ok::<(), formats::mat::MatError>(())
//! ```
//!
//! Parsing never panics: every size read from the file is checked against the bytes that
//! are actually there before anything is allocated, products of dimensions use checked
//! arithmetic, nesting is capped ([`ReadOptions::max_depth`]) and so are the total size of
//! decompressed data ([`ReadOptions::max_decompressed`]) and the memory the values take
//! ([`ReadOptions::max_memory`]).

use std::fmt;
use std::io::{Read, Write};
use std::path::Path;

// ---------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------

/// Where in a file an error was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// The whole file (or the place is given in the message).
    File,
    /// A 0-based byte offset in the file.
    Byte(u64),
    /// A 0-based byte offset in the data decompressed from the compressed element whose
    /// tag starts at byte `element` of the file.
    Compressed { element: u64, offset: u64 },
    /// A variable, or a part of one (`s6.train`, `c{3}`), that an accessor was asked for.
    Variable(String),
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::File => Ok(()),
            Location::Byte(b) => write!(f, "byte {b}: "),
            Location::Compressed { element, offset } => write!(
                f,
                "byte {offset} of the data decompressed from the element at byte {element}: "
            ),
            Location::Variable(path) => write!(f, "{path}: "),
        }
    }
}

/// What went wrong, without the file name (see [`MatError`]).
///
/// I/O and zlib errors are part of the message and not also a `source()`: a caller
/// printing the chain (as `anyhow` does) would show them twice.
#[derive(Debug, thiserror::Error)]
pub enum MatErrorKind {
    #[error("cannot read the file: {0}")]
    Io(std::io::Error),
    #[error("cannot write the file: {0}")]
    WriteIo(std::io::Error),
    #[error("the file is empty")]
    Empty,
    #[error("MAT v7.3 (HDF5) is not supported; save the file with -v7 or older")]
    Hdf5,
    #[error("not a MAT file: {0}")]
    NotMat(String),
    #[error("truncated: {what} needs {needed} bytes but only {available} remain")]
    Truncated {
        what: String,
        needed: u64,
        available: u64,
    },
    #[error("{0}")]
    Malformed(String),
    #[error("{0} is not supported")]
    Unsupported(String),
    #[error(
        "the compressed data decompresses to more than {limit} bytes, the limit for this \
         file (ReadOptions::max_decompressed)"
    )]
    DecompressionLimit { limit: u64 },
    #[error("corrupt compressed data: {0}")]
    Zlib(std::io::Error),
    #[error("arrays are nested more than {limit} levels deep (ReadOptions::max_depth)")]
    TooDeep { limit: usize },
    #[error(
        "{what} of '{path}' would take {needed} bytes of memory, but only {left} of the \
         {limit} bytes the values of a file may take are left (ReadOptions::max_memory)"
    )]
    MemoryLimit {
        /// What was about to be allocated ("the 65536 blank characters").
        what: String,
        /// The value it belongs to, as MATLAB would write it (`c{3}`, `s.f`).
        path: String,
        needed: u64,
        left: u64,
        limit: u64,
    },
    #[error("no variable named '{0}' in the file")]
    NoVariable(String),
    #[error("the struct has no field '{field}' (its fields: {available})")]
    NoField { field: String, available: String },
    #[error("is {found}, not {expected}")]
    WrongType { expected: String, found: String },
    #[error("index {index} is out of range for {len} elements")]
    OutOfRange { index: usize, len: usize },
    #[error("cannot write '{name}': {reason}")]
    CannotWrite { name: String, reason: String },
}

/// A MAT-file error that names the file, the place in it and the problem.
#[derive(Debug)]
pub struct MatError {
    /// The name of the file (or other source) as the caller gave it.
    pub file: String,
    pub location: Location,
    pub kind: MatErrorKind,
}

impl MatError {
    fn new(file: &str, location: Location, kind: MatErrorKind) -> Self {
        MatError {
            file: file.to_string(),
            location,
            kind,
        }
    }
}

impl fmt::Display for MatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}{}", self.file, self.location, self.kind)
    }
}

impl std::error::Error for MatError {}

/// An array whose parts do not agree, refused by the constructors of [`Array`] and
/// [`NumericArray`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArrayError {
    #[error("the dimensions {dims} hold more elements than this machine can address")]
    TooLarge { dims: String },
    #[error("the dimensions {dims} need {expected} elements but {found} were given")]
    Length {
        dims: String,
        expected: usize,
        found: usize,
    },
    #[error("two fields are named '{0}'")]
    DuplicateField(String),
    #[error("the imaginary part is {imag} but the real part is {real}")]
    ImagClass {
        real: NumericClass,
        imag: NumericClass,
    },
}

// ---------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------

/// The byte order of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ByteOrder {
    Little,
    Big,
}

impl ByteOrder {
    fn u16(self, b: [u8; 2]) -> u16 {
        match self {
            ByteOrder::Little => u16::from_le_bytes(b),
            ByteOrder::Big => u16::from_be_bytes(b),
        }
    }
    fn u32(self, b: [u8; 4]) -> u32 {
        match self {
            ByteOrder::Little => u32::from_le_bytes(b),
            ByteOrder::Big => u32::from_be_bytes(b),
        }
    }
    fn u64(self, b: [u8; 8]) -> u64 {
        match self {
            ByteOrder::Little => u64::from_le_bytes(b),
            ByteOrder::Big => u64::from_be_bytes(b),
        }
    }
    fn i32(self, b: [u8; 4]) -> i32 {
        self.u32(b) as i32
    }
}

/// The numeric classes of MATLAB (`class(x)`), which are also the types the values are
/// stored in here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NumericClass {
    Double,
    Single,
    Int8,
    UInt8,
    Int16,
    UInt16,
    Int32,
    UInt32,
    Int64,
    UInt64,
}

impl NumericClass {
    /// MATLAB's name of the class (`"double"`, `"uint8"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            NumericClass::Double => "double",
            NumericClass::Single => "single",
            NumericClass::Int8 => "int8",
            NumericClass::UInt8 => "uint8",
            NumericClass::Int16 => "int16",
            NumericClass::UInt16 => "uint16",
            NumericClass::Int32 => "int32",
            NumericClass::UInt32 => "uint32",
            NumericClass::Int64 => "int64",
            NumericClass::UInt64 => "uint64",
        }
    }

    /// The bytes one value takes in [`NumericData`] (not in a file, which may store it
    /// in a smaller type).
    fn size_in_memory(self) -> usize {
        match self {
            NumericClass::Double => size_of::<f64>(),
            NumericClass::Single => size_of::<f32>(),
            NumericClass::Int8 => size_of::<i8>(),
            NumericClass::UInt8 => size_of::<u8>(),
            NumericClass::Int16 => size_of::<i16>(),
            NumericClass::UInt16 => size_of::<u16>(),
            NumericClass::Int32 => size_of::<i32>(),
            NumericClass::UInt32 => size_of::<u32>(),
            NumericClass::Int64 => size_of::<i64>(),
            NumericClass::UInt64 => size_of::<u64>(),
        }
    }
}

impl fmt::Display for NumericClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The elements of a numeric array in column-major order, in the type of their class.
#[derive(Debug, Clone, PartialEq)]
pub enum NumericData {
    Double(Vec<f64>),
    Single(Vec<f32>),
    Int8(Vec<i8>),
    UInt8(Vec<u8>),
    Int16(Vec<i16>),
    UInt16(Vec<u16>),
    Int32(Vec<i32>),
    UInt32(Vec<u32>),
    Int64(Vec<i64>),
    UInt64(Vec<u64>),
}

impl NumericData {
    pub fn class(&self) -> NumericClass {
        match self {
            NumericData::Double(_) => NumericClass::Double,
            NumericData::Single(_) => NumericClass::Single,
            NumericData::Int8(_) => NumericClass::Int8,
            NumericData::UInt8(_) => NumericClass::UInt8,
            NumericData::Int16(_) => NumericClass::Int16,
            NumericData::UInt16(_) => NumericClass::UInt16,
            NumericData::Int32(_) => NumericClass::Int32,
            NumericData::UInt32(_) => NumericClass::UInt32,
            NumericData::Int64(_) => NumericClass::Int64,
            NumericData::UInt64(_) => NumericClass::UInt64,
        }
    }

    pub fn len(&self) -> usize {
        match self {
            NumericData::Double(v) => v.len(),
            NumericData::Single(v) => v.len(),
            NumericData::Int8(v) => v.len(),
            NumericData::UInt8(v) => v.len(),
            NumericData::Int16(v) => v.len(),
            NumericData::UInt16(v) => v.len(),
            NumericData::Int32(v) => v.len(),
            NumericData::UInt32(v) => v.len(),
            NumericData::Int64(v) => v.len(),
            NumericData::UInt64(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The values as `f64`, as MATLAB's `double(x)` gives them: exact for every class but
    /// 64-bit integers beyond 2^53, which round to the nearest double.
    pub fn to_f64(&self) -> Vec<f64> {
        match self {
            NumericData::Double(v) => v.clone(),
            NumericData::Single(v) => v.iter().map(|&x| f64::from(x)).collect(),
            NumericData::Int8(v) => v.iter().map(|&x| f64::from(x)).collect(),
            NumericData::UInt8(v) => v.iter().map(|&x| f64::from(x)).collect(),
            NumericData::Int16(v) => v.iter().map(|&x| f64::from(x)).collect(),
            NumericData::UInt16(v) => v.iter().map(|&x| f64::from(x)).collect(),
            NumericData::Int32(v) => v.iter().map(|&x| f64::from(x)).collect(),
            NumericData::UInt32(v) => v.iter().map(|&x| f64::from(x)).collect(),
            NumericData::Int64(v) => v.iter().map(|&x| x as f64).collect(),
            NumericData::UInt64(v) => v.iter().map(|&x| x as f64).collect(),
        }
    }

    /// The values as little-endian bytes (the layout of a level-4 file's data).
    fn to_le_bytes(&self) -> Vec<u8> {
        fn flat<const N: usize, T: Copy>(v: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
            v.iter().flat_map(|&x| f(x)).collect()
        }
        match self {
            NumericData::Double(v) => flat(v, f64::to_le_bytes),
            NumericData::Single(v) => flat(v, f32::to_le_bytes),
            NumericData::Int8(v) => flat(v, i8::to_le_bytes),
            NumericData::UInt8(v) => v.clone(),
            NumericData::Int16(v) => flat(v, i16::to_le_bytes),
            NumericData::UInt16(v) => flat(v, u16::to_le_bytes),
            NumericData::Int32(v) => flat(v, i32::to_le_bytes),
            NumericData::UInt32(v) => flat(v, u32::to_le_bytes),
            NumericData::Int64(v) => flat(v, i64::to_le_bytes),
            NumericData::UInt64(v) => flat(v, u64::to_le_bytes),
        }
    }
}

/// The number of elements the dimensions describe, or `None` when it overflows.
fn element_count(dims: &[usize]) -> Option<usize> {
    dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))
}

/// `"11×25327"`, the way MATLAB prints sizes.
fn fmt_dims(dims: &[usize]) -> String {
    let parts: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
    parts.join("×")
}

fn check_len(dims: &[usize], found: usize) -> Result<(), ArrayError> {
    let expected = element_count(dims).ok_or_else(|| ArrayError::TooLarge {
        dims: fmt_dims(dims),
    })?;
    if expected != found {
        return Err(ArrayError::Length {
            dims: fmt_dims(dims),
            expected,
            found,
        });
    }
    Ok(())
}

/// An n-dimensional array of elements in column-major order; the number of elements
/// always equals the product of the dimensions.
#[derive(Debug, Clone, PartialEq)]
pub struct Array<T> {
    dims: Vec<usize>,
    data: Vec<T>,
}

impl<T> Array<T> {
    pub fn new(dims: Vec<usize>, data: Vec<T>) -> Result<Self, ArrayError> {
        check_len(&dims, data.len())?;
        Ok(Array { dims, data })
    }
    pub fn dims(&self) -> &[usize] {
        &self.dims
    }
    /// The elements, column-major.
    pub fn data(&self) -> &[T] {
        &self.data
    }
    pub fn into_data(self) -> Vec<T> {
        self.data
    }
}

impl Array<u16> {
    /// The characters, column-major, as a string. MATLAB chars are UTF-16 code units;
    /// unpaired surrogates become U+FFFD. For a 1×N char array this is the string.
    pub fn to_string_lossy(&self) -> String {
        String::from_utf16_lossy(&self.data)
    }

    /// The rows of a 2-D char array as strings (`cellstr(x)` without the trimming), one
    /// at a time: a char array with no columns may claim any number of rows without a
    /// single byte behind them, so the rows are not collected here.
    pub fn rows(&self) -> impl Iterator<Item = String> + '_ {
        let rows = self.dims.first().copied().unwrap_or(0);
        let cols = self.data.len().checked_div(rows).unwrap_or(0);
        (0..rows).map(move |r| {
            let units: Vec<u16> = (0..cols)
                .filter_map(|c| self.data.get(c * rows + r).copied())
                .collect();
            String::from_utf16_lossy(&units)
        })
    }
}

/// A numeric array: dimensions, the real part and the imaginary part of a complex array,
/// both of the same class and length.
#[derive(Debug, Clone, PartialEq)]
pub struct NumericArray {
    dims: Vec<usize>,
    real: NumericData,
    imag: Option<NumericData>,
}

impl NumericArray {
    pub fn new(
        dims: Vec<usize>,
        real: NumericData,
        imag: Option<NumericData>,
    ) -> Result<Self, ArrayError> {
        check_len(&dims, real.len())?;
        if let Some(im) = &imag {
            if im.class() != real.class() {
                return Err(ArrayError::ImagClass {
                    real: real.class(),
                    imag: im.class(),
                });
            }
            check_len(&dims, im.len())?;
        }
        Ok(NumericArray { dims, real, imag })
    }

    /// A real 1×N row vector (the shape of CinC 2017's `val`).
    pub fn row(data: NumericData) -> Self {
        NumericArray {
            dims: vec![1, data.len()],
            real: data,
            imag: None,
        }
    }

    pub fn class(&self) -> NumericClass {
        self.real.class()
    }
    pub fn dims(&self) -> &[usize] {
        &self.dims
    }
    /// The real part, column-major.
    pub fn real(&self) -> &NumericData {
        &self.real
    }
    /// The imaginary part of a complex array, column-major.
    pub fn imag(&self) -> Option<&NumericData> {
        self.imag.as_ref()
    }
    pub fn is_complex(&self) -> bool {
        self.imag.is_some()
    }
    /// The real part as `f64` (see [`NumericData::to_f64`]).
    pub fn to_f64(&self) -> Vec<f64> {
        self.real.to_f64()
    }
}

/// A struct array: dimensions and, per field in file order, the field's value in every
/// element (column-major).
#[derive(Debug, Clone, PartialEq)]
pub struct StructArray {
    dims: Vec<usize>,
    fields: Vec<(String, Vec<Value>)>,
}

impl StructArray {
    /// Every field must hold one value per element, and names must be distinct.
    pub fn new(dims: Vec<usize>, fields: Vec<(String, Vec<Value>)>) -> Result<Self, ArrayError> {
        let mut seen = std::collections::HashSet::new();
        for (name, values) in &fields {
            if !seen.insert(name.as_str()) {
                return Err(ArrayError::DuplicateField(name.clone()));
            }
            check_len(&dims, values.len())?;
        }
        Ok(StructArray { dims, fields })
    }
    pub fn dims(&self) -> &[usize] {
        &self.dims
    }
    /// The field names in file order.
    pub fn field_names(&self) -> impl Iterator<Item = &str> {
        self.fields.iter().map(|(n, _)| n.as_str())
    }
    /// Every field with its value in each element.
    pub fn fields(&self) -> &[(String, Vec<Value>)] {
        &self.fields
    }
    /// A field's values, one per element (column-major).
    pub fn field(&self, name: &str) -> Option<&[Value]> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
    }
}

/// Kinds of MATLAB values this reader recognises but does not decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnsupportedClass {
    /// `sparse(...)`, level 4 or 5.
    Sparse,
    /// Old-style class objects (`mxOBJECT_CLASS`).
    Object,
    /// Function handles.
    FunctionHandle,
    /// MCOS objects (`string`, `table`, `datetime`, ...).
    Opaque,
}

impl UnsupportedClass {
    fn describe(self) -> &'static str {
        match self {
            UnsupportedClass::Sparse => "a sparse array",
            UnsupportedClass::Object => "a MATLAB object",
            UnsupportedClass::FunctionHandle => "a function handle",
            UnsupportedClass::Opaque => "an opaque (MCOS) object such as a string or table",
        }
    }
}

/// A MATLAB value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Numeric(NumericArray),
    Logical(Array<bool>),
    /// A char array: UTF-16 code units, as MATLAB holds them.
    Char(Array<u16>),
    Cell(Array<Value>),
    Struct(StructArray),
    /// A value of a kind this reader does not decode; its bytes were skipped.
    Unsupported(UnsupportedClass),
}

impl Value {
    /// `[]`, the empty 0×0 double matrix (what an element of length zero stands for).
    pub fn empty() -> Value {
        Value::Numeric(NumericArray {
            dims: vec![0, 0],
            real: NumericData::Double(Vec::new()),
            imag: None,
        })
    }

    /// The dimensions (`size(x)`); `None` for unsupported values.
    pub fn dims(&self) -> Option<&[usize]> {
        match self {
            Value::Numeric(a) => Some(a.dims()),
            Value::Logical(a) => Some(a.dims()),
            Value::Char(a) => Some(a.dims()),
            Value::Cell(a) => Some(a.dims()),
            Value::Struct(a) => Some(a.dims()),
            Value::Unsupported(_) => None,
        }
    }

    /// A short description for messages: "a 11×25327 double array".
    pub fn describe(&self) -> String {
        match self {
            Value::Numeric(a) => format!(
                "a {} {}{} array",
                fmt_dims(a.dims()),
                if a.is_complex() { "complex " } else { "" },
                a.class()
            ),
            Value::Logical(a) => format!("a {} logical array", fmt_dims(a.dims())),
            Value::Char(a) => format!("a {} char array", fmt_dims(a.dims())),
            Value::Cell(a) => format!("a {} cell array", fmt_dims(a.dims())),
            Value::Struct(a) => format!("a {} struct array", fmt_dims(a.dims())),
            Value::Unsupported(c) => format!("{} (not supported)", c.describe()),
        }
    }
}

/// One variable of a file.
#[derive(Debug, Clone, PartialEq)]
pub struct Variable {
    pub name: String,
    pub value: Value,
    /// Saved with MATLAB's `global` flag (level 5 only).
    pub global: bool,
}

/// The fixed 128-byte header of a level-5 file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct V5Header {
    /// The descriptive text ("MATLAB 5.0 MAT-file, Platform: ..."), trailing blanks removed.
    pub text: String,
    /// The subsystem data offset (0 or all spaces when there is none), as stored.
    pub subsys_offset: u64,
    /// The version field (0x0100).
    pub version: u16,
    pub byte_order: ByteOrder,
}

/// The format level of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Level {
    /// Level 4: a sequence of matrices, each with its own 20-byte header.
    V4,
    /// Level 5 (MATLAB 5 to 7.x without HDF5).
    V5(V5Header),
}

/// Limits that keep a hostile file from exhausting memory or the stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadOptions {
    /// Most bytes all compressed elements of a file may decompress to, together.
    pub max_decompressed: u64,
    /// Most bytes of memory the values of a level-5 file may take, together: the numbers
    /// and characters in their classes' sizes, the dimensions, and a [`Value`]
    /// (`size_of::<Value>()` bytes) per element of a cell or struct array, allocator
    /// overhead not counted. Checked before each allocation (but for characters decoded
    /// from data, at most two bytes per byte of it, which are counted once decoded).
    /// This is not implied by
    /// `max_decompressed`: a count in a file need not be backed by as many bytes (an
    /// empty cell element takes 8 bytes of the file and a `Value` in memory, characters
    /// may be stored as none at all), nor need the file be compressed.
    pub max_memory: u64,
    /// Deepest nesting of cells and structs (a top-level variable is level 0).
    pub max_depth: usize,
}

impl ReadOptions {
    /// 1 GiB of decompressed data: far above any challenge's single file (the P300 files
    /// decompress to under 5 MB), far below what would take a judging host down.
    pub const DEFAULT_MAX_DECOMPRESSED: u64 = 1 << 30;
    /// 1 GiB of values, for the same reasons as [`Self::DEFAULT_MAX_DECOMPRESSED`].
    pub const DEFAULT_MAX_MEMORY: u64 = 1 << 30;
    /// MATLAB itself nests far less deeply in practice; this bounds our recursion.
    pub const DEFAULT_MAX_DEPTH: usize = 64;
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            max_decompressed: Self::DEFAULT_MAX_DECOMPRESSED,
            max_memory: Self::DEFAULT_MAX_MEMORY,
            max_depth: Self::DEFAULT_MAX_DEPTH,
        }
    }
}

/// A real 2-D matrix as `f64`, column-major.
#[derive(Debug, Clone, PartialEq)]
pub struct Matrix {
    pub rows: usize,
    pub cols: usize,
    /// `rows * cols` values, column after column.
    pub data: Vec<f64>,
}

impl Matrix {
    /// Element (r, c), 0-based.
    pub fn get(&self, r: usize, c: usize) -> Option<f64> {
        if r >= self.rows || c >= self.cols {
            return None;
        }
        self.data
            .get(c.checked_mul(self.rows)?.checked_add(r)?)
            .copied()
    }
    /// Row r (a channel, in the P300 files), or `None` past the last row.
    pub fn row(&self, r: usize) -> Option<Vec<f64>> {
        if r >= self.rows {
            return None;
        }
        Some(
            self.data
                .iter()
                .skip(r)
                .step_by(self.rows)
                .copied()
                .collect(),
        )
    }
}

/// A parsed MAT file: its level and its variables in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct MatFile {
    /// The name of the file as the caller gave it, used in error messages.
    pub source: String,
    pub level: Level,
    pub variables: Vec<Variable>,
}

impl MatFile {
    /// Reads and parses a file of either level (see [`MatFile::parse`]).
    pub fn read(path: impl AsRef<Path>) -> Result<MatFile, MatError> {
        Self::read_with(path, &ReadOptions::default())
    }

    pub fn read_with(path: impl AsRef<Path>, opts: &ReadOptions) -> Result<MatFile, MatError> {
        let path = path.as_ref();
        let source = path.display().to_string();
        let bytes = std::fs::read(path)
            .map_err(|e| MatError::new(&source, Location::File, MatErrorKind::Io(e)))?;
        Self::parse_with(&bytes, &source, opts)
    }

    /// Parses a file of either level; `source` names it in errors. Level 4 files start
    /// with a zero among their first four bytes (the type field is below 5000), level 5
    /// files with 116 bytes of text and have "IM" or "MI" at byte 126.
    pub fn parse(bytes: &[u8], source: &str) -> Result<MatFile, MatError> {
        Self::parse_with(bytes, source, &ReadOptions::default())
    }

    pub fn parse_with(bytes: &[u8], source: &str, opts: &ReadOptions) -> Result<MatFile, MatError> {
        let at_file = |kind| MatError::new(source, Location::File, kind);
        let head = bytes.get(..4).ok_or_else(|| {
            at_file(if bytes.is_empty() {
                MatErrorKind::Empty
            } else {
                MatErrorKind::NotMat(format!("only {} bytes long", bytes.len()))
            })
        })?;
        if head.contains(&0) {
            return Self::parse_v4(bytes, source);
        }
        if bytes.starts_with(HDF5_SIGNATURE) || bytes.get(512..520) == Some(HDF5_SIGNATURE) {
            return Err(at_file(MatErrorKind::Hdf5));
        }
        Self::parse_v5_with(bytes, source, opts)
    }

    /// Parses a level-4 file: one or more matrices, each a 20-byte header, a name, the
    /// real part and, for complex matrices, the imaginary part, column-major.
    pub fn parse_v4(bytes: &[u8], source: &str) -> Result<MatFile, MatError> {
        parse_v4(bytes, source)
    }

    /// Parses a level-5 file (see [`MatFile::parse_v5_with`]).
    pub fn parse_v5(bytes: &[u8], source: &str) -> Result<MatFile, MatError> {
        Self::parse_v5_with(bytes, source, &ReadOptions::default())
    }

    /// Parses a level-5 file: the 128-byte header, then one miMATRIX or miCOMPRESSED
    /// element per variable.
    pub fn parse_v5_with(
        bytes: &[u8],
        source: &str,
        opts: &ReadOptions,
    ) -> Result<MatFile, MatError> {
        V5Parser::new(source, opts).parse(bytes)
    }

    /// The variable of that name. Like MATLAB's `load`, a later variable of the same name
    /// wins over an earlier one.
    pub fn get(&self, name: &str) -> Result<ValueRef<'_>, MatError> {
        self.variables
            .iter()
            .rev()
            .find(|v| v.name == name)
            .map(|v| ValueRef {
                file: &self.source,
                path: name.to_string(),
                value: &v.value,
            })
            .ok_or_else(|| {
                MatError::new(
                    &self.source,
                    Location::File,
                    MatErrorKind::NoVariable(name.to_string()),
                )
            })
    }
}

/// Most field names a "no such field" error lists.
const MAX_LISTED_FIELDS: usize = 20;

/// A value found in a file together with the way to it (`s6.train`), so that errors from
/// the accessors name both the file and the value.
#[derive(Debug, Clone)]
pub struct ValueRef<'a> {
    file: &'a str,
    path: String,
    value: &'a Value,
}

impl<'a> ValueRef<'a> {
    pub fn value(&self) -> &'a Value {
        self.value
    }

    /// The way to this value, as MATLAB would write it (`s6.train`, `c{2}`).
    pub fn path(&self) -> &str {
        &self.path
    }

    fn err(&self, kind: MatErrorKind) -> MatError {
        MatError::new(self.file, Location::Variable(self.path.clone()), kind)
    }

    fn wrong(&self, expected: &str) -> MatError {
        self.err(MatErrorKind::WrongType {
            expected: expected.to_string(),
            found: self.value.describe(),
        })
    }

    fn child(&self, path: String, value: &'a Value) -> ValueRef<'a> {
        ValueRef {
            file: self.file,
            path,
            value,
        }
    }

    /// A field of a 1×1 struct.
    pub fn field(&self, name: &str) -> Result<ValueRef<'a>, MatError> {
        match self.value {
            Value::Struct(s) if element_count(s.dims()) == Some(1) => self.field_at(0, name),
            _ => Err(self.wrong("a 1×1 struct")),
        }
    }

    /// A field of element `index` (0-based, column-major) of a struct array.
    pub fn field_at(&self, index: usize, name: &str) -> Result<ValueRef<'a>, MatError> {
        let Value::Struct(s) = self.value else {
            return Err(self.wrong("a struct"));
        };
        let values = s.field(name).ok_or_else(|| {
            // A file may hold any number of fields: name a few.
            let mut available: Vec<&str> = s.field_names().take(MAX_LISTED_FIELDS).collect();
            if s.fields().len() > MAX_LISTED_FIELDS {
                available.push("...");
            }
            self.err(MatErrorKind::NoField {
                field: name.to_string(),
                available: available.join(", "),
            })
        })?;
        let value = values.get(index).ok_or_else(|| {
            self.err(MatErrorKind::OutOfRange {
                index,
                len: values.len(),
            })
        })?;
        let path = if index == 0 && values.len() == 1 {
            format!("{}.{name}", self.path)
        } else {
            format!("{}({}).{name}", self.path, index + 1)
        };
        Ok(self.child(path, value))
    }

    /// Element `index` (0-based, column-major) of a cell array.
    pub fn cell(&self, index: usize) -> Result<ValueRef<'a>, MatError> {
        let Value::Cell(c) = self.value else {
            return Err(self.wrong("a cell array"));
        };
        let value = c.data().get(index).ok_or_else(|| {
            self.err(MatErrorKind::OutOfRange {
                index,
                len: c.data().len(),
            })
        })?;
        Ok(self.child(format!("{}{{{}}}", self.path, index + 1), value))
    }

    pub fn as_numeric(&self) -> Result<&'a NumericArray, MatError> {
        match self.value {
            Value::Numeric(a) => Ok(a),
            _ => Err(self.wrong("a numeric array")),
        }
    }

    /// A real numeric matrix as `f64`, column-major. Trailing singleton dimensions beyond
    /// the second are allowed (MATLAB drops them anyway).
    pub fn as_f64_matrix(&self) -> Result<Matrix, MatError> {
        let a = match self.value {
            Value::Numeric(a) if !a.is_complex() => a,
            _ => return Err(self.wrong("a real numeric matrix")),
        };
        let dims = a.dims();
        if dims.iter().skip(2).any(|&d| d != 1) {
            return Err(self.wrong("a 2-D real numeric matrix"));
        }
        Ok(Matrix {
            rows: dims.first().copied().unwrap_or(1),
            cols: dims.get(1).copied().unwrap_or(1),
            data: a.to_f64(),
        })
    }

    /// The elements of a real numeric array as `f64`, column-major, whatever its shape.
    pub fn to_f64_vec(&self) -> Result<Vec<f64>, MatError> {
        match self.value {
            Value::Numeric(a) if !a.is_complex() => Ok(a.to_f64()),
            _ => Err(self.wrong("a real numeric array")),
        }
    }

    /// The text of a char array with at most one row.
    pub fn as_string(&self) -> Result<String, MatError> {
        match self.value {
            Value::Char(c) if c.dims().first().is_none_or(|&r| r <= 1) => Ok(c.to_string_lossy()),
            _ => Err(self.wrong("a char row vector")),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Element decoding shared by both levels
// ---------------------------------------------------------------------------------------

const HDF5_SIGNATURE: &[u8] = b"\x89HDF\r\n\x1a\n";

/// `N` bytes at `pos`, or `None` when the buffer ends first.
fn array_at<const N: usize>(bytes: &[u8], pos: usize) -> Option<[u8; N]> {
    bytes.get(pos..pos.checked_add(N)?)?.try_into().ok()
}

/// Decodes fixed-size elements; on failure returns the index of the element that did
/// not convert.
fn decode_each<const N: usize, T>(
    data: &[u8],
    f: impl Fn([u8; N]) -> Option<T>,
) -> Result<Vec<T>, usize> {
    let (chunks, _) = data.as_chunks::<N>();
    let mut out = Vec::with_capacity(chunks.len());
    for (i, c) in chunks.iter().enumerate() {
        out.push(f(*c).ok_or(i)?);
    }
    Ok(out)
}

/// A type that values stored in any numeric type convert into, the way MATLAB converts
/// the smaller storage types it writes (a double array of small integers is stored as
/// miUINT8, say). Conversions into integer classes must be exact.
trait Elem: Sized {
    fn from_int(v: i128) -> Option<Self>;
    fn from_f64(v: f64) -> Option<Self>;
    fn from_f32(v: f32) -> Option<Self> {
        Self::from_f64(f64::from(v))
    }
}

impl Elem for f64 {
    fn from_int(v: i128) -> Option<Self> {
        Some(v as f64)
    }
    fn from_f64(v: f64) -> Option<Self> {
        Some(v)
    }
}

impl Elem for f32 {
    fn from_int(v: i128) -> Option<Self> {
        Some(v as f32)
    }
    fn from_f64(v: f64) -> Option<Self> {
        Some(v as f32)
    }
    // Direct, so that the bits of single data (NaN payloads included) pass unchanged.
    fn from_f32(v: f32) -> Option<Self> {
        Some(v)
    }
}

impl Elem for bool {
    fn from_int(v: i128) -> Option<Self> {
        Some(v != 0)
    }
    fn from_f64(v: f64) -> Option<Self> {
        Some(v != 0.0)
    }
}

macro_rules! int_elem {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            fn from_int(v: i128) -> Option<Self> {
                <$t>::try_from(v).ok()
            }
            fn from_f64(v: f64) -> Option<Self> {
                // Below 1e30 (about 2^100) the cast to i128 is exact; larger values fit no
                // class anyway.
                if v.is_finite() && v.fract() == 0.0 && v.abs() < 1.0e30 {
                    <$t>::try_from(v as i128).ok()
                } else {
                    None
                }
            }
        }
    )*};
}
int_elem!(i8, u8, i16, u16, i32, u32, i64, u64);

/// The numeric types data can be stored in (level-5 miTYPEs; level-4 precisions map onto
/// the same set).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stored {
    Int8,
    UInt8,
    Int16,
    UInt16,
    Int32,
    UInt32,
    Single,
    Double,
    Int64,
    UInt64,
}

impl Stored {
    fn size(self) -> usize {
        match self {
            Stored::Int8 | Stored::UInt8 => 1,
            Stored::Int16 | Stored::UInt16 => 2,
            Stored::Int32 | Stored::UInt32 | Stored::Single => 4,
            Stored::Double | Stored::Int64 | Stored::UInt64 => 8,
        }
    }

    fn decode<T: Elem>(self, data: &[u8], order: ByteOrder) -> Result<Vec<T>, usize> {
        match self {
            Stored::Int8 => {
                decode_each(data, |b: [u8; 1]| T::from_int(i8::from_ne_bytes(b).into()))
            }
            Stored::UInt8 => decode_each(data, |b: [u8; 1]| T::from_int(b[0].into())),
            Stored::Int16 => decode_each(data, |b| T::from_int((order.u16(b) as i16).into())),
            Stored::UInt16 => decode_each(data, |b| T::from_int(order.u16(b).into())),
            Stored::Int32 => decode_each(data, |b| T::from_int(order.i32(b).into())),
            Stored::UInt32 => decode_each(data, |b| T::from_int(order.u32(b).into())),
            Stored::Int64 => decode_each(data, |b| T::from_int((order.u64(b) as i64).into())),
            Stored::UInt64 => decode_each(data, |b| T::from_int(order.u64(b).into())),
            Stored::Single => decode_each(data, |b| T::from_f32(f32::from_bits(order.u32(b)))),
            Stored::Double => decode_each(data, |b| T::from_f64(f64::from_bits(order.u64(b)))),
        }
    }

    /// The values converted into `class`.
    fn decode_class(
        self,
        class: NumericClass,
        data: &[u8],
        order: ByteOrder,
    ) -> Result<NumericData, usize> {
        Ok(match class {
            NumericClass::Double => NumericData::Double(self.decode(data, order)?),
            NumericClass::Single => NumericData::Single(self.decode(data, order)?),
            NumericClass::Int8 => NumericData::Int8(self.decode(data, order)?),
            NumericClass::UInt8 => NumericData::UInt8(self.decode(data, order)?),
            NumericClass::Int16 => NumericData::Int16(self.decode(data, order)?),
            NumericClass::UInt16 => NumericData::UInt16(self.decode(data, order)?),
            NumericClass::Int32 => NumericData::Int32(self.decode(data, order)?),
            NumericClass::UInt32 => NumericData::UInt32(self.decode(data, order)?),
            NumericClass::Int64 => NumericData::Int64(self.decode(data, order)?),
            NumericClass::UInt64 => NumericData::UInt64(self.decode(data, order)?),
        })
    }
}

// ---------------------------------------------------------------------------------------
// Level 4
// ---------------------------------------------------------------------------------------

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

fn parse_v4(bytes: &[u8], source: &str) -> Result<MatFile, MatError> {
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

// ---------------------------------------------------------------------------------------
// Level 5
// ---------------------------------------------------------------------------------------

const V5_HEADER_LEN: usize = 128;

/// Level-5 data types (miINT8 = 1, ...). Values 8, 10 and 11 are reserved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DataType {
    Num(Stored),
    Matrix,
    Compressed,
    Utf8,
    Utf16,
    Utf32,
}

impl DataType {
    fn from_code(code: u32) -> Option<DataType> {
        Some(match code {
            1 => DataType::Num(Stored::Int8),
            2 => DataType::Num(Stored::UInt8),
            3 => DataType::Num(Stored::Int16),
            4 => DataType::Num(Stored::UInt16),
            5 => DataType::Num(Stored::Int32),
            6 => DataType::Num(Stored::UInt32),
            7 => DataType::Num(Stored::Single),
            9 => DataType::Num(Stored::Double),
            12 => DataType::Num(Stored::Int64),
            13 => DataType::Num(Stored::UInt64),
            14 => DataType::Matrix,
            15 => DataType::Compressed,
            16 => DataType::Utf8,
            17 => DataType::Utf16,
            18 => DataType::Utf32,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            DataType::Num(Stored::Int8) => "miINT8",
            DataType::Num(Stored::UInt8) => "miUINT8",
            DataType::Num(Stored::Int16) => "miINT16",
            DataType::Num(Stored::UInt16) => "miUINT16",
            DataType::Num(Stored::Int32) => "miINT32",
            DataType::Num(Stored::UInt32) => "miUINT32",
            DataType::Num(Stored::Single) => "miSINGLE",
            DataType::Num(Stored::Double) => "miDOUBLE",
            DataType::Num(Stored::Int64) => "miINT64",
            DataType::Num(Stored::UInt64) => "miUINT64",
            DataType::Matrix => "miMATRIX",
            DataType::Compressed => "miCOMPRESSED",
            DataType::Utf8 => "miUTF8",
            DataType::Utf16 => "miUTF16",
            DataType::Utf32 => "miUTF32",
        }
    }
}

/// A data element's tag: its type and where its data lies in the buffer.
#[derive(Debug, Clone, Copy)]
struct Tag {
    /// Where the tag starts.
    at: usize,
    code: u32,
    start: usize,
    end: usize,
    /// Where the next element starts (after the padding to 8 bytes).
    next: usize,
    small: bool,
}

impl Tag {
    fn kind(&self) -> Option<DataType> {
        DataType::from_code(self.code)
    }
    fn len(&self) -> usize {
        self.end - self.start
    }
    fn describe(&self) -> String {
        match self.kind() {
            Some(k) => k.name().to_string(),
            None => format!("unknown data type {}", self.code),
        }
    }
}

/// A buffer elements are read from: the file itself, or the decompressed data of the
/// compressed element at byte `compressed_at` of the file.
#[derive(Clone, Copy)]
struct Buf<'b> {
    bytes: &'b [u8],
    compressed_at: Option<u64>,
}

/// The array classes of level 5 (`mxCLASS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ArrayClass {
    Cell,
    Struct,
    Char,
    Numeric(NumericClass),
    Unsupported(UnsupportedClass),
}

impl ArrayClass {
    fn from_code(code: u32) -> Option<ArrayClass> {
        Some(match code {
            1 => ArrayClass::Cell,
            2 => ArrayClass::Struct,
            3 => ArrayClass::Unsupported(UnsupportedClass::Object),
            4 => ArrayClass::Char,
            5 => ArrayClass::Unsupported(UnsupportedClass::Sparse),
            6 => ArrayClass::Numeric(NumericClass::Double),
            7 => ArrayClass::Numeric(NumericClass::Single),
            8 => ArrayClass::Numeric(NumericClass::Int8),
            9 => ArrayClass::Numeric(NumericClass::UInt8),
            10 => ArrayClass::Numeric(NumericClass::Int16),
            11 => ArrayClass::Numeric(NumericClass::UInt16),
            12 => ArrayClass::Numeric(NumericClass::Int32),
            13 => ArrayClass::Numeric(NumericClass::UInt32),
            14 => ArrayClass::Numeric(NumericClass::Int64),
            15 => ArrayClass::Numeric(NumericClass::UInt64),
            16 => ArrayClass::Unsupported(UnsupportedClass::FunctionHandle),
            17 => ArrayClass::Unsupported(UnsupportedClass::Opaque),
            _ => return None,
        })
    }
}

/// Most characters a char array stored without any character data may stand for (see
/// `V5Parser::chars`).
const MAX_BLANK_CHARS: usize = 1 << 16;

const FLAG_COMPLEX: u32 = 0x0800;
const FLAG_GLOBAL: u32 = 0x0400;
const FLAG_LOGICAL: u32 = 0x0200;

/// A decoded miMATRIX element.
struct Parsed {
    name: String,
    global: bool,
    value: Value,
}

struct V5Parser<'a> {
    file: &'a str,
    opts: &'a ReadOptions,
    order: ByteOrder,
    /// Decompressed bytes still allowed in this file.
    budget: u64,
    /// Bytes of memory the values of this file may still take ([`ReadOptions::max_memory`]).
    /// A `Cell` because the decoding methods borrow the parser shared (their closures do).
    memory: std::cell::Cell<u64>,
}

impl<'a> V5Parser<'a> {
    fn new(file: &'a str, opts: &'a ReadOptions) -> Self {
        V5Parser {
            file,
            opts,
            order: ByteOrder::Little,
            budget: opts.max_decompressed,
            memory: std::cell::Cell::new(opts.max_memory),
        }
    }

    /// Takes `count` items of `size` bytes from the memory the values may still take, or
    /// refuses them, naming `what` they are and the value at `path` they belong to.
    fn charge(
        &self,
        buf: Buf,
        pos: usize,
        (count, size): (usize, usize),
        path: &str,
        what: impl FnOnce() -> String,
    ) -> Result<(), MatError> {
        let needed = (count as u64).saturating_mul(size as u64);
        let left = self.memory.get();
        if needed > left {
            return Err(self.err(
                buf,
                pos,
                MatErrorKind::MemoryLimit {
                    what: what(),
                    path: path.to_string(),
                    needed,
                    left,
                    limit: self.opts.max_memory,
                },
            ));
        }
        self.memory.set(left - needed);
        Ok(())
    }

    fn err(&self, buf: Buf, pos: usize, kind: MatErrorKind) -> MatError {
        let location = match buf.compressed_at {
            None => Location::Byte(pos as u64),
            Some(element) => Location::Compressed {
                element,
                offset: pos as u64,
            },
        };
        MatError::new(self.file, location, kind)
    }

    fn malformed(&self, buf: Buf, pos: usize, msg: String) -> MatError {
        self.err(buf, pos, MatErrorKind::Malformed(msg))
    }

    fn parse(mut self, bytes: &[u8]) -> Result<MatFile, MatError> {
        let file = Buf {
            bytes,
            compressed_at: None,
        };
        let header: [u8; V5_HEADER_LEN] = array_at(bytes, 0).ok_or_else(|| {
            self.err(
                file,
                0,
                MatErrorKind::NotMat(format!(
                    "a level-5 header needs 128 bytes but the file has {}",
                    bytes.len()
                )),
            )
        })?;
        let [.., e0, e1] = header;
        self.order = match &[e0, e1] {
            b"IM" => ByteOrder::Little,
            b"MI" => ByteOrder::Big,
            _ => {
                return Err(self.err(
                    file,
                    126,
                    MatErrorKind::NotMat(format!(
                        "no level-5 endian indicator ('IM' or 'MI') at byte 126, found {:?}",
                        String::from_utf8_lossy(&[e0, e1])
                    )),
                ));
            }
        };
        let version = self.order.u16([header[124], header[125]]);
        if version == 0x0200 {
            return Err(self.err(file, 124, MatErrorKind::Hdf5));
        }
        if version != 0x0100 {
            return Err(self.err(
                file,
                124,
                MatErrorKind::Unsupported(format!("MAT-file version 0x{version:04x}")),
            ));
        }
        let text_bytes = header.get(..116).unwrap_or_default();
        let text = String::from_utf8_lossy(text_bytes)
            .trim_end_matches([' ', '\0'])
            .to_string();
        let subsys_offset = self.order.u64(array_at(&header, 116).unwrap_or_default());

        let mut variables = Vec::new();
        let mut pos = V5_HEADER_LEN;
        while pos < bytes.len() {
            // Some writers pad the last (compressed) element to 8 bytes.
            let rest = bytes.get(pos..).unwrap_or_default();
            if rest.len() < 8 && rest.iter().all(|&b| b == 0) {
                break;
            }
            let tag = self.tag(file, pos, bytes.len())?;
            let parsed = match tag.kind() {
                Some(DataType::Matrix) if !tag.small && tag.len() > 0 => {
                    self.matrix(file, tag.start, tag.end, 0)?
                }
                Some(DataType::Compressed) if !tag.small => self.compressed(file, tag)?,
                _ => {
                    return Err(self.malformed(
                        file,
                        pos,
                        format!(
                            "expected a variable (a non-empty miMATRIX or miCOMPRESSED \
                             element), found {}{} of {} bytes",
                            if tag.small { "a small " } else { "" },
                            tag.describe(),
                            tag.len()
                        ),
                    ));
                }
            };
            variables.push(Variable {
                name: parsed.name,
                value: parsed.value,
                global: parsed.global,
            });
            // Top-level elements are not padded: compressed ones end where their byte
            // count says (MATLAB and scipy agree on this).
            pos = tag.end;
        }
        Ok(MatFile {
            source: self.file.to_string(),
            level: Level::V5(V5Header {
                text,
                subsys_offset,
                version,
                byte_order: self.order,
            }),
            variables,
        })
    }

    fn compressed(&mut self, file: Buf, tag: Tag) -> Result<Parsed, MatError> {
        let data = file.bytes.get(tag.start..tag.end).unwrap_or_default();
        let out = inflate_capped(data, self.budget).map_err(|e| {
            let kind = match e {
                Some(e) => MatErrorKind::Zlib(e),
                None => MatErrorKind::DecompressionLimit {
                    limit: self.opts.max_decompressed,
                },
            };
            self.err(file, tag.at, kind)
        })?;
        self.budget = self.budget.saturating_sub(out.len() as u64);
        let inner = Buf {
            bytes: &out,
            compressed_at: Some(tag.at as u64),
        };
        let itag = self.tag(inner, 0, out.len())?;
        match itag.kind() {
            Some(DataType::Matrix) if !itag.small => self.matrix(inner, itag.start, itag.end, 0),
            _ => Err(self.malformed(
                inner,
                0,
                format!(
                    "a compressed element must hold a miMATRIX element, found {}",
                    itag.describe()
                ),
            )),
        }
    }

    /// Reads the tag at `pos`; the element must end by `end`.
    fn tag(&self, buf: Buf, pos: usize, end: usize) -> Result<Tag, MatError> {
        let available = end.saturating_sub(pos);
        let truncated = |what: String, needed: usize| {
            self.err(
                buf,
                pos,
                MatErrorKind::Truncated {
                    what,
                    needed: needed as u64,
                    available: available as u64,
                },
            )
        };
        if available < 8 {
            return Err(truncated("a data element tag".into(), 8));
        }
        let word = |at: usize| self.order.u32(array_at(buf.bytes, at).unwrap_or_default());
        let first = word(pos);
        // The small format packs the byte count into the upper half of the first word
        // (read in the file's order) and the data into the tag's second word.
        if first >> 16 != 0 {
            let n = (first >> 16) as usize;
            let code = first & 0xffff;
            if n > 4 {
                return Err(self.malformed(
                    buf,
                    pos,
                    format!("a small data element (type {code}) claims {n} bytes; at most 4 fit"),
                ));
            }
            return Ok(Tag {
                at: pos,
                code,
                start: pos + 4,
                end: pos + 4 + n,
                next: pos + 8,
                small: true,
            });
        }
        let n = word(pos + 4) as usize;
        let start = pos + 8;
        let tag = Tag {
            at: pos,
            code: first,
            start,
            end: start,
            next: start,
            small: false,
        };
        if n > end - start {
            return Err(truncated(
                format!("a {} element of {n} bytes", tag.describe()),
                n.saturating_add(8),
            ));
        }
        let data_end = start + n;
        // Padding counts from the element's own start, not from the buffer's: an element
        // may follow a compressed one, whose length is not a multiple of 8. It may be
        // missing after the last element of a container.
        let next = n
            .checked_next_multiple_of(8)
            .and_then(|padded| start.checked_add(padded))
            .map_or(end, |v| v.min(end));
        Ok(Tag {
            end: data_end,
            next,
            ..tag
        })
    }

    /// Reads the next sub-element of a matrix, which must be there.
    fn next(&self, buf: Buf, pos: &mut usize, end: usize, what: &str) -> Result<Tag, MatError> {
        if *pos >= end {
            return Err(self.malformed(
                buf,
                *pos,
                format!("the array ends before its {what} element"),
            ));
        }
        let tag = self.tag(buf, *pos, end)?;
        *pos = tag.next;
        Ok(tag)
    }

    fn data<'b>(&self, buf: Buf<'b>, tag: Tag) -> &'b [u8] {
        buf.bytes.get(tag.start..tag.end).unwrap_or_default()
    }

    fn wrong_type(&self, buf: Buf, tag: Tag, what: &str, expected: &str) -> MatError {
        self.malformed(
            buf,
            tag.at,
            format!(
                "the {what} element is {}, expected {expected}",
                tag.describe()
            ),
        )
    }

    /// Decodes the data of a miMATRIX element spanning `start..end`.
    fn matrix(&self, buf: Buf, start: usize, end: usize, depth: usize) -> Result<Parsed, MatError> {
        if start == end {
            // MATLAB writes `[]` inside cells and structs as an element with no data.
            self.charge(buf, start, (2, size_of::<usize>()), "", || {
                "the dimensions".to_string()
            })?;
            return Ok(Parsed {
                name: String::new(),
                global: false,
                value: Value::empty(),
            });
        }
        if depth > self.opts.max_depth {
            return Err(self.err(
                buf,
                start,
                MatErrorKind::TooDeep {
                    limit: self.opts.max_depth,
                },
            ));
        }
        let mut pos = start;
        let flags_tag = self.next(buf, &mut pos, end, "array flags")?;
        if flags_tag.kind() != Some(DataType::Num(Stored::UInt32)) || flags_tag.len() != 8 {
            return Err(self.malformed(
                buf,
                flags_tag.at,
                format!(
                    "the array flags element is {} of {} bytes, expected miUINT32 of 8 bytes",
                    flags_tag.describe(),
                    flags_tag.len()
                ),
            ));
        }
        let flags = self
            .order
            .u32(array_at(buf.bytes, flags_tag.start).unwrap_or_default());
        let class = ArrayClass::from_code(flags & 0xff).ok_or_else(|| {
            self.malformed(
                buf,
                flags_tag.start,
                format!("unknown array class {}", flags & 0xff),
            )
        })?;
        let global = flags & FLAG_GLOBAL != 0;
        let done = |name: String, value: Value| Parsed {
            name,
            global,
            value,
        };
        if class == ArrayClass::Unsupported(UnsupportedClass::Opaque) {
            // MCOS values have no dimensions element: the name follows the flags.
            let name = self.name(buf, &mut pos, end)?;
            return Ok(done(name, Value::Unsupported(UnsupportedClass::Opaque)));
        }
        let dims_at = pos;
        let dims = self.dims(buf, &mut pos, end)?;
        let name = self.name(buf, &mut pos, end)?;
        // Elements of cells and structs have no names of their own: their containers
        // give them their paths as errors pass up through them (`in_element`).
        let path = if depth == 0 { name.as_str() } else { "" };
        self.charge(buf, dims_at, (dims.len(), size_of::<usize>()), path, || {
            "the dimensions".to_string()
        })?;
        let count = element_count(&dims).ok_or_else(|| {
            self.malformed(
                buf,
                start,
                format!(
                    "'{name}' has dimensions {} whose product overflows",
                    fmt_dims(&dims)
                ),
            )
        })?;
        let value = match class {
            ArrayClass::Unsupported(c) => Value::Unsupported(c),
            ArrayClass::Numeric(nc) => {
                let complex = flags & FLAG_COMPLEX != 0;
                let logical = flags & FLAG_LOGICAL != 0;
                let real_tag = self.next(buf, &mut pos, end, "real part")?;
                if logical {
                    if complex {
                        return Err(self.malformed(
                            buf,
                            flags_tag.start,
                            format!("'{name}' is flagged both logical and complex"),
                        ));
                    }
                    let data = self.numeric(
                        buf,
                        real_tag,
                        (count, size_of::<bool>()),
                        (&name, path),
                        "logical data",
                        |s, d| s.decode::<bool>(d, self.order),
                    )?;
                    Value::Logical(Array { dims, data })
                } else {
                    let size = nc.size_in_memory();
                    let real = self.numeric(
                        buf,
                        real_tag,
                        (count, size),
                        (&name, path),
                        "real part",
                        |s, d| s.decode_class(nc, d, self.order),
                    )?;
                    let imag = if complex {
                        let imag_tag = self.next(buf, &mut pos, end, "imaginary part")?;
                        Some(self.numeric(
                            buf,
                            imag_tag,
                            (count, size),
                            (&name, path),
                            "imaginary part",
                            |s, d| s.decode_class(nc, d, self.order),
                        )?)
                    } else {
                        None
                    };
                    Value::Numeric(NumericArray { dims, real, imag })
                }
            }
            ArrayClass::Char => {
                let tag = self.next(buf, &mut pos, end, "character data")?;
                Value::Char(Array {
                    data: self.chars(buf, tag, count, (&name, path))?,
                    dims,
                })
            }
            ArrayClass::Cell => {
                self.room_for(buf, pos, end, count, &name, "cell")?;
                self.charge(buf, pos, (count, size_of::<Value>()), path, || {
                    format!("the {count} cell elements")
                })?;
                let mut cells = Vec::with_capacity(count);
                for i in 0..count {
                    let cell = self.sub_matrix(buf, &mut pos, end, depth, || {
                        format!("element {} of the cell array '{name}'", i + 1)
                    });
                    cells.push(cell.map_err(|e| in_element(e, || format!("{path}{{{}}}", i + 1)))?);
                }
                Value::Cell(Array { dims, data: cells })
            }
            ArrayClass::Struct => {
                let names = self.field_names(buf, &mut pos, end, &name)?;
                let total = count.checked_mul(names.len()).ok_or_else(|| {
                    self.malformed(buf, start, format!("the struct '{name}' is too large"))
                })?;
                self.room_for(buf, pos, end, total, &name, "struct")?;
                self.charge(buf, pos, (total, size_of::<Value>()), path, || {
                    format!("the {total} field values")
                })?;
                let mut fields: Vec<(String, Vec<Value>)> = names
                    .into_iter()
                    .map(|n| (n, Vec::with_capacity(count)))
                    .collect();
                // With no fields there is nothing to read, however many elements.
                let elements = if fields.is_empty() { 0 } else { count };
                for e in 0..elements {
                    for (field, values) in fields.iter_mut() {
                        let value = self.sub_matrix(buf, &mut pos, end, depth, || {
                            format!("field '{field}' of element {} of '{name}'", e + 1)
                        });
                        values.push(value.map_err(|err| {
                            in_element(err, || match count {
                                1 => format!("{path}.{field}"),
                                _ => format!("{path}({}).{field}", e + 1),
                            })
                        })?);
                    }
                }
                Value::Struct(StructArray { dims, fields })
            }
        };
        Ok(done(name, value))
    }

    /// Refuses element counts that the remaining bytes cannot hold (each element needs at
    /// least an 8-byte tag) before anything is allocated for them.
    fn room_for(
        &self,
        buf: Buf,
        pos: usize,
        end: usize,
        count: usize,
        name: &str,
        what: &str,
    ) -> Result<(), MatError> {
        let available = end.saturating_sub(pos);
        match count.checked_mul(8) {
            Some(needed) if needed <= available => Ok(()),
            _ => Err(self.err(
                buf,
                pos,
                MatErrorKind::Truncated {
                    what: format!("the {count} elements of the {what} '{name}'"),
                    needed: (count as u64).saturating_mul(8),
                    available: available as u64,
                },
            )),
        }
    }

    fn sub_matrix(
        &self,
        buf: Buf,
        pos: &mut usize,
        end: usize,
        depth: usize,
        what: impl Fn() -> String,
    ) -> Result<Value, MatError> {
        let tag = self.next(buf, pos, end, &what())?;
        if tag.kind() != Some(DataType::Matrix) || tag.small {
            return Err(self.wrong_type(buf, tag, &what(), "miMATRIX"));
        }
        Ok(self.matrix(buf, tag.start, tag.end, depth + 1)?.value)
    }

    fn dims(&self, buf: Buf, pos: &mut usize, end: usize) -> Result<Vec<usize>, MatError> {
        let tag = self.next(buf, pos, end, "dimensions")?;
        if !matches!(
            tag.kind(),
            Some(DataType::Num(Stored::Int32 | Stored::UInt32))
        ) || !tag.len().is_multiple_of(4)
            || tag.len() == 0
        {
            return Err(self.malformed(
                buf,
                tag.at,
                format!(
                    "the dimensions element is {} of {} bytes, expected miINT32 holding at \
                     least one dimension",
                    tag.describe(),
                    tag.len()
                ),
            ));
        }
        let data = self.data(buf, tag);
        let (words, _) = data.as_chunks::<4>();
        words
            .iter()
            .map(|w| {
                let d = self.order.i32(*w);
                usize::try_from(d)
                    .map_err(|_| self.malformed(buf, tag.start, format!("negative dimension {d}")))
            })
            .collect()
    }

    fn name(&self, buf: Buf, pos: &mut usize, end: usize) -> Result<String, MatError> {
        let tag = self.next(buf, pos, end, "array name")?;
        match tag.kind() {
            Some(DataType::Num(Stored::Int8 | Stored::UInt8) | DataType::Utf8) => {
                Ok(text_until_nul(self.data(buf, tag)))
            }
            _ => Err(self.wrong_type(buf, tag, "array name", "miINT8")),
        }
    }

    fn field_names(
        &self,
        buf: Buf,
        pos: &mut usize,
        end: usize,
        name: &str,
    ) -> Result<Vec<String>, MatError> {
        let len_tag = self.next(buf, pos, end, "field name length")?;
        if !matches!(
            len_tag.kind(),
            Some(DataType::Num(Stored::Int32 | Stored::UInt32))
        ) || len_tag.len() != 4
        {
            return Err(self.malformed(
                buf,
                len_tag.at,
                format!(
                    "the field name length element of '{name}' is {} of {} bytes, expected \
                     one miINT32",
                    len_tag.describe(),
                    len_tag.len()
                ),
            ));
        }
        let width =
            self.order
                .u32(array_at(buf.bytes, len_tag.start).unwrap_or_default()) as usize;
        let names_tag = self.next(buf, pos, end, "field names")?;
        if !matches!(
            names_tag.kind(),
            Some(DataType::Num(Stored::Int8 | Stored::UInt8) | DataType::Utf8)
        ) {
            return Err(self.wrong_type(buf, names_tag, "field names", "miINT8"));
        }
        let data = self.data(buf, names_tag);
        if width == 0 {
            if data.is_empty() {
                return Ok(Vec::new());
            }
            return Err(self.malformed(
                buf,
                names_tag.at,
                format!("the struct '{name}' has field names but a field name length of 0"),
            ));
        }
        if !data.len().is_multiple_of(width) {
            return Err(self.malformed(
                buf,
                names_tag.at,
                format!(
                    "the field names of '{name}' take {} bytes, not a multiple of the field \
                     name length {width}",
                    data.len()
                ),
            ));
        }
        let mut names: Vec<String> = Vec::with_capacity(data.len() / width);
        // A set, not `names.contains`: a hostile file may hold a million one-byte names.
        let mut seen = std::collections::HashSet::with_capacity(data.len() / width);
        for chunk in data.chunks(width) {
            let field = text_until_nul(chunk);
            if !seen.insert(field.clone()) {
                return Err(self.malformed(
                    buf,
                    names_tag.start,
                    format!("the struct '{name}' has two fields named '{field}'"),
                ));
            }
            names.push(field);
        }
        Ok(names)
    }

    /// Decodes the numeric data of `tag`, which must hold exactly `count` values taking
    /// `size_in_memory` bytes each, of the array `name` (at `path`).
    fn numeric<T>(
        &self,
        buf: Buf,
        tag: Tag,
        (count, size_in_memory): (usize, usize),
        (name, path): (&str, &str),
        what: &str,
        decode: impl Fn(Stored, &[u8]) -> Result<T, usize>,
    ) -> Result<T, MatError> {
        let Some(DataType::Num(stored)) = tag.kind() else {
            return Err(self.wrong_type(
                buf,
                tag,
                &format!("{what} of '{name}'"),
                "a numeric type",
            ));
        };
        let size = stored.size();
        if !tag.len().is_multiple_of(size) || tag.len() / size != count {
            return Err(self.malformed(
                buf,
                tag.at,
                format!(
                    "the {what} of '{name}' is {} bytes of {}, but its dimensions need {count} \
                     values of {size} bytes",
                    tag.len(),
                    tag.describe()
                ),
            ));
        }
        // Values stored in a smaller type take more memory than file: up to 8 times.
        self.charge(buf, tag.at, (count, size_in_memory), path, || {
            format!("the {what} ({count} values)")
        })?;
        decode(stored, self.data(buf, tag)).map_err(|i| {
            self.malformed(
                buf,
                tag.start + i * size,
                format!(
                    "value {} of the {what} of '{name}' ({}) does not fit the array's class",
                    i + 1,
                    tag.describe()
                ),
            )
        })
    }

    /// Decodes character data into UTF-16 code units, which must number `count`, of the
    /// char array `name` (at `path`).
    fn chars(
        &self,
        buf: Buf,
        tag: Tag,
        count: usize,
        (name, path): (&str, &str),
    ) -> Result<Vec<u16>, MatError> {
        let data = self.data(buf, tag);
        let charge = |what: &str| {
            self.charge(buf, tag.at, (count, size_of::<u16>()), path, || {
                format!("the {count} {what}")
            })
        };
        if data.is_empty() && count > 0 && count <= MAX_BLANK_CHARS {
            // Some writers store blank strings as a size and no characters; scipy reads
            // them as spaces, and so do we (up to a bound per array, as no bytes back the
            // count, and within the memory limit, as a cell may hold any number of them).
            charge("blank characters")?;
            return Ok(vec![u16::from(b' '); count]);
        }
        let bad = |msg: String| self.malformed(buf, tag.start, msg);
        let units: Vec<u16> = match tag.kind() {
            Some(DataType::Num(Stored::UInt16 | Stored::Int16) | DataType::Utf16) => {
                if !data.len().is_multiple_of(2) {
                    return Err(bad(format!(
                        "the characters of '{name}' take an odd number of bytes ({})",
                        data.len()
                    )));
                }
                data.as_chunks::<2>()
                    .0
                    .iter()
                    .map(|c| self.order.u16(*c))
                    .collect()
            }
            Some(DataType::Num(Stored::UInt8 | Stored::Int8)) => {
                data.iter().map(|&b| u16::from(b)).collect()
            }
            Some(DataType::Utf8) => std::str::from_utf8(data)
                .map_err(|e| bad(format!("the characters of '{name}' are not UTF-8: {e}")))?
                .encode_utf16()
                .collect(),
            Some(DataType::Utf32) => {
                if !data.len().is_multiple_of(4) {
                    return Err(bad(format!(
                        "the UTF-32 characters of '{name}' take {} bytes, not a multiple of 4",
                        data.len()
                    )));
                }
                let mut units = Vec::with_capacity(data.len() / 4);
                for c in data.as_chunks::<4>().0 {
                    let code = self.order.u32(*c);
                    let ch = char::from_u32(code).ok_or_else(|| {
                        bad(format!("'{name}' holds the invalid code point {code:#x}"))
                    })?;
                    units.extend(ch.encode_utf16(&mut [0; 2]).iter());
                }
                units
            }
            _ => {
                return Err(self.wrong_type(
                    buf,
                    tag,
                    &format!("character data of '{name}'"),
                    "miUINT16, miUTF8, miUTF16 or miUINT8",
                ));
            }
        };
        if units.len() != count {
            return Err(bad(format!(
                "the char array '{name}' holds {} characters but its dimensions need {count}",
                units.len()
            )));
        }
        // Charged once counted: decoded characters are backed by the data's bytes, at
        // most two bytes of memory per byte.
        charge("characters")?;
        Ok(units)
    }
}

/// Puts a memory-limit error from an element of a cell or struct in terms of the array
/// holding it: `prefix` is the element's path in it (`c{3}`), which the element's own path
/// (empty, or the path within it of a nested element) extends.
fn in_element(mut e: MatError, prefix: impl FnOnce() -> String) -> MatError {
    if let MatErrorKind::MemoryLimit { path, .. } = &mut e.kind {
        *path = prefix() + path;
    }
    e
}

/// Decompresses a zlib stream into at most `limit` bytes; `Err(None)` when it holds more.
/// The buffer grows by doubling but never beyond the limit, so a decompression bomb costs
/// at most `limit` bytes of memory. Bytes after the end of the stream are ignored.
fn inflate_capped(data: &[u8], limit: u64) -> Result<Vec<u8>, Option<std::io::Error>> {
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let mut decoder = flate2::read::ZlibDecoder::new(data);
    let mut out = Vec::new();
    let mut chunk = [0u8; 32 * 1024];
    loop {
        let n = match decoder.read(&mut chunk) {
            Ok(0) => return Ok(out),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Some(e)),
        };
        let len = out
            .len()
            .checked_add(n)
            .filter(|&l| l <= limit)
            .ok_or(None)?;
        if len > out.capacity() {
            let target = out.capacity().saturating_mul(2).clamp(len, limit);
            out.reserve_exact(target - out.len());
        }
        out.extend_from_slice(chunk.get(..n).unwrap_or_default());
    }
}

/// Names are ASCII in practice; anything else is kept as UTF-8 where valid.
fn text_until_nul(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(bytes.get(..end).unwrap_or_default()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // ----- builders -------------------------------------------------------------------

    /// Builds level-5 bytes in either byte order.
    struct V5 {
        big: bool,
    }

    impl V5 {
        fn u32(&self, v: u32) -> [u8; 4] {
            if self.big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            }
        }
        fn u16(&self, v: u16) -> [u8; 2] {
            if self.big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            }
        }
        fn f64s(&self, v: &[f64]) -> Vec<u8> {
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
        fn el(&self, ty: u32, data: &[u8]) -> Vec<u8> {
            let mut out = [self.u32(ty), self.u32(data.len() as u32)].concat();
            out.extend(data);
            out.resize(out.len().next_multiple_of(8), 0);
            out
        }
        fn small(&self, ty: u32, data: &[u8]) -> Vec<u8> {
            assert!(data.len() <= 4);
            let mut out = self.u32(((data.len() as u32) << 16) | ty).to_vec();
            out.extend(data);
            out.resize(8, 0);
            out
        }
        fn flags(&self, class: u32, flags: u32) -> Vec<u8> {
            self.el(6, &[self.u32(class | flags), [0; 4]].concat())
        }
        fn dims(&self, dims: &[i32]) -> Vec<u8> {
            let d: Vec<u8> = dims.iter().flat_map(|&d| self.u32(d as u32)).collect();
            self.el(5, &d)
        }
        fn name(&self, name: &str) -> Vec<u8> {
            if name.len() <= 4 {
                self.small(1, name.as_bytes())
            } else {
                self.el(1, name.as_bytes())
            }
        }
        fn matrix(
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
        fn double(&self, name: &str, dims: &[i32], v: &[f64]) -> Vec<u8> {
            self.matrix(6, 0, dims, name, &[self.el(9, &self.f64s(v))])
        }
        fn compressed(&self, element: &[u8]) -> Vec<u8> {
            let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
            z.write_all(element).unwrap();
            let z = z.finish().unwrap();
            let mut out = [self.u32(15), self.u32(z.len() as u32)].concat();
            out.extend(z);
            out
        }
        fn header(&self, version: u16) -> Vec<u8> {
            let mut h = b"MATLAB 5.0 MAT-file, unit test".to_vec();
            h.resize(116, b' ');
            h.extend([0; 8]);
            h.extend(self.u16(version));
            h.extend(if self.big { b"MI" } else { b"IM" });
            h
        }
        fn file(&self, elements: &[Vec<u8>]) -> Vec<u8> {
            let mut f = self.header(0x0100);
            for e in elements {
                f.extend(e);
            }
            f
        }
    }

    const LE: V5 = V5 { big: false };
    const BE: V5 = V5 { big: true };

    /// A level-4 matrix: header, name, data bytes (already in the right order).
    fn v4(
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

    fn parse(bytes: &[u8]) -> MatFile {
        MatFile::parse(bytes, "t.mat").unwrap_or_else(|e| panic!("{e}"))
    }

    fn parse_err(bytes: &[u8]) -> String {
        match MatFile::parse(bytes, "t.mat") {
            Ok(f) => panic!("parsed: {:?}", f.variables),
            Err(e) => e.to_string(),
        }
    }

    fn numeric(f: &MatFile, name: &str) -> NumericArray {
        f.get(name).unwrap().as_numeric().unwrap().clone()
    }

    // ----- level 4 --------------------------------------------------------------------

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

    #[test]
    fn array_constructors_check_lengths_and_classes() {
        assert!(NumericArray::new(vec![2, 2], NumericData::Double(vec![0.0; 3]), None).is_err());
        assert!(
            NumericArray::new(
                vec![1, 1],
                NumericData::Double(vec![0.0]),
                Some(NumericData::Single(vec![0.0]))
            )
            .is_err()
        );
        assert!(NumericArray::new(vec![usize::MAX, 2], NumericData::Double(vec![]), None).is_err());
        assert!(Array::new(vec![0, 5], Vec::<bool>::new()).is_ok());
        assert!(StructArray::new(vec![1, 2], vec![("a".into(), vec![Value::empty()])]).is_err());
        let one = || vec![Value::empty()];
        assert_eq!(
            StructArray::new(vec![1, 1], vec![("a".into(), one()), ("a".into(), one())]),
            Err(ArrayError::DuplicateField("a".into()))
        );
    }

    // ----- level 5 --------------------------------------------------------------------

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
        let e =
            parse_err(&LE.file(&[LE.matrix(10, 0, &[1, 1], "h", &[LE.el(9, &LE.f64s(&[0.5]))])]));
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
            e.contains(
                "the real part of 'x' is 8 bytes of miDOUBLE, but its dimensions need 4 values"
            ),
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
        assert!(
            parse_err(&w.file(&[w.double("x", &[-1, 2], &[])])).contains("negative dimension -1")
        );
        assert!(
            parse_err(&w.file(&[w.matrix(99, 0, &[1, 1], "x", &[])]))
                .contains("unknown array class 99")
        );
        assert!(parse_err(&w.file(&[w.el(9, &[0; 8])])).contains("found miDOUBLE of 8 bytes"));
        assert!(parse_err(&w.file(&[w.small(14, &[0; 4])])).contains("a small miMATRIX"));
        // A small element claiming more than 4 bytes.
        assert!(
            parse_err(&w.file(&[w.el(14, &[1, 0, 5, 0, 0, 0, 0, 0])])).contains("claims 5 bytes")
        );
        // A cell whose dimensions claim more elements than bytes remain: refused up front.
        let e = parse_err(&w.file(&[w.matrix(1, 0, &[100_000, 100_000], "c", &[])]));
        assert!(
            e.contains(
                "truncated: the 10000000000 elements of the cell 'c' needs 80000000000 bytes"
            ),
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
    fn inflate_never_holds_more_than_the_limit() {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(&vec![7u8; 1_000_000]).unwrap();
        let z = z.finish().unwrap();
        let out = inflate_capped(&z, 1_000_000).unwrap();
        assert_eq!(out.len(), 1_000_000);
        assert!(out.capacity() <= 1_000_000);
        assert!(matches!(inflate_capped(&z, 999_999), Err(None)));
        // A cut stream is an error ("incomplete deflate stream"), not short data.
        assert!(matches!(
            inflate_capped(&z[..z.len() / 2], 1 << 20),
            Err(Some(_))
        ));
        assert!(matches!(
            inflate_capped(&z[..z.len() - 2], 1 << 20),
            Err(Some(_))
        ));
        assert!(matches!(inflate_capped(b"not zlib", 1 << 20), Err(Some(_))));
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
