//! Every command that prints a table, through the binary at `COLUMNS` 60, 80 and 120 (its
//! output piped, as a script or CI has it, with the width the operator set): `eval run` and
//! `bench run` against a dead port (their failure, its fix and a long `--out` path), `report`
//! over what they wrote plus a file it refuses, `campaign status` of a record with long notes,
//! `seat status`, `plan` and `audit` (checkpoint, seat, and a cache refusal naming a long
//! path). No line of stdout or stderr is wider than `COLUMNS` in characters (a word longer
//! than the room — a long path — stays whole on its own line) and every column a table leaves
//! out is named under it. The renderings themselves are tested in bakeoff-report
//! (`tests/it/screen.rs`); here the wiring: each command prints through the fitting.
//!
//! Without `COLUMNS` on a pipe nothing is wrapped: each record stays one line.

use std::path::Path;
use std::process::Output;

use bakeoff_testkit::screen::{
    WIDTHS, every_column_shown_or_named, fits_every_line, flat, left_out_notes,
};

use crate::plan_audit::{fixture, plan_args};
use crate::util::{Bounded, bakeoff_cmd, code, dead_port_url, text};

fn at(width: u16, args: &[&str]) -> Output {
    bakeoff_cmd()
        .env("COLUMNS", width.to_string())
        .args(args)
        .output_bounded()
        .unwrap()
}

/// Both streams of `o` fit `width`; stdout, for more checks.
fn fits(o: &Output, width: u16, what: &str) -> String {
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    fits_every_line(&out, width, &format!("{what} (stdout)"));
    fits_every_line(&err, width, &format!("{what} (stderr)"));
    out
}

/// A directory path long enough to wrap any line that names it, every part of it shorter
/// than 50 characters.
fn long_dir(root: &Path) -> std::path::PathBuf {
    root.join("results-of-the-december-bakeoff")
        .join("qwen2.5-coder-32b-instruct-awq")
}

#[test]
fn eval_run_bench_run_and_report_fit_every_width() {
    let dir = bakeoff_testkit::tempdir();
    let out = long_dir(dir.path());
    let out_s = out.to_str().unwrap();
    for w in WIDTHS {
        let url = dead_port_url();
        let o = at(
            w,
            &[
                "eval",
                "run",
                "--endpoint",
                &url,
                "--out",
                out_s,
                "--suite",
                "smoke",
            ],
        );
        assert_eq!(code(&o), 1, "{}", text(&o));
        let s = fits(&o, w, "eval run");
        // The fix and the artifact's path, whole.
        assert!(s.contains("fix: "), "{s}");
        let path = s
            .split_whitespace()
            .find(|t| t.starts_with(out_s))
            .unwrap_or_else(|| panic!("no artifact path at {w}: {s}"));
        assert!(Path::new(path).is_file(), "{path}: {s}");

        let bench_out = out.join(format!("bench-{w}"));
        let o = at(
            w,
            &[
                "bench",
                "run",
                "--endpoint",
                &url,
                "--concurrency",
                "1",
                "--requests",
                "1",
                "--no-calibrate",
                "--out",
                bench_out.to_str().unwrap(),
            ],
        );
        assert_eq!(code(&o), 1, "{}", text(&o));
        fits(&o, w, "bench run");
    }
    // A file of a newer bakeoff: refused, with a note naming it under the table.
    std::fs::write(
        out.join("qwen2.5-coder-32b-awq-vllm-c32768.bakeoff.json"),
        r#"{"schema_version": 999}"#,
    )
    .unwrap();
    let mut named = 0;
    for w in WIDTHS {
        let o = at(w, &["report", out_s, "--no-files"]);
        let s = fits(&o, w, "report");
        assert!(
            flat(&s).contains(
                "refused qwen2.5-coder-32b-awq-vllm-c32768.bakeoff.json: schema_version 999"
            ),
            "{w}: {s}"
        );
        // (A failure records no quantization: that column is all `-`, left out unnamed.)
        every_column_shown_or_named(&s, w, &["engine", "window (tokens)"]);
        named += left_out_notes(&s, w).len();
    }
    assert!(named > 0, "some width leaves a column out");
}

#[test]
fn plan_seat_status_and_audit_fit_every_width() {
    let fleet = fixture("bakeoff/tests/fixtures/fleet-field-case-f8.toml");
    let fleet_s = fleet.to_str().unwrap();
    let bf16 = fixture("bakeoff-model/tests/fixtures/checkpoints/gemma-3-27b-it-bf16");
    let dir = bakeoff_testkit::tempdir();
    let missing = long_dir(dir.path()).join("hub");
    for w in WIDTHS {
        let o = at(w, &plan_args(&fleet, &[]));
        assert_eq!(code(&o), 0, "{}", text(&o));
        fits(&o, w, "plan");

        let o = at(w, &["seat", "status", "--fleet", fleet_s]);
        assert_eq!(code(&o), 0, "{}", text(&o));
        let s = fits(&o, w, "seat status");
        assert!(s.contains("char-rp"), "{s}");

        let o = at(
            w,
            &[
                "audit",
                "checkpoint",
                bf16.to_str().unwrap(),
                "--quantization",
                "compressed-tensors",
            ],
        );
        assert_eq!(code(&o), 1, "{}", text(&o));
        let s = fits(&o, w, "audit checkpoint");
        assert!(
            flat(&s).contains(
                "CompressedTensorsConfig.__init__() missing 3 required positional arguments"
            ),
            "{s}"
        );

        let o = at(w, &["audit", "seat", "--fleet", fleet_s, "char-rp"]);
        fits(&o, w, "audit seat");

        // A refusal naming a long path, on stderr.
        let o = at(w, &["audit", "cache", missing.to_str().unwrap()]);
        assert_eq!(code(&o), 2, "{}", text(&o));
        fits(&o, w, "audit cache");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(missing.to_str().unwrap()), "{err}");
    }
}

/// On a pipe with no `COLUMNS` a record stays one line, however long: what a script reads.
#[test]
fn a_pipe_without_columns_keeps_one_line_per_record() {
    let dir = bakeoff_testkit::tempdir();
    let missing = long_dir(dir.path()).join("hub");
    let o = bakeoff_cmd()
        .args(["audit", "cache", missing.to_str().unwrap()])
        .output_bounded()
        .unwrap();
    assert_eq!(code(&o), 2, "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.lines().next().unwrap().chars().count() > 60, "{err}");
}

/// `campaign status` of a record whose notes, failure messages and conditions are long.
#[test]
fn campaign_status_fits_every_width() {
    let dir = bakeoff_testkit::tempdir();
    let finding = "other processes used 1.90 of 2 cores while the suite ran (top: cc1plus 1.2, rustc 0.5); its figures are not the engine's alone";
    let variant = |i: u32, ctx: &str, kind: &str, message: &str| {
        serde_json::json!({
            "candidate": "qwen-coder",
            "variant": format!("qwen2.5-coder-32b-instruct-awq-c-{ctx}-flash-attn-on"),
            "index": i,
            "axes": [{"flag": "-c", "value": ctx}],
            "delta": [format!("-c {ctx} (was 4096)")],
            "launch": format!("llama-server -m /srv/models/qwen2.5-coder-32b-instruct-awq.gguf -c {ctx} --flash-attn on"),
            "outcome": if kind == "failed" {
                serde_json::json!({"kind": kind, "class": "cuda-oom", "message": message})
            } else {
                serde_json::json!({"kind": kind, "message": message})
            },
            "outcome_label": kind,
            "timings": {"queued_ms": 0, "start_ms": 301000, "production_down_ms": 305000, "total_ms": 310000},
            "attempts": 1,
            "notes": ["the production seat gen was displaced for 5 m 05 s and restored; its first probe answered in 840 ms"],
            "conditions": {"clean": false, "sampled": ["seat load", "smoke"],
                           "findings": [{"during": "smoke", "code": "host-contended", "message": finding}]}
        })
    };
    let rec = serde_json::json!({
        "schema_version": 1,
        "name": "december-bakeoff",
        "file": "/srv/bakeoff/campaigns/december-bakeoff-of-the-coder-models.toml",
        "fleet": "/srv/bakeoff/fleets/ana-ml2-production-and-bench-seats.toml",
        "suites": ["smoke"],
        "started_at": "2026-12-01T10:00:00Z",
        "updated_at": "2026-12-01T11:00:00Z",
        "finished": true,
        "candidates": [{
            "name": "qwen-coder", "seat": "bench", "engine": "llama.cpp",
            "base": "llama-server -m /srv/models/qwen2.5-coder-32b-instruct-awq.gguf -c 4096",
            "axes": [{"flag": "-c", "values": ["8192", "32768"]}],
            "ladder_mode": "first-success",
            "displaces": ["gen"]
        }],
        "variants": [
            variant(1, "8192", "completed", ""),
            variant(2, "32768", "failed", "CUDA error: out of memory while allocating the KV cache of 32768 cells (4.00 GiB) on device 0 after the weights took 17.9 GiB of 23.6 GiB"),
        ],
        "notes": ["resumed after SIGTERM at 2026-12-01T10:14:00Z: the interrupted variant qwen2.5-coder-32b-instruct-awq-c-32768-flash-attn-on ran again from its start"]
    });
    std::fs::write(
        dir.path().join("campaign.json"),
        serde_json::to_string_pretty(&rec).unwrap(),
    )
    .unwrap();
    let d = dir.path().to_str().unwrap();
    for w in WIDTHS {
        let o = at(w, &["campaign", "status", d]);
        assert_eq!(code(&o), 0, "{}", text(&o));
        let s = fits(&o, w, "campaign status");
        for note in rec["notes"].as_array().unwrap() {
            assert!(flat(&s).contains(note.as_str().unwrap()), "{w}: {s}");
        }
        every_column_shown_or_named(&s, w, &["start → ready", "production down"]);
    }
}
