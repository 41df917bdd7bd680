//! Human tables for the terminal.

use bakeoff_artifact::{
    Artifact, ArtifactKind, EndpointFacts, PreflightReport, Score, SuiteStatus, SuiteSummary,
};
use comfy_table::{ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};

use crate::escape::for_terminal;

fn table() -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic);
    t
}

/// A suite's outcome counts, as `outcome count` joined by `, `.
pub(crate) fn outcomes_text(s: &SuiteSummary) -> String {
    let outcomes: Vec<String> = s.outcomes.iter().map(|(k, v)| format!("{k} {v}")).collect();
    outcomes.join(", ")
}

pub fn score_text(s: &Option<Score>) -> String {
    match s {
        Some(s) => format!(
            "{}/{} = {:.0}% [{:.0}–{:.0}%]",
            s.successes,
            s.n,
            s.estimate * 100.0,
            s.low * 100.0,
            s.high * 100.0
        ),
        None => "not scored".into(),
    }
}

/// The preflight verdict and what discovery found.
pub fn preflight(report: &PreflightReport, facts: &EndpointFacts, url: &str) -> String {
    let mut t = table();
    t.set_header(vec!["preflight", "value"]);
    t.add_row(vec!["endpoint".to_string(), url.to_string()]);
    t.add_row(vec![
        "verdict".to_string(),
        if report.fit {
            "FIT".into()
        } else {
            "UNFIT".into()
        },
    ]);
    t.add_row(vec![
        "engine".to_string(),
        format!(
            "{} {}",
            facts.engine,
            facts
                .engine_version
                .clone()
                .unwrap_or_else(|| "(version unknown)".into())
        ),
    ]);
    let served: Vec<String> = facts
        .models
        .iter()
        .map(|m| for_terminal(&m.id, 80))
        .collect();
    t.add_row(vec![
        "served models".to_string(),
        if served.is_empty() {
            "none listed".into()
        } else {
            served.join(", ")
        },
    ]);
    t.add_row(vec![
        "model".to_string(),
        report
            .model
            .clone()
            .map(|m| for_terminal(&m, 80))
            .unwrap_or_else(|| "-".into()),
    ]);
    t.add_row(vec![
        "context window".to_string(),
        match facts.context_window.tokens {
            Some(n) => format!("{n} tokens (source: {})", facts.context_window.source),
            None => "unknown (suites that need it will refuse; give --max-model-len)".into(),
        },
    ]);
    if let Some(tc) = facts.trained_context {
        t.add_row(vec![
            "trained context".to_string(),
            format!("{tc} (recorded, not the window)"),
        ]);
    }
    t.add_row(vec![
        "tokenizer route".to_string(),
        report.tokenizer_route.clone(),
    ]);
    t.add_row(vec![
        "chat template".to_string(),
        match &facts.chat_template {
            Some(c) => format!(
                "sha256 {} ({} lines, {})",
                c.fingerprint.short, c.fingerprint.lines, c.source
            ),
            None => "not exposed by the server".into(),
        },
    ]);
    t.add_row(vec![
        "ready".to_string(),
        format!(
            "{} after {} attempt(s), {} ms{}",
            if report.ready.ready { "yes" } else { "no" },
            report.ready.attempts,
            report.ready.elapsed_ms,
            report
                .ready
                .reply_preview
                .as_ref()
                .map(|p| format!(" — reply: {}", for_terminal(p, 60)))
                .unwrap_or_default()
        ),
    ]);
    for r in &report.reasons {
        t.add_row(vec!["UNFIT because".to_string(), for_terminal(r, 400)]);
    }
    for f in &report.flags {
        t.add_row(vec![
            format!("flag {}", f.code),
            for_terminal(&f.message, 400),
        ]);
    }
    t.to_string()
}

/// The per-suite summary of a run.
pub fn run_summary(a: &Artifact, path: &str) -> String {
    let mut t = table();
    t.set_header(vec![
        "suite",
        "status",
        "score (Wilson 95%)",
        "outcomes",
        "flags",
    ]);
    for (name, s) in &a.suites {
        let flags: Vec<String> = s.summary.flags.iter().map(|f| f.code.to_string()).collect();
        t.add_row(vec![
            name.clone(),
            match s.status {
                SuiteStatus::Complete => "complete".into(),
                SuiteStatus::Incomplete => "INCOMPLETE".into(),
                SuiteStatus::Failed => "FAILED (measured nothing)".to_string(),
            },
            score_text(&s.summary.score),
            outcomes_text(&s.summary),
            flags.join(", "),
        ]);
    }
    let head = format!(
        "{} {} — {} {} — window {} — {}",
        match a.kind {
            ArtifactKind::Bakeoff => "bakeoff",
            ArtifactKind::Failure => "FAILURE",
        },
        a.candidate.slug,
        a.candidate.engine,
        a.candidate.engine_version.clone().unwrap_or_default(),
        a.candidate
            .context_window
            .tokens
            .map(|n| format!("{n} ({})", a.candidate.context_window.source))
            .unwrap_or_else(|| "unknown".into()),
        match a.status {
            bakeoff_artifact::RunStatus::Complete => "complete".to_string(),
            bakeoff_artifact::RunStatus::Incomplete => format!(
                "INCOMPLETE: {}",
                a.incomplete_reason.clone().unwrap_or_default()
            ),
        }
    );
    let mut out = format!("{head}\n{t}\n");
    if let Some(ft) = family_table(a) {
        out.push_str(&format!(
            "per family (Wilson 95%; a family below chance is flagged):\n{ft}\n"
        ));
    }
    for f in &a.instrument_flags {
        out.push_str(&format!(
            "flag {}: {}\n",
            f.code,
            for_terminal(&f.message, 400)
        ));
    }
    if let Some(f) = &a.failure {
        out.push_str(&format!(
            "failure class {}: {}\n",
            f.class,
            for_terminal(&f.message, 400)
        ));
    }
    out.push_str(&format!("artifact: {path}\n"));
    out
}

/// Each suite's families, when any suite stores them (intelligence does).
fn family_table(a: &Artifact) -> Option<Table> {
    let mut t = table();
    t.set_header(vec![
        "suite",
        "family",
        "score (Wilson 95%)",
        "chance",
        "vs chance",
        "notes",
    ]);
    let mut any = false;
    for (name, s) in &a.suites {
        for f in crate::families::of(s) {
            any = true;
            t.add_row(vec![
                name.clone(),
                for_terminal(&f.family, 40),
                score_text(&f.score),
                f.chance_text(),
                for_terminal(&f.versus_chance, 40),
                f.notes(),
            ]);
        }
    }
    any.then_some(t)
}

/// The comparison table: candidates × suites, with each candidate's scoped verdict.
pub fn comparison(c: &crate::comparison::CandidateTable) -> String {
    let mut t = table();
    let mut header: Vec<String> = [
        "candidate",
        "model",
        "engine",
        "quant",
        "window",
        "hardware",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for s in &c.suites {
        header.push(format!("{s} (Wilson 95%)"));
    }
    header.push("runs".into());
    header.push("verdict (tested configuration)".into());
    t.set_header(header);
    for r in &c.rows {
        let mut row = vec![
            for_terminal(&r.slug, 80),
            for_terminal(&r.model, 60),
            for_terminal(&r.engine, 40),
            for_terminal(&r.quantization, 20),
            r.window.clone(),
            for_terminal(&r.hardware, 40),
        ];
        for s in &c.suites {
            row.push(match r.cells.get(s) {
                Some(cell) if cell.flags.is_empty() => cell.text.clone(),
                Some(cell) => format!("{} ⚑ {}", cell.text, cell.flags.join(", ")),
                None if r.runs == 0 && r.retracted > 0 => "retracted (not counted)".into(),
                None => match &r.failure {
                    Some(f) if r.cells.is_empty() => {
                        format!("FAILED — {}", for_terminal(f, 60))
                    }
                    _ => "-".into(),
                },
            });
        }
        row.push(r.evidence_text());
        row.push(for_terminal(&r.verdict_with_date(), 400));
        t.add_row(row);
    }
    t.to_string()
}

/// The dated superseded-claims table (retracted artifacts), or `None` when nothing is.
pub fn superseded(reg: &crate::registry::Registry) -> Option<String> {
    let mut t = table();
    t.set_header(vec![
        "retracted",
        "artifact",
        "claim (no longer counted)",
        "reason",
    ]);
    let mut any = false;
    for e in reg.retracted() {
        let Some(r) = &e.retraction else { continue };
        any = true;
        let claims: Vec<String> = r
            .claims
            .iter()
            .map(|c| format!("{}: {}", c.suite, c.claimed))
            .collect();
        t.add_row(vec![
            r.date.format("%Y-%m-%d").to_string(),
            e.name.clone(),
            claims.join("; "),
            for_terminal(&r.reason, 200),
        ]);
    }
    any.then(|| t.to_string())
}

/// Everything `bakeoff report` prints.
pub fn report(reg: &crate::registry::Registry) -> String {
    let c = crate::comparison::build(reg);
    let mut out = String::new();
    if c.rows.is_empty() {
        out.push_str(&format!(
            "no artifacts under {} (run `bakeoff eval run --out {}` first)\n",
            reg.dir.display(),
            reg.dir.display()
        ));
    } else {
        out.push_str(&comparison(&c));
        out.push('\n');
    }
    if let Some(s) = superseded(reg) {
        out.push_str("superseded claims (retracted; never counted above)\n");
        out.push_str(&s);
        out.push('\n');
    }
    for n in &reg.notes {
        out.push_str(&format!("note: {}\n", for_terminal(n, 400)));
    }
    if let Some(c) = &reg.campaign {
        out.push('\n');
        out.push_str(&crate::campaign::ladder_table(c));
    }
    out
}
