//! `json.load(open(path, "r"))` as the official CPSC 2021 scorer calls it (Python 3.11's
//! C scanner), where it departs from `serde_json`:
//! - `NaN`, `Infinity` and `-Infinity` are numbers (and no other spelling is);
//! - an integer literal (no fraction, no exponent) is an exact integer of any size, up to
//!   Python's limit of 4300 digits (`ValueError` beyond it); any other number is a float,
//!   correctly rounded, and ±inf when it overflows (`1e400`), never an error;
//! - a key given twice keeps its last value (a `dict`);
//! - `\u` escapes may leave a lone surrogate in a string;
//! - nesting may go 992 levels deep (the recursion limit at the official scorer's call
//!   depth, measured with Python 3.11; `serde_json` stops at 128);
//! - the file is UTF-8 text (text mode: `\r\n` and a lone `\r` read as `\n`), and a leading
//!   byte order mark is an error ("Unexpected UTF-8 BOM").
//!
//! Errors read as Python's (`Expecting value: line 1 column 2 (char 1)`).

use std::cmp::Ordering;
use std::collections::HashMap;

/// How deep arrays and objects may nest before Python raises `RecursionError` (each `[`
/// or `{` is one level; the official call stack leaves 992 of the 1000 levels).
pub(crate) const MAX_DEPTH: usize = 992;

/// Python's default `sys.get_int_max_str_digits()` (3.11 and later).
pub(crate) const MAX_INT_DIGITS: usize = 4300;

/// A value as `json.load` returns it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Null,
    Bool(bool),
    Int(Int),
    Float(f64),
    Str(Str),
    List(Vec<Value>),
    /// Keys in the order first given, each with its last value, as a Python `dict`, and
    /// how many times the key was given.
    Dict(Vec<(Str, Value, usize)>),
}

impl Value {
    /// `d[key]` (the last value given for the key) and how many times the key is given.
    pub(crate) fn get_counted(&self, key: &str) -> Option<(&Value, usize)> {
        match self {
            Value::Dict(items) => items
                .iter()
                .find(|(k, _, _)| k.is(key))
                .map(|(_, v, n)| (v, *n)),
            _ => None,
        }
    }

    /// A short rendering for messages, Python's spelling of the scalar values.
    pub(crate) fn describe(&self) -> String {
        match self {
            Value::Null => "null".into(),
            Value::Bool(b) => b.to_string(),
            Value::Int(i) => i.to_string(),
            Value::Float(f) => float_repr(*f),
            Value::Str(s) => format!("{:?}", s.text),
            Value::List(_) => "a list".into(),
            Value::Dict(_) => "an object".into(),
        }
    }
}

/// How Python's `repr` spells the special floats (the others as Rust prints them).
pub(crate) fn float_repr(f: f64) -> String {
    if f.is_nan() {
        "NaN".into()
    } else if f.is_infinite() {
        if f > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        format!("{f:?}")
    }
}

/// A string value; `text` has U+FFFD for each lone surrogate, which Python keeps as is, so
/// such a string equals no ASCII key.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Str {
    pub text: String,
    pub exact: bool,
}

impl Str {
    fn empty() -> Str {
        Str {
            text: String::new(),
            exact: true,
        }
    }

    fn is(&self, key: &str) -> bool {
        self.exact && self.text == key
    }
}

/// An exact integer, as Python's `int`: sign and decimal magnitude, least significant
/// digit first, no leading zeros (zero is no digits and never negative).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Int {
    negative: bool,
    digits: Vec<u8>,
}

impl Int {
    pub(crate) fn from_i128(v: i128) -> Int {
        let mut m = v.unsigned_abs();
        let mut digits = Vec::new();
        while m > 0 {
            digits.push((m % 10) as u8);
            m /= 10;
        }
        Int {
            negative: v < 0,
            digits,
        }
    }

    /// From ASCII decimal digits with an optional leading `-` (a JSON integer).
    pub(crate) fn parse(text: &str) -> Int {
        let (negative, body) = match text.strip_prefix('-') {
            Some(b) => (true, b),
            None => (false, text),
        };
        let mut digits: Vec<u8> = body.bytes().rev().map(|b| b - b'0').collect();
        trim(&mut digits);
        Int {
            negative: negative && !digits.is_empty(),
            digits,
        }
    }

    pub(crate) fn to_i128(&self) -> Option<i128> {
        let mut m: i128 = 0;
        for &d in self.digits.iter().rev() {
            m = m.checked_mul(10)?.checked_add(i128::from(d))?;
        }
        // i128::MIN itself is never needed: an index is far inside the range.
        Some(if self.negative { -m } else { m })
    }

    /// `float(i)`: correctly rounded; `None` where Python raises `OverflowError`.
    pub(crate) fn to_f64(&self) -> Option<f64> {
        // Rust's decimal parser rounds to nearest, ties to even, as Python's int-to-float
        // does, and overflows to inf exactly where Python gives up.
        let v: f64 = self.to_string().parse().ok()?;
        v.is_finite().then_some(v)
    }

    /// `self - other`, exact.
    pub(crate) fn minus(&self, other: &Int) -> Int {
        let neg_other = Int {
            negative: !other.negative && !other.digits.is_empty(),
            digits: other.digits.clone(),
        };
        self.plus(&neg_other)
    }

    fn plus(&self, other: &Int) -> Int {
        if self.negative == other.negative {
            return Int {
                negative: self.negative,
                digits: add_magnitudes(&self.digits, &other.digits),
            };
        }
        match cmp_magnitudes(&self.digits, &other.digits) {
            Ordering::Equal => Int::from_i128(0),
            Ordering::Greater => Int {
                negative: self.negative,
                digits: sub_magnitudes(&self.digits, &other.digits),
            },
            Ordering::Less => Int {
                negative: other.negative,
                digits: sub_magnitudes(&other.digits, &self.digits),
            },
        }
    }
}

impl std::fmt::Display for Int {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.digits.is_empty() {
            return f.write_str("0");
        }
        let s: String = self
            .digits
            .iter()
            .rev()
            .map(|&d| char::from(b'0' + d))
            .collect();
        if self.negative {
            write!(f, "-{s}")
        } else {
            f.write_str(&s)
        }
    }
}

fn trim(d: &mut Vec<u8>) {
    while d.last() == Some(&0) {
        d.pop();
    }
}

fn cmp_magnitudes(a: &[u8], b: &[u8]) -> Ordering {
    a.len()
        .cmp(&b.len())
        .then_with(|| a.iter().rev().cmp(b.iter().rev()))
}

fn add_magnitudes(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(a.len().max(b.len()) + 1);
    let mut carry = 0;
    for k in 0..a.len().max(b.len()) {
        let s = a.get(k).copied().unwrap_or(0) + b.get(k).copied().unwrap_or(0) + carry;
        out.push(s % 10);
        carry = s / 10;
    }
    if carry > 0 {
        out.push(carry);
    }
    out
}

/// `a - b` for magnitudes with `a >= b`.
fn sub_magnitudes(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(a.len());
    let mut borrow = 0;
    for (k, &x) in a.iter().enumerate() {
        let y = b.get(k).copied().unwrap_or(0) + borrow;
        if x >= y {
            out.push(x - y);
            borrow = 0;
        } else {
            out.push(x + 10 - y);
            borrow = 1;
        }
    }
    trim(&mut out);
    out
}

/// Parses a file's bytes as `json.load` on the file opened in text mode (UTF-8). The error
/// is what Python raises, in its words.
pub(crate) fn load(bytes: &[u8]) -> Result<Value, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        format!(
            "not UTF-8 text at byte {} (Python's read fails with UnicodeDecodeError)",
            e.valid_up_to()
        )
    })?;
    // Text mode's universal newlines: what the scanner sees, and what its positions count.
    let text = if text.contains('\r') {
        std::borrow::Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        std::borrow::Cow::Borrowed(text)
    };
    let chars: Vec<char> = text.chars().collect();
    let p = Parser { s: &chars };
    if chars.first() == Some(&'\u{feff}') {
        return Err(p.error("Unexpected UTF-8 BOM (decode using utf-8-sig)", 0));
    }
    let start = p.skip_ws(0);
    let (value, end) = p.value(start)?;
    let end = p.skip_ws(end);
    if end != chars.len() {
        return Err(p.error("Extra data", end));
    }
    Ok(value)
}

struct Parser<'a> {
    s: &'a [char],
}

type Parsed = Result<(Value, usize), String>;

impl Parser<'_> {
    /// Python's `JSONDecodeError` text: the message and where, lines and columns 1-based,
    /// the character offset 0-based.
    fn error(&self, msg: &str, pos: usize) -> String {
        let before = &self.s[..pos.min(self.s.len())];
        let line = before.iter().filter(|&&c| c == '\n').count() + 1;
        let column = match before.iter().rposition(|&c| c == '\n') {
            Some(nl) => pos - nl,
            None => pos + 1,
        };
        format!("{msg}: line {line} column {column} (char {pos})")
    }

    fn at(&self, i: usize) -> Option<char> {
        self.s.get(i).copied()
    }

    fn skip_ws(&self, mut i: usize) -> usize {
        while matches!(self.at(i), Some(' ' | '\t' | '\n' | '\r')) {
            i += 1;
        }
        i
    }

    fn starts_with(&self, i: usize, word: &str) -> bool {
        let n = word.chars().count();
        self.s
            .get(i..i + n)
            .is_some_and(|w| w.iter().copied().eq(word.chars()))
    }

    /// `scan_once`: one value starting exactly at `i`, and where it ends. Arrays and
    /// objects are held on a stack of our own rather than by recursion, so that no input
    /// can exhaust the thread's stack.
    fn value(&self, mut i: usize) -> Parsed {
        let mut stack: Vec<Open> = Vec::new();
        loop {
            // Start a value at `i`: an array or object opens a level, a scalar completes.
            let (mut v, mut end) = match self.at(i) {
                Some(open @ ('[' | '{')) => {
                    if stack.len() >= MAX_DEPTH {
                        return Err(format!(
                            "nesting deeper than {MAX_DEPTH} levels at char {i} (Python's \
                             json.load fails with RecursionError)"
                        ));
                    }
                    let j = self.skip_ws(i + 1);
                    if open == '[' {
                        if self.at(j) == Some(']') {
                            (Value::List(Vec::new()), j + 1)
                        } else {
                            stack.push(Open::List(Vec::new()));
                            i = j;
                            continue;
                        }
                    } else if self.at(j) == Some('}') {
                        (Value::Dict(Vec::new()), j + 1)
                    } else {
                        let (key, k) = self.key(j)?;
                        stack.push(Open::Dict(Vec::new(), HashMap::new(), key));
                        i = k;
                        continue;
                    }
                }
                _ => self.scalar(i)?,
            };
            // Hand the completed value to the levels it closes, up to one that goes on.
            loop {
                let Some(mut top) = stack.pop() else {
                    return Ok((v, end));
                };
                let j = self.skip_ws(end);
                let close = match &mut top {
                    Open::List(items) => {
                        items.push(v);
                        ']'
                    }
                    Open::Dict(items, index, key) => {
                        insert(items, index, std::mem::replace(key, Str::empty()), v);
                        '}'
                    }
                };
                match self.at(j) {
                    Some(c) if c == close => {
                        v = match top {
                            Open::List(items) => Value::List(items),
                            Open::Dict(items, _, _) => Value::Dict(items),
                        };
                        end = j + 1;
                    }
                    Some(',') => {
                        let j = self.skip_ws(j + 1);
                        i = match &mut top {
                            Open::Dict(_, _, key) => {
                                let (k, next) = self.key(j)?;
                                *key = k;
                                next
                            }
                            Open::List(_) => j,
                        };
                        stack.push(top);
                        break;
                    }
                    _ => return Err(self.error("Expecting ',' delimiter", j)),
                }
            }
        }
    }

    /// A key, its colon and the white space after it, from `i`; returns where the value
    /// starts.
    fn key(&self, i: usize) -> Result<(Str, usize), String> {
        if self.at(i) != Some('"') {
            return Err(self.error("Expecting property name enclosed in double quotes", i));
        }
        let (key, end) = self.string(i + 1)?;
        let j = self.skip_ws(end);
        if self.at(j) != Some(':') {
            return Err(self.error("Expecting ':' delimiter", j));
        }
        Ok((key, self.skip_ws(j + 1)))
    }

    /// A value that is neither an array nor an object.
    fn scalar(&self, i: usize) -> Parsed {
        if self.at(i) == Some('"') {
            let (s, end) = self.string(i + 1)?;
            return Ok((Value::Str(s), end));
        }
        for (word, v) in [
            ("null", Value::Null),
            ("true", Value::Bool(true)),
            ("false", Value::Bool(false)),
        ] {
            if self.starts_with(i, word) {
                return Ok((v, i + word.len()));
            }
        }
        if let Some(r) = self.number(i) {
            return r;
        }
        for (word, v) in [
            ("NaN", f64::NAN),
            ("Infinity", f64::INFINITY),
            ("-Infinity", f64::NEG_INFINITY),
        ] {
            if self.starts_with(i, word) {
                return Ok((Value::Float(v), i + word.len()));
            }
        }
        Err(self.error("Expecting value", i))
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?`, ASCII digits only; `None` when no
    /// number starts at `i`.
    fn number(&self, start: usize) -> Option<Parsed> {
        let digit = |i: usize| self.at(i).is_some_and(|c| c.is_ascii_digit());
        let mut i = start;
        if self.at(i) == Some('-') {
            i += 1;
        }
        match self.at(i) {
            Some('0') => i += 1,
            Some('1'..='9') => {
                while digit(i) {
                    i += 1;
                }
            }
            _ => return None,
        }
        let mut is_float = false;
        if self.at(i) == Some('.') && digit(i + 1) {
            is_float = true;
            i += 1;
            while digit(i) {
                i += 1;
            }
        }
        if matches!(self.at(i), Some('e' | 'E')) {
            let mut j = i + 1;
            if matches!(self.at(j), Some('+' | '-')) {
                j += 1;
            }
            if digit(j) {
                is_float = true;
                i = j;
                while digit(i) {
                    i += 1;
                }
            }
        }
        let literal: String = self.s[start..i].iter().collect();
        if is_float {
            // Rust's parser rounds as Python's float() does, and overflows to ±inf.
            let v: f64 = literal.parse().unwrap_or(f64::NAN);
            return Some(Ok((Value::Float(v), i)));
        }
        let digits = literal.trim_start_matches('-').len();
        if digits > MAX_INT_DIGITS {
            return Some(Err(format!(
                "an integer of {digits} digits at char {start}: Python's json.load fails \
                 with ValueError (limit of {MAX_INT_DIGITS} digits for integer string \
                 conversion)"
            )));
        }
        Some(Ok((Value::Int(Int::parse(&literal)), i)))
    }

    /// A string whose opening quote is just before `i`.
    fn string(&self, start: usize) -> Result<(Str, usize), String> {
        let mut units: Vec<u16> = Vec::new();
        let mut i = start;
        loop {
            let Some(c) = self.at(i) else {
                return Err(self.error("Unterminated string starting at", start - 1));
            };
            match c {
                '"' => break,
                '\\' => {
                    let esc = self
                        .at(i + 1)
                        .ok_or_else(|| self.error("Unterminated string starting at", start - 1))?;
                    let simple = match esc {
                        '"' => Some('"'),
                        '\\' => Some('\\'),
                        '/' => Some('/'),
                        'b' => Some('\u{8}'),
                        'f' => Some('\u{c}'),
                        'n' => Some('\n'),
                        'r' => Some('\r'),
                        't' => Some('\t'),
                        _ => None,
                    };
                    if let Some(c) = simple {
                        units.push(c as u16);
                        i += 2;
                    } else if esc == 'u' {
                        let hex: Option<u32> = self
                            .s
                            .get(i + 2..i + 6)
                            .filter(|h| h.iter().all(char::is_ascii_hexdigit))
                            .map(|h| {
                                h.iter()
                                    .fold(0, |a, c| a * 16 + c.to_digit(16).unwrap_or(0))
                            });
                        let Some(u) = hex else {
                            return Err(self.error("Invalid \\uXXXX escape", i + 1));
                        };
                        units.push(u as u16);
                        i += 6;
                    } else {
                        return Err(self.error("Invalid \\escape", i));
                    }
                }
                c if (c as u32) < 0x20 => {
                    return Err(self.error("Invalid control character at", i));
                }
                c => {
                    let mut buf = [0u16; 2];
                    units.extend_from_slice(c.encode_utf16(&mut buf));
                    i += 1;
                }
            }
        }
        // Surrogate pairs from \u escapes join as in Python; a lone one stays (here U+FFFD,
        // marked inexact).
        let mut exact = true;
        let text: String = char::decode_utf16(units)
            .map(|r| {
                r.unwrap_or_else(|_| {
                    exact = false;
                    '\u{fffd}'
                })
            })
            .collect();
        Ok((Str { text, exact }, i + 1))
    }
}

/// An array or object being read: its items so far (for an object, also where each key
/// is, so that a file of many keys costs no quadratic search, and the key whose value
/// comes next).
enum Open {
    List(Vec<Value>),
    Dict(Vec<(Str, Value, usize)>, HashMap<String, usize>, Str),
}

/// Stores `d[key] = v` as a Python `dict` does: a repeated key keeps its first place and
/// takes the new value. Strings holding lone surrogates are never equal here; the only key
/// looked up is ASCII.
fn insert(
    items: &mut Vec<(Str, Value, usize)>,
    index: &mut HashMap<String, usize>,
    key: Str,
    v: Value,
) {
    if key.exact {
        if let Some(&k) = index.get(&key.text) {
            items[k].1 = v;
            items[k].2 += 1;
            return;
        }
        index.insert(key.text.clone(), items.len());
    }
    items.push((key, v, 1));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(s: &str) -> Int {
        Int::parse(s)
    }

    #[test]
    fn parses_what_python_parses() {
        // Each pair: the text and what Python 3.11's json.loads gives, as Python prints it.
        let v = load(br#"{"a": [1, -0, -0.0, 1E2, 1e400, NaN, Infinity, -Infinity, true, null]}"#)
            .unwrap();
        let Some(Value::List(items)) = v.get_counted("a").map(|x| x.0) else {
            panic!("{v:?}")
        };
        let shown: Vec<String> = items.iter().map(Value::describe).collect();
        assert_eq!(
            shown,
            [
                "1",
                "0",
                "-0.0",
                "100.0",
                "Infinity",
                "NaN",
                "Infinity",
                "-Infinity",
                "true",
                "null"
            ]
        );
        // The last of a repeated key wins.
        let v = load(br#"{"k": 1, "k": [2]}"#).unwrap();
        let list = Value::List(vec![Value::Int(int("2"))]);
        assert_eq!(v.get_counted("k"), Some((&list, 2)));
        // Escaped keys are the same key.
        let v = load(br#"{"predict\u005fendpoints": []}"#).unwrap();
        assert!(v.get_counted("predict_endpoints").is_some());
        // Lone surrogates are kept (and match no key); pairs join.
        let v = load(br#"{"\ud800": 1, "x": "\ud83d\ude00"}"#).unwrap();
        assert_eq!(
            v.get_counted("x")
                .map(|x| x.0)
                .map(Value::describe)
                .as_deref(),
            Some("\"😀\"")
        );
        // CRLF text and big integers.
        let big = "1".repeat(4300);
        assert!(load(format!("[{big}]\r\n").as_bytes()).is_ok());
    }

    #[test]
    fn fails_where_python_fails_with_its_message() {
        for (text, want) in [
            ("", "Expecting value: line 1 column 1 (char 0)"),
            ("[1,]", "Expecting value: line 1 column 4 (char 3)"),
            (
                "{\"a\":1,}",
                "Expecting property name enclosed in double quotes: line 1 column 8 (char 7)",
            ),
            ("-NaN", "Expecting value: line 1 column 1 (char 0)"),
            ("nan", "Expecting value: line 1 column 1 (char 0)"),
            ("[1] x", "Extra data: line 1 column 5 (char 4)"),
            (
                "[1.e5]",
                "Expecting ',' delimiter: line 1 column 3 (char 2)",
            ),
            ("[01]", "Expecting ',' delimiter: line 1 column 3 (char 2)"),
            ("\u{c}[1]", "Expecting value: line 1 column 1 (char 0)"),
            (
                "\u{feff}{}",
                "Unexpected UTF-8 BOM (decode using utf-8-sig)",
            ),
            (
                "\n\n  [1 2]",
                "Expecting ',' delimiter: line 3 column 6 (char 7)",
            ),
            (
                "[[[[[]]]]",
                "Expecting ',' delimiter: line 1 column 10 (char 9)",
            ),
            (
                "\"a\tb\"",
                "Invalid control character at: line 1 column 3 (char 2)",
            ),
            ("\"\\x\"", "Invalid \\escape: line 1 column 2 (char 1)"),
            (
                "\"ab",
                "Unterminated string starting at: line 1 column 1 (char 0)",
            ),
        ] {
            let e = load(text.as_bytes()).unwrap_err();
            assert!(e.starts_with(want), "{text:?}: {e}");
        }
        let e = load(format!("[{}]", "1".repeat(4301)).as_bytes()).unwrap_err();
        assert!(e.contains("4301 digits") && e.contains("ValueError"), "{e}");
        assert!(load(b"\xff").unwrap_err().contains("UnicodeDecodeError"));
    }

    #[test]
    fn nesting_stops_where_python_stops() {
        let nest = |n: usize| format!("{{\"x\": {}{}}}", "[".repeat(n), "]".repeat(n));
        assert!(load(nest(MAX_DEPTH - 1).as_bytes()).is_ok());
        let e = load(nest(MAX_DEPTH).as_bytes()).unwrap_err();
        assert!(e.contains("RecursionError"), "{e}");
        // Far deeper input is refused without exhausting the stack.
        assert!(load("[".repeat(1 << 20).as_bytes()).is_err());
    }

    #[test]
    fn integers_are_exact() {
        let a = int("1180591620717411303433");
        let b = int("1180591620717411303424");
        assert_eq!(a.minus(&b).to_i128(), Some(9));
        assert_eq!(b.minus(&a).to_i128(), Some(-9));
        assert_eq!(int("-5").minus(&int("-5")), Int::from_i128(0));
        assert_eq!(int("-0"), Int::from_i128(0));
        assert_eq!(int("-1000").minus(&int("1")).to_string(), "-1001");
        assert_eq!(int("100").minus(&int("-1")).to_i128(), Some(101));
        assert_eq!(
            int("170141183460469231731687303715884105728").to_i128(),
            None
        );
        assert_eq!(int("9007199254740993").to_f64(), Some(9007199254740992.0));
        assert_eq!(int(&"9".repeat(309)).to_f64(), None);
        assert_eq!(Int::from_i128(-42).to_string(), "-42");
    }
}
