//! `bakeoff eval adapter` (docs/suites.md "Damage"): is a LoRA adapter applied at all?
//!
//! Against the real llama-server with the real test LoRA (a GGUF written by
//! scripts/make-test-lora.py with the `gguf` package; `bakeoff_testkit::test_lora_path`):
//! - loaded with `--lora` (scale 1): applied, KL(base ‖ adapter) above the noise floor;
//! - loaded with `--lora-scaled FILE:0`: adapter-no-op, exit 1; an adapter it does not list is a
//!   usage error naming the ones it does; after `POST /lora-adapters` sets scale 1 the same
//!   adapter is applied (the check measures the scale the server serves);
//! - a base that is two differing replicas behind the real LiteLLM proxy: the base disagrees
//!   with itself, the instrument check fails and no verdict is given.
//!
//! vLLM serves an adapter as a model id of its own; no vLLM runs here, so a scripted fixture
//! (`bakeoff_testkit::vllm_lora`, citing serving_models.py and docs/field-cases.md F6) shows that route and
//! the silent no-op of docs/field-cases.md F6.

use crate::util::Bounded;
use std::path::Path;
use std::process::Output;

use bakeoff_testkit::litellm::Proxy;
use bakeoff_testkit::vllm_lora::{self, Lora};
use serde_json::Value;

use crate::util::{
    self, code, first_prompts as prompts, logged_llama as server, serial_tempdir, stdout, text,
    valid_artifact,
};

async fn adapter(args: &[&str]) -> Output {
    let mut all = vec!["eval", "adapter"];
    all.extend(args);
    util::bakeoff_async(&all).await
}

fn lora() -> String {
    bakeoff_testkit::test_lora_path()
        .to_str()
        .unwrap()
        .to_owned()
}

/// `eval adapter --endpoint URL --adapter ID --prompts P --max-tokens 4 --out OUT --slug SLUG`.
async fn check(url: &str, id: &str, p: &Path, out: &Path, slug: &str) -> Output {
    adapter(&[
        "--endpoint",
        url,
        "--adapter",
        id,
        "--prompts",
        p.to_str().unwrap(),
        "--max-tokens",
        "4",
        "--slug",
        slug,
        "--out",
        out.to_str().unwrap(),
    ])
    .await
}

fn report_of(out: &Path, slug: &str) -> Value {
    let art = util::read_json(&out.join(format!("{slug}.bakeoff.json")));
    util::assert_valid(&art);
    art["adapter"].clone()
}

fn describe(r: &Value) -> String {
    format!(
        "{}: KL(base ‖ adapter) mean {} [{}–{}] median {} max {}; self-check KL upper {} (passed {}); top-1 differs {}/{}, text {}",
        r["verdict"],
        r["kl"]["mean"],
        r["kl"]["low"],
        r["kl"]["high"],
        r["kl"]["median"],
        r["kl"]["max"],
        r["self_check"]["kl"]["high"],
        r["self_check"]["passed"],
        r["top1_differs"],
        r["measured"],
        r["text_differs"]
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lora_at_scale_1_is_applied_with_its_kl() {
    let (_g, dir) = serial_tempdir().await;
    let path = lora();
    let s = server(dir.path(), "scale-1", &["--lora", &path]).await;
    let out = dir.path().join("out");
    let p = prompts(dir.path(), 6);
    // By file name, as GET /lora-adapters lists the path.
    let o = check(
        &s.url(),
        "gemma-3-270m-test-lora-v1.gguf",
        &p,
        &out,
        "lora-scale-1",
    )
    .await;
    assert_eq!(code(&o), 0, "{}", text(&o));
    let r = report_of(&out, "lora-scale-1");
    eprintln!("scale 1: {}", describe(&r));
    assert_eq!(r["verdict"], "applied", "{r}");
    assert_eq!(r["route"]["kind"], "llamacpp-lora");
    assert_eq!(r["route"]["lora"]["id"], 0);
    assert_eq!(r["route"]["lora"]["scale"], 1.0);
    assert_eq!(r["route"]["lora"]["path"], path.as_str());
    // The instrument check: the base against itself is exactly 0 on a deterministic server.
    assert_eq!(r["self_check"]["passed"], true);
    assert_eq!(r["self_check"]["kl"]["high"], 0.0);
    let kl = &r["kl"];
    let (low, mean, high) = (
        kl["low"].as_f64().unwrap(),
        kl["mean"].as_f64().unwrap(),
        kl["high"].as_f64().unwrap(),
    );
    assert!(low > r["noise_floor_nats"].as_f64().unwrap(), "{r}");
    assert!(low <= mean && mean <= high && mean > 0.0, "{kl}");
    assert_eq!(r["measured"], 6);
    assert!(r["top1_differs"].as_u64().unwrap() > 0, "{r}");

    // Three requests a prompt, journaled: base and base again with every adapter off, the
    // adapter at its served scale; the same text behind one prefix; llama.cpp's cache off.
    let art = valid_artifact(&out, ".bakeoff.json");
    let items = art["suites"]["adapter"]["items"].as_array().unwrap();
    assert_eq!(items.len(), 18);
    for it in items {
        let req = &it["request"];
        let want = if it["extra"]["leg"] == "adapter" {
            1.0
        } else {
            0.0
        };
        assert_eq!(
            req["lora"],
            serde_json::json!([{"id": 0, "scale": want}]),
            "{it}"
        );
        assert_eq!(req["cache_prompt"], false);
        assert_eq!(req["temperature"], 0.0);
        assert_eq!(req["top_logprobs"], 20);
        assert_eq!(req["max_tokens"], 4);
    }
    let first_text = |i: usize| items[i]["request"]["messages"][0]["content"].clone();
    assert_eq!(first_text(0), first_text(1));
    assert_eq!(first_text(0), first_text(2));
    assert_ne!(first_text(0), first_text(3), "a prompt of its own per row");
    let journal = util::only_file(&out, ".journal.jsonl");
    assert_eq!(
        std::fs::read_to_string(journal).unwrap().lines().count(),
        18
    );
    assert!(
        stdout(&o).contains("\napplied: KL(base ‖ adapter)"),
        "{}",
        stdout(&o)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lora_at_scale_0_is_a_no_op_until_its_scale_is_set() {
    let (_g, dir) = serial_tempdir().await;
    let path = lora();
    let scaled = format!("{path}:0");
    let s = server(dir.path(), "scale-0", &["--lora-scaled", &scaled]).await;
    let out = dir.path().join("out");
    let p = prompts(dir.path(), 6);

    // An adapter the server does not list: a usage error that names what it does list.
    let o = check(&s.url(), "other.gguf", &p, &out, "lora-missing").await;
    assert_eq!(code(&o), 2, "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        err.contains("\"other.gguf\" is not loaded")
            && err.contains("gemma-3-270m-test-lora-v1.gguf")
            && err.contains("scale 0"),
        "{err}"
    );

    // Loaded at scale 0: served, listed, and doing nothing.
    let o = check(&s.url(), "0", &p, &out, "lora-scale-0").await;
    assert_eq!(code(&o), 1, "{}", text(&o));
    let r = report_of(&out, "lora-scale-0");
    eprintln!("scale 0: {}", describe(&r));
    assert_eq!(r["verdict"], "adapter-no-op", "{r}");
    assert_eq!(r["route"]["lora"]["scale"], 0.0);
    assert_eq!(r["self_check"]["passed"], true);
    assert_eq!(r["kl"]["mean"], 0.0);
    assert_eq!(r["kl"]["high"], 0.0);
    assert_eq!(r["top1_differs"], 0);
    assert_eq!(r["text_differs"], 0);
    let out_text = stdout(&o);
    assert!(
        out_text.contains("\nadapter-no-op: ") && out_text.contains("at scale 0"),
        "{out_text}"
    );

    // The server-wide scale set to 1 (tools/server/README.md POST /lora-adapters): the same
    // adapter, measured at the scale now served, is applied.
    let url = bakeoff_client::EndpointUrl::parse(&s.url()).unwrap();
    let (status, _) = bakeoff_client::Client::new(url.clone(), Default::default())
        .control(
            bakeoff_client::Method::Post,
            url.root_path("lora-adapters"),
            Some(&serde_json::json!([{"id": 0, "scale": 1.0}])),
            std::time::Duration::from_secs(30),
        )
        .await
        .unwrap();
    assert_eq!(status, 200);
    let o = check(&s.url(), "0", &p, &out, "lora-scale-set-1").await;
    assert_eq!(code(&o), 0, "{}", text(&o));
    let r = report_of(&out, "lora-scale-set-1");
    eprintln!("scale set to 1: {}", describe(&r));
    assert_eq!(r["verdict"], "applied");
    assert_eq!(r["route"]["lora"]["scale"], 1.0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_base_whose_replicas_differ_gets_no_verdict() {
    let (_g, dir) = serial_tempdir().await;
    let plain = server(dir.path(), "replica-a", &[]).await;
    let other = server(dir.path(), "replica-b", &["-ctk", "q4_0", "-ctv", "q4_0"]).await;
    // A gateway: `base` is two deployments that differ (LiteLLM's default simple-shuffle picks
    // one at random per request), `tuned` is one of them. The base then disagrees with itself,
    // and that noise must not read as an applied adapter.
    let cfg = dir.path().join("litellm.yaml");
    bakeoff_testkit::litellm::write_config(
        &cfg,
        &[
            ("base", &plain.url()),
            ("base", &other.url()),
            ("tuned", &other.url()),
        ],
    );
    let proxy = Proxy::start(&cfg, dir.path()).await;
    let out = dir.path().join("out");
    // 12 prompts: the check passes by chance only if every prompt's two base requests land on
    // the same replica, (1/2)^12.
    let p = prompts(dir.path(), 12);
    let o = util::bakeoff_cmd()
        .env("ADAPTER_TEST_KEY", &proxy.key)
        .args([
            "eval",
            "adapter",
            "--endpoint",
            &proxy.url,
            "--base",
            "base",
            "--adapter",
            "tuned",
            "--api-key-env",
            "ADAPTER_TEST_KEY",
            "--prompts",
            p.to_str().unwrap(),
            "--max-tokens",
            "2",
            "--slug",
            "replicas",
            "--out",
            out.to_str().unwrap(),
        ])
        .output_bounded()
        .unwrap();
    assert_eq!(code(&o), 1, "{}\n{}", text(&o), proxy.log_tail());
    let r = report_of(&out, "replicas");
    eprintln!(
        "replicas behind a gateway: self-check KL mean {} (upper {}), top-1 differed on {}",
        r["self_check"]["kl"]["mean"],
        r["self_check"]["kl"]["high"],
        r["self_check"]["top1_differs"]
    );
    assert_eq!(r["verdict"], "withheld", "{r}");
    assert_eq!(r["route"]["kind"], "model-id");
    assert_eq!(r["self_check"]["passed"], false);
    assert!(r.get("kl").is_none(), "no figure when withheld: {r}");
    let art = valid_artifact(&out, ".bakeoff.json");
    let flags = art["suites"]["adapter"]["summary"]["flags"]
        .as_array()
        .unwrap();
    assert!(
        flags
            .iter()
            .any(|f| f["code"] == "self-check-failed" && f["severity"] == "invalid"),
        "{flags:?}"
    );
    assert!(stdout(&o).contains("\nwithheld: the base disagreed with itself"));
    let written = std::fs::read_to_string(util::only_file(&out, ".bakeoff.json")).unwrap();
    assert!(!written.contains(&proxy.key));
}

/// Kept beside the real vLLM's test (`vllm_tier::adapter`): it alone shows the case as vLLM
/// 0.24.0 served it (an adapter with a non-zero update that the release ignored) and the
/// 0.24.0 version note; the real tier shows the same verdict on a real zero-update adapter.
#[tokio::test(flavor = "multi_thread")]
async fn vllm_serves_the_adapter_as_its_own_model_id() {
    let dir = bakeoff_testkit::tempdir();
    let out = dir.path().join("out");
    let p = prompts(dir.path(), 6);

    // The finding of docs/field-cases.md F6: the adapter is listed, answers, and applies nothing.
    let noop = bakeoff_testkit::scripted::serve(vllm_lora::vllm_with_lora(Lora::NoOp)).await;
    let o = check(&noop.url(), vllm_lora::ADAPTER, &p, &out, "vllm-noop").await;
    assert_eq!(code(&o), 1, "{}", text(&o));
    let r = report_of(&out, "vllm-noop");
    assert_eq!(r["verdict"], "adapter-no-op", "{r}");
    assert_eq!(r["route"]["kind"], "model-id");
    // No --base: the adapter's `parent` in /v1/models names it.
    assert_eq!(r["route"]["base_model"], vllm_lora::BASE);
    assert_eq!(r["route"]["parent"], vllm_lora::BASE);
    assert_eq!(r["route"]["root"], "/loras/tuned");
    assert!(stdout(&o).contains("vLLM 0.24.0"), "{}", stdout(&o));
    let art = valid_artifact(&out, "vllm-noop.bakeoff.json");
    for it in art["suites"]["adapter"]["items"].as_array().unwrap() {
        let want = if it["extra"]["leg"] == "adapter" {
            vllm_lora::ADAPTER
        } else {
            vllm_lora::BASE
        };
        assert_eq!(it["request"]["model"], want);
        assert!(it["request"].get("lora").is_none());
        assert!(
            it["request"]["cache_salt"].is_string(),
            "vLLM's prefix cache is salted"
        );
    }

    let applied = bakeoff_testkit::scripted::serve(vllm_lora::vllm_with_lora(Lora::Applied)).await;
    let o = check(&applied.url(), vllm_lora::ADAPTER, &p, &out, "vllm-applied").await;
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert_eq!(report_of(&out, "vllm-applied")["verdict"], "applied");

    // An id vLLM does not serve: a usage error listing what it does.
    let o = check(&applied.url(), "sql-lora", &p, &out, "vllm-missing").await;
    assert_eq!(code(&o), 2, "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        err.contains("\"sql-lora\" is not served here") && err.contains("\"tuned\""),
        "{err}"
    );
}
