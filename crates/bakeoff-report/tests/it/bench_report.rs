//! Bench runs in the report (docs/reports.md): a `bench run` artifact joins its candidate's row (by
//! the slug without `-bench`, or by model + engine + quantization + window, whatever the model's
//! spelling), one with no candidate keeps its own row, the HTML has a per-level table per sweep,
//! charts on a log2 level axis, per-suite scores as interval bars and the paired comparison of
//! a candidate's two newest runs; `steps.csv` has a column per metric.
//!
//! The artifacts are hand-built with the shapes `eval run` and `bench run` write.

use std::path::Path;

use bakeoff_artifact::{
    Artifact, ArtifactKind, Candidate, ContextWindow, EndpointRecord, EngineKind, LoadReport,
    SuiteResult, WindowSource, write_atomic,
};
use bakeoff_report::{comparison, csv_export, html, registry, terminal};
use chrono::{DateTime, Utc};
use serde_json::{Value, json};

fn at(s: &str) -> DateTime<Utc> {
    s.parse().unwrap()
}

pub(crate) fn candidate(
    slug: &str,
    model: &str,
    engine: EngineKind,
    quant: &str,
    window: u64,
) -> Candidate {
    let mut c = Candidate::new(slug, model, engine);
    c.engine_version = Some("b11434".into());
    c.quantization = Some(quant.into());
    c.context_window = ContextWindow {
        tokens: Some(window),
        source: WindowSource::LlamacppSlots,
    };
    c
}

pub(crate) fn artifact(c: Candidate, created: &str) -> Artifact {
    let mut a = Artifact::new(
        ArtifactKind::Bakeoff,
        c,
        EndpointRecord {
            url: "http://127.0.0.1:8080".into(),
            facts: None,
        },
    );
    a.created_at = at(created);
    a
}

/// A smoke suite whose items pass where `passes` says so.
pub(crate) fn smoke(passes: &[bool]) -> SuiteResult {
    let items: Vec<Value> = passes
        .iter()
        .enumerate()
        .map(|(i, ok)| {
            json!({
                "id": format!("smoke-{i}"),
                "outcome": if *ok { "ok" } else { "wrong" },
                "request": {"messages": [{"role": "user", "content": format!("say {i}")}]},
                "response": {"content": format!("reply {i}"), "finish_reason": "stop"},
                "expected": format!("{i}"),
                "latency": {"ttft_ms": 20.0 + i as f64, "e2e_ms": 80.0 + i as f64, "text_chunks": 3}
            })
        })
        .collect();
    let passed = passes.iter().filter(|p| **p).count() as u64;
    let n = passes.len() as u64;
    let s = bakeoff_stats::Proportion::wilson(passed, n).unwrap();
    serde_json::from_value(json!({
        "status": "complete",
        "summary": {
            "planned": n, "finished": n, "outcomes": {"ok": passed, "wrong": n - passed},
            "passed": passed, "scored": n,
            "score": {"successes": passed, "n": n, "estimate": s.estimate, "low": s.wilson_low, "high": s.wilson_high}
        },
        "items": items
    }))
    .unwrap()
}

pub(crate) fn lat(p50: f64, p99: f64) -> Value {
    json!({"count": 4, "clamped_high": 0, "mean_ms": p50, "min_ms": p50, "p50_ms": p50,
           "p90_ms": (p50 + p99) / 2.0, "p95_ms": p99, "p99_ms": p99, "max_ms": p99})
}

/// A closed-loop sweep over `levels`: tok/s and latencies grow with the level.
pub(crate) fn sweep(levels: &[u32]) -> LoadReport {
    let steps: Vec<Value> = levels
        .iter()
        .map(|c| {
            let f = f64::from(*c);
            json!({
                "label": format!("c={c}"), "concurrency": c, "sent": 4, "ok": 4, "errors": {},
                "wall_s": 2.0, "requests_per_second": 2.0, "output_tokens": 64,
                "output_tokens_per_second": 40.0 * f.sqrt(), "token_source": "usage",
                "latency": {
                    "ttft": lat(30.0 * f, 45.0 * f), "ttfot": lat(30.0 * f, 45.0 * f),
                    "tpot": lat(4.0 + f, 6.0 + f), "itl": lat(4.0 + f, 9.0 + f),
                    "e2e": lat(100.0 * f, 150.0 * f), "send_lateness": lat(0.1, 0.2),
                    "ttft_corrected": lat(30.0 * f, 45.0 * f), "e2e_corrected": lat(100.0 * f, 150.0 * f)
                },
                "histograms": {"ttft": [], "itl": [], "e2e": []}
            })
        })
        .collect();
    serde_json::from_value(json!({
        "mode": "closed", "plan": {}, "warmup_requests": 1, "steps": steps,
        "pinning": {"ignore_eos_sent": true, "min_tokens_sent": false, "finished": 12,
                    "exact_length": 12, "honoured": true, "detail": "12 of 12 at the requested length"}
    }))
    .unwrap()
}

const GEMMA: &str = "gemma-3-270m-llamacpp-q4km-8k";

/// Two eval runs of the gemma candidate (embedded default's alias), its `bench run` (served
/// id: a file path), a renamed bench run of the same configuration (`--slug my-sweep`, the
/// model spelled another way), and a vLLM bench run no eval candidate matches.
pub(crate) fn write_dir(dir: &Path) {
    let gemma =
        |slug: &str, model: &str| candidate(slug, model, EngineKind::LlamaCpp, "q4_k_m", 8192);
    let mut a = artifact(gemma(GEMMA, "gemma-3-270m-q4_k_m"), "2026-07-10T10:00:00Z");
    a.suites.insert(
        "smoke".into(),
        smoke(&[true, true, false, false, true, false]),
    );
    write_atomic(&dir.join(format!("{GEMMA}.bakeoff.json")), &a).unwrap();
    let mut a = artifact(gemma(GEMMA, "gemma-3-270m-q4_k_m"), "2026-07-10T11:00:00Z");
    a.suites.insert(
        "smoke".into(),
        smoke(&[true, false, true, true, true, false]),
    );
    write_atomic(
        &dir.join(format!("{GEMMA}.20260710T110000Z.bakeoff.json")),
        &a,
    )
    .unwrap();

    let mut b = artifact(
        gemma("my-sweep", "Gemma-3-270M-Q4_K_M.gguf"),
        "2026-07-10T11:30:00Z",
    );
    b.load.insert("throughput".into(), sweep(&[1, 2]));
    write_atomic(&dir.join("my-sweep.bakeoff.json"), &b).unwrap();
    let mut b = artifact(
        gemma(
            &format!("{GEMMA}-bench"),
            "/root/.cache/bakeoff/models/gemma-3-270m-q4_k_m.gguf",
        ),
        "2026-07-10T12:00:00Z",
    );
    b.load.insert("throughput".into(), sweep(&[1, 2, 4, 8]));
    write_atomic(&dir.join(format!("{GEMMA}-bench.bakeoff.json")), &b).unwrap();

    let mut q = artifact(
        candidate(
            "qwen3-8b-vllm-bf16-32k-bench",
            "Qwen/Qwen3-8B",
            EngineKind::Vllm,
            "bf16",
            32768,
        ),
        "2026-07-10T13:00:00Z",
    );
    q.load.insert("throughput".into(), sweep(&[1, 4, 16, 64]));
    write_atomic(&dir.join("qwen3-8b-vllm-bf16-32k-bench.bakeoff.json"), &q).unwrap();
}

/// One element (from `start` to its closing tag) of the page, one tag a line for reading.
fn part(html: &str, start: &str, end: &str) -> String {
    let i = html
        .find(start)
        .unwrap_or_else(|| panic!("{start} not in the page"));
    let j = i + html[i..].find(end).unwrap() + end.len();
    html[i..j].replace("><", ">\n<")
}

#[test]
fn a_bench_run_joins_its_candidate_row_and_one_without_keeps_its_own() {
    let tmp = tempfile::tempdir().unwrap();
    write_dir(tmp.path());
    let reg = registry::load(tmp.path()).unwrap();
    let t = comparison::build(&reg);
    let slugs: Vec<&str> = t.rows.iter().map(|r| r.slug.as_str()).collect();
    assert_eq!(slugs, [GEMMA, "qwen3-8b-vllm-bf16-32k-bench"], "{t:#?}");

    let g = &t.rows[0];
    assert_eq!(g.model, "gemma-3-270m-q4_k_m", "one name per model");
    assert_eq!(g.runs, 4);
    assert_eq!(g.bench_runs, 2);
    assert_eq!(g.evidence_text(), "4 counted (2 bench)");
    let b = g
        .bench
        .as_ref()
        .expect("bench figures on the candidate's row");
    assert_eq!(
        b.artifact,
        format!("{GEMMA}-bench.bakeoff.json"),
        "the newest"
    );
    assert_eq!(b.peak_text(), "113 tok/s @ c=8");
    assert_eq!(b.ttft_text(), "30.0 ms @ c=1");
    assert_eq!(b.tpot_text(), "5.00 ms @ c=1");
    assert!(g.cells.contains_key("smoke"));

    let q = &t.rows[1];
    assert_eq!(q.model, "qwen3-8b");
    assert!(q.cells.is_empty());
    let qb = q.bench.as_ref().expect("its own row, bench columns filled");
    assert_eq!(qb.peak_text(), "320 tok/s @ c=64");

    let table = terminal::comparison_at(&t, 400);
    for h in comparison::BENCH_HEADERS {
        assert!(table.contains(h), "{h}: {table}");
    }
    assert!(table.contains("113 tok/s @ c=8"), "{table}");
    assert!(!table.contains(&format!("{GEMMA}-bench ")), "{table}");
}

#[test]
fn html_has_per_level_tables_log2_charts_scores_and_the_comparison() {
    let tmp = tempfile::tempdir().unwrap();
    write_dir(tmp.path());
    let reg = registry::load(tmp.path()).unwrap();
    let page = html::report(&reg, "[DATE]");
    assert!(!page.contains("<script"));

    insta::assert_snapshot!(
        "summary_table",
        part(&page, "<table id=\"summary\"", "</table>")
    );
    insta::assert_snapshot!(
        "per_level_tables",
        part(&page, "<h3 id=\"levels\"", "<h2 id=\"compare\"")
    );
    insta::assert_snapshot!(
        "comparisons",
        part(&page, "<h2 id=\"compare\"", "<h2 id=\"negative\"")
    );
    insta::assert_snapshot!(
        "throughput_chart",
        part(
            &page,
            "aria-label=\"Concurrency vs output tok/s\"",
            "</svg>"
        )
    );
    insta::assert_snapshot!(
        "score_chart",
        part(&page, "aria-label=\"Per-suite scores", "</svg>")
    );

    // One per-level table per sweep: three bench runs.
    assert_eq!(page.matches("<table class=\"levels\">").count(), 3);
    // The throughput chart's ticks are the levels run, over every sweep.
    let chart = part(
        &page,
        "aria-label=\"Concurrency vs output tok/s\"",
        "</svg>",
    );
    let ticks: Vec<&str> = chart
        .lines()
        .filter(|l| l.starts_with("<text class=\"x-tick\""))
        .filter_map(|l| l.split('>').nth(1)?.split('<').next())
        .collect();
    assert_eq!(ticks, ["1", "2", "4", "8", "16", "64"]);
    // Every series is named in the TTFT chart's legend: p50, p90, p99 of each sweep, by what
    // differs ("bench throughput", shared by all nine, is said once under the legend).
    let ttft = part(
        &page,
        "aria-label=\"TTFT percentiles by concurrency\"",
        "</svg>",
    );
    assert_eq!(ttft.matches("class=\"legend-entry\"").count(), 9);
    for p in ["p50", "p90", "p99"] {
        assert!(ttft.contains(&format!("{GEMMA}-bench {p}<")), "{p}: {ttft}");
    }
    assert!(!ttft.contains("bench throughput p50<"), "{ttft}");
    assert!(ttft.contains(">bench throughput</text>"), "{ttft}");
}

#[test]
fn steps_csv_has_a_column_per_metric() {
    let tmp = tempfile::tempdir().unwrap();
    write_dir(tmp.path());
    let reg = registry::load(tmp.path()).unwrap();
    let out = tmp.path().join("csv");
    csv_export::export(&reg, &out).unwrap();
    let text = std::fs::read_to_string(out.join("steps.csv")).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "artifact,slug,retracted,suite,step,concurrency,output_tok_per_s,ttft_p50_ms,ttft_p90_ms,\
         ttft_p99_ms,requests,label,tpot_p50_ms,tpot_p99_ms,itl_p50_ms,itl_p99_ms,e2e_p50_ms,e2e_p99_ms"
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 2 + 4 + 4, "{text}");
    assert!(
        rows.iter()
            .all(|r| r.len() == csv_export::STEP_HEADER.len()),
        "no JSON cell: {text}"
    );
    let c8 = rows
        .iter()
        .find(|r| r[0] == format!("{GEMMA}-bench.bakeoff.json") && r[5] == "8")
        .unwrap();
    assert_eq!(c8[3], "bench throughput");
    assert_eq!(c8[11], "c=8");
    assert_eq!(c8[12], "12", "TPOT p50");
    assert_eq!(c8[15], "17", "ITL p99");
    assert_eq!(c8[16], "800", "E2E p50");
}

/// A contaminated suite and step (docs/metrics.md "Conditions") are marked in the terminal
/// summary, the sweep table and the HTML report, the evidence escaped (a process can call
/// itself anything).
#[test]
fn contaminated_suites_and_steps_are_marked_and_escaped() {
    let conditions = json!({
        "source": "/proc", "samples": 3, "wall_s": 2.0, "host_cores": 2,
        "excluded": {"bakeoff_pid": 1, "engine": "pid 2 listens on port 8080", "engine_pid": 2},
        "other_cpu_cores": 1.9,
        "gpu": {"source": "nvidia-smi", "unavailable": "nvidia-smi is not on PATH"},
        "findings": [{"code": "host-contended", "severity": "warning",
                      "message": "other processes used 1.90 of 2 cores; top: pids 4242 <script>x</script> 3.8s"}]
    });
    let mut suite = smoke(&[true, true]);
    suite.summary.conditions = Some(serde_json::from_value(conditions.clone()).unwrap());
    let mut a = artifact(
        candidate("busy", "m", EngineKind::LlamaCpp, "q4_k_m", 8192),
        "2026-07-10T10:00:00Z",
    );
    a.suites.insert("smoke".into(), suite);
    let term = terminal::run_summary(&a, "busy.bakeoff.json");
    assert!(term.contains("CONTAMINATED"), "{term}");

    let mut r = sweep(&[1, 2]);
    r.steps[1].conditions = Some(serde_json::from_value(conditions).unwrap());
    let table = bakeoff_report::bench::sweep(&r);
    // The step cell reads `c=2 CONTAMINATED` (the table may wrap it); c=1 is clean.
    assert_eq!(table.matches("CONTAMINATED").count(), 1, "{table}");

    let tmp = tempfile::tempdir().unwrap();
    write_atomic(&tmp.path().join("busy.bakeoff.json"), &a).unwrap();
    let reg = registry::load(tmp.path()).unwrap();
    let page = html::report(&reg, "[DATE]");
    assert!(page.contains("<strong>CONTAMINATED</strong>"), "{page}");
    assert!(!page.contains("<script>x"), "escaped");
    assert!(page.contains("&lt;script&gt;x"));
}

/// A `bench run --repeat 2` sweep over c = 1 and 4 as the runner writes it: rounds labelled
/// `c=N #R`, each level's summary with its interval, the capacity finding over the means, and
/// c=4 `unstable` (its two rounds, 12 and 4 tok/s, disagree).
fn repeated_sweep() -> LoadReport {
    // c=1's rounds agree within their errors; c=4's do not.
    let step = |c: u32, round: u32, tps: f64| {
        let f = f64::from(c);
        let se = if c == 1 { 2.0 } else { 0.2 };
        json!({
            "label": format!("c={c} #{round}"), "concurrency": c, "repeat": round,
            "sent": 4, "ok": 4, "errors": {}, "wall_s": 2.0, "requests_per_second": 2.0,
            "output_tokens": 64, "output_tokens_per_second": tps,
            "output_tokens_per_second_se": se, "token_source": "usage",
            "latency": {
                "ttft": lat(30.0 * f, 45.0 * f), "ttfot": lat(30.0 * f, 45.0 * f),
                "tpot": lat(4.0 + f, 6.0 + f), "itl": lat(4.0 + f, 9.0 + f),
                "e2e": lat(100.0 * f, 150.0 * f), "send_lateness": lat(0.1, 0.2),
                "ttft_corrected": lat(30.0 * f, 45.0 * f), "e2e_corrected": lat(100.0 * f, 150.0 * f)
            },
            "histograms": {"ttft": [], "itl": [], "e2e": []}
        })
    };
    let steps = vec![
        step(1, 1, 4.98),
        step(4, 1, 12.0),
        step(1, 2, 7.02),
        step(4, 2, 4.0),
    ];
    let mut r: LoadReport = serde_json::from_value(json!({
        "mode": "closed", "plan": {}, "warmup_requests": 1, "steps": steps,
        "pinning": {"ignore_eos_sent": true, "min_tokens_sent": false, "finished": 16,
                    "exact_length": 16, "honoured": true, "detail": "16 of 16 at the requested length"}
    }))
    .unwrap();
    r.levels = bakeoff_load::repeats::summarize(&r.steps);
    for l in r.levels.iter().filter(|l| l.unstable) {
        r.flags.push(bakeoff_load::repeats::unstable_flag(l));
    }
    r.capacity = Some(bakeoff_load::capacity::find(&r));
    r
}

/// The repeats of a level in the report. The summary's bench peak is the capacity
/// finding's figure (a mean of the rounds, never one round's 12 tok/s); the per-level table
/// names each round (`c=1 #2`); the HTML shows the capacity finding, the `unstable` flag and
/// each level's interval, which never reaches below zero; the charts draw each level's mean
/// with an error bar and its rounds faint, and the TTFT legend names only the percentiles.
#[test]
fn repeated_levels_show_means_intervals_rounds_and_the_capacity_finding() {
    let r = repeated_sweep();
    let cap = r.capacity.clone().unwrap();
    let peak = cap.peak_throughput.unwrap();
    assert!((peak - 8.0).abs() < 1e-9, "the mean of 12 and 4: {cap:?}");
    assert!(r.levels.iter().any(|l| l.unstable), "{:?}", r.levels);
    for l in &r.levels {
        let m = l.output_tokens_per_second.as_ref().unwrap();
        assert!(m.low > 0.0, "{m:?}");
    }

    let tmp = tempfile::tempdir().unwrap();
    let mut b = artifact(
        candidate(
            &format!("{GEMMA}-bench"),
            "gemma-3-270m-q4_k_m",
            EngineKind::LlamaCpp,
            "q4_k_m",
            8192,
        ),
        "2026-07-10T12:00:00Z",
    );
    b.load.insert("throughput".into(), r.clone());
    write_atomic(&tmp.path().join(format!("{GEMMA}-bench.bakeoff.json")), &b).unwrap();
    let reg = registry::load(tmp.path()).unwrap();

    let c = comparison::build(&reg);
    let bench = c.rows[0].bench.as_ref().unwrap();
    assert_eq!(
        bench.peak_text(),
        format!("{peak:.1} tok/s @ c=4, mean of 2 rounds")
    );
    assert!(
        bench.marks().contains(&"unstable c=4".to_string()),
        "{:?}",
        bench.marks()
    );
    let term = terminal::comparison_at(&c, 250);
    assert!(term.contains("8.0 tok/s @ c=4"), "{term}");
    assert!(!term.contains("12 tok/s"), "{term}");

    let page = html::report(&reg, "[DATE]");
    let summary = part(&page, "<table id=\"summary\"", "</table>");
    assert!(
        summary.contains("8.0 tok/s @ c=4, mean of 2 rounds"),
        "{summary}"
    );
    assert!(summary.contains("unstable c=4"), "{summary}");
    // The capacity finding, as the terminal prints it.
    assert!(
        page.contains(&format!(
            "<strong>capacity:</strong> {}",
            bakeoff_report::escape::for_html(&cap.statement)
        )),
        "{page}"
    );
    // Each level over its rounds, with the unstable flag.
    let repeats = part(&page, "<table class=\"repeats\"", "</table>");
    assert!(repeats.contains("<td>c=4</td>"), "{repeats}");
    assert!(repeats.contains("class=\"flag unstable\""), "{repeats}");
    assert!(!repeats.contains("[-"), "no negative bound: {repeats}");
    // Rounds named in the per-level table.
    let levels = part(&page, "<table class=\"levels\"", "</table>");
    for l in ["c=1 #1", "c=4 #1", "c=1 #2", "c=4 #2"] {
        assert!(levels.contains(&format!("<td>{l}</td>")), "{l}: {levels}");
    }
    // The charts: one mean per level with an error bar, the rounds faint.
    let tok = part(
        &page,
        "aria-label=\"Concurrency vs output tok/s\"",
        "</svg>",
    );
    assert_eq!(tok.matches("class=\"error-bar\"").count(), 2, "{tok}");
    assert_eq!(tok.matches("class=\"round\"").count(), 4, "{tok}");
    assert_eq!(tok.matches("class=\"value\"").count(), 2, "{tok}");
    let ttft = part(
        &page,
        "aria-label=\"TTFT percentiles by concurrency\"",
        "</svg>",
    );
    let legend: Vec<&str> = ttft
        .split("class=\"legend-entry\"")
        .skip(1)
        .filter_map(|t| t.split("</text>").next()?.rsplit('>').next())
        .collect();
    assert_eq!(legend, ["p50", "p90", "p99"], "{ttft}");
    assert!(
        ttft.contains(&format!(
            "{GEMMA}-bench bench throughput — mean of the rounds"
        )),
        "the caption names what the series share once: {ttft}"
    );

    // The terminal's level lines: bounds above zero, and two rounds called too few.
    let text = bakeoff_report::bench::sweep_at(&r, 200);
    assert!(text.contains("(n = 2 too few to tell)"), "{text}");
    assert!(!text.contains(" [-"), "{text}");
}

/// A capacity finding over steps that all ran on a contaminated host carries a
/// caveat (terminal and HTML), and the sweep table's legend explains only the columns shown.
#[test]
fn a_capacity_finding_over_contaminated_steps_carries_a_caveat() {
    let conditions = json!({
        "source": "/proc", "samples": 3, "wall_s": 2.0, "host_cores": 2,
        "excluded": {"bakeoff_pid": 1, "engine": "pid 2 listens on port 8080", "engine_pid": 2},
        "other_cpu_cores": 1.9,
        "gpu": {"source": "nvidia-smi", "unavailable": "nvidia-smi is not on PATH"},
        "findings": [{"code": "host-contended", "severity": "warning",
                      "message": "other processes used 1.90 of 2 cores"}]
    });
    let mut r = sweep(&[1, 2, 4]);
    for s in &mut r.steps {
        s.conditions = Some(serde_json::from_value(conditions.clone()).unwrap());
    }
    r.capacity = Some(bakeoff_load::capacity::find(&r));
    let text = bakeoff_report::bench::sweep_at(&r, 250);
    assert!(
        text.contains(
            "capacity caveat: every step it rests on (3 of 3) ran on a contaminated host"
        ),
        "{text}"
    );
    // 250 columns show "decode c/s" and explain it; where a width leaves the column out, its
    // legend goes too.
    assert!(text.contains("\"decode c/s\" = "), "{text}");
    let mut left_out = 0;
    for w in [80u16, 100, 120, 160, 250] {
        let t = bakeoff_report::bench::sweep_at(&r, w);
        let legend = t.contains("\"decode c/s\" = ");
        let column = t.lines().any(|l| {
            l.contains("decode") && !l.contains("\"decode c/s\" = ") && !l.starts_with("not shown")
        });
        assert_eq!(legend, column, "{w}: {t}");
        // A column left out is named under the table, never dropped unannounced.
        let named = bakeoff_testkit::screen::left_out_notes(&t, w)
            .iter()
            .any(|n| n.contains("decode c/s"));
        assert_eq!(named, !column, "{w}: {t}");
        left_out += usize::from(!column);
    }
    assert!(left_out > 0, "some width leaves the column out");

    let tmp = tempfile::tempdir().unwrap();
    let mut b = artifact(
        candidate("busy-bench", "m", EngineKind::LlamaCpp, "q4_k_m", 8192),
        "2026-07-10T12:00:00Z",
    );
    b.load.insert("throughput".into(), r);
    write_atomic(&tmp.path().join("busy-bench.bakeoff.json"), &b).unwrap();
    let page = html::report(&registry::load(tmp.path()).unwrap(), "[DATE]");
    assert!(page.contains("class=\"capacity-caveat\""), "{page}");
    let levels = part(&page, "<table class=\"levels\"", "</table>");
    assert_eq!(
        levels.matches("<strong>CONTAMINATED</strong>").count(),
        3,
        "{levels}"
    );
    let summary = part(&page, "<table id=\"summary\"", "</table>");
    assert!(summary.contains("CONTAMINATED 3/3 steps"), "{summary}");
}

/// A flag raised once per family shows once in the summary's flags cell, with its
/// count.
#[test]
fn a_flag_raised_per_family_shows_once() {
    let mut a = artifact(
        candidate("flags", "m", EngineKind::LlamaCpp, "q4_k_m", 8192),
        "2026-07-10T10:00:00Z",
    );
    let mut s = smoke(&[true, false]);
    for family in ["arith", "logic", "facts"] {
        s.summary.flags.push(
            serde_json::from_value(json!({"code": "instrument-failure", "severity": "invalid",
                "message": format!("{family}: below chance")}))
            .unwrap(),
        );
    }
    a.suites.insert("intelligence".into(), s);
    let text = terminal::run_summary_at(&a, "flags.bakeoff.json", 200);
    assert!(text.contains("instrument-failure ×3"), "{text}");
    assert!(
        !text.contains("instrument-failure, instrument-failure"),
        "{text}"
    );
    let tmp = tempfile::tempdir().unwrap();
    write_atomic(&tmp.path().join("flags.bakeoff.json"), &a).unwrap();
    let c = comparison::build(&registry::load(tmp.path()).unwrap());
    assert_eq!(
        c.rows[0].cells["intelligence"].flags,
        ["instrument-failure ×3"]
    );
}
