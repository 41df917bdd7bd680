//! `bakeoff eval run --suite smoke,tool,session,intelligence` against the real llama-server,
//! then `bakeoff eval compare` on two runs: a paired table, and no verdict across thinking
//! modes unless `--allow thinking`.
#![allow(clippy::unwrap_used)]

use std::process::Command;

fn bakeoff() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bakeoff"))
}

fn run_eval(url: &str, out: &std::path::Path, thinking: &str) -> serde_json::Value {
    let o = bakeoff()
        .args([
            "eval",
            "run",
            "--endpoint",
            url,
            "--suite",
            "smoke,tool,session,intelligence",
            "--limit",
            "1",
            "--json",
            "--thinking",
            thinking,
            "--out",
        ])
        .arg(out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_str(&stdout).unwrap()
}

#[tokio::test]
async fn run_all_four_suites_then_compare_paired() {
    let _g = bakeoff_testkit::serial().await;
    let dir = bakeoff_testkit::tempdir();
    let server = bakeoff_testkit::real_llama(8192, 1, &[], dir.path()).await;
    let (da, db) = (dir.path().join("a"), dir.path().join("b"));
    let a = run_eval(&server.url(), &da, "off");
    let b = run_eval(&server.url(), &db, "default");
    drop(server);
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

    let o = bakeoff()
        .args(["eval", "compare"])
        .arg(&pa)
        .arg(&pb)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(text.contains("paired comparison"), "{text}");
    assert!(
        text.contains("no verdict: thinking modes differ: A off vs B default"),
        "{text}"
    );

    let o = bakeoff()
        .args(["eval", "compare", "--allow", "thinking", "--json"])
        .arg(&pa)
        .arg(&pb)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["no_verdict_reason"].is_null());
    let fams = v["families"].as_array().unwrap();
    assert!(
        fams.iter()
            .all(|f| f["has_verdict"] == true && f["lost"].as_str().unwrap().contains("item"))
    );

    let o = bakeoff()
        .args(["eval", "compare", "--allow", "vibes"])
        .arg(&pa)
        .arg(&pb)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let o = bakeoff()
        .args([
            "eval",
            "run",
            "--endpoint",
            "http://127.0.0.1:9",
            "--thinking",
            "maybe",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("on, off or default"));
}
