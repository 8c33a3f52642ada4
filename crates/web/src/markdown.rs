//! Organisers' Markdown (a challenge's overview, data and rules texts, announcements)
//! as HTML a page may show: rendered by `pulldown-cmark`, then cleaned by `ammonia`
//! to an allow-list of tags, attributes and URL schemes, so that no text an organiser
//! writes (or pastes) can run script, style the page, frame another site or submit a
//! form. The clean HTML is the only unescaped text a page writes besides the plot's SVG.

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// `text` as clean HTML. Headings start at `h3`: the page's own `h1` and `h2` frame the
/// text (the outline stays in order for screen readers). Images are dropped: the site's
/// Content-Security-Policy shows only its own, and a remote one would be a tracker.
pub(crate) fn to_html(text: &str) -> String {
    // Control characters (but tab and line breaks) mean nothing in Markdown, are
    // errors in HTML and cannot be carried by XML at all (the feed): dropped first.
    let text: String = text
        .chars()
        .filter(|&c| !c.is_control() || matches!(c, '\t' | '\n' | '\r'))
        .collect();
    let parser = Parser::new_ext(
        &text,
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS,
    )
    .map(|e| match e {
        Event::Start(Tag::Heading {
            level,
            id,
            classes,
            attrs,
        }) => Event::Start(Tag::Heading {
            level: lower(level),
            id,
            classes,
            attrs,
        }),
        Event::End(TagEnd::Heading(level)) => Event::End(TagEnd::Heading(lower(level))),
        e => e,
    });
    let mut html = String::with_capacity(text.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut html, parser);
    clean(&html)
}

/// Two levels down, `h6` at most.
fn lower(l: HeadingLevel) -> HeadingLevel {
    match l {
        HeadingLevel::H1 => HeadingLevel::H3,
        HeadingLevel::H2 => HeadingLevel::H4,
        HeadingLevel::H3 => HeadingLevel::H5,
        _ => HeadingLevel::H6,
    }
}

fn clean(html: &str) -> String {
    ammonia::Builder::default()
        .rm_tags(["img"])
        // Links leave the site without telling it who sent the reader, and carry no
        // weight for search engines (anyone's text could be spam).
        .link_rel(Some("noopener noreferrer nofollow"))
        .url_schemes(["http", "https", "mailto"].into())
        .clean(html)
        .to_string()
}

/// A short plain-text excerpt of `text` (for a feed's summary): the words, no markup.
pub(crate) fn plain(text: &str, max_chars: usize) -> String {
    let mut out = String::new();
    for e in Parser::new(text) {
        match e {
            Event::Text(t) | Event::Code(t) => out.push_str(&t),
            Event::SoftBreak
            | Event::HardBreak
            | Event::End(
                TagEnd::Paragraph
                | TagEnd::Heading(_)
                | TagEnd::Item
                | TagEnd::CodeBlock
                | TagEnd::TableCell,
                // spaces collapse below
            ) => out.push(' '),
            _ => {}
        }
    }
    let out = out.split_whitespace().collect::<Vec<_>>().join(" ");
    if out.chars().count() <= max_chars {
        out
    } else {
        let cut: String = out.chars().take(max_chars).collect();
        format!("{}…", cut.trim_end())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_renders() {
        let h =
            to_html("# Title\n\nSome *emphasis* and a [link](https://example.org).\n\n- a\n- b\n");
        assert!(h.contains("<h3>Title</h3>"), "{h}");
        assert!(h.contains("<em>emphasis</em>"), "{h}");
        assert!(
            h.contains(
                r#"<a href="https://example.org" rel="noopener noreferrer nofollow">link</a>"#
            ),
            "{h}"
        );
        assert!(h.contains("<li>a</li>"), "{h}");
    }

    /// Hostile Markdown and HTML: nothing that runs, loads or restyles survives.
    #[test]
    fn hostile_input_is_cleaned() {
        let cases = [
            "<script>alert(1)</script>",
            "<img src=x onerror=alert(1)>",
            "[click](javascript:alert(1))",
            "[click](JaVaScRiPt:alert(1))",
            "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
            "<a href=\"javascript:alert(1)\">x</a>",
            "<iframe src=\"https://evil.example\"></iframe>",
            "<svg onload=alert(1)><circle/></svg>",
            "<style>body{display:none}</style>",
            "<div style=\"position:fixed;inset:0\">cover</div>",
            "<form action=\"https://evil.example\"><input name=p></form>",
            "<p onclick=\"alert(1)\">x</p>",
            "![tracker](https://evil.example/pixel.gif)",
            "<object data=\"x\"></object><embed src=\"x\">",
            "<math><mi xlink:href=\"javascript:alert(1)\">x</mi></math>",
            "<base href=\"https://evil.example/\">",
            "<meta http-equiv=\"refresh\" content=\"0;url=https://evil.example\">",
            "<a href=\"&#106;avascript:alert(1)\">x</a>",
            "<<script>script>alert(1)<</script>/script>",
        ];
        for c in cases {
            let h = to_html(c).to_ascii_lowercase();
            for bad in [
                "<script",
                "onerror",
                "onload",
                "onclick",
                "javascript:",
                "data:",
                "<iframe",
                "<style",
                "style=",
                "<form",
                "<input",
                "<img",
                "<object",
                "<embed",
                "<base",
                "<meta",
                "<svg",
                "xlink",
            ] {
                assert!(!h.contains(bad), "{c:?} gave {h:?}, with {bad:?}");
            }
        }
    }

    #[test]
    fn text_that_looks_like_html_is_kept_as_text() {
        let h = to_html("a < b && c > d");
        assert!(h.contains("a &lt; b &amp;&amp; c &gt; d"), "{h}");
    }

    #[test]
    fn plain_excerpts() {
        assert_eq!(
            plain("# Hi\n\nThe *data* is `here`.", 100),
            "Hi The data is here."
        );
        assert_eq!(plain("one two three", 7), "one two…");
    }
}
