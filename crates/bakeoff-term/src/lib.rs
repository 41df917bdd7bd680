//! What an operator reads on a terminal: the one table layout and width rule, the free-text
//! fitting around the tables, the one escaper of untrusted text, and byte counts in GiB. Every
//! crate that prints to an operator (the reporters, the seats, the cache audit, the plan,
//! progress, the binary) shares it, so none of them depends on another for it, nor on the wire
//! types, which hold the shape of bytes on the wire and nothing else.
//! `bakeoff_report::table` and `bakeoff_report::escape` re-export it.
//!
//! The width of an operator's terminal and the middle-shortening of names: nothing here asks
//! the terminal itself except [`width`] (comfy-table's `Table::width`, behind the `table`
//! feature) and the screen and stderr helpers; the rule is [`width_from`]. A terminal that
//! reports zero columns (`script -qc …`, some `docker exec -t`) or no terminal at all gets
//! [`DEFAULT_WIDTH`], never a table of one character per column.
//!
//! The free-text lines printed around the tables (notes, conditions, flags, findings,
//! refusals) are fitted to the same width by [`fit_text`] (`text.rs`): wrapped between
//! words, never inside a number, path or flag name, continuations indented.
//!
//! The `table` feature adds the drawing (comfy-table) and the helpers that read the terminal;
//! a crate that only escapes text (the load engine, the suites, the monitor) does without it.

pub mod escape;
pub mod units;

mod text;
pub use text::{CONTINUATION, fit_line, fit_text, wraps};
#[cfg(feature = "table")]
pub use text::{for_screen, for_stderr, stderr_width, wrap_width};

/// The width a table is laid out for when neither `COLUMNS` nor the terminal gives one.
pub const DEFAULT_WIDTH: u16 = 120;

/// The width to lay tables out for: `columns` (the value of `COLUMNS`) when it is a positive
/// number, else `terminal` when it is positive, else [`DEFAULT_WIDTH`].
pub fn width_from(columns: Option<&str>, terminal: Option<u16>) -> u16 {
    columns
        .and_then(positive)
        .or(terminal.filter(|n| *n > 0))
        .unwrap_or(DEFAULT_WIDTH)
}

fn positive(columns: &str) -> Option<u16> {
    columns.trim().parse::<u16>().ok().filter(|n| *n > 0)
}

/// [`width_from`] with `COLUMNS` from the environment; `terminal` is asked only when `COLUMNS`
/// does not decide.
pub fn width_with(terminal: impl FnOnce() -> Option<u16>) -> u16 {
    match std::env::var("COLUMNS").ok().as_deref().and_then(positive) {
        Some(n) => n,
        None => width_from(None, terminal()),
    }
}

/// `s` in at most `max` characters: when longer, its start and its end joined by `…`. A path
/// (a text with a `/`) keeps its file name whole when the name fits (`/models/qw…/model.gguf`),
/// else its end. Counts and cuts characters, never bytes, so a multi-byte character is never
/// split.
pub fn shorten_middle(s: &str, max: usize) -> String {
    let chars: Vec<char> = s.chars().collect();
    let n = chars.len();
    if n <= max {
        return s.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let keep = max - 1;
    let tail_len = match s.rfind('/') {
        // The file name with its slash, when it leaves room for a start of at least one char.
        Some(i) => {
            let name = s[i..].chars().count();
            if name < keep { name } else { keep }
        }
        None => keep / 2,
    };
    let head_len = keep - tail_len;
    let head: String = chars[..head_len].iter().collect();
    let tail: String = chars[n - tail_len..].iter().collect();
    format!("{head}…{tail}")
}

/// Below this width a [`Grid`] drops its secondary columns (the compact layout).
pub const COMPACT_BELOW: u16 = 80;

/// What a column holds, which decides where its cells may break.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Prose: wraps between words.
    Text,
    /// Numbers and figures (`1234.5`, `3/10 = 30% [11–60%]`): a figure of up to 24 characters
    /// stays on one line, a longer one wraps between words, never inside one — the column is
    /// at least as wide as its longest word.
    Number,
    /// Text whose words must not break (a list of seat names, aliases): wraps between words
    /// only — the column is at least as wide as its longest word.
    Words,
    /// A name (a slug, a model id, a path): never broken; shortened in the middle
    /// ([`shorten_middle`]) to at most this many characters, fewer when the table is narrow.
    Name(usize),
}

struct Column {
    header: String,
    kind: Kind,
    secondary: bool,
}

/// A terminal table before it is laid out: columns with their [`Kind`], rows of (escaped) cells.
/// [`Grid::plan`] lays it out for a width; the renderers (`bakeoff_report::table`, the seats'
/// status) draw a [`Plan::Table`] with comfy-table at the planned column widths.
#[derive(Default)]
pub struct Grid {
    columns: Vec<Column>,
    rows: Vec<Vec<String>>,
}

/// A [`Grid`] laid out for a width.
#[derive(Debug, PartialEq)]
pub enum Plan {
    /// A table whose column `i` is `widths[i]` characters wide (padding and borders not counted).
    Table {
        headers: Vec<String>,
        widths: Vec<usize>,
        rows: Vec<Vec<String>>,
    },
    /// Too narrow for the table: one `header: value` line per cell, each row a record.
    List(String),
}

impl Grid {
    pub fn new() -> Grid {
        Grid::default()
    }

    /// A column every layout shows.
    pub fn column(&mut self, header: impl Into<String>, kind: Kind) -> &mut Self {
        self.columns.push(Column {
            header: header.into(),
            kind,
            secondary: false,
        });
        self
    }

    /// A column left out when the table does not fit otherwise (the last declared first), and
    /// always below [`COMPACT_BELOW`] (the compact layout).
    pub fn secondary(&mut self, header: impl Into<String>, kind: Kind) -> &mut Self {
        self.columns.push(Column {
            header: header.into(),
            kind,
            secondary: true,
        });
        self
    }

    /// A row: one cell per column, already escaped for a terminal (missing cells are empty).
    pub fn row(&mut self, cells: Vec<String>) -> &mut Self {
        self.rows.push(cells);
        self
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Lay the grid out for `width` columns. Every column is at least as wide as its longest
    /// number or name (nothing breaks inside one), and a short figure stays on one line while
    /// there is room. What gives, in order, when the table does not fit: long names (shortened
    /// in the middle to [`NAME_BEFORE_DROP`] characters), secondary columns (all of them below
    /// [`COMPACT_BELOW`]), figures on one line and long header words, names down to 14
    /// characters; then the table becomes a `header: value` list of every column. A planned
    /// table's cells are fitted to their columns ([`fit_cell`]): wrapped between words, a word
    /// too long for its column shortened with `…`, at most [`MAX_CELL_LINES`] lines — the full
    /// text is the caller's `--json` and artifact.
    pub fn plan(&self, width: u16) -> Plan {
        let secondary = self.columns.iter().filter(|c| c.secondary).count();
        // Secondary columns are left out one at a time, the last declared first; below
        // COMPACT_BELOW all of them at once.
        let first = if width < COMPACT_BELOW { secondary } else { 0 };
        // (secondary columns left out, names cut to, header words kept whole up to, short
        // figures kept on one line): a long name is shortened before a column is left out
        // (a 35-character seat name costs a whole column otherwise) and stays shortened while
        // columns are left out and figures wrap between words; then cut, down to 14
        // characters.
        let mut tries: Vec<(usize, usize, usize, bool)> = vec![(first, usize::MAX, 24, true)];
        tries.extend((first..=secondary).map(|drop| (drop, NAME_BEFORE_DROP, 24, true)));
        tries.extend(
            [(usize::MAX, 12), (40, 12), (28, 10), (20, 10), (14, 6)]
                .map(|(cap, header_word)| (secondary, cap, header_word, false)),
        );
        for (drop, cap, header_word, strict) in tries {
            let (headers, rows, kinds) = self.shown(drop, cap);
            let fits: Vec<Fit> = kinds
                .iter()
                .enumerate()
                .map(|(k, kind)| {
                    let cells = rows.iter().map(|r| r[k].as_str());
                    Fit::of(&headers[k], cells, *kind, header_word)
                })
                .map(|f| Fit {
                    min: if strict { f.figure } else { f.min },
                    ..f
                })
                .collect();
            if let Some(widths) = widths(&fits, width) {
                let rows = rows
                    .iter()
                    .map(|r| {
                        r.iter()
                            .zip(&widths)
                            .map(|(c, w)| fit_cell(c, *w))
                            .collect()
                    })
                    .collect();
                return Plan::Table {
                    headers,
                    widths,
                    rows,
                };
            }
        }
        // The list has room for every field: none is left out (uptime, model, aliases).
        let (headers, rows, _) = self.shown(0, usize::MAX);
        Plan::List(list_layout(&headers, &rows, width))
    }

    /// Whether the table drawn at `width` shows the column headed `header` (a legend under
    /// it explains only the columns it shows).
    pub fn shows(&self, width: u16, header: &str) -> bool {
        match self.plan(width) {
            Plan::Table { headers, .. } => headers.iter().any(|h| h == header),
            Plan::List(_) => self.columns.iter().any(|c| c.header == header),
        }
    }

    /// The headers of the columns a planned table ([`Grid::plan`]) leaves out that hold something
    /// other than `-` in some row: said under the table, so nothing disappears unannounced.
    pub fn left_out(&self, plan: &Plan) -> Vec<String> {
        let Plan::Table { headers, .. } = plan else {
            return Vec::new();
        };
        self.columns
            .iter()
            .enumerate()
            .filter(|(_, c)| !headers.contains(&c.header))
            .filter(|(k, _)| {
                self.rows.iter().any(|r| {
                    r.get(*k)
                        .is_some_and(|cell| !cell.trim().is_empty() && cell.trim() != "-")
                })
            })
            .map(|(_, c)| c.header.clone())
            .collect()
    }

    /// The headers, cells and kinds of the columns shown — all but the last `drop` secondary
    /// columns — with names shortened to at most `cap` characters.
    fn shown(&self, drop: usize, cap: usize) -> (Vec<String>, Vec<Vec<String>>, Vec<Kind>) {
        let secondary = self.columns.iter().filter(|c| c.secondary).count();
        let keep_secondary = secondary - drop.min(secondary);
        let mut seen = 0;
        let kept: Vec<bool> = self
            .columns
            .iter()
            .map(|c| {
                if !c.secondary {
                    return true;
                }
                seen += 1;
                seen <= keep_secondary
            })
            .collect();
        let idx: Vec<usize> = (0..self.columns.len()).filter(|i| kept[*i]).collect();
        let shown: Vec<&Column> = idx.iter().map(|i| &self.columns[*i]).collect();
        let rows = self
            .rows
            .iter()
            .map(|r| {
                idx.iter()
                    .map(|i| {
                        let c = r.get(*i).map(String::as_str).unwrap_or("");
                        match self.columns[*i].kind {
                            Kind::Name(max) => shorten_middle(c, max.min(cap)),
                            _ => c.to_string(),
                        }
                    })
                    .collect()
            })
            .collect();
        (
            shown.iter().map(|c| c.header.clone()).collect(),
            rows,
            shown.iter().map(|c| c.kind).collect(),
        )
    }
}

/// How wide a column wants to be (`natural`: every cell on one line) and may be (`min`).
struct Fit {
    min: usize,
    /// At least `min`: what keeps each short figure of a number column on one line.
    figure: usize,
    natural: usize,
}

/// Names are shortened to this many characters before a secondary column is left out.
pub const NAME_BEFORE_DROP: usize = 28;

/// A cell wraps to at most this many lines; the rest is cut with `…` (a failure message is
/// not eight lines inside a cell: the full text is in `--json` and the artifact).
pub const MAX_CELL_LINES: usize = 3;

/// A cell's text fitted to a column `width` characters wide: its lines wrapped between words
/// (never inside one: only ASCII spaces break, so `840\u{a0}ms` stays whole), a word longer
/// than the column shortened with `…` at its end, and at most [`MAX_CELL_LINES`] lines, the
/// last ending in `…` when text was left out.
pub fn fit_cell(cell: &str, width: usize) -> String {
    let width = width.max(1);
    let mut lines: Vec<String> = Vec::new();
    for source in cell.lines() {
        let mut cur = String::new();
        for word in source.split(' ').filter(|w| !w.is_empty()) {
            let word = if chars(word) > width {
                let mut w: String = word.chars().take(width.saturating_sub(1)).collect();
                w.push('…');
                w
            } else {
                word.to_string()
            };
            if !cur.is_empty() && chars(&cur) + 1 + chars(&word) > width {
                lines.push(std::mem::take(&mut cur));
            }
            if !cur.is_empty() {
                cur.push(' ');
            }
            cur.push_str(&word);
        }
        lines.push(cur);
    }
    if lines.len() > MAX_CELL_LINES {
        lines.truncate(MAX_CELL_LINES);
        if let Some(last) = lines.last_mut() {
            // Whole words leave first; a lone word too long for `…` beside it is cut.
            while !last.is_empty() && chars(last) + 1 > width {
                match last.rfind(' ') {
                    Some(i) => last.truncate(i),
                    None => {
                        last.pop();
                    }
                }
            }
            last.push('…');
        }
    }
    lines.join("\n")
}

/// `text` with its spaces made non-breaking, so a figure and its unit (`840 ms`, `3 d 04 h`)
/// never wrap apart in a table cell ([`fit_cell`] breaks at ASCII spaces only).
pub fn glue(text: &str) -> String {
    text.replace(' ', "\u{a0}")
}

/// Characters on screen (one per `char`; the tables' text is escaped and mostly ASCII).
fn chars(s: &str) -> usize {
    s.chars().count()
}

fn longest_word(s: &str) -> usize {
    s.split([' ', '\n', '\t']).map(chars).max().unwrap_or(0)
}

/// A prose column may be squeezed down to this (its longer words then break).
const TEXT_MIN: usize = 10;
/// A figure up to this long (`1234/2000 = 62% [60–64%]`, `1 counted, 1 retracted`) is never
/// wrapped at all.
const FIGURE_ON_ONE_LINE: usize = 24;

impl Fit {
    fn of<'a>(
        header: &str,
        cells: impl Iterator<Item = &'a str>,
        kind: Kind,
        header_word: usize,
    ) -> Fit {
        let mut natural = chars(header);
        let mut word = 0;
        let mut line = 0;
        // The widest cell short enough to stay on one line (a figure).
        let mut figure = 0;
        for c in cells {
            let l = c.lines().map(chars).max().unwrap_or(0);
            line = line.max(l);
            word = word.max(longest_word(c));
            if l <= FIGURE_ON_ONE_LINE {
                figure = figure.max(l);
            }
        }
        natural = natural.max(line);
        let cell_min = match kind {
            Kind::Text => word.min(TEXT_MIN),
            Kind::Number | Kind::Words | Kind::Name(_) => word,
        };
        let min = cell_min.max(longest_word(header).min(header_word)).max(1);
        let figure = match kind {
            // A short figure stays on one line when there is room; else it breaks between
            // words only.
            Kind::Number => min.max(figure),
            _ => min,
        };
        Fit {
            min,
            figure,
            natural: natural.max(figure).max(1),
        }
    }
}

/// Content widths of the columns of a table `width` wide (each column has a space of padding on
/// either side and a border between): every column its natural width when all fit, else every
/// column its minimum and the rest shared out evenly; `None` when the minimums do not fit.
fn widths(fits: &[Fit], width: u16) -> Option<Vec<usize>> {
    let overhead = 3 * fits.len() + 1;
    let avail = usize::from(width).checked_sub(overhead)?;
    if fits.iter().map(|f| f.natural).sum::<usize>() <= avail {
        return Some(fits.iter().map(|f| f.natural).collect());
    }
    // Every column its minimum; the figures on one line first when they all fit.
    let mut w: Vec<usize> = fits.iter().map(|f| f.min).collect();
    if fits.iter().map(|f| f.figure).sum::<usize>() <= avail {
        w = fits.iter().map(|f| f.figure).collect();
    }
    let extra = avail.checked_sub(w.iter().sum())?;
    // The room left goes to each column in proportion to what it still wants.
    let want: Vec<usize> = fits
        .iter()
        .zip(&w)
        .map(|(f, w)| f.natural.saturating_sub(*w))
        .collect();
    let total: usize = want.iter().sum();
    if total == 0 {
        return Some(w);
    }
    let mut given = 0;
    for (i, x) in want.iter().enumerate() {
        let add = extra * x / total;
        w[i] += add;
        given += add;
    }
    let mut left = extra - given;
    while left > 0 {
        let mut moved = false;
        for i in 0..w.len() {
            if left > 0 && w[i] < fits[i].natural {
                w[i] += 1;
                left -= 1;
                moved = true;
            }
        }
        if !moved {
            break;
        }
    }
    Some(w)
}

/// The rows as records of `header: value` lines: a record's first line flush left, the rest
/// indented; a value wraps between words (a continuation indented further), never inside one.
fn list_layout(headers: &[String], rows: &[Vec<String>], width: u16) -> String {
    let mut out = String::new();
    for r in rows {
        for (k, (h, v)) in headers.iter().zip(r).enumerate() {
            let indent = if k == 0 { "" } else { "  " };
            wrap_into(
                &mut out,
                &format!("{indent}{h}: {v}"),
                usize::from(width),
                "      ",
            );
        }
    }
    out
}

fn wrap_into(out: &mut String, line: &str, width: usize, cont: &str) {
    for l in fit_line(line, width, cont) {
        out.push_str(&l);
        out.push('\n');
    }
}

/// The width tables are laid out for: `COLUMNS` when a positive number, else the terminal's
/// width when stdout is a terminal that reports more than 0 columns, else 120.
#[cfg(feature = "table")]
pub fn width() -> u16 {
    width_with(|| comfy_table::Table::new().width())
}

/// `grid` drawn for `width` columns (no trailing newline): a [`Plan::Table`] by comfy-table at
/// the planned column widths, or the list layout. The one drawing of every terminal table (the
/// reporters' and `seat status`). A column the table had to leave out at this width and that
/// holds a figure is named under it ([`left_out_line`]): nothing disappears unannounced.
#[cfg(feature = "table")]
pub fn render(grid: &Grid, width: u16) -> String {
    let plan = grid.plan(width);
    let left_out = grid.left_out(&plan);
    let mut s = render_plan(plan, width);
    if let Some(line) = left_out_line(&left_out, width, "the JSON") {
        s.push('\n');
        s.push_str(&line);
    }
    s
}

/// The line under a table that left out `columns` at `width`, fitted to `width` ([`fit_text`]:
/// it may be two or more lines); `full` names where every figure is kept (`--json`, the
/// artifact). `None` when nothing was left out.
pub fn left_out_line(columns: &[String], width: u16, full: &str) -> Option<String> {
    (!columns.is_empty()).then(|| {
        fit_text(
            &format!(
                "not shown at {width} columns: {} (a wider terminal or {full} shows them)",
                columns.join(", ")
            ),
            width,
        )
    })
}

/// [`render`] of a plan already made for `width` (a caller that also asks [`Grid::left_out`]).
#[cfg(feature = "table")]
pub fn render_plan(plan: Plan, width: u16) -> String {
    use comfy_table::{
        ColumnConstraint, ContentArrangement, Table, Width, presets::UTF8_FULL_CONDENSED,
    };
    match plan {
        Plan::Table {
            headers,
            widths,
            rows,
        } => {
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
        Plan::List(text) => text.trim_end().to_string(),
    }
}

#[cfg(test)]
mod tests;
