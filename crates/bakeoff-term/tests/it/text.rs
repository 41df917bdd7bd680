//! Free text around the tables: wrapped between words at the width, continuations indented,
//! a word longer than the line kept whole, figures glued to their units never split.

use bakeoff_term::units::gib;
use bakeoff_term::{CONTINUATION, fit_text, glue};

use crate::widest;

#[test]
fn a_long_line_wraps_between_words_with_indented_continuations() {
    let note = "  note: the first token of 3 of 20 replies ended inside a character, so those \
                items were measured from their second token";
    let fitted = fit_text(note, 40);
    assert!(widest(&fitted) <= 40, "{fitted}");
    let lines: Vec<&str> = fitted.lines().collect();
    assert!(lines.len() > 1, "{fitted}");
    assert!(lines[0].starts_with("  note:"), "{fitted}");
    let cont = format!("  {CONTINUATION}");
    assert!(lines[1..].iter().all(|l| l.starts_with(&cont)), "{fitted}");
    // Nothing lost, nothing reordered.
    let words = |s: &str| s.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
    assert_eq!(words(&fitted), words(note));
}

#[test]
fn a_word_longer_than_the_line_is_kept_whole_and_a_glued_figure_never_splits() {
    let path = "/var/lib/bakeoff/results/qwen3-8b-vllm-awq-32k.20261203T101530Z.bakeoff.json";
    let fitted = fit_text(&format!("wrote {path}"), 30);
    assert!(fitted.lines().any(|l| l.trim() == path), "{fitted}");
    let fitted = fit_text(&format!("p99 {} at c = 4", glue("1840 ms")), 8);
    assert!(fitted.contains("1840\u{a0}ms"), "{fitted}");
    // A line that fits is left as it is, a trailing newline kept.
    assert_eq!(fit_text("short\n", 40), "short\n");
}

#[test]
fn bytes_read_as_gib_with_two_decimals() {
    assert_eq!(gib(0), "0.00 GiB");
    assert_eq!(gib(24 * 1024 * 1024 * 1024), "24.00 GiB");
    assert_eq!(gib(1_610_612_736), "1.50 GiB");
}
