//! Each suite's `summary.details`, typed (docs/artifacts.md, "Suite details").
//!
//! `SuiteSummary.details` stays the stored JSON and each suite's shape is a struct here, read
//! with [`SuiteSummary::details_as`] and written with [`SuiteSummary::set_details`]. Why not an
//! enum with a variant per suite: `suites` is a map keyed by the suite's name, so the name that
//! would pick the variant is outside the value; an untagged enum would pick by shape and could
//! read one suite's details as another's. Kept as JSON, every artifact bakeoff ever wrote reads
//! as before, byte for byte, and a reader that asks for the wrong shape gets a [`DetailsError`]
//! instead of a panic. The structs read tolerantly: a missing field reads as empty, so details
//! from before a field existed still read.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize, de::DeserializeOwned};

use crate::load::LoadReport;
use crate::types::{FlagCode, Score, SuiteSummary};

mod context;
mod damage_items;
mod items;
mod structured;

pub use context::{
    ContextDetails, ContextRow, NeedleRow, OverflowProbe, PromptCounting, SkippedRow,
};
pub use damage_items::{
    AlongExtra, AlongFailedExtra, CandidateExtra, DamageExtra, DamagePhase, SelfCheckExtra,
    TokenProb,
};
pub use items::{
    AdapterExtra, AdapterLeg, ExtraError, IntelligenceExtra, NeedleExtra, RefusalExtra,
    RefusalMarker, SkippedExtra, StructuredExtra, ToolExtra, ToolLanding, TurnExtra, TurnSent,
};
pub use structured::{StructuredClass, StructuredCounts, StructuredDetails, StructuredOutcome};

/// A suite's details did not read as the shape asked for.
#[derive(Debug, thiserror::Error)]
#[error("summary.details do not read as {shape}: {source}")]
pub struct DetailsError {
    /// The type asked for (`ContextDetails`, …).
    pub shape: &'static str,
    #[source]
    pub source: serde_json::Error,
}

impl SuiteSummary {
    /// The details as `T`, read in place (a load suite's details hold every request record).
    /// Absent details read as `T`'s empty form where it has one.
    pub fn details_as<T: DeserializeOwned>(&self) -> Result<T, DetailsError> {
        T::deserialize(&self.details).map_err(|source| DetailsError {
            shape: short_type_name::<T>(),
            source,
        })
    }

    /// Store `details` as this summary's details. The details types here always convert (their
    /// maps are keyed by strings and their `Serialize` impls never fail); the error is for a
    /// type that does not, and the summary is then left as it was.
    pub fn set_details<T: Serialize>(&mut self, details: &T) -> Result<(), DetailsWriteError> {
        self.details = serde_json::to_value(details).map_err(|source| DetailsWriteError {
            shape: short_type_name::<T>(),
            source,
        })?;
        Ok(())
    }
}

/// A suite's details could not be converted to JSON (a map key that is not a string, or a
/// `Serialize` impl that failed).
#[derive(Debug, thiserror::Error)]
#[error("summary.details cannot be written as {shape}: {source}")]
pub struct DetailsWriteError {
    /// The type written (`ContextDetails`, …).
    pub shape: &'static str,
    #[source]
    pub source: serde_json::Error,
}

/// The rows of a list that read as `T`, in order; a row that does not (written by another
/// version) is left out, and a missing list reads as empty, so the rest still renders.
fn readable_rows<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: DeserializeOwned,
{
    let rows = Option::<Vec<serde_json::Value>>::deserialize(d)?.unwrap_or_default();
    Ok(rows
        .into_iter()
        .filter_map(|r| T::deserialize(r).ok())
        .collect())
}

/// `ContextDetails` for `bakeoff_artifact::details::context::ContextDetails`; a generic type by
/// its own name (`BTreeMap`), its parameters left out: how an error names the shape it could
/// not read or write (the details and an item's `extra` here, their writers in bakeoff-suites).
pub fn short_type_name<T>() -> &'static str {
    let full = std::any::type_name::<T>();
    let outer = full.split('<').next().unwrap_or(full);
    outer.rsplit("::").next().unwrap_or(outer)
}

/// Reasoning spent by a suite, counted apart from the answers (`details.reasoning`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReasoningTotals {
    #[serde(default)]
    pub items_with_reasoning: u64,
    #[serde(default)]
    pub reasoning_chars: u64,
    /// The server's `completion_tokens_details.reasoning_tokens` summed; `null` when it
    /// reported none.
    #[serde(default)]
    pub reasoning_tokens: Option<u64>,
    #[serde(default)]
    pub items_reporting_reasoning_tokens: u64,
}

/// One family of a scored suite (`details.families[]`), as the suites' instrument check
/// stores it: `score`, `flag`, `reason` and `extraction_failures` absent when empty.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FamilyRow {
    pub family: String,
    #[serde(default)]
    pub items: u64,
    #[serde(default)]
    pub scored_items: u64,
    #[serde(default)]
    pub passed: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<Score>,
    /// Mean chance over the family's scored items.
    #[serde(default)]
    pub chance_floor: f64,
    /// Passed minus what guessing would get, e.g. `"+3 items (+8.3 pts)"`.
    #[serde(default)]
    pub versus_chance: String,
    /// `suspect-instrument` or `instrument-failure`, when raised.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flag: Option<FlagCode>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// False after `instrument-failure`: left out of the suite score.
    #[serde(default = "counted_by_default")]
    pub counted: bool,
    /// Ids of items whose answer could not be extracted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extraction_failures: Vec<String>,
    /// Scored items that ended inside the reasoning (cut off, or reasoning with empty
    /// content): failures of the budget or the thinking mode, not wrong answers.
    #[serde(default)]
    pub thinking_artifacts: u64,
}

fn counted_by_default() -> bool {
    true
}

/// The details of a scored suite (`intelligence`, `tool`, `session`): its families, those
/// left out of the score, its reasoning totals. The tool suite adds its landing counts and
/// diagnosis; the intelligence suite its battery. Written as the suites always wrote them: a
/// field a suite does not have is absent, `families` always there. `smoke`'s details
/// ([`SmokeDetails`]) and a tool suite the server refused ([`ToolRefusedDetails`]) read as this
/// shape too.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ScoredDetails {
    #[serde(default, deserialize_with = "readable_rows")]
    pub families: Vec<FamilyRow>,
    /// Families flagged `instrument-failure`: left out of the suite score.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub families_not_scored: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<ReasoningTotals>,
    /// The intelligence battery's path, or `default`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub battery: Option<String>,
    /// The tool suite: where the calls landed (`tool_calls`, `content`, `reasoning`, …); an
    /// empty map when no call could land (every request failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landing: Option<BTreeMap<String, u64>>,
    /// The tool suite's diagnosis of the endpoint's tool calling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnosis: Option<ToolDiagnosis>,
}

/// The smoke suite's details: its reasoning totals only (reads as [`ScoredDetails`] too).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SmokeDetails {
    pub reasoning: ReasoningTotals,
}

/// The tool suite's details when the server refuses requests that offer tools: nothing was
/// sent, so the diagnosis alone (reads as [`ScoredDetails`] too).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolRefusedDetails {
    pub diagnosis: ToolDiagnosis,
}

/// The tool suite's diagnosis (`details.diagnosis`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolDiagnosis {
    /// `tool-calls-work`, `server-lacks-tool-parser`, `server-refuses-tools`, …
    pub code: String,
    #[serde(default)]
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_calls_that_would_pass: Option<u64>,
}

/// The refusal suite's details.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RefusalDetails {
    #[serde(default)]
    pub refusal: Option<RefusalCounts>,
    #[serde(default, deserialize_with = "readable_rows")]
    pub categories: Vec<RefusalCategory>,
    /// The battery's path, or `default`.
    #[serde(default)]
    pub battery: Option<String>,
    #[serde(default)]
    pub reasoning: Option<ReasoningTotals>,
}

/// The refusal suite's counts (`details.refusal`); its score counts refusals.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RefusalCounts {
    #[serde(default)]
    pub refused: u64,
    #[serde(default)]
    pub answered: u64,
    /// No visible answer or a failed request: not counted.
    #[serde(default)]
    pub neither: u64,
    #[serde(default)]
    pub n: u64,
    /// What the score counts (`refusals`).
    #[serde(default)]
    pub score_counts: String,
    /// Characters of the visible answer the markers are looked for in.
    #[serde(default)]
    pub window_chars: u64,
}

/// The refusal suite's counts of one category (`details.categories[]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RefusalCategory {
    pub category: String,
    #[serde(default)]
    pub items: u64,
    #[serde(default)]
    pub refused: u64,
    #[serde(default)]
    pub answered: u64,
    #[serde(default)]
    pub neither: u64,
}

/// The adapter check's details: the verdict beside the counts, so every report shows it in
/// the suite's own cell (the whole report is `artifact.adapter`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AdapterDetails {
    /// `applied`, `adapter-no-op`, `withheld`, …
    pub verdict: String,
    #[serde(default)]
    pub message: String,
}

/// The longgen suite's details: its [`LoadReport`] (read that type from the same
/// details) plus the decode rate of each probe.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LonggenDetails {
    #[serde(default)]
    pub probes: Vec<LonggenProbe>,
    #[serde(default)]
    pub note: Option<String>,
}

/// What the longgen suite writes: its load report's fields, then `probes` and `note` (read back
/// as [`LoadReport`] and as [`LonggenDetails`] from the same details).
#[derive(Debug, Serialize)]
pub struct LonggenOutput<'a> {
    #[serde(flatten)]
    pub load: &'a LoadReport,
    #[serde(flatten)]
    pub longgen: &'a LonggenDetails,
}

/// One longgen probe's figures (`details.probes[]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LonggenProbe {
    #[serde(default)]
    pub probe: Option<u64>,
    #[serde(default)]
    pub output_tokens: Option<u64>,
    #[serde(default)]
    pub decode_tokens_per_second: Option<f64>,
    #[serde(default)]
    pub server_decode_tokens_per_second: Option<f64>,
    #[serde(default)]
    pub ttft_ms: Option<f64>,
    #[serde(default)]
    pub error: Option<String>,
}

/// Puts the schema of every suite's details and item `extra` into `generator`'s definitions:
/// the artifact schema lists them there, since `details` and `extra` are stored as JSON. (The
/// throughput suite's item `extra` is a `LoadStep`, in the schema already.)
pub fn define_details(generator: &mut schemars::SchemaGenerator) {
    generator.subschema_for::<ScoredDetails>();
    generator.subschema_for::<SmokeDetails>();
    generator.subschema_for::<ToolRefusedDetails>();
    generator.subschema_for::<RefusalDetails>();
    generator.subschema_for::<StructuredDetails>();
    generator.subschema_for::<ContextDetails>();
    generator.subschema_for::<AdapterDetails>();
    generator.subschema_for::<LonggenDetails>();
    generator.subschema_for::<RefusalExtra>();
    generator.subschema_for::<StructuredExtra>();
    generator.subschema_for::<ToolExtra>();
    generator.subschema_for::<IntelligenceExtra>();
    generator.subschema_for::<TurnExtra>();
    generator.subschema_for::<NeedleExtra>();
    generator.subschema_for::<SkippedExtra>();
    generator.subschema_for::<AdapterExtra>();
    generator.subschema_for::<SelfCheckExtra>();
    generator.subschema_for::<CandidateExtra>();
    generator.subschema_for::<AlongExtra>();
    generator.subschema_for::<AlongFailedExtra>();
}
