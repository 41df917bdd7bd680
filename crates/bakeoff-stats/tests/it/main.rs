//! `bakeoff-stats`' public API on data whose answers are known: R's figures for the intervals
//! and tests, hand-counted medians and ranks, and bootstraps whose every possible resample can
//! be listed. One module per kind of figure.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bootstrap;
mod counts;
mod latency;
mod order;
mod repeats;

/// `a` and `b` agree to `tol`.
pub fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}
