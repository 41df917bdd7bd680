//! What held-out probing found (docs/failure-classes.md), end to end through the real binary: runs never
//! replace one another, endpoints are classified by what was seen, and the one authorization
//! rule.

use crate::util::Bounded;
use std::path::Path;
use std::time::Instant;

use bakeoff_testkit::{real_llama, scripted, tempdir};
use serde_json::Value;

use super::eval_foundation::failed_run_into;
use crate::util::{
    assert_valid, bakeoff, bakeoff_cmd, code, eval_run, only_file, read_json, serial_tempdir, text,
};

fn preflight_json(url: &str, extra: &[&str]) -> (i32, Value, f64, String) {
    let t = Instant::now();
    let mut args = vec!["eval", "preflight", "--endpoint", url, "--json"];
    args.extend_from_slice(extra);
    let o = bakeoff(&args);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    (code(&o), v, t.elapsed().as_secs_f64(), text(&o))
}

/// A second run into the same slug never replaces the first — not the artifact, not the
/// journal — and `--replace` is the only way over, recorded in the new artifact.
#[tokio::test]
async fn a_second_run_of_a_slug_keeps_the_first() {
    let (_g, dir) = serial_tempdir().await;
    let server = real_llama(2048, 1, &[], dir.path()).await;
    let url = server.url();
    let out = dir.path().join("results");
    let run = |note: &str, extra: &[&str]| {
        let mut args = vec![
            "eval",
            "run",
            "--endpoint",
            &url,
            "--suite",
            "smoke",
            "--out",
            out.to_str().unwrap(),
            "--slug",
            "same",
            "--note",
            note,
            "--json",
        ];
        args.extend_from_slice(extra);
        let o = bakeoff(&args);
        assert_eq!(code(&o), 0, "{}", text(&o));
        serde_json::from_slice::<Value>(&o.stdout).unwrap()
    };
    let first = run("first", &[]);
    let second = run("second", &[]);
    let names = |d: &Path| {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let rid = second["run_id"].as_str().unwrap().to_string();
    assert_eq!(
        names(&out),
        [
            format!("same.{rid}.bakeoff.json"),
            format!("same.{rid}.journal.jsonl"),
            "same.bakeoff.json".to_string(),
            "same.journal.jsonl".to_string(),
        ]
    );
    let kept = read_json(&out.join("same.bakeoff.json"));
    assert_eq!(kept["candidate"]["notes"][0], "first");
    assert_eq!(kept["run_id"], first["run_id"]);
    assert_valid(&kept);
    assert!(
        std::fs::read_to_string(out.join("same.journal.jsonl"))
            .unwrap()
            .lines()
            .count()
            >= 1
    );

    // Artifacts are as readable as the operator's other files (docs/failure-classes.md: not 0600).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(out.join("same.bakeoff.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o044, 0o044, "mode {mode:o}");
    }

    // --replace: explicit, and on record.
    let third = run("third", &["--replace"]);
    let replaced: Vec<&str> = third["replaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["file"].as_str().unwrap())
        .collect();
    assert_eq!(replaced, ["same.bakeoff.json", "same.journal.jsonl"]);
    assert_eq!(third["replaces"][0]["run_id"], first["run_id"]);
    assert_eq!(
        read_json(&out.join("same.bakeoff.json"))["candidate"]["notes"][0],
        "third"
    );
    assert_eq!(names(&out).len(), 4, "{:?}", names(&out));
}

/// Two endpoints that derive the same slug (the probing's two fixture servers) keep both
/// failures.
// Multi-threaded: the scripted server runs while this thread waits on the binary.
#[tokio::test(flavor = "multi_thread")]
async fn two_endpoints_with_one_slug_keep_both_failures() {
    let dir = tempdir();
    let a = scripted::serve(scripted::completions_hang()).await;
    let b = scripted::serve(scripted::completions_hang()).await;
    for s in [&a, &b] {
        let o = eval_run(&s.url(), dir.path(), &["--ready-timeout", "2"]);
        assert_eq!(code(&o), 1, "{}", text(&o));
    }
    let failures: Vec<Value> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".failure.json"))
        .map(|p| read_json(&p))
        .collect();
    assert_eq!(failures.len(), 2);
    assert_eq!(
        failures[0]["candidate"]["slug"],
        failures[1]["candidate"]["slug"]
    );
    assert_ne!(
        failures[0]["endpoint"]["url"],
        failures[1]["endpoint"]["url"]
    );
}

/// `/v1/models` answering while every completion hangs is the wedge of docs/field-cases.md
/// B1, named as such, and `--ready-timeout` is the whole preflight's budget (the hanging
/// `/tokenize` no longer adds its own 10 s).
// Multi-threaded: the scripted server runs while this thread waits on the binary.
#[tokio::test(flavor = "multi_thread")]
async fn completions_that_hang_are_inference_hanging_within_one_budget() {
    let s = scripted::serve(scripted::completions_hang()).await;
    let (c, v, secs, t) = preflight_json(&s.url(), &["--ready-timeout", "4"]);
    assert_eq!(c, 1, "{t}");
    assert_eq!(v["failure_class"], "inference-hanging", "{t}");
    let remedy = v["remediation"].as_str().unwrap();
    assert!(remedy.contains("GET /v1/models"), "{remedy}");
    assert!(secs < 8.0, "--ready-timeout 4 took {secs:.1} s");
}

/// Classified on what was seen — a server that is not HTTP, one answering 500 everywhere.
// Multi-threaded: the scripted server runs while this thread waits on the binary.
#[tokio::test(flavor = "multi_thread")]
async fn garbage_and_all_500_are_classified_by_what_was_seen() {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let garbage = tokio::spawn(async move {
        use tokio::io::AsyncWriteExt;
        while let Ok((mut s, _)) = l.accept().await {
            let _ = s.write_all(b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n").await;
        }
    });
    let (c, v, _, t) = preflight_json(&format!("http://{addr}"), &["--ready-timeout", "3"]);
    assert_eq!(c, 1, "{t}");
    assert_eq!(v["failure_class"], "not-http", "{t}");
    garbage.abort();

    let s = scripted::serve(scripted::all_500()).await;
    let (c, v, _, t) = preflight_json(&s.url(), &["--ready-timeout", "3"]);
    assert_eq!(c, 1, "{t}");
    assert_eq!(v["failure_class"], "server-error", "{t}");
    assert!(
        !v["remediation"]
            .as_str()
            .unwrap()
            .contains("control endpoints answer"),
        "{t}"
    );
}

/// A 401 is final at once and names the key's variable.
// Multi-threaded: the scripted server runs while this thread waits on the binary.
#[tokio::test(flavor = "multi_thread")]
async fn a_401_is_final_at_once_and_names_the_key() {
    let s = scripted::serve(scripted::unauthorized()).await;
    let (c, v, secs, t) = preflight_json(&s.url(), &["--ready-timeout", "20"]);
    assert_eq!(c, 1, "{t}");
    assert_eq!(v["failure_class"], "auth-failed", "{t}");
    assert_eq!(v["preflight"]["ready"]["attempts"], 1, "{t}");
    assert!(secs < 5.0, "retried for {secs:.1} s");
    let remedy = v["remediation"].as_str().unwrap();
    assert!(
        remedy.contains("BAKEOFF_API_KEY") && remedy.contains("--api-key-env"),
        "{remedy}"
    );
}

/// A stream cut inside an event is a connection error, not `http-error` with status 200;
/// a 2xx body that is not an event stream quotes its first bytes.
// Multi-threaded: the scripted server runs while this thread waits on the binary.
#[tokio::test(flavor = "multi_thread")]
async fn cut_streams_and_html_replies_are_recorded_as_seen() {
    let dir = tempdir();
    for (bad, expect) in [
        (
            scripted::cut_mid_event as fn() -> _,
            "the stream ended in the middle of an event",
        ),
        (scripted::html_200, "<!DOCTYPE html>"),
    ] {
        let s = scripted::serve(scripted::breaks_after_ready(bad)).await;
        let out = dir.path().join(expect.len().to_string());
        let o = eval_run(&s.url(), &out, &["--suite", "smoke", "--json"]);
        assert_eq!(code(&o), 1, "{}", text(&o));
        let a: Value = serde_json::from_slice(&o.stdout).unwrap();
        let items = a["suites"]["smoke"]["items"].as_array().unwrap();
        assert!(!items.is_empty());
        for it in items {
            assert_eq!(it["outcome"], "connection-error", "{it}");
            let msg = it["error"]["message"].as_str().unwrap();
            assert!(msg.contains(expect), "{msg}");
            assert!(!msg.contains("starts \"\""), "{msg}");
        }
    }
}

/// Credentials in the URL and a key together: the key wins for every request — the GET
/// probes too — so a keyed llama-server is discovered as llama.cpp with its window.
#[tokio::test]
async fn one_authorization_for_every_request_the_key_wins() {
    let (_g, dir) = serial_tempdir().await;
    let server = real_llama(2048, 1, &["--api-key", "k-probe-test"], dir.path()).await;
    let url = server.url().replace("http://", "http://ops:pw@");
    let o = bakeoff_cmd()
        .args(["eval", "preflight", "--endpoint", &url, "--json"])
        .env("BAKEOFF_API_KEY", "k-probe-test")
        .output_bounded()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["facts"]["engine"], "llama.cpp", "{v}");
    assert_eq!(v["facts"]["context_window"]["source"], "llamacpp-slots");
    let all = String::from_utf8_lossy(&o.stdout);
    assert!(
        !all.contains("k-probe-test") && !all.contains("pw@"),
        "{all}"
    );
}

/// An intelligence run whose only suite is entirely `instrument-failure` measured nothing
/// valid: exit 1, a failure that says so.
// Multi-threaded: the scripted server runs while this thread waits on the binary.
#[tokio::test(flavor = "multi_thread")]
async fn a_run_whose_every_suite_measured_nothing_valid_exits_1() {
    let dir = tempdir();
    // The scripted vLLM answers "Hello there" to everything: no option letter, so none of the
    // 20 four-option items can pass, and 0 of 20 is below the 25 % chance floor beyond doubt.
    // (The real test model cannot be made to miss every item on purpose.)
    let s = scripted::serve(scripted::vllm_like(4096)).await;
    let battery = dir.path().join("never-right.jsonl");
    let lines: Vec<String> = (0..20)
        .map(|i| {
            format!(
                r#"{{"id":"k-{i:03}","family":"keys","prompt":"Which is {i}? Reply with only the letter of the option.","options":["w","x","y","z"],"answers":["A"],"scoring":"choice"}}"#
            )
        })
        .collect();
    std::fs::write(&battery, lines.join("\n")).unwrap();
    let out = dir.path().join("r");
    let o = eval_run(
        &s.url(),
        &out,
        &[
            "--suite",
            "intelligence",
            "--battery",
            battery.to_str().unwrap(),
            "--thinking",
            "off",
        ],
    );
    assert_eq!(code(&o), 1, "{}", text(&o));
    let a = read_json(&only_file(&out, ".failure.json"));
    assert_eq!(a["suites"]["intelligence"]["status"], "failed");
    assert_eq!(a["failure"]["class"], "not-measurable");
    assert!(
        a["failure"]["message"]
            .as_str()
            .unwrap()
            .contains("measured nothing valid"),
        "{a}"
    );
}

/// `eval compare --json` always prints JSON, with the refusal reason.
#[test]
fn compare_json_prints_json_when_it_refuses() {
    let dir = tempdir();
    let o = bakeoff(&[
        "eval",
        "compare",
        "--json",
        dir.path().join("a.json").to_str().unwrap(),
        dir.path().join("b.json").to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 2, "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    assert!(
        v["refused"].as_str().unwrap().contains("cannot read"),
        "{v}"
    );

    // Two failure artifacts (no suite ran): naming one is the wrong input, refused as JSON
    // too, with the fix.
    let out = dir.path().join("runs");
    for _ in 0..2 {
        failed_run_into(&out);
    }
    let mut files: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".failure.json"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 2);
    let o = bakeoff(&[
        "eval",
        "compare",
        "--json",
        files[0].to_str().unwrap(),
        files[1].to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 2, "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    let why = v["refused"].as_str().unwrap();
    assert!(
        why.contains("is a failure artifact") && why.contains("fix:"),
        "{v}"
    );
}

/// For `report`: its views are regenerated from the artifacts (a second `report` replaces
/// its own report.html), but a file it did not write is never overwritten.
#[test]
fn report_never_overwrites_a_file_it_did_not_write() {
    let dir = tempdir();
    let out = dir.path().join("results");
    failed_run_into(&out);
    for _ in 0..2 {
        let o = bakeoff(&["report", out.to_str().unwrap()]);
        assert_eq!(code(&o), 0, "{}", text(&o));
    }
    let mine = dir.path().join("notes.html");
    std::fs::write(&mine, "my own notes").unwrap();
    let o = bakeoff(&[
        "report",
        out.to_str().unwrap(),
        "--html",
        mine.to_str().unwrap(),
    ]);
    assert_ne!(code(&o), 0, "{}", text(&o));
    assert!(text(&o).contains("never overwritten"), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "my own notes");
}

/// An engine that routes by model id (vLLM, SGLang, LiteLLM) and a `--model` it does not serve:
/// `model-not-served` at once, no completion sent, and the remediation (the failure table's)
/// names the ids it does serve.
#[tokio::test(flavor = "multi_thread")]
async fn a_model_the_endpoint_does_not_serve_is_model_not_served() {
    let s = scripted::serve(scripted::vllm_like(32768)).await;
    let url = s.url();
    let (c, v, _, t) = tokio::task::spawn_blocking(move || {
        preflight_json(&url, &["--model", "not/this-one", "--ready-timeout", "5"])
    })
    .await
    .unwrap();
    assert_eq!(c, 1, "{t}");
    assert_eq!(v["failure_class"], "model-not-served", "{t}");
    assert_eq!(v["preflight"]["ready"]["attempts"], 0, "{t}");
    let remedy = v["remediation"].as_str().unwrap();
    assert!(
        remedy.contains("--model") && remedy.contains("Qwen/Qwen3-8B"),
        "{remedy}"
    );
}
