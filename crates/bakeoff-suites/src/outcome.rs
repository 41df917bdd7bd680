//! One place that turns an [`Exchange`] into an outcome class and an [`ItemRecord`], so every
//! suite classifies the same reply the same way (docs/artifacts.md lists the classes).

use bakeoff_artifact::{ErrorRecord, ItemRecord, LatencyRecord, Outcome, ResponseRecord};
use bakeoff_client::{Exchange, RequestError};
use bakeoff_wire::ChatRequest;

/// A suite's verdict on the visible answer (`content` only: an answer is never pulled out of
/// the reasoning text).
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    pub passed: bool,
    pub detail: String,
}

/// Classify a reply. Request failures first, then thinking artifacts, then truncation, then
/// the suite's check.
pub fn classify(ex: &Exchange, check: impl FnOnce(&str) -> Check) -> (Outcome, Option<String>) {
    if let Some(e) = &ex.error {
        return (outcome_of_error(e), Some(e.to_string()));
    }
    let r = &ex.reply;
    let truncated = r.finish_reason.as_deref() == Some("length");
    if r.content.trim().is_empty() {
        if !r.reasoning.trim().is_empty() {
            return if truncated {
                (
                    Outcome::TruncatedInReasoning,
                    Some("cut off by max_tokens while still reasoning".into()),
                )
            } else {
                (
                    Outcome::EmptyContentReasoningOnly,
                    Some("content empty, reasoning present: a thinking-mode artifact".into()),
                )
            };
        }
        return (Outcome::Empty, Some("no content and no reasoning".into()));
    }
    let c = check(&r.content);
    if c.passed {
        (Outcome::Ok, Some(c.detail))
    } else if truncated {
        (
            Outcome::Truncated,
            Some(format!("cut off by max_tokens; {}", c.detail)),
        )
    } else {
        (Outcome::Wrong, Some(c.detail))
    }
}

pub fn outcome_of_error(e: &RequestError) -> Outcome {
    match e {
        // An HTTP error status, or the server's own error event: the server said no.
        RequestError::Http { .. } | RequestError::ServerErrorEvent { .. } => Outcome::HttpError,
        // A 2xx reply that is not what the protocol promises (not an event stream, invalid
        // JSON) broke the stream's framing: never an `http-error` with status 200.
        e if e.is_timeout() => Outcome::Timeout,
        _ => Outcome::ConnectionError,
    }
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The record of one request.
pub fn record(
    id: &str,
    req: &ChatRequest,
    ex: &Exchange,
    outcome: Outcome,
    check: Option<String>,
    expected: serde_json::Value,
) -> ItemRecord {
    let r = &ex.reply;
    ItemRecord {
        id: id.to_string(),
        outcome,
        request: serde_json::to_value(req).unwrap_or(serde_json::Value::Null),
        response: ResponseRecord {
            http_status: r.status,
            content: r.content.clone(),
            reasoning: r.reasoning.clone(),
            tool_calls: r.tool_calls.clone(),
            finish_reason: r.finish_reason.clone(),
            usage: r.usage.clone(),
            timings: r.timings.clone(),
        },
        expected,
        check,
        latency: LatencyRecord {
            first_byte_ms: r.first_byte.map(ms),
            ttft_ms: r.ttft.map(ms),
            ttfot_ms: r.ttfot.map(ms),
            e2e_ms: ms(r.e2e),
            text_chunks: r.chunks.len() as u64,
        },
        error: ex.error.as_ref().map(|e| ErrorRecord {
            kind: e.kind().to_string(),
            message: e.to_string(),
            body: e.http_body().map(str::to_string),
        }),
        extra: serde_json::Value::Null,
    }
}

/// Normalize a short answer for exact checks: trim, drop surrounding quotes and punctuation,
/// collapse inner whitespace. Case is kept (the check decides).
pub fn normalize_answer(s: &str) -> String {
    let trimmed = s.trim().trim_matches(|c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '"' | '\'' | '`' | '.' | ',' | '!' | '?' | ';' | ':' | '*'
            )
    });
    trimmed.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_client::Reply;

    fn ex(content: &str, reasoning: &str, finish: &str) -> Exchange {
        Exchange {
            reply: Reply {
                content: content.into(),
                reasoning: reasoning.into(),
                finish_reason: Some(finish.into()),
                ..Reply::default()
            },
            error: None,
        }
    }

    fn pass_if(expected: &'static str) -> impl FnOnce(&str) -> Check {
        move |s: &str| Check {
            passed: normalize_answer(s) == expected,
            detail: String::new(),
        }
    }

    #[test]
    fn classes() {
        assert_eq!(
            classify(&ex("banana", "", "stop"), pass_if("banana")).0,
            Outcome::Ok
        );
        assert_eq!(
            classify(&ex("apple", "", "stop"), pass_if("banana")).0,
            Outcome::Wrong
        );
        assert_eq!(
            classify(&ex("apple apple", "", "length"), pass_if("banana")).0,
            Outcome::Truncated
        );
        assert_eq!(
            classify(&ex("", "thinking", "stop"), pass_if("banana")).0,
            Outcome::EmptyContentReasoningOnly
        );
        assert_eq!(
            classify(&ex("", "thinking", "length"), pass_if("banana")).0,
            Outcome::TruncatedInReasoning
        );
        assert_eq!(
            classify(&ex("  ", "", "stop"), pass_if("banana")).0,
            Outcome::Empty
        );
        // The answer is never taken from the reasoning.
        assert_eq!(
            classify(&ex("", "banana", "stop"), pass_if("banana")).0,
            Outcome::EmptyContentReasoningOnly
        );
    }

    #[test]
    fn errors_are_classified() {
        let e = Exchange {
            reply: Reply::default(),
            error: Some(RequestError::Http {
                status: 500,
                body: "x".into(),
            }),
        };
        assert_eq!(classify(&e, pass_if("x")).0, Outcome::HttpError);
        let e = Exchange {
            reply: Reply::default(),
            error: Some(RequestError::IdleTimeout {
                after: std::time::Duration::from_secs(1),
            }),
        };
        assert_eq!(classify(&e, pass_if("x")).0, Outcome::Timeout);
        let e = Exchange {
            reply: Reply::default(),
            error: Some(RequestError::Stream {
                message: "reset".into(),
            }),
        };
        assert_eq!(classify(&e, pass_if("x")).0, Outcome::ConnectionError);
    }

    #[test]
    fn normalization() {
        assert_eq!(normalize_answer("  \"Banana.\" \n"), "Banana");
        assert_eq!(normalize_answer("**42**"), "42");
        assert_eq!(normalize_answer("HELLO   WORLD!"), "HELLO WORLD");
    }
}
