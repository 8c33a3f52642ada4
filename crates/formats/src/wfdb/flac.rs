//! FLAC signal files, WFDB formats 508, 516 and 524 (docs/formats.md, "FLAC formats"): a
//! file holds one FLAC stream, a channel per signal, samples of at most 8, 16 or 24 bits.
//!
//! The codec is not ours: `claxon` decodes frames and `flacenc` encodes them. What is ours
//! is what the WFDB library adds around them, and finding frames in the stream: the
//! metadata (STREAMINFO, SEEKTABLE) is read here, and frame headers are parsed here too,
//! to check each frame against the signal file's header (channels, sample size, sample
//! numbers) and to find the frame that holds a given sample without decoding the frames
//! before it.
//!
//! Seeking: FLAC frames carry their first sample's number (or frame number) in a header
//! that starts with a sync code and ends with a CRC-8. A SEEKTABLE, when the stream has
//! one, gives the byte offsets of some frames; between two known offsets the frame that
//! holds a sample is found by bisection on the bytes: from a byte offset, the next frame
//! is the next sync code whose header checks out and whose frame decodes (its CRC-16
//! matches). Only the frames that hold the samples read, plus one frame per bisection
//! step, are decoded.

use std::fs::File;
use std::io::Cursor;

use claxon::Block;
use claxon::frame::FrameReader;

use super::format::Format;
use super::read::read_exact_at;
use super::{WfdbError, WfdbErrorKind};

/// Most channels a FLAC stream has, and so most signals a FLAC signal file holds.
pub const MAX_CHANNELS: usize = 8;

/// Bytes read from the file at a time when decoding frames one after another.
const WINDOW: usize = 4 << 20;

/// Bytes first read to decode a single frame (most frames are far smaller; a larger one
/// makes the read grow).
const FRAME_GUESS: usize = 128 << 10;

/// Bytes scanned at a time for the next sync code.
const SCAN: usize = 64 << 10;

/// A bisection stops when the frame sought lies within this many bytes (or two of the
/// stream's largest frames): decoding them is cheaper than more probes.
const BISECT_STOP: u64 = 32 << 10;

/// The fields of STREAMINFO that reading needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StreamInfo {
    pub min_block: u32,
    pub max_block: u32,
    pub max_frame: u32,
    pub channels: u32,
    pub bits: u32,
    /// Samples per channel; 0 when the writer did not know.
    pub total: u64,
}

/// What a frame header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FrameHeader {
    /// Variable block size: the header gives the first sample's number, not the frame's.
    variable: bool,
    /// The frame or sample number the header gives.
    number: u64,
    block: u32,
    channels: u32,
    /// Bits per sample; `None` when the header refers to STREAMINFO.
    bits: Option<u32>,
}

/// One FLAC signal file, opened: its STREAMINFO and where its frames are.
pub(crate) struct Stream<'a> {
    file: &'a File,
    name: &'a str,
    len: u64,
    pub info: StreamInfo,
    /// Byte offset of the first frame (just after the metadata).
    frames: u64,
    /// Seek points of the SEEKTABLE: (sample, byte offset in the file), increasing.
    seek_points: Vec<(u64, u64)>,
    /// The blocking strategy of the first frame (every frame must share it).
    variable: Option<bool>,
    /// The format of the file: the bits a sample may hold.
    format: Format,
}

fn err(name: &str, off: u64, msg: String) -> WfdbError {
    WfdbError::at_byte(name, off, WfdbErrorKind::Signal(msg))
}

fn file_err(name: &str, msg: String) -> WfdbError {
    WfdbError::in_file(name, WfdbErrorKind::Signal(msg))
}

/// File bytes read ahead, reused from one frame to the next.
struct Window<'a> {
    file: &'a File,
    name: &'a str,
    len: u64,
    start: u64,
    bytes: Vec<u8>,
}

impl<'a> Window<'a> {
    fn new(stream: &Stream<'a>) -> Window<'a> {
        Window {
            file: stream.file,
            name: stream.name,
            len: stream.len,
            start: 0,
            bytes: Vec::new(),
        }
    }

    /// The bytes from `off` on: at least `want` of them, or all up to the end of the file.
    /// When they are not held, `load` bytes (at least `want`) are read from `off`: a
    /// large window when decoding frame after frame, little when probing.
    fn at(&mut self, off: u64, want: usize, load: usize) -> Result<&[u8], WfdbError> {
        let off = off.min(self.len);
        let end = off.saturating_add(want as u64).min(self.len);
        let held = self.start..self.start + self.bytes.len() as u64;
        if off < held.start || end > held.end {
            let n = (want.max(load) as u64).min(self.len - off) as usize;
            self.bytes.resize(n, 0);
            read_exact_at(self.file, &mut self.bytes, off).map_err(|e| {
                if e.kind() == std::io::ErrorKind::UnexpectedEof {
                    // The size was taken before, so the file shrank while we read it.
                    err(
                        self.name,
                        off,
                        "the file ended early (was it changed while being read?)".into(),
                    )
                } else {
                    WfdbError::io(self.name, e)
                }
            })?;
            self.start = off;
        }
        Ok(&self.bytes[(off - self.start) as usize..])
    }
}

/// Why a frame could not be decoded where one was expected.
enum FrameProblem {
    /// The bytes there are no frame (or a damaged one): the message says why.
    Bad(String),
    /// The frame runs past the end of the file.
    Cut,
    /// Reading the file failed.
    Io(WfdbError),
}

/// The CRC-8 of frame headers (polynomial x^8 + x^2 + x + 1, initial value 0).
fn crc8(bytes: &[u8]) -> u8 {
    let mut crc = 0u8;
    for &b in bytes {
        crc ^= b;
        for _ in 0..8 {
            crc = if crc & 0x80 != 0 {
                (crc << 1) ^ 0x07
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// Parses the frame header at the start of `b`, checking its CRC-8; `None` when the bytes
/// are no frame header (or are cut before its end).
fn parse_frame_header(b: &[u8]) -> Option<FrameHeader> {
    if b.len() < 5 || b[0] != 0xFF || b[1] & 0xFE != 0xF8 {
        return None;
    }
    let variable = b[1] & 1 == 1;
    let (bs_code, sr_code) = (b[2] >> 4, b[2] & 0x0F);
    let (ch_code, ss_code) = (b[3] >> 4, (b[3] >> 1) & 7);
    if bs_code == 0 || sr_code == 15 || ch_code > 10 || ss_code == 3 || b[3] & 1 != 0 {
        return None;
    }
    let channels = if ch_code < 8 { ch_code as u32 + 1 } else { 2 };
    let bits = match ss_code {
        0 => None,
        1 => Some(8),
        2 => Some(12),
        4 => Some(16),
        5 => Some(20),
        6 => Some(24),
        _ => Some(32),
    };
    // The frame or sample number, coded as UTF-8 codes its characters (up to 36 bits).
    let lead = b[4].leading_ones() as usize;
    let n_bytes = match lead {
        0 => 1,
        2..=7 => lead,
        _ => return None,
    };
    let coded = b.get(4..4 + n_bytes)?;
    let mut number = u64::from(b[4] & (0x7F >> lead));
    for &c in &coded[1..] {
        if c & 0xC0 != 0x80 {
            return None;
        }
        number = number << 6 | u64::from(c & 0x3F);
    }
    if !variable && n_bytes > 6 {
        return None;
    }
    let mut at = 4 + n_bytes;
    let mut take = |n: usize| -> Option<u32> {
        let v = b
            .get(at..at + n)?
            .iter()
            .fold(0u32, |a, &x| a << 8 | u32::from(x));
        at += n;
        Some(v)
    };
    let block = match bs_code {
        1 => 192,
        2..=5 => 576 << (bs_code - 2),
        6 => take(1)? + 1,
        7 => take(2)? + 1,
        _ => 256 << (bs_code - 8),
    };
    match sr_code {
        12 => {
            take(1)?;
        }
        13 | 14 => {
            take(2)?;
        }
        _ => {}
    }
    let crc = *b.get(at)?;
    (crc8(&b[..at]) == crc).then_some(FrameHeader {
        variable,
        number,
        block,
        channels,
        bits,
    })
}

impl<'a> Stream<'a> {
    /// Opens the FLAC stream of a signal file in `format` that holds `signals` signals:
    /// reads its metadata and checks it against the header (the number of channels, the
    /// sample size), as the WFDB library and wfdb-python do before reading.
    pub(crate) fn open(
        file: &'a File,
        name: &'a str,
        format: Format,
        signals: usize,
    ) -> Result<Stream<'a>, WfdbError> {
        let bits = format.flac_bits().unwrap_or(0);
        if signals > MAX_CHANNELS {
            return Err(file_err(
                name,
                format!(
                    "the header stores {signals} signals in this FLAC file, but a FLAC stream \
                     has at most {MAX_CHANNELS} channels"
                ),
            ));
        }
        let len = file.metadata().map_err(|e| WfdbError::io(name, e))?.len();
        let read = |off: u64, n: usize| -> Result<Vec<u8>, WfdbError> {
            let mut buf = vec![0; n];
            read_exact_at(file, &mut buf, off).map_err(|e| WfdbError::io(name, e))?;
            Ok(buf)
        };
        if len < 4 || read(0, 4)? != b"fLaC" {
            return Err(err(
                name,
                0,
                format!(
                    "format {} stores a FLAC stream, but the file does not start with \"fLaC\"",
                    format.code()
                ),
            ));
        }
        let mut pos = 4u64;
        let mut info = None;
        let mut seek_points = Vec::new();
        loop {
            if pos + 4 > len {
                return Err(err(
                    name,
                    pos,
                    "the FLAC metadata is cut short: the file ends before its last block".into(),
                ));
            }
            let head = read(pos, 4)?;
            let last = head[0] & 0x80 != 0;
            let kind = head[0] & 0x7F;
            let size = u32::from_be_bytes([0, head[1], head[2], head[3]]) as u64;
            if pos + 4 + size > len {
                return Err(err(
                    name,
                    pos,
                    format!(
                        "a FLAC metadata block of {size} bytes runs past the end of the file \
                         ({len} bytes)"
                    ),
                ));
            }
            match (kind, info.is_none()) {
                (0, true) if size == 34 => info = Some(parse_streaminfo(&read(pos + 4, 34)?)),
                (_, true) => {
                    return Err(err(
                        name,
                        pos,
                        format!(
                            "the first FLAC metadata block is of type {kind} and {size} bytes, \
                             not STREAMINFO (type 0, 34 bytes)"
                        ),
                    ));
                }
                (3, false) => {
                    for p in read(pos + 4, size as usize)?.chunks_exact(18) {
                        let sample = u64::from_be_bytes(p[..8].try_into().unwrap_or_default());
                        let offset = u64::from_be_bytes(p[8..16].try_into().unwrap_or_default());
                        // Placeholder points have the sample number 2^64 - 1.
                        if sample != u64::MAX {
                            seek_points.push((sample, offset));
                        }
                    }
                }
                (127, _) => {
                    return Err(err(
                        name,
                        pos,
                        "FLAC metadata block type 127 is invalid".into(),
                    ));
                }
                _ => {}
            }
            pos += 4 + size;
            if last {
                break;
            }
        }
        let Some(info) = info else {
            return Err(err(name, 4, "the FLAC stream has no STREAMINFO".into()));
        };
        if info.channels as usize != signals {
            return Err(file_err(
                name,
                format!(
                    "the FLAC stream has {} channel(s), but the header stores {signals} \
                     signal(s) in this file (one channel per signal)",
                    info.channels
                ),
            ));
        }
        if info.bits > bits {
            return Err(file_err(
                name,
                format!(
                    "the FLAC stream holds {}-bit samples, but format {} stores at most {bits} \
                     bits per sample",
                    info.bits,
                    format.code()
                ),
            ));
        }
        // Seek points are offsets from the first frame; keep those that lie in the file,
        // in order (a damaged table must not send a search outside the stream).
        let frames = pos;
        let mut points: Vec<(u64, u64)> = Vec::with_capacity(seek_points.len());
        for (sample, offset) in seek_points {
            let at = frames.saturating_add(offset);
            if at < len && points.last().is_none_or(|&(s, o)| sample > s && at > o) {
                points.push((sample, at));
            }
        }
        let mut stream = Stream {
            file,
            name,
            len,
            info,
            frames,
            seek_points: points,
            variable: None,
            format,
        };
        let mut win = Window::new(&stream);
        stream.variable = parse_frame_header(win.at(frames, 64, 64)?).map(|h| h.variable);
        Ok(stream)
    }

    /// The first sample (of each channel) of a frame.
    fn first_sample(&self, h: &FrameHeader) -> u64 {
        if h.variable {
            return h.number;
        }
        // Every block of a fixed-size stream but the last has the stream's block size,
        // and the last is no larger: the size is STREAMINFO's maximum. (Its minimum may
        // count the last block, as some encoders write it.)
        let block = if self.info.max_block > 0 {
            self.info.max_block
        } else {
            h.block
        };
        h.number.saturating_mul(u64::from(block))
    }

    /// Whether a header found while scanning fits this stream (fewer false syncs to try).
    fn fits(&self, h: &FrameHeader) -> bool {
        h.channels == self.info.channels
            && h.bits.is_none_or(|b| b == self.info.bits)
            && self.variable.is_none_or(|v| v == h.variable)
    }

    /// Decodes the frame at byte `off`: its header, its samples and its length in bytes.
    /// `load` is what to read ahead when the window does not hold the frame.
    fn frame_at(
        &self,
        win: &mut Window<'_>,
        off: u64,
        buffer: Vec<i32>,
        load: usize,
    ) -> Result<(FrameHeader, Block, u64), FrameProblem> {
        let mut want = FRAME_GUESS.max(self.info.max_frame as usize + 64);
        let mut buffer = Some(buffer);
        loop {
            let bytes = win.at(off, want, load).map_err(FrameProblem::Io)?;
            let held = bytes.len();
            let Some(header) = parse_frame_header(bytes) else {
                return Err(if held < 16 && off + (held as u64) == self.len {
                    FrameProblem::Cut
                } else {
                    FrameProblem::Bad("no FLAC frame header starts here (lost sync)".into())
                });
            };
            let mut cursor = Cursor::new(bytes);
            let decoded =
                FrameReader::new(&mut cursor).read_next_or_eof(buffer.take().unwrap_or_default());
            match decoded {
                Ok(Some(block)) => {
                    #[cfg(test)]
                    tests::DECODED.with(|n| n.set(n.get() + 1));
                    return Ok((header, block, cursor.position()));
                }
                Ok(None) => return Err(FrameProblem::Cut),
                Err(claxon::Error::IoError(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                    if off + held as u64 >= self.len {
                        return Err(FrameProblem::Cut);
                    }
                    want = want.saturating_mul(2);
                }
                Err(claxon::Error::Unsupported(_)) if header.bits.is_none() => {
                    return Err(FrameProblem::Bad(format!(
                        "the frame takes its sample size from STREAMINFO ({} bits, a size \
                         frame headers cannot state), which the FLAC decoder used (claxon) \
                         does not support",
                        self.info.bits
                    )));
                }
                Err(e) => {
                    return Err(FrameProblem::Bad(format!(
                        "cannot decode the FLAC frame: {e}"
                    )));
                }
            }
        }
    }

    /// The first frame that starts at or after byte `from` and before `limit`: its offset
    /// and first sample. Its header must check out (CRC-8) and fit the stream, with a
    /// first sample of at least `min_sample`; with `verify`, the frame must also decode
    /// (CRC-16), which costs a frame's decoding per probe.
    fn next_frame(
        &self,
        win: &mut Window<'_>,
        from: u64,
        limit: u64,
        min_sample: u64,
        verify: bool,
    ) -> Result<Option<(u64, u64)>, WfdbError> {
        let mut pos = from.max(self.frames);
        let limit = limit.min(self.len);
        while pos < limit {
            let bytes = win.at(pos, SCAN, SCAN)?;
            let n = bytes.len().min(SCAN).min((limit - pos) as usize);
            let mut candidates = Vec::new();
            for i in 0..n {
                if bytes[i] == 0xFF
                    && bytes.get(i + 1).is_some_and(|&b| b & 0xFE == 0xF8)
                    && let Some(h) = parse_frame_header(&bytes[i..])
                    && self.fits(&h)
                    && self.first_sample(&h) >= min_sample
                    && (self.info.total == 0 || self.first_sample(&h) < self.info.total)
                {
                    candidates.push((pos + i as u64, h));
                }
            }
            for (at, h) in candidates {
                if !verify {
                    return Ok(Some((at, self.first_sample(&h))));
                }
                match self.frame_at(win, at, Vec::new(), SCAN) {
                    Ok(_) => return Ok(Some((at, self.first_sample(&h)))),
                    Err(FrameProblem::Io(e)) => return Err(e),
                    Err(_) => {}
                }
            }
            pos += n.max(1) as u64;
        }
        Ok(None)
    }

    /// A frame that starts at or before `sample` (as close to it as the seek table and a
    /// bisection find): its byte offset and first sample. Probes check headers only
    /// unless `verify`: a false sync code that passes (its CRC-8 and fields fitting the
    /// stream by chance), or a wrong seek point, is caught when decoding from the result
    /// fails, and the search is then run again verifying every probe.
    fn locate(
        &self,
        win: &mut Window<'_>,
        sample: u64,
        verify: bool,
    ) -> Result<(u64, u64), WfdbError> {
        let (mut lo, mut lo_sample, mut hi) = (self.frames, 0, self.len);
        // A verifying search trusts no seek table: a damaged one may have sent the first
        // search astray.
        let points = if verify {
            &[][..]
        } else {
            &self.seek_points[..]
        };
        for &(s, at) in points {
            if s <= sample {
                (lo, lo_sample) = (at, s);
            } else {
                hi = at;
                break;
            }
        }
        let stop = BISECT_STOP.max(2 * u64::from(self.info.max_frame));
        while hi - lo > stop {
            // Done when the frame at `lo` holds the sample.
            if let Some(h) = parse_frame_header(win.at(lo, 32, SCAN)?)
                && sample < lo_sample + u64::from(h.block)
            {
                break;
            }
            let mid = lo + (hi - lo) / 2;
            match self.next_frame(win, mid, hi, lo_sample, verify)? {
                Some((at, first)) if first <= sample && at > lo => (lo, lo_sample) = (at, first),
                _ => hi = mid,
            }
        }
        Ok((lo, lo_sample))
    }

    /// Samples per channel in the stream: STREAMINFO's count, or, when the writer left it
    /// unknown (0), where the last frame ends.
    pub(crate) fn total_samples(&self) -> Result<u64, WfdbError> {
        if self.info.total != 0 || self.len == self.frames {
            return Ok(self.info.total);
        }
        // The largest frame a header of this stream can describe, uncompressed.
        let bound = u64::from(self.info.max_frame).max(
            u64::from(self.info.max_block.max(1)) * u64::from(self.info.channels) * 33 / 8 + 64,
        );
        let mut win = Window::new(self);
        let from = self.len.saturating_sub(2 * bound).max(self.frames);
        let Some((mut off, mut next)) = self.next_frame(&mut win, from, self.len, 0, true)? else {
            return Err(err(
                self.name,
                from,
                "the FLAC stream gives no length and no frame is found near its end".into(),
            ));
        };
        while off < self.len {
            let (_, block, used) = self
                .frame_at(&mut win, off, Vec::new(), WINDOW)
                .map_err(|p| self.problem(off, next, p))?;
            next += u64::from(block.duration());
            off += used;
        }
        Ok(next)
    }

    fn problem(&self, off: u64, sample: u64, p: FrameProblem) -> WfdbError {
        match p {
            FrameProblem::Io(e) => e,
            FrameProblem::Bad(why) => err(self.name, off, format!("{why} (sample {sample})")),
            FrameProblem::Cut => err(
                self.name,
                off,
                format!(
                    "the FLAC stream is cut short: the frame holding sample {sample} runs past \
                     the end of the file ({} bytes)",
                    self.len
                ),
            ),
        }
    }

    /// Decodes the samples `from..to` of every channel, handing each decoded block to
    /// `take` with the number of its first sample. The first block may start before
    /// `from` and the last end after `to`. Each frame is checked against the signal
    /// file's header as the WFDB library checks it: its channel count, its sample size
    /// (at most the format's), and its place in the stream.
    pub(crate) fn decode(
        &self,
        from: u64,
        to: u64,
        take: &mut dyn FnMut(u64, &Block),
    ) -> Result<(), WfdbError> {
        if from >= to {
            return Ok(());
        }
        let mut win = Window::new(self);
        let (mut off, mut next) = self.locate(&mut win, from, false)?;
        // Whether the frame at `off` is where a search by headers alone ended.
        let mut unverified = off != self.frames;
        let mut buffer = Vec::new();
        while next < to {
            if off >= self.len {
                return Err(err(
                    self.name,
                    off,
                    format!(
                        "the FLAC stream ends after {next} samples per channel, but the read \
                         needs {to}"
                    ),
                ));
            }
            let (header, block, used) =
                match self.frame_at(&mut win, off, std::mem::take(&mut buffer), WINDOW) {
                    Ok(frame) => frame,
                    Err(FrameProblem::Bad(_)) if unverified => {
                        // A false sync code fooled the search: search again, verifying.
                        (off, next) = self.locate(&mut win, from, true)?;
                        unverified = false;
                        continue;
                    }
                    Err(p) => return Err(self.problem(off, next, p)),
                };
            unverified = false;
            let first = self.first_sample(&header);
            let bits = header.bits.unwrap_or(self.info.bits);
            let wrong = if header.channels != self.info.channels {
                Some(format!(
                    "the FLAC frame has {} channel(s), but the stream (and the header) {}",
                    header.channels, self.info.channels
                ))
            } else if bits > self.info.bits || bits > self.format.flac_bits().unwrap_or(0) {
                Some(format!(
                    "the FLAC frame holds {bits}-bit samples, but format {} stores at most {} \
                     bits per sample",
                    self.format.code(),
                    self.format.flac_bits().unwrap_or(0)
                ))
            } else if first != next {
                Some(format!(
                    "the FLAC frame starts at sample {first}, but the frame before it ends at \
                     sample {next}: the stream is damaged"
                ))
            } else {
                None
            };
            if let Some(why) = wrong {
                return Err(err(self.name, off, why));
            }
            take(first, &block);
            next += u64::from(block.duration());
            off += used;
            buffer = block.into_buffer();
        }
        Ok(())
    }
}

fn parse_streaminfo(b: &[u8]) -> StreamInfo {
    let be = |r: std::ops::Range<usize>| b[r].iter().fold(0u64, |a, &x| a << 8 | u64::from(x));
    let packed = be(10..18);
    StreamInfo {
        min_block: be(0..2) as u32,
        max_block: be(2..4) as u32,
        max_frame: be(7..10) as u32,
        channels: ((packed >> 41) & 7) as u32 + 1,
        bits: ((packed >> 36) & 31) as u32 + 1,
        total: packed & ((1 << 36) - 1),
    }
}

/// Sample rate written in STREAMINFO: the rate wfdb-python and the WFDB library write (the
/// record's own rate is in the header; FLAC's field means nothing here).
pub(crate) const WRITTEN_SAMPLE_RATE: usize = 96_000;

/// Block size written: libFLAC's default, as the WFDB library and wfdb-python (through
/// libsndfile) write.
pub(crate) const WRITTEN_BLOCK_SIZE: usize = 4096;

/// Encodes `channels` (one per signal, all of the same length) as a FLAC stream of
/// `bits`-bit samples. Values must fit `bits` bits.
pub(crate) fn encode(channels: &[&[i32]], bits: u32) -> Result<Vec<u8>, String> {
    use flacenc::component::BitRepr;
    use flacenc::error::Verify;

    let n = channels.first().map_or(0, |c| c.len());
    let mut interleaved = Vec::with_capacity(n * channels.len());
    for t in 0..n {
        interleaved.extend(channels.iter().map(|c| c[t]));
    }
    let mut config = flacenc::config::Encoder::default();
    config.block_size = WRITTEN_BLOCK_SIZE;
    let config = config
        .into_verified()
        .map_err(|(_, e)| format!("the FLAC encoder's settings are refused: {e}"))?;
    let source = flacenc::source::MemSource::from_samples(
        &interleaved,
        channels.len(),
        bits as usize,
        WRITTEN_SAMPLE_RATE,
    );
    let mut stream = flacenc::encode_with_fixed_block_size(&config, source, config.block_size)
        .map_err(|e| format!("the FLAC encoder failed: {e}"))?;
    // FLAC's minimum block size excludes the last block, and libFLAC states the block
    // size as both bounds; flacenc counts a short last block as the minimum, which
    // makes libFLAC (so wfdb-python) number that block's samples wrongly and fail to
    // seek into it.
    stream
        .stream_info_mut()
        .set_block_sizes(WRITTEN_BLOCK_SIZE, WRITTEN_BLOCK_SIZE)
        .map_err(|e| format!("the FLAC encoder failed: {e}"))?;
    if n == 0 {
        // No frame: the frame sizes are unknown, which FLAC writes as 0 (flacenc leaves
        // its starting values, a minimum of 2^24 - 1).
        stream
            .stream_info_mut()
            .set_frame_sizes(0, 0)
            .map_err(|e| format!("the FLAC encoder failed: {e}"))?;
    }
    let mut sink = flacenc::bitsink::ByteSink::new();
    stream
        .write(&mut sink)
        .map_err(|e| format!("the FLAC encoder failed: {e}"))?;
    Ok(sink.as_slice().to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        /// Frames this thread decoded (with `frame_at`), so that tests can tell how much of
        /// a stream a read decoded.
        pub(super) static DECODED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    fn decoded() -> usize {
        DECODED.with(std::cell::Cell::get)
    }

    /// `n` samples of `channels` noisy channels, and their FLAC stream (16-bit).
    fn noisy(channels: usize, n: usize) -> (Vec<Vec<i32>>, Vec<u8>) {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let data: Vec<Vec<i32>> = (0..channels)
            .map(|k| {
                (0..n)
                    .map(|t| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        ((t * (k + 1)) % 500) as i32 - 250 + (state % 256) as i32
                    })
                    .collect()
            })
            .collect();
        let refs: Vec<&[i32]> = data.iter().map(Vec::as_slice).collect();
        let bytes = encode(&refs, 16).unwrap();
        (data, bytes)
    }

    /// Decodes `from..to` of channel `ch` through `Stream::decode`, and how many frames
    /// that decoded.
    fn read(stream: &Stream<'_>, ch: u32, from: u64, to: u64) -> (Vec<i32>, usize) {
        let before = decoded();
        let mut out = Vec::new();
        stream
            .decode(from, to, &mut |first, block| {
                let c = block.channel(ch);
                for (i, &v) in c.iter().enumerate() {
                    let t = first + i as u64;
                    if (from..to).contains(&t) {
                        out.push(v);
                    }
                }
            })
            .unwrap();
        (out, decoded() - before)
    }

    /// A read from the middle or the end of a long stream decodes the frames that hold
    /// it and the few a bisection probes, not the stream before it; with a SEEKTABLE,
    /// fewer. A stream without a length in STREAMINFO gets it from its last frame.
    #[test]
    fn partial_reads_decode_only_what_they_need() {
        let (data, bytes) = noisy(4, 600_000);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.flac");
        std::fs::write(&path, &bytes).unwrap();
        let file = File::open(&path).unwrap();
        let name = path.display().to_string();
        let stream = Stream::open(&file, &name, Format::F516, 4).unwrap();
        let frames = 600_000usize.div_ceil(WRITTEN_BLOCK_SIZE);
        assert!(bytes.len() as u64 > 8 * BISECT_STOP, "{}", bytes.len());
        for (from, to) in [
            (550_000u64, 550_100u64),
            (300_123, 304_000),
            (599_999, 600_000),
        ] {
            let (got, n) = read(&stream, 2, from, to);
            assert!(got == data[2][from as usize..to as usize], "{from}..{to}");
            assert!(n < 40, "{from}..{to}: {n} of {frames} frames decoded");
        }
        let (got, n) = read(&stream, 0, 0, 5000);
        assert!(got == data[0][..5000]);
        assert_eq!(n, 2, "frames decoded to read the first 5000 samples");

        // The same stream with a SEEKTABLE of a point every 16 frames (offsets from the
        // first frame) and a placeholder point.
        let frames_at = stream.frames;
        let mut offsets = Vec::new();
        let mut win = Window::new(&stream);
        let mut off = frames_at;
        while off < stream.len {
            offsets.push(off - frames_at);
            let (_, _, used) = stream
                .frame_at(&mut win, off, Vec::new(), WINDOW)
                .ok()
                .unwrap();
            off += used;
        }
        assert_eq!(offsets.len(), frames);
        let mut table = Vec::new();
        for (k, &o) in offsets.iter().enumerate().step_by(16) {
            let sample = (k * WRITTEN_BLOCK_SIZE) as u64;
            table.extend_from_slice(&sample.to_be_bytes());
            table.extend_from_slice(&o.to_be_bytes());
            table.extend_from_slice(&(WRITTEN_BLOCK_SIZE as u16).to_be_bytes());
        }
        table.extend_from_slice(&u64::MAX.to_be_bytes());
        table.extend_from_slice(&[0; 10]);
        // fLaC, STREAMINFO (no longer the last block), SEEKTABLE (last), the frames.
        let mut with_table = bytes[..4 + 4 + 34].to_vec();
        with_table[4] &= 0x7F;
        with_table.push(0x83);
        with_table.extend_from_slice(&(table.len() as u32).to_be_bytes()[1..]);
        with_table.extend_from_slice(&table);
        with_table.extend_from_slice(&bytes[frames_at as usize..]);
        std::fs::write(&path, &with_table).unwrap();
        let file = File::open(&path).unwrap();
        let stream = Stream::open(&file, &name, Format::F516, 4).unwrap();
        assert_eq!(stream.seek_points.len(), offsets.len().div_ceil(16));
        for (from, to) in [(550_000u64, 550_100u64), (300_123, 304_000)] {
            let (got, n) = read(&stream, 3, from, to);
            assert!(got == data[3][from as usize..to as usize], "{from}..{to}");
            assert!(
                n <= 18,
                "{from}..{to}: {n} frames decoded with a seek table"
            );
        }

        // A damaged seek table (every offset 7 bytes off, into a frame's middle): the
        // first search lands where no frame starts, and the verifying one reads right.
        let mut damaged = with_table.clone();
        let table_at = 4 + 4 + 34 + 4;
        for p in damaged[table_at..table_at + table.len() - 18].chunks_exact_mut(18) {
            let off = u64::from_be_bytes(p[8..16].try_into().unwrap()) + 7;
            p[8..16].copy_from_slice(&off.to_be_bytes());
        }
        std::fs::write(&path, &damaged).unwrap();
        let file = File::open(&path).unwrap();
        let stream = Stream::open(&file, &name, Format::F516, 4).unwrap();
        // Sample 524_388 lies in frame 128, whose seek point is off: the search by headers
        // ends at that point.
        let (got, _) = read(&stream, 1, 524_388, 524_500);
        assert!(got == data[1][524_388..524_500]);
        let (got, _) = read(&stream, 1, 550_000, 550_100);
        assert!(got == data[1][550_000..550_100]);

        // STREAMINFO's length zeroed (unknown): the length comes from the last frame.
        let mut unknown = bytes.clone();
        let at = 4 + 4 + 13;
        unknown[at] &= 0xF0;
        unknown[at + 1..at + 5].fill(0);
        std::fs::write(&path, &unknown).unwrap();
        let file = File::open(&path).unwrap();
        let stream = Stream::open(&file, &name, Format::F516, 4).unwrap();
        assert_eq!(stream.info.total, 0);
        assert_eq!(stream.total_samples().unwrap(), 600_000);
    }

    /// Streams of fewer bits than the format reads as the WFDB library reads them (a
    /// 12-bit stream in a format 516 file), which wfdb-python's reader (libsndfile)
    /// cannot open; more bits than the format are refused.
    #[test]
    fn sample_sizes_up_to_the_format() {
        let data: Vec<i32> = (0..10_000).map(|t| (t % 4000) - 2000).collect();
        let bytes = encode(&[&data], 12).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.flac");
        std::fs::write(&path, &bytes).unwrap();
        let file = File::open(&path).unwrap();
        let name = path.display().to_string();
        let stream = Stream::open(&file, &name, Format::F516, 1).unwrap();
        assert_eq!(stream.info.bits, 12);
        assert!(read(&stream, 0, 0, 10_000).0 == data);
        let e = Stream::open(&file, &name, Format::F508, 1).err().unwrap();
        assert!(e.to_string().contains("12-bit samples"), "{e}");
    }

    #[test]
    fn crc8_is_the_flac_one() {
        // The CRC-8 (poly 0x07) check value of "123456789".
        assert_eq!(crc8(b"123456789"), 0xF4);
    }

    #[test]
    fn frame_headers() {
        // A fixed-size frame 0 of 4096 samples, 96 kHz, 3 channels, 16 bits.
        let mut h = vec![0xFF, 0xF8, 0xCB, 0x28, 0x00];
        h.push(crc8(&h));
        let got = parse_frame_header(&h).unwrap();
        assert_eq!(
            (got.variable, got.number, got.block, got.channels, got.bits),
            (false, 0, 4096, 3, Some(16))
        );
        // A wrong CRC, a reserved bit, a cut header: no frame.
        let mut bad = h.clone();
        bad[5] ^= 1;
        assert!(parse_frame_header(&bad).is_none());
        assert!(parse_frame_header(&h[..5]).is_none());
        let mut reserved = h.clone();
        reserved[1] = 0xFA;
        assert!(parse_frame_header(&reserved).is_none());
        // A two-byte coded number (0x80) and an 8-bit block size at the end (100 + 1).
        let mut h = vec![0xFF, 0xF9, 0x6B, 0x08, 0xC2, 0x80, 100];
        h.push(crc8(&h));
        let got = parse_frame_header(&h).unwrap();
        assert_eq!((got.variable, got.number, got.block), (true, 0x80, 101));
    }
}
