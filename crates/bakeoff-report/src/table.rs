//! The one builder of terminal tables: every table the reporters print is a [`Grid`] drawn by
//! [`render`] at a fixed width — [`width`] (`COLUMNS`, else the terminal's, else 120) or the
//! width a test gives. Number columns never wrap inside a number, names are shortened in the
//! middle rather than broken, below 80 columns secondary columns are left out, and a table that
//! still does not fit becomes a `header: value` list. The layout rule itself is
//! [`bakeoff_term`]'s, shared with the seats' `seat status` table.

pub use bakeoff_term::{
    COMPACT_BELOW, DEFAULT_WIDTH, Grid, Kind, Plan, fit_text, for_screen, for_stderr, glue, render,
    shorten_middle, width, width_from,
};
