//! `eval adapter` against the real vLLM serving two PEFT adapters with `--enable-lora
//! --lora-modules`: `applied` (a non-zero update) must be `applied` with its KL, and `noop` (an
//! update of exactly zero: listed, served, and changing nothing — the silent no-op of
//! docs/suites.md "adapter") must be `adapter-no-op`. Each adapter is a model id of its own whose
//! `parent` in `/v1/models` names the base.

use bakeoff_testkit::vllm::{self, SERVED};

use crate::util::{first_prompts, read_json};

use super::run;

async fn check(url: &str, id: &str, dir: &std::path::Path) -> (i32, serde_json::Value, String) {
    let p = first_prompts(dir, 6);
    let out = dir.join("out");
    let (code, text, err) = run(&[
        "eval",
        "adapter",
        "--endpoint",
        url,
        "--adapter",
        id,
        "--prompts",
        p.to_str().unwrap(),
        "--max-tokens",
        "4",
        "--slug",
        id,
        "--out",
        out.to_str().unwrap(),
    ])
    .await;
    let art = read_json(&out.join(format!("{id}.bakeoff.json")));
    (code, art, format!("{text}{err}"))
}

#[tokio::test]
async fn a_real_vllm_lora_is_applied_and_a_zero_update_is_a_no_op() {
    let s = vllm::shared().await;
    let dir = bakeoff_testkit::tempdir();
    let (code, art, text) = check(&s.url(), "applied", dir.path()).await;
    let r = &art["adapter"];
    assert_eq!(code, 0, "{text}");
    assert_eq!(r["verdict"], "applied", "{r}");
    assert_eq!(r["route"]["kind"], "model-id", "{r}");
    // No --base: the adapter's `parent` in vLLM's /v1/models names it.
    assert_eq!(r["route"]["base_model"], SERVED, "{r}");
    assert!(r["kl"]["mean"].as_f64().unwrap() > 0.0, "{r}");
    assert_eq!(r["self_check"]["passed"], true, "{r}");
    for it in art["suites"]["adapter"]["items"].as_array().unwrap() {
        assert!(
            it["request"]["cache_salt"].is_string(),
            "vLLM's prefix cache is salted: {it}"
        );
    }

    let dir = bakeoff_testkit::tempdir();
    let (code, art, text) = check(&s.url(), "noop", dir.path()).await;
    let r = &art["adapter"];
    assert_eq!(code, 1, "{text}");
    assert_eq!(r["verdict"], "adapter-no-op", "{r}");
    assert_eq!(r["self_check"]["passed"], true, "{r}");
}
