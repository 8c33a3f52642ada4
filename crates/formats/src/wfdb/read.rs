//! Reading WFDB records: header, then the samples of the selected signals over a range of
//! frames, from one or several signal files, single- or multi-segment.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::format::{self, Format, GENERIC_INVALID};
use super::header::{Header, SignalSpec};
use super::{WfdbError, WfdbErrorKind};

/// Most samples one read returns, all selected signals together (1 GiB of `i32`). A header
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
        for c in &self.calibration {
            let run = &self.digital[c.start..c.start + c.len];
            let (base, gain) = (c.baseline as f64, c.gain);
            // Division, not multiplication by 1/gain: bit-identical to wfdb-python and
            // the WFDB library. The select (not a branch) keeps the loop vectorisable.
            let nan = c.invalid.unwrap_or(i32::MIN);
            let has_nan = c.invalid.is_some();
            out.extend(run.iter().map(|&d| {
                let p = (d as f64 - base) / gain;
                if has_nan && d == nan { f64::NAN } else { p }
            }));
        }
        out
    }

    /// Whether one gain and baseline describe every sample, so that digital values of
    /// different segments are comparable.
    pub fn has_uniform_calibration(&self) -> bool {
        self.calibration.windows(2).all(|w| {
            (w[0].gain, w[0].baseline, w[0].invalid) == (w[1].gain, w[1].baseline, w[1].invalid)
        })
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
            .and_then(|f| f.take(MAX_HEADER_BYTES + 1).read_to_end(&mut bytes))
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

    /// Checks what can be checked without the signal files: signals sharing a file are
    /// consecutive and agree on the format and byte offset; segment lengths add up.
    fn check_layout(&self) -> Result<(), WfdbError> {
        let h = &self.header;
        if let Some(segments) = &h.segments {
            let total = segments
                .iter()
                .try_fold(0u64, |acc, s| acc.checked_add(s.sig_len))
                .ok_or_else(|| self.err("the segment lengths add up to more than 2^64".into()))?;
            if let Some(len) = h.record.sig_len
                && len != total
            {
                return Err(self.err(format!(
                    "the record line gives {len} samples per signal but the segments add up to {total}"
                )));
            }
            // A layout segment (variable layout) lists every signal of the record; in a
            // fixed layout every segment has them all.
            let n_sig = h.record.n_signals;
            let variable = self.has_layout_segment();
            for (i, (seg, rec)) in segments.iter().zip(&self.segments).enumerate() {
                let Some(rec) = rec else { continue };
                let n = rec.header.signals.len();
                let is_layout = variable && i == 0;
                if (!variable || is_layout) && n != n_sig {
                    return Err(self.err(format!(
                        "the record has {n_sig} signals but its {} segment {:?} has {n}",
                        if is_layout { "layout" } else { "fixed-layout" },
                        seg.name
                    )));
                }
                if variable && n > n_sig {
                    return Err(self.err(format!(
                        "segment {:?} has {n} signals, more than the record's {n_sig}",
                        seg.name
                    )));
                }
            }
            // The signals must be described somewhere (the record line alone could claim
            // any number).
            if self.signal_specs().len() != n_sig {
                return Err(self.err(format!(
                    "the record has {n_sig} signals but no segment describes them"
                )));
            }
            return Ok(());
        }
        check_file_groups(&h.signals).map_err(|m| self.err(m))
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

    /// Whether this multi-segment record starts with a layout segment (length 0).
    fn has_layout_segment(&self) -> bool {
        self.header
            .segments
            .as_ref()
            .and_then(|s| s.first())
            .is_some_and(|s| s.sig_len == 0)
    }

    /// Number of frames: the header's `sig_len`, or, when absent, what the signal files
    /// hold (the shortest file decides).
    pub fn sig_len(&self) -> Result<u64, WfdbError> {
        if let Some(n) = self.header.record.sig_len {
            return Ok(n);
        }
        if let Some(segments) = &self.header.segments {
            // check_layout has made sure the sum does not overflow.
            return Ok(segments.iter().map(|s| s.sig_len).sum());
        }
        let specs = &self.header.signals;
        let mut frames: Option<u64> = None;
        for g in file_groups(specs) {
            let first = &specs[g.start];
            if first.is_null() {
                continue;
            }
            let tspf: u64 = specs[g.clone()]
                .iter()
                .map(|s| s.effective_samples_per_frame() as u64)
                .sum();
            let path = self.dir.join(&first.file_name);
            let len = std::fs::metadata(&path)
                .map_err(|e| WfdbError::io(display(&path), e))?
                .len();
            let avail = len.saturating_sub(first.effective_byte_offset());
            let f = first.format.samples_in(avail) / tspf;
            frames = Some(frames.map_or(f, |m| m.min(f)));
        }
        Ok(frames.unwrap_or(0))
    }

    /// Reads the selected signals over the selected frames.
    pub fn read(&self, opts: &ReadOptions) -> Result<Signals, WfdbError> {
        let n_sig = self.n_signals();
        let selected: Vec<usize> = opts.signals.clone().unwrap_or_else(|| (0..n_sig).collect());
        if let Some(&bad) = selected.iter().find(|&&i| i >= n_sig) {
            return Err(self.err(format!(
                "signal {bad} does not exist: the record has {n_sig} signals (0 to {})",
                n_sig.saturating_sub(1)
            )));
        }
        let sig_len = self.sig_len()?;
        let to = opts.to.unwrap_or(sig_len);
        if to > sig_len {
            return Err(self.err(format!(
                "cannot read to frame {to}: the record has {sig_len} frames"
            )));
        }
        if opts.from > to {
            return Err(self.err(format!(
                "the range starts at frame {} after its end {to}",
                opts.from
            )));
        }
        let range = opts.from..to;
        let wanted: u64 = selected
            .iter()
            .map(|&s| {
                let spf = self
                    .signal_specs()
                    .get(s)
                    .map_or(1, |x| x.effective_samples_per_frame() as u64);
                (to - opts.from).saturating_mul(spf)
            })
            .fold(0u64, u64::saturating_add);
        if wanted > MAX_READ_SAMPLES {
            return Err(self.err(format!(
                "reading frames {}..{to} of {} signals would return {wanted} samples, more than \
                 the {MAX_READ_SAMPLES} one read may; read a shorter range",
                opts.from,
                selected.len()
            )));
        }
        let signals = if self.header.segments.is_some() {
            self.read_multi(&selected, range.clone())?
        } else {
            self.read_single(&selected, range.clone(), sig_len)?
        };
        Ok(Signals {
            from: range.start,
            frames: range.end - range.start,
            signals,
        })
    }

    fn read_single(
        &self,
        selected: &[usize],
        range: Range<u64>,
        sig_len: u64,
    ) -> Result<Vec<SignalData>, WfdbError> {
        let specs = &self.header.signals;
        let mut out: Vec<Option<SignalData>> = vec![None; selected.len()];
        for g in file_groups(specs) {
            let wanted: Vec<(usize, usize)> = selected
                .iter()
                .enumerate()
                .filter(|(_, s)| g.contains(s))
                .map(|(pos, &s)| (pos, s))
                .collect();
            if wanted.is_empty() {
                continue;
            }
            let digital = self.read_group(specs, g.clone(), &wanted, range.clone(), sig_len)?;
            for ((pos, s), d) in wanted.into_iter().zip(digital) {
                out[pos] = Some(signal_data(s, &specs[s], d));
            }
        }
        Ok(out.into_iter().flatten().collect())
    }

    /// Reads the wanted signals of one signal file over `range` (record frames).
    fn read_group(
        &self,
        specs: &[SignalSpec],
        group: Range<usize>,
        wanted: &[(usize, usize)],
        range: Range<u64>,
        sig_len: u64,
    ) -> Result<Vec<Vec<i32>>, WfdbError> {
        let group_specs = &specs[group.clone()];
        let first = &group_specs[0];
        let n_frames = range.end - range.start;
        let spf_of = |s: usize| specs[s].effective_samples_per_frame() as usize;
        if first.is_null() {
            return Ok(wanted
                .iter()
                .map(|&(_, s)| vec![GENERIC_INVALID; n_frames as usize * spf_of(s)])
                .collect());
        }
        let fmt = first.format;
        let tspf: u64 = group_specs
            .iter()
            .map(|s| s.effective_samples_per_frame() as u64)
            .sum();
        let path = self.dir.join(&first.file_name);
        let name = display(&path);
        let offset = first.effective_byte_offset();

        let mut file = File::open(&path).map_err(|e| WfdbError::io(&name, e))?;
        let file_len = file.metadata().map_err(|e| WfdbError::io(&name, e))?.len();
        let total_samples = sig_len.checked_mul(tspf).ok_or_else(|| {
            WfdbError::in_file(
                &name,
                WfdbErrorKind::Signal("the record is too long".into()),
            )
        })?;
        let needed = fmt.bytes_needed(total_samples);
        if file_len < offset.saturating_add(needed) {
            return Err(WfdbError::in_file(
                &name,
                WfdbErrorKind::Signal(format!(
                    "the file is truncated or the header is wrong: {} frames of {} samples in \
                     format {} need {needed} bytes after the byte offset {offset}, but the file \
                     holds {} bytes there",
                    sig_len,
                    tspf,
                    fmt.code(),
                    file_len.saturating_sub(offset)
                )),
            ));
        }

        // Stored frames to read: skew makes a signal's frame t come from stored frame
        // t + skew, and format 8 must be summed from the start of the file.
        let max_skew = wanted
            .iter()
            .map(|&(_, s)| skew_frames(&specs[s]))
            .max()
            .unwrap_or(0);
        let read_start = if fmt == Format::F8 { 0 } else { range.start };
        let read_end = range
            .end
            .saturating_add(max_skew)
            .min(sig_len)
            .max(read_start);
        // Position of each signal's samples within a frame.
        let mut frame_pos = Vec::with_capacity(group_specs.len());
        let mut p = 0usize;
        for s in group_specs {
            frame_pos.push(p);
            p += s.effective_samples_per_frame() as usize;
        }
        let tspf = tspf as usize;
        let n_frames = n_frames as usize;
        let mut sinks: Vec<Sink> = wanted
            .iter()
            .map(|&(_, s)| {
                let spec = &specs[s];
                // Stored frames (relative to read_start) that this signal's window covers.
                let lo = (range.start - read_start) as usize + skew_frames(spec) as usize;
                Sink {
                    pos: frame_pos[s - group.start],
                    spf: spf_of(s),
                    window: lo..lo + n_frames,
                    acc: spec.effective_initial_value(),
                    out: Vec::with_capacity(n_frames * spf_of(s)),
                }
            })
            .collect();

        // Decode in chunks of whole frames, a multiple of 6 so that every chunk starts at
        // the same offset within a packing group (2 or 3 samples) as the first.
        let stored_frames = (read_end - read_start) as usize;
        let chunk_frames = (CHUNK_SAMPLES / tspf)
            .max(1)
            .next_multiple_of(6)
            .min(stored_frames.next_multiple_of(6));
        let mut flat = vec![0i32; chunk_frames * tspf + 2];
        let mut bytes = Vec::new();
        let mut frame = 0usize;
        while frame < stored_frames {
            let frames = chunk_frames.min(stored_frames - frame);
            let flat_start = (read_start + frame as u64) * tspf as u64;
            let (byte_start, skip) = fmt.group_start(flat_start);
            let n = skip as usize + frames * tspf;
            let want = fmt.bytes_needed(n as u64);
            bytes.clear();
            file.seek(SeekFrom::Start(offset + byte_start))
                .and_then(|_| (&mut file).take(want).read_to_end(&mut bytes))
                .map_err(|e| WfdbError::io(&name, e))?;
            if (bytes.len() as u64) < want {
                // The size was checked above, so the file shrank while we read it.
                return Err(WfdbError::in_file(
                    &name,
                    WfdbErrorKind::Signal(
                        "the file ended early (was it changed while being read?)".into(),
                    ),
                ));
            }
            format::decode(fmt, &bytes, &mut flat[..n]);
            let chunk = &flat[skip as usize..n];
            for sink in &mut sinks {
                sink.take(fmt, chunk, tspf, frame);
            }
            frame += frames;
        }
        // Samples a skewed signal would take from beyond the end of the record.
        let invalid = padding_value(fmt);
        let result = sinks
            .into_iter()
            .map(|mut sink| {
                sink.out.resize(n_frames * sink.spf, invalid);
                sink.out
            })
            .collect();
        Ok(result)
    }

    fn read_multi(
        &self,
        selected: &[usize],
        range: Range<u64>,
    ) -> Result<Vec<SignalData>, WfdbError> {
        let segments = self.header.segments.as_deref().unwrap_or_default();
        let layout = self.signal_specs().to_vec();
        let variable = self.has_layout_segment();
        let mut out: Vec<SignalData> = selected
            .iter()
            .map(|&s| {
                let spec = layout.get(s);
                SignalData {
                    index: s,
                    name: spec.and_then(|x| x.description.clone()),
                    units: spec.map_or("mV", |x| x.effective_units()).to_string(),
                    samples_per_frame: spec.map_or(1, |x| x.effective_samples_per_frame()),
                    digital: Vec::new(),
                    calibration: Vec::new(),
                }
            })
            .collect();
        let mut seg_start = 0u64;
        for (seg, rec) in segments.iter().zip(&self.segments) {
            let seg_range = seg_start..seg_start + seg.sig_len;
            seg_start = seg_range.end;
            let lo = range.start.max(seg_range.start);
            let hi = range.end.min(seg_range.end);
            if lo >= hi {
                continue;
            }
            let local = (lo - seg_range.start)..(hi - seg_range.start);
            let n = hi - lo;
            // Map each wanted record signal to a signal of this segment.
            let mut seg_signals: Vec<Option<usize>> = Vec::with_capacity(out.len());
            for d in &out {
                let idx = match rec {
                    None => None,
                    Some(r) if variable => {
                        let name = layout.get(d.index).and_then(|s| s.description.as_deref());
                        name.and_then(|name| {
                            r.header
                                .signals
                                .iter()
                                .position(|s| s.description.as_deref() == Some(name))
                        })
                    }
                    Some(r) => (d.index < r.header.signals.len()).then_some(d.index),
                };
                seg_signals.push(idx);
            }
            let read: Vec<SignalData> = match rec {
                Some(r) => {
                    let wanted: Vec<usize> = seg_signals.iter().flatten().copied().collect();
                    r.read(&ReadOptions {
                        from: local.start,
                        to: Some(local.end),
                        signals: Some(wanted),
                    })?
                    .signals
                }
                None => Vec::new(),
            };
            let mut read = read.into_iter();
            for (d, idx) in out.iter_mut().zip(&seg_signals) {
                let spf = d.samples_per_frame as usize;
                let start = d.digital.len();
                match idx.and_then(|_| read.next()) {
                    Some(sd) => {
                        if sd.samples_per_frame as usize != spf {
                            return Err(self.err(format!(
                                "signal {} has {} samples per frame in segment {:?} but {spf} in the layout",
                                d.index, sd.samples_per_frame, seg.name
                            )));
                        }
                        let c = sd.calibration[0];
                        d.digital.extend_from_slice(&sd.digital);
                        d.calibration.push(Calibration { start, ..c });
                    }
                    None => {
                        let len = n as usize * spf;
                        d.digital.resize(start + len, GENERIC_INVALID);
                        d.calibration.push(Calibration {
                            start,
                            len,
                            gain: 1.0,
                            baseline: 0,
                            invalid: Some(GENERIC_INVALID),
                        });
                    }
                }
            }
        }
        Ok(out)
    }
}

/// Samples decoded per chunk when reading a signal file (128 KiB of `i32`): large
/// enough to amortise the system calls, small enough to stay in cache.
const CHUNK_SAMPLES: usize = 32 * 1024;

/// Collects one signal's samples from decoded chunks of a signal file.
struct Sink {
    /// Position of the signal's first sample within a frame, and its samples per frame.
    pos: usize,
    spf: usize,
    /// Stored frames to keep.
    window: Range<usize>,
    /// Running value of a format 8 signal.
    acc: i32,
    out: Vec<i32>,
}

impl Sink {
    /// Takes the signal's samples from `chunk`, whole frames starting at stored frame `first`.
    fn take(&mut self, fmt: Format, chunk: &[i32], tspf: usize, first: usize) {
        let frames = chunk.len() / tspf;
        let lo = self.window.start.clamp(first, first + frames) - first;
        let hi = self.window.end.clamp(first, first + frames) - first;
        let (pos, spf) = (self.pos, self.spf);
        if fmt == Format::F8 {
            // Differences before the window still move the running value.
            for (f, frame) in chunk.chunks_exact(tspf).enumerate().take(hi) {
                for &d in &frame[pos..pos + spf] {
                    self.acc = self.acc.wrapping_add(d);
                    if f >= lo {
                        self.out.push(self.acc);
                    }
                }
            }
        } else if lo >= hi {
        } else if tspf == 1 {
            self.out.extend_from_slice(&chunk[lo..hi]);
        } else if spf == 1 {
            let pos = pos.min(tspf - 1); // lets the compiler drop the bounds check
            self.out.extend(
                chunk[lo * tspf..hi * tspf]
                    .chunks_exact(tspf)
                    .map(|f| f[pos]),
            );
        } else {
            for frame in chunk[lo * tspf..hi * tspf].chunks_exact(tspf) {
                self.out.extend_from_slice(&frame[pos..pos + spf]);
            }
        }
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

/// Builds the result for one signal of a single-segment record.
fn signal_data(index: usize, spec: &SignalSpec, digital: Vec<i32>) -> SignalData {
    let invalid = if spec.is_null() {
        GENERIC_INVALID
    } else {
        padding_value(spec.format)
    };
    SignalData {
        index,
        name: spec.description.clone(),
        units: spec.effective_units().to_string(),
        samples_per_frame: spec.effective_samples_per_frame(),
        calibration: vec![Calibration {
            start: 0,
            len: digital.len(),
            gain: spec.effective_gain(),
            baseline: spec.effective_baseline(),
            invalid: Some(invalid),
        }],
        digital,
    }
}

/// Checks that signals sharing a file are consecutive and agree on what the file holds
/// (format, byte offset, block size), as the WFDB library requires.
pub(crate) fn check_file_groups(specs: &[SignalSpec]) -> Result<(), String> {
    let groups = file_groups(specs);
    for (i, g) in groups.iter().enumerate() {
        let first = &specs[g.start];
        if !first.is_null()
            && groups[..i]
                .iter()
                .any(|o| specs[o.start].file_name == first.file_name)
        {
            return Err(format!(
                "signal {} uses file {:?}, which earlier signals used too but not just before \
                 it; signals sharing a file must be consecutive",
                g.start, first.file_name
            ));
        }
        for (k, s) in specs[g.clone()].iter().enumerate().skip(1) {
            let (a, b) = (g.start, g.start + k);
            let file = &first.file_name;
            if s.format != first.format {
                return Err(format!(
                    "signals {a} and {b} share file {file:?} but have formats {} and {}",
                    first.format.code(),
                    s.format.code()
                ));
            }
            if s.byte_offset
                .is_some_and(|o| o != first.effective_byte_offset())
            {
                return Err(format!(
                    "signals {a} and {b} share file {file:?} but have different byte offsets"
                ));
            }
            if s.block_size.unwrap_or(0) != first.block_size.unwrap_or(0) {
                return Err(format!(
                    "signals {a} and {b} share file {file:?} but have different block sizes"
                ));
            }
        }
    }
    Ok(())
}

/// Runs of consecutive signals stored in the same file.
pub(crate) fn file_groups(specs: &[SignalSpec]) -> Vec<Range<usize>> {
    let mut groups: Vec<Range<usize>> = Vec::new();
    for (i, s) in specs.iter().enumerate() {
        match groups.last_mut() {
            Some(g) if specs[g.start].file_name == s.file_name && !s.is_null() => g.end = i + 1,
            _ => groups.push(i..i + 1),
        }
    }
    groups
}
