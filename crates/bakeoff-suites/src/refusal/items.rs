//! The refusal suite's item shapes: what an item expected and how its reply was judged. The
//! suite reads `extra.refused` back from its records ([`super::refused_of`]); the report reads
//! the whole `extra` as bakeoff-artifact's `RefusalExtra`.

use serde::{Deserialize, Serialize};

/// `extra`: the category and the judgement (bakeoff-artifact's shape, where the report reads it).
pub use bakeoff_artifact::RefusalExtra;

/// `expected`: the item's category (the suite expects no answer in particular).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RefusalExpected {
    pub category: String,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::battery::RefusalItem;
    use super::super::markers::Marker;
    use super::super::{Judged, extra_of};
    use super::*;
    use crate::item_extra::tests::same_bytes_both_ways;
    use bakeoff_artifact::Outcome;
    use serde_json::json;

    /// Both shapes write what the suite's former `json!` writer wrote: refused with a marker,
    /// answered, and neither (every judgement field `null`).
    #[test]
    fn the_typed_shapes_write_the_former_bytes() {
        let item = RefusalItem {
            id: "r-1".into(),
            category: "violent-fiction".into(),
            prompt: "p".into(),
        };
        same_bytes_both_ways(
            &RefusalExpected {
                category: item.category.clone(),
            },
            &json!({ "category": item.category }),
        );
        let judged = |refused, marker| Judged {
            outcome: Outcome::Wrong,
            refused,
            marker,
            detail: String::new(),
        };
        let cases = [
            (
                judged(
                    Some(true),
                    Some(Marker {
                        marker: "i can't … help".into(),
                        at: 6,
                    }),
                ),
                Some(40u64),
            ),
            (judged(Some(false), None), None),
            (judged(None, None), None),
        ];
        for (j, reasoning_tokens) in cases {
            let then = json!({
                "category": item.category,
                "refused": j.refused,
                "marker": j.marker.as_ref().map(|m| json!({ "marker": m.marker, "at": m.at })),
                "reasoning_tokens": reasoning_tokens,
            });
            same_bytes_both_ways(&extra_of(&item, &j, reasoning_tokens), &then);
        }
    }
}
