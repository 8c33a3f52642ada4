//! Planning a read: what can be checked of a record without its signal files (the
//! layout of its files and segments), its length, and a read's options against it.

use std::collections::HashSet;
use std::fs::File;
use std::ops::Range;

use super::super::WfdbError;
use super::super::flac;
use super::super::header::{SegmentSpec, SignalSpec};
use super::{MAX_READ_SAMPLES, ReadOptions, Record, display};

impl Record {
    /// Checks what can be checked without the signal files: signals sharing a file are
    /// consecutive and agree on the format and byte offset; segment lengths add up.
    pub(super) fn check_layout(&self) -> Result<(), WfdbError> {
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

    /// Whether this multi-segment record starts with a layout segment (length 0).
    pub(super) fn has_layout_segment(&self) -> bool {
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
    pub(super) fn plan(
        &self,
        opts: &ReadOptions,
    ) -> Result<(Vec<usize>, Range<u64>, u64), WfdbError> {
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
