//! `bakeoff plan`, `bakeoff kv` and `bakeoff audit` as processes: the plan without a GPU
//! (this machine has none: claims are printed, measured usage is said to be unavailable, the
//! command does not fail), the checkpoint audit catching seed 003's compressed-tensors crash
//! loop (exit 1), and the template audit of the real llama-server's template.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::process::{Command, Output};

fn bakeoff(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bakeoff"))
        .args(args)
        .output()
        .unwrap()
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn s(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn plan_without_a_gpu_prints_claims_and_says_measured_usage_is_unavailable() {
    let fleet = root().join("crates/bakeoff/tests/fixtures/fleet-seed-003.toml");
    let out = bakeoff(&[
        "plan",
        "--fleet",
        fleet.to_str().unwrap(),
        "--gpu-memory-gib",
        "94.97",
    ]);
    let text = s(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}{}", s(&out.stderr));
    assert!(text.contains("measured usage unavailable"), "{text}");
    assert!(
        text.contains("budget = gpu_memory_utilization 0.43 × total 94.97 GiB = 40.84 GiB"),
        "{text}"
    );
    assert!(
        text.contains("utilization flags: 0.94 of the card"),
        "{text}"
    );
    assert!(
        text.contains("since v0.21 CUDA graphs are estimated inside the budget"),
        "{text}"
    );

    // JSON: both sources side by side, each saying why it is unavailable.
    let out = bakeoff(&[
        "plan",
        "--fleet",
        fleet.to_str().unwrap(),
        "--json",
        "--gpu-memory-gib",
        "94.97",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["nvml"]["unavailable"].as_str().unwrap().contains("NVML"));
    assert!(v["nvidia_smi"]["unavailable"].is_string());
    assert_eq!(v["measured_from"], serde_json::Value::Null);
    assert_eq!(v["gpus"][0]["seats"].as_array().unwrap().len(), 2);

    // Coexistence with the arithmetic; a margin larger than what is left makes it a "no" (1).
    let out = bakeoff(&[
        "plan",
        "--fleet",
        fleet.to_str().unwrap(),
        "--gpu-memory-gib",
        "94.97",
        "--coexist",
        "gen,char-rp",
        "--gpu",
        "0",
        "--margin",
        "5",
    ]);
    let text = s(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("sum 90.27 GiB of 94.97 GiB: 4.70 GiB left, margin 5.00 GiB"),
        "{text}"
    );
    assert!(
        text.contains("NO: gen and char-rp leave 4.70 GiB"),
        "{text}"
    );
}

#[test]
fn audit_checkpoint_catches_compressed_tensors_on_bf16_weights() {
    let bf16 = root().join("crates/bakeoff-model/tests/fixtures/checkpoints/gemma-3-27b-it-bf16");
    let out = bakeoff(&[
        "audit",
        "checkpoint",
        bf16.to_str().unwrap(),
        "--quantization",
        "compressed-tensors",
    ]);
    let text = s(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}{}", s(&out.stderr));
    assert!(text.contains("ERROR [quantization-mismatch]"), "{text}");
    assert!(
        text.contains("CompressedTensorsConfig.__init__() missing 3 required positional arguments"),
        "{text}"
    );
    assert!(
        text.contains("quantization_config: none (unquantized)"),
        "{text}"
    );
    assert!(text.contains("Gemma3ForConditionalGeneration"), "{text}");
    // Without the flag the same checkpoint passes.
    let out = bakeoff(&["audit", "checkpoint", bf16.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", s(&out.stdout));
}

#[test]
fn kv_from_config_with_the_pool_ratio() {
    let cfg = root().join("crates/bakeoff-model/tests/fixtures/configs/llama-3-8b.json");
    let out = bakeoff(&[
        "kv",
        cfg.to_str().unwrap(),
        "--budget-gib",
        "16",
        "--max-model-len",
        "32768",
    ]);
    let text = s(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}{}", s(&out.stderr));
    // 32 layers × 8 KV heads × 128 × 2 (K, V) × 2 B = 131,072 B/token; 16 GiB → 131,072 tokens.
    assert!(text.contains("131072 B (128.0 KiB) per token"), "{text}");
    assert!(
        text.contains("131072 tokens; the pool holds 4.00× a full-length (32768-token) sequence"),
        "{text}"
    );
}

#[tokio::test]
async fn audit_template_of_the_real_llama_server() {
    let _g = bakeoff_testkit::serial().await;
    let dir = bakeoff_testkit::tempdir();
    let server = bakeoff_testkit::real_llama(8192, 1, &[], dir.path()).await;
    let url = server.url();
    let fixtures = root().join("crates/bakeoff-text/tests/fixtures/templates");
    let reference = fixtures.join("llama-server-b11434-default.jinja");
    let chatml = fixtures.join("chatml.jinja");
    let gemma = fixtures.join("gemma-3-it.jinja");
    let out = tokio::task::spawn_blocking(move || {
        bakeoff(&[
            "audit",
            "template",
            &url,
            chatml.to_str().unwrap(),
            gemma.to_str().unwrap(),
            "--reference",
            reference.to_str().unwrap(),
        ])
    })
    .await
    .unwrap();
    let text = s(&out.stdout);
    // gemma-3-it does not match the reference: exit 1 (checked and failed).
    assert_eq!(out.status.code(), Some(1), "{text}{}", s(&out.stderr));
    let rows: Vec<&str> = text.lines().collect();
    let endpoint_row = rows.iter().find(|l| l.starts_with("http://")).unwrap();
    // The endpoint's template is the captured b11434 default: same normalized hash and line count.
    let fp = bakeoff_text::fingerprint(
        &std::fs::read_to_string(fixtures.join("llama-server-b11434-default.jinja")).unwrap(),
    );
    assert!(
        endpoint_row.contains(&fp.short) && endpoint_row.contains(" yes "),
        "{endpoint_row}"
    );
    assert!(
        endpoint_row.split_whitespace().nth(1) == Some(fp.lines.to_string().as_str()),
        "{endpoint_row}"
    );
    // ChatML renders the same prompt though its text hashes differently.
    assert!(text.contains("chatml.jinja: identical prompt"), "{text}");
    assert!(
        rows.iter()
            .any(|l| l.contains("gemma-3-it.jinja") && l.contains(" NO ")),
        "{text}"
    );
    assert!(
        text.contains("gemma-3-it.jinja: prompt differs") && text.contains("+<start_of_turn>model"),
        "{text}"
    );
    drop(server);
}
