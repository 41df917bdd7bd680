//! (docs/reports.md) end to end through the real binary: artifacts from the smoke suite on the real
//! llama-server with the real test model, a real failure (nothing listening at the port), then
//! `report`, `verdict` and `retract` over that directory. Snapshots redact what changes from
//! run to run (dates, ports, temporary paths, scores, table widths).

use std::path::Path;
use std::time::Duration;

use bakeoff_testkit::{real_llama, tempdir};

use crate::util::{
    self, SMALL_SWEEP, bakeoff, code, eval_run, free_port, journal_started, serial_tempdir,
    spawn_eval_run, stdout, text, wait_output,
};

fn filters(tmp: &Path) -> Vec<(String, String)> {
    vec![
        (regex_escape(&tmp.display().to_string()), "[TMP]".into()),
        (
            r"\d{4}-\d{2}-\d{2}( \d{2}:\d{2} UTC)?".into(),
            "[DATE]".into(),
        ),
        (r"127\.0\.0\.1:\d+".into(), "127.0.0.1:[PORT]".into()),
        (
            r"\d+/\d+ = \d+% \\?\[\d+–\d+%\\?\]".into(),
            "[SCORE]".into(),
        ),
        (r"(ok|wrong|truncated|empty) \d+".into(), "$1 [N]".into()),
        (r"\d+ ms".into(), "[N] ms".into()),
        (
            r"after \d+ attempt\(s\)".into(),
            "after [N] attempt(s)".into(),
        ),
        (r"×\d+".into(), "×[N]".into()),
        // What else this shared machine was doing (docs/metrics.md "Conditions") is not the
        // report's subject here; tests/it/conditions.rs covers it.
        (
            r" \(flags: (host-contended|page-cache-dropped)\)".into(),
            String::new(),
        ),
        (
            r"( ⚑ |, )(host-contended|page-cache-dropped)\b".into(),
            String::new(),
        ),
    ]
}

/// For terminal tables: borders and padding follow the widest cell, so collapse them too.
fn table_filters(tmp: &Path) -> Vec<(String, String)> {
    let mut f = filters(tmp);
    f.push((r"[─━┄┈╌]+".into(), "─".into()));
    f.push((r"═+".into(), "═".into()));
    f.push((r" {2,}".into(), " ".into()));
    f
}

fn snapshot(name: &str, value: &str, filters: Vec<(String, String)>) {
    let fs: Vec<(&str, &str)> = filters
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    insta::with_settings!({filters => fs}, {
        insta::assert_snapshot!(name, value);
    });
}

fn regex_escape(s: &str) -> String {
    let mut o = String::new();
    for c in s.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            o.push('\\');
        }
        o.push(c);
    }
    o
}

#[tokio::test(flavor = "multi_thread")]
async fn report_verdict_retract_over_real_artifacts() {
    let (_g, tmp) = serial_tempdir().await;
    let results = tmp.path().join("results");
    let out = results.to_str().unwrap();
    let server = real_llama(8192, 1, &[], tmp.path()).await;
    let url = server.url();

    // A real measured run.
    let o = eval_run(&url, &results, &["--suite", "smoke"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    // A real failure: nothing listens at that port. The same model id is asked for, so the
    // log can link the measured run as isolation.
    let dead = format!("http://127.0.0.1:{}", free_port());
    let o = eval_run(
        &dead,
        &results,
        &[
            "--model",
            "gemma-3-270m-q4_k_m",
            "--suite",
            "smoke",
            "--ready-timeout",
            "2",
            "--connect-timeout",
            "1",
        ],
    );
    assert_eq!(code(&o), 1, "{}", text(&o));
    drop(server);

    let names: Vec<String> = std::fs::read_dir(&results)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let good = names
        .iter()
        .find(|n| n.ends_with(".bakeoff.json"))
        .expect("bakeoff artifact")
        .clone();
    let bad = names
        .iter()
        .find(|n| n.ends_with(".failure.json"))
        .expect("failure artifact")
        .clone();
    let bad_slug = bad.trim_end_matches(".failure.json").to_string();

    // Files that are not artifacts: one skipped with a note, one of an unknown version refused.
    std::fs::write(results.join("notes.json"), r#"{"hello": "world"}"#).unwrap();
    let mut future: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(results.join(&good)).unwrap()).unwrap();
    future["schema_version"] = 99.into();
    std::fs::create_dir_all(results.join("old")).unwrap();
    std::fs::write(results.join("old/future.bakeoff.json"), future.to_string()).unwrap();

    let csv_dir = tmp.path().join("csv");
    let o = util::bakeoff_wide(&["report", out, "--csv", csv_dir.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let table = stdout(&o);
    assert!(
        table.contains(&good.replace(".bakeoff.json", "")),
        "{table}"
    );
    assert!(table.contains("FAILED — unreachable"), "{table}");
    assert!(table.contains("none recorded"), "{table}");
    assert!(
        table.contains("skipped notes.json: not a bakeoff artifact"),
        "{table}"
    );
    assert!(
        table.contains("refused old/future.bakeoff.json: schema_version 99"),
        "{table}"
    );
    let md = std::fs::read_to_string(results.join("negative-results.md")).unwrap();
    assert!(md.contains("## 1. "), "{md}");
    assert!(
        md.contains(&format!("[{}]({})", good.replace('_', "\\_"), good)),
        "isolation links the measured run: {md}"
    );
    let html = std::fs::read_to_string(results.join("report.html")).unwrap();
    assert!(html.contains("no throughput data"));
    assert!(!html.contains("<script"));
    let items = std::fs::read_to_string(csv_dir.join("items.csv")).unwrap();
    assert_eq!(
        items.lines().count(),
        1 + 6,
        "header + the six smoke items: {items}"
    );
    assert!(
        std::fs::read_to_string(csv_dir.join("steps.csv"))
            .unwrap()
            .starts_with("artifact,slug")
    );

    snapshot(
        "report_table_before",
        &table.replace(&good, "[GOOD]"),
        table_filters(tmp.path()),
    );
    snapshot("negative_results_before", &md, filters(tmp.path()));

    // Verdict: refused for an unknown slug, recorded for a real one.
    let o = bakeoff(&[
        "verdict",
        "no-such-slug",
        "accept",
        "--reason",
        "x",
        "--dir",
        out,
    ]);
    assert_eq!(code(&o), 2, "{}", text(&o));
    assert!(
        text(&o).contains("no artifact for candidate"),
        "{}",
        text(&o)
    );
    let o = bakeoff(&["verdict", &bad_slug, "maybe", "--reason", "x", "--dir", out]);
    assert_eq!(code(&o), 2);
    let o = bakeoff(&[
        "verdict",
        &bad_slug,
        "reject",
        "--reason",
        "nothing answered at the port",
        "--dir",
        out,
        "--not-attempted",
        "another port",
        "--not-attempted",
        "a running server",
        "--impact",
        "none (test)",
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(stdout(&o).contains("reject under tested configuration"));
    let o = bakeoff(&[
        "verdict",
        &bad_slug,
        "not-enough-evidence",
        "--reason",
        "one attempt only",
        "--dir",
        out,
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(
        stdout(&o).contains("replaces reject under tested configuration"),
        "{}",
        text(&o)
    );
    let v: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(results.join(format!("{bad_slug}.verdict.json"))).unwrap(),
    )
    .unwrap();
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["verdict"], "not-enough-evidence");
    assert_eq!(
        v["history"][0]["verdict"],
        "reject-under-tested-configuration"
    );

    // A verdict over the measured run, which is then retracted: the report must say the
    // verdict rests on a retracted result.
    let good_slug = good.trim_end_matches(".bakeoff.json").to_string();
    let o = bakeoff(&[
        "verdict",
        &good_slug,
        "watch",
        "--reason",
        "first look",
        "--dir",
        out,
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o));

    // Retract the measured run: the artifact's bytes stay the same.
    let good_path = results.join(&good);
    let before = std::fs::read(&good_path).unwrap();
    let o = bakeoff(&[
        "retract",
        good_path.to_str().unwrap(),
        "--reason",
        "instrument under test",
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert_eq!(
        std::fs::read(&good_path).unwrap(),
        before,
        "a retraction never edits the artifact"
    );
    let o = bakeoff(&["retract", good_path.to_str().unwrap(), "--reason", "again"]);
    assert_eq!(code(&o), 2, "a retraction is not edited: {}", text(&o));
    let o = bakeoff(&[
        "retract",
        results.join("notes.json").to_str().unwrap(),
        "--reason",
        "x",
    ]);
    assert_eq!(code(&o), 2, "{}", text(&o));

    let o = util::bakeoff_wide(&["report", out]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let table = stdout(&o);
    assert!(
        table.contains("0 counted, 1 retracted"),
        "the retracted result is not counted: {table}"
    );
    assert!(table.contains("superseded claims"), "{table}");
    assert!(table.contains("instrument under test"), "{table}");
    // Verdicts carry their date, and a caveat when what they judged was retracted.
    assert!(
        table.contains("based on 1 retracted result"),
        "the verdict's scope is re-checked: {table}"
    );
    let md = std::fs::read_to_string(results.join("negative-results.md")).unwrap();
    assert!(md.contains("| Retracted | Artifact | Candidate | Claim withdrawn | Reason |"));
    assert!(
        md.contains("- **Not attempted:** another port, a running server."),
        "{md}"
    );
    assert!(md.contains("- **Verdict:** not enough evidence"), "{md}");
    let html = std::fs::read_to_string(results.join("report.html")).unwrap();
    assert!(html.contains("RETRACTED, not counted"));
    snapshot(
        "report_table_after",
        &table.replace(&good, "[GOOD]"),
        table_filters(tmp.path()),
    );
    snapshot("negative_results_after", &md, filters(tmp.path()));
}

#[test]
fn log_add_list_archive_through_the_binary_and_escaped() {
    let tmp = tempdir();
    let dir = tmp.path().join("logbook");
    let d = dir.to_str().unwrap();
    let add = |date: &str, title: &str, body: &str| {
        bakeoff(&[
            "log",
            "add",
            "--dir",
            d,
            "--date",
            date,
            "--title",
            title,
            "--summary",
            "s",
            "--body",
            body,
        ])
    };
    // A title carrying a terminal escape (clear screen) is stored as given and printed inert.
    let o = add("2026-06-01", "closed \u{1b}[2J case", "Done.");
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(!stdout(&o).contains('\u{1b}'), "{:?}", stdout(&o));
    let o = add(
        "2026-06-02",
        "LoRA on NVFP4",
        "Retest before designing around it.",
    );
    assert_eq!(code(&o), 0, "{}", text(&o));
    let o = add("2026-08-20", "young entry", "fine");
    assert_eq!(code(&o), 0, "{}", text(&o));
    // Multi-line titles are refused: the index keeps one line per entry.
    let o = add("2026-08-21", "two\nlines", "x");
    assert_eq!(code(&o), 2, "{}", text(&o));

    let o = bakeoff(&["log", "list", "--dir", d]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let list = stdout(&o);
    assert_eq!(list.lines().count(), 3, "{list}");
    assert!(!list.contains('\u{1b}'), "{list:?}");
    assert!(list.contains(r"closed \u{1b}[2J case"), "{list}");
    assert!(list.contains("LoRA on NVFP4  [open: retest]"), "{list}");

    // Archive at 30 days: the closed entry moves, the one with open work stays, the young
    // one stays; the index length is reported against the target.
    let o = bakeoff(&[
        "log",
        "archive",
        "--dir",
        d,
        "--age",
        "30",
        "--today",
        "2026-08-24",
        "--target",
        "2",
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let rep = stdout(&o);
    assert!(!rep.contains('\u{1b}'), "{rep:?}");
    assert!(
        rep.starts_with("archived 1 entry to ARCHIVE.md; kept 1 aged entry with open deferred work, 0 where unsure, 1 younger than the age limit"),
        "{rep}"
    );
    assert!(rep.contains("above the 2-line target"), "{rep}");
    assert!(
        std::fs::read_to_string(dir.join("ARCHIVE.md"))
            .unwrap()
            .contains("closed \u{1b}[2J case")
    );
    // An age past the documented range (it would reach before the earliest date) is a usage
    // error naming the flag and the fix, not a panic.
    let o = bakeoff(&["log", "archive", "--dir", d, "--age", "4294967295"]);
    assert_eq!(code(&o), 2, "{}", text(&o));
    let e = text(&o);
    assert!(
        e.contains("--age 4294967295") && e.contains("fix: e.g. --age"),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn report_draws_a_real_throughput_sweep_and_logs_a_real_interrupted_run() {
    let (_g, tmp) = serial_tempdir().await;
    let results = tmp.path().join("results");
    let out = results.to_str().unwrap().to_owned();
    let mut server = real_llama(8192, 2, &[], tmp.path()).await;
    let url = server.url();

    // A small real sweep, without calibration.
    let o = eval_run(
        &url,
        &results,
        &[
            &["--suite", "throughput"][..],
            &SMALL_SWEEP,
            &["--no-calibrate"],
        ]
        .concat(),
    );
    assert_eq!(code(&o), 0, "{}", text(&o));

    // A real interrupted run: the server is killed once the first smoke item is journalled.
    // Its own subdirectory (the report reads DIR recursively), so the sweep's journal is not
    // the one waited on.
    let killed = results.join("killed");
    let child = spawn_eval_run(
        &url,
        &killed,
        &["--suite", "smoke", "--slug", "gemma-killed-mid-run"],
    );
    journal_started(&killed, Duration::from_secs(120)).await;
    server.kill_now();
    let o = wait_output(child).await;
    assert_eq!(code(&o), 1, "{}", text(&o));

    let csv_dir = tmp.path().join("csv");
    let o = util::bakeoff_wide(&["report", &out, "--csv", csv_dir.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let table = stdout(&o);
    assert!(table.contains("peak "), "the sweep's peak tok/s: {table}");

    // The chart is drawn from the real steps.
    let html = std::fs::read_to_string(results.join("report.html")).unwrap();
    assert!(html.contains("Concurrency vs output tok/s"), "no chart");
    assert!(html.contains("<svg"), "no inline SVG");
    assert!(!html.contains("no throughput data"));
    // steps.csv: one row per step of the real sweep, with measured tok/s.
    let steps = std::fs::read_to_string(csv_dir.join("steps.csv")).unwrap();
    let rows: Vec<&str> = steps
        .lines()
        .skip(1)
        .filter(|l| l.contains(",throughput,"))
        .collect();
    assert_eq!(rows.len(), 2, "{steps}");
    for r in &rows {
        let f: Vec<&str> = r.split(',').collect();
        assert!(f[6].parse::<f64>().unwrap() > 0.0, "output tok/s: {r}");
    }

    // The negative-results log renders the incomplete run from its real artifact.
    let md = std::fs::read_to_string(results.join("negative-results.md")).unwrap();
    assert!(md.contains("incomplete run ("), "{md}");
    assert!(md.contains("run incomplete: "), "{md}");
    assert!(md.contains("unreachable"), "{md}");
}
