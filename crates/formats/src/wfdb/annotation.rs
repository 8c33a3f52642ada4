//! WFDB MIT-format annotation files (`.atr`, `.qrs`, ...), read and written as annotation(5)
//! of the WFDB Software Package describes them and as its C library (`getann`/`putann`)
//! reads and writes them.
//!
//! An annotation file is a sequence of 16-bit little-endian words. The high 6 bits of a word
//! are a code `A`, the low 10 bits a value `I`:
//!
//! | `A` | meaning |
//! |---|---|
//! | 0, with `I` = 0 | end of file |
//! | 1–58 (and 0 with `I` ≠ 0) | an annotation with label code `A`, `I` samples after the previous one |
//! | 59 `SKIP` | the next 4 bytes are a signed 32-bit interval (high word first, each word little-endian) added to the time |
//! | 60 `NUM` | `num` of the current annotation and of the following ones |
//! | 61 `SUB` | `subtype` of the current annotation only |
//! | 62 `CHN` | `chan` of the current annotation and of the following ones |
//! | 63 `AUX` | the low 8 bits of `I` give the length of the aux bytes that follow (plus a pad byte when odd) |
//!
//! [`parse`] returns every annotation exactly as stored, including the `NOTE` annotations
//! at sample 0 that carry the file's definitions (time resolution, custom label table) and
//! label-code-0 annotations; wfdb-python drops both. The definitions are also returned
//! parsed ([`Definitions`]), and [`AnnotationFile::content`] gives the annotations after
//! them. [`to_bytes`] and [`write`] store annotations the way `putann` does.
//!
//! What it is not: no AHA-format annotation files, no conversion of times between the
//! annotation time resolution and a record's sampling frequency (the caller has the
//! header), no sorting (annotations are written in the order given and read in the order
//! stored).
//!
//! Choices where the specification leaves room:
//! - Bytes after the end-of-file word are ignored, as the C library does, and counted in
//!   [`AnnotationFile::trailing_bytes`] so that a caller can warn about them.
//! - A file that ends before the end-of-file word (cut inside a word, a `SKIP` or an `AUX`
//!   field, or simply missing the final zero word) is an error, as are `NUM`/`SUB`/`CHN`/
//!   `AUX` fields before the first annotation and malformed definition notes.
//! - As in the C library, fields that follow a `SKIP` still belong to the annotation
//!   before it, the two unused high bits of `I` in `NUM`/`SUB`/`CHN`/`AUX` words are
//!   ignored, and a repeated field replaces the earlier one.

use std::borrow::Cow;
use std::path::Path;

use super::{WfdbError, WfdbErrorKind};

/// Label codes of `ecgcodes.h` (WFDB Software Package).
pub mod codes {
    pub const NOTQRS: u8 = 0;
    pub const NORMAL: u8 = 1;
    pub const LBBB: u8 = 2;
    pub const RBBB: u8 = 3;
    pub const ABERR: u8 = 4;
    pub const PVC: u8 = 5;
    pub const FUSION: u8 = 6;
    pub const NPC: u8 = 7;
    pub const APC: u8 = 8;
    pub const SVPB: u8 = 9;
    pub const VESC: u8 = 10;
    pub const NESC: u8 = 11;
    pub const PACE: u8 = 12;
    pub const UNKNOWN: u8 = 13;
    pub const NOISE: u8 = 14;
    pub const ARFCT: u8 = 16;
    pub const STCH: u8 = 18;
    pub const TCH: u8 = 19;
    pub const SYSTOLE: u8 = 20;
    pub const DIASTOLE: u8 = 21;
    pub const NOTE: u8 = 22;
    pub const MEASURE: u8 = 23;
    pub const PWAVE: u8 = 24;
    pub const BBB: u8 = 25;
    pub const PACESP: u8 = 26;
    pub const TWAVE: u8 = 27;
    pub const RHYTHM: u8 = 28;
    pub const UWAVE: u8 = 29;
    pub const LEARN: u8 = 30;
    pub const FLWAV: u8 = 31;
    pub const VFON: u8 = 32;
    pub const VFOFF: u8 = 33;
    pub const AESC: u8 = 34;
    pub const SVESC: u8 = 35;
    pub const LINK: u8 = 36;
    pub const NAPC: u8 = 37;
    pub const PFUS: u8 = 38;
    pub const WFON: u8 = 39;
    pub const WFOFF: u8 = 40;
    pub const RONT: u8 = 41;
    /// The largest label code the standard table may define (`ACMAX`).
    pub const ACMAX: u8 = 49;
    /// The largest label code a file can store: 59–63 are the pseudo codes below.
    pub const MAX_STORABLE: u8 = 58;
    pub const SKIP: u8 = 59;
    pub const NUM: u8 = 60;
    pub const SUB: u8 = 61;
    pub const CHN: u8 = 62;
    pub const AUX: u8 = 63;
}

/// One entry of the standard label table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StandardLabel {
    pub code: u8,
    /// The mnemonic `rdann` prints (`N`, `V`, `+`, ...).
    pub symbol: &'static str,
    /// The `ecgcodes.h` constant name (`NORMAL`, `PVC`, ...).
    pub name: &'static str,
    pub description: &'static str,
}

const fn label(
    code: u8,
    symbol: &'static str,
    name: &'static str,
    description: &'static str,
) -> StandardLabel {
    StandardLabel {
        code,
        symbol,
        name,
        description,
    }
}

/// The standard labels (`ecgcodes.h`, symbols as the C library's `annstr` and
/// wfdb-python's `ann_label_table` give them). Codes 15, 17 and 42–49 have none.
pub const STANDARD_LABELS: &[StandardLabel] = &[
    // Code 0 prints as a space in both the C library and wfdb-python.
    label(0, " ", "NOTQRS", "Not an annotation"),
    label(1, "N", "NORMAL", "Normal beat"),
    label(2, "L", "LBBB", "Left bundle branch block beat"),
    label(3, "R", "RBBB", "Right bundle branch block beat"),
    label(4, "a", "ABERR", "Aberrated atrial premature beat"),
    label(5, "V", "PVC", "Premature ventricular contraction"),
    label(6, "F", "FUSION", "Fusion of ventricular and normal beat"),
    label(7, "J", "NPC", "Nodal (junctional) premature beat"),
    label(8, "A", "APC", "Atrial premature beat"),
    label(9, "S", "SVPB", "Supraventricular premature or ectopic beat"),
    label(10, "E", "VESC", "Ventricular escape beat"),
    label(11, "j", "NESC", "Nodal (junctional) escape beat"),
    label(12, "/", "PACE", "Paced beat"),
    label(13, "Q", "UNKNOWN", "Unclassifiable beat"),
    label(14, "~", "NOISE", "Change in signal quality"),
    label(16, "|", "ARFCT", "Isolated QRS-like artifact"),
    label(18, "s", "STCH", "ST segment change"),
    label(19, "T", "TCH", "T-wave change"),
    label(20, "*", "SYSTOLE", "Systole"),
    label(21, "D", "DIASTOLE", "Diastole"),
    label(22, "\"", "NOTE", "Comment annotation"),
    label(23, "=", "MEASURE", "Measurement annotation"),
    label(24, "p", "PWAVE", "P-wave peak"),
    label(25, "B", "BBB", "Bundle branch block beat (unspecified)"),
    label(26, "^", "PACESP", "(Non-captured) pacemaker artifact"),
    label(27, "t", "TWAVE", "T-wave peak"),
    label(28, "+", "RHYTHM", "Rhythm change"),
    label(29, "u", "UWAVE", "U-wave peak"),
    label(30, "?", "LEARN", "Beat not classified during learning"),
    label(31, "!", "FLWAV", "Ventricular flutter wave"),
    label(32, "[", "VFON", "Start of ventricular flutter/fibrillation"),
    label(33, "]", "VFOFF", "End of ventricular flutter/fibrillation"),
    label(34, "e", "AESC", "Atrial escape beat"),
    label(35, "n", "SVESC", "Supraventricular escape beat"),
    label(36, "@", "LINK", "Link to external data (aux contains URL)"),
    label(37, "x", "NAPC", "Non-conducted P-wave (blocked APC)"),
    label(38, "f", "PFUS", "Fusion of paced and normal beat"),
    label(39, "(", "WFON", "Waveform onset"),
    label(40, ")", "WFOFF", "Waveform end"),
    label(41, "r", "RONT", "R-on-T premature ventricular contraction"),
];

/// The standard entry for `code`, if the standard table defines one.
pub fn standard_label(code: u8) -> Option<&'static StandardLabel> {
    // The table is sorted by code with two gaps (15, 17), so a binary search is exact.
    STANDARD_LABELS
        .binary_search_by_key(&code, |l| l.code)
        .ok()
        .and_then(|i| STANDARD_LABELS.get(i))
}

/// The standard symbol of `code` (`None` for codes the standard table leaves undefined).
pub fn standard_symbol(code: u8) -> Option<&'static str> {
    standard_label(code).map(|l| l.symbol)
}

/// The standard code of `symbol`, searching codes 1–49 as the C library's `strann` does
/// (so `" "` is not code 0).
pub fn standard_code(symbol: &str) -> Option<u8> {
    STANDARD_LABELS
        .iter()
        .find(|l| l.code != codes::NOTQRS && l.symbol == symbol)
        .map(|l| l.code)
}

/// One annotation, as stored.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Annotation {
    /// Time in units of the file's time resolution (the record's samples unless the file
    /// says otherwise). 64 bits: `SKIP`s can take it past 2^31, or below 0.
    pub sample: i64,
    /// Label code, 0–58 (1–49 are the label codes proper; files may hold the others).
    pub code: u8,
    /// Set by a `SUB` field, for this annotation only.
    pub subtype: i8,
    /// Set by a `CHN` field; carries over to the following annotations.
    pub chan: u8,
    /// Set by a `NUM` field; carries over to the following annotations.
    pub num: i8,
    /// The aux bytes exactly as stored (`None` when the annotation has no `AUX` field;
    /// `Some(empty)` for an `AUX` field of length 0).
    pub aux: Option<Vec<u8>>,
}

impl Annotation {
    /// An annotation with no subtype, channel 0, num 0 and no aux.
    pub fn new(sample: i64, code: u8) -> Self {
        Annotation {
            sample,
            code,
            subtype: 0,
            chan: 0,
            num: 0,
            aux: None,
        }
    }

    /// The aux bytes as text: UTF-8 (so ASCII) text as it is; anything else read as
    /// Latin-1, one character per byte, as wfdb-python does. No byte is replaced or lost.
    pub fn aux_str(&self) -> Option<Cow<'_, str>> {
        self.aux.as_deref().map(text_of)
    }
}

/// A custom label from the file's definition table: a `CODE SYMBOL DESCRIPTION` note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomLabel {
    pub code: u8,
    /// One or more characters, no space or tab.
    pub symbol: String,
    /// May be empty.
    pub description: String,
}

/// What the `NOTE` annotations at the start of a file define (see [`AnnotationFile`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Definitions {
    /// Ticks per second of the annotation times (`## time resolution: F`), when the file
    /// gives one; otherwise the times count the record's samples.
    pub time_resolution: Option<f64>,
    /// Custom labels, one per code, in the order first defined (a later definition of the
    /// same code replaces the earlier one, as in the C library).
    pub custom_labels: Vec<CustomLabel>,
}

impl Definitions {
    pub fn is_empty(&self) -> bool {
        self.time_resolution.is_none() && self.custom_labels.is_empty()
    }

    /// The custom label of `code`, if the file defines one.
    pub fn custom_label(&self, code: u8) -> Option<&CustomLabel> {
        self.custom_labels.iter().find(|l| l.code == code)
    }

    /// The symbol of `code`: the file's custom label, else the standard one, else the
    /// C library's fallback `[code]` (wfdb-python raises `TypeError` there).
    pub fn symbol(&self, code: u8) -> Cow<'_, str> {
        if let Some(l) = self.custom_label(code) {
            return Cow::Borrowed(&l.symbol);
        }
        match standard_symbol(code) {
            Some(s) => Cow::Borrowed(s),
            None => Cow::Owned(format!("[{code}]")),
        }
    }

    /// The code of `symbol`: custom labels first, then the standard table (codes 1–49).
    pub fn code_of(&self, symbol: &str) -> Option<u8> {
        self.custom_labels
            .iter()
            .find(|l| l.symbol == symbol)
            .map(|l| l.code)
            .or_else(|| standard_code(symbol))
    }

    /// The description of `code`: custom, else standard.
    pub fn description(&self, code: u8) -> Option<&str> {
        match self.custom_label(code) {
            Some(l) => Some(&l.description),
            None => standard_label(code).map(|l| l.description),
        }
    }
}

/// A whole annotation file.
#[derive(Debug, Clone, PartialEq)]
pub struct AnnotationFile {
    /// Every annotation in file order, definitions included.
    pub annotations: Vec<Annotation>,
    /// What the leading definition notes say.
    pub definitions: Definitions,
    /// How many leading annotations make up the definition block: the `NOTE`s at sample 0
    /// whose aux is a definition (`#...` lines and the lines of the label table), plus the
    /// code-0 annotation at sample 0 that writers put after them. 0 when there is none.
    pub definition_annotations: usize,
    /// Bytes after the end-of-file word, which readers ignore.
    pub trailing_bytes: usize,
}

impl AnnotationFile {
    /// The annotations after the definition block.
    pub fn content(&self) -> &[Annotation] {
        self.annotations
            .get(self.definition_annotations..)
            .unwrap_or(&[])
    }

    /// The symbol of `code` in this file (see [`Definitions::symbol`]).
    pub fn symbol(&self, code: u8) -> Cow<'_, str> {
        self.definitions.symbol(code)
    }
}

/// Reads the annotation file at `path`.
pub fn read(path: impl AsRef<Path>) -> Result<AnnotationFile, WfdbError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| WfdbError::io(&name, e))?;
    parse(&bytes, &name)
}

/// Reads annotator `annotator` of record `record` (a path without extension, as in WFDB
/// tools): the file `record.annotator`.
pub fn read_annotator(
    record: impl AsRef<Path>,
    annotator: &str,
) -> Result<AnnotationFile, WfdbError> {
    let mut path = record.as_ref().as_os_str().to_owned();
    path.push(".");
    path.push(annotator);
    read(Path::new(&path))
}

const WORD_DATA: u16 = 0x3FF;
const TIME_RESOLUTION: &[u8] = b"## time resolution: ";
const TABLE_START: &[u8] = b"## annotation type definitions";
const TABLE_END: &[u8] = b"## end of definitions";

/// Parses the bytes of an annotation file; `source` names it in errors.
pub fn parse(bytes: &[u8], source: &str) -> Result<AnnotationFile, WfdbError> {
    let fail = |at: usize, msg: String| {
        WfdbError::at_byte(source, at as u64, WfdbErrorKind::Annotation(msg))
    };
    // Every annotation takes at least one word; the cap keeps a huge file from reserving
    // far more than it turns out to need, while typical files never reallocate.
    let mut anns: Vec<Annotation> = Vec::with_capacity((bytes.len() / 2).min(1 << 16));
    // Byte offsets of the leading annotations at sample 0, the only ones that can be
    // definitions: kept so that a bad definition is reported where it is.
    let mut lead_offsets: Vec<usize> = Vec::new();
    let mut time: i64 = 0;
    let mut chan: u8 = 0;
    let mut num: i8 = 0;
    let mut p = 0usize;
    let end = loop {
        let word = match bytes.get(p..p + 2) {
            Some(&[lo, hi]) => u16::from_le_bytes([lo, hi]),
            _ if p >= bytes.len() => {
                return Err(fail(
                    p,
                    format!(
                        "the file ends without the end-of-file marker (a zero word) after {} \
                         annotations: it is empty or was cut",
                        anns.len()
                    ),
                ));
            }
            _ => {
                return Err(fail(
                    p,
                    format!(
                        "the file ends in the middle of a 16-bit word (its length, {}, is \
                         odd) before the end-of-file marker: it was cut",
                        bytes.len()
                    ),
                ));
            }
        };
        if word == 0 {
            break p;
        }
        let a = (word >> 10) as u8;
        let i = word & WORD_DATA;
        match a {
            codes::SKIP => {
                let interval = match bytes.get(p + 2..p + 6) {
                    // PDP-11 order: the high 16-bit word first, each word little-endian.
                    Some(&[b0, b1, b2, b3]) => i32::from_le_bytes([b2, b3, b0, b1]),
                    _ => {
                        return Err(fail(
                            p,
                            format!(
                                "the file ends inside a SKIP: its 32-bit interval needs 4 \
                                 bytes after the SKIP word, only {} remain",
                                bytes.len().saturating_sub(p + 2)
                            ),
                        ));
                    }
                };
                time = time
                    .checked_add(i64::from(interval))
                    .ok_or_else(|| fail(p, "the SKIPs take the time beyond 64 bits".to_string()))?;
                p += 6;
            }
            codes::NUM | codes::SUB | codes::CHN | codes::AUX => {
                let Some(last) = anns.last_mut() else {
                    return Err(fail(
                        p,
                        format!(
                            "a {} field comes before the first annotation (fields follow \
                             the annotation word they belong to)",
                            pseudo_name(a)
                        ),
                    ));
                };
                // NUM, SUB and CHN hold a (signed or unsigned) char: the low 8 bits.
                let byte = (i & 0xFF) as u8;
                match a {
                    codes::NUM => {
                        num = byte as i8;
                        last.num = num;
                    }
                    codes::SUB => last.subtype = byte as i8,
                    codes::CHN => {
                        chan = byte;
                        last.chan = chan;
                    }
                    _ => {
                        let len = usize::from(byte);
                        let padded = len + (len & 1);
                        let data_at = p + 2;
                        let (Some(data), true) = (
                            bytes.get(data_at..data_at + len),
                            bytes.len() >= data_at + padded,
                        ) else {
                            return Err(fail(
                                p,
                                format!(
                                    "the file ends inside an AUX field: it announces {len} \
                                     bytes ({padded} with the pad byte), only {} remain",
                                    bytes.len().saturating_sub(data_at)
                                ),
                            ));
                        };
                        last.aux = Some(data.to_vec());
                        p = data_at + padded;
                        continue;
                    }
                }
                p += 2;
            }
            _ => {
                time = time
                    .checked_add(i64::from(i))
                    .ok_or_else(|| fail(p, "the time goes beyond 64 bits".to_string()))?;
                if time == 0 && lead_offsets.len() == anns.len() {
                    lead_offsets.push(p);
                }
                anns.push(Annotation {
                    sample: time,
                    code: a,
                    subtype: 0,
                    chan,
                    num,
                    aux: None,
                });
                p += 2;
            }
        }
    };
    let (definitions, definition_annotations) = scan_definitions(&anns, &lead_offsets, source)?;
    Ok(AnnotationFile {
        annotations: anns,
        definitions,
        definition_annotations,
        trailing_bytes: bytes.len().saturating_sub(end + 2),
    })
}

fn pseudo_name(code: u8) -> &'static str {
    match code {
        codes::SKIP => "SKIP",
        codes::NUM => "NUM",
        codes::SUB => "SUB",
        codes::CHN => "CHN",
        codes::AUX => "AUX",
        _ => "label",
    }
}

/// UTF-8 if it is, else Latin-1 (one char per byte): never lossy.
fn text_of(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => Cow::Owned(bytes.iter().map(|&b| char::from(b)).collect()),
    }
}

fn is_definition_candidate(a: &Annotation) -> bool {
    // The C library reads definitions from the NOTEs at time 0 with subtype 0.
    a.sample == 0 && a.code == codes::NOTE && a.subtype == 0 && a.aux.is_some()
}

/// Reads the definition block at the start of `anns`; `offsets` are the byte offsets of
/// the leading annotations at sample 0.
fn scan_definitions(
    anns: &[Annotation],
    offsets: &[usize],
    source: &str,
) -> Result<(Definitions, usize), WfdbError> {
    let mut defs = Definitions::default();
    let mut in_table: Option<usize> = None;
    let mut n = 0;
    for (a, &at) in anns.iter().zip(offsets) {
        let Some(aux) = a.aux.as_deref().filter(|_| is_definition_candidate(a)) else {
            break;
        };
        let fail = |msg: String| {
            WfdbError::at_byte(
                source,
                at as u64,
                WfdbErrorKind::Annotation(format!(
                    "the definition note `{}` {msg}",
                    text_of(aux).escape_debug()
                )),
            )
        };
        if let Some(rest) = aux.strip_prefix(TIME_RESOLUTION) {
            if defs.time_resolution.is_some() {
                return Err(fail("gives the time resolution a second time".into()));
            }
            defs.time_resolution = Some(parse_time_resolution(rest).ok_or_else(|| {
                fail("does not give a positive number of ticks per second".into())
            })?);
        } else if aux == TABLE_START {
            if in_table.is_some() {
                return Err(fail("starts a label table inside another one".into()));
            }
            in_table = Some(at);
        } else if aux == TABLE_END {
            if in_table.take().is_none() {
                return Err(fail("ends a label table that was never started".into()));
            }
        } else if aux.first() == Some(&b'#') {
            // Other `#` notes are comments, as in the C library.
        } else if in_table.is_some() {
            let l = parse_label_line(aux).ok_or_else(|| {
                fail(format!(
                    "is not `CODE SYMBOL DESCRIPTION` with CODE from 0 to {} and a non-empty \
                     SYMBOL",
                    codes::MAX_STORABLE
                ))
            })?;
            match defs.custom_labels.iter_mut().find(|c| c.code == l.code) {
                Some(c) => *c = l,
                None => defs.custom_labels.push(l),
            }
        } else {
            // An ordinary note at sample 0: the definitions (if any) end before it.
            break;
        }
        n += 1;
    }
    if let Some(at) = in_table {
        return Err(WfdbError::at_byte(
            source,
            at as u64,
            WfdbErrorKind::Annotation(
                "the label table that starts here has no `## end of definitions` note".to_string(),
            ),
        ));
    }
    // Writers end the definitions with a code-0 annotation at sample 0.
    if n > 0
        && anns
            .get(n)
            .is_some_and(|a| a.sample == 0 && a.code == codes::NOTQRS)
    {
        n += 1;
    }
    Ok((defs, n))
}

fn parse_time_resolution(rest: &[u8]) -> Option<f64> {
    // The C library scans a number and ignores what follows; we take the first
    // whitespace-separated token and insist it is a number.
    let text = std::str::from_utf8(rest).ok()?;
    let f: f64 = text.split_ascii_whitespace().next()?.parse().ok()?;
    (f.is_finite() && f > 0.0).then_some(f)
}

fn is_sep(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// `CODE SYMBOL DESCRIPTION`: tokens split at spaces or tabs as the C library's `strtok`
/// does; the description is everything after the one separator that follows the symbol.
fn parse_label_line(line: &[u8]) -> Option<CustomLabel> {
    let skip_sep = |from: usize| {
        line.get(from..)
            .and_then(|r| r.iter().position(|&b| !is_sep(b)))
            .map_or(line.len(), |k| from + k)
    };
    let token_end = |from: usize| {
        line.get(from..)
            .and_then(|r| r.iter().position(|&b| is_sep(b)))
            .map_or(line.len(), |k| from + k)
    };
    let code_at = skip_sep(0);
    let code_end = token_end(code_at);
    let digits = line.get(code_at..code_end)?;
    if digits.is_empty() || digits.len() > 3 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let code = digits
        .iter()
        .fold(0u16, |v, &d| v * 10 + u16::from(d - b'0'));
    let code = u8::try_from(code)
        .ok()
        .filter(|&c| c <= codes::MAX_STORABLE)?;
    let sym_at = skip_sep(code_end);
    let sym_end = token_end(sym_at);
    let symbol = line.get(sym_at..sym_end).filter(|s| !s.is_empty())?;
    let description = line.get(sym_end + 1..).unwrap_or(&[]);
    Some(CustomLabel {
        code,
        symbol: text_of(symbol).into_owned(),
        description: text_of(description).into_owned(),
    })
}

/// The most `SKIP`s one gap between two annotations may need (each covers up to 2^31 - 1
/// samples): about 2.25e15 samples, 71 years at 1 MHz. A larger gap is refused rather than
/// written as megabytes of `SKIP`s.
pub const MAX_SKIPS_PER_GAP: u64 = 1 << 20;

/// The bytes of an annotation file holding `definitions` (if any) and then `annotations`
/// in the order given; `target` names the file in errors.
///
/// Definitions are written as the C library's `putann` writes them: `NOTE`s at sample 0
/// (`## time resolution: F`, then the label table between `## annotation type
/// definitions` and `## end of definitions`) followed by a code-0 annotation at sample 0.
/// Annotations read from a file already hold their definition notes: write those with an
/// empty `definitions` (asking for both is refused, it would store the table twice).
///
/// Each annotation is one word, preceded by `SKIP`s when its distance from the previous
/// one is negative or above 1023 (several when it does not fit in 32 bits), followed by
/// `SUB` when the subtype is not 0, `CHN`/`NUM` when they differ from the previous
/// annotation's (0 before the first), and `AUX` when there is aux, even empty.
/// A code-0 annotation is stored one sample after a `SKIP` to the sample before it, as
/// `putann` does, when its own word would otherwise be zero (the end-of-file marker).
pub fn to_bytes(
    annotations: &[Annotation],
    definitions: &Definitions,
    target: &str,
) -> Result<Vec<u8>, WfdbError> {
    let fail = |msg: String| WfdbError::in_file(target, WfdbErrorKind::Write(msg));
    let mut enc = Encoder {
        out: Vec::with_capacity(annotations.len() * 2 + 2),
        time: 0,
        chan: 0,
        num: 0,
    };
    if !definitions.is_empty() {
        if annotations.first().is_some_and(|a| {
            is_definition_candidate(a) && a.aux.as_deref().is_some_and(|x| x.starts_with(b"##"))
        }) {
            return Err(fail(
                "the annotations already begin with definition notes (`## ...` NOTEs at \
                 sample 0); write them with empty definitions, or drop those notes"
                    .to_string(),
            ));
        }
        for (k, a) in definition_notes(definitions)
            .map_err(fail)?
            .iter()
            .enumerate()
        {
            enc.put(a)
                .map_err(|m| fail(format!("definition note {k}: {m}")))?;
        }
    }
    for (k, a) in annotations.iter().enumerate() {
        enc.put(a)
            .map_err(|m| fail(format!("annotation {k} (sample {}): {m}", a.sample)))?;
    }
    enc.out.extend_from_slice(&[0, 0]);
    Ok(enc.out)
}

/// Writes `to_bytes(annotations, definitions)` to `path`.
pub fn write(
    path: impl AsRef<Path>,
    annotations: &[Annotation],
    definitions: &Definitions,
) -> Result<(), WfdbError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let bytes = to_bytes(annotations, definitions, &name)?;
    std::fs::write(path, bytes).map_err(|e| WfdbError::io(&name, e))
}

/// The annotations that store `defs`, in the C library's order.
fn definition_notes(defs: &Definitions) -> Result<Vec<Annotation>, String> {
    let note = |text: Vec<u8>| Annotation {
        aux: Some(text),
        ..Annotation::new(0, codes::NOTE)
    };
    let mut notes = Vec::new();
    if let Some(f) = defs.time_resolution {
        if !(f.is_finite() && f > 0.0) {
            return Err(format!(
                "the time resolution must be a positive number of ticks per second, not {f}"
            ));
        }
        // Rust prints the shortest decimal that reads back as the same f64, with no
        // exponent, which both the C library and wfdb-python parse.
        notes.push(note(format!("## time resolution: {f}").into_bytes()));
    }
    if !defs.custom_labels.is_empty() {
        notes.push(note(TABLE_START.to_vec()));
        for (k, l) in defs.custom_labels.iter().enumerate() {
            let bad = |why: &str| {
                format!(
                    "custom label {k} (code {}, symbol `{}`): {why}",
                    l.code, l.symbol
                )
            };
            if l.code > codes::MAX_STORABLE {
                return Err(bad(&format!(
                    "the code must be from 0 to {}",
                    codes::MAX_STORABLE
                )));
            }
            if l.symbol.is_empty() || l.symbol.bytes().any(|b| is_sep(b) || b == 0) {
                return Err(bad(
                    "the symbol must be non-empty, without spaces, tabs or NUL bytes",
                ));
            }
            if let Some(j) = defs.custom_labels[..k]
                .iter()
                .position(|o| o.code == l.code || o.symbol == l.symbol)
            {
                return Err(bad(&format!(
                    "custom label {j} has the same code or symbol"
                )));
            }
            let line = format!("{} {} {}", l.code, l.symbol, l.description).into_bytes();
            if line.len() > 255 {
                return Err(bad(&format!(
                    "its definition line is {} bytes long; at most 255 can be stored",
                    line.len()
                )));
            }
            notes.push(note(line));
        }
        notes.push(note(TABLE_END.to_vec()));
    }
    notes.push(Annotation::new(0, codes::NOTQRS));
    Ok(notes)
}

struct Encoder {
    out: Vec<u8>,
    time: i64,
    chan: u8,
    num: i8,
}

impl Encoder {
    fn word(&mut self, code: u8, data: u16) {
        let w = (u16::from(code) << 10) | (data & WORD_DATA);
        self.out.extend_from_slice(&w.to_le_bytes());
    }

    fn skips(&mut self, mut gap: i128) -> Result<(), String> {
        let step = i128::from(i32::MAX);
        let count = (gap.unsigned_abs()).div_ceil(step.unsigned_abs());
        if count > u128::from(MAX_SKIPS_PER_GAP) {
            return Err(format!(
                "it is {gap} samples from the previous annotation, which would take {count} \
                 SKIPs; at most {MAX_SKIPS_PER_GAP} are written"
            ));
        }
        while gap != 0 {
            let d = gap.clamp(-step, step);
            gap -= d;
            // `d` is within ±(2^31 - 1) by the clamp.
            let d = d as i32 as u32;
            self.word(codes::SKIP, 0);
            let [b0, b1, b2, b3] = d.to_le_bytes();
            self.out.extend_from_slice(&[b2, b3, b0, b1]);
        }
        Ok(())
    }

    fn put(&mut self, a: &Annotation) -> Result<(), String> {
        if a.code > codes::MAX_STORABLE {
            return Err(format!(
                "label code {} cannot be stored: codes {}-63 mark SKIP, NUM, SUB, CHN and AUX",
                a.code,
                codes::SKIP
            ));
        }
        let aux_len = match &a.aux {
            Some(x) => Some(u8::try_from(x.len()).map_err(|_| {
                format!(
                    "its aux is {} bytes long; at most 255 can be stored",
                    x.len()
                )
            })?),
            None => None,
        };
        let gap = i128::from(a.sample) - i128::from(self.time);
        let max_direct = i128::from(WORD_DATA);
        if a.code == codes::NOTQRS {
            // The word of a code-0 annotation must not be 0 (that is the end marker).
            if (1..=max_direct).contains(&gap) {
                self.word(a.code, gap as u16);
            } else {
                self.skips(gap - 1)?;
                self.word(a.code, 1);
            }
        } else if (0..=max_direct).contains(&gap) {
            self.word(a.code, gap as u16);
        } else {
            self.skips(gap)?;
            self.word(a.code, 0);
        }
        self.time = a.sample;
        if a.subtype != 0 {
            // As `putann`: the signed char widened, then cut to the 10 data bits.
            self.word(codes::SUB, i16::from(a.subtype) as u16);
        }
        if a.chan != self.chan {
            self.word(codes::CHN, u16::from(a.chan));
            self.chan = a.chan;
        }
        if a.num != self.num {
            self.word(codes::NUM, i16::from(a.num) as u16);
            self.num = a.num;
        }
        if let (Some(aux), Some(len)) = (&a.aux, aux_len) {
            self.word(codes::AUX, u16::from(len));
            self.out.extend_from_slice(aux);
            if len & 1 == 1 {
                self.out.push(0);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// One word: code `a`, value `i`.
    fn w(a: u8, i: u16) -> Vec<u8> {
        ((u16::from(a) << 10) | i).to_le_bytes().to_vec()
    }

    /// A SKIP of `n`, laid out by hand: high word first, each word little-endian.
    fn skip(n: i32) -> Vec<u8> {
        let u = n as u32;
        let hi = (u >> 16) as u16;
        let lo = (u & 0xFFFF) as u16;
        [
            w(codes::SKIP, 0),
            hi.to_le_bytes().to_vec(),
            lo.to_le_bytes().to_vec(),
        ]
        .concat()
    }

    fn aux(text: &[u8]) -> Vec<u8> {
        let mut v = w(codes::AUX, text.len() as u16);
        v.extend_from_slice(text);
        if text.len() % 2 == 1 {
            v.push(0);
        }
        v
    }

    /// The parts, then the end-of-file word.
    fn file(parts: &[Vec<u8>]) -> Vec<u8> {
        let mut v = parts.concat();
        v.extend_from_slice(&[0, 0]);
        v
    }

    fn ok(bytes: &[u8]) -> AnnotationFile {
        match parse(bytes, "t.atr") {
            Ok(f) => f,
            Err(e) => panic!("{e}"),
        }
    }

    fn err(bytes: &[u8]) -> (u64, String) {
        match parse(bytes, "t.atr") {
            Ok(f) => panic!("expected an error, got {f:?}"),
            Err(e) => {
                let text = e.to_string();
                assert!(text.starts_with("t.atr: "), "{text}");
                match e.location {
                    super::super::Location::Byte(b) => (b, text),
                    other => panic!("error without a byte offset: {other:?}: {text}"),
                }
            }
        }
    }

    fn write_ok(anns: &[Annotation], defs: &Definitions) -> Vec<u8> {
        match to_bytes(anns, defs, "out.atr") {
            Ok(b) => b,
            Err(e) => panic!("{e}"),
        }
    }

    fn write_err(anns: &[Annotation], defs: &Definitions) -> String {
        match to_bytes(anns, defs, "out.atr") {
            Ok(b) => panic!("expected an error, got {b:?}"),
            Err(e) => {
                assert!(matches!(e.kind, WfdbErrorKind::Write(_)));
                e.to_string()
            }
        }
    }

    fn ann(sample: i64, code: u8) -> Annotation {
        Annotation::new(sample, code)
    }

    #[test]
    fn standard_table_matches_ecgcodes() {
        let expect: &[(u8, &str)] = &[
            (0, " "),
            (1, "N"),
            (2, "L"),
            (3, "R"),
            (4, "a"),
            (5, "V"),
            (6, "F"),
            (7, "J"),
            (8, "A"),
            (9, "S"),
            (10, "E"),
            (11, "j"),
            (12, "/"),
            (13, "Q"),
            (14, "~"),
            (16, "|"),
            (18, "s"),
            (19, "T"),
            (20, "*"),
            (21, "D"),
            (22, "\""),
            (23, "="),
            (24, "p"),
            (25, "B"),
            (26, "^"),
            (27, "t"),
            (28, "+"),
            (29, "u"),
            (30, "?"),
            (31, "!"),
            (32, "["),
            (33, "]"),
            (34, "e"),
            (35, "n"),
            (36, "@"),
            (37, "x"),
            (38, "f"),
            (39, "("),
            (40, ")"),
            (41, "r"),
        ];
        for code in 0..=63u8 {
            let want = expect.iter().find(|e| e.0 == code).map(|e| e.1);
            assert_eq!(standard_symbol(code), want, "code {code}");
        }
        assert_eq!(standard_code("N"), Some(codes::NORMAL));
        assert_eq!(standard_code("+"), Some(codes::RHYTHM));
        assert_eq!(standard_code(" "), None);
        assert_eq!(standard_code("NN"), None);
        assert_eq!(standard_label(codes::PVC).map(|l| l.name), Some("PVC"));
    }

    #[test]
    fn end_marker_only_is_an_empty_file() {
        let f = ok(&[0, 0]);
        assert!(f.annotations.is_empty());
        assert_eq!(f.definitions, Definitions::default());
        assert_eq!((f.definition_annotations, f.trailing_bytes), (0, 0));
        assert_eq!(write_ok(&[], &Definitions::default()), vec![0, 0]);
    }

    #[test]
    fn words_give_code_and_time_difference() {
        let f = ok(&file(&[
            w(codes::NORMAL, 5),
            w(codes::PVC, 1023),
            w(codes::RHYTHM, 0),
            w(codes::MAX_STORABLE, 1),
        ]));
        let got: Vec<(i64, u8)> = f.annotations.iter().map(|a| (a.sample, a.code)).collect();
        assert_eq!(got, [(5, 1), (1028, 5), (1028, 28), (1029, 58)]);
        assert_eq!(f.symbol(58), "[58]");
    }

    #[test]
    fn skip_bytes_are_high_word_first() {
        // 0x00012345: high word 0x0001, then low word 0x2345, each little-endian.
        let bytes = file(&[
            vec![0x00, 0xEC, 0x01, 0x00, 0x45, 0x23],
            w(codes::NORMAL, 7),
        ]);
        assert_eq!(ok(&bytes).annotations, [ann(0x12345 + 7, 1)]);
        // Our writer puts the whole gap in the SKIP and 0 in the word, as `putann` does.
        let written = write_ok(&[ann(0x12345, 1)], &Definitions::default());
        assert_eq!(
            written,
            file(&[vec![0x00, 0xEC, 0x01, 0x00, 0x45, 0x23], w(1, 0)])
        );
        assert_eq!(skip(0x12345)[2..], [0x01, 0x00, 0x45, 0x23]);
    }

    #[test]
    fn skip_backward() {
        let bytes = file(&[
            skip(2000),
            w(1, 0),
            skip(-1500),
            w(5, 0),
            skip(-600),
            w(1, 0),
        ]);
        let f = ok(&bytes);
        assert_eq!(f.annotations, [ann(2000, 1), ann(500, 5), ann(-100, 1)]);
        assert_eq!(write_ok(&f.annotations, &Definitions::default()), bytes);
        assert_eq!(skip(-1)[2..], [0xFF; 4]);
    }

    #[test]
    fn times_beyond_2_to_31() {
        let max = i32::MAX;
        let bytes = file(&[skip(max), skip(max), w(1, 3), skip(max), w(5, 1023)]);
        let f = ok(&bytes);
        let t1 = 2 * i64::from(max) + 3;
        assert_eq!(
            f.annotations,
            [ann(t1, 1), ann(t1 + i64::from(max) + 1023, 5)]
        );
        // Writing a gap above 2^31 - 1 takes several SKIPs.
        let anns = [ann(1 << 32, 1), ann((1 << 32) + 5, 1), ann(-(1 << 33), 2)];
        let written = write_ok(&anns, &Definitions::default());
        let expect = file(&[
            skip(max),
            skip(max),
            skip(2),
            w(1, 0),
            w(1, 5),
            skip(-max),
            skip(-max),
            skip(-max),
            skip(-max),
            skip(-max),
            skip(-max),
            // -(2^33 + 2^32 + 5) = 6 * -(2^31 - 1) - 11
            skip(-11),
            w(2, 0),
        ]);
        assert_eq!(ok(&written).annotations, anns);
        assert_eq!(written, expect);
    }

    #[test]
    fn aux_even_odd_and_empty() {
        let bytes = file(&[
            w(codes::RHYTHM, 0),
            aux(b"(N"),
            w(codes::RHYTHM, 10),
            aux(b"(AFIB"),
            w(codes::NOTE, 1),
            w(codes::AUX, 0),
            w(codes::NORMAL, 1),
        ]);
        // The odd aux is followed by exactly one pad byte.
        assert_eq!(&bytes[8..16], &[5, 0xFC, b'(', b'A', b'F', b'I', b'B', 0]);
        let f = ok(&bytes);
        let auxes: Vec<Option<&[u8]>> = f.annotations.iter().map(|a| a.aux.as_deref()).collect();
        assert_eq!(auxes, [Some(&b"(N"[..]), Some(b"(AFIB"), Some(b""), None]);
        assert_eq!(write_ok(&f.annotations, &Definitions::default()), bytes);
    }

    #[test]
    fn aux_length_ignores_the_two_high_bits() {
        // The C library and wfdb-python take the length from the low 8 bits only.
        let bytes = file(&[w(1, 0), w(codes::AUX, 0x300 | 2), b"ab".to_vec()]);
        assert_eq!(ok(&bytes).annotations[0].aux.as_deref(), Some(&b"ab"[..]));
    }

    #[test]
    fn aux_str_is_lossless() {
        let mut a = ann(0, 1);
        assert_eq!(a.aux_str(), None);
        a.aux = Some("(AFIB é".as_bytes().to_vec());
        assert_eq!(a.aux_str().as_deref(), Some("(AFIB é"));
        a.aux = Some(vec![b'x', 0xE9, 0xFF]);
        assert_eq!(a.aux_str().as_deref(), Some("x\u{e9}\u{ff}"));
    }

    #[test]
    fn same_sample_annotations() {
        let anns = [ann(7, 1), ann(7, 28), ann(7, 22), ann(8, 1)];
        let bytes = write_ok(&anns, &Definitions::default());
        assert_eq!(bytes, file(&[w(1, 7), w(28, 0), w(22, 0), w(1, 1)]));
        assert_eq!(ok(&bytes).annotations, anns);
    }

    #[test]
    fn chan_and_num_carry_over_subtype_does_not() {
        let bytes = file(&[
            w(1, 10),
            w(codes::CHN, 3),
            w(codes::NUM, 5),
            w(codes::SUB, 0x3FF), // -1 as `putann` writes it
            w(1, 10),
            w(1, 10),
            w(codes::NUM, 0xFE), // -2 as wfdb-python writes it
            w(codes::SUB, 2),
            w(1, 10),
            w(codes::CHN, 0),
        ]);
        let f = ok(&bytes);
        let got: Vec<(i8, u8, i8)> = f
            .annotations
            .iter()
            .map(|a| (a.subtype, a.chan, a.num))
            .collect();
        assert_eq!(got, [(-1, 3, 5), (0, 3, 5), (2, 3, -2), (0, 0, -2)]);
        // NUM and CHN are written only when they change, SUB when not 0; the C order.
        let expect = file(&[
            w(1, 10),
            w(codes::SUB, 0x3FF),
            w(codes::CHN, 3),
            w(codes::NUM, 5),
            w(1, 10),
            w(1, 10),
            w(codes::SUB, 2),
            w(codes::NUM, 0x3FE),
            w(1, 10),
            w(codes::CHN, 0),
        ]);
        assert_eq!(write_ok(&f.annotations, &Definitions::default()), expect);
        assert_eq!(ok(&expect).annotations, f.annotations);
    }

    #[test]
    fn fields_after_a_skip_belong_to_the_annotation_before_it() {
        // `getann` keeps reading pseudo-annotations, SKIPs included, into the current one.
        let bytes = file(&[w(1, 1), skip(5000), w(codes::CHN, 2), aux(b"x"), w(5, 0)]);
        let f = ok(&bytes);
        assert_eq!(f.annotations[0].chan, 2);
        assert_eq!(f.annotations[0].aux.as_deref(), Some(&b"x"[..]));
        assert_eq!((f.annotations[1].sample, f.annotations[1].chan), (5001, 2));
    }

    #[test]
    fn repeated_fields_replace_earlier_ones() {
        let bytes = file(&[
            w(1, 1),
            aux(b"a"),
            aux(b"bc"),
            w(codes::SUB, 1),
            w(codes::SUB, 2),
        ]);
        let a = &ok(&bytes).annotations[0];
        assert_eq!((a.aux.as_deref(), a.subtype), (Some(&b"bc"[..]), 2));
    }

    #[test]
    fn code_zero_annotations() {
        // A=0 with I != 0 is an annotation, not the end marker.
        let f = ok(&file(&[w(0, 5), w(1, 0), skip(-1), w(0, 1)]));
        assert_eq!(f.annotations, [ann(5, 0), ann(5, 1), ann(5, 0)]);
        assert_eq!(f.symbol(0), " ");
        // Writing one at the previous annotation's sample (or at 0) cannot use I = 0.
        let anns = [ann(0, 0), ann(5, 0), ann(5, 0), ann(3000, 0)];
        let bytes = write_ok(&anns, &Definitions::default());
        let expect = file(&[
            skip(-1),
            w(0, 1),
            w(0, 5),
            skip(-1),
            w(0, 1),
            skip(2994),
            w(0, 1),
        ]);
        assert_eq!(bytes, expect);
        assert_eq!(ok(&bytes).annotations, anns);
    }

    #[test]
    fn bytes_after_the_end_marker_are_ignored_and_counted() {
        let mut bytes = file(&[w(1, 4)]);
        bytes.extend_from_slice(&[0x05, 0x04, 0xAA]);
        let f = ok(&bytes);
        assert_eq!(f.annotations, [ann(4, 1)]);
        assert_eq!(f.trailing_bytes, 3);
    }

    #[test]
    fn cut_files_are_errors_at_the_right_byte() {
        let (at, msg) = err(&[]);
        assert_eq!(at, 0);
        assert!(msg.contains("without the end-of-file marker"), "{msg}");

        let (at, msg) = err(&[w(1, 4), w(1, 4)].concat());
        assert_eq!(at, 4);
        assert!(msg.contains("after 2 annotations"), "{msg}");

        let (at, msg) = err(&[w(1, 4), vec![0]].concat());
        assert_eq!(at, 2);
        assert!(msg.contains("odd"), "{msg}");

        let (at, msg) = err(&[w(1, 4), skip(9)[..4].to_vec()].concat());
        assert_eq!(at, 2);
        assert!(
            msg.contains("inside a SKIP") && msg.contains("only 2 remain"),
            "{msg}"
        );

        let (at, msg) = err(&[w(1, 4), w(codes::AUX, 4), b"ab".to_vec()].concat());
        assert_eq!(at, 2);
        assert!(
            msg.contains("inside an AUX") && msg.contains("4 bytes"),
            "{msg}"
        );

        // The pad byte of an odd aux is part of the file.
        let (at, msg) = err(&[w(1, 4), w(codes::AUX, 3), b"abc".to_vec()].concat());
        assert_eq!(at, 2);
        assert!(msg.contains("4 with the pad byte"), "{msg}");
    }

    #[test]
    fn fields_before_the_first_annotation_are_errors() {
        for (code, name) in [
            (codes::NUM, "NUM"),
            (codes::SUB, "SUB"),
            (codes::CHN, "CHN"),
            (codes::AUX, "AUX"),
        ] {
            let (at, msg) = err(&file(&[skip(10), w(code, 1), w(1, 0)]));
            assert_eq!(at, 6);
            assert!(
                msg.contains(name) && msg.contains("before the first annotation"),
                "{msg}"
            );
        }
    }

    /// The bytes wfdb-python's `wr_ann_file` writes for fs=250 and one custom label
    /// (42, "X", "Extra beat"): the same layout as the C library's `put_ann_table`.
    fn definitions_as_wfdb_python_writes_them() -> Vec<u8> {
        [
            w(codes::NOTE, 0),
            aux(b"## time resolution: 250"),
            w(codes::NOTE, 0),
            aux(b"## annotation type definitions"),
            w(codes::NOTE, 0),
            aux(b"42 X Extra beat"),
            w(codes::NOTE, 0),
            aux(b"## end of definitions"),
            vec![0, 236, 255, 255, 255, 255, 1, 0],
        ]
        .concat()
    }

    #[test]
    fn definitions_are_read_and_kept() {
        let bytes = file(&[
            definitions_as_wfdb_python_writes_them(),
            w(42, 10),
            w(codes::NORMAL, 5),
            w(43, 5),
        ]);
        let f = ok(&bytes);
        assert_eq!(f.definitions.time_resolution, Some(250.0));
        assert_eq!(
            f.definitions.custom_labels,
            [CustomLabel {
                code: 42,
                symbol: "X".into(),
                description: "Extra beat".into()
            }]
        );
        // Every annotation is returned, the 4 notes and the code-0 one included.
        assert_eq!(f.annotations.len(), 8);
        assert_eq!(f.definition_annotations, 5);
        assert_eq!(f.annotations[4], ann(0, 0));
        assert_eq!(f.content(), [ann(10, 42), ann(15, 1), ann(20, 43)]);
        assert_eq!(f.symbol(42), "X");
        assert_eq!(f.symbol(43), "[43]");
        assert_eq!(f.symbol(1), "N");
        assert_eq!(f.definitions.code_of("X"), Some(42));
        assert_eq!(f.definitions.code_of("N"), Some(1));
        assert_eq!(f.definitions.description(42), Some("Extra beat"));
        assert_eq!(f.definitions.description(1), Some("Normal beat"));
        // The writer lays the definitions out byte for byte the same way.
        let defs = f.definitions.clone();
        assert_eq!(write_ok(f.content(), &defs), bytes);
        // And the annotations as read write back as they were.
        assert_eq!(write_ok(&f.annotations, &Definitions::default()), bytes);
    }

    #[test]
    fn custom_labels_override_and_may_be_long() {
        let bytes = file(&[
            w(codes::NOTE, 0),
            aux(b"## annotation type definitions"),
            w(codes::NOTE, 0),
            aux(b"1 Nn  normal, two spaces"),
            w(codes::NOTE, 0),
            aux(b"50\tAFL-x"),
            w(codes::NOTE, 0),
            aux(b"# a comment"),
            w(codes::NOTE, 0),
            aux(b"1 NB beat"),
            w(codes::NOTE, 0),
            aux(b"## end of definitions"),
            w(codes::NORMAL, 3),
            w(50, 0),
        ]);
        let f = ok(&bytes);
        assert_eq!(f.definition_annotations, 6);
        assert_eq!(f.definitions.time_resolution, None);
        assert_eq!(
            f.definitions.custom_labels,
            [
                CustomLabel {
                    code: 1,
                    symbol: "NB".into(),
                    description: "beat".into()
                },
                CustomLabel {
                    code: 50,
                    symbol: "AFL-x".into(),
                    description: String::new()
                },
            ]
        );
        assert_eq!(f.symbol(1), "NB");
        assert_eq!(f.symbol(50), "AFL-x");
        // The description starts right after the one separator after the symbol.
        let line = parse_label_line(b"7 ab  two").map(|l| l.description);
        assert_eq!(line.as_deref(), Some(" two"));
    }

    #[test]
    fn ordinary_notes_at_sample_zero_are_content() {
        let bytes = file(&[
            w(codes::NOTE, 0),
            aux(b"hello"),
            w(codes::NOTE, 0),
            aux(b"## time resolution: 360"),
        ]);
        let f = ok(&bytes);
        assert_eq!(
            (f.definition_annotations, f.definitions.time_resolution),
            (0, None)
        );
        assert_eq!(f.content().len(), 2);
        // A NOTE with a subtype is not a definition (the C library's rule).
        let bytes = file(&[
            w(codes::NOTE, 0),
            w(codes::SUB, 1),
            aux(b"## time resolution: 360"),
        ]);
        assert_eq!(ok(&bytes).definitions.time_resolution, None);
    }

    #[test]
    fn time_resolution_forms() {
        for (text, want) in [
            ("360", 360.0),
            ("1000.5", 1000.5),
            ("250 Hz", 250.0),
            ("1e3", 1000.0),
        ] {
            let bytes = file(&[
                w(codes::NOTE, 0),
                aux(format!("## time resolution: {text}").as_bytes()),
            ]);
            assert_eq!(ok(&bytes).definitions.time_resolution, Some(want), "{text}");
        }
        for text in ["", "abc", "0", "-5", "inf", "NaN"] {
            let bytes = file(&[
                w(codes::NOTE, 0),
                aux(format!("## time resolution: {text}").as_bytes()),
            ]);
            let (at, msg) = err(&bytes);
            assert_eq!(at, 0);
            assert!(msg.contains("positive number of ticks"), "{msg}");
        }
    }

    #[test]
    fn malformed_definitions_are_errors() {
        let note = |t: &[u8]| [w(codes::NOTE, 0), aux(t)].concat();
        let start = note(TABLE_START);
        let cases: &[(Vec<u8>, u64, &str)] = &[
            (
                [start.clone(), note(b"1 N normal")].concat(),
                0,
                "no `## end of definitions`",
            ),
            (note(TABLE_END), 0, "never started"),
            (
                [start.clone(), start.clone()].concat(),
                34,
                "inside another",
            ),
            (
                [start.clone(), note(b"59 X bad"), note(TABLE_END)].concat(),
                34,
                "CODE SYMBOL",
            ),
            (
                [start.clone(), note(b"N normal"), note(TABLE_END)].concat(),
                34,
                "CODE SYMBOL",
            ),
            (
                [start.clone(), note(b"12"), note(TABLE_END)].concat(),
                34,
                "CODE SYMBOL",
            ),
            (
                [
                    note(b"## time resolution: 1"),
                    note(b"## time resolution: 2"),
                ]
                .concat(),
                26,
                "second time",
            ),
        ];
        for (bytes, at, want) in cases {
            let (got_at, msg) = err(&file(std::slice::from_ref(bytes)));
            assert_eq!(got_at, *at, "{msg}");
            assert!(msg.contains(want), "{msg}");
        }
    }

    #[test]
    fn writer_refuses_what_cannot_be_stored() {
        let none = Definitions::default();
        let msg = write_err(&[ann(0, 1), ann(5, 59)], &none);
        assert!(
            msg.contains("out.atr")
                && msg.contains("annotation 1 (sample 5)")
                && msg.contains("label code 59"),
            "{msg}"
        );
        let mut a = ann(0, 1);
        a.aux = Some(vec![b'x'; 256]);
        let msg = write_err(&[a], &none);
        assert!(msg.contains("256 bytes") && msg.contains("255"), "{msg}");
        let msg = write_err(&[ann(i64::MIN, 1), ann(i64::MAX, 1)], &none);
        assert!(msg.contains("SKIPs"), "{msg}");

        let label = |code, symbol: &str| CustomLabel {
            code,
            symbol: symbol.into(),
            description: "d".into(),
        };
        let defs = |labels: Vec<CustomLabel>| Definitions {
            time_resolution: None,
            custom_labels: labels,
        };
        for (d, want) in [
            (defs(vec![label(59, "X")]), "code must be"),
            (defs(vec![label(42, "A B")]), "without spaces"),
            (defs(vec![label(42, "")]), "non-empty"),
            (
                defs(vec![label(42, "X"), label(42, "Y")]),
                "same code or symbol",
            ),
            (
                defs(vec![label(42, "X"), label(43, "X")]),
                "same code or symbol",
            ),
            (
                defs(vec![CustomLabel {
                    code: 42,
                    symbol: "X".into(),
                    description: "d".repeat(251),
                }]),
                "255",
            ),
            (
                Definitions {
                    time_resolution: Some(0.0),
                    custom_labels: vec![],
                },
                "positive",
            ),
            (
                Definitions {
                    time_resolution: Some(f64::NAN),
                    custom_labels: vec![],
                },
                "positive",
            ),
        ] {
            let msg = write_err(&[], &d);
            assert!(msg.contains(want), "{msg}");
        }
        // Definitions given twice: in the annotations and as definitions.
        let read = ok(&file(&[definitions_as_wfdb_python_writes_them()]));
        let msg = write_err(&read.annotations, &read.definitions);
        assert!(msg.contains("already begin with definition notes"), "{msg}");
    }

    #[test]
    fn write_and_read_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.atr");
        let defs = Definitions {
            time_resolution: Some(1000.0),
            custom_labels: vec![],
        };
        let anns = [ann(3, 1), ann(2000, 5)];
        write(&path, &anns, &defs).unwrap();
        let f = read_annotator(dir.path().join("r"), "atr").unwrap();
        assert_eq!(f.content(), anns);
        assert_eq!(f.definitions, defs);
        let e = read(dir.path().join("missing.atr")).unwrap_err();
        assert!(matches!(e.kind, WfdbErrorKind::Io(_)));
        let io = std::fs::read(dir.path().join("missing.atr")).unwrap_err();
        crate::test_util::assert_io_error_shown_once(&e, &io);
        assert!(e.to_string().contains("missing.atr"));
    }

    /// Gaps of every kind: direct, zero, SKIP forward and backward, beyond 32 bits.
    fn gap() -> impl Strategy<Value = i64> {
        prop_oneof![
            6 => 0i64..=1023,
            2 => Just(0i64),
            1 => 1024i64..200_000,
            1 => -200_000i64..0,
            1 => (1i64 << 31) - 3..(1i64 << 34),
            1 => -(1i64 << 34)..-(1i64 << 31) + 3,
        ]
    }

    fn annotations() -> impl Strategy<Value = Vec<Annotation>> {
        let aux = prop_oneof![
            3 => Just(None),
            2 => prop::collection::vec(any::<u8>(), 0..12).prop_map(Some),
            1 => prop::collection::vec(any::<u8>(), 0..=255).prop_map(Some),
        ];
        // `None` keeps chan/num as they were, so carry-over is exercised.
        let one = (
            gap(),
            0u8..=codes::MAX_STORABLE,
            prop_oneof![2 => Just(0i8), 1 => any::<i8>()],
            prop::option::of(any::<u8>()),
            prop::option::of(any::<i8>()),
            aux,
        );
        prop::collection::vec(one, 0..40).prop_map(|v| {
            let (mut t, mut chan, mut num) = (0i64, 0u8, 0i8);
            v.into_iter()
                .map(|(g, code, subtype, c, n, aux)| {
                    t += g;
                    chan = c.unwrap_or(chan);
                    num = n.unwrap_or(num);
                    Annotation {
                        sample: t,
                        code,
                        subtype,
                        chan,
                        num,
                        aux,
                    }
                })
                .collect()
        })
    }

    fn definitions() -> impl Strategy<Value = Definitions> {
        let symbol = prop::sample::select(vec!["X", "AFL", "é", "ΔV", "(", "##", "+x"]);
        let label = (symbol, "[ -~éü\t]{0,40}");
        (
            prop::option::of(prop_oneof![
                1.0f64..1e6,
                (1u32..100_000).prop_map(f64::from)
            ]),
            prop::collection::btree_map(0u8..=codes::MAX_STORABLE, label, 0..6),
        )
            .prop_map(|(time_resolution, labels)| Definitions {
                time_resolution,
                custom_labels: labels
                    .into_iter()
                    .map(|(code, (sym, description))| CustomLabel {
                        code,
                        // The code in the symbol keeps symbols unique.
                        symbol: format!("{sym}{code}"),
                        description,
                    })
                    .collect(),
            })
    }

    fn check_rewrite(bytes: &[u8]) -> Result<(), TestCaseError> {
        if let Ok(f) = parse(bytes, "fuzz") {
            // Whatever parses can be written back and reads the same.
            let again = to_bytes(&f.annotations, &Definitions::default(), "again")
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let g = parse(&again, "again").map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(&g.annotations, &f.annotations);
            prop_assert_eq!(&g.definitions, &f.definitions);
            prop_assert_eq!(g.definition_annotations, f.definition_annotations);
        }
        Ok(())
    }

    /// Mostly well-formed pieces of a file (so that most inputs parse far), with some junk.
    fn token() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            6 => (0u8..=codes::MAX_STORABLE, 0u16..1024).prop_map(|(a, i)| w(a, i)),
            1 => Just(w(codes::NOTE, 0)),
            2 => any::<i32>().prop_map(skip),
            2 => (codes::NUM..=codes::CHN, 0u16..1024).prop_map(|(a, i)| w(a, i)),
            2 => prop::collection::vec(any::<u8>(), 0..8).prop_map(|t| aux(&t)),
            1 => prop::sample::select(vec![
                &b"## time resolution: 360"[..], TABLE_START, TABLE_END, b"42 X extra", b"# c",
            ]).prop_map(aux),
            1 => any::<u16>().prop_map(|v| v.to_le_bytes().to_vec()),
        ]
    }

    proptest! {
        #[test]
        fn write_then_read_gives_the_same_annotations(anns in annotations()) {
            let bytes = write_ok(&anns, &Definitions::default());
            prop_assert_eq!(ok(&bytes).annotations, anns);
        }

        #[test]
        fn definitions_round_trip(anns in annotations(), defs in definitions()) {
            prop_assume!(!anns.first().is_some_and(|a| a.sample == 0 && a.code == codes::NOTE));
            let bytes = write_ok(&anns, &defs);
            let f = ok(&bytes);
            prop_assert_eq!(f.content(), &anns[..]);
            prop_assert_eq!(&f.definitions, &defs);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
            check_rewrite(&bytes)?;
        }

        #[test]
        fn arbitrary_words_never_panic(
            tokens in prop::collection::vec(token(), 0..120),
            tail in prop::collection::vec(any::<u8>(), 0..3),
        ) {
            let mut bytes = tokens.concat();
            bytes.extend_from_slice(&[0, 0]);
            bytes.extend_from_slice(&tail);
            check_rewrite(&bytes)?;
            // The same words cut anywhere must fail cleanly or parse a prefix.
            for cut in [1, 2, 3, 5] {
                let n = bytes.len().saturating_sub(cut);
                check_rewrite(&bytes[..n])?;
            }
        }
    }
}
