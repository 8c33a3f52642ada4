//! Patient files (`<pid>.txt`): recording lines and `#Key: value` lines, parsed, built,
//! rendered byte for byte, and stripped to what a participant may see.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;

use super::keys;
use super::values::{Murmur, Outcome, PatientInfo, Site};
use super::{
    CircorError, CircorErrorKind, LineEnding, Lines, canonical_u32, error, join_lines, snippet,
    split_lines, utf8,
};

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
