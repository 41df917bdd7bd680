//! The context suite's item shapes, built from the suite's plan: what a needle item asked for,
//! planned and counted, and why a target was skipped (docs/artifacts.md "Context suite
//! records"). The shapes are bakeoff-artifact's (`NeedleExtra`, `SkippedExtra`).

use bakeoff_artifact::WindowSource;
pub use bakeoff_artifact::{NeedleExtra, SkippedExtra};

use super::targets::PlannedTarget;

/// One needle request as sent and answered, for its record.
pub(super) struct Sent {
    pub(super) target: u64,
    pub(super) planned_tokens: u64,
    pub(super) used_depth: f64,
    pub(super) actual: Option<u64>,
    pub(super) tolerance: u64,
}

/// A needle item's `extra`.
pub(super) fn needle_extra(
    p: &PlannedTarget,
    depth: f64,
    sent: &Sent,
    code: &str,
    window: u64,
    window_source: WindowSource,
) -> NeedleExtra {
    NeedleExtra {
        target_label: p.label.clone(),
        requested_tokens: p.requested,
        target_tokens: sent.target,
        planned_tokens: sent.planned_tokens,
        actual_prompt_tokens: sent.actual,
        delta_tokens: sent.actual.map(|a| a as i64 - sent.target as i64),
        tolerance_tokens: sent.tolerance,
        depth_requested: depth,
        depth_used: sent.used_depth,
        needle: code.to_owned(),
        window,
        window_source,
    }
}

/// A skipped target's `extra`: the target that cannot fit, and the window it did not fit.
pub(super) fn skipped_extra(
    p: &PlannedTarget,
    window: u64,
    window_source: WindowSource,
) -> SkippedExtra {
    SkippedExtra {
        target_label: p.label.clone(),
        requested_tokens: p.requested,
        window,
        window_source,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::item_extra::tests::same_bytes_both_ways;
    use serde_json::json;

    /// Both shapes write what the suite's former `json!` writer wrote: a needle the server
    /// counted (a negative delta, a float depth) and one it did not, and a skipped target.
    #[test]
    fn the_typed_shapes_write_the_former_bytes() {
        let p = PlannedTarget {
            label: "16k".into(),
            requested: 16384,
            clamped: Some(8000),
        };
        let (window, window_source) = (8192u64, WindowSource::LlamacppSlots);
        for actual in [Some(7990u64), Some(8003), None] {
            let sent = Sent {
                target: 8000,
                planned_tokens: 7996,
                used_depth: 0.2471,
                actual,
                tolerance: 40,
            };
            let (depth, code) = (0.25, "ORCHID-4471");
            let then = json!({
                "target_label": p.label,
                "requested_tokens": p.requested,
                "target_tokens": sent.target,
                "planned_tokens": sent.planned_tokens,
                "actual_prompt_tokens": sent.actual,
                "delta_tokens": sent.actual.map(|a| a as i64 - sent.target as i64),
                "tolerance_tokens": sent.tolerance,
                "depth_requested": depth,
                "depth_used": sent.used_depth,
                "needle": code,
                "window": window,
                "window_source": window_source,
            });
            let now = needle_extra(&p, depth, &sent, code, window, window_source);
            same_bytes_both_ways(&now, &then);
        }
        // A whole depth stays a float (`1.0`), as `json!` wrote it.
        let sent = Sent {
            target: 8000,
            planned_tokens: 8000,
            used_depth: 1.0,
            actual: None,
            tolerance: 40,
        };
        let now = needle_extra(&p, 1.0, &sent, "X", window, window_source);
        let text = serde_json::to_string(&now).unwrap();
        assert!(
            text.contains(r#""depth_requested":1.0,"depth_used":1.0"#),
            "{text}"
        );

        let then = json!({"target_label": p.label, "requested_tokens": p.requested, "window": window, "window_source": window_source});
        same_bytes_both_ways(&skipped_extra(&p, window, window_source), &then);
    }
}
