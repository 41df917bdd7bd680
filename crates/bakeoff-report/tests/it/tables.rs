//! Every terminal table at widths 60 (the compact layout), 100 and 200, and at the width a
//! terminal that reports 0 columns gets (120): numbers are never split across lines and names
//! are shortened in the middle, never broken.

use bakeoff_artifact::{Artifact, EngineKind, LoadReport, Score, SuiteResult, SuiteStatus};
use bakeoff_report::table::{self, Grid, Kind};
use bakeoff_report::{bench, campaign, registry, terminal};
use serde_json::json;

use crate::campaign::{artifact, record, write_dir};

/// 60, 100, 200 and what a terminal reporting 0 columns gets (no `COLUMNS`).
fn widths() -> [(u16, &'static str); 4] {
    [
        (60, "60"),
        (100, "100"),
        (200, "200"),
        (table::width_from(None, Some(0)), "reported_0"),
    ]
}

/// No line of a table is wider than the width it was laid out for (tables only: the headline
/// and notes above and below are free text).
fn fits(text: &str, width: u16) {
    for l in text.lines() {
        let boxed = l.starts_with(['┌', '│', '╞', '├', '└']);
        if boxed {
            assert!(
                l.chars().count() <= usize::from(width),
                "wider than {width}: {l}\n{text}"
            );
        }
    }
}

#[test]
fn a_reported_width_of_zero_is_120() {
    assert_eq!(table::width_from(None, Some(0)), 120);
    assert_eq!(table::width_from(Some("0"), Some(0)), 120);
    assert_eq!(table::width_from(Some("garbage"), None), 120);
    assert_eq!(table::width_from(Some("40"), Some(0)), 40);
}

#[test]
fn ladder_tables() {
    let rec = record();
    for (w, name) in widths() {
        let text = campaign::ladder_table_at(&rec, Some(w));
        fits(&text, w);
        // The long variant slugs are shortened in the middle, never broken across lines.
        assert!(!text.contains("-gp\n"), "{text}");
        insta::assert_snapshot!(format!("ladder_{name}"), text);
    }
}

#[test]
fn the_report() {
    let dir = tempfile::tempdir().unwrap();
    write_dir(dir.path(), &record());
    let reg = registry::load(dir.path()).unwrap();
    for (w, name) in widths() {
        let text = terminal::report_at(&reg, w);
        fits(&text, w);
        let text = text.replace(&dir.path().display().to_string(), "[dir]");
        insta::assert_snapshot!(format!("report_{name}"), text);
    }
}

fn summary_artifact() -> Artifact {
    let mut a = artifact(
        "qwen3-0.6b-q4-k-m-llama-cpp-b6000-c-4096-flash-attn-on-a-very-long-slug",
        "Qwen/Qwen3-0.6B-GGUF",
        EngineKind::LlamaCpp,
        "b6000",
        None,
    );
    let suite = |successes: u64, n: u64, flags: serde_json::Value| -> SuiteResult {
        let p = successes as f64 / n as f64;
        let score = Score {
            successes,
            n,
            estimate: p,
            low: p - 0.02,
            high: p + 0.02,
        };
        serde_json::from_value(json!({
            "status": "complete",
            "summary": {
                "planned": n, "finished": n, "passed": successes, "scored": n,
                "score": score,
                "outcomes": {"pass": successes, "fail": n - successes},
                "flags": flags,
            },
            "items": [],
        }))
        .unwrap()
    };
    a.suites.insert("smoke".into(), suite(5, 5, json!([])));
    let mut s = suite(1234, 2000, json!([]));
    s.status = SuiteStatus::Incomplete;
    a.suites.insert("intelligence".into(), s);
    a
}

#[test]
fn run_summaries() {
    let a = summary_artifact();
    for (w, name) in widths() {
        let text = terminal::run_summary_at(&a, "results/run.bakeoff.json", w);
        fits(&text, w);
        assert!(text.contains("1234/2000"), "{text}");
        insta::assert_snapshot!(format!("run_summary_{name}"), text);
    }
}

fn lat(p50: f64, p99: f64) -> serde_json::Value {
    json!({"count": 10, "clamped_high": 0, "p50_ms": p50, "p99_ms": p99})
}

fn sweep_report() -> LoadReport {
    let step = |label: &str, c: u32, ttft: f64| {
        json!({
            "label": label, "concurrency": c, "requested_rate": 2.5, "achieved_rate": 2.4987,
            "sent": 120, "ok": 118, "errors": {"timeout": 2}, "wall_s": 48.0,
            "output_tokens": 30000, "output_tokens_per_second": 12345.678,
            "token_source": "usage",
            "latency": {
                "ttft": lat(ttft, ttft * 3.1), "ttfot": lat(ttft + 1.0, ttft * 3.0),
                "tpot": lat(4.1234, 9.87), "itl": lat(4.0, 123456.789),
                "e2e": lat(1234.5, 98765.4), "send_lateness": lat(0.0123, 0.456),
                "ttft_corrected": lat(ttft, 54321.0), "e2e_corrected": lat(1300.0, 99999.0),
            },
            "histograms": {"ttft": [], "itl": [], "e2e": []},
            "flags": [],
        })
    };
    serde_json::from_value(json!({
        "mode": "open", "plan": {}, "warmup_requests": 2,
        "steps": [step("rate-2.5-poisson", 4, 29.91), step("rate-10-poisson-very-long-step-label", 16, 1834.5)],
        "pinning": {"ignore_eos_sent": true, "min_tokens_sent": true, "finished": 236,
                    "exact_length": 236, "detail": "every stream ran to its pinned length"}
    }))
    .unwrap()
}

#[test]
fn bench_sweeps() {
    let r = sweep_report();
    for (w, name) in widths() {
        let text = bench::sweep_at(&r, w);
        fits(&text, w);
        for n in ["12345.7", "1834.5", "1234.5", "123456.79", "54321.0"] {
            if w >= 200 || n != "123456.79" && n != "54321.0" {
                assert!(text.contains(n), "{n} split or missing:\n{text}");
            }
        }
        insta::assert_snapshot!(format!("bench_sweep_{name}"), text);
    }
}

#[test]
fn a_grid_too_narrow_for_its_columns_is_a_list() {
    let mut g = Grid::new();
    g.column("candidate", Kind::Name(60))
        .column("score (Wilson 95%)", Kind::Number)
        .column("verdict", Kind::Text);
    g.row(vec![
        "a-candidate-whose-slug-is-long".into(),
        "12345/20000 = 62% [61–63%]".into(),
        "recommended for the tested configuration".into(),
    ]);
    let text = table::render(&g, 30);
    assert!(text.contains("12345/20000"), "{text}");
    insta::assert_snapshot!(text);
}
