//! The HTML report's throughput and latency section: the level charts (a level run in rounds
//! drawn as its mean with an error bar, its legend naming only what differs between series),
//! and per sweep the capacity finding, the repeats' intervals with the `unstable` flag, and the
//! per-level table with each round named and each contaminated step marked
//! (docs/reports.md, "Throughput and latency").

use std::fmt::Write as _;

use bakeoff_stats::percentile_nearest_rank;

use super::figures::{fixed, ms, num};
use crate::escape::for_html as h;
use crate::registry::Registry;
use crate::steps::{Step, ttfts};
use crate::svg;

/// Words every name shares, in the first name's order, and each name without them — so a
/// legend names only what differs between series (`p50`, `p90`, `p99`) and the chart's caption
/// says once what they share (`gemma-… bench throughput`). Names are left whole when one would
/// be left empty (a single series) or nothing is shared.
pub fn shared_words(names: &[String]) -> (String, Vec<String>) {
    let words: Vec<Vec<&str>> = names.iter().map(|n| n.split(' ').collect()).collect();
    let Some(first) = words.first() else {
        return (String::new(), Vec::new());
    };
    let shared: Vec<&str> = first
        .iter()
        .copied()
        .filter(|w| words.iter().all(|ws| ws.contains(w)))
        .collect();
    let rest: Vec<String> = words
        .iter()
        .map(|ws| {
            ws.iter()
                .copied()
                .filter(|w| !shared.contains(w))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    if shared.is_empty() || names.len() < 2 || rest.iter().any(String::is_empty) {
        return (String::new(), names.to_vec());
    }
    (shared.join(" "), rest)
}

/// A level chart whose legend names only what differs between its series.
fn level_chart(title: &str, y_label: &str, series: Vec<(String, Vec<svg::Point>)>) -> String {
    let names: Vec<String> = series.iter().map(|s| s.0.clone()).collect();
    let (shared, legend) = shared_words(&names);
    let repeated = series
        .iter()
        .any(|s| s.1.iter().any(|p| p.rounds.len() > 1));
    let caption = match (shared.is_empty(), repeated) {
        (true, false) => String::new(),
        (false, false) => shared,
        (true, true) => "mean of the rounds, 95 % interval, each round faint".into(),
        (false, true) => format!("{shared} — mean of the rounds, 95 % interval, each round faint"),
    };
    let series: Vec<(String, Vec<svg::Point>)> = legend
        .into_iter()
        .zip(series)
        .map(|(n, (_, pts))| (n, pts))
        .collect();
    svg::level_chart(
        title,
        &caption,
        "concurrency (log2 axis; a tick at every level run)",
        y_label,
        &series,
    )
}

/// A sweep's points for one figure: each level at its concurrency, a level run in rounds as
/// their mean with its interval and each round's value.
fn points(steps: &[Step], get: fn(&Step) -> Option<f64>) -> Vec<svg::Point> {
    crate::steps::levels_of(steps)
        .iter()
        .filter_map(|l| {
            let f = l.figure(get)?;
            Some(svg::Point {
                x: l.concurrency?,
                y: f.mean,
                interval: f.interval,
                rounds: if f.values.len() > 1 {
                    f.values
                } else {
                    Vec::new()
                },
            })
        })
        .collect()
}

pub(super) fn charts(out: &mut String, reg: &Registry) {
    out.push_str("<h2 id=\"charts\">Throughput and latency</h2>");
    // Throughput steps from every counted artifact that carries them.
    let mut tok = Vec::new();
    let mut ttft_series = Vec::new();
    for e in reg.counted() {
        for (name, steps) in crate::steps::sweeps_of(&e.artifact) {
            if steps.is_empty() {
                continue;
            }
            let label = format!("{} {name}", e.artifact.candidate.slug);
            let pts = points(&steps, |st| st.tok_per_s);
            if !pts.is_empty() {
                tok.push((label.clone(), pts));
            }
            for (p, get) in [
                (
                    "p50",
                    (|st: &Step| st.ttft_p50_ms) as fn(&Step) -> Option<f64>,
                ),
                ("p90", |st| st.ttft_p90_ms),
                ("p99", |st| st.ttft_p99_ms),
            ] {
                let pts = points(&steps, get);
                if !pts.is_empty() {
                    ttft_series.push((format!("{label} {p}"), pts));
                }
            }
        }
    }
    out.push_str("<div class=\"charts\">");
    if tok.is_empty() && ttft_series.is_empty() {
        out.push_str("<p id=\"no-throughput\"><strong>no throughput data</strong>: no counted artifact carries load steps (run the throughput suite to draw concurrency against tok/s).</p>");
    } else {
        if !tok.is_empty() {
            out.push_str(&level_chart(
                "Concurrency vs output tok/s",
                "output tok/s",
                tok,
            ));
        }
        if !ttft_series.is_empty() {
            out.push_str(&level_chart(
                "TTFT percentiles by concurrency",
                "TTFT ms",
                ttft_series,
            ));
        }
    }
    // TTFT percentiles per suite from the item records: every measured run has these.
    let names = vec!["p50".to_string(), "p90".to_string(), "p99".to_string()];
    let mut groups = Vec::new();
    for e in reg.counted() {
        for (name, s) in &e.artifact.suites {
            let v = ttfts(s.items.iter());
            if v.is_empty() {
                continue;
            }
            groups.push((
                format!("{} {name}", e.artifact.candidate.slug),
                vec![
                    percentile_nearest_rank(&v, 50.0),
                    percentile_nearest_rank(&v, 90.0),
                    percentile_nearest_rank(&v, 99.0),
                ],
            ));
        }
    }
    if groups.is_empty() {
        // A bench-only directory has no suite items: the level charts above are its TTFT.
        if reg.counted().any(|e| !e.artifact.suites.is_empty()) {
            out.push_str("<p>No TTFT was recorded by any counted suite item.</p>");
        }
    } else {
        out.push_str(&svg::bar_chart(
            "TTFT percentiles per suite (item records)",
            "TTFT ms",
            &names,
            &groups,
        ));
    }
    out.push_str("</div>");
    level_tables(out, reg);
    out.push_str(&crate::gauges::html_section(reg));
}

/// A sweep's figures per level: what the charts draw, and the latencies they do not.
pub(super) fn level_table(out: &mut String, steps: &[Step]) {
    // GPU power and tokens per joule only where some level has them (docs/metrics.md).
    let power = steps.iter().any(|s| s.power_w_mean.is_some());
    out.push_str("<table class=\"levels\"><thead><tr><th>level</th><th>requests ok</th><th>output tok/s</th>");
    if power {
        out.push_str("<th>GPU power W (mean)</th><th>output tok/J</th>");
    }
    out.push_str("<th>TTFT p50</th><th>TTFT p99</th><th>TPOT p50</th><th>TPOT p99</th><th>ITL p50</th><th>ITL p99</th><th>E2E p50</th><th>E2E p99</th></tr></thead><tbody>");
    for st in steps {
        // The round is named (`c=1 #2`); a step that shared its machine is marked, with what
        // contaminated it on hover (docs/metrics.md "Conditions").
        let mark = st.contamination.as_ref().map_or(String::new(), |why| {
            format!(
                " <span class=\"flag contaminated\" title=\"{}\"><strong>CONTAMINATED</strong></span>",
                h(why)
            )
        });
        let _ = write!(
            out,
            "<tr><td>{}{mark}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>",
            h(&crate::steps::level_text(st)),
            num(st.requests),
            fixed(st.tok_per_s, 1)
        );
        if power {
            let _ = write!(
                out,
                "<td class=\"num\">{}</td><td class=\"num\">{}</td>",
                num(st.power_w_mean),
                fixed(st.tokens_per_joule, 3)
            );
        }
        for v in [
            st.ttft_p50_ms,
            st.ttft_p99_ms,
            st.tpot_p50_ms,
            st.tpot_p99_ms,
            st.itl_p50_ms,
            st.itl_p99_ms,
            st.e2e_p50_ms,
            st.e2e_p99_ms,
        ] {
            let _ = write!(out, "<td class=\"num\">{}</td>", ms(v));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>");
}

/// One per-level table per sweep of every counted artifact (bench runs and load suites).
fn level_tables(out: &mut String, reg: &Registry) {
    let mut any = false;
    for e in reg.counted() {
        for (name, steps) in crate::steps::sweeps_of(&e.artifact) {
            if steps.is_empty() {
                continue;
            }
            if !any {
                out.push_str("<h3 id=\"levels\">Per level (ms; output tok/s summed over the level's requests)</h3>");
                any = true;
            }
            let _ = write!(
                out,
                "<p class=\"levels-of\"><strong>{} — {}</strong> <span class=\"muted\">{}</span></p>",
                h(&e.artifact.candidate.slug),
                h(&name),
                h(&e.name)
            );
            if let Some(load) = crate::steps::load_of(&e.artifact, &name) {
                sweep_findings(out, &load);
            }
            level_table(out, &steps);
        }
    }
}

/// What the terminal prints above and below a sweep's table: the capacity finding (with its
/// caveat when the steps it rests on were contaminated), and under `--repeat` each level's
/// mean with its interval and the `unstable` flag.
fn sweep_findings(out: &mut String, load: &bakeoff_artifact::LoadReport) {
    if let Some(c) = &load.capacity {
        let _ = write!(
            out,
            "<p class=\"capacity\"><strong>capacity:</strong> {}</p>",
            h(&c.statement)
        );
        if let Some(s) = &c.slo {
            let _ = write!(
                out,
                "<p class=\"capacity\"><strong>capacity under SLO:</strong> {} (searched {})</p>",
                h(&s.statement),
                h(&s.searched)
            );
        }
        if let Some(caveat) = crate::bench::capacity_caveat(load) {
            let _ = write!(
                out,
                "<p class=\"capacity-caveat\"><span class=\"flag contaminated\"><strong>CONTAMINATED</strong></span> {}</p>",
                h(&caveat)
            );
        }
    }
    if load.levels.is_empty() {
        return;
    }
    out.push_str("<table class=\"repeats\"><thead><tr><th>level</th><th>rounds</th><th>output tok/s (mean [95 % interval])</th><th>TTFT p50 ms</th><th>TPOT p50 ms</th><th>flags</th></tr></thead><tbody>");
    for l in &load.levels {
        let flag = if l.unstable {
            let why = load
                .flags
                .iter()
                .find(|f| {
                    f.code == bakeoff_artifact::FlagCode::Unstable
                        && f.message.starts_with(&format!("{}:", l.label))
                })
                .map(|f| f.message.clone())
                .unwrap_or_else(|| "the rounds disagree beyond their own errors".into());
            format!(
                "<span class=\"flag unstable\" title=\"{}\">unstable</span>",
                h(&why)
            )
        } else {
            String::new()
        };
        let _ = write!(
            out,
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{flag}</td></tr>",
            h(&l.label),
            l.repeats,
            h(&crate::bench::interval_text(
                &l.output_tokens_per_second,
                1,
                ""
            )),
            h(&crate::bench::interval_text(&l.ttft_p50_ms, 1, "")),
            h(&crate::bench::interval_text(&l.tpot_p50_ms, 2, "")),
        );
    }
    out.push_str("</tbody></table>");
}
