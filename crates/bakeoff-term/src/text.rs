//! Free-text lines for a terminal: the one place that fits a note, a conditions line, a flag
//! line, a finding or a refusal to the width the tables use.
//!
//! A line wider than the width is wrapped between words — at ASCII spaces only, so a number,
//! a path, a flag name or a figure glued with non-breaking spaces is never cut — and its
//! continuation lines are indented two spaces past the line's own indentation. A single word
//! longer than the room left stays whole on a line of its own (a path is copied whole, never
//! shortened here). Lines that already fit, the tables' among them, are left as they are.
//!
//! On a pipe with no `COLUMNS` ([`wrap_width`] is `None`) nothing is wrapped: each record
//! stays one line, as scripts read it.

use super::chars;

/// How far a continuation line is indented past the line it continues.
pub const CONTINUATION: &str = "  ";

/// `text` with each line wider than `width` characters wrapped between words ([`fit_line`]),
/// continuation lines indented by [`CONTINUATION`] past the line's own indentation. A trailing
/// newline is kept; a line that fits is unchanged.
pub fn fit_text(text: &str, width: u16) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let lead: String = line.chars().take_while(|c| *c == ' ').collect();
        let cont = format!("{lead}{CONTINUATION}");
        out.push_str(&fit_line(line, usize::from(width), &cont).join("\n"));
    }
    out
}

/// `line` as lines of at most `width` characters, broken at ASCII spaces only: its leading
/// spaces kept on the first, `cont` leading each continuation. A word longer than the room
/// left stays whole on a line of its own. A line that fits comes back as it is.
pub fn fit_line(line: &str, width: usize, cont: &str) -> Vec<String> {
    let line = line.trim_end();
    if chars(line) <= width {
        return vec![line.to_string()];
    }
    let mut lines = Vec::new();
    let mut cur: String = line.chars().take_while(|c| *c == ' ').collect();
    let mut fresh = true;
    for word in line.split(' ').filter(|w| !w.is_empty()) {
        if !fresh && chars(&cur) + 1 + chars(word) > width {
            lines.push(std::mem::replace(&mut cur, cont.to_string()));
            fresh = true;
        }
        if !fresh {
            cur.push(' ');
        }
        cur.push_str(word);
        fresh = false;
    }
    lines.push(cur);
    lines
}

/// The width free-text lines are wrapped at: the tables' width ([`super::width`]) when
/// `COLUMNS` is set to a positive number or standard output is a terminal; `None` on a pipe
/// with no `COLUMNS`, where every record stays one line.
#[cfg(feature = "table")]
pub fn wrap_width() -> Option<u16> {
    use std::io::IsTerminal;
    wraps(
        std::env::var("COLUMNS").ok().as_deref(),
        std::io::stdout().is_terminal(),
    )
    .then(super::width)
}

/// Whether free text wraps: `columns` (the value of `COLUMNS`) a positive number, or the
/// output a terminal.
pub fn wraps(columns: Option<&str>, terminal: bool) -> bool {
    columns.and_then(super::positive).is_some() || terminal
}

/// `text` as it goes to standard output: [`fit_text`] at [`wrap_width`], unchanged on a pipe
/// with no `COLUMNS`.
#[cfg(feature = "table")]
pub fn for_screen(text: &str) -> String {
    match wrap_width() {
        Some(w) => fit_text(text, w),
        None => text.to_string(),
    }
}

/// The width lines on standard error (an error, a refusal, progress) are wrapped at: `COLUMNS`,
/// else standard error's terminal, else 120 — when `COLUMNS` is set or standard error is a
/// terminal; `None` otherwise (a log keeps one line per record).
#[cfg(feature = "table")]
pub fn stderr_width() -> Option<u16> {
    use std::io::IsTerminal;
    wraps(
        std::env::var("COLUMNS").ok().as_deref(),
        std::io::stderr().is_terminal(),
    )
    .then(|| {
        super::width_with(|| {
            let mut t = comfy_table::Table::new();
            t.use_stderr();
            t.width()
        })
    })
}

/// `text` as it goes to standard error: [`fit_text`] at [`stderr_width`], else unchanged.
#[cfg(feature = "table")]
pub fn for_stderr(text: &str) -> String {
    match stderr_width() {
        Some(w) => fit_text(text, w),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn widest(s: &str) -> usize {
        s.lines().map(chars).max().unwrap_or(0)
    }

    /// The note of issue's example: 97 characters at 80 columns becomes two lines, the second
    /// indented, every word kept.
    #[test]
    fn a_long_line_wraps_between_words_with_an_indented_continuation() {
        let line = "not shown at 80 columns: engine, quant, window (tokens) (a wider terminal or the JSON shows them)";
        let out = fit_text(line, 80);
        assert!(widest(&out) <= 80, "{out}");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2, "{out}");
        assert!(
            lines[1].starts_with("  ") && !lines[1].starts_with("   "),
            "{out}"
        );
        assert_eq!(
            out.split_whitespace().collect::<Vec<_>>(),
            line.split_whitespace().collect::<Vec<_>>()
        );
    }

    /// Numbers, paths and flag names are words: never cut. A path longer than the width
    /// stays whole on a line of its own.
    #[test]
    fn a_number_a_path_or_a_flag_name_is_never_broken() {
        let path = "/var/lib/bakeoff/runs/2026-12-07/qwen2.5-7b-instruct-q4_k_m.bakeoff.json";
        let line = format!(
            "flag instrument-context-overflow: 1234.5 ms at --max-model-len 32768 wrote {path} and more"
        );
        let out = fit_text(&line, 40);
        for word in line.split(' ') {
            assert!(
                out.lines().any(|l| l.split(' ').any(|w| w == word)),
                "{word}: {out}"
            );
        }
        for l in out.lines() {
            assert!(chars(l) <= 40 || l.trim() == path, "{l:?} in {out}");
        }
        assert!(out.lines().any(|l| l == format!("  {path}")), "{out}");
    }

    /// An indented line keeps its indentation; its continuations go two further. Lines that
    /// fit — a table's — are untouched, and a trailing newline stays.
    #[test]
    fn indentation_fitting_lines_and_the_trailing_newline_are_kept() {
        let text = "┌──┐\n│ a │\n    - a finding that is rather long for the narrow screen here\n";
        let out = fit_text(text, 30);
        assert!(out.starts_with("┌──┐\n│ a │\n    - a finding"), "{out}");
        assert!(out.ends_with('\n'));
        for l in out.lines().skip(3) {
            assert!(
                l.starts_with("      ") && !l.starts_with("       "),
                "{out}"
            );
        }
        assert!(widest(&out) <= 30, "{out}");
    }

    /// Characters are counted, not bytes: `—` and `…` are one each.
    #[test]
    fn width_counts_characters_not_bytes() {
        let line = "é".repeat(10) + " — " + &"…".repeat(10);
        assert_eq!(fit_text(&line, 23), line);
        assert_eq!(fit_text(&line, 22).lines().count(), 2);
    }

    /// Free text wraps on a terminal or under `COLUMNS`; on a pipe without it, never.
    #[test]
    fn a_pipe_without_columns_keeps_one_line_per_record() {
        assert!(wraps(Some("80"), false));
        assert!(wraps(None, true));
        assert!(!wraps(None, false));
        assert!(!wraps(Some("0"), false));
        assert!(!wraps(Some("wide"), false));
    }
}
