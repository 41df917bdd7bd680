//! The integration tests of `bakeoff-client` as one test binary, one module per subject. Run one
//! module with its path as the filter: `cargo test -p bakeoff-client --test it scripted_http::`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod endpoint_template;
mod scripted_http;
