//! The structured suite's details (`summary.details` of `structured`) and its per-item
//! outcome vocabulary (docs/suites.md "Structured output").

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::types::Score;

/// What one structured-output item came to. The order is the order the rules are applied in.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum StructuredOutcome {
    /// The request never got a judgeable answer (a timeout, a dropped connection, a server
    /// error that does not speak of the schema): kept out of every score.
    RequestFailed,
    /// The server rejected the schema, in its own words (kept in `extra.words`).
    Refused,
    /// Cut off by `max_tokens` before the JSON closed.
    Truncated,
    /// The server accepted the schema, but its reply is not JSON or violates the schema: a
    /// failure of the server's constraining, never a score of the model.
    NotEnforced,
    /// Valid against the schema, but not the known answer.
    ValidWrong,
    /// Valid, and the known answer.
    ValidRight,
}

impl StructuredOutcome {
    pub const ALL: [StructuredOutcome; 6] = [
        StructuredOutcome::RequestFailed,
        StructuredOutcome::Refused,
        StructuredOutcome::Truncated,
        StructuredOutcome::NotEnforced,
        StructuredOutcome::ValidWrong,
        StructuredOutcome::ValidRight,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            StructuredOutcome::RequestFailed => "request-failed",
            StructuredOutcome::Refused => "refused",
            StructuredOutcome::Truncated => "truncated",
            StructuredOutcome::NotEnforced => "not-enforced",
            StructuredOutcome::ValidWrong => "valid-wrong",
            StructuredOutcome::ValidRight => "valid-right",
        }
    }
}

/// Counts of each outcome (a class's, or the whole suite's).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StructuredCounts {
    #[serde(default)]
    pub items: u64,
    #[serde(default)]
    pub refused: u64,
    #[serde(default)]
    pub not_enforced: u64,
    #[serde(default)]
    pub truncated: u64,
    #[serde(default)]
    pub valid_wrong: u64,
    #[serde(default)]
    pub valid_right: u64,
    /// Kept out of `n` and the score.
    #[serde(default)]
    pub request_failed: u64,
    /// Items that count: every item but the failed requests.
    #[serde(default)]
    pub n: u64,
}

impl StructuredCounts {
    pub fn add(&mut self, o: StructuredOutcome) {
        self.items += 1;
        match o {
            StructuredOutcome::RequestFailed => self.request_failed += 1,
            StructuredOutcome::Refused => self.refused += 1,
            StructuredOutcome::Truncated => self.truncated += 1,
            StructuredOutcome::NotEnforced => self.not_enforced += 1,
            StructuredOutcome::ValidWrong => self.valid_wrong += 1,
            StructuredOutcome::ValidRight => self.valid_right += 1,
        }
        if o != StructuredOutcome::RequestFailed {
            self.n += 1;
        }
    }
}

/// One feature class (`details.classes[]`): its counts and the share valid-right of `n`, with
/// its Wilson 95 % interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StructuredClass {
    pub class: String,
    #[serde(flatten)]
    pub counts: StructuredCounts,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<Score>,
    /// The engine's words for each refused item of the class (`id: words`), first 200
    /// characters each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refusals: Vec<String>,
}

/// The structured suite's details.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StructuredDetails {
    /// The request form sent (`response-format`, `structured-outputs`, `guided-json`,
    /// `json-schema`).
    #[serde(default)]
    pub form: String,
    /// What `--schema-form` asked for (`auto`, `native`, or a form).
    #[serde(default)]
    pub form_asked: String,
    /// The backend the engine named in its own words (`xgrammar`, `llama.cpp-grammar`, …);
    /// `null` when it named none.
    #[serde(default)]
    pub backend: Option<String>,
    /// The battery's path, or `default`.
    #[serde(default)]
    pub battery: Option<String>,
    #[serde(default)]
    pub totals: StructuredCounts,
    #[serde(default)]
    pub classes: Vec<StructuredClass>,
    #[serde(default)]
    pub reasoning: Option<crate::details::ReasoningTotals>,
}
