//! Level 5 (MATLAB 5 to 7.x without HDF5): the 128-byte header, data element tags, and
//! the parser's state and top level, one variable per miMATRIX or miCOMPRESSED element.

use super::stored::{ByteOrder, Stored, array_at};
use super::values::{NumericClass, UnsupportedClass, Value};
use super::{Level, Location, MatError, MatErrorKind, MatFile, ReadOptions, V5Header, Variable};

mod compress;
mod matrix;

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

pub(super) struct V5Parser<'a> {
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
    pub(super) fn new(file: &'a str, opts: &'a ReadOptions) -> Self {
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

    pub(super) fn parse(mut self, bytes: &[u8]) -> Result<MatFile, MatError> {
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
}

#[cfg(test)]
mod tests;
