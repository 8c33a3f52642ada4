//! PCM WAV files as phonocardiogram data ships them (CirCor DigiScope / PhysioNet Challenge
//! 2022: 16-bit mono at 4 kHz), read and written through `hound` 3.5.
//!
//! Reading accepts integer PCM of 8, 16, 24 or 32 bits and 32-bit IEEE float, with any
//! number of channels, from a path or from bytes plus the name of their source. We walk the
//! RIFF chunks ourselves before hound sees anything, for two reasons: hound's errors carry
//! neither a byte offset nor the offending values, and hound does not skip the pad byte
//! after an odd-sized chunk (RIFF requires it; scipy honours it). Hound then decodes the
//! sample data behind a canonical header we hand it, so its behaviour on odd `fmt ` layouts
//! never matters.
//!
//! Samples come back interleaved (frame after frame), as `i32` for integer PCM and `f32`
//! for float, with a per-channel accessor. 8-bit PCM is stored unsigned with a 128 offset;
//! we return it re-centred (`byte - 128`), as hound does, so silence is 0 at every width.
//! Other widths are the stored values unchanged (24-bit values are not shifted into the
//! high bits, unlike scipy, which returns them as `value << 8`).
//!
//! Writing produces 16-bit integer PCM, mono or multi-channel: what the project synthesises.
//! Mono and stereo files get the 44-byte canonical header (the CirCor `.hea` files point at
//! byte 44); more channels need WAVE_FORMAT_EXTENSIBLE, whose header is 68 bytes.
//!
//! Not for: compressed encodings (ADPCM, A-law, µ-law, MP3, ...), 64-bit float, samples with
//! fewer valid bits than their container (e.g. 20 bits in 3 bytes, 24 in 4), RIFX
//! (big-endian) and RF64 files, or files too large to hold in memory. Sample values are not
//! scaled: turning them into physical units is the WFDB header's business.

use std::io::{self, Read};
use std::path::Path;

/// How the samples of a file are encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// Unsigned 8-bit integer PCM (returned re-centred to -128..=127).
    Pcm8,
    /// Signed 16-bit little-endian integer PCM.
    Pcm16,
    /// Signed 24-bit little-endian integer PCM, packed in 3 bytes.
    Pcm24,
    /// Signed 32-bit little-endian integer PCM.
    Pcm32,
    /// 32-bit IEEE float.
    Float32,
}

impl Encoding {
    /// Bits per sample (equal to the container size: nothing else is read).
    pub fn bits(self) -> u16 {
        match self {
            Encoding::Pcm8 => 8,
            Encoding::Pcm16 => 16,
            Encoding::Pcm24 => 24,
            Encoding::Pcm32 | Encoding::Float32 => 32,
        }
    }

    /// Bytes per sample.
    pub fn bytes(self) -> u16 {
        self.bits() / 8
    }

    /// True for IEEE float, false for integer PCM.
    pub fn is_float(self) -> bool {
        self == Encoding::Float32
    }
}

/// Interleaved samples: integer PCM as `i32`, float as `f32`.
#[derive(Debug, Clone, PartialEq)]
pub enum Samples {
    Int(Vec<i32>),
    Float(Vec<f32>),
}

impl Samples {
    /// Number of samples (all channels together).
    pub fn len(&self) -> usize {
        match self {
            Samples::Int(v) => v.len(),
            Samples::Float(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A decoded WAV file.
///
/// Invariants (kept by the constructors): `channels >= 1`, `sample_rate >= 1`, the sample
/// count is a whole number of frames, and the sample variant matches the encoding.
#[derive(Debug, Clone, PartialEq)]
pub struct Wav {
    sample_rate: u32,
    channels: u16,
    encoding: Encoding,
    data_offset: u64,
    samples: Samples,
}

/// What went wrong, without the file name (see [`WavError`]).
#[derive(Debug, thiserror::Error)]
pub enum WavErrorKind {
    #[error("cannot read the file: {0}")]
    Read(io::Error),
    #[error("cannot write the file: {0}")]
    Write(io::Error),
    #[error("only {len} bytes: too short for a RIFF/WAVE header, which takes 12")]
    TooShort { len: usize },
    #[error("not a RIFF file: it starts with \"{found}\" instead of \"RIFF\"")]
    NotRiff { found: String },
    #[error("RIFX (big-endian) WAV files are not supported")]
    BigEndian,
    #[error("RF64 (64-bit size) WAV files are not supported")]
    Rf64,
    #[error("a RIFF file of form \"{form}\", not \"WAVE\"")]
    NotWave { form: String },
    #[error("truncated chunk header: {available} bytes left where 8 are needed")]
    TruncatedChunkHeader { available: usize },
    #[error(
        "truncated \"{id}\" chunk: its header declares {declared} bytes but only {available} follow"
    )]
    TruncatedChunk {
        id: String,
        declared: u32,
        available: usize,
    },
    #[error(
        "truncated data chunk: its header declares {declared} bytes but only {available} follow"
    )]
    TruncatedData { declared: u32, available: usize },
    #[error("the data chunk comes before any fmt chunk, so its samples cannot be decoded")]
    NoFmt,
    #[error("no data chunk: the file ends after its last chunk")]
    NoData,
    #[error("the fmt chunk has {len} bytes, fewer than the 16 every WAV format needs")]
    FmtTooShort { len: u32 },
    #[error("unsupported encoding: {0}")]
    Unsupported(String),
    #[error("invalid fmt chunk: {0}")]
    InvalidFmt(String),
    #[error(
        "the data chunk holds {data_len} bytes, not a whole number of {frame_bytes}-byte frames"
    )]
    PartialFrame { data_len: u32, frame_bytes: u16 },
    #[error("cannot decode the samples: {0}")]
    Decode(String),
    #[error("cannot encode: {0}")]
    Encode(String),
}

/// A WAV error that names the file, the byte offset when there is one, and the problem.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {}{kind}", at_byte(*.offset))]
pub struct WavError {
    /// The source name the caller gave (or the path).
    pub file: String,
    /// 0-based byte offset of the chunk (or header field) at fault, when there is one.
    pub offset: Option<u64>,
    pub kind: WavErrorKind,
}

fn at_byte(offset: Option<u64>) -> String {
    offset.map(|o| format!("byte {o}: ")).unwrap_or_default()
}

impl WavError {
    fn new(file: &str, offset: Option<usize>, kind: WavErrorKind) -> Self {
        WavError {
            file: file.to_string(),
            offset: offset.map(|o| o as u64),
            kind,
        }
    }
}

/// The `fmt ` chunk, as far as we need it.
struct Fmt {
    encoding: Encoding,
    channels: u16,
    sample_rate: u32,
}

/// A KSDATAFORMAT_SUBTYPE_* GUID is the classic 16-bit format tag followed by these 14
/// bytes (`xxxx0000-0000-0010-8000-00AA00389B71`).
const GUID_TAIL: [u8; 14] = [
    0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71,
];

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    let s = b.get(at..at.checked_add(2)?)?;
    Some(u16::from_le_bytes([s[0], s[1]]))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

fn tag_name(tag: u16) -> String {
    let name = match tag {
        0x0002 => "Microsoft ADPCM",
        0x0006 => "A-law",
        0x0007 => "µ-law",
        0x0011 => "IMA ADPCM",
        0x0031 => "GSM 6.10",
        0x0050 => "MPEG",
        0x0055 => "MPEG layer 3",
        _ => "",
    };
    if name.is_empty() {
        format!("format tag 0x{tag:04X}")
    } else {
        format!("format tag 0x{tag:04X} ({name})")
    }
}

/// Parses a `fmt ` chunk body. `at` is the offset of the chunk header, for errors.
fn parse_fmt(body: &[u8], file: &str, at: usize) -> Result<Fmt, WavError> {
    let err = |kind| WavError::new(file, Some(at), kind);
    let len = u32::try_from(body.len()).unwrap_or(u32::MAX);
    let (Some(tag), Some(channels), Some(sample_rate), Some(block_align), Some(bits)) = (
        u16_at(body, 0),
        u16_at(body, 2),
        u32_at(body, 4),
        u16_at(body, 12),
        u16_at(body, 14),
    ) else {
        return Err(err(WavErrorKind::FmtTooShort { len }));
    };
    // WAVE_FORMAT_EXTENSIBLE moves the real format tag into a SubFormat GUID and may
    // declare fewer valid bits than the container holds.
    let (tag, valid_bits) = if tag == 0xFFFE {
        let (Some(valid), Some(guid)) = (u16_at(body, 18), body.get(24..40)) else {
            return Err(err(WavErrorKind::InvalidFmt(format!(
                "WAVE_FORMAT_EXTENSIBLE needs a fmt chunk of at least 40 bytes, this one has {len}"
            ))));
        };
        if guid.get(2..) != Some(&GUID_TAIL[..]) {
            return Err(err(WavErrorKind::Unsupported(
                "WAVE_FORMAT_EXTENSIBLE with a SubFormat GUID that is neither PCM nor IEEE float"
                    .into(),
            )));
        }
        (u16::from_le_bytes([guid[0], guid[1]]), Some(valid))
    } else {
        (tag, None)
    };
    let encoding = match (tag, bits) {
        (1, 8) => Encoding::Pcm8,
        (1, 16) => Encoding::Pcm16,
        (1, 24) => Encoding::Pcm24,
        (1, 32) => Encoding::Pcm32,
        (1, b) => {
            return Err(err(WavErrorKind::Unsupported(format!(
                "{b}-bit integer PCM (only 8, 16, 24 and 32 bits are read)"
            ))));
        }
        (3, 32) => Encoding::Float32,
        (3, b) => {
            return Err(err(WavErrorKind::Unsupported(format!(
                "{b}-bit IEEE float (only 32-bit float is read)"
            ))));
        }
        (t, _) => return Err(err(WavErrorKind::Unsupported(tag_name(t)))),
    };
    // 0 valid bits is a common writer mistake meaning "all of them"; hound reads it so.
    if let Some(v) = valid_bits.filter(|&v| v != 0 && v != bits) {
        return Err(err(WavErrorKind::Unsupported(format!(
            "{v} valid bits in {bits}-bit sample containers"
        ))));
    }
    if channels == 0 {
        return Err(err(WavErrorKind::InvalidFmt("0 channels".into())));
    }
    if sample_rate == 0 {
        return Err(err(WavErrorKind::InvalidFmt(
            "a sample rate of 0 Hz".into(),
        )));
    }
    let frame = u32::from(channels) * u32::from(encoding.bytes());
    if u32::from(block_align) != frame {
        return Err(err(WavErrorKind::InvalidFmt(format!(
            "block align {block_align} bytes, but {channels} channel(s) of {bits}-bit samples \
             take {frame} bytes per frame"
        ))));
    }
    // The byte-rate field (offset 8) is redundant; scipy ignores it and so do we.
    Ok(Fmt {
        encoding,
        channels,
        sample_rate,
    })
}

impl Wav {
    /// Reads a WAV file; errors name the path.
    pub fn read(path: impl AsRef<Path>) -> Result<Wav, WavError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let bytes =
            std::fs::read(path).map_err(|e| WavError::new(&name, None, WavErrorKind::Read(e)))?;
        Wav::from_bytes(&bytes, &name)
    }

    /// Decodes the bytes of a WAV file; `source` names them in errors.
    pub fn from_bytes(bytes: &[u8], source: &str) -> Result<Wav, WavError> {
        let err = |at: Option<usize>, kind| WavError::new(source, at, kind);
        let (Some(magic), Some(form)) = (bytes.get(0..4), bytes.get(8..12)) else {
            return Err(err(None, WavErrorKind::TooShort { len: bytes.len() }));
        };
        match magic {
            b"RIFF" => {}
            b"RIFX" => return Err(err(Some(0), WavErrorKind::BigEndian)),
            b"RF64" => return Err(err(Some(0), WavErrorKind::Rf64)),
            _ => {
                let found = magic.escape_ascii().to_string();
                return Err(err(Some(0), WavErrorKind::NotRiff { found }));
            }
        }
        if form != b"WAVE" {
            let form = form.escape_ascii().to_string();
            return Err(err(Some(8), WavErrorKind::NotWave { form }));
        }
        // The RIFF size field (offset 4) is not checked: writers that stream often leave it
        // wrong, and the chunk sizes below carry everything we need.
        let mut pos = 12usize;
        let mut fmt: Option<Fmt> = None;
        let (data_at, data) = loop {
            let rest = bytes.get(pos..).unwrap_or_default();
            if rest.is_empty() {
                return Err(err(Some(pos), WavErrorKind::NoData));
            }
            let (Some(id), Some(size)) = (rest.get(0..4), u32_at(rest, 4)) else {
                return Err(err(
                    Some(pos),
                    WavErrorKind::TruncatedChunkHeader {
                        available: rest.len(),
                    },
                ));
            };
            let body_all = rest.get(8..).unwrap_or_default();
            let body = body_all.get(..size as usize);
            match (id, body) {
                (b"data", _) if fmt.is_none() => return Err(err(Some(pos), WavErrorKind::NoFmt)),
                (b"data", Some(body)) => break (pos, body),
                (b"data", None) => {
                    return Err(err(
                        Some(pos),
                        WavErrorKind::TruncatedData {
                            declared: size,
                            available: body_all.len(),
                        },
                    ));
                }
                (_, None) => {
                    return Err(err(
                        Some(pos),
                        WavErrorKind::TruncatedChunk {
                            id: id.escape_ascii().to_string(),
                            declared: size,
                            available: body_all.len(),
                        },
                    ));
                }
                (b"fmt ", Some(body)) => fmt = Some(parse_fmt(body, source, pos)?),
                (_, Some(_)) => {}
            }
            // Chunk bodies are padded to an even length; a missing pad byte at the very end
            // of the file is tolerated (the loop then reports "no data chunk").
            let padded = (size as usize).saturating_add(usize::from(size % 2 == 1));
            pos = pos
                .saturating_add(8)
                .saturating_add(padded)
                .min(bytes.len());
        };
        let Some(fmt) = fmt else {
            return Err(err(Some(data_at), WavErrorKind::NoFmt));
        };
        let frame_bytes = fmt.channels.saturating_mul(fmt.encoding.bytes());
        let data_len = data.len() as u32; // came from a u32 size field
        if !data.len().is_multiple_of(usize::from(frame_bytes.max(1))) {
            return Err(err(
                Some(data_at),
                WavErrorKind::PartialFrame {
                    data_len,
                    frame_bytes,
                },
            ));
        }
        let samples = decode(&fmt, data).map_err(|kind| err(Some(data_at), kind))?;
        Ok(Wav {
            sample_rate: fmt.sample_rate,
            channels: fmt.channels,
            encoding: fmt.encoding,
            data_offset: data_at as u64 + 8,
            samples,
        })
    }

    /// Samples per second (per channel).
    pub fn sample_rate(&self) -> u32 {
        self.sample_rate
    }

    /// Number of channels (at least 1).
    pub fn channels(&self) -> u16 {
        self.channels
    }

    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// Bits per sample: 8, 16, 24 or 32.
    pub fn bits_per_sample(&self) -> u16 {
        self.encoding.bits()
    }

    /// Byte offset of the first sample in the file (44 for a canonical header): the number a
    /// WFDB header's `16+44` format field must match.
    pub fn data_offset(&self) -> u64 {
        self.data_offset
    }

    /// Number of frames (samples per channel).
    pub fn frames(&self) -> usize {
        self.samples.len() / usize::from(self.channels)
    }

    /// Length in seconds.
    pub fn duration_s(&self) -> f64 {
        self.frames() as f64 / f64::from(self.sample_rate)
    }

    /// All samples, interleaved.
    pub fn samples(&self) -> &Samples {
        &self.samples
    }

    /// The interleaved samples of an integer PCM file, `None` for float.
    pub fn int_samples(&self) -> Option<&[i32]> {
        match &self.samples {
            Samples::Int(v) => Some(v),
            Samples::Float(_) => None,
        }
    }

    /// The interleaved samples of a float file, `None` for integer PCM.
    pub fn float_samples(&self) -> Option<&[f32]> {
        match &self.samples {
            Samples::Float(v) => Some(v),
            Samples::Int(_) => None,
        }
    }

    /// The samples of channel `c` (0-based), or `None` when there is no such channel.
    pub fn channel(&self, c: u16) -> Option<Samples> {
        if c >= self.channels {
            return None;
        }
        let (c, n) = (usize::from(c), usize::from(self.channels));
        Some(match &self.samples {
            Samples::Int(v) => Samples::Int(v.iter().skip(c).step_by(n).copied().collect()),
            Samples::Float(v) => Samples::Float(v.iter().skip(c).step_by(n).copied().collect()),
        })
    }
}

/// Decodes the data chunk with hound, behind a canonical 16-byte `fmt ` chunk.
fn decode(fmt: &Fmt, data: &[u8]) -> Result<Samples, WavErrorKind> {
    let enc = fmt.encoding;
    let block_align = fmt.channels.saturating_mul(enc.bytes());
    // Hound insists that the byte rate equals rate × block align in 32 bits.
    let byte_rate = fmt
        .sample_rate
        .checked_mul(u32::from(block_align))
        .ok_or_else(|| {
            WavErrorKind::InvalidFmt(format!(
                "{} Hz × {block_align}-byte frames overflows the 32-bit byte-rate field",
                fmt.sample_rate
            ))
        })?;
    let data_len = data.len() as u32;
    let mut header = Vec::with_capacity(44);
    header.extend_from_slice(b"RIFF");
    header.extend_from_slice(&data_len.saturating_add(36).to_le_bytes());
    header.extend_from_slice(b"WAVEfmt ");
    header.extend_from_slice(&16u32.to_le_bytes());
    header.extend_from_slice(&(if enc.is_float() { 3u16 } else { 1u16 }).to_le_bytes());
    header.extend_from_slice(&fmt.channels.to_le_bytes());
    header.extend_from_slice(&fmt.sample_rate.to_le_bytes());
    header.extend_from_slice(&byte_rate.to_le_bytes());
    header.extend_from_slice(&block_align.to_le_bytes());
    header.extend_from_slice(&enc.bits().to_le_bytes());
    header.extend_from_slice(b"data");
    header.extend_from_slice(&data_len.to_le_bytes());
    let reader = hound::WavReader::new(header.as_slice().chain(data))
        .map_err(|e| WavErrorKind::Decode(e.to_string()))?;
    // Capacity from the bytes actually present, never from a header field.
    let n = data.len() / usize::from(enc.bytes());
    let hound_err = |e: hound::Error| WavErrorKind::Decode(e.to_string());
    Ok(if enc.is_float() {
        let mut v = Vec::with_capacity(n);
        for s in reader.into_samples::<f32>() {
            v.push(s.map_err(hound_err)?);
        }
        Samples::Float(v)
    } else {
        let mut v = Vec::with_capacity(n);
        for s in reader.into_samples::<i32>() {
            v.push(s.map_err(hound_err)?);
        }
        Samples::Int(v)
    })
}

/// Encodes interleaved 16-bit samples as a WAV file in memory.
///
/// `interleaved` holds frame after frame (`channels` samples each). Errors name the source
/// `<in-memory WAV>`.
pub fn encode_pcm16(
    sample_rate: u32,
    channels: u16,
    interleaved: &[i16],
) -> Result<Vec<u8>, WavError> {
    encode_named(sample_rate, channels, interleaved, "<in-memory WAV>")
}

/// Writes interleaved 16-bit samples as a WAV file at `path` (created or truncated).
pub fn write_pcm16(
    path: impl AsRef<Path>,
    sample_rate: u32,
    channels: u16,
    interleaved: &[i16],
) -> Result<(), WavError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let bytes = encode_named(sample_rate, channels, interleaved, &name)?;
    std::fs::write(path, bytes).map_err(|e| WavError::new(&name, None, WavErrorKind::Write(e)))
}

fn encode_named(
    sample_rate: u32,
    channels: u16,
    interleaved: &[i16],
    name: &str,
) -> Result<Vec<u8>, WavError> {
    let fail = |msg: String| WavError::new(name, None, WavErrorKind::Encode(msg));
    if channels == 0 {
        return Err(fail("0 channels".into()));
    }
    if sample_rate == 0 {
        return Err(fail("a sample rate of 0 Hz".into()));
    }
    // Hound computes the block align as a u16 and the byte rate as a u32 without checks.
    let block_align = u32::from(channels) * 2;
    if block_align > u32::from(u16::MAX) {
        return Err(fail(format!(
            "{channels} channels of 16-bit samples do not fit the 16-bit block-align field"
        )));
    }
    if sample_rate.checked_mul(block_align).is_none() {
        return Err(fail(format!(
            "{sample_rate} Hz × {block_align}-byte frames overflows the 32-bit byte-rate field"
        )));
    }
    if !interleaved.len().is_multiple_of(usize::from(channels)) {
        return Err(fail(format!(
            "{} samples do not make whole frames of {channels} channels",
            interleaved.len()
        )));
    }
    // The RIFF size field (data + header - 8) must fit in 32 bits; the header is at most 68.
    let data_bytes = (interleaved.len() as u64) * 2;
    if data_bytes > u64::from(u32::MAX) - 60 {
        return Err(fail(format!(
            "{data_bytes} bytes of samples exceed the 4 GiB a RIFF file can describe"
        )));
    }
    let spec = hound::WavSpec {
        channels,
        sample_rate,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let header_len = if channels > 2 { 68 } else { 44 };
    let mut out = io::Cursor::new(Vec::with_capacity(header_len + data_bytes as usize));
    let hound_fail = |e: hound::Error| fail(e.to_string());
    let mut writer = hound::WavWriter::new(&mut out, spec).map_err(hound_fail)?;
    for &s in interleaved {
        writer.write_sample(s).map_err(hound_fail)?;
    }
    writer.finalize().map_err(hound_fail)?;
    Ok(out.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A canonical header followed by `data`, with the given fmt fields.
    fn wav(tag: u16, channels: u16, rate: u32, bits: u16, data: &[u8]) -> Vec<u8> {
        let align = channels * (bits / 8);
        let mut b = Vec::new();
        b.extend_from_slice(b"RIFF");
        b.extend_from_slice(&(36 + data.len() as u32).to_le_bytes());
        b.extend_from_slice(b"WAVEfmt ");
        b.extend_from_slice(&16u32.to_le_bytes());
        b.extend_from_slice(&tag.to_le_bytes());
        b.extend_from_slice(&channels.to_le_bytes());
        b.extend_from_slice(&rate.to_le_bytes());
        b.extend_from_slice(&(rate * u32::from(align)).to_le_bytes());
        b.extend_from_slice(&align.to_le_bytes());
        b.extend_from_slice(&bits.to_le_bytes());
        b.extend_from_slice(b"data");
        b.extend_from_slice(&(data.len() as u32).to_le_bytes());
        b.extend_from_slice(data);
        b
    }

    fn err(bytes: &[u8]) -> WavError {
        Wav::from_bytes(bytes, "t.wav").unwrap_err()
    }

    #[test]
    fn round_trip_mono_and_multichannel() {
        for channels in [1u16, 2, 3, 6] {
            let samples: Vec<i16> = (0..channels as i32 * 50)
                .map(|i| ((i * 7919) % 65536 - 32768) as i16)
                .collect();
            let bytes = encode_pcm16(4000, channels, &samples).unwrap();
            let w = Wav::from_bytes(&bytes, "rt.wav").unwrap();
            assert_eq!(w.channels(), channels);
            assert_eq!(w.sample_rate(), 4000);
            assert_eq!(w.encoding(), Encoding::Pcm16);
            assert_eq!(w.frames(), 50);
            assert_eq!(w.data_offset(), if channels > 2 { 68 } else { 44 });
            let want: Vec<i32> = samples.iter().map(|&s| i32::from(s)).collect();
            assert_eq!(w.int_samples().unwrap(), &want[..]);
            for c in 0..channels {
                let Some(Samples::Int(ch)) = w.channel(c) else {
                    panic!("channel {c}")
                };
                let want_c: Vec<i32> = want
                    .iter()
                    .skip(c as usize)
                    .step_by(channels as usize)
                    .copied()
                    .collect();
                assert_eq!(ch, want_c);
            }
            assert_eq!(w.channel(channels), None);
        }
    }

    #[test]
    fn mono_header_is_the_canonical_44_bytes() {
        let bytes = encode_pcm16(4000, 1, &[1, -1]).unwrap();
        assert_eq!(bytes, wav(1, 1, 4000, 16, &[1, 0, 0xff, 0xff]));
    }

    #[test]
    fn empty_data_is_a_valid_file() {
        let w = Wav::from_bytes(&encode_pcm16(8000, 2, &[]).unwrap(), "e.wav").unwrap();
        assert_eq!((w.frames(), w.channels()), (0, 2));
        assert!(w.samples().is_empty());
    }

    #[test]
    fn reads_every_integer_width_and_float() {
        let w = Wav::from_bytes(&wav(1, 1, 100, 8, &[0, 128, 255]), "8.wav").unwrap();
        assert_eq!(w.int_samples().unwrap(), &[-128, 0, 127]);
        let w = Wav::from_bytes(&wav(1, 1, 100, 24, &[1, 0, 0, 0, 0, 0x80]), "24.wav").unwrap();
        assert_eq!(w.int_samples().unwrap(), &[1, -8_388_608]);
        let w = Wav::from_bytes(&wav(1, 1, 100, 32, &[0, 0, 0, 0x80]), "32.wav").unwrap();
        assert_eq!(w.int_samples().unwrap(), &[i32::MIN]);
        let w = Wav::from_bytes(&wav(3, 1, 100, 32, &1.5f32.to_le_bytes()), "f.wav").unwrap();
        assert_eq!(w.float_samples().unwrap(), &[1.5]);
        assert_eq!(w.int_samples(), None);
        assert_eq!(w.encoding(), Encoding::Float32);
    }

    #[test]
    fn skips_unknown_chunks_and_their_pad_byte() {
        let plain = wav(1, 1, 100, 16, &[5, 0]);
        // Insert an odd-sized LIST chunk (3 bytes + pad) between fmt and data.
        let mut b = plain[..36].to_vec();
        b.extend_from_slice(b"LIST");
        b.extend_from_slice(&3u32.to_le_bytes());
        b.extend_from_slice(&[1, 2, 3, 0]);
        b.extend_from_slice(&plain[36..]);
        let w = Wav::from_bytes(&b, "list.wav").unwrap();
        assert_eq!(w.int_samples().unwrap(), &[5]);
        assert_eq!(w.data_offset(), 56);
    }

    #[test]
    fn extensible_pcm_is_read() {
        let bytes = encode_pcm16(4000, 3, &[1, 2, 3, -1, -2, -3]).unwrap();
        assert_eq!(&bytes[20..22], &[0xFE, 0xFF]);
        let w = Wav::from_bytes(&bytes, "x.wav").unwrap();
        assert_eq!(w.int_samples().unwrap(), &[1, 2, 3, -1, -2, -3]);
    }

    #[test]
    fn errors_name_file_offset_and_problem() {
        let e = err(b"RIFF");
        assert_eq!(
            e.to_string(),
            "t.wav: only 4 bytes: too short for a RIFF/WAVE header, which takes 12"
        );
        let e = err(b"ID3\x03aaaaWAVEfmt ");
        assert_eq!(e.offset, Some(0));
        assert!(
            e.to_string()
                .starts_with("t.wav: byte 0: not a RIFF file: it starts with \"ID3\\x03\""),
            "{e}"
        );
        assert!(matches!(err(b"RIFXaaaaWAVE").kind, WavErrorKind::BigEndian));
        let e = err(b"RIFFaaaaAVI LIST");
        assert_eq!(
            e.to_string(),
            "t.wav: byte 8: a RIFF file of form \"AVI \", not \"WAVE\""
        );

        // Data chunk declares more bytes than the file holds.
        let mut b = wav(1, 1, 4000, 16, &[0; 10]);
        b.truncate(b.len() - 4);
        let e = err(&b);
        assert_eq!(
            e.to_string(),
            "t.wav: byte 36: truncated data chunk: its header declares 10 bytes but only 6 follow"
        );

        let b = wav(2, 1, 4000, 4, &[0; 4]);
        let e = err(&b);
        assert_eq!(e.offset, Some(12));
        assert_eq!(
            e.to_string(),
            "t.wav: byte 12: unsupported encoding: format tag 0x0002 (Microsoft ADPCM)"
        );
        let e = err(&wav(3, 1, 4000, 64, &[0; 8]));
        assert!(e.to_string().contains("64-bit IEEE float"), "{e}");
        let e = err(&wav(1, 1, 4000, 12, &[0; 8]));
        assert!(e.to_string().contains("12-bit integer PCM"), "{e}");

        // Odd byte count in a 16-bit file.
        let e = err(&wav(1, 1, 4000, 16, &[0; 3]));
        assert_eq!(
            e.to_string(),
            "t.wav: byte 36: the data chunk holds 3 bytes, not a whole number of 2-byte frames"
        );

        // fmt missing / after data.
        let b = wav(1, 1, 4000, 16, &[0; 2]);
        let mut no_fmt = b[..12].to_vec();
        no_fmt.extend_from_slice(&b[36..]);
        assert!(matches!(err(&no_fmt).kind, WavErrorKind::NoFmt));
        let e = err(&b[..36]);
        assert_eq!(
            e.to_string(),
            "t.wav: byte 36: no data chunk: the file ends after its last chunk"
        );
        let e = err(&b[..40]);
        assert!(
            matches!(e.kind, WavErrorKind::TruncatedChunkHeader { available: 4 }),
            "{e}"
        );

        // A block align that contradicts channels × width.
        let mut bad = wav(1, 2, 4000, 16, &[0; 4]);
        bad[32] = 2;
        let e = err(&bad);
        assert!(e.to_string().contains("block align 2 bytes"), "{e}");

        // 0 Hz and 0 channels.
        assert!(err(&wav(1, 1, 0, 16, &[])).to_string().contains("0 Hz"));
        let mut zero = wav(1, 1, 4000, 16, &[]);
        zero[22] = 0;
        assert!(err(&zero).to_string().contains("0 channels"));

        // 24 valid bits in 32-bit containers (hound would misread them) is refused.
        let mut ext = encode_pcm16(4000, 3, &[0, 0, 0]).unwrap();
        ext[38] = 8; // valid bits field at 20 + 18
        assert!(
            err(&ext)
                .to_string()
                .contains("8 valid bits in 16-bit sample containers")
        );
    }

    #[test]
    fn read_from_path_names_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.wav");
        write_pcm16(&p, 4000, 1, &[7, 8]).unwrap();
        assert_eq!(Wav::read(&p).unwrap().int_samples().unwrap(), &[7, 8]);
        let missing = dir.path().join("missing.wav");
        let e = Wav::read(&missing).unwrap_err();
        let io = std::fs::read(&missing).unwrap_err();
        crate::test_util::assert_io_error_shown_once(&e, &io);
        assert!(
            e.to_string()
                .starts_with(&format!("{}: cannot read the file", missing.display()))
        );
    }

    #[test]
    fn encoder_rejects_what_hound_would_mangle() {
        assert!(encode_pcm16(4000, 0, &[]).is_err());
        assert!(encode_pcm16(0, 1, &[]).is_err());
        assert!(
            encode_pcm16(4000, 2, &[1, 2, 3])
                .unwrap_err()
                .to_string()
                .contains("whole frames")
        );
        assert!(encode_pcm16(4000, 40000, &[]).is_err());
        assert!(encode_pcm16(u32::MAX, 2, &[]).is_err());
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = Wav::from_bytes(&bytes, "fuzz.wav");
        }

        /// Arbitrary bytes behind a valid RIFF/WAVE prefix reach the chunk walker.
        #[test]
        fn arbitrary_chunks_never_panic(rest in proptest::collection::vec(any::<u8>(), 0..300)) {
            let mut bytes = b"RIFF\0\0\0\0WAVE".to_vec();
            bytes.extend_from_slice(&rest);
            let _ = Wav::from_bytes(&bytes, "fuzz.wav");
        }

        /// A valid header with arbitrary fmt fields and data never panics.
        #[test]
        fn arbitrary_fmt_never_panics(
            fmt in proptest::collection::vec(any::<u8>(), 16..41),
            data in proptest::collection::vec(any::<u8>(), 0..64),
        ) {
            let mut b = b"RIFF\0\0\0\0WAVEfmt ".to_vec();
            b.extend_from_slice(&(fmt.len() as u32).to_le_bytes());
            b.extend_from_slice(&fmt);
            if fmt.len() % 2 == 1 { b.push(0); }
            b.extend_from_slice(b"data");
            b.extend_from_slice(&(data.len() as u32).to_le_bytes());
            b.extend_from_slice(&data);
            if let Ok(w) = Wav::from_bytes(&b, "fuzz.wav") {
                prop_assert_eq!(w.samples().len() % usize::from(w.channels()), 0);
                if w.encoding() == Encoding::Pcm16 {
                    let s: Vec<i16> = w.int_samples().unwrap().iter().map(|&x| x as i16).collect();
                    let again = encode_pcm16(w.sample_rate(), w.channels(), &s).unwrap();
                    let back = Wav::from_bytes(&again, "again.wav").unwrap();
                    prop_assert_eq!(back.samples(), w.samples());
                }
            }
        }

        #[test]
        fn pcm16_round_trip(
            channels in 1u16..5,
            rate in 1u32..200_000,
            frames in proptest::collection::vec(any::<i16>(), 0..40),
        ) {
            let n = frames.len() - frames.len() % usize::from(channels);
            let samples = &frames[..n];
            let w = Wav::from_bytes(&encode_pcm16(rate, channels, samples).unwrap(), "p.wav").unwrap();
            prop_assert_eq!(w.sample_rate(), rate);
            prop_assert_eq!(w.channels(), channels);
            let got: Vec<i16> = w.int_samples().unwrap().iter().map(|&s| s as i16).collect();
            prop_assert_eq!(got, samples.to_vec());
        }
    }
}
