//! Every text `report`, `eval run`, `bench run` and `campaign status` print, as a terminal of
//! 60, 80 and 120 columns gets it — the renderer's text laid out for the width, then fitted by
//! `table::fit_text` (what the binary prints through when `COLUMNS` is set or stdout is a
//! terminal) — over artifacts that carry long notes, flags, findings and paths. No line is
//! wider than the width, counting characters and not bytes (a single word longer than the room
//! stays whole on a line of its own: the only exception), and nothing is lost: every column a
//! table leaves out is named under it, every note is there word for word.

use std::path::Path;

use bakeoff_artifact::campaign::CampaignRecord;
use bakeoff_artifact::{Artifact, EngineKind, write_atomic};
use bakeoff_report::table::fit_text;
use bakeoff_report::{bench_summary, campaign, registry, terminal};
use bakeoff_testkit::screen::{
    WIDTHS, every_column_shown_or_named, fits_every_line, flat, left_out_notes,
};
use serde_json::json;

/// A conditions finding long enough to wrap at every width.
const FINDING: &str = "other processes used 1.90 of 2 cores while the step ran (top: cc1plus 1.2, rustc 0.5, ld.lld 0.2); the figures of this step are not a measurement of the engine alone";

fn conditions(message: &str) -> serde_json::Value {
    json!({
        "source": "/proc", "samples": 3, "wall_s": 2.0, "host_cores": 2,
        "excluded": {"bakeoff_pid": 1, "engine": "pid 2 listens on port 8080", "engine_pid": 2},
        "other_cpu_cores": 1.9,
        "gpu": {"source": "nvidia-smi", "unavailable": "nvidia-smi is not on PATH"},
        "findings": [{"code": "host-contended", "severity": "warning", "message": message}]
    })
}

/// An `eval run` artifact with a refused suite (its message quoting a long path), an
/// instrument flag, a contaminated suite and a failure with its fix: every free-text line under
/// the suite table.
fn eval_artifact() -> Artifact {
    let c = crate::bench_report::candidate(
        "qwen2.5-coder-32b-instruct-awq-vllm-0.11.0-tp2-c-32768",
        "Qwen/Qwen2.5-Coder-32B-Instruct-AWQ",
        EngineKind::Vllm,
        "awq",
        32768,
    );
    let mut a = crate::bench_report::artifact(c, "2026-07-10T12:00:00Z");
    let mut smoke = crate::bench_report::smoke(&[true, true, false, true, true]);
    smoke.summary.conditions = Some(serde_json::from_value(conditions(FINDING)).unwrap());
    a.suites.insert("smoke".into(), smoke);
    let refused: bakeoff_artifact::SuiteResult = serde_json::from_value(json!({
        "status": "failed",
        "summary": {
            "planned": 0, "finished": 0, "outcomes": {}, "passed": 0, "scored": 0,
            "flags": [{"code": "context-refused", "severity": "invalid",
                       "message": "the context suite needs the window and the tokenizer: give --tokenizer /srv/models/Qwen2.5-Coder-32B-Instruct-AWQ/tokenizer.json or --max-model-len 32768 and run again"}]
        },
        "items": []
    }))
    .unwrap();
    a.suites.insert("context".into(), refused);
    a.instrument_flags = serde_json::from_value(json!([
        {"code": "template-unverified", "severity": "warning",
         "message": "the server does not expose its chat template: the scores assume the checkpoint's own template at /srv/models/Qwen2.5-Coder-32B-Instruct-AWQ/tokenizer_config.json, which --chat-template-file would pin"}
    ]))
    .unwrap();
    a.incomplete_reason = Some("the context suite was refused before it sent a request; the other suites ran to their end and are counted".into());
    a.status = bakeoff_artifact::RunStatus::Incomplete;
    a
}

#[test]
fn eval_run_summary_fits_at_every_width() {
    let a = eval_artifact();
    let path = "/srv/bakeoff/results/2026-07-10/qwen2.5-coder-32b-awq.bakeoff.json";
    for w in WIDTHS {
        let text = fit_text(
            &format!(
                "{}\n{}\n",
                terminal::run_summary_at(&a, path, w),
                bench_summary::conditions_line(&a)
            ),
            w,
        );
        fits_every_line(&text, w, "eval run");
        every_column_shown_or_named(&text, w, &["outcomes"]);
        for source in [
            &a.instrument_flags[0].message,
            &a.suites["context"].summary.flags[0].message,
            a.incomplete_reason.as_ref().unwrap(),
        ] {
            assert!(flat(&text).contains(&flat(source)), "{w}: {text}");
        }
        assert!(flat(&text).contains(FINDING), "{w}: {text}");
        // The path is a word: never cut.
        assert!(text.contains(path), "{w}: {text}");
    }
}

#[test]
fn bench_run_fits_at_every_width() {
    let mut r = crate::bench_report::sweep(&[1, 2, 4, 8]);
    for s in &mut r.steps {
        s.conditions = Some(serde_json::from_value(conditions(FINDING)).unwrap());
    }
    r.capacity = Some(bakeoff_load::capacity::find(&r));
    let c = crate::bench_report::candidate(
        "qwen2.5-coder-32b-instruct-awq-vllm-0.11.0-tp2-c-32768",
        "Qwen/Qwen2.5-Coder-32B-Instruct-AWQ",
        EngineKind::Vllm,
        "awq",
        32768,
    );
    let mut a = crate::bench_report::artifact(c, "2026-07-10T12:00:00Z");
    a.load.insert("throughput".into(), r);
    let path = Path::new("/srv/bakeoff/results/2026-07-10/qwen2.5-coder-32b.bakeoff.json");
    let secondary = [
        "TTFOT p50 (ms)",
        "ITL p99 (ms)",
        "late p99 (ms)",
        "decode c/s",
    ];
    let mut left_out = 0;
    for w in WIDTHS {
        let text = fit_text(&bench_summary::bench_run_at(&a, path, w), w);
        fits_every_line(&text, w, "bench run");
        every_column_shown_or_named(&text, w, &secondary);
        left_out += left_out_notes(&text, w).len();
        assert!(flat(&text).contains(FINDING), "{w}: {text}");
        assert!(text.contains(&path.display().to_string()), "{w}: {text}");
    }
    assert!(left_out > 0, "some width leaves a column out");
}

/// The campaign fixture with long notes and a contaminated variant.
fn long_campaign() -> CampaignRecord {
    let mut rec = crate::campaign::record();
    rec.notes.push("resumed after SIGTERM at 2026-07-10T10:14:00Z: the interrupted variant qwen-small-c-8192-flash-attn-off runs again from its start".into());
    if let Some(v) = rec.variants.first_mut() {
        v.conditions = Some(
            serde_json::from_value(json!({
                "clean": false, "sampled": ["seat load", "smoke"],
                "findings": [{"during": "smoke", "code": "host-contended", "message": FINDING}]
            }))
            .unwrap(),
        );
        v.notes.push("the production seat gen was displaced for 5 m 01 s and restored; its first probe answered in 840 ms".into());
    }
    rec
}

#[test]
fn campaign_status_fits_at_every_width() {
    let rec = long_campaign();
    for w in WIDTHS {
        let text = fit_text(
            &format!(
                "{}{}\n",
                campaign::ladder_table_at(&rec, Some(w)),
                campaign::conditions_line(&rec)
            ),
            w,
        );
        fits_every_line(&text, w, "campaign status");
        every_column_shown_or_named(&text, w, &["start → ready", "production down"]);
        for n in &rec.notes {
            assert!(flat(&text).contains(&flat(n)), "{w}: {n}\n{text}");
        }
    }
}

/// The issue's own case: `report` over a directory whose comparison leaves out engine, quant
/// and window at 80 columns; its notes (a refused file with a long name, the campaign's notes)
/// and the ladder under it.
#[test]
fn the_report_fits_at_every_width() {
    let dir = tempfile::tempdir().unwrap();
    let rec = long_campaign();
    crate::campaign::write_dir(dir.path(), &rec);
    let mut bench = crate::bench_report::artifact(
        crate::bench_report::candidate(
            "qwen2.5-coder-32b-awq-bench",
            "Qwen/Qwen2.5-Coder-32B-Instruct-AWQ",
            EngineKind::Vllm,
            "awq",
            32768,
        ),
        "2026-07-10T12:00:00Z",
    );
    bench
        .load
        .insert("throughput".into(), crate::bench_report::sweep(&[1, 2]));
    write_atomic(
        &dir.path().join("qwen2.5-coder-32b-awq-bench.bakeoff.json"),
        &bench,
    )
    .unwrap();
    // A file of a newer bakeoff: refused, with a note naming it.
    std::fs::write(
        dir.path()
            .join("qwen2.5-coder-32b-awq-vllm-c32768.bakeoff.json"),
        r#"{"schema_version": 999}"#,
    )
    .unwrap();
    let reg = registry::load(dir.path()).unwrap();
    assert!(!reg.notes.is_empty());
    // (No artifact records its hardware: that column is all `-` and left out unnamed.)
    let columns = ["engine", "quant", "window (tokens)"];
    let mut named = 0;
    for w in WIDTHS {
        let text = fit_text(&terminal::report_at(&reg, w), w);
        fits_every_line(&text, w, "report");
        every_column_shown_or_named(&text, w, &columns);
        named += left_out_notes(&text, w).len();
        for n in &reg.notes {
            assert!(flat(&text).contains(&flat(n)), "{w}: {n}\n{text}");
        }
    }
    assert!(named > 0, "some width leaves a column out");
}

/// The issue's example line: 97 characters at 80 columns, now two, the second indented.
#[test]
fn the_left_out_note_fits() {
    let cols: Vec<String> = ["engine", "quant", "window (tokens)"]
        .map(String::from)
        .to_vec();
    let note = bakeoff_term::left_out_line(&cols, 80, "the JSON").unwrap();
    fits_every_line(&note, 80, "note");
    assert_eq!(note.lines().count(), 2, "{note}");
    assert_eq!(
        left_out_notes(&note, 80),
        vec![
            "engine, quant, window (tokens) (a wider terminal or the JSON shows them)".to_string()
        ]
    );
}
