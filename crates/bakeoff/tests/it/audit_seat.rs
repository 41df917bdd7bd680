//! `bakeoff audit seat`: a seat's checks before a start, through the binary, without starting
//! anything — the cache mounts and token of a Docker seat (docs/field-cases.md B6, B7), the pinned
//! template against the real SmolLM2 GGUF (docs/field-cases.md F4), and the checkpoint audit's refusal
//! (docs/field-cases.md F7).

use std::path::{Path, PathBuf};

use crate::util::{bakeoff, code, stdout, text};

const SECRET: &str = "hf_auditseatsecret0123456789abcdefghijkl";

fn write_fleet(dir: &Path, text: &str) -> PathBuf {
    let p = dir.join("fleet.toml");
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn a_docker_hub_seat_without_a_cache_mount_is_reported_and_the_token_never_printed() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = write_fleet(
        dir.path(),
        &format!(
            r#"
[[seat]]
name = "hub"
engine = "llama.cpp"
role = "bench"
port = 18200
[seat.docker]
image = "ghcr.io/ggml-org/llama.cpp:server"
command = ["-hf", "ggml-org/gemma-3-270m-GGUF", "--port", "18200"]
mounts = ["/srv/llama:/root/.cache/llama.cpp"]
env = {{ HF_TOKEN = "{SECRET}" }}

[[seat]]
name = "anon"
engine = "vllm"
role = "bench"
port = 18201
[seat.docker]
image = "vllm/vllm-openai:v0.11.0"
command = ["serve", "Qwen/Qwen3-8B"]
mounts = ["/srv/hf:/root/.cache/huggingface"]
"#
        ),
    );
    let f = fleet.display().to_string();
    let o = bakeoff(&["audit", "seat", "--fleet", &f, "hub"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let out = stdout(&o);
    assert!(out.contains("the start would go ahead"), "{out}");
    assert!(
        out.contains("  finding cache-in-writable-layer: the Hugging Face hub cache /root/.cache/huggingface/hub"),
        "{out}"
    );
    assert!(out.contains("/root/.cache/huggingface\"]"), "{out}");
    assert!(!out.contains("anonymous-hub-pull"), "{out}");
    assert!(!text(&o).contains(SECRET), "{}", text(&o));

    let o = bakeoff(&["audit", "seat", "--fleet", &f, "hub", "--json"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(!text(&o).contains(SECRET));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["ok"], true);
    assert_eq!(v["refused"], serde_json::Value::Null);
    assert_eq!(v["findings"][0]["code"], "cache-in-writable-layer");
    assert_eq!(v["findings"][0]["severity"], "warning");

    let o = bakeoff(&["audit", "seat", "--fleet", &f, "anon"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let out = stdout(&o);
    assert!(out.contains("  finding anonymous-hub-pull: "), "{out}");
    assert!(!out.contains("cache-in-writable-layer"), "{out}");
}

#[test]
fn a_pin_on_the_real_smollm2_gguf_is_a_no_op_and_an_unknown_seat_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let smol = bakeoff_testkit::smollm2_path();
    let t = bakeoff_text::extract_templates(&smol).unwrap().remove(0);
    std::fs::write(dir.path().join("chatml.jinja"), &t.text).unwrap();
    let fleet = write_fleet(
        dir.path(),
        &format!(
            r#"
[[seat]]
name = "smol"
engine = "llama.cpp"
role = "bench"
port = 18202
chat_template = "chatml.jinja"
[seat.process]
command = "/bin/true"
args = ["-m", "{}", "--jinja", "--chat-template-file", "{}"]
"#,
            smol.display(),
            dir.path().join("chatml.jinja").display()
        ),
    );
    let f = fleet.display().to_string();
    let o = bakeoff(&["audit", "seat", "--fleet", &f, "smol"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let out = stdout(&o);
    assert!(out.contains("  finding template-pin-no-op: "), "{out}");
    assert!(!out.contains("template-pin-not-passed"), "{out}");

    let o = bakeoff(&["audit", "seat", "--fleet", &f, "nope"]);
    assert_eq!(code(&o), 2, "{}", text(&o));
    assert!(text(&o).contains("smol"), "{}", text(&o));
}

/// A process seat whose command does not exist: the start would be refused (exit 1), never
/// "the start would go ahead".
#[test]
fn a_seat_whose_command_does_not_exist_would_be_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = write_fleet(
        dir.path(),
        r#"
[[seat]]
name = "ghost"
engine = "llama.cpp"
role = "bench"
port = 18204
[seat.process]
command = "/opt/none/llama-server"
args = ["--port", "{port}"]
"#,
    );
    let o = bakeoff(&[
        "audit",
        "seat",
        "--fleet",
        &fleet.display().to_string(),
        "ghost",
    ]);
    assert_eq!(code(&o), 1, "{}", text(&o));
    let out = stdout(&o);
    assert!(
        out.contains("REFUSED") && out.contains("does not exist"),
        "{out}"
    );
    assert!(!out.contains("would go ahead"), "{out}");
}

/// The crash loop of docs/field-cases.md F7: `--quantization compressed-tensors` over BF16
/// weights is refused, and `audit seat` says so without starting anything (exit 1).
#[test]
fn a_start_the_checkpoint_audit_would_refuse_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let ckpt = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../bakeoff-model/tests/fixtures/checkpoints/gemma-3-27b-it-bf16");
    let fleet = write_fleet(
        dir.path(),
        &format!(
            r#"
[[seat]]
name = "trainee"
engine = "vllm"
role = "bench"
port = 18203
[seat.process]
command = "vllm"
args = ["serve", "{}", "--quantization", "compressed-tensors"]
"#,
            ckpt.display()
        ),
    );
    let o = bakeoff(&[
        "audit",
        "seat",
        "--fleet",
        &fleet.display().to_string(),
        "trainee",
    ]);
    assert_eq!(code(&o), 1, "{}", text(&o));
    let out = stdout(&o);
    assert!(out.contains("REFUSED"), "{out}");
    assert!(out.contains("quantization-mismatch"), "{out}");
}

/// Runs `bakeoff seat down` for the seat on drop: a failing test leaves no engine behind.
struct DownOnDrop(String, &'static str);

impl Drop for DownOnDrop {
    fn drop(&mut self) {
        let _ = bakeoff(&["seat", "down", "--fleet", &self.0, self.1]);
    }
}

/// `seat up` of a Gemma seat pinned to SmolLM2's ChatML template but not passing it: the real
/// llama-server serves another template, the finding is printed and the command exits 1.
#[tokio::test]
async fn seat_up_prints_the_findings_and_exits_1_on_a_template_mismatch() {
    let _g = bakeoff_testkit::serial().await;
    let dir = tempfile::tempdir().unwrap();
    let t = bakeoff_text::extract_templates(&bakeoff_testkit::smollm2_path())
        .unwrap()
        .remove(0);
    std::fs::write(dir.path().join("chatml.jinja"), &t.text).unwrap();
    let e = bakeoff_testkit::engine();
    let port = crate::util::free_port();
    let header =
        bakeoff_testkit::fleet::seat_header("pinned", "llama.cpp", "bench", port, "gemma-3-270m");
    let fleet = write_fleet(
        dir.path(),
        &format!(
            r#"{header}chat_template = "chatml.jinja"
[seat.process]
command = "{bin}"
args = ["-m", "{model}", "--host", "127.0.0.1", "--port", "{{port}}", "-c", "1024", "-np", "1", "--alias", "gemma-3-270m"]
"#,
            bin = e.llama_server.display(),
            model = e.model.display()
        ),
    );
    let f = fleet.display().to_string();
    let _down = DownOnDrop(f.clone(), "pinned");
    let o = crate::util::bakeoff_async(&["seat", "up", "--fleet", &f, "pinned"]).await;
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "{}", text(&o));
    assert!(out.contains("pinned: READY in"), "{out}");
    assert!(out.contains("  finding template-pin-not-passed: "), "{out}");
    assert!(out.contains("  finding template-mismatch: "), "{out}");
    assert!(
        out.contains("(fix: add \"--jinja\", \"--chat-template-file\""),
        "{out}"
    );
}
