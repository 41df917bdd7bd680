//! Per-family figures of a suite, as the suites store them in `summary.details.families`
//! (`bakeoff_suites::instrument::FamilyStats`): each family's proportion with its Wilson 95 %
//! interval, its chance floor and its effect against chance, in items and in points. A report
//! shows them beside the suite score, so a family flagged `instrument-failure` (left out of the
//! score) is visible where the score is read.

use bakeoff_artifact::SuiteResult;

use crate::read::{self, noted};

/// One family of one suite (bakeoff-artifact's `FamilyRow`). Unknown or missing fields read as
/// empty: an artifact written by another version still renders.
pub use bakeoff_artifact::FamilyRow;

/// The families of suite `name`, in the order the suite stored them; none when it stores none
/// (or its details do not read: the report's note).
pub fn of(name: &str, suite: &SuiteResult) -> Vec<FamilyRow> {
    noted(read::scored(name, suite))
        .map(|d| d.families)
        .unwrap_or_default()
}

/// A family row as a report shows it.
pub trait FamilyText {
    /// The chance floor as a percentage (`0%` for open answers).
    fn chance_text(&self) -> String;
    /// What else a reader must know: the flag, whether the family counts, how many answers
    /// could not be extracted and how many replies never left their reasoning.
    fn notes(&self) -> String;
}

impl FamilyText for FamilyRow {
    fn chance_text(&self) -> String {
        format!("{:.1}%", self.chance_floor * 100.0)
    }

    fn notes(&self) -> String {
        let mut notes = Vec::new();
        if let Some(f) = self.flag {
            notes.push(f.to_string());
        }
        if !self.counted {
            notes.push("not counted in the suite score".into());
        }
        if !self.extraction_failures.is_empty() {
            notes.push(format!(
                "{} extraction failure(s)",
                self.extraction_failures.len()
            ));
        }
        if self.thinking_artifacts > 0 {
            notes.push(format!("{} thinking artifact(s)", self.thinking_artifacts));
        }
        notes.join("; ")
    }
}

/// Flag codes once each, in first-seen order, with how many times a repeated one was raised
/// (`instrument-failure ×2`): a suite raises a family's flag once per family, and a cell that
/// lists it once per family says nothing more and crowds out the rest.
pub fn distinct_flags<'a>(codes: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut seen: Vec<(&str, usize)> = Vec::new();
    for c in codes {
        match seen.iter_mut().find(|(s, _)| *s == c) {
            Some((_, n)) => *n += 1,
            None => seen.push((c, 1)),
        }
    }
    seen.into_iter()
        .map(|(c, n)| {
            if n > 1 {
                format!("{c} ×{n}")
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn rows_read_from_details_and_notes_say_what_matters() {
        let mut s: SuiteResult = serde_json::from_value(serde_json::json!({
            "status": "complete",
            "summary": { "planned": 2, "finished": 2, "outcomes": {}, "passed": 0, "scored": 2,
                         "flags": [], "details": {} },
            "items": []
        }))
        .unwrap();
        assert!(of("intelligence", &s).is_empty());
        s.summary.details = serde_json::json!({ "families": [
            { "family": "ordering", "items": 36, "chance_floor": 0.261,
              "score": { "successes": 0, "n": 36, "estimate": 0.0, "low": 0.0, "high": 0.096 },
              "versus_chance": "−9 items (−26.1 pts)", "flag": "instrument-failure",
              "counted": false, "extraction_failures": ["a", "b"], "thinking_artifacts": 1 },
            { "family": "arithmetic" },
            "not an object"
        ]});
        assert!(of("refusal", &s).is_empty());
        let rows = of("intelligence", &s);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].chance_text(), "26.1%");
        assert_eq!(
            rows[0].notes(),
            "instrument-failure; not counted in the suite score; 2 extraction failure(s); 1 thinking artifact(s)"
        );
        assert!(rows[1].counted && rows[1].notes().is_empty());
    }
}
