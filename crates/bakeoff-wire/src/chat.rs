//! Chat-completion request and response shapes.
//!
//! Response types accept every field as optional: engines differ (llama.cpp sends a role-only
//! first chunk with `content: null`, a usage chunk with `choices: []`), and a missing field must
//! never turn a real reply into a parse error. Vendor fields we know are named; unknown ones are
//! ignored on the streaming hot path.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One request message. Assistant messages in history may carry `tool_calls`; tool results carry
/// `tool_call_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct Message {
    pub role: String,
    #[serde(default)]
    pub content: Option<String>,
    /// llama.cpp and older vLLM (`--reasoning-parser`) put reasoning here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    /// Newer vLLM renamed the field to `reasoning`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCall>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Message {
    pub fn new(role: &str, content: impl Into<String>) -> Self {
        Self {
            role: role.to_string(),
            content: Some(content.into()),
            ..Self::default()
        }
    }
    pub fn system(content: impl Into<String>) -> Self {
        Self::new("system", content)
    }
    pub fn user(content: impl Into<String>) -> Self {
        Self::new("user", content)
    }
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::new("assistant", content)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolCall {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(rename = "type", default = "function_type")]
    pub kind: String,
    pub function: FunctionCall,
}

fn function_type() -> String {
    "function".to_string()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FunctionCall {
    pub name: String,
    /// JSON text, exactly as the server sent it: a model may emit invalid JSON, and the checker
    /// must see that rather than a silently repaired value.
    #[serde(default)]
    pub arguments: String,
}

/// A tool offered to the model (`tools: [{type: function, function: {...}}]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Tool {
    #[serde(rename = "type")]
    pub kind: String,
    pub function: ToolFunction,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolFunction {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A JSON Schema object.
    pub parameters: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StreamOptions {
    pub include_usage: bool,
}

/// `POST /v1/chat/completions` body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ChatRequest {
    pub model: String,
    pub messages: Vec<Message>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    pub stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_options: Option<StreamOptions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<Value>,
    /// Ask for the log probability of each generated token (OpenAI `logprobs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<bool>,
    /// How many alternatives per position, with their log probabilities (OpenAI
    /// `top_logprobs`; vLLM refuses more than its `--max-logprobs`, default 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_logprobs: Option<u32>,
    /// Engine-specific fields (`chat_template_kwargs`, `ignore_eos`, `min_tokens`,
    /// `reasoning_format`, …), added by the engine's dialect, never by a suite directly.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ChatRequest {
    /// A request with the fields every suite sets; `stream` also asks for the final usage chunk,
    /// since token counts must come from the server.
    pub fn new(
        model: impl Into<String>,
        messages: Vec<Message>,
        max_tokens: u32,
        stream: bool,
    ) -> Self {
        Self {
            model: model.into(),
            messages,
            max_tokens: Some(max_tokens),
            temperature: Some(0.0),
            seed: None,
            stream,
            stream_options: stream.then_some(StreamOptions {
                include_usage: true,
            }),
            tools: None,
            tool_choice: None,
            logprobs: None,
            top_logprobs: None,
            extra: Map::new(),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CompletionTokensDetails {
    #[serde(default)]
    pub reasoning_tokens: Option<u64>,
}

/// OpenAI's `usage.prompt_tokens_details`; vLLM sends it under
/// `--enable-prompt-tokens-details` (vLLM 0.32 `vllm/entrypoints/openai/protocol.py`
/// `PromptTokenUsageInfo`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PromptTokensDetails {
    #[serde(default)]
    pub cached_tokens: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Usage {
    #[serde(default)]
    pub prompt_tokens: Option<u64>,
    #[serde(default)]
    pub completion_tokens: Option<u64>,
    #[serde(default)]
    pub total_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_tokens_details: Option<CompletionTokensDetails>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens_details: Option<PromptTokensDetails>,
}

impl Usage {
    /// `prompt_tokens_details.cached_tokens`, when the server reported it.
    pub fn cached_tokens(&self) -> Option<u64> {
        self.prompt_tokens_details.as_ref()?.cached_tokens
    }

    /// `completion_tokens_details.reasoning_tokens`, when the server reported it.
    pub fn reasoning_tokens(&self) -> Option<u64> {
        self.completion_tokens_details.as_ref()?.reasoning_tokens
    }
}

/// llama.cpp's per-request server timings (tools/server/server-task.cpp `result_timings`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Timings {
    #[serde(default)]
    pub cache_n: Option<u64>,
    #[serde(default)]
    pub prompt_n: Option<u64>,
    #[serde(default)]
    pub prompt_ms: Option<f64>,
    #[serde(default)]
    pub prompt_per_token_ms: Option<f64>,
    #[serde(default)]
    pub prompt_per_second: Option<f64>,
    #[serde(default)]
    pub predicted_n: Option<u64>,
    #[serde(default)]
    pub predicted_ms: Option<f64>,
    #[serde(default)]
    pub predicted_per_token_ms: Option<f64>,
    #[serde(default)]
    pub predicted_per_second: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft_n: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft_n_accepted: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct FunctionCallDelta {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub arguments: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ToolCallDelta {
    #[serde(default)]
    pub index: Option<u32>,
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub function: Option<FunctionCallDelta>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ChunkDelta {
    #[serde(default)]
    pub role: Option<String>,
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default)]
    pub reasoning_content: Option<String>,
    #[serde(default)]
    pub reasoning: Option<String>,
    #[serde(default)]
    pub tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ChunkChoice {
    #[serde(default)]
    pub index: u32,
    #[serde(default)]
    pub delta: ChunkDelta,
    #[serde(default)]
    pub finish_reason: Option<String>,
}

/// One `data:` payload of a streamed reply.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct StreamChunk {
    #[serde(default)]
    pub choices: Vec<ChunkChoice>,
    #[serde(default)]
    pub usage: Option<Usage>,
    #[serde(default)]
    pub timings: Option<Timings>,
    /// Some servers send `{"error": {...}}` as a data event mid-stream.
    #[serde(default)]
    pub error: Option<Value>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct NonStreamChoice {
    #[serde(default)]
    pub index: u32,
    #[serde(default)]
    pub message: Option<Message>,
    #[serde(default)]
    pub finish_reason: Option<String>,
    /// Present when the request asked for `logprobs` (`null` otherwise, as OpenAI sends it).
    #[serde(default)]
    pub logprobs: Option<ChoiceLogprobs>,
}

/// `choices[i].logprobs`: one entry per generated token.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ChoiceLogprobs {
    #[serde(default)]
    pub content: Option<Vec<TokenLogprob>>,
}

/// One generated token with its log probability and the `top_logprobs` alternatives at its
/// position (OpenAI's shape, served by llama.cpp — tools/server/server-task.cpp
/// `probs_vector_to_json`, which adds the token `id` — and vLLM).
///
/// llama.cpp's probabilities are the model's own softmax before any sampler runs unless the
/// request sets `post_sampling_probs` (server-context.cpp `populate_token_probs`); its `token`
/// text is cut at an incomplete UTF-8 sequence, so `bytes` is the exact identity of a token.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TokenLogprob {
    #[serde(default)]
    pub token: String,
    pub logprob: f64,
    #[serde(default)]
    pub bytes: Option<Vec<u8>>,
    #[serde(default)]
    pub top_logprobs: Vec<TopLogprob>,
}

/// One alternative at a position.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TopLogprob {
    #[serde(default)]
    pub token: String,
    pub logprob: f64,
    #[serde(default)]
    pub bytes: Option<Vec<u8>>,
}

impl TopLogprob {
    /// The token's exact bytes: `bytes` when the server sent them, else its text.
    pub fn key(&self) -> Vec<u8> {
        self.bytes
            .clone()
            .unwrap_or_else(|| self.token.as_bytes().to_vec())
    }
}

/// A non-streamed reply.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct NonStreamResponse {
    #[serde(default)]
    pub choices: Vec<NonStreamChoice>,
    #[serde(default)]
    pub usage: Option<Usage>,
    #[serde(default)]
    pub timings: Option<Timings>,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    // Shapes copied from llama.cpp b11434's stream, as measured on llama-server b11434.
    #[test]
    fn llama_cpp_role_only_first_chunk() {
        let c: StreamChunk = serde_json::from_str(
            r#"{"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],"created":1,"id":"x","model":"m","object":"chat.completion.chunk"}"#,
        )
        .unwrap();
        assert_eq!(c.choices[0].delta.content, None);
    }

    #[test]
    fn llama_cpp_usage_chunk_with_timings() {
        let c: StreamChunk = serde_json::from_str(
            r#"{"choices":[],"usage":{"completion_tokens":8,"prompt_tokens":12,"total_tokens":20},"timings":{"cache_n":0,"prompt_n":12,"prompt_ms":30.5,"prompt_per_token_ms":2.5,"prompt_per_second":393.4,"predicted_n":8,"predicted_ms":300.0,"predicted_per_token_ms":37.5,"predicted_per_second":26.6}}"#,
        )
        .unwrap();
        assert_eq!(c.usage.unwrap().prompt_tokens, Some(12));
        assert_eq!(c.timings.unwrap().predicted_n, Some(8));
    }

    #[test]
    fn vllm_reasoning_field_and_details() {
        let c: StreamChunk = serde_json::from_str(
            r#"{"choices":[{"index":0,"delta":{"reasoning":"hmm"}}],"usage":{"prompt_tokens":1,"completion_tokens":2,"completion_tokens_details":{"reasoning_tokens":2}}}"#,
        )
        .unwrap();
        assert_eq!(c.choices[0].delta.reasoning.as_deref(), Some("hmm"));
        assert_eq!(
            c.usage
                .unwrap()
                .completion_tokens_details
                .unwrap()
                .reasoning_tokens,
            Some(2)
        );
    }

    #[test]
    fn llama_cpp_logprobs_shape() {
        // A b11434 reply to `logprobs: true, top_logprobs: 2, max_tokens: 1` (trimmed).
        let r: NonStreamResponse = serde_json::from_str(
            r#"{"choices":[{"finish_reason":"length","index":0,"message":{"role":"assistant","content":"Ref"},"logprobs":{"content":[{"id":7166,"token":"Ref","bytes":[82,101,102],"logprob":-1.70932,"top_logprobs":[{"id":7166,"token":"Ref","bytes":[82,101,102],"logprob":-1.70932},{"id":236820,"token":"<","bytes":[60],"logprob":-2.02014}]}]}}]}"#,
        )
        .unwrap();
        let lp = r.choices[0]
            .logprobs
            .as_ref()
            .unwrap()
            .content
            .as_ref()
            .unwrap();
        assert_eq!(lp[0].top_logprobs.len(), 2);
        assert_eq!(lp[0].top_logprobs[1].key(), b"<".to_vec());
        // OpenAI sends `"logprobs": null` when none were asked for.
        let r: NonStreamResponse =
            serde_json::from_str(r#"{"choices":[{"index":0,"logprobs":null}]}"#).unwrap();
        assert_eq!(r.choices[0].logprobs, None);
    }

    #[test]
    fn logprob_fields_are_left_out_unless_asked() {
        let mut r = ChatRequest::new("m", vec![Message::user("hi")], 1, false);
        let v = serde_json::to_value(&r).unwrap();
        assert!(v.get("logprobs").is_none() && v.get("top_logprobs").is_none());
        r.logprobs = Some(true);
        r.top_logprobs = Some(20);
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["top_logprobs"], 20);
    }

    #[test]
    fn request_serializes_extras_flat() {
        let mut r = ChatRequest::new("m", vec![Message::user("hi")], 4, true);
        r.extra.insert("ignore_eos".into(), Value::Bool(true));
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["ignore_eos"], Value::Bool(true));
        assert_eq!(v["stream_options"]["include_usage"], Value::Bool(true));
        assert!(v.get("tools").is_none());
    }
}
