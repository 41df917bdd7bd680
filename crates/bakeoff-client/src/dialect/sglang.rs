//! SGLang (python/sglang/srt/entrypoints/http_server.py).
//!
//! - `GET /server_info` (older: `/get_server_info`): server args, scheduler info and `version`.
//! - `/v1/models` `data[].max_model_len`: the window.
//! - `POST /tokenize {model, prompt}` in recent releases; older ones lack it, which discovery
//!   records as "tokenize does not work" rather than assuming.

use serde_json::{Value, json};

use super::TokenizeCall;

pub fn tokenize_call(model: &str, text: &str) -> TokenizeCall {
    TokenizeCall {
        path: "tokenize",
        body: json!({ "model": model, "prompt": text, "add_special_tokens": false }),
        route: "SGLang POST /tokenize",
    }
}

/// A server_info body is SGLang's when it carries its version beside its server args.
pub fn parse_server_info(body: &Value) -> Option<String> {
    let looks_like = body.get("version").is_some()
        && (body.get("model_path").is_some()
            || body.get("server_args").is_some()
            || body.get("tp_size").is_some()
            || body.get("internal_states").is_some());
    if !looks_like {
        return None;
    }
    body.get("version")?.as_str().map(str::to_string)
}

/// SGLang thinking control (docs.sglang.io separate_reasoning): `chat_template_kwargs`
/// `enable_thinking` (Qwen3) or `thinking` (DeepSeek-V3.x); both are sent.
pub fn thinking_extras(on: bool) -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    m.insert(
        "chat_template_kwargs".into(),
        json!({ "enable_thinking": on, "thinking": on }),
    );
    m
}

/// Output-length pinning: `ignore_eos` (python/sglang/srt/sampling/sampling_params.py); no `min_tokens`.
pub const OUTPUT_PINNING: super::OutputPinning = super::OutputPinning {
    ignore_eos: true,
    min_tokens: false,
};
