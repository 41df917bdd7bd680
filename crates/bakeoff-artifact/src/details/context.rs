//! The context suite's details (`suites.context.summary.details`): the window and how prompts
//! were counted, a row per request, the edge probe; or, when the suite refused to run, why and
//! the rows it had. Two written forms each for the details and the probe, so their `Serialize`
//! is written out: the JSON is what the suite always wrote, key for key.

use schemars::JsonSchema;
use serde::ser::SerializeStruct;
use serde::{Deserialize, Serialize, Serializer};

use super::readable_rows;

/// The context suite's details. Written in one of two forms: `refused` set → `{refused, rows}`
/// only; otherwise every field but `refused`, in this order, `null` where empty.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
pub struct ContextDetails {
    /// The context window measured against, in tokens.
    #[serde(default)]
    pub window: Option<u64>,
    /// Where the window came from (`vllm-models`, `hint`, …: the endpoint facts' names).
    #[serde(default)]
    pub window_source: Option<String>,
    #[serde(default)]
    pub output_budget: Option<u64>,
    #[serde(default)]
    pub tokenizer_route: Option<String>,
    /// How prompt tokens were counted (by the server, or from a calibration request).
    #[serde(default)]
    pub prompt_counting: Option<PromptCounting>,
    #[serde(default)]
    pub seed: Option<u64>,
    /// A row per request, and one per target that could not fit (docs/metrics.md, "Context").
    #[serde(default, deserialize_with = "readable_rows")]
    pub rows: Vec<ContextRow>,
    /// Requests that missed their token target: excluded from the score.
    #[serde(default)]
    pub instrument_misses: Option<u64>,
    /// The edge probe past the window (`null` when not sent).
    #[serde(default)]
    pub overflow: Option<OverflowProbe>,
    /// Why the suite refused to run (its other fields are then absent).
    #[serde(default)]
    pub refused: Option<String>,
}

impl Serialize for ContextDetails {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if let Some(refused) = &self.refused {
            let mut m = s.serialize_struct("ContextDetails", 2)?;
            m.serialize_field("refused", refused)?;
            m.serialize_field("rows", &self.rows)?;
            return m.end();
        }
        let mut m = s.serialize_struct("ContextDetails", 9)?;
        m.serialize_field("window", &self.window)?;
        m.serialize_field("window_source", &self.window_source)?;
        m.serialize_field("output_budget", &self.output_budget)?;
        m.serialize_field("tokenizer_route", &self.tokenizer_route)?;
        m.serialize_field("prompt_counting", &self.prompt_counting)?;
        m.serialize_field("seed", &self.seed)?;
        m.serialize_field("rows", &self.rows)?;
        m.serialize_field("instrument_misses", &self.instrument_misses)?;
        m.serialize_field("overflow", &self.overflow)?;
        m.end()
    }
}

/// How the whole chat prompt was counted (`details.prompt_counting`): `route` `server` (the
/// server counts chat requests itself), or `calibration`: one `max_tokens: 1` request whose
/// `usage.prompt_tokens`, less the text's own tokens, is the chat template's overhead.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PromptCounting {
    /// `server` or `calibration`.
    pub route: String,
    /// The calibration request's `usage.prompt_tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration_prompt_tokens: Option<u64>,
    /// The calibration text's own tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration_text_tokens: Option<u64>,
    /// The difference: what the chat template adds (may be negative).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template_overhead_tokens: Option<i64>,
}

/// One row of `details.rows`: a needle request, or a target that could not fit the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ContextRow {
    Needle(NeedleRow),
    Skipped(SkippedRow),
}

/// A needle request at one target and depth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NeedleRow {
    /// The target's label (`4k`, `window`, …).
    pub target: String,
    /// The target in tokens, clamped to the window less the output budget.
    pub target_tokens: u64,
    /// The prompt's tokens as planned.
    pub planned: u64,
    /// The server's `usage.prompt_tokens`; `null` when it gave none.
    pub actual: Option<u64>,
    /// Where the needle was asked for, 0–1.
    pub depth: f64,
    /// The item's outcome (`ok`, `wrong`, `instrument-miss`, …).
    pub outcome: String,
}

/// A target above the window: recorded, never sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SkippedRow {
    pub target: String,
    /// The target as asked for, in tokens.
    pub requested: u64,
    /// `skipped`.
    pub outcome: String,
    /// Why (the item's check).
    pub reason: Option<String>,
}

/// The context suite's edge probe (`details.overflow`): an endpoint fact, never scored.
/// Written in one of two forms: not sent → `{sent: false, error}` only (the prompt could not be
/// sized); sent → every field, `null` where empty.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
pub struct OverflowProbe {
    pub sent: bool,
    #[serde(default)]
    pub prompt_tokens_sent: Option<u64>,
    #[serde(default)]
    pub window: Option<u64>,
    #[serde(default)]
    pub http_status: Option<u64>,
    #[serde(default)]
    pub server_prompt_tokens: Option<u64>,
    /// How the server reacted (`rejected`, `truncated`, …).
    #[serde(default)]
    pub behaviour: Option<String>,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub note: Option<String>,
}

impl Serialize for OverflowProbe {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if !self.sent {
            let mut m = s.serialize_struct("OverflowProbe", 2)?;
            m.serialize_field("sent", &self.sent)?;
            m.serialize_field("error", &self.error)?;
            return m.end();
        }
        let mut m = s.serialize_struct("OverflowProbe", 8)?;
        m.serialize_field("sent", &self.sent)?;
        m.serialize_field("prompt_tokens_sent", &self.prompt_tokens_sent)?;
        m.serialize_field("window", &self.window)?;
        m.serialize_field("http_status", &self.http_status)?;
        m.serialize_field("server_prompt_tokens", &self.server_prompt_tokens)?;
        m.serialize_field("behaviour", &self.behaviour)?;
        m.serialize_field("error", &self.error)?;
        m.serialize_field("note", &self.note)?;
        m.end()
    }
}
