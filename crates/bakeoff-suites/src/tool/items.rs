//! The tool suite's item shapes: the calls a case expects and where the reply's calls landed.
//! The suite's own tests read `extra.landing` back ([`super::landing_of`]).

use serde::{Deserialize, Serialize};

use super::checker::ExpectedCall;

/// `extra`: where the reply's calls landed, and whether calls written as text would have
/// passed had the server parsed them (bakeoff-artifact's shape, where the report reads it).
pub use bakeoff_artifact::ToolExtra;

/// `expected`: the case's category and the calls it accepts (none for an irrelevance case).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolExpected {
    pub category: String,
    pub calls: Vec<ExpectedCall>,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::landing::Landing;
    use super::super::{ToolVerdict, extra_of};
    use super::*;
    use crate::item_extra::tests::same_bytes_both_ways;
    use bakeoff_artifact::Outcome;
    use serde_json::json;

    /// Both shapes write what the suite's former `json!` writer wrote, for every shipped case
    /// (their expected calls' argument maps included) and every landing.
    #[test]
    fn the_typed_shapes_write_the_former_bytes() {
        let data = super::super::data().unwrap();
        let landings = [
            (Landing::ToolCalls, None, Some(8u64)),
            (Landing::ContentText, Some(true), None),
            (Landing::Reasoning, Some(false), None),
            (Landing::Nowhere, None, None),
        ];
        for case in &data.cases {
            same_bytes_both_ways(
                &ToolExpected::of(case),
                &json!({ "category": case.category, "calls": case.expected }),
            );
            for (landing, would, reasoning_tokens) in landings {
                let v = ToolVerdict {
                    outcome: Outcome::Wrong,
                    detail: String::new(),
                    landing,
                    would_pass_if_parsed: would,
                };
                let then = json!({
                    "family": case.category,
                    "landing": v.landing.as_str(),
                    "would_pass_if_parsed": v.would_pass_if_parsed,
                    "reasoning_tokens": reasoning_tokens,
                });
                same_bytes_both_ways(&extra_of(case, &v, reasoning_tokens), &then);
            }
        }
    }
}
