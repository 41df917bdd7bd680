//! Pinning output length so every request generates what was asked.
//!
//! Which engine honours what (request fields, documented):
//! - llama.cpp `llama-server`: `ignore_eos: true` (tools/server/README.md; checked on b11434,
//!   ../shared/engine/README.md). It has no `min_tokens`.
//! - vLLM: `ignore_eos` and `min_tokens` are extra sampling params of its OpenAI server
//!   (vllm/entrypoints/openai/protocol.py).
//! - SGLang: `ignore_eos` (python/sglang/srt/sampling/sampling_params.py).
//! - Anything else (a gateway, a hosted API): unknown fields may be rejected, so nothing is sent
//!   unless the operator forces it.
//!
//! What is *sent* is only a request; what was *honoured* is read back from `usage` per request
//! and recorded in the report's `pinning` (reference notes, pitfall 9: `min_tokens` was silently
//! ignored by GenAI-Perf).

use bakeoff_artifact::EngineKind;
use bakeoff_wire::ChatRequest;
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PinPolicy {
    pub ignore_eos: bool,
    pub min_tokens: bool,
}

impl PinPolicy {
    /// What this engine is documented to honour.
    pub fn for_engine(engine: EngineKind) -> Self {
        match engine {
            EngineKind::LlamaCpp | EngineKind::Sglang => PinPolicy {
                ignore_eos: true,
                min_tokens: false,
            },
            EngineKind::Vllm => PinPolicy {
                ignore_eos: true,
                min_tokens: true,
            },
            EngineKind::Generic => PinPolicy::default(),
        }
    }

    pub fn none() -> Self {
        PinPolicy::default()
    }

    pub fn apply(self, req: &mut ChatRequest, max_tokens: u32) {
        if self.ignore_eos {
            req.extra.insert("ignore_eos".into(), Value::Bool(true));
        }
        if self.min_tokens {
            req.extra
                .insert("min_tokens".into(), Value::from(max_tokens));
        }
    }
}
