//! The integration tests of `bakeoff-seats` as one test binary, one module per subject and the
//! helpers they share in `common`. Run one module with its path as the filter: `cargo test -p
//! bakeoff-seats --test it docker_backend::`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod docker_backend;
mod engine_wordings;
mod fleet_file;
mod load_readings;
mod log_signatures;
mod process_backend;
mod readiness;
mod remote_hosts;
mod stop_escalation;
mod template_pin;
