//! Text that came from an entry or its archive, made safe to show: every string an
//! entry chose (a requirement line, a member name, what it wrote in an output or on its
//! standard streams) passes through here before it reaches a terminal, a log line or a
//! stage log. Raw control bytes could otherwise move the cursor, erase a line and print a
//! green "passed" over a failure on the organiser's terminal; a huge name could fill
//! memory and every log it is copied into.
//!
//! Control characters (C0 but newline and tab where a block keeps them, DEL, C1) and the
//! Unicode direction marks, overrides and isolates (which reorder what is shown) are
//! written as escapes (`\u{1b}`, `\u{202e}`); a line is cut with "…" at [`LINE_CAP`]
//! characters. JSON files need none of this: serde escapes control characters.

use std::borrow::Cow;
use std::fmt::Write;

/// The most characters of one shown line (a name, a message).
pub const LINE_CAP: usize = 1000;

fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every control character (newlines too) and direction mark escaped as
/// `\u{…}`, cut with "…" once the result would pass `max` characters.
pub fn clip(text: &str, max: usize) -> String {
    let mut out = String::new();
    let mut len = 0;
    for c in text.chars() {
        let piece = if needs_escape(c) {
            format!("\\u{{{:x}}}", c as u32)
        } else {
            c.to_string()
        };
        let n = piece.chars().count();
        if len + n > max {
            out.push('…');
            return out;
        }
        out.push_str(&piece);
        len += n;
    }
    out
}

/// One line of entry text: [`clip`]ped at [`LINE_CAP`] characters (borrowed when it
/// needs nothing).
pub fn line(s: &str) -> Cow<'_, str> {
    if s.chars().count() <= LINE_CAP && !s.chars().any(needs_escape) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(clip(s, LINE_CAP))
}

/// A block of entry output (its stdout or stderr in a stage log): newlines and tabs
/// kept, every other control character escaped, invalid UTF-8 replaced. The caller caps
/// the size (stage logs are capped as a whole).
pub fn block(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if needs_escape(c) && c != '\n' && c != '\t' {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_forged_passed_line_is_shown_as_text() {
        let forged = "numpy>=9\r\x1b[2K\x1b[32mquiz passed\x1b[0m";
        assert_eq!(
            line(forged),
            "numpy>=9\\u{d}\\u{1b}[2K\\u{1b}[32mquiz passed\\u{1b}[0m"
        );
        assert_eq!(line("plain name.py"), "plain name.py");
        assert_eq!(line("a\u{202e}b\u{9b}c"), "a\\u{202e}b\\u{9b}c");
        assert_eq!(
            block(b"Traceback\n\tline\r\x1b[1m"),
            "Traceback\n\tline\\u{d}\\u{1b}[1m"
        );
    }

    #[test]
    fn a_long_line_is_cut() {
        let s = "é".repeat(LINE_CAP + 5);
        let shown = line(&s);
        assert!(shown.ends_with('…'), "{shown}");
        assert_eq!(shown.chars().filter(|&c| c == 'é').count(), LINE_CAP);
    }

    proptest! {
        #[test]
        fn nothing_shown_holds_a_control_character(s in any::<String>(), b in any::<Vec<u8>>()) {
            prop_assert!(!line(&s).chars().any(needs_escape));
            prop_assert!(!block(&b).chars().any(|c| needs_escape(c) && c != '\n' && c != '\t'));
            prop_assert!(line(&s).chars().count() <= LINE_CAP + 1);
        }
    }
}
