//! The integration tests of `bakeoff-report` as one test binary, one module per subject. Run one
//! module with its path as the filter: `cargo test -p bakeoff-report --test it logbook_archive::`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bench_report;
mod campaign;
mod logbook_archive;
mod screen;
mod tables;
mod unread;
