//! An isolation ladder with real passes and real failures (docs/field-cases.md B1, B4): `-c` × a
//! `--cache-type-k` value llama-server refuses, so the cache type separates pass from fail;
//! a candidate that fails for other real reasons (a model path that does not exist, a FIFO as
//! the model: the engine blocks opening it and goes silent); and a candidate that only
//! completes. Then the record, the artifacts, negative-results.md, `campaign status`,
//! `bakeoff report`, and a second run that runs nothing again.

use bakeoff_report::escape::for_markdown;

use super::*;
use crate::util::{code, free_port, serial_tempdir, stdout, text};

/// A `--cache-type-k` value llama-server rejects while parsing its arguments (it exits at once).
const BAD_CACHE_TYPE: &str = "q9_9";
/// The class the watchdog gives llama-server exiting on that argument (its log line
/// `error while handling argument "--cache-type-k": Unsupported cache type: q9_9`).
const BAD_CACHE_TYPE_CLASS: &str = "failed:bad-argument";

#[tokio::test]
async fn a_ladder_separates_pass_from_fail_and_negative_results_name_the_axis() {
    let (_g, dir) = serial_tempdir().await;
    let fifo = dir.path().join("model.fifo");
    let st = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(st.success());
    let model = bakeoff_testkit::engine().model.display().to_string();
    let campaign = format!(
        r#"{header}
[[candidate]]
name = "steady"
seat = "base"
set_args = {{ "-c" = "768" }}

[[candidate]]
name = "ladder"
seat = "base"
[candidate.ladder]
"-c" = ["1024", "512"]
"--cache-type-k" = ["f16", "{BAD_CACHE_TYPE}"]

[[candidate]]
name = "broken"
seat = "base"
note = "two real ways a start fails"
[candidate.ladder]
"-m" = ["/nonexistent/model.gguf", "{fifo}"]
"#,
        header = campaign_header("ladder-test"),
        fifo = fifo.display()
    );
    let f = Files::write(
        dir.path(),
        &process_seat("base", "bench", free_port()),
        &campaign,
    );
    let _cleanup = f.guard();

    // `--allow contaminated`: this test is about the ladder's isolation, and on a shared
    // 2-core host every variant may be measured `host-contended`, which would withhold the
    // believed cause and the suggested verdicts it checks (campaign/contaminated.rs tests that).
    let o = f.run(&["--allow", "contaminated"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let rec = f.record();
    assert_eq!(rec["finished"], true, "{rec:#}");
    assert_eq!(rec["variants"].as_array().unwrap().len(), 7, "{rec:#}");

    // The completed-only candidate: its delta against the base seat, its scores, its artifact.
    let steady = row(&rec, "steady");
    assert_eq!(steady["outcome_label"], "completed", "{steady:#}");
    assert_eq!(strings(&steady["delta"]), ["-c 768 (was 1024)"]);
    assert_completed(&f.out, steady);

    // The ladder: every combination of its axes once (their order is checked last).
    let ladder = rows_of(&rec, "ladder");
    let mut got: Vec<(&str, &str)> = ladder
        .iter()
        .map(|r| (axis(r, "-c"), axis(r, "--cache-type-k")))
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            ("1024", "f16"),
            ("1024", BAD_CACHE_TYPE),
            ("512", "f16"),
            ("512", BAD_CACHE_TYPE)
        ]
    );
    for r in &ladder {
        let c = axis(r, "-c");
        let ctk = axis(r, "--cache-type-k");
        let mut delta = strings(&r["delta"]);
        delta.sort();
        let want_c = if c == "1024" {
            "-c 1024 (unchanged)".to_string()
        } else {
            format!("-c {c} (was 1024)")
        };
        assert_eq!(delta, [format!("+ --cache-type-k {ctk}"), want_c], "{r:#}");
        assert_eq!(r["attempts"], 1, "{r:#}");
        assert!(
            r["launch"].as_str().unwrap().contains(&format!("-c {c} ")),
            "{r:#}"
        );
        if ctk == "f16" {
            assert_eq!(r["outcome_label"], "completed", "{r:#}");
            assert_completed(&f.out, r);
        } else {
            assert_eq!(r["outcome_label"], BAD_CACHE_TYPE_CLASS, "{r:#}");
            // The engine's own line is the evidence the row keeps.
            assert!(
                strings(&r["log_lines"])
                    .iter()
                    .any(|l| l.contains("Unsupported cache type: q9_9")),
                "{r:#}"
            );
            assert_failed(&f.out, r);
        }
    }

    // The other candidate: two real failures, each with the watchdog's class.
    let broken = rows_of(&rec, "broken");
    assert_eq!(broken.len(), 2);
    let missing = broken[0];
    assert_eq!(axis(missing, "-m"), "/nonexistent/model.gguf");
    assert_eq!(
        missing["outcome_label"], "failed:model-file-missing",
        "{missing:#}"
    );
    assert_eq!(
        strings(&missing["delta"]),
        [format!("-m /nonexistent/model.gguf (was {model})")]
    );
    assert_failed(&f.out, missing);
    let wedged = broken[1];
    assert_eq!(axis(wedged, "-m"), fifo.display().to_string());
    assert_eq!(wedged["outcome_label"], "failed:init-wedge", "{wedged:#}");
    assert_failed(&f.out, wedged);

    // negative-results.md: a numbered section (`## N. NAME — …`) per candidate with a
    // failure, none for `steady`.
    let md = std::fs::read_to_string(f.out.join("negative-results.md")).unwrap();
    let sections: Vec<&str> = md.lines().filter(|l| l.starts_with("## ")).collect();
    let section_of = |name: &str| {
        sections.iter().any(|h| {
            h.split_once(". ")
                .is_some_and(|(_, t)| t.starts_with(&format!("{name} ")))
        })
    };
    assert!(
        section_of("ladder"),
        "no section for ladder: {sections:?}\n{md}"
    );
    assert!(
        section_of("broken"),
        "no section for broken: {sections:?}\n{md}"
    );
    assert!(
        !section_of("steady"),
        "a completed-only candidate has a section: {sections:?}\n{md}"
    );
    let ladder_md = section_text(&md, "ladder");
    // The isolation table lists every sibling of the ladder, its axis values and its outcome.
    let flags: Vec<String> = rec["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "ladder")
        .unwrap()["axes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["flag"].as_str().unwrap().to_string())
        .collect();
    for r in &ladder {
        let mut cells = format!("| {} |", r["index"]);
        for flag in &flags {
            cells += &format!(" {} |", for_markdown(axis(r, flag), 400));
        }
        cells += &format!(" {} |", r["outcome_label"].as_str().unwrap());
        assert!(
            ladder_md
                .lines()
                .any(|l| l.trim_start().starts_with(&cells)),
            "no isolation-table row {cells:?}:\n{ladder_md}"
        );
    }
    // The believed cause names the axis that separated pass from fail, and only that one.
    let cause = ladder_md
        .lines()
        .find(|l| l.contains("Believed cause"))
        .unwrap_or_else(|| panic!("no believed cause:\n{ladder_md}"))
        .replace("\\`", "`");
    assert!(cause.contains("config-specific"), "{cause}");
    assert!(cause.contains("`--cache-type-k`"), "{cause}");
    assert!(
        !cause.contains("`-c`"),
        "the -c axis did not separate: {cause}"
    );
    // One engine: the failed variants' unknown version is not a second one, and the engine's
    // usage text (llama-server prints it after a rejected argument) is no notable log line.
    let engine = ladder_md
        .lines()
        .find(|l| l.contains("**Engine:**"))
        .unwrap_or_else(|| panic!("no engine line:\n{ladder_md}"));
    assert!(
        engine.contains("llama.cpp b11434")
            && !engine.contains("version unknown")
            && !engine.contains(';'),
        "{engine}"
    );
    assert!(
        ladder_md.contains("Notable log lines") && ladder_md.contains("Unsupported cache type"),
        "{ladder_md}"
    );
    for usage in [
        "usage:",
        "to show complete usage",
        "--cache-type-k TYPE",
        "allowed values",
    ] {
        assert!(
            !ladder_md.contains(usage),
            "usage text {usage:?} in:\n{ladder_md}"
        );
    }
    // The other candidate's section names both classes.
    let broken_md = section_text(&md, "broken");
    assert!(
        broken_md.contains("model-file-missing") && broken_md.contains("init-wedge"),
        "{broken_md}"
    );
    // Evidence files are named.
    assert!(
        md.contains(&format!(
            "{}.failure.json",
            missing["variant"].as_str().unwrap()
        )),
        "{md}"
    );

    // `campaign status DIR`: the ladder table.
    let st = util::bakeoff(&["campaign", "status", f.out_arg()]);
    assert_eq!(code(&st), 0, "{}", text(&st));
    let table = stdout(&st);
    for r in rec["variants"].as_array().unwrap() {
        let slug = r["variant"].as_str().unwrap();
        // At 120 columns a long variant name is shortened in the middle before a column is
        // left out.
        let shown = bakeoff_term::shorten_middle(slug, bakeoff_term::NAME_BEFORE_DROP);
        let label = r["outcome_label"].as_str().unwrap();
        assert!(
            table
                .lines()
                .any(|l| (l.contains(slug) || l.contains(&shown)) && l.contains(label)),
            "{slug} {label} not in the ladder table:\n{table}"
        );
    }
    // Its last line: the variants' conditions (clean, or which variant and what), as every
    // run's summary ends.
    let last = table.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("conditions: clean (") || last.starts_with("conditions: CONTAMINATED — "),
        "{table}"
    );

    // A second run of the same file runs nothing again.
    let started = count(&f.journal(), "variant-started");
    let again = f.run(&["--allow", "contaminated"]);
    assert_eq!(code(&again), 0, "{}", text(&again));
    assert_eq!(count(&f.journal(), "variant-started"), started);
    let rec2 = f.record();
    for r in rec2["variants"].as_array().unwrap() {
        assert_eq!(r["attempts"], 1, "{r:#}");
        let before = row(&rec, r["variant"].as_str().unwrap());
        assert_eq!(r["outcome_label"], before["outcome_label"]);
    }

    // `bakeoff report DIR`: the artifacts and, after them, the ladder table.
    let rep = util::bakeoff(&["report", f.out_arg()]);
    assert_eq!(code(&rep), 0, "{}", text(&rep));
    let printed = stdout(&rep);
    for r in rec["variants"].as_array().unwrap() {
        let slug = r["variant"].as_str().unwrap();
        let shown = bakeoff_term::shorten_middle(slug, bakeoff_term::NAME_BEFORE_DROP);
        let label = r["outcome_label"].as_str().unwrap();
        assert!(
            printed
                .lines()
                .any(|l| (l.contains(slug) || l.contains(&shown)) && l.contains(label)),
            "{slug} {label} not in bakeoff report's ladder table:\n{printed}"
        );
    }
    let html = std::fs::read_to_string(f.out.join("report.html")).unwrap();
    for r in &ladder {
        assert!(
            html.contains(r["variant"].as_str().unwrap()),
            "no ladder row in the HTML"
        );
    }
    // The report leaves the campaign's negative results as they were (checked after the
    // ladder's order below, which does not depend on it).
    let md_after = std::fs::read_to_string(f.out.join("negative-results.md")).unwrap();
    let kept = md_after.contains("from `campaign.json`") && md_after.contains("config-specific");

    // The ladder's variants are the product of its axes in FILE order, the first axis (-c)
    // varying slowest, and are named after their axes in that order (docs/campaign.md).
    let order: Vec<(&str, &str, &str)> = ladder
        .iter()
        .map(|r| {
            (
                r["variant"].as_str().unwrap(),
                axis(r, "-c"),
                axis(r, "--cache-type-k"),
            )
        })
        .collect();
    assert_eq!(
        order,
        [
            ("ladder-c-1024-cache-type-k-f16", "1024", "f16"),
            ("ladder-c-1024-cache-type-k-q9-9", "1024", BAD_CACHE_TYPE),
            ("ladder-c-512-cache-type-k-f16", "512", "f16"),
            ("ladder-c-512-cache-type-k-q9-9", "512", BAD_CACHE_TYPE)
        ],
        "the ladder is not in file order"
    );
    assert_eq!(flags, ["-c", "--cache-type-k"]);
    assert_eq!(
        strings(&ladder[2]["delta"]),
        ["-c 512 (was 1024)", "+ --cache-type-k f16"]
    );
    assert!(
        kept,
        "bakeoff report replaced the campaign's negative-results.md:\n{md_after}"
    );
}

/// The lines of `md`'s numbered section of candidate `name`, up to the next section.
fn section_text(md: &str, name: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for l in md.lines() {
        if l.starts_with("## ") {
            inside = l
                .split_once(". ")
                .is_some_and(|(_, t)| t.starts_with(&format!("{name} ")));
        }
        if inside {
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}

/// Journal lines of one event.
fn count(journal: &[Value], event: &str) -> usize {
    journal.iter().filter(|e| e["event"] == event).count()
}

/// A completed row: its artifact on disk, the smoke suite's score, a kept log, the seat down.
fn assert_completed(out: &Path, r: &Value) {
    let slug = r["variant"].as_str().unwrap();
    let arts = strings(&r["artifacts"]);
    let want = format!("{slug}.bakeoff.json");
    assert!(arts.contains(&want), "{want} not in {arts:?}");
    let art = read_json(&out.join(&want));
    crate::util::assert_valid(&art);
    assert_eq!(r["suggested_verdict"], "watch", "{r:#}");
    let suites = r["suites"].as_array().unwrap();
    assert_eq!(suites.len(), 1, "{r:#}");
    assert_eq!(suites[0]["suite"], "smoke");
    assert_eq!(suites[0]["status"], "complete");
    assert_eq!(suites[0]["valid"], true);
    // Smoke's six items (`limit` caps the larger suites only).
    assert!(suites[0]["score"]["n"].as_u64().unwrap() >= 1, "{r:#}");
    let log = r["log"]
        .as_str()
        .unwrap_or_else(|| panic!("no log kept: {r:#}"));
    assert!(out.join(log).exists(), "{log}");
    assert!(r["timings"]["start_ms"].is_u64() && r["timings"]["suites_ms"].is_u64());
}

/// A failed row: its failure artifact on disk with the same class, no suites.
fn assert_failed(out: &Path, r: &Value) {
    let slug = r["variant"].as_str().unwrap();
    let arts = strings(&r["artifacts"]);
    let want = format!("{slug}.failure.json");
    assert!(arts.contains(&want), "{want} not in {arts:?}");
    let art = read_json(&out.join(&want));
    assert_eq!(art["failure"]["class"], r["outcome"]["class"], "{r:#}");
    assert_eq!(
        r["suggested_verdict"], "reject-under-tested-configuration",
        "{r:#}"
    );
    assert!(r["suites"].as_array().is_none_or(|s| s.is_empty()), "{r:#}");
    assert!(!out.join(format!("{slug}.bakeoff.json")).exists());
}
