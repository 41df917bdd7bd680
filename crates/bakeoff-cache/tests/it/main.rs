//! The integration tests of `bakeoff-cache` as one test binary: caches built on disk in the real
//! layouts, real `flock(1)` processes holding real locks, real files growing. Run one module
//! with its path as the filter: `cargo test -p bakeoff-cache --test it locks::`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod hub_audit;
mod llamacpp_audit;
mod locks;
mod usage;
