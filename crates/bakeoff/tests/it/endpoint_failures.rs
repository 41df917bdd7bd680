//! An endpoint that cannot be measured, as a new user meets it on the terminal: a llama-server
//! started with `--api-key` (the real one) named `auth-failed` with the fix by `eval preflight`
//! and `eval run` alike, discovery saying which calls were refused; a dead port gives `eval run`
//! no empty suite table and `bench run` the failure artifact its `--out` promises.

use serde_json::Value;

use bakeoff_testkit::real_llama;

use crate::util::{
    bakeoff, code, dead_port_url, eval_run, only_file, read_json, serial_tempdir, text,
};

const KEY: &str = "sk-endpoint-failures-41c2";

/// One wording everywhere: the class, what was refused, and the fix, on the terminal — never
/// "no completion with text within 60 s" for a refusal that ended the wait at once, never
/// "generic (version unknown)" or "/v1/models listed no model" for calls that answered 401.
#[tokio::test]
async fn a_keyed_llama_server_is_auth_failed_with_the_fix_on_the_terminal() {
    let (_g, dir) = serial_tempdir().await;
    let server = real_llama(2048, 1, &["--api-key", KEY], dir.path()).await;
    let url = server.url();

    let o = bakeoff(&["eval", "preflight", "--endpoint", &url]);
    let t = text(&o);
    assert_eq!(code(&o), 1, "{t}");
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(out.contains("auth-failed"), "{t}");
    assert!(
        out.contains("BAKEOFF_API_KEY") && out.contains("--api-key-env"),
        "{t}"
    );
    assert!(out.contains("401 on "), "{t}");
    assert!(out.contains("no key was sent"), "{t}");
    assert!(!out.contains("within 60 s"), "{t}");
    assert!(!out.contains("generic"), "{t}");
    assert!(!out.contains("model-unknown"), "{t}");
    assert!(!out.contains("listed no model"), "{t}");

    // --json says the same.
    let o = bakeoff(&["eval", "preflight", "--endpoint", &url, "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["failure_class"], "auth-failed", "{v}");
    let reason = v["preflight"]["reasons"][0].as_str().unwrap();
    assert!(
        reason.starts_with("the server refused the credentials (401 on "),
        "{reason}"
    );
    assert!(
        !v["preflight"]["flags"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["code"] == "model-unknown"),
        "{v}"
    );

    // eval run: the same message, the class and the fix on its terminal.
    let results = dir.path().join("r");
    let o = eval_run(&url, &results, &["--suite", "smoke"]);
    let t = text(&o);
    assert_eq!(code(&o), 1, "{t}");
    assert!(t.contains("auth-failed"), "{t}");
    assert!(
        t.contains("the server refused the credentials (401 on "),
        "{t}"
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("fix: "), "{t}");
    assert!(t.contains("BAKEOFF_API_KEY"), "{t}");
    assert!(!t.contains("within 60 s"), "{t}");
    let a = read_json(&only_file(&results, ".failure.json"));
    assert_eq!(a["failure"]["class"], "auth-failed");
    assert_eq!(a["failure"]["message"], reason);
    assert!(!serde_json::to_string(&a).unwrap().contains(KEY));
}

/// A dead endpoint: `eval run` prints the failure, not an empty suite table headed
/// "— complete" beside it.
#[test]
fn eval_run_against_a_dead_port_prints_no_empty_table() {
    let dir = bakeoff_testkit::tempdir();
    let o = eval_run(&dead_port_url(), dir.path(), &["--suite", "smoke"]);
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(code(&o), 1, "{}", text(&o));
    assert!(out.contains("unreachable"), "{out}");
    assert!(out.contains("not measured"), "{out}");
    assert!(!out.contains("— complete"), "{out}");
    assert!(!out.contains("score (Wilson"), "{out}");
    assert!(out.contains("fix: "), "{out}");
}

/// `bench run --out DIR` against a dead port writes the failure artifact its help promises.
#[test]
fn bench_run_against_a_dead_port_writes_a_failure_artifact() {
    let dir = bakeoff_testkit::tempdir();
    let out = dir.path().join("b");
    let o = bakeoff(&[
        "bench",
        "run",
        "--endpoint",
        &dead_port_url(),
        "--concurrency",
        "1",
        "--requests",
        "1",
        "--no-calibrate",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 1, "{}", text(&o));
    let a = read_json(&only_file(&out, ".failure.json"));
    crate::util::assert_valid(&a);
    assert_eq!(a["kind"], "failure");
    assert_eq!(a["failure"]["class"], "unreachable");
    assert!(a["failure"]["remediation"].as_str().is_some(), "{a}");
    assert!(text(&o).contains("failure artifact"), "{}", text(&o));
}
