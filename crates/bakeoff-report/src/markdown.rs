//! The negative-results log (markdown), in the manner of the bakeoff notes' "Failed and
//! incomplete runs" (docs/field-cases.md B1–B7): one numbered entry per failed or incomplete
//! run, scoped to the exact configuration tested, followed by the dated superseded-claims table
//! and the comparison.
//!
//! Everything an endpoint sent (error messages, bodies, model ids) goes through
//! [`for_markdown`]: markdown renderers pass raw HTML through.

use std::fmt::Write as _;

use bakeoff_artifact::{ArtifactKind, RunStatus, SuiteStatus};

use crate::comparison::{self, CandidateTable};
use crate::escape::for_markdown;
use crate::evidence::RetractionRecord;
use crate::registry::{Entry, Registry};

/// The scoping sentence of every negative-results document (the report's and a campaign's).
pub(crate) const SCOPE_NOTE: &str = "Negative results are evidence. Nothing here is a universal judgment \
about a model family — every entry is scoped to the exact engine, quantization, context, and \
hardware configuration tested.";

fn md(s: &str) -> String {
    for_markdown(s, 400)
}

fn code(s: &str) -> String {
    // File names are ours (slugs are [a-z0-9-]), but a directory name may hold a backtick.
    format!("`{}`", s.replace('`', "'"))
}

/// Believed cause class, from the failure class the instrument assigned. Worded as a belief:
/// isolation runs (listed beside it) are what confirm or refute it.
fn cause_class(class: &str) -> &'static str {
    match class {
        "unreachable" => {
            "endpoint/network: nothing answered at the address (server down, wrong port or host) — says nothing about the model or engine"
        }
        "not-ready" => {
            "engine startup: the server answered but no completion succeeded within the ready timeout (loading, warming or wedged)"
        }
        "inference-failing" => {
            "engine/serving: control endpoints answer while inference fails (the wedge pattern) — engine or kernel until isolated, not model weights"
        }
        "model-not-served" => "configuration: the requested model id is not served by the endpoint",
        _ => "see the failure class; docs/failure-classes.md lists its signatures",
    }
}

fn norm_model(m: &str) -> String {
    let base = m.rsplit('/').next().unwrap_or(m);
    base.strip_suffix(".gguf")
        .unwrap_or(base)
        .to_ascii_lowercase()
}

fn title(e: &Entry) -> String {
    let a = &e.artifact;
    let what = if let Some(f) = &a.failure {
        format!("{} ({})", f.class, md(&f.message))
    } else if a.status == RunStatus::Incomplete {
        format!(
            "incomplete run ({})",
            md(a.incomplete_reason
                .as_deref()
                .unwrap_or("no reason recorded"))
        )
    } else {
        let failed: Vec<&str> = a
            .suites
            .iter()
            .filter(|(_, s)| s.status == SuiteStatus::Failed)
            .map(|(n, _)| n.as_str())
            .collect();
        format!("suite(s) measured nothing: {}", failed.join(", "))
    };
    format!("{} — {}", md(&a.candidate.slug), what)
}

fn run_summary(e: &Entry) -> String {
    let a = &e.artifact;
    if let Some(f) = &a.failure {
        return format!("failure: {}", f.class);
    }
    let suites: Vec<String> = a
        .suites
        .iter()
        .map(|(n, s)| {
            format!(
                "{n} {}",
                crate::score::score_text(&s.summary.score).replace('|', "/")
            )
        })
        .collect();
    if suites.is_empty() {
        "no suites".into()
    } else {
        suites.join(", ")
    }
}

fn entry(out: &mut String, n: usize, e: &Entry, reg: &Registry) {
    let a = &e.artifact;
    let c = &a.candidate;
    let _ = writeln!(out, "## {n}. {}\n", title(e));
    let _ = writeln!(out, "- **Model:** {}", md(&c.model));
    let _ = writeln!(
        out,
        "- **Engine:** {} {}",
        c.engine,
        md(c.engine_version.as_deref().unwrap_or("(version unknown)"))
    );
    let _ = writeln!(out, "- **Config:** {}", config(e).join("; "));
    let _ = writeln!(out, "- **Symptom:** {}", symptom(e).join(". "));
    evidence(out, e);
    isolation(out, e, reg);
    let _ = writeln!(out, "- **Believed cause class:** {}", believed_cause(e));
    not_attempted_and_verdict(out, &c.slug, reg);
    out.push('\n');
}

/// The configuration the entry is scoped to.
fn config(e: &Entry) -> Vec<String> {
    let a = &e.artifact;
    let c = &a.candidate;
    let mut config = vec![
        format!(
            "quantization {}",
            md(c.quantization.as_deref().unwrap_or("unknown"))
        ),
        match c.context_window.tokens {
            Some(t) => format!("window {t} tokens ({})", c.context_window.source),
            None => "window unknown".into(),
        },
        format!(
            "hardware {}",
            md(c.hardware.as_deref().unwrap_or("not recorded"))
        ),
        format!("endpoint {}", md(&a.endpoint.url)),
    ];
    if let Some(s) = &a.run.suites {
        let names: Vec<String> = s.iter().map(String::as_str).map(md).collect();
        config.push(format!("suites requested: {}", names.join(", ")));
    }
    for note in &c.notes {
        config.push(format!("note: {}", md(note)));
    }
    config
}

/// Symptom: what the instrument saw, first-hand.
fn symptom(e: &Entry) -> Vec<String> {
    let a = &e.artifact;
    let mut symptom = Vec::new();
    if let Some(f) = &a.failure {
        symptom.push(md(&f.message));
    }
    if a.status == RunStatus::Incomplete {
        symptom.push(format!(
            "run incomplete: {}",
            md(a.incomplete_reason
                .as_deref()
                .unwrap_or("no reason recorded"))
        ));
    }
    for (name, s) in &a.suites {
        if s.status == SuiteStatus::Failed || s.status == SuiteStatus::Incomplete {
            symptom.push(format!(
                "suite {name} {} ({} of {} planned finished; {})",
                if s.status == SuiteStatus::Failed {
                    "measured nothing"
                } else {
                    "incomplete"
                },
                s.summary.finished,
                s.summary.planned,
                crate::terminal::outcomes_text(&s.summary)
            ));
        }
    }
    if let Some(p) = &a.preflight
        && !p.ready.errors.is_empty()
    {
        let errs: Vec<String> = p
            .ready
            .errors
            .iter()
            .map(|x| format!("{} ×{}: {}", md(&x.kind), x.times, md(&x.message)))
            .collect();
        symptom.push(format!("readiness errors: {}", errs.join("; ")));
    }
    symptom
}

/// The evidence: the artifact and its journal, then the failure's own evidence lines.
fn evidence(out: &mut String, e: &Entry) {
    let mut files = vec![code(&e.name)];
    // The journal shares the artifact's stem (`<slug>` or `<slug>.<run_id>`), not the slug.
    if let Some(journal) = bakeoff_artifact::journal_of(&e.path).filter(|j| j.exists()) {
        let name = journal
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        files.push(format!("{} (items as they finished)", code(&name)));
    }
    let _ = writeln!(out, "- **Evidence:** {}", files.join(", "));
    if let Some(f) = &e.artifact.failure {
        for ev in &f.evidence {
            let _ = writeln!(out, "  - {}: {}", md(&ev.what), md(&ev.detail));
        }
    }
}

/// Isolation: every other run of the same model in the registry, linked.
fn isolation(out: &mut String, e: &Entry, reg: &Registry) {
    let me = norm_model(&e.artifact.candidate.model);
    let related: Vec<&Entry> = reg
        .entries
        .iter()
        .filter(|o| o.name != e.name && norm_model(&o.artifact.candidate.model) == me)
        .collect();
    if related.is_empty() {
        let _ = writeln!(
            out,
            "- **Isolation performed:** none recorded (no other run of this model under {}).",
            code(&reg.dir.display().to_string())
        );
        return;
    }
    let _ = writeln!(out, "- **Isolation performed:**");
    for o in related {
        let oc = &o.artifact.candidate;
        let _ = writeln!(
            out,
            "  - [{}]({}) — {}, window {}, {}{}",
            md(&o.name),
            o.name.replace(' ', "%20"),
            match o.artifact.kind {
                ArtifactKind::Bakeoff => "bakeoff",
                ArtifactKind::Failure => "failure",
            },
            oc.context_window
                .tokens
                .map(|t| t.to_string())
                .unwrap_or_else(|| "unknown".into()),
            run_summary(o),
            if o.is_retracted() { " (retracted)" } else { "" }
        );
    }
}

/// The believed cause class, with the remediation's next step when the failure has one.
fn believed_cause(e: &Entry) -> String {
    let a = &e.artifact;
    let class = a
        .failure
        .as_ref()
        .map(|f| f.class.to_string())
        .unwrap_or_else(|| "incomplete".into());
    let mut cause = if class == "incomplete" {
        "interrupted run (operator stop or the endpoint went away); the finished items are kept"
            .to_string()
    } else {
        format!("{class} — {}", cause_class(&class))
    };
    if let Some(r) = a.failure.as_ref().and_then(|f| f.remediation.as_ref()) {
        cause.push_str(&format!(". Next step: {}", md(r)));
    }
    cause
}

/// What was not attempted and the verdict, from the registry's verdict on `slug`.
fn not_attempted_and_verdict(out: &mut String, slug: &str, reg: &Registry) {
    let verdict = reg.verdicts.get(slug);
    match verdict.map(|v| &v.current.not_attempted) {
        Some(na) if !na.is_empty() => {
            let items: Vec<String> = na.iter().map(|s| md(s)).collect();
            let _ = writeln!(out, "- **Not attempted:** {}.", items.join(", "));
        }
        _ => {
            let _ = writeln!(
                out,
                "- **Not attempted:** not recorded (add with `bakeoff verdict {slug} VERDICT --reason … --not-attempted …`).",
            );
        }
    }
    match verdict {
        Some(v) => {
            let _ = writeln!(
                out,
                "- **Verdict:** {} ({}): {}",
                v.current.verdict,
                v.current.date.format("%Y-%m-%d"),
                md(&v.current.reason)
            );
            if let Some(p) = &v.current.production_impact {
                let _ = writeln!(out, "- **Production impact:** {}", md(p));
            }
        }
        None => {
            let _ = writeln!(out, "- **Verdict:** none recorded.");
        }
    }
}

/// The retracted entries with their retraction records.
pub(crate) fn retractions(reg: &Registry) -> impl Iterator<Item = (&Entry, &RetractionRecord)> {
    reg.retracted()
        .filter_map(|e| e.retraction.as_ref().map(|r| (e, r)))
}

/// The claims a retraction withdraws, as `suite: claimed` joined by `; `, each part escaped
/// by `esc`.
pub(crate) fn withdrawn_claims(r: &RetractionRecord, esc: impl Fn(&str) -> String) -> String {
    let claims: Vec<String> = r
        .claims
        .iter()
        .map(|c| format!("{}: {}", esc(&c.suite), esc(&c.claimed)))
        .collect();
    claims.join("; ")
}

/// The superseded-claims table, or `None` when nothing is retracted.
pub fn superseded(reg: &Registry) -> Option<String> {
    let mut rows = String::new();
    for (e, r) in retractions(reg) {
        let _ = writeln!(
            rows,
            "| {} | {} | {} | {} | {} |",
            r.date.format("%Y-%m-%d"),
            code(&e.name),
            md(&e.artifact.candidate.slug),
            withdrawn_claims(r, md),
            md(&r.reason)
        );
    }
    if rows.is_empty() {
        return None;
    }
    Some(format!(
        "| Retracted | Artifact | Candidate | Claim withdrawn | Reason |\n|---|---|---|---|---|\n{rows}"
    ))
}

/// The comparison as a markdown table (counted artifacts only).
pub fn comparison_table(c: &CandidateTable) -> String {
    let mut out = String::from("| Candidate | Model | Engine | Quant | Window | Hardware |");
    for s in &c.suites {
        let _ = write!(out, " {s} |");
    }
    out.push_str(" Runs | Verdict |\n|");
    for _ in 0..(8 + c.suites.len()) {
        out.push_str("---|");
    }
    out.push('\n');
    for r in &c.rows {
        let _ = write!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            md(&r.slug),
            md(&r.model),
            md(&r.engine_text()),
            md(&r.quantization),
            r.window,
            md(&r.hardware)
        );
        for s in &c.suites {
            let cell = match r.cells.get(s) {
                Some(cell) if cell.flags.is_empty() => md(&cell.text),
                Some(cell) => format!("{} (flags: {})", md(&cell.text), md(&cell.flags.join(", "))),
                None if r.cells.is_empty() && r.failure.is_some() => "FAILED".into(),
                None => "-".into(),
            };
            let _ = write!(out, " {cell} |");
        }
        let _ = writeln!(
            out,
            " {} | {} |",
            r.evidence_text(),
            md(&r.verdict_with_date())
        );
    }
    out
}

/// The whole negative-results document.
pub fn negative_results(reg: &Registry, generated: &str) -> String {
    let dir_name = reg
        .dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| reg.dir.display().to_string());
    let mut out = format!(
        "# Failed and incomplete runs — {}\n\n{SCOPE_NOTE}\n\n",
        md(&dir_name)
    );
    let _ = writeln!(
        out,
        "Generated {generated} by bakeoff {} from {} artifact(s) under {} ({} retracted, not counted).\n",
        env!("CARGO_PKG_VERSION"),
        reg.entries.len(),
        code(&reg.dir.display().to_string()),
        reg.retracted().count()
    );
    let negatives: Vec<&Entry> = reg.counted().filter(|e| e.is_negative()).collect();
    if negatives.is_empty() {
        out.push_str("No failed or incomplete runs among the counted artifacts.\n\n");
    }
    for (i, e) in negatives.iter().enumerate() {
        entry(&mut out, i + 1, e, reg);
    }
    out.push_str("## Superseded claims\n\n");
    match superseded(reg) {
        Some(t) => {
            out.push_str(
                "Kept as a dated table rather than a silent edit: the artifacts are unchanged, and no report counts them.\n\n",
            );
            out.push_str(&t);
        }
        None => out.push_str("None: no result under this directory has been retracted.\n"),
    }
    out.push_str("\n## Comparison (counted artifacts)\n\n");
    let c = comparison::build(reg);
    if c.rows.is_empty() {
        out.push_str("No artifacts.\n");
    } else {
        out.push_str(&comparison_table(&c));
    }
    if !reg.notes.is_empty() {
        out.push_str("\n## Files not read\n\n");
        for n in &reg.notes {
            let _ = writeln!(out, "- {}", md(n));
        }
    }
    let unread = reg.unread();
    if !unread.is_empty() {
        out.push_str("\n## Parts not read\n\n");
        for n in &unread {
            let _ = writeln!(out, "- {}", md(n));
        }
    }
    out
}
