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

use formats::mat::MatFile;
use formats::wfdb::Record;
use formats::wfdb::annotation::{self, codes};
use serde::Serialize;

use crate::numeric::mean;
use crate::python::json::{self, Int, Value};
use crate::{Mode, PredictionError, ScoreError};

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

/// A number as the prediction file gave it: Python keeps integers exact, of any size.
#[derive(Debug, Clone, PartialEq)]
enum Num {
    Int(Int),
    Float(f64),
}

/// The dtype numpy 2 gives an array of Python numbers, one value's share of it: an `int`
/// that fits int64 is int64, one that fits only uint64 is uint64, a larger one makes the
/// array hold Python objects; a `float` is float64.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DType {
    I64,
    U64,
    F64,
    Object,
}

impl DType {
    /// numpy's promotion of two values' dtypes (int64 with uint64 gives float64).
    fn join(self, other: DType) -> DType {
        use DType::*;
        match (self, other) {
            (Object, _) | (_, Object) => Object,
            (a, b) if a == b => a,
            _ => F64,
        }
    }
}

impl Num {
    fn int(v: i128) -> Num {
        Num::Int(Int::from_i128(v))
    }

    /// The value as a float: exact for every value a valid row holds; an integer too large
    /// for a float gives ±inf (only used after validation and in messages).
    fn as_f64(&self) -> f64 {
        match self {
            Num::Int(i) => i.to_f64().unwrap_or(if i.to_i128().is_some_and(|v| v < 0) {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            }),
            Num::Float(f) => *f,
        }
    }

    /// The value as Python prints it.
    fn describe(&self) -> String {
        match self {
            Num::Int(i) => i.to_string(),
            Num::Float(f) => json::float_repr(*f),
        }
    }

    /// Python's `int()` (truncation toward zero) when it fits an index: `Ok(None)` for an
    /// integer too large to be a sample index, `Err` where `int()` itself raises.
    fn to_index(&self) -> Result<Option<i128>, &'static str> {
        match self {
            Num::Int(i) => Ok(i.to_i128()),
            Num::Float(f) if f.is_nan() => Err("cannot convert float NaN to integer (ValueError)"),
            Num::Float(f) if f.is_infinite() => {
                Err("cannot convert float infinity to integer (OverflowError)")
            }
            Num::Float(f) => Ok((f.abs() < 1e30).then(|| f.trunc() as i128)),
        }
    }

    fn dtype(&self) -> DType {
        match self {
            Num::Float(_) => DType::F64,
            Num::Int(i) => match i.to_i128() {
                Some(v) if i64::try_from(v).is_ok() => DType::I64,
                Some(v) if u64::try_from(v).is_ok() => DType::U64,
                _ => DType::Object,
            },
        }
    }

    /// `float(x)`, or Python's `OverflowError` for an integer too large.
    fn to_float(&self) -> Result<f64, String> {
        match self {
            Num::Float(f) => Ok(*f),
            Num::Int(i) => i.to_f64().ok_or_else(|| {
                format!(
                    "the integer {} is too large to convert to a float (OverflowError)",
                    self.describe()
                )
            }),
        }
    }
}

/// The official test for AFf on a single row, `np.diff(np.array([[s, e]]))[-1] == L - 1`,
/// with numpy 2's arithmetic: int64 and uint64 differences wrap, float64 rounds (int64
/// mixed with uint64 becomes float64), and an array of Python objects subtracts exactly
/// (an `int` too large for a float, against a float, raises). For the values a valid row
/// holds every variant is the exact difference.
fn single_row_is_aff(s: &Num, e: &Num, last: u64) -> Result<bool, String> {
    single_row_is_aff_as(s.dtype().join(e.dtype()), s, e, last)
}

/// [`single_row_is_aff`] in a given dtype (a boolean beside a number takes the number's).
fn single_row_is_aff_as(dtype: DType, s: &Num, e: &Num, last: u64) -> Result<bool, String> {
    let (s_i, e_i) = (
        s.to_index().ok().flatten().unwrap_or(0),
        e.to_index().ok().flatten().unwrap_or(0),
    );
    Ok(match dtype {
        DType::I64 => i128::from((e_i as i64).wrapping_sub(s_i as i64)) == i128::from(last),
        DType::U64 => (e_i as u64).wrapping_sub(s_i as u64) == last,
        DType::F64 => e.to_float()? - s.to_float()? == last as f64,
        DType::Object => match (s, e) {
            (Num::Int(s), Num::Int(e)) => e.minus(s).to_i128() == Some(i128::from(last)),
            _ => e.to_float()? - s.to_float()? == last as f64,
        },
    })
}

/// What a prediction file holds, before it is checked against a record.
#[derive(Debug, Clone, PartialEq)]
enum Endpoints {
    /// Rows of exactly two numbers.
    Rows(Vec<(Num, Num)>),
    /// Another shape, which the official scorer still starts on.
    Malformed(Shape),
}

/// The shapes of `predict_endpoints` other than rows of two numbers. The official scorer
/// makes them a numpy array: Mr is its length, and what it does next depends on the shape
/// and on the true class (see [`compat_rows`]).
#[derive(Debug, Clone, PartialEq)]
enum Shape {
    /// A flat list of numbers (`[s, e]` instead of `[[s, e]]`).
    Flat { len: usize },
    /// Rows of one length other than 2.
    Uniform { rows: usize, width: usize },
    /// Rows of different lengths, or a mix of rows and numbers.
    Ragged,
    /// Strings, booleans, nulls, objects or deeper lists: numeric strings work in the
    /// official scorer only by accident, so strict mode rejects them; official-compat mode
    /// follows numpy on `list`, the whole `predict_endpoints` (see [`compat_values`]).
    NotNumbers { what: String, list: Vec<Value> },
}

impl Shape {
    fn describe(&self) -> String {
        match self {
            Shape::Flat { len } => {
                format!("a flat list of {len} numbers, not a list of [start, end] rows")
            }
            Shape::Uniform { rows, width } => {
                format!("{rows} rows of {width} values, not of 2 ([start, end])")
            }
            Shape::Ragged => "rows of different lengths".to_string(),
            Shape::NotNumbers { what, .. } => format!("values that are not numbers: {what}"),
        }
    }
}

fn json_num(v: &Value) -> Option<Num> {
    match v {
        Value::Int(i) => Some(Num::Int(i.clone())),
        Value::Float(f) => Some(Num::Float(*f)),
        _ => None,
    }
}

/// Parses a `.json` prediction, `{"predict_endpoints": [[s, e], ...]}`, as the official
/// scorer's `json.load` reads it (see [`json`]): `NaN` and `Infinity` are numbers, integers
/// are exact, the last of a repeated key counts. What is worth a warning goes to `notes`.
fn parse_json(bytes: &[u8], notes: &mut Vec<String>) -> Result<Endpoints, String> {
    let v = json::load(bytes).map_err(|e| format!("not valid JSON for Python's json.load: {e}"))?;
    if !matches!(v, Value::Dict(_)) {
        return Err("the JSON is not an object".into());
    }
    let (list, times) = v
        .get_counted("predict_endpoints")
        .ok_or("the key \"predict_endpoints\" is missing")?;
    if times > 1 {
        notes.push(format!(
            "the key \"predict_endpoints\" is given {times} times: the last one counts, as \
             in Python's json.load"
        ));
    }
    let Value::List(items) = list else {
        return Err("\"predict_endpoints\" is not a list".into());
    };
    if let Some(bad) = items
        .iter()
        .flat_map(|x| match x {
            Value::List(row) => row.iter().collect::<Vec<_>>(),
            x => vec![x],
        })
        .find(|x| json_num(x).is_none())
    {
        return Ok(Endpoints::Malformed(Shape::NotNumbers {
            what: bad.describe(),
            list: items.clone(),
        }));
    }
    let widths: Vec<Option<usize>> = items
        .iter()
        .map(|x| match x {
            Value::List(row) => Some(row.len()),
            _ => None,
        })
        .collect();
    if widths.iter().all(Option::is_none) && !items.is_empty() {
        return Ok(Endpoints::Malformed(Shape::Flat { len: items.len() }));
    }
    let width = match widths.first() {
        None => return Ok(Endpoints::Rows(Vec::new())),
        Some(&w) => w,
    };
    if widths.iter().any(|&w| w != width) {
        return Ok(Endpoints::Malformed(Shape::Ragged));
    }
    let width = width.unwrap_or_default();
    if width != 2 {
        return Ok(Endpoints::Malformed(Shape::Uniform {
            rows: items.len(),
            width,
        }));
    }
    let pair = |row: &Value| -> Option<(Num, Num)> {
        let Value::List(r) = row else { return None };
        Some((json_num(r.first()?)?, json_num(r.get(1)?)?))
    };
    Ok(Endpoints::Rows(items.iter().filter_map(pair).collect()))
}

/// Parses a `.mat` prediction: variable `predict_endpoints`, an Mr×2 matrix of 1-based
/// sample numbers (shifted by −1, as the official scorer does).
fn parse_mat(bytes: &[u8], file: &str) -> Result<Endpoints, String> {
    let mat = MatFile::parse(bytes, file).map_err(|e| e.to_string())?;
    let v = mat.get("predict_endpoints").map_err(|e| e.to_string())?;
    let m = v.as_f64_matrix().map_err(|e| e.to_string())?;
    // Mr is the number of rows: a 0×n matrix (MATLAB's `[]` is 0×0) predicts nothing.
    if m.rows == 0 {
        return Ok(Endpoints::Rows(Vec::new()));
    }
    let at = |r: usize, c: usize| Num::Float(m.get(r, c).unwrap_or(f64::NAN) - 1.0);
    if m.cols != 2 {
        return Ok(Endpoints::Malformed(Shape::Uniform {
            rows: m.rows,
            width: m.cols,
        }));
    }
    Ok(Endpoints::Rows(
        (0..m.rows).map(|r| (at(r, 0), at(r, 1))).collect(),
    ))
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

/// Checks endpoints against the strict rules: finite numbers, 0 ≤ s ≤ e ≤ L−1.
fn validate(rows: &Endpoints, len: u64) -> Result<Vec<(Num, Num)>, String> {
    let rows = match rows {
        Endpoints::Rows(r) => r,
        Endpoints::Malformed(shape) => return Err(shape.describe()),
    };
    let last = len as f64 - 1.0;
    for (i, (s, e)) in rows.iter().enumerate() {
        let shown = format!("[{}, {}]", s.describe(), e.describe());
        let (sf, ef) = (s.as_f64(), e.as_f64());
        let finite = |n: &Num, f: f64| matches!(n, Num::Int(_)) || f.is_finite();
        if !(finite(s, sf) && finite(e, ef)) {
            return Err(format!("row {i}: {shown} is not a pair of finite numbers"));
        }
        // An integer too large for i128 is far out of range; below that, comparing as
        // floats is exact wherever it matters (L < 2^53).
        let huge = |n: &Num| matches!(n, Num::Int(v) if v.to_i128().is_none());
        if huge(s) || huge(e) || !(0.0 <= sf && sf <= ef && ef <= last) {
            return Err(format!(
                "row {i}: {shown} is not within 0 <= start <= end <= {last} (L - 1)"
            ));
        }
    }
    Ok(rows.clone())
}

/// Checks one prediction file's bytes as strict mode does, for a record of `len` samples:
/// the predicted episodes `[s, e]`, or why the file would be scored as `[]`. `file` is the
/// file's name; a name ending in `.mat` is read as MATLAB, anything else as JSON. (The
/// judge's quiz stage uses it to explain a rejected output right away.)
pub fn check_prediction(bytes: &[u8], file: &str, len: u64) -> Result<Vec<(f64, f64)>, String> {
    let parsed = if file.ends_with(".mat") {
        parse_mat(bytes, file)
    } else {
        parse_json(bytes, &mut Vec::new())
    }?;
    let rows = validate(&parsed, len)?;
    Ok(rows.iter().map(|(s, e)| (s.as_f64(), e.as_f64())).collect())
}

/// Reads and parses one prediction file; warnings about it go to `notes`.
fn read_prediction(path: &Path, name: &str, notes: &mut Vec<String>) -> Result<Endpoints, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?;
    if path.extension().is_some_and(|e| e == "mat") {
        parse_mat(&bytes, name)
    } else {
        parse_json(&bytes, notes)
    }
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
/// Mr = the array's length and decides the class: with one row it compares
/// `np.diff(row)[-1]` to L − 1, which raises unless the row has two values (numpy cannot
/// take the truth of an empty or a longer array); with more it is AFp. For a non-N record
/// it then unpacks every row as `[s, e]`, which fails. So such files score only on N
/// records with more than one row (or a flat list of two numbers or more).
fn compat_rows(
    parsed: Endpoints,
    rec: &RefRecord,
    file: &str,
) -> Result<Vec<(Num, Num)>, ScoreError> {
    let shape = match parsed {
        Endpoints::Rows(rows) => return Ok(rows),
        Endpoints::Malformed(shape) => shape,
    };
    let fail = |why: String| Err(ScoreError::official(file, why));
    let why = shape.describe();
    if let Shape::Ragged | Shape::NotNumbers { .. } = shape {
        return fail(why);
    }
    if rec.class != Class::N {
        return fail(format!("{why}: it cannot unpack a row into [start, end]"));
    }
    // Rows that give the same Mr and class; an N record never looks at their values.
    let rows = match shape {
        Shape::Flat { len } | Shape::Uniform { rows: len, .. } if len >= 2 => {
            vec![(Num::int(0), Num::int(1)); len]
        }
        Shape::Flat { .. } => {
            return fail(format!(
                "{why}: deciding the class takes np.diff of a single value, which is empty \
                 (IndexError)"
            ));
        }
        _ => {
            return fail(format!(
                "{why}: deciding the class compares np.diff of the row, which does not hold \
                 exactly one value, to L - 1 (ValueError: the truth value of the array is \
                 ambiguous)"
            ));
        }
    };
    Ok(rows)
}

/// numpy's dtype for an array of JSON values other than numbers alone: Python objects when
/// a null or an object is among them, else strings when a string is, else booleans when
/// every value is one, else numbers (where a boolean counts as 0 or 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Object,
    Text,
    Bool,
    Number,
}

impl Kind {
    fn of(values: &[&Value]) -> Kind {
        if values
            .iter()
            .any(|v| matches!(v, Value::Null | Value::Dict(_)))
        {
            Kind::Object
        } else if values.iter().any(|v| matches!(v, Value::Str(_))) {
            Kind::Text
        } else if values.iter().all(|v| matches!(v, Value::Bool(_))) {
            Kind::Bool
        } else {
            Kind::Number
        }
    }
}

/// numpy's largest number of dimensions; `np.array` of lists nested deeper fails.
const NUMPY_MAX_DIMS: usize = 64;

/// The shape `np.array` gives nested lists (anything else is a scalar, a dict too), or
/// `None` where lists of one depth differ in length or depth (numpy 2 raises ValueError:
/// "inhomogeneous shape").
fn numpy_shape(v: &Value) -> Option<Vec<usize>> {
    let Value::List(items) = v else {
        return Some(Vec::new());
    };
    let mut inner: Option<Vec<usize>> = None;
    for x in items {
        let s = numpy_shape(x)?;
        match &inner {
            Some(i) if *i != s => return None,
            Some(_) => {}
            None => inner = Some(s),
        }
    }
    let mut shape = vec![items.len()];
    shape.extend(inner.unwrap_or_default());
    Some(shape)
}

/// The scalars of nested lists in numpy's (C) order.
fn scalars<'a>(v: &'a Value, out: &mut Vec<&'a Value>) {
    match v {
        Value::List(items) => items.iter().for_each(|x| scalars(x, out)),
        x => out.push(x),
    }
}

/// A number or a boolean as a number (True is 1).
fn number(v: &Value) -> Option<Num> {
    match v {
        Value::Bool(b) => Some(Num::int(i128::from(*b))),
        v => json_num(v),
    }
}

/// `int(x)` of one array element, as a [`Num`] that the mask lookup truncates (a float
/// is left for it, so NaN and infinity fail there as in Python).
fn element_int(kind: Kind, v: &Value) -> Result<Num, String> {
    match (kind, v) {
        (_, Value::Null | Value::Dict(_)) => Err(format!(
            "int() of {} (TypeError: it is not a number or a string)",
            v.describe()
        )),
        // In an array of strings numpy stores every value as str() spells it, and drops
        // trailing NULs; an int spells itself, a float or a boolean never spells an integer.
        (Kind::Text, Value::Str(t)) => {
            crate::python::int(t.text.trim_end_matches('\0')).map(Num::Int)
        }
        (Kind::Text, Value::Int(i)) => Ok(Num::Int(i.clone())),
        (Kind::Text, other) => Err(format!(
            "{} is stored as text in an array of strings, and int() cannot read that text \
             (ValueError)",
            other.describe()
        )),
        (_, Value::Str(t)) => crate::python::int(&t.text).map(Num::Int),
        (_, other) => number(other).ok_or_else(|| format!("int() of {}", other.describe())),
    }
}

/// One value of a flat list unpacked as `[start, end]`, as Python unpacks it: a string
/// (numpy's text of the value, in an array of strings) gives its two characters, a dict
/// its two keys, each then through `int()`; anything else is not iterable.
fn flat_row(kind: Kind, v: &Value) -> Result<(Num, Num), String> {
    let text = match (kind, v) {
        (Kind::Text, Value::Str(t)) => t.text.trim_end_matches('\0').to_string(),
        (Kind::Text, Value::Int(i)) => i.to_string(),
        // A float's or a boolean's text has three characters or more ("nan", "1.0", "True").
        (Kind::Text, other) => {
            return Err(format!(
                "the text of {} has more than two characters to unpack into [start, end] \
                 (ValueError)",
                other.describe()
            ));
        }
        (Kind::Object, Value::Str(t)) => t.text.clone(),
        (Kind::Object, Value::Dict(items)) => {
            let keys: Vec<&str> = items.iter().map(|(k, _, _)| k.text.as_str()).collect();
            return match keys[..] {
                [s, e] => Ok((
                    crate::python::int(s).map(Num::Int)?,
                    crate::python::int(e).map(Num::Int)?,
                )),
                _ => Err(format!(
                    "an object of {} keys cannot be unpacked into [start, end] (ValueError)",
                    keys.len()
                )),
            };
        }
        (_, other) => {
            return Err(format!(
                "{} cannot be unpacked into [start, end] (TypeError: not iterable)",
                other.describe()
            ));
        }
    };
    let chars: Vec<char> = text.chars().collect();
    match chars[..] {
        [s, e] => Ok((
            crate::python::int(&s.to_string()).map(Num::Int)?,
            crate::python::int(&e.to_string()).map(Num::Int)?,
        )),
        _ => Err(format!(
            "the string {text:?} has {} characters, not 2, to unpack into [start, end] \
             (ValueError)",
            chars.len()
        )),
    }
}

/// The predicted class, Mr, and the rows as `int()` gives them (none for an N record).
type Compat = (Class, usize, Vec<(Num, Num)>);

/// What the official scorer does with a `predict_endpoints` (`list`) that holds values
/// other than numbers: strings, booleans, nulls, objects, or lists nested deeper than
/// rows. `np.array` makes one array of them (of a [`Kind`]); lists of uneven length or
/// depth stop it. Mr is the array's length. With one row, the class test takes
/// `np.diff(row)[-1] == L - 1`: numpy cannot subtract strings or Python's nulls and
/// objects, compares booleans with `!=`, and needs the row to hold exactly one
/// difference. With more rows the class is AFp, and an N record is done (−0.5, values
/// never looked at). On an AF record each row is unpacked as `[start, end]` (in a flat
/// list each value is, see [`flat_row`]) and each value goes through `int()` (a string
/// must spell an integer as `int()` reads it).
fn compat_values(list: &[Value], rec: &RefRecord, file: &str) -> Result<Compat, ScoreError> {
    let fail = |why: String| ScoreError::official(file, why);
    let whole = Value::List(list.to_vec());
    let shape = numpy_shape(&whole).ok_or_else(|| {
        fail(
            "lists of different lengths or depths: numpy cannot make one array of them \
             (ValueError: inhomogeneous shape)"
                .into(),
        )
    })?;
    if shape.len() > NUMPY_MAX_DIMS {
        return Err(fail(format!(
            "lists nested {} deep: numpy makes arrays of at most {NUMPY_MAX_DIMS} dimensions \
             (ValueError)",
            shape.len()
        )));
    }
    let mut values = Vec::new();
    scalars(&whole, &mut values);
    let kind = Kind::of(&values);
    let mr = shape[0];
    let last = rec.len.saturating_sub(1);
    let class_pred = match mr {
        0 => Class::N,
        1 => {
            // numpy refuses to subtract strings before it looks at how many there are;
            // Python objects fail on the first pair subtracted, and every value is in
            // one when the last dimension holds two or more.
            if kind == Kind::Text {
                return Err(fail(
                    "one row of an array of strings: deciding the class takes np.diff of it, \
                     and numpy cannot subtract strings (UFuncTypeError)"
                        .into(),
                ));
            }
            if kind == Kind::Object && shape.len() > 1 && shape[shape.len() - 1] >= 2 {
                return Err(fail(
                    "one row holding a null or an object: deciding the class takes np.diff \
                     of it, and Python cannot subtract those (TypeError)"
                        .into(),
                ));
            }
            if shape.len() == 1 {
                return Err(fail(
                    "a single value: deciding the class takes np.diff of it, which is empty \
                     (IndexError)"
                        .into(),
                ));
            }
            // np.diff(a)[-1] has the middle dimensions and one less than the last.
            let differences = shape[1..shape.len() - 1].iter().product::<usize>()
                * shape[shape.len() - 1].saturating_sub(1);
            if differences != 1 {
                return Err(fail(format!(
                    "one row of shape {:?}: deciding the class compares np.diff of it, which \
                     does not hold exactly one value, to L - 1 (ValueError: the truth value \
                     of the array is ambiguous)",
                    &shape[1..]
                )));
            }
            let (s, e) = (values[0], values[1]);
            let aff = match kind {
                // (Refused above; kept as the same failure, never a panic.)
                Kind::Text | Kind::Object => {
                    return Err(fail("numpy cannot subtract these values".into()));
                }
                // numpy's diff of booleans is `!=`.
                Kind::Bool => u64::from(s != e) == last,
                Kind::Number => {
                    let (sn, en) = (number(s), number(e));
                    let (Some(sn), Some(en)) = (sn, en) else {
                        return Err(fail("a value that is not a number".into()));
                    };
                    // A boolean beside a number takes the number's dtype.
                    let dtype = match (s, e) {
                        (Value::Bool(_), _) => en.dtype(),
                        (_, Value::Bool(_)) => sn.dtype(),
                        _ => sn.dtype().join(en.dtype()),
                    };
                    single_row_is_aff_as(dtype, &sn, &en, last).map_err(fail)?
                }
            };
            if aff { Class::AFf } else { Class::AFp }
        }
        _ => Class::AFp,
    };
    if rec.class == Class::N || mr == 0 {
        return Ok((class_pred, mr, Vec::new()));
    }
    match shape.len() {
        1 => {
            let rows = values
                .iter()
                .enumerate()
                .map(|(i, v)| flat_row(kind, v).map_err(|why| fail(format!("row {i}: {why}"))))
                .collect::<Result<Vec<_>, _>>()?;
            return Ok((class_pred, mr, rows));
        }
        _ if shape[1] != 2 => {
            return Err(fail(format!(
                "rows of {} values: the scorer cannot unpack them into [start, end] \
                 (ValueError)",
                shape[1]
            )));
        }
        2 => {}
        _ => {
            return Err(fail(
                "lists nested deeper than rows: int() of a row's start, itself an array, \
                 fails (TypeError: only 0-dimensional arrays can be converted)"
                    .into(),
            ));
        }
    }
    let mut rows = Vec::with_capacity(mr);
    for (i, pair) in values.chunks(2).enumerate() {
        let convert = |v: &Value, what: &str| {
            element_int(kind, v).map_err(|why| fail(format!("row {i}, {what}: {why}")))
        };
        rows.push((convert(pair[0], "start")?, convert(pair[1], "end")?));
    }
    Ok((class_pred, mr, rows))
}

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
