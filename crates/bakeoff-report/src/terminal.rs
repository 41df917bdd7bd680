//! Human tables for the terminal.

use crate::escape::for_terminal;
use crate::families::FamilyText;
pub use crate::score::score_text;
use crate::table::{Grid, Kind, render, width};
use bakeoff_artifact::{
    Artifact, ArtifactKind, EndpointFacts, EngineKind, FailureClass, PreflightReport, SuiteStatus,
    SuiteSummary,
};

/// A suite's outcome counts, as `outcome count` joined by `, `.
pub(crate) fn outcomes_text(s: &SuiteSummary) -> String {
    let outcomes: Vec<String> = s.outcomes.iter().map(|(k, v)| format!("{k} {v}")).collect();
    outcomes.join(", ")
}

/// Why an endpoint is unfit, as the terminal shows it: the failure class and the fix (the same
/// class and remediation the failure artifact records).
#[derive(Debug, Clone, Copy)]
pub struct UnfitView<'a> {
    pub class: FailureClass,
    pub remediation: Option<&'a str>,
}

/// An `https://` endpoint's certificate and how it was checked, in one line.
fn tls_text(tls: &bakeoff_artifact::TlsFact) -> String {
    use bakeoff_artifact::TlsVerification as V;
    let how = match tls.verification {
        V::SystemRoots => "verified against the system's roots".to_string(),
        V::CaCert => format!(
            "verified against --ca-cert {}",
            tls.ca_cert.as_deref().unwrap_or("?")
        ),
        V::Insecure => "NOT VERIFIED (--insecure)".to_string(),
    };
    match (&tls.certificate, &tls.error) {
        (Some(c), _) => format!(
            "{}, expires {}; {how}",
            for_terminal(&c.subject, 120),
            c.not_after.format("%Y-%m-%d %H:%M UTC")
        ),
        (None, Some(e)) => format!("{}; {how}", for_terminal(e, 300)),
        (None, None) => how,
    }
}

/// The preflight verdict and what discovery found.
pub fn preflight(
    report: &PreflightReport,
    facts: &EndpointFacts,
    url: &str,
    unfit: Option<UnfitView<'_>>,
) -> String {
    preflight_at(report, facts, url, unfit, width())
}

/// [`preflight`] laid out for `width` columns.
pub fn preflight_at(
    report: &PreflightReport,
    facts: &EndpointFacts,
    url: &str,
    unfit: Option<UnfitView<'_>>,
    width: u16,
) -> String {
    // Control calls refused for want of credentials: discovery could not look, so "generic"
    // and "none listed" would be findings it never made.
    let refused = facts.refused_text();
    let mut t = Grid::new();
    t.column("preflight", Kind::Number)
        .column("value", Kind::Text);
    t.row(vec!["endpoint".to_string(), url.to_string()]);
    if let Some(tls) = &facts.tls {
        t.row(vec!["tls".to_string(), tls_text(tls)]);
    }
    t.row(vec![
        "verdict".to_string(),
        if report.fit {
            "FIT".into()
        } else {
            "UNFIT".into()
        },
    ]);
    t.row(vec![
        "engine".to_string(),
        engine_text(facts, refused.as_deref()),
    ]);
    t.row(vec!["served models".to_string(), served_text(facts)]);
    t.row(vec![
        "model".to_string(),
        report
            .model
            .clone()
            .map(|m| for_terminal(&m, 80))
            .unwrap_or_else(|| "-".into()),
    ]);
    t.row(vec![
        "context window".to_string(),
        match facts.context_window.tokens {
            Some(n) => format!("{n} tokens (source: {})", facts.context_window.source),
            None => "unknown (suites that need it will refuse; give --max-model-len)".into(),
        },
    ]);
    if let Some(tc) = facts.trained_context {
        t.row(vec![
            "trained context".to_string(),
            format!("{tc} (recorded, not the window)"),
        ]);
    }
    t.row(vec![
        "tokenizer route".to_string(),
        report.tokenizer_route.clone(),
    ]);
    t.row(vec![
        "chat template".to_string(),
        match &facts.chat_template {
            Some(c) => format!(
                "sha256 {} ({} lines, {})",
                c.fingerprint.short, c.fingerprint.lines, c.source
            ),
            None => "not exposed by the server".into(),
        },
    ]);
    t.row(vec!["ready".to_string(), ready_text(report)]);
    if let Some(tc) = &facts.tool_calls {
        t.row(vec!["tool calls".to_string(), tool_calls_text(tc)]);
    }
    for r in &report.reasons {
        t.row(vec!["UNFIT because".to_string(), for_terminal(r, 400)]);
    }
    if let Some(u) = unfit {
        t.row(vec!["failure class".to_string(), u.class.to_string()]);
        if let Some(fix) = u.remediation {
            t.row(vec!["fix".to_string(), for_terminal(fix, 400)]);
        }
    }
    for f in &report.flags {
        t.row(vec![
            format!("flag {}", f.code),
            for_terminal(&f.message, 400),
        ]);
    }
    render(&t, width)
}

/// The engine and its version, or why discovery could not tell.
fn engine_text(facts: &EndpointFacts, refused: Option<&str>) -> String {
    match (refused, facts.engine, &facts.engine_version) {
        (Some(r), EngineKind::Generic, None) => format!("unknown ({r})"),
        _ => format!(
            "{} {}",
            facts.engine,
            facts
                .engine_version
                .clone()
                .unwrap_or_else(|| "(version unknown)".into())
        ),
    }
}

/// The served model ids (escaped: the server chose them), or why there are none.
fn served_text(facts: &EndpointFacts) -> String {
    let served: Vec<String> = facts
        .models
        .iter()
        .map(|m| for_terminal(&m.id, 80))
        .collect();
    if served.is_empty() && facts.models_refused() {
        "unknown (/v1/models refused the credentials)".into()
    } else if served.is_empty() {
        "none listed".into()
    } else {
        served.join(", ")
    }
}

/// Whether the readiness probe's real completion came back, after how long, and its reply.
fn ready_text(report: &PreflightReport) -> String {
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
    )
}

/// Preflight's tool probe in one line: accepted, or refused with the server's words and the fix.
pub fn tool_calls_text(tc: &bakeoff_artifact::ToolCallFact) -> String {
    use bakeoff_artifact::ToolCallState;
    let said = tc
        .server_said
        .as_deref()
        .map(|m| for_terminal(m, 200))
        .unwrap_or_default();
    match tc.state {
        ToolCallState::Accepted => "accepted (a request offering a tool was answered)".into(),
        ToolCallState::Refused => format!(
            "REFUSED (HTTP {}: {said}); fix: {}",
            tc.http_status.unwrap_or(0),
            tc.fix
                .as_deref()
                .unwrap_or("enable tool calling on the server")
        ),
        ToolCallState::Unknown => format!("not known ({said})"),
    }
}

/// The per-suite summary of a run.
/// A suite whose conditions carry a finding (host-contended, gpu-shared, …).
pub fn contaminated(s: &bakeoff_artifact::SuiteSummary) -> bool {
    s.conditions
        .as_ref()
        .is_some_and(bakeoff_artifact::Conditions::contaminated)
}

pub fn run_summary(a: &Artifact, path: &str) -> String {
    run_summary_at(a, path, width())
}

/// [`run_summary`] laid out for `width` columns.
pub fn run_summary_at(a: &Artifact, path: &str, width: u16) -> String {
    // A damage or adapter figure is a KL with its bootstrap interval, not a Wilson score: the
    // column says what it holds.
    let figures = a
        .suites
        .keys()
        .any(|n| n == crate::damage::SUITE || n == crate::adapter::SUITE);
    let mut t = Grid::new();
    t.column("suite", Kind::Name(40))
        .column("status", Kind::Text)
        .column(
            if figures {
                "figure (95% interval)"
            } else {
                "score (Wilson 95%)"
            },
            Kind::Number,
        )
        .secondary("outcomes", Kind::Text)
        .column("flags", Kind::Words);
    for (name, s) in &a.suites {
        let flags =
            crate::families::distinct_flags(s.summary.flags.iter().map(|f| f.code.as_str()));
        t.row(vec![
            for_terminal(name, 200),
            format!(
                "{}{}",
                match s.status {
                    SuiteStatus::Complete => "complete",
                    SuiteStatus::Incomplete => "INCOMPLETE",
                    SuiteStatus::Failed => "FAILED (measured nothing)",
                },
                // docs/metrics.md "Conditions": the evidence is in the flags and the artifact.
                if contaminated(&s.summary) {
                    ", CONTAMINATED"
                } else {
                    ""
                }
            ),
            crate::refusal::cell_text(name, s)
                .or_else(|| crate::structured::cell_text(name, s))
                .or_else(|| crate::damage::cell_text(name, s))
                .or_else(|| crate::adapter::cell_text(name, s))
                .unwrap_or_else(|| score_text(&s.summary.score)),
            outcomes_text(&s.summary),
            flags.join(", "),
        ]);
    }
    // A failure measured nothing: no suite table (an empty one under "complete" reads as a
    // finished run), and the head says so.
    let measured_nothing = a.kind == ArtifactKind::Failure && a.suites.is_empty();
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
            _ if measured_nothing => "not measured".to_string(),
            bakeoff_artifact::RunStatus::Complete => "complete".to_string(),
            bakeoff_artifact::RunStatus::Incomplete => format!(
                "INCOMPLETE: {}",
                a.incomplete_reason.clone().unwrap_or_default()
            ),
        }
    );
    let mut out = if measured_nothing {
        format!("{head}\n")
    } else {
        format!("{head}\n{}\n", render(&t, width))
    };
    if let Some(ft) = family_table(a, width) {
        out.push_str(&format!(
            "per family (Wilson 95%; a family below chance is flagged):\n{ft}\n"
        ));
    }
    for (name, s) in &a.suites {
        out.extend(crate::refusal::terminal_lines(name, s));
        out.extend(crate::structured::terminal_lines(name, s));
        out.extend(crate::damage::terminal_lines(name, s));
        // Why a suite measured nothing, with its fix, under the table (not only in its items).
        if s.status == SuiteStatus::Failed {
            for f in s.summary.flags.iter().filter(|f| f.code.is_refusal()) {
                out.push_str(&format!(
                    "{} FAILED: {}\n",
                    for_terminal(name, 40),
                    for_terminal(&f.message, 400)
                ));
            }
        }
    }
    run_tail(a, &mut out);
    out.push_str(&format!("artifact: {path}\n"));
    out
}

/// The lines at the end of a run's summary: its instrument flags, the parts of it that did not
/// read as their suite's shape (left out above), and its failure with the fix.
fn run_tail(a: &Artifact, out: &mut String) {
    for f in &a.instrument_flags {
        out.push_str(&format!(
            "flag {}: {}\n",
            f.code,
            for_terminal(&f.message, 400)
        ));
    }
    for u in crate::read::of_artifact(a) {
        out.push_str(&format!("note: {}\n", for_terminal(&u.to_string(), 400)));
    }
    if let Some(f) = &a.failure {
        out.push_str(&format!(
            "failure class {}: {}\n",
            f.class,
            for_terminal(&f.message, 400)
        ));
        if let Some(fix) = &f.remediation {
            out.push_str(&format!("fix: {}\n", for_terminal(fix, 400)));
        }
    }
}

/// Each suite's families, when any suite stores them (intelligence does).
fn family_table(a: &Artifact, width: u16) -> Option<String> {
    let mut t = Grid::new();
    t.secondary("suite", Kind::Name(40))
        .column("family", Kind::Name(40))
        .column("score (Wilson 95%)", Kind::Number)
        .column("chance", Kind::Number)
        .column("vs chance", Kind::Text)
        .secondary("notes", Kind::Text);
    let mut any = false;
    for (name, s) in &a.suites {
        for f in crate::families::of(name, s) {
            any = true;
            t.row(vec![
                for_terminal(name, 200),
                for_terminal(&f.family, 40),
                score_text(&f.score),
                f.chance_text(),
                for_terminal(&f.versus_chance, 40),
                f.notes(),
            ]);
        }
    }
    any.then(|| render(&t, width))
}

/// The comparison table: candidates × suites, with each candidate's scoped verdict.
pub fn comparison(c: &crate::comparison::CandidateTable) -> String {
    comparison_at(c, width())
}

/// [`comparison`] laid out for `width` columns: below 80 columns without the engine, quant,
/// window, hardware and bench columns.
pub fn comparison_at(c: &crate::comparison::CandidateTable, width: u16) -> String {
    let mut t = Grid::new();
    t.column("candidate", Kind::Name(60))
        .column("model", Kind::Name(40))
        .secondary("engine", Kind::Words)
        .secondary("quant", Kind::Name(20))
        .secondary("window (tokens)", Kind::Number)
        .secondary("hardware", Kind::Text);
    for s in &c.suites {
        t.column(format!("{s} (Wilson 95%)"), Kind::Number);
    }
    let bench = c.has_bench();
    if bench {
        for h in crate::comparison::BENCH_HEADERS {
            t.secondary(h, Kind::Number);
        }
    }
    t.column("runs", Kind::Number)
        .column("verdict (tested configuration)", Kind::Text);
    for r in &c.rows {
        let mut row = vec![
            for_terminal(&r.slug, 200),
            for_terminal(&r.model, 60),
            for_terminal(&r.engine_text(), 40),
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
        if bench {
            match &r.bench {
                Some(b) => {
                    let marks = b.marks();
                    let peak = if marks.is_empty() {
                        b.peak_text()
                    } else {
                        format!("{} ⚑ {}", b.peak_text(), marks.join(", "))
                    };
                    row.extend([peak, b.ttft_text(), b.tpot_text()]);
                }
                None => row.extend(["-".to_string(), "-".into(), "-".into()]),
            }
        }
        row.push(r.evidence_text());
        row.push(for_terminal(&r.verdict_with_date(), 400));
        t.row(row);
    }
    render(&t, width)
}

/// The dated superseded-claims table (retracted artifacts), or `None` when nothing is.
pub fn superseded(reg: &crate::registry::Registry) -> Option<String> {
    superseded_at(reg, width())
}

/// [`superseded`] laid out for `width` columns.
pub fn superseded_at(reg: &crate::registry::Registry, width: u16) -> Option<String> {
    let mut t = Grid::new();
    t.column("retracted", Kind::Number)
        .column("artifact", Kind::Name(60))
        .column("claim (no longer counted)", Kind::Number)
        .column("reason", Kind::Text);
    let mut any = false;
    for e in reg.retracted() {
        let Some(r) = &e.retraction else { continue };
        any = true;
        let claims: Vec<String> = r
            .claims
            .iter()
            .map(|c| format!("{}: {}", c.suite, c.claimed))
            .collect();
        t.row(vec![
            r.date.format("%Y-%m-%d").to_string(),
            for_terminal(&e.name, 200),
            claims.join("; "),
            for_terminal(&r.reason, 200),
        ]);
    }
    any.then(|| render(&t, width))
}

/// Everything `bakeoff report` prints.
pub fn report(reg: &crate::registry::Registry) -> String {
    report_at(reg, width())
}

/// [`report`] laid out for `width` columns.
pub fn report_at(reg: &crate::registry::Registry, width: u16) -> String {
    let c = crate::comparison::build(reg);
    let mut out = String::new();
    if c.rows.is_empty() && !reg.monitors.is_empty() {
        // A seat monitor's directory: its summary below is the report.
    } else if c.rows.is_empty() {
        out.push_str(&format!(
            "no artifacts under {} (run `bakeoff eval run --out {}` first)\n",
            reg.dir.display(),
            reg.dir.display()
        ));
    } else {
        out.push_str(&comparison_at(&c, width));
        out.push('\n');
    }
    if let Some(s) = superseded_at(reg, width) {
        out.push_str("superseded claims (retracted; never counted above)\n");
        out.push_str(&s);
        out.push('\n');
    }
    for n in reg.notes.iter().chain(&reg.unread()) {
        out.push_str(&format!("note: {}\n", for_terminal(n, 400)));
    }
    if let Some(c) = &reg.campaign {
        out.push('\n');
        out.push_str(&crate::campaign::ladder_table_at(c, Some(width)));
    }
    out.push_str(&crate::monitor::terminal_runs(&reg.monitors, width));
    out
}
