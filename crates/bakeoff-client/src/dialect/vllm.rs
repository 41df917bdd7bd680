//! vLLM's OpenAI server (vllm/entrypoints/openai/protocol.py, api_server.py).
//!
//! - `GET /version` → `{"version": "0.11.0"}`.
//! - `/v1/models` `data[].max_model_len`: the window.
//! - `POST /tokenize {model, prompt, add_special_tokens}` → `{count, max_model_len, tokens}`;
//!   it also accepts `messages` to include the chat template.

use serde_json::{Value, json};

use super::common::{OutputPinning, TokenizeCall};

pub fn tokenize_call(model: &str, text: &str) -> TokenizeCall {
    TokenizeCall {
        path: "tokenize",
        body: json!({ "model": model, "prompt": text, "add_special_tokens": false }),
        route: "vLLM POST /tokenize",
    }
}

/// `/version` of vLLM is a one-field object with a version string.
pub fn parse_version(body: &Value) -> Option<String> {
    super::common::version_string(body)
}

/// vLLM thinking control (docs.vllm.ai features/reasoning_outputs): request
/// `chat_template_kwargs`; Qwen3 reads `enable_thinking`, Granite and DeepSeek-V3.1 read
/// `thinking`, so both are sent (a template ignores kwargs it does not use). No
/// `reasoning_effort`: vLLM validates it against low/medium/high and would reject "none".
pub fn thinking_extras(on: bool) -> serde_json::Map<String, Value> {
    super::common::chat_template_thinking_extras(on)
}

/// Output-length pinning: `ignore_eos` and `min_tokens` are extra sampling params of the OpenAI server
/// (vllm/entrypoints/openai/protocol.py).
pub const OUTPUT_PINNING: OutputPinning = OutputPinning {
    ignore_eos: true,
    min_tokens: true,
};
