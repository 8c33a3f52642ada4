//! Reading a single-segment record: its signals grouped by signal file, each file's
//! group read into outputs allocated once, large reads cut into parts decoded on several
//! threads.

use std::fs::File;
use std::mem::MaybeUninit;
use std::ops::Range;
use std::sync::OnceLock;

use super::super::format::{Format, GENERIC_INVALID};
use super::super::header::SignalSpec;
use super::super::{WfdbError, WfdbErrorKind};
use super::decode::{Sink, Source, run_parts, split_outputs};
use super::flac_file::read_flac;
use super::plan::file_groups;
use super::sample::{Sample, output};
use super::{MAX_READ_SAMPLES, Record, calibration, display, padding_value, skew_frames};

impl Record {
    /// Reads the selected signals of a single-segment record: (signal index, samples) in
    /// the order selected.
    pub(super) fn read_single<T: Sample>(
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
}

/// Samples decoded per chunk when reading a signal file (128 KiB of `i32`): large
/// enough to amortise the system calls, small enough to stay in cache.
const CHUNK_SAMPLES: usize = 32 * 1024;

/// Samples (all wanted signals together) a read returns per part when it is large enough
/// to be decoded on several threads. A part costs a few milliseconds, far more than
/// starting a thread; reads shorter than two parts stay on the calling thread.
pub(super) const PART_SAMPLES: usize = 1 << 20;

/// One signal file to read: its signals, and the wanted ones among them as (position in
/// the selection, signal).
type GroupRead = (Range<usize>, Vec<(usize, usize)>);

/// Samples (all wanted signals together) per part of a FLAC read decoded on a thread of
/// its own: about a millisecond of decoding.
pub(super) const FLAC_PART_SAMPLES: usize = 1 << 17;

/// Most threads one read uses.
const MAX_THREADS: usize = 8;

pub(super) fn max_threads() -> usize {
    // Unix only: the threads read the file with `pread`, which does not share a position.
    if !cfg!(unix) {
        return 1;
    }
    static THREADS: OnceLock<usize> = OnceLock::new();
    *THREADS.get_or_init(|| {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_THREADS))
    })
}
