//! ShareGPT conversations as a prompt source (`bench run --prompts-sharegpt FILE`): a JSON array
//! or JSONL of `{"id": …, "conversations": [{"from": "human"|"gpt"|"system", "value": "…"}]}`.
//! Only the human turns are kept, in order: single-turn requests send a conversation's first
//! human turn; multi-turn conversations send its human turns one per turn, with the model's
//! real replies in between (never the recorded `gpt` turns). `system` turns are not sent: a
//! shared system prompt is `--system-prompt-tokens`.
//!
//! The text is untrusted: no error message quotes it, and nothing here prints it.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::LoadError;

/// Why a `--prompts-sharegpt` file is refused. `file` is the file as the operator named it;
/// serde_json's messages give a position, never the text.
#[derive(Debug, thiserror::Error)]
pub enum ShareGptInvalid {
    #[error(
        "--prompts-sharegpt {path}: cannot read it ({source}): pass an existing ShareGPT JSON or JSONL file"
    )]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The text starts with `[` but is not a JSON array.
    #[error(
        "--prompts-sharegpt {file}: not a JSON array of conversations ({source}); give a ShareGPT JSON array or one conversation per line (JSONL)"
    )]
    NotArray {
        file: String,
        source: serde_json::Error,
    },
    /// A JSONL line (1-based) that is not JSON.
    #[error(
        "--prompts-sharegpt {file} line {line}: not JSON ({source}); each line must be one {{\"conversations\": [{{\"from\": \"human\", \"value\": …}}]}} object"
    )]
    NotJsonLine {
        file: String,
        line: usize,
        source: serde_json::Error,
    },
    /// Every record was skipped (`skipped` of them) or there were none.
    #[error(
        "--prompts-sharegpt {file}: no conversation has a human turn ({skipped} skipped); each needs a {{\"from\": \"human\", \"value\": \"…\"}} turn"
    )]
    NoHumanTurn { file: String, skipped: u64 },
    /// A record that is JSON but not a conversation.
    #[error(
        "--prompts-sharegpt {file} {place}: {problem}; expected {{\"conversations\": [{{\"from\": \"human\", \"value\": \"…\"}}, …]}}"
    )]
    Record {
        file: String,
        place: Place,
        #[source]
        problem: RecordProblem,
    },
}

/// Where a record sits, 1-based: `element N` of a JSON array, `line N` of JSONL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Element(usize),
    Line(usize),
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Element(k) => write!(f, "element {k}"),
            Place::Line(n) => write!(f, "line {n}"),
        }
    }
}

/// What a record lacks.
#[derive(Debug, thiserror::Error)]
pub enum RecordProblem {
    #[error("no \"conversations\" field")]
    NoConversations,
    #[error("\"conversations\" is not an array")]
    ConversationsNotArray,
    #[error("a turn has no \"from\" string")]
    NoFrom,
    #[error("a turn has no \"value\" string")]
    NoValue,
}

/// One conversation's human turns (never empty).
#[derive(Debug, Clone, PartialEq)]
pub struct ShareGptConversation {
    pub human: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ShareGpt {
    /// The file, as the operator named it.
    pub source: String,
    /// Conversations with at least one non-empty human turn, in file order.
    pub conversations: Vec<ShareGptConversation>,
    /// Records dropped for having no human turn.
    pub skipped: u64,
}

impl ShareGpt {
    pub fn load(path: &Path) -> Result<Self, LoadError> {
        let text = std::fs::read_to_string(path).map_err(|source| ShareGptInvalid::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parse a whole file's text; `source` names it in errors.
    pub fn parse(text: &str, source: &str) -> Result<Self, LoadError> {
        let mut out = ShareGpt {
            source: source.to_string(),
            conversations: Vec::new(),
            skipped: 0,
        };
        if text.trim_start().starts_with('[') {
            let all: Vec<Value> =
                serde_json::from_str(text).map_err(|e| ShareGptInvalid::NotArray {
                    file: source.to_string(),
                    source: e,
                })?;
            for (k, v) in all.iter().enumerate() {
                out.push(v, Place::Element(k + 1))?;
            }
        } else {
            for (n, line) in text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                let v: Value =
                    serde_json::from_str(line).map_err(|e| ShareGptInvalid::NotJsonLine {
                        file: source.to_string(),
                        line: n + 1,
                        source: e,
                    })?;
                out.push(&v, Place::Line(n + 1))?;
            }
        }
        if out.conversations.is_empty() {
            return Err(ShareGptInvalid::NoHumanTurn {
                file: out.source,
                skipped: out.skipped,
            }
            .into());
        }
        Ok(out)
    }

    fn push(&mut self, v: &Value, place: Place) -> Result<(), ShareGptInvalid> {
        let bad = |problem| ShareGptInvalid::Record {
            file: self.source.clone(),
            place,
            problem,
        };
        let turns = v
            .get("conversations")
            .ok_or_else(|| bad(RecordProblem::NoConversations))?
            .as_array()
            .ok_or_else(|| bad(RecordProblem::ConversationsNotArray))?;
        let mut human = Vec::new();
        for t in turns {
            let from = t
                .get("from")
                .and_then(Value::as_str)
                .ok_or_else(|| bad(RecordProblem::NoFrom))?;
            let value = t
                .get("value")
                .and_then(Value::as_str)
                .ok_or_else(|| bad(RecordProblem::NoValue))?;
            if matches!(from, "human" | "user") && !value.trim().is_empty() {
                human.push(value.to_string());
            }
        }
        if human.is_empty() {
            self.skipped += 1;
        } else {
            self.conversations.push(ShareGptConversation { human });
        }
        Ok(())
    }

    /// Conversation `k`, cycling through the file.
    pub fn conversation(&self, k: u64) -> &ShareGptConversation {
        let n = self.conversations.len().max(1) as u64;
        // `parse` refuses an empty list, so the index is always in range.
        &self.conversations[(k % n) as usize]
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn array_and_jsonl_keep_human_turns_in_order() {
        let arr = r#"[{"id":"a","conversations":[{"from":"system","value":"s"},{"from":"human","value":"hi"},{"from":"gpt","value":"yo"},{"from":"human","value":"more"}]},
                      {"id":"b","conversations":[{"from":"gpt","value":"only"}]}]"#;
        let s = ShareGpt::parse(arr, "x.json").unwrap();
        assert_eq!(s.conversations.len(), 1);
        assert_eq!(s.skipped, 1);
        assert_eq!(s.conversations[0].human, vec!["hi", "more"]);
        let jsonl = "{\"conversations\":[{\"from\":\"human\",\"value\":\"one\"}]}\n\n{\"conversations\":[{\"from\":\"human\",\"value\":\"two\"}]}\n";
        let s = ShareGpt::parse(jsonl, "x.jsonl").unwrap();
        assert_eq!(s.conversation(3).human[0], "two");
    }

    #[test]
    fn bad_input_is_one_line_naming_the_place_never_the_text() {
        let e = ShareGpt::parse("{\"conversations\":[]}\nnot json SECRET\n", "f.jsonl")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("f.jsonl line 2") && !e.contains('\n') && !e.contains("SECRET"),
            "{e}"
        );
        let e = ShareGpt::parse("[{\"id\":1}]", "f.json")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("element 1") && e.contains("conversations"),
            "{e}"
        );
        let e = ShareGpt::parse(
            "{\"conversations\":[{\"from\":\"human\",\"value\":3}]}",
            "f",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("line 1") && e.contains("value"), "{e}");
        let e = ShareGpt::parse("", "f").unwrap_err().to_string();
        assert!(e.contains("no conversation"), "{e}");
        let e = ShareGpt::parse("[1,", "f").unwrap_err().to_string();
        assert!(!e.contains('\n'), "{e}");
    }
}
