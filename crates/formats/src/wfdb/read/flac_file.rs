//! Reading the signals of a FLAC signal file: each signal a channel of the stream, only
//! the stream frames that hold samples read decoded, large reads on several threads.

use std::fs::File;
use std::ops::Range;

use super::super::flac;
use super::super::header::SignalSpec;
use super::super::{WfdbError, WfdbErrorKind};
use super::sample::{Sample, WithConv};
use super::single::{FLAC_PART_SAMPLES, max_threads};
use super::{calibration, padding_value, skew_frames};

/// Reads the wanted signals of a FLAC signal file over `range` (record frames). Each
/// signal is a channel of the stream, and frame `t` of a signal with `spf` samples per
/// frame is its channel's samples `offset + t·spf ..`, where the header's byte offset
/// counts samples of each channel (docs/formats.md, "FLAC formats"). Only the stream's
/// frames that hold samples read are decoded (`flac::Stream::decode` finds the first
/// without decoding those before it). Large reads are cut into parts that several
/// threads decode at once, each from its own starting frame.
pub(super) fn read_flac<T: Sample>(
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
