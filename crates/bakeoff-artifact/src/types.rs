//! The artifact itself.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{ContextWindow, EndpointRecord, Failure, ItemRecord, SCHEMA_VERSION};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ArtifactKind {
    /// `<slug>.bakeoff.json`: the endpoint was fit and suites ran.
    Bakeoff,
    /// `<slug>.failure.json`: the endpoint could not be measured; see `failure`.
    Failure,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RunStatus {
    /// Every planned item ran.
    Complete,
    /// Interrupted (Ctrl-C, the server went away): holds every item that finished.
    Incomplete,
}

/// The exact deployment under test. The slug names its artifacts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Candidate {
    pub slug: String,
    pub model: String,
    pub engine: crate::EngineKind,
    pub engine_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantization: Option<String>,
    pub context_window: ContextWindow,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hardware: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Candidate {
    /// A candidate known only by its slug, model and engine: no version, quantization,
    /// hardware or notes, and a window not yet discovered.
    pub fn new(
        slug: impl Into<String>,
        model: impl Into<String>,
        engine: crate::EngineKind,
    ) -> Self {
        Candidate {
            slug: slug.into(),
            model: model.into(),
            engine,
            engine_version: None,
            quantization: None,
            context_window: ContextWindow::UNKNOWN,
            hardware: None,
            notes: Vec::new(),
        }
    }
}

/// Severity of an instrument flag: `warning` means read the number with care, `invalid` means
/// the number must not be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FlagSeverity {
    Info,
    Warning,
    Invalid,
}

/// What an instrument flag says about a measurement: one closed vocabulary, never a free
/// string, so reporters and comparisons can act on a code without matching its spelling.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum FlagCode {
    // The preflight.
    /// llama-server serves one model and ignores the requested id.
    ModelIdIgnored,
    /// `/v1/models` listed no model: requests name `default`.
    ModelUnknown,
    /// The probe reply had empty content and only reasoning: the endpoint thinks by default.
    ThinkingDefaultReasoningOnly,
    // The suites.
    /// The requested thinking mode was not applied by the server.
    ThinkingModeNotApplied,
    /// The requested thinking mode could not be verified.
    ThinkingModeUnverified,
    /// Replies carry thinking markup in their content.
    ThinkingArtifacts,
    /// A family scored below chance: read its score with care.
    SuspectInstrument,
    /// A family scored below chance beyond doubt: its score must not be used.
    InstrumentFailure,
    /// The context suite's needle could not be checked (the instrument missed).
    InstrumentMiss,
    /// The context suite refused to measure (unknown window, no tokenizer route).
    ContextRefused,
    /// The server lacks a tool-call parser, or it is unreliable.
    ToolParserMissing,
    /// Tool calls came inside the reasoning, not as calls.
    ToolCallsInReasoning,
    /// The model never called a tool.
    ModelDoesNotCallTools,
    /// The server refused a request that offers tools: its tool calling is not configured, so
    /// the `tool` suite cannot measure the model (preflight's tool probe).
    ToolsRefused,
    /// The structured suite: the server accepted a schema and returned output that is not JSON
    /// or violates it (a failure of the server's constraining, never a score of the model).
    SchemaNotEnforced,
    /// CPU pinning was asked for and not honoured.
    PinningNotHonoured,
    /// Short completions cannot show speculative decoding's effect.
    ShortCompletionsCannotMeasureSpecDecoding,
    // The load engine.
    /// A load step measured nothing.
    StepMeasuredNothing,
    /// The client, not the server, bounded the step.
    ClientBound,
    /// Token counts came from the client's estimate, not the server's `usage`.
    TokenCountFallback,
    /// Requests left later than their schedule said.
    ScheduleDrift,
    /// The client's own overhead grew across the steps.
    ClientOverheadGrowing,
    /// Speculative decoding's acceptance could not be measured.
    SpecDecodingUnmeasurable,
    /// A level's repeats disagree beyond their own within-step errors (`bench run --repeat`).
    Unstable,
    /// `eval damage`: the reference disagreed with itself on the same text beyond the
    /// instrument's noise; the damage figure is withheld.
    SelfCheckFailed,
    // Conditions (docs/metrics.md, "Conditions"): the step ran on a busy machine.
    /// Other processes used more than a threshold of the host's cores during the step.
    HostContended,
    /// Another process held memory on the GPU under test during the step.
    GpuShared,
    /// The page cache shrank sharply during the step.
    PageCacheDropped,
    /// The GPU reported a thermal slowdown during the step.
    ThermalThrottled,
    /// The GPU reported a power cap or power brake during the step.
    PowerCapped,
    /// A code this version of bakeoff does not know (written by a newer one).
    #[serde(other)]
    Unrecognized,
}

impl FlagCode {
    /// The code as written in artifacts (`client-bound`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::ModelIdIgnored => "model-id-ignored",
            Self::ModelUnknown => "model-unknown",
            Self::ThinkingDefaultReasoningOnly => "thinking-default-reasoning-only",
            Self::ThinkingModeNotApplied => "thinking-mode-not-applied",
            Self::ThinkingModeUnverified => "thinking-mode-unverified",
            Self::ThinkingArtifacts => "thinking-artifacts",
            Self::SuspectInstrument => "suspect-instrument",
            Self::InstrumentFailure => "instrument-failure",
            Self::InstrumentMiss => "instrument-miss",
            Self::ContextRefused => "context-refused",
            Self::ToolParserMissing => "tool-parser-missing",
            Self::ToolCallsInReasoning => "tool-calls-in-reasoning",
            Self::ModelDoesNotCallTools => "model-does-not-call-tools",
            Self::ToolsRefused => "tools-refused",
            Self::SchemaNotEnforced => "schema-not-enforced",
            Self::PinningNotHonoured => "pinning-not-honoured",
            Self::ShortCompletionsCannotMeasureSpecDecoding => {
                "short-completions-cannot-measure-spec-decoding"
            }
            Self::StepMeasuredNothing => "step-measured-nothing",
            Self::ClientBound => "client-bound",
            Self::TokenCountFallback => "token-count-fallback",
            Self::ScheduleDrift => "schedule-drift",
            Self::ClientOverheadGrowing => "client-overhead-growing",
            Self::SpecDecodingUnmeasurable => "spec-decoding-unmeasurable",
            Self::Unstable => "unstable",
            Self::SelfCheckFailed => "self-check-failed",
            Self::HostContended => "host-contended",
            Self::GpuShared => "gpu-shared",
            Self::PageCacheDropped => "page-cache-dropped",
            Self::ThermalThrottled => "thermal-throttled",
            Self::PowerCapped => "power-capped",
            Self::Unrecognized => "unrecognized",
        }
    }

    /// A suite's refusal to measure: a configuration gap, not a serving failure.
    pub fn is_refusal(self) -> bool {
        matches!(self, Self::ContextRefused | Self::ToolsRefused)
    }
}

/// A code compares equal to its written spelling (`code == "client-bound"`), as read in a file.
impl PartialEq<&str> for FlagCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl std::fmt::Display for FlagCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The tool's verdict on its own measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InstrumentFlag {
    pub code: FlagCode,
    pub severity: FlagSeverity,
    pub message: String,
    /// Suite the flag belongs to, when it is not about the whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<String>,
    /// How many items it concerns, when it counts something.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
}

/// Readiness: a real short completion came back with non-empty text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReadyCheck {
    pub ready: bool,
    pub attempts: u32,
    pub elapsed_ms: u64,
    /// Preview of the reply that proved readiness (escaped by every reporter: untrusted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_preview: Option<String>,
    /// Distinct errors seen while waiting, oldest first, each with how often it repeated.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<ErrorSeen>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorSeen {
    pub kind: String,
    pub message: String,
    pub times: u32,
}

/// Whether the reply put everything into reasoning with empty content (a reasoning model in
/// its default thinking mode, or a reasoning parser routing the whole answer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ThinkingCheck {
    pub content_chars: u64,
    pub reasoning_chars: u64,
    pub reasoning_only: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

/// Did the requested thinking mode (`--thinking on|off|default`) take effect? One probe sent
/// with the mode's controls applied (chat_template_kwargs plus the engine's own fields).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ThinkingModeCheck {
    /// `on`, `off` or `default`.
    pub mode: String,
    /// `Some(true)`: off gave no reasoning and non-empty content, or on gave reasoning;
    /// `Some(false)`: it did not; `None`: `default` (nothing to verify) or the probe failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub took_effect: Option<bool>,
    pub content_chars: u64,
    pub reasoning_chars: u64,
    /// `usage.completion_tokens_details.reasoning_tokens`, when the server gives it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
    /// The request fields the mode added, as sent.
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub controls: serde_json::Value,
    /// One sentence on what was seen.
    pub message: String,
}

/// Is this endpoint fit to be measured?
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PreflightReport {
    pub fit: bool,
    /// Every reason it is unfit (empty when fit).
    pub reasons: Vec<String>,
    pub model: Option<String>,
    pub ready: ReadyCheck,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<ThinkingCheck>,
    /// The check of `--thinking` (absent in artifacts from before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_mode: Option<ThinkingModeCheck>,
    /// How prompts can be sized in model tokens: `server /tokenize`, or `none`.
    pub tokenizer_route: String,
    pub flags: Vec<InstrumentFlag>,
    pub elapsed_ms: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SuiteStatus {
    /// Every planned item was measured (whatever the model scored).
    Complete,
    /// Interrupted before every item ran.
    Incomplete,
    /// Measured nothing (every request failed): never a pass.
    Failed,
}

impl SuiteStatus {
    /// As the artifact spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            SuiteStatus::Complete => "complete",
            SuiteStatus::Incomplete => "incomplete",
            SuiteStatus::Failed => "failed",
        }
    }
}

impl std::fmt::Display for SuiteStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Summary numbers every suite reports; suite-specific figures go in `details`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SuiteSummary {
    pub planned: u64,
    pub finished: u64,
    /// Items by outcome class.
    pub outcomes: BTreeMap<String, u64>,
    /// Items whose check passed, over scored items.
    pub passed: u64,
    pub scored: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<Score>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<InstrumentFlag>,
    /// The suite's own figures, stored as JSON; read them typed with
    /// [`SuiteSummary::details_as`] (each suite's shape is in [`crate::details`]).
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub details: serde_json::Value,
    /// The `damage` suite's figures (`bakeoff eval damage`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damage: Option<crate::DamageSummary>,
    /// What else the host and GPU were doing while the suite ran (docs/metrics.md,
    /// "Conditions"); absent in artifacts from before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<crate::Conditions>,
}

/// A proportion with its Wilson 95 % interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Score {
    pub successes: u64,
    pub n: u64,
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SuiteResult {
    pub status: SuiteStatus,
    pub summary: SuiteSummary,
    pub items: Vec<ItemRecord>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolInfo {
    pub name: String,
    pub version: String,
}

impl Default for ToolInfo {
    fn default() -> Self {
        Self {
            name: "bakeoff".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

/// A file that a `--replace` run wrote over, as it was: the replacement is on record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReplacedFile {
    /// Its name in the output directory.
    pub file: String,
    pub bytes: u64,
    /// The replaced artifact's `created_at` (absent for a journal or an unreadable file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
}

/// `<stem>.bakeoff.json` or `<stem>.failure.json`, where the stem is the slug for the first run
/// of a slug in a directory and `<slug>.<run_id>` for every later one (docs/artifacts.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Artifact {
    pub schema_version: u32,
    pub kind: ArtifactKind,
    pub created_at: DateTime<Utc>,
    /// The run's id (its UTC start, `20261203T101530Z`); a later run of the same slug in the
    /// same directory carries it in its file names. Absent in artifacts from before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// What this run replaced under `--replace` (empty otherwise: nothing was overwritten).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replaces: Vec<ReplacedFile>,
    pub tool: ToolInfo,
    pub candidate: Candidate,
    pub endpoint: EndpointRecord,
    pub preflight: Option<PreflightReport>,
    pub suites: BTreeMap<String, SuiteResult>,
    pub status: RunStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete_reason: Option<String>,
    /// Present when `kind` is `failure`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    /// Flags of the whole run (each suite's flags are also in its summary).
    pub instrument_flags: Vec<InstrumentFlag>,
    /// What the operator asked for, verbatim where harmless (never a key).
    #[serde(default, skip_serializing_if = "crate::RunRecord::is_empty")]
    pub run: crate::RunRecord,
    /// Load-test sweeps of `bakeoff bench run`, by name (`throughput`); docs/metrics.md.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub load: BTreeMap<String, crate::LoadReport>,
    /// The seat that failed to come up (`bakeoff seat …` failure artifacts only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seat: Option<crate::SeatRecord>,
    /// `bakeoff eval adapter`'s report (its requests are `suites.adapter.items`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter: Option<crate::AdapterReport>,
}

impl Artifact {
    pub fn new(kind: ArtifactKind, candidate: Candidate, endpoint: EndpointRecord) -> Self {
        Self {
            schema_version: SCHEMA_VERSION,
            kind,
            created_at: Utc::now(),
            run_id: None,
            replaces: Vec::new(),
            tool: ToolInfo::default(),
            candidate,
            endpoint,
            preflight: None,
            suites: BTreeMap::new(),
            status: RunStatus::Complete,
            incomplete_reason: None,
            failure: None,
            instrument_flags: Vec::new(),
            run: crate::RunRecord::default(),
            load: BTreeMap::new(),
            seat: None,
            adapter: None,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod flag_code_tests {
    use super::FlagCode;

    /// `as_str` is the serde spelling for every code, and an unknown code reads as
    /// `Unrecognized` instead of failing the whole artifact.
    #[test]
    fn as_str_is_the_serde_spelling() {
        let schema = serde_json::to_value(schemars::schema_for!(FlagCode)).unwrap();
        let codes = schema["oneOf"].as_array().unwrap();
        assert!(codes.len() > 20);
        for v in codes {
            let c: FlagCode = serde_json::from_value(v["const"].clone()).unwrap();
            assert_eq!(serde_json::to_value(c).unwrap(), v["const"]);
            assert_eq!(c.as_str(), v["const"].as_str().unwrap());
        }
        let later: FlagCode = serde_json::from_str("\"a-code-from-tomorrow\"").unwrap();
        assert_eq!(later, FlagCode::Unrecognized);
    }
}
