//! One measured request and what it meant.

use bakeoff_wire::{Timings, ToolCall, Usage};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What happened to an item, decided before any score.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// The check passed.
    Ok,
    /// A visible answer that failed the check.
    Wrong,
    /// No content, no reasoning.
    Empty,
    /// Empty `content` while reasoning came back: a thinking-mode artifact, not a wrong answer.
    EmptyContentReasoningOnly,
    /// Cut off by `max_tokens` (`finish_reason: length`) with a failing answer.
    Truncated,
    /// Cut off while still reasoning: the answer never started.
    TruncatedInReasoning,
    /// The server answered with an HTTP error (kept with its body).
    HttpError,
    /// A connect, first-byte, idle or total timeout.
    Timeout,
    /// The connection failed or dropped mid-stream (a stream cut inside an event included), or
    /// a 2xx reply broke the protocol's framing (not an event stream, invalid JSON).
    ConnectionError,
    /// The prompt missed its token target: excluded from the model's score.
    InstrumentMiss,
    /// Planned but never sent (it could not fit, or the run stopped first).
    Skipped,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Wrong => "wrong",
            Outcome::Empty => "empty",
            Outcome::EmptyContentReasoningOnly => "empty-content-reasoning-only",
            Outcome::Truncated => "truncated",
            Outcome::TruncatedInReasoning => "truncated-in-reasoning",
            Outcome::HttpError => "http-error",
            Outcome::Timeout => "timeout",
            Outcome::ConnectionError => "connection-error",
            Outcome::InstrumentMiss => "instrument-miss",
            Outcome::Skipped => "skipped",
        }
    }

    /// The request itself failed: nothing about the model was measured.
    pub fn is_request_failure(self) -> bool {
        matches!(
            self,
            Outcome::HttpError | Outcome::Timeout | Outcome::ConnectionError
        )
    }

    /// Counts toward the model's score (pass or fail).
    pub fn is_scored(self) -> bool {
        !self.is_request_failure() && !matches!(self, Outcome::InstrumentMiss | Outcome::Skipped)
    }
}

/// Client-side timing of one request, in milliseconds from the moment it was sent.
/// Definitions in docs/metrics.md.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LatencyRecord {
    /// First body byte.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_byte_ms: Option<f64>,
    /// First chunk carrying content or reasoning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<f64>,
    /// First chunk carrying visible content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttfot_ms: Option<f64>,
    pub e2e_ms: f64,
    /// Stream events that carried text (content, reasoning or tool-call arguments).
    pub text_chunks: u64,
}

/// The reply as received (untrusted text: every reporter escapes it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResponseRecord {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
    pub content: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reasoning: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// llama.cpp's own per-request timings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timings: Option<Timings>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorRecord {
    /// `http`, `timeout-connect`, `timeout-first-byte`, `timeout-idle`, `timeout-total`,
    /// `connect`, `stream`, `decode`, `server-error-event`.
    pub kind: String,
    pub message: String,
    /// Body of an HTTP error, truncated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ItemRecord {
    pub id: String,
    pub outcome: Outcome,
    /// The request body as sent (never a key: keys travel in headers only).
    pub request: serde_json::Value,
    pub response: ResponseRecord,
    /// What the check expected, as the suite states it.
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub expected: serde_json::Value,
    /// Why the check passed or failed, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
    pub latency: LatencyRecord,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorRecord>,
    /// Suite-specific figures (context rows: target/planned/actual tokens, …).
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub extra: serde_json::Value,
}
