//! `bakeoff kv` on the real vLLM's Hugging Face directory against the engine's own log: the CPU
//! build's budget line (`Explicitly set (1.0/…) GiB for KV cache`) and its `CPU KV cache size:
//! N tokens` line, which the computed capacity must match.

use bakeoff_testkit::vllm::{self, MAX_MODEL_LEN};

use super::run;

#[tokio::test]
async fn kv_on_the_hf_directory_matches_the_engines_own_kv_line() {
    let s = vllm::shared().await;
    let t = vllm::tier();
    let log = s.log_text();
    let logged: u64 = log
        .lines()
        .find_map(|l| {
            let rest = l.split("CPU KV cache size: ").nth(1)?;
            rest.split(' ').next()?.replace(',', "").parse().ok()
        })
        .unwrap_or_else(|| panic!("no `CPU KV cache size` line in the real log:\n{log}"));
    let len = MAX_MODEL_LEN.to_string();
    let (code, text, err) = run(&[
        "kv",
        t.model_dir.to_str().unwrap(),
        "--max-model-len",
        &len,
        // The tier serves with --dtype float32, so "auto" KV is float32 there, not the
        // checkpoint's bf16.
        "--kv-cache-dtype",
        vllm::DTYPE,
        "--log",
        s.log.to_str().unwrap(),
        "--json",
    ])
    .await;
    assert_eq!(code, 0, "{text}{err}");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let computed = v["capacity"]["tokens"].as_u64().unwrap();
    // vLLM rounds the pool down to whole blocks (16 tokens on the CPU backend): the computed
    // figure may exceed the logged one by less than a block per layer group, never fall short.
    assert!(
        computed >= logged && computed - logged < 64,
        "computed {computed}, the engine logged {logged}: {v}"
    );
    let (code, text, _) = run(&[
        "kv",
        t.model_dir.to_str().unwrap(),
        "--max-model-len",
        &len,
        "--kv-cache-dtype",
        vllm::DTYPE,
        "--log",
        s.log.to_str().unwrap(),
    ])
    .await;
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains(&format!("vLLM logged KV cache size: {logged} tokens")),
        "{text}"
    );
}

/// `plan` on a vLLM seat of a host without a GPU says what it prices (no GPU memory) and what
/// it cannot (the weights and the CPU KV pool in host memory), naming the seat's model
/// directory — not `python -m`'s module.
#[tokio::test]
async fn plan_on_a_cpu_vllm_seat_says_what_it_cannot_price() {
    let t = vllm::tier();
    let dir = bakeoff_testkit::tempdir();
    let fleet = dir.path().join("fleet.toml");
    let args: Vec<String> = vllm::args(&t.model_dir, 18960, &[]);
    std::fs::write(
        &fleet,
        format!(
            "[hosts.local]\ngpus = 0\n\n[[seat]]\nname = \"cpu-vllm\"\nengine = \"vllm\"\nrole = \"bench\"\nport = 18960\n[seat.process]\ncommand = \"{}\"\nargs = {}\nenv = {{ VLLM_CPU_KVCACHE_SPACE = \"1\" }}\n",
            t.python.display(),
            serde_json::to_string(&args).unwrap()
        ),
    )
    .unwrap();
    let (code, text, err) = run(&["plan", "--fleet", fleet.to_str().unwrap()]).await;
    assert_eq!(code, 0, "{text}{err}");
    assert!(
        text.contains("CPU seats (no GPU memory claimed):"),
        "{text}"
    );
    assert!(
        text.contains(&format!("model {}", t.model_dir.display())),
        "{text}"
    );
    assert!(
        text.contains(
            "not priced: host memory: the weights and vLLM's CPU KV pool (VLLM_CPU_KVCACHE_SPACE"
        ),
        "{text}"
    );
}
