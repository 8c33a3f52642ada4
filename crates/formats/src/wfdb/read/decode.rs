//! Decoding a signal file's samples into outputs: chunks of whole frames read with
//! `pread`, decoded (vectorised where the CPU allows) and gathered per signal, in parts
//! that several threads fill at once.

use std::cell::Cell;
use std::fs::File;
#[cfg(not(unix))]
use std::io::{Read, Seek, SeekFrom};
use std::mem::MaybeUninit;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use super::super::format::{self, Format};
use super::super::{WfdbError, WfdbErrorKind};
use super::sample::{Sample, WithConv};

use piece::Piece;

/// In a module of its own so that only `put` can change what `filled` says, which the
/// `unsafe` block of `read_group` relies on.
mod piece {
    use std::mem::MaybeUninit;

    /// A thread's piece of one signal's output, not yet written when handed out, and
    /// written in order from its start: its first `filled()` elements are initialised,
    /// and `filled()` never exceeds its length.
    pub(in crate::wfdb::read) struct Piece<'o, T> {
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

/// One signal of a file being read.
pub(super) struct Sink<T: Sample> {
    /// Position of the signal's first sample within a frame, and its samples per frame.
    pub(super) pos: usize,
    pub(super) spf: usize,
    /// Stored frames (relative to the first read) that fill the signal's output, from
    /// its start; the rest of the output is padding.
    pub(super) window: Range<usize>,
    /// Start of a format 8 signal's running sum.
    pub(super) initial: i32,
    pub(super) conv: T::Conv,
}

/// A signal file being read.
pub(super) struct Source<'a> {
    pub(super) file: &'a File,
    pub(super) name: &'a str,
    pub(super) fmt: Format,
    /// Byte offset of the samples in the file.
    pub(super) offset: u64,
    /// Samples per stored frame (all signals of the file).
    pub(super) tspf: usize,
    /// Record frame of stored frame 0 of the read.
    pub(super) read_start: u64,
    pub(super) chunk_frames: usize,
}

impl Source<'_> {
    pub(super) fn internal(&self, what: &str) -> WfdbError {
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
pub(super) fn split_outputs<'o, T: Sample>(
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
pub(super) fn run_parts<T: Sample>(
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
