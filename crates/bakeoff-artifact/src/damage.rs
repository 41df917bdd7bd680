//! `bakeoff eval damage`: how far a candidate's first-token distribution sits from a reference
//! endpoint's (KL divergence from top-K logprobs), with the instrument check that must pass
//! before any figure is reported (docs/suites.md, "Damage"; the estimator in
//! docs/statistics.md). The `damage` suite's per-prompt records are its items.

use bakeoff_stats::{ClusteredSummary, KlSummary};
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
    /// Damage along the reply; absent with `--tokens 0` and in artifacts before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub along: Option<DamageAlong>,
}

/// Damage along the reply (`eval damage --tokens N`, docs/suites.md "Damage along the reply"):
/// greedy replies of up to N tokens from both endpoints, compared token by token, and the
/// candidate's next-token distribution at every position of the reference's reply (teacher
/// forcing) against the reference's own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DamageAlong {
    /// Tokens asked of each greedy reply (`--tokens`).
    pub tokens: u32,
    /// How the endpoints were asked, in words (per engine: docs/suites.md).
    pub route: String,
    /// Why the teacher-forced figures (`token_kl`, `token_top1_differs`, `positions`) are
    /// absent: an engine with no route, prompts the two endpoints render differently.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forcing_missing: Option<String>,
    /// Prompts whose reference reply came back (the reference's first run).
    pub prompts: u64,
    /// The reference against itself, the same text, one request at a time: its replies must be
    /// identical and its per-token KL within the limit, or every figure here is withheld.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_check: Option<AlongCheck>,
    /// The reference against itself with requests in flight beside each other: engines are not
    /// batch-invariant, so this is the practical noise floor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_floor: Option<AlongCheck>,
    /// Where the candidate is read past a parting by another route than the reference's own
    /// distributions (llama.cpp: one token over a cached prefix, against the reference's
    /// decode): the reference read that way along its own reply on the first prompts. Its
    /// upper bound is part of the noise floor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route_check: Option<AlongCheck>,
    /// Prompts whose candidate reply is identical to the reference's, with its Wilson interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub greedy_identical: Option<Score>,
    /// Median over the prompts whose replies part of the first position where they do
    /// (0-based, in the reference's tokens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_divergence_median: Option<f64>,
    /// Share of the reference's tokens the candidate's reply reproduces (longest common
    /// subsequence over the reference's length), per prompt: mean with a bootstrap interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reproduced: Option<KlSummary>,
    /// KL(reference ‖ candidate) at every position of the reference's reply, in nats: mean
    /// and median with intervals from a bootstrap over prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_kl: Option<ClusteredSummary>,
    /// Share of positions whose candidate top-1 differs from the reference's (same bootstrap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_top1_differs: Option<ClusteredSummary>,
    /// Per position of the reply: the curve that shows whether damage grows with length.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub positions: Vec<PositionFigure>,
    /// The largest of the self-check's, the batch floor's and the route check's upper bounds and
    /// the estimator's resolution: per-token KL "beyond noise" means its lower bound is above this.
    pub noise_floor_nats: f64,
    /// Per-token KL beyond the noise floor. Absent when withheld or not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kl_beyond_noise: Option<bool>,
    /// Fewer identical replies than the batch floor allows: the upper bound of the candidate's
    /// identical share is below the lower bound of the batch floor's. Absent when withheld.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agreement_beyond_noise: Option<bool>,
    /// Why no figure here is reported (a failed self-check, nothing measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub withheld: Option<String>,
    /// Where the seconds went, one entry per phase that ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timing: Vec<AlongTiming>,
}

/// One phase of damage along the reply and what it cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AlongTiming {
    /// `self-check`, `batch floor` or `candidate`.
    pub phase: String,
    /// Prompts the phase asked about (the batch floor's fillers not counted).
    pub prompts: u64,
    /// Reply positions those prompts cover: the reference reply's tokens, once per prompt.
    pub positions: u64,
    /// HTTP requests the phase sent: renders, greedy replies, teacher-forcing calls.
    pub requests: u64,
    /// Wall-clock seconds of the phase.
    pub seconds: f64,
    /// `seconds / prompts`; absent with no prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds_per_prompt: Option<f64>,
    /// `seconds / positions`; absent with no position.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds_per_position: Option<f64>,
}

impl AlongTiming {
    /// The phase's record from its counts and seconds.
    pub fn new(phase: &str, prompts: u64, positions: u64, requests: u64, seconds: f64) -> Self {
        let per = |n: u64| (n > 0).then(|| seconds / n as f64);
        AlongTiming {
            phase: phase.to_string(),
            prompts,
            positions,
            requests,
            seconds,
            seconds_per_prompt: per(prompts),
            seconds_per_position: per(positions),
        }
    }
}

/// The reference against its own first run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AlongCheck {
    /// Requests in flight while it was asked (1: one at a time).
    pub in_flight: u32,
    /// Replies identical to the first run's.
    pub identical: Score,
    /// Per-token KL against the first run's distributions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_kl: Option<ClusteredSummary>,
    /// The self-check's limit on `token_kl`'s upper bound (absent for the batch floor, which
    /// measures and never fails).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_nats: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passed: Option<bool>,
}

/// One position of the reference's reply, over the prompts whose reply reaches it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PositionFigure {
    /// 0-based, in the reference's tokens.
    pub position: u32,
    pub prompts: u64,
    pub mean_kl: f64,
    pub top1_differs: u64,
}
