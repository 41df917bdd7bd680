//! The HTML report: one self-contained file that needs no network — inline CSS, inline SVG
//! charts, no script at all, and a Content-Security-Policy that forbids loading anything.
//!
//! Model output is untrusted: every byte an endpoint sent goes through [`for_html`] before it
//! reaches the page, so a reply containing `<script>` is shown as text.

use std::fmt::Write as _;

use bakeoff_artifact::{ArtifactKind, ItemRecord, SuiteResult, SuiteStatus};

use crate::comparison::{self, CandidateTable};
use crate::escape::for_html as h;
use crate::families::FamilyText;
use crate::registry::{Entry, Registry};
use crate::steps::steps_of;
use crate::svg;

mod figures;
mod levels;

use figures::num;
pub use levels::shared_words;
use levels::{charts, level_table};

const STYLE: &str = r#"
body{font-family:system-ui,-apple-system,"DejaVu Sans",sans-serif;margin:24px;color:#111;max-width:1400px}
h1{font-size:22px;margin-bottom:4px} h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ccc}
h3{font-size:15px} .muted{color:#666;font-size:13px}
table{border-collapse:collapse;font-size:13px;margin:8px 0}
th,td{border:1px solid #ccc;padding:4px 8px;vertical-align:top;text-align:left}
th{background:#f3f3f3} td.num{white-space:nowrap}
.v-accept{background:#d9f2d9} .v-reject{background:#f8d7d7} .v-watch{background:#fff3cd}
.v-nee{background:#e2e3f3} .v-none{color:#666}
.flag{display:inline-block;background:#fff3cd;border:1px solid #e0c36a;border-radius:3px;padding:0 4px;margin:1px;font-size:11px}
.failed{color:#a00;font-weight:bold}
pre{white-space:pre-wrap;word-break:break-word;margin:0;font-size:12px;max-height:240px;overflow:auto;background:#fafafa}
details{margin:6px 0} summary{cursor:pointer;font-weight:600}
.charts{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}
.retracted{text-decoration:line-through;color:#777}
"#;

fn verdict_class(r: &comparison::Row) -> &'static str {
    use crate::evidence::VerdictKind::*;
    match r.verdict {
        Some(Accept) => "v-accept",
        Some(RejectUnderTestedConfiguration) => "v-reject",
        Some(Watch) => "v-watch",
        Some(NotEnoughEvidence) => "v-nee",
        None => "v-none",
    }
}

fn summary_table(out: &mut String, c: &CandidateTable) {
    out.push_str("<table id=\"summary\"><thead><tr><th>candidate</th><th>model</th><th>engine</th><th>quant</th><th>window</th><th>hardware</th>");
    for s in &c.suites {
        let _ = write!(out, "<th>{} (Wilson 95%)</th>", h(s));
    }
    let bench = c.has_bench();
    if bench {
        for b in comparison::BENCH_HEADERS {
            let _ = write!(out, "<th>{}</th>", h(b));
        }
    }
    out.push_str("<th>runs</th><th>verdict (tested configuration)</th></tr></thead><tbody>");
    for r in &c.rows {
        let _ = write!(
            out,
            "<tr><td><a href=\"#cand-{slug}\">{slug}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
            h(&r.model),
            h(&r.engine_text()),
            h(&r.quantization),
            h(&r.window),
            h(&r.hardware),
            slug = h(&r.slug)
        );
        for s in &c.suites {
            match r.cells.get(s) {
                Some(cell) => {
                    let cls = if cell.status == SuiteStatus::Failed {
                        " class=\"failed\""
                    } else {
                        ""
                    };
                    let _ = write!(out, "<td{cls}>{}", h(&cell.text));
                    for f in &cell.flags {
                        let _ = write!(out, " <span class=\"flag\">{}</span>", h(f));
                    }
                    out.push_str("</td>");
                }
                None if r.runs == 0 && r.retracted > 0 => {
                    out.push_str("<td class=\"retracted\">retracted (not counted)</td>");
                }
                None if r.cells.is_empty() && r.failure.is_some() => {
                    let _ = write!(
                        out,
                        "<td class=\"failed\">FAILED{}</td>",
                        r.failure
                            .as_ref()
                            .map(|f| format!(" — {}", h(f)))
                            .unwrap_or_default()
                    );
                }
                None => out.push_str("<td>-</td>"),
            }
        }
        if bench {
            match &r.bench {
                Some(b) => {
                    // The peak is the capacity finding's; what the sweep cannot vouch for
                    // (unstable levels, contaminated steps) is marked beside it.
                    let _ = write!(out, "<td class=\"num bench\">{}", h(&b.peak_text()));
                    for m in b.marks() {
                        let _ = write!(out, " <span class=\"flag\">{}</span>", h(&m));
                    }
                    out.push_str("</td>");
                    for t in [b.ttft_text(), b.tpot_text()] {
                        let _ = write!(out, "<td class=\"num bench\">{}</td>", h(&t));
                    }
                }
                None => out.push_str("<td>-</td><td>-</td><td>-</td>"),
            }
        }
        let _ = write!(
            out,
            "<td>{}</td><td class=\"{}\">{}{}</td></tr>",
            h(&r.evidence_text()),
            verdict_class(r),
            h(&r.verdict_text()),
            match (&r.verdict_date, &r.verdict_reason) {
                (Some(d), Some(why)) => format!(
                    "<br><span class=\"muted\">{} — {}</span>{}",
                    h(d),
                    h(why),
                    r.verdict_caveats
                        .iter()
                        .map(|c| format!("<br><strong>⚠ {}</strong>", h(c)))
                        .collect::<String>()
                ),
                _ => String::new(),
            }
        );
    }
    out.push_str("</tbody></table>");
}

/// A score's Wilson interval drawn on a 0–100 % bar (empty when not scored).
fn score_bar(score: &Option<bakeoff_artifact::Score>) -> String {
    score
        .as_ref()
        .map(|sc| svg::interval_bar(sc.estimate, sc.low, sc.high))
        .unwrap_or_default()
}

/// Each suite's score per counted candidate and, under it, the per-family figures when the
/// suite stores them.
fn suite_scores(out: &mut String, reg: &Registry, c: &CandidateTable) {
    // A directory of bench runs only has no suite to score: no empty section.
    if c.suites.is_empty() {
        return;
    }
    out.push_str("<h2 id=\"scores\">Per-suite scores with intervals</h2>");
    let scored: Vec<(String, f64, f64, f64)> = c
        .suites
        .iter()
        .flat_map(|s| {
            reg.counted().filter_map(move |e| {
                let sc = e.artifact.suites.get(s)?.summary.score.as_ref()?;
                Some((
                    format!(
                        "{} {s} · {}",
                        e.artifact.candidate.slug,
                        e.artifact.created_at.format("%Y-%m-%d %H:%M")
                    ),
                    sc.estimate,
                    sc.low,
                    sc.high,
                ))
            })
        })
        .collect();
    if !scored.is_empty() {
        out.push_str(&svg::score_chart(
            "Per-suite scores (Wilson 95% intervals)",
            &scored,
        ));
    }
    for s in &c.suites {
        let _ = write!(
            out,
            "<h3>{}</h3><table><thead><tr><th>candidate</th><th>artifact</th><th>score</th><th>interval (0–100%)</th><th>outcomes</th><th>flags</th></tr></thead><tbody>",
            h(s)
        );
        let mut families = String::new();
        let mut refusals = String::new();
        for e in reg.counted() {
            let Some(sr) = e.artifact.suites.get(s) else {
                continue;
            };
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>",
                h(&e.artifact.candidate.slug),
                h(&e.name),
                h(&crate::refusal::cell_text(s, sr)
                    .or_else(|| crate::structured::cell_text(s, sr))
                    .or_else(|| crate::damage::cell_text(s, sr))
                    .or_else(|| crate::adapter::cell_text(s, sr))
                    .unwrap_or_else(|| crate::score::score_text(&sr.summary.score))),
                score_bar(&sr.summary.score),
                h(&crate::terminal::outcomes_text(&sr.summary))
            );
            if let Some(c) = sr.summary.conditions.as_ref().filter(|c| c.contaminated()) {
                // docs/metrics.md "Conditions": the run shared its machine; say so first.
                let why: Vec<String> = c
                    .findings
                    .iter()
                    .map(|f| format!("{}: {}", f.code, f.message))
                    .collect();
                let _ = write!(
                    out,
                    "<span class=\"flag contaminated\" title=\"{}\"><strong>CONTAMINATED</strong></span> ",
                    h(&why.join("; "))
                );
            }
            for f in &sr.summary.flags {
                let _ = write!(
                    out,
                    "<span class=\"flag\" title=\"{}\">{}</span>",
                    h(&f.message),
                    h(f.code.as_str())
                );
            }
            out.push_str("</td></tr>");
            refusals.extend(crate::refusal::html_section(
                &e.artifact.candidate.slug,
                s,
                sr,
            ));
            refusals.extend(crate::structured::html_section(
                &e.artifact.candidate.slug,
                s,
                sr,
            ));
            // The damage suite's figures and per-prompt table go in the same place.
            refusals.extend(crate::damage::html_section(
                &e.artifact.candidate.slug,
                s,
                sr,
            ));
            for f in crate::families::of(s, sr) {
                let _ = write!(
                    families,
                    "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>",
                    h(&e.artifact.candidate.slug),
                    h(&f.family),
                    h(&crate::score::score_text(&f.score)),
                    score_bar(&f.score),
                    h(&f.chance_text()),
                    h(&f.versus_chance),
                    h(&f.notes())
                );
            }
        }
        out.push_str("</tbody></table>");
        out.push_str(&refusals);
        if !families.is_empty() {
            let _ = write!(
                out,
                "<table class=\"families\"><thead><tr><th>candidate</th><th>family</th><th>score</th><th>interval (0–100%)</th><th>chance</th><th>vs chance</th><th>notes</th></tr></thead><tbody>{families}</tbody></table>"
            );
        }
    }
}

fn item_row(out: &mut String, it: &ItemRecord) {
    let usage = it.response.usage.as_ref();
    let _ = write!(
        out,
        "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td><pre>{}</pre>",
        h(&it.id),
        h(it.outcome.as_str()),
        h(it.check.as_deref().unwrap_or("")),
        num(it.latency.ttft_ms),
        num(Some(it.latency.e2e_ms)),
        usage
            .and_then(|u| u.completion_tokens)
            .map(|t| t.to_string())
            .unwrap_or_else(|| "-".into()),
        h(it.response.finish_reason.as_deref().unwrap_or("-")),
        h(&it.response.content)
    );
    if !it.response.reasoning.is_empty() {
        let _ = write!(
            out,
            "<details><summary>reasoning</summary><pre>{}</pre></details>",
            h(&it.response.reasoning)
        );
    }
    out.push_str("</td><td>");
    if let Some(e) = &it.error {
        let _ = write!(out, "{}: {}", h(&e.kind), h(&e.message));
        if let Some(b) = &e.body {
            let _ = write!(out, "<pre>{}</pre>", h(b));
        }
    }
    out.push_str("</td></tr>");
}

fn suite_details(out: &mut String, name: &str, s: &SuiteResult) {
    let _ = write!(
        out,
        "<details class=\"suite\"><summary>{} — {} — {} items</summary>",
        h(name),
        h(&crate::score::score_text(&s.summary.score)),
        s.items.len()
    );
    let steps = steps_of(name, s);
    if !steps.is_empty() {
        level_table(out, &steps);
    }
    out.push_str("<table><thead><tr><th>item</th><th>outcome</th><th>check</th><th>TTFT ms</th><th>E2E ms</th><th>tokens</th><th>finish</th><th>reply (untrusted, escaped)</th><th>error</th></tr></thead><tbody>");
    for it in &s.items {
        item_row(out, it);
    }
    out.push_str("</tbody></table></details>");
}

fn drill_down(out: &mut String, reg: &Registry) {
    out.push_str("<h2 id=\"items\">Per-item drill-down</h2>");
    let mut last_slug = String::new();
    for e in &reg.entries {
        let a = &e.artifact;
        if a.candidate.slug != last_slug {
            let _ = write!(
                out,
                "<h3 id=\"cand-{s}\">{s}</h3>",
                s = h(&a.candidate.slug)
            );
            last_slug = a.candidate.slug.clone();
        }
        let _ = write!(
            out,
            "<div class=\"artifact{}\"><p><code>{}</code> — {} — {} {}{}</p>",
            if e.is_retracted() { " retracted" } else { "" },
            h(&e.name),
            match a.kind {
                ArtifactKind::Bakeoff => "bakeoff",
                ArtifactKind::Failure => "FAILURE",
            },
            h(&a.candidate.engine.to_string()),
            h(a.candidate.engine_version.as_deref().unwrap_or("")),
            if e.is_retracted() {
                " — RETRACTED, not counted"
            } else {
                ""
            }
        );
        if let Some(f) = &a.failure {
            let _ = write!(
                out,
                "<p class=\"failed\">{}: {}</p><ul>",
                h(&f.class.to_string()),
                h(&f.message)
            );
            for ev in &f.evidence {
                let _ = write!(out, "<li>{}: {}</li>", h(&ev.what), h(&ev.detail));
            }
            out.push_str("</ul>");
        }
        for (name, s) in &a.suites {
            suite_details(out, name, s);
        }
        out.push_str("</div>");
    }
}

/// `bakeoff eval compare` over the two newest counted measured runs of each candidate that has
/// two: the paired table, and the verdict or why there is none.
fn comparisons(out: &mut String, reg: &Registry) {
    let mut body = String::new();
    for slug in reg.slugs() {
        let runs: Vec<&Entry> = reg
            .entries_of(&slug)
            .filter(|e| {
                !e.is_retracted()
                    && e.artifact.kind == ArtifactKind::Bakeoff
                    && !e.artifact.suites.is_empty()
            })
            .collect();
        let [.., a, b] = runs.as_slice() else {
            continue;
        };
        let c = crate::compare::compare(&a.artifact, &b.artifact, &[], &a.name, &b.name);
        if c.families.is_empty() {
            continue;
        }
        let _ = write!(
            body,
            "<h3>{}</h3><p>A: <code>{}</code><br>B: <code>{}</code></p>",
            h(&slug),
            h(&c.a),
            h(&c.b)
        );
        if !c.confounds.is_empty() || !c.notices.is_empty() || !c.skipped_suites.is_empty() {
            body.push_str("<ul class=\"muted\">");
            for cf in &c.confounds {
                let _ = write!(
                    body,
                    "<li>difference: {}{}</li>",
                    h(&cf.detail),
                    if cf.allowed { " (allowed)" } else { "" }
                );
            }
            for n in &c.notices {
                let _ = write!(body, "<li>notice: {}</li>", h(n));
            }
            for sk in &c.skipped_suites {
                let _ = write!(body, "<li>not paired: {}</li>", h(&sk.reason));
            }
            body.push_str("</ul>");
        }
        body.push_str("<table class=\"compare\"><thead><tr><th>suite</th><th>family</th><th>pairs</th><th>A ok</th><th>B ok</th><th>B lost</th><th>B gained</th><th>net</th><th>p (exact McNemar)</th><th>min detectable</th><th>verdict</th></tr></thead><tbody>");
        for f in &c.families {
            // A row that counts refusals says so in its count cells.
            let unit = f.measure.map(|m| format!(" {m}")).unwrap_or_default();
            let (aok, bok, p) = match &f.paired {
                Some(p) => (
                    format!("{}{unit}", p.both_correct + p.only_a),
                    format!("{}{unit}", p.both_correct + p.only_b),
                    format!("{:.3}", p.p_value),
                ),
                None => ("-".into(), "-".into(), "-".into()),
            };
            let mdd = f.min_detectable_cell();
            let _ = write!(
                body,
                "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>",
                h(&f.suite),
                h(&f.family),
                f.pairs,
                aok,
                bok,
                h(&f.lost),
                h(&f.gained),
                h(&f.net),
                p,
                h(&mdd),
                h(&f.verdict)
            );
        }
        body.push_str("</tbody></table>");
        if let Some(r) = &c.no_verdict_reason {
            let _ = write!(body, "<p><strong>No verdict:</strong> {}</p>", h(r));
        }
    }
    out.push_str("<h2 id=\"compare\">Paired comparisons (eval compare)</h2>");
    if body.is_empty() {
        out.push_str("<p>None: no candidate has two counted measured runs to pair.</p>");
    } else {
        out.push_str("<p class=\"muted\">The two newest counted runs of each candidate, paired item by item as <code>bakeoff eval compare A B</code> does (no difference allowed).</p>");
        out.push_str(&body);
    }
}

fn superseded(out: &mut String, reg: &Registry) {
    out.push_str("<h2 id=\"superseded\">Superseded claims</h2>");
    let mut rows = String::new();
    for (e, r) in crate::markdown::retractions(reg) {
        let _ = write!(
            rows,
            "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td class=\"retracted\">{}</td><td>{}</td></tr>",
            r.date.format("%Y-%m-%d"),
            h(&e.name),
            h(&e.artifact.candidate.slug),
            // `h` maps each character alone: escaping the parts equals escaping the whole.
            crate::markdown::withdrawn_claims(r, h),
            h(&r.reason)
        );
    }
    if rows.is_empty() {
        out.push_str("<p>None: no result here has been retracted.</p>");
    } else {
        let _ = write!(
            out,
            "<p class=\"muted\">Kept as a dated table rather than a silent edit; the artifacts are unchanged and nothing here is counted above.</p><table><thead><tr><th>retracted</th><th>artifact</th><th>candidate</th><th>claim withdrawn</th><th>reason</th></tr></thead><tbody>{rows}</tbody></table>"
        );
    }
}

fn negatives(out: &mut String, reg: &Registry) {
    out.push_str("<h2 id=\"negative\">Failed and incomplete runs</h2><p class=\"muted\">Scoped to the exact configuration tested; the markdown log has the full entries.</p>");
    let list: Vec<&Entry> = reg.counted().filter(|e| e.is_negative()).collect();
    if list.is_empty() {
        out.push_str("<p>None among the counted artifacts.</p>");
        return;
    }
    out.push_str("<ul>");
    for e in list {
        let what = match (&e.artifact.failure, &e.artifact.incomplete_reason) {
            (Some(f), _) => format!("{}: {}", f.class, f.message),
            (None, Some(r)) => format!("incomplete: {r}"),
            (None, None) => "a suite measured nothing".into(),
        };
        let _ = write!(out, "<li><code>{}</code> — {}</li>", h(&e.name), h(&what));
    }
    out.push_str("</ul>");
}

/// The whole page.
pub fn report(reg: &Registry, generated: &str) -> String {
    let c = comparison::build(reg);
    let mut out = String::with_capacity(64 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
    <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\
    <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
    <meta name=\"generator\" content=\"bakeoff report\">\
    <title>bakeoff report — {dir}</title><style>{STYLE}</style></head><body>\
    <h1>bakeoff report — {dir}</h1><p class=\"muted\">Generated {gen} by bakeoff {ver} from {n} artifact(s), {r} retracted and not counted. \
    Every verdict is scoped to the configuration tested. Model output below is untrusted and shown as text.</p>",
        dir = h(&reg.dir.display().to_string()),
        gen = h(generated),
        ver = env!("CARGO_PKG_VERSION"),
        n = reg.entries.len(),
        r = reg.retracted().count()
    );
    out.push_str("<h2 id=\"comparison\">Summary</h2>");
    if c.rows.is_empty() && !reg.monitors.is_empty() {
        out.push_str("<p>No run artifacts: a seat monitor's series only (below).</p>");
    } else if c.rows.is_empty() {
        out.push_str("<p>No artifacts.</p>");
    } else {
        summary_table(&mut out, &c);
    }
    if let Some(campaign) = &reg.campaign {
        out.push_str(&crate::campaign::html_section(campaign));
    }
    suite_scores(&mut out, reg, &c);
    charts(&mut out, reg);
    out.push_str(&crate::sessions::html_section(reg));
    if !reg.monitors.is_empty() {
        out.push_str(&crate::monitor::html_section(&reg.monitors));
    }
    comparisons(&mut out, reg);
    negatives(&mut out, reg);
    superseded(&mut out, reg);
    drill_down(&mut out, reg);
    if !reg.notes.is_empty() {
        out.push_str("<h2>Files not read</h2><ul>");
        for n in &reg.notes {
            let _ = write!(out, "<li>{}</li>", h(n));
        }
        out.push_str("</ul>");
    }
    let unread = reg.unread();
    if !unread.is_empty() {
        out.push_str("<h2 id=\"unread\">Parts not read</h2><ul>");
        for n in &unread {
            let _ = write!(out, "<li>{}</li>", h(n));
        }
        out.push_str("</ul>");
    }
    out.push_str("</body></html>\n");
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod telemetry_tests;
