//! The integration tests of `bakeoff-kube` as one test binary: the example fleet and a fleet
//! with GPUs, mounts and secrets rendered and read back through the typed structs
//! (`export`), and a real seat start sizing the startup probe (`start_record`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod export;
mod start_record;
