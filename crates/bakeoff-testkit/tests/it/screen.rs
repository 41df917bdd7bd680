//! The checks of what a terminal of a given width gets.

use bakeoff_testkit::screen::{every_column_shown_or_named, fits_every_line, flat, left_out_notes};

#[test]
fn a_line_that_fits_or_is_one_long_word_passes() {
    fits_every_line(
        "short line\n  /a/very/long/path/that/is/one/word/only",
        20,
        "ok",
    );
    assert_eq!(flat("a\n  b   c\t d"), "a b c d");
}

#[test]
#[should_panic(expected = "characters at 20 columns")]
fn a_line_of_words_wider_than_the_terminal_fails() {
    fits_every_line("these words do not fit in.", 20, "too wide");
}

#[test]
fn the_notes_under_a_table_are_read_whole() {
    let text = "┌──────┐\n│ seat │\n╞══════╡\n│ a    │\n└──────┘\n\
                not shown at 60 columns: uptime, model\n  (a wider terminal or the JSON shows them)\n";
    assert_eq!(
        left_out_notes(text, 60),
        ["uptime, model (a wider terminal or the JSON shows them)"]
    );
    every_column_shown_or_named(text, 60, &["seat", "uptime", "model"]);
}

#[test]
#[should_panic(expected = "\"state\" neither shown nor named")]
fn a_column_neither_shown_nor_named_fails() {
    let text = "┌──────┐\n│ seat │\n╞══════╡\n│ a    │\n└──────┘\n";
    every_column_shown_or_named(text, 60, &["seat", "state"]);
}
