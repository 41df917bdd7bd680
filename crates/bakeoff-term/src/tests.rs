use super::*;

#[test]
fn width_prefers_a_positive_columns_then_the_terminal_then_120() {
    assert_eq!(width_from(Some("40"), Some(200)), 40);
    assert_eq!(width_from(Some(" 90 "), None), 90);
    assert_eq!(width_from(Some("0"), Some(100)), 100);
    assert_eq!(width_from(Some("0"), None), 120);
    assert_eq!(width_from(Some("wide"), Some(0)), 120);
    assert_eq!(width_from(Some("-5"), Some(77)), 77);
    assert_eq!(width_from(Some("99999999"), None), 120);
    assert_eq!(width_from(None, Some(0)), 120);
    assert_eq!(width_from(None, None), DEFAULT_WIDTH);
}

#[test]
fn shorten_keeps_both_ends() {
    assert_eq!(shorten_middle("short", 10), "short");
    assert_eq!(shorten_middle("abcdefghij", 10), "abcdefghij");
    assert_eq!(shorten_middle("abcdefghijk", 10), "abcde…hijk");
    assert_eq!(shorten_middle("abcdefghijk", 10).chars().count(), 10);
    assert_eq!(shorten_middle("abc", 1), "…");
    assert_eq!(shorten_middle("abc", 0), "");
}

#[test]
fn shorten_never_splits_a_multi_byte_char() {
    let s = "模型名称很长很长的名字-量化版本";
    let out = shorten_middle(s, 9);
    assert_eq!(out.chars().count(), 9);
    assert!(out.starts_with("模型名称"), "{out}");
    assert!(out.ends_with("量化版本"), "{out}");
    assert_eq!(shorten_middle("ééééééé", 4), "éé…é");
}

/// A long cell is wrapped between words, never inside one; a word too long for
/// its column is shortened with `…`; a failure message stops at three lines.
#[test]
fn a_cell_wraps_between_words_and_is_shortened_with_an_ellipsis() {
    assert_eq!(fit_cell("warning:host-contended", 12), "warning:hos…");
    assert_eq!(fit_cell("serving 104\u{a0}ms", 12), "serving\n104\u{a0}ms");
    let msg = "inference-failing: every completion failed with HTTP 500 after the server \
               answered its control endpoints for the whole watch of sixty seconds";
    let fitted = fit_cell(msg, 20);
    let lines: Vec<&str> = fitted.lines().collect();
    assert_eq!(lines.len(), MAX_CELL_LINES, "{fitted}");
    assert!(lines.iter().all(|l| l.chars().count() <= 20), "{fitted}");
    assert!(fitted.ends_with('…'), "{fitted}");
    // Every word shown is a whole word of the message (the last may carry the ellipsis).
    for w in fitted.split_whitespace() {
        let w = w.trim_end_matches('…');
        assert!(msg.split(' ').any(|m| m.starts_with(w)), "{w} in {fitted}");
    }
    assert_eq!(fit_cell("short", 20), "short");
    assert_eq!(fit_cell("", 5), "");
}

/// The narrow `header: value` form keeps every field, secondary ones included.
#[test]
fn the_list_layout_keeps_every_column() {
    let mut g = Grid::new();
    g.column("seat", Kind::Name(40))
        .column("state", Kind::Number)
        .secondary("uptime", Kind::Number)
        .secondary("aliases", Kind::Text);
    g.row(vec![
        "a-seat-with-a-name-of-thirty-five-c".into(),
        "running".into(),
        "3 d 04 h".into(),
        "gpt-4o, default".into(),
    ]);
    let Plan::List(text) = g.plan(20) else {
        panic!("a list at 20 columns");
    };
    for f in [
        "seat:",
        "state: running",
        "uptime: 3 d 04 h",
        "aliases: gpt-4o",
    ] {
        assert!(text.contains(f), "{f}: {text}");
    }
    assert!(g.shows(20, "aliases"));
}

/// A long name is shortened before a secondary column is left out.
#[test]
fn a_long_name_is_shortened_before_a_column_is_left_out() {
    let mut g = Grid::new();
    g.column("seat", Kind::Name(40))
        .column("state", Kind::Number)
        .secondary("model", Kind::Name(40));
    g.row(vec![
        "a-seat-with-a-name-of-thirty-five-c".into(),
        "running".into(),
        "a-model-id-of-thirty-five-character".into(),
    ]);
    // Whole: 35 + 7 + 35 + 10 = 87 columns; at 80 the names are cut to 28 (73) and the
    // model column stays.
    let Plan::Table { headers, rows, .. } = g.plan(80) else {
        panic!("a table at 80 columns");
    };
    assert_eq!(headers, ["seat", "state", "model"]);
    assert_eq!(rows[0][0].chars().count(), NAME_BEFORE_DROP, "{rows:?}");
    assert!(rows[0][0].contains('…'), "{rows:?}");
}

#[test]
fn a_path_keeps_its_file_name() {
    let p = "/models/library/qwen3/qwen3-0.6b-q4_k_m.gguf";
    assert_eq!(shorten_middle(p, 30), "/model…/qwen3-0.6b-q4_k_m.gguf");
    // A file name longer than the room keeps the end.
    assert_eq!(shorten_middle("/m/abcdefghijklmnop", 8), "…jklmnop");
}
