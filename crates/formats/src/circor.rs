//! CirCor DigiScope (PhysioNet Challenge 2022) patient files (`<pid>.txt`) and heart-sound
//! segmentations (`<pid>_<loc>[_n].tsv`), read, typed, and written back byte for byte.
//!
//! A patient file is a first line `<pid> <number of recordings> <sampling frequency>`, one
//! line per recording `<location> <hea> <wav> [<tsv>]`, then `#Key: value` lines. We keep
//! every `#Key: value` line in file order as raw strings ([`Annotation`]) and type the known
//! ones at parse time ([`PatientInfo`]): an unknown value for a known key is an error that
//! names the file, line and key, so nothing downstream has to handle a misspelt class. The
//! closed value sets are the challenge's data table (physionetchallenges.github.io
//! `2022/index.md`, "Data Variables"), checked against every value of the 942-patient
//! training table (`training_data.csv`): that table adds nothing to the lists, and the only
//! listed values it never uses are `Young adult`, `Mid-diastolic`, `Holodiastolic` and the
//! diastolic `Plateau`. Values match the way the official helper code compares strings
//! (`compare_strings`: surrounding whitespace ignored, case-folded), so `Young Adult` (the
//! example code's spelling) and `Young adult` (the data table's) are the same age group.
//! `nan` means "not given" for every typed field except the two labels, where it is an
//! error: a missing label is a missing line, never `nan`.
//!
//! Rendering ([`PatientFile::to_text`]) reproduces any file we parse byte for byte (line
//! endings, final newline). That is why the grammar is strict where the helper code is
//! lenient only by accident: tokens are separated by exactly one space (the helper splits
//! on `' '`, so two spaces would shift its columns anyway), counts are written without
//! leading zeros, and `#` lines read exactly `#Key: value`.
//!
//! [`PatientFile::without_labels`] produces what an entry may see. docs/architecture.md
//! ("Labels never enter a sandbox") requires the `#Murmur*`/`#Outcome` lines to be
//! stripped; docs/challenges.md (the organisers' validation and test files have no
//! murmur, outcome or other label-like lines, and no tsv files) says which ones. The
//! challenge's data table is explicit:
//! only Age, Sex, Height, Weight and Pregnancy status are ticked for the validation and test
//! sets; Campaign, Additional ID, Murmur, Murmur locations, Most audible location, the ten
//! systolic/diastolic murmur fields and Outcome are training-only. So we keep exactly those
//! five keys (a whitelist: a key we do not know is dropped, never leaked) and drop the tsv
//! column of the recording lines, as the hidden sets' files have none.
//!
//! A segmentation line is `start_s<TAB>end_s<TAB>state`, state 0 = unannotated, 1 = S1,
//! 2 = systole, 3 = S2, 4 = diastole. Errors: a line that is not three tab-separated
//! fields, a time that is not a finite non-negative number, a state that is not a whole
//! number, a segment that ends before it starts, an empty line. Tolerated, and listed by
//! [`Segmentation::anomalies`]: a state code outside 0..=4 (the real `50782_MV_1.tsv` is the
//! single line `0\t0\t28`), a zero-length segment, a segment that starts before the
//! previous one ends (the real data overlaps by fractions of a millisecond in a few files).
//!
//! Not for: `.hea`/`.wav` files (see `wfdb` and `wav`), the challenge's output CSVs, or
//! scoring (labels are read here, but what counts as a label error belongs to the scorer).

use std::collections::HashMap;
use std::fmt;
use std::path::Path;

// ------------------------------------------------------------------------------------------
// Errors
// ------------------------------------------------------------------------------------------

/// What went wrong, without the file name and line (see [`CircorError`]).
#[derive(Debug, thiserror::Error)]
pub enum CircorErrorKind {
    #[error("cannot read the file: {0}")]
    Read(std::io::Error),
    #[error("cannot write the file: {0}")]
    Write(std::io::Error),
    #[error("not UTF-8 text: invalid byte at offset {offset}")]
    NotText { offset: usize },
    #[error("the file is empty")]
    Empty,
    #[error("empty line")]
    EmptyLine,
    #[error("this line ends in {found} but line {first_line} ends in {first}")]
    MixedLineEndings {
        found: LineEnding,
        first: LineEnding,
        first_line: usize,
    },
    #[error(
        "expected `<patient id> <number of recordings> <sampling frequency>` separated by \
         single spaces, found {found:?}"
    )]
    BadFirstLine { found: String },
    #[error("the patient id {found:?} is not a string of digits")]
    BadPatientId { found: String },
    #[error("the {what} {found:?} is not a whole number written without leading zeros")]
    BadCount { what: &'static str, found: String },
    #[error("the sampling frequency is 0 Hz")]
    ZeroFrequency,
    #[error("line 1 declares {declared} recording(s) but {found} recording line(s) follow")]
    RecordingCount { declared: usize, found: usize },
    #[error(
        "expected `<location> <header>.hea <audio>.wav [<segmentation>.tsv]` separated by \
         single spaces, found {found:?}"
    )]
    BadRecordingLine { found: String },
    #[error(
        "unknown auscultation location {found:?} (expected AV, PV, TV, MV or Phc, optionally \
         followed by `_<n>`)"
    )]
    BadLocation { found: String },
    #[error("{found:?} is not a plain `{ext}` file name")]
    BadFileName { found: String, ext: &'static str },
    #[error("expected a `#Key: value` line, found {found:?}")]
    BadAnnotation { found: String },
    #[error("`#{key}:` appears a second time (first on line {first_line})")]
    DuplicateKey { key: String, first_line: usize },
    #[error("`#{key}:` has the value {value:?}; expected {expected}")]
    BadValue {
        key: String,
        value: String,
        expected: String,
    },
    #[error("{found} tab-separated field(s); expected 3 (`start_s<TAB>end_s<TAB>state`)")]
    ColumnCount { found: usize },
    #[error("the {column} time {found:?} is not a finite, non-negative number of seconds")]
    BadTime { column: &'static str, found: String },
    #[error("the state {found:?} is not a whole number")]
    BadState { found: String },
    #[error("the segment ends at {end_s} s, before it starts at {start_s} s")]
    EndBeforeStart { start_s: f64, end_s: f64 },
    #[error("{0}")]
    Invalid(String),
}

/// A CirCor error that names the file, the line when there is one, and the problem.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {}{kind}", at_line(*.line))]
pub struct CircorError {
    /// The source name the caller gave (or the path).
    pub file: String,
    /// 1-based line number, when the problem sits on one line.
    pub line: Option<usize>,
    pub kind: CircorErrorKind,
}

fn at_line(line: Option<usize>) -> String {
    line.map(|l| format!("line {l}: ")).unwrap_or_default()
}

fn error(file: &str, line: Option<usize>, kind: CircorErrorKind) -> CircorError {
    CircorError {
        file: file.to_string(),
        line,
        kind,
    }
}

/// At most 80 characters of `s`, so that an error on a huge line stays readable.
fn snippet(s: &str) -> String {
    match s.char_indices().nth(80) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

// ------------------------------------------------------------------------------------------
// Lines
// ------------------------------------------------------------------------------------------

/// The line terminator a file uses (one per file: a mix is an error).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum LineEnding {
    #[default]
    Lf,
    CrLf,
}

impl LineEnding {
    pub fn as_str(self) -> &'static str {
        match self {
            LineEnding::Lf => "\n",
            LineEnding::CrLf => "\r\n",
        }
    }
}

impl fmt::Display for LineEnding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LineEnding::Lf => "LF",
            LineEnding::CrLf => "CRLF",
        })
    }
}

struct Lines<'a> {
    lines: Vec<&'a str>,
    ending: LineEnding,
    final_newline: bool,
}

fn utf8<'a>(bytes: &'a [u8], file: &str) -> Result<&'a str, CircorError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let offset = e.valid_up_to();
        let line = bytes
            .get(..offset)
            .map_or(0, |b| b.iter().filter(|&&c| c == b'\n').count());
        error(file, Some(line + 1), CircorErrorKind::NotText { offset })
    })
}

/// Splits on LF, taking a CR before it as part of a CRLF terminator. A last line without
/// terminator keeps any trailing CR as content (so rendering gives it back).
fn split_lines<'a>(text: &'a str, file: &str) -> Result<Lines<'a>, CircorError> {
    let mut lines = Vec::new();
    let mut first: Option<(LineEnding, usize)> = None;
    for (i, raw) in text.split_inclusive('\n').enumerate() {
        let Some(body) = raw.strip_suffix('\n') else {
            lines.push(raw);
            break;
        };
        let (content, ending) = match body.strip_suffix('\r') {
            Some(c) => (c, LineEnding::CrLf),
            None => (body, LineEnding::Lf),
        };
        match first {
            None => first = Some((ending, i + 1)),
            Some((f, first_line)) if f != ending => {
                return Err(error(
                    file,
                    Some(i + 1),
                    CircorErrorKind::MixedLineEndings {
                        found: ending,
                        first: f,
                        first_line,
                    },
                ));
            }
            Some(_) => {}
        }
        lines.push(content);
    }
    Ok(Lines {
        lines,
        ending: first.map_or(LineEnding::Lf, |(e, _)| e),
        final_newline: text.ends_with('\n'),
    })
}

fn join_lines(lines: &[String], ending: LineEnding, final_newline: bool) -> String {
    let mut out = lines.join(ending.as_str());
    if final_newline {
        out.push_str(ending.as_str());
    }
    out
}

/// A whole number in canonical decimal (no sign, no leading zero), so that it renders back
/// to the same text.
fn canonical_u32(s: &str) -> Option<u32> {
    let canonical =
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'));
    if canonical { s.parse().ok() } else { None }
}

// ------------------------------------------------------------------------------------------
// Value types
// ------------------------------------------------------------------------------------------

/// The closed value sets of the patient file, shared by the typed parser.
trait ValueSet: Copy + 'static {
    const ALL: &'static [Self];
    fn text(self) -> &'static str;
}

macro_rules! value_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $var:ident = $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $($(#[$vdoc])* $var),+
        }

        impl $name {
            /// Every value, in the order the data description lists them.
            pub const ALL: &'static [$name] = &[$($name::$var),+];

            /// The spelling the data files use.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$var => $text),+
                }
            }

            /// Parses a value as the official helper code compares strings: surrounding
            /// whitespace is ignored and letters match in any case.
            pub fn from_value(s: &str) -> Option<$name> {
                let s = s.trim();
                $name::ALL.iter().copied().find(|v| v.as_str().eq_ignore_ascii_case(s))
            }
        }

        impl ValueSet for $name {
            const ALL: &'static [Self] = $name::ALL;
            fn text(self) -> &'static str {
                self.as_str()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

value_enum! {
    /// `#Age:`, an age group.
    AgeGroup {
        Neonate = "Neonate",
        Infant = "Infant",
        Child = "Child",
        Adolescent = "Adolescent",
        /// Written `Young adult` in the data table and `Young Adult` in the example code;
        /// both parse.
        YoungAdult = "Young adult",
    }
}

value_enum! {
    /// `#Sex:`.
    Sex { Female = "Female", Male = "Male" }
}

value_enum! {
    /// `#Murmur:`, the murmur task's label, in the scorer's canonical class order.
    Murmur { Present = "Present", Unknown = "Unknown", Absent = "Absent" }
}

value_enum! {
    /// `#Outcome:`, the clinical-outcome task's label.
    Outcome { Abnormal = "Abnormal", Normal = "Normal" }
}

value_enum! {
    /// `#Campaign:`, the screening campaign (July-August 2014 or June-July 2015).
    Campaign { Cc2014 = "CC2014", Cc2015 = "CC2015" }
}

value_enum! {
    /// An auscultation site.
    Site {
        /// Aortic valve point.
        Av = "AV",
        /// Pulmonary valve point.
        Pv = "PV",
        /// Tricuspid valve point.
        Tv = "TV",
        /// Mitral valve point.
        Mv = "MV",
        /// Any other location.
        Phc = "Phc",
    }
}

value_enum! {
    /// `#Systolic murmur timing:`.
    SystolicTiming {
        Early = "Early-systolic",
        Mid = "Mid-systolic",
        Late = "Late-systolic",
        Holo = "Holosystolic",
    }
}

value_enum! {
    /// `#Diastolic murmur timing:`.
    DiastolicTiming {
        Early = "Early-diastolic",
        Mid = "Mid-diastolic",
        Holo = "Holodiastolic",
    }
}

value_enum! {
    /// Murmur shape. The data table lists only Decrescendo and Plateau for diastolic
    /// murmurs; we accept all four there, since the words are one vocabulary and nothing
    /// breaks if a diastolic murmur is ever called a diamond.
    MurmurShape {
        Crescendo = "Crescendo",
        Decrescendo = "Decrescendo",
        Diamond = "Diamond",
        Plateau = "Plateau",
    }
}

value_enum! {
    /// Murmur pitch.
    Pitch { Low = "Low", Medium = "Medium", High = "High" }
}

value_enum! {
    /// Murmur quality (the data table lists Musical only for systolic murmurs; accepted
    /// for both, as for [`MurmurShape`]).
    Quality { Blowing = "Blowing", Harsh = "Harsh", Musical = "Musical" }
}

value_enum! {
    /// Systolic murmur grade on the Levine scale (out of VI).
    SystolicGrade { Grade1 = "I/VI", Grade2 = "II/VI", Grade3 = "III/VI" }
}

value_enum! {
    /// Diastolic murmur grade (out of IV).
    DiastolicGrade { Grade1 = "I/IV", Grade2 = "II/IV", Grade3 = "III/IV" }
}

/// The five characteristics annotated for a systolic or a diastolic murmur; `None` where
/// the file says `nan` (no such murmur) or has no line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MurmurDescription<T, G> {
    pub timing: Option<T>,
    pub shape: Option<MurmurShape>,
    pub grading: Option<G>,
    pub pitch: Option<Pitch>,
    pub quality: Option<Quality>,
}

impl<T, G> Default for MurmurDescription<T, G> {
    fn default() -> Self {
        MurmurDescription {
            timing: None,
            shape: None,
            grading: None,
            pitch: None,
            quality: None,
        }
    }
}

impl<T, G> MurmurDescription<T, G> {
    /// True when no characteristic is given (the patient has no such murmur).
    pub fn is_empty(&self) -> bool {
        self.timing.is_none()
            && self.shape.is_none()
            && self.grading.is_none()
            && self.pitch.is_none()
            && self.quality.is_none()
    }
}

pub type SystolicMurmur = MurmurDescription<SystolicTiming, SystolicGrade>;
pub type DiastolicMurmur = MurmurDescription<DiastolicTiming, DiastolicGrade>;

/// The `#Key` names of the patient file.
pub mod keys {
    pub const AGE: &str = "Age";
    pub const SEX: &str = "Sex";
    pub const HEIGHT: &str = "Height";
    pub const WEIGHT: &str = "Weight";
    pub const PREGNANCY_STATUS: &str = "Pregnancy status";
    pub const MURMUR: &str = "Murmur";
    pub const MURMUR_LOCATIONS: &str = "Murmur locations";
    pub const MOST_AUDIBLE_LOCATION: &str = "Most audible location";
    pub const SYSTOLIC_MURMUR_TIMING: &str = "Systolic murmur timing";
    pub const SYSTOLIC_MURMUR_SHAPE: &str = "Systolic murmur shape";
    pub const SYSTOLIC_MURMUR_GRADING: &str = "Systolic murmur grading";
    pub const SYSTOLIC_MURMUR_PITCH: &str = "Systolic murmur pitch";
    pub const SYSTOLIC_MURMUR_QUALITY: &str = "Systolic murmur quality";
    pub const DIASTOLIC_MURMUR_TIMING: &str = "Diastolic murmur timing";
    pub const DIASTOLIC_MURMUR_SHAPE: &str = "Diastolic murmur shape";
    pub const DIASTOLIC_MURMUR_GRADING: &str = "Diastolic murmur grading";
    pub const DIASTOLIC_MURMUR_PITCH: &str = "Diastolic murmur pitch";
    pub const DIASTOLIC_MURMUR_QUALITY: &str = "Diastolic murmur quality";
    pub const OUTCOME: &str = "Outcome";
    pub const CAMPAIGN: &str = "Campaign";
    pub const ADDITIONAL_ID: &str = "Additional ID";

    /// The keys the validation and test files carry (the challenge's data table); every
    /// other key is training-only and [`super::PatientFile::without_labels`] drops it.
    pub const PARTICIPANT_VISIBLE: [&str; 5] = [AGE, SEX, HEIGHT, WEIGHT, PREGNANCY_STATUS];

    /// Every key we type, in the order the training files write them.
    pub const STANDARD_ORDER: [&str; 21] = [
        AGE,
        SEX,
        HEIGHT,
        WEIGHT,
        PREGNANCY_STATUS,
        MURMUR,
        MURMUR_LOCATIONS,
        MOST_AUDIBLE_LOCATION,
        SYSTOLIC_MURMUR_TIMING,
        SYSTOLIC_MURMUR_SHAPE,
        SYSTOLIC_MURMUR_GRADING,
        SYSTOLIC_MURMUR_PITCH,
        SYSTOLIC_MURMUR_QUALITY,
        DIASTOLIC_MURMUR_TIMING,
        DIASTOLIC_MURMUR_SHAPE,
        DIASTOLIC_MURMUR_GRADING,
        DIASTOLIC_MURMUR_PITCH,
        DIASTOLIC_MURMUR_QUALITY,
        OUTCOME,
        CAMPAIGN,
        ADDITIONAL_ID,
    ];
}

/// The typed `#Key: value` lines of a patient file. `None` means the file says `nan` or has
/// no such line (the raw lines in [`PatientFile::annotations`] tell the two apart).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PatientInfo {
    pub age: Option<AgeGroup>,
    pub sex: Option<Sex>,
    pub height_cm: Option<f64>,
    pub weight_kg: Option<f64>,
    pub pregnant: Option<bool>,
    /// The murmur label; `None` when the line is absent (validation/test files).
    pub murmur: Option<Murmur>,
    pub murmur_locations: Option<Vec<Site>>,
    pub most_audible_location: Option<Site>,
    pub systolic: SystolicMurmur,
    pub diastolic: DiastolicMurmur,
    /// The outcome label; `None` when the line is absent.
    pub outcome: Option<Outcome>,
    pub campaign: Option<Campaign>,
    pub additional_id: Option<String>,
}

fn is_nan(v: &str) -> bool {
    v.trim().eq_ignore_ascii_case("nan")
}

fn expected_list<E: ValueSet>(nan: bool) -> String {
    let mut names: Vec<&str> = E::ALL.iter().map(|e| e.text()).collect();
    if nan {
        names.push("nan");
    }
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.join(""),
    }
}

fn find<E: ValueSet>(v: &str) -> Option<E> {
    let v = v.trim();
    E::ALL
        .iter()
        .copied()
        .find(|e| e.text().eq_ignore_ascii_case(v))
}

/// A closed-set value or `nan`.
fn opt_value<E: ValueSet>(v: &str) -> Result<Option<E>, String> {
    if is_nan(v) {
        return Ok(None);
    }
    find(v).map(Some).ok_or_else(|| expected_list::<E>(true))
}

/// A label: a closed-set value, never `nan`.
fn label<E: ValueSet>(v: &str) -> Result<Option<E>, String> {
    find(v).map(Some).ok_or_else(|| expected_list::<E>(false))
}

fn opt_measure(v: &str) -> Result<Option<f64>, String> {
    if is_nan(v) {
        return Ok(None);
    }
    match v.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
        _ => Err("a non-negative number or nan".into()),
    }
}

fn opt_bool(v: &str) -> Result<Option<bool>, String> {
    let t = v.trim();
    if is_nan(t) {
        Ok(None)
    } else if t.eq_ignore_ascii_case("true") {
        Ok(Some(true))
    } else if t.eq_ignore_ascii_case("false") {
        Ok(Some(false))
    } else {
        Err("True, False or nan".into())
    }
}

fn opt_sites(v: &str) -> Result<Option<Vec<Site>>, String> {
    if is_nan(v) {
        return Ok(None);
    }
    v.trim()
        .split('+')
        .map(|s| Site::from_value(s).ok_or(()))
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
        .map_err(|()| "locations from AV, PV, TV, MV and Phc joined by `+`, or nan".into())
}

impl PatientInfo {
    /// Types one `#key: value` line. `Ok(false)` for a key we do not know (kept raw only).
    fn apply(&mut self, key: &str, v: &str) -> Result<bool, String> {
        use keys::*;
        match key {
            AGE => self.age = opt_value(v)?,
            SEX => self.sex = opt_value(v)?,
            HEIGHT => self.height_cm = opt_measure(v)?,
            WEIGHT => self.weight_kg = opt_measure(v)?,
            PREGNANCY_STATUS => self.pregnant = opt_bool(v)?,
            MURMUR => self.murmur = label(v)?,
            MURMUR_LOCATIONS => self.murmur_locations = opt_sites(v)?,
            MOST_AUDIBLE_LOCATION => self.most_audible_location = opt_value(v)?,
            SYSTOLIC_MURMUR_TIMING => self.systolic.timing = opt_value(v)?,
            SYSTOLIC_MURMUR_SHAPE => self.systolic.shape = opt_value(v)?,
            SYSTOLIC_MURMUR_GRADING => self.systolic.grading = opt_value(v)?,
            SYSTOLIC_MURMUR_PITCH => self.systolic.pitch = opt_value(v)?,
            SYSTOLIC_MURMUR_QUALITY => self.systolic.quality = opt_value(v)?,
            DIASTOLIC_MURMUR_TIMING => self.diastolic.timing = opt_value(v)?,
            DIASTOLIC_MURMUR_SHAPE => self.diastolic.shape = opt_value(v)?,
            DIASTOLIC_MURMUR_GRADING => self.diastolic.grading = opt_value(v)?,
            DIASTOLIC_MURMUR_PITCH => self.diastolic.pitch = opt_value(v)?,
            DIASTOLIC_MURMUR_QUALITY => self.diastolic.quality = opt_value(v)?,
            OUTCOME => self.outcome = label(v)?,
            CAMPAIGN => self.campaign = opt_value(v)?,
            ADDITIONAL_ID => {
                self.additional_id = (!is_nan(v)).then(|| v.trim().to_string());
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The `#Key: value` lines for this information, in the training files' order. Every
    /// field is written (`nan` for `None`) except the two labels, which are left out when
    /// `None`, as in the validation/test files. Heights and weights are written as Python
    /// writes a float (`98.0`, `11.075`), which is how the real files spell them; a NaN is
    /// written `NaN` and so reads back as not given.
    pub fn to_annotations(&self) -> Vec<Annotation> {
        use keys::*;
        fn text<E: ValueSet>(v: Option<E>) -> String {
            v.map_or_else(|| "nan".into(), |e| e.text().into())
        }
        let measure = |v: Option<f64>| v.map_or_else(|| "nan".into(), |x| format!("{x:?}"));
        let s = &self.systolic;
        let d = &self.diastolic;
        let mut out = vec![
            (AGE, text(self.age)),
            (SEX, text(self.sex)),
            (HEIGHT, measure(self.height_cm)),
            (WEIGHT, measure(self.weight_kg)),
            (
                PREGNANCY_STATUS,
                self.pregnant
                    .map_or("nan", |p| if p { "True" } else { "False" })
                    .into(),
            ),
        ];
        if let Some(m) = self.murmur {
            out.push((MURMUR, m.as_str().into()));
        }
        let sites = self.murmur_locations.as_ref().map_or_else(
            || "nan".into(),
            |l| l.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("+"),
        );
        out.extend([
            (MURMUR_LOCATIONS, sites),
            (MOST_AUDIBLE_LOCATION, text(self.most_audible_location)),
            (SYSTOLIC_MURMUR_TIMING, text(s.timing)),
            (SYSTOLIC_MURMUR_SHAPE, text(s.shape)),
            (SYSTOLIC_MURMUR_GRADING, text(s.grading)),
            (SYSTOLIC_MURMUR_PITCH, text(s.pitch)),
            (SYSTOLIC_MURMUR_QUALITY, text(s.quality)),
            (DIASTOLIC_MURMUR_TIMING, text(d.timing)),
            (DIASTOLIC_MURMUR_SHAPE, text(d.shape)),
            (DIASTOLIC_MURMUR_GRADING, text(d.grading)),
            (DIASTOLIC_MURMUR_PITCH, text(d.pitch)),
            (DIASTOLIC_MURMUR_QUALITY, text(d.quality)),
        ]);
        if let Some(o) = self.outcome {
            out.push((OUTCOME, o.as_str().into()));
        }
        out.push((CAMPAIGN, text(self.campaign)));
        out.push((
            ADDITIONAL_ID,
            self.additional_id.clone().unwrap_or_else(|| "nan".into()),
        ));
        out.into_iter()
            .map(|(k, v)| Annotation::new(k, v))
            .collect()
    }
}

// ------------------------------------------------------------------------------------------
// Patient files
// ------------------------------------------------------------------------------------------

/// A recording's location token: a site, with the `_<n>` suffix when a file names it so.
/// (The real files write the bare site, `AV`, even for `50782_AV_1.wav`: the index lives in
/// the file names.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Location {
    pub site: Site,
    /// `n >= 1` of `AV_n`.
    pub index: Option<u32>,
}

impl Location {
    pub fn new(site: Site) -> Location {
        Location { site, index: None }
    }

    /// Parses `AV`, `Phc`, `MV_2`...: exact case, since the token is rendered back as is.
    pub fn parse(s: &str) -> Option<Location> {
        let (site, index) = match s.split_once('_') {
            Some((site, n)) => (site, Some(canonical_u32(n).filter(|&n| n >= 1)?)),
            None => (s, None),
        };
        let site = Site::ALL.iter().copied().find(|x| x.as_str() == site)?;
        Some(Location { site, index })
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.index {
            Some(n) => write!(f, "{}_{n}", self.site),
            None => write!(f, "{}", self.site),
        }
    }
}

/// One recording line: `<location> <hea> <wav> [<tsv>]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recording {
    pub location: Location,
    pub header_file: String,
    pub wav_file: String,
    /// Present in training data only.
    pub segmentation_file: Option<String>,
}

impl Recording {
    /// The recording with the dataset's file names: `<pid>_<site>[_<n>].hea/.wav[/.tsv]`
    /// (the location token itself stays the bare site, as in the real files).
    pub fn named(patient_id: &str, site: Site, index: Option<u32>, segmentation: bool) -> Self {
        let stem = match index {
            Some(n) => format!("{patient_id}_{site}_{n}"),
            None => format!("{patient_id}_{site}"),
        };
        Recording {
            location: Location::new(site),
            header_file: format!("{stem}.hea"),
            wav_file: format!("{stem}.wav"),
            segmentation_file: segmentation.then(|| format!("{stem}.tsv")),
        }
    }

    /// The record name shared by the `.hea`, `.wav` and `.tsv`: the wav name without `.wav`.
    pub fn record_name(&self) -> &str {
        self.wav_file.strip_suffix(".wav").unwrap_or(&self.wav_file)
    }
}

/// A plain file name in the patient's folder: printable ASCII, no path separator, not
/// hidden, with the given extension. Callers join these names to a folder, so a name that
/// could climb out of it (`../x.wav`) is refused here.
fn file_name_ok(name: &str, ext: &str) -> bool {
    name.len() > ext.len()
        && name.ends_with(ext)
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_graphic() && b != b'/' && b != b'\\')
}

/// One `#Key: value` line, kept as written.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Annotation {
    key: String,
    value: String,
}

impl Annotation {
    pub fn new(key: impl Into<String>, value: impl Into<String>) -> Annotation {
        Annotation {
            key: key.into(),
            value: value.into(),
        }
    }

    /// The text between `#` and the first `": "`.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Everything after the first `": "`, untrimmed.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// Whether an entry may see this line ([`keys::PARTICIPANT_VISIBLE`]).
    pub fn is_participant_visible(&self) -> bool {
        keys::PARTICIPANT_VISIBLE.contains(&self.key.as_str())
    }
}

/// A parsed patient file. Built only by parsing (or by [`PatientFile::new`], which renders
/// and parses), so the typed [`PatientInfo`] always agrees with the raw lines.
#[derive(Debug, Clone, PartialEq)]
pub struct PatientFile {
    patient_id: String,
    frequency_hz: u32,
    recordings: Vec<Recording>,
    annotations: Vec<Annotation>,
    info: PatientInfo,
    line_ending: LineEnding,
    final_newline: bool,
}

impl PatientFile {
    /// Reads and parses a patient file; errors name the path.
    pub fn read(path: impl AsRef<Path>) -> Result<PatientFile, CircorError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let bytes =
            std::fs::read(path).map_err(|e| error(&name, None, CircorErrorKind::Read(e)))?;
        PatientFile::parse(&bytes, &name)
    }

    /// Parses the bytes of a patient file; `source` names them in errors.
    pub fn parse(bytes: &[u8], source: &str) -> Result<PatientFile, CircorError> {
        PatientFile::parse_str(utf8(bytes, source)?, source)
    }

    /// Parses the text of a patient file; `source` names it in errors.
    pub fn parse_str(text: &str, source: &str) -> Result<PatientFile, CircorError> {
        let err = |line: usize, kind| error(source, Some(line), kind);
        let Lines {
            lines,
            ending,
            final_newline,
        } = split_lines(text, source)?;
        let Some(first) = lines.first() else {
            return Err(error(source, None, CircorErrorKind::Empty));
        };

        let mut tokens = first.split(' ');
        let (Some(pid), Some(n), Some(freq), None) =
            (tokens.next(), tokens.next(), tokens.next(), tokens.next())
        else {
            let found = snippet(first);
            return Err(err(1, CircorErrorKind::BadFirstLine { found }));
        };
        if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
            let found = snippet(pid);
            return Err(err(1, CircorErrorKind::BadPatientId { found }));
        }
        let count = |what, s: &str| {
            canonical_u32(s).ok_or_else(|| {
                let found = snippet(s);
                err(1, CircorErrorKind::BadCount { what, found })
            })
        };
        let declared = count("number of recordings", n)? as usize;
        let frequency_hz = count("sampling frequency", freq)?;
        if frequency_hz == 0 {
            return Err(err(1, CircorErrorKind::ZeroFrequency));
        }

        // Recording lines run until the first `#` line; their number must match line 1.
        let rest = lines.get(1..).unwrap_or_default();
        let found = rest.iter().take_while(|l| !l.starts_with('#')).count();
        if found != declared {
            let at = 2 + found.min(declared);
            return Err(err(at, CircorErrorKind::RecordingCount { declared, found }));
        }
        let mut recordings = Vec::with_capacity(found);
        for (i, line) in rest.iter().take(found).enumerate() {
            recordings.push(parse_recording(line).map_err(|k| err(i + 2, k))?);
        }

        let mut annotations = Vec::new();
        let mut info = PatientInfo::default();
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for (i, line) in rest.iter().enumerate().skip(found) {
            let line_no = i + 2;
            let parsed = line
                .strip_prefix('#')
                .and_then(|l| l.split_once(": "))
                .filter(|(k, _)| !k.is_empty());
            let Some((key, value)) = parsed else {
                let kind = if line.is_empty() {
                    CircorErrorKind::EmptyLine
                } else {
                    CircorErrorKind::BadAnnotation {
                        found: snippet(line),
                    }
                };
                return Err(err(line_no, kind));
            };
            let known = info.apply(key, value).map_err(|expected| {
                let (key, value) = (key.to_string(), snippet(value));
                err(
                    line_no,
                    CircorErrorKind::BadValue {
                        key,
                        value,
                        expected,
                    },
                )
            })?;
            // A repeated known key would make the typed value depend on which line wins
            // (the helper code takes the last); we refuse the ambiguity.
            if known {
                if let Some(&first_line) = seen.get(key) {
                    let key = key.to_string();
                    return Err(err(
                        line_no,
                        CircorErrorKind::DuplicateKey { key, first_line },
                    ));
                }
                seen.insert(key, line_no);
            }
            annotations.push(Annotation::new(key, value));
        }

        Ok(PatientFile {
            patient_id: pid.to_string(),
            frequency_hz,
            recordings,
            annotations,
            info,
            line_ending: ending,
            final_newline,
        })
    }

    /// Builds a patient file (LF line endings, final newline) and checks it by parsing its
    /// rendering: whatever this returns reads back equal. Errors name the source
    /// `<new patient file PID>` and, when the problem is on one line, the line of the
    /// rendered file.
    pub fn new(
        patient_id: &str,
        frequency_hz: u32,
        recordings: Vec<Recording>,
        annotations: Vec<Annotation>,
    ) -> Result<PatientFile, CircorError> {
        let name = format!("<new patient file {}>", snippet(patient_id));
        let invalid = |msg: String| error(&name, None, CircorErrorKind::Invalid(msg));
        let breaks = |s: &str| s.contains(['\n', '\r']);
        for a in &annotations {
            if a.key.is_empty() || a.key.contains(": ") || breaks(&a.key) || breaks(&a.value) {
                return Err(invalid(format!(
                    "the annotation `#{}: {}` cannot be written as one `#Key: value` line",
                    snippet(&a.key),
                    snippet(&a.value)
                )));
            }
        }
        let candidate = PatientFile {
            patient_id: patient_id.to_string(),
            frequency_hz,
            recordings,
            annotations,
            info: PatientInfo::default(),
            line_ending: LineEnding::Lf,
            final_newline: true,
        };
        let parsed = PatientFile::parse_str(&candidate.to_text(), &name)?;
        // A space inside a token shifts columns yet can still parse; compare to catch it.
        if parsed.patient_id != candidate.patient_id
            || parsed.recordings != candidate.recordings
            || parsed.annotations != candidate.annotations
        {
            return Err(invalid(
                "a patient id or file name contains a space or line break".into(),
            ));
        }
        Ok(parsed)
    }

    /// [`PatientFile::new`] with the `#` lines of `info` in the training files' order.
    pub fn from_info(
        patient_id: &str,
        frequency_hz: u32,
        recordings: Vec<Recording>,
        info: &PatientInfo,
    ) -> Result<PatientFile, CircorError> {
        PatientFile::new(patient_id, frequency_hz, recordings, info.to_annotations())
    }

    /// The same file with another line ending. A file whose text has no line terminator
    /// (a lone first line without final newline) keeps `Lf`, which is what parsing such a
    /// text reports.
    pub fn with_line_ending(mut self, ending: LineEnding) -> PatientFile {
        self.line_ending = ending;
        self.normalise();
        self
    }

    fn normalise(&mut self) {
        let lines = 1 + self.recordings.len() + self.annotations.len();
        if lines == 1 && !self.final_newline {
            self.line_ending = LineEnding::Lf;
        }
    }

    /// The file's text, byte for byte what was parsed.
    pub fn to_text(&self) -> String {
        let mut lines = Vec::with_capacity(1 + self.recordings.len() + self.annotations.len());
        lines.push(format!(
            "{} {} {}",
            self.patient_id,
            self.recordings.len(),
            self.frequency_hz
        ));
        for r in &self.recordings {
            let mut l = format!("{} {} {}", r.location, r.header_file, r.wav_file);
            if let Some(tsv) = &r.segmentation_file {
                l.push(' ');
                l.push_str(tsv);
            }
            lines.push(l);
        }
        for a in &self.annotations {
            lines.push(format!("#{}: {}", a.key, a.value));
        }
        join_lines(&lines, self.line_ending, self.final_newline)
    }

    /// Writes [`PatientFile::to_text`] to `path`.
    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), CircorError> {
        let path = path.as_ref();
        std::fs::write(path, self.to_text())
            .map_err(|e| error(&path.display().to_string(), None, CircorErrorKind::Write(e)))
    }

    /// What an entry may see: the file as the validation and test sets ship it. Keeps only
    /// the [`keys::PARTICIPANT_VISIBLE`] lines (Age, Sex, Height, Weight, Pregnancy status,
    /// in file order) and drops the segmentation column; see the module documentation for
    /// the sources of this rule.
    pub fn without_labels(&self) -> PatientFile {
        let i = &self.info;
        let mut view = PatientFile {
            patient_id: self.patient_id.clone(),
            frequency_hz: self.frequency_hz,
            recordings: self
                .recordings
                .iter()
                .map(|r| Recording {
                    segmentation_file: None,
                    ..r.clone()
                })
                .collect(),
            annotations: self
                .annotations
                .iter()
                .filter(|a| a.is_participant_visible())
                .cloned()
                .collect(),
            info: PatientInfo {
                age: i.age,
                sex: i.sex,
                height_cm: i.height_cm,
                weight_kg: i.weight_kg,
                pregnant: i.pregnant,
                ..PatientInfo::default()
            },
            line_ending: self.line_ending,
            final_newline: self.final_newline,
        };
        view.normalise();
        view
    }

    /// Line 1's first token: the patient id (digits; also the file name's root).
    pub fn patient_id(&self) -> &str {
        &self.patient_id
    }

    /// Line 1's sampling frequency in Hz.
    pub fn frequency_hz(&self) -> u32 {
        self.frequency_hz
    }

    /// The recording lines, in file order (their number is line 1's second token).
    pub fn recordings(&self) -> &[Recording] {
        &self.recordings
    }

    /// Every `#Key: value` line, in file order.
    pub fn annotations(&self) -> &[Annotation] {
        &self.annotations
    }

    /// The raw value of the first `#key:` line, untrimmed.
    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.annotations
            .iter()
            .find(|a| a.key == key)
            .map(|a| a.value.as_str())
    }

    /// The typed annotations.
    pub fn info(&self) -> &PatientInfo {
        &self.info
    }

    /// The murmur label, `None` when the file has no `#Murmur:` line.
    pub fn murmur(&self) -> Option<Murmur> {
        self.info.murmur
    }

    /// The outcome label, `None` when the file has no `#Outcome:` line.
    pub fn outcome(&self) -> Option<Outcome> {
        self.info.outcome
    }

    /// True when any line beyond what an entry may see is present (a label, a murmur
    /// annotation, campaign data, an unknown key, or a segmentation file name).
    pub fn has_hidden_content(&self) -> bool {
        self.annotations.iter().any(|a| !a.is_participant_visible())
            || self
                .recordings
                .iter()
                .any(|r| r.segmentation_file.is_some())
    }

    pub fn line_ending(&self) -> LineEnding {
        self.line_ending
    }

    /// Whether the last line ends with a line terminator.
    pub fn final_newline(&self) -> bool {
        self.final_newline
    }
}

fn parse_recording(line: &str) -> Result<Recording, CircorErrorKind> {
    if line.is_empty() {
        return Err(CircorErrorKind::EmptyLine);
    }
    let mut t = line.split(' ');
    let (Some(loc), Some(hea), Some(wav), tsv, None) =
        (t.next(), t.next(), t.next(), t.next(), t.next())
    else {
        return Err(CircorErrorKind::BadRecordingLine {
            found: snippet(line),
        });
    };
    let location = Location::parse(loc).ok_or_else(|| CircorErrorKind::BadLocation {
        found: snippet(loc),
    })?;
    let name = |s: &str, ext: &'static str| {
        if file_name_ok(s, ext) {
            Ok(s.to_string())
        } else {
            Err(CircorErrorKind::BadFileName {
                found: snippet(s),
                ext,
            })
        }
    };
    Ok(Recording {
        location,
        header_file: name(hea, ".hea")?,
        wav_file: name(wav, ".wav")?,
        segmentation_file: tsv.map(|s| name(s, ".tsv")).transpose()?,
    })
}

// ------------------------------------------------------------------------------------------
// Segmentations
// ------------------------------------------------------------------------------------------

/// The wave a segment is annotated as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SegmentState {
    /// 0.
    Unannotated,
    /// 1, the first heart sound.
    S1,
    /// 2.
    Systole,
    /// 3, the second heart sound.
    S2,
    /// 4.
    Diastole,
    /// Any other code, kept as found (never 0..=4: [`SegmentState::from_code`] maps those).
    Other(u32),
}

impl SegmentState {
    pub fn from_code(code: u32) -> SegmentState {
        match code {
            0 => SegmentState::Unannotated,
            1 => SegmentState::S1,
            2 => SegmentState::Systole,
            3 => SegmentState::S2,
            4 => SegmentState::Diastole,
            c => SegmentState::Other(c),
        }
    }

    pub fn code(self) -> u32 {
        match self {
            SegmentState::Unannotated => 0,
            SegmentState::S1 => 1,
            SegmentState::Systole => 2,
            SegmentState::S2 => 3,
            SegmentState::Diastole => 4,
            SegmentState::Other(c) => c,
        }
    }

    /// True for the five documented states.
    pub fn is_known(self) -> bool {
        !matches!(self, SegmentState::Other(_))
    }
}

/// One line of a segmentation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    pub start_s: f64,
    pub end_s: f64,
    pub state: SegmentState,
}

/// Something odd but readable in a segmentation. Lines are 1-based; line n is segment n-1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SegmentAnomaly {
    /// A state code outside 0..=4.
    UnknownState { line: usize, code: u32 },
    /// A segment that starts where it ends.
    ZeroLength { line: usize, at_s: f64 },
    /// A segment that starts before the previous one ends.
    Overlap {
        line: usize,
        start_s: f64,
        previous_end_s: f64,
    },
}

impl fmt::Display for SegmentAnomaly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            SegmentAnomaly::UnknownState { line, code } => {
                write!(f, "line {line}: unknown state {code} (expected 0 to 4)")
            }
            SegmentAnomaly::ZeroLength { line, at_s } => {
                write!(f, "line {line}: zero-length segment at {at_s} s")
            }
            SegmentAnomaly::Overlap {
                line,
                start_s,
                previous_end_s,
            } => write!(
                f,
                "line {line}: starts at {start_s} s, before the previous segment ends at \
                 {previous_end_s} s"
            ),
        }
    }
}

/// A parsed `.tsv` segmentation.
#[derive(Debug, Clone, PartialEq)]
pub struct Segmentation {
    segments: Vec<Segment>,
    line_ending: LineEnding,
    final_newline: bool,
}

fn parse_time(s: &str, column: &'static str) -> Result<f64, CircorErrorKind> {
    // Rust's float syntax also takes `inf` and `NaN`; the range check refuses them.
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(CircorErrorKind::BadTime {
            column,
            found: snippet(s),
        }),
    }
}

impl Segmentation {
    /// Reads and parses a segmentation; errors name the path.
    pub fn read(path: impl AsRef<Path>) -> Result<Segmentation, CircorError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let bytes =
            std::fs::read(path).map_err(|e| error(&name, None, CircorErrorKind::Read(e)))?;
        Segmentation::parse(&bytes, &name)
    }

    /// Parses the bytes of a segmentation; `source` names them in errors. An empty file is
    /// an empty segmentation.
    pub fn parse(bytes: &[u8], source: &str) -> Result<Segmentation, CircorError> {
        let Lines {
            lines,
            ending,
            final_newline,
        } = split_lines(utf8(bytes, source)?, source)?;
        let mut segments = Vec::with_capacity(lines.len());
        for (i, line) in lines.iter().enumerate() {
            let seg = parse_segment(line).map_err(|k| error(source, Some(i + 1), k))?;
            segments.push(seg);
        }
        Ok(Segmentation {
            segments,
            line_ending: ending,
            final_newline,
        })
    }

    /// Builds a segmentation (LF line endings, final newline), with the checks parsing
    /// applies; errors name the source `<new segmentation>` and the line the segment would
    /// have. `Other(0..=4)` states are normalised to the named ones.
    pub fn new(segments: Vec<Segment>) -> Result<Segmentation, CircorError> {
        let name = "<new segmentation>";
        let mut out = Vec::with_capacity(segments.len());
        for (i, s) in segments.into_iter().enumerate() {
            let at = |kind| error(name, Some(i + 1), kind);
            for (x, column) in [(s.start_s, "start"), (s.end_s, "end")] {
                if !(x.is_finite() && x >= 0.0) {
                    let found = x.to_string();
                    return Err(at(CircorErrorKind::BadTime { column, found }));
                }
            }
            if s.end_s < s.start_s {
                let (start_s, end_s) = (s.start_s, s.end_s);
                return Err(at(CircorErrorKind::EndBeforeStart { start_s, end_s }));
            }
            out.push(Segment {
                state: SegmentState::from_code(s.state.code()),
                ..s
            });
        }
        Ok(Segmentation {
            // An empty segmentation is the empty text, which has no final newline.
            final_newline: !out.is_empty(),
            segments: out,
            line_ending: LineEnding::Lf,
        })
    }

    /// The same segmentation with another line ending. A text without any line terminator
    /// (empty, or one line without final newline) keeps `Lf`, as parsing it reports.
    pub fn with_line_ending(mut self, ending: LineEnding) -> Segmentation {
        let terminated =
            self.segments.len() > 1 || (self.final_newline && !self.segments.is_empty());
        self.line_ending = if terminated { ending } else { LineEnding::Lf };
        self
    }

    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    pub fn line_ending(&self) -> LineEnding {
        self.line_ending
    }

    /// Whether the last line ends with a line terminator (`50782_MV_1.tsv`'s does not).
    pub fn final_newline(&self) -> bool {
        self.final_newline
    }

    /// The oddities a caller may want to skip or report, in line order.
    pub fn anomalies(&self) -> Vec<SegmentAnomaly> {
        let mut out = Vec::new();
        let mut previous_end: Option<f64> = None;
        for (i, s) in self.segments.iter().enumerate() {
            let line = i + 1;
            if let SegmentState::Other(code) = s.state {
                out.push(SegmentAnomaly::UnknownState { line, code });
            }
            if s.end_s == s.start_s {
                out.push(SegmentAnomaly::ZeroLength {
                    line,
                    at_s: s.start_s,
                });
            }
            if let Some(previous_end_s) = previous_end.filter(|&e| s.start_s < e) {
                out.push(SegmentAnomaly::Overlap {
                    line,
                    start_s: s.start_s,
                    previous_end_s,
                });
            }
            previous_end = Some(s.end_s);
        }
        out
    }

    /// The text: times in Rust's shortest round-trip decimal form, which is how every real
    /// file writes them, so the real files render back byte for byte. A file with other
    /// spellings (`0.50`, `1e-3`) renders to the same values, not the same bytes.
    pub fn to_text(&self) -> String {
        let lines: Vec<String> = self
            .segments
            .iter()
            .map(|s| format!("{}\t{}\t{}", s.start_s, s.end_s, s.state.code()))
            .collect();
        if lines.is_empty() {
            return String::new();
        }
        join_lines(&lines, self.line_ending, self.final_newline)
    }

    /// Writes [`Segmentation::to_text`] to `path`.
    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), CircorError> {
        let path = path.as_ref();
        std::fs::write(path, self.to_text())
            .map_err(|e| error(&path.display().to_string(), None, CircorErrorKind::Write(e)))
    }
}

fn parse_segment(line: &str) -> Result<Segment, CircorErrorKind> {
    if line.is_empty() {
        return Err(CircorErrorKind::EmptyLine);
    }
    let mut f = line.split('\t');
    let (Some(a), Some(b), Some(c), None) = (f.next(), f.next(), f.next(), f.next()) else {
        return Err(CircorErrorKind::ColumnCount {
            found: line.split('\t').count(),
        });
    };
    let start_s = parse_time(a, "start")?;
    let end_s = parse_time(b, "end")?;
    let code = if !c.is_empty() && c.bytes().all(|b| b.is_ascii_digit()) {
        c.parse::<u32>().ok()
    } else {
        None
    };
    let Some(code) = code else {
        return Err(CircorErrorKind::BadState { found: snippet(c) });
    };
    if end_s < start_s {
        return Err(CircorErrorKind::EndBeforeStart { start_s, end_s });
    }
    Ok(Segment {
        start_s,
        end_s,
        state: SegmentState::from_code(code),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const P2530: &str = "2530 4 4000\n\
AV 2530_AV.hea 2530_AV.wav 2530_AV.tsv\n\
PV 2530_PV.hea 2530_PV.wav 2530_PV.tsv\n\
TV 2530_TV.hea 2530_TV.wav 2530_TV.tsv\n\
MV 2530_MV.hea 2530_MV.wav 2530_MV.tsv\n\
#Age: Child\n\
#Sex: Female\n\
#Height: 98.0\n\
#Weight: 15.9\n\
#Pregnancy status: False\n\
#Murmur: Absent\n\
#Murmur locations: nan\n\
#Most audible location: nan\n\
#Systolic murmur timing: nan\n\
#Systolic murmur shape: nan\n\
#Systolic murmur grading: nan\n\
#Systolic murmur pitch: nan\n\
#Systolic murmur quality: nan\n\
#Diastolic murmur timing: nan\n\
#Diastolic murmur shape: nan\n\
#Diastolic murmur grading: nan\n\
#Diastolic murmur pitch: nan\n\
#Diastolic murmur quality: nan\n\
#Outcome: Abnormal\n\
#Campaign: CC2015\n\
#Additional ID: nan\n";

    fn perr(text: &str) -> CircorError {
        PatientFile::parse(text.as_bytes(), "p.txt").unwrap_err()
    }

    fn serr(text: &str) -> CircorError {
        Segmentation::parse(text.as_bytes(), "s.tsv").unwrap_err()
    }

    #[test]
    fn parses_and_renders_the_documented_example() {
        let p = PatientFile::parse(P2530.as_bytes(), "2530.txt").unwrap();
        assert_eq!(p.patient_id(), "2530");
        assert_eq!(p.frequency_hz(), 4000);
        assert_eq!(p.recordings().len(), 4);
        assert_eq!(p.recordings()[3].location, Location::new(Site::Mv));
        assert_eq!(p.recordings()[0].record_name(), "2530_AV");
        assert_eq!(
            p.recordings()[0],
            Recording::named("2530", Site::Av, None, true)
        );
        let i = p.info();
        assert_eq!(i.age, Some(AgeGroup::Child));
        assert_eq!(i.sex, Some(Sex::Female));
        assert_eq!(i.height_cm, Some(98.0));
        assert_eq!(i.weight_kg, Some(15.9));
        assert_eq!(i.pregnant, Some(false));
        assert_eq!(p.murmur(), Some(Murmur::Absent));
        assert_eq!(p.outcome(), Some(Outcome::Abnormal));
        assert_eq!(i.campaign, Some(Campaign::Cc2015));
        assert!(i.systolic.is_empty() && i.diastolic.is_empty());
        assert_eq!(p.annotations().len(), 21);
        assert_eq!(p.annotation("Additional ID"), Some("nan"));
        assert_eq!(p.to_text(), P2530);
        assert!(p.has_hidden_content());
        // The typed view renders back to the same lines.
        assert_eq!(i.to_annotations(), p.annotations());
    }

    #[test]
    fn crlf_and_missing_final_newline_round_trip() {
        let crlf = P2530.replace('\n', "\r\n");
        let p = PatientFile::parse(crlf.as_bytes(), "c.txt").unwrap();
        assert_eq!(p.line_ending(), LineEnding::CrLf);
        assert_eq!(p.to_text(), crlf);
        let cut = P2530.trim_end_matches('\n');
        let p = PatientFile::parse(cut.as_bytes(), "c.txt").unwrap();
        assert!(!p.final_newline());
        assert_eq!(p.to_text(), cut);
    }

    #[test]
    fn without_labels_keeps_only_the_demographics() {
        let p = PatientFile::parse(P2530.as_bytes(), "2530.txt").unwrap();
        let v = p.without_labels();
        let want = "2530 4 4000\n\
AV 2530_AV.hea 2530_AV.wav\n\
PV 2530_PV.hea 2530_PV.wav\n\
TV 2530_TV.hea 2530_TV.wav\n\
MV 2530_MV.hea 2530_MV.wav\n\
#Age: Child\n\
#Sex: Female\n\
#Height: 98.0\n\
#Weight: 15.9\n\
#Pregnancy status: False\n";
        assert_eq!(v.to_text(), want);
        assert!(!v.has_hidden_content());
        assert_eq!(v.murmur(), None);
        assert_eq!(v.outcome(), None);
        // The stripped file is a valid file, equal to what parsing its text gives.
        assert_eq!(PatientFile::parse_str(want, "v.txt").unwrap(), v);
        // Unknown keys are dropped too (whitelist, not blacklist).
        let extra = P2530.replace("#Age: Child\n", "#Age: Child\n#Notes: murmur heard\n");
        let p = PatientFile::parse_str(&extra, "x.txt").unwrap();
        assert_eq!(p.annotation("Notes"), Some("murmur heard"));
        assert_eq!(p.without_labels().to_text(), want);
    }

    #[test]
    fn unlabelled_files_parse_with_no_labels() {
        let text = "9 1 4000\nMV 9_MV.hea 9_MV.wav\n#Age: Infant\n#Sex: Male\n";
        let p = PatientFile::parse_str(text, "9.txt").unwrap();
        assert_eq!((p.murmur(), p.outcome()), (None, None));
        assert_eq!(p.recordings()[0].segmentation_file, None);
        assert_eq!(p.to_text(), text);
    }

    #[test]
    fn values_match_like_the_helper_code() {
        let text = P2530
            .replace("#Age: Child", "#Age: young Adult ")
            .replace("#Murmur: Absent", "#Murmur:  present")
            .replace("#Pregnancy status: False", "#Pregnancy status: TRUE");
        let p = PatientFile::parse_str(&text, "p.txt").unwrap();
        assert_eq!(p.info().age, Some(AgeGroup::YoungAdult));
        assert_eq!(p.murmur(), Some(Murmur::Present));
        assert_eq!(p.info().pregnant, Some(true));
        assert_eq!(p.annotation("Murmur"), Some(" present"));
        assert_eq!(p.to_text(), text);
    }

    #[test]
    fn murmur_details_are_typed() {
        let text = P2530
            .replace("#Murmur locations: nan", "#Murmur locations: MV+Phc+TV")
            .replace("#Most audible location: nan", "#Most audible location: MV")
            .replace(
                "#Systolic murmur timing: nan",
                "#Systolic murmur timing: Holosystolic",
            )
            .replace(
                "#Systolic murmur shape: nan",
                "#Systolic murmur shape: Crescendo",
            )
            .replace(
                "#Systolic murmur grading: nan",
                "#Systolic murmur grading: III/VI",
            )
            .replace(
                "#Diastolic murmur timing: nan",
                "#Diastolic murmur timing: Early-diastolic",
            )
            .replace(
                "#Diastolic murmur grading: nan",
                "#Diastolic murmur grading: I/IV",
            )
            .replace(
                "#Diastolic murmur quality: nan",
                "#Diastolic murmur quality: Blowing",
            );
        let p = PatientFile::parse_str(&text, "p.txt").unwrap();
        let i = p.info();
        assert_eq!(
            i.murmur_locations,
            Some(vec![Site::Mv, Site::Phc, Site::Tv])
        );
        assert_eq!(i.most_audible_location, Some(Site::Mv));
        assert_eq!(i.systolic.timing, Some(SystolicTiming::Holo));
        assert_eq!(i.systolic.shape, Some(MurmurShape::Crescendo));
        assert_eq!(i.systolic.grading, Some(SystolicGrade::Grade3));
        assert_eq!(i.diastolic.timing, Some(DiastolicTiming::Early));
        assert_eq!(i.diastolic.grading, Some(DiastolicGrade::Grade1));
        assert_eq!(i.diastolic.quality, Some(Quality::Blowing));
        assert_eq!(i.diastolic.pitch, None);
        assert_eq!(i.to_annotations(), p.annotations());
    }

    #[test]
    fn patient_errors_name_file_line_and_problem() {
        let msg = |t: &str| perr(t).to_string();
        assert_eq!(msg(""), "p.txt: the file is empty");
        assert_eq!(
            msg("2530 4\n"),
            "p.txt: line 1: expected `<patient id> <number of recordings> <sampling \
             frequency>` separated by single spaces, found \"2530 4\""
        );
        assert_eq!(
            msg("25x0 0 4000\n"),
            "p.txt: line 1: the patient id \"25x0\" is not a string of digits"
        );
        assert!(msg("1 04 4000\n").contains("number of recordings \"04\""));
        assert_eq!(
            msg("1 0 0\n"),
            "p.txt: line 1: the sampling frequency is 0 Hz"
        );
        let four = P2530.replacen("2530 4 4000", "2530 5 4000", 1);
        assert_eq!(
            msg(&four),
            "p.txt: line 6: line 1 declares 5 recording(s) but 4 recording line(s) follow"
        );
        let three = P2530.replacen("2530 4 4000", "2530 3 4000", 1);
        assert_eq!(perr(&three).line, Some(5));
        let bad_loc = P2530.replacen("TV 2530_TV.hea", "XV 2530_TV.hea", 1);
        let e = perr(&bad_loc);
        assert_eq!(e.line, Some(4));
        assert!(
            e.to_string()
                .contains("unknown auscultation location \"XV\""),
            "{e}"
        );
        let climb = P2530.replacen("2530_PV.wav", "../x.wav", 1);
        assert_eq!(
            msg(&climb),
            "p.txt: line 3: \"../x.wav\" is not a plain `.wav` file name"
        );
        let two_spaces = P2530.replacen("AV 2530_AV.hea", "AV  2530_AV.hea", 1);
        assert!(matches!(
            perr(&two_spaces).kind,
            CircorErrorKind::BadRecordingLine { .. }
        ));
        let bad_age = P2530.replacen("#Age: Child", "#Age: Toddler", 1);
        assert_eq!(
            msg(&bad_age),
            "p.txt: line 6: `#Age:` has the value \"Toddler\"; expected Neonate, Infant, \
             Child, Adolescent, Young adult or nan"
        );
        let nan_label = P2530.replacen("#Murmur: Absent", "#Murmur: nan", 1);
        assert_eq!(
            msg(&nan_label),
            "p.txt: line 11: `#Murmur:` has the value \"nan\"; expected Present, Unknown or \
             Absent"
        );
        let height = P2530.replacen("#Height: 98.0", "#Height: -3", 1);
        assert!(msg(&height).contains("line 8: `#Height:` has the value \"-3\""));
        let dup = P2530.replacen("#Campaign: CC2015", "#Outcome: Normal", 1);
        assert_eq!(
            msg(&dup),
            "p.txt: line 25: `#Outcome:` appears a second time (first on line 24)"
        );
        let no_colon = P2530.replacen("#Sex: Female", "#Sex:Female", 1);
        assert_eq!(
            msg(&no_colon),
            "p.txt: line 7: expected a `#Key: value` line, found \"#Sex:Female\""
        );
        let blank = P2530.replacen("#Sex: Female\n", "\n", 1);
        assert_eq!(msg(&blank), "p.txt: line 7: empty line");
        let mixed = P2530.replacen("#Sex: Female\n", "#Sex: Female\r\n", 1);
        assert_eq!(
            msg(&mixed),
            "p.txt: line 7: this line ends in CRLF but line 1 ends in LF"
        );
        let e = PatientFile::parse(b"1 0 4000\n#Age: \xff\n", "b.txt").unwrap_err();
        assert_eq!(
            e.to_string(),
            "b.txt: line 2: not UTF-8 text: invalid byte at offset 15"
        );
        let long = format!("{} 1 4000", "9".repeat(10)) + &" x".repeat(200);
        assert!(msg(&long).len() < 300);
    }

    #[test]
    fn builder_validates_and_round_trips() {
        let info = PatientInfo {
            age: Some(AgeGroup::Infant),
            sex: Some(Sex::Male),
            height_cm: Some(61.0),
            weight_kg: Some(2.8160000000000003),
            pregnant: Some(false),
            murmur: Some(Murmur::Present),
            murmur_locations: Some(vec![Site::Av, Site::Mv]),
            most_audible_location: Some(Site::Av),
            systolic: SystolicMurmur {
                timing: Some(SystolicTiming::Early),
                shape: Some(MurmurShape::Decrescendo),
                grading: Some(SystolicGrade::Grade1),
                pitch: Some(Pitch::Low),
                quality: Some(Quality::Blowing),
            },
            diastolic: DiastolicMurmur::default(),
            outcome: Some(Outcome::Normal),
            campaign: Some(Campaign::Cc2014),
            additional_id: Some("68222".into()),
        };
        let recs = vec![
            Recording::named("77", Site::Av, None, true),
            Recording::named("77", Site::Mv, Some(2), true),
        ];
        let p = PatientFile::from_info("77", 4000, recs.clone(), &info).unwrap();
        assert_eq!(p.info(), &info);
        assert!(p.to_text().contains("\n#Weight: 2.8160000000000003\n"));
        assert!(
            p.to_text()
                .contains("\nMV 77_MV_2.hea 77_MV_2.wav 77_MV_2.tsv\n")
        );
        assert_eq!(PatientFile::parse_str(&p.to_text(), "77.txt").unwrap(), p);
        let crlf = p.clone().with_line_ending(LineEnding::CrLf);
        assert_eq!(crlf.to_text(), p.to_text().replace('\n', "\r\n"));

        // Injection through a value or a name is refused, not written.
        let sneaky = vec![Annotation::new("Age", "Child\n#Murmur: Present")];
        assert!(PatientFile::new("77", 4000, vec![], sneaky).is_err());
        let mut spaced = recs.clone();
        spaced[0].wav_file = "a.wav b.tsv".into();
        spaced[0].segmentation_file = None;
        let e = PatientFile::new("77", 4000, spaced, vec![]).unwrap_err();
        assert!(e.to_string().contains("contains a space"), "{e}");
        let bad = PatientInfo {
            height_cm: Some(f64::NAN),
            ..PatientInfo::default()
        };
        let p = PatientFile::from_info("77", 4000, vec![], &bad).unwrap();
        assert_eq!(
            p.info().height_cm,
            None,
            "NaN is written as nan, which means not given"
        );
        let bad = PatientInfo {
            height_cm: Some(-1.0),
            ..PatientInfo::default()
        };
        let e = PatientFile::from_info("77", 4000, vec![], &bad).unwrap_err();
        assert_eq!(e.file, "<new patient file 77>");
        assert_eq!(e.line, Some(4));
    }

    #[test]
    fn locations_parse_exactly() {
        assert_eq!(
            Location::parse("AV_1"),
            Some(Location {
                site: Site::Av,
                index: Some(1)
            })
        );
        assert_eq!(
            Location::parse("Phc").map(|l| l.to_string()),
            Some("Phc".into())
        );
        for bad in ["av", "AV_", "AV_0", "AV_01", "PHC", "AV_1_2", ""] {
            assert_eq!(Location::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn segmentations_parse_and_render() {
        let text = "0\t0.242\t0\n0.242\t0.400176\t1\n0.4\t0.5\t2\n0.5\t0.6\t3\n0.6\t23.6\t4\n";
        let s = Segmentation::parse(text.as_bytes(), "s.tsv").unwrap();
        assert_eq!(s.segments().len(), 5);
        assert_eq!(
            s.segments()[1],
            Segment {
                start_s: 0.242,
                end_s: 0.400176,
                state: SegmentState::S1
            }
        );
        // 0.4 < 0.400176: the overlap is reported, not refused.
        assert_eq!(
            s.anomalies(),
            vec![SegmentAnomaly::Overlap {
                line: 3,
                start_s: 0.4,
                previous_end_s: 0.400176
            }]
        );
        assert_eq!(s.to_text(), text);
        let crlf = text.replace('\n', "\r\n");
        assert_eq!(
            Segmentation::parse(crlf.as_bytes(), "c.tsv")
                .unwrap()
                .to_text(),
            crlf
        );
    }

    #[test]
    fn the_odd_50782_mv_1_line_is_read_and_flagged() {
        let s = Segmentation::parse(b"0\t0\t28", "50782_MV_1.tsv").unwrap();
        assert_eq!(
            s.segments(),
            &[Segment {
                start_s: 0.0,
                end_s: 0.0,
                state: SegmentState::Other(28)
            }]
        );
        assert!(!s.final_newline());
        assert!(!s.segments()[0].state.is_known());
        let a = s.anomalies();
        assert_eq!(
            a,
            vec![
                SegmentAnomaly::UnknownState { line: 1, code: 28 },
                SegmentAnomaly::ZeroLength { line: 1, at_s: 0.0 }
            ]
        );
        assert_eq!(
            a[0].to_string(),
            "line 1: unknown state 28 (expected 0 to 4)"
        );
        assert_eq!(s.to_text(), "0\t0\t28");
    }

    #[test]
    fn segmentation_errors_name_file_line_and_problem() {
        assert_eq!(
            serr("0\t1\t0\n1\t2\n").to_string(),
            "s.tsv: line 2: 2 tab-separated field(s); expected 3 (`start_s<TAB>end_s<TAB>state`)"
        );
        assert_eq!(
            serr("0 1 0\n").to_string(),
            "s.tsv: line 1: 1 tab-separated field(s); expected 3 (`start_s<TAB>end_s<TAB>state`)"
        );
        assert_eq!(
            serr("0\tx\t0\n").to_string(),
            "s.tsv: line 1: the end time \"x\" is not a finite, non-negative number of seconds"
        );
        assert!(serr("-1\t0\t0\n").to_string().contains("start time \"-1\""));
        assert!(serr("0\tinf\t0\n").to_string().contains("end time \"inf\""));
        assert_eq!(
            serr("0\t1\t2.0\n").to_string(),
            "s.tsv: line 1: the state \"2.0\" is not a whole number"
        );
        assert!(serr("0\t1\t-1\n").to_string().contains("state \"-1\""));
        assert_eq!(
            serr("0\t1\t0\n2\t1.5\t1\n").to_string(),
            "s.tsv: line 2: the segment ends at 1.5 s, before it starts at 2 s"
        );
        assert_eq!(serr("0\t1\t0\n\n").to_string(), "s.tsv: line 2: empty line");
        assert!(matches!(
            serr("0\t1\t0\r\n1\t2\t0\n").kind,
            CircorErrorKind::MixedLineEndings { .. }
        ));
        let e = Segmentation::parse(b"0\t1\t0\xff", "s.tsv").unwrap_err();
        assert!(
            matches!(e.kind, CircorErrorKind::NotText { offset: 5 }),
            "{e}"
        );
        assert_eq!(
            Segmentation::parse(b"", "e.tsv").unwrap().segments().len(),
            0
        );
    }

    #[test]
    fn segmentation_builder() {
        let s = Segmentation::new(vec![Segment {
            start_s: 0.0,
            end_s: 0.5,
            state: SegmentState::Other(3),
        }])
        .unwrap();
        assert_eq!(s.segments()[0].state, SegmentState::S2);
        assert_eq!(s.to_text(), "0\t0.5\t3\n");
        let e = Segmentation::new(vec![Segment {
            start_s: 1.0,
            end_s: 0.5,
            state: SegmentState::S1,
        }])
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "<new segmentation>: line 1: the segment ends at 0.5 s, before it starts at 1 s"
        );
        assert!(
            Segmentation::new(vec![Segment {
                start_s: f64::NAN,
                end_s: 0.5,
                state: SegmentState::S1,
            }])
            .is_err()
        );
    }

    #[test]
    fn a_file_that_cannot_be_read_is_named_with_its_error_once() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.txt");
        let io = std::fs::read(&missing).unwrap_err();
        let e = PatientFile::read(&missing).unwrap_err();
        assert!(matches!(e.kind, CircorErrorKind::Read(_)));
        crate::test_util::assert_io_error_shown_once(&e, &io);
        let e = Segmentation::read(&missing).unwrap_err();
        crate::test_util::assert_io_error_shown_once(&e, &io);
    }

    fn token() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("AV".to_string()),
            Just("Phc".to_string()),
            Just("MV_2".to_string()),
            Just("1_AV.hea".to_string()),
            Just("1_AV.wav".to_string()),
            Just("1_AV.tsv".to_string()),
            "[0-9]{1,3}",
            "[A-Za-z./_ -]{0,6}",
        ]
    }

    fn line() -> impl Strategy<Value = String> {
        prop_oneof![
            proptest::collection::vec(token(), 0..5).prop_map(|t| t.join(" ")),
            (
                proptest::sample::select(keys::STANDARD_ORDER.to_vec()),
                prop_oneof![
                    Just("nan".to_string()),
                    Just("Present".to_string()),
                    Just("CC2014".to_string()),
                    "[ -~]{0,8}"
                ]
            )
                .prop_map(|(k, v)| format!("#{k}: {v}")),
            "[ -~\t]{0,12}",
        ]
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            if let Ok(p) = PatientFile::parse(&bytes, "fuzz.txt") {
                prop_assert_eq!(p.to_text().into_bytes(), bytes.clone());
            }
            if let Ok(s) = Segmentation::parse(&bytes, "fuzz.tsv") {
                prop_assert_eq!(Segmentation::parse(s.to_text().as_bytes(), "again").unwrap(), s);
            }
        }

        /// Near-valid patient files: whatever parses renders back byte for byte, and its
        /// participant view parses back equal.
        #[test]
        fn patient_files_round_trip(
            n in 0usize..3,
            lines in proptest::collection::vec(line(), 0..8),
            crlf in any::<bool>(),
            final_newline in any::<bool>(),
        ) {
            let mut all = vec![format!("12 {n} 4000")];
            all.extend(lines);
            let text = join_lines(&all, if crlf { LineEnding::CrLf } else { LineEnding::Lf }, final_newline);
            if let Ok(p) = PatientFile::parse_str(&text, "prop.txt") {
                prop_assert_eq!(p.to_text(), text);
                let v = p.without_labels();
                prop_assert!(!v.has_hidden_content());
                prop_assert_eq!(PatientFile::parse_str(&v.to_text(), "v.txt").unwrap(), v);
            }
        }

        #[test]
        fn segmentations_round_trip(
            rows in proptest::collection::vec((0.0f64..100.0, 0.0f64..2.0, 0u32..40), 0..20),
        ) {
            let segments: Vec<Segment> = rows
                .iter()
                .map(|&(s, d, c)| Segment { start_s: s, end_s: s + d, state: SegmentState::from_code(c) })
                .collect();
            let s = Segmentation::new(segments).unwrap();
            let text = s.to_text();
            let back = Segmentation::parse(text.as_bytes(), "prop.tsv").unwrap();
            prop_assert_eq!(&back, &s);
            prop_assert_eq!(back.to_text(), text);
        }

        #[test]
        fn arbitrary_tsv_text_never_panics(text in "[0-9.\t\r\nainfe+-]{0,80}") {
            if let Ok(s) = Segmentation::parse(text.as_bytes(), "fuzz.tsv") {
                let again = Segmentation::parse(s.to_text().as_bytes(), "again.tsv").unwrap();
                prop_assert_eq!(again, s);
            }
        }
    }
}
