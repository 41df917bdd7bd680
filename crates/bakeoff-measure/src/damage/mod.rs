//! `bakeoff eval damage`: how far a candidate's first-token distribution sits from a reference
//! endpoint's, as KL(reference ‖ candidate) from top-K logprobs (docs/suites.md, "Damage";
//! the estimator and its bias in docs/statistics.md).
//!
//! The shared pieces — the first-token request and its top-K ([`first_token`]), the prompt set
//! ([`prompts`]) and the instrument's noise rule ([`noise`]) — are what `eval adapter` reuses.

pub mod along;
mod events;
mod failures;
pub mod first_token;
pub mod items;
pub mod native;
pub mod noise;
pub mod prompts;
mod record;
mod run;

pub use events::{DamageEvent, DamageHook, Phase, Side};
pub use first_token::{
    FirstToken, FirstTokenError, TokenProb, TopK, first_token_distribution, first_token_request,
    kl, read_top_k, same_top1, send, unique_prefix, with_prefix,
};
pub use native::send_reading_native;
pub use noise::{
    RESOLUTION_NATS, SELF_CHECK_LIMIT_NATS, beyond_noise, noise_floor, self_check, summarize_kl,
    within_noise,
};
pub use prompts::{Prompt, PromptsError};
pub use run::{DamageOutcome, DamageRequest, evaluate_damage};

/// The suite's name in artifacts.
pub const SUITE: &str = "damage";

/// `--top-k` when none is given: vLLM's default `--max-logprobs`, the most every engine serves.
pub const DEFAULT_TOP_K: u32 = 20;
