use super::*;
use crate::fleet::types::Fleet;

fn v(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

const SK: &str = "sk-test-4f9c2e7a1b3d5e6f8a9b";
const HF: &str = "hf_AbCdEfGhIjKlMnOpQrStUvWx";

#[test]
fn secret_names() {
    for n in [
        "--api-key",
        "--admin-api-key",
        "--hf-token",
        "--token",
        "--password",
        "--secret",
        "--ssl-keyfile-password",
        "--api-keys",
        "--apikey",
        "--auth-token",
        "HF_TOKEN",
        "HUGGING_FACE_HUB_TOKEN",
        "OPENAI_API_KEY",
        "LLAMA_API_KEY",
        "AWS_SECRET_ACCESS_KEY",
        "SECRET_KEY_BASE",
        "DB_PASS",
        "client_secret",
        "accessToken",
        "Authorization",
        "X-Api-Key",
        "'api_key'",
        "BASIC_AUTH",
    ] {
        assert!(secret_name(n), "{n} is secret");
    }
    for n in [
        "--kv-cache-dtype",
        "--max-tokens",
        "--max-num-batched-tokens",
        "--tokenizer",
        "--tokenizer-mode",
        "--return-tokens-as-token-ids",
        "--api-key-file",
        "--api-key-env",
        "--ssl-keyfile",
        "--ssl-key-file",
        "--key-file",
        "--password-file",
        "--hf-token-path",
        "AWS_ACCESS_KEY_ID",
        "LLAMA_ARG_THREADS",
        "MAX_TOKENS",
        "--port",
        "-m",
        "",
        "--",
    ] {
        assert!(!secret_name(n), "{n} is not secret");
    }
}

#[test]
fn flag_values_in_both_forms() {
    let a = v(&[
        "-m",
        "/models/m.gguf",
        "--api-key",
        SK,
        "--port",
        "8080",
        "--hf-token=hf_short",
        "--secret={a}'b]",
        "--admin-api-key",
        "k1",
        "k2",
        "--kv-cache-dtype",
        "fp8",
        "--max-tokens",
        "512",
        "--api-key-file",
        "/etc/keys.txt",
        "--ssl-keyfile-password",
        "pw",
    ]);
    assert_eq!(
        args(&a),
        v(&[
            "-m",
            "/models/m.gguf",
            "--api-key",
            REDACTED,
            "--port",
            "8080",
            "--hf-token=<redacted>",
            "--secret=<redacted>",
            "--admin-api-key",
            REDACTED,
            REDACTED,
            "--kv-cache-dtype",
            "fp8",
            "--max-tokens",
            "512",
            "--api-key-file",
            "/etc/keys.txt",
            "--ssl-keyfile-password",
            REDACTED,
        ])
    );
}

#[test]
fn name_value_headers_urls_and_shaped_values() {
    let a = v(&[
        "-c",
        "KEY=k-1234\necho $KEY",
        "HF_TOKEN=abc123",
        "MY_SERVICE_API_KEY=xyz",
        "Authorization: Bearer abcdef",
        "Authorization: Basic dXNlcjpwYXNz",
        "Authorization:Bearer abcdef",
        "X-Api-Key: k-999",
        "--upstream=http://admin:hunter2@proxy:3128/v1",
        &format!("--note=key {SK} end"),
        HF,
        "--served-model-name",
        "task-manager-sk-notakey",
        "MAX_TOKENS=64",
        "https://user@host/path",
    ]);
    assert_eq!(
        args(&a),
        v(&[
            "-c",
            "KEY=<redacted>\necho $KEY",
            "HF_TOKEN=<redacted>",
            "MY_SERVICE_API_KEY=<redacted>",
            "Authorization: Bearer <redacted>",
            "Authorization: Basic <redacted>",
            "Authorization:Bearer <redacted>",
            "X-Api-Key: <redacted>",
            "--upstream=http://admin:<redacted>@proxy:3128/v1",
            "--note=key <redacted> end",
            REDACTED,
            "--served-model-name",
            "task-manager-sk-notakey",
            "MAX_TOKENS=64",
            "https://user@host/path",
        ])
    );
}

#[test]
fn text_forms_engines_print() {
    for (line, keep) in [
        (
            format!("sh -c 'vllm serve /m --api-key {SK} --port 8000'"),
            "--port 8000'",
        ),
        (
            "Namespace(model='/m', api_key='secret-1', port=8000)".to_string(),
            "port=8000)",
        ),
        (
            "non-default args: {'api_key': ['secret-1'], 'port': 8000}".to_string(),
            "'port': 8000}",
        ),
        (
            "Args { model_id: \"m\", hf_token: Some(\"secret-1\"), port: 80 }".to_string(),
            "port: 80 }",
        ),
        (
            "curl -H \"Authorization: Bearer secret-1\" http://h/v1".to_string(),
            "http://h/v1",
        ),
        ("export HF_TOKEN=\"secret-1\"".to_string(), "export"),
    ] {
        let out = text(&line);
        assert!(
            !out.contains("secret-1") && !out.contains(SK),
            "{line} → {out}"
        );
        assert!(out.contains(REDACTED), "{out}");
        assert!(out.contains(keep), "{out}");
    }
    // Ordinary engine lines are untouched.
    for line in [
        "print_info: BOS token        = 2 '<bos>'",
        "llama_kv_cache: size =   32.00 MiB (  1024 cells,  18 layers,  1/1 seqs), K (f16):   16.00 MiB",
        "main: server is listening on http://127.0.0.1:8080 - starting the main loop",
        "INFO: max_num_batched_tokens=8192, token: none",
        "api_key: None",
    ] {
        assert_eq!(text(line), line);
    }
}

#[test]
fn env_values_of_secret_names() {
    let mut e = BTreeMap::new();
    e.insert("HF_TOKEN".to_string(), "set-me".to_string());
    e.insert("LLAMA_ARG_THREADS".to_string(), "2".to_string());
    e.insert(
        "HTTPS_PROXY".to_string(),
        "http://u:p4ss@proxy:3128".to_string(),
    );
    e.insert("MAX_TOKENS".to_string(), "100".to_string());
    let r = env(&e);
    assert_eq!(r["HF_TOKEN"], REDACTED);
    assert_eq!(r["LLAMA_ARG_THREADS"], "2");
    assert_eq!(r["HTTPS_PROXY"], "http://u:<redacted>@proxy:3128");
    assert_eq!(r["MAX_TOKENS"], "100");
}

#[test]
fn a_redactor_removes_a_seats_known_secrets_anywhere() {
    let dir = std::env::temp_dir();
    let fleet = Fleet::parse(
        r#"
[[seat]]
name = "keyed"
engine = "vllm"
role = "bench"
port = 8000
[seat.process]
command = "vllm"
args = ["serve", "/m", "--api-key", "plain-key-1", "--port", "{port}"]
env = { MY_PASSWORD = "pw-{port}" }
"#,
        &dir.join("fleet.toml"),
    );
    let Ok(fleet) = fleet else {
        panic!("the fleet parses")
    };
    let r = Redactor::for_fleet(&fleet);
    // An engine echoing its arguments in its own words; the substituted env value too.
    let out = r.text("args: api_keys=[plain-key-1] password is pw-8000, port 8000");
    assert_eq!(
        out,
        "args: api_keys=[<redacted>] password is <redacted>, port 8000"
    );
    let mut j = serde_json::json!({"message": "key plain-key-1", "n": 1});
    r.json(&mut j);
    assert_eq!(j, serde_json::json!({"message": "key <redacted>", "n": 1}));
}
