//! The template audit over real published templates, copied from llama.cpp b11434's
//! models/templates (tests/fixtures/templates/SOURCES.md): minijinja renders them byte for
//! byte as Python jinja2 configured like transformers does (goldens from
//! scripts/render_template_goldens.py), the normalized hash ignores CRLF and trailing spaces
//! and nothing else, and the render diff shows a stale derivative.

use std::path::{Path, PathBuf};

use bakeoff_text::{
    RenderError, extract_templates, fingerprint, fixed_conversation, render_diff, render_template,
    template_table,
};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/templates")
}

fn golden(name: &str) -> String {
    std::fs::read_to_string(dir().join(name).with_extension("golden.txt")).unwrap()
}

fn rendered(path: &Path) -> String {
    let t = std::fs::read_to_string(path).unwrap();
    match render_template(&t, &fixed_conversation()) {
        Ok(s) => s,
        Err(e) => format!("<{e}>\n"),
    }
}

#[test]
fn conversation_fixture_is_the_one_rendered() {
    // The Python goldens read conversation.json; the Rust side uses fixed_conversation().
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir().join("conversation.json")).unwrap())
            .unwrap();
    let c = fixed_conversation();
    assert_eq!(v["messages"], c.messages);
    assert_eq!(v["tools"], c.tools.unwrap());
    assert_eq!(v["bos_token"], c.bos_token.as_str());
}

#[test]
fn every_fixture_renders_like_python_transformers() {
    let mut n = 0;
    for e in std::fs::read_dir(dir()).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "jinja") {
            let name = p.file_name().unwrap().to_str().unwrap();
            assert_eq!(rendered(&p), golden(name), "{name}");
            n += 1;
        }
    }
    assert!(n >= 16, "only {n} templates checked");
}

#[test]
fn tool_schema_keys_keep_their_order_and_are_not_html_escaped() {
    let out = rendered(&dir().join("Qwen-Qwen2.5-7B-Instruct.jinja"));
    assert!(out.contains(r#"{"type": "function", "function": {"name": "get_weather", "description": "Current weather for a city. Returns <temp> & \"conditions\".", "parameters": {"type": "object""#), "{out}");
    let llama = rendered(&dir().join("meta-llama-Llama-3.2-3B-Instruct.jinja"));
    assert!(llama.contains("Today Date: 24 Aug 2026"), "{llama}");
    assert!(
        llama.contains("{\n    \"type\": \"function\",\n    \"function\": {\n        \"name\""),
        "{llama}"
    );
}

#[test]
fn raise_exception_is_a_refusal_with_the_templates_message() {
    let t = std::fs::read_to_string(dir().join("google-gemma-2-2b-it.jinja")).unwrap();
    assert_eq!(
        render_template(&t, &fixed_conversation()),
        Err(RenderError::Raised("System role not supported".into()))
    );
}

#[test]
fn hash_ignores_crlf_but_not_an_edit_and_the_diff_shows_the_edit() {
    // Llama 3.3 70B ships Llama 3.1 8B's template unchanged (the real files are byte-equal);
    // the CRLF copy differs only in line endings and trailing spaces; the stale derivative
    // lost its `{{- bos_token }}` line.
    let paths: Vec<PathBuf> = [
        "meta-llama-Llama-3.3-70B-Instruct.jinja",
        "derived-llama-3.1-crlf-copy.jinja",
        "derived-llama-3.1-stale-no-bos.jinja",
    ]
    .iter()
    .map(|n| dir().join(n))
    .collect();
    let templates: Vec<_> = paths
        .iter()
        .flat_map(|p| extract_templates(p).unwrap())
        .collect();
    let reference = extract_templates(&dir().join("meta-llama-Llama-3.1-8B-Instruct.jinja"))
        .unwrap()
        .remove(0);
    let (refrow, rows) = template_table(&templates, Some(&reference), &fixed_conversation());
    let refrow = refrow.unwrap();
    // sha256 of the normalized text, worked out independently with Python hashlib.
    assert_eq!(refrow.fingerprint.short, "93c0e9aa3629bbd7");
    assert_eq!(rows[0].matches_reference, Some(true));
    assert_eq!(rows[1].matches_reference, Some(true));
    assert_eq!(rows[2].matches_reference, Some(false));
    assert_eq!(rows[1].fingerprint.lines, refrow.fingerprint.lines);
    assert_eq!(rows[2].fingerprint.lines, refrow.fingerprint.lines - 1);
    assert!(render_diff(&refrow, &rows[0]).is_none());
    assert!(render_diff(&refrow, &rows[1]).is_none());
    let d = render_diff(&refrow, &rows[2]).unwrap();
    assert!(
        d.contains("-<s><|start_header_id|>system<|end_header_id|>\n")
            && d.contains("+<|start_header_id|>system<|end_header_id|>\n"),
        "{d}"
    );
}

#[test]
fn different_hashes_can_still_render_the_same_prompt() {
    // Qwen3-0.6B's template is a different text from Qwen2.5-7B's (thinking and tool-response
    // handling), yet for a conversation without tool calls or reasoning it builds the same
    // prompt: the hash flags the difference, the render diff says it does not matter here.
    let t: Vec<_> = ["Qwen-Qwen2.5-7B-Instruct.jinja", "Qwen-Qwen3-0.6B.jinja"]
        .iter()
        .map(|n| extract_templates(&dir().join(n)).unwrap().remove(0))
        .collect();
    let (refrow, rows) = template_table(&t[1..], Some(&t[0]), &fixed_conversation());
    let refrow = refrow.unwrap();
    assert_eq!(rows[0].matches_reference, Some(false));
    assert!(render_diff(&refrow, &rows[0]).is_none());
}

#[test]
fn model_directories_and_gguf_and_lists_of_named_templates() {
    let tmp = tempfile::tempdir().unwrap();
    let chatml = std::fs::read_to_string(dir().join("llama-server-b11434-default.jinja")).unwrap();
    let tools = std::fs::read_to_string(dir().join("Qwen-Qwen2.5-7B-Instruct.jinja")).unwrap();
    // tokenizer_config.json with a list of named templates (transformers' format).
    let cfg = serde_json::json!({
        "bos_token": {"content": "<|begin|>"}, "eos_token": "<|end|>",
        "chat_template": [{"name": "tool_use", "template": tools}, {"name": "default", "template": chatml}]
    });
    std::fs::write(tmp.path().join("tokenizer_config.json"), cfg.to_string()).unwrap();
    let t = extract_templates(tmp.path()).unwrap();
    assert_eq!(t.len(), 2);
    assert_eq!(t[0].source, "tokenizer_config.json chat_template[default]");
    assert_eq!(fingerprint(&t[0].text), fingerprint(&chatml));
    assert!(t[1].label.ends_with("#tool_use"));
    assert_eq!(t[0].bos_token.as_deref(), Some("<|begin|>"));
    // chat_template.jinja takes precedence over the config's default.
    std::fs::write(tmp.path().join("chat_template.jinja"), &tools).unwrap();
    let t = extract_templates(tmp.path()).unwrap();
    assert_eq!(t[0].source, "chat_template.jinja");
    assert_eq!(fingerprint(&t[0].text), fingerprint(&tools));

    // The real test model's GGUF is a base model: no template, and the error says so.
    let gguf = bakeoff_testkit_free_model_path();
    let e = extract_templates(&gguf).unwrap_err().to_string();
    assert!(
        e.contains("no chat template found") && e.contains("fix:"),
        "{e}"
    );
}

/// The provisioned GGUF (scripts/provision.sh); fails, never skips, when it is missing.
fn bakeoff_testkit_free_model_path() -> PathBuf {
    let cache = std::env::var_os("BAKEOFF_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/bakeoff")))
        .unwrap();
    let p = cache.join("models/gemma-3-270m-q4_k_m.gguf");
    assert!(
        p.is_file(),
        "{} is not provisioned: run scripts/provision.sh",
        p.display()
    );
    p
}
