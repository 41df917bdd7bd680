//! `bakeoff eval damage` against the real llama-server (docs/suites.md "Damage"): the first-token
//! distribution of each prompt from `top_logprobs`, KL(reference ‖ candidate) with its bootstrap
//! interval, and the instrument check — the reference against itself — that withholds the
//! figure when it fails.
//!
//! - the same server against itself: KL exactly 0, the check passes, the figure is "within
//!   noise";
//! - the same model with a quantized KV cache (`-ctk q4_0 -ctv q4_0`): KL above the noise floor
//!   with its interval;
//! - a reference that is really two differing replicas behind the real LiteLLM proxy (its
//!   default `simple-shuffle` routing picks one at random per request): the same text gets two
//!   different distributions, the check fails and the figure is withheld;
//! - vLLM's refusal of a K above `--max-logprobs` (a scripted fixture: no vLLM here).

use crate::util::Bounded;
use std::process::Output;

use axum::Json;
use axum::Router;
use axum::http::StatusCode;
use axum::routing::{get, post};
use bakeoff_testkit::litellm::Proxy;
use bakeoff_testkit::scripted::{self, chat_stream};
use serde_json::{Value, json};

use crate::util::{
    self, code, first_prompts as prompts, logged_llama as server, read_json, serial_tempdir,
    stdout, text, valid_artifact,
};

async fn damage(args: &[&str]) -> Output {
    let mut all = vec!["eval", "damage"];
    all.extend(args);
    util::bakeoff_async(&all).await
}

fn damage_of(art: &Value) -> &Value {
    &art["suites"]["damage"]["summary"]["damage"]
}

#[tokio::test(flavor = "multi_thread")]
async fn the_same_server_against_itself_is_zero_and_the_check_passes() {
    let (_g, dir) = serial_tempdir().await;
    let s = server(dir.path(), "one", &[]).await;
    let url = s.url();
    let out = dir.path().join("out");
    let p = prompts(dir.path(), 10);
    let o = damage(&[
        "--endpoint",
        &url,
        "--reference",
        &url,
        "--prompts",
        p.to_str().unwrap(),
        "--tokens",
        "0",
        "--out",
        out.to_str().unwrap(),
    ])
    .await;
    assert_eq!(code(&o), 0, "{}", text(&o));
    let art = valid_artifact(&out, ".bakeoff.json");
    let d = damage_of(&art);
    eprintln!(
        "self-check KL {} (upper {}); candidate KL {} [{}–{}]",
        d["self_check"]["kl"]["mean"],
        d["self_check"]["kl"]["high"],
        d["kl"]["mean"],
        d["kl"]["low"],
        d["kl"]["high"]
    );
    assert_eq!(d["self_check"]["passed"], true);
    // A deterministic server: bit-identical logprobs, KL exactly 0 on every prompt.
    assert_eq!(d["self_check"]["kl"]["high"], 0.0);
    assert_eq!(d["kl"]["mean"], 0.0);
    assert_eq!(d["kl"]["high"], 0.0);
    assert_eq!(d["kl"]["n"], 10);
    assert_eq!(d["top1_differs"]["successes"], 0);
    assert_eq!(d["beyond_noise"], false, "{d}");
    assert!(d.get("withheld").is_none());

    // Every prompt: ONE prefix for its three requests, a different one per prompt, and each
    // request one token at temperature 0 with top_logprobs and llama.cpp's cache switched off.
    let items = art["suites"]["damage"]["items"].as_array().unwrap();
    assert_eq!(items.len(), 20);
    let prefix = |it: &Value| it["extra"]["prefix"].as_str().unwrap().to_owned();
    let mut seen = std::collections::BTreeSet::new();
    for it in items {
        let req = &it["request"];
        assert_eq!(req["max_tokens"], 1);
        assert_eq!(req["temperature"], 0.0);
        assert_eq!(req["logprobs"], true);
        assert_eq!(req["top_logprobs"], 20);
        assert_eq!(req["cache_prompt"], false);
        let content = req["messages"][0]["content"].as_str().unwrap();
        assert!(content.starts_with(&prefix(it)), "{content}");
        seen.insert(prefix(it));
    }
    assert_eq!(
        seen.len(),
        10,
        "one prefix per prompt, shared by its requests"
    );
    // Journaled as items finished: one line per item.
    let journal = util::only_file(&out, ".journal.jsonl");
    assert_eq!(
        std::fs::read_to_string(journal).unwrap().lines().count(),
        20
    );

    // `report` shows the figure in the candidate's row.
    let r = util::bakeoff_wide(&["report", out.to_str().unwrap()]);
    assert_eq!(code(&r), 0, "{}", text(&r));
    assert!(
        stdout(&r).contains("KL 0 [0–0] nats; top-1 ≠ 0% (within noise)"),
        "{}",
        stdout(&r)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_quantized_kv_cache_is_damage_beyond_noise_with_its_interval() {
    let (_g, dir) = serial_tempdir().await;
    let reference = server(dir.path(), "reference", &[]).await;
    let candidate = server(dir.path(), "q4_0-kv", &["-ctk", "q4_0", "-ctv", "q4_0"]).await;
    let out = dir.path().join("out");
    let p = prompts(dir.path(), 12);
    let o = damage(&[
        "--endpoint",
        &candidate.url(),
        "--reference",
        &reference.url(),
        "--prompts",
        p.to_str().unwrap(),
        "--tokens",
        "0",
        "--slug",
        "gemma-kv-q4-0",
        "--out",
        out.to_str().unwrap(),
    ])
    .await;
    assert_eq!(code(&o), 0, "{}", text(&o));
    let art = valid_artifact(&out, ".bakeoff.json");
    let d = damage_of(&art);
    let kl = &d["kl"];
    eprintln!(
        "q4_0 KV cache: self-check KL {} (upper {}); KL(reference ‖ candidate) mean {} [{}–{}], median {}, max {}; top-1 differs {}/{}; reference top-20 mass median {}",
        d["self_check"]["kl"]["mean"],
        d["self_check"]["kl"]["high"],
        kl["mean"],
        kl["low"],
        kl["high"],
        kl["median"],
        kl["max"],
        d["top1_differs"]["successes"],
        d["top1_differs"]["n"],
        d["reference_listed_mass_median"]
    );
    assert_eq!(d["self_check"]["passed"], true);
    let (low, mean, high) = (
        kl["low"].as_f64().unwrap(),
        kl["mean"].as_f64().unwrap(),
        kl["high"].as_f64().unwrap(),
    );
    assert!(low > 0.0 && low <= mean && mean <= high, "{kl}");
    assert!(low > d["noise_floor_nats"].as_f64().unwrap(), "{d}");
    assert_eq!(d["beyond_noise"], true);
    // Each candidate item carries both lists and its own figure.
    let items = art["suites"]["damage"]["items"].as_array().unwrap();
    let cand: Vec<&Value> = items
        .iter()
        .filter(|i| i["extra"]["phase"] == "candidate")
        .collect();
    assert_eq!(cand.len(), 12);
    assert!(
        cand.iter()
            .all(|i| i["extra"]["reference"].as_array().unwrap().len() == 20)
    );
    assert!(
        text(&o).contains("beyond the instrument's noise"),
        "{}",
        text(&o)
    );

    // The HTML report carries the figure and escapes every token it shows.
    let r = util::bakeoff(&["report", out.to_str().unwrap()]);
    assert_eq!(code(&r), 0, "{}", text(&r));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("class=\"damage\""), "no damage section");
    assert!(html.contains("Self-check (the reference against itself"));
    assert!(
        !html.contains("<code>\"<"),
        "a token reached the page unescaped"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reference_whose_replicas_differ_fails_the_check_and_the_figure_is_withheld() {
    let (_g, dir) = serial_tempdir().await;
    let plain = server(dir.path(), "replica-a", &[]).await;
    let other = server(dir.path(), "replica-b", &["-ctk", "q4_0", "-ctv", "q4_0"]).await;
    // One model name, two deployments: LiteLLM's default routing (simple-shuffle) picks one at
    // random for each request, as a gateway in front of replicas does.
    let cfg = dir.path().join("litellm.yaml");
    bakeoff_testkit::litellm::write_config(
        &cfg,
        &[("reference", &plain.url()), ("reference", &other.url())],
    );
    let proxy = Proxy::start(&cfg, dir.path()).await;
    let out = dir.path().join("out");
    // 16 prompts: the check passes by chance only if every prompt's two requests land on the
    // same replica, (1/2)^16.
    let p = prompts(dir.path(), 16);
    let o = util::bakeoff_cmd()
        .env("DAMAGE_TEST_REFERENCE_KEY", &proxy.key)
        .args([
            "eval",
            "damage",
            "--endpoint",
            &plain.url(),
            "--reference",
            &proxy.url,
            "--reference-model",
            "reference",
            "--reference-api-key-env",
            "DAMAGE_TEST_REFERENCE_KEY",
            "--prompts",
            p.to_str().unwrap(),
            "--tokens",
            "0",
            "--out",
            out.to_str().unwrap(),
        ])
        .output_bounded()
        .unwrap();
    assert_eq!(code(&o), 1, "{}\n{}", text(&o), proxy.log_tail());
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        err.contains("damage figure withheld: self-check failed"),
        "{err}"
    );
    let art = valid_artifact(&out, ".bakeoff.json");
    let d = damage_of(&art);
    eprintln!(
        "replicas behind a gateway: self-check KL mean {} (upper {}), top-1 differed on {}",
        d["self_check"]["kl"]["mean"],
        d["self_check"]["kl"]["high"],
        d["self_check"]["top1_differs"]
    );
    assert_eq!(d["self_check"]["passed"], false);
    assert!(
        d["self_check"]["kl"]["high"].as_f64().unwrap()
            > d["self_check"]["limit_nats"].as_f64().unwrap()
    );
    // Never reported: no figure, no candidate request sent, and the flag says why.
    assert!(
        d.get("kl").is_none() && d.get("top1_differs").is_none(),
        "{d}"
    );
    assert!(
        d["withheld"]
            .as_str()
            .unwrap()
            .starts_with("self-check failed")
    );
    let items = art["suites"]["damage"]["items"].as_array().unwrap();
    assert_eq!(items.len(), 16);
    assert!(items.iter().all(|i| i["extra"]["phase"] == "self-check"));
    let flags = art["suites"]["damage"]["summary"]["flags"]
        .as_array()
        .unwrap();
    assert!(
        flags
            .iter()
            .any(|f| f["code"] == "self-check-failed" && f["severity"] == "invalid"),
        "{flags:?}"
    );
    // The proxy's key reached no file.
    let written = std::fs::read_to_string(util::only_file(&out, ".bakeoff.json")).unwrap();
    assert!(!written.contains(&proxy.key));
}

/// SmolLM2 135M as the "candidate" of a Gemma 3 270M reference: another model, another
/// tokenizer. Tokens are compared by the bytes they stand for, so the figure is defined, large,
/// and the artifact says the models differ.
#[tokio::test(flavor = "multi_thread")]
async fn another_model_with_another_tokenizer_is_strong_damage_and_noted() {
    let (_g, dir) = serial_tempdir().await;
    let reference = server(dir.path(), "gemma", &[]).await;
    let smol = util::smollm2_llama(dir.path(), "smollm2", &[]).await;
    let out = dir.path().join("out");
    let p = prompts(dir.path(), 10);
    let o = damage(&[
        "--endpoint",
        &smol.url(),
        "--reference",
        &reference.url(),
        "--prompts",
        p.to_str().unwrap(),
        "--tokens",
        "16",
        "--out",
        out.to_str().unwrap(),
    ])
    .await;
    assert_eq!(code(&o), 0, "{}", text(&o));
    let art = valid_artifact(&out, ".bakeoff.json");
    let d = damage_of(&art);
    // Two tokenizers: no teacher forcing, agreement by character, and the reason recorded.
    let along = &d["along"];
    assert!(
        along["forcing_missing"]
            .as_str()
            .is_some_and(|w| w.contains("other tokens than the reference")),
        "{along}"
    );
    assert!(along.get("token_kl").is_none(), "{along}");
    assert_eq!(along["greedy_identical"]["n"], 10, "{along}");
    eprintln!(
        "SmolLM2 vs Gemma: KL mean {} [{}–{}], top-1 differs {}/{}",
        d["kl"]["mean"],
        d["kl"]["low"],
        d["kl"]["high"],
        d["top1_differs"]["successes"],
        d["top1_differs"]["n"]
    );
    assert_eq!(d["beyond_noise"], true);
    assert!(d["kl"]["low"].as_f64().unwrap() > 0.1, "{d}");
    let notes = d["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().contains("named differently")),
        "{notes:?}"
    );
}

/// vLLM refuses `top_logprobs` above its `--max-logprobs` (default 20) with a 400
/// (vllm/v1/engine/processor.py `_validate_logprobs`: "Requested sample logprobs of N, which
/// is greater than max allowed: 20"); llama.cpp takes any K, so only a fixture shows it.
fn vllm_max_logprobs_20() -> Router {
    Router::new()
        .route(
            "/version",
            get(|| async { scripted::json(StatusCode::OK, json!({"version": "0.11.0"})) }),
        )
        .route(
            "/v1/models",
            get(|| async {
                scripted::json(
                    StatusCode::OK,
                    json!({"object":"list","data":[{"id":"stock","object":"model","owned_by":"vllm","root":"stock","parent":null,"max_model_len":4096}]}),
                )
            }),
        )
        .route(
            "/v1/chat/completions",
            post(|Json(body): Json<Value>| async move {
                let k = body["top_logprobs"].as_u64().unwrap_or(0);
                if k > 20 {
                    return scripted::json(
                        StatusCode::BAD_REQUEST,
                        json!({"error": {"message": format!("Requested sample logprobs of {k}, which is greater than max allowed: 20 (parameter=logprobs, value={k})"), "type": "BadRequestError", "param": "logprobs", "code": 400}}),
                    );
                }
                chat_stream(&["Hello"], &[], "stop", 1)
            }),
        )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_top_k_the_server_refuses_is_one_line_naming_top_k() {
    let srv = scripted::serve(vllm_max_logprobs_20()).await;
    let dir = bakeoff_testkit::tempdir();
    let out = dir.path().join("out");
    let o = damage(&[
        "--endpoint",
        &srv.url(),
        "--reference",
        &srv.url(),
        "--top-k",
        "50",
        "--out",
        out.to_str().unwrap(),
    ])
    .await;
    assert_eq!(code(&o), 1, "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let line = err
        .lines()
        .find(|l| l.starts_with("damage not measured:"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        line.contains("refused top_logprobs = 50") && line.contains("lower --top-k"),
        "{line}"
    );
    let fail = read_json(&util::only_file(&out, ".failure.json"));
    util::assert_valid(&fail);
    assert_eq!(fail["failure"]["class"], "not-measurable");
}

/// llama-server b11434's chat reply when its one token ends inside a multi-byte character (an
/// emoji that opens a greeting): the raw byte, serialized as `\ufffd` (common/json.cpp dumps
/// with `error_handler_t::replace`), and no `logprobs` key, because the token never reached
/// the slot's probabilities (tools/server/server-context.cpp `process_token`: only a text that
/// `validate_utf8` passes is `add_token`ed; server-task.cpp `to_json_oaicompat_chat` writes
/// `logprobs` only when `probs_output` is not empty). Every other prompt gets a normal list.
/// `/completion` is llama-server's native route as server-task.cpp `to_json_non_oaicompat`
/// and `probs_vector_to_json` write it: `tokens` (with `return_tokens`) holds the sampled id
/// even when its text is incomplete; with that id banned (`logit_bias: [[id, false]]`,
/// server-schema.cpp) the next pick is complete and `completion_probabilities[0].top_logprobs`
/// lists the raw top-n of the same position, the banned token among them. `native` off:
/// `/completion` is not served (a 404), as through a proxy that routes only the OpenAI paths.
fn llamacpp_emoji(native: bool, all_emoji: bool) -> Router {
    const EMOJI_ID: u64 = 9283;
    let listed = || {
        json!([
            {"id": 19556, "token": "Hello", "bytes": [72,101,108,108,111], "logprob": -0.6},
            {"id": EMOJI_ID, "token": "", "bytes": [240,159,145], "logprob": -0.9},
            {"id": 12, "token": "Hi", "bytes": [72,105], "logprob": -2.5}
        ])
    };
    let emoji = move |text: &str| all_emoji || text.contains("Wave");
    let mut r = Router::new()
        .route(
            "/props",
            get(|| async {
                scripted::json(StatusCode::OK, json!({"build_info":"b11434-scripted","default_generation_settings":{"n_ctx":4096},
                    "total_slots":1,"model_path":"/m/smollm2-q4_1.gguf","model_ftype":"Q4_1",
                    "chat_template":"{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}<|im_start|>assistant\n"}))
            }),
        )
        .route(
            "/v1/models",
            get(|| async { scripted::json(StatusCode::OK, json!({"object":"list","data":[{"id":"smollm2","object":"model","owned_by":"llamacpp","meta":{"n_ctx_train":8192}}]})) }),
        )
        .route(
            "/apply-template",
            post(|Json(b): Json<Value>| async move {
                let text: String = b["messages"].as_array().into_iter().flatten()
                    .map(|m| m["content"].as_str().unwrap_or("").to_string()).collect();
                scripted::json(StatusCode::OK, json!({"prompt": format!("<|im_start|>user\n{text}<|im_end|>\n<|im_start|>assistant\n")}))
            }),
        )
        .route(
            "/v1/chat/completions",
            post(move |Json(b): Json<Value>| async move {
                let text = b["messages"].to_string();
                if b["stream"].as_bool() == Some(true) {
                    return chat_stream(&["Hello"], &[], "length", 1);
                }
                let mut choice = json!({"finish_reason":"length","index":0,
                    "message":{"role":"assistant","content":"Hello"}});
                if emoji(&text) {
                    choice["message"]["content"] = "\u{fffd}".into();
                } else {
                    choice["logprobs"] = json!({"content":[{"id":19556,"token":"Hello","bytes":[72,101,108,108,111],
                        "logprob":-0.6,"top_logprobs": listed()}]});
                }
                scripted::json(StatusCode::OK, json!({"choices":[choice],"created":1,"model":"smollm2",
                    "object":"chat.completion","usage":{"completion_tokens":1,"prompt_tokens":20,"total_tokens":21}}))
            }),
        );
    if native {
        r = r.route(
            "/completion",
            post(move |Json(b): Json<Value>| async move {
                let banned = b["logit_bias"].as_array().is_some_and(|a| {
                    a.iter().any(|x| x[0].as_u64() == Some(EMOJI_ID) && x[1] == json!(false))
                });
                let mut res = json!({"index":0,"content":"\u{fffd}","tokens":[EMOJI_ID],"stop":true,
                    "model":"smollm2","tokens_predicted":1,"tokens_evaluated":20,"stop_type":"limit"});
                if banned {
                    res["content"] = "Hello".into();
                    res["tokens"] = json!([19556]);
                    res["completion_probabilities"] = json!([{"id":19556,"token":"Hello",
                        "bytes":[72,101,108,108,111],"logprob":-0.6,"top_logprobs": listed()}]);
                }
                scripted::json(StatusCode::OK, res)
            }),
        );
    }
    r
}

/// Four everyday prompts, one a greeting the model answers with an emoji first.
fn greeting_prompts(dir: &std::path::Path) -> std::path::PathBuf {
    let p = dir.join("greetings.jsonl");
    std::fs::write(
        &p,
        [
            r#"{"id": "capital", "prompt": "What is the capital of France?"}"#,
            r#"{"id": "wave", "prompt": "Wave at me, friend!"}"#,
            r#"{"id": "haiku", "prompt": "Write a haiku about rain."}"#,
            r#"{"id": "tea", "prompt": "How do I brew green tea?"}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    p
}

async fn damage_on(url: &str, prompts: &std::path::Path, out: &std::path::Path) -> Output {
    damage(&[
        "--endpoint",
        url,
        "--reference",
        url,
        "--prompts",
        prompts.to_str().unwrap(),
        "--tokens",
        "0",
        "--out",
        out.to_str().unwrap(),
    ])
    .await
}

/// One reply that starts inside a multi-byte character does not refuse the endpoint: its
/// distribution is read through llama.cpp's native `/completion`, and where that route is not
/// served the item is an instrument miss, counted and named, and the run goes on. Only an
/// endpoint none of whose replies carries logprobs is refused.
#[tokio::test(flavor = "multi_thread")]
async fn a_reply_inside_a_multibyte_character_is_one_item_not_the_endpoint() {
    let dir = bakeoff_testkit::tempdir();
    let prompts = greeting_prompts(dir.path());

    let srv = scripted::serve(llamacpp_emoji(true, false)).await;
    let out = dir.path().join("native");
    let o = damage_on(&srv.url(), &prompts, &out).await;
    assert_eq!(code(&o), 0, "{}", text(&o));
    let art = read_json(&util::only_file(&out, ".bakeoff.json"));
    util::assert_valid(&art);
    let d = damage_of(&art);
    assert_eq!(d["measured"], 4, "{d}");
    assert_eq!(d["kl"]["mean"], 0.0, "{d}");
    assert!(
        d["notes"].to_string().contains("native /completion")
            && d["notes"].to_string().contains("wave"),
        "{d}"
    );
    let items = art["suites"]["damage"]["items"].as_array().unwrap();
    assert!(items.iter().all(|i| i["outcome"] == "ok"), "{items:?}");

    let srv = scripted::serve(llamacpp_emoji(false, false)).await;
    let out = dir.path().join("miss");
    let o = damage_on(&srv.url(), &prompts, &out).await;
    assert_eq!(code(&o), 0, "{}", text(&o));
    let art = read_json(&util::only_file(&out, ".bakeoff.json"));
    util::assert_valid(&art);
    let d = damage_of(&art);
    assert_eq!(d["measured"], 3, "{d}");
    let flags = art["suites"]["damage"]["summary"]["flags"].to_string();
    assert!(
        flags.contains("instrument-miss") && flags.contains("self-check/wave"),
        "{flags}"
    );
    let miss = art["suites"]["damage"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["id"] == "self-check/wave")
        .unwrap();
    assert_eq!(miss["outcome"], "instrument-miss", "{miss}");

    let srv = scripted::serve(llamacpp_emoji(false, true)).await;
    let out = dir.path().join("none");
    let o = damage_on(&srv.url(), &prompts, &out).await;
    assert_eq!(code(&o), 1, "{}", text(&o));
    assert!(
        text(&o).contains("does not serve `logprobs`/`top_logprobs`"),
        "{}",
        text(&o)
    );
    let fail = read_json(&util::only_file(&out, ".failure.json"));
    assert_eq!(fail["failure"]["class"], "not-measurable");
}

/// The same on the real llama-server with SmolLM2-135M-Instruct (Q4_1): two everyday prompts
/// it answers with an emoji first (its first token `ð\u{9f}`, bytes F0 9F, an incomplete
/// character: the chat reply is `\ufffd` with no `logprobs`, measured here with llama.cpp
/// b11434) among ordinary ones. Every prompt is measured: the emoji items through the native
/// `/completion`, and the same server against itself is exactly 0.
#[tokio::test(flavor = "multi_thread")]
async fn the_real_llama_server_answering_with_an_emoji_first_is_measured() {
    let (_g, dir) = serial_tempdir().await;
    let smol = util::smollm2_llama(dir.path(), "smollm2", &[]).await;
    let p = dir.path().join("emoji.jsonl");
    std::fs::write(
        &p,
        [
            r#"{"id": "capital", "prompt": "What is the capital of France?"}"#,
            r#"{"id": "say-hi", "prompt": "Say hi with an emoji."}"#,
            r#"{"id": "tea", "prompt": "How do I brew green tea?"}"#,
            r#"{"id": "party", "prompt": "🎉 Party time! Respond with emojis."}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = damage_on(&smol.url(), &p, &out).await;
    assert_eq!(code(&o), 0, "{}", text(&o));
    let art = valid_artifact(&out, ".bakeoff.json");
    let d = damage_of(&art);
    assert_eq!(d["measured"], 4, "{d}");
    assert_eq!(d["kl"]["mean"], 0.0, "{d}");
    let notes = d["notes"].to_string();
    // Which of the two emoji prompts opens with a split character depends on the run's unique
    // prefixes; at least one does.
    assert!(
        notes.contains("native /completion")
            && (notes.contains("say-hi") || notes.contains("party")),
        "{notes}"
    );
    let items = art["suites"]["damage"]["items"].as_array().unwrap();
    assert!(items.iter().all(|i| i["outcome"] == "ok"), "{items:?}");
}
