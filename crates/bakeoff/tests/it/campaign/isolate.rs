//! Isolation that designs itself, end to end against the real llama-server (docs/campaign.md
//! "Isolation that designs itself"): a flag the engine refuses is left out and named the cause
//! in two starts; an init wedge that only a GPU shows — docs/field-cases.md B1's, which the operator split
//! by hand ("131k" against "graph capture") — is imitated by a wrapper that hands the real
//! llama-server a FIFO as its model (it logs, opens the FIFO and goes silent, never
//! listening) above a window threshold, or unless graphs are off; the probes find the
//! threshold within one step, or name graph capture.

use std::path::Path;

use super::*;
use crate::util::{code, free_port, serial_tempdir, text};

/// The wrapper: `WEDGE_ABOVE=N` wedges a start whose `-c` is above N; `WEDGE_WITH_GRAPHS=1`
/// wedges a start unless `GGML_CUDA_DISABLE_GRAPHS` is set (the graphs lever of llama.cpp,
/// ggml/src/ggml-cuda/common.cuh at b11434). A wedge is the real llama-server given a FIFO
/// as its model: it blocks opening it and says nothing more.
fn wrapper(dir: &Path) -> std::path::PathBuf {
    let fifo = dir.join("wedge.fifo");
    let st = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(st.success());
    let bin = bakeoff_testkit::engine().llama_server;
    let script = dir.join("llama-wrapper.sh");
    std::fs::write(
        &script,
        format!(
            r#"#!/usr/bin/env bash
# Imitates the init wedge of docs/field-cases.md B1 around the real llama-server.
ctx=0; prev=""
for a in "$@"; do
  if [ "$prev" = "-c" ]; then ctx="$a"; fi
  prev="$a"
done
wedge=0
if [ -n "${{WEDGE_ABOVE:-}}" ] && [ "$ctx" -gt "$WEDGE_ABOVE" ]; then wedge=1; fi
if [ -n "${{WEDGE_WITH_GRAPHS:-}}" ] && [ -z "${{GGML_CUDA_DISABLE_GRAPHS:-}}" ]; then wedge=1; fi
if [ "$wedge" = 1 ]; then
  args=(); prev=""
  for a in "$@"; do
    if [ "$prev" = "-m" ]; then args+=("{fifo}"); else args+=("$a"); fi
    prev="$a"
  done
  exec "{bin}" "${{args[@]}}"
fi
exec "{bin}" "$@"
"#,
            fifo = fifo.display(),
            bin = bin.display()
        ),
    )
    .unwrap();
    let st = std::process::Command::new("chmod")
        .arg("+x")
        .arg(&script)
        .status()
        .unwrap();
    assert!(st.success());
    script
}

#[tokio::test]
async fn a_refused_flag_is_named_the_cause_in_two_starts() {
    let (_g, dir) = serial_tempdir().await;
    let campaign = format!(
        r#"{header}
[[candidate]]
name = "refused"
seat = "base"
set_args = {{ "--cache-type-k" = "q9_9" }}
[candidate.isolate]
max_starts = 3
"#,
        header = campaign_header("isolate-flag")
    );
    let f = Files::write(
        dir.path(),
        &process_seat("base", "bench", free_port()),
        &campaign,
    );
    let _cleanup = f.guard();
    // The plan says what would be tried after each class.
    let o = f.run(&["--dry-run"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let plan = text(&o);
    assert!(plan.contains("isolation: on (at most 3 starts"), "{plan}");
    assert!(
        plan.contains("init-wedge: graph capture at 1024: env GGML_CUDA_DISABLE_GRAPHS=1"),
        "{plan}"
    );

    let o = f.run(&["--allow", "contaminated"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let rec = f.record();
    let rows = rows_of(&rec, "refused");
    assert_eq!(rows.len(), 2, "{rec:#}");
    assert_eq!(rows[0]["outcome_label"], "failed:bad-argument", "{rec:#}");
    let probe = rows[1];
    assert_eq!(
        probe["variant"], "refused-probe-no-cache-type-k",
        "{probe:#}"
    );
    assert_eq!(probe["outcome_label"], "completed", "{probe:#}");
    assert_eq!(
        probe["probe"]["hypothesis"],
        "the flag `--cache-type-k` the engine refused"
    );
    assert!(
        !probe["launch"].as_str().unwrap().contains("q9_9"),
        "{probe:#}"
    );
    let iso = isolation(&rec, "refused");
    assert_eq!(iso["status"], "isolated", "{iso:#}");
    assert_eq!(iso["factor"], "the flag `--cache-type-k` is the cause");
    assert_eq!(iso["passed"], "refused-probe-no-cache-type-k");
    assert_eq!(iso["failed"], "refused");
    assert_eq!(
        iso["starts"], 1,
        "one probe after the failed start: two starts in all"
    );
    let md = std::fs::read_to_string(f.out.join("negative-results.md")).unwrap();
    assert!(
        md.contains("**Separating factor:** the flag `--cache-type-k` is the cause"),
        "{md}"
    );
    let o = util::bakeoff(&["campaign", "status", f.out_arg()]);
    assert!(
        text(&o).contains("isolated: the flag `--cache-type-k` is the cause"),
        "{}",
        text(&o)
    );
    // A second run starts nothing again.
    let o = f.run(&["--allow", "contaminated"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert_eq!(f.record()["variants"].as_array().unwrap().len(), 2);
    let starts = f
        .journal()
        .iter()
        .filter(|e| e["event"] == "seat-starting")
        .count();
    assert_eq!(starts, 2, "{:#?}", f.journal());
}

/// docs/field-cases.md B1: a wedge above a window threshold (here 2600 tokens of a 4096 window) is split
/// from graph capture and bisected to one step (256 tokens); a wedge that graphs cause is named
/// graph capture.
#[tokio::test]
async fn an_init_wedge_is_split_into_the_window_or_graph_capture() {
    let (_g, dir) = serial_tempdir().await;
    let script = wrapper(dir.path());
    let port = free_port();
    let fleet = process_seat("base", "bench", port).replace(
        &format!(
            "command = \"{}\"",
            bakeoff_testkit::engine().llama_server.display()
        ),
        &format!("command = \"{}\"", script.display()),
    );
    assert!(fleet.contains("llama-wrapper.sh"), "{fleet}");
    let campaign = format!(
        r#"{header}
[[candidate]]
name = "window"
seat = "base"
set_args = {{ "-c" = "4096" }}
env = {{ WEDGE_ABOVE = "2600" }}
[candidate.isolate]

[[candidate]]
name = "graphs"
seat = "base"
env = {{ WEDGE_WITH_GRAPHS = "1" }}
[candidate.isolate]
"#,
        header = campaign_header("isolate-wedge")
    );
    let f = Files::write(dir.path(), &fleet, &campaign);
    let _cleanup = f.guard();
    let o = f.run(&["--allow", "contaminated"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let rec = f.record();

    let window = isolation(&rec, "window");
    assert_eq!(window["class"], "init-wedge", "{window:#}");
    assert_eq!(window["status"], "isolated", "{window:#}");
    let factor = window["factor"].as_str().unwrap();
    let nums: Vec<u64> = factor
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|s| s.parse().ok())
        .collect();
    assert!(factor.starts_with("the window: "), "{factor}");
    assert!(
        nums[0] <= 2600 && nums[1] > 2600 && nums[1] - nums[0] <= 256,
        "{factor}"
    );
    assert!(window["starts"].as_u64().unwrap() <= 6, "{window:#}");
    // Each probe carries its hypothesis; graphs off wedged too.
    let probes: Vec<&serde_json::Value> = rows_of(&rec, "window")
        .into_iter()
        .filter(|r| !r["probe"].is_null())
        .collect();
    assert_eq!(probes[0]["probe"]["hypothesis"], "graph capture at 4096");
    assert_eq!(
        probes[0]["outcome_label"], "failed:init-wedge",
        "{:#}",
        probes[0]
    );
    assert_eq!(probes[1]["probe"]["probe"], "-c 2048");
    assert_eq!(probes[1]["outcome_label"], "completed", "{:#}", probes[1]);

    let graphs = isolation(&rec, "graphs");
    assert_eq!(graphs["status"], "isolated", "{graphs:#}");
    assert_eq!(graphs["factor"], "graph capture", "{graphs:#}");
    assert_eq!(
        graphs["passed"],
        "graphs-probe-env-ggml-cuda-disable-graphs-1"
    );
    assert_eq!(graphs["starts"], 2, "{graphs:#}");

    let md = std::fs::read_to_string(f.out.join("negative-results.md")).unwrap();
    assert!(md.contains("**Separating factor:** the window: "), "{md}");
    assert!(md.contains("**Separating factor:** graph capture"), "{md}");
    assert!(md.contains("Isolation that designed itself"), "{md}");
}
