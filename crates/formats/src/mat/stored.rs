//! How numbers are stored in a file: the byte order, the storage types of both levels,
//! and their conversion into MATLAB's classes (exact for the integer classes).

use super::values::{NumericClass, NumericData};

/// The byte order of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ByteOrder {
    Little,
    Big,
}

impl ByteOrder {
    pub(super) fn u16(self, b: [u8; 2]) -> u16 {
        match self {
            ByteOrder::Little => u16::from_le_bytes(b),
            ByteOrder::Big => u16::from_be_bytes(b),
        }
    }
    pub(super) fn u32(self, b: [u8; 4]) -> u32 {
        match self {
            ByteOrder::Little => u32::from_le_bytes(b),
            ByteOrder::Big => u32::from_be_bytes(b),
        }
    }
    pub(super) fn u64(self, b: [u8; 8]) -> u64 {
        match self {
            ByteOrder::Little => u64::from_le_bytes(b),
            ByteOrder::Big => u64::from_be_bytes(b),
        }
    }
    pub(super) fn i32(self, b: [u8; 4]) -> i32 {
        self.u32(b) as i32
    }
}

/// `N` bytes at `pos`, or `None` when the buffer ends first.
pub(super) fn array_at<const N: usize>(bytes: &[u8], pos: usize) -> Option<[u8; N]> {
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
pub(super) trait Elem: Sized {
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
pub(super) enum Stored {
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
    pub(super) fn size(self) -> usize {
        match self {
            Stored::Int8 | Stored::UInt8 => 1,
            Stored::Int16 | Stored::UInt16 => 2,
            Stored::Int32 | Stored::UInt32 | Stored::Single => 4,
            Stored::Double | Stored::Int64 | Stored::UInt64 => 8,
        }
    }

    pub(super) fn decode<T: Elem>(self, data: &[u8], order: ByteOrder) -> Result<Vec<T>, usize> {
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
    pub(super) fn decode_class(
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
