//! What a terminal of a given width must get from every command that prints a table
//! (docs/reports.md "Fitting the terminal"): no line wider than the width, counted in
//! characters and not bytes — a single word longer than the room (a long path) stays whole on
//! a line of its own, the only exception — and every column a table leaves out named under it.

/// The widths the tests check: the compact layout (60), a classic terminal (80), the default
/// of a pipe (120).
pub const WIDTHS: [u16; 3] = [60, 80, 120];

/// Each line of `text` fits `width` characters, or is one word longer than the room left.
pub fn fits_every_line(text: &str, width: u16, what: &str) {
    let w = usize::from(width);
    for l in text.lines() {
        let n = l.chars().count();
        let indent = n - l.trim_start().chars().count();
        let one_long_word = !l.trim().contains(' ') && n - indent > w.saturating_sub(indent);
        assert!(
            n <= w || one_long_word,
            "{what}: a line of {n} characters at {width} columns:\n{l}\n--- all of it:\n{text}"
        );
    }
}

/// The words of `text`, all whitespace one space: a wrapped line and its source compare equal.
pub fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The "not shown at W columns: …" notes of `text`, each with its continuation lines joined.
pub fn left_out_notes(text: &str, width: u16) -> Vec<String> {
    let head = format!("not shown at {width} columns: ");
    let mut notes = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(l) = lines.next() {
        if let Some(rest) = l.strip_prefix(&head) {
            let mut note = rest.to_string();
            while let Some(c) = lines.next_if(|c| c.starts_with("  ") && !c.starts_with("   ")) {
                note.push(' ');
                note.push_str(c.trim());
            }
            notes.push(note);
        }
    }
    notes
}

/// The header lines of every boxed table in `text` (from its top border to the rule under the
/// header), as one text: a header that wrapped inside its cell still has all its words there.
fn header_words(text: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for l in text.lines() {
        if l.starts_with('┌') {
            inside = true;
        } else if l.starts_with(['╞', '├', '└']) {
            inside = false;
        } else if inside {
            out.push_str(&l.replace(['│', '┆'], " "));
            out.push(' ');
        }
    }
    out
}

/// Each of `columns` is shown (its words in a table's header, or `column:` in the list layout)
/// or named in a "not shown at" note: nothing a table left out disappears unannounced.
pub fn every_column_shown_or_named(text: &str, width: u16, columns: &[&str]) {
    let headers = flat(&header_words(text));
    let notes = left_out_notes(text, width).join(", ");
    for c in columns {
        let shown = c.split(' ').all(|w| headers.split(' ').any(|h| h == w))
            || text.contains(&format!("{c}:"));
        let named = notes.contains(c);
        assert!(
            shown || named,
            "{c:?} neither shown nor named at {width} columns:\n{text}"
        );
    }
}
