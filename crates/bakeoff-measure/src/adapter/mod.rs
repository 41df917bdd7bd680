//! The adapter check (`bakeoff eval adapter`, docs/suites.md "Adapter check"): is a LoRA
//! adapter applied at all? the fleet field cases' (docs/field-cases.md) finding was that vLLM 0.24.0 served an adapter, answered
//! requests to it, and applied nothing — a silent no-op only a comparison with the base shows.
//!
//! For each prompt, at temperature 0 with the first token's `top_logprobs`: the base, then the
//! adapter, then the base again — the same text behind one unique prefix, each request with its
//! own cache salt. The base against itself is the instrument check, with `eval damage`'s rule
//! ([`crate::damage::noise`]): a base that does not agree with itself (nondeterminism, a cache,
//! sampling left on) gets no verdict, so noise can never pass for an applied adapter. Then the
//! adapter against the base: within that noise → `adapter-no-op`; beyond it → `applied`, with
//! KL(base ‖ adapter).
//!
//! How base and adapter are asked for is the endpoint's ([`bakeoff_client::adapter`]): a model
//! id of its own (vLLM), or llama.cpp's per-request `lora` field. The prompts, the first-token
//! request and the estimator are `eval damage`'s ([`crate::damage`]).

mod measure;
mod run;
mod verdict;

pub use measure::{AdapterExtra, AdapterInput, AdapterMeasured, Leg, check};
pub use run::{AdapterEvent, AdapterRequest, AdapterRunError, applied, run};
pub use verdict::decide;

/// The suite's name in the artifact (`suites.adapter`).
pub const SUITE: &str = "adapter";

/// `--top-k`, `--max-tokens`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdapterOptions {
    /// Alternatives asked for at the first position (`top_logprobs`).
    pub top_k: u32,
    /// Greedy tokens per request: enough for the texts to part when the first token agrees.
    pub max_tokens: u32,
}

impl Default for AdapterOptions {
    fn default() -> Self {
        Self {
            top_k: crate::damage::DEFAULT_TOP_K,
            max_tokens: 8,
        }
    }
}
