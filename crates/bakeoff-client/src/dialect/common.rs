//! What the engine modules share: the shapes of their answers (a `/tokenize` call, the
//! output-pinning fields) and the request and reply pieces vLLM and SGLang have in common. The
//! dispatcher (`dialect`) re-exports the shapes and picks an engine's module.

use serde_json::Value;

/// How to count tokens on this engine's server, when it can.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenizeCall {
    pub path: &'static str,
    pub body: Value,
    /// Recorded in artifacts as the tokenizer route.
    pub route: &'static str,
}

/// Which request fields this engine honours to pin the output length (fixed lengths for load
/// tests). What was honoured is still read back from `usage` by the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OutputPinning {
    pub ignore_eos: bool,
    pub min_tokens: bool,
}

impl OutputPinning {
    /// `ignore_eos` is honoured; there is no `min_tokens`.
    pub const IGNORE_EOS_ONLY: Self = Self {
        ignore_eos: true,
        min_tokens: false,
    };
}

/// `chat_template_kwargs` asking for thinking on or off, as vLLM and SGLang take it: Qwen3
/// templates read `enable_thinking`, Granite and DeepSeek-V3.x read `thinking`, so both are sent
/// (a template ignores kwargs it does not use).
pub(super) fn chat_template_thinking_extras(on: bool) -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    m.insert(
        "chat_template_kwargs".into(),
        serde_json::json!({ "enable_thinking": on, "thinking": on }),
    );
    m
}

/// The `version` string of a reply body (vLLM's `/version`, SGLang's `/server_info`).
pub(super) fn version_string(body: &Value) -> Option<String> {
    body.get("version")?.as_str().map(str::to_string)
}
