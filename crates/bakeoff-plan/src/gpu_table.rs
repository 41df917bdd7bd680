//! The per-GPU summary table `bakeoff plan` prints before the arithmetic ([`crate::render_text`]).
//! Pure: it returns the table and prints nothing. Host, GPU and seat names come from the fleet
//! file and the driver and go through [`for_terminal`].

use bakeoff_term::escape::for_terminal;
use bakeoff_term::{Grid, Kind, render};

use crate::plan::GpuPlan;

/// One row per GPU — host, GPU, total, claimed, measured, headroom (GiB), seats — laid out for
/// `width` columns; `None` when the plan has no GPU. Headroom is the planned one (running seats
/// as measured), `≤` when some claim has unpriced terms.
pub fn gpu_table_at(gpus: &[GpuPlan], width: u16) -> Option<String> {
    if gpus.is_empty() {
        return None;
    }
    let gib = |b: Option<u64>| {
        b.map(|b| format!("{:.2}", b as f64 / 1024f64.powi(3)))
            .unwrap_or_else(|| "-".into())
    };
    let mut t = Grid::new();
    t.column("host", Kind::Name(40))
        .column("GPU", Kind::Number)
        .secondary("name", Kind::Text)
        .column("total (GiB)", Kind::Number)
        .column("claimed (GiB)", Kind::Number)
        .column("measured (GiB)", Kind::Number)
        .column("headroom (GiB)", Kind::Number)
        .column("seats", Kind::Words);
    for g in gpus {
        let headroom = match g.headroom_planned_bytes {
            Some(b) => format!(
                "{}{:.2}",
                if g.headroom_is_upper_bound {
                    "≤ "
                } else {
                    ""
                },
                b as f64 / 1024f64.powi(3)
            ),
            None => "unknown".into(),
        };
        let seats: Vec<&str> = g.seats.iter().map(|s| s.claim.seat.as_str()).collect();
        t.row(vec![
            for_terminal(&g.host, 200),
            g.index.to_string(),
            for_terminal(g.name.as_deref().unwrap_or("-"), 80),
            gib(g.total_bytes),
            gib(g.claimed_bytes),
            gib(g.measured_used_bytes),
            headroom,
            if seats.is_empty() {
                "-".into()
            } else {
                for_terminal(&seats.join(", "), 400)
            },
        ]);
    }
    Some(render(&t, width))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn gpu(host: &str, index: u32, seats: &[&str], upper: bool) -> GpuPlan {
        let claim = |seat: &str| {
            serde_json::json!({
                "claim": {
                    "seat": seat, "engine": "vllm", "engine_version": "0.19.0", "gpu": index,
                    "gpu_memory_utilization": 0.45, "utilization_is_default": false,
                    "budget_bytes": null, "rule": "-", "parts": [], "expected_bytes": null,
                    "unpriced": [], "weights_bytes": null, "notes": [],
                },
                "measured": null, "effective_bytes": null,
            })
        };
        let gib = 1u64 << 30;
        serde_json::from_value(serde_json::json!({
            "host": host, "index": index, "name": "NVIDIA H200", "total_bytes": 141 * gib,
            "total_source": "nvml",
            "seats": seats.iter().map(|s| claim(s)).collect::<Vec<_>>(),
            "utilization_sum": 0.9, "claimed_bytes": 127 * gib,
            "measured_used_bytes": 98 * gib + gib / 3, "other_processes": [],
            "headroom_by_claims_bytes": 14 * gib, "headroom_planned_bytes": -(3 * gib as i64),
            "headroom_is_upper_bound": upper, "alternatives": [], "warnings": [], "notes": [],
        }))
        .unwrap()
    }

    #[test]
    fn the_per_gpu_table_at_each_width() {
        let gpus = vec![
            gpu(
                "local",
                0,
                &["gemma-vllm", "qwen-sglang-with-a-long-name"],
                false,
            ),
            gpu("gpu-box-2.internal.example.org", 1, &[], true),
        ];
        assert!(gpu_table_at(&[], 120).is_none());
        let zero = bakeoff_term::width_from(None, Some(0));
        for (w, name) in [(60, "60"), (100, "100"), (200, "200"), (zero, "reported_0")] {
            let text = gpu_table_at(&gpus, w).unwrap();
            assert!(text.contains("-3.00") && text.contains("141.00"), "{text}");
            insta::assert_snapshot!(format!("gpu_table_{name}"), text);
        }
    }
}
