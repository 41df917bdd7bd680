//! llama.cpp `llama-server` (tools/server/README.md; shapes checked against build b11434).
//!
//! - `/props`: `build_info` ("b11434-<commit>"), `default_generation_settings.n_ctx` (per slot),
//!   `total_slots`, `model_path`, `model_ftype` ("Q4_K - Medium"), `chat_template`.
//! - `/slots`: one object per slot with its own `n_ctx` — the window a request really gets:
//!   `-c 8192 -np 2` gives 4096 per slot unless the KV cache is unified (`-kvu`).
//! - `/v1/models` `data[].meta.n_ctx_train` is the *trained* context: never the window.
//! - `/tokenize {content, add_special}` returns `{tokens: [...]}` without BOS by default.

use serde_json::{Value, json};

use super::common::{OutputPinning, TokenizeCall};

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

/// `GET /lora-adapters`: the adapters loaded with `--lora` / `--lora-scaled` (tools/server/README.md).
pub const LORA_ADAPTERS_PATH: &str = "lora-adapters";

/// One adapter as `GET /lora-adapters` lists it (tools/server/server-task.cpp,
/// `server_task_result_get_lora::to_json`: `{id, path, scale, task_name, prompt_prefix}`). `scale`
/// is the server-wide scale a request without a `lora` field gets (`--lora` loads at 1,
/// `--lora-scaled FILE:S` at S, `--lora-init-without-apply` at 0; `POST /lora-adapters` sets it).
#[derive(Debug, Clone, PartialEq)]
pub struct LoraAdapter {
    pub id: u64,
    pub path: String,
    pub scale: f64,
}

/// The adapters of a `GET /lora-adapters` reply; `None` when the body is not that list.
pub fn parse_lora_adapters(body: &Value) -> Option<Vec<LoraAdapter>> {
    body.as_array()?
        .iter()
        .map(|a| {
            Some(LoraAdapter {
                id: a.get("id")?.as_u64()?,
                path: a.get("path")?.as_str()?.to_string(),
                scale: a.get("scale")?.as_f64()?,
            })
        })
        .collect()
}

/// Which listed adapter an operator's ADAPTER_ID names: its id (`0`), its path as listed, or that
/// path's file name with or without `.gguf`. Every adapter it could name, so the caller can tell
/// "none" from "ambiguous".
pub fn find_lora<'a>(adapters: &'a [LoraAdapter], wanted: &str) -> Vec<&'a LoraAdapter> {
    let wanted = wanted.trim();
    if let Ok(id) = wanted.parse::<u64>()
        && let Some(a) = adapters.iter().find(|a| a.id == id)
    {
        return vec![a];
    }
    if let Some(a) = adapters.iter().find(|a| a.path == wanted) {
        return vec![a];
    }
    adapters
        .iter()
        .filter(|a| {
            let name = a.path.rsplit(['/', '\\']).next().unwrap_or(&a.path);
            name == wanted || name.strip_suffix(".gguf") == Some(wanted)
        })
        .collect()
}

/// The per-request `lora` field that applies adapter `id` at `scale`: every adapter the list
/// leaves out runs at scale 0 for that request (server-context.cpp `construct_lora_list`), so
/// `[{id, scale: 0}]` asks for the base model alone.
pub fn lora_field(id: u64, scale: f64) -> Value {
    json!([{ "id": id, "scale": scale }])
}

/// Output-length pinning: `ignore_eos: true` is honoured (tools/server/README.md; checked on b11434); there is no
/// `min_tokens`.
pub const OUTPUT_PINNING: OutputPinning = OutputPinning::IGNORE_EOS_ONLY;

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
    fn lora_adapters_from_b11434() {
        // The shape of a b11434 `GET /lora-adapters` reply (server-task.cpp).
        let v: Value = serde_json::from_str(r#"[{"id":0,"path":"/c/models/test-lora-v1.gguf","scale":1.0,"task_name":"","prompt_prefix":""},{"id":1,"path":"other.gguf","scale":0.0,"task_name":"","prompt_prefix":""}]"#).unwrap();
        let list = parse_lora_adapters(&v).unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].scale, 1.0);
        // By id, by the path as listed, by file name, by stem.
        assert_eq!(find_lora(&list, "1")[0].id, 1);
        assert_eq!(find_lora(&list, "/c/models/test-lora-v1.gguf")[0].id, 0);
        assert_eq!(find_lora(&list, "test-lora-v1.gguf")[0].id, 0);
        assert_eq!(find_lora(&list, "other")[0].id, 1);
        assert!(find_lora(&list, "7").is_empty());
        assert!(find_lora(&list, "missing.gguf").is_empty());
        assert_eq!(parse_lora_adapters(&json!({"error": "x"})), None);
        assert_eq!(lora_field(0, 0.0), json!([{"id": 0, "scale": 0.0}]));
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
