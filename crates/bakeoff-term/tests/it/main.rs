//! `bakeoff-term`'s public API: untrusted text made inert for a terminal, tables drawn no wider
//! than the terminal with nothing left out unannounced, and free text fitted to that width.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod escape;
mod table;
mod text;

/// Characters on screen per line (the texts here are escaped, one column per `char`).
pub fn widest(s: &str) -> usize {
    s.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

/// Every line of `text` fits `width` characters, or is a single word too long for any line,
/// alone on its own (the one exception the layout allows: a name is never broken).
pub fn fits(text: &str, width: u16) -> bool {
    text.lines()
        .all(|l| l.chars().count() <= usize::from(width) || !l.trim().contains(char::is_whitespace))
}
