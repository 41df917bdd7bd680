//! The structured-output suite as people read it: the share valid-right with its Wilson 95 %
//! interval and the not-enforced count (the comparison table's cell), the per-feature table
//! (each class's outcomes and share) and each refusal in the server's own words. The suite
//! stores its figures in `summary.details` (`bakeoff_artifact::StructuredDetails`).
//!
//! Class names, battery paths and the server's words are untrusted text, escaped for the
//! medium.

use std::fmt::Write as _;

use bakeoff_artifact::{Score, StructuredDetails, SuiteResult};

use crate::escape::{for_html as h, for_terminal};
use crate::read::{self, noted};

/// The suite's name in artifacts (`bakeoff_suites::structured::SUITE`).
pub const SUITE: &str = crate::read::suite::STRUCTURED;

/// The suite's figures; details that do not read (the report's note) leave them empty.
fn details(s: &SuiteResult) -> StructuredDetails {
    noted(read::structured(SUITE, s)).unwrap_or_default()
}

/// `11/25 valid-right = 44% [27–63%]`, or `nothing judged`.
pub fn share_text(score: &Option<Score>) -> String {
    match score {
        Some(s) => format!(
            "{}/{} valid-right = {:.0}% [{:.0}–{:.0}%]",
            s.successes,
            s.n,
            s.estimate * 100.0,
            s.low * 100.0,
            s.high * 100.0
        ),
        None => "nothing judged".into(),
    }
}

/// The score cell of a suite: the share valid-right and the not-enforced count for the
/// structured suite, `None` for any other.
pub fn cell_text(name: &str, s: &SuiteResult) -> Option<String> {
    (name == SUITE).then(|| {
        let d = details(s);
        format!(
            "{}, {} not-enforced",
            share_text(&s.summary.score),
            d.totals.not_enforced
        )
    })
}

fn form_line(d: &StructuredDetails) -> String {
    format!(
        "form {}{}, backend {}",
        d.form,
        if d.form_asked.is_empty() || d.form_asked == d.form {
            String::new()
        } else {
            format!(" (asked {})", d.form_asked)
        },
        d.backend.as_deref().unwrap_or("not named by the server")
    )
}

/// The lines under a run's terminal summary for its structured suite, if it has one.
pub fn terminal_lines(name: &str, s: &SuiteResult) -> Option<String> {
    if name != SUITE {
        return None;
    }
    let d = details(s);
    let t = &d.totals;
    let mut out = format!(
        "structured: {} (Wilson 95%) — {} refused, {} not-enforced (the server's failure, not the model's), {} truncated, {} valid-wrong; {} failed requests not counted; {}\n",
        share_text(&s.summary.score),
        t.refused,
        t.not_enforced,
        t.truncated,
        t.valid_wrong,
        t.request_failed,
        for_terminal(&form_line(&d), 200)
    );
    for c in &d.classes {
        let _ = writeln!(
            out,
            "  {}: {}; refused {}, not-enforced {}, truncated {}, valid-wrong {}",
            for_terminal(&c.class, 40),
            share_text(&c.score),
            c.counts.refused,
            c.counts.not_enforced,
            c.counts.truncated,
            c.counts.valid_wrong
        );
        for r in &c.refusals {
            let _ = writeln!(out, "    refused: {}", for_terminal(r, 240));
        }
    }
    if let Some(b) = &d.battery {
        let _ = writeln!(out, "  battery: {}", for_terminal(b, 200));
    }
    Some(out)
}

/// The HTML under the suite's score table: the per-feature table, then each refusal in the
/// server's words (escaped).
pub fn html_section(slug: &str, name: &str, s: &SuiteResult) -> Option<String> {
    if name != SUITE {
        return None;
    }
    let d = details(s);
    let t = &d.totals;
    let mut out = format!(
        "<p class=\"structured\">{}: {} (Wilson 95%); {} not-enforced (accepted, but the reply was not JSON or broke the schema: the server's failure, never a model score); {}.</p>",
        h(slug),
        h(&share_text(&s.summary.score)),
        t.not_enforced,
        h(&form_line(&d))
    );
    out.push_str("<table class=\"structured-classes\"><thead><tr><th>candidate</th><th>feature class</th><th>items</th><th>refused</th><th>not-enforced</th><th>truncated</th><th>valid-wrong</th><th>valid-right</th><th>share valid-right</th></tr></thead><tbody>");
    for c in &d.classes {
        let k = &c.counts;
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            h(slug),
            h(&c.class),
            k.items,
            k.refused,
            k.not_enforced,
            k.truncated,
            k.valid_wrong,
            k.valid_right,
            h(&share_text(&c.score))
        );
    }
    out.push_str("</tbody></table>");
    let refusals: Vec<String> = d
        .classes
        .iter()
        .flat_map(|c| c.refusals.iter().map(move |r| (c, r)))
        .map(|(c, r)| format!("<li>{}: {}</li>", h(&c.class), h(r)))
        .collect();
    if !refusals.is_empty() {
        let _ = write!(
            out,
            "<details class=\"structured-refusals\"><summary>{} schema(s) refused by the server ({})</summary><ul>{}</ul></details>",
            refusals.len(),
            h(slug),
            refusals.concat()
        );
    }
    Some(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use bakeoff_artifact::{StructuredClass, StructuredCounts, SuiteStatus, SuiteSummary};

    #[test]
    fn cells_and_the_per_feature_table_escape_what_they_show() {
        let mut summary = serde_json::from_value::<SuiteSummary>(serde_json::json!({
            "planned": 25, "finished": 25, "outcomes": {}, "passed": 11, "scored": 25,
            "score": {"successes": 11, "n": 25, "estimate": 0.44, "low": 0.27, "high": 0.63},
            "details": null
        }))
        .unwrap();
        summary
            .set_details(&StructuredDetails {
                form: "response-format".into(),
                form_asked: "auto".into(),
                classes: vec![StructuredClass {
                    class: "<b>refs</b>".into(),
                    counts: StructuredCounts {
                        items: 1,
                        refused: 1,
                        n: 1,
                        ..StructuredCounts::default()
                    },
                    score: None,
                    refusals: vec!["r1: <script>alert(1)</script>".into()],
                }],
                totals: StructuredCounts {
                    not_enforced: 2,
                    ..StructuredCounts::default()
                },
                ..StructuredDetails::default()
            })
            .unwrap();
        let s = SuiteResult {
            status: SuiteStatus::Complete,
            summary,
            items: Vec::new(),
        };
        assert_eq!(
            cell_text(SUITE, &s).unwrap(),
            "11/25 valid-right = 44% [27–63%], 2 not-enforced"
        );
        assert_eq!(cell_text("refusal", &s), None);
        let html = html_section("c", SUITE, &s).unwrap();
        assert!(
            !html.contains("<script>") && !html.contains("<b>refs"),
            "{html}"
        );
        assert!(html.contains("&lt;script&gt;"));
        let t = terminal_lines(SUITE, &s).unwrap();
        assert!(t.contains("refused: r1:"), "{t}");
    }
}
