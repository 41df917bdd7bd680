//! The integration tests of `bakeoff-artifact` as one test binary, one module per subject. Run one
//! module with its path as the filter: `cargo test -p bakeoff-artifact --test it schema::`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod details;
mod details_forms;
mod references;
mod schema;
