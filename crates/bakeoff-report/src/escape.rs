//! Escaping of untrusted text for each medium. Model output, server error bodies and anything
//! else an endpoint sent are untrusted: every renderer passes them through one of these.

use bakeoff_term::escape::{cut_and_map, visible_control};
/// The terminal escapers are `bakeoff-term`'s, shared with the seats and every other printer.
pub use bakeoff_term::escape::{for_terminal, for_terminal_keep_end};

/// For HTML text and attribute values: `& < > " '` become entities, and control characters
/// other than newline and tab are dropped, so no reply can open a tag, close an attribute or
/// start a script.
pub fn for_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' => out.push(c),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// For one line of markdown (a list item or a table cell): HTML-significant characters become
/// entities (markdown renderers pass raw HTML through), markdown punctuation is
/// backslash-escaped, newlines become spaces, control characters are made visible, and the text
/// is cut to `max` characters.
pub fn for_markdown(s: &str, max: usize) -> String {
    cut_and_map(s, max, |c, out| match c {
        '&' => out.push_str("&amp;"),
        '<' => out.push_str("&lt;"),
        '>' => out.push_str("&gt;"),
        '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '#' | '~' => {
            out.push('\\');
            out.push(c);
        }
        '\n' | '\r' | '\t' => out.push(' '),
        c if c.is_control() => visible_control(c, out),
        c => out.push(c),
    })
}

/// For a CSV cell a spreadsheet may open: a leading `= + - @` (a formula) gets a `'` in front.
/// Quoting itself is the `csv` crate's job.
pub fn for_spreadsheet(s: &str) -> String {
    match s.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{s}"),
        _ => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_escapes_are_neutralized() {
        let s = for_terminal("ok\x1b[2J\rgone\nnext", 100);
        assert!(!s.contains('\x1b'));
        assert!(!s.contains('\r'));
        assert_eq!(s, "ok\\u{1b}[2J\\u{d}gone⏎next");
    }

    #[test]
    fn cut_to_length() {
        assert_eq!(for_terminal("abcdef", 3), "abc…");
        assert_eq!(for_terminal_keep_end("/a/b/c.jinja", 7), "…c.jinja");
        assert_eq!(for_terminal_keep_end("c.jinja", 7), "c.jinja");
    }

    #[test]
    fn html_cannot_open_a_tag() {
        assert_eq!(
            for_html("<script>alert(1)</script> & \"x\" 'y'"),
            "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;x&quot; &#39;y&#39;"
        );
        assert_eq!(for_html("a\u{1b}[2Jb\nc"), "a[2Jb\nc");
    }

    #[test]
    fn markdown_cannot_inject() {
        let s = for_markdown("<img src=x> | *bold* `code`\nnext", 100);
        assert_eq!(s, "&lt;img src=x&gt; \\| \\*bold\\* \\`code\\` next");
    }

    #[test]
    fn spreadsheet_formulas_are_defused() {
        assert_eq!(for_spreadsheet("=HYPERLINK(1)"), "'=HYPERLINK(1)");
        assert_eq!(for_spreadsheet("banana"), "banana");
    }
}
