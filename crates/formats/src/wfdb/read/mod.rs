//! Reading WFDB records: header, then the samples of the selected signals over a range of
//! frames, from one or several signal files, single- or multi-segment.

use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::format::{Format, GENERIC_INVALID};
use super::header::{Header, SignalSpec};
use super::{WfdbError, WfdbErrorKind};

mod decode;
mod flac_file;
mod multi;
mod plan;
mod sample;
mod single;

pub(crate) use decode::read_exact_at;
pub(crate) use plan::{check_file_groups, file_groups};
use sample::{Physical, advise_huge_pages};

/// Most samples one read returns, all selected signals together (1 GiB of `i32`, 2 GiB of
/// `f64` from [`Record::read_physical`]), and most samples a file's frame may hold. A header
/// can claim any length, and null signals and segments have no file bytes behind them, so
/// a read that would need more is refused rather than allowed to exhaust memory. Longer
/// records are read in several ranges.
pub const MAX_READ_SAMPLES: u64 = 1 << 28;

/// Largest header file read (the longest real headers are a few hundred KiB).
pub const MAX_HEADER_BYTES: u64 = 16 << 20;

/// Which part of a record to read.
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// First frame (inclusive).
    pub from: u64,
    /// End frame (exclusive); `None` reads to the end of the record.
    pub to: Option<u64>,
    /// Signal indices to read, in the order wanted; `None` reads all.
    pub signals: Option<Vec<usize>>,
}

/// How a run of digital samples converts to physical units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibration {
    /// First sample of the run (index into [`SignalData::digital`]).
    pub start: usize,
    pub len: usize,
    pub gain: f64,
    pub baseline: i32,
    /// The digital value that marks an invalid sample in this run, if any.
    pub invalid: Option<i32>,
}

/// The samples of one signal.
#[derive(Debug, Clone, PartialEq)]
pub struct SignalData {
    /// Index of the signal in the record.
    pub index: usize,
    /// Description (signal name) as in the header, if any.
    pub name: Option<String>,
    pub units: String,
    pub samples_per_frame: u32,
    /// Digital samples as stored, `samples_per_frame` per frame.
    pub digital: Vec<i32>,
    /// Calibration runs covering `digital` in order: one for a single-segment record,
    /// one per segment for a multi-segment record.
    pub calibration: Vec<Calibration>,
}

impl SignalData {
    /// Physical values, `(digital - baseline) / gain`, NaN for invalid samples.
    pub fn physical(&self) -> Vec<f64> {
        let mut out = Vec::with_capacity(self.digital.len());
        advise_huge_pages(&mut out);
        for c in &self.calibration {
            let run = &self.digital[c.start..c.start + c.len];
            let p = Physical::of(c);
            match p.reciprocal {
                Some(r) => out.extend(run.iter().map(|&d| p.scale(d, r))),
                None => out.extend(run.iter().map(|&d| p.divide(d))),
            }
        }
        out
    }

    /// Whether one gain, baseline and invalid value describe every valid sample, so that
    /// digital values of different segments are comparable. A run that holds no valid
    /// sample (a null segment's gap, or a signal missing from a segment) does not count:
    /// its calibration describes nothing.
    pub fn has_uniform_calibration(&self) -> bool {
        let mut describing = self.calibration.iter().filter(|c| {
            let run = self
                .digital
                .get(c.start..c.start + c.len)
                .unwrap_or_default();
            run.iter().any(|&d| Some(d) != c.invalid)
        });
        let key = |c: &Calibration| (c.gain, c.baseline, c.invalid);
        match describing.next() {
            Some(first) => describing.all(|c| key(c) == key(first)),
            None => true,
        }
    }
}

/// Samples read from a record.
#[derive(Debug, Clone, PartialEq)]
pub struct Signals {
    /// First frame read.
    pub from: u64,
    /// Number of frames read.
    pub frames: u64,
    pub signals: Vec<SignalData>,
}

/// The physical values of one signal ([`Record::read_physical`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PhysicalData {
    /// Index of the signal in the record.
    pub index: usize,
    /// Description (signal name) as in the header, if any.
    pub name: Option<String>,
    pub units: String,
    pub samples_per_frame: u32,
    /// `(digital - baseline) / gain`, NaN for invalid samples, `samples_per_frame` per
    /// frame.
    pub values: Vec<f64>,
}

/// Physical values read from a record ([`Record::read_physical`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PhysicalSignals {
    /// First frame read.
    pub from: u64,
    /// Number of frames read.
    pub frames: u64,
    pub signals: Vec<PhysicalData>,
}

/// An opened record: its header (and, for a multi-segment record, its segments' headers).
#[derive(Debug, Clone)]
pub struct Record {
    pub header: Header,
    /// The record path without extension, as given to [`Record::open`].
    pub path: PathBuf,
    dir: PathBuf,
    /// Segment records of a multi-segment record (`None` for null `~` segments). A segment
    /// named on several lines is opened once and shared.
    segments: Vec<Option<Arc<Record>>>,
}

fn header_path(record: &Path) -> PathBuf {
    let mut p = record.as_os_str().to_owned();
    p.push(".hea");
    PathBuf::from(p)
}

fn display(p: &Path) -> String {
    p.display().to_string()
}

impl Record {
    /// Opens `path` (a record path without extension, as WFDB tools take it) by reading
    /// `path.hea`, and the segment headers of a multi-segment record.
    pub fn open(path: impl AsRef<Path>) -> Result<Record, WfdbError> {
        Self::open_depth(path.as_ref(), 0)
    }

    fn open_depth(path: &Path, depth: u32) -> Result<Record, WfdbError> {
        let hea = header_path(path);
        let io = |e| WfdbError::io(display(&hea), e);
        let mut bytes = Vec::new();
        File::open(&hea)
            .and_then(|f| {
                // Sized from the file's length, so that one read takes it all.
                let len = f.metadata().map_or(0, |m| m.len()).min(MAX_HEADER_BYTES);
                bytes.reserve_exact(len as usize + 1);
                f.take(MAX_HEADER_BYTES + 1).read_to_end(&mut bytes)
            })
            .map_err(io)?;
        if bytes.len() as u64 > MAX_HEADER_BYTES {
            return Err(WfdbError::in_file(
                display(&hea),
                WfdbErrorKind::Header(format!(
                    "the header is larger than {MAX_HEADER_BYTES} bytes; this is not a WFDB header"
                )),
            ));
        }
        let text = String::from_utf8_lossy(&bytes);
        let header = Header::parse(&text, &display(&hea))?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut record = Record {
            header,
            path: path.to_path_buf(),
            dir,
            segments: Vec::new(),
        };
        if let Some(segments) = &record.header.segments {
            if depth > 0 {
                return Err(WfdbError::in_file(
                    display(&hea),
                    WfdbErrorKind::Header(
                        "a segment of a multi-segment record is itself multi-segment".into(),
                    ),
                ));
            }
            let mut opened: HashMap<&str, Arc<Record>> = HashMap::new();
            for s in segments {
                record.segments.push(if s.is_null() {
                    None
                } else if let Some(r) = opened.get(s.name.as_str()) {
                    Some(Arc::clone(r))
                } else {
                    let r = Arc::new(Self::open_depth(&record.dir.join(&s.name), depth + 1)?);
                    opened.insert(&s.name, Arc::clone(&r));
                    Some(r)
                });
            }
        }
        record.check_layout()?;
        Ok(record)
    }

    fn hea_name(&self) -> String {
        display(&header_path(&self.path))
    }

    fn err(&self, msg: String) -> WfdbError {
        WfdbError::in_file(self.hea_name(), WfdbErrorKind::Signal(msg))
    }

    /// Number of signals.
    pub fn n_signals(&self) -> usize {
        self.header.record.n_signals
    }

    /// The signal specifications that describe the record's signals: the header's own for
    /// a single-segment record; for a multi-segment record, those of the layout segment
    /// (variable layout) or of the first non-null segment (fixed layout).
    pub fn signal_specs(&self) -> &[SignalSpec] {
        if self.header.segments.is_none() {
            return &self.header.signals;
        }
        self.segments
            .iter()
            .flatten()
            .next()
            .map_or(&[], |s| &s.header.signals[..])
    }

    /// Reads the selected signals over the selected frames.
    pub fn read(&self, opts: &ReadOptions) -> Result<Signals, WfdbError> {
        let (selected, range, sig_len) = self.plan(opts)?;
        let signals = if self.header.segments.is_some() {
            self.read_multi(&selected, range.clone())?
        } else {
            let specs = &self.header.signals;
            self.read_single::<i32>(&selected, range.clone(), sig_len)?
                .into_iter()
                .map(|(s, digital)| signal_data(s, &specs[s], digital))
                .collect()
        };
        Ok(Signals {
            from: range.start,
            frames: range.end - range.start,
            signals,
        })
    }

    /// Reads the physical values of the selected signals over the selected frames:
    /// what [`read`](Self::read) followed by [`SignalData::physical`] gives, bit for bit,
    /// without keeping the digital values (as `wfdb.rdrecord()` returns `p_signal` only).
    pub fn read_physical(&self, opts: &ReadOptions) -> Result<PhysicalSignals, WfdbError> {
        let (selected, range, sig_len) = self.plan(opts)?;
        let signals = if self.header.segments.is_some() {
            self.read_multi(&selected, range.clone())?
                .into_iter()
                .map(|d| PhysicalData {
                    values: d.physical(),
                    index: d.index,
                    name: d.name,
                    units: d.units,
                    samples_per_frame: d.samples_per_frame,
                })
                .collect()
        } else {
            let specs = &self.header.signals;
            self.read_single::<f64>(&selected, range.clone(), sig_len)?
                .into_iter()
                .map(|(s, values)| PhysicalData {
                    index: s,
                    name: specs[s].description.clone(),
                    units: specs[s].effective_units().to_string(),
                    samples_per_frame: specs[s].effective_samples_per_frame(),
                    values,
                })
                .collect()
        };
        Ok(PhysicalSignals {
            from: range.start,
            frames: range.end - range.start,
            signals,
        })
    }
}

/// The skew of a signal in frames. Headers give it in samples; the WFDB library reads
/// with a resolution of one frame and rounds (`readheader`: `skew/spf + 0.5`).
/// wfdb-python takes the header's value as frames, which differs when a signal has
/// several samples per frame.
fn skew_frames(spec: &SignalSpec) -> u64 {
    let spf = spec.effective_samples_per_frame() as u64;
    (spec.effective_skew() as u64 + spf / 2) / spf
}

/// The value read for samples a skewed signal would take from past the end of the record:
/// the format's invalid value, or for format 8 (which has none) `i32::MIN`, which then
/// converts to NaN like any invalid sample.
fn padding_value(fmt: Format) -> i32 {
    fmt.invalid_value().unwrap_or(i32::MIN)
}

/// The calibration of `len` samples of one signal of a single-segment record.
fn calibration(spec: &SignalSpec, len: usize) -> Calibration {
    let invalid = if spec.is_null() {
        GENERIC_INVALID
    } else {
        padding_value(spec.format)
    };
    Calibration {
        start: 0,
        len,
        gain: spec.effective_gain(),
        baseline: spec.effective_baseline(),
        invalid: Some(invalid),
    }
}

/// Builds the result for one signal of a single-segment record.
fn signal_data(index: usize, spec: &SignalSpec, digital: Vec<i32>) -> SignalData {
    SignalData {
        index,
        name: spec.description.clone(),
        units: spec.effective_units().to_string(),
        samples_per_frame: spec.effective_samples_per_frame(),
        calibration: vec![calibration(spec, digital.len())],
        digital,
    }
}

#[cfg(test)]
mod tests;
