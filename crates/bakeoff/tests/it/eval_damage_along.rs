//! `bakeoff eval damage` along the reply (docs/suites.md "Damage along the reply") against real
//! engines: greedy agreement, where replies part, and the teacher-forced per-token KL with its
//! self-check and batch floor.
//!
//! - the real llama-server serving SmolLM2 with a q4_0 KV cache against the same model with
//!   its f16 cache: every measure with its interval, both checks, and per-position figures
//!   for every position of every prompt;
//! - the real LiteLLM proxy in front of the real llama-server: a gateway has no
//!   teacher-forcing route, so the report is greedy agreement and first-token KL, and the
//!   artifact says why.
//!
//! The vLLM configurations are in vllm_tier::damage.

use crate::util::Bounded;
use serde_json::Value;

use crate::util::{self, code, logged_llama, serial_tempdir, smollm2_llama, text, valid_artifact};

/// The shipped battery's first `n` prompts (each asks for a paragraph, a list or steps).
fn prompts(dir: &std::path::Path, n: usize) -> std::path::PathBuf {
    util::first_prompts(dir, n)
}

fn f(v: &Value, k: &str) -> f64 {
    v[k].as_f64()
        .unwrap_or_else(|| panic!("{k} missing in {v}"))
}

/// An interval that holds its estimate: `low ≤ estimate ≤ high`.
fn interval(v: &Value, est: &str, low: &str, high: &str) {
    assert!(
        f(v, low) <= f(v, est) && f(v, est) <= f(v, high),
        "{low} ≤ {est} ≤ {high}: {v}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_quantized_kv_cache_is_measured_along_the_whole_reply() {
    let (_g, dir) = serial_tempdir().await;
    let reference = smollm2_llama(dir.path(), "f16", &[]).await;
    let candidate = smollm2_llama(dir.path(), "q4_0", &["-ctk", "q4_0", "-ctv", "q4_0"]).await;
    let out = dir.path().join("out");
    let p = prompts(dir.path(), 6);
    let o = util::bakeoff_async(&[
        "eval",
        "damage",
        "--endpoint",
        &candidate.url(),
        "--reference",
        &reference.url(),
        "--prompts",
        p.to_str().unwrap(),
        "--tokens",
        "32",
        "--slug",
        "smollm2-kv-q4-0",
        "--out",
        out.to_str().unwrap(),
    ])
    .await;
    assert_eq!(code(&o), 0, "{}", text(&o));
    let art = valid_artifact(&out, ".bakeoff.json");
    let d = &art["suites"]["damage"]["summary"]["damage"];
    let a = &d["along"];
    eprintln!(
        "SmolLM2 q4_0 KV against f16, 6 prompts × 32 tokens: first-token KL {} [{}–{}], top-1 ≠ {}/{}; identical replies {}/{} [{:.2}–{:.2}], part at token {} (median), reproduced {:.3} [{:.3}–{:.3}]; per-token KL mean {:.4} [{:.4}–{:.4}], median {:.2e} [{:.2e}–{:.2e}], top-1 ≠ at {:.3} of positions; self-check identical {}/{}, batch floor identical {}/{} KL upper {}; noise floor {}",
        d["kl"]["mean"],
        d["kl"]["low"],
        d["kl"]["high"],
        d["top1_differs"]["successes"],
        d["top1_differs"]["n"],
        a["greedy_identical"]["successes"],
        a["greedy_identical"]["n"],
        f(&a["greedy_identical"], "low"),
        f(&a["greedy_identical"], "high"),
        a["first_divergence_median"],
        f(&a["reproduced"], "mean"),
        f(&a["reproduced"], "low"),
        f(&a["reproduced"], "high"),
        f(&a["token_kl"], "mean"),
        f(&a["token_kl"], "low"),
        f(&a["token_kl"], "high"),
        f(&a["token_kl"], "median"),
        f(&a["token_kl"], "median_low"),
        f(&a["token_kl"], "median_high"),
        f(&a["token_top1_differs"], "mean"),
        a["self_check"]["identical"]["successes"],
        a["self_check"]["identical"]["n"],
        a["batch_floor"]["identical"]["successes"],
        a["batch_floor"]["identical"]["n"],
        a["batch_floor"]["token_kl"]["high"],
        a["noise_floor_nats"]
    );
    // The instrument: the reference agrees with itself, one at a time.
    assert_eq!(a["self_check"]["passed"], true, "{a}");
    assert_eq!(a["self_check"]["identical"]["successes"], 6, "{a}");
    assert_eq!(a["self_check"]["in_flight"], 1);
    assert!(f(&a["self_check"]["token_kl"], "high") <= f(&a["self_check"], "limit_nats"));
    // The batch floor was measured with 8 in flight (fillers for 6 prompts).
    assert_eq!(a["batch_floor"]["in_flight"], 8);
    assert_eq!(a["batch_floor"]["identical"]["n"], 6);
    assert!(a.get("withheld").is_none(), "{a}");
    // llama.cpp: the reference read by teacher forcing along its own reply on the first 4
    // prompts, against its decode; its upper bound is part of the noise floor.
    assert_eq!(a["route_check"]["identical"]["n"], 4, "{a}");
    assert!(f(&a["route_check"]["token_kl"], "high") <= f(a, "noise_floor_nats"));
    // What each phase cost: seconds, prompts, positions and requests.
    let timing = a["timing"].as_array().unwrap();
    let phases: Vec<&str> = timing
        .iter()
        .map(|t| t["phase"].as_str().unwrap())
        .collect();
    assert_eq!(phases, ["self-check", "batch floor", "candidate"], "{a}");
    for t in timing {
        assert!(
            f(t, "seconds") > 0.0 && t["requests"].as_u64().unwrap() > 0,
            "{t}"
        );
        assert_eq!(t["prompts"], 6, "{t}");
        assert!(f(t, "seconds_per_position") > 0.0, "{t}");
    }
    assert!(text(&o).contains("time: self-check "), "{}", text(&o));
    // Every measure present with its interval.
    interval(&a["greedy_identical"], "estimate", "low", "high");
    interval(&a["reproduced"], "mean", "low", "high");
    interval(&a["token_kl"], "mean", "low", "high");
    interval(&a["token_kl"], "median", "median_low", "median_high");
    interval(&a["token_top1_differs"], "mean", "low", "high");
    assert!(a["kl_beyond_noise"].is_boolean() && a["agreement_beyond_noise"].is_boolean());
    assert!(
        f(&a["token_kl"], "mean") > 0.0,
        "a q4_0 cache moves the distributions: {a}"
    );
    // Per-position figures for every position of every prompt.
    let items = art["suites"]["damage"]["items"].as_array().unwrap();
    let cand: Vec<&Value> = items
        .iter()
        .filter(|i| i["extra"]["phase"] == "along-candidate")
        .collect();
    assert_eq!(cand.len(), 6);
    for it in &cand {
        let n = it["extra"]["reference_tokens"].as_u64().unwrap() as usize;
        assert!(n > 0, "{it}");
        let kl = it["extra"]["kl"].as_array().unwrap();
        assert_eq!(kl.len(), n, "one KL per position: {it}");
        assert!(kl.iter().all(Value::is_f64), "{it}");
        assert_eq!(it["extra"]["top1_differs"].as_array().unwrap().len(), n);
    }
    let positions = a["positions"].as_array().unwrap();
    assert_eq!(positions[0]["prompts"], 6);
    // The terminal says which measure moved; the HTML draws the curve.
    assert!(text(&o).contains("headline: "), "{}", text(&o));
    assert!(
        text(&o).contains("per-token KL along the reference's reply"),
        "{}",
        text(&o)
    );
    let r = util::bakeoff(&["report", out.to_str().unwrap()]);
    assert_eq!(code(&r), 0, "{}", text(&r));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("<svg class=\"damage-curve\""), "no curve");
    assert!(html.contains("damage-headline"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_gateway_has_no_forcing_route_and_the_artifact_says_why() {
    let (_g, dir) = serial_tempdir().await;
    let llama = logged_llama(dir.path(), "behind-gateway", &[]).await;
    let cfg = dir.path().join("litellm.yaml");
    bakeoff_testkit::litellm::write_config(&cfg, &[("gemma", &llama.url())]);
    let proxy = bakeoff_testkit::litellm::Proxy::start(&cfg, dir.path()).await;
    let out = dir.path().join("out");
    let p = prompts(dir.path(), 4);
    let o = util::bakeoff_cmd()
        .env("DAMAGE_ALONG_KEY", &proxy.key)
        .args([
            "eval",
            "damage",
            "--endpoint",
            &proxy.url,
            "--model",
            "gemma",
            "--api-key-env",
            "DAMAGE_ALONG_KEY",
            "--reference",
            &proxy.url,
            "--reference-model",
            "gemma",
            "--reference-api-key-env",
            "DAMAGE_ALONG_KEY",
            "--prompts",
            p.to_str().unwrap(),
            "--tokens",
            "16",
            "--out",
            out.to_str().unwrap(),
        ])
        .output_bounded()
        .unwrap();
    // Through the gateway llama.cpp's prompt cache cannot be switched off (a generic engine
    // gets no cache field), so the reference may fail its own check (measured: first-token
    // self-KL 6.6e-4, upper bound 2.0e-3): a withheld figure exits 1. What is asserted here is
    // the part along the reply: no forcing route, and the reason recorded.
    assert!(code(&o) <= 1, "{}\n{}", text(&o), proxy.log_tail());
    let art = valid_artifact(&out, ".bakeoff.json");
    let a = &art["suites"]["damage"]["summary"]["damage"]["along"];
    eprintln!("through LiteLLM: {a}");
    assert!(
        a["forcing_missing"]
            .as_str()
            .is_some_and(|w| w.contains("no route here")),
        "{a}"
    );
    assert!(
        a["route"].as_str().unwrap().contains("chat completions"),
        "{a}"
    );
    // Greedy agreement or the reason it is withheld; never a teacher-forced figure.
    assert!(
        a.get("greedy_identical").is_some() || a.get("withheld").is_some(),
        "{a}"
    );
    assert!(
        a.get("token_kl").is_none() && a.get("positions").is_none(),
        "{a}"
    );
    assert!(
        text(&o).contains("per-token KL not measured"),
        "{}",
        text(&o)
    );
    assert!(
        !std::fs::read_to_string(util::only_file(&out, ".bakeoff.json"))
            .unwrap()
            .contains(&proxy.key)
    );
}
