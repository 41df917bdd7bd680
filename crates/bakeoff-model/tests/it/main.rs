//! The integration tests of `bakeoff-model` as one test binary, one module per subject and the
//! helpers they share in `util`. Run one module with its path as the filter: `cargo test -p
//! bakeoff-model --test it checkpoints::`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod checkpoints;
mod gguf;
mod kv_configs;
mod util;
