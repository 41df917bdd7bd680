use super::*;
use crate::steps::Step;

fn steps(telemetry: Option<serde_json::Value>) -> Vec<Step> {
    let lat = serde_json::json!({"count": 1, "clamped_high": 0, "p50_ms": 10.0});
    let mut s = serde_json::json!({
        "label": "c=1", "concurrency": 1, "sent": 1, "ok": 1, "errors": {}, "wall_s": 1.0,
        "output_tokens": 300, "output_tokens_per_second": 300.0, "token_source": "usage",
        "latency": {"ttft": lat, "ttfot": lat, "tpot": lat, "itl": lat, "e2e": lat,
            "send_lateness": lat, "ttft_corrected": lat, "e2e_corrected": lat},
        "histograms": {"ttft": [], "itl": [], "e2e": []}
    });
    if let Some(t) = telemetry {
        s["gpu_telemetry"] = t;
    }
    let r: bakeoff_artifact::LoadReport = serde_json::from_value(serde_json::json!({
        "mode": "closed", "plan": {}, "warmup_requests": 0, "steps": [s],
        "pinning": {"ignore_eos_sent": false, "min_tokens_sent": false, "finished": 1,
                    "exact_length": 1, "detail": "pinned"}
    }))
    .unwrap();
    crate::steps::steps_of_load(&r)
}

/// The per-level table shows GPU power and tok/J only when a level has them.
#[test]
fn level_table_shows_power_and_tokens_per_joule_only_with_telemetry() {
    let mut with = String::new();
    level_table(
        &mut with,
        &steps(Some(
            serde_json::json!({"source": "nvml", "interval_ms": 250,
            "samples": 5, "power_w_mean": 400.0, "energy_j": 400.0,
            "output_tokens_per_joule": 0.75}),
        )),
    );
    assert!(
        with.contains("output tok/J") && with.contains("0.750"),
        "{with}"
    );
    assert!(with.contains(">400<"), "{with}");
    let mut without = String::new();
    level_table(&mut without, &steps(None));
    assert!(!without.contains("tok/J"), "{without}");
}
