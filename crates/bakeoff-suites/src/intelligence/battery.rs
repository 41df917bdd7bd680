//! The battery format: JSONL, one item per line (docs/suites.md "Battery format").
//!
//! `{"id": …, "family": …, "prompt": …, "options": [..] | null, "answers": [..], "scoring": …}`
//!
//! - `options`: for `choice` items, the option texts, shown as `A) …`, `B) …` after the prompt;
//!   `answers` are then letters, and every accepted letter counts (a contradiction item
//!   accepts either statement of the contradicting pair).
//! - `scoring`: `choice`, `integer`, `number`, `date` (YYYY-MM-DD) or `exact`.

use std::collections::BTreeSet;
use std::num::NonZeroU32;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scoring {
    Choice,
    Integer,
    Number,
    Date,
    Exact,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatteryItem {
    pub id: String,
    pub family: String,
    pub prompt: String,
    pub options: Option<Vec<String>>,
    pub answers: Vec<String>,
    pub scoring: Scoring,
}

pub const LETTERS: &[u8] = b"ABCDEFGHIJ";

/// A `date` answer's form: exactly `YYYY-MM-DD`, ASCII digits. (The extractor finds the last
/// such date in a reply; this is the whole answer, so the battery's check needs no pattern.)
pub fn is_iso_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            _ => c.is_ascii_digit(),
        })
}

impl BatteryItem {
    /// The prompt as sent: options, when there are any, listed after it.
    pub fn rendered_prompt(&self) -> String {
        match &self.options {
            Some(opts) if !opts.is_empty() => {
                let mut s = self.prompt.clone();
                s.push('\n');
                for (i, o) in opts.iter().enumerate() {
                    s.push_str(&format!("\n{}) {o}", LETTERS[i] as char));
                }
                s
            }
            _ => self.prompt.clone(),
        }
    }

    pub fn option_count(&self) -> Option<NonZeroU32> {
        self.options
            .as_ref()
            .and_then(|o| NonZeroU32::new(o.len() as u32))
    }

    /// Probability that a uniform guess passes: accepted options over options (0 for open).
    pub fn chance(&self) -> f64 {
        match self.option_count() {
            Some(k) => {
                let accepted: BTreeSet<&str> = self.answers.iter().map(String::as_str).collect();
                bakeoff_stats::chance_floor(Some(k)) * accepted.len() as f64
            }
            None => 0.0,
        }
    }

    fn validate(&self) -> Result<(), ItemError> {
        if self.id.trim().is_empty()
            || self.family.trim().is_empty()
            || self.prompt.trim().is_empty()
        {
            return Err(ItemError::Blank);
        }
        let id = || self.id.clone();
        if self.answers.is_empty() {
            return Err(ItemError::NoAnswer(id()));
        }
        match (self.scoring, &self.options) {
            (Scoring::Choice, Some(o)) if o.len() >= 2 && o.len() <= LETTERS.len() => {
                for a in &self.answers {
                    let ok = a.len() == 1 && LETTERS[..o.len()].contains(&a.as_bytes()[0]);
                    if !ok {
                        return Err(ItemError::NotALetter {
                            id: id(),
                            answer: a.clone(),
                            last: LETTERS[o.len() - 1] as char,
                        });
                    }
                }
                Ok(())
            }
            (Scoring::Choice, _) => Err(ItemError::ChoiceOptions(id())),
            (_, Some(o)) if !o.is_empty() => Err(ItemError::OptionsNotChoice(id())),
            (Scoring::Integer, _) => self.all_parse(|a| a.parse::<i64>().is_ok(), "an integer"),
            (Scoring::Number, _) => {
                self.all_parse(|a| a.parse::<f64>().is_ok_and(f64::is_finite), "a number")
            }
            (Scoring::Date, _) => self.all_parse(is_iso_date, "a YYYY-MM-DD date"),
            (Scoring::Exact, _) => Ok(()),
        }
    }

    fn all_parse(&self, ok: impl Fn(&str) -> bool, what: &'static str) -> Result<(), ItemError> {
        match self.answers.iter().find(|a| !ok(a)) {
            Some(a) => Err(ItemError::Unparsable {
                id: self.id.clone(),
                answer: a.clone(),
                what,
            }),
            None => Ok(()),
        }
    }
}

/// Why one battery item is refused (its line is named by [`BatteryError::Line`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ItemError {
    #[error("id, family and prompt must be non-empty")]
    Blank,
    #[error("item {0:?} has no accepted answer")]
    NoAnswer(String),
    #[error("item {id:?}: answer {answer:?} is not one of the option letters A–{last}")]
    NotALetter {
        id: String,
        answer: String,
        last: char,
    },
    #[error("item {0:?}: choice scoring needs 2–10 options")]
    ChoiceOptions(String),
    #[error("item {0:?}: options are only for choice scoring")]
    OptionsNotChoice(String),
    #[error("item {id:?}: answer {answer:?} is not {what}")]
    Unparsable {
        id: String,
        answer: String,
        what: &'static str,
    },
}

/// Why one line of an intelligence battery is refused.
#[derive(Debug, thiserror::Error)]
enum LineError {
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error(transparent)]
    Item(#[from] ItemError),
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum BatteryError {
    #[error("battery {source_name} line {line}: {message}")]
    Line {
        source_name: String,
        line: usize,
        message: String,
    },
    #[error("battery {0} has no items")]
    Empty(String),
    #[error("cannot read battery {path}: {message}; pass an existing JSONL file to --battery")]
    Read { path: String, message: String },
}

/// Parse and validate JSONL; blank lines and lines starting with `//` are skipped. Ids must be
/// unique: the paired comparison keys on them.
pub fn parse(text: &str, source_name: &str) -> Result<Vec<BatteryItem>, BatteryError> {
    parse_lines(text, source_name, |t| -> Result<_, LineError> {
        let item: BatteryItem = serde_json::from_str(t)?;
        item.validate()?;
        let id = item.id.clone();
        Ok((item, id))
    })
}

/// The JSONL rules every battery shares: blank lines and `//` lines skipped, each other line
/// parsed by `one` (the item and its id, or why not), ids unique, at least one item; errors
/// name the battery and the line, followed by `one`'s reason.
pub(crate) fn parse_lines<T, E: std::fmt::Display>(
    text: &str,
    source_name: &str,
    mut one: impl FnMut(&str) -> Result<(T, String), E>,
) -> Result<Vec<T>, BatteryError> {
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with("//") {
            continue;
        }
        let err = |message: String| BatteryError::Line {
            source_name: source_name.to_string(),
            line: i + 1,
            message,
        };
        let (item, id) = one(t).map_err(|e| err(e.to_string()))?;
        if !seen.insert(id.clone()) {
            return Err(err(format!("duplicate id {id:?}")));
        }
        out.push(item);
    }
    if out.is_empty() {
        return Err(BatteryError::Empty(source_name.to_string()));
    }
    Ok(out)
}

/// A battery file's text, or the error naming it.
pub(crate) fn read(path: &std::path::Path) -> Result<String, BatteryError> {
    std::fs::read_to_string(path).map_err(|e| BatteryError::Read {
        path: path.display().to_string(),
        message: e.to_string(),
    })
}

pub fn load(path: &std::path::Path) -> Result<Vec<BatteryItem>, BatteryError> {
    parse(&read(path)?, &path.display().to_string())
}

/// One line of JSONL, fields in format order.
pub fn to_line(item: &BatteryItem) -> String {
    serde_json::to_string(item).unwrap_or_default()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_validate() {
        let ok = r#"{"id":"c1","family":"contradiction","prompt":"Which?","options":["a","b","c","d","e"],"answers":["B","D"],"scoring":"choice"}
// a comment

{"id":"a1","family":"arithmetic","prompt":"2+2?","options":null,"answers":["4"],"scoring":"integer"}"#;
        let items = parse(ok, "t").unwrap();
        assert_eq!(items.len(), 2);
        assert!(
            (items[0].chance() - 0.4).abs() < 1e-12,
            "either statement of the pair: 2/5"
        );
        assert_eq!(items[1].chance(), 0.0);
        assert!(items[0].rendered_prompt().ends_with("\nD) d\nE) e"));

        let bad = r#"{"id":"c1","family":"f","prompt":"p","options":["a","b"],"answers":["C"],"scoring":"choice"}"#;
        let e = parse(bad, "t").unwrap_err().to_string();
        assert_eq!(
            e,
            "battery t line 1: item \"c1\": answer \"C\" is not one of the option letters A–B"
        );
        let dup = "{\"id\":\"x\",\"family\":\"f\",\"prompt\":\"p\",\"options\":null,\"answers\":[\"1\"],\"scoring\":\"integer\"}\n".repeat(2);
        assert!(
            parse(&dup, "t")
                .unwrap_err()
                .to_string()
                .contains("duplicate id")
        );
        assert!(matches!(parse("", "t"), Err(BatteryError::Empty(_))));
        assert!(
            parse("{not json", "t")
                .unwrap_err()
                .to_string()
                .contains("line 1")
        );
    }
}
