//! The integration tests of `bakeoff-suites` as one test binary, one module per subject and the
//! helpers they share in `util`. Run one module with its path as the filter: `cargo test -p
//! bakeoff-suites --test it real_suites::`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod real_suites;
mod scripted_fixtures;
mod throughput_longgen;
mod util;
