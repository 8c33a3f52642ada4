//! The values a MAT file holds: numeric classes and their data, n-dimensional arrays
//! (numeric, logical, char, cell), struct arrays, the kinds not decoded, and [`Matrix`],
//! a real 2-D matrix as `f64`.

use std::fmt;

use super::ArrayError;

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
    pub(super) fn size_in_memory(self) -> usize {
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
    pub(super) fn to_le_bytes(&self) -> Vec<u8> {
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
pub(super) fn element_count(dims: &[usize]) -> Option<usize> {
    dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))
}

/// `"11×25327"`, the way MATLAB prints sizes.
pub(super) fn fmt_dims(dims: &[usize]) -> String {
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
    pub(super) dims: Vec<usize>,
    pub(super) data: Vec<T>,
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
    pub(super) dims: Vec<usize>,
    pub(super) real: NumericData,
    pub(super) imag: Option<NumericData>,
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
    pub(super) dims: Vec<usize>,
    pub(super) fields: Vec<(String, Vec<Value>)>,
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
