//! Reporters and the evidence registry. They read artifacts (and preflight reports), compare
//! two runs item by item (`compare`), and render them for people — terminal tables, the markdown negative-results log with its
//! superseded-claims table, one self-contained HTML page with inline SVG charts, CSV — and they
//! keep the operator's judgments beside the artifacts: verdicts, retractions, the logbook.
//!
//! They never talk to an endpoint and never change an artifact: a retraction is a separate
//! record, and reports stop counting the result it names.
//!
//! Every terminal table is built by [`table`]: laid out for `COLUMNS`, the terminal's width or
//! 120 columns, numbers never split, names shortened in the middle, a compact layout when narrow.
//!
//! Model output is untrusted text: the terminal reporter strips control characters (an ANSI
//! escape in a reply must not repaint the operator's terminal), the HTML reporter escapes every
//! byte an endpoint sent, and markdown escapes HTML and markdown punctuation.

pub mod adapter;
pub mod bench;
pub mod bench_summary;
pub mod campaign;
pub mod checkpoint_audit;
pub mod compare;
pub mod comparison;
pub mod csv_export;
pub mod damage;
pub mod damage_along;
pub mod escape;
pub mod evidence;
pub mod evidence_text;
pub mod families;
pub mod gauges;
pub mod html;
pub mod logbook;
pub mod logbook_text;
pub mod markdown;
pub mod monitor;
pub mod read;
pub mod refusal;
pub mod registry;
pub mod score;
pub mod sessions;
pub mod steps;
pub mod structured;
pub mod svg;
pub mod table;
pub mod template_audit;
pub mod terminal;
pub mod views;
