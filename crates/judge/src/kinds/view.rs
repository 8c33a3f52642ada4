//! What the record viewer shows of one quiz record, as plain data: facts, an optional
//! table and an optional plot of signals with labelled bands. Each kind reads its own
//! data and outputs into a [`RecordView`] ([`super::Kind::record_view`]); the web site
//! draws any `RecordView` the same way, so a new kind needs no drawing code.
//!
//! What this is not: a drawing (no SVG, no pixels beyond the column count the drawer
//! asks for) nor a permission check (who may look is the site's rule).

use std::path::{Path, PathBuf};

/// One quiz record as the viewer shows it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecordView {
    /// Label → value pairs, in order (the truth, the entry's answer, the length).
    pub facts: Vec<Fact>,
    /// Sentences above the table and plot.
    pub notes: Vec<String>,
    /// Something the reader must know is wrong (no usable output, no session log).
    pub problems: Vec<String>,
    pub table: Option<Table>,
    pub plot: Option<Plot>,
}

/// A fact; `verdict` marks the entry's answer right (`true`) or wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct Fact {
    pub label: String,
    pub value: String,
    pub verdict: Option<bool>,
}

impl Fact {
    pub fn new(label: impl Into<String>, value: impl Into<String>) -> Fact {
        Fact {
            label: label.into(),
            value: value.into(),
            verdict: None,
        }
    }

    pub fn judged(mut self, right: bool) -> Fact {
        self.verdict = Some(right);
        self
    }
}

/// A table: a header row and rows of cells; the first cell of a row heads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub caption: Option<String>,
    pub head: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

/// A table cell: its text, whether it is a number (right-aligned), a verdict, and a
/// muted remark after the text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cell {
    pub text: String,
    pub numeric: bool,
    pub verdict: Option<bool>,
    pub remark: Option<String>,
}

impl Cell {
    pub fn text(text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            ..Cell::default()
        }
    }

    pub fn number(text: impl Into<String>) -> Cell {
        Cell {
            numeric: true,
            ..Cell::text(text)
        }
    }

    /// A verdict alone, spelled "right" or "wrong" (or `label` when given).
    pub fn verdict(right: bool, label: Option<&str>) -> Cell {
        let text = label.unwrap_or(if right { "right" } else { "wrong" });
        Cell {
            verdict: Some(right),
            ..Cell::text(text)
        }
    }
}

/// Signals over a time window the reader can zoom, with rows of labelled intervals.
#[derive(Debug, Clone, PartialEq)]
pub struct Plot {
    /// The window shown and the record's length, in seconds.
    pub from: f64,
    pub to: f64,
    pub duration: f64,
    pub traces: Vec<Trace>,
    /// Rows of intervals under the traces (the truth's, the entry's).
    pub bands: Vec<Bands>,
    /// The band row (index into `bands`) also shaded behind every trace.
    pub shade: Option<usize>,
    /// One sentence saying what the plot shows (its accessible name).
    pub summary: String,
    /// What the colours and rows mean, after the summary.
    pub legend: String,
}

/// One signal in the window, decimated to one (min, max) pair per column (`None`: no
/// finite sample in it).
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    pub label: String,
    pub columns: Vec<Option<(f64, f64)>>,
    /// A thinner line (dense signals such as heart sounds).
    pub thin: bool,
}

/// Whose intervals a band row holds: the reference's or the entry's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Truth,
    Entry,
}

/// A row of intervals, as fractions `[a, b]` of the window (0 = `from`, 1 = `to`),
/// already clipped to it.
#[derive(Debug, Clone, PartialEq)]
pub struct Bands {
    pub label: String,
    pub source: Source,
    pub spans: Vec<(f64, f64)>,
}

/// What the viewer asks of a record: its window and how many columns to draw.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ask {
    /// Seconds from the record's start, as the reader asked (clamped by the kind).
    pub from: Option<f64>,
    pub to: Option<f64>,
    /// Columns per trace.
    pub columns: usize,
}

/// The time window asked for, in seconds, clamped to a record of `len` frames at `fs`,
/// and the frames it covers: `(from, to, first frame, end frame)`.
pub fn window(ask: Ask, fs: f64, len: u64) -> (f64, f64, u64, u64) {
    let dur = len as f64 / fs;
    let from = ask
        .from
        .filter(|f| f.is_finite())
        .unwrap_or(0.0)
        .clamp(0.0, dur);
    let to = ask
        .to
        .filter(|t| t.is_finite())
        .unwrap_or(dur)
        .clamp(from + 1.0 / fs, dur.max(from + 1.0 / fs));
    let s0 = (from * fs) as u64;
    let s1 = ((to * fs).ceil() as u64).min(len).max(s0 + 1);
    (from, to, s0, s1)
}

/// One signal decimated: per column the min and max of its finite samples.
pub fn columns(values: &[f64], cols: usize) -> Vec<Option<(f64, f64)>> {
    let n = values.len();
    (0..cols)
        .map(|c| {
            let (a, b) = (
                c * n / cols,
                ((c + 1) * n / cols).max(c * n / cols + 1).min(n),
            );
            values.get(a..b).and_then(|run| {
                run.iter()
                    .filter(|v| v.is_finite())
                    .fold(None, |acc, &v| match acc {
                        None => Some((v, v)),
                        Some((lo, hi)) => Some((f64::min(lo, v), f64::max(hi, v))),
                    })
            })
        })
        .collect()
}

/// Intervals `[s, e]` (frames) inside the window `[w0, w1)`, as fractions of it.
pub fn spans(intervals: &[(f64, f64)], w0: f64, w1: f64) -> Vec<(f64, f64)> {
    let width = (w1 - w0).max(1.0);
    intervals
        .iter()
        .filter(|(s, e)| *e >= w0 && *s < w1)
        .map(|&(s, e)| ((s.max(w0) - w0) / width, (e.min(w1) - w0) / width))
        .collect()
}

/// Traces of a WFDB record's signals over a window, each named by its description (or
/// "lead N") and units.
pub fn wfdb_traces(
    rec: &formats::wfdb::Record,
    s0: u64,
    s1: u64,
    cols: usize,
) -> Result<Vec<Trace>, String> {
    let sig = rec
        .read_physical(&formats::wfdb::ReadOptions {
            from: s0,
            to: Some(s1),
            signals: None,
        })
        .map_err(|e| e.to_string())?;
    Ok(sig
        .signals
        .iter()
        .map(|p| Trace {
            label: format!(
                "{} ({})",
                p.name
                    .clone()
                    .unwrap_or_else(|| format!("lead {}", p.index + 1)),
                p.units
            ),
            columns: columns(&p.values, cols),
            thin: false,
        })
        .collect())
}

/// A length in seconds for people: `8.0 s`, `42 s`, `3 min 5 s`, `1 h 2 min`.
pub fn duration(s: f64) -> String {
    if !s.is_finite() || s < 0.0 {
        return "—".into();
    }
    if s < 10.0 {
        return format!("{s:.1} s");
    }
    let s = s.round() as u64;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, (s % 3600) / 60),
    }
}

/// A number for people with at most `decimals` decimals, trailing zeros dropped (`0.61`,
/// `12`); "—" for none (one wording for the whole site and the views the kinds make).
pub fn number(v: Option<f64>, decimals: usize) -> String {
    match v {
        None => "—".into(),
        Some(v) if !v.is_finite() => format!("{v}"),
        Some(v) => {
            let s = format!("{v:.decimals$}");
            if s.contains('.') {
                s.trim_end_matches('0').trim_end_matches('.').to_owned()
            } else {
                s
            }
        }
    }
}

/// A record, patient or subject name that stays inside its folder.
pub fn plain_name(name: &str, what: &str) -> Result<(), String> {
    if name.is_empty() || name.contains('/') || name.contains("..") {
        return Err(format!("{what} name {name:?}"));
    }
    Ok(())
}

/// A file named `file` at the top of `data` or one folder down.
pub fn find_file(data: &Path, file: &str) -> Option<PathBuf> {
    let direct = data.join(file);
    if direct.is_file() {
        return Some(direct);
    }
    std::fs::read_dir(data).ok()?.flatten().find_map(|e| {
        let p = e.path().join(file);
        (e.file_type().ok()?.is_dir() && p.is_file()).then_some(p)
    })
}

/// A file of the entry's outputs, read without following links and capped (the folder
/// holds what an untrusted entry wrote, already copied by the judge).
pub fn output(outputs: &Path, file: &str) -> Option<Vec<u8>> {
    crate::outputs::read_capped(&outputs.join(file), 16 << 20)
        .ok()
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_keep_each_columns_extremes() {
        let v: Vec<f64> = (0..1000)
            .map(|i| if i == 503 { 9.0 } else { (i % 7) as f64 })
            .collect();
        let c = columns(&v, 10);
        assert_eq!(c.len(), 10);
        assert_eq!(c[5], Some((0.0, 9.0)));
        assert_eq!(c[0], Some((0.0, 6.0)));
        // fewer samples than columns: every column still has one
        assert!(columns(&[1.0, 2.0], 5).iter().all(Option::is_some));
        assert_eq!(columns(&[f64::NAN; 4], 2), vec![None, None]);
    }

    #[test]
    fn spans_are_clipped_to_the_window() {
        let s = spans(
            &[(0.0, 50.0), (900.0, 2000.0), (3000.0, 4000.0)],
            100.0,
            1100.0,
        );
        assert_eq!(s, vec![(0.8, 1.0)]);
    }

    #[test]
    fn windows_stay_inside_the_record() {
        let ask = |from, to| Ask {
            from,
            to,
            columns: 10,
        };
        assert_eq!(window(ask(None, None), 100.0, 1000), (0.0, 10.0, 0, 1000));
        assert_eq!(
            window(ask(Some(-5.0), Some(99.0)), 100.0, 1000),
            (0.0, 10.0, 0, 1000)
        );
        let (from, to, s0, s1) = window(ask(Some(2.0), Some(f64::NAN)), 100.0, 1000);
        assert_eq!((from, to, s0, s1), (2.0, 10.0, 200, 1000));
        assert!(plain_name("../x", "record").is_err());
        assert!(plain_name("A0001", "record").is_ok());
    }
}
