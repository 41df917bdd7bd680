//! The structured-output battery: JSONL, one schema and prompt a line (docs/suites.md
//! "Structured output").
//!
//! `{"id": "types-person", "class": "types-required", "prompt": "…", "schema": {…},
//! "answer": {…}, "max_tokens": 200}`
//!
//! Every schema is compiled by the validator as the battery loads, so a schema the validator
//! cannot compile is refused with its line before anything is sent.

use serde::Deserialize;
use serde_json::Value;

/// The output budget of an item that names none.
pub const DEFAULT_MAX_TOKENS: u32 = 200;

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StructuredItem {
    /// Unique; `eval compare` pairs runs on it.
    pub id: String,
    /// The feature class the item is counted under (`details.classes`).
    pub class: String,
    /// Sent as the only user message.
    pub prompt: String,
    /// The JSON Schema sent with the request and validated against.
    pub schema: Value,
    /// The known right answer: every key it has must be in the reply with this value (strings
    /// compared trimmed and case-insensitively, numbers numerically, arrays element by
    /// element); keys it leaves out are the schema's business only.
    pub answer: Value,
    #[serde(default)]
    pub max_tokens: Option<u32>,
}

impl StructuredItem {
    pub fn max_tokens(&self) -> u32 {
        self.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)
    }
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum BatteryError {
    #[error("structured battery {source_name} line {line}: {message}")]
    Line {
        source_name: String,
        line: usize,
        message: String,
    },
    #[error(
        "structured battery {0} has no items; give it at least one line \
         {{\"id\", \"class\", \"prompt\", \"schema\", \"answer\"}}"
    )]
    Empty(String),
    #[error(
        "cannot read structured battery {path}: {message}; pass an existing JSONL file to \
         --structured-battery"
    )]
    Read { path: String, message: String },
}

impl From<crate::intelligence::battery::BatteryError> for BatteryError {
    fn from(e: crate::intelligence::battery::BatteryError) -> Self {
        use crate::intelligence::battery::BatteryError as Shared;
        match e {
            Shared::Line {
                source_name,
                line,
                message,
            } => Self::Line {
                source_name,
                line,
                message,
            },
            Shared::Empty(s) => Self::Empty(s),
            Shared::Read { path, message } => Self::Read { path, message },
        }
    }
}

/// Why one line of a structured battery is refused.
#[derive(Debug, thiserror::Error)]
enum LineError {
    #[error(
        "{0}; a line is {{\"id\", \"class\", \"prompt\", \"schema\", \"answer\"[, \"max_tokens\"]}}"
    )]
    Json(#[from] serde_json::Error),
    #[error("id, class and prompt must be non-empty")]
    Blank,
    #[error("schema must be a JSON object, got {0}")]
    NotObject(&'static str),
    #[error("the validator cannot compile the schema: {0}; fix the schema or leave the item out")]
    Compile(String),
    #[error("max_tokens must be 1 to 32768, got {0}")]
    MaxTokens(u32),
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The validator every item is judged by: formats (`date`, `email`, `uuid`, …) asserted, not
/// only annotated.
pub fn validator(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .map_err(|e| e.to_string())
}

/// Parse and validate JSONL; blank lines and lines starting with `//` are skipped.
pub fn parse(text: &str, source_name: &str) -> Result<Vec<StructuredItem>, BatteryError> {
    let items = crate::intelligence::battery::parse_lines(
        text,
        source_name,
        |t| -> Result<_, LineError> {
            let item: StructuredItem = serde_json::from_str(t)?;
            if item.id.trim().is_empty()
                || item.class.trim().is_empty()
                || item.prompt.trim().is_empty()
            {
                return Err(LineError::Blank);
            }
            if !item.schema.is_object() {
                return Err(LineError::NotObject(kind(&item.schema)));
            }
            if let Some(n) = item.max_tokens
                && !(1..=32768).contains(&n)
            {
                return Err(LineError::MaxTokens(n));
            }
            validator(&item.schema).map_err(LineError::Compile)?;
            let id = item.id.clone();
            Ok((item, id))
        },
    )?;
    Ok(items)
}

pub fn load(path: &std::path::Path) -> Result<Vec<StructuredItem>, BatteryError> {
    parse(
        &crate::intelligence::battery::read(path)?,
        &path.display().to_string(),
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_refuse() {
        let ok = r#"{"id":"a","class":"c","prompt":"p","schema":{"type":"object"},"answer":{}}"#;
        assert_eq!(parse(ok, "t").unwrap().len(), 1);
        let e = parse("// none\n", "t").unwrap_err().to_string();
        assert!(
            e.contains("has no items") && e.contains("\"schema\""),
            "{e}"
        );
        let bad = r#"{"id":"a","class":"c","prompt":"p","schema":{"type":"object","pattern":"("},"answer":{}}"#;
        let e = parse(bad, "t").unwrap_err().to_string();
        assert!(e.contains("line 1") && e.contains("cannot compile"), "{e}");
        assert!(!e.contains('\n'), "{e}");
        let not_json = "{\"id\":";
        let e = parse(not_json, "t").unwrap_err().to_string();
        assert!(e.contains("line 1") && e.contains("a line is"), "{e}");
        let arr = r#"{"id":"a","class":"c","prompt":"p","schema":[],"answer":{}}"#;
        assert!(
            parse(arr, "t")
                .unwrap_err()
                .to_string()
                .contains("an array")
        );
    }
}
