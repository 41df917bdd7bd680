//! `bakeoff-progress`' public API on a captured display (the plain lines a log would get, as a
//! terminal-less stderr gets them): what stays, what is only a passing status, what a log
//! never sees, and that text from a server is made inert first. The harness ceiling is measured
//! for real, against the loopback target.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod display;
mod events;
