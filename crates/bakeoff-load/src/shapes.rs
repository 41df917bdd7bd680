//! Load shapes beyond the arrival process (docs/metrics.md, "Load shapes"): the requests a
//! linear ramp-up sends before a step's measured window, and the requests clients cancel
//! mid-stream (`--cancel-rate`), with the reconciliation of what the server counted for them.
//! Every draw is seeded: a recorded `--seed` replays the same cancellations at the same points.

use bakeoff_artifact::{Cancellations, MetricsDelta, RampUpRecord};

use crate::measure::Measured;
use crate::plan::LoadPlan;
use crate::prng::SplitMix64;

/// Ramp-up requests get step indexes with this bit set: their own prompt prefixes, lengths
/// and draws, never those of the measured requests.
pub const RAMP_STEP_BIT: usize = 1 << 30;

/// Set in the step index of a step's warm-up requests (`--step-warmup`): their prompts differ
/// from the measured step's and the ramp's.
pub const WARMUP_STEP_BIT: usize = 1 << 29;

/// Whether request `i` of step `step` is cancelled, and after how many text-bearing chunks: a
/// seeded draw below `cancel_rate`, then a point uniform in `1 ..= max_tokens − 1` (at least
/// one chunk received, and before the last, so the abort is mid-stream).
pub fn abort_point(plan: &LoadPlan, step: usize, i: u64, max_tokens: u32) -> Option<u64> {
    if plan.cancel_rate <= 0.0 {
        return None;
    }
    let mut rng = SplitMix64::new(
        plan.seed ^ 0xC4_4CE1_0000_0000 ^ ((step as u64) << 40) ^ i.wrapping_mul(0x9E37_79B9),
    );
    if rng.next_f64() >= plan.cancel_rate {
        return None;
    }
    let last = max_tokens.saturating_sub(1).max(1);
    Some(u64::from(rng.range_inclusive(1, last)))
}

/// A step's ramp-up requests: counted, never measured.
#[derive(Debug, Clone, Copy, Default)]
pub struct RampTally {
    pub sent: u64,
    pub ok: u64,
    pub output_tokens: u64,
}

impl RampTally {
    pub fn add(&mut self, m: &Measured) {
        self.sent += 1;
        if m.ok && m.aborted.is_none() {
            self.ok += 1;
            self.output_tokens += m.record.output_tokens.unwrap_or(0);
        }
    }

    pub fn record(&self, seconds: f64) -> RampUpRecord {
        RampUpRecord {
            seconds,
            sent: self.sent,
            ok: self.ok,
            output_tokens: self.output_tokens,
        }
    }
}

/// A step's cancellations as its requests finish.
#[derive(Debug, Clone, Copy, Default)]
pub struct CancelTally {
    pub planned: u64,
    pub cancelled: u64,
    pub tokens_received: u64,
}

impl CancelTally {
    /// Count one request that was drawn for cancellation (`m.planned_abort` set).
    pub fn add(&mut self, m: &Measured) {
        if m.planned_abort.is_none() {
            return;
        }
        self.planned += 1;
        if m.aborted.is_some() {
            self.cancelled += 1;
            self.tokens_received += m.record.chunks;
        }
    }
}

/// The step's cancellations, reconciled with the server's generated-token counter when
/// `/metrics` was read: what the server counted beyond the completed requests' tokens is what
/// it counted for the cancelled ones. `ok_tokens`: the completed requests' output tokens.
pub fn cancellations(
    rate: f64,
    t: CancelTally,
    metrics: Option<&MetricsDelta>,
    ok_tokens: u64,
) -> Cancellations {
    let server_tokens = metrics
        .and_then(|m| m.generation_tokens)
        .map(|g| g - ok_tokens as f64);
    let server_extra_tokens = server_tokens.map(|s| s - t.tokens_received as f64);
    let detail = match (server_tokens, server_extra_tokens) {
        (Some(s), Some(x)) if x >= 0.0 => format!(
            "{} of {} planned requests aborted after {} tokens received in all; the server counted {s:.0} for them: \
             {x:.0} generated after the clients had gone",
            t.cancelled, t.planned, t.tokens_received
        ),
        (Some(s), Some(x)) => format!(
            "{} of {} planned requests aborted after {} tokens received in all; the server counted only {s:.0} for them \
             ({:.0} fewer than the clients received: its counter leaves aborted requests out, or had not flushed them when it was read)",
            t.cancelled, t.planned, t.tokens_received, -x
        ),
        _ => format!(
            "{} of {} planned requests aborted after {} tokens received in all; no server counter to reconcile them with (/metrics off or unread)",
            t.cancelled, t.planned, t.tokens_received
        ),
    };
    Cancellations {
        rate,
        planned: t.planned,
        cancelled: t.cancelled,
        finished_first: t.planned - t.cancelled,
        tokens_received: t.tokens_received,
        server_tokens,
        server_extra_tokens,
        detail,
    }
}

/// The client/server token ratio with the cancelled requests' received tokens counted on the
/// client's side: a cancellation is then part of the reconciliation, not a mismatch.
pub fn reconcile_tokens(m: &mut MetricsDelta, ok_tokens: u64, t: CancelTally) {
    m.client_server_token_ratio = m
        .generation_tokens
        .filter(|g| *g > 0.0)
        .map(|g| (ok_tokens + t.tokens_received) as f64 / g);
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn abort_points_are_seeded_mid_stream_and_near_the_rate() {
        let mut p = LoadPlan::new("m");
        assert_eq!(abort_point(&p, 1, 0, 16), None, "no rate, no cancellation");
        p.cancel_rate = 0.25;
        let points: Vec<Option<u64>> = (0..4000).map(|i| abort_point(&p, 1, i, 16)).collect();
        let n = points.iter().flatten().count() as f64;
        // Binomial(4000, 0.25): σ ≈ 27, so ± 150 is > 5σ.
        assert!((n - 1000.0).abs() < 150.0, "{n}");
        assert!(points.iter().flatten().all(|k| (1..=15).contains(k)));
        // The same seed draws the same points; another seed others.
        let again: Vec<Option<u64>> = (0..4000).map(|i| abort_point(&p, 1, i, 16)).collect();
        assert_eq!(points, again);
        p.seed = 2;
        let other: Vec<Option<u64>> = (0..4000).map(|i| abort_point(&p, 1, i, 16)).collect();
        assert_ne!(points, other);
    }
}
