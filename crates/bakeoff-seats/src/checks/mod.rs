//! The checks a seat gets before it starts (docs/cache.md): where the engine will write its
//! downloads ([`cache_mounts`]: a Docker seat's caches against its mounts, the Hugging Face
//! token), and the pinned chat template against the checkpoint and, once ready, against what
//! the engine serves ([`template_pin`]); and whether the engine build knows the checkpoint's
//! architecture at all ([`engine_support`]). They never refuse a start themselves — the
//! checkpoint audit in [`crate::hooks`] does that, and refuses on an
//! `engine-unsupported-checkpoint` finding — they return findings (docs/failure-classes.md "Seat
//! findings"); a finding of severity `error` fails the operation (`UpOutcome::ok`).
//!
//! `bakeoff audit seat` runs the same checks without starting anything.

pub mod cache_mounts;
pub mod engine_support;
pub mod hub_model;
pub mod hub_snapshot;
pub mod model_path;
pub mod mounts;
pub mod template_pin;

use bakeoff_artifact::SeatFinding;

use crate::fleet::types::{Fleet, Seat};

/// Every finding of the checks before `seat` starts: its caches and token, its pinned
/// template, then whether its engine build knows the checkpoint.
pub fn pre_start(fleet: &Fleet, seat: &Seat) -> Vec<SeatFinding> {
    let mut findings = cache_mounts::check(seat);
    findings.extend(template_pin::before_start(fleet, seat));
    findings.extend(engine_support::check(fleet, seat));
    findings
}
