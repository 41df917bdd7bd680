//! The prompt set of `eval damage` (`--prompts FILE`), read the same way by `eval adapter`:
//!
//! - JSON lines, one object a line: `{"id": "...", "prompt": "..."}` (one user message) or
//!   `{"id": "...", "messages": [{"role": "...", "content": "..."}, ...]}`; `id` optional;
//! - or plain text, one prompt a line (the file's first non-empty line does not start with `{`).
//!
//! The shipped set (`data/damage-prompts.jsonl`, forty harmless everyday requests written for
//! bakeoff: facts, arithmetic, code, writing, advice, translation) asks for a paragraph, a list
//! or worked steps, never a one-word answer: damage along the reply needs replies of dozens of
//! tokens (`--tokens`, default 64). It follows the practice of
//! first-token KL measurements of abliterated builds, which measure on harmless prompts
//! (Heretic uses `mlabonne/harmless_alpaca`): damage there is damage to ordinary use.

use std::path::Path;

use bakeoff_wire::Message;
use serde::Deserialize;

const DEFAULT: &str = include_str!("../../data/damage-prompts.jsonl");

/// Where the shipped set comes from, as recorded in artifacts.
pub const DEFAULT_SOURCE: &str = "shipped: bakeoff-measure/data/damage-prompts.jsonl";

/// The most prompts a set may hold: each costs three requests.
pub const MAX_PROMPTS: usize = 2000;

/// One prompt of the set.
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    pub id: String,
    pub messages: Vec<Message>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    prompt: Option<String>,
    #[serde(default)]
    messages: Option<Vec<Message>>,
}

/// Why a prompt set could not be read; each message names the file, the line and the fix.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct PromptsError(pub String);

/// The set in `path`, or the shipped one.
pub fn load(path: Option<&Path>) -> Result<Vec<Prompt>, PromptsError> {
    match path {
        None => parse(DEFAULT, "the shipped damage prompts"),
        Some(p) => {
            let text = std::fs::read_to_string(p).map_err(|e| {
                PromptsError(format!(
                    "cannot read --prompts {} ({e}): pass an existing file",
                    p.display()
                ))
            })?;
            parse(&text, &format!("--prompts {}", p.display()))
        }
    }
}

/// Parse a prompt set; `what` names it in errors.
pub fn parse(text: &str, what: &str) -> Result<Vec<Prompt>, PromptsError> {
    let jsonl = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .is_some_and(|l| l.starts_with('{'));
    let mut out: Vec<Prompt> = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        let at = n + 1;
        let p = if jsonl {
            from_json(line, out.len() + 1)
                .map_err(|e| PromptsError(format!("{what} line {at}: {e}")))?
        } else {
            Prompt {
                id: numbered(out.len() + 1),
                messages: vec![Message::user(line)],
            }
        };
        if out.iter().any(|q| q.id == p.id) {
            return Err(PromptsError(format!(
                "{what} line {at}: id {:?} appears twice; ids name the rows of the artifact",
                p.id
            )));
        }
        out.push(p);
    }
    if out.is_empty() {
        return Err(PromptsError(format!(
            "{what} holds no prompt: give one prompt a line, or JSON lines \
             {{\"id\": \"...\", \"prompt\": \"...\"}}"
        )));
    }
    if out.len() > MAX_PROMPTS {
        return Err(PromptsError(format!(
            "{what} holds {} prompts; at most {MAX_PROMPTS} (each costs three requests)",
            out.len()
        )));
    }
    Ok(out)
}

fn numbered(i: usize) -> String {
    format!("p{i:03}")
}

/// The two shapes a JSON line may take, named in each error that is about the shape.
const SHAPE: &str = "each line must be {\"id\": \"...\", \"prompt\": \"...\"} or {\"id\": \"...\", \"messages\": [...]}";

/// Why one JSON line of a prompt set is refused (its line is named by [`PromptsError`]).
#[derive(Debug, thiserror::Error)]
enum LineError {
    #[error("{0}; {SHAPE}", SHAPE = SHAPE)]
    Json(#[from] serde_json::Error),
    #[error("`id` is empty")]
    EmptyId,
    #[error("`messages` holds no user message")]
    NoUserMessage,
    #[error("give `prompt` or `messages`, not both; {SHAPE}", SHAPE = SHAPE)]
    Both,
    #[error("the prompt is missing or empty; {SHAPE}", SHAPE = SHAPE)]
    Missing,
}

fn from_json(line: &str, index: usize) -> Result<Prompt, LineError> {
    let l: Line = serde_json::from_str(line)?;
    let id = match l.id {
        Some(id) if id.trim().is_empty() => return Err(LineError::EmptyId),
        Some(id) => id,
        None => numbered(index),
    };
    let messages = match (l.prompt, l.messages) {
        (Some(p), None) if !p.trim().is_empty() => vec![Message::user(p)],
        (None, Some(m)) if m.iter().any(|m| m.role == "user") => m,
        (None, Some(_)) => return Err(LineError::NoUserMessage),
        (Some(_), Some(_)) => return Err(LineError::Both),
        _ => return Err(LineError::Missing),
    };
    Ok(Prompt { id, messages })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_set_loads_with_unique_ids() {
        let p = load(None).unwrap();
        assert_eq!(p.len(), 40);
        assert_eq!(p[0].id, "capital-france");
    }

    #[test]
    fn jsonl_prompts_messages_and_plain_lines() {
        let p = parse(
            "{\"id\":\"a\",\"prompt\":\"Hi\"}\n\n{\"messages\":[{\"role\":\"system\",\"content\":\"s\"},{\"role\":\"user\",\"content\":\"u\"}]}\n",
            "f",
        )
        .unwrap();
        assert_eq!(p[0].messages, vec![Message::user("Hi")]);
        assert_eq!(p[1].id, "p002");
        assert_eq!(p[1].messages.len(), 2);
        let plain = parse("What is 2+2?\n\n  Name a colour.  \n", "f").unwrap();
        assert_eq!(plain.len(), 2);
        assert_eq!(plain[1].messages, vec![Message::user("Name a colour.")]);
    }

    #[test]
    fn bad_lines_are_named_with_the_fix() {
        let e = parse(
            "{\"id\":\"a\",\"prompt\":\"x\"}\n{\"id\":\"a\",\"prompt\":\"y\"}",
            "f",
        )
        .unwrap_err()
        .0;
        assert!(e.contains("line 2") && e.contains("twice"), "{e}");
        let e = parse("{\"id\":\"a\"}", "f").unwrap_err().0;
        assert_eq!(
            e,
            format!("f line 1: the prompt is missing or empty; {SHAPE}"),
            "{e}"
        );
        assert_eq!(
            SHAPE,
            "each line must be {\"id\": \"...\", \"prompt\": \"...\"} or {\"id\": \"...\", \"messages\": [...]}"
        );
        let e = parse("{\"prompt\":\"x\",\"extra\":1}", "f").unwrap_err().0;
        assert!(e.contains("unknown field"), "{e}");
        assert!(parse("\n \n", "f").unwrap_err().0.contains("no prompt"));
    }
}
