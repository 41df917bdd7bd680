//! Bench runs in the report (issue 14): a `bench run` artifact joins its candidate's row (by
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

fn candidate(slug: &str, model: &str, engine: EngineKind, quant: &str, window: u64) -> Candidate {
    let mut c = Candidate::new(slug, model, engine);
    c.engine_version = Some("b11434".into());
    c.quantization = Some(quant.into());
    c.context_window = ContextWindow {
        tokens: Some(window),
        source: WindowSource::LlamacppSlots,
    };
    c
}

fn artifact(c: Candidate, created: &str) -> Artifact {
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
fn smoke(passes: &[bool]) -> SuiteResult {
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

fn lat(p50: f64, p99: f64) -> Value {
    json!({"count": 4, "clamped_high": 0, "mean_ms": p50, "min_ms": p50, "p50_ms": p50,
           "p90_ms": (p50 + p99) / 2.0, "p95_ms": p99, "p99_ms": p99, "max_ms": p99})
}

/// A closed-loop sweep over `levels`: tok/s and latencies grow with the level.
fn sweep(levels: &[u32]) -> LoadReport {
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
fn write_dir(dir: &Path) {
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
    // Every series is named in the TTFT chart's legend: p50, p90, p99 of each sweep.
    let ttft = part(
        &page,
        "aria-label=\"TTFT percentiles by concurrency\"",
        "</svg>",
    );
    assert_eq!(ttft.matches("class=\"legend-entry\"").count(), 9);
    for p in ["p50", "p90", "p99"] {
        assert!(
            ttft.contains(&format!("{GEMMA}-bench bench throughput {p}<")),
            "{p}"
        );
    }
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
