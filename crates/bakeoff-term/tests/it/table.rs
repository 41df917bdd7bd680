//! A table with long names, figures, prose and secondary columns, drawn at the widths an
//! operator's terminal has: no line is wider than the terminal, a column left out that holds
//! figures is named under the table, and too narrow a terminal gets every field as a list.

use bakeoff_term::{Grid, Kind, Plan, left_out_line, render, shorten_middle, width_from};

use crate::{fits, widest};

fn grid() -> Grid {
    let mut g = Grid::new();
    g.column("candidate", Kind::Name(48))
        .column("score", Kind::Number)
        .column("note", Kind::Text)
        .secondary("p99 (ms)", Kind::Number)
        .secondary("model", Kind::Name(48));
    g.row(vec![
        "qwen3-8b-vllm-awq-32k-with-a-long-slug-indeed".into(),
        "12/32 = 37.5% [22.9–54.7%]".into(),
        "the reference's replicas differ, so no verdict is drawn on this pair".into(),
        "1840.2".into(),
        "/models/library/qwen3/qwen3-8b-awq/model.safetensors".into(),
    ]);
    g.row(vec![
        "gemma-3-270m".into(),
        "3/32 = 9.4% [3.2–24.2%]".into(),
        "-".into(),
        "-".into(),
        "gemma-3-270m-q4_k_m.gguf".into(),
    ]);
    g
}

/// No line wider than the terminal; as a list, a name longer than the terminal stands alone
/// on its line, whole.
#[test]
fn no_line_is_wider_than_the_terminal() {
    let g = grid();
    for width in [40u16, 60, 80, 100, 120, 200] {
        let drawn = render(&g, width);
        assert!(fits(&drawn, width), "{width} columns:\n{drawn}");
        if let Plan::Table { .. } = g.plan(width) {
            assert!(widest(&drawn) <= usize::from(width), "{width}:\n{drawn}");
        }
        // The short names and every score are shown whole at every width.
        for whole in ["gemma-3-270m", "12/32", "3/32 = 9.4%"] {
            assert!(drawn.contains(whole), "{whole} at {width}:\n{drawn}");
        }
    }
}

#[test]
fn a_wide_terminal_shows_every_column_and_a_narrow_one_says_what_it_left_out() {
    let g = grid();
    let wide = render(&g, 200);
    // Every column shown (a header may wrap inside its cell: `p99` over `(ms)`).
    assert!(g.shows(200, "p99 (ms)") && g.shows(200, "model"), "{wide}");
    assert!(wide.contains("1840.2") && wide.contains("gemma-3-270m-q4_k_m.gguf"));
    assert!(!wide.contains("not shown"), "{wide}");
    let Plan::Table { headers, .. } = g.plan(70) else {
        panic!("a table at 70 columns")
    };
    // Below 80 columns the secondary columns go, and the one holding a figure is named.
    assert_eq!(headers, ["candidate", "score", "note"]);
    let narrow = render(&g, 70);
    assert!(
        narrow.contains("not shown at 70 columns: p99 (ms), model"),
        "{narrow}"
    );
    assert_eq!(
        left_out_line(&[], 70, "the JSON"),
        None,
        "nothing left out, nothing said"
    );
}

#[test]
fn too_narrow_for_a_table_is_a_list_of_every_field() {
    let g = grid();
    let Plan::List(text) = g.plan(24) else {
        panic!("a list at 24 columns")
    };
    for field in [
        "candidate:",
        "score:",
        "note:",
        "p99 (ms): 1840.2",
        "model:",
    ] {
        assert!(text.contains(field), "{field}:\n{text}");
    }
}

#[test]
fn the_width_comes_from_columns_then_the_terminal_then_a_default() {
    assert_eq!(width_from(Some("72"), Some(200)), 72);
    assert_eq!(width_from(Some("0"), Some(90)), 90);
    assert_eq!(width_from(None, Some(0)), bakeoff_term::DEFAULT_WIDTH);
    assert_eq!(
        shorten_middle("/models/library/qwen3/qwen3-0.6b-q4_k_m.gguf", 30),
        "/model…/qwen3-0.6b-q4_k_m.gguf"
    );
}
