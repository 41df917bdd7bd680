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
    // A deep path, longer than the table's column: the row must keep the file name (CI checks
    // out under a longer root than a workstation does).
    let deep = dir.path().join("d".repeat(130));
    std::fs::create_dir_all(&deep).unwrap();
    let llama = deep.join("meta-llama-Llama-3.1-8B-Instruct.jinja");
    std::fs::copy(
        fixtures.join("meta-llama-Llama-3.1-8B-Instruct.jinja"),
        &llama,
    )
    .unwrap();
    let gemma2 = fixtures.join("google-gemma-2-2b-it.jinja");
    let out = tokio::task::spawn_blocking(move || {
        bakeoff(&[
            "audit",
            "template",
            &url,
            llama.to_str().unwrap(),
            gemma2.to_str().unwrap(),
            "--reference",
            reference.to_str().unwrap(),
        ])
    })
    .await
    .unwrap();
    let text = s(&out.stdout);
    // The real Llama 3.1 and Gemma 2 templates do not match the reference: exit 1 (checked
    // and failed).
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
    assert!(
        rows.iter()
            .any(|l| l.contains("meta-llama-Llama-3.1-8B-Instruct.jinja")
                && l.contains("93c0e9aa3629bbd7")
                && l.contains(" NO ")),
        "{text}"
    );
    // Gemma 2 refuses a system turn: the table says so rather than rendering nothing.
    assert!(
        rows.iter().any(|l| l.contains("google-gemma-2-2b-it.jinja")
            && l.contains("template raised: System role not supported")),
        "{text}"
    );
    assert!(
        text.contains("meta-llama-Llama-3.1-8B-Instruct.jinja: prompt differs")
            && text.contains("+<s><|start_header_id|>system<|end_header_id|>")
            && text.contains("-<|im_start|>system"),
        "{text}"
    );
    drop(server);
}

fn real_model() -> PathBuf {
    let cache = std::env::var_os("BAKEOFF_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/bakeoff")))
        .unwrap();
    let p = cache.join("models/gemma-3-270m-q4_k_m.gguf");
    assert!(p.is_file(), "{} is not provisioned", p.display());
    p
}

/// The real llama-server b11434 log of `-c 32768 -np 8` on the test model.
fn real_log() -> PathBuf {
    root().join(
        "crates/bakeoff-model/tests/fixtures/logs/llama-server-b11434-gemma-3-270m-c32768-np8.log",
    )
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
    let out = bakeoff(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let text = s(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}{}", s(&out.stderr));
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
    let out = bakeoff(&[
        "kv",
        gguf.to_str().unwrap(),
        "--parallel",
        "8",
        "--budget-gib",
        "0.2109375",
    ]);
    let text = s(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}{}", s(&out.stderr));
    assert!(
        text.contains(
            "budget 0.21 GiB: llama-server -c 32768 (4096 tokens per sequence with -np 8); the pool holds 1.00× a full-length (32768-token) sequence"
        ),
        "{text}"
    );
    // q8_0 K and V (272 B per 256-element row instead of 512): the same budget holds -c 97816
    // (worked out in bakeoff-model's tests/gguf.rs); --max-model-len sets the ratio's length.
    let out = bakeoff(&[
        "kv",
        gguf.to_str().unwrap(),
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
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", s(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["capacity"]["ctx"], 97_816);
    assert_eq!(v["capacity"]["max_model_len"], 8192);
    assert_eq!(v["llamacpp"]["caches"][0]["k_bytes"], 272 * 3 * 4096 * 8);
    // An unknown cache type is a usage error naming the flag and the types.
    let out = bakeoff(&["kv", gguf.to_str().unwrap(), "--cache-type-v", "q9"]);
    assert_eq!(out.status.code(), Some(2), "{}", s(&out.stdout));
    assert!(
        s(&out.stderr).contains("--cache-type-v q9: not a llama.cpp cache type"),
        "{}",
        s(&out.stderr)
    );
}

#[test]
fn kv_from_config_cross_checks_a_vllm_log() {
    // vLLM's two lines in the format engine-facts.md §1 quotes (gpu_worker.py "Available KV
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
    let cfg = root().join("crates/bakeoff-model/tests/fixtures/configs/llama-3-8b.json");
    let out = bakeoff(&[
        "kv",
        cfg.to_str().unwrap(),
        "--max-model-len",
        "32768",
        "--log",
        log.to_str().unwrap(),
    ]);
    let text = s(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}{}", s(&out.stderr));
    // The budget comes from the log when --budget-gib is absent.
    assert!(text.contains("budget 16.00 GiB: 131072 tokens"), "{text}");
    assert!(
        text.contains(
            "vLLM logged GPU KV cache size: 131072 tokens (4.00× of 32768); computed +0.0% from it"
        ),
        "{text}"
    );
}

#[test]
fn plan_falls_back_to_nvidia_smi_and_maps_a_pid_to_its_seat_by_port() {
    // No NVML on this machine (no libnvidia-ml.so.1): the plan runs a fake nvidia-smi that
    // prints the fixtures in nvidia-smi's documented `--format=csv,noheader,nounits` output
    // (crates/bakeoff-plan/tests/fixtures/nvidia-smi/README.md). The compute-apps line of
    // seat `gen` carries the PID of a real process here whose command line has `--port 8010`,
    // as a process seat's does.
    let tmp = tempfile::tempdir().unwrap();
    let mut seat = Command::new("sh")
        .args(["-c", "sleep 120; :", "seat-gen", "--port", "8010"])
        .spawn()
        .unwrap();
    let fixtures = root().join("crates/bakeoff-plan/tests/fixtures/nvidia-smi");
    std::fs::copy(
        fixtures.join("query-gpu.csv"),
        tmp.path().join("query-gpu.csv"),
    )
    .unwrap();
    let apps = std::fs::read_to_string(fixtures.join("compute-apps.csv"))
        .unwrap()
        .replace(", 41822, ", &format!(", {}, ", seat.id()));
    std::fs::write(tmp.path().join("compute-apps.csv"), apps).unwrap();
    let smi = tmp.path().join("nvidia-smi");
    std::fs::write(
        &smi,
        format!(
            "#!/bin/sh\ncase \"$1\" in\n  --query-gpu=*) cat {0}/query-gpu.csv ;;\n  --query-compute-apps=*) cat {0}/compute-apps.csv ;;\n  *) exit 2 ;;\nesac\n",
            tmp.path().display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&smi, std::fs::Permissions::from_mode(0o755)).unwrap();

    let fleet = root().join("crates/bakeoff/tests/fixtures/fleet-seed-003.toml");
    let out = bakeoff(&[
        "plan",
        "--fleet",
        fleet.to_str().unwrap(),
        "--nvidia-smi",
        smi.to_str().unwrap(),
    ]);
    let _ = seat.kill();
    let _ = seat.wait();
    let text = s(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}{}", s(&out.stderr));
    assert!(text.contains("measured usage from nvidia-smi"), "{text}");
    assert!(
        text.contains("GPU 0 on ana-ml2 (NVIDIA H200): total 140.40 GiB [nvidia-smi]"),
        "{text}"
    );
    // 46694 MiB = 45.60 GiB, mapped to `gen` through the port on its command line.
    assert!(
        text.contains(&format!(
            "holds 45.60 GiB measured (pids [{}], by port 8010)",
            seat.id()
        )),
        "{text}"
    );
    // The `[N/A]` process maps to no seat and is listed as another process.
    assert!(text.contains("other process pid 51234"), "{text}");
}

#[test]
fn audit_checkpoint_escapes_what_the_files_say() {
    // A hostile config.json: terminal escape sequences in the architecture and model type.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("config.json"),
        r#"{"architectures": ["Evil\u001b[2JForCausalLM"], "model_type": "x\u001b]0;pwned\u0007", "torch_dtype": "bfloat16"}"#,
    )
    .unwrap();
    let out = bakeoff(&["audit", "checkpoint", tmp.path().to_str().unwrap()]);
    let text = s(&out.stdout);
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text:?}"
    );
    assert!(text.contains(r"Evil\u{1b}[2JForCausalLM"), "{text}");
    assert!(text.contains(r"x\u{1b}]0;pwned\u{7}"), "{text}");
}
