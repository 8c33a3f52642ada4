//! CPSC 2021 (paroxysmal AF event detection): the official `score_2021.py`, final version
//! `d3ecd29`, as `docs/scoring.md` (*cpsc2021*) defines it.
//!
//! Per record: U = Ur + Ue, where Ur = R[true class][predicted class] and
//! Ue = (Σ onset[int(s)] + offset[int(e)]) × Ma / max(Ma, Mr) over the predicted episodes
//! `[s, e]`, looked up in endpoint masks built from the reference annotations (with the
//! official boundary widening and no matching of episodes). The score is the mean of U.
//!
//! The reference is read from headers (length and class comment) and `.atr` files only,
//! never from the signals. The masks are kept as lists of zones, not as arrays of the
//! record's length, so that scoring costs nothing per sample.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use formats::wfdb::Record;
use formats::wfdb::annotation::{self, codes};
use serde::Serialize;

use crate::numeric::mean;
use crate::{Mode, PredictionError, ScoreError};

mod compat;
mod prediction;

use compat::{compat_rows, compat_values};
pub use prediction::check_prediction;
use prediction::{Endpoints, Num, Shape, read_prediction, single_row_is_aff, validate};

/// Rhythm class of a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Class {
    /// Non-AF.
    N,
    /// Persistent AF (the whole record).
    AFf,
    /// Paroxysmal AF (episodes).
    AFp,
}

impl Class {
    /// The header comment that states the class (exact match, as the official scorer).
    fn from_comment(c: &str) -> Option<Class> {
        match c {
            "non atrial fibrillation" => Some(Class::N),
            "persistent atrial fibrillation" => Some(Class::AFf),
            "paroxysmal atrial fibrillation" => Some(Class::AFp),
            _ => None,
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Ur = R[true][predicted], rows and columns in the order N, AFf, AFp (`docs/scoring.md`).
const RHYTHM_SCORE: [[f64; 3]; 3] = [[1.0, -1.0, -0.5], [-2.0, 1.0, 0.0], [-1.0, 0.0, 1.0]];

/// Half-open sample ranges `[lo, hi)` with a weight; a mask's value at a sample is the sum
/// of the weights of the zones holding it, as the official scorer adds its slices.
#[derive(Debug, Clone, Default, PartialEq)]
struct Zones(Vec<(u64, u64, f64)>);

impl Zones {
    /// `mask[a:b] += w` with numpy's slice rules on a mask of length `len`.
    fn add(&mut self, a: i64, b: i64, w: f64, len: u64) {
        let clip = |i: i64| -> u64 {
            let l = len as i64;
            let i = if i < 0 { i + l } else { i };
            i.clamp(0, l) as u64
        };
        let (lo, hi) = (clip(a), clip(b));
        if lo < hi {
            self.0.push((lo, hi, w));
        }
    }

    fn value(&self, x: u64) -> f64 {
        let mut v = 0.0;
        for &(lo, hi, w) in &self.0 {
            if (lo..hi).contains(&x) {
                v += w;
            }
        }
        v
    }
}

/// One reference record.
#[derive(Debug, Clone, PartialEq)]
pub struct RefRecord {
    pub name: String,
    /// Signal length L in samples.
    pub len: u64,
    pub class: Class,
    /// Samples of the episode start (`(AFIB`/`(AFL`) and end (`(N`) markers, paired in order.
    pub episodes: Vec<(i64, i64)>,
    onset: Zones,
    offset: Zones,
}

impl RefRecord {
    /// Ma, the number of reference episodes.
    pub fn ma(&self) -> usize {
        self.episodes.len()
    }

    /// Value of the onset mask at a sample.
    pub fn onset_at(&self, x: u64) -> f64 {
        self.onset.value(x)
    }

    /// Value of the offset mask at a sample.
    pub fn offset_at(&self, x: u64) -> f64 {
        self.offset.value(x)
    }

    /// Builds a reference record from what the official scorer reads: the signal length,
    /// the class comment, and every annotation's sample and aux text in file order.
    /// `file` names the annotation file in errors.
    pub fn from_annotations(
        name: &str,
        len: u64,
        class: Class,
        samples: &[i64],
        aux: &[&[u8]],
        file: &str,
    ) -> Result<RefRecord, ScoreError> {
        let starts: Vec<usize> = (0..aux.len())
            .filter(|&k| aux[k] == b"(AFIB" || aux[k] == b"(AFL")
            .collect();
        let ends: Vec<usize> = (0..aux.len()).filter(|&k| aux[k] == b"(N").collect();
        if starts.len() != ends.len() {
            return Err(ScoreError::reference(
                file,
                format!(
                    "{} AF starts ((AFIB/(AFL) but {} ends ((N): episodes cannot be paired \
                     (the official scorer crashes here too)",
                    starts.len(),
                    ends.len()
                ),
            ));
        }
        let n = samples.len() as i64;
        // ann[k] with Python's indexing: negative k counts from the end.
        let ann = |k: i64| -> Result<i64, ScoreError> {
            let i = if k < 0 { k + n } else { k };
            if (0..n).contains(&i) {
                Ok(samples[i as usize])
            } else {
                Err(ScoreError::reference(
                    file,
                    format!(
                        "the endpoint zones need annotation {k} of {n}: an AF marker sits too \
                         close to the end of the file (the official scorer crashes here too)"
                    ),
                ))
            }
        };
        let (mut onset, mut offset) = (Zones::default(), Zones::default());
        let l = len as i64;
        match class {
            Class::N => {}
            Class::AFp => {
                for &s in &starts {
                    let s = s as i64;
                    if s <= 1 {
                        onset.add(0, ann(s + 2)?, 1.0, len);
                    } else if s == 2 {
                        onset.add(ann(s - 1)?, ann(s + 2)?, 1.0, len);
                        onset.add(0, ann(s - 1)?, 0.5, len);
                    } else {
                        onset.add(ann(s - 1)?, ann(s + 2)?, 1.0, len);
                        onset.add(ann(s - 2)?, ann(s - 1)?, 0.5, len);
                    }
                    onset.add(ann(s + 2)?, ann(s + 3)?, 0.5, len);
                }
                for &e in &ends {
                    let e = e as i64;
                    if e >= n - 2 {
                        offset.add(ann(e - 2)?, l, 1.0, len);
                    } else if e == n - 3 {
                        offset.add(ann(e - 2)?, ann(e + 1)?, 1.0, len);
                        offset.add(ann(e + 1)?, l, 0.5, len);
                    } else {
                        offset.add(ann(e - 2)?, ann(e + 1)?, 1.0, len);
                        offset.add(ann(e + 1)?, ann(e + 2)?.min(l - 1), 0.5, len);
                    }
                    offset.add(ann(e - 3)?, ann(e - 2)?, 0.5, len);
                }
            }
            Class::AFf => {
                for &s in &starts {
                    let s = s as i64;
                    onset.add(0, ann(s + 2)?, 1.0, len);
                    onset.add(ann(s + 2)?, ann(s + 3)?, 0.5, len);
                }
                for &e in &ends {
                    let e = e as i64;
                    offset.add(ann(e - 2)?, l, 1.0, len);
                    offset.add(ann(e - 3)?, ann(e - 2)?, 0.5, len);
                }
            }
        }
        let episodes = starts
            .iter()
            .zip(&ends)
            .map(|(&s, &e)| (samples[s], samples[e]))
            .collect();
        Ok(RefRecord {
            name: name.to_string(),
            len,
            class,
            episodes,
            onset,
            offset,
        })
    }
}

/// The labelled records of a reference folder.
#[derive(Debug, Clone)]
pub struct Reference {
    pub dir: PathBuf,
    pub records: Vec<RefRecord>,
}

/// Loads the reference: the records listed in `RECORDS` (or, without it, every `.hea`),
/// each from its header and `.atr` file.
pub fn load_reference(dir: &Path) -> Result<Reference, ScoreError> {
    let names = record_names(dir)?;
    if names.is_empty() {
        return Err(ScoreError::reference(
            dir.display().to_string(),
            "no records: neither a RECORDS file nor any .hea file",
        ));
    }
    let records = names
        .iter()
        .map(|name| load_record(dir, name))
        .collect::<Result<_, _>>()?;
    Ok(Reference {
        dir: dir.to_path_buf(),
        records,
    })
}

fn record_names(dir: &Path) -> Result<Vec<String>, ScoreError> {
    let list = dir.join("RECORDS");
    if list.is_file() {
        let text = std::fs::read_to_string(&list)
            .map_err(|e| ScoreError::io(list.display().to_string(), e))?;
        return Ok(text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect());
    }
    let mut names = Vec::new();
    let entries =
        std::fs::read_dir(dir).map_err(|e| ScoreError::io(dir.display().to_string(), e))?;
    for entry in entries {
        let entry = entry.map_err(|e| ScoreError::io(dir.display().to_string(), e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(stem) = name.strip_suffix(".hea") {
            names.push(stem.to_string());
        }
    }
    names.sort();
    Ok(names)
}

/// One reference record of a folder: its header (length, class) and `.atr` episodes.
pub fn load_record(dir: &Path, name: &str) -> Result<RefRecord, ScoreError> {
    let path = dir.join(name);
    let rec = Record::open(&path)
        .map_err(|e| ScoreError::reference(e.file.clone(), e.kind.to_string()))?;
    let hea = format!("{}.hea", path.display());
    let len = rec
        .sig_len()
        .map_err(|e| ScoreError::reference(e.file.clone(), e.kind.to_string()))?;
    // wfdb-python strips spaces, tabs and `#` from comment lines; the class is the comment
    // that equals one of the three phrases.
    let class = rec
        .header
        .comments
        .iter()
        .find_map(|c| Class::from_comment(c.trim_matches([' ', '\t', '#'])))
        .ok_or_else(|| {
            ScoreError::reference(
                &hea,
                "no comment line states the class (non atrial fibrillation, persistent atrial \
                 fibrillation or paroxysmal atrial fibrillation)",
            )
        })?;
    let atr = format!("{}.atr", path.display());
    let file = annotation::read_annotator(&path, "atr")
        .map_err(|e| ScoreError::reference(e.file.clone(), e.to_string()))?;
    // The official scorer sees the annotations as wfdb-python returns them, which drops
    // NOTE annotations at sample 0 and code-0 annotations.
    let anns: Vec<_> = file
        .annotations
        .iter()
        .filter(|a| !(a.code == codes::NOTE && a.sample == 0) && a.code != codes::NOTQRS)
        .collect();
    let samples: Vec<i64> = anns.iter().map(|a| a.sample).collect();
    let aux: Vec<&[u8]> = anns
        .iter()
        .map(|a| a.aux.as_deref().unwrap_or_default())
        .collect();
    RefRecord::from_annotations(name, len, class, &samples, &aux, &atr)
}

/// The score of one record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Item {
    pub record: String,
    /// The prediction file scored (none when it was missing).
    pub file: Option<String>,
    pub class_true: Class,
    pub class_pred: Class,
    /// Reference episodes.
    pub ma: usize,
    /// Predicted episodes (rows).
    pub mr: usize,
    pub ur: f64,
    pub ue: f64,
    pub u: f64,
    /// The prediction was missing or invalid and was scored as `[]`.
    pub defaulted: bool,
}

/// The result of scoring a set of predictions.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub challenge: &'static str,
    pub mode: Mode,
    /// The ranking number: the mean of U over the records (strict) or over the prediction
    /// files found (official-compat). Printed by the official scorer with 4 decimals.
    pub score: f64,
    pub items: Vec<Item>,
    pub errors: Vec<PredictionError>,
    pub warnings: Vec<String>,
}

/// Scores one record's endpoints (already validated or, in compat mode, as given).
fn score_rows(
    rec: &RefRecord,
    rows: &[(Num, Num)],
    file: &str,
    mode: Mode,
) -> Result<(Class, f64, f64), ScoreError> {
    let class_pred = match rows {
        [] => Class::N,
        [(s, e)] => {
            let aff = single_row_is_aff(s, e, rec.len.saturating_sub(1))
                .map_err(|why| ScoreError::official(file, why))?;
            if aff { Class::AFf } else { Class::AFp }
        }
        _ => Class::AFp,
    };
    let (ur, ue) = score_class(rec, class_pred, rows.len(), rows, file, mode)?;
    Ok((class_pred, ur, ue))
}

/// Ur and Ue of one record once the predicted class is known: Mr rows were predicted, and
/// `rows` are their values as `int()` takes them (only looked at for an AF record).
fn score_class(
    rec: &RefRecord,
    class_pred: Class,
    mr: usize,
    rows: &[(Num, Num)],
    file: &str,
    mode: Mode,
) -> Result<(f64, f64), ScoreError> {
    let l = rec.len as i128;
    let ur = RHYTHM_SCORE[rec.class.index()][class_pred.index()];
    if rec.class == Class::N || mr == 0 {
        return Ok((ur, 0.0));
    }
    // mask[int(v)]: Python indexing, negative indices count from the end.
    let lookup = |v: &Num, what: &str| -> Result<u64, ScoreError> {
        let out_of_range = || {
            ScoreError::official(
                file,
                format!(
                    "{what} {} is out of range for a record of {l} samples (IndexError)",
                    v.describe()
                ),
            )
        };
        let i = v
            .to_index()
            .map_err(|why| ScoreError::official(file, format!("{what} {}: {why}", v.describe())))?
            .ok_or_else(out_of_range)?;
        let j = if i < 0 && mode == Mode::OfficialCompat {
            i + l
        } else {
            i
        };
        if (0..l).contains(&j) {
            Ok(j as u64)
        } else {
            Err(out_of_range())
        }
    };
    let mut sum = 0.0;
    for (s, e) in rows {
        sum += rec.onset_at(lookup(s, "start")?);
        sum += rec.offset_at(lookup(e, "end")?);
    }
    let ma = rec.ma();
    let ue = sum * ma as f64 / ma.max(mr) as f64;
    Ok((ur, ue))
}

/// Scores the prediction files in `predictions` against the reference.
pub fn score(reference: &Reference, predictions: &Path, mode: Mode) -> Result<Report, ScoreError> {
    let files = prediction_files(predictions)?;
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let mut items = Vec::new();
    let by_name: BTreeMap<&str, &RefRecord> = reference
        .records
        .iter()
        .map(|r| (r.name.as_str(), r))
        .collect();

    match mode {
        Mode::Strict => {
            let mut found: BTreeMap<String, Vec<String>> = BTreeMap::new();
            for f in &files {
                let record = f.split('.').next().unwrap_or_default().to_string();
                found.entry(record).or_default().push(f.clone());
            }
            for (record, fs) in &found {
                if !by_name.contains_key(record.as_str()) {
                    warnings.push(format!(
                        "{}: no record {record:?} in the reference; ignored",
                        fs.join(", ")
                    ));
                }
            }
            for rec in &reference.records {
                let mut candidates = found.get(&rec.name).cloned().unwrap_or_default();
                // A .json prediction is preferred to a .mat one for the same record.
                candidates.sort_by_key(|f| !f.ends_with(".json"));
                for extra in candidates.iter().skip(1) {
                    errors.push(PredictionError::new(
                        extra.clone(),
                        format!(
                            "a second prediction for {}; {} is used",
                            rec.name, candidates[0]
                        ),
                    ));
                }
                let (file, rows) = match candidates.first() {
                    None => {
                        errors.push(PredictionError::new(
                            format!("{}.json", rec.name),
                            "missing: scored as no AF episodes ([])",
                        ));
                        (None, None)
                    }
                    Some(f) => {
                        let mut notes = Vec::new();
                        let parsed = read_prediction(&predictions.join(f), f, &mut notes)
                            .and_then(|p| validate(&p, rec.len));
                        warnings.extend(notes.into_iter().map(|n| format!("{f}: {n}")));
                        match parsed {
                            Ok(rows) => (Some(f.clone()), Some(rows)),
                            Err(why) => {
                                errors.push(PredictionError::new(
                                    f.clone(),
                                    format!("{why}; scored as no AF episodes ([])"),
                                ));
                                (Some(f.clone()), None)
                            }
                        }
                    }
                };
                let defaulted = rows.is_none();
                let rows = rows.unwrap_or_default();
                let (class_pred, ur, ue) =
                    score_rows(rec, &rows, file.as_deref().unwrap_or_default(), mode)?;
                items.push(Item {
                    record: rec.name.clone(),
                    file,
                    class_true: rec.class,
                    class_pred,
                    ma: rec.ma(),
                    mr: rows.len(),
                    ur,
                    ue,
                    u: ur + ue,
                    defaulted,
                });
            }
        }
        Mode::OfficialCompat => {
            for f in &files {
                // The official scorer takes the record name up to the first dot.
                let record = f.split('.').next().unwrap_or_default();
                let rec = by_name.get(record).ok_or_else(|| {
                    ScoreError::official(
                        f.clone(),
                        format!(
                            "there is no reference record {record:?} (it cannot load its header)"
                        ),
                    )
                })?;
                let parsed = read_prediction(&predictions.join(f), f, &mut Vec::new())
                    .map_err(|why| ScoreError::official(f.clone(), why))?;
                let (class_pred, mr, ur, ue) = match parsed {
                    Endpoints::Malformed(Shape::NotNumbers { list, .. }) => {
                        let (class_pred, mr, rows) = compat_values(&list, rec, f)?;
                        let (ur, ue) = score_class(rec, class_pred, mr, &rows, f, mode)?;
                        (class_pred, mr, ur, ue)
                    }
                    parsed => {
                        let rows = compat_rows(parsed, rec, f)?;
                        let (class_pred, ur, ue) = score_rows(rec, &rows, f, mode)?;
                        (class_pred, rows.len(), ur, ue)
                    }
                };
                items.push(Item {
                    record: rec.name.clone(),
                    file: Some(f.clone()),
                    class_true: rec.class,
                    class_pred,
                    ma: rec.ma(),
                    mr,
                    ur,
                    ue,
                    u: ur + ue,
                    defaulted: false,
                });
            }
        }
    }
    // The mean is taken in record-name order, so that it does not depend on the order of
    // the reference list or of the files (floating-point sums do, in the last bit).
    let mut by_record: Vec<(&str, f64)> = items.iter().map(|i| (i.record.as_str(), i.u)).collect();
    by_record.sort_by(|a, b| a.0.cmp(b.0));
    let us: Vec<f64> = by_record.iter().map(|x| x.1).collect();
    Ok(Report {
        challenge: "cpsc2021",
        mode,
        score: mean(&us),
        items,
        errors,
        warnings,
    })
}

/// What the official scorer does with a shape other than rows of two numbers. It takes
/// The prediction files the official scorer looks at: names ending in `.json` or `.mat`,
/// in name order.
fn prediction_files(dir: &Path) -> Result<Vec<String>, ScoreError> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| ScoreError::io(dir.display().to_string(), e))?;
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| ScoreError::io(dir.display().to_string(), e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".json") || name.ends_with(".mat") {
            files.push(name);
        }
    }
    files.sort();
    Ok(files)
}

impl Report {
    /// The official line, then one line per record, then what could not be used.
    pub fn text(&self) -> String {
        let mut s = format!("AF Endpoints Detection Performance: {:.4}\n", self.score);
        s.push_str("\nrecord,class_true,class_pred,Ma,Mr,Ur,Ue,U\n");
        for i in &self.items {
            s.push_str(&format!(
                "{},{:?},{:?},{},{},{},{:.4},{:.4}{}\n",
                i.record,
                i.class_true,
                i.class_pred,
                i.ma,
                i.mr,
                i.ur,
                i.ue,
                i.u,
                if i.defaulted { ",defaulted" } else { "" }
            ));
        }
        push_problems(&mut s, &self.errors, &self.warnings);
        s
    }
}

/// Appends the errors and warnings sections of a text report, when there are any.
pub(crate) fn push_problems(s: &mut String, errors: &[PredictionError], warnings: &[String]) {
    if !errors.is_empty() {
        s.push_str(&format!(
            "\n{} errors (each scored with the default answer):\n",
            errors.len()
        ));
        for e in errors {
            s.push_str(&format!("  {e}\n"));
        }
    }
    if !warnings.is_empty() {
        s.push_str(&format!("\n{} warnings:\n", warnings.len()));
        for w in warnings {
            s.push_str(&format!("  {w}\n"));
        }
    }
}
