//! The integration tests of `bakeoff-text` as one test binary, one module per subject. Run one
//! module with its path as the filter: `cargo test -p bakeoff-text --test it templates::`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod templates;
