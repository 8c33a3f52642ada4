//! WFDB signal storage formats (signal(5)): how digital samples are packed into bytes.
//! Public so that benchmarks and other crates can decode sample streams held in memory.
//!
//! Decoders and encoders work on a flat stream of samples (the samples of every signal of a
//! file, frame after frame). Packed formats (212, 310, 311) pair samples across frame
//! boundaries, so the stream, not the frame, is the unit of packing.
//!
//! The FLAC formats (508, 516, 524) are no packing of bytes: a file holds one FLAC stream
//! with a channel per signal (docs/formats.md, "FLAC formats"), which `wfdb::flac` reads
//! and writes. The byte-level functions here ([`decode`], [`encode`], the byte counts)
//! treat them as storing nothing, and the reader and writer never call them for these
//! formats.

/// A signal storage format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Format 0: a null signal, nothing stored; every sample reads as invalid.
    Null,
    /// 8-bit first differences from the previous sample (from the initial value).
    F8,
    /// 16-bit two's complement, little-endian.
    F16,
    /// 24-bit two's complement, little-endian.
    F24,
    /// 32-bit two's complement, little-endian.
    F32,
    /// 16-bit two's complement, big-endian.
    F61,
    /// 8-bit offset binary (stored value minus 128).
    F80,
    /// 16-bit offset binary (stored value minus 32768).
    F160,
    /// Two 12-bit samples packed in three bytes.
    F212,
    /// Three 10-bit samples in two little-endian 16-bit words (bits 1-10 of each word, and
    /// the third sample split over bits 11-15 of both).
    F310,
    /// Three 10-bit samples in one little-endian 32-bit word (bits 0-9, 10-19, 20-29).
    F311,
    /// A FLAC stream of samples of at most 8 bits, one channel per signal.
    F508,
    /// A FLAC stream of samples of at most 16 bits, one channel per signal.
    F516,
    /// A FLAC stream of samples of at most 24 bits, one channel per signal.
    F524,
}

/// A format serializes as its WFDB code (16, 212, ...).
impl serde::Serialize for Format {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u32(self.code())
    }
}

/// The value WFDB reads as "no valid sample" (WFDB_INVALID_SAMPLE) for formats whose own
/// sentinel does not exist (null signals, samples past the end of a skewed signal).
pub const GENERIC_INVALID: i32 = -32768;

impl Format {
    /// Every format, in the order of their codes within each kind.
    pub const ALL: [Format; 14] = [
        Format::Null,
        Format::F8,
        Format::F16,
        Format::F24,
        Format::F32,
        Format::F61,
        Format::F80,
        Format::F160,
        Format::F212,
        Format::F310,
        Format::F311,
        Format::F508,
        Format::F516,
        Format::F524,
    ];

    /// The formats whose samples are packed into bytes ([`decode`] and [`encode`]): every
    /// format but the FLAC ones.
    pub const PACKED: [Format; 11] = [
        Format::Null,
        Format::F8,
        Format::F16,
        Format::F24,
        Format::F32,
        Format::F61,
        Format::F80,
        Format::F160,
        Format::F212,
        Format::F310,
        Format::F311,
    ];

    /// The bits a sample of a FLAC format may hold (8, 16 or 24); `None` for the others.
    pub fn flac_bits(self) -> Option<u32> {
        match self {
            Format::F508 => Some(8),
            Format::F516 => Some(16),
            Format::F524 => Some(24),
            _ => None,
        }
    }

    /// Whether the format stores a FLAC stream.
    pub fn is_flac(self) -> bool {
        self.flac_bits().is_some()
    }

    pub fn from_code(code: u32) -> Option<Format> {
        Some(match code {
            0 => Format::Null,
            8 => Format::F8,
            16 => Format::F16,
            24 => Format::F24,
            32 => Format::F32,
            61 => Format::F61,
            80 => Format::F80,
            160 => Format::F160,
            212 => Format::F212,
            310 => Format::F310,
            311 => Format::F311,
            508 => Format::F508,
            516 => Format::F516,
            524 => Format::F524,
            _ => return None,
        })
    }

    pub fn code(self) -> u32 {
        match self {
            Format::Null => 0,
            Format::F8 => 8,
            Format::F16 => 16,
            Format::F24 => 24,
            Format::F32 => 32,
            Format::F61 => 61,
            Format::F80 => 80,
            Format::F160 => 160,
            Format::F212 => 212,
            Format::F310 => 310,
            Format::F311 => 311,
            Format::F508 => 508,
            Format::F516 => 516,
            Format::F524 => 524,
        }
    }

    /// ADC resolution a reader assumes when the header gives none, as the WFDB library's
    /// readheader (signal.c) assumes it: only the offset-binary and packed formats imply a
    /// resolution; every other format takes WFDB_DEFRES, 12 bits, even where a sample
    /// holds more (the FLAC formats too).
    pub fn default_adc_res(self) -> u32 {
        match self {
            Format::F80 => 8,
            Format::F160 => 16,
            Format::F310 | Format::F311 => 10,
            Format::F8
            | Format::F16
            | Format::F24
            | Format::F32
            | Format::F61
            | Format::F212
            | Format::F508
            | Format::F516
            | Format::F524
            | Format::Null => 12,
        }
    }

    /// ADC resolution a writer states when the caller gives none: the bits a sample of the
    /// format holds (what wfdb-python writes), so that the header tells a reader more than
    /// [`default_adc_res`](Self::default_adc_res) would; 12 for a null signal.
    pub fn written_adc_res(self) -> u32 {
        match self {
            Format::F8 | Format::F80 | Format::F508 => 8,
            Format::F16 | Format::F61 | Format::F160 | Format::F516 => 16,
            Format::F24 | Format::F524 => 24,
            Format::F32 => 32,
            Format::F310 | Format::F311 => 10,
            Format::F212 | Format::Null => 12,
        }
    }

    /// Range of digital values the format can store.
    pub fn range(self) -> (i32, i32) {
        match self {
            Format::F80 | Format::F508 => (-128, 127),
            Format::F310 | Format::F311 => (-512, 511),
            Format::F212 => (-2048, 2047),
            Format::F16 | Format::F61 | Format::F160 | Format::F516 | Format::Null => {
                (-32768, 32767)
            }
            Format::F24 | Format::F524 => (-(1 << 23), (1 << 23) - 1),
            // Format 8 stores differences: the values themselves are unbounded.
            Format::F32 | Format::F8 => (i32::MIN, i32::MAX),
        }
    }

    /// The stored value that means "invalid sample" (the most negative value of the
    /// format's range). Format 8 has none: any value is a valid running sum.
    pub fn invalid_value(self) -> Option<i32> {
        match self {
            Format::F8 => None,
            Format::Null => Some(GENERIC_INVALID),
            f => Some(f.range().0),
        }
    }

    /// Bytes of one sample, for the formats that store each sample by itself in whole
    /// bytes (not 8, whose samples are differences from the one before, nor the packed
    /// ones).
    pub fn whole_bytes(self) -> Option<u64> {
        match (self, self.group()) {
            (Format::F8 | Format::Null, _) => None,
            (_, (1, bytes)) => Some(bytes),
            _ => None,
        }
    }

    /// Samples and bytes in one packing group (none for the FLAC formats, which are not
    /// packed into bytes).
    fn group(self) -> (u64, u64) {
        match self {
            Format::Null | Format::F508 | Format::F516 | Format::F524 => (1, 0),
            Format::F8 | Format::F80 => (1, 1),
            Format::F16 | Format::F61 | Format::F160 => (1, 2),
            Format::F24 => (1, 3),
            Format::F32 => (1, 4),
            Format::F212 => (2, 3),
            Format::F310 | Format::F311 => (3, 4),
        }
    }

    /// Bytes that hold `n` samples starting at a group boundary, as written by the WFDB
    /// library (a partial last group is stored in fewer bytes; see docs/formats.md).
    pub fn bytes_written(self, n: u64) -> u64 {
        let (gs, gb) = self.group();
        let full = (n / gs).saturating_mul(gb);
        full.saturating_add(match (self, n % gs) {
            (_, 0) => 0,
            (Format::F212, 1) => 2,
            (Format::F310 | Format::F311, 1) => 2,
            (Format::F310 | Format::F311, 2) => 4,
            // Groups of one sample leave no remainder.
            _ => 0,
        })
    }

    /// Fewest bytes from a group boundary that hold `n` samples. Equal to
    /// [`bytes_written`](Self::bytes_written) except for format 311, where two trailing
    /// samples need only three bytes (writers pad to four).
    pub fn bytes_needed(self, n: u64) -> u64 {
        match (self, n % 3) {
            (Format::F311, 2) => (n / 3).saturating_mul(4).saturating_add(3),
            _ => self.bytes_written(n),
        }
    }

    /// [`bytes_needed`](Self::bytes_needed), or `None` when the count exceeds `u64`
    /// (where `bytes_needed` would give a saturated, untrue, count).
    pub fn checked_bytes_needed(self, n: u64) -> Option<u64> {
        let (gs, gb) = self.group();
        let full = (n / gs).checked_mul(gb)?;
        // The remainder is less than one group, whose bytes cannot overflow.
        full.checked_add(self.bytes_needed(n % gs))
    }

    /// How many whole samples `bytes` bytes (from a group boundary) hold.
    pub fn samples_in(self, bytes: u64) -> u64 {
        let (gs, gb) = self.group();
        if gb == 0 {
            return 0;
        }
        let full = (bytes / gb) * gs;
        let rest = bytes % gb;
        full + match self {
            Format::F212 if rest >= 2 => 1,
            Format::F310 if rest >= 2 => 1,
            Format::F311 if rest == 3 => 2,
            Format::F311 if rest == 2 => 1,
            _ => 0,
        }
    }

    /// Start of the packing group holding flat sample `n`: (byte offset, samples to skip
    /// within the group).
    pub fn group_start(self, n: u64) -> (u64, u64) {
        let (gs, gb) = self.group();
        ((n / gs) * gb, n % gs)
    }
}

/// Decodes samples from `bytes`, which start at a packing-group boundary, into `out`, and
/// returns how many it decoded: `out.len()`, or fewer when `bytes` holds fewer (the rest
/// of `out` is left as it was). Format 8 yields the raw differences; the caller
/// accumulates them per signal. A null signal decodes `out.len()` invalid samples.
pub fn decode(format: Format, bytes: &[u8], out: &mut [i32]) -> usize {
    decode_inline(format, bytes, out)
}

/// [`decode`], inlined into its caller (so that a caller compiled for a wider instruction
/// set decodes with it too).
#[inline(always)]
pub(crate) fn decode_inline(format: Format, bytes: &[u8], out: &mut [i32]) -> usize {
    let n = if format == Format::Null {
        out.len()
    } else if format.is_flac() {
        0
    } else {
        out.len()
            .min(format.samples_in(bytes.len() as u64) as usize)
    };
    let out = &mut out[..n];
    match format {
        Format::Null => out.fill(GENERIC_INVALID),
        Format::F8 => {
            for (o, &b) in out.iter_mut().zip(bytes) {
                *o = b as i8 as i32;
            }
        }
        Format::F80 => decode_each(bytes, out, sample::f80),
        Format::F16 => decode_each(bytes, out, sample::f16),
        Format::F61 => decode_each(bytes, out, sample::f61),
        Format::F160 => decode_each(bytes, out, sample::f160),
        Format::F24 => decode_each(bytes, out, sample::f24),
        Format::F32 => decode_each(bytes, out, sample::f32),
        Format::F212 => decode_212(bytes, out),
        Format::F310 => decode_310(bytes, out),
        Format::F311 => decode_311(bytes, out),
        Format::F508 | Format::F516 | Format::F524 => {}
    }
    n
}

/// Decodes a format that stores each sample in `W` whole bytes.
#[inline(always)]
fn decode_each<const W: usize>(bytes: &[u8], out: &mut [i32], f: impl Fn([u8; W]) -> i32) {
    for (o, &b) in out.iter_mut().zip(bytes.as_chunks::<W>().0) {
        *o = f(b);
    }
}

/// One sample from its bytes, for the formats that store each sample in whole bytes, and
/// the two samples of a format 212 group.
pub(crate) mod sample {
    use super::sext;

    #[inline(always)]
    pub fn f80(b: [u8; 1]) -> i32 {
        b[0] as i32 - 128
    }
    #[inline(always)]
    pub fn f16(b: [u8; 2]) -> i32 {
        i16::from_le_bytes(b) as i32
    }
    #[inline(always)]
    pub fn f61(b: [u8; 2]) -> i32 {
        i16::from_be_bytes(b) as i32
    }
    #[inline(always)]
    pub fn f160(b: [u8; 2]) -> i32 {
        u16::from_le_bytes(b) as i32 - 32768
    }
    #[inline(always)]
    pub fn f24(b: [u8; 3]) -> i32 {
        // Sign-extend from the top byte.
        i32::from_le_bytes([0, b[0], b[1], b[2]]) >> 8
    }
    #[inline(always)]
    pub fn f32(b: [u8; 4]) -> i32 {
        i32::from_le_bytes(b)
    }
    /// The first sample of a format 212 group.
    #[inline(always)]
    pub fn f212_first(g: [u8; 3]) -> i32 {
        sext(g[0] as u32 | (g[1] as u32 & 0x0F) << 8, 12)
    }
    /// The second sample of a format 212 group.
    #[inline(always)]
    pub fn f212_second(g: [u8; 3]) -> i32 {
        sext(g[2] as u32 | (g[1] as u32 & 0xF0) << 4, 12)
    }
}

/// Sign-extends the low `bits` bits of `v`.
#[inline(always)]
fn sext(v: u32, bits: u32) -> i32 {
    let shift = 32 - bits;
    ((v << shift) as i32) >> shift
}

#[inline(always)]
fn decode_212(bytes: &[u8], out: &mut [i32]) {
    let tail = (out.len() / 2) * 3;
    let mut pairs = out.chunks_exact_mut(2);
    for (o, &g) in (&mut pairs).zip(bytes.as_chunks::<3>().0) {
        o[0] = sample::f212_first(g);
        o[1] = sample::f212_second(g);
    }
    if let [last] = pairs.into_remainder() {
        *last = sext(
            bytes[tail] as u32 | (bytes[tail + 1] as u32 & 0x0F) << 8,
            12,
        );
    }
}

#[inline(always)]
fn decode_310(bytes: &[u8], out: &mut [i32]) {
    let word = |i: usize| u16::from_le_bytes([bytes[i], bytes[i + 1]]) as u32;
    let groups = out.len() / 3;
    for g in 0..groups {
        let (w0, w1) = (word(4 * g), word(4 * g + 2));
        out[3 * g] = sext((w0 >> 1) & 0x3FF, 10);
        out[3 * g + 1] = sext((w1 >> 1) & 0x3FF, 10);
        out[3 * g + 2] = sext((w0 >> 11) | (w1 >> 11) << 5, 10);
    }
    let rest = &mut out[3 * groups..];
    if !rest.is_empty() {
        rest[0] = sext((word(4 * groups) >> 1) & 0x3FF, 10);
    }
    if rest.len() > 1 {
        rest[1] = sext((word(4 * groups + 2) >> 1) & 0x3FF, 10);
    }
}

#[inline(always)]
fn decode_311(bytes: &[u8], out: &mut [i32]) {
    let groups = out.len() / 3;
    for (o, c) in out.chunks_exact_mut(3).zip(bytes.chunks_exact(4)) {
        let w = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        // Bits 30-31 are unused and ignored (wfdb-python 4.3.1 wrongly keeps bit 30).
        o[0] = sext(w & 0x3FF, 10);
        o[1] = sext((w >> 10) & 0x3FF, 10);
        o[2] = sext((w >> 20) & 0x3FF, 10);
    }
    let rest = &mut out[3 * groups..];
    if !rest.is_empty() {
        let mut b = [0u8; 4];
        let avail = &bytes[4 * groups..];
        let n = avail.len().min(4);
        b[..n].copy_from_slice(&avail[..n]);
        let w = u32::from_le_bytes(b);
        rest[0] = sext(w & 0x3FF, 10);
        if rest.len() > 1 {
            rest[1] = sext((w >> 10) & 0x3FF, 10);
        }
    }
}

/// Encodes a flat sample stream. Values must be in the format's range (format 8: the
/// caller passes differences, each in -128..=127). A partial last group is written in as
/// few bytes as the WFDB library writes, with unused bits zero.
pub fn encode(format: Format, samples: &[i32], out: &mut Vec<u8>) {
    match format {
        Format::Null | Format::F508 | Format::F516 | Format::F524 => {}
        Format::F8 => out.extend(samples.iter().map(|&v| v as i8 as u8)),
        Format::F80 => out.extend(samples.iter().map(|&v| (v + 128) as u8)),
        Format::F16 => {
            for &v in samples {
                out.extend_from_slice(&(v as i16).to_le_bytes());
            }
        }
        Format::F61 => {
            for &v in samples {
                out.extend_from_slice(&(v as i16).to_be_bytes());
            }
        }
        Format::F160 => {
            for &v in samples {
                out.extend_from_slice(&((v + 32768) as u16).to_le_bytes());
            }
        }
        Format::F24 => {
            for &v in samples {
                out.extend_from_slice(&v.to_le_bytes()[..3]);
            }
        }
        Format::F32 => {
            for &v in samples {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        Format::F212 => {
            let mut pairs = samples.chunks_exact(2);
            for p in &mut pairs {
                let (a, b) = (p[0] as u32 & 0xFFF, p[1] as u32 & 0xFFF);
                out.extend_from_slice(&[a as u8, ((a >> 8) | (b >> 8) << 4) as u8, b as u8]);
            }
            if let [a] = pairs.remainder() {
                let a = *a as u32 & 0xFFF;
                out.extend_from_slice(&[a as u8, (a >> 8) as u8]);
            }
        }
        Format::F310 => {
            let mut triples = samples.chunks_exact(3);
            for t in &mut triples {
                let (a, b, c) = (
                    t[0] as u32 & 0x3FF,
                    t[1] as u32 & 0x3FF,
                    t[2] as u32 & 0x3FF,
                );
                let w0 = (a << 1) | (c & 0x1F) << 11;
                let w1 = (b << 1) | (c >> 5) << 11;
                out.extend_from_slice(&(w0 as u16).to_le_bytes());
                out.extend_from_slice(&(w1 as u16).to_le_bytes());
            }
            let rest = triples.remainder();
            if let Some(&a) = rest.first() {
                out.extend_from_slice(&(((a as u32 & 0x3FF) << 1) as u16).to_le_bytes());
            }
            if let Some(&b) = rest.get(1) {
                out.extend_from_slice(&(((b as u32 & 0x3FF) << 1) as u16).to_le_bytes());
            }
        }
        Format::F311 => {
            let mut triples = samples.chunks_exact(3);
            for t in &mut triples {
                let w = (t[0] as u32 & 0x3FF)
                    | (t[1] as u32 & 0x3FF) << 10
                    | (t[2] as u32 & 0x3FF) << 20;
                out.extend_from_slice(&w.to_le_bytes());
            }
            match *triples.remainder() {
                [a] => out.extend_from_slice(&((a as u32 & 0x3FF) as u16).to_le_bytes()),
                [a, b] => {
                    let w = (a as u32 & 0x3FF) | (b as u32 & 0x3FF) << 10;
                    out.extend_from_slice(&w.to_le_bytes());
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn stored(format: Format) -> impl Strategy<Value = Vec<i32>> {
        let (lo, hi) = if format == Format::F8 {
            (-128, 127)
        } else {
            format.range()
        };
        prop::collection::vec(lo..=hi, 0..64)
    }

    #[test]
    fn known_bytes() {
        // signal(5) examples: 212 packs 0x123 and 0x456 as 23 41 56... (low byte, nibbles, low byte).
        let mut out = [0; 2];
        decode(Format::F212, &[0x23, 0x41, 0x56], &mut out);
        assert_eq!(out, [0x123, 0x456]);
        decode(Format::F212, &[0xFF, 0xFF, 0xFF], &mut out);
        assert_eq!(out, [-1, -1]);
        let mut out = [0; 1];
        decode(Format::F212, &[0x00, 0x08], &mut out);
        assert_eq!(out, [-2048]);
        // 311 with bits 30-31 set: they are ignored.
        let mut out = [0; 3];
        decode(Format::F311, &0xFFFF_FFFFu32.to_le_bytes(), &mut out);
        assert_eq!(out, [-1, -1, -1]);
        decode(Format::F311, &0x4000_0000u32.to_le_bytes(), &mut out);
        assert_eq!(out, [0, 0, 0]);
        let mut out = [0; 1];
        decode(Format::F24, &[0xFF, 0xFF, 0x7F], &mut out);
        assert_eq!(out, [(1 << 23) - 1]);
        decode(Format::F160, &[0x00, 0x80], &mut out);
        assert_eq!(out, [0]);
        decode(Format::F61, &[0x80, 0x00], &mut out);
        assert_eq!(out, [-32768]);
        decode(Format::F80, &[0x00], &mut out);
        assert_eq!(out, [-128]);
    }

    #[test]
    fn tail_sizes_follow_the_wfdb_library() {
        assert_eq!(Format::F212.bytes_written(3), 5);
        assert_eq!(Format::F310.bytes_written(4), 6);
        assert_eq!(Format::F310.bytes_written(5), 8);
        assert_eq!(Format::F311.bytes_written(4), 6);
        assert_eq!(Format::F311.bytes_written(5), 8);
        assert_eq!(Format::F311.bytes_needed(5), 7);
        // Without a sig_len the sample count comes from the file size, which is ambiguous
        // for a padded tail (four bytes of format 310 hold two or three samples): the
        // count read is the largest the bytes can hold, never fewer than were written.
        for f in Format::PACKED.into_iter().filter(|&f| f != Format::Null) {
            for n in 0..20 {
                for bytes in [f.bytes_written(n), f.bytes_needed(n)] {
                    let got = f.samples_in(bytes);
                    assert!(got >= n && got < n + f.group().0, "{f:?} {n} {bytes} {got}");
                }
            }
        }
        assert_eq!(Format::F212.samples_in(Format::F212.bytes_written(3)), 3);
    }

    /// The WFDB library's readheader: only 80, 160, 212, 310 and 311 imply a resolution,
    /// every other format takes WFDB_DEFRES (12). The writer states what a sample holds.
    #[test]
    fn default_adc_res_is_the_wfdb_librarys() {
        let reader: Vec<(u32, u32)> = Format::ALL
            .iter()
            .map(|f| (f.code(), f.default_adc_res()))
            .collect();
        assert_eq!(
            reader,
            [
                (0, 12),
                (8, 12),
                (16, 12),
                (24, 12),
                (32, 12),
                (61, 12),
                (80, 8),
                (160, 16),
                (212, 12),
                (310, 10),
                (311, 10),
                (508, 12),
                (516, 12),
                (524, 12)
            ]
        );
        let writer: Vec<(u32, u32)> = Format::ALL
            .iter()
            .map(|f| (f.code(), f.written_adc_res()))
            .collect();
        assert_eq!(
            writer,
            [
                (0, 12),
                (8, 8),
                (16, 16),
                (24, 24),
                (32, 32),
                (61, 16),
                (80, 8),
                (160, 16),
                (212, 12),
                (310, 10),
                (311, 10),
                (508, 8),
                (516, 16),
                (524, 24)
            ]
        );
    }

    #[test]
    fn byte_counts_past_u64_are_none_not_saturated() {
        for f in Format::PACKED {
            for n in 0..50 {
                assert_eq!(
                    f.checked_bytes_needed(n),
                    Some(f.bytes_needed(n)),
                    "{f:?} {n}"
                );
            }
        }
        assert_eq!(Format::F16.checked_bytes_needed(u64::MAX), None);
        assert_eq!(
            Format::F16.checked_bytes_needed(u64::MAX / 2),
            Some(u64::MAX - 1)
        );
        assert_eq!(Format::F212.checked_bytes_needed(u64::MAX), None);
        assert_eq!(Format::F8.checked_bytes_needed(u64::MAX), Some(u64::MAX));
        assert_eq!(Format::Null.checked_bytes_needed(u64::MAX), Some(0));
    }

    proptest! {
        #[test]
        fn encode_decode_round_trip(
            (format, samples) in prop::sample::select(&Format::PACKED[1..]).prop_flat_map(|f| (Just(f), stored(f)))
        ) {
            let mut bytes = Vec::new();
            encode(format, &samples, &mut bytes);
            prop_assert_eq!(bytes.len() as u64, format.bytes_written(samples.len() as u64));
            let mut out = vec![0; samples.len()];
            decode(format, &bytes, &mut out);
            prop_assert_eq!(out, samples);
        }

        #[test]
        fn decode_any_bytes_in_range(format in prop::sample::select(&Format::PACKED[..]), bytes in prop::collection::vec(any::<u8>(), 0..64)) {
            // Asking for more samples than the bytes hold decodes what they hold.
            let n = format.samples_in(bytes.len() as u64) as usize;
            let mut out = vec![0; n + 3];
            let got = decode(format, &bytes, &mut out);
            prop_assert_eq!(got, if format == Format::Null { n + 3 } else { n });
            let (lo, hi) = if format == Format::F8 { (-128, 127) } else { format.range() };
            prop_assert!(out[..got].iter().all(|&v| (lo..=hi).contains(&v)));
        }
    }
}
