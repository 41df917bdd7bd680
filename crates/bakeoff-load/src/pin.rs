//! Pinning output length so every request generates what was asked.
//!
//! Which engine honours what is an engine fact, kept in each engine's dialect module
//! (`bakeoff_client::dialect::output_pinning`, with its sources); this module applies it.
//!
//! What is *sent* is only a request; what was *honoured* is read back from `usage` per request
//! and recorded in the report's `pinning`: an engine or client that silently ignores
//! `min_tokens` would otherwise pass for one that honoured it (the flag `pinning-not-honoured`,
//! docs/artifacts.md).

use bakeoff_artifact::EngineKind;
use bakeoff_wire::ChatRequest;
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PinPolicy {
    pub ignore_eos: bool,
    pub min_tokens: bool,
}

impl PinPolicy {
    /// What this engine is documented to honour (its dialect module says).
    pub fn for_engine(engine: EngineKind) -> Self {
        let p = bakeoff_client::dialect::output_pinning(engine);
        PinPolicy {
            ignore_eos: p.ignore_eos,
            min_tokens: p.min_tokens,
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
