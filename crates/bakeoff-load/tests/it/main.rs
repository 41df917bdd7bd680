//! The integration tests of `bakeoff-load` as one test binary, one module per subject and the
//! helpers they share in `util`. Run one module with its path as the filter: `cargo test -p
//! bakeoff-load --test it arithmetic::`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod arithmetic;
mod loopback;
mod real_llama;
mod util;
