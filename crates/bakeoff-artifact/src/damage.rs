//! `bakeoff eval damage`: how far a candidate's first-token distribution sits from a reference
//! endpoint's (KL divergence from top-K logprobs), with the instrument check that must pass
//! before any figure is reported (docs/suites.md, "Damage"; the estimator in
//! docs/statistics.md). The `damage` suite's per-prompt records are its items.

use bakeoff_stats::KlSummary;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{EngineKind, Score};

/// The reference endpoint the candidate was measured against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DamageReference {
    /// Its URL, credentials redacted.
    pub url: String,
    pub model: String,
    pub engine: EngineKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantization: Option<String>,
}

/// The instrument check: every prompt sent twice to the reference, the same text each time.
/// A deterministic reference gives KL 0 on every prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DamageSelfCheck {
    /// KL(reference run 1 ‖ reference run 2) over the prompts.
    pub kl: KlSummary,
    /// Prompts whose two reference runs named different top-1 tokens.
    pub top1_differs: u64,
    /// The check passes when the upper bound of `kl` (its bootstrap 97.5 %) is at most this.
    pub limit_nats: f64,
    pub passed: bool,
}

/// The `damage` suite's figures (`summary.damage`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DamageSummary {
    pub reference: DamageReference,
    /// `top_logprobs` asked of both endpoints.
    pub top_k: u32,
    /// Prompts planned, and prompts whose three requests all came back with logprobs.
    pub prompts: u64,
    pub measured: u64,
    /// Absent only when no prompt was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_check: Option<DamageSelfCheck>,
    /// KL(reference ‖ candidate), in nats: absent when withheld.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kl: Option<KlSummary>,
    /// Prompts whose candidate top-1 token differs from the reference's, with its Wilson
    /// interval: absent when withheld.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top1_differs: Option<Score>,
    /// Whether the candidate sits beyond the instrument's noise: the lower bound of `kl`
    /// above `noise_floor_nats`. Absent when withheld.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beyond_noise: Option<bool>,
    /// The larger of the self-check's upper bound and the estimator's resolution.
    pub noise_floor_nats: f64,
    /// Why no figure is reported (a failed self-check, nothing measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub withheld: Option<String>,
    /// Median over prompts of the probability mass the reference's top-K listed: the tail
    /// bucket holds the rest, and the estimate is blind inside it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_listed_mass_median: Option<f64>,
    /// Seed of the bootstrap's index draws (the intervals replay exactly from it).
    pub bootstrap_seed: u64,
    /// Caveats in words (a tokenizer that differs, a low listed mass).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}
