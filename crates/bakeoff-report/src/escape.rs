//! Escaping of untrusted text for each medium.

/// For a terminal: control characters (ESC, CR, BEL, …) become visible `\u{..}` escapes,
/// newlines become `⏎`, and the text is cut to `max` characters.
pub fn for_terminal(s: &str, max: usize) -> String {
    let mut out = String::new();
    for (n, c) in s.chars().enumerate() {
        if n >= max {
            out.push('…');
            break;
        }
        match c {
            '\n' => out.push('⏎'),
            '\t' => out.push(' '),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
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
    }
}
