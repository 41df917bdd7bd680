//! The structured suite's item shapes: what an item expected and how its reply was judged.

use bakeoff_artifact::StructuredOutcome;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `expected`: the item's feature class and its known answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StructuredExpected {
    pub class: String,
    pub answer: Value,
}

/// `extra`: the judgement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StructuredExtra {
    pub class: String,
    /// `refused`, `not-enforced`, `truncated`, `valid-wrong`, `valid-right`, `request-failed`.
    pub outcome: StructuredOutcome,
    /// The request form the schema went in.
    pub form: String,
    /// The server's own words, for a refusal.
    pub words: Option<String>,
    /// What the reply broke, for `not-enforced`.
    pub violation: Option<String>,
}
