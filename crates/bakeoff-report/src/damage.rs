//! The `damage` suite (`bakeoff eval damage`) in every report: its comparison cell, its lines
//! under a run's terminal summary, and its HTML section with the per-prompt table. Tokens are
//! model output: escaped for the terminal and for HTML like any reply.

use std::fmt::Write as _;

use bakeoff_artifact::{DamageExtra, DamageSummary, SuiteResult, TokenProb};

use crate::damage_along::nats;
use crate::escape::{for_html as h, for_terminal};
use crate::read::{self, noted};

/// The suite's name in artifacts.
pub const SUITE: &str = crate::read::suite::DAMAGE;

fn summary_of<'a>(name: &str, s: &'a SuiteResult) -> Option<&'a DamageSummary> {
    if name != SUITE {
        return None;
    }
    s.summary.damage.as_ref()
}

/// The comparison cell: `KL 0.1234 [0.0950–0.1530] nats; top-1 ≠ 30%`, or why it is withheld.
pub fn cell_text(name: &str, s: &SuiteResult) -> Option<String> {
    let d = summary_of(name, s)?;
    Some(match (&d.kl, &d.withheld) {
        (Some(kl), None) => {
            let mut t = format!(
                "KL {} [{}–{}] nats",
                nats(kl.mean),
                nats(kl.low),
                nats(kl.high)
            );
            if let Some(top1) = &d.top1_differs {
                let _ = write!(t, "; top-1 ≠ {:.0}%", top1.estimate * 100.0);
            }
            if d.beyond_noise == Some(false) {
                t.push_str(" (within noise)");
            }
            if let Some(part) = d.along.as_ref().and_then(crate::damage_along::cell_part) {
                let _ = write!(t, "; {part}");
            }
            t
        }
        // The reason's first clause ("self-check failed"); the whole reason is in the lines
        // under the summary and in the artifact.
        (_, Some(reason)) => format!(
            "WITHHELD: {}",
            for_terminal(reason.split(':').next().unwrap_or(reason), 60)
        ),
        (None, None) => "not measured".into(),
    })
}

/// The lines under a run's terminal summary for its damage suite, if it has one.
pub fn terminal_lines(name: &str, s: &SuiteResult) -> Option<String> {
    let d = summary_of(name, s)?;
    let r = &d.reference;
    let mut out = match (&d.kl, &d.withheld) {
        (Some(kl), None) => {
            let mut line = format!(
                "damage: KL(reference ‖ candidate) mean {} nats [95% bootstrap {}–{}], median {}, max {} over {} prompts",
                nats(kl.mean),
                nats(kl.low),
                nats(kl.high),
                nats(kl.median),
                nats(kl.max),
                kl.n
            );
            if let Some(t) = &d.top1_differs {
                let _ = write!(
                    line,
                    "; top-1 differs on {}/{} = {:.0}% [{:.0}–{:.0}%]",
                    t.successes,
                    t.n,
                    t.estimate * 100.0,
                    t.low * 100.0,
                    t.high * 100.0
                );
            }
            line.push('\n');
            line
        }
        (_, Some(reason)) => format!("damage: WITHHELD — {}\n", for_terminal(reason, 600)),
        (None, None) => "damage: not measured\n".into(),
    };
    let version = r
        .engine_version
        .as_deref()
        .map(|v| format!(" {}", for_terminal(v, 60)))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "  reference: {} at {} ({}{version}); top-K {}",
        for_terminal(&r.model, 120),
        for_terminal(&r.url, 200),
        r.engine,
        d.top_k
    );
    if let Some(c) = &d.self_check {
        let _ = writeln!(
            out,
            "  self-check (reference against itself, same text): mean KL {} nats, 95% upper bound {} {} limit {:.0e} over {} prompts, top-1 differed on {}: {}",
            nats(c.kl.mean),
            nats(c.kl.high),
            if c.passed { "≤" } else { ">" },
            c.limit_nats,
            c.kl.n,
            c.top1_differs,
            if c.passed { "passed" } else { "FAILED" }
        );
    }
    if let Some(beyond) = d.beyond_noise {
        let _ = writeln!(
            out,
            "  noise floor {} nats: the candidate is {}",
            nats(d.noise_floor_nats),
            if beyond {
                "beyond the instrument's noise"
            } else {
                "NOT distinguishable from the reference within the instrument's noise"
            }
        );
    }
    crate::damage_along::terminal_lines(d, &mut out);
    for n in &d.notes {
        let _ = writeln!(out, "  note: {}", for_terminal(n, 400));
    }
    Some(out)
}

/// A KL of an item, as text.
fn kl_text(kl: Option<f64>) -> String {
    kl.map(nats).unwrap_or_else(|| "-".into())
}

/// A token, quoted, or `-`.
fn token_text(t: Option<&str>) -> String {
    t.map(|s| format!("{s:?}")).unwrap_or_else(|| "-".into())
}

/// The first token a run listed.
fn first_listed(l: &Option<Vec<TokenProb>>) -> Option<&str> {
    l.as_ref()?.first().map(|t| t.token.as_str())
}

/// The HTML section of a run's damage suite: the figures, the self-check, and a per-prompt
/// table (KL, each side's top-1 token, the reference's KL against itself).
pub fn html_section(slug: &str, name: &str, s: &SuiteResult) -> Option<String> {
    let d = summary_of(name, s)?;
    let r = &d.reference;
    let mut out = format!(
        "<div class=\"damage\"><p>{}: <b>{}</b> against reference {} at <code>{}</code> ({} {}), top-K {}.",
        h(slug),
        h(&cell_text(name, s).unwrap_or_default()),
        h(&r.model),
        h(&r.url),
        h(&r.engine.to_string()),
        h(r.engine_version.as_deref().unwrap_or("")),
        d.top_k
    );
    if let Some(kl) = &d.kl {
        let _ = write!(
            out,
            " Mean {} nats (95% bootstrap {}–{}), median {}, max {} over {} prompts.",
            h(&nats(kl.mean)),
            h(&nats(kl.low)),
            h(&nats(kl.high)),
            h(&nats(kl.median)),
            h(&nats(kl.max)),
            kl.n
        );
    }
    if let Some(c) = &d.self_check {
        let _ = write!(
            out,
            " Self-check (the reference against itself on the same text): mean KL {}, upper bound {} against a limit of {:.0e}: <b>{}</b>.",
            h(&nats(c.kl.mean)),
            h(&nats(c.kl.high)),
            c.limit_nats,
            if c.passed {
                "passed"
            } else {
                "FAILED — figure withheld"
            }
        );
    }
    out.push_str("</p>");
    out.push_str(&crate::damage_along::html(d));
    for n in &d.notes {
        let _ = write!(out, "<p class=\"muted\">{}</p>", h(n));
    }
    out.push_str("<table class=\"damage-items\"><thead><tr><th>prompt</th><th>phase</th><th>KL (nats)</th><th>top-1 reference</th><th>top-1 candidate</th><th>outcome</th></tr></thead><tbody>");
    for it in &s.items {
        // Items along the reply are drawn by the curve and the lines above, not as rows; an
        // item whose `extra` does not read is the report's note, its row the id alone.
        let (prompt, phase, kl, top_ref, top_cand) = match noted(read::damage_item(SUITE, it)) {
            Some(DamageExtra::Along(_) | DamageExtra::AlongFailed(_)) => continue,
            Some(DamageExtra::Candidate(x)) => (
                x.prompt,
                "candidate",
                x.kl,
                token_text(x.top1_reference.as_deref()),
                token_text(x.top1_candidate.as_deref()),
            ),
            Some(DamageExtra::SelfCheck(x)) => (
                x.prompt,
                "self-check",
                x.kl,
                token_text(first_listed(&x.reference_run1)),
                token_text(first_listed(&x.reference_run2)),
            ),
            None => (String::new(), "-", None, "-".into(), "-".into()),
        };
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td><code>{}</code></td><td><code>{}</code></td><td>{}</td></tr>",
            h(if prompt.is_empty() { &it.id } else { &prompt }),
            h(phase),
            h(&kl_text(kl)),
            h(&top_ref),
            h(&top_cand),
            h(it.outcome.as_str())
        );
    }
    out.push_str("</tbody></table></div>");
    Some(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use bakeoff_artifact::{
        DamageReference, DamageSelfCheck, EngineKind, ItemRecord, Outcome, Score, SuiteStatus,
        SuiteSummary,
    };
    use bakeoff_stats::KlSummary;
    use serde_json::json;

    use super::*;

    fn kl(mean: f64, low: f64, high: f64) -> KlSummary {
        KlSummary {
            n: 40,
            mean,
            low,
            high,
            median: mean,
            max: mean * 3.0,
            resamples: 2000,
        }
    }

    fn suite(withheld: bool) -> SuiteResult {
        let self_kl = if withheld {
            kl(0.02, 0.01, 0.03)
        } else {
            kl(0.0, 0.0, 0.0)
        };
        let damage = DamageSummary {
            reference: DamageReference {
                url: "http://127.0.0.1:8080".into(),
                model: "<b>ref</b>".into(),
                engine: EngineKind::LlamaCpp,
                engine_version: Some("b11434".into()),
                quantization: None,
            },
            top_k: 20,
            prompts: 40,
            measured: 40,
            self_check: Some(DamageSelfCheck {
                kl: self_kl,
                top1_differs: 0,
                limit_nats: 1e-3,
                passed: !withheld,
            }),
            kl: (!withheld).then(|| kl(0.1234, 0.095, 0.153)),
            top1_differs: (!withheld).then_some(Score {
                successes: 12,
                n: 40,
                estimate: 0.3,
                low: 0.18,
                high: 0.45,
            }),
            beyond_noise: (!withheld).then_some(true),
            noise_floor_nats: 1e-6,
            withheld: withheld.then(|| "self-check failed: the reference disagreed".into()),
            reference_listed_mass_median: Some(0.7),
            bootstrap_seed: 1,
            notes: vec![],
            along: None,
        };
        let item = ItemRecord {
            id: "capital".into(),
            outcome: Outcome::Ok,
            request: json!({}),
            response: Default::default(),
            expected: serde_json::Value::Null,
            check: None,
            latency: Default::default(),
            error: None,
            extra: json!({"phase": "candidate", "prompt": "capital", "kl": 0.2,
                "top1_reference": "What", "top1_candidate": "<script>alert(1)</script>"}),
        };
        SuiteResult {
            status: SuiteStatus::Complete,
            summary: SuiteSummary {
                planned: 80,
                finished: 80,
                outcomes: Default::default(),
                passed: 80,
                scored: 80,
                score: None,
                flags: vec![],
                details: serde_json::Value::Null,
                damage: Some(damage),
                conditions: None,
            },
            items: vec![item],
        }
    }

    #[test]
    fn a_reported_figure_reads_with_its_interval_and_the_self_check() {
        let s = suite(false);
        assert_eq!(
            cell_text(SUITE, &s).unwrap(),
            "KL 0.1234 [0.0950–0.1530] nats; top-1 ≠ 30%"
        );
        assert_eq!(cell_text("smoke", &s), None);
        let t = terminal_lines(SUITE, &s).unwrap();
        assert!(t.contains("median 0.1234"), "{t}");
        assert!(t.contains("top-1 differs on 12/40 = 30% [18–45%]"), "{t}");
        assert!(
            t.contains("mean KL 0 nats, 95% upper bound 0 ≤ limit 1e-3"),
            "{t}"
        );
        assert!(t.contains("beyond the instrument's noise"), "{t}");
    }

    #[test]
    fn a_withheld_figure_shows_no_number_and_says_why() {
        let s = suite(true);
        let cell = cell_text(SUITE, &s).unwrap();
        assert_eq!(cell, "WITHHELD: self-check failed");
        let t = terminal_lines(SUITE, &s).unwrap();
        assert!(t.starts_with("damage: WITHHELD"), "{t}");
        assert!(t.contains("FAILED"), "{t}");
        assert!(!t.contains("KL(reference ‖ candidate) mean"), "{t}");
    }

    #[test]
    fn html_escapes_tokens_and_model_names() {
        let html = html_section("cand", SUITE, &suite(false)).unwrap();
        assert!(!html.contains("<script>"), "{html}");
        assert!(html.contains("&lt;script&gt;"));
        assert!(html.contains("&lt;b&gt;ref&lt;/b&gt;"));
        assert_eq!(html_section("cand", "smoke", &suite(false)), None);
    }
}
