//! Heart-sound segmentations (`<pid>_<loc>[_n].tsv`): `start_s<TAB>end_s<TAB>state` lines,
//! parsed, built, rendered, and their tolerated anomalies listed.

use std::fmt;
use std::path::Path;

use super::{
    CircorError, CircorErrorKind, LineEnding, Lines, error, join_lines, snippet, split_lines, utf8,
};

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
