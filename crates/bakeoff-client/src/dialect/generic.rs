//! Any other OpenAI-compatible server (a LiteLLM gateway, a hosted API): only `/v1/models` and
//! `/v1/chat/completions` are assumed. `max_model_len` is read from `/v1/models` when present.

use serde_json::{Value, json};

/// A gateway (LiteLLM `hosted_vllm/…`) passes `chat_template_kwargs` through to the engine;
/// nothing engine-specific is assumed beyond that.
pub fn thinking_extras(on: bool) -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    m.insert(
        "chat_template_kwargs".into(),
        json!({ "enable_thinking": on, "thinking": on }),
    );
    m
}
