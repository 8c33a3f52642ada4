//! WFDB header files (`.hea`), as described by header(5) of the WFDB Software Package.
//!
//! The parser keeps track of which optional fields were present, so that a header can be
//! written back without inventing values, while the `effective_*` accessors apply the
//! defaults the WFDB library uses when a field is absent.

use std::fmt;

use serde::{Serialize, Serializer};

use super::format::Format;
use super::{WfdbError, WfdbErrorKind};

/// Sampling frequency the WFDB library assumes when the record line gives none.
pub const DEFAULT_FS: f64 = 250.0;
/// ADC gain (units per physical unit) assumed when a gain is missing or zero.
pub const DEFAULT_GAIN: f64 = 200.0;
/// Physical units assumed when the gain field names none.
pub const DEFAULT_UNITS: &str = "mV";

/// A parsed header: one record line, then either signal lines (single-segment record)
/// or segment lines (multi-segment record), plus every comment line in file order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Header {
    pub record: RecordLine,
    /// Signal lines of a single-segment record. Empty for a multi-segment record.
    pub signals: Vec<SignalSpec>,
    /// Segment lines of a multi-segment record (`None` for a single-segment record).
    pub segments: Option<Vec<SegmentSpec>>,
    /// Comment lines: the text after the `#`, with trailing whitespace removed.
    pub comments: Vec<String>,
}

/// The first non-comment line of a header.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecordLine {
    pub name: String,
    /// Number of segments, present only in multi-segment headers (`name/N`).
    pub n_segments: Option<usize>,
    pub n_signals: usize,
    /// Sampling frequency in frames per second, as written (`None` if absent).
    pub fs: Option<f64>,
    pub counter_freq: Option<f64>,
    pub base_counter: Option<f64>,
    /// Number of frames, as written (`None` if absent). Absent or 0, the length is
    /// unspecified (header(5)): see [`RecordLine::stated_sig_len`].
    pub sig_len: Option<u64>,
    pub base_time: Option<BaseTime>,
    pub base_date: Option<BaseDate>,
    /// The date was written before the time (`YYYY-MM-DD HH:MM:SS`, as in the CinC 2017
    /// headers). The WFDB order is time, then date; we read both and keep what we found.
    pub date_before_time: bool,
}

impl RecordLine {
    /// A single-segment record line with the sampling frequency and nothing else (the
    /// writer fills in the number of signals and of frames).
    pub fn new(name: impl Into<String>, fs: f64) -> RecordLine {
        RecordLine {
            name: name.into(),
            n_segments: None,
            n_signals: 0,
            fs: Some(fs),
            counter_freq: None,
            base_counter: None,
            sig_len: None,
            base_time: None,
            base_date: None,
            date_before_time: false,
        }
    }

    /// The number of frames the record line specifies: `None` when the field is absent
    /// or 0, which header(5) both reads as "unspecified" (the length then comes from the
    /// signal files, or from the segments of a multi-segment record, as the WFDB library
    /// takes it).
    pub fn stated_sig_len(&self) -> Option<u64> {
        self.sig_len.filter(|&n| n != 0)
    }

    /// Frames per second, with the WFDB default of 250 when absent.
    pub fn effective_fs(&self) -> f64 {
        self.fs.unwrap_or(DEFAULT_FS)
    }
}

/// Time of day of the first sample (`HH:MM:SS[.ffffff]`, or a shorter `MM:SS` / `SS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BaseTime {
    pub hours: u32,
    pub minutes: u32,
    pub seconds: u32,
    /// Fraction of a second in microseconds.
    pub micros: u32,
}

/// The order in which a base date was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DateOrder {
    /// `DD/MM/YYYY`, the WFDB standard.
    DayMonthYear,
    /// `YYYY-MM-DD`, written by the CinC 2017 headers; read and kept as found.
    YearMonthDay,
}

/// Date of the first sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BaseDate {
    pub year: u32,
    pub month: u32,
    pub day: u32,
    pub order: DateOrder,
}

/// One signal line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SignalSpec {
    /// Signal file name relative to the header's folder; `~` means a null signal.
    pub file_name: String,
    pub format: Format,
    pub samples_per_frame: Option<u32>,
    pub skew: Option<u32>,
    pub byte_offset: Option<u64>,
    /// ADC gain as written (units per physical unit); `None` if the field is absent.
    pub adc_gain: Option<f64>,
    pub baseline: Option<i32>,
    pub units: Option<String>,
    pub adc_res: Option<u32>,
    pub adc_zero: Option<i32>,
    pub initial_value: Option<i32>,
    pub checksum: Option<i32>,
    /// Negative when the file cannot be read with random access (header(5)); 0 or absent
    /// when the file is not blocked.
    pub block_size: Option<i32>,
    pub description: Option<String>,
}

impl SignalSpec {
    /// A signal line with every optional field absent.
    pub fn new(file_name: impl Into<String>, format: Format) -> Self {
        SignalSpec {
            file_name: file_name.into(),
            format,
            samples_per_frame: None,
            skew: None,
            byte_offset: None,
            adc_gain: None,
            baseline: None,
            units: None,
            adc_res: None,
            adc_zero: None,
            initial_value: None,
            checksum: None,
            block_size: None,
            description: None,
        }
    }

    pub fn effective_samples_per_frame(&self) -> u32 {
        self.samples_per_frame.unwrap_or(1).max(1)
    }
    pub fn effective_skew(&self) -> u32 {
        self.skew.unwrap_or(0)
    }
    pub fn effective_byte_offset(&self) -> u64 {
        self.byte_offset.unwrap_or(0)
    }
    /// Gain used to convert to physical units: a missing or zero gain ("uncalibrated")
    /// converts with the default gain 200, as the WFDB library does.
    pub fn effective_gain(&self) -> f64 {
        match self.adc_gain {
            Some(g) if g != 0.0 => g,
            _ => DEFAULT_GAIN,
        }
    }
    /// Baseline: as written, else the ADC zero, else 0.
    pub fn effective_baseline(&self) -> i32 {
        self.baseline.or(self.adc_zero).unwrap_or(0)
    }
    pub fn effective_units(&self) -> &str {
        self.units.as_deref().unwrap_or(DEFAULT_UNITS)
    }
    /// ADC resolution in bits; a missing or zero field takes the format's default.
    pub fn effective_adc_res(&self) -> u32 {
        match self.adc_res {
            Some(r) if r != 0 => r,
            _ => self.format.default_adc_res(),
        }
    }
    pub fn effective_adc_zero(&self) -> i32 {
        self.adc_zero.unwrap_or(0)
    }
    /// Value of the first sample (for format 8, the value the first difference adds to).
    pub fn effective_initial_value(&self) -> i32 {
        self.initial_value
            .unwrap_or_else(|| self.effective_adc_zero())
    }
    /// Whether the signal has no file (`~`): every sample is invalid.
    pub fn is_null(&self) -> bool {
        self.file_name == "~" || self.format == Format::Null
    }
}

/// One segment line of a multi-segment header.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SegmentSpec {
    /// Record name of the segment; `~` is a null segment (a gap of invalid samples).
    pub name: String,
    pub sig_len: u64,
}

impl SegmentSpec {
    pub fn is_null(&self) -> bool {
        self.name == "~"
    }
}

impl Header {
    /// Parse header text. `source` names the file in error messages.
    pub fn parse(text: &str, source: &str) -> Result<Header, WfdbError> {
        let err = |line: usize, kind: WfdbErrorKind| WfdbError::at_line(source, line, kind);
        let mut comments = Vec::new();
        let mut lines = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if let Some(comment) = line.strip_prefix('#') {
                comments.push(comment.trim_end().to_string());
            } else if !line.is_empty() {
                lines.push((i + 1, line));
            }
        }
        let Some(&(record_line_no, record_text)) = lines.first() else {
            return Err(WfdbError::in_file(
                source,
                WfdbErrorKind::Header("the header has no record line".into()),
            ));
        };
        let record = parse_record_line(record_text).map_err(|k| err(record_line_no, k))?;
        let rest = &lines[1..];
        let mut header = Header {
            signals: Vec::new(),
            segments: None,
            comments,
            record,
        };
        if let Some(n_seg) = header.record.n_segments {
            if rest.len() < n_seg {
                return Err(err(
                    rest.last().map_or(record_line_no, |l| l.0),
                    WfdbErrorKind::Header(format!(
                        "the record line announces {n_seg} segments but {} segment lines follow",
                        rest.len()
                    )),
                ));
            }
            let mut segments = Vec::with_capacity(n_seg);
            for &(no, text) in &rest[..n_seg] {
                segments.push(parse_segment_line(text).map_err(|k| err(no, k))?);
            }
            // Lines after the announced segments are not read, as by the WFDB library.
            header.segments = Some(segments);
        } else {
            let n_sig = header.record.n_signals;
            if rest.len() < n_sig {
                return Err(err(
                    rest.last().map_or(record_line_no, |l| l.0),
                    WfdbErrorKind::Header(format!(
                        "the record line announces {n_sig} signals but {} signal lines follow",
                        rest.len()
                    )),
                ));
            }
            for &(no, text) in &rest[..n_sig] {
                header
                    .signals
                    .push(parse_signal_line(text).map_err(|k| err(no, k))?);
            }
            // header(5): "Any extra signal specification lines are not read". They are
            // not part of the header, so writing it back leaves them out.
        }
        Ok(header)
    }

    /// Whether this is a multi-segment header.
    pub fn is_multi_segment(&self) -> bool {
        self.segments.is_some()
    }

    /// Render as header text (LF line endings), writing only the fields that are present.
    pub fn to_text(&self) -> String {
        self.to_string()
    }
}

/// Times and dates serialize as they are written in a header.
impl Serialize for BaseTime {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl Serialize for BaseDate {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl fmt::Display for BaseTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:02}:{:02}:{:02}",
            self.hours, self.minutes, self.seconds
        )?;
        if self.micros != 0 {
            let frac = format!("{:06}", self.micros);
            write!(f, ".{}", frac.trim_end_matches('0'))?;
        }
        Ok(())
    }
}

impl fmt::Display for BaseDate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.order {
            DateOrder::DayMonthYear => {
                write!(f, "{:02}/{:02}/{:04}", self.day, self.month, self.year)
            }
            DateOrder::YearMonthDay => {
                write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
            }
        }
    }
}

impl fmt::Display for Header {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = &self.record;
        write!(f, "{}", r.name)?;
        if let Some(n) = r.n_segments {
            write!(f, "/{n}")?;
        }
        write!(f, " {}", r.n_signals)?;
        // Each optional field can only be written when the ones before it are.
        let fs = r.fs.or(if r.sig_len.is_some() || r.counter_freq.is_some() {
            Some(DEFAULT_FS)
        } else {
            None
        });
        if let Some(fs) = fs {
            write!(f, " {}", fs)?;
            if let Some(cf) = r.counter_freq {
                write!(f, "/{cf}")?;
                if let Some(bc) = r.base_counter {
                    write!(f, "({bc})")?;
                }
            }
            if let Some(len) = r.sig_len {
                write!(f, " {len}")?;
                match (r.base_time, r.base_date) {
                    (Some(t), Some(d)) if r.date_before_time => write!(f, " {d} {t}")?,
                    (None, Some(d)) if r.date_before_time => write!(f, " {d}")?,
                    (Some(t), Some(d)) => write!(f, " {t} {d}")?,
                    (Some(t), None) => write!(f, " {t}")?,
                    // WFDB order cannot give a date without a time; midnight is the default.
                    (None, Some(d)) => write!(f, " 00:00:00 {d}")?,
                    (None, None) => {}
                }
            }
        }
        writeln!(f)?;
        if let Some(segments) = &self.segments {
            for s in segments {
                writeln!(f, "{} {}", s.name, s.sig_len)?;
            }
        }
        for s in &self.signals {
            write!(f, "{} {}", s.file_name, s.format.code())?;
            // Present fields are written even when they hold the default, so that a
            // header reads back as it was.
            if let Some(spf) = s.samples_per_frame {
                write!(f, "x{spf}")?;
            }
            if let Some(skew) = s.skew {
                write!(f, ":{skew}")?;
            }
            if let Some(off) = s.byte_offset {
                write!(f, "+{off}")?;
            }
            // Positional fields: write a field if it or any later one is present.
            let later = [
                s.adc_res.is_some(),
                s.adc_zero.is_some(),
                s.initial_value.is_some(),
                s.checksum.is_some(),
                s.block_size.is_some(),
                s.description.is_some(),
            ];
            let need = |from: usize| later[from..].iter().any(|&b| b);
            if s.adc_gain.is_some() || s.baseline.is_some() || s.units.is_some() || need(0) {
                write!(f, " {}", s.adc_gain.unwrap_or(DEFAULT_GAIN))?;
                if let Some(b) = s.baseline {
                    write!(f, "({b})")?;
                }
                if let Some(u) = &s.units {
                    write!(f, "/{u}")?;
                }
            }
            if need(0) {
                write!(f, " {}", s.adc_res.unwrap_or(0))?;
            }
            if need(1) {
                write!(f, " {}", s.adc_zero.unwrap_or(0))?;
            }
            if need(2) {
                write!(f, " {}", s.effective_initial_value())?;
            }
            if need(3) {
                write!(f, " {}", s.checksum.unwrap_or(0))?;
            }
            if need(4) {
                write!(f, " {}", s.block_size.unwrap_or(0))?;
            }
            if let Some(d) = &s.description {
                write!(f, " {d}")?;
            }
            writeln!(f)?;
        }
        for c in &self.comments {
            writeln!(f, "#{c}")?;
        }
        Ok(())
    }
}

fn bad(msg: impl Into<String>) -> WfdbErrorKind {
    WfdbErrorKind::Header(msg.into())
}

/// A record or signal file name: non-empty, no whitespace.
fn check_name(name: &str, what: &str) -> Result<(), WfdbErrorKind> {
    if name.is_empty() || name.chars().any(|c| c.is_control()) {
        return Err(bad(format!("invalid {what} {name:?}")));
    }
    Ok(())
}

/// Sets a format modifier (`x`, `:` or `+` in `field`) from its text. One given twice is
/// refused rather than letting the last win: which value the writer meant is unknowable.
fn set_modifier<T: std::str::FromStr>(
    slot: &mut Option<T>,
    value: &str,
    what: &str,
    field: &str,
) -> Result<(), WfdbErrorKind> {
    if slot.is_some() {
        return Err(bad(format!(
            "format field {field:?} gives the {what} twice"
        )));
    }
    *slot = Some(parse_number(value, what)?);
    Ok(())
}

fn parse_number<T: std::str::FromStr>(text: &str, what: &str) -> Result<T, WfdbErrorKind> {
    text.parse::<T>()
        .map_err(|_| bad(format!("{what} {text:?} is not a valid number")))
}

fn parse_float(text: &str, what: &str) -> Result<f64, WfdbErrorKind> {
    let v: f64 = parse_number(text, what)?;
    if !v.is_finite() {
        return Err(bad(format!("{what} {text:?} is not a finite number")));
    }
    Ok(v)
}

fn parse_record_line(line: &str) -> Result<RecordLine, WfdbErrorKind> {
    let mut tokens = line.split_whitespace();
    let first = tokens.next().unwrap_or_default();
    let (name, n_segments) = match first.split_once('/') {
        Some((name, n)) => (name, Some(parse_number::<usize>(n, "number of segments")?)),
        None => (first, None),
    };
    check_name(name, "record name")?;
    let n_signals = match tokens.next() {
        Some(t) => parse_number::<usize>(t, "number of signals")?,
        None => return Err(bad("the record line has no number of signals")),
    };
    let mut record = RecordLine {
        name: name.to_string(),
        n_segments,
        n_signals,
        fs: None,
        counter_freq: None,
        base_counter: None,
        sig_len: None,
        base_time: None,
        base_date: None,
        date_before_time: false,
    };
    if let Some(t) = tokens.next() {
        // FS[/COUNTER_FREQ[(BASE_COUNTER)]]
        let (fs_text, counter) = match t.split_once('/') {
            Some((a, b)) => (a, Some(b)),
            None => (t, None),
        };
        let fs = parse_float(fs_text, "sampling frequency")?;
        // The WFDB library refuses a frequency that is not positive.
        if fs <= 0.0 {
            return Err(bad(format!(
                "sampling frequency {fs_text:?} is not positive"
            )));
        }
        record.fs = Some(fs);
        if let Some(counter) = counter {
            let (cf_text, bc) = match counter.split_once('(') {
                Some((cf, rest)) => {
                    let bc = rest.strip_suffix(')').ok_or_else(|| {
                        bad(format!(
                            "base counter in {t:?} lacks its closing parenthesis"
                        ))
                    })?;
                    (cf, Some(bc))
                }
                None => (counter, None),
            };
            record.counter_freq = Some(parse_float(cf_text, "counter frequency")?);
            if let Some(bc) = bc {
                record.base_counter = Some(parse_float(bc, "base counter value")?);
            }
        }
    }
    if let Some(t) = tokens.next() {
        record.sig_len = Some(parse_number::<u64>(t, "number of samples per signal")?);
    }
    if let Some(t) = tokens.next() {
        if t.contains(['-', '/']) {
            // A date in the time's place: the CinC 2017 `YYYY-MM-DD HH:MM:SS` order.
            record.base_date = parse_base_date(t)?;
            record.date_before_time = record.base_date.is_some();
            if let Some(t) = tokens.next() {
                record.base_time = Some(parse_base_time(t)?);
            }
        } else {
            record.base_time = Some(parse_base_time(t)?);
            if let Some(t) = tokens.next() {
                record.base_date = parse_base_date(t)?;
            }
        }
    }
    if let Some(t) = tokens.next() {
        return Err(bad(format!(
            "unexpected field {t:?} after the base time and date"
        )));
    }
    Ok(record)
}

fn parse_base_time(text: &str) -> Result<BaseTime, WfdbErrorKind> {
    let invalid = || bad(format!("base time {text:?} is not of the form HH:MM:SS"));
    let (whole, frac) = match text.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (text, None),
    };
    let parts: Vec<&str> = whole.split(':').collect();
    if parts.len() > 3 || parts.iter().any(|p| p.is_empty() || p.len() > 2) {
        return Err(invalid());
    }
    let mut nums = [0u32; 3];
    let offset = 3 - parts.len();
    for (i, p) in parts.iter().enumerate() {
        if !p.bytes().all(|b| b.is_ascii_digit()) {
            return Err(invalid());
        }
        nums[offset + i] = p.parse().map_err(|_| invalid())?;
    }
    let micros = match frac {
        None => 0,
        Some(f) if !f.is_empty() && f.len() <= 6 && f.bytes().all(|b| b.is_ascii_digit()) => {
            let padded = format!("{f:0<6}");
            padded.parse().map_err(|_| invalid())?
        }
        Some(_) => return Err(invalid()),
    };
    if nums[0] > 23 || nums[1] > 59 || nums[2] > 60 {
        return Err(bad(format!("base time {text:?} is out of range")));
    }
    Ok(BaseTime {
        hours: nums[0],
        minutes: nums[1],
        seconds: nums[2],
        micros,
    })
}

/// A base date, or `None` for `0/0/0`, which header(5) shows as the default (no date)
/// and the WFDB library accepts.
fn parse_base_date(text: &str) -> Result<Option<BaseDate>, WfdbErrorKind> {
    let invalid = || {
        bad(format!(
            "base date {text:?} is neither DD/MM/YYYY nor YYYY-MM-DD"
        ))
    };
    let digits = |s: &str| -> Result<u32, WfdbErrorKind> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || s.len() > 4 {
            return Err(invalid());
        }
        s.parse().map_err(|_| invalid())
    };
    let date = if let [d, m, y] = text.split('/').collect::<Vec<_>>()[..] {
        BaseDate {
            day: digits(d)?,
            month: digits(m)?,
            year: digits(y)?,
            order: DateOrder::DayMonthYear,
        }
    } else if let [y, m, d] = text.split('-').collect::<Vec<_>>()[..] {
        BaseDate {
            year: digits(y)?,
            month: digits(m)?,
            day: digits(d)?,
            order: DateOrder::YearMonthDay,
        }
    } else {
        return Err(invalid());
    };
    if (date.day, date.month, date.year) == (0, 0, 0) {
        return Ok(None);
    }
    if !(1..=12).contains(&date.month) || !(1..=31).contains(&date.day) {
        return Err(bad(format!("base date {text:?} is out of range")));
    }
    Ok(Some(date))
}

fn parse_segment_line(line: &str) -> Result<SegmentSpec, WfdbErrorKind> {
    let mut tokens = line.split_whitespace();
    let name = tokens.next().unwrap_or_default();
    check_name(name, "segment name")?;
    let sig_len = match tokens.next() {
        Some(t) => parse_number::<u64>(t, "segment length")?,
        None => return Err(bad(format!("segment {name:?} has no length"))),
    };
    if let Some(t) = tokens.next() {
        return Err(bad(format!(
            "unexpected field {t:?} after the segment length"
        )));
    }
    Ok(SegmentSpec {
        name: name.to_string(),
        sig_len,
    })
}

/// Splits off the next whitespace-delimited token, returning it and the rest of the line.
fn next_token(s: &str) -> Option<(&str, &str)> {
    let s = s.trim_start();
    if s.is_empty() {
        return None;
    }
    let end = s.find(char::is_whitespace).unwrap_or(s.len());
    Some((&s[..end], &s[end..]))
}

fn parse_signal_line(line: &str) -> Result<SignalSpec, WfdbErrorKind> {
    let (file_name, rest) = next_token(line).unwrap_or_default();
    check_name(file_name, "signal file name")?;
    let Some((fmt_token, mut rest)) = next_token(rest) else {
        return Err(bad(format!("signal file {file_name:?} has no format")));
    };
    // FORMAT[xSPF][:SKEW][+OFFSET]: the WFDB library takes the modifiers in any order.
    let (fmt_text, mut modifiers) = fmt_token
        .find(['x', ':', '+'])
        .map_or((fmt_token, ""), |i| fmt_token.split_at(i));
    let code: u32 = parse_number(fmt_text, "signal format")?;
    let format =
        Format::from_code(code).ok_or_else(|| bad(format!("unknown signal format {code}")))?;
    let mut spec = SignalSpec::new(file_name, format);
    while let Some(prefix) = modifiers.chars().next() {
        let r = &modifiers[prefix.len_utf8()..];
        let end = r.find(['x', ':', '+']).unwrap_or(r.len());
        let value = &r[..end];
        modifiers = &r[end..];
        let field = fmt_token;
        match prefix {
            'x' => {
                set_modifier(
                    &mut spec.samples_per_frame,
                    value,
                    "samples per frame",
                    field,
                )?;
                if spec.samples_per_frame == Some(0) {
                    return Err(bad("samples per frame must be at least 1"));
                }
            }
            ':' => set_modifier(&mut spec.skew, value, "skew", field)?,
            _ => set_modifier(&mut spec.byte_offset, value, "byte offset", field)?,
        }
    }

    // GAIN[(BASELINE)][/UNITS]
    if let Some((gain_token, r)) = next_token(rest) {
        rest = r;
        let (gain_and_base, units) = match gain_token.split_once('/') {
            Some((g, u)) => (g, Some(u)),
            None => (gain_token, None),
        };
        let (gain_text, baseline) = match gain_and_base.split_once('(') {
            Some((g, b)) => {
                let b = b.strip_suffix(')').ok_or_else(|| {
                    bad(format!(
                        "baseline in {gain_token:?} lacks its closing parenthesis"
                    ))
                })?;
                (g, Some(parse_number::<i32>(b, "baseline")?))
            }
            None => (gain_and_base, None),
        };
        let gain = parse_float(gain_text, "ADC gain")?;
        spec.adc_gain = Some(gain);
        spec.baseline = baseline;
        // `GAIN/` with nothing after the slash leaves the units unset (the default), as
        // the WFDB library reads it.
        spec.units = units.filter(|u| !u.is_empty()).map(str::to_string);
    }
    if let Some((t, r)) = next_token(rest) {
        rest = r;
        spec.adc_res = Some(parse_number(t, "ADC resolution")?);
    }
    if let Some((t, r)) = next_token(rest) {
        rest = r;
        spec.adc_zero = Some(parse_number(t, "ADC zero")?);
    }
    if let Some((t, r)) = next_token(rest) {
        rest = r;
        spec.initial_value = Some(parse_number(t, "initial value")?);
    }
    if let Some((t, r)) = next_token(rest) {
        rest = r;
        spec.checksum = Some(parse_number(t, "checksum")?);
    }
    if let Some((t, r)) = next_token(rest) {
        rest = r;
        // Signed: the WFDB library reads it with strtol, and header(5) gives a negative
        // block size a meaning.
        spec.block_size = Some(parse_number(t, "block size")?);
    }
    let description = rest.trim();
    if !description.is_empty() {
        spec.description = Some(description.to_string());
    }
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Header, WfdbError> {
        Header::parse(text, "test.hea")
    }

    #[test]
    fn cpsc_header() {
        let h = parse(
            "data_101_6 2 200 22355\n\
             data_101_6.dat 16 30061.276794035417(-161790)/mV 16 0 -10581 64292 0 I\n\
             data_101_6.dat 16 27477.561608300908(-138693)/mV 16 0 -1992 36235 0 II\n\
             # paroxysmal atrial fibrillation\n",
        )
        .unwrap();
        assert_eq!(h.record.name, "data_101_6");
        assert_eq!(h.record.n_signals, 2);
        assert_eq!(h.record.fs, Some(200.0));
        assert_eq!(h.record.sig_len, Some(22355));
        let s = &h.signals[0];
        assert_eq!(s.format, Format::F16);
        assert_eq!(s.adc_gain, Some(30061.276794035417));
        assert_eq!(s.baseline, Some(-161790));
        assert_eq!(s.units.as_deref(), Some("mV"));
        assert_eq!(s.initial_value, Some(-10581));
        assert_eq!(s.checksum, Some(64292));
        assert_eq!(s.block_size, Some(0));
        assert_eq!(s.description.as_deref(), Some("I"));
        assert_eq!(h.comments, vec![" paroxysmal atrial fibrillation"]);
    }

    #[test]
    fn cinc2017_header_with_crlf_trailing_space_and_iso_date() {
        let h = parse(
            "A00013 1 300 9000 2014-06-10 10:06:01 \r\nA00013.mat 16+24 1000/mV 16 0 3 0 0 ECG \r\n",
        );
        let h = h.unwrap();
        assert!(h.record.date_before_time);
        assert_eq!(
            h.record.base_time,
            Some(BaseTime {
                hours: 10,
                minutes: 6,
                seconds: 1,
                micros: 0
            })
        );
        assert_eq!(
            h.record.base_date,
            Some(BaseDate {
                year: 2014,
                month: 6,
                day: 10,
                order: DateOrder::YearMonthDay
            })
        );
        let s = &h.signals[0];
        assert_eq!(s.byte_offset, Some(24));
        assert_eq!(s.baseline, None);
        assert_eq!(s.effective_baseline(), 0);
        assert_eq!(s.description.as_deref(), Some("ECG"));
        assert!(
            h.to_text()
                .starts_with("A00013 1 300 9000 2014-06-10 10:06:01\n")
        );
        assert_eq!(parse(&h.to_text()).unwrap(), h);
    }

    /// header(5)'s first example shows the defaults, `0:0:0 0/0/0`: midnight and no date.
    #[test]
    fn the_zero_date_is_no_date() {
        for line in [
            "100 2 360 650000 0:0:0 0/0/0",
            "100 2 360 650000 0/0/0 0:0:0",
        ] {
            let h = parse(&format!(
                "{line}\n100.dat 212 200 11 1024 995 -22131 0 MLII\n\
                                    100.dat 212 200 11 1024 1011 20052 0 V5\n"
            ))
            .unwrap();
            assert_eq!(h.record.base_date, None, "{line}");
            assert!(!h.record.date_before_time, "{line}");
            assert_eq!(
                h.record.base_time.map(|t| t.to_string()).as_deref(),
                Some("00:00:00")
            );
            assert!(
                h.to_text().starts_with("100 2 360 650000 00:00:00\n"),
                "{line}"
            );
            assert_eq!(parse(&h.to_text()).unwrap(), h);
        }
        let e = parse("r 1 360 10 0:0:0 0/0/2020\nr.dat 16\n").unwrap_err();
        assert!(
            e.to_string()
                .contains("base date \"0/0/2020\" is out of range"),
            "{e}"
        );
    }

    #[test]
    fn every_modifier_and_default() {
        let h = parse("r/x 1\n").unwrap_err().to_string();
        assert!(h.contains("number of segments"), "{h}");
        let h = parse(
            "rec 3 360/720(12) 100 1:2:3.5 01/02/2003\n\
                       a.dat 212x4:3+512 100(5)/uV 12 7 9 -3 0 desc with spaces\n\
                       a.dat 212\n\
                       b.dat 8 0\n",
        )
        .unwrap();
        assert_eq!(h.record.counter_freq, Some(720.0));
        assert_eq!(h.record.base_counter, Some(12.0));
        assert_eq!(
            h.record.base_time,
            Some(BaseTime {
                hours: 1,
                minutes: 2,
                seconds: 3,
                micros: 500_000
            })
        );
        let a = &h.signals[0];
        assert_eq!(
            (a.samples_per_frame, a.skew, a.byte_offset),
            (Some(4), Some(3), Some(512))
        );
        assert_eq!(a.description.as_deref(), Some("desc with spaces"));
        let b = &h.signals[1];
        assert_eq!(b.effective_gain(), 200.0);
        assert_eq!(b.effective_units(), "mV");
        assert_eq!(b.effective_adc_res(), 12);
        let c = &h.signals[2];
        assert_eq!(c.adc_gain, Some(0.0));
        assert_eq!(c.effective_gain(), 200.0);
        // Written back and parsed again, the header is unchanged.
        assert_eq!(parse(&h.to_text()).unwrap(), h);
    }

    #[test]
    fn multi_segment() {
        let h = parse("multi/3 2 360 45000\nmulti_lay 0\n~ 5000\nseg2 40000\n# hi\n").unwrap();
        let segs = h.segments.as_ref().unwrap();
        assert_eq!(segs.len(), 3);
        assert!(segs[1].is_null());
        assert_eq!(segs[2].sig_len, 40000);
        assert_eq!(parse(&h.to_text()).unwrap(), h);
    }

    /// header(5): "Any extra signal specification lines are not read"; the WFDB library
    /// reads as many segment lines as announced, too. Comments anywhere are kept.
    #[test]
    fn lines_after_the_announced_ones_are_not_read() {
        let h = parse(
            "r 1 250 20\nr.dat 16 100 16 0\n# one\nr.dat 16 100 16 0\nnot 999 a signal line\n# two\n",
        )
        .unwrap();
        assert_eq!(h.signals.len(), 1);
        assert_eq!(h.comments, vec![" one", " two"]);
        assert_eq!(h.to_text(), "r 1 250 20\nr.dat 16 100 16 0\n# one\n# two\n");
        assert_eq!(parse(&h.to_text()).unwrap(), h);

        let h = parse("m/2 1 250 30\na 10\nb 20\nc 5\n# c\n").unwrap();
        let names: Vec<&str> = h
            .segments
            .as_ref()
            .unwrap()
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(h.comments, vec![" c"]);
        assert_eq!(parse(&h.to_text()).unwrap(), h);
    }

    /// header(5) gives a negative block size a meaning (the file cannot be read with
    /// random access); the WFDB library reads the field with strtol.
    #[test]
    fn a_block_size_may_be_negative() {
        let h = parse("r 1 250 20\nr.dat 16 100 16 0 0 0 -1 x\n").unwrap();
        assert_eq!(h.signals[0].block_size, Some(-1));
        assert_eq!(h.signals[0].description.as_deref(), Some("x"));
        assert!(h.to_text().contains("r.dat 16 100 16 0 0 0 -1 x\n"));
        assert_eq!(parse(&h.to_text()).unwrap(), h);
        let e = parse("r 1 250 20\nr.dat 16 100 16 0 0 0 -1.5\n").unwrap_err();
        assert!(e.to_string().contains("block size \"-1.5\""), "{e}");
    }

    /// `GAIN/` leaves the units unset, as the WFDB library reads it: the default applies.
    #[test]
    fn empty_units_are_unset() {
        let h = parse("r 1 250 20\nr.dat 16 100/ 16 0\n").unwrap();
        let s = &h.signals[0];
        assert_eq!(s.adc_gain, Some(100.0));
        assert_eq!(s.units, None);
        assert_eq!(s.effective_units(), "mV");
        let h = parse("r 1 250 20\nr.dat 16 100(3)/ 16 0\n").unwrap();
        assert_eq!(
            (h.signals[0].baseline, h.signals[0].units.as_deref()),
            (Some(3), None)
        );
        assert_eq!(parse(&h.to_text()).unwrap(), h);
    }

    /// The WFDB library reads the format's modifiers in any order; each may appear once.
    #[test]
    fn format_modifiers_in_any_order() {
        let fields = |fmt: &str| {
            let h = parse(&format!("r 1 250 20\nr.dat {fmt} 100 16 0\n")).unwrap();
            assert_eq!(parse(&h.to_text()).unwrap(), h, "{fmt}");
            let s = &h.signals[0];
            (s.samples_per_frame, s.skew, s.byte_offset)
        };
        assert_eq!(fields("16+4:1"), (None, Some(1), Some(4)));
        for fmt in ["16x2:3+4", "16+4x2:3", "16:3+4x2", "16+4:3x2"] {
            assert_eq!(fields(fmt), (Some(2), Some(3), Some(4)), "{fmt}");
        }
        for (fmt, what) in [
            ("16x2x3", "samples per frame"),
            ("16:1+4:1", "skew"),
            ("16+4+4", "byte offset"),
        ] {
            let e = parse(&format!("r 1 250 20\nr.dat {fmt}\n")).unwrap_err();
            let e = e.to_string();
            assert!(
                e.contains("line 2") && e.contains(fmt) && e.contains(&format!("the {what} twice")),
                "{e}"
            );
        }
        let e = parse("r 1 250 20\nr.dat 16+\n").unwrap_err().to_string();
        assert!(e.contains("byte offset \"\""), "{e}");
    }

    #[test]
    fn errors_name_line_and_problem() {
        let e = parse("").unwrap_err().to_string();
        assert!(
            e.contains("test.hea") && e.contains("no record line"),
            "{e}"
        );
        let e = parse("r 1 abc\n").unwrap_err().to_string();
        assert!(
            e.contains("line 1") && e.contains("sampling frequency"),
            "{e}"
        );
        let e = parse("r 1 250\nr.dat 16 hello\n").unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("ADC gain"), "{e}");
        let e = parse("r 1 250\nr.dat 999\n").unwrap_err().to_string();
        assert!(e.contains("unknown signal format 999"), "{e}");
        let e = parse("r 2 250\nr.dat 16\n").unwrap_err().to_string();
        assert!(e.contains("announces 2 signals"), "{e}");
        let e = parse("r 1 250 10 25:00:00\n").unwrap_err().to_string();
        assert!(e.contains("out of range"), "{e}");
    }
}
