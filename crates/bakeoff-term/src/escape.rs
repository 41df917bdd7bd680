//! Escaping of untrusted text for a terminal. Model output, server error bodies, seat logs and
//! anything else an endpoint sent are untrusted: what reaches a terminal passes through one of
//! these, so that the seats and the reporters share one escaper
//! (`bakeoff_report::escape` re-exports them beside its HTML, markdown and CSV escapers).

/// For a terminal: control characters (ESC, CR, BEL, …) become visible `\u{..}` escapes,
/// newlines become `⏎`, and the text is cut to `max` characters.
pub fn for_terminal(s: &str, max: usize) -> String {
    cut_and_map(s, max, |c, out| match c {
        '\n' => out.push('⏎'),
        '\t' => out.push(' '),
        c if c.is_control() => visible_control(c, out),
        c => out.push(c),
    })
}

/// The first `max` characters of `s`, each written by `map` (`…` marks a cut): the one loop of
/// every escaper that cuts its text.
pub fn cut_and_map(s: &str, max: usize, mut map: impl FnMut(char, &mut String)) -> String {
    let mut out = String::new();
    for (n, c) in s.chars().enumerate() {
        if n >= max {
            out.push('…');
            break;
        }
        map(c, &mut out);
    }
    out
}

/// A control character made visible: `\u{1b}` for ESC.
pub fn visible_control(c: char, out: &mut String) {
    out.push_str(&format!("\\u{{{:x}}}", c as u32));
}

/// As [`for_terminal`], but a text longer than `max` keeps its end (`…` + the last `max`
/// characters): for paths, whose file name is the part an operator reads.
pub fn for_terminal_keep_end(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        return for_terminal(s, max);
    }
    let tail: String = s.chars().skip(n - max).collect();
    format!("…{}", for_terminal(&tail, max))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_become_visible() {
        assert_eq!(for_terminal("a\u{7}b\tc\nd", 100), "a\\u{7}b c⏎d");
        assert_eq!(for_terminal_keep_end("abcdef", 2), "…ef");
    }
}
