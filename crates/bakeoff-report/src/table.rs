//! The one builder of terminal tables: every table the reporters print is a [`Grid`] drawn by
//! [`render`] at a fixed width — [`width`] (`COLUMNS`, else the terminal's, else 120) or the
//! width a test gives. Number columns never wrap inside a number, names are shortened in the
//! middle rather than broken, below 80 columns secondary columns are left out, and a table that
//! still does not fit becomes a `header: value` list. The layout rule itself is
//! [`bakeoff_wire::term`]'s, shared with the seats' `seat status` table.

use comfy_table::{
    ColumnConstraint, ContentArrangement, Table, Width, presets::UTF8_FULL_CONDENSED,
};

pub use bakeoff_wire::term::{
    COMPACT_BELOW, DEFAULT_WIDTH, Grid, Kind, Plan, shorten_middle, width_from,
};

/// The width tables are laid out for: `COLUMNS` when a positive number, else the terminal's
/// width when stdout is a terminal that reports more than 0 columns, else 120.
pub fn width() -> u16 {
    bakeoff_wire::term::width_with(|| Table::new().width())
}

/// `grid` drawn for `width` columns (no trailing newline).
pub fn render(grid: &Grid, width: u16) -> String {
    match grid.plan(width) {
        Plan::Table {
            headers,
            widths,
            rows,
        } => draw(headers, &widths, rows, width),
        Plan::List(text) => text.trim_end().to_string(),
    }
}

/// A planned table drawn by comfy-table, each column at its planned width.
pub fn draw(headers: Vec<String>, widths: &[usize], rows: Vec<Vec<String>>, width: u16) -> String {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(width)
        .set_header(headers);
    for r in rows {
        t.add_row(r);
    }
    t.set_constraints(widths.iter().map(|w| {
        let w = u16::try_from(*w + 2).unwrap_or(u16::MAX);
        ColumnConstraint::Absolute(Width::Fixed(w))
    }));
    t.to_string()
}
