//! The lines around a sweep table in `bench run`, `bench run --versus`, `eval run` and
//! `eval damage`: the load suites' sweeps of an `eval run` artifact, the per-step workload lines,
//! and the conditions line. Pure: each returns text and prints nothing.

use std::path::Path;

use bakeoff_artifact::{Artifact, HarnessCeiling, LoadReport};

use crate::escape::for_terminal;
use crate::read::{self, noted};

/// The sweep tables of the load suites of an `eval run` artifact (details that do not read are
/// a note of the run's summary, [`crate::terminal::run_summary`]).
pub fn suite_sweeps(art: &Artifact) -> String {
    let mut out = String::new();
    for name in read::LOAD {
        let Some(s) = art.suites.get(*name) else {
            continue;
        };
        if let Some(r) = noted(read::load(name, s)) {
            out.push_str(&format!("\n{name}:\n{}", crate::bench::sweep(&r)));
        }
        // A missing figure prints as the JSON it was (`null`), as it always has.
        let or_null = |v: Option<u64>| v.map_or("null".into(), |v| v.to_string());
        let probes = noted(read::longgen(name, s)).unwrap_or_default();
        for p in probes.probes {
            out.push_str(&format!(
                "longgen probe {}: {} tokens, decode {:.1} tok/s (server {:.1})\n",
                or_null(p.probe),
                or_null(p.output_tokens),
                p.decode_tokens_per_second.unwrap_or(0.0),
                p.server_decode_tokens_per_second.unwrap_or(0.0)
            ));
        }
    }
    out
}

/// Per step of a non-synthetic workload (docs/metrics.md, "Workloads"): first vs later turns
/// and the prefix-cache hit rate with its source.
pub fn workload_lines(r: &LoadReport) -> Vec<String> {
    let ms = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.1} ms"));
    let mut out = Vec::new();
    for s in &r.steps {
        if s.sessions.is_some() {
            out.extend(crate::sessions::text_lines(s));
        } else if let Some(t) = &s.turns {
            out.push(format!(
                "{}: {} conversations; TTFT p50 first turns {} ({} ok), later turns {} ({} ok)",
                s.label,
                t.conversations,
                ms(t.first_turn.ttft.p50_ms),
                t.first_turn.ok,
                ms(t.later_turns.ttft.p50_ms),
                t.later_turns.ok
            ));
        }
        if let Some(p) = &s.prefix_cache {
            out.push(match p.hit_rate {
                Some(h) => format!(
                    "{}: prefix-cache hit rate {:.1} % ({})",
                    s.label,
                    h * 100.0,
                    p.source
                ),
                None => format!(
                    "{}: prefix-cache hit rate {}: {}",
                    s.label, p.source, p.detail
                ),
            });
        }
    }
    out
}

/// The last line of every `bench run` and `eval run` summary: the conditions of every measured
/// bench step and eval suite, clean or what contaminated them (docs/metrics.md, "Conditions").
/// Process names come from `/proc`, where anything can name itself: escaped.
pub fn conditions_line(art: &Artifact) -> String {
    let steps = art.load.values().flat_map(|r| {
        r.steps
            .iter()
            .filter_map(|s| s.conditions.as_ref().map(|c| (s.label.as_str(), c)))
    });
    let suites = art
        .suites
        .iter()
        .filter_map(|(name, s)| s.summary.conditions.as_ref().map(|c| (name.as_str(), c)));
    for_terminal(&bakeoff_artifact::summary_line(steps.chain(suites)), 2000)
}

/// `bench run`'s summary of one endpoint: the sweep's table, the workload's lines, where the
/// artifact is and the conditions line (nothing when the artifact holds no sweep: a failure).
pub fn bench_run(art: &Artifact, path: &Path) -> String {
    bench_run_at(art, path, crate::table::width())
}

/// [`bench_run`] with its table laid out for `width` columns.
pub fn bench_run_at(art: &Artifact, path: &Path, width: u16) -> String {
    let Some(r) = art.load.get("throughput") else {
        return String::new();
    };
    let mut out = format!("{}\n", crate::bench::sweep_at(r, width));
    for line in workload_lines(r) {
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str(&format!("artifact: {}\n", path.display()));
    out.push_str(&format!("{}\n", conditions_line(art)));
    out
}

/// `bench calibrate`'s answer: the harness ceiling on this machine, and what it is for.
pub fn ceiling(c: &HarnessCeiling) -> String {
    format!(
        "harness ceiling on this machine: {:.0} req/s (1-token requests), {:.0} streamed tokens/s, \
         {} concurrent streams, peak RSS {:.0} MiB\nsweep steps above half of these are flagged client-bound\n",
        c.requests_per_second,
        c.streamed_tokens_per_second,
        c.concurrent_streams,
        c.peak_rss_mib.unwrap_or(0.0)
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
