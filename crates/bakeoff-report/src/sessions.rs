//! Agent sessions in the reports (docs/metrics.md, "Sessions"): per step, the turns as a depth
//! curve — context depth, TTFT, the server's cache hits and whether the cache survived each tool
//! wait — in the terminal and as the HTML report's TTFT-against-depth chart per level.

use std::fmt::Write as _;

use bakeoff_artifact::{LoadStep, SessionStep};

use crate::escape::{for_html as h, for_terminal};
use crate::registry::Registry;
use crate::svg;

fn ms(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.0} ms"))
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{:.0} %", v * 100.0))
}

/// `kept/checked`, or `-` when no turn could be judged.
fn kept(kept: u64, checked: u64) -> String {
    if checked == 0 {
        "-".into()
    } else {
        format!("{kept}/{checked}")
    }
}

/// The step's sessions in a few lines: the counts, then one line per turn.
pub fn text_lines(step: &LoadStep) -> Vec<String> {
    let Some(s) = &step.sessions else {
        return Vec::new();
    };
    let label = for_terminal(&step.label, 80);
    let mut out = vec![format!(
        "{label}: {} sessions started, {} completed{}; session time p50 {}; tool wait p50 {}",
        s.started,
        s.completed,
        if s.sub_sessions > 0 {
            format!(" ({} sub-sessions)", s.sub_sessions)
        } else {
            String::new()
        },
        seconds(s.session_time.p50_ms),
        seconds(s.tool_wait.p50_ms),
    )];
    if let Some(r) = &s.replay_tokens {
        out.push(format!(
            "{label}: replay sent the recorded tokens: {} of {} turns counted exactly as recorded (largest difference {} tokens)",
            r.equal, r.compared, r.max_difference
        ));
    }
    out.push(format!(
        "  {:>4}  {:>7}  {:>9}  {:>9}  {:>9}  {:>10}  {:>9}",
        "turn", "depth", "TTFT p50", "TTFT p95", "cache hit", "cache kept", "wait"
    ));
    for t in &s.turns {
        out.push(format!(
            "  {:>4}  {:>7}  {:>9}  {:>9}  {:>9}  {:>10}  {:>9}",
            t.turn,
            t.mean_prompt_tokens
                .map_or("-".into(), |d| format!("{d:.0}")),
            ms(t.ttft.p50_ms),
            ms(t.ttft.p95_ms),
            pct(t.cache_hit_rate),
            kept(t.cache_kept, t.cache_checked),
            seconds(t.mean_tool_wait_ms),
        ));
    }
    if s.cache_source.is_none() {
        out.push(format!(
            "{label}: no reply reported cached prompt tokens (llama.cpp timings, or usage.prompt_tokens_details: vLLM --enable-prompt-tokens-details)"
        ));
    }
    out
}

fn seconds(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{:.2} s", v / 1000.0))
}

/// The HTML section: one TTFT-against-depth chart over every sessions step of the counted
/// artifacts (a series per artifact and level), then each step's per-turn table. Empty when no
/// artifact holds sessions.
pub fn html_section(reg: &Registry) -> String {
    let mut p50 = Vec::new();
    let mut tables = String::new();
    for e in reg.counted() {
        for (name, r) in &e.artifact.load {
            for step in &r.steps {
                let Some(s) = &step.sessions else { continue };
                let series = format!("{} {name} {}", e.name, step.label);
                p50.push((series.clone(), depth_points(s)));
                let _ = write!(tables, "<h3>{}</h3>", h(&series));
                tables.push_str(&turn_table(s));
            }
        }
    }
    if p50.is_empty() {
        return String::new();
    }
    let mut out = String::from("<h2 id=\"sessions\">Sessions</h2>");
    out.push_str(
        "<p>Each point is one turn number across a step's sessions: its mean context depth \
         (the server's prompt tokens) against its TTFT p50. A curve that climbs with depth is \
         prefill the cache did not save.</p>",
    );
    out.push_str(&svg::line_chart(
        "TTFT p50 against context depth",
        "context depth, prompt tokens (log2 axis)",
        "TTFT p50, ms",
        &p50,
    ));
    out.push_str(&tables);
    out
}

fn depth_points(s: &SessionStep) -> Vec<(f64, f64)> {
    s.turns
        .iter()
        .filter_map(|t| Some((t.mean_prompt_tokens?, t.ttft.p50_ms?)))
        .filter(|(d, _)| *d > 0.0)
        .collect()
}

fn turn_table(s: &SessionStep) -> String {
    let mut out = format!(
        "<p>{} sessions started, {} completed; session time p50 {}; tool wait p50 {}.</p>",
        s.started,
        s.completed,
        h(&seconds(s.session_time.p50_ms)),
        h(&seconds(s.tool_wait.p50_ms))
    );
    out.push_str("<table class=\"sessions\"><thead><tr><th>turn</th><th>sent</th><th>ok</th><th>depth (tokens)</th><th>TTFT p50</th><th>TTFT p95</th><th>cache hit</th><th>cache kept after the wait</th><th>tool wait</th></tr></thead><tbody>");
    for t in &s.turns {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            t.turn,
            t.sent,
            t.ok,
            t.mean_prompt_tokens
                .map_or("-".into(), |d| format!("{d:.0}")),
            h(&ms(t.ttft.p50_ms)),
            h(&ms(t.ttft.p95_ms)),
            h(&pct(t.cache_hit_rate)),
            h(&kept(t.cache_kept, t.cache_checked)),
            h(&seconds(t.mean_tool_wait_ms)),
        );
    }
    out.push_str("</tbody></table>");
    out
}
