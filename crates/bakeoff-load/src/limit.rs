//! The likely limit behind the capacity finding, from the engine's gauges sampled through each
//! step (docs/metrics.md, "Engine gauges through a step"): the KV cache full or requests
//! preempted, else requests queueing inside the steps, else neither (compute-bound, or the
//! limit is elsewhere).

use bakeoff_artifact::{CapacityLimit, GaugeSeries, LimitKind, LoadStep};

/// A KV cache at or above this share of its capacity is full.
pub const KV_FULL: f64 = 0.95;

/// Requests queued inside a step when some waited (peak ≥ 1) and the queue held on average at
/// least this many: a step that had a request wait once, briefly, is not queue-bound.
pub const QUEUE_MEAN: f64 = 0.5;

fn level_of(s: &LoadStep) -> Option<f64> {
    s.concurrency.map(f64::from).or(s.requested_rate)
}

fn at(kind: &str, s: &LoadStep) -> String {
    match (kind, level_of(s)) {
        ("concurrency", Some(l)) => format!("c = {l}"),
        (_, Some(l)) => format!("{} req/s", crate::schedule::rate_text(l)),
        _ => s.label.clone(),
    }
}

fn stat(g: &GaugeSeries, name: &str) -> Option<(f64, f64)> {
    g.summary.get(name).map(|s| (s.peak, s.mean))
}

fn pct(v: f64) -> String {
    format!("{:.0} %", v * 100.0)
}

/// What one step's gauges show: the KV-cache words, or the queue words, or neither.
fn kv_words(g: &GaugeSeries) -> Option<String> {
    let kv = stat(g, "kv_cache_usage").filter(|(peak, _)| *peak >= KV_FULL);
    let pre = stat(g, "preemptions").filter(|(peak, _)| *peak > 0.0);
    match (kv, pre) {
        (Some((k, _)), Some((p, _))) => {
            Some(format!("KV cache {} and preemptions ({p:.0})", pct(k)))
        }
        (Some((k, _)), None) => Some(format!("KV cache {}", pct(k))),
        (None, Some((p, _))) => Some(format!("preemptions ({p:.0})")),
        (None, None) => None,
    }
}

fn queue_words(g: &GaugeSeries) -> Option<String> {
    let (peak, mean) = stat(g, "waiting").filter(|(p, m)| *p >= 1.0 && *m >= QUEUE_MEAN)?;
    let mut w = format!("requests queue inside the step (waiting peak {peak:.0}, mean {mean:.1}");
    if let Some((running, _)) = stat(g, "running") {
        w.push_str(&format!("; running peak {running:.0}"));
    }
    if let (Some((running, _)), Some((slots, _))) = (stat(g, "running"), stat(g, "slots"))
        && running >= slots
    {
        w.push_str(&format!(", all {slots:.0} slots busy"));
    }
    w.push(')');
    Some(w)
}

/// What a sweep whose throughput stopped rising is limited by when the gauges show neither a
/// full KV cache nor a queue ([`LimitKind::NoneSeen`]); a sweep still rising has no limit yet.
pub const NONE_SEEN_MEANS: &str = "compute-bound, or the limit is elsewhere";

/// The likely limit over a sweep's steps, in level order; `None` when no step has gauges.
pub fn find(steps: &[LoadStep], kind: &str) -> Option<CapacityLimit> {
    let mut with: Vec<(&LoadStep, &GaugeSeries)> = steps
        .iter()
        .filter_map(|s| Some((s, s.gauges.as_ref().filter(|g| !g.summary.is_empty())?)))
        .collect();
    if with.is_empty() {
        return None;
    }
    with.sort_by(|a, b| {
        level_of(a.0)
            .unwrap_or(0.0)
            .total_cmp(&level_of(b.0).unwrap_or(0.0))
    });
    if let Some((s, w)) = with.iter().find_map(|(s, g)| Some((s, kv_words(g)?))) {
        return Some(CapacityLimit {
            kind: LimitKind::KvCache,
            from_label: Some(s.label.clone()),
            statement: format!("{w} from {}", at(kind, s)),
        });
    }
    if let Some((s, w)) = with.iter().find_map(|(s, g)| Some((s, queue_words(g)?))) {
        return Some(CapacityLimit {
            kind: LimitKind::Queue,
            from_label: Some(s.label.clone()),
            statement: format!("{w} from {}", at(kind, s)),
        });
    }
    let peak = |name: &str| {
        with.iter()
            .filter_map(|(_, g)| stat(g, name).map(|x| x.0))
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
    };
    let mut seen = Vec::new();
    if let Some(k) = peak("kv_cache_usage") {
        seen.push(format!("KV cache peak {}", pct(k)));
    }
    if let Some(w) = peak("waiting") {
        seen.push(format!("waiting peak {w:.0}"));
    }
    let top = with.last().map(|(s, _)| at(kind, s)).unwrap_or_default();
    Some(CapacityLimit {
        kind: LimitKind::NoneSeen,
        from_label: None,
        statement: format!(
            "the engine's gauges show no KV-cache or queue limit up to {top}{}",
            if seen.is_empty() {
                String::new()
            } else {
                format!(" ({})", seen.join(", "))
            }
        ),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use bakeoff_artifact::GaugeStat;
    use std::collections::BTreeMap;

    fn step(c: u32, gauges: &[(&str, f64, f64)]) -> LoadStep {
        let lat = serde_json::json!({"count": 0, "clamped_high": 0});
        let mut s: LoadStep = serde_json::from_value(serde_json::json!({
            "label": format!("c={c}"), "concurrency": c, "sent": 1, "ok": 1, "errors": {},
            "wall_s": 1.0, "output_tokens": 1, "token_source": "usage",
            "latency": {"ttft": lat, "ttfot": lat, "tpot": lat, "itl": lat, "e2e": lat,
                "send_lateness": lat, "ttft_corrected": lat, "e2e_corrected": lat},
            "histograms": {"ttft": [], "itl": [], "e2e": []},
        }))
        .unwrap();
        s.gauges = Some(GaugeSeries {
            source: "vllm /metrics".into(),
            interval_s: 1.0,
            names: BTreeMap::new(),
            measured_from_s: 0.0,
            samples: Vec::new(),
            summary: gauges
                .iter()
                .map(|(k, peak, mean)| {
                    (
                        k.to_string(),
                        GaugeStat {
                            peak: *peak,
                            mean: *mean,
                            samples: 5,
                        },
                    )
                })
                .collect(),
            failed: 0,
        });
        s
    }

    #[test]
    fn kv_then_queue_then_none() {
        let steps = vec![
            step(
                16,
                &[("kv_cache_usage", 1.0, 0.9), ("preemptions", 3.0, 1.0)],
            ),
            step(4, &[("kv_cache_usage", 0.4, 0.3), ("waiting", 0.0, 0.0)]),
            step(8, &[("kv_cache_usage", 0.7, 0.5), ("waiting", 12.0, 6.0)]),
        ];
        let l = find(&steps, "concurrency").unwrap();
        assert_eq!(l.kind, LimitKind::KvCache);
        assert_eq!(
            l.statement,
            "KV cache 100 % and preemptions (3) from c = 16"
        );
        let l = find(&steps[1..], "concurrency").unwrap();
        assert_eq!(l.kind, LimitKind::Queue);
        assert!(
            l.statement
                .starts_with("requests queue inside the step (waiting peak 12, mean 6.0")
                && l.statement.ends_with("from c = 8"),
            "{}",
            l.statement
        );
        let l = find(&steps[1..2], "concurrency").unwrap();
        assert_eq!(l.kind, LimitKind::NoneSeen);
        assert!(
            l.statement.contains("KV cache peak 40 %"),
            "{}",
            l.statement
        );
        // Slots: every one busy while requests waited.
        let s = step(
            4,
            &[
                ("running", 2.0, 2.0),
                ("slots", 2.0, 2.0),
                ("waiting", 2.0, 1.8),
            ],
        );
        let l = find(&[s], "concurrency").unwrap();
        assert!(l.statement.contains("all 2 slots busy"), "{}", l.statement);
        assert!(find(&[], "concurrency").is_none());
    }
}
