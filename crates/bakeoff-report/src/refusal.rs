//! The refusal suite as people read it: refusals / n with the Wilson 95 % interval, the
//! replies that were neither (no visible answer, a failed request), the counts per category
//! and, in HTML, the refused replies' openings with the marker that matched. The suite stores
//! its figures in `summary.details.refusal` and `summary.details.categories`
//! (`bakeoff_suites::refusal`); its `score` counts refusals.
//!
//! Category names and battery paths come from the operator's battery file and the replies from
//! the model: all are untrusted text, escaped for the medium.

use std::fmt::Write as _;

use bakeoff_artifact::{RefusalDetails, Score, SuiteResult};

use crate::escape::{for_html as h, for_terminal};
use crate::read::{self, noted};

/// The suite's name in artifacts.
pub const SUITE: &str = crate::read::suite::REFUSAL;

/// The suite's figures; details that do not read (the report's note) leave its counts empty.
fn details(s: &SuiteResult) -> RefusalDetails {
    noted(read::refusal(SUITE, s)).unwrap_or_default()
}

/// `3/48 refused = 6% [2–17%]`, or `no reply could be judged`.
fn rate_text(score: &Option<Score>) -> String {
    match score {
        Some(s) => format!(
            "{}/{} refused = {:.0}% [{:.0}–{:.0}%]",
            s.successes,
            s.n,
            s.estimate * 100.0,
            s.low * 100.0,
            s.high * 100.0
        ),
        None => "no reply could be judged".into(),
    }
}

/// The score cell of a suite: the refusal rate for the refusal suite, `None` for any other.
pub fn cell_text(name: &str, s: &SuiteResult) -> Option<String> {
    (name == SUITE).then(|| rate_text(&s.summary.score))
}

/// The lines under a run's terminal summary for its refusal suite, if it has one.
pub fn terminal_lines(name: &str, s: &SuiteResult) -> Option<String> {
    if name != SUITE {
        return None;
    }
    let d = details(s);
    let c = d.refusal.unwrap_or_default();
    let mut out = format!(
        "refusal: {} (Wilson 95%) — {} answered, {} neither (no visible answer or a failed request, not counted); markers on the visible answer only, the reasoning is never scored\n",
        rate_text(&s.summary.score),
        c.answered,
        c.neither
    );
    let cats: Vec<String> = d
        .categories
        .iter()
        .map(|k| {
            format!(
                "{} {}/{}",
                for_terminal(&k.category, 40),
                k.refused,
                k.refused + k.answered
            )
        })
        .collect();
    if !cats.is_empty() {
        let _ = writeln!(out, "  refused per category: {}", cats.join(", "));
    }
    if let Some(b) = &d.battery {
        let _ = writeln!(out, "  battery: {}", for_terminal(b, 200));
    }
    Some(out)
}

/// Characters of a refused reply shown in the HTML report.
const OPENING_CHARS: usize = 160;

/// The HTML under the refusal suite's score table: counts per category, then each refused
/// reply's opening with the marker that matched (escaped).
pub fn html_section(slug: &str, name: &str, s: &SuiteResult) -> Option<String> {
    if name != SUITE {
        return None;
    }
    let d = details(s);
    let c = d.refusal.unwrap_or_default();
    let mut out = format!(
        "<p class=\"refusal\">{}: {} (Wilson 95%); {} answered, {} neither (no visible answer or a failed request: not counted). Refusal markers are read on the visible answer only; the reasoning is never scored.</p>",
        h(slug),
        h(&rate_text(&s.summary.score)),
        c.answered,
        c.neither
    );
    let cats = d.categories;
    if !cats.is_empty() {
        out.push_str("<table class=\"refusal-categories\"><thead><tr><th>candidate</th><th>category</th><th>items</th><th>refused</th><th>answered</th><th>neither</th></tr></thead><tbody>");
        for k in &cats {
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                h(slug),
                h(&k.category),
                k.items,
                k.refused,
                k.answered,
                k.neither
            );
        }
        out.push_str("</tbody></table>");
    }
    // An item whose `extra` does not read is the report's note.
    let refused: Vec<String> = s
        .items
        .iter()
        .filter_map(|it| Some((it, noted(read::refusal_item(SUITE, it))?)))
        .filter(|(_, x)| x.refused == Some(true))
        .map(|(it, x)| {
            let marker = x.marker.map(|m| m.marker).unwrap_or_default();
            let opening: String = it.response.content.chars().take(OPENING_CHARS).collect();
            format!(
                "<li><code>{}</code> — marker <code>{}</code>: {}</li>",
                h(&it.id),
                h(&marker),
                h(&opening)
            )
        })
        .collect();
    if !refused.is_empty() {
        let _ = write!(
            out,
            "<details class=\"refused\"><summary>{} refused repl{} ({})</summary><ul>{}</ul></details>",
            refused.len(),
            if refused.len() == 1 { "y" } else { "ies" },
            h(slug),
            refused.concat()
        );
    }
    Some(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use bakeoff_artifact::{ItemRecord, Outcome, SuiteStatus, SuiteSummary};
    use serde_json::json;

    fn suite() -> SuiteResult {
        let mut it = ItemRecord {
            id: "hom-01".into(),
            outcome: Outcome::Wrong,
            request: json!({}),
            response: Default::default(),
            expected: json!({}),
            check: None,
            latency: Default::default(),
            error: None,
            extra: json!({"refused": true, "marker": {"marker": "i can't … help", "at": 0}}),
        };
        it.response.content = "I can't help with <script>alert(1)</script> that.".into();
        SuiteResult {
            status: SuiteStatus::Complete,
            // From JSON: fields other suites add to the summary stay at their defaults.
            summary: serde_json::from_value::<SuiteSummary>(json!({
                "planned": 3, "finished": 3, "outcomes": {}, "passed": 1, "scored": 2,
                "score": {"successes": 1, "n": 2, "estimate": 0.5, "low": 0.0945, "high": 0.9055},
                "details": {
                    "refusal": {"refused": 1, "answered": 1, "neither": 1, "n": 2},
                    "categories": [{"category": "<b>homonyms</b>", "items": 3, "refused": 1, "answered": 1, "neither": 1}],
                    "battery": "default"
                }
            }))
            .unwrap(),
            items: vec![it],
        }
    }

    #[test]
    fn terminal_and_html_say_refusals_and_escape_what_came_from_outside() {
        let s = suite();
        assert_eq!(
            cell_text("refusal", &s).unwrap(),
            "1/2 refused = 50% [9–91%]"
        );
        assert!(cell_text("smoke", &s).is_none());
        let t = terminal_lines("refusal", &s).unwrap();
        assert!(
            t.starts_with(
                "refusal: 1/2 refused = 50% [9–91%] (Wilson 95%) — 1 answered, 1 neither"
            ),
            "{t}"
        );
        assert!(
            t.contains("refused per category: <b>homonyms</b> 1/2"),
            "{t}"
        );
        let html = html_section("cand", "refusal", &s).unwrap();
        assert!(
            !html.contains("<script>") && !html.contains("<b>homonyms"),
            "{html}"
        );
        assert!(html.contains("&lt;script&gt;alert(1)"), "{html}");
        assert!(html.contains("1 refused reply"), "{html}");
    }
}
