//! The integration tests of `bakeoff-plan` as one test binary, one module per subject. Run one
//! module with its path as the filter: `cargo test -p bakeoff-plan --test it plan::`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod plan;
mod remote;
