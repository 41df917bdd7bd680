//! Answer extraction (docs/suites.md "Answer extraction rules"), applied to `content` only —
//! an answer is never pulled out of the reasoning:
//!
//! 1. `<think>…</think>` blocks that leaked into content are removed (never read).
//! 2. The answer region is the text after the last `Answer:` / `Final answer:` label
//!    (case-insensitive) when there is one; otherwise the first non-empty line.
//! 3. By scoring rule, on that region:
//!    - `choice`: a leading option letter in option-letter form — `(B)`, `B)`, `B.`, `B:`,
//!      `B -`, a bold `**B**`, or the letter alone — or the region equal to one option's text
//!      (case-insensitive). A letter followed by a word ("A cat…", "I think…") is an article
//!      or a pronoun, not an option;
//!    - `integer` / `number`: the last number in the region (thousands commas removed);
//!    - `date`: the last `YYYY-MM-DD` (like numbers: a reply that restates the start date
//!      first ends with its answer);
//!    - `exact`: the region, case-insensitive, whitespace removed, surrounding punctuation and
//!      brackets dropped.
//!
//! Nothing found is an *extraction failure*, counted apart: a family below chance lists them.

use std::sync::OnceLock;

use regex::Regex;

pub use super::battery::is_iso_date;
use super::battery::{BatteryItem, LETTERS, Scoring};

#[derive(Debug, Clone, PartialEq)]
pub enum Extracted {
    Found(String),
    /// Why nothing could be extracted.
    Failed(&'static str),
}

fn re(cell: &'static OnceLock<Option<Regex>>, pat: &str) -> Option<&'static Regex> {
    cell.get_or_init(|| Regex::new(pat).ok()).as_ref()
}

fn think_re() -> Option<&'static Regex> {
    static R: OnceLock<Option<Regex>> = OnceLock::new();
    re(&R, r"(?s)<think>.*?(</think>|$)")
}
fn label_re() -> Option<&'static Regex> {
    static R: OnceLock<Option<Regex>> = OnceLock::new();
    re(&R, r"(?i)(?:final answer|answer)\s*[:：]\s*")
}
fn number_re() -> Option<&'static Regex> {
    static R: OnceLock<Option<Regex>> = OnceLock::new();
    re(&R, r"-?\d[\d,]*(?:\.\d+)?")
}
fn date_re() -> Option<&'static Regex> {
    static R: OnceLock<Option<Regex>> = OnceLock::new();
    re(&R, r"\b\d{4}-\d{2}-\d{2}\b")
}
fn letter_re() -> Option<&'static Regex> {
    static R: OnceLock<Option<Regex>> = OnceLock::new();
    // Option-letter forms only: "(B)", "B)", "B.", "B:", "B -", "**B**" (emphasis closed),
    // or the letter alone. "A cat" and "I think" are words, not options.
    re(
        &R,
        r"^[\s*_`]*(?:\(([A-Ja-j])\)|([A-Ja-j])(?:[.):]|\s+[-–—]\s|[*_`]+(?:\s|$)|\s*$))",
    )
}

/// The answer region of a reply (rules 1 and 2).
pub fn region(content: &str) -> String {
    let cleaned = match think_re() {
        Some(r) => r.replace_all(content, "").into_owned(),
        None => content.to_string(),
    };
    if let Some(m) = label_re().and_then(|r| r.find_iter(&cleaned).last()) {
        let rest = &cleaned[m.end()..];
        return rest.lines().next().unwrap_or("").trim().to_string();
    }
    cleaned
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .to_string()
}

fn exact_norm(s: &str) -> String {
    s.trim_matches(|c: char| !c.is_alphanumeric())
        .chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Extract the answer of `item` from `content` (rule 3).
pub fn extract(item: &BatteryItem, content: &str) -> Extracted {
    let reg = region(content);
    if reg.is_empty() {
        return Extracted::Failed("no answer text");
    }
    match item.scoring {
        Scoring::Choice => {
            let k = item.options.as_ref().map_or(0, Vec::len);
            if let Some(c) = letter_re().and_then(|r| r.captures(&reg))
                && let Some(m) = c.get(1).or_else(|| c.get(2))
            {
                let l = m.as_str().to_ascii_uppercase();
                if LETTERS[..k].contains(&l.as_bytes()[0]) {
                    return Extracted::Found(l);
                }
            }
            let norm = exact_norm(&reg);
            if let Some(i) = item
                .options
                .as_ref()
                .and_then(|opts| opts.iter().position(|o| exact_norm(o) == norm))
            {
                return Extracted::Found((LETTERS[i] as char).to_string());
            }
            Extracted::Failed("no option letter")
        }
        Scoring::Integer | Scoring::Number => {
            match number_re().and_then(|r| r.find_iter(&reg).last()) {
                Some(m) => Extracted::Found(m.as_str().replace(',', "")),
                None => Extracted::Failed("no number"),
            }
        }
        Scoring::Date => match date_re().and_then(|r| r.find_iter(&reg).last()) {
            Some(m) => Extracted::Found(m.as_str().to_string()),
            None => Extracted::Failed("no YYYY-MM-DD date"),
        },
        Scoring::Exact => Extracted::Found(exact_norm(&reg)),
    }
}

/// Does the extracted answer match an accepted one?
pub fn matches(item: &BatteryItem, got: &str) -> bool {
    item.answers.iter().any(|a| match item.scoring {
        Scoring::Choice => a.eq_ignore_ascii_case(got),
        Scoring::Integer => got
            .parse::<i64>()
            .ok()
            .is_some_and(|g| a.parse::<i64>().ok() == Some(g)),
        Scoring::Number => match (got.parse::<f64>(), a.parse::<f64>()) {
            (Ok(g), Ok(a)) => (g - a).abs() <= 1e-6 * a.abs().max(1.0),
            _ => false,
        },
        Scoring::Date => a == got,
        Scoring::Exact => exact_norm(a) == got,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn item(scoring: Scoring, options: Option<Vec<&str>>, answers: &[&str]) -> BatteryItem {
        BatteryItem {
            id: "x".into(),
            family: "f".into(),
            prompt: "p".into(),
            options: options.map(|o| o.into_iter().map(String::from).collect()),
            answers: answers.iter().map(|s| s.to_string()).collect(),
            scoring,
        }
    }

    #[test]
    fn regions() {
        assert_eq!(region("\n  42\nmore"), "42");
        assert_eq!(region("Let me see. 3+4=7.\nAnswer: 7"), "7");
        assert_eq!(region("answer: 5\nFinal Answer: 6"), "6");
        assert_eq!(region("<think>the answer is 9</think>\n12"), "12");
        assert_eq!(region("<think>unterminated 9"), "");
    }

    #[test]
    fn choice() {
        let it = item(
            Scoring::Choice,
            Some(vec!["Ana", "Ben", "Cy", "Dee"]),
            &["B"],
        );
        for s in [
            "B",
            "b",
            "B)",
            "(B)",
            "B. Ben",
            "**B**",
            "Answer: B",
            "ben",
            "Ben.",
        ] {
            assert_eq!(extract(&it, s), Extracted::Found("B".into()), "{s}");
        }
        assert_eq!(extract(&it, "E"), Extracted::Failed("no option letter"));
        assert_eq!(
            extract(&it, "<|im_end|>"),
            Extracted::Failed("no option letter")
        );
        assert_eq!(
            extract(&it, "Because"),
            Extracted::Failed("no option letter")
        );
        // A leading article or pronoun is not an option letter.
        for s in ["A cat is on the mat", "I think it is Ben", "A big one"] {
            assert_ne!(extract(&it, s), Extracted::Found("A".into()), "{s}");
        }
        assert_eq!(
            extract(&it, "A cat is on the mat"),
            Extracted::Failed("no option letter")
        );
        for s in ["D - Dee", "**D** Dee", "(D) Dee", "D: Dee", "d", "`D`"] {
            assert_eq!(extract(&it, s), Extracted::Found("D".into()), "{s}");
        }
        assert!(matches(&it, "B") && !matches(&it, "A"));
        let pair = item(
            Scoring::Choice,
            Some(vec!["1", "2", "3", "4", "5"]),
            &["B", "D"],
        );
        assert!(matches(&pair, "B") && matches(&pair, "D") && !matches(&pair, "C"));
    }

    #[test]
    fn a_battery_date_is_exactly_what_the_date_pattern_matches_whole() {
        for s in [
            "2024-02-29",
            "1999-12-31",
            "2024-2-29",
            "2024/02/29",
            "x2024-02-29",
            "2024-02-290",
            "２０２４-02-29",
            "2024-02-2a",
            "",
        ] {
            let whole = s.len() == 10 && date_re().is_some_and(|r| r.is_match(s));
            assert_eq!(is_iso_date(s), whole, "{s:?}");
        }
    }

    #[test]
    fn numbers_dates_exact() {
        let it = item(Scoring::Integer, None, &["1200"]);
        assert_eq!(extract(&it, "1,200"), Extracted::Found("1200".into()));
        assert_eq!(
            extract(&it, "12 x 100 = 1200 cm"),
            Extracted::Found("1200".into())
        );
        assert_eq!(
            extract(&it, "twelve hundred"),
            Extracted::Failed("no number")
        );
        assert!(matches(&it, "1200") && !matches(&it, "1200.5"));
        let n = item(Scoring::Number, None, &["2.5"]);
        assert!(matches(&n, "2.50"));
        let d = item(Scoring::Date, None, &["2024-03-01"]);
        assert_eq!(
            extract(&d, "It is 2024-03-01."),
            Extracted::Found("2024-03-01".into())
        );
        // The last date, like the last number: the start date restated first is not the answer.
        assert_eq!(
            extract(&d, "2024-02-20 plus 10 days is 2024-03-01"),
            Extracted::Found("2024-03-01".into())
        );
        assert_eq!(
            extract(&d, "March 1st"),
            Extracted::Failed("no YYYY-MM-DD date")
        );
        let e = item(Scoring::Exact, None, &["(3, -2)"]);
        assert!(matches(
            &e,
            match extract(&e, "(3,-2).") {
                Extracted::Found(s) => Box::leak(s.into_boxed_str()),
                _ => "",
            }
        ));
    }
}
