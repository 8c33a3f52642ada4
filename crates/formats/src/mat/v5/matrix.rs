//! The miMATRIX element: array flags, dimensions and name, then the data of its class:
//! numeric (stored in any type), logical, char (in any encoding), cell and struct arrays,
//! every count checked against the bytes there and the memory the values may take.

use super::{
    ArrayClass, Buf, DataType, FLAG_COMPLEX, FLAG_GLOBAL, FLAG_LOGICAL, MAX_BLANK_CHARS, Parsed,
    Tag, V5Parser,
};
use crate::mat::stored::{Stored, array_at};
use crate::mat::values::{
    Array, NumericArray, StructArray, UnsupportedClass, Value, element_count, fmt_dims,
};
use crate::mat::{MatError, MatErrorKind};

impl V5Parser<'_> {
    /// Decodes the data of a miMATRIX element spanning `start..end`.
    pub(super) fn matrix(
        &self,
        buf: Buf,
        start: usize,
        end: usize,
        depth: usize,
    ) -> Result<Parsed, MatError> {
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

/// Names are ASCII in practice; anything else is kept as UTF-8 where valid.
fn text_until_nul(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(bytes.get(..end).unwrap_or_default()).into_owned()
}
