//! Reading a CPSC 2021 prediction file (JSON or MATLAB) and checking its endpoints as
//! strict mode does.

use std::path::Path;

use formats::mat::MatFile;

use crate::python::json::{self, Int, Value};

/// A number as the prediction file gave it: Python keeps integers exact, of any size.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Num {
    Int(Int),
    Float(f64),
}

/// The dtype numpy 2 gives an array of Python numbers, one value's share of it: an `int`
/// that fits int64 is int64, one that fits only uint64 is uint64, a larger one makes the
/// array hold Python objects; a `float` is float64.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DType {
    I64,
    U64,
    F64,
    Object,
}

impl DType {
    /// numpy's promotion of two values' dtypes (int64 with uint64 gives float64).
    pub(super) fn join(self, other: DType) -> DType {
        use DType::*;
        match (self, other) {
            (Object, _) | (_, Object) => Object,
            (a, b) if a == b => a,
            _ => F64,
        }
    }
}

impl Num {
    pub(super) fn int(v: i128) -> Num {
        Num::Int(Int::from_i128(v))
    }

    /// The value as a float: exact for every value a valid row holds; an integer too large
    /// for a float gives ±inf (only used after validation and in messages).
    pub(super) fn as_f64(&self) -> f64 {
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
    pub(super) fn describe(&self) -> String {
        match self {
            Num::Int(i) => i.to_string(),
            Num::Float(f) => json::float_repr(*f),
        }
    }

    /// Python's `int()` (truncation toward zero) when it fits an index: `Ok(None)` for an
    /// integer too large to be a sample index, `Err` where `int()` itself raises.
    pub(super) fn to_index(&self) -> Result<Option<i128>, &'static str> {
        match self {
            Num::Int(i) => Ok(i.to_i128()),
            Num::Float(f) if f.is_nan() => Err("cannot convert float NaN to integer (ValueError)"),
            Num::Float(f) if f.is_infinite() => {
                Err("cannot convert float infinity to integer (OverflowError)")
            }
            Num::Float(f) => Ok((f.abs() < 1e30).then(|| f.trunc() as i128)),
        }
    }

    pub(super) fn dtype(&self) -> DType {
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
    pub(super) fn to_float(&self) -> Result<f64, String> {
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
pub(super) fn single_row_is_aff(s: &Num, e: &Num, last: u64) -> Result<bool, String> {
    single_row_is_aff_as(s.dtype().join(e.dtype()), s, e, last)
}

/// [`single_row_is_aff`] in a given dtype (a boolean beside a number takes the number's).
pub(super) fn single_row_is_aff_as(
    dtype: DType,
    s: &Num,
    e: &Num,
    last: u64,
) -> Result<bool, String> {
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
pub(super) enum Endpoints {
    /// Rows of exactly two numbers.
    Rows(Vec<(Num, Num)>),
    /// Another shape, which the official scorer still starts on.
    Malformed(Shape),
}

/// The shapes of `predict_endpoints` other than rows of two numbers. The official scorer
/// makes them a numpy array: Mr is its length, and what it does next depends on the shape
/// and on the true class (see [`compat_rows`]).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Shape {
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
    pub(super) fn describe(&self) -> String {
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

pub(super) fn json_num(v: &Value) -> Option<Num> {
    match v {
        Value::Int(i) => Some(Num::Int(i.clone())),
        Value::Float(f) => Some(Num::Float(*f)),
        _ => None,
    }
}

/// Parses a `.json` prediction, `{"predict_endpoints": [[s, e], ...]}`, as the official
/// scorer's `json.load` reads it (see [`json`]): `NaN` and `Infinity` are numbers, integers
/// are exact, the last of a repeated key counts. What is worth a warning goes to `notes`.
pub(super) fn parse_json(bytes: &[u8], notes: &mut Vec<String>) -> Result<Endpoints, String> {
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
pub(super) fn parse_mat(bytes: &[u8], file: &str) -> Result<Endpoints, String> {
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

/// Checks endpoints against the strict rules: finite numbers, 0 ≤ s ≤ e ≤ L−1.
pub(super) fn validate(rows: &Endpoints, len: u64) -> Result<Vec<(Num, Num)>, String> {
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
pub(super) fn read_prediction(
    path: &Path,
    name: &str,
    notes: &mut Vec<String>,
) -> Result<Endpoints, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?;
    if path.extension().is_some_and(|e| e == "mat") {
        parse_mat(&bytes, name)
    } else {
        parse_json(&bytes, notes)
    }
}
