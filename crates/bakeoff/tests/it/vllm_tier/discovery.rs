//! Preflight and discovery against the real vLLM: engine and version from `/version`, the window
//! from `/v1/models` `max_model_len`, `/tokenize` (with `messages`), no chat template exposed,
//! the thinking probe, the tool probe; and the context suite's targets verified by the server's
//! own token counts.

use bakeoff_testkit::vllm::{self, MAX_MODEL_LEN, SERVED};

use super::{only, run};

#[tokio::test]
async fn preflight_discovers_the_real_vllm() {
    let s = vllm::shared().await;
    let (code, out, err) = run(&["eval", "preflight", "--endpoint", &s.url(), "--json"]).await;
    assert_eq!(code, 0, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let f = &v["facts"];
    assert_eq!(f["engine"], "vllm", "{f}");
    assert_eq!(f["engine_version"], vllm::VLLM_VERSION, "{f}");
    assert_eq!(f["context_window"]["tokens"], MAX_MODEL_LEN, "{f}");
    assert_eq!(f["context_window"]["source"], "vllm-models", "{f}");
    let ids: Vec<&str> = f["models"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["id"].as_str())
        .collect();
    assert!(
        ids.contains(&SERVED) && ids.contains(&"applied") && ids.contains(&"noop"),
        "{ids:?}"
    );
    assert_eq!(f["tokenize"]["works"], true, "{f}");
    assert!(
        f["tokenize"]["route"].as_str().unwrap().contains("vLLM"),
        "{f}"
    );
    // vLLM 0.32.0 serves no chat template over HTTP: recorded as absent, said so on the terminal.
    assert!(f["chat_template"].is_null(), "{f}");
    // The thinking probe ran on the good reply; SmolLM2 does not think.
    assert_eq!(v["preflight"]["thinking"]["reasoning_only"], false, "{v}");
    // Tool calling is on for the shared server.
    assert_eq!(f["tool_calls"]["state"], "accepted", "{f}");
    let (code, text, _) = run(&["eval", "preflight", "--endpoint", &s.url()]).await;
    assert_eq!(code, 0);
    assert!(text.contains("not exposed by the server"), "{text}");
    assert!(text.contains("vllm 0.32.0"), "{text}");
}

/// The context suite sizes its prompts with the server's own `/tokenize` and checks each target
/// against the `usage.prompt_tokens` the server reports for the request.
#[tokio::test]
async fn the_context_suite_hits_targets_the_server_counts() {
    let s = vllm::shared().await;
    let dir = bakeoff_testkit::tempdir();
    let (code, out, err) = run(&[
        "eval",
        "run",
        "--endpoint",
        &s.url(),
        "--suite",
        "context",
        "--limit",
        "1",
        // A window hint keeps the targets short on a 2-core CPU (the hint wins as source
        // `hint`); every target is still sized and verified by the server's own counts.
        "--max-model-len",
        "640",
        "--out",
        dir.path().to_str().unwrap(),
    ])
    .await;
    assert!(code == 0 || code == 1, "{out}{err}");
    let a = only(dir.path(), ".bakeoff.json");
    let items = a["suites"]["context"]["items"].as_array().unwrap();
    assert!(!items.is_empty(), "{a}");
    let mut verified = 0;
    for it in items {
        let e = &it["extra"];
        let (Some(t), Some(n)) = (
            e["target_tokens"].as_u64(),
            e["actual_prompt_tokens"].as_u64(),
        ) else {
            continue;
        };
        // Sized with the server's own /tokenize, checked against the usage.prompt_tokens the
        // server reported for the very request, within the suite's stated tolerance.
        let tol = e["tolerance_tokens"].as_u64().unwrap();
        assert!(
            n.abs_diff(t) <= tol,
            "target {t}, the server counted {n} (tolerance {tol}): {it}"
        );
        verified += 1;
    }
    assert!(
        verified > 0,
        "no context item carried a target and a server count: {a}"
    );
}
