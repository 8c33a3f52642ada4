//! Reading WFDB records: header, then the samples of the selected signals over a range of
//! frames, from one or several signal files, single- or multi-segment.

use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::Read;
#[cfg(not(unix))]
use std::io::{Seek, SeekFrom};
use std::mem::MaybeUninit;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use super::flac;
use super::format::{self, Format, GENERIC_INVALID};
use super::header::{Header, SegmentSpec, SignalSpec};
use super::{WfdbError, WfdbErrorKind};

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

    /// Checks what can be checked without the signal files: signals sharing a file are
    /// consecutive and agree on the format and byte offset; segment lengths add up.
    fn check_layout(&self) -> Result<(), WfdbError> {
        let h = &self.header;
        if let Some(segments) = &h.segments {
            let total = segments
                .iter()
                .try_fold(0u64, |acc, s| acc.checked_add(s.sig_len))
                .ok_or_else(|| self.err("the segment lengths add up to more than 2^64".into()))?;
            if let Some(len) = h.record.stated_sig_len()
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
            // Taken as the layout, a null segment would describe no signal, and every
            // signal of every segment, found by name in the layout, would read as invalid.
            if variable && segments.first().is_some_and(SegmentSpec::is_null) {
                return Err(self.err(
                    "the first segment has length 0, which makes it the layout segment, but \
                     the layout segment cannot be a null segment `~`: it must name the record \
                     that lists the signals"
                        .into(),
                ));
            }
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

    /// Number of frames: the header's `sig_len`, or, when absent or 0, what the signal
    /// files hold (the shortest file decides) or the segments add up to.
    pub fn sig_len(&self) -> Result<u64, WfdbError> {
        if let Some(n) = self.header.record.stated_sig_len() {
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
            let f = if first.format.is_flac() {
                // A FLAC file's byte offset counts samples of each channel, and all its
                // signals have the same samples per frame (check_file_groups).
                let name = display(&path);
                let file = File::open(&path).map_err(|e| WfdbError::io(&name, e))?;
                let stream = flac::Stream::open(&file, &name, first.format, g.len())?;
                let spf = first.effective_samples_per_frame() as u64;
                let total = stream.total_samples()?;
                total.saturating_sub(first.effective_byte_offset()) / spf
            } else {
                let len = std::fs::metadata(&path)
                    .map_err(|e| WfdbError::io(display(&path), e))?
                    .len();
                let avail = len.saturating_sub(first.effective_byte_offset());
                first.format.samples_in(avail) / tspf
            };
            frames = Some(frames.map_or(f, |m| m.min(f)));
        }
        Ok(frames.unwrap_or(0))
    }

    /// Checks a read's options against the record: the signals to read, in order, the
    /// frames, and the record's length.
    fn plan(&self, opts: &ReadOptions) -> Result<(Vec<usize>, Range<u64>, u64), WfdbError> {
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
        // Checked, not saturated, so that the message never states a false count.
        let wanted: Option<u64> = selected.iter().try_fold(0u64, |acc, &s| {
            let spf = self
                .signal_specs()
                .get(s)
                .map_or(1, |x| x.effective_samples_per_frame() as u64);
            (to - opts.from).checked_mul(spf)?.checked_add(acc)
        });
        if wanted.is_none_or(|n| n > MAX_READ_SAMPLES) {
            return Err(self.err(format!(
                "reading frames {}..{to} of {} signals would return {} samples, more than \
                 the {MAX_READ_SAMPLES} one read may; read a shorter range",
                opts.from,
                selected.len(),
                wanted.map_or("more than 2^64".into(), |n| n.to_string())
            )));
        }
        Ok((selected, opts.from..to, sig_len))
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

    /// Reads the selected signals of a single-segment record: (signal index, samples) in
    /// the order selected.
    fn read_single<T: Sample>(
        &self,
        selected: &[usize],
        range: Range<u64>,
        sig_len: u64,
    ) -> Result<Vec<(usize, Vec<T>)>, WfdbError> {
        let specs = &self.header.signals;
        let mut out: Vec<Option<(usize, Vec<T>)>> = vec![None; selected.len()];
        // The selected signals of each group, (position in the selection, signal) in the
        // selection's order, sorted out in one pass: a record may have a group per signal.
        let groups = file_groups(specs);
        let mut group_of = vec![0; specs.len()];
        for (i, g) in groups.iter().enumerate() {
            group_of[g.clone()].fill(i);
        }
        let mut wanted_in: Vec<Vec<(usize, usize)>> = vec![Vec::new(); groups.len()];
        for (pos, &s) in selected.iter().enumerate() {
            if let Some(&g) = group_of.get(s) {
                wanted_in[g].push((pos, s));
            }
        }
        let jobs: Vec<GroupRead> = groups
            .into_iter()
            .zip(wanted_in)
            .filter(|(_, wanted)| !wanted.is_empty())
            .collect();
        let read = |(g, wanted): &GroupRead| {
            self.read_group::<T>(specs, g.clone(), wanted, range.clone(), sig_len)
        };
        // FLAC files decode slowly enough that several of them (a 12-lead record has at
        // least two) are worth decoding at once, from a part's worth of samples on
        // (below that, starting threads cost more than they saved on a busy machine).
        let frames = (range.end - range.start) as usize;
        let samples: usize = selected
            .iter()
            .map(|&s| frames * specs[s].effective_samples_per_frame() as usize)
            .sum();
        let flac_files = jobs.len() > 1
            && max_threads() > 1
            && samples >= FLAC_PART_SAMPLES
            && jobs.iter().all(|(g, _)| specs[g.start].format.is_flac());
        let results: Vec<Result<Vec<Vec<T>>, WfdbError>> = if flac_files {
            std::thread::scope(|scope| {
                let handles: Vec<_> = jobs
                    .iter()
                    .map(|job| scope.spawn(move || read(job)))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                    .collect()
            })
        } else {
            jobs.iter().map(read).collect()
        };
        for ((_, wanted), samples) in jobs.into_iter().zip(results) {
            for ((pos, s), d) in wanted.into_iter().zip(samples?) {
                out[pos] = Some((s, d));
            }
        }
        Ok(out.into_iter().flatten().collect())
    }

    /// Reads the wanted signals of one signal file over `range` (record frames).
    fn read_group<T: Sample>(
        &self,
        specs: &[SignalSpec],
        group: Range<usize>,
        wanted: &[(usize, usize)],
        range: Range<u64>,
        sig_len: u64,
    ) -> Result<Vec<Vec<T>>, WfdbError> {
        let group_specs = &specs[group.clone()];
        let first = &group_specs[0];
        let n_frames = (range.end - range.start) as usize;
        let spf_of = |s: usize| specs[s].effective_samples_per_frame() as usize;
        let conv_of = |s: usize| T::conv_for(&calibration(&specs[s], 0));
        if first.is_null() {
            return Ok(wanted
                .iter()
                .map(|&(_, s)| vec![T::conv(conv_of(s), GENERIC_INVALID); n_frames * spf_of(s)])
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
        // Buffers are sized by whole frames: one of absurd size must not be allocated,
        // even for a read of no frames.
        if tspf > MAX_READ_SAMPLES {
            return Err(WfdbError::in_file(
                &name,
                WfdbErrorKind::Signal(format!(
                    "a frame of this file holds {tspf} samples (the header's samples per \
                     frame of its signals), more than the {MAX_READ_SAMPLES} one read may"
                )),
            ));
        }

        let file = File::open(&path).map_err(|e| WfdbError::io(&name, e))?;
        if fmt.is_flac() {
            return read_flac::<T>(&file, &name, specs, group, wanted, range, sig_len);
        }
        let file_len = file.metadata().map_err(|e| WfdbError::io(&name, e))?.len();
        let Some(needed) = sig_len
            .checked_mul(tspf)
            .and_then(|n| fmt.checked_bytes_needed(n))
        else {
            return Err(WfdbError::in_file(
                &name,
                WfdbErrorKind::Signal(format!(
                    "the header is wrong: {sig_len} frames of {tspf} samples in format {} need \
                     more bytes than can be addressed, and the file holds {} bytes after the \
                     byte offset {offset}",
                    fmt.code(),
                    file_len.saturating_sub(offset)
                )),
            ));
        };
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
        let stored_frames = (read_end - read_start) as usize;
        let sinks: Vec<Sink<T>> = wanted
            .iter()
            .map(|&(_, s)| {
                let spec = &specs[s];
                // Stored frames (relative to read_start) that this signal's window covers;
                // the part of it past the end of the record reads as padding.
                let lo = (range.start - read_start) as usize + skew_frames(spec) as usize;
                Sink {
                    pos: frame_pos[s - group.start],
                    spf: spf_of(s),
                    window: lo.min(stored_frames)..(lo + n_frames).min(stored_frames),
                    initial: spec.effective_initial_value(),
                    conv: conv_of(s),
                }
            })
            .collect();
        // Decode in chunks of whole frames, a multiple of 6 so that every chunk starts at
        // the same offset within a packing group (2 or 3 samples) as the first. Large
        // reads are cut into parts of whole chunks that several threads decode at once
        // (format 8, a running sum, is decoded in one pass).
        let chunk_frames = (CHUNK_SAMPLES / tspf)
            .max(1)
            .next_multiple_of(6)
            .min(stored_frames.next_multiple_of(6).max(6));
        let out_samples: usize = sinks.iter().map(|k| n_frames * k.spf).sum();
        let parts = out_samples / PART_SAMPLES;
        let threads = if fmt != Format::F8 && parts >= 2 {
            parts.min(max_threads())
        } else {
            1
        };
        let src = Source {
            file: &file,
            name: &name,
            fmt,
            offset,
            tspf,
            read_start,
            chunk_frames,
        };
        // Outputs are allocated, not zeroed (zeroing took 12–20% of a read), and each is
        // written exactly once: the samples a skewed signal would take from beyond the
        // end of the record are padding, the rest is cut into pieces that the decoders
        // fill, in parts of whole chunks when several threads share the work.
        let lens: Vec<usize> = sinks.iter().map(|k| n_frames * k.spf).collect();
        let mut outs: Vec<Vec<T>> = lens.iter().map(|&len| output::<T>(len)).collect();
        let padding = padding_value(fmt);
        let mut windows = Vec::with_capacity(sinks.len());
        for ((k, out), &len) in sinks.iter().zip(&mut outs).zip(&lens) {
            let Some(fresh) = out.spare_capacity_mut().get_mut(..len) else {
                return Err(src.internal("an output is smaller than asked for"));
            };
            let (window, tail) = fresh.split_at_mut((k.window.len() * k.spf).min(len));
            tail.fill(MaybeUninit::new(T::conv(k.conv, padding)));
            windows.push(window);
        }
        let window_lens: Vec<usize> = windows.iter().map(|w| w.len()).collect();
        let part_frames = if threads > 1 {
            (stored_frames / parts)
                .next_multiple_of(chunk_frames)
                .max(chunk_frames)
        } else {
            stored_frames.max(1)
        };
        let parts = split_outputs(&sinks, windows, stored_frames, part_frames);
        let written = run_parts(&src, &sinks, parts, threads)?;
        if written != window_lens {
            return Err(src.internal("an output was not filled"));
        }
        for (out, len) in outs.iter_mut().zip(lens) {
            #[allow(unsafe_code)]
            // SAFETY: `out` is empty, and the first `len` elements of its spare capacity
            // (`fresh` above) are all initialised. Their tail was filled above. Their
            // window (the rest, disjoint from the tail by `split_at_mut`) was cut into
            // pieces, disjoint slices of it (`split_outputs` cuts them with
            // `split_at_mut`), each with its first `filled()` elements written and
            // `filled()` at most its length (`Piece`'s invariant, kept by its module).
            // `run_parts` adds up `filled()` of every piece once, so a window's sum is
            // at most its length and equals it (checked just above) only if every
            // piece is full and the pieces cover the window: no element is unwritten.
            unsafe {
                out.set_len(len);
            }
        }
        Ok(outs)
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
            // A variable layout's signals are found by name: the first signal of the
            // segment that has it, looked up rather than searched for, as a segment may
            // have any number of signals.
            let mut by_name: HashMap<&str, usize> = HashMap::new();
            if let Some(r) = rec.as_deref().filter(|_| variable) {
                for (i, s) in r.header.signals.iter().enumerate() {
                    if let Some(name) = s.description.as_deref() {
                        by_name.entry(name).or_insert(i);
                    }
                }
            }
            // Map each wanted record signal to a signal of this segment.
            let mut seg_signals: Vec<Option<usize>> = Vec::with_capacity(out.len());
            for d in &out {
                let idx = match rec {
                    None => None,
                    Some(_) if variable => {
                        let name = layout.get(d.index).and_then(|s| s.description.as_deref());
                        name.and_then(|name| by_name.get(name).copied())
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

/// Samples (all wanted signals together) a read returns per part when it is large enough
/// to be decoded on several threads. A part costs a few milliseconds, far more than
/// starting a thread; reads shorter than two parts stay on the calling thread.
const PART_SAMPLES: usize = 1 << 20;

/// One signal file to read: its signals, and the wanted ones among them as (position in
/// the selection, signal).
type GroupRead = (Range<usize>, Vec<(usize, usize)>);

/// Samples (all wanted signals together) per part of a FLAC read decoded on a thread of
/// its own: about a millisecond of decoding.
const FLAC_PART_SAMPLES: usize = 1 << 17;

/// Most threads one read uses.
const MAX_THREADS: usize = 8;

fn max_threads() -> usize {
    // Unix only: the threads read the file with `pread`, which does not share a position.
    if !cfg!(unix) {
        return 1;
    }
    static THREADS: OnceLock<usize> = OnceLock::new();
    *THREADS.get_or_init(|| {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_THREADS))
    })
}

/// What a read returns per sample: the stored (digital) value as `i32`, or the physical
/// value as `f64`.
trait Sample: Copy + Send + Sync + 'static {
    /// All bits zero: `vec![ZERO; n]` asks the allocator for zeroed memory, which fresh
    /// pages already are, so allocating writes nothing.
    const ZERO: Self;
    /// How one signal's digital values convert.
    type Conv: Copy + Send + Sync;
    fn conv_for(calibration: &Calibration) -> Self::Conv;
    /// Converts one value.
    fn conv(c: Self::Conv, digital: i32) -> Self;
    /// Runs `body` with the conversion as a closure, its form chosen once (not per
    /// sample, so that the loops in `body` stay simple enough to vectorise).
    fn with_conv(c: Self::Conv, body: impl WithConv<Self>);
}

/// Code that runs with one signal's conversion ([`Sample::with_conv`]).
trait WithConv<T> {
    fn run(self, conv: impl Fn(i32) -> T + Copy);
}

impl Sample for i32 {
    const ZERO: i32 = 0;
    type Conv = ();
    fn conv_for(_: &Calibration) {}
    #[inline(always)]
    fn conv(_: (), digital: i32) -> i32 {
        digital
    }
    #[inline(always)]
    fn with_conv(_: (), body: impl WithConv<i32>) {
        body.run(|d| d);
    }
}

impl Sample for f64 {
    const ZERO: f64 = 0.0;
    type Conv = Physical;
    fn conv_for(c: &Calibration) -> Physical {
        Physical::of(c)
    }
    #[inline(always)]
    fn conv(c: Physical, digital: i32) -> f64 {
        c.apply(digital)
    }
    #[inline(always)]
    fn with_conv(c: Physical, body: impl WithConv<f64>) {
        match c.reciprocal {
            Some(r) => body.run(move |d| c.scale(d, r)),
            None => body.run(move |d| c.divide(d)),
        }
    }
}

/// The conversion of one calibration run to physical units.
#[derive(Debug, Clone, Copy)]
struct Physical {
    baseline: f64,
    gain: f64,
    /// `1 / gain` when multiplying by it gives the same bits as dividing by `gain`
    /// ([`exact_reciprocal`]).
    reciprocal: Option<f64>,
    /// The invalid value as a double, NaN when there is none. Converting an `i32` to
    /// `f64` is exact and one to one, so comparing the converted sample with it is
    /// comparing the integers, and a comparison with NaN is never true.
    invalid: f64,
}

impl Physical {
    fn of(c: &Calibration) -> Physical {
        Physical {
            baseline: c.baseline as f64,
            gain: c.gain,
            reciprocal: exact_reciprocal(c.gain),
            invalid: c.invalid.map_or(f64::NAN, f64::from),
        }
    }

    /// `(digital - baseline) / gain`, NaN for the invalid value.
    #[inline(always)]
    fn apply(self, d: i32) -> f64 {
        match self.reciprocal {
            Some(r) => self.scale(d, r),
            None => self.divide(d),
        }
    }

    /// [`apply`](Self::apply) by division, not multiplication by 1/gain: bit-identical
    /// to wfdb-python and the WFDB library.
    #[inline(always)]
    fn divide(self, d: i32) -> f64 {
        self.nan_if_invalid(d, (d as f64 - self.baseline) / self.gain)
    }

    /// [`apply`](Self::apply) when `r` is the exact reciprocal of a power-of-two gain:
    /// the same bits as [`divide`](Self::divide), several times faster.
    #[inline(always)]
    fn scale(self, d: i32, r: f64) -> f64 {
        self.nan_if_invalid(d, (d as f64 - self.baseline) * r)
    }

    /// `p`, or NaN where `d` is the invalid value. A select, not a branch, so that loops
    /// over it stay vectorisable; compared as doubles, which vectorises to one compare
    /// on the converted samples instead of widening an integer mask.
    #[inline(always)]
    fn nan_if_invalid(self, d: i32, p: f64) -> f64 {
        if f64::from(d) == self.invalid {
            f64::NAN
        } else {
            p
        }
    }
}

/// `1 / gain` if `gain` is ±2^k (a normal number whose significand is 1; gains of 1, as
/// in WAV-backed records, are the common case). Then `1 / gain` = ±2^-k is exact (it is
/// at least 2^-1023, a subnormal but representable), so for every `x`, `x / gain` and
/// `x * (1 / gain)` have the same exact value and IEEE 754 rounds it to the same double
/// (overflow, underflow and the sign of zero included). Any other gain is divided by.
fn exact_reciprocal(gain: f64) -> Option<f64> {
    let bits = gain.to_bits();
    let exponent = (bits >> 52) & 0x7FF;
    let significand = bits & ((1 << 52) - 1);
    (significand == 0 && (1..0x7FF).contains(&exponent)).then(|| 1.0 / gain)
}

/// An empty output with room for `len` samples. Large ones are advised to use
/// transparent huge pages (as numpy does for its arrays), which makes first touching
/// them several times cheaper. The advice applies to pages not yet touched: the largest
/// outputs come from the system untouched; one that glibc serves from memory it already
/// holds (below its mmap threshold, which grows up to 32 MiB) may have been touched
/// before, and the advice then only helps where pages are still fresh.
fn output<T: Sample>(len: usize) -> Vec<T> {
    let mut v = Vec::with_capacity(len);
    advise_huge_pages(&mut v);
    v
}

use piece::Piece;

/// In a module of its own so that only `put` can change what `filled` says, which the
/// `unsafe` block of `read_group` relies on.
mod piece {
    use std::mem::MaybeUninit;

    /// A thread's piece of one signal's output, not yet written when handed out, and
    /// written in order from its start: its first `filled()` elements are initialised,
    /// and `filled()` never exceeds its length.
    pub(super) struct Piece<'o, T> {
        out: &'o mut [MaybeUninit<T>],
        filled: usize,
    }

    impl<'o, T> Piece<'o, T> {
        pub(super) fn new(out: &'o mut [MaybeUninit<T>]) -> Self {
            Piece { out, filled: 0 }
        }

        /// Appends `values` (as many as fit).
        #[inline(always)]
        pub(super) fn put(&mut self, values: impl Iterator<Item = T>) {
            let mut n = 0;
            let rest = self.out.get_mut(self.filled..).unwrap_or_default();
            for (o, v) in rest.iter_mut().zip(values) {
                o.write(v);
                n += 1;
            }
            self.filled += n;
        }

        /// How many elements, from the start, are written.
        pub(super) fn filled(&self) -> usize {
            self.filled
        }
    }
}

/// Outputs from this size on are advised to use huge pages (numpy's threshold).
const HUGE_PAGE_ADVICE_BYTES: usize = 4 << 20;

/// Asks the kernel to back the 2 MiB-aligned part of `v`'s allocation with transparent
/// huge pages when it is first touched. Only a hint: the contents do not change, and a
/// failure (huge pages disabled, an old kernel) changes nothing.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn advise_huge_pages<T>(v: &mut Vec<T>) {
    const HUGE: usize = 2 << 20;
    let bytes = v.capacity() * std::mem::size_of::<T>();
    if bytes < HUGE_PAGE_ADVICE_BYTES {
        return;
    }
    let start = v.as_mut_ptr() as usize;
    let (lo, hi) = (start.next_multiple_of(HUGE), (start + bytes) / HUGE * HUGE);
    if lo < hi {
        // SAFETY: [lo, hi) lies within the allocation `v` owns (the Vec is borrowed
        // mutably, so nothing else uses it meanwhile). MADV_HUGEPAGE only changes how the
        // kernel backs these pages: it never unmaps them or changes what they hold, so no
        // memory Rust can see changes. The advice stays with the address range after `v`
        // is freed and is inherited by whatever is allocated there later, which is as
        // harmless. The result is ignored on purpose (see above).
        unsafe {
            libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages<T>(_: &mut Vec<T>) {}

/// One signal of a file being read.
struct Sink<T: Sample> {
    /// Position of the signal's first sample within a frame, and its samples per frame.
    pos: usize,
    spf: usize,
    /// Stored frames (relative to the first read) that fill the signal's output, from
    /// its start; the rest of the output is padding.
    window: Range<usize>,
    /// Start of a format 8 signal's running sum.
    initial: i32,
    conv: T::Conv,
}

/// A signal file being read.
struct Source<'a> {
    file: &'a File,
    name: &'a str,
    fmt: Format,
    /// Byte offset of the samples in the file.
    offset: u64,
    /// Samples per stored frame (all signals of the file).
    tspf: usize,
    /// Record frame of stored frame 0 of the read.
    read_start: u64,
    chunk_frames: usize,
}

impl Source<'_> {
    fn internal(&self, what: &str) -> WfdbError {
        WfdbError::in_file(
            self.name,
            WfdbErrorKind::Signal(format!("internal error while decoding: {what}")),
        )
    }
}

/// A run of stored frames and, for each sink, the part of its output those frames fill.
type Part<'o, T> = (Range<usize>, Vec<Piece<'o, T>>);

/// Cuts the stored frames `0..stored` into parts of `part_frames` frames and each output
/// window (the samples of a signal that come from the file) into the pieces those parts
/// fill.
fn split_outputs<'o, T: Sample>(
    sinks: &[Sink<T>],
    windows: Vec<&'o mut [MaybeUninit<T>]>,
    stored: usize,
    part_frames: usize,
) -> Vec<Part<'o, T>> {
    let mut parts: Vec<Part<'o, T>> = (0..stored.div_ceil(part_frames).max(1))
        .map(|i| {
            let r = (i * part_frames).min(stored)..((i + 1) * part_frames).min(stored);
            (r, Vec::with_capacity(sinks.len()))
        })
        .collect();
    for (k, mut rest) in sinks.iter().zip(windows) {
        for (r, pieces) in &mut parts {
            let lo = k.window.start.clamp(r.start, r.end);
            let hi = k.window.end.clamp(r.start, r.end);
            let at = ((hi - lo) * k.spf).min(rest.len());
            let (piece, tail) = std::mem::take(&mut rest).split_at_mut(at);
            pieces.push(Piece::new(piece));
            rest = tail;
        }
    }
    parts
}

/// Decodes every part, on up to `threads` threads (the calling one included) that take
/// the parts in turn. Returns, per sink, how many samples its pieces were given (the
/// sum of their `filled`), or the first error met.
fn run_parts<T: Sample>(
    src: &Source,
    sinks: &[Sink<T>],
    parts: Vec<Part<'_, T>>,
    threads: usize,
) -> Result<Vec<usize>, WfdbError> {
    let mut written = vec![0; sinks.len()];
    let mut count = |pieces: &[Piece<'_, T>]| {
        for (w, p) in written.iter_mut().zip(pieces) {
            *w += p.filled();
        }
    };
    if threads <= 1 {
        for (r, mut pieces) in parts {
            decode_part(src, sinks, r, &mut pieces)?;
            count(&pieces);
        }
        return Ok(written);
    }
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let parts: Vec<Mutex<Part<'_, T>>> = parts.into_iter().map(Mutex::new).collect();
    let work = || -> Result<(), WfdbError> {
        while !failed.load(Ordering::Relaxed) {
            let Some(part) = parts.get(next.fetch_add(1, Ordering::Relaxed)) else {
                break;
            };
            let mut part = part.lock().unwrap_or_else(PoisonError::into_inner);
            let (r, pieces) = &mut *part;
            if let Err(e) = decode_part(src, sinks, r.clone(), pieces) {
                failed.store(true, Ordering::Relaxed);
                return Err(e);
            }
        }
        Ok(())
    };
    std::thread::scope(|s| {
        // A thread that cannot be started leaves its share to the others.
        let helpers: Vec<_> = (1..threads)
            .filter_map(|_| std::thread::Builder::new().spawn_scoped(s, work).ok())
            .collect();
        let mut result = work();
        for h in helpers {
            match h.join() {
                Ok(r) => result = result.and(r),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        result
    })?;
    for part in parts {
        count(&part.into_inner().unwrap_or_else(PoisonError::into_inner).1);
    }
    Ok(written)
}

/// Reads `pread`-style: at `offset`, without moving (or sharing) a file position.
pub(crate) fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
    }
    #[cfg(not(unix))]
    {
        let mut f = file;
        f.seek(SeekFrom::Start(offset))?;
        f.read_exact(buf)
    }
}

/// Decodes the stored frames `frames` into `outs` (one per sink).
fn decode_part<T: Sample>(
    src: &Source,
    sinks: &[Sink<T>],
    frames: Range<usize>,
    outs: &mut [Piece<'_, T>],
) -> Result<(), WfdbError> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        #[allow(unsafe_code)]
        // SAFETY: the only requirement of calling a function compiled for AVX2 is that
        // the CPU has AVX2, checked just above.
        return unsafe { decode_part_avx2(src, sinks, frames, outs) };
    }
    decode_part_any(src, sinks, frames, outs)
}

/// [`decode_part`] compiled for AVX2 (the decoders and conversions inlined into it are
/// vectorised with 256-bit registers). Results are identical: integer decoding is exact
/// and IEEE division is correctly rounded at any vector width.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn decode_part_avx2<T: Sample>(
    src: &Source,
    sinks: &[Sink<T>],
    frames: Range<usize>,
    outs: &mut [Piece<'_, T>],
) -> Result<(), WfdbError> {
    decode_part_any(src, sinks, frames, outs)
}

/// Buffers a thread reuses from one chunk, and one read, to the next: the bytes read and
/// the samples decoded from them.
#[derive(Default)]
struct Scratch {
    bytes: Vec<u8>,
    flat: Vec<i32>,
}

thread_local! {
    static SCRATCH: Cell<Scratch> = const {
        Cell::new(Scratch { bytes: Vec::new(), flat: Vec::new() })
    };
}

/// Largest scratch kept between reads (chunks take about 200 KiB; frames of very many
/// samples make larger ones, which are freed after the read).
const SCRATCH_KEEP_BYTES: usize = 1 << 20;

#[inline(always)]
fn decode_part_any<T: Sample>(
    src: &Source,
    sinks: &[Sink<T>],
    frames: Range<usize>,
    outs: &mut [Piece<'_, T>],
) -> Result<(), WfdbError> {
    // Taken out of the thread's slot, and put back unless large; a thread without one
    // (it is exiting) uses fresh buffers.
    let mut scratch = SCRATCH.try_with(Cell::take).unwrap_or_default();
    let result = decode_chunks(src, sinks, frames, outs, &mut scratch);
    if scratch.bytes.capacity() + 4 * scratch.flat.capacity() <= SCRATCH_KEEP_BYTES {
        let _ = SCRATCH.try_with(|slot| slot.set(scratch));
    }
    result
}

#[inline(always)]
fn decode_chunks<T: Sample>(
    src: &Source,
    sinks: &[Sink<T>],
    frames: Range<usize>,
    outs: &mut [Piece<'_, T>],
    scratch: &mut Scratch,
) -> Result<(), WfdbError> {
    if frames.is_empty() {
        return Ok(());
    }
    let (fmt, tspf) = (src.fmt, src.tspf);
    let chunk_frames = src.chunk_frames.min(frames.len());
    // A chunk starts up to 2 samples before its first frame, within a packing group.
    let max_samples = chunk_frames * tspf + 2;
    let max_bytes = fmt.bytes_needed(max_samples as u64) as usize;
    if scratch.bytes.len() < max_bytes {
        scratch.bytes.resize(max_bytes, 0);
    }
    let direct = direct_frame_bytes(fmt, tspf);
    let flat_len = if direct.is_some() { 0 } else { max_samples };
    if scratch.flat.len() < flat_len {
        scratch.flat.resize(flat_len, 0);
    }
    // Running values of format 8 signals (decoded in one part from frame 0).
    let mut acc: Vec<i32> = sinks.iter().map(|k| k.initial).collect();
    let mut frame = frames.start;
    while frame < frames.end {
        let n = chunk_frames.min(frames.end - frame);
        let flat_start = (src.read_start + frame as u64) * tspf as u64;
        let (byte_start, skip) = fmt.group_start(flat_start);
        let count = skip as usize + n * tspf;
        let want = fmt.bytes_needed(count as u64) as usize;
        let Some(buf) = scratch.bytes.get_mut(..want) else {
            return Err(src.internal("a chunk is larger than its buffer"));
        };
        read_exact_at(src.file, buf, src.offset + byte_start).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                // The size was checked before, so the file shrank while we read it.
                WfdbError::in_file(
                    src.name,
                    WfdbErrorKind::Signal(
                        "the file ended early (was it changed while being read?)".into(),
                    ),
                )
            } else {
                WfdbError::io(src.name, e)
            }
        })?;
        if let Some(fb) = direct
            && skip == 0
        {
            // Each signal straight from the bytes read.
            for (k, out) in sinks.iter().zip(outs.iter_mut()) {
                let lo = k.window.start.clamp(frame, frame + n) - frame;
                let hi = k.window.end.clamp(frame, frame + n) - frame;
                if lo < hi {
                    let source = GatherFrom::Bytes(fmt, &buf[lo * fb..hi * fb]);
                    let at = (tspf, k.pos, k.spf);
                    T::with_conv(k.conv, Gather { source, at, out });
                }
            }
            frame += n;
            continue;
        }
        let Some(dec) = scratch.flat.get_mut(..count) else {
            return Err(src.internal("a chunk is larger than its buffer"));
        };
        if format::decode_inline(fmt, buf, dec) != count {
            return Err(src.internal("a chunk decoded to fewer samples than read"));
        }
        let chunk = &dec[skip as usize..];
        for ((k, out), sum) in sinks.iter().zip(outs.iter_mut()).zip(&mut acc) {
            let lo = k.window.start.clamp(frame, frame + n) - frame;
            let hi = k.window.end.clamp(frame, frame + n) - frame;
            let (pos, spf, c) = (k.pos, k.spf, k.conv);
            if fmt == Format::F8 {
                // Differences before the window still move the running value.
                let diffs = chunk
                    .chunks_exact(tspf)
                    .take(hi)
                    .enumerate()
                    .flat_map(|(f, fr)| {
                        let d = fr.get(pos..pos + spf).unwrap_or_default();
                        d.iter().map(move |&d| (f, d))
                    });
                out.put(diffs.filter_map(|(f, d)| {
                    *sum = sum.wrapping_add(d);
                    (f >= lo).then(|| T::conv(c, *sum))
                }));
            } else if lo < hi {
                let source = GatherFrom::Decoded(&chunk[lo * tspf..hi * tspf]);
                T::with_conv(
                    c,
                    Gather {
                        source,
                        at: (tspf, pos, spf),
                        out,
                    },
                );
            }
        }
        frame += n;
    }
    Ok(())
}

/// Decodes one signal's samples straight from `bytes` (whole frames of `tspf` samples
/// read from the file), for the formats that store each sample in whole bytes
/// ([`direct_frame_bytes`]), converting each with `conv`. Cutting format 212's groups
/// apart this way measured slower than decoding them into a chunk first.
#[inline(always)]
fn gather_direct<T: Sample>(
    fmt: Format,
    bytes: &[u8],
    (tspf, pos, spf): (usize, usize, usize),
    out: &mut Piece<'_, T>,
    conv: impl Fn(i32) -> T + Copy,
) {
    use format::sample;
    let at = (tspf, pos, spf);
    match fmt {
        Format::F80 => gather(bytes.as_chunks().0, at, out, move |b| conv(sample::f80(*b))),
        Format::F16 => gather(bytes.as_chunks().0, at, out, move |b| conv(sample::f16(*b))),
        Format::F61 => gather(bytes.as_chunks().0, at, out, move |b| conv(sample::f61(*b))),
        Format::F160 => gather(bytes.as_chunks().0, at, out, move |b| {
            conv(sample::f160(*b))
        }),
        Format::F24 => gather(bytes.as_chunks().0, at, out, move |b| conv(sample::f24(*b))),
        Format::F32 => gather(bytes.as_chunks().0, at, out, move |b| conv(sample::f32(*b))),
        _ => {}
    }
}

/// Bytes per stored frame when [`gather_direct`] can decode the file's signals.
fn direct_frame_bytes(fmt: Format, tspf: usize) -> Option<usize> {
    fmt.whole_bytes().map(|b| b as usize * tspf)
}

/// One signal's samples of a chunk, and where they go: run with the signal's conversion.
struct Gather<'a, 'o, T> {
    /// The chunk's bytes ([`gather_direct`]) or its decoded samples.
    source: GatherFrom<'a>,
    /// Samples per frame of the file, the signal's position in a frame and its samples
    /// per frame.
    at: (usize, usize, usize),
    out: &'a mut Piece<'o, T>,
}

enum GatherFrom<'a> {
    Bytes(Format, &'a [u8]),
    Decoded(&'a [i32]),
}

impl<T: Sample> WithConv<T> for Gather<'_, '_, T> {
    #[inline(always)]
    fn run(self, conv: impl Fn(i32) -> T + Copy) {
        match self.source {
            GatherFrom::Bytes(fmt, bytes) => gather_direct(fmt, bytes, self.at, self.out, conv),
            GatherFrom::Decoded(frames) => gather(frames, self.at, self.out, move |&d| conv(d)),
        }
    }
}

/// Copies one signal's samples out of whole frames of `tspf` stored samples (decoded
/// `i32`s, or the bytes of each), in which the signal's `spf` samples start at `pos`,
/// decoding and converting each with `f`.
#[inline(always)]
fn gather<E, T: Sample>(
    frames: &[E],
    (tspf, pos, spf): (usize, usize, usize),
    out: &mut Piece<'_, T>,
    f: impl Fn(&E) -> T + Copy,
) {
    match (tspf, spf) {
        (1, _) => out.put(frames.iter().map(f)),
        (2, 1) => gather_fixed::<2, E, T>(frames, pos, out, f),
        (3, 1) => gather_fixed::<3, E, T>(frames, pos, out, f),
        (4, 1) => gather_fixed::<4, E, T>(frames, pos, out, f),
        (_, 1) => {
            let pos = pos.min(tspf - 1); // lets the compiler drop the bounds check
            out.put(frames.chunks_exact(tspf).map(|fr| f(&fr[pos])));
        }
        _ => out.put(
            frames
                .chunks_exact(tspf)
                .flat_map(|fr| fr.get(pos..pos + spf).unwrap_or_default())
                .map(f),
        ),
    }
}

/// [`gather`] for one sample per frame out of frames of `N` samples.
#[inline(always)]
fn gather_fixed<const N: usize, E, T: Sample>(
    frames: &[E],
    pos: usize,
    out: &mut Piece<'_, T>,
    f: impl Fn(&E) -> T,
) {
    let (frames, _) = frames.as_chunks::<N>();
    let pos = pos.min(N - 1);
    out.put(frames.iter().map(|fr| f(&fr[pos])));
}

/// Reads the wanted signals of a FLAC signal file over `range` (record frames). Each
/// signal is a channel of the stream, and frame `t` of a signal with `spf` samples per
/// frame is its channel's samples `offset + t·spf ..`, where the header's byte offset
/// counts samples of each channel (docs/formats.md, "FLAC formats"). Only the stream's
/// frames that hold samples read are decoded (`flac::Stream::decode` finds the first
/// without decoding those before it). Large reads are cut into parts that several
/// threads decode at once, each from its own starting frame.
fn read_flac<T: Sample>(
    file: &File,
    name: &str,
    specs: &[SignalSpec],
    group: Range<usize>,
    wanted: &[(usize, usize)],
    range: Range<u64>,
    sig_len: u64,
) -> Result<Vec<Vec<T>>, WfdbError> {
    let first = &specs[group.start];
    let fmt = first.format;
    let stream = flac::Stream::open(file, name, fmt, group.len())?;
    let spf = first.effective_samples_per_frame() as u64;
    let offset = first.effective_byte_offset();
    let needed = sig_len.checked_mul(spf).and_then(|n| n.checked_add(offset));
    let total = stream.info.total;
    if total != 0 && needed.is_none_or(|n| n > total) {
        return Err(WfdbError::in_file(
            name,
            WfdbErrorKind::Signal(format!(
                "the file is truncated or the header is wrong: {sig_len} frames of {spf} \
                 samples after an offset of {offset} samples need {} samples per channel, but \
                 the FLAC stream holds {total}",
                needed.map_or("more than 2^64".into(), |n| n.to_string())
            )),
        ));
    }
    let n_frames = range.end - range.start;
    // Per wanted signal: its channel, the stream sample of its first output sample, how
    // many output samples the stream fills (the rest, past the record's end, is padding),
    // and its conversion.
    let padding = padding_value(fmt);
    let mut plan = Vec::with_capacity(wanted.len());
    let mut outs: Vec<Vec<T>> = Vec::with_capacity(wanted.len());
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    for &(_, s) in wanted {
        let spec = &specs[s];
        let start_frame = range.start + skew_frames(spec);
        let filled_frames = n_frames.min(sig_len.saturating_sub(start_frame));
        let start = offset + start_frame * spf;
        let filled = (filled_frames * spf) as usize;
        if filled > 0 {
            lo = lo.min(start);
            hi = hi.max(start + filled as u64);
        }
        let conv = T::conv_for(&calibration(spec, 0));
        let len = (n_frames * spf) as usize;
        // Zeroed, not filled: decoding writes the samples the stream fills (a fill
        // first cost a pass over the whole output), padding the rest.
        let mut out = vec![T::ZERO; len];
        out[filled.min(len)..].fill(T::conv(conv, padding));
        outs.push(out);
        plan.push((s - group.start, start, filled, conv));
    }
    if lo >= hi {
        return Ok(outs);
    }
    // Parts decoded on up to max_threads() threads. FLAC decodes ten times slower than
    // the packed formats, so smaller reads are worth cutting; finding a part's first
    // frame costs a few header probes.
    let samples = (hi - lo) as usize * wanted.len();
    let threads = (samples / FLAC_PART_SAMPLES).clamp(1, max_threads());
    let part_len = (hi - lo).div_ceil(threads as u64);
    let cuts: Vec<u64> = (0..=threads as u64)
        .map(|i| (lo + i * part_len).min(hi))
        .collect();
    // Each output cut where the parts meet: part i fills the samples of stream samples
    // cuts[i]..cuts[i + 1].
    let mut pieces: Vec<Vec<&mut [T]>> = (0..threads).map(|_| Vec::new()).collect();
    for (out, &(_, start, filled, _)) in outs.iter_mut().zip(&plan) {
        let mut rest = &mut out[..filled];
        let mut at = start;
        for (i, piece) in pieces.iter_mut().enumerate() {
            let end = cuts[i + 1].clamp(start, start + filled as u64);
            let (this, tail) = std::mem::take(&mut rest).split_at_mut((end - at.min(end)) as usize);
            piece.push(this);
            rest = tail;
            at = at.max(end);
        }
    }
    let decode_part = |i: usize, mut piece: Vec<&mut [T]>| -> Result<(), WfdbError> {
        let (a, b) = (cuts[i], cuts[i + 1]);
        stream.decode(a, b, &mut |first, block| {
            let n = u64::from(block.duration());
            for ((ch, start, filled, conv), out) in plan.iter().zip(piece.iter_mut()) {
                // This piece holds the signal's stream samples from max(start, a).
                let base = (*start).max(a);
                let lo = first.max(base);
                let hi = (first + n).min(*start + *filled as u64).min(b.max(base));
                if lo >= hi {
                    continue;
                }
                let src = &block.channel(*ch as u32)[(lo - first) as usize..(hi - first) as usize];
                let dst = &mut out[(lo - base) as usize..(hi - base) as usize];
                T::with_conv(*conv, CopyChannel { src, dst });
            }
        })
    };
    if threads == 1 {
        for (i, piece) in pieces.into_iter().enumerate() {
            decode_part(i, piece)?;
        }
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = pieces
                .into_iter()
                .enumerate()
                .map(|(i, piece)| scope.spawn(move || decode_part(i, piece)))
                .collect();
            let mut result = Ok(());
            for h in handles {
                match h.join() {
                    Ok(r) => result = result.and(r),
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
            result
        })?;
    }
    Ok(outs)
}

/// Copies one channel's samples into a signal's output with the signal's conversion.
struct CopyChannel<'a, T> {
    src: &'a [i32],
    dst: &'a mut [T],
}

impl<T: Sample> WithConv<T> for CopyChannel<'_, T> {
    #[inline(always)]
    fn run(self, conv: impl Fn(i32) -> T + Copy) {
        for (d, &s) in self.dst.iter_mut().zip(self.src) {
            *d = conv(s);
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

/// Checks that signals sharing a file are consecutive and agree on what the file holds
/// (format, byte offset, block size), as the WFDB library requires; the signals of a FLAC
/// file are at most 8 (FLAC's channel limit) with the same samples per frame.
pub(crate) fn check_file_groups(specs: &[SignalSpec]) -> Result<(), String> {
    // A set, not a search of the earlier groups: a header may list a file per signal.
    let mut earlier: HashSet<&str> = HashSet::new();
    for g in file_groups(specs) {
        let first = &specs[g.start];
        if !earlier.insert(&first.file_name) && !first.is_null() {
            return Err(format!(
                "signal {} uses file {:?}, which earlier signals used too but not just before \
                 it; signals sharing a file must be consecutive",
                g.start, first.file_name
            ));
        }
        if first.format.is_flac() && g.len() > flac::MAX_CHANNELS {
            return Err(format!(
                "signals {} to {} share FLAC file {:?}: a FLAC stream holds at most {} \
                 signals (channels)",
                g.start,
                g.end - 1,
                first.file_name,
                flac::MAX_CHANNELS
            ));
        }
        for (k, s) in specs[g.clone()].iter().enumerate().skip(1) {
            let (a, b) = (g.start, g.start + k);
            let file = &first.file_name;
            if first.format.is_flac()
                && s.effective_samples_per_frame() != first.effective_samples_per_frame()
            {
                return Err(format!(
                    "signals {a} and {b} share FLAC file {file:?} but have {} and {} samples \
                     per frame; the channels of a FLAC stream have one sampling rate",
                    first.effective_samples_per_frame(),
                    s.effective_samples_per_frame()
                ));
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes record `r` in `dir`: one signal file `r.dat` of random bytes in `fmt`
    /// holding `frames` frames of signals with the given (samples per frame, skew), after
    /// `offset` bytes.
    fn write(dir: &Path, fmt: Format, signals: &[(u32, u32)], frames: u64, offset: u64) {
        let tspf: u64 = signals.iter().map(|s| s.0 as u64).sum();
        let len = offset + fmt.bytes_written(frames * tspf);
        let mut state = 0x9E37_79B9_7F4A_7C15u64 ^ len;
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect();
        std::fs::write(dir.join("r.dat"), bytes).unwrap();
        let mut hea = format!("r {} 360 {frames}\n", signals.len());
        for (i, &(spf, skew)) in signals.iter().enumerate() {
            hea += &format!(
                "r.dat {}x{spf}:{skew}+{offset} {}({})/mV 12 0 {} 0 0 s{i}\n",
                fmt.code(),
                [200.0, 38180.879946031266, 1.0, 0.25][i % 4],
                i as i32 * 37 - 50,
                i as i32 * 11 - 7,
            );
        }
        std::fs::write(dir.join("r.hea"), hea).unwrap();
    }

    /// What a read must return, from one decode of the whole file: stored frame
    /// `t + skew` for frame `t`, padding past the end, format 8 summed from the start.
    fn expected(dir: &Path, rec: &Record, from: u64, to: u64) -> Vec<Vec<i32>> {
        let specs = &rec.header.signals;
        let fmt = specs[0].format;
        let tspf: usize = specs
            .iter()
            .map(|s| s.effective_samples_per_frame() as usize)
            .sum();
        let sig_len = rec.sig_len().unwrap() as usize;
        let bytes = std::fs::read(dir.join("r.dat")).unwrap();
        let mut flat = vec![0; sig_len * tspf];
        format::decode(
            fmt,
            &bytes[specs[0].effective_byte_offset() as usize..],
            &mut flat,
        );
        let mut pos = 0;
        specs
            .iter()
            .map(|s| {
                let spf = s.effective_samples_per_frame() as usize;
                let mut values = Vec::with_capacity(sig_len * spf);
                for frame in flat.chunks_exact(tspf) {
                    values.extend_from_slice(&frame[pos..pos + spf]);
                }
                if fmt == Format::F8 {
                    let mut acc = s.effective_initial_value();
                    for v in &mut values {
                        acc = acc.wrapping_add(*v);
                        *v = acc;
                    }
                }
                pos += spf;
                let skew = skew_frames(s) as usize;
                let (lo, hi) = ((from as usize + skew) * spf, (to as usize + skew) * spf);
                let mut out = values[lo.min(values.len())..hi.min(values.len())].to_vec();
                out.resize((to - from) as usize * spf, padding_value(fmt));
                out
            })
            .collect()
    }

    /// A FLAC read large enough to be cut into parts decoded on several threads (on a
    /// machine with more than one CPU) gives every sample of every signal, digital and
    /// physical, whole and from an offset that falls inside a block.
    #[test]
    fn large_flac_reads_in_parts_give_every_sample() {
        let dir = tempfile::tempdir().unwrap();
        let frames = 300_000usize;
        let data: Vec<Vec<i32>> = (0..8)
            .map(|k| {
                (0..frames)
                    .map(|t| ((t * 7 + k * 1013) % 3001) as i32 - 1500 + (t % 13) as i32)
                    .collect()
            })
            .collect();
        let signals: Vec<super::super::WriteSignal> = data
            .iter()
            .map(|d| super::super::WriteSignal {
                spec: SignalSpec::new("big.dat", Format::F516),
                samples: d,
            })
            .collect();
        let line = super::super::RecordLine::new("big", 500.0);
        super::super::write_record(dir.path(), &line, &signals, &[]).unwrap();
        let rec = Record::open(dir.path().join("big")).unwrap();
        let all = rec.read(&ReadOptions::default()).unwrap();
        for (k, s) in all.signals.iter().enumerate() {
            assert!(s.digital == data[k], "signal {k}");
        }
        let physical = rec.read_physical(&ReadOptions::default()).unwrap();
        for (k, s) in physical.signals.iter().enumerate() {
            assert!(s.values == all.signals[k].physical(), "signal {k} physical");
        }
        let part = rec
            .read(&ReadOptions {
                from: 123_457,
                to: None,
                signals: Some(vec![7, 2]),
            })
            .unwrap();
        assert!(part.signals[0].digital == data[7][123_457..]);
        assert!(part.signals[1].digital == data[2][123_457..]);
    }

    /// A header whose frame claims billions of samples is refused, naming the file,
    /// before any buffer is sized from it (such a read once tried to allocate 16 GB for a
    /// read of no frames and aborted the process).
    #[test]
    fn an_absurd_frame_is_refused_without_allocating_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("r.dat"), b"").unwrap();
        for hea in [
            "r 1 360 0\nr.dat 32x4000000000 200 12 0 0 0 0 s\n",
            "r 1 360\nr.dat 32x4000000000 200 12 0 0 0 0 s\n",
        ] {
            std::fs::write(dir.path().join("r.hea"), hea).unwrap();
            let rec = Record::open(dir.path().join("r")).unwrap();
            let all = ReadOptions::default();
            for e in [
                rec.read(&all).err().map(|e| e.to_string()),
                rec.read_physical(&all).err().map(|e| e.to_string()),
            ] {
                let e = e.unwrap_or_default();
                assert!(
                    e.contains("r.dat") && e.contains("4000000000 samples"),
                    "{hea:?}: {e}"
                );
            }
        }
    }

    /// header(5): a `sig_len` of 0, like none, leaves the length unspecified: it comes
    /// from the signal file, or from the segments of a multi-segment record (which the
    /// record line's 0 must not contradict).
    #[test]
    fn a_length_of_zero_is_unspecified() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let samples: Vec<u8> = (0..20i16).flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(d.join("s.dat"), samples).unwrap();
        std::fs::write(d.join("s.hea"), "s 1 250 0\ns.dat 16 200 16 0 0 0 0 a\n").unwrap();
        let rec = Record::open(d.join("s")).unwrap();
        assert_eq!(rec.sig_len().unwrap(), 20);
        let read = rec.read(&ReadOptions::default()).unwrap();
        assert_eq!(read.signals[0].digital, (0..20).collect::<Vec<i32>>());
        std::fs::write(d.join("m.hea"), "m/2 1 250 0\ns 20\ns 20\n").unwrap();
        let rec = Record::open(d.join("m")).unwrap();
        assert_eq!(rec.sig_len().unwrap(), 40);
        assert_eq!(rec.read(&ReadOptions::default()).unwrap().frames, 40);
    }

    /// A multi-segment record whose first segment, of length 0, is null: taken as the
    /// layout it would describe no signal and every sample would read as invalid.
    #[test]
    fn a_null_layout_segment_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let samples: Vec<u8> = (0..20i16).flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(d.join("s.dat"), samples).unwrap();
        std::fs::write(d.join("s.hea"), "s 1 250 20\ns.dat 16 200 16 0 0 0 0 a\n").unwrap();
        std::fs::write(d.join("m.hea"), "m/3 1 250 30\n~ 0\ns 20\n~ 10\n").unwrap();
        let e = Record::open(d.join("m")).unwrap_err().to_string();
        assert!(
            e.contains("m.hea") && e.contains("layout segment cannot be a null segment"),
            "{e}"
        );
        // A null segment of length 0 elsewhere is an empty gap.
        std::fs::write(d.join("m.hea"), "m/3 1 250 30\ns 20\n~ 0\n~ 10\n").unwrap();
        let read = Record::open(d.join("m"))
            .unwrap()
            .read(&ReadOptions::default())
            .unwrap();
        assert_eq!(read.signals[0].digital[..20], (0..20).collect::<Vec<i32>>());
    }

    /// A length whose byte count exceeds u64 is refused with a true message, not with a
    /// saturated count of 18446744073709551615 bytes.
    #[test]
    fn a_length_beyond_addressable_bytes_is_refused_truthfully() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("r.dat"), [0u8; 40]).unwrap();
        for (hea, frames, spf) in [
            (
                "r 1 250 18446744073709551615\nr.dat 16\n",
                "18446744073709551615",
                1,
            ),
            (
                "r 1 250 18446744073709551615\nr.dat 16x2\n",
                "18446744073709551615",
                2,
            ),
            (
                "r 1 250 9223372036854775808\nr.dat 16\n",
                "9223372036854775808",
                1,
            ),
        ] {
            std::fs::write(d.join("r.hea"), hea).unwrap();
            let rec = Record::open(d.join("r")).unwrap();
            let e = rec
                .read(&ReadOptions {
                    from: 0,
                    to: Some(5),
                    signals: None,
                })
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("r.dat")
                    && e.contains(&format!("{frames} frames of {spf} samples"))
                    && e.contains("more bytes than can be addressed")
                    && !e.contains("18446744073709551615 bytes"),
                "{hea:?}: {e}"
            );
        }
        // Nor does a read's sample count saturate.
        std::fs::write(
            d.join("r.hea"),
            "r 2 250 18446744073709551615\nr.dat 16\nr.dat 16\n",
        )
        .unwrap();
        let e = Record::open(d.join("r"))
            .unwrap()
            .read(&ReadOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("r.hea") && e.contains("more than 2^64 samples"),
            "{e}"
        );
    }

    /// What header(5) and the WFDB library accept is read: modifiers in any order, a
    /// negative block size, empty units, signal lines past the announced count.
    #[test]
    fn lenient_headers_read_as_the_wfdb_library_reads_them() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let mut bytes = vec![0xFFu8; 4];
        bytes.extend((0..20i16).flat_map(|v| v.to_le_bytes()));
        std::fs::write(d.join("r.dat"), bytes).unwrap();
        std::fs::write(
            d.join("r.hea"),
            "r 1 250 20\nr.dat 16+4:1 100/ 16 0 0 0 -1 s\nr.dat 16\n",
        )
        .unwrap();
        let read = Record::open(d.join("r"))
            .unwrap()
            .read(&ReadOptions::default())
            .unwrap();
        let s = &read.signals[0];
        assert_eq!(s.units, "mV");
        // Skew 1: frame t is stored frame t + 1, and the last frame lies past the end.
        assert_eq!(s.digital[..19], (1..20).collect::<Vec<i32>>());
        assert_eq!(s.digital[19], GENERIC_INVALID);
    }

    /// Signals enough that work quadratic in their number takes minutes in a debug build
    /// (opening a record of 100000 signal files took 36 s), while linear work takes a
    /// moment.
    const MANY_SIGNALS: usize = 100_000;

    /// Writes `dir/name.hea`: the record line, then one line per signal.
    fn write_header(
        dir: &Path,
        name: &str,
        record_line: &str,
        lines: impl Iterator<Item = String>,
    ) {
        let mut hea = format!("{record_line}\n");
        for line in lines {
            hea += &line;
            hea.push('\n');
        }
        std::fs::write(dir.join(format!("{name}.hea")), hea).unwrap();
    }

    #[test]
    fn opening_a_record_of_many_files_takes_linear_time() {
        // Every signal in a file of its own: each file is looked for among the earlier
        // ones once, not compared with each of them.
        let dir = tempfile::tempdir().unwrap();
        let n = MANY_SIGNALS;
        let files = |n| (0..n).map(|i| format!("f{i:07}.dat 16"));
        write_header(dir.path(), "q", &format!("q {n} 250 0"), files(n));
        let rec = Record::open(dir.path().join("q")).unwrap();
        assert_eq!(rec.n_signals(), n);
        // A file used again after others is still found, with the same message.
        let again = files(n).chain(["f0000001.dat 16".to_string()]);
        write_header(dir.path(), "q", &format!("q {} 250 0", n + 1), again);
        let e = Record::open(dir.path().join("q")).unwrap_err();
        assert!(
            e.to_string().ends_with(&format!(
                "q.hea: signal {n} uses file \"f0000001.dat\", which earlier signals used too \
                 but not just before it; signals sharing a file must be consecutive"
            )),
            "{e}"
        );
    }

    #[test]
    fn reading_many_signals_takes_linear_time() {
        // Null signals, each in a group of its own: each group finds its selected
        // signals without going through the whole selection.
        let dir = tempfile::tempdir().unwrap();
        let n = MANY_SIGNALS;
        let nulls = (0..n).map(|i| format!("~ 0 200 12 0 0 0 0 s{i}"));
        write_header(dir.path(), "z", &format!("z {n} 250 1"), nulls);
        let rec = Record::open(dir.path().join("z")).unwrap();
        let s = rec.read(&ReadOptions::default()).unwrap();
        assert_eq!(s.signals.len(), n);
        assert!(
            s.signals
                .iter()
                .enumerate()
                .all(|(i, d)| d.index == i && d.digital == [GENERIC_INVALID])
        );
        // A selection in another order, with a signal twice.
        let picked = vec![n - 1, 3, n - 1, 0];
        let s = rec
            .read(&ReadOptions {
                signals: Some(picked.clone()),
                ..ReadOptions::default()
            })
            .unwrap();
        let indices: Vec<usize> = s.signals.iter().map(|d| d.index).collect();
        assert_eq!(indices, picked);
        assert_eq!(s.signals[1].name.as_deref(), Some("s3"));
    }

    #[test]
    fn reading_many_signals_of_a_variable_layout_takes_linear_time() {
        // The layout names the signals; a segment holds them in another order, and one
        // it lacks reads as invalid. Each is found by name once, not by a search of the
        // segment's signals.
        let dir = tempfile::tempdir().unwrap();
        let n = MANY_SIGNALS;
        let null = |i: usize| format!("~ 0 200 12 0 0 0 0 s{i}");
        write_header(
            dir.path(),
            "lay",
            &format!("lay {n} 250 0"),
            (0..n).map(null),
        );
        // The segment's signal i is the layout's n-1-i; s0 is missing, s1 is there twice
        // (the first one counts).
        let seg = (1..n)
            .rev()
            .map(|i| match i {
                1 => null(1).replace("200", "400"),
                _ => null(i),
            })
            .chain([null(1)]);
        write_header(dir.path(), "seg", &format!("seg {n} 250 2"), seg);
        std::fs::write(
            dir.path().join("m.hea"),
            format!("m/2 {n} 250 2\nlay 0\nseg 2\n"),
        )
        .unwrap();
        let rec = Record::open(dir.path().join("m")).unwrap();
        let s = rec.read(&ReadOptions::default()).unwrap();
        assert_eq!(s.signals.len(), n);
        assert_eq!(s.signals[0].calibration[0].gain, 1.0);
        assert_eq!(s.signals[1].calibration[0].gain, 400.0);
        assert!(
            s.signals[2..]
                .iter()
                .enumerate()
                .all(|(i, d)| d.index == i + 2
                    && d.name.as_deref() == Some(&format!("s{}", i + 2))
                    && d.calibration[0].gain == 200.0
                    && d.digital == [GENERIC_INVALID; 2])
        );
    }

    #[test]
    fn io_errors_are_shown_once_in_the_error_chain() {
        // Found in an audit: `physiojudge wfdb rdsamp` printed "e14.dat: cannot read the
        // file: No such file or directory (os error 2): No such file or directory (os
        // error 2)", the I/O error being in the message and also the `source()`.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("e14.hea"), "e14 1 100 10\ne14.dat 16\n").unwrap();
        let dat = dir.path().join("e14.dat");
        let io = std::fs::read(&dat).unwrap_err();
        let rec = Record::open(dir.path().join("e14")).unwrap();
        let e = rec.read(&ReadOptions::default()).unwrap_err();
        assert_eq!(
            crate::test_util::chain(&e),
            format!("{}: cannot read the file: {io}", dat.display())
        );
        crate::test_util::assert_io_error_shown_once(&e, &io);
        let e = Record::open(dir.path().join("missing")).unwrap_err();
        crate::test_util::assert_io_error_shown_once(&e, &io);
    }

    fn check(fmt: Format, signals: &[(u32, u32)], frames: u64, offset: u64) {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), fmt, signals, frames, offset);
        let rec = Record::open(dir.path().join("r")).unwrap();
        for (from, to) in [(0, frames), (1, frames - 5), (frames / 3, frames / 3 + 7)] {
            if frames > 10_000 && (from, to) != (0, frames) {
                continue;
            }
            let opts = ReadOptions {
                from,
                to: Some(to),
                signals: None,
            };
            let want = expected(dir.path(), &rec, from, to);
            let got = rec.read(&opts).unwrap();
            let physical = rec.read_physical(&opts).unwrap();
            for ((w, g), p) in want.iter().zip(&got.signals).zip(&physical.signals) {
                assert!(w == &g.digital, "{fmt:?} {signals:?} {from}..{to}: digital");
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&g.physical()), bits(&p.values), "{fmt:?} {from}..{to}");
                assert_eq!(
                    (&g.name, &g.units, g.samples_per_frame, g.index),
                    (&p.name, &p.units, p.samples_per_frame, p.index)
                );
            }
        }
        // Selected signals, in another order.
        let opts = ReadOptions {
            from: 2,
            to: Some(frames),
            signals: Some(vec![signals.len() - 1, 0]),
        };
        let want = expected(dir.path(), &rec, 2, frames);
        let got = rec.read_physical(&opts).unwrap();
        let digital = rec.read(&opts).unwrap();
        assert_eq!(digital.signals[0].digital, want[signals.len() - 1]);
        assert_eq!(digital.signals[1].digital, want[0]);
        assert_eq!(got.signals[0].index, signals.len() - 1);
    }

    #[test]
    fn power_of_two_gains_multiply_to_the_same_bits_as_they_divide() {
        let xs: Vec<f64> = [0i64, 1, -1, 3, -7, 2047, -2048, 32767, -32768, 65535]
            .into_iter()
            .chain([
                i32::MAX as i64 - i32::MIN as i64,
                i32::MIN as i64 - i32::MAX as i64,
            ])
            .chain((0..2000).map(|i| (i * 2654435761i64) % (1 << 33) - (1 << 32)))
            .map(|x| x as f64)
            .collect();
        for k in -1022..=1023 {
            for sign in [1.0, -1.0] {
                let gain = sign * 2f64.powi(k);
                let r = exact_reciprocal(gain).unwrap();
                for &x in &xs {
                    assert_eq!((x / gain).to_bits(), (x * r).to_bits(), "{x} / 2^{k}");
                }
            }
        }
        for gain in [
            200.0,
            3.0,
            1.5,
            0.1,
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NAN,
            5e-324,
        ] {
            assert_eq!(exact_reciprocal(gain), None, "{gain}");
        }
        assert_eq!(exact_reciprocal(1.0), Some(1.0));
    }

    #[test]
    fn only_the_invalid_value_of_a_run_becomes_nan() {
        // i32::MIN is format 32's invalid value: it must become NaN there and nowhere
        // else, by the multiplying (gain 1) and the dividing (gain 200) conversions.
        let digital = vec![
            i32::MIN,
            i32::MIN + 1,
            i32::MIN,
            7,
            i32::MIN,
            i32::MIN + 1,
            -32768,
        ];
        let run = |start, len, gain, baseline, invalid| Calibration {
            start,
            len,
            gain,
            baseline,
            invalid,
        };
        let data = SignalData {
            index: 0,
            name: None,
            units: "mV".into(),
            samples_per_frame: 1,
            digital,
            calibration: vec![
                run(0, 2, 1.0, 0, None),
                run(2, 2, 200.0, 3, None),
                run(4, 3, 200.0, 0, Some(i32::MIN)),
            ],
        };
        let p = data.physical();
        assert_eq!(p[..2], [-2147483648.0, -2147483647.0]);
        assert_eq!(p[2..4], [(i32::MIN as f64 - 3.0) / 200.0, 4.0 / 200.0]);
        assert!(p[4].is_nan());
        assert_eq!(p[5..], [(i32::MIN + 1) as f64 / 200.0, -32768.0 / 200.0]);
    }

    #[test]
    fn small_reads_match_a_whole_file_decode() {
        for fmt in Format::PACKED.into_iter().filter(|&f| f != Format::Null) {
            check(fmt, &[(1, 0), (2, 3), (1, 1), (1, 0)], 1000, 7);
            check(fmt, &[(1, 0), (1, 0)], 999, 0);
            check(fmt, &[(1, 2)], 1001, 3);
        }
    }

    #[test]
    fn large_reads_split_across_threads_match_a_whole_file_decode() {
        // More than 2 * PART_SAMPLES samples: cut into parts, decoded on every core (on a
        // machine with one, this checks the parts decoded in turn). Odd samples per frame
        // put part and chunk boundaries inside packing groups.
        let frames = (PART_SAMPLES / 2) as u64 + 123;
        for fmt in [Format::F16, Format::F212, Format::F311] {
            check(fmt, &[(1, 0), (2, 5), (1, 0)], frames, 5);
        }
    }
}
