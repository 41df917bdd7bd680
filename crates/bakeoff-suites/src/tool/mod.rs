//! Tool suite (`--suite tool`): the shipped cases in data/tool_cases.json (single call, a
//! choice among tools, parallel calls, nested and typed arguments, irrelevance), checked by
//! [`checker`] and located by [`landing`]. The summary says whether calls reach `tool_calls`,
//! land as text (the server lacks its tool parser), stay in the reasoning, or never happen
//! (the model does not call tools).

pub mod checker;
pub mod items;
pub mod landing;
mod mismatch;

use std::collections::BTreeMap;

use bakeoff_artifact::{
    FlagCode, FlagSeverity, InstrumentFlag, ItemRecord, Outcome, SuiteResult, ToolDiagnosis,
    ToolRefusedDetails,
};
use bakeoff_client::Exchange;
use bakeoff_wire::{ChatRequest, Message, Tool, ToolFunction};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::instrument::{self, Tally, is_thinking_artifact};
use crate::outcome::{outcome_of_error, record};
use crate::suite_run::{Recorder, SuiteContext, first_per};
use checker::{ExpectedCall, check_calls};
use items::{ToolExpected, ToolExtra};
use landing::{Landing, locate};

const DATA: &str = include_str!("../../data/tool_cases.json");

/// A call with a few arguments fits in 64 tokens; three parallel calls in about 120.
pub const MAX_TOKENS: u32 = 96;
pub const MAX_TOKENS_PARALLEL: u32 = 160;

#[derive(Debug, Clone, Deserialize)]
pub struct ToolDef {
    pub description: Option<String>,
    pub parameters: Value,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ToolCase {
    pub id: String,
    pub category: String,
    pub prompt: String,
    pub tools: Vec<String>,
    pub expected: Vec<ExpectedCall>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ToolData {
    pub tools: BTreeMap<String, ToolDef>,
    pub cases: Vec<ToolCase>,
}

#[derive(Debug, thiserror::Error)]
#[error("shipped tool cases are invalid: {0}")]
pub struct DataError(String);

pub fn data() -> Result<ToolData, DataError> {
    let d: ToolData = serde_json::from_str(DATA).map_err(|e| DataError(e.to_string()))?;
    for c in &d.cases {
        for t in c.tools.iter().chain(c.expected.iter().map(|e| &e.name)) {
            if !d.tools.contains_key(t) {
                return Err(DataError(format!("case {} names unknown tool {t}", c.id)));
            }
        }
    }
    Ok(d)
}

pub fn request(model: &str, data: &ToolData, case: &ToolCase) -> ChatRequest {
    let parallel = case.expected.len() > 1;
    let mut req = ChatRequest::new(
        model,
        vec![Message::user(&case.prompt)],
        if parallel {
            MAX_TOKENS_PARALLEL
        } else {
            MAX_TOKENS
        },
        true,
    );
    req.tools = Some(
        case.tools
            .iter()
            .filter_map(|name| {
                data.tools.get(name).map(|t| Tool {
                    kind: "function".into(),
                    function: ToolFunction {
                        name: name.clone(),
                        description: t.description.clone(),
                        parameters: t.parameters.clone(),
                    },
                })
            })
            .collect(),
    );
    if parallel {
        // Standard OpenAI field; llama.cpp and vLLM honour it.
        req.extra.insert("parallel_tool_calls".into(), json!(true));
    }
    req
}

/// The first `limit` cases of each category, in file order, so a quick run still covers
/// single, multiple, parallel, nested and irrelevance.
pub fn subset(cases: &[ToolCase], limit: Option<usize>) -> Vec<&ToolCase> {
    first_per(cases, limit, |c| c.category.as_str())
}

/// What the check found, beyond the outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolVerdict {
    pub outcome: Outcome,
    pub detail: String,
    pub landing: Landing,
    /// For calls that landed as text or in the reasoning: would they have passed, had the
    /// server parsed them? (Tells a parser fault from a model fault.)
    pub would_pass_if_parsed: Option<bool>,
}

/// Classify one reply to a tool case. Only calls in `tool_calls` can pass; an answer or call is
/// never taken from the reasoning.
pub fn judge(ex: &Exchange, case: &ToolCase, data: &ToolData) -> ToolVerdict {
    let r = &ex.reply;
    let (landing, calls) = locate(&r.tool_calls, &r.content, &r.reasoning);
    let schema_of = |name: &str| data.tools.get(name).map(|t| t.parameters.clone());
    let verdict = |outcome, detail: String, would| ToolVerdict {
        outcome,
        detail,
        landing,
        would_pass_if_parsed: would,
    };
    if let Some(e) = &ex.error {
        return verdict(outcome_of_error(e), e.to_string(), None);
    }
    let truncated = r.finish_reason.as_deref() == Some("length");
    match landing {
        Landing::ToolCalls => match check_calls(&calls, &case.expected, &schema_of) {
            Ok(()) => verdict(Outcome::Ok, "calls match".into(), None),
            Err(e) if truncated => verdict(
                Outcome::Truncated,
                format!("cut off by max_tokens; {e}"),
                None,
            ),
            Err(e) => verdict(Outcome::Wrong, e.to_string(), None),
        },
        Landing::ContentText | Landing::Reasoning => {
            let would = check_calls(&calls, &case.expected, &schema_of).is_ok();
            let place = if landing == Landing::ContentText {
                "as text in content: the server did not parse it into tool_calls (no tool parser?)"
            } else {
                "inside the reasoning"
            };
            let detail = format!(
                "{} call(s) landed {place}; {}",
                calls.len(),
                if would {
                    "they would pass if parsed"
                } else {
                    "they would fail even if parsed"
                }
            );
            if r.content.trim().is_empty() && !r.reasoning.trim().is_empty() {
                let o = if truncated {
                    Outcome::TruncatedInReasoning
                } else {
                    Outcome::EmptyContentReasoningOnly
                };
                return verdict(o, detail, Some(would));
            }
            verdict(
                if truncated {
                    Outcome::Truncated
                } else {
                    Outcome::Wrong
                },
                detail,
                Some(would),
            )
        }
        Landing::Nowhere => {
            if r.content.trim().is_empty() {
                if !r.reasoning.trim().is_empty() {
                    let o = if truncated {
                        Outcome::TruncatedInReasoning
                    } else {
                        Outcome::EmptyContentReasoningOnly
                    };
                    return verdict(o, "content empty, reasoning present, no call".into(), None);
                }
                return verdict(
                    Outcome::Empty,
                    "no content, no reasoning, no call".into(),
                    None,
                );
            }
            if case.expected.is_empty() {
                let note = if truncated {
                    " (reply cut off by max_tokens)"
                } else {
                    ""
                };
                verdict(
                    Outcome::Ok,
                    format!("no call made, as expected{note}"),
                    None,
                )
            } else if truncated {
                verdict(
                    Outcome::Truncated,
                    "cut off by max_tokens; no tool call was made".into(),
                    None,
                )
            } else {
                verdict(Outcome::Wrong, "no tool call was made".into(), None)
            }
        }
    }
}

/// The landing key under which replies that never left the reasoning (no call anywhere, cut
/// off while reasoning or reasoning with empty content) are counted, apart from `nowhere`.
pub const ENDED_IN_REASONING: &str = "ended-in-reasoning";

/// The diagnosis the summary gives: which of parser or model is at fault, if either. Replies
/// that ended inside the reasoning blame neither: they are a budget or thinking-mode artifact.
pub fn diagnose(counts: &BTreeMap<&'static str, u64>) -> (&'static str, String) {
    let g = |k| counts.get(k).copied().unwrap_or(0);
    let (tc, text, reas, none, thought) = (
        g("tool-calls"),
        g("content-text"),
        g("reasoning"),
        g("nowhere"),
        g(ENDED_IN_REASONING),
    );
    let total = tc + text + reas + none + thought;
    if total == 0 {
        (
            "nothing-measured",
            "no item expecting a call produced a reply".into(),
        )
    } else if tc > 0 && text == 0 {
        (
            "tool-calls-work",
            format!(
                "{tc}/{total} replies carried parsed tool_calls: the server's tool parser works"
            ),
        )
    } else if text > 0 && tc == 0 {
        (
            "server-lacks-tool-parser",
            format!(
                "{text}/{total} replies wrote the call as text in content and none reached tool_calls: the server lacks its tool parser \
             (vLLM --enable-auto-tool-choice --tool-call-parser …; llama.cpp --jinja with a tool-capable template)"
            ),
        )
    } else if text > 0 {
        (
            "tool-parser-unreliable",
            format!("{tc}/{total} calls were parsed but {text}/{total} landed as text in content"),
        )
    } else if reas > 0 {
        (
            "calls-inside-reasoning",
            format!(
                "{reas}/{total} calls were written inside the reasoning and none reached tool_calls (turn thinking off, or check the reasoning parser)"
            ),
        )
    } else if thought > 0 && thought >= none {
        (
            "replies-ended-in-reasoning",
            format!(
                "{thought}/{total} replies ended inside the reasoning with no call (cut off by max_tokens while reasoning, or \
             reasoning with empty content): neither the parser nor the model can be judged; rerun with --thinking on \
             (larger output budget) or --thinking off"
            ),
        )
    } else {
        let also = if thought > 0 {
            format!("; {thought}/{total} more ended inside the reasoning")
        } else {
            String::new()
        };
        (
            "model-does-not-call-tools",
            format!(
                "{none}/{total} replies contained no call anywhere (not in tool_calls, content or reasoning): the model does not call \
             tools here (or the template drops the tool list){also}"
            ),
        )
    }
}

pub async fn run(ctx: &SuiteContext<'_>, rec: &mut Recorder<'_>) -> SuiteResult {
    let Ok(data) = data() else {
        return rec.result(0, Vec::new());
    };
    let cases = subset(&data.cases, ctx.options.limit);
    if let Some(refused) = refused_by_server(ctx, cases.len()) {
        return refused;
    }
    let mut done = Vec::with_capacity(cases.len());
    let mut tallies = Vec::new();
    let mut landing_counts: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut would_pass = 0u64;
    for case in &cases {
        let mut req = request(&ctx.model, &data, case);
        ctx.options
            .thinking
            .apply_scored(ctx.facts.engine, &mut req);
        let Some(ex) = rec.guard(ctx.client.chat_stream(&req)).await else {
            break;
        };
        let v = judge(&ex, case, &data);
        let mut item = record(
            &case.id,
            &req,
            &ex,
            v.outcome,
            Some(v.detail.clone()),
            Value::Null,
        );
        rec.writes().expected(&mut item, &ToolExpected::of(case));
        rec.writes()
            .extra(&mut item, &extra_of(case, &v, reasoning_tokens(&ex)));
        if !case.expected.is_empty() && !v.outcome.is_request_failure() {
            let key = if v.landing == Landing::Nowhere && is_thinking_artifact(v.outcome) {
                ENDED_IN_REASONING
            } else {
                v.landing.as_str()
            };
            *landing_counts.entry(key).or_insert(0) += 1;
            if v.would_pass_if_parsed == Some(true) {
                would_pass += 1;
            }
        }
        tallies.push(Tally {
            id: case.id.clone(),
            family: case.category.clone(),
            outcome: v.outcome,
            chance: 0.0,
            extraction_failed: false,
        });
        let go_on = rec.record(&item).await;
        done.push(item);
        if !go_on {
            break;
        }
    }
    let mut result = rec.result(cases.len(), done);
    let mut details = instrument::apply("tool", &mut result.summary, &tallies);
    details.reasoning = Some(crate::summary::reasoning_totals(&result.items));
    let (code, message) = diagnose(&landing_counts);
    details.landing = Some(
        landing_counts
            .iter()
            .map(|(k, n)| ((*k).to_owned(), *n))
            .collect(),
    );
    details.diagnosis = Some(ToolDiagnosis {
        code: code.into(),
        message: message.clone(),
        text_calls_that_would_pass: Some(would_pass),
    });
    crate::summary::write_details(&mut result.summary, "tool", &details);
    let flag = match code {
        "server-lacks-tool-parser" | "tool-parser-unreliable" => {
            Some((FlagCode::ToolParserMissing, FlagSeverity::Warning))
        }
        "calls-inside-reasoning" => Some((FlagCode::ToolCallsInReasoning, FlagSeverity::Warning)),
        "model-does-not-call-tools" => Some((FlagCode::ModelDoesNotCallTools, FlagSeverity::Info)),
        _ => None,
    };
    if let Some((code, severity)) = flag {
        result.summary.flags.push(InstrumentFlag {
            code,
            severity,
            message,
            suite: Some("tool".into()),
            count: Some(landing_counts.values().sum()),
        });
    }
    result
}

/// Preflight's tool probe found that the server refuses any request offering tools: the suite
/// measures nothing and says why once, with the fix, instead of one `http-error` per item.
fn refused_by_server(ctx: &SuiteContext<'_>, planned: usize) -> Option<SuiteResult> {
    let tc = ctx.facts.tool_calls.as_ref()?;
    if tc.state != bakeoff_artifact::ToolCallState::Refused {
        return None;
    }
    let message = format!(
        "the server refuses requests that offer tools (HTTP {}: {}); fix: {}",
        tc.http_status.unwrap_or(0),
        tc.server_said.as_deref().unwrap_or("no message"),
        tc.fix
            .as_deref()
            .unwrap_or("enable tool calling on the server")
    );
    let mut summary = crate::summary::summarize(planned, &[]);
    summary.flags.push(InstrumentFlag {
        code: FlagCode::ToolsRefused,
        severity: FlagSeverity::Invalid,
        message: message.clone(),
        suite: Some("tool".into()),
        count: None,
    });
    let details = ToolRefusedDetails {
        diagnosis: ToolDiagnosis {
            code: "server-refuses-tools".into(),
            message,
            text_calls_that_would_pass: None,
        },
    };
    crate::summary::write_details(&mut summary, "tool", &details);
    Some(SuiteResult {
        status: bakeoff_artifact::SuiteStatus::Failed,
        summary,
        items: Vec::new(),
    })
}

pub(crate) fn reasoning_tokens(ex: &Exchange) -> Option<u64> {
    ex.reply.usage.as_ref()?.reasoning_tokens()
}

/// For tests: the item records of a run carry these fields.
pub fn landing_of(item: &ItemRecord) -> Option<&str> {
    item.extra.get("landing").and_then(Value::as_str)
}

// The item shapes are built here, from the suite's own types, so `items` imports none of them.
impl ToolExpected {
    pub fn of(case: &ToolCase) -> Self {
        Self {
            category: case.category.clone(),
            calls: case.expected.clone(),
        }
    }
}

/// An item's `extra`, from the case and the verdict on its reply.
pub fn extra_of(case: &ToolCase, v: &ToolVerdict, reasoning_tokens: Option<u64>) -> ToolExtra {
    ToolExtra {
        family: case.category.clone(),
        landing: v.landing,
        would_pass_if_parsed: v.would_pass_if_parsed,
        reasoning_tokens,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use bakeoff_client::Reply;

    #[test]
    fn shipped_cases_cover_every_category_and_their_own_answers_pass() {
        let d = data().unwrap();
        assert!(d.cases.len() >= 30);
        for cat in ["single", "multiple", "parallel", "nested", "irrelevance"] {
            assert!(d.cases.iter().any(|c| c.category == cat), "{cat}");
        }
        let mut ids: Vec<&str> = d.cases.iter().map(|c| c.id.as_str()).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), d.cases.len(), "ids are unique");
        // Build a reply from the first allowed value of every parameter: it must pass.
        for c in &d.cases {
            let calls: Vec<bakeoff_wire::ToolCall> = c
                .expected
                .iter()
                .rev() // order must not matter
                .map(|e| bakeoff_wire::ToolCall {
                    id: None,
                    kind: "function".into(),
                    function: bakeoff_wire::FunctionCall {
                        name: e.name.clone(),
                        arguments: Value::Object(
                            e.arguments
                                .iter()
                                .filter_map(|(k, v)| first_value(v).map(|v| (k.clone(), v)))
                                .collect(),
                        )
                        .to_string(),
                    },
                })
                .collect();
            let ex = Exchange {
                reply: Reply {
                    content: if calls.is_empty() {
                        "A reply.".into()
                    } else {
                        String::new()
                    },
                    tool_calls: calls,
                    finish_reason: Some("stop".into()),
                    ..Reply::default()
                },
                error: None,
            };
            let v = judge(&ex, c, &d);
            assert_eq!(v.outcome, Outcome::Ok, "{}: {}", c.id, v.detail);
        }
    }

    #[test]
    fn a_limit_keeps_every_category() {
        let d = data().unwrap();
        let one = subset(&d.cases, Some(1));
        let cats: Vec<&str> = one.iter().map(|c| c.category.as_str()).collect();
        assert_eq!(
            cats,
            vec!["single", "multiple", "parallel", "nested", "irrelevance"]
        );
        assert_eq!(subset(&d.cases, None).len(), d.cases.len());
    }

    fn first_value(allowed: &[Value]) -> Option<Value> {
        let v = allowed.iter().find(|v| v.as_str() != Some(""))?;
        Some(match v {
            Value::Object(spec) => Value::Object(
                spec.iter()
                    .filter_map(|(k, a)| first_value(a.as_array()?).map(|v| (k.clone(), v)))
                    .collect(),
            ),
            other => other.clone(),
        })
    }

    #[test]
    fn diagnosis() {
        let m = |pairs: &[(&'static str, u64)]| pairs.iter().copied().collect::<BTreeMap<_, _>>();
        assert_eq!(
            diagnose(&m(&[("content-text", 3), ("nowhere", 2)])).0,
            "server-lacks-tool-parser"
        );
        assert_eq!(
            diagnose(&m(&[("tool-calls", 3), ("nowhere", 2)])).0,
            "tool-calls-work"
        );
        assert_eq!(
            diagnose(&m(&[("nowhere", 5)])).0,
            "model-does-not-call-tools"
        );
        assert_eq!(
            diagnose(&m(&[("reasoning", 1), ("nowhere", 5)])).0,
            "calls-inside-reasoning"
        );
        // Out of budget while reasoning: not the model's fault, not the parser's.
        assert_eq!(
            diagnose(&m(&[(ENDED_IN_REASONING, 5), ("nowhere", 1)])).0,
            "replies-ended-in-reasoning"
        );
        let (code, msg) = diagnose(&m(&[(ENDED_IN_REASONING, 1), ("nowhere", 5)]));
        assert_eq!(code, "model-does-not-call-tools");
        assert!(msg.contains("1/6 more ended inside the reasoning"), "{msg}");
    }
}
