//! Entry logs as text a page can show: ANSI escapes and other control characters
//! removed, length capped. (Escaping for HTML is the template's job; this keeps a log
//! from drawing on the reader's screen or hiding lines.)

/// The most of a log a page shows; the whole log is at the API's log endpoint.
pub(crate) const LOG_CAP: usize = 64 * 1024;

/// `text` without escape sequences (CSI `ESC [ … final`, OSC `ESC ] … BEL|ESC \`, and
/// two-byte `ESC x`) or control characters other than newline and tab; carriage
/// returns end a line. Returns the text and whether it was cut at [`LOG_CAP`].
pub(crate) fn clean_log(text: &str) -> (String, bool) {
    let mut out = String::with_capacity(text.len().min(LOG_CAP));
    let mut chars = text.chars().peekable();
    let mut cut = false;
    while let Some(c) = chars.next() {
        if out.len() >= LOG_CAP {
            cut = true;
            break;
        }
        match c {
            '\u{1b}' => match chars.next() {
                Some('[') => {
                    // parameters and intermediates, then one final byte @..~
                    for d in chars.by_ref() {
                        if ('@'..='~').contains(&d) {
                            break;
                        }
                    }
                }
                Some(']') | Some('P') | Some('X') | Some('^') | Some('_') => {
                    // a string ended by BEL or ESC \
                    while let Some(d) = chars.next() {
                        if d == '\u{7}' {
                            break;
                        }
                        if d == '\u{1b}' {
                            if chars.peek() == Some(&'\\') {
                                chars.next();
                            }
                            break;
                        }
                    }
                }
                _ => {}
            },
            // C1 CSI, as some programs send it
            '\u{9b}' => {
                for d in chars.by_ref() {
                    if ('@'..='~').contains(&d) {
                        break;
                    }
                }
            }
            '\n' | '\t' => out.push(c),
            '\r' => {
                if chars.peek() != Some(&'\n') {
                    out.push('\n');
                }
            }
            c if c.is_control() => {}
            // bidi overrides could reorder what the reader sees
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => {}
            c => out.push(c),
        }
    }
    (out, cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_controls_go() {
        let (s, cut) = clean_log(
            "\u{1b}[31mred\u{1b}[0m \u{1b}]0;title\u{7}ok\u{1b}]8;;http://x\u{1b}\\link\r\nz\u{0}\u{8}\u{202e}!",
        );
        assert_eq!(s, "red oklink\nz!");
        assert!(!cut);
    }

    #[test]
    fn long_logs_are_cut() {
        let (s, cut) = clean_log(&"a".repeat(LOG_CAP * 2));
        assert_eq!(s.len(), LOG_CAP);
        assert!(cut);
    }

    #[test]
    fn a_lone_escape_at_the_end_is_dropped() {
        assert_eq!(clean_log("x\u{1b}").0, "x");
        assert_eq!(clean_log("x\u{1b}[12").0, "x");
    }
}
