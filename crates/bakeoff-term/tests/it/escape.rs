//! Text from a server or a log never drives the terminal: every control character comes out
//! as a visible escape.

use bakeoff_term::escape::{for_terminal, for_terminal_keep_end};

#[test]
fn every_control_character_is_made_visible() {
    // C0, DEL and the C1 range (U+0080–U+009F, which some terminals honour as escapes too).
    for c in (0u32..0x20).chain(0x7f..=0x9f).filter_map(char::from_u32) {
        let out = for_terminal(&format!("a{c}b"), 100);
        assert!(!out.chars().any(char::is_control), "{c:?} → {out:?}");
        assert!(
            out.starts_with('a') && out.ends_with('b'),
            "{c:?} → {out:?}"
        );
    }
}

#[test]
fn an_escape_sequence_is_inert_and_readable() {
    assert_eq!(
        for_terminal("\u{1b}[31mred\u{1b}[0m\r\u{7}", 100),
        "\\u{1b}[31mred\\u{1b}[0m\\u{d}\\u{7}"
    );
    // A newline is shown, a tab is a space, other text is kept as it is.
    assert_eq!(
        for_terminal("one\ntwo\tthree é 模型", 100),
        "one⏎two three é 模型"
    );
}

#[test]
fn a_long_text_is_cut_by_characters_and_a_path_keeps_its_end() {
    assert_eq!(for_terminal("模型名称很长", 4), "模型名称…");
    assert_eq!(for_terminal("abc", 3), "abc");
    assert_eq!(
        for_terminal_keep_end("/very/long/dir/model.gguf", 10),
        "…model.gguf"
    );
    // Cut or not, what is kept is escaped.
    assert_eq!(for_terminal_keep_end("\u{1b}x/abc", 3), "…abc");
    assert_eq!(for_terminal_keep_end("a\u{1b}", 5), "a\\u{1b}");
}
