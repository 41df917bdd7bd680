//! `bakeoff kv` as a process: KV-cache sizing from a config.json or a GGUF, cross-checked
//! against real engine logs (the real llama-server's, a cited vLLM one), budgets answered with
//! the largest context, and the training-context cap.

use crate::plan_audit::{fixture, kv_args, real_log, real_model, s, stdout_exiting};
use crate::util::{bakeoff, serial_tempdir};

#[test]
fn kv_from_config_with_the_pool_ratio() {
    let cfg = fixture("bakeoff-model/tests/fixtures/configs/llama-3-8b.json");
    let text = stdout_exiting(
        0,
        &kv_args(&cfg, &["--budget-gib", "16", "--max-model-len", "32768"]),
    );
    // 32 layers × 8 KV heads × 128 × 2 (K, V) × 2 B = 131,072 B/token; 16 GiB → 131,072 tokens.
    assert!(text.contains("131072 B (128.0 KiB) per token"), "{text}");
    assert!(
        text.contains("131072 tokens; the pool holds 4.00× a full-length (32768-token) sequence"),
        "{text}"
    );
}

#[test]
fn kv_of_a_gguf_checks_the_real_log_and_fails_when_the_flags_differ() {
    let gguf = real_model();
    let log = real_log();
    let args = |np: &str| {
        vec![
            "kv".to_owned(),
            gguf.to_str().unwrap().to_owned(),
            "--ctx".into(),
            "32768".into(),
            "--parallel".into(),
            np.into(),
            "--log".into(),
            log.to_str().unwrap().into(),
        ]
    };
    let a: Vec<String> = args("8");
    let text = stdout_exiting(0, &a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(text.matches("[matches the log]").count(), 2, "{text}");
    // -np 4 is not what the logged server ran with: both caches differ, exit 1 (checked and
    // failed), and the error names the mismatch.
    let a: Vec<String> = args("4");
    let out = bakeoff(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let text = s(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}{}", s(&out.stderr));
    assert!(text.contains("[NOT in the log]"), "{text}");
    assert!(
        s(&out.stderr).contains("do not match the log's KV lines"),
        "{}",
        s(&out.stderr)
    );
}

#[test]
fn kv_of_a_gguf_answers_a_budget_with_the_largest_context_and_prices_quantized_caches() {
    let gguf = real_model();
    // 216 MiB = 0.2109375 GiB: what -c 32768 -np 8 allocates on this model (96 + 120 MiB).
    let out = bakeoff(&kv_args(
        &gguf,
        &["--parallel", "8", "--budget-gib", "0.2109375"],
    ));
    let text = s(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}{}", s(&out.stderr));
    assert!(
        text.contains(
            "budget 0.21 GiB: llama-server -c 32768 (4096 tokens per sequence with -np 8); the pool holds 1.00× a full-length (32768-token) sequence"
        ),
        "{text}"
    );
    // q8_0 K and V (272 B per 256-element row instead of 512): the same budget holds -c 97816
    // (worked out in bakeoff-model's tests/it/gguf.rs); --max-model-len sets the ratio's length.
    let out = bakeoff(&kv_args(
        &gguf,
        &[
            "--parallel",
            "8",
            "--budget-gib",
            "0.2109375",
            "--cache-type-k",
            "q8_0",
            "--ctv",
            "q8_0",
            "--max-model-len",
            "8192",
            "--json",
        ],
    ));
    assert_eq!(out.status.code(), Some(0), "{}", s(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["capacity"]["ctx"], 97_816);
    assert_eq!(v["capacity"]["max_model_len"], 8192);
    assert_eq!(v["llamacpp"]["caches"][0]["k_bytes"], 272 * 3 * 4096 * 8);
    // An unknown cache type is a usage error naming the flag and the types (clap's words).
    let out = bakeoff(&kv_args(&gguf, &["--cache-type-v", "q9"]));
    assert_eq!(out.status.code(), Some(2), "{}", s(&out.stdout));
    let err = s(&out.stderr);
    assert!(
        err.contains("invalid value 'q9' for '--cache-type-v <TYPE>'")
            && err.contains(
                "[possible values: f16, bf16, f32, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl]"
            ),
        "{err}"
    );
    // Any case, as llama.cpp's names always were.
    let out = bakeoff(&kv_args(&gguf, &["--ctk", "Q8_0", "--ctv", "q8_0"]));
    assert_eq!(out.status.code(), Some(0), "{}", s(&out.stderr));
}

#[test]
fn kv_from_config_cross_checks_a_vllm_log() {
    // vLLM's two lines in the format of its sources (gpu_worker.py "Available KV
    // cache memory", kv_cache_utils.py one-line "GPU KV cache size … Maximum concurrency"),
    // with thousands separators, for a 16 GiB pool of the Llama-3-8B config.
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("vllm.log");
    std::fs::write(
        &log,
        "(EngineCore_DP0 pid=412) INFO 08-24 21:14:02 [gpu_worker.py:298] Available KV cache memory: 16.00 GiB\n\
         (EngineCore_DP0 pid=412) INFO 08-24 21:14:03 [kv_cache_utils.py:1087] GPU KV cache size: 131,072 tokens, Maximum concurrency for 32,768 tokens per request: 4.00x\n",
    )
    .unwrap();
    let cfg = fixture("bakeoff-model/tests/fixtures/configs/llama-3-8b.json");
    let text = stdout_exiting(
        0,
        &kv_args(
            &cfg,
            &["--max-model-len", "32768", "--log", log.to_str().unwrap()],
        ),
    );
    // The budget comes from the log when --budget-gib is absent.
    assert!(text.contains("budget 16.00 GiB: 131072 tokens"), "{text}");
    assert!(
        text.contains(
            "vLLM logged KV cache size: 131072 tokens (4.00× of 32768); computed +0.0% from it"
        ),
        "{text}"
    );
}

/// (docs/failure-classes.md) a real llama-server b11434 log at its default verbosity has no
/// `llama_kv_cache: size =` lines (they come at -lv 4). That is "not in the log", with the fix,
/// and exit 0 — never a mismatch.
#[tokio::test]
async fn kv_reads_a_default_verbosity_log_of_the_real_llama_server() {
    let (_g, dir) = serial_tempdir().await;
    let server = bakeoff_testkit::real_llama(32768, 8, &[], dir.path()).await;
    let log = server.log_path().clone();
    drop(server);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains("llama_kv_cache: size ="), "{text}");
    let gguf = real_model();
    let run = move |np: &'static str| {
        let (gguf, log) = (gguf.clone(), log.clone());
        tokio::task::spawn_blocking(move || {
            bakeoff(&kv_args(
                &gguf,
                &[
                    "--ctx",
                    "32768",
                    "--parallel",
                    np,
                    "--log",
                    log.to_str().unwrap(),
                ],
            ))
        })
    };
    let out = run("8").await.unwrap();
    let text = s(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}{}", s(&out.stderr));
    assert_eq!(
        text.matches("[not in the log (raise verbosity: -lv 4)]")
            .count(),
        2,
        "{text}"
    );
    assert!(!text.contains("NOT in the log"), "{text}");
    // What the default log does say — the slots and each one's context — is compared.
    assert!(
        text.contains("slots: -np 8, 4096 tokens each  [the log agrees: n_slots = 8, n_ctx_slot = 4096, kv_unified = false]"),
        "{text}"
    );
    // And still catches flags that are not the logged server's.
    let out = run("4").await.unwrap();
    let text = s(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}{}", s(&out.stderr));
    assert!(text.contains("[the log DISAGREES: n_slots = 8"), "{text}");
    assert!(!text.contains("NOT in the log"), "{text}");
}

/// (docs/failure-classes.md) a budget answer never passes the model's training context. On the test
/// model (32,768 tokens) 4 GiB of KV would allocate `-c 1392981`, but llama-server caps each
/// slot at 32,768: the answer is -c 32768, with the warning and the engine's own words. A
/// config.json asked for 262,144 tokens on an 8,192-token model is warned about likewise.
#[test]
fn kv_caps_budget_answers_at_the_training_context_and_warns() {
    let gguf = real_model();
    let text = stdout_exiting(0, &kv_args(&gguf, &["--budget-gib", "4"]));
    assert!(
        text.contains(
            "budget 4.00 GiB: llama-server -c 32768 (32768 tokens per sequence with -np 1)"
        ),
        "{text}"
    );
    assert!(
        text.contains("capped at the model's training context (32768 tokens per sequence × -np 1): the budget would hold -c 1392981"),
        "{text}"
    );
    assert!(
        text.lines().any(|l| l.starts_with("WARNING: ")
            && l.contains(
                "n_ctx_seq (1392981) > n_ctx_train (32768) -- possible training context overflow"
            )),
        "{text}"
    );
    let out = bakeoff(&kv_args(&gguf, &["--budget-gib", "4", "--json"]));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["capacity"]["ctx"], 32_768);
    assert_eq!(v["capacity"]["ctx_for_budget"], 1_392_981);
    assert_eq!(v["capacity"]["capped_at_training_context"], true);
    assert_eq!(v["warnings"].as_array().unwrap().len(), 1);
    // -np 8: each slot may hold 32,768, so the cap is 8 × 32,768.
    let out = bakeoff(&kv_args(&gguf, &["--budget-gib", "4", "--parallel", "8"]));
    let text = s(&out.stdout);
    assert!(
        text.contains(
            "budget 4.00 GiB: llama-server -c 262144 (32768 tokens per sequence with -np 8)"
        ),
        "{text}"
    );

    let cfg = fixture("bakeoff-model/tests/fixtures/configs/llama-3-8b.json");
    let text = stdout_exiting(
        0,
        &kv_args(&cfg, &["--max-model-len", "262144", "--budget-gib", "16"]),
    );
    let warning = text
        .lines()
        .find(|l| l.starts_with("WARNING: --max-model-len 262144"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        warning.contains("vLLM derives 8192 (max_position_embeddings=8192 in config.json)")
            && warning.contains("unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"),
        "{warning}"
    );
    assert!(text.contains("one 8192-token sequence: 1.00 GiB"), "{text}");
    assert!(
        text.contains("budget 16.00 GiB: 131072 tokens; the pool holds 16.00× a full-length (8192-token) sequence (capped at the model's 8192 tokens, not the 262144 asked)"),
        "{text}"
    );
}
