//! Suite summaries from item records, shared by every suite.

use std::collections::BTreeMap;

use bakeoff_artifact::{
    FlagCode, FlagSeverity, InstrumentFlag, ItemRecord, Outcome, ReasoningTotals, Score,
    SuiteStatus, SuiteSummary,
};
use bakeoff_stats::Proportion;

/// A Wilson 95 % score, or none when nothing was scored.
pub fn score(successes: u64, n: u64) -> Option<Score> {
    Proportion::wilson(successes, n).ok().map(|p| Score {
        successes: p.successes,
        n: p.n,
        estimate: p.estimate,
        low: p.wilson_low,
        high: p.wilson_high,
    })
}

/// Count outcomes and score the scored items.
pub fn summarize(planned: usize, items: &[ItemRecord]) -> SuiteSummary {
    let mut outcomes = BTreeMap::new();
    for it in items {
        *outcomes
            .entry(it.outcome.as_str().to_string())
            .or_insert(0u64) += 1;
    }
    let scored = items.iter().filter(|i| i.outcome.is_scored()).count() as u64;
    let passed = items.iter().filter(|i| i.outcome == Outcome::Ok).count() as u64;
    SuiteSummary {
        planned: planned as u64,
        finished: items.len() as u64,
        outcomes,
        passed,
        scored,
        score: score(passed, scored),
        flags: Vec::new(),
        details: serde_json::Value::Null,
        damage: None,
        conditions: None,
    }
}

/// Reasoning spent by a suite, counted apart from the answers: items whose reply carried
/// reasoning, its characters, and the server's `completion_tokens_details.reasoning_tokens`
/// summed (`null` when the server reported none).
pub fn reasoning_totals(items: &[ItemRecord]) -> ReasoningTotals {
    let with_reasoning = items
        .iter()
        .filter(|i| !i.response.reasoning.trim().is_empty())
        .count();
    let chars: usize = items
        .iter()
        .map(|i| i.response.reasoning.chars().count())
        .sum();
    let tokens: Vec<u64> = items
        .iter()
        .filter_map(|i| i.response.usage.as_ref()?.reasoning_tokens())
        .collect();
    ReasoningTotals {
        items_with_reasoning: with_reasoning as u64,
        reasoning_chars: chars as u64,
        reasoning_tokens: (!tokens.is_empty()).then(|| tokens.iter().sum::<u64>()),
        items_reporting_reasoning_tokens: tokens.len() as u64,
    }
}

/// Store a suite's typed details ([`SuiteSummary::set_details`]). Should they not convert to
/// JSON, the summary says so with an `instrument-failure` flag (its details stay `null`):
/// never a silent `null`.
pub fn write_details<T: serde::Serialize>(summary: &mut SuiteSummary, suite: &str, details: &T) {
    if let Err(e) = summary.set_details(details) {
        summary.flags.push(InstrumentFlag {
            code: FlagCode::InstrumentFailure,
            severity: FlagSeverity::Invalid,
            message: e.to_string(),
            suite: Some(suite.to_owned()),
            count: None,
        });
    }
}

/// `failed` when nothing was measured, `incomplete` when interrupted, else `complete`.
pub fn status(planned: usize, items: &[ItemRecord], interrupted: bool) -> SuiteStatus {
    let measured = items
        .iter()
        .any(|i| !i.outcome.is_request_failure() && i.outcome != Outcome::Skipped);
    if !measured {
        SuiteStatus::Failed
    } else if interrupted || items.len() < planned {
        SuiteStatus::Incomplete
    } else {
        SuiteStatus::Complete
    }
}
