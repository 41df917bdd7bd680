//! The cache-mount and token checks on parsed fleet files: docs/field-cases.md B6 and B7.
#![allow(clippy::unwrap_used)]

use super::*;
use crate::fleet::types::Fleet;

/// One Docker seat of `engine` running `command`, with `mounts` and `env` (TOML fragments).
fn docker_seat(engine: &str, command: &str, mounts: &str, env: &str) -> Vec<SeatFinding> {
    let text = format!(
        r#"
[[seat]]
name = "s"
engine = "{engine}"
role = "bench"
port = 18000
[seat.docker]
image = "vllm/vllm-openai:v0.11.0"
command = [{command}]
mounts = [{mounts}]
env = {{ {env} }}
"#
    );
    let dir = tempfile::tempdir().unwrap();
    let fleet = Fleet::parse(&text, &dir.path().join("fleet.toml")).unwrap();
    check(&fleet.seats[0])
}

fn codes(f: &[SeatFinding]) -> Vec<&str> {
    f.iter().map(|f| f.code.as_str()).collect()
}

fn writable(f: &[SeatFinding]) -> Vec<&SeatFinding> {
    f.iter()
        .filter(|f| f.code == "cache-in-writable-layer")
        .collect()
}

#[test]
fn a_hub_id_without_a_mount_lands_in_the_writable_layer() {
    let f = docker_seat("vllm", r#""serve", "Qwen/Qwen3-8B""#, "", "");
    let w = writable(&f);
    assert_eq!(w.len(), 1, "{f:?}");
    assert_eq!(w[0].severity, FindingSeverity::Warning);
    assert!(
        w[0].message.contains("/root/.cache/huggingface/hub"),
        "{}",
        w[0].message
    );
    assert!(
        w[0].message.contains("assumed to run as root"),
        "{}",
        w[0].message
    );
    assert_eq!(
        w[0].fix.as_deref(),
        Some(r#"add mounts = ["~/.cache/huggingface:/root/.cache/huggingface"] to [seat.docker]"#)
    );
    assert!(codes(&f).contains(&"anonymous-hub-pull"), "{f:?}");
}

#[test]
fn a_mounted_hub_cache_is_covered() {
    for cmd in [
        r#""serve", "Qwen/Qwen3-8B""#,
        r#""--model", "Qwen/Qwen3-8B""#,
        r#""--model=Qwen/Qwen3-8B""#,
    ] {
        let f = docker_seat("vllm", cmd, r#""/srv/hf:/root/.cache/huggingface""#, "");
        assert!(writable(&f).is_empty(), "{cmd}: {f:?}");
    }
    let f = docker_seat(
        "sglang",
        r#""python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B""#,
        r#""/srv/hf:/root/.cache/huggingface""#,
        "",
    );
    assert!(writable(&f).is_empty(), "{f:?}");
}

#[test]
fn hf_home_moves_the_cache() {
    let f = docker_seat(
        "vllm",
        r#""serve", "Qwen/Qwen3-8B""#,
        r#""/srv/hf:/root/.cache/huggingface""#,
        r#"HF_HOME = "/data/hf""#,
    );
    let w = writable(&f);
    assert_eq!(w.len(), 1, "{f:?}");
    assert!(w[0].message.contains("/data/hf/hub"), "{}", w[0].message);
    assert!(
        w[0].message.contains("HF_HOME=/data/hf"),
        "{}",
        w[0].message
    );
    assert!(
        w[0].fix
            .as_deref()
            .unwrap()
            .contains(r#""~/.cache/huggingface:/data/hf""#),
        "{:?}",
        w[0].fix
    );
    let ok = docker_seat(
        "vllm",
        r#""serve", "Qwen/Qwen3-8B""#,
        r#""/srv/hf:/data/hf""#,
        r#"HF_HOME = "/data/hf""#,
    );
    assert!(writable(&ok).is_empty(), "{ok:?}");
    // HF_HUB_CACHE wins over HF_HOME.
    let hub = docker_seat(
        "vllm",
        r#""serve", "Qwen/Qwen3-8B""#,
        r#""/srv/hf:/data/hf""#,
        r#"HF_HOME = "/data/hf", HF_HUB_CACHE = "/cache/hub""#,
    );
    assert_eq!(writable(&hub).len(), 1, "{hub:?}");
    assert!(writable(&hub)[0].message.contains("/cache/hub"));
}

/// docs/field-cases.md B7 exactly: `-hf` with only the legacy `~/.cache/llama.cpp` mounted.
#[test]
fn llama_cpp_hf_needs_the_hub_cache_too() {
    let cmd = r#""-hf", "ggml-org/gemma-3-270m-GGUF", "--port", "8080""#;
    let legacy = r#""/srv/llama:/root/.cache/llama.cpp""#;
    let f = docker_seat("llama.cpp", cmd, legacy, "");
    let w = writable(&f);
    assert_eq!(w.len(), 1, "{f:?}");
    assert!(
        w[0].message.contains("/root/.cache/huggingface/hub"),
        "{}",
        w[0].message
    );
    let both = docker_seat(
        "llama.cpp",
        cmd,
        r#""/srv/llama:/root/.cache/llama.cpp", "/srv/hf:/root/.cache/huggingface""#,
        "",
    );
    assert!(writable(&both).is_empty(), "{both:?}");
    // Neither: both caches are named.
    assert_eq!(writable(&docker_seat("llama.cpp", cmd, "", "")).len(), 2);
    // LLAMA_CACHE makes them one directory.
    let one = docker_seat(
        "llama.cpp",
        r#""--hf-repo", "ggml-org/gemma-3-270m-GGUF""#,
        r#""/srv/llama:/models/cache""#,
        r#"LLAMA_CACHE = "/models/cache""#,
    );
    assert!(writable(&one).is_empty(), "{one:?}");
    // `-mu` writes llama.cpp's own cache only.
    let mu = docker_seat(
        "llama.cpp",
        r#""-mu", "https://huggingface.co/x/y/resolve/main/m.gguf""#,
        legacy,
        "",
    );
    assert!(writable(&mu).is_empty(), "{mu:?}");
}

#[test]
fn a_read_only_mount_does_not_count_for_writing() {
    let f = docker_seat(
        "vllm",
        r#""serve", "Qwen/Qwen3-8B""#,
        r#""/srv/hf:/root/.cache/huggingface:ro""#,
        "",
    );
    let w = writable(&f);
    assert_eq!(w.len(), 1, "{f:?}");
    assert!(w[0].message.contains("read-only"), "{}", w[0].message);
    // A read-write mount deeper than the read-only one covers the hub cache.
    let deeper = docker_seat(
        "vllm",
        r#""serve", "Qwen/Qwen3-8B""#,
        r#""/srv/cache:/root/.cache:ro", "/srv/hf/hub:/root/.cache/huggingface/hub:rw""#,
        "",
    );
    assert!(writable(&deeper).is_empty(), "{deeper:?}");
}

#[test]
fn a_local_model_pulls_nothing() {
    let f = docker_seat("vllm", r#""serve", "/models/qwen3-8b""#, "", "");
    assert!(f.is_empty(), "{f:?}");
    let f = docker_seat("llama.cpp", r#""-m", "/models/g.gguf""#, "", "");
    assert!(f.is_empty(), "{f:?}");
}

/// The token is named, never quoted: not in the message, the fix, the evidence, or the JSON.
#[test]
fn a_token_silences_the_note_and_its_value_appears_nowhere() {
    let secret = "hf_abcdefghijklmnopqrstuvwxyz0123456789";
    for var in TOKEN_VARS {
        let f = docker_seat(
            "vllm",
            r#""serve", "Qwen/Qwen3-8B""#,
            "",
            &format!(r#"{var} = "{secret}""#),
        );
        assert!(!codes(&f).contains(&"anonymous-hub-pull"), "{var}: {f:?}");
        assert_eq!(writable(&f).len(), 1, "{f:?}");
        let json = serde_json::to_string(&f).unwrap();
        assert!(!json.contains(secret), "{json}");
    }
    let f = docker_seat("vllm", r#""serve", "Qwen/Qwen3-8B""#, "", "");
    let note = f.iter().find(|f| f.code == "anonymous-hub-pull").unwrap();
    assert_eq!(note.severity, FindingSeverity::Note);
    assert!(note.message.contains("3.7 MB/s"), "{}", note.message);
}

#[test]
fn the_token_is_reported_by_name_only() {
    let dir = tempfile::tempdir().unwrap();
    let text = r#"
[[seat]]
name = "p"
engine = "vllm"
role = "bench"
port = 18001
[seat.process]
command = "vllm"
args = ["serve", "Qwen/Qwen3-8B"]
env = { HF_TOKEN = "hf_abcdefghijklmnopqrstuvwxyz0123456789" }
"#;
    let fleet = Fleet::parse(text, &dir.path().join("fleet.toml")).unwrap();
    let seat = &fleet.seats[0];
    let env = EngineEnv::of(seat);
    assert_eq!(token_source(seat, &env).as_deref(), Some("HF_TOKEN is set"));
    // A process seat has no writable layer, and its token silences the note.
    assert!(check(seat).is_empty(), "{:?}", check(seat));
    // Its cache resolves against the process environment and this machine's HOME.
    let hub = hf_hub_cache(&env);
    assert!(hub.path.ends_with("hub"), "{}", hub.path.display());
}

/// Findings are printed through the fleet's redactor: their text (`§`, `—`) must pass it intact
/// (a multi-byte character before a name once panicked there), and the token stays out.
#[test]
fn findings_pass_through_the_redactor() {
    let dir = tempfile::tempdir().unwrap();
    let text = r#"
[[seat]]
name = "s"
engine = "vllm"
role = "bench"
port = 18002
[seat.docker]
image = "vllm/vllm-openai:v0.11.0"
command = ["serve", "Qwen/Qwen3-8B"]
"#;
    let fleet = Fleet::parse(text, &dir.path().join("fleet.toml")).unwrap();
    let redactor = crate::redact::Redactor::for_fleet(&fleet);
    let found = check(&fleet.seats[0]);
    assert_eq!(found.len(), 2, "{found:?}");
    for f in &found {
        assert_eq!(redactor.text(&f.message), f.message);
    }
    assert_eq!(redactor.text("see §7 HF_TOKEN"), "see §7 HF_TOKEN");
}
