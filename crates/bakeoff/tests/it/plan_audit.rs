//! `bakeoff plan`, `bakeoff kv` and `bakeoff audit` as processes: the plan without a GPU
//! (this machine has none: claims are printed, measured usage is said to be unavailable, the
//! command does not fail), the checkpoint audit catching the fleet field cases' (docs/field-cases.md) compressed-tensors crash
//! loop (exit 1), and the template audit of the real llama-server's template.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{bakeoff, bakeoff_async, code, root, serial_tempdir, stdout};

pub(crate) fn s(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `bakeoff ARGS…`, which must exit with `want`; its stdout.
pub(crate) fn stdout_exiting(want: i32, args: &[&str]) -> String {
    let out = bakeoff(args);
    let text = stdout(&out);
    assert_eq!(code(&out), want, "{text}{}", s(&out.stderr));
    text
}

/// `bakeoff plan --fleet FLEET --gpu-memory-gib 94.97` (the fleet field cases' (docs/field-cases.md) card) plus `extra`.
pub(crate) fn plan_args<'a>(fleet: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "plan",
        "--fleet",
        fleet.to_str().unwrap(),
        "--gpu-memory-gib",
        "94.97",
    ];
    args.extend(extra);
    args
}

/// `bakeoff kv MODEL` plus `extra`.
pub(crate) fn kv_args<'a>(model: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["kv", model.to_str().unwrap()];
    args.extend(extra);
    args
}

/// A fixture of this workspace, under `crates/`.
pub(crate) fn fixture(rel: &str) -> PathBuf {
    root().join("crates").join(rel)
}

#[test]
fn plan_without_a_gpu_prints_claims_and_says_measured_usage_is_unavailable() {
    let fleet = fixture("bakeoff/tests/fixtures/fleet-field-case-f8.toml");
    let text = stdout_exiting(0, &plan_args(&fleet, &[]));
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
    let out = bakeoff(&plan_args(&fleet, &["--json"]));
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["nvml"]["unavailable"].as_str().unwrap().contains("NVML"));
    assert!(v["nvidia_smi"]["unavailable"].is_string());
    assert_eq!(v["measured_from"], serde_json::Value::Null);
    assert_eq!(v["gpus"][0]["seats"].as_array().unwrap().len(), 2);

    // Coexistence with the arithmetic; a margin larger than what is left makes it a "no" (1).
    let out = bakeoff(&plan_args(
        &fleet,
        &["--coexist", "gen,char-rp", "--gpu", "0", "--margin", "5"],
    ));
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
    let bf16 = fixture("bakeoff-model/tests/fixtures/checkpoints/gemma-3-27b-it-bf16");
    let text = stdout_exiting(
        1,
        &[
            "audit",
            "checkpoint",
            bf16.to_str().unwrap(),
            "--quantization",
            "compressed-tensors",
        ],
    );
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

#[tokio::test]
async fn audit_template_of_the_real_llama_server() {
    let (_g, dir) = serial_tempdir().await;
    let server = bakeoff_testkit::real_llama(8192, 1, &[], dir.path()).await;
    let url = server.url();
    let fixtures = fixture("bakeoff-text/tests/fixtures/templates");
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
    let out = bakeoff_async(&[
        "audit",
        "template",
        &url,
        llama.to_str().unwrap(),
        gemma2.to_str().unwrap(),
        "--reference",
        reference.to_str().unwrap(),
    ])
    .await;
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

pub(crate) fn real_model() -> PathBuf {
    let cache = std::env::var_os("BAKEOFF_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/bakeoff")))
        .unwrap();
    let p = cache.join("models/gemma-3-270m-q4_k_m.gguf");
    assert!(p.is_file(), "{} is not provisioned", p.display());
    p
}

/// The real llama-server b11434 log of `-c 32768 -np 8` on the test model.
pub(crate) fn real_log() -> PathBuf {
    root().join(
        "crates/bakeoff-model/tests/fixtures/logs/llama-server-b11434-gemma-3-270m-c32768-np8.log",
    )
}

#[test]
fn plan_falls_back_to_nvidia_smi_and_maps_a_pid_to_its_seat_by_port() {
    // No NVML on this machine (no libnvidia-ml.so.1): the plan runs a fake nvidia-smi that
    // prints the fixtures in nvidia-smi's documented `--format=csv,noheader,nounits` output
    // (crates/bakeoff-host/tests/fixtures/nvidia-smi/README.md). The compute-apps line of
    // seat `gen` carries the PID of a real process here whose command line has `--port 8010`,
    // as a process seat's does.
    let tmp = tempfile::tempdir().unwrap();
    let mut seat = Command::new("sh")
        .args(["-c", "sleep 120; :", "seat-gen", "--port", "8010"])
        .spawn()
        .unwrap();
    let fixtures = fixture("bakeoff-host/tests/fixtures/nvidia-smi");
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

    let fleet = fixture("bakeoff/tests/fixtures/fleet-field-case-f8.toml");
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
            "holds 45.60 GiB measured (pids {}, by port 8010)",
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

pub(crate) fn cache_dir() -> PathBuf {
    std::env::var_os("BAKEOFF_CACHE")
        .filter(|c| !c.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/bakeoff")))
        .unwrap()
}

/// (docs/failure-classes.md) the command from the issue: the seat without `--gpu-memory-utilization`
/// is priced at vLLM's default 0.92 (87.87 GiB with its CUDA context), the same number the
/// per-GPU section shows, so the two seats cannot both run on the 94.97 GiB card: NO, exit 1.
#[test]
fn coexist_prices_a_seat_without_the_flag_at_vllms_default() {
    let fleet = root().join("examples/fleet.toml");
    let text = stdout_exiting(
        1,
        &plan_args(
            &fleet,
            &["--coexist", "char-rp,meromero-charrp", "--gpu", "1"],
        ),
    );
    assert!(!text.lines().any(|l| l.starts_with("YES")), "{text}");
    // Per-GPU section and coexistence answer agree, seat by seat.
    assert!(
        text.contains("seat meromero-charrp (vllm, util 0.92 (engine default)): claims 87.87 GiB"),
        "{text}"
    );
    assert!(
        text.contains("seat char-rp (vllm, util 0.47): claims 45.14 GiB"),
        "{text}"
    );
    assert!(
        text.contains("meromero-charrp [claimed]: 87.37 GiB budget (engine default util) × total + 0.50 GiB CUDA context + non-torch (est.) = 87.87 GiB"),
        "{text}"
    );
    assert!(text.contains("char-rp [claimed]: 44.64 GiB budget util × total + 0.50 GiB CUDA context + non-torch (est.) = 45.14 GiB"), "{text}");
    assert!(
        text.contains("sum 133.01 GiB of 94.97 GiB: -38.04 GiB left, margin 2.00 GiB"),
        "{text}"
    );
    assert!(
        text.contains(
            "NO: char-rp and meromero-charrp leave -38.04 GiB on GPU 1, under the 2.00 GiB margin"
        ),
        "{text}"
    );
    // They are a swap pair in this fleet: said, and the per-GPU claim counts one of them.
    assert!(
        text.contains("char-rp and meromero-charrp share port 8016 on gpu-box: the fleet runs them as alternatives"),
        "{text}"
    );

    // Terms that cannot be priced (a GGUF that is not a local path here) never make a YES.
    let fleet = fixture("bakeoff/tests/fixtures/fleet-unpriced.toml");
    let text = stdout_exiting(
        1,
        &plan_args(&fleet, &["--coexist", "bench,small", "--gpu", "0"]),
    );
    assert!(!text.lines().any(|l| l.starts_with("YES")), "{text}");
    assert!(
        text.contains("UNKNOWN: bench and small leave at most")
            && text.contains("bench's weights and KV buffers are not priced"),
        "{text}"
    );
    assert!(
        text.contains(
            "not priced: weights: model `/srv/models/model.gguf` is not a local path here"
        ),
        "{text}"
    );
    // The per-GPU section says its headroom is an upper bound, for the same reason.
    assert!(text.contains("headroom: at most "), "{text}");
    assert!(
        text.contains("seat bench (llama.cpp): claims at least 0.75 GiB"),
        "{text}"
    );
}

/// (docs/failure-classes.md) on the README's example fleet: the llama.cpp seats of host `local`
/// (`gpus = 0`) run on the CPU — no "GPU 0 on local", no CUDA context charged — with `{cache}`
/// expanded in their model path; and the swap pair on gpu-box's GPU 1 (both on port 8016)
/// counts once, the larger of the two.
#[test]
fn plan_places_cpu_seats_expands_cache_and_counts_a_swap_pair_once() {
    let fleet = root().join("examples/fleet.toml");
    let text = stdout_exiting(0, &plan_args(&fleet, &[]));
    assert!(!text.contains("GPU 0 on local"), "{text}");
    assert!(!text.contains("{cache}"), "{text}");
    assert!(
        text.contains("CPU seats (no GPU memory claimed):"),
        "{text}"
    );
    let model = cache_dir().join("models/gemma-3-270m-q4_k_m.gguf");
    assert!(
        text.contains(&format!(
            "seat gemma-proc (llama.cpp) on local: CPU, host local declares gpus = 0; model {}",
            model.display()
        )),
        "{text}"
    );
    assert!(
        text.contains("seat gemma-docker (llama.cpp) on local: CPU, host local declares gpus = 0"),
        "{text}"
    );
    assert!(
        text.contains("seats char-rp and meromero-charrp share port 8016 on gpu-box: alternatives, never up together (`bakeoff seat swap`); GPU 1's claim counts the larger, meromero-charrp 87.87 GiB, not the sum (133.01 GiB)"),
        "{text}"
    );
    assert!(
        text.contains("claimed 87.87 GiB; measured used unknown"),
        "{text}"
    );
    assert!(
        text.contains("headroom: 7.10 GiB by claims, 7.10 GiB planned"),
        "{text}"
    );
    let out = bakeoff(&plan_args(&fleet, &["--json"]));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["cpu_seats"].as_array().unwrap().len(), 2);
    assert_eq!(v["gpus"].as_array().unwrap().len(), 1);
    assert_eq!(
        v["gpus"][0]["alternatives"][0],
        serde_json::json!(["char-rp", "meromero-charrp"])
    );

    // On a host with a GPU, the `{cache}` model is the real GGUF, sized like any local path:
    // 246,587,904 B of weights and 216 MiB of KV for -c 32768 -np 8.
    let fleet = fixture("bakeoff/tests/fixtures/fleet-cache.toml");
    let text = stdout_exiting(0, &plan_args(&fleet, &[]));
    assert!(!text.contains("not a local path"), "{text}");
    assert!(text.contains("0.23 GiB  weights (GGUF tensors)"), "{text}");
    assert!(
        text.contains("0.21 GiB  KV buffers (-c, -np, cache types)"),
        "{text}"
    );
    assert!(
        text.contains("seat bench (llama.cpp): claims 1.19 GiB"),
        "{text}"
    );
}

/// A vLLM seat launched as `python -m vllm.entrypoints.openai.api_server --model DIR` on a host
/// without GPUs: the plan names the model directory (not the Python module `-m` names) and says
/// it claims no GPU memory.
#[test]
fn plan_names_a_vllm_seats_model_directory_not_its_python_module() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = dir.path().join("fleet.toml");
    std::fs::write(
        &fleet,
        r#"[hosts.local]
gpus = 0

[[seat]]
name = "vl"
engine = "vllm"
role = "bench"
port = 18999
served_model_names = ["smollm2"]
[seat.process]
command = "/opt/vllm/bin/python"
args = ["-m", "vllm.entrypoints.openai.api_server", "--model", "{cache}/models/SmolLM2-135M-Instruct-hf", "--port", "{port}"]
"#,
    )
    .unwrap();
    let text = stdout_exiting(0, &plan_args(&fleet, &[]));
    let model = cache_dir().join("models/SmolLM2-135M-Instruct-hf");
    assert!(
        text.contains(&format!(
            "seat vl (vllm) on local: CPU, host local declares gpus = 0; model {}",
            model.display()
        )),
        "{text}"
    );
    assert!(!text.contains("vllm.entrypoints"), "{text}");
}
