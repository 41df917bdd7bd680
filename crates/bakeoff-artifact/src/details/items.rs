//! Each suite's item `extra`, typed (docs/artifacts.md, the table of each suite's `extra` shape).
//!
//! `ItemRecord.extra` stays the stored JSON, as `summary.details` does, and for the reason the
//! details give (the suite that picks the shape is outside the value): each suite's shape is a
//! struct here, the suites write it through their `item_extra` and readers read it with
//! [`ItemRecord::extra_as`]. The structs read tolerantly: a field that may be missing in an
//! artifact from before it existed reads as empty; only the fields that say what the record is
//! (a tool call's landing, a structured outcome, a damage phase, an adapter leg) are required.
//! The damage suite's shapes are in [`super::damage_items`].

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::short_type_name;
use crate::details::StructuredOutcome;
use crate::facts::WindowSource;
use crate::item::ItemRecord;

/// An item's `extra` did not read as the shape asked for.
#[derive(Debug, thiserror::Error)]
#[error("item {item}: extra does not read as {shape}: {source}")]
pub struct ExtraError {
    /// The item's id.
    pub item: String,
    /// The type asked for (`RefusalExtra`, …).
    pub shape: &'static str,
    #[source]
    pub source: serde_json::Error,
}

impl ItemRecord {
    /// The item's `extra` as `T`, read in place.
    pub fn extra_as<T: DeserializeOwned>(&self) -> Result<T, ExtraError> {
        T::deserialize(&self.extra).map_err(|source| ExtraError {
            item: self.id.clone(),
            shape: short_type_name::<T>(),
            source,
        })
    }
}

/// The refusal marker that matched a reply (`extra.marker` of the refusal suite).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RefusalMarker {
    /// The phrase, or the opener and the verb that followed it (`i can't … help`), or the
    /// opener and the sentence end (`i can't .`).
    #[serde(default)]
    pub marker: String,
    /// Where in the normalized answer it matched (characters).
    #[serde(default)]
    pub at: usize,
}

/// The refusal suite's `extra`: the category and the judgement.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RefusalExtra {
    #[serde(default)]
    pub category: String,
    /// `true` refused, `false` answered, `null` neither.
    #[serde(default)]
    pub refused: Option<bool>,
    /// The refusal marker that matched; `null` when none did.
    #[serde(default)]
    pub marker: Option<RefusalMarker>,
    /// The server's `completion_tokens_details.reasoning_tokens`; `null` when not reported.
    #[serde(default)]
    pub reasoning_tokens: Option<u64>,
}

/// The structured suite's `extra`: the judgement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StructuredExtra {
    /// The item's feature class (the family it is paired and counted in).
    #[serde(default)]
    pub class: String,
    /// `refused`, `not-enforced`, `truncated`, `valid-wrong`, `valid-right`, `request-failed`.
    pub outcome: StructuredOutcome,
    /// The request form the schema went in.
    #[serde(default)]
    pub form: String,
    /// The server's own words, for a refusal.
    #[serde(default)]
    pub words: Option<String>,
    /// What the reply broke, for `not-enforced`.
    #[serde(default)]
    pub violation: Option<String>,
}

/// Where a reply's tool calls landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ToolLanding {
    /// Parsed by the server into `tool_calls`.
    ToolCalls,
    /// Written as text in the visible answer.
    ContentText,
    /// Written as text in the reasoning.
    Reasoning,
    /// No call anywhere.
    Nowhere,
}

impl ToolLanding {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolLanding::ToolCalls => "tool-calls",
            ToolLanding::ContentText => "content-text",
            ToolLanding::Reasoning => "reasoning",
            ToolLanding::Nowhere => "nowhere",
        }
    }
}

/// The tool suite's `extra`: where the reply's calls landed, and whether calls written as
/// text would have passed had the server parsed them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolExtra {
    /// The case's category: the statistics family.
    #[serde(default)]
    pub family: String,
    pub landing: ToolLanding,
    /// `null` where the question does not arise (calls parsed, or none made).
    #[serde(default)]
    pub would_pass_if_parsed: Option<bool>,
    /// The server's `completion_tokens_details.reasoning_tokens`; `null` when not reported.
    #[serde(default)]
    pub reasoning_tokens: Option<u64>,
}

/// The intelligence suite's `extra`: the item's family, its chance floor, and what extraction
/// made of the answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IntelligenceExtra {
    #[serde(default)]
    pub family: String,
    /// Probability that a uniform guess passes.
    #[serde(default)]
    pub chance: f64,
    /// The answer extraction found; `null` when it found none or none was looked for.
    #[serde(default)]
    pub extracted: Option<String>,
    #[serde(default)]
    pub extraction_failed: bool,
    /// The server's `completion_tokens_details.reasoning_tokens`; `null` when not reported.
    #[serde(default)]
    pub reasoning_tokens: Option<u64>,
}

/// The session suite's `extra` of a turn: its family and place; the history it was sent with
/// only when it was sent (a turn skipped after an earlier one failed has neither field, not
/// `null`s).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TurnExtra {
    #[serde(default)]
    pub family: String,
    /// 1-based.
    #[serde(default)]
    pub turn: usize,
    #[serde(flatten)]
    pub sent: Option<TurnSent>,
}

/// What a sent turn carried. `history_messages` has no default: with one, a skipped turn
/// (neither field) would read as sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TurnSent {
    /// Messages in the request: the system prompt, every turn so far and the replies.
    pub history_messages: usize,
    /// The server's `completion_tokens_details.reasoning_tokens`; `null` when not reported.
    pub reasoning_tokens: Option<u64>,
}

/// The context suite's `extra` of a needle item: what it asked for, planned and counted
/// (docs/artifacts.md "Context suite records").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NeedleExtra {
    /// The target as the operator wrote it (`16k`, `window`).
    #[serde(default)]
    pub target_label: String,
    #[serde(default)]
    pub requested_tokens: u64,
    /// What was aimed for: the request, clamped to the window less the output budget.
    #[serde(default)]
    pub target_tokens: u64,
    /// The prompt's size as the suite counted it.
    #[serde(default)]
    pub planned_tokens: u64,
    /// The server's `usage.prompt_tokens`; `null` when it reported none.
    #[serde(default)]
    pub actual_prompt_tokens: Option<u64>,
    /// `actual_prompt_tokens − target_tokens`; `null` with no server count.
    #[serde(default)]
    pub delta_tokens: Option<i64>,
    #[serde(default)]
    pub tolerance_tokens: u64,
    #[serde(default)]
    pub depth_requested: f64,
    /// The needle's depth as placed (on a sentence boundary).
    #[serde(default)]
    pub depth_used: f64,
    #[serde(default)]
    pub needle: String,
    #[serde(default)]
    pub window: u64,
    pub window_source: WindowSource,
}

/// The context suite's `extra` of a skipped target: the target that cannot fit, and the window
/// it did not fit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SkippedExtra {
    #[serde(default)]
    pub target_label: String,
    #[serde(default)]
    pub requested_tokens: u64,
    #[serde(default)]
    pub window: u64,
    pub window_source: WindowSource,
}

/// One request of an adapter check's prompt, of three (`extra.leg`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AdapterLeg {
    /// The base model.
    Base,
    /// The adapter.
    Adapter,
    /// The base model again: the instrument's own noise.
    BaseAgain,
}

impl AdapterLeg {
    /// Every leg, in the order a prompt's requests are sent.
    pub const ALL: [AdapterLeg; 3] = [AdapterLeg::Base, AdapterLeg::Adapter, AdapterLeg::BaseAgain];

    pub fn as_str(self) -> &'static str {
        match self {
            AdapterLeg::Base => "base",
            AdapterLeg::Adapter => "adapter",
            AdapterLeg::BaseAgain => "base-again",
        }
    }
}

/// The adapter check's `extra`: which prompt, and which of its three requests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AdapterExtra {
    #[serde(default)]
    pub prompt: String,
    pub leg: AdapterLeg,
}
