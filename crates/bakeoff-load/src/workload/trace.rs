//! Trace replay (`bench run --trace FILE.jsonl`): one request per line, sent open-loop at the
//! line's arrival offset. Two spellings are accepted on each line:
//!
//! - Mooncake / AIPerf: `{"timestamp": <ms>, "input_length": N, "output_length": M,
//!   "hash_ids": [...]}` — `hash_ids` name the prompt's 512-token blocks; equal ids are equal
//!   blocks, which is how the trace records prefix sharing.
//! - Explicit: `{"offset_s" | "arrival_s": S, "prompt_tokens": N, "output_tokens": M,
//!   "conversation_id" | "session_id": …}` (`session_id` is also read on Mooncake lines).
//!
//! Offsets are measured from the earliest line (a trace of wall-clock stamps replays from 0).
//! A session id is mapped to a number (the order of first appearance); the id itself is never
//! copied into a report.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

/// Tokens per `hash_ids` block (Mooncake's block size; AIPerf's default).
pub const BLOCK_TOKENS: u32 = 512;

#[derive(Debug, Clone, PartialEq)]
pub struct TraceEntry {
    /// From the earliest line, before `--trace-speedup`.
    pub offset: Duration,
    pub prompt_tokens: u32,
    pub output_tokens: u32,
    /// The session, numbered by first appearance.
    pub conversation: Option<u64>,
    /// Shared-prefix blocks of [`BLOCK_TOKENS`] tokens.
    pub hash_ids: Vec<u64>,
    /// Line in the file (1-based).
    pub line: usize,
}

/// Why a trace cannot be replayed: each names the file (and line) and the fix.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("--trace {file}: cannot read it ({source}): pass an existing JSONL trace")]
    Read {
        file: String,
        source: std::io::Error,
    },
    #[error("--trace {file} line {line}: {problem}")]
    Line {
        file: String,
        /// 1-based.
        line: usize,
        #[source]
        problem: LineProblem,
    },
    #[error("--trace {file}: no requests in it; give one JSON object per line")]
    Empty { file: String },
}

/// What is wrong with one line of a trace.
#[derive(Debug, thiserror::Error)]
pub enum LineProblem {
    #[error(
        "not JSON ({0}); each line is one object like {{\"timestamp\": 0, \"input_length\": 512, \"output_length\": 64}}"
    )]
    NotJson(#[source] serde_json::Error),
    #[error(
        "not a JSON object; each line is one object like {{\"offset_s\": 0.5, \"prompt_tokens\": 128, \"output_tokens\": 64}}"
    )]
    NotObject,
    #[error("no arrival time: add \"timestamp\" (ms, Mooncake/AIPerf) or \"offset_s\" (seconds)")]
    NoArrival,
    #[error("\"{key}\" must be a non-negative number")]
    BadArrival { key: &'static str },
    /// None of `keys` is on the line.
    #[error("no token count: add \"{}\"", .keys.join("\" or \""))]
    NoTokens { keys: &'static [&'static str] },
    #[error(
        "\"{key}\" must be an integer from 1 to {}",
        crate::lengths::MAX_TOKENS
    )]
    BadTokens { key: &'static str },
    #[error("\"hash_ids\" must be an array of non-negative integers")]
    HashIds,
    #[error("\"conversation_id\"/\"session_id\" must be a string or a number")]
    Session,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// The file, as the operator named it.
    pub source: String,
    /// In arrival order (stable for equal offsets).
    pub entries: Vec<TraceEntry>,
    pub conversations: u64,
}

impl Trace {
    pub fn load(path: &Path) -> Result<Self, TraceError> {
        let text = std::fs::read_to_string(path).map_err(|source| TraceError::Read {
            file: path.display().to_string(),
            source,
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parse a whole JSONL text; `source` names it in errors.
    pub fn parse(text: &str, source: &str) -> Result<Self, TraceError> {
        let mut raw = Vec::new();
        let mut sessions: HashMap<String, u64> = HashMap::new();
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let bad = |problem: LineProblem| TraceError::Line {
                file: source.to_owned(),
                line: n + 1,
                problem,
            };
            let v: Value = serde_json::from_str(line).map_err(|e| bad(LineProblem::NotJson(e)))?;
            if !v.is_object() {
                return Err(bad(LineProblem::NotObject));
            }
            let offset_s = arrival_s(&v).map_err(bad)?;
            let prompt_tokens = tokens(&v, &["input_length", "prompt_tokens"]).map_err(bad)?;
            let output_tokens = tokens(&v, &["output_length", "output_tokens"]).map_err(bad)?;
            let hash_ids = match v.get("hash_ids") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(a)) => a
                    .iter()
                    .map(Value::as_u64)
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| bad(LineProblem::HashIds))?,
                Some(_) => return Err(bad(LineProblem::HashIds)),
            };
            let conversation = match ["conversation_id", "session_id"]
                .iter()
                .find_map(|k| v.get(*k).filter(|x| !x.is_null()))
            {
                None => None,
                Some(id @ (Value::String(_) | Value::Number(_))) => {
                    let next = sessions.len() as u64;
                    Some(*sessions.entry(id.to_string()).or_insert(next))
                }
                Some(_) => return Err(bad(LineProblem::Session)),
            };
            raw.push((
                offset_s,
                TraceEntry {
                    offset: Duration::ZERO,
                    prompt_tokens,
                    output_tokens,
                    conversation,
                    hash_ids,
                    line: n + 1,
                },
            ));
        }
        if raw.is_empty() {
            return Err(TraceError::Empty {
                file: source.to_owned(),
            });
        }
        let first = raw.iter().map(|(s, _)| *s).fold(f64::INFINITY, f64::min);
        raw.sort_by(|a, b| a.0.total_cmp(&b.0));
        let entries = raw
            .into_iter()
            .map(|(s, mut e)| {
                e.offset = Duration::from_secs_f64(s - first);
                e
            })
            .collect();
        Ok(Trace {
            source: source.to_string(),
            entries,
            conversations: sessions.len() as u64,
        })
    }

    /// Intended send offsets after `speedup` (2.0: twice as fast).
    pub fn offsets(&self, speedup: f64) -> Vec<Duration> {
        self.entries
            .iter()
            .map(|e| e.offset.div_f64(speedup))
            .collect()
    }
}

/// The line's arrival, seconds: `timestamp` (ms), `offset_s` or `arrival_s`.
fn arrival_s(v: &Value) -> Result<f64, LineProblem> {
    let (key, scale) = [("timestamp", 0.001), ("offset_s", 1.0), ("arrival_s", 1.0)]
        .into_iter()
        .find(|(k, _)| v.get(*k).is_some())
        .ok_or(LineProblem::NoArrival)?;
    v.get(key)
        .and_then(Value::as_f64)
        .map(|x| x * scale)
        .filter(|s| s.is_finite() && *s >= 0.0 && *s < 1e12)
        .ok_or(LineProblem::BadArrival { key })
}

/// The first of `keys` present, a positive token count.
fn tokens(v: &Value, keys: &'static [&'static str]) -> Result<u32, LineProblem> {
    let key = *keys
        .iter()
        .find(|k| v.get(**k).is_some())
        .ok_or(LineProblem::NoTokens { keys })?;
    v.get(key)
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
        .filter(|n| (1..=crate::lengths::MAX_TOKENS).contains(n))
        .ok_or(LineProblem::BadTokens { key })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A trace line asking for more tokens than a request may hold is refused with its line,
    /// before any prompt is built (one of 4000000000 tokens would reserve about 20 GB).
    #[test]
    fn a_line_past_the_token_bound_is_refused() {
        let e = Trace::parse(
            "{\"offset_s\": 0, \"prompt_tokens\": 4000000000, \"output_tokens\": 8}\n",
            "t.jsonl",
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("--trace t.jsonl line 1: "), "{e}");
        assert!(
            e.contains("\"prompt_tokens\" must be an integer from 1 to 1048576"),
            "{e}"
        );
    }

    #[test]
    fn mooncake_and_explicit_lines() {
        let t = Trace::parse(
            "{\"timestamp\": 1500, \"input_length\": 700, \"output_length\": 8, \"hash_ids\": [1, 2]}\n\
             \n\
             {\"timestamp\": 500, \"input_length\": 600, \"output_length\": 4, \"hash_ids\": [1, 3], \"session_id\": \"s\"}\n\
             {\"offset_s\": 2.5, \"prompt_tokens\": 10, \"output_tokens\": 2, \"conversation_id\": \"s\"}\n",
            "t.jsonl",
        )
        .unwrap();
        assert_eq!(t.entries.len(), 3);
        // Sorted by arrival, from the earliest line.
        assert_eq!(t.entries[0].line, 3);
        assert_eq!(t.entries[0].offset, Duration::ZERO);
        assert_eq!(t.entries[1].offset, Duration::from_secs(1));
        assert_eq!(t.entries[2].offset, Duration::from_secs(2));
        assert_eq!(t.entries[0].conversation, Some(0));
        assert_eq!(t.entries[2].conversation, Some(0));
        assert_eq!(t.entries[1].hash_ids, vec![1, 2]);
        assert_eq!(t.conversations, 1);
        assert_eq!(t.offsets(2.0)[2], Duration::from_secs(1));
    }

    #[test]
    fn bad_lines_name_file_line_and_fix() {
        let cases = [
            (
                "{\"input_length\": 5, \"output_length\": 1}",
                "no arrival time",
            ),
            (
                "{\"timestamp\": -1, \"input_length\": 5, \"output_length\": 1}",
                "non-negative",
            ),
            ("{\"timestamp\": 0, \"output_length\": 1}", "input_length"),
            (
                "{\"timestamp\": 0, \"input_length\": 0, \"output_length\": 1}",
                "an integer from 1 to 1048576",
            ),
            (
                "{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 1, \"hash_ids\": [\"x\"]}",
                "hash_ids",
            ),
            ("[1, 2]", "not a JSON object"),
            ("{\"timestamp\": 0,", "not JSON"),
        ];
        for (line, want) in cases {
            let text = format!(
                "{{\"offset_s\": 0, \"prompt_tokens\": 1, \"output_tokens\": 1}}\n{line}\n"
            );
            let e = Trace::parse(&text, "bad.jsonl").unwrap_err().to_string();
            assert!(e.starts_with("--trace bad.jsonl line 2: "), "{e}");
            assert!(e.contains(want) && !e.contains('\n'), "{line}: {e}");
        }
        assert!(
            Trace::parse("\n", "e")
                .unwrap_err()
                .to_string()
                .contains("no requests")
        );
    }
}
