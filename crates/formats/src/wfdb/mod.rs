//! WFDB records: headers, signal files and MIT-format annotation files, read and written
//! exactly as the WFDB Software Package's header(5), signal(5) and annotation(5) describe.
//!
//! Where wfdb-python (our test oracle) departs from the specification, we follow the
//! specification; `docs/formats.md` lists those corners and the oracle tests document
//! each difference.

pub mod annotation;
mod flac;
pub mod format;
pub mod header;
mod read;
mod write;

use std::fmt;

pub use flac::MAX_CHANNELS as MAX_FLAC_CHANNELS;
pub use format::Format;
pub use header::{BaseDate, BaseTime, DateOrder, Header, RecordLine, SegmentSpec, SignalSpec};
pub use read::{
    Calibration, MAX_HEADER_BYTES, MAX_READ_SAMPLES, PhysicalData, PhysicalSignals, ReadOptions,
    Record, SignalData, Signals,
};
pub use write::{WriteSignal, write_header, write_record};

/// Where in a file an error was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// The whole file (or the location is given in the message).
    File,
    /// A 1-based line of a text file.
    Line(usize),
    /// A 0-based byte offset in a binary file.
    Byte(u64),
}

/// What went wrong, without the file name (see [`WfdbError`]).
///
/// An I/O error is part of the message and not also a `source()`: a caller printing the
/// chain (as `anyhow` does) would show it twice. The same holds in the crate's other
/// formats.
#[derive(Debug, thiserror::Error)]
pub enum WfdbErrorKind {
    #[error("cannot read the file: {0}")]
    Io(std::io::Error),
    #[error("{0}")]
    Header(String),
    #[error("{0}")]
    Signal(String),
    #[error("{0}")]
    Annotation(String),
    #[error("cannot write: {0}")]
    Write(String),
}

/// A WFDB error that names the file, the place in it and the problem.
#[derive(Debug)]
pub struct WfdbError {
    pub file: String,
    pub location: Location,
    pub kind: WfdbErrorKind,
}

impl WfdbError {
    pub fn in_file(file: impl Into<String>, kind: WfdbErrorKind) -> Self {
        WfdbError {
            file: file.into(),
            location: Location::File,
            kind,
        }
    }
    pub fn at_line(file: impl Into<String>, line: usize, kind: WfdbErrorKind) -> Self {
        WfdbError {
            file: file.into(),
            location: Location::Line(line),
            kind,
        }
    }
    pub fn at_byte(file: impl Into<String>, byte: u64, kind: WfdbErrorKind) -> Self {
        WfdbError {
            file: file.into(),
            location: Location::Byte(byte),
            kind,
        }
    }
    pub(crate) fn io(file: impl Into<String>, e: std::io::Error) -> Self {
        Self::in_file(file, WfdbErrorKind::Io(e))
    }
}

impl fmt::Display for WfdbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.location {
            Location::File => write!(f, "{}: {}", self.file, self.kind),
            Location::Line(n) => write!(f, "{}: line {n}: {}", self.file, self.kind),
            Location::Byte(b) => write!(f, "{}: byte {b}: {}", self.file, self.kind),
        }
    }
}

impl std::error::Error for WfdbError {}
