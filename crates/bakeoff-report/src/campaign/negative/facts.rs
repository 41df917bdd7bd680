//! The facts of an entry: what was run (model, engine, configuration), what was seen
//! (symptoms, evidence) and the ladder that isolates it.

use std::fmt::Write as _;
use std::path::Path;

use bakeoff_artifact::campaign::{LadderMode, OutcomeKind, VariantRow};
use bakeoff_artifact::{Artifact, EngineKind};

use super::super::cause::is_failure;
use super::super::{Group, counts, duration, figure, image_of};
use super::text::{MAX_LOG_LINES, Unread, bullet, code, distinct, md, read_artifact};
use crate::escape::for_markdown;

/// The artifacts of a candidate's variants, each read or with why not.
pub(super) struct Files<'a> {
    reads: Vec<(&'a VariantRow, &'a str, Result<Artifact, Unread>)>,
}

impl<'a> Files<'a> {
    pub(super) fn read(g: &Group<'a>, dir: &Path) -> Self {
        let mut reads = Vec::new();
        for r in &g.rows {
            for a in &r.artifacts {
                reads.push((*r, a.as_str(), read_artifact(dir, a)));
            }
        }
        Files { reads }
    }

    fn artifacts(&self) -> impl Iterator<Item = &Artifact> {
        self.reads.iter().filter_map(|(_, _, a)| a.as_ref().ok())
    }

    fn unread(&self) -> usize {
        self.reads.iter().filter(|(_, _, a)| a.is_err()).count()
    }
}

pub(super) fn model(out: &mut String, files: &Files<'_>) {
    let models = distinct(files.artifacts().map(|a| md(&a.candidate.model)));
    let text = if !models.is_empty() {
        let mut t = models.join("; ");
        if files.unread() > 0 {
            let _ = write!(
                t,
                " (from {} of {} artifacts; see Evidence)",
                files.reads.len() - files.unread(),
                files.reads.len()
            );
        }
        t
    } else if files.reads.is_empty() {
        "unknown: no artifact was recorded for this candidate".into()
    } else {
        "unknown: no artifact of this candidate could be read (see Evidence)".into()
    };
    let _ = writeln!(out, "- **Model:** {text}");
}

pub(super) fn engine(out: &mut String, g: &Group<'_>, files: &Files<'_>) {
    // A failed variant that never served has no version: it is the same engine as the variants
    // that did, not a second one. "(version unknown)" stands only for an engine no artifact
    // gave a version of.
    let mut named: Vec<(EngineKind, Option<&str>)> = Vec::new();
    for a in files.artifacts() {
        let k = (a.candidate.engine, a.candidate.engine_version.as_deref());
        if !named.contains(&k) {
            named.push(k);
        }
    }
    let mut engines: Vec<String> = named
        .iter()
        .filter(|(e, v)| v.is_some() || !named.iter().any(|(e2, v2)| e2 == e && v2.is_some()))
        .map(|(e, v)| format!("{e} {}", md(v.unwrap_or("(version unknown)"))))
        .collect();
    if engines.is_empty() {
        engines.push(match g.plan {
            Some(p) => format!("{} (version unknown: no artifact read)", p.engine),
            None => "unknown (no artifact read)".into(),
        });
    }
    let launches = g
        .plan
        .map(|p| p.base.as_str())
        .into_iter()
        .chain(g.rows.iter().map(|r| r.launch.as_str()));
    let images = distinct(launches.filter_map(image_of).map(code));
    let mut text = engines.join("; ");
    if !images.is_empty() {
        let _ = write!(text, " (image {})", images.join(", "));
    }
    let _ = writeln!(out, "- **Engine:** {text}");
}

pub(super) fn config(out: &mut String, g: &Group<'_>, files: &Files<'_>) {
    let mut parts = Vec::new();
    if let Some(p) = g.plan {
        parts.push(format!("base {} (seat {})", code(&p.base), code(&p.seat)));
    }
    let quants = distinct(
        files
            .artifacts()
            .filter_map(|a| a.candidate.quantization.as_deref().map(md)),
    );
    if !quants.is_empty() {
        parts.push(format!("quantization {}", quants.join(", ")));
    }
    let hardware = distinct(
        files
            .artifacts()
            .filter_map(|a| a.candidate.hardware.as_deref().map(md)),
    );
    if !hardware.is_empty() {
        parts.push(format!("hardware {}", hardware.join("; ")));
    }
    let flags = g.flags();
    if !flags.is_empty() {
        let axes: Vec<String> = flags.iter().map(|f| code(f)).collect();
        parts.push(format!(
            "ladder {} ({})",
            axes.join(" × "),
            match g.plan.map(|p| p.ladder_mode) {
                Some(LadderMode::FirstSuccess) => "stopping at the first success",
                _ => "every variant in order",
            }
        ));
    }
    if let Some(n) = g.plan.and_then(|p| p.note.as_deref()) {
        parts.push(format!("note: {}", md(n)));
    }
    let _ = write!(out, "- **Config:** {}", parts.join("; "));
    let failing: Vec<&VariantRow> = g
        .rows
        .iter()
        .copied()
        .filter(|r| is_failure(r.outcome.kind) || r.outcome.kind == OutcomeKind::Interrupted)
        .collect();
    if failing.is_empty() {
        out.push('\n');
        return;
    }
    out.push_str("; the variants that did not complete:\n");
    for r in failing {
        let delta: Vec<String> = r.delta.iter().map(|d| md(d)).collect();
        let _ = writeln!(
            out,
            "  - {} ({}): {}",
            code(&r.variant),
            md(&r.outcome.label()),
            if delta.is_empty() {
                "the base configuration".to_string()
            } else {
                delta.join("; ")
            }
        );
    }
}

pub(super) fn symptom(out: &mut String, g: &Group<'_>) {
    let mut items = Vec::new();
    for r in &g.rows {
        let k = r.outcome.kind;
        if !is_failure(k) && k != OutcomeKind::Interrupted {
            continue;
        }
        let mut s = format!("{} — {}", code(&r.variant), md(&r.outcome.label()));
        if k == OutcomeKind::Interrupted {
            s.push_str(" (aborted, incomplete run)");
        }
        if !r.outcome.message.is_empty() {
            let _ = write!(s, ": {}", md(&r.outcome.message));
        }
        if let Some(ms) = r.timings.start_ms {
            let _ = write!(s, " (after {})", duration(ms));
        }
        if !r.log_lines.is_empty() {
            let lines: Vec<String> = r
                .log_lines
                .iter()
                .take(MAX_LOG_LINES)
                .map(|l| code(l))
                .collect();
            let _ = write!(s, ". Notable log lines: {}", lines.join(", "));
            if r.log_lines.len() > MAX_LOG_LINES {
                let _ = write!(
                    s,
                    " (+{} more in the record)",
                    r.log_lines.len() - MAX_LOG_LINES
                );
            }
        }
        if let Some(fit) = r.fit.as_ref().filter(|_| k == OutcomeKind::DoesNotFit) {
            let lines: Vec<String> = fit.lines.iter().map(|l| code(l)).collect();
            let _ = write!(s, ". Fit check ({}): {}", md(&fit.answer), lines.join(", "));
        }
        for n in &r.notes {
            let _ = write!(s, ". Note: {}", md(n));
        }
        items.push(s);
    }
    if items.is_empty() {
        items.push(format!(
            "none observed: no variant ran to a failure ({})",
            counts(g.rows.iter().copied())
        ));
    }
    bullet(out, "Symptom", &items);
}

pub(super) fn evidence(out: &mut String, g: &Group<'_>, files: &Files<'_>) {
    let mut items: Vec<String> = files
        .reads
        .iter()
        .map(|(_, name, read)| match read {
            Ok(_) => code(name),
            Err(why) => format!("{} ({})", code(name), md(&why.to_string())),
        })
        .collect();
    for r in &g.rows {
        if let Some(log) = &r.log {
            items.push(format!("{} (seat log of {})", code(log), code(&r.variant)));
        }
    }
    if items.is_empty() {
        items.push("no artifact".into());
    }
    let _ = writeln!(
        out,
        "- **Evidence:** {}; the rows in `campaign.json`, the events in `campaign.journal.jsonl`",
        items.join(", ")
    );
}

pub(super) fn isolation(out: &mut String, g: &Group<'_>) {
    if g.rows.len() < 2 {
        let _ = writeln!(
            out,
            "- **Isolation performed:** none: a single configuration, no ladder."
        );
        return;
    }
    let flags = g.flags();
    let over = if flags.is_empty() {
        String::new()
    } else {
        let f: Vec<String> = flags.iter().map(|f| code(f)).collect();
        format!(" over {}", f.join(" × "))
    };
    let _ = writeln!(
        out,
        "- **Isolation performed:** {} variants{over}, in campaign order:\n",
        g.rows.len()
    );
    let mut head = String::from("  | # |");
    let mut rule = String::from("  |---|");
    if flags.is_empty() {
        head.push_str(" Variant |");
        rule.push_str("---|");
    }
    for f in &flags {
        let _ = write!(head, " {} |", md(f));
        rule.push_str("---|");
    }
    let _ = writeln!(out, "{head} Outcome | Figure |\n{rule}---|---|");
    for r in &g.rows {
        let _ = write!(out, "  | {} |", r.index);
        if flags.is_empty() {
            let _ = write!(out, " {} |", md(&r.variant));
        }
        for f in &flags {
            let _ = write!(out, " {} |", md(r.axis(f).unwrap_or("-")));
        }
        // A contaminated variant's figure is marked (the outcome cell stays the outcome).
        let mark = if super::super::contaminated(r).is_some() {
            "CONTAMINATED: "
        } else {
            ""
        };
        let _ = writeln!(
            out,
            " {} | {mark}{} |",
            md(&r.outcome.label()),
            for_markdown(&figure(r), 80)
        );
    }
    out.push('\n');
}
