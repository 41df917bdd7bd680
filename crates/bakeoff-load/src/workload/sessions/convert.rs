//! Session files from what operators already record (`bench convert-log`; docs/artifacts.md,
//! "Session files"):
//!
//! - `litellm`: the LiteLLM proxy's standard logging payload, one JSON object per line, as a
//!   logging callback writes `kwargs["standard_logging_object"]` (LiteLLM 1.106
//!   `litellm/types/utils.py` `StandardLoggingPayload`; docs.litellm.ai/docs/proxy/logging_spec).
//!   The session is the payload's `trace_id`, which the proxy takes from a request's
//!   `litellm_session_id` (docs.litellm.ai/docs/proxy/ui_logs_sessions); a request that named
//!   none gets a random one of its own, so an id only one call carries names no session and the
//!   history decides (below). Failed calls are left out and counted.
//! - `messages`: the `messages` arrays an OpenAI-compatible proxy records, one request per line:
//!   `{"messages": [...], "timestamp": SECONDS, "session_id": ..., "response": {...}}`, all
//!   but `messages` optional.
//!
//! Without a session id a line joins the session whose last request and reply its history
//! begins with, the way an agent's turns extend each other; else it starts a session.

use serde_json::{Value, json};

use super::file::message;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Litellm,
    Messages,
}

/// Why a log line cannot be converted.
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    #[error("{file} line {line}: {why}")]
    Line {
        file: String,
        line: usize,
        why: String,
    },
    #[error(
        "{file}: no requests converted ({skipped} left out as failed or not chat completions); is it the right --from?"
    )]
    Nothing { file: String, skipped: usize },
}

/// A converted log: the session file's lines and what was left out.
#[derive(Debug, Clone)]
pub struct Converted {
    pub lines: Vec<Value>,
    pub sessions: usize,
    /// Failed calls and other call types.
    pub skipped: usize,
}

impl Converted {
    pub fn to_jsonl(&self) -> String {
        let mut out = String::new();
        for l in &self.lines {
            out.push_str(&l.to_string());
            out.push('\n');
        }
        out
    }
}

/// One request as read from a log, before it is given its session.
struct Call {
    line: usize,
    session: Option<String>,
    t: f64,
    end_t: Option<f64>,
    request: serde_json::Map<String, Value>,
    messages: Vec<Value>,
    reply: Option<Value>,
    usage: Option<Value>,
}

pub fn convert(format: LogFormat, file: &str, text: &str) -> Result<Converted, ConvertError> {
    let mut calls = Vec::new();
    let mut skipped = 0;
    for (n, raw) in text.lines().enumerate() {
        if raw.trim().is_empty() {
            continue;
        }
        let bad = |why: String| ConvertError::Line {
            file: file.to_string(),
            line: n + 1,
            why,
        };
        let v: Value = serde_json::from_str(raw).map_err(|e| bad(format!("not JSON ({e})")))?;
        let call = match format {
            LogFormat::Litellm => litellm_call(&v, n + 1),
            LogFormat::Messages => messages_call(&v, n + 1),
        }
        .map_err(bad)?;
        match call {
            Some(c) => calls.push(c),
            None => skipped += 1,
        }
    }
    if calls.is_empty() {
        return Err(ConvertError::Nothing {
            file: file.to_string(),
            skipped,
        });
    }
    // Time order, file order among equals: a session's turns then follow each other.
    calls.sort_by(|a, b| a.t.total_cmp(&b.t).then(a.line.cmp(&b.line)));
    if format == LogFormat::Litellm {
        // LiteLLM gives a call its own random `trace_id` when the request named no session: an
        // id no other call shares names no session, and the history decides.
        let mut count: std::collections::HashMap<String, usize> = Default::default();
        for c in &calls {
            if let Some(s) = &c.session {
                *count.entry(s.clone()).or_default() += 1;
            }
        }
        for c in &mut calls {
            if c.session.as_ref().is_some_and(|s| count.get(s) == Some(&1)) {
                c.session = None;
            }
        }
    }
    let ids = sessions_of(&calls);
    let sessions = ids.iter().collect::<std::collections::BTreeSet<_>>().len();
    let lines = calls
        .into_iter()
        .zip(ids)
        .map(|(c, id)| {
            let mut request = c.request;
            request.insert("messages".into(), Value::Array(c.messages));
            let mut line = json!({"session": id, "t": c.t, "request": request});
            if let Some(e) = c.end_t {
                line["end_t"] = json!(e);
            }
            if let Some(r) = c.reply {
                line["reply"] = r;
            }
            if let Some(u) = c.usage {
                line["usage"] = u;
            }
            line
        })
        .collect();
    Ok(Converted {
        lines,
        sessions,
        skipped,
    })
}

/// Each call's session id: its own where the log named one, else the session whose last call
/// (with its reply) its history extends, else a new one.
fn sessions_of(calls: &[Call]) -> Vec<String> {
    // Per open session: its id, and the history its next turn must begin with.
    let mut open: Vec<(String, Vec<Turned>)> = Vec::new();
    let mut out = Vec::with_capacity(calls.len());
    for c in calls {
        let history: Vec<Turned> = c.messages.iter().map(turned).collect();
        let id = match &c.session {
            Some(s) => s.clone(),
            None => open
                .iter()
                .rev()
                .find(|(_, h)| !h.is_empty() && history.starts_with(h))
                .map(|(id, _)| id.clone())
                .unwrap_or_else(|| format!("inferred-{}", c.line)),
        };
        let mut next = history;
        if let Some(r) = &c.reply {
            next.push(turned(r));
        }
        match open.iter_mut().find(|(s, _)| *s == id) {
            Some(slot) => slot.1 = next,
            None => open.push((id.clone(), next)),
        }
        out.push(id);
    }
    out
}

/// What makes two messages the same turn of a history: role, text, the tool calls (id, name,
/// arguments) and the call answered. A proxy's record of a reply carries fields a client never
/// resends (`function_call: null`, `refusal`, provider fields), so whole objects would not match.
#[derive(Debug, Clone, PartialEq)]
struct Turned {
    role: String,
    content: String,
    calls: Vec<(String, String, String)>,
    answers: Option<String>,
}

fn turned(v: &Value) -> Turned {
    let m = message(v).unwrap_or_default();
    Turned {
        role: m.role,
        content: m.content.unwrap_or_default(),
        calls: m
            .tool_calls
            .unwrap_or_default()
            .into_iter()
            .map(|c| {
                (
                    c.id.unwrap_or_default(),
                    c.function.name,
                    c.function.arguments,
                )
            })
            .collect(),
        answers: m.tool_call_id,
    }
}

/// The fields of a request kept in a session file (the replay keeps fewer; docs/artifacts.md).
const REQUEST_FIELDS: [&str; 7] = [
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "response_format",
    "max_tokens",
    "max_completion_tokens",
    "temperature",
];

fn checked_messages(v: Option<&Value>) -> Result<Vec<Value>, String> {
    let arr = v.and_then(Value::as_array).ok_or("no \"messages\" array")?;
    for (i, m) in arr.iter().enumerate() {
        message(m).map_err(|why| format!("message {i}: {why}"))?;
    }
    Ok(arr.clone())
}

/// The assistant message of a chat completion (or the message itself).
fn reply_of(v: &Value) -> Option<Value> {
    let m = v.pointer("/choices/0/message").unwrap_or(v).clone();
    (m.get("role").and_then(Value::as_str) == Some("assistant")).then_some(m)
}

fn seconds(v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::Number(n) => n.as_f64().filter(|x| x.is_finite()),
        // LiteLLM's payload and many proxies write epoch seconds; an ISO time is read too.
        Value::String(s) => s.parse::<f64>().ok().or_else(|| chrono_like(s)),
        _ => None,
    }
}

/// `YYYY-MM-DDTHH:MM:SS[.frac][Z]` in UTC as Unix seconds (offsets other than Z are refused:
/// a log's times must share one origin).
fn chrono_like(s: &str) -> Option<f64> {
    let s = s.trim().trim_end_matches('Z');
    let (date, time) = s.split_once(['T', ' '])?;
    let mut d = date.split('-').map(|x| x.parse::<i64>().ok());
    let (y, mo, da) = (d.next()??, d.next()??, d.next()??);
    let mut t = time.split(':');
    let (h, mi) = (
        t.next()?.parse::<i64>().ok()?,
        t.next()?.parse::<i64>().ok()?,
    );
    let sec: f64 = t.next().unwrap_or("0").parse().ok()?;
    // Days from the civil date (Howard Hinnant's days_from_civil).
    let y2 = if mo <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let doy = (153 * (mo + if mo > 2 { -3 } else { 9 }) + 2) / 5 + da - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some((days * 86_400 + h * 3_600 + mi * 60) as f64 + sec)
}

fn kept_request(from: Option<&Value>) -> serde_json::Map<String, Value> {
    let mut out = serde_json::Map::new();
    if let Some(o) = from.and_then(Value::as_object) {
        for k in REQUEST_FIELDS {
            if let Some(v) = o.get(k).filter(|v| !v.is_null()) {
                out.insert(k.into(), v.clone());
            }
        }
    }
    out
}

fn litellm_call(v: &Value, line: usize) -> Result<Option<Call>, String> {
    let o = v.as_object().ok_or("not a JSON object")?;
    if o.get("status")
        .and_then(Value::as_str)
        .is_some_and(|s| s != "success")
    {
        return Ok(None);
    }
    if o.get("call_type")
        .and_then(Value::as_str)
        .is_some_and(|c| !c.contains("completion") || c.contains("text_completion"))
    {
        return Ok(None);
    }
    let messages = checked_messages(o.get("messages"))?;
    let t = seconds(o.get("startTime")).ok_or("no \"startTime\" (seconds)")?;
    let usage = match (o.get("prompt_tokens"), o.get("completion_tokens")) {
        (Some(p), Some(c)) => Some(json!({"prompt_tokens": p, "completion_tokens": c})),
        _ => None,
    };
    let session = o
        .get("trace_id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    Ok(Some(Call {
        line,
        session,
        t,
        end_t: seconds(o.get("endTime")),
        request: kept_request(o.get("model_parameters")),
        messages,
        reply: o.get("response").and_then(reply_of),
        usage,
    }))
}

fn messages_call(v: &Value, line: usize) -> Result<Option<Call>, String> {
    let o = v.as_object().ok_or("not a JSON object")?;
    let messages = checked_messages(o.get("messages"))?;
    let t = seconds(o.get("timestamp").or_else(|| o.get("t"))).unwrap_or(line as f64 * 1e-6);
    let session = match o.get("session_id").or_else(|| o.get("session")) {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let response = o.get("response");
    Ok(Some(Call {
        line,
        session,
        t,
        end_t: seconds(o.get("end_timestamp").or_else(|| o.get("end_t"))),
        request: kept_request(Some(v)),
        messages,
        reply: response.and_then(reply_of),
        usage: response.and_then(|r| r.get("usage")).cloned(),
    }))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::workload::sessions::SessionFile;

    #[test]
    fn litellm_payloads_become_sessions_that_replay() {
        let p = |trace: &str, t: f64, msgs: Value, reply: &str| {
            json!({
                "id": "x", "trace_id": trace, "call_type": "acompletion", "status": "success",
                "startTime": t, "endTime": t + 0.5, "messages": msgs,
                "model_parameters": {"max_tokens": 16, "stream": true},
                "response": {"choices": [{"message": {"role": "assistant", "content": reply}}]},
                "prompt_tokens": 9, "completion_tokens": 4,
            })
            .to_string()
        };
        let u1 = json!([{"role": "user", "content": "a"}]);
        let u2 = json!([{"role": "user", "content": "a"}, {"role": "assistant", "content": "r1"}, {"role": "user", "content": "b"}]);
        let failed = json!({"status": "failure", "messages": []}).to_string();
        let log = [
            p("s1", 5.0, u1.clone(), "r1"),
            failed,
            p("s1", 7.0, u2, "r2"),
            p("s2", 6.0, u1, "q"),
        ]
        .join("\n");
        let c = convert(LogFormat::Litellm, "log", &log).unwrap();
        assert_eq!((c.sessions, c.skipped, c.lines.len()), (2, 1, 3));
        let f = SessionFile::parse("out", &c.to_jsonl()).unwrap();
        assert_eq!(f.sessions.len(), 2);
        let s1 = &f.sessions[0];
        assert_eq!(s1.turns.len(), 2);
        assert_eq!(s1.turns[0].max_tokens, Some(4));
        assert_eq!(s1.wait_before(1), 1.5);
    }

    #[test]
    fn messages_without_session_ids_join_the_session_they_extend() {
        // A proxy records the reply with fields a client never resends.
        let line = |msgs: Value, reply: &str| {
            json!({"messages": msgs, "response": {"choices": [{"message": {"role": "assistant", "content": reply, "function_call": null, "refusal": null, "tool_calls": null}}], "usage": {"prompt_tokens": 3, "completion_tokens": 2}}}).to_string()
        };
        let a1 = json!([{"role": "user", "content": "a"}]);
        let b1 = json!([{"role": "user", "content": "b"}]);
        let a2 = json!([{"role": "user", "content": "a"}, {"role": "assistant", "content": "ra"}, {"role": "tool", "tool_call_id": "1", "content": "out"}]);
        let log = [line(a1, "ra"), line(b1, "rb"), line(a2, "ra2")].join("\n");
        let c = convert(LogFormat::Messages, "log", &log).unwrap();
        assert_eq!(c.sessions, 2);
        assert_eq!(c.lines[0]["session"], c.lines[2]["session"]);
        assert_ne!(c.lines[0]["session"], c.lines[1]["session"]);
    }

    #[test]
    fn iso_times_read_as_unix_seconds() {
        assert_eq!(chrono_like("1970-01-02T00:00:01Z"), Some(86_401.0));
        assert_eq!(chrono_like("2026-12-07T13:43:53.5Z"), Some(1_796_651_033.5));
    }
}
