//! `bakeoff eval run --suite smoke,tool,session,intelligence` against the real llama-server,
//! then `bakeoff eval compare` on two runs: a paired table, and no verdict across thinking
//! modes unless `--allow thinking`.

use crate::util::Bounded;
use std::path::Path;
use std::process::Output;

use crate::util::{bakeoff, bakeoff_cmd, code, eval_run, root, serial_tempdir, stdout, text};

/// `eval run` (see [`eval_run`]), which must exit 0; its stdout.
fn ok_eval_run(url: &str, out: &Path, extra: &[&str]) -> String {
    let o = eval_run(url, out, extra);
    assert_eq!(code(&o), 0, "{}", text(&o));
    stdout(&o)
}

/// `eval run --suite intelligence --thinking off --battery FILE --out DIR` plus `extra`.
fn run_battery(url: &str, battery: &Path, out: &Path, extra: &[&str]) -> String {
    let mut args = vec!["--suite", "intelligence", "--thinking", "off"];
    args.extend(extra);
    args.extend(["--battery", battery.to_str().unwrap()]);
    ok_eval_run(url, out, &args)
}

fn run_eval(url: &str, out: &Path, thinking: &str) -> serde_json::Value {
    let args = [
        "--suite",
        "smoke,tool,session,intelligence",
        "--limit",
        "1",
        "--json",
        "--thinking",
        thinking,
    ];
    serde_json::from_str(&ok_eval_run(url, out, &args)).unwrap()
}

/// `bakeoff eval compare` plus `extra`, of A and B.
fn compare(a: &Path, b: &Path, extra: &[&str]) -> Output {
    bakeoff_cmd()
        .args(["eval", "compare"])
        .args(extra)
        .arg(a)
        .arg(b)
        .output_bounded()
        .unwrap()
}

#[tokio::test]
async fn run_all_four_suites_then_compare_paired() {
    let (_g, dir) = serial_tempdir().await;
    let server = bakeoff_testkit::real_llama(8192, 1, &[], dir.path()).await;
    let (da, db) = (dir.path().join("a"), dir.path().join("b"));
    let url = server.url();
    let a = run_eval(&url, &da, "off");
    let b = run_eval(&url, &db, "default");
    for suite in ["smoke", "tool", "session", "intelligence"] {
        assert!(
            !a["suites"][suite]["items"].as_array().unwrap().is_empty(),
            "{suite}"
        );
    }
    assert_eq!(a["run"]["thinking"], "off");
    assert_eq!(b["run"]["thinking"], "default");
    assert_eq!(a["preflight"]["thinking_mode"]["took_effect"], true);
    assert_eq!(
        a["suites"]["intelligence"]["summary"]["details"]["families"]
            .as_array()
            .unwrap()
            .len(),
        6
    );
    assert!(a["suites"]["tool"]["summary"]["details"]["diagnosis"]["code"].is_string());
    let slug = a["candidate"]["slug"].as_str().unwrap();
    let pa = da.join(format!("{slug}.bakeoff.json"));
    let pb = db.join(format!("{slug}.bakeoff.json"));

    let o = compare(&pa, &pb, &[]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(text.contains("paired comparison"), "{text}");
    assert!(
        text.contains("no verdict: thinking modes differ: A off vs B default"),
        "{text}"
    );

    // `contaminated` too: this shared test machine may be busy (docs/metrics.md "Conditions"), which is not what
    // this test is about.
    let o = compare(&pa, &pb, &["--allow", "thinking,contaminated", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["no_verdict_reason"].is_null());
    let fams = v["families"].as_array().unwrap();
    assert!(
        fams.iter()
            .all(|f| f["has_verdict"] == true && f["lost"].as_str().unwrap().contains("item"))
    );

    // --battery FILE through the CLI: the first three shipped arithmetic items, with --limit 2
    // (two of the family). Same ids and prompts as run A's arith-000, a different item set.
    let shipped = std::fs::read_to_string(
        root().join("crates/bakeoff-suites/data/intelligence-default.jsonl"),
    )
    .unwrap();
    let good = dir.path().join("mini.jsonl");
    let lines: Vec<&str> = shipped
        .lines()
        .filter(|l| l.contains("\"family\":\"arithmetic\""))
        .take(3)
        .collect();
    std::fs::write(
        &good,
        format!("// three arithmetic items\n{}\n", lines.join("\n")),
    )
    .unwrap();
    let dc = dir.path().join("c");
    let stdout = run_battery(&url, &good, &dc, &["--limit", "2", "--json"]);
    let c: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let items = c["suites"]["intelligence"]["items"].as_array().unwrap();
    let ids: Vec<&str> = items.iter().map(|i| i["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["arith-000", "arith-001"]);
    assert_eq!(
        c["suites"]["intelligence"]["summary"]["details"]["battery"],
        good.display().to_string()
    );
    let pc = dc.join(format!("{slug}.bakeoff.json"));

    // Without --json the run ends with the terminal summary, per-family figures included, and
    // the HTML report of that directory carries the same families.
    let dd = dir.path().join("d");
    let text = run_battery(&url, &good, &dd, &[]);
    assert!(text.contains("per family (Wilson 95%"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.contains("intelligence") && l.contains("arithmetic") && l.contains("/3 = ")),
        "{text}"
    );
    drop(server);
    let o = bakeoff_cmd()
        .arg("report")
        .arg(&dd)
        .output_bounded()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let html = std::fs::read_to_string(dd.join("report.html")).unwrap();
    assert!(
        html.contains("<table class=\"families\">") && html.contains("<td>arithmetic</td>"),
        "no per-family table in the HTML report"
    );

    // A (four suites, --limit 1) against C (two battery items): different item sets and n.
    let o = compare(&pa, &pc, &[]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(text.contains("no verdict: item sets differ"), "{text}");
    assert!(text.contains("1 only in B"), "{text}");
    assert!(text.contains("n-confound"), "{text}");
    assert!(text.contains("--allow item-set,n"), "{text}");
    let o = compare(&pa, &pc, &["--allow", "item-set,n,contaminated", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["no_verdict_reason"].is_null(), "{v}");
    let fams = v["families"].as_array().unwrap();
    assert_eq!(fams.len(), 1, "only arith-000 is in both: {v}");
    assert_eq!(fams[0]["family"], "arithmetic");
    assert_eq!(fams[0]["pairs"], 1);
    assert_eq!(fams[0]["has_verdict"], true);

    // A bad battery is refused before anything starts, naming the line.
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(
        &bad,
        format!(
            "{}\n{}\n",
            lines[0],
            r#"{"id":"c1","family":"f","prompt":"p","options":["a","b"],"answers":["C"],"scoring":"choice"}"#
        ),
    )
    .unwrap();
    for (file, want) in [
        (bad.clone(), "line 2"),
        (dir.path().join("absent.jsonl"), "cannot read battery"),
    ] {
        let o = bakeoff(&[
            "eval",
            "run",
            "--endpoint",
            "http://127.0.0.1:9",
            "--suite",
            "intelligence",
            "--battery",
            file.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(want), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "one-line error: {err}");
    }

    let o = compare(&pa, &pb, &["--allow", "vibes"]);
    assert_eq!(o.status.code(), Some(2));
    let o = bakeoff(&[
        "eval",
        "run",
        "--endpoint",
        "http://127.0.0.1:9",
        "--thinking",
        "maybe",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("'--thinking <MODE>'") && err.contains("[possible values: on, off, default]"),
        "{err}"
    );
}
