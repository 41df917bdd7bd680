//! Recorded sessions replayed token-for-token (`bench run --sessions-file FILE.jsonl`); the
//! format is documented in docs/artifacts.md, "Session files".
//!
//! One JSON object per line, one line per turn:
//!
//! ```json
//! {"session": "a1", "t": 1733580000.25, "end_t": 1733580001.9,
//!  "request": {"messages": [...], "tools": [...]},
//!  "reply": {"role": "assistant", "content": "...", "tool_calls": [...]},
//!  "usage": {"prompt_tokens": 812, "completion_tokens": 64}}
//! ```
//!
//! `request.messages` is the whole history the turn sent, recorded assistant turns included, so
//! every engine replayed sees exactly the same tokens whatever it replies. A line with
//! `"continues": true` holds only the messages after the previous turn's reply instead; that
//! reply is then taken from the previous line's `reply`. Each turn asks for the recorded
//! `usage.completion_tokens` (else the request's own `max_tokens`), so the output is the same
//! length too where the server honours pinning.

use std::collections::HashMap;
use std::path::Path;

use bakeoff_wire::{ChatRequest, Message};
use serde_json::{Map, Value};

use crate::workload::RequestPlan;

/// The request fields a replay keeps besides the messages: they shape what the model produces
/// (a tool offered, a grammar). Sampling, the model name and streaming are the run's own.
const KEPT_FIELDS: [&str; 4] = [
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "response_format",
];

/// Why a session file is refused.
#[derive(Debug, thiserror::Error)]
pub enum SessionFileError {
    #[error(
        "--sessions-file {file}: cannot read it ({source}): pass an existing JSONL session file"
    )]
    Read {
        file: String,
        source: std::io::Error,
    },
    #[error("--sessions-file {file} line {line}: {problem}")]
    Line {
        file: String,
        /// 1-based.
        line: usize,
        #[source]
        problem: SessionLineProblem,
    },
    #[error(
        "--sessions-file {file}: no turns in it; give one JSON object per line (docs/artifacts.md, \"Session files\")"
    )]
    Empty { file: String },
}

/// What is wrong with one line of a session file.
#[derive(Debug, thiserror::Error)]
pub enum SessionLineProblem {
    #[error(
        "not JSON ({0}); each line is one turn like {{\"session\": \"a1\", \"t\": 0.0, \"request\": {{\"messages\": [...]}}}}"
    )]
    NotJson(#[source] serde_json::Error),
    #[error(
        "not a JSON object; each line is one turn like {{\"session\": \"a1\", \"t\": 0.0, \"request\": {{\"messages\": [...]}}}}"
    )]
    NotObject,
    #[error(
        "a turn without a session: add \"session\" (a string or a number) naming the session it belongs to"
    )]
    NoSession,
    #[error("no time: add \"t\", the turn's send time in seconds (any origin, e.g. Unix time)")]
    NoTime,
    #[error("\"{key}\" must be a finite number of seconds")]
    BadTime { key: &'static str },
    #[error(
        "the timestamp goes backwards: t = {t} is before the same session's turn at line {previous_line} (t = {previous}); a session's turns must be in time order"
    )]
    Backwards {
        t: f64,
        previous: f64,
        previous_line: usize,
    },
    #[error("\"end_t\" ({end}) is before \"t\" ({t})")]
    EndBeforeStart { t: f64, end: f64 },
    #[error("no \"request\" object with a \"messages\" array: add the chat request the turn sent")]
    NoMessages,
    #[error("message {index} of the request: {why}")]
    BadMessage { index: usize, why: String },
    #[error(
        "a reply is missing where replay needs one: this line \"continues\" the session, but its previous turn (line {previous_line}) has no \"reply\"; add the recorded assistant message there"
    )]
    ReplyMissing { previous_line: usize },
    #[error(
        "\"continues\": true on a session's first turn: there is no earlier turn to continue; give the whole history"
    )]
    ContinuesFirst,
    #[error("\"reply\" is not an assistant message: {0}")]
    BadReply(String),
}

/// A whole session file, sessions in order of their first turn.
#[derive(Debug, Clone)]
pub struct SessionFile {
    /// The file as the operator named it (its contents never appear in artifacts).
    pub source: String,
    pub sessions: Vec<RecordedSession>,
}

#[derive(Debug, Clone)]
pub struct RecordedSession {
    pub turns: Vec<RecordedTurn>,
}

/// One recorded turn, its history resolved.
#[derive(Debug, Clone)]
pub struct RecordedTurn {
    /// 1-based line in the file.
    pub line: usize,
    /// Send time, seconds (the file's origin).
    pub t: f64,
    pub end_t: Option<f64>,
    pub messages: Vec<Message>,
    /// The kept request fields ([`KEPT_FIELDS`]).
    pub kept: Map<String, Value>,
    /// The recorded completion tokens, else the request's own `max_tokens`.
    pub max_tokens: Option<u32>,
    /// `usage.prompt_tokens` as recorded: what the recording's server counted.
    pub recorded_prompt_tokens: Option<u64>,
    pub reply: Option<Message>,
}

impl SessionFile {
    pub fn load(path: &Path) -> Result<Self, SessionFileError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| SessionFileError::Read {
            file: file.clone(),
            source,
        })?;
        Self::parse(&file, &text)
    }

    pub fn parse(file: &str, text: &str) -> Result<Self, SessionFileError> {
        let mut index: HashMap<String, usize> = HashMap::new();
        let mut sessions: Vec<RecordedSession> = Vec::new();
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let at = |problem| SessionFileError::Line {
                file: file.to_string(),
                line: n + 1,
                problem,
            };
            let (id, turn, continues) = parse_line(line, n + 1).map_err(at)?;
            match index.get(&id) {
                Some(&k) => {
                    let s = &mut sessions[k];
                    let Some(prev) = s.turns.last() else {
                        return Err(at(SessionLineProblem::NoSession));
                    };
                    if turn.t < prev.t {
                        return Err(at(SessionLineProblem::Backwards {
                            t: turn.t,
                            previous: prev.t,
                            previous_line: prev.line,
                        }));
                    }
                    let turn = if continues {
                        let Some(reply) = prev.reply.clone() else {
                            return Err(at(SessionLineProblem::ReplyMissing {
                                previous_line: prev.line,
                            }));
                        };
                        let mut messages = prev.messages.clone();
                        messages.push(reply);
                        messages.extend(turn.messages);
                        RecordedTurn { messages, ..turn }
                    } else {
                        turn
                    };
                    s.turns.push(turn);
                }
                None => {
                    if continues {
                        return Err(at(SessionLineProblem::ContinuesFirst));
                    }
                    index.insert(id, sessions.len());
                    sessions.push(RecordedSession { turns: vec![turn] });
                }
            }
        }
        if sessions.is_empty() {
            return Err(SessionFileError::Empty {
                file: file.to_string(),
            });
        }
        sessions.sort_by(|a, b| a.start().total_cmp(&b.start()));
        Ok(Self {
            source: file.to_string(),
            sessions,
        })
    }

    /// Every turn of every session.
    pub fn turns(&self) -> usize {
        self.sessions.iter().map(|s| s.turns.len()).sum()
    }

    /// The first turn's time: the replay's origin.
    pub fn origin(&self) -> f64 {
        self.sessions.first().map_or(0.0, RecordedSession::start)
    }
}

impl RecordedSession {
    pub fn start(&self) -> f64 {
        self.turns.first().map_or(0.0, |t| t.t)
    }

    /// The recorded tool wait before turn `k` (0-based, k ≥ 1): from the previous reply's end
    /// (or, without `end_t`, its send) to this turn's send.
    pub fn wait_before(&self, k: usize) -> f64 {
        match (
            k.checked_sub(1).and_then(|p| self.turns.get(p)),
            self.turns.get(k),
        ) {
            (Some(prev), Some(this)) => (this.t - prev.end_t.unwrap_or(prev.t)).max(0.0),
            _ => 0.0,
        }
    }
}

impl RecordedTurn {
    /// The request this turn replays: its recorded history and kept fields, the run's model and
    /// sampling, and the recorded output length (else `fallback`).
    pub fn request(&self, plan: &RequestPlan<'_>, fallback: u32) -> (ChatRequest, u32) {
        let out = self.max_tokens.unwrap_or(fallback);
        let mut req = ChatRequest::new(plan.model, self.messages.clone(), out, true);
        crate::workload::finish_request(plan, &mut req, out);
        for (k, v) in &self.kept {
            req.extra.insert(k.clone(), v.clone());
        }
        (req, out)
    }
}

fn parse_line(line: &str, n: usize) -> Result<(String, RecordedTurn, bool), SessionLineProblem> {
    let v: Value = serde_json::from_str(line).map_err(SessionLineProblem::NotJson)?;
    let o = v.as_object().ok_or(SessionLineProblem::NotObject)?;
    let id = match o.get("session").or_else(|| o.get("session_id")) {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        Some(Value::Number(x)) => x.to_string(),
        _ => return Err(SessionLineProblem::NoSession),
    };
    let time = |key: &'static str| -> Result<Option<f64>, SessionLineProblem> {
        match o.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(x) => x
                .as_f64()
                .filter(|t| t.is_finite())
                .map(Some)
                .ok_or(SessionLineProblem::BadTime { key }),
        }
    };
    let t = time("t")?.ok_or(SessionLineProblem::NoTime)?;
    let end_t = time("end_t")?;
    if let Some(end) = end_t.filter(|e| *e < t) {
        return Err(SessionLineProblem::EndBeforeStart { t, end });
    }
    let request = o
        .get("request")
        .and_then(Value::as_object)
        .ok_or(SessionLineProblem::NoMessages)?;
    let raw = request
        .get("messages")
        .and_then(Value::as_array)
        .ok_or(SessionLineProblem::NoMessages)?;
    let messages = raw
        .iter()
        .enumerate()
        .map(|(index, m)| message(m).map_err(|why| SessionLineProblem::BadMessage { index, why }))
        .collect::<Result<Vec<_>, _>>()?;
    let continues = o.get("continues").and_then(Value::as_bool).unwrap_or(false);
    if messages.is_empty() && !continues {
        return Err(SessionLineProblem::NoMessages);
    }
    let kept = KEPT_FIELDS
        .iter()
        .filter_map(|k| request.get(*k).map(|v| (k.to_string(), v.clone())))
        .collect();
    let usage = o.get("usage");
    let count = |v: Option<&Value>| v.and_then(Value::as_u64);
    let max_tokens = count(usage.and_then(|u| u.get("completion_tokens")))
        .or_else(|| count(request.get("max_completion_tokens")))
        .or_else(|| count(request.get("max_tokens")))
        .and_then(|x| u32::try_from(x).ok())
        .filter(|x| (1..=crate::lengths::MAX_TOKENS).contains(x));
    let reply = match o.get("reply") {
        None | Some(Value::Null) => None,
        Some(r) => {
            let m = message(r).map_err(SessionLineProblem::BadReply)?;
            if m.role != "assistant" {
                return Err(SessionLineProblem::BadReply(format!(
                    "its role is {:?}",
                    m.role
                )));
            }
            Some(m)
        }
    };
    Ok((
        id,
        RecordedTurn {
            line: n,
            t,
            end_t,
            messages,
            kept,
            max_tokens,
            recorded_prompt_tokens: count(usage.and_then(|u| u.get("prompt_tokens"))),
            reply,
        },
        continues,
    ))
}

/// One recorded message. Content given as a list of text parts becomes one string, the parts
/// joined by a newline, as vLLM renders them for a string-content template (vLLM 0.32
/// `vllm/entrypoints/chat_utils.py`); a non-text part (an image) cannot be replayed as text.
pub(crate) fn message(v: &Value) -> Result<Message, String> {
    let mut v = v.clone();
    if let Some(parts) = v.get("content").and_then(Value::as_array) {
        let mut texts = Vec::with_capacity(parts.len());
        for p in parts {
            match (p.get("type").and_then(Value::as_str), p.get("text")) {
                (Some("text"), Some(Value::String(t))) => texts.push(t.clone()),
                (kind, _) => {
                    return Err(format!(
                        "a content part of type {:?} cannot be replayed (text parts only)",
                        kind.unwrap_or("?")
                    ));
                }
            }
        }
        v["content"] = Value::String(texts.join("\n"));
    }
    let m: Message = serde_json::from_value(v).map_err(|e| e.to_string())?;
    if m.role.is_empty() {
        return Err("no role".into());
    }
    Ok(m)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn line(session: &str, t: f64, msgs: &str, extra: &str) -> String {
        format!(r#"{{"session": "{session}", "t": {t}, "request": {{"messages": {msgs}}}{extra}}}"#)
    }

    #[test]
    fn whole_histories_and_continued_lines_resolve_alike() {
        let text = [
            line(
                "a",
                10.0,
                r#"[{"role":"user","content":"hi"}]"#,
                r#", "end_t": 11.0, "reply": {"role":"assistant","content":"yo"}, "usage": {"prompt_tokens": 5, "completion_tokens": 3}"#,
            ),
            line("b", 10.5, r#"[{"role":"user","content":[{"type":"text","text":"x"},{"type":"text","text":"y"}]}]"#, ""),
            line(
                "a",
                13.0,
                r#"[{"role":"user","content":"next"}]"#,
                r#", "continues": true"#,
            ),
        ]
        .join("\n");
        let f = SessionFile::parse("f.jsonl", &text).unwrap();
        assert_eq!(f.sessions.len(), 2);
        assert_eq!(f.turns(), 3);
        let a = &f.sessions[0];
        let roles: Vec<_> = a.turns[1]
            .messages
            .iter()
            .map(|m| m.role.as_str())
            .collect();
        assert_eq!(roles, ["user", "assistant", "user"]);
        assert_eq!(a.turns[0].max_tokens, Some(3));
        assert_eq!(a.turns[0].recorded_prompt_tokens, Some(5));
        assert_eq!(a.wait_before(1), 2.0);
        assert_eq!(
            f.sessions[1].turns[0].messages[0].content.as_deref(),
            Some("x\ny")
        );
    }

    #[test]
    fn each_bad_line_is_named_with_its_number() {
        let ok = line("a", 1.0, r#"[{"role":"user","content":"hi"}]"#, "");
        let cases = [
            (
                r#"{"t": 1, "request": {"messages": [{"role":"user","content":"x"}]}}"#.to_string(),
                "without a session",
            ),
            (
                line("a", 0.5, r#"[{"role":"user","content":"x"}]"#, ""),
                "goes backwards",
            ),
            (
                line(
                    "a",
                    2.0,
                    r#"[{"role":"user","content":"x"}]"#,
                    r#", "continues": true"#,
                ),
                "reply is missing",
            ),
            (
                line(
                    "z",
                    2.0,
                    r#"[{"role":"user","content":"x"}]"#,
                    r#", "continues": true"#,
                ),
                "first turn",
            ),
            ("not json".to_string(), "not JSON"),
            (
                line(
                    "a",
                    2.0,
                    r#"[{"role":"user","content":[{"type":"image_url"}]}]"#,
                    "",
                ),
                "image_url",
            ),
        ];
        for (bad, want) in cases {
            let e = SessionFile::parse("f.jsonl", &format!("{ok}\n{bad}"))
                .unwrap_err()
                .to_string();
            assert!(e.starts_with("--sessions-file f.jsonl line 2: "), "{e}");
            assert!(e.contains(want), "{e}");
        }
        assert!(
            SessionFile::parse("f.jsonl", "\n")
                .unwrap_err()
                .to_string()
                .contains("no turns")
        );
    }
}
