//! A campaign's `negative-results.md`, in the shape of the bakeoff notes' "Failed and incomplete
//! runs" (docs/field-cases.md B1–B7): one numbered entry per candidate with a variant that did
//! not complete, scoped to the exact configurations tested, its ladder as the isolation table.
//!
//! The record and the artifacts it names are read, never trusted: every string goes through
//! [`crate::escape::for_markdown`] (or into a code span with its backticks and control characters
//! neutralized), a file that is missing or unreadable is noted, never a panic, and a path that
//! would leave the campaign's directory is not followed.

mod facts;
mod judgment;
mod text;

use std::fmt::Write as _;
use std::path::Path;

use bakeoff_artifact::campaign::{CampaignRecord, OutcomeKind};

use super::cause::{pass_and_fail, separating_axes, short_label};
use super::{Group, cause_of, counts, groups, with_code};
use facts::{Files, config, engine, evidence, isolation, model, symptom};
use judgment::{Verdicts, not_attempted, production, verdict};
use text::{code, distinct, md};

use crate::markdown::SCOPE_NOTE;

/// What happened to the candidate, for its heading (escaped).
fn headline(g: &Group<'_>) -> String {
    let rows = &g.rows;
    let (pass, fail) = pass_and_fail(rows);
    let interrupted = rows
        .iter()
        .filter(|r| r.outcome.kind == OutcomeKind::Interrupted)
        .count();
    let tally = counts(rows.iter().copied());
    let classes = distinct(fail.iter().map(|r| short_label(r)));
    let what = md(&classes.join(", "));
    if fail.is_empty() {
        return if interrupted > 0 {
            format!("interrupted (incomplete run; {tally})")
        } else if pass.is_empty() {
            format!("not run ({tally})")
        } else {
            format!("{tally}, no failure")
        };
    }
    if !pass.is_empty() {
        return match separating_axes(&pass, &fail).first() {
            Some(s) => format!("{what} at {} {}", md(s.flag), md(&s.fail.join("/"))),
            None => format!(
                "{what} in {} of {} variants run",
                fail.len(),
                fail.len() + pass.len()
            ),
        };
    }
    if fail.len() + interrupted == 1 {
        return what;
    }
    let all = if fail.len() == rows.len() {
        "every variant failed"
    } else {
        "every variant run failed"
    };
    match (interrupted, classes.len()) {
        (0, 1) => format!("{what} ladder — {all}"),
        (0, _) => format!("{all} ({what})"),
        (_, 1) => format!("{what} ladder — no variant completed ({tally})"),
        _ => format!("no variant completed ({tally})"),
    }
}

/// The probes the campaign designed, with their hypotheses, and the factor they separated.
fn designed(out: &mut String, g: &Group<'_>) {
    let Some(iso) = g.isolation else { return };
    let probes = super::isolation::probes(&g.rows);
    let _ = writeln!(
        out,
        "- **Isolation that designed itself:** from {} ({}), {} of {} starts and {} of {} s used:\n",
        code(&iso.parent),
        code(&iso.class.to_string()),
        iso.starts,
        iso.max_starts,
        iso.seconds,
        iso.budget_s
    );
    if !probes.is_empty() {
        let _ = writeln!(
            out,
            "  | step | hypothesis | probe | outcome | variant |\n  |---|---|---|---|---|"
        );
        for r in &probes {
            if let Some(p) = &r.probe {
                let _ = writeln!(
                    out,
                    "  | {} | {} | {} | {} | {} |",
                    p.step,
                    with_code(&p.hypothesis, md, code),
                    with_code(&p.probe, md, code),
                    md(&r.outcome.label()),
                    code(&r.variant)
                );
            }
        }
        out.push('\n');
    }
    if !iso.alternatives.is_empty() {
        let _ = writeln!(
            out,
            "  | build asked (registry check, no start) | verdict | its words |\n  |---|---|---|"
        );
        for a in &iso.alternatives {
            let _ = writeln!(
                out,
                "  | {} | {} | {} |",
                code(&a.build),
                a.verdict.as_str(),
                md(&a.words)
            );
        }
        out.push('\n');
    }
    let said = match super::isolation::factor(iso) {
        Some(f) => format!("**Separating factor:** {}", with_code(&f, md, code)),
        None => format!(
            "**Separating factor:** not isolated — {}",
            with_code(&iso.summary, md, code)
        ),
    };
    let _ = writeln!(out, "  {said}");
    if !iso.not_attempted.is_empty() {
        let cut: Vec<String> = iso.not_attempted.iter().map(|s| md(s)).collect();
        let _ = writeln!(
            out,
            "  Not attempted (cut by the budget or the proof): {}",
            cut.join("; ")
        );
    }
    out.push('\n');
}

fn section(out: &mut String, n: usize, g: &Group<'_>, dir: &Path) {
    let files = Files::read(g, dir);
    let verdicts = Verdicts::read(g, dir);
    let _ = writeln!(out, "## {n}. {} — {}\n", md(g.name), headline(g));
    model(out, &files);
    engine(out, g, &files);
    config(out, g, &files);
    symptom(out, g);
    evidence(out, g, &files);
    isolation(out, g);
    designed(out, g);
    let cause = cause_of(g);
    let _ = writeln!(
        out,
        "- **Believed cause class:** {}",
        with_code(&cause.text, md, code)
    );
    not_attempted(out, g, &verdicts);
    verdict(out, g, &verdicts);
    production(out, g, &verdicts);
    out.push('\n');
}

/// The campaign's `negative-results.md`: one numbered entry per candidate with a variant that
/// did not complete, read from `rec` and the artifacts and verdicts under `dir` (the campaign's
/// directory). `generated` is the time to print (the caller's clock, so tests can fix it).
pub fn negative_results(rec: &CampaignRecord, dir: &Path, generated: &str) -> String {
    let mut out = format!(
        "# Failed and incomplete runs — {}\n\n{SCOPE_NOTE}\n\n",
        md(&rec.name)
    );
    let _ = writeln!(
        out,
        "Generated {} by bakeoff {} from `campaign.json` (campaign file {}, fleet {}, suites {}): {} variant(s), {}; {}.\n",
        md(generated),
        env!("CARGO_PKG_VERSION"),
        code(&rec.file),
        code(&rec.fleet),
        md(&rec.suites.join(", ")),
        rec.variants.len(),
        counts(&rec.variants),
        if rec.finished {
            "finished".to_string()
        } else {
            format!(
                "in progress (updated {})",
                rec.updated_at.format("%Y-%m-%d %H:%M UTC")
            )
        }
    );
    let all = groups(rec);
    let mut n = 0;
    for g in &all {
        if g.rows
            .iter()
            .any(|r| r.outcome.kind != OutcomeKind::Completed)
        {
            n += 1;
            section(&mut out, n, g, dir);
        }
    }
    let completed: Vec<String> = all
        .iter()
        .filter(|g| g.all_completed())
        .map(|g| code(g.name))
        .collect();
    if n == 0 {
        out.push_str(if rec.variants.is_empty() {
            "No failed or incomplete runs: the campaign has no variants.\n"
        } else {
            "No failed or incomplete runs: every variant of every candidate completed.\n"
        });
    } else if !completed.is_empty() {
        let _ = writeln!(
            out,
            "Every variant completed, so no entry: {}.",
            completed.join(", ")
        );
    }
    if !rec.notes.is_empty() {
        if !out.ends_with("\n\n") {
            out.push('\n');
        }
        out.push_str("## Campaign notes\n\n");
        for note in &rec.notes {
            let _ = writeln!(out, "- {}", md(note));
        }
    }
    out
}
