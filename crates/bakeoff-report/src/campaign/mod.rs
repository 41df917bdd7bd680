//! A campaign's renderings: the ladder tables (terminal and HTML), the believed cause of a
//! candidate's failures, and the campaign's `negative-results.md`.
//!
//! Everything in `campaign.json` — names, launch lines, deltas, messages, log lines — came from
//! a file and, through the seats, from engines: every renderer escapes it for its medium
//! ([`for_terminal`], [`for_html`](crate::escape::for_html),
//! [`for_markdown`](crate::escape::for_markdown)).

mod cause;
mod conditions;
mod negative;

use std::fmt::Write as _;

use bakeoff_artifact::StoreError;
use bakeoff_artifact::campaign::{
    CampaignRecord, CandidatePlan, IsolationRecord, OutcomeKind, VariantRow,
};

pub use cause::{BelievedCause, CauseClass, believed_cause};
pub use conditions::conditions_line;
pub use negative::negative_results;

pub mod isolation;

use crate::escape::{for_html as h, for_terminal};
use crate::table::{Grid, Kind, render};

/// One candidate of a record with its variants, in campaign order.
pub(crate) struct Group<'a> {
    pub name: &'a str,
    /// `None` for rows naming a candidate the record does not plan (a hand-edited file).
    pub plan: Option<&'a CandidatePlan>,
    pub rows: Vec<&'a VariantRow>,
    /// `--allow contaminated`: verdicts resting on contaminated variants are given.
    pub allow_contaminated: bool,
    /// What the candidate's isolation designed and concluded, when it has one.
    pub isolation: Option<&'a IsolationRecord>,
}

impl Group<'_> {
    /// The ladder's axes: the plan's, then any other flag a row carries, in order.
    pub fn flags(&self) -> Vec<&str> {
        let mut flags: Vec<&str> = self
            .plan
            .map(|p| p.axes.iter().map(|a| a.flag.as_str()).collect())
            .unwrap_or_default();
        for r in &self.rows {
            for a in &r.axes {
                if !flags.contains(&a.flag.as_str()) {
                    flags.push(&a.flag);
                }
            }
        }
        flags
    }

    /// Every variant completed (a candidate with no variant does not count as completed).
    pub fn all_completed(&self) -> bool {
        !self.rows.is_empty()
            && self
                .rows
                .iter()
                .all(|r| r.outcome.kind == OutcomeKind::Completed)
    }
}

/// The record's candidates in file order, each with its rows sorted by index; rows of a
/// candidate the record does not plan come last, grouped by name.
pub(crate) fn groups(rec: &CampaignRecord) -> Vec<Group<'_>> {
    let mut out: Vec<Group<'_>> = rec
        .candidates
        .iter()
        .map(|p| Group {
            name: &p.name,
            plan: Some(p),
            rows: Vec::new(),
            allow_contaminated: rec.allow_contaminated,
            isolation: rec.isolations.iter().find(|i| i.candidate == p.name),
        })
        .collect();
    for row in &rec.variants {
        match out.iter_mut().find(|g| g.name == row.candidate) {
            Some(g) => g.rows.push(row),
            None => out.push(Group {
                name: &row.candidate,
                plan: None,
                rows: vec![row],
                allow_contaminated: rec.allow_contaminated,
                isolation: None,
            }),
        }
    }
    for g in &mut out {
        g.rows.sort_by_key(|r| r.index);
    }
    out
}

/// Outcome kinds in the order counts are written.
const KIND_ORDER: [OutcomeKind; 7] = [
    OutcomeKind::Completed,
    OutcomeKind::Failed,
    OutcomeKind::DoesNotFit,
    OutcomeKind::Invalid,
    OutcomeKind::Interrupted,
    OutcomeKind::Skipped,
    OutcomeKind::Pending,
];

/// `2 completed, 1 failed, 1 skipped` (kinds with no variant left out).
pub(crate) fn counts<'a>(rows: impl IntoIterator<Item = &'a VariantRow>) -> String {
    let rows: Vec<&VariantRow> = rows.into_iter().collect();
    let parts: Vec<String> = KIND_ORDER
        .iter()
        .filter_map(|k| {
            let n = rows.iter().filter(|r| r.outcome.kind == *k).count();
            (n > 0).then(|| format!("{n} {}", k.as_str()))
        })
        .collect();
    if parts.is_empty() {
        "no variant".into()
    } else {
        parts.join(", ")
    }
}

/// A row's short figure, unescaped: its suites' scores (`smoke 5/5`) when it measured, else
/// what happened (the failure message, the skip's reason).
pub(crate) fn figure(row: &VariantRow) -> String {
    let k = row.outcome.kind;
    if matches!(k, OutcomeKind::Completed | OutcomeKind::Invalid) && !row.suites.is_empty() {
        let suites: Vec<String> = row
            .suites
            .iter()
            .map(|s| {
                let mut t = match &s.score {
                    Some(sc) => format!("{} {}/{}", s.suite, sc.successes, sc.n),
                    None => format!("{} {}", s.suite, s.status),
                };
                if !s.valid {
                    t.push_str(" (invalid)");
                }
                if !s.flags.is_empty() {
                    let flags = crate::families::distinct_flags(s.flags.iter().map(String::as_str));
                    let _ = write!(t, " ⚑ {}", flags.join(", "));
                }
                t
            })
            .collect();
        return suites.join(", ");
    }
    if !row.outcome.message.is_empty() {
        return row.outcome.message.clone();
    }
    match (k, &row.outcome.reason) {
        (OutcomeKind::Pending, _) => "-".into(),
        (OutcomeKind::Completed, _) => "no suites".into(),
        (_, Some(r)) => r.clone(),
        _ => "-".into(),
    }
}

/// `850 ms`, `12.5 s`, `3 min 05 s`, `1 h 02 min`.
pub(crate) fn duration(ms: u64) -> String {
    if ms < 1_000 {
        format!("{ms} ms")
    } else if ms < 60_000 {
        format!("{:.1} s", ms as f64 / 1000.0)
    } else if ms < 3_600_000 {
        let s = ms / 1000;
        format!("{} min {:02} s", s / 60, s % 60)
    } else {
        let m = ms / 60_000;
        format!("{} h {:02} min", m / 60, m % 60)
    }
}

/// From the start command to ready, or to the failure or the stop.
pub(crate) fn start_text(row: &VariantRow) -> String {
    match (row.outcome.kind, row.timings.start_ms) {
        (_, None) => "-".into(),
        (OutcomeKind::Completed | OutcomeKind::Invalid, Some(ms)) => duration(ms),
        (OutcomeKind::Interrupted, Some(ms)) => format!("stopped after {}", duration(ms)),
        (_, Some(ms)) => format!("failed after {}", duration(ms)),
    }
}

/// The production seats this variant's window took down, each with its downtime, unescaped.
pub(crate) fn downtime_text(row: &VariantRow) -> String {
    let parts: Vec<String> = row
        .displaced
        .iter()
        .filter(|d| d.was_up)
        .map(|d| match (d.restored, d.down_ms) {
            (Some(false), _) => format!("{} NOT RESTORED", d.seat),
            (_, Some(ms)) => format!("{} {}", d.seat, duration(ms)),
            (None, None) => format!("{} down (restore pending)", d.seat),
            (Some(true), None) => format!("{} restored", d.seat),
        })
        .collect();
    if !parts.is_empty() {
        return parts.join(", ");
    }
    row.timings
        .production_down_ms
        .map(duration)
        .unwrap_or_else(|| "-".into())
}

/// The container image of a launch line (`container NAME image IMAGE …`), when it has one.
pub(crate) fn image_of(launch: &str) -> Option<&str> {
    let mut words = launch.split_whitespace();
    while let Some(w) = words.next() {
        if w == "image" {
            return words.next();
        }
    }
    None
}

/// Why a file was not read, without its path (the reports name the file themselves).
pub(crate) fn store_reason(e: &StoreError) -> String {
    match e {
        StoreError::Read { source, .. } => format!("cannot read it ({source})"),
        StoreError::Parse { what, source, .. } => format!("not a bakeoff {what} ({source})"),
        StoreError::Version {
            what,
            found,
            expected,
            ..
        } => format!(
            "schema_version {found}; this bakeoff reads {what} version {expected} (upgrade bakeoff)"
        ),
        other => other.to_string(),
    }
}

/// A text whose code is marked with backtick pairs (as [`BelievedCause::text`] quotes flags),
/// rendered piece by piece: `plain` for the text between, `code` for the quoted parts. A text
/// with an odd number of backticks is all plain. Each piece is escaped by its renderer, so a
/// backtick inside a quoted value can only mis-split the text, never unescape it.
pub(crate) fn with_code(
    text: &str,
    plain: impl Fn(&str) -> String,
    code: impl Fn(&str) -> String,
) -> String {
    let pieces: Vec<&str> = text.split('`').collect();
    if pieces.len().is_multiple_of(2) {
        return plain(text);
    }
    pieces
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if i.is_multiple_of(2) {
                plain(p)
            } else {
                code(p)
            }
        })
        .collect()
}

/// `campaign NAME (FILE) — 4 variants: … — finished, updated …`, unescaped.
fn headline(rec: &CampaignRecord) -> String {
    format!(
        "campaign {} ({}) — {} variant(s) of {} candidate(s): {} — {}, updated {}",
        rec.name,
        rec.file,
        rec.variants.len(),
        groups(rec).len(),
        counts(&rec.variants),
        if rec.finished {
            "finished"
        } else {
            "in progress"
        },
        rec.updated_at.format("%Y-%m-%d %H:%M UTC")
    )
}

/// `seat S (ENGINE) — base: LAUNCH`, unescaped.
fn plan_line(g: &Group<'_>) -> String {
    match g.plan {
        Some(p) => {
            let mut s = format!("seat {} ({}) — base: {}", p.seat, p.engine, p.base);
            if let Some(n) = &p.note {
                let _ = write!(s, " — {n}");
            }
            s
        }
        None => "not in the record's candidate list".into(),
    }
}

/// The ladder tables for the terminal (`bakeoff campaign status DIR`, `bakeoff report DIR`):
/// one table per candidate, one row per variant, every cell escaped.
pub fn ladder_table(rec: &CampaignRecord) -> String {
    ladder_table_at(rec, None)
}

/// [`ladder_table`] laid out for `width` columns (`None`: [`crate::table::width`], from
/// `COLUMNS` or the terminal, else 120) — tests fix it so the layout does not depend on where
/// they run. Below 80 columns the start and downtime columns are left out.
pub fn ladder_table_at(rec: &CampaignRecord, width: Option<u16>) -> String {
    let width = width.unwrap_or_else(crate::table::width);
    let t = |s: &str| for_terminal(s, 200);
    let mut out = format!("{}\n", t(&headline(rec)));
    for g in groups(rec) {
        let _ = writeln!(out, "\ncandidate {} — {}", t(g.name), t(&plan_line(&g)));
        if g.rows.is_empty() {
            out.push_str("no variants\n");
            continue;
        }
        let flags = g.flags();
        let mut table = Grid::new();
        table
            .column("#", Kind::Number)
            .column("variant", Kind::Name(80));
        for f in &flags {
            table.column(for_terminal(f, 40), Kind::Number);
        }
        table
            .column("outcome", Kind::Number)
            .column("figure", Kind::Text)
            .secondary("start → ready", Kind::Number)
            .secondary("production down", Kind::Number);
        for r in &g.rows {
            let mut cells = vec![r.index.to_string(), for_terminal(&r.variant, 200)];
            cells.extend(
                flags
                    .iter()
                    .map(|f| for_terminal(r.axis(f).unwrap_or("-"), 40)),
            );
            cells.push(for_terminal(&r.outcome.label(), 60));
            cells.push(for_terminal(&figure(r), 70));
            cells.push(start_text(r));
            cells.push(for_terminal(&downtime_text(r), 120));
            table.row(cells);
        }
        let _ = writeln!(out, "{}", render(&table, width));
        // A variant measured under contaminated conditions is not silently compared with its
        // neighbours (docs/metrics.md "Conditions"): each is named under its ladder, with what contaminated it.
        for (variant, what) in g
            .rows
            .iter()
            .filter_map(|r| contaminated(r).map(|w| (r, w)))
        {
            let _ = writeln!(
                out,
                "contaminated: {} ({}): its figures are not comparable with a clean variant's; {}",
                for_terminal(&variant.variant, 200),
                for_terminal(&what, 300),
                verdict_note(variant, g.allow_contaminated)
            );
        }
        // The believed cause under its ladder, withheld or drawn: `campaign status` and
        // `report DIR` say the same (`--allow contaminated` included).
        if g.rows.iter().any(|r| cause::is_failure(r.outcome.kind)) {
            let cause = cause_of(&g);
            let _ = writeln!(out, "believed cause {}", for_terminal(&cause.text, 600));
        }
        if let Some(iso) = g.isolation {
            let _ = writeln!(out, "{}", for_terminal(&isolation::line(iso), 1200));
        }
    }
    for n in &rec.notes {
        let _ = writeln!(out, "note: {}", for_terminal(n, 400));
    }
    out
}

/// What a contaminated variant's suggested verdict became, for the ladder's `contaminated:`
/// line: withheld, or given under `--allow contaminated`.
fn verdict_note(r: &VariantRow, allow: bool) -> String {
    if !r.outcome.contention_could_cause() {
        return format!(
            "its failure ({}) is the engine's own statement, which contention cannot cause: its verdict stands",
            cause::short_label(r)
        );
    }
    match (allow, r.outcome.suggested_verdict()) {
        (false, Some(_)) => {
            "its suggested verdict is WITHHELD (rerun it on a quiet host, or pass --allow contaminated)"
                .into()
        }
        (true, Some(k)) => format!("suggested verdict {k}, given under --allow contaminated"),
        (_, None) => "its outcome suggests no verdict".into(),
    }
}

/// The believed cause of a candidate's failures, withheld (unless `--allow contaminated`)
/// when it rests on a failure contention could have caused, measured under contaminated
/// conditions (a timeout, `init-wedge`, an out-of-memory, an invalid measurement): evidence
/// the ladder cannot weigh. A completion and a failure the engine stated in its own words
/// (`bad-argument`, `context-too-long`, …) count whatever the host did.
pub(crate) fn cause_of(g: &Group<'_>) -> BelievedCause {
    if !g.allow_contaminated {
        let tainted: Vec<String> = g
            .rows
            .iter()
            // Contention can make a configuration fail or slow, never make it complete: a
            // completion is evidence of a pass whatever the host did (its figures are what
            // is withheld, with its verdict), and so is a failure the engine stated in its
            // own words. Only a failure contention could have caused withholds the cause.
            .filter(|r| cause::is_failure(r.outcome.kind) && r.outcome.contention_could_cause())
            .filter_map(|r| contaminated(r).map(|w| format!("`{}` ({w})", r.variant)))
            .collect();
        if !tainted.is_empty() {
            return BelievedCause {
                class: CauseClass::Withheld,
                text: format!(
                    "withheld: it rests on contaminated variant(s) {}; rerun them on a quiet host, or pass `--allow contaminated`",
                    tainted.join(", ")
                ),
            };
        }
    }
    // An isolation that named its factor says it with its two probes; otherwise the ladder's
    // own evidence (a budget that ran out is "not isolated", never a guess).
    if let Some(iso) = g.isolation {
        use bakeoff_artifact::campaign::IsolationStatus as S;
        match iso.status {
            S::Isolated | S::ProvenUnfit => {
                if let Some(f) = isolation::factor(iso) {
                    let class =
                        if f.starts_with("engine support") || f.starts_with("the engine build") {
                            CauseClass::EngineSupport
                        } else if iso.status == S::ProvenUnfit {
                            CauseClass::Resources
                        } else {
                            CauseClass::ConfigSpecific
                        };
                    return BelievedCause {
                        text: format!("{}: {f}", class.as_str()),
                        class,
                    };
                }
            }
            S::NotIsolated => {
                let mut b = believed_cause(&g.rows);
                b.text = format!("{}; isolation: {}", b.text, iso.summary);
                return b;
            }
            S::InProgress => {}
        }
    }
    believed_cause(&g.rows)
}

/// What contaminated a variant's measurement (`code during seat load, code during suite, …`):
/// its recorded conditions, else its suites' condition flags; `None` when clean.
pub(crate) fn contaminated(r: &VariantRow) -> Option<String> {
    if let Some(c) = &r.conditions {
        return c.contamination();
    }
    let found: Vec<String> = r
        .suites
        .iter()
        .flat_map(|s| {
            s.flags.iter().filter_map(move |f| {
                let code = f.rsplit(':').next().unwrap_or(f);
                bakeoff_artifact::CONDITION_CODES
                    .iter()
                    .any(|c| c.as_str() == code)
                    .then(|| format!("{}: {code}", s.suite))
            })
        })
        .collect();
    (!found.is_empty()).then(|| found.join(", "))
}

/// The CSS class of an outcome cell (the HTML report's existing classes).
fn outcome_class(k: OutcomeKind) -> &'static str {
    match k {
        OutcomeKind::Completed => "",
        OutcomeKind::Failed | OutcomeKind::DoesNotFit | OutcomeKind::Invalid => " class=\"failed\"",
        OutcomeKind::Interrupted | OutcomeKind::Skipped | OutcomeKind::Pending => {
            " class=\"v-none\""
        }
    }
}

/// The campaign's ladder tables for the HTML report, every byte from the record escaped.
pub fn html_section(rec: &CampaignRecord) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<h2 id=\"campaign\">Campaign {}</h2><p class=\"muted\">{}. Outcomes state what happened to each tested configuration, never a judgement of the model.</p>",
        h(&rec.name),
        h(&headline(rec))
    );
    for g in groups(rec) {
        let _ = write!(
            out,
            "<h3>{}</h3><p class=\"muted\">{}</p>",
            h(g.name),
            h(&plan_line(&g))
        );
        if g.rows.is_empty() {
            out.push_str("<p>No variants.</p>");
            continue;
        }
        let flags = g.flags();
        out.push_str("<table class=\"campaign\"><thead><tr><th>#</th><th>variant</th>");
        for f in &flags {
            let _ = write!(out, "<th>{}</th>", h(f));
        }
        out.push_str("<th>outcome</th><th>figure</th><th>start → ready</th><th>production down</th></tr></thead><tbody>");
        for r in &g.rows {
            // A contaminated variant is marked where it is named, as contaminated steps and
            // suites are, with what contaminated it on hover.
            let mark = contaminated(r).map_or(String::new(), |w| {
                format!(
                    " <span class=\"flag contaminated\" title=\"{}\"><strong>CONTAMINATED</strong></span>",
                    h(&w)
                )
            });
            let _ = write!(
                out,
                "<tr><td class=\"num\">{}</td><td><code>{}</code>{mark}</td>",
                r.index,
                h(&r.variant)
            );
            for f in &flags {
                let _ = write!(out, "<td>{}</td>", h(r.axis(f).unwrap_or("-")));
            }
            let _ = write!(
                out,
                "<td{}>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
                outcome_class(r.outcome.kind),
                h(&r.outcome.label()),
                h(&bakeoff_term::escape::cut_and_map(
                    &figure(r),
                    200,
                    |c, o| { o.push(c) }
                )),
                h(&start_text(r)),
                h(&downtime_text(r))
            );
        }
        out.push_str("</tbody></table>");
        if g.rows.iter().any(|r| cause::is_failure(r.outcome.kind)) {
            let cause = cause_of(&g);
            let _ = write!(
                out,
                "<p>Believed cause class: {}</p>",
                with_code(&cause.text, h, |c| format!("<code>{}</code>", h(c)))
            );
        }
    }
    if !rec.notes.is_empty() {
        out.push_str("<ul class=\"campaign-notes\">");
        for n in &rec.notes {
            let _ = write!(out, "<li>{}</li>", h(n));
        }
        out.push_str("</ul>");
    }
    out
}
