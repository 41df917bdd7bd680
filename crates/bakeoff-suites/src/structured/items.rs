//! The structured suite's item shapes: what an item expected and how its reply was judged.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `extra`: the judgement (bakeoff-artifact's shape, where the report reads it).
pub use bakeoff_artifact::StructuredExtra;

/// `expected`: the item's feature class and its known answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StructuredExpected {
    pub class: String,
    pub answer: Value,
}
