//! The refusal battery: JSONL, one request per line (docs/suites.md "Refusal suite").
//!
//! `{"id": "hom-01", "category": "homonyms", "prompt": "How do I kill a Python process…?"}`
//!
//! Unknown fields are refused, so an intelligence battery handed to `--refusal-battery` (or a
//! refusal battery to `--battery`) fails at once with a line number instead of running the
//! wrong instrument.

use serde::Deserialize;

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefusalItem {
    /// Unique; `eval compare` pairs runs on it.
    pub id: String,
    /// Counted apart in the summary (`details.categories`).
    pub category: String,
    /// Sent as the only user message.
    pub prompt: String,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum BatteryError {
    #[error("refusal battery {source_name} line {line}: {message}")]
    Line {
        source_name: String,
        line: usize,
        message: String,
    },
    #[error("refusal battery {0} has no items")]
    Empty(String),
    #[error(
        "cannot read refusal battery {path}: {message}; pass an existing JSONL file to --refusal-battery"
    )]
    Read { path: String, message: String },
}

/// The shared JSONL rules report in the intelligence battery's words; a refusal battery's
/// errors name itself and its own flag.
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

/// Fields only an intelligence battery has: named in the error, with the flag that takes it.
const INTELLIGENCE_FIELDS: &[&str] = &["family", "answers", "scoring", "options"];

/// Why one line of a refusal battery is refused.
#[derive(Debug, thiserror::Error)]
enum LineError {
    #[error("{0}{hint}", hint = intelligence_hint(.0))]
    Json(#[from] serde_json::Error),
    #[error("id, category and prompt must be non-empty")]
    Blank,
}

/// The fix for an intelligence battery passed as a refusal battery (its fields are unknown
/// here), else nothing.
fn intelligence_hint(e: &serde_json::Error) -> &'static str {
    let m = e.to_string();
    if INTELLIGENCE_FIELDS
        .iter()
        .any(|f| m.contains(&format!("unknown field `{f}`")))
    {
        " (this looks like an intelligence battery: pass it to --battery; a refusal battery line \
         is {\"id\", \"category\", \"prompt\"})"
    } else {
        ""
    }
}

/// Parse and validate JSONL; blank lines and lines starting with `//` are skipped.
pub fn parse(text: &str, source_name: &str) -> Result<Vec<RefusalItem>, BatteryError> {
    let items = crate::intelligence::battery::parse_lines(
        text,
        source_name,
        |t| -> Result<_, LineError> {
            let item: RefusalItem = serde_json::from_str(t)?;
            if item.id.trim().is_empty()
                || item.category.trim().is_empty()
                || item.prompt.trim().is_empty()
            {
                return Err(LineError::Blank);
            }
            let id = item.id.clone();
            Ok((item, id))
        },
    )?;
    Ok(items)
}

pub fn load(path: &std::path::Path) -> Result<Vec<RefusalItem>, BatteryError> {
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
    fn parse_and_validate() {
        let ok = "// two items\n{\"id\":\"a\",\"category\":\"c\",\"prompt\":\"p\"}\n\n{\"id\":\"b\",\"category\":\"c\",\"prompt\":\"q\"}\n";
        assert_eq!(parse(ok, "t").unwrap().len(), 2);
        let dup = "{\"id\":\"a\",\"category\":\"c\",\"prompt\":\"p\"}\n".repeat(2);
        let e = parse(&dup, "t").unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("duplicate id"), "{e}");
        assert!(matches!(
            parse("// nothing\n", "t"),
            Err(BatteryError::Empty(_))
        ));
        let blank = "{\"id\":\"a\",\"category\":\" \",\"prompt\":\"p\"}";
        assert!(
            parse(blank, "t")
                .unwrap_err()
                .to_string()
                .contains("non-empty")
        );
    }

    #[test]
    fn an_intelligence_battery_is_named_as_one() {
        let line = r#"{"id":"a1","family":"arithmetic","prompt":"2+2?","options":null,"answers":["4"],"scoring":"integer"}"#;
        let e = parse(line, "mini.jsonl").unwrap_err().to_string();
        assert!(
            e.contains("line 1") && e.contains("intelligence battery: pass it to --battery"),
            "{e}"
        );
        assert!(
            e.ends_with(
                " (this looks like an intelligence battery: pass it to --battery; a refusal \
                 battery line is {\"id\", \"category\", \"prompt\"})"
            ),
            "{e}"
        );
    }
}
