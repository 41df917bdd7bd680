//! `bakeoff eval adapter`: is a LoRA adapter applied at all? (docs/suites.md, "Adapter check").
//! The artifact's `adapter` is an [`AdapterReport`]: how the adapter was asked for, the
//! instrument check, the verdict and its figures; `suites.adapter.items` holds the requests.

use bakeoff_stats::KlSummary;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::DamageSelfCheck;

/// How the endpoint serves the adapter, as the engine's dialect says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AdapterRouteKind {
    /// The adapter is a model id of its own (vLLM `--lora-modules name=path`, SGLang, a
    /// gateway): base and adapter requests differ in `model` only.
    ModelId,
    /// One model; the adapter is chosen per request by llama.cpp's `lora` field, by the id
    /// `GET /lora-adapters` lists it under: base and adapter requests differ in that field only.
    LlamacppLora,
}

/// A llama.cpp adapter as `GET /lora-adapters` listed it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LoraListing {
    pub id: u64,
    pub path: String,
    /// The server-wide scale (what a request without a `lora` field gets): the adapter is
    /// measured at this scale, as the server serves it.
    pub scale: f64,
}

/// How base and adapter were requested.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AdapterRoute {
    pub kind: AdapterRouteKind,
    /// `--adapter` as given.
    pub adapter: String,
    /// The `model` of the base requests.
    pub base_model: String,
    /// The `model` of the adapter requests (the base's own id on llama.cpp).
    pub adapter_model: String,
    /// `/v1/models` `parent` of the adapter id (vLLM lists an adapter's base there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// `/v1/models` `root` of the adapter id (vLLM: the adapter's local path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    /// llama.cpp: the adapter as listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lora: Option<LoraListing>,
    /// The request fields, beyond `model`, that select the base (llama.cpp: `lora`).
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub base_fields: serde_json::Map<String, serde_json::Value>,
    /// The request fields, beyond `model`, that select the adapter.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub adapter_fields: serde_json::Map<String, serde_json::Value>,
}

/// The check's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AdapterVerdict {
    /// The adapter's answers differ from the base's beyond the server's own noise.
    Applied,
    /// The adapter's answers are the base's within the server's own noise: it is served and
    /// does nothing (vLLM 0.24.0's silent no-op; a llama.cpp adapter at scale 0).
    AdapterNoOp,
    /// The base did not agree with itself (a nondeterministic server, a prompt cache, sampling
    /// left on): no verdict either way, and no divergence figure.
    Withheld,
    /// Nothing was measured: every prompt's requests failed or came back without logprobs.
    NotMeasured,
}

impl AdapterVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Applied => "applied",
            Self::AdapterNoOp => "adapter-no-op",
            Self::Withheld => "withheld",
            Self::NotMeasured => "not-measured",
        }
    }
}

/// One prompt: the base, the adapter, and the base again (the instrument check).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AdapterRow {
    pub id: String,
    /// KL(base ‖ adapter) of the first token's distribution, nats (docs/statistics.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kl: Option<f64>,
    /// KL(base ‖ base again): what the instrument reads with nothing changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_kl: Option<f64>,
    /// The most likely first token of each request (untrusted text: escaped when shown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_top1: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter_top1: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_again_top1: Option<String>,
    /// The greedy texts differ (adapter against base; base against itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_differs: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_text_differs: Option<bool>,
    /// Why the row was not measured, when it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unmeasured: Option<String>,
}

/// `bakeoff eval adapter`'s answer (the artifact's `adapter`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AdapterReport {
    pub verdict: AdapterVerdict,
    /// The verdict in one sentence, with its figure.
    pub message: String,
    pub route: AdapterRoute,
    /// `top_logprobs` and `max_tokens` of every request.
    pub top_k: u32,
    pub max_tokens: u32,
    /// Prompts planned, and prompts whose three requests all came back with logprobs.
    pub prompts: u64,
    pub measured: u64,
    /// The base against itself: the same rule as `eval damage`'s self-check (its upper bound
    /// at most `limit_nats`). Absent only when no prompt was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_check: Option<DamageSelfCheck>,
    /// KL(base ‖ adapter) of the first token, in nats: absent when withheld.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kl: Option<KlSummary>,
    /// The larger of the self-check's upper bound and the estimator's resolution: the adapter
    /// is applied when the lower bound of `kl` is above it.
    pub noise_floor_nats: f64,
    /// Prompts whose adapter top-1 token differs from the base's.
    pub top1_differs: u64,
    /// Prompts whose greedy texts differ: adapter against base, and base against itself.
    pub text_differs: u64,
    pub self_text_differs: u64,
    /// Seed of the bootstrap's index draws (the intervals replay exactly from it).
    pub bootstrap_seed: u64,
    pub rows: Vec<AdapterRow>,
}
