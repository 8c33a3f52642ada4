//! Text that came from an entry or its archive, made safe to show: every string an
//! entry chose (a requirement line, a member name, what it wrote in an output or on its
//! standard streams) passes through here before it reaches a terminal, a log line or a
//! stage log. Raw control bytes could otherwise move the cursor, erase a line and print a
//! green "passed" over a failure on the organiser's terminal; a huge name could fill
//! memory and every log it is copied into.
//!
//! Control characters (C0 but newline and tab where a block keeps them, DEL, C1) and the
//! Unicode bidirectional overrides and isolates (which reorder what is shown) are written
//! as escapes (`\x1b`, `\u{202e}`); a line is cut at [`LINE_CAP`] characters with a note
//! of what was left out. JSON files need none of this: serde escapes control characters.

use std::borrow::Cow;
use std::fmt::Write;

/// The most characters of one shown line (a name, a message).
pub const LINE_CAP: usize = 1000;

fn needs_escape(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn escape_into(out: &mut String, c: char) {
    let _ = match c as u32 {
        n @ 0..=0xff => write!(out, "\\x{n:02x}"),
        n => write!(out, "\\u{{{n:x}}}"),
    };
}

/// One line of entry text: every control character escaped (newlines too), cut at
/// [`LINE_CAP`] characters.
pub fn line(s: &str) -> Cow<'_, str> {
    if s.chars().count() <= LINE_CAP && !s.chars().any(needs_escape) {
        return Cow::Borrowed(s);
    }
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i == LINE_CAP {
            let rest = s.chars().skip(LINE_CAP).count();
            let _ = write!(out, "… ({rest} more characters)");
            break;
        }
        if needs_escape(c) {
            escape_into(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A block of entry output (its stdout or stderr in a stage log): newlines and tabs
/// kept, every other control character escaped, invalid UTF-8 replaced. The caller caps
/// the size (stage logs are capped as a whole).
pub fn block(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if needs_escape(c) && c != '\n' && c != '\t' {
            escape_into(&mut out, c);
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
            "numpy>=9\\x0d\\x1b[2K\\x1b[32mquiz passed\\x1b[0m"
        );
        assert_eq!(line("plain name.py"), "plain name.py");
        assert_eq!(line("a\u{202e}b\u{9b}c"), "a\\u{202e}b\\x9bc");
        assert_eq!(
            block(b"Traceback\n\tline\r\x1b[1m"),
            "Traceback\n\tline\\x0d\\x1b[1m"
        );
    }

    #[test]
    fn a_long_line_is_cut_with_a_count() {
        let s = "é".repeat(LINE_CAP + 5);
        let shown = line(&s);
        assert!(shown.ends_with("… (5 more characters)"), "{shown}");
        assert_eq!(shown.chars().filter(|&c| c == 'é').count(), LINE_CAP);
    }

    proptest! {
        #[test]
        fn nothing_shown_holds_a_control_character(s in any::<String>(), b in any::<Vec<u8>>()) {
            prop_assert!(!line(&s).chars().any(needs_escape));
            prop_assert!(!block(&b).chars().any(|c| needs_escape(c) && c != '\n' && c != '\t'));
            prop_assert!(line(&s).chars().count() <= LINE_CAP + 40);
        }
    }
}
