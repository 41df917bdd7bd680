//! Progress on stderr for bakeoff's long commands, and the renderers that draw the engines'
//! events on it. The engines (suites, the load engine, the seats' watchdog, the campaign
//! driver, the monitor) emit events; this crate decides how each looks on a terminal (one
//! spinner, lasting lines above it) and in a log (one plain line per step) — as
//! cargo-nextest's reporters render its runner's events. Nothing here goes to stdout, so
//! `--json` output stays clean.

pub mod campaign;
mod display;
pub mod eval;
pub mod monitor;
pub mod seat_watch;
pub mod steps;

pub use display::Progress;
