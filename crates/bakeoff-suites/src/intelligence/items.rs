//! The intelligence suite's item shapes: what an item expected and what it measured
//! (docs/artifacts.md lists the item fields).

use serde::{Deserialize, Serialize};

use super::battery::{BatteryItem, Scoring};
use super::extract::Extracted;

/// `extra`: the item's family, its chance floor, and what extraction made of the answer
/// (bakeoff-artifact's shape, where the report reads it).
pub use bakeoff_artifact::IntelligenceExtra;

/// `expected`: the battery item's accepted answers and how they are scored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntelligenceExpected {
    pub answers: Vec<String>,
    pub scoring: Scoring,
    /// The option texts of a `choice` item; `null` for an open one.
    pub options: Option<Vec<String>>,
}

impl IntelligenceExpected {
    pub fn of(item: &BatteryItem) -> Self {
        Self {
            answers: item.answers.clone(),
            scoring: item.scoring,
            options: item.options.clone(),
        }
    }
}

/// An item's `extra`: its chance floor is [`BatteryItem::chance`].
pub fn extra_of(
    item: &BatteryItem,
    extracted: Option<&Extracted>,
    extraction_failed: bool,
    reasoning_tokens: Option<u64>,
) -> IntelligenceExtra {
    IntelligenceExtra {
        family: item.family.clone(),
        chance: item.chance(),
        extracted: match extracted {
            Some(Extracted::Found(s)) => Some(s.clone()),
            _ => None,
        },
        extraction_failed,
        reasoning_tokens,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::item_extra::tests::same_bytes_both_ways;
    use serde_json::json;

    /// Both shapes write what the suite's former `json!` writer wrote, for a choice item and an
    /// open one, an answer extracted and one not.
    #[test]
    fn the_typed_shapes_write_the_former_bytes() {
        let items = super::super::load(None).unwrap();
        let choice = items.iter().find(|i| i.options.is_some()).unwrap();
        let open = items.iter().find(|i| i.options.is_none()).unwrap();
        for item in [choice, open] {
            same_bytes_both_ways(
                &IntelligenceExpected::of(item),
                &json!({ "answers": item.answers, "scoring": item.scoring, "options": item.options }),
            );
            let cases = [
                (Some(Extracted::Found("B".into())), false, Some(16u64)),
                (Some(Extracted::Failed("no letter")), true, None),
                (None, false, None),
            ];
            for (extracted, extraction_failed, reasoning_tokens) in cases {
                let then = json!({
                    "family": item.family,
                    "chance": item.chance(),
                    "extracted": match &extracted { Some(Extracted::Found(s)) => json!(s), _ => serde_json::Value::Null },
                    "extraction_failed": extraction_failed,
                    "reasoning_tokens": reasoning_tokens,
                });
                let now = extra_of(
                    item,
                    extracted.as_ref(),
                    extraction_failed,
                    reasoning_tokens,
                );
                same_bytes_both_ways(&now, &then);
            }
        }
    }
}
