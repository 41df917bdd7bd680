//! The engine's gauges through each bench step, drawn (docs/reports.md): for every sweep whose
//! steps carry a gauge series (docs/metrics.md, "Engine gauges through a step"), one chart per
//! step of the requests running and waiting (and preemptions), and one of the KV cache's usage
//! where the engine reports it; a ramp-up before the measured window is shaded. Every label is
//! escaped: step labels and sources come from the artifact, which a run may have been given.

use std::fmt::Write as _;

use bakeoff_artifact::{GaugeSeries, LoadReport};

use crate::escape::for_html as h;
use crate::read::noted;
use crate::registry::Registry;
use crate::svg::{TimeSeries, time_chart};

/// The gauges counted in requests, in the order drawn.
const REQUEST_GAUGES: &[(&str, &str)] = &[
    ("running", "running"),
    ("waiting", "waiting"),
    ("preemptions", "preemptions (since the step's start)"),
    ("slots", "slots in all"),
];

fn series_of(g: &GaugeSeries, name: &str, scale: f64) -> Vec<(f64, Option<f64>)> {
    g.samples
        .iter()
        .map(|s| (s.t_s, s.values.get(name).map(|v| v * scale)))
        .collect()
}

/// One step's charts.
fn step_charts(out: &mut String, label: &str, g: &GaugeSeries) {
    let bands: Vec<(f64, f64, String)> = (g.measured_from_s > 0.0)
        .then(|| (0.0, g.measured_from_s, "ramp-up (not measured)".to_string()))
        .into_iter()
        .collect();
    let requests: Vec<TimeSeries> = REQUEST_GAUGES
        .iter()
        .filter(|(k, _)| g.names.contains_key(*k))
        .map(|(k, name)| (name.to_string(), series_of(g, k, 1.0)))
        .collect();
    let failed = if g.failed > 0 {
        format!("; {} failed scrapes (gaps)", g.failed)
    } else {
        String::new()
    };
    if !requests.is_empty() {
        out.push_str(&time_chart(
            &format!("{label}: requests ({}{failed})", g.source),
            "time in the step (s)",
            "requests",
            &requests,
            &bands,
        ));
    }
    if g.names.contains_key("kv_cache_usage") {
        out.push_str(&time_chart(
            &format!("{label}: KV cache usage % ({})", g.source),
            "time in the step (s)",
            "%",
            &[(
                "KV cache usage".to_string(),
                series_of(g, "kv_cache_usage", 100.0),
            )],
            &bands,
        ));
    }
}

/// Every load report of an artifact: `bench run`'s sweeps, and suites whose details are one.
fn reports(a: &bakeoff_artifact::Artifact) -> Vec<(String, LoadReport)> {
    let mut out: Vec<(String, LoadReport)> = a
        .load
        .iter()
        .map(|(n, l)| (format!("bench {n}"), l.clone()))
        .collect();
    for (n, s) in &a.suites {
        // Details that do not read are the report's note.
        if let Some(l) = noted(crate::read::load(n, s)) {
            out.push((n.clone(), l));
        }
    }
    out
}

/// The section, or nothing when no counted sweep has gauges.
pub fn html_section(reg: &Registry) -> String {
    let mut out = String::new();
    for e in reg.counted() {
        for (name, report) in reports(&e.artifact) {
            let steps: Vec<_> = report
                .steps
                .iter()
                .filter_map(|s| Some((s, s.gauges.as_ref().filter(|g| !g.samples.is_empty())?)))
                .collect();
            if steps.is_empty() {
                continue;
            }
            if out.is_empty() {
                out.push_str("<h3 id=\"gauges\">Engine gauges through each step</h3>");
            }
            let _ = write!(
                out,
                "<p class=\"levels-of\"><strong>{} — {}</strong> <span class=\"muted\">{}</span></p>",
                h(&e.artifact.candidate.slug),
                h(&name),
                h(&e.name)
            );
            if let Some(l) = report.capacity.as_ref().and_then(|c| c.limit.as_ref()) {
                let _ = write!(
                    out,
                    "<p class=\"limit\">Likely limit: {}</p>",
                    h(&l.statement)
                );
            }
            out.push_str("<div class=\"charts\">");
            for (s, g) in steps {
                step_charts(&mut out, &s.label, g);
            }
            out.push_str("</div>");
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use bakeoff_artifact::GaugeSample;
    use std::collections::BTreeMap;

    #[test]
    fn a_step_draws_its_requests_and_kv_cache_with_the_ramp_shaded_and_labels_escaped() {
        let sample = |t: f64, w: Option<f64>| GaugeSample {
            t_s: t,
            values: w
                .map(|w| {
                    BTreeMap::from([
                        ("waiting".to_string(), w),
                        ("running".to_string(), 2.0),
                        ("kv_cache_usage".to_string(), 0.5),
                    ])
                })
                .unwrap_or_default(),
            error: w.is_none().then(|| "timed out".to_string()),
        };
        let g = GaugeSeries {
            source: "vllm /metrics".into(),
            interval_s: 1.0,
            names: BTreeMap::from([
                ("running".into(), "vllm:num_requests_running".into()),
                ("waiting".into(), "vllm:num_requests_waiting".into()),
                ("kv_cache_usage".into(), "vllm:kv_cache_usage_perc".into()),
            ]),
            measured_from_s: 2.0,
            samples: vec![
                sample(0.0, Some(0.0)),
                sample(1.0, Some(1.0)),
                sample(2.0, None),
                sample(3.0, Some(4.0)),
            ],
            summary: BTreeMap::new(),
            failed: 1,
        };
        let mut out = String::new();
        step_charts(&mut out, "c=<b>8</b>", &g);
        assert!(out.contains("c=&lt;b&gt;8&lt;/b&gt;: requests"), "{out}");
        assert!(!out.contains("<b>8"));
        assert!(out.contains("ramp-up (not measured)"));
        assert!(out.contains("KV cache usage %"));
        assert!(out.contains("1 failed scrapes (gaps)"));
        assert_eq!(out.matches("<svg").count(), 2);
    }
}
