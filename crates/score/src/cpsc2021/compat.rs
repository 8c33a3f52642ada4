//! Official-compat mode: what the official scorer does with prediction files whose shape
//! is not rows of two numbers, numpy's rules included.

use super::prediction::{Endpoints, Num, Shape, json_num, single_row_is_aff_as};
use super::{Class, RefRecord};
use crate::ScoreError;
use crate::python::json::Value;

/// Mr = the array's length and decides the class: with one row it compares
/// `np.diff(row)[-1]` to L − 1, which raises unless the row has two values (numpy cannot
/// take the truth of an empty or a longer array); with more it is AFp. For a non-N record
/// it then unpacks every row as `[s, e]`, which fails. So such files score only on N
/// records with more than one row (or a flat list of two numbers or more).
pub(super) fn compat_rows(
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
pub(super) enum Kind {
    Object,
    Text,
    Bool,
    Number,
}

impl Kind {
    pub(super) fn of(values: &[&Value]) -> Kind {
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
pub(super) const NUMPY_MAX_DIMS: usize = 64;

/// The shape `np.array` gives nested lists (anything else is a scalar, a dict too), or
/// `None` where lists of one depth differ in length or depth (numpy 2 raises ValueError:
/// "inhomogeneous shape").
pub(super) fn numpy_shape(v: &Value) -> Option<Vec<usize>> {
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
pub(super) fn scalars<'a>(v: &'a Value, out: &mut Vec<&'a Value>) {
    match v {
        Value::List(items) => items.iter().for_each(|x| scalars(x, out)),
        x => out.push(x),
    }
}

/// A number or a boolean as a number (True is 1).
pub(super) fn number(v: &Value) -> Option<Num> {
    match v {
        Value::Bool(b) => Some(Num::int(i128::from(*b))),
        v => json_num(v),
    }
}

/// `int(x)` of one array element, as a [`Num`] that the mask lookup truncates (a float
/// is left for it, so NaN and infinity fail there as in Python).
pub(super) fn element_int(kind: Kind, v: &Value) -> Result<Num, String> {
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
pub(super) fn flat_row(kind: Kind, v: &Value) -> Result<(Num, Num), String> {
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
pub(super) type Compat = (Class, usize, Vec<(Num, Num)>);

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
pub(super) fn compat_values(
    list: &[Value],
    rec: &RefRecord,
    file: &str,
) -> Result<Compat, ScoreError> {
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
