//! llama.cpp `llama-server` (tools/server/README.md; shapes checked against build b11434).
//!
//! - `/props`: `build_info` ("b11434-<commit>"), `default_generation_settings.n_ctx` (per slot),
//!   `total_slots`, `model_path`, `model_ftype` ("Q4_K - Medium"), `chat_template`.
//! - `/slots`: one object per slot with its own `n_ctx` — the window a request really gets:
//!   `-c 8192 -np 2` gives 4096 per slot unless the KV cache is unified (`-kvu`).
//! - `/v1/models` `data[].meta.n_ctx_train` is the *trained* context: never the window.
//! - `/tokenize {content, add_special}` returns `{tokens: [...]}` without BOS by default.

use serde_json::{Value, json};

use super::TokenizeCall;

pub fn tokenize_call(text: &str) -> TokenizeCall {
    TokenizeCall {
        path: "tokenize",
        body: json!({ "content": text, "add_special": false }),
        route: "llama.cpp POST /tokenize",
    }
}

/// `/props` looks like llama.cpp's when it carries either of its signature fields.
pub fn is_props(body: &Value) -> bool {
    body.get("build_info").is_some() || body.get("default_generation_settings").is_some()
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Props {
    pub build_info: Option<String>,
    pub n_ctx: Option<u64>,
    pub total_slots: Option<u64>,
    pub model_path: Option<String>,
    pub model_ftype: Option<String>,
    pub chat_template: Option<String>,
}

pub fn parse_props(body: &Value) -> Props {
    let s = |k: &str| body.get(k).and_then(Value::as_str).map(str::to_string);
    Props {
        build_info: s("build_info"),
        n_ctx: body
            .get("default_generation_settings")
            .and_then(|d| d.get("n_ctx"))
            .and_then(Value::as_u64),
        total_slots: body.get("total_slots").and_then(Value::as_u64),
        model_path: s("model_path"),
        model_ftype: s("model_ftype"),
        chat_template: s("chat_template").filter(|t| !t.is_empty()),
    }
}

/// The smallest per-slot `n_ctx` (they are equal in practice; the smallest is what a request
/// can count on).
pub fn parse_slots_n_ctx(body: &Value) -> Option<u64> {
    body.as_array()?
        .iter()
        .filter_map(|s| s.get("n_ctx").and_then(Value::as_u64))
        .min()
}

/// `n_ctx_train` from `/v1/models` `data[].meta`, recorded as the trained context only.
pub fn trained_context(models: &Value) -> Option<u64> {
    models
        .get("data")?
        .as_array()?
        .iter()
        .find_map(|m| m.get("meta")?.get("n_ctx_train")?.as_u64())
}

/// `"Q4_K - Medium"` → `q4_k_m`; `"Q8_0"` → `q8_0`; `"BF16"` → `bf16`.
pub fn quantization_from_ftype(ftype: &str) -> Option<String> {
    let t = ftype.trim();
    if t.is_empty() {
        return None;
    }
    let t = t
        .replace(" - Medium", "_M")
        .replace(" - Small", "_S")
        .replace(" - Large", "_L")
        .replace(" - Extra Small", "_XS")
        .replace(" - Extra Extra Small", "_XXS");
    let t = t.replace(' ', "_");
    Some(t.to_ascii_lowercase())
}

/// Request fields that turn thinking on or off on llama-server (tools/server/README.md):
/// `chat_template_kwargs.enable_thinking` reaches templates that read it (Qwen3 and kin);
/// `reasoning_format: "deepseek"` makes the server split any `<think>` block into
/// `reasoning_content`, so reasoning that leaks through is seen rather than scored as content;
/// `reasoning_effort: "none"` is llama.cpp's own off switch for templates that support effort.
/// A hard budget exists only as a server flag (`--reasoning-budget 0`), named in remediation.
pub fn thinking_extras(on: bool) -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    m.insert(
        "chat_template_kwargs".into(),
        json!({ "enable_thinking": on }),
    );
    m.insert("reasoning_format".into(), json!("deepseek"));
    if !on {
        m.insert("reasoning_effort".into(), json!("none"));
    }
    m
}

/// llama.cpp's overflow error body: `{"error": {"type": "exceed_context_size_error", …}}`
/// (tools/server/server-task.cpp). The type is stable; the message is not.
pub fn is_context_overflow(body: &str) -> bool {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| {
            v.get("error")?
                .get("type")?
                .as_str()
                .map(|t| t == "exceed_context_size_error")
        })
        .unwrap_or(false)
}

/// Output-length pinning: `ignore_eos: true` is honoured (tools/server/README.md; checked on b11434); there is no
/// `min_tokens`.
pub const OUTPUT_PINNING: super::OutputPinning = super::OutputPinning::IGNORE_EOS_ONLY;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn props_from_b11434() {
        // Trimmed from a real b11434 `/props` reply (-c 8192 -np 2).
        let v: Value = serde_json::from_str(r#"{"default_generation_settings":{"n_ctx":4096},"total_slots":2,"model_path":"/m/gemma-3-270m-q4_k_m.gguf","model_ftype":"Q4_K - Medium","build_info":"b11434-pypi-sdist","chat_template":"{%- for message in messages -%}"}"#).unwrap();
        assert!(is_props(&v));
        let p = parse_props(&v);
        assert_eq!(p.n_ctx, Some(4096));
        assert_eq!(p.total_slots, Some(2));
        assert_eq!(p.build_info.as_deref(), Some("b11434-pypi-sdist"));
        assert_eq!(
            quantization_from_ftype(p.model_ftype.as_deref().unwrap()).as_deref(),
            Some("q4_k_m")
        );
    }

    #[test]
    fn overflow_matched_on_type_not_message() {
        // b11434 wording, and an older build's wording with the same type.
        assert!(is_context_overflow(
            r#"{"error":{"code":400,"message":"request (5024 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5024,"n_ctx":4096}}"#
        ));
        assert!(is_context_overflow(
            r#"{"error":{"code":400,"message":"input (9000 tokens) is larger than the max context size","type":"exceed_context_size_error"}}"#
        ));
        assert!(!is_context_overflow(
            r#"{"error":{"code":400,"message":"exceeds the available context size","type":"invalid_request_error"}}"#
        ));
        assert!(!is_context_overflow("not json"));
    }

    #[test]
    fn slots_give_the_per_slot_window() {
        let v: Value =
            serde_json::from_str(r#"[{"id":0,"n_ctx":4096},{"id":1,"n_ctx":4096}]"#).unwrap();
        assert_eq!(parse_slots_n_ctx(&v), Some(4096));
        assert_eq!(parse_slots_n_ctx(&serde_json::json!({"error":"x"})), None);
    }

    #[test]
    fn trained_context_is_read_but_separate() {
        let v: Value = serde_json::from_str(
            r#"{"data":[{"id":"m","meta":{"n_ctx":4096,"n_ctx_train":32768}}]}"#,
        )
        .unwrap();
        assert_eq!(trained_context(&v), Some(32768));
    }
}
