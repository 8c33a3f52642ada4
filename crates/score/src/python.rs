//! Python's string and number rules that the official PhysioNet scorers rely on without
//! saying so: what `str.strip()` removes, what `float()` accepts, what `str.casefold()`
//! makes equal, how a file opened in text mode splits into lines, and how `'{:.3f}'`
//! prints. Reproducing them is what makes a sanitised prediction field read the same here
//! as in the official code. [`json`] is `json.load`.

pub(crate) mod json;

/// `str.isspace()`: Unicode White_Space plus the four ASCII information separators
/// (U+001C–U+001F), which Python counts as whitespace and Rust's `char::is_whitespace`
/// does not.
fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// `str.strip()` with no argument.
pub(crate) fn strip(s: &str) -> &str {
    s.trim_matches(is_py_space)
}

/// One line of a file read in Python's text mode (universal newlines: `\n`, `\r\n` and a
/// lone `\r` each end a line): its byte range without the terminator, and whether a
/// terminator ended it (only the last line may lack one). The ranges hold on bytes and
/// on text alike, since `\r` and `\n` never occur inside a UTF-8 sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Line {
    pub start: usize,
    pub end: usize,
    pub terminated: bool,
}

/// The lines of `bytes`, as Python's text mode splits them; a final terminator does not
/// start another line.
pub(crate) fn lines(bytes: &[u8]) -> impl Iterator<Item = Line> + '_ {
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= bytes.len() {
            return None;
        }
        let rest = &bytes[start..];
        let line = match rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            Some(k) => {
                let crlf = rest[k] == b'\r' && rest.get(k + 1) == Some(&b'\n');
                let line = Line {
                    start,
                    end: start + k,
                    terminated: true,
                };
                start += k + if crlf { 2 } else { 1 };
                line
            }
            None => {
                let line = Line {
                    start,
                    end: bytes.len(),
                    terminated: false,
                };
                start = bytes.len();
                line
            }
        };
        Some(line)
    })
}

/// The lines of a text read in Python's text mode, without their terminators.
pub(crate) fn text_lines(s: &str) -> Vec<&str> {
    lines(s.as_bytes()).map(|l| &s[l.start..l.end]).collect()
}

/// The first code point of every block of ten Unicode decimal digits (category Nd), as
/// Python 3.11 (Unicode 14.0) has them; checked there: each block is contiguous and
/// holds the digits 0–9 in order, and together they are every decimal character.
const DIGIT_ZEROS: [u32; 66] = [
    0x30, 0x660, 0x6f0, 0x7c0, 0x966, 0x9e6, 0xa66, 0xae6, 0xb66, 0xbe6, 0xc66, 0xce6, 0xd66,
    0xde6, 0xe50, 0xed0, 0xf20, 0x1040, 0x1090, 0x17e0, 0x1810, 0x1946, 0x19d0, 0x1a80, 0x1a90,
    0x1b50, 0x1bb0, 0x1c40, 0x1c50, 0xa620, 0xa8d0, 0xa900, 0xa9d0, 0xa9f0, 0xaa50, 0xabf0, 0xff10,
    0x104a0, 0x10d30, 0x11066, 0x110f0, 0x11136, 0x111d0, 0x112f0, 0x11450, 0x114d0, 0x11650,
    0x116c0, 0x11730, 0x118e0, 0x11950, 0x11c50, 0x11d50, 0x11da0, 0x16a60, 0x16ac0, 0x16b50,
    0x1d7ce, 0x1d7d8, 0x1d7e2, 0x1d7ec, 0x1d7f6, 0x1e140, 0x1e2f0, 0x1e950, 0x1fbf0,
];

/// A decimal digit of any script as its ASCII digit.
fn ascii_digit(c: char) -> Option<char> {
    let cp = c as u32;
    let i = DIGIT_ZEROS.partition_point(|&z| z <= cp);
    let zero = *DIGIT_ZEROS.get(i.checked_sub(1)?)?;
    (cp - zero < 10).then(|| char::from(b'0' + (cp - zero) as u8))
}

/// `float(s)`: `None` where Python raises `ValueError`. Like Python, it first turns
/// decimal digits of any script into ASCII ones, then strips Unicode whitespace (which,
/// unlike `str.strip()`, leaves U+001C–U+001F), then accepts a sign, `inf`/`infinity`/
/// `nan` in any case, or a decimal literal with `_` between digits (PEP 515). Overflow
/// gives ±inf, as in Python.
pub(crate) fn float(s: &str) -> Option<f64> {
    let ascii: String = s.chars().map(|c| ascii_digit(c).unwrap_or(c)).collect();
    let s = ascii.trim_matches(char::is_whitespace);
    let (negative, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let special = if body.eq_ignore_ascii_case("inf") || body.eq_ignore_ascii_case("infinity") {
        Some(f64::INFINITY)
    } else if body.eq_ignore_ascii_case("nan") {
        Some(f64::NAN)
    } else {
        None
    };
    if let Some(v) = special {
        return Some(if negative { -v } else { v });
    }
    let cleaned = decimal_without_underscores(body)?;
    let v: f64 = cleaned.parse().ok()?;
    Some(if negative { -v } else { v })
}

/// `int(s)` (base 10): Python's integer, or why Python raises `ValueError`. Like `float()`,
/// it first turns decimal digits of any script into ASCII ones and strips Unicode
/// whitespace (leaving U+001C–U+001F), then takes a sign and digits with single `_`
/// between them (PEP 515); leading zeros are fine. More than 4300 digits (underscores
/// not counted) is Python's limit for integer string conversion.
pub(crate) fn int(s: &str) -> Result<json::Int, String> {
    let invalid = || format!("invalid literal for int() with base 10: {s:?} (ValueError)");
    let ascii: String = s.chars().map(|c| ascii_digit(c).unwrap_or(c)).collect();
    let t = ascii.trim_matches(char::is_whitespace);
    let (negative, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let mut digits = String::with_capacity(body.len() + 1);
    let mut prev_digit = false;
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '0'..='9' => {
                digits.push(c);
                prev_digit = true;
            }
            '_' if prev_digit && chars.peek().is_some_and(char::is_ascii_digit) => {
                prev_digit = false;
            }
            _ => return Err(invalid()),
        }
    }
    if digits.is_empty() {
        return Err(invalid());
    }
    if digits.len() > json::MAX_INT_DIGITS {
        return Err(format!(
            "int() of a string of {} digits exceeds Python's limit of {} for integer string \
             conversion (ValueError)",
            digits.len(),
            json::MAX_INT_DIGITS
        ));
    }
    if negative {
        digits.insert(0, '-');
    }
    Ok(json::Int::parse(&digits))
}

/// Checks Python's decimal-literal grammar (digits with single `_` between digits, an
/// optional fraction, an optional exponent with its own sign) and returns the literal
/// without underscores, which Rust's parser then rounds exactly as Python's does.
fn decimal_without_underscores(body: &str) -> Option<String> {
    #[derive(PartialEq)]
    enum Part {
        Integer,
        Fraction,
        ExponentSign,
        Exponent,
    }
    let mut out = String::with_capacity(body.len());
    let mut part = Part::Integer;
    let mut mantissa_digits = 0;
    let mut exponent_digits = 0;
    let mut prev_digit = false;
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '0'..='9' => {
                if part == Part::ExponentSign {
                    part = Part::Exponent;
                }
                match part {
                    Part::Exponent => exponent_digits += 1,
                    _ => mantissa_digits += 1,
                }
                prev_digit = true;
                out.push(c);
                continue;
            }
            '_' => {
                let next_digit = chars.peek().is_some_and(|n| n.is_ascii_digit());
                if !(prev_digit && next_digit) {
                    return None;
                }
            }
            '.' if part == Part::Integer => {
                part = Part::Fraction;
                out.push(c);
            }
            'e' | 'E' if matches!(part, Part::Integer | Part::Fraction) && mantissa_digits > 0 => {
                part = Part::ExponentSign;
                out.push('e');
            }
            '+' | '-' if part == Part::ExponentSign && !prev_digit && out.ends_with('e') => {
                out.push(c);
            }
            _ => return None,
        }
        prev_digit = false;
    }
    let exponent_ok = match part {
        Part::ExponentSign | Part::Exponent => exponent_digits > 0,
        _ => true,
    };
    (mantissa_digits > 0 && exponent_ok).then_some(out)
}

/// `x.strip().casefold() == class.casefold()` for an ASCII class name. Besides ASCII
/// letters in any case, exactly these characters fold to ASCII in Python (checked over
/// every code point): ß and ẞ → ss, ſ → s, the Kelvin sign (U+212A) → k and the Latin ligatures
/// U+FB00–U+FB06. Any other non-ASCII character folds to something non-ASCII, so it can
/// never equal an ASCII class name.
pub(crate) fn same_class(x: &str, class: &str) -> bool {
    debug_assert!(class.is_ascii());
    let mut folded = String::with_capacity(x.len());
    for c in strip(x).chars() {
        let f = match c {
            c if c.is_ascii() => {
                folded.push(c.to_ascii_lowercase());
                continue;
            }
            'ß' | 'ẞ' => "ss",
            'ſ' => "s",
            '\u{212a}' => "k",
            'ﬀ' => "ff",
            'ﬁ' => "fi",
            'ﬂ' => "fl",
            'ﬃ' => "ffi",
            'ﬄ' => "ffl",
            'ﬅ' | 'ﬆ' => "st",
            _ => return false,
        };
        folded.push_str(f);
    }
    folded.eq_ignore_ascii_case(strip(class))
}

/// `'{:.3f}'.format(v)`: Rust's `{:.3}` rounds the same way (exactly, ties to even), but
/// Python spells the special values `nan`, `inf` and `-inf`.
pub(crate) fn fmt3(v: f64) -> String {
    if v.is_nan() {
        "nan".into()
    } else if v.is_infinite() {
        if v > 0.0 { "inf" } else { "-inf" }.into()
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_follows_python() {
        // Each pair: the text and what Python 3.11's int() gives (None = ValueError).
        let cases: &[(&str, Option<i128>)] = &[
            ("100", Some(100)),
            (" 12 ", Some(12)),
            ("\t12\n", Some(12)),
            ("\u{2003} 12", Some(12)),
            ("\u{a0}12\u{3000}", Some(12)),
            ("-0", Some(0)),
            ("+5", Some(5)),
            ("-007", Some(-7)),
            ("1_000", Some(1000)),
            ("\u{662}\u{663}", Some(23)),
            ("12\u{1c}", None),
            ("\u{1f}12", None),
            ("1__0", None),
            ("_10", None),
            ("10_", None),
            ("", None),
            ("-", None),
            ("1.0", None),
            ("1e3", None),
            ("nan", None),
            ("True", None),
            ("0x10", None),
            ("1 0", None),
            ("\u{2460}", None),
        ];
        for (s, want) in cases {
            assert_eq!(int(s).ok().and_then(|i| i.to_i128()), *want, "{s:?}");
        }
        let limit = "9".repeat(json::MAX_INT_DIGITS);
        assert!(int(&limit).is_ok());
        assert!(
            int(&format!("1_{limit}"))
                .unwrap_err()
                .contains("4301 digits")
        );
        assert!(int(&format!("1_{}", &limit[1..])).is_ok());
    }

    #[test]
    fn float_follows_python() {
        // Each pair: the text and what Python 3.11's float() gives (None = ValueError).
        let cases: &[(&str, Option<f64>)] = &[
            ("1", Some(1.0)),
            (" 1.0\n", Some(1.0)),
            ("+1e0", Some(1.0)),
            ("1.", Some(1.0)),
            ("1.e5", Some(1e5)),
            (".5E-1", Some(0.05)),
            (".5", Some(0.5)),
            ("1_000.5", Some(1000.5)),
            ("1e1_0", Some(1e10)),
            ("-InFiNiTy", Some(f64::NEG_INFINITY)),
            ("inf", Some(f64::INFINITY)),
            ("1e400", Some(f64::INFINITY)),
            ("0.1", Some(0.1)),
            ("\u{a0}2\u{3000}", Some(2.0)),
            ("\u{1f}2", None),
            ("\u{661}\u{662}.5", Some(12.5)),
            ("\u{ff11}e\u{ff12}", Some(100.0)),
            ("\u{1d7ce}", Some(0.0)),
            ("\u{2460}", None),
            ("1__0", None),
            ("_1", None),
            ("1_", None),
            ("1_.5", None),
            ("1._5", None),
            ("1e", None),
            ("1e+", None),
            ("e5", None),
            (".", None),
            ("", None),
            ("0x10", None),
            ("1 0", None),
            ("--1", None),
            ("1e5.0", None),
            ("1.2.3", None),
            ("infinit", None),
            ("TRUE", None),
        ];
        for &(text, want) in cases {
            let got = float(text);
            match (got, want) {
                (Some(g), Some(w)) => assert_eq!(g.to_bits(), w.to_bits(), "{text:?}"),
                (None, None) => {}
                _ => panic!("{text:?}: got {got:?}, Python gives {want:?}"),
            }
        }
        assert!(float("-nan").is_some_and(f64::is_nan));
    }

    #[test]
    fn lines_split_like_text_mode() {
        assert_eq!(text_lines("a\r\nb\rc\nd"), ["a", "b", "c", "d"]);
        assert_eq!(text_lines("a\n\n\n"), ["a", "", ""]);
        assert_eq!(text_lines("a\r\r\n"), ["a", ""]);
        assert!(text_lines("").is_empty());
    }

    #[test]
    fn class_names_compare_as_casefold() {
        assert!(same_class(" present \r", "Present"));
        assert!(same_class("ABNORMAL", "Abnormal"));
        assert!(same_class("Preſent", "Present"));
        assert!(same_class("un\u{212a}nown", "Unknown"));
        assert!(!same_class("Présent", "Present"));
        // Every non-ASCII character whose casefold is ASCII (from Python 3.11), in a word
        // that holds its fold.
        for (word, class) in [
            ("Ab\u{df}nt", "Abssnt"),
            ("Ab\u{1e9e}nt", "Abssnt"),
            ("pre\u{17f}ent", "present"),
            ("\u{fb00}", "ff"),
            ("\u{fb01}", "fi"),
            ("\u{fb02}", "fl"),
            ("\u{fb03}", "ffi"),
            ("\u{fb04}", "ffl"),
            ("\u{fb05}", "st"),
            ("\u{fb06}", "st"),
        ] {
            assert!(same_class(word, class), "{word:?}");
        }
        assert!(!same_class("Presents", "Present"));
        assert!(!same_class("", "Present"));
    }

    #[test]
    fn three_decimals_like_python() {
        assert_eq!(fmt3(f64::NAN), "nan");
        assert_eq!(fmt3(f64::NEG_INFINITY), "-inf");
        assert_eq!(fmt3(0.0625), "0.062");
        assert_eq!(fmt3(15083.375), "15083.375");
        assert_eq!(fmt3(0.5254506892895016), "0.525");
    }
}
