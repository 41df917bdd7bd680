//! ShareGPT conversations as a prompt source (`bench run --prompts-sharegpt FILE`): a JSON array
//! or JSONL of `{"id": …, "conversations": [{"from": "human"|"gpt"|"system", "value": "…"}]}`.
//! Only the human turns are kept, in order: single-turn requests send a conversation's first
//! human turn; multi-turn conversations send its human turns one per turn, with the model's
//! real replies in between (never the recorded `gpt` turns). `system` turns are not sent: a
//! shared system prompt is `--system-prompt-tokens`.
//!
//! The text is untrusted: no error message quotes it, and nothing here prints it.

use std::path::Path;

use serde_json::Value;

use crate::LoadError;

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
        let text = std::fs::read_to_string(path).map_err(|e| {
            LoadError::Config(format!(
                "--prompts-sharegpt {}: cannot read it ({e}): pass an existing ShareGPT JSON or JSONL file",
                path.display()
            ))
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
            let all: Vec<Value> = serde_json::from_str(text).map_err(|e| {
                LoadError::Config(format!(
                    "--prompts-sharegpt {source}: not a JSON array of conversations ({e}); \
                     give a ShareGPT JSON array or one conversation per line (JSONL)"
                ))
            })?;
            for (k, v) in all.iter().enumerate() {
                out.push(v, || format!("element {}", k + 1))?;
            }
        } else {
            for (n, line) in text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                let v: Value = serde_json::from_str(line).map_err(|e| {
                    LoadError::Config(format!(
                        "--prompts-sharegpt {source} line {}: not JSON ({e}); each line must be one \
                         {{\"conversations\": [{{\"from\": \"human\", \"value\": …}}]}} object",
                        n + 1
                    ))
                })?;
                out.push(&v, || format!("line {}", n + 1))?;
            }
        }
        if out.conversations.is_empty() {
            return Err(LoadError::Config(format!(
                "--prompts-sharegpt {source}: no conversation has a human turn \
                 ({} skipped); each needs a {{\"from\": \"human\", \"value\": \"…\"}} turn",
                out.skipped
            )));
        }
        Ok(out)
    }

    fn push(&mut self, v: &Value, place: impl Fn() -> String) -> Result<(), LoadError> {
        let bad = |why: &str| {
            LoadError::Config(format!(
                "--prompts-sharegpt {} {}: {why}; expected {{\"conversations\": [{{\"from\": \"human\", \"value\": \"…\"}}, …]}}",
                self.source,
                place()
            ))
        };
        let turns = v
            .get("conversations")
            .ok_or_else(|| bad("no \"conversations\" field"))?
            .as_array()
            .ok_or_else(|| bad("\"conversations\" is not an array"))?;
        let mut human = Vec::new();
        for t in turns {
            let from = t
                .get("from")
                .and_then(Value::as_str)
                .ok_or_else(|| bad("a turn has no \"from\" string"))?;
            let value = t
                .get("value")
                .and_then(Value::as_str)
                .ok_or_else(|| bad("a turn has no \"value\" string"))?;
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
