//! Smoke suite: a handful of short prompts with exact checks (data/smoke.json). It proves the
//! endpoint answers chat requests end to end and that the instrument classifies replies; it is
//! not a measure of skill.

use bakeoff_artifact::{ItemRecord, SuiteResult};
use bakeoff_client::Client;
use bakeoff_wire::{ChatRequest, Message};
use serde::Deserialize;

use crate::outcome::{Check, classify, normalize_answer, record};
use crate::suite_run::{Recorder, SuiteContext};

const DATA: &str = include_str!("../data/smoke.json");

/// Enough for every correct answer; a model that rambles is `truncated`, not waited on.
pub const MAX_TOKENS: u32 = 16;

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum SmokeCheck {
    /// Normalized answer equals the value, ignoring case.
    Equals { value: String },
    /// Normalized answer equals the value exactly.
    EqualsCase { value: String },
    /// Normalized answer is this integer.
    Integer { value: i64 },
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct SmokeItem {
    pub id: String,
    pub prompt: String,
    pub check: SmokeCheck,
}

#[derive(Debug, thiserror::Error)]
#[error("shipped smoke data is invalid: {0}")]
pub struct DataError(String);

pub fn items() -> Result<Vec<SmokeItem>, DataError> {
    serde_json::from_str(DATA).map_err(|e| DataError(e.to_string()))
}

impl SmokeCheck {
    pub fn check(&self, answer: &str) -> Check {
        let got = normalize_answer(answer);
        let (passed, want) = match self {
            SmokeCheck::Equals { value } => (got.eq_ignore_ascii_case(value), value.clone()),
            SmokeCheck::EqualsCase { value } => (&got == value, value.clone()),
            SmokeCheck::Integer { value } => {
                (got.parse::<i64>().ok() == Some(*value), value.to_string())
            }
        };
        let shown: String = got.chars().take(60).collect();
        Check {
            passed,
            detail: if passed {
                format!("answer is {want:?}")
            } else {
                format!("expected {want:?}, got {shown:?}")
            },
        }
    }

    /// The answer the check wants, as the item's `expected`: a string, or an integer for an
    /// integer check. A scalar converts without fail, so it needs no typed shape.
    pub fn expected(&self) -> serde_json::Value {
        match self {
            SmokeCheck::Equals { value } | SmokeCheck::EqualsCase { value } => {
                serde_json::Value::from(value.as_str())
            }
            SmokeCheck::Integer { value } => serde_json::Value::from(*value),
        }
    }
}

pub fn request(model: &str, item: &SmokeItem) -> ChatRequest {
    ChatRequest::new(model, vec![Message::user(&item.prompt)], MAX_TOKENS, true)
}

/// Run one item: send it, classify the reply, build the record.
pub async fn run_item(client: &Client, model: &str, item: &SmokeItem) -> ItemRecord {
    let req = request(model, item);
    let ex = client.chat_stream(&req).await;
    let (outcome, detail) = classify(&ex, |a| item.check.check(a));
    record(&item.id, &req, &ex, outcome, detail, item.check.expected())
}

/// One item with the run's options applied (`--thinking`).
async fn run_item_in(ctx: &SuiteContext<'_>, item: &SmokeItem) -> ItemRecord {
    let mut req = request(&ctx.model, item);
    ctx.options
        .thinking
        .apply_scored(ctx.facts.engine, &mut req);
    let ex = ctx.client.chat_stream(&req).await;
    let (outcome, detail) = classify(&ex, |a| item.check.check(a));
    record(&item.id, &req, &ex, outcome, detail, item.check.expected())
}

/// The suite: every shipped item, in order.
pub async fn run(ctx: &SuiteContext<'_>, rec: &mut Recorder<'_>) -> SuiteResult {
    let plan = match items() {
        Ok(p) => p,
        // Shipped data is checked by a unit test; if it is ever broken the suite measured nothing.
        Err(_) => return rec.result(0, Vec::new()),
    };
    let mut done = Vec::with_capacity(plan.len());
    for item in &plan {
        let Some(r) = rec.guard(run_item_in(ctx, item)).await else {
            break;
        };
        let go_on = rec.record(&r).await;
        done.push(r);
        if !go_on {
            break;
        }
    }
    let mut result = rec.result(plan.len(), done);
    let details = bakeoff_artifact::SmokeDetails {
        reasoning: crate::summary::reasoning_totals(&result.items),
    };
    crate::summary::write_details(&mut result.summary, "smoke", &details);
    result
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn shipped_items_parse_and_their_own_answers_pass() {
        let items = items().unwrap();
        assert!(items.len() >= 5);
        for it in &items {
            let answer = match &it.check {
                SmokeCheck::Equals { value } | SmokeCheck::EqualsCase { value } => value.clone(),
                SmokeCheck::Integer { value } => format!("{value}."),
            };
            assert!(it.check.check(&answer).passed, "{}", it.id);
            assert!(!it.check.check("something else").passed, "{}", it.id);
        }
    }

    /// `expected` writes the bytes the former `json!` writer wrote: a string stays a string,
    /// an integer an integer.
    #[test]
    fn expected_writes_the_former_bytes() {
        for it in items().unwrap() {
            let then = match &it.check {
                SmokeCheck::Equals { value } | SmokeCheck::EqualsCase { value } => {
                    serde_json::json!(value)
                }
                SmokeCheck::Integer { value } => serde_json::json!(value),
            };
            assert_eq!(
                serde_json::to_string(&it.check.expected()).unwrap(),
                serde_json::to_string(&then).unwrap(),
                "{}",
                it.id
            );
        }
        let seven = SmokeCheck::Integer { value: 7 };
        assert_eq!(serde_json::to_string(&seven.expected()).unwrap(), "7");
    }

    #[test]
    fn exact_case_matters_only_where_asked() {
        let c = SmokeCheck::EqualsCase {
            value: "HELLO WORLD".into(),
        };
        assert!(!c.check("hello world").passed);
        let c = SmokeCheck::Equals {
            value: "paris".into(),
        };
        assert!(c.check("Paris.").passed);
    }
}
