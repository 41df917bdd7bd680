//! The terminal and JSON renderings of the seat commands: a watched start (`seat up`,
//! `restart`, `watch`), a swap, and `seat status`. Pure: each returns lines or a JSON value and
//! prints nothing; the binary prints them through its redacting printer, so a fleet's secrets
//! never reach the terminal or `--json` (the rule is [`crate::redact`]).
//!
//! Text an engine or the Docker engine wrote (a watchdog message, a state's error, a probe's
//! detail) is untrusted and goes through [`for_terminal`] before it reaches a terminal.

use bakeoff_term::escape::for_terminal;
use bakeoff_term::{self as term, Grid, Kind, width};
use serde_json::{Value, json};

use crate::backend::Observed;
use crate::fleet::types::Route;
use crate::ops::{SeatStatus, SwapOutcome, UpOutcome};

/// A watched start, for a terminal: `READY in …` with its phases, or `FAILED [class] …` with the
/// fix and the evidence file; then the watch's notes. A dormant seat is one line. A seat that
/// was already up says so first (`already up, READY in …`: the watch still confirmed it).
pub fn up_lines(o: &UpOutcome) -> Vec<String> {
    if o.created_only {
        return vec![format!("{}: dormant: created, not started", o.seat)];
    }
    let Some(r) = &o.report else {
        return vec![];
    };
    let mut lines = Vec::new();
    let phases: Vec<String> = r
        .phases
        .iter()
        .map(|p| format!("{} +{:.1}s", p.state, p.at_ms as f64 / 1000.0))
        .collect();
    let already = if o.already_up { "already up, " } else { "" };
    if r.ready() {
        lines.push(format!(
            "{}: {already}READY in {:.1} s ({})",
            o.seat,
            o.elapsed_ms as f64 / 1000.0,
            phases.join(" → ")
        ));
    } else {
        lines.push(format!(
            "{}: {already}FAILED [{}] after {:.1} s: {}",
            o.seat,
            r.class.map(|c| c.to_string()).unwrap_or_default(),
            o.elapsed_ms as f64 / 1000.0,
            for_terminal(&r.message, 600)
        ));
        if let Some(rem) = &r.remediation {
            lines.push(format!("    fix: {rem}"));
        }
        if let Some(p) = &o.failure_path {
            lines.push(format!("    evidence: {}", p.display()));
        }
    }
    for n in &r.notes {
        lines.push(format!("    note: {n}"));
    }
    lines.extend(finding_lines(&r.findings));
    if let Some(pc) = &o.page_cache {
        lines.push(format!("    {}", page_cache_line(pc)));
    }
    // Last, as `bench run` and `eval run` end: the load's conditions, clean or what
    // contaminated it (process names come from /proc: escaped).
    if let Some(c) = &o.conditions {
        lines.push(format!(
            "    {}",
            for_terminal(&bakeoff_artifact::summary_line([("seat load", c)]), 2000)
        ));
    }
    lines
}

/// `page cache before the start: cold (2 % of 256 MiB resident, fincore)`: whether the weights
/// were in the page cache before the start (docs/metrics.md "Conditions"), from the start record's `page_cache`.
pub fn page_cache_line(pc: &bakeoff_artifact::SeatPageCache) -> String {
    use bakeoff_artifact::{PageCacheMethod, PageCacheState};
    const MIB: f64 = 1024.0 * 1024.0;
    let state = match pc.state {
        PageCacheState::Warm => "warm",
        PageCacheState::Partial => "partial",
        PageCacheState::Cold => "cold",
        PageCacheState::Unknown => "unknown",
    };
    let mut how = Vec::new();
    if pc
        .warmed
        .as_ref()
        .is_some_and(|w| w.bytes == 0 && !w.errors.is_empty())
    {
        // The reason follows as the record's `why`; the read itself is named here.
        how.push("--warm-cache read nothing".to_string());
    } else if let Some(w) = &pc.warmed {
        how.push(format!(
            "--warm-cache read {:.0} MiB in {:.1} s first",
            w.bytes as f64 / MIB,
            w.seconds
        ));
    }
    match (pc.method, pc.resident_before_bytes, pc.weight_bytes) {
        (PageCacheMethod::Fincore, Some(res), Some(total)) if total > 0 => how.push(format!(
            "{:.0} % of {:.0} MiB resident, fincore",
            100.0 * res as f64 / total as f64,
            total as f64 / MIB
        )),
        (PageCacheMethod::CacheGrowth, _, total) => how.push(format!(
            "the page cache grew {:.0} MiB over the load{}",
            pc.cache_growth_bytes.unwrap_or(0) as f64 / MIB,
            total.map_or(String::new(), |t| format!(
                " for {:.0} MiB of weights",
                t as f64 / MIB
            ))
        )),
        _ => {}
    }
    if let Some(why) = &pc.why {
        how.push(for_terminal(why, 300));
    }
    if how.is_empty() {
        format!("page cache before the start: {state}")
    } else {
        format!("page cache before the start: {state} ({})", how.join("; "))
    }
}

/// The findings of a seat operation, one line each (`  finding CODE: message (fix: …)`; the
/// severity is the code's, docs/failure-classes.md), an error's evidence (a template diff)
/// indented under it. Their text may quote engine output and
/// file contents: escaped for the terminal.
pub fn finding_lines(findings: &[bakeoff_artifact::SeatFinding]) -> Vec<String> {
    use bakeoff_artifact::FindingSeverity;
    let mut lines = Vec::new();
    for f in findings {
        let fix = f
            .fix
            .as_deref()
            .map(|x| format!(" (fix: {})", for_terminal(x, 400)))
            .unwrap_or_default();
        lines.push(format!(
            "  finding {}: {}{fix}",
            for_terminal(&f.code, 80),
            for_terminal(&f.message, 800)
        ));
        if f.severity == FindingSeverity::Error {
            for e in &f.evidence {
                lines.push(format!("      {}", for_terminal(e, 400)));
            }
        }
    }
    lines
}

/// A watched start, for `--json`.
pub fn up_json(o: &UpOutcome) -> Value {
    let r = o.report.as_ref();
    let mut v = json!({
        "seat": o.seat,
        "ok": o.ok(),
        "created_only": o.created_only,
        "already_up": o.already_up,
        "elapsed_ms": o.elapsed_ms,
        "state": r.map(|r| r.state.as_str()),
        "class": r.and_then(|r| r.class),
        "message": r.map(|r| r.message.clone()),
        "phases": r.map(|r| r.phases.clone()),
        "failure": o.failure_path.as_ref().map(|p| p.display().to_string()),
        "notes": r.map(|r| r.notes.clone()),
    });
    // Only when there are any: outputs from before findings existed stay as they were.
    if let Some(f) = r.map(|r| &r.findings).filter(|f| !f.is_empty())
        && let Some(obj) = v.as_object_mut()
    {
        obj.insert("findings".into(), json!(f));
    }
    // The weights' page-cache state and the load's conditions, when a start was watched.
    if let Some(obj) = v.as_object_mut() {
        if let Some(pc) = &o.page_cache {
            obj.insert("page_cache".into(), json!(pc));
        }
        if let Some(c) = &o.conditions {
            obj.insert("conditions".into(), json!(c));
        }
    }
    v
}

/// A swap, for a terminal: OLD stopped (or "OLD was not running"), NEW's start; when NEW failed,
/// what the rollback did — worded from what happened (a rollback that failed is said to have
/// failed; an OLD that was not running is said to have been started, not brought back) — and
/// OLD's start.
pub fn swap_lines(o: &SwapOutcome) -> Vec<String> {
    let first = if o.old_was_running {
        format!("stopped {}", o.old)
    } else {
        format!("{} was not running", o.old)
    };
    let mut lines = vec![format!("swap {} -> {}: {first}", o.old, o.new)];
    lines.extend(up_lines(&o.new_outcome));
    if let Some(r) = &o.rollback {
        let stopped = match &o.new_stop_error {
            None => format!("stopped {}", o.new),
            Some(e) => format!("could not stop {}: {}", o.new, for_terminal(e, 300)),
        };
        let back = match (r.ok(), o.old_was_running) {
            (true, true) => format!("brought {} back", o.old),
            (true, false) => format!("started {} (it was not running before the swap)", o.old),
            (false, true) => format!("FAILED to bring {} back: neither seat is serving", o.old),
            (false, false) => format!(
                "FAILED to start {} (it was not running before the swap): neither seat is serving",
                o.old
            ),
        };
        lines.push(format!("swap failed: {stopped}; {back}"));
        lines.extend(up_lines(r));
    }
    lines
}

/// A swap, for `--json`.
pub fn swap_json(o: &SwapOutcome) -> Value {
    json!({
        "old": o.old, "new": o.new, "ok": o.ok(),
        "old_was_running": o.old_was_running,
        "new_outcome": up_json(&o.new_outcome),
        "new_stop_error": o.new_stop_error,
        "rollback": o.rollback.as_ref().map(up_json),
    })
}

/// `seat status`, for a terminal, laid out for [`width`] columns: see [`status_lines_at`].
pub fn status_lines(list: &[SeatStatus], routes: &[Route]) -> Vec<String> {
    status_lines_at(list, routes, width())
}

/// `seat status` as a table — seat, host, port, role, backend, state, the last start's time to
/// ready (`load`, from its start record), restarts, whether a real
/// completion succeeded (when probed), aliases — laid out for `width` columns (below 80 without
/// restarts and aliases; a `header: value` list when narrower still). Beneath it each seat's
/// state that could not be read, with the engine's reason, and each seat's detail; then the
/// fleet's aliases that resolve to no seat.
pub fn status_lines_at(list: &[SeatStatus], routes: &[Route], width: u16) -> Vec<String> {
    status_lines_now(list, routes, width, chrono::Utc::now())
}

/// [`status_lines_at`] with the clock the uptimes are read against.
pub fn status_lines_now(
    list: &[SeatStatus],
    routes: &[Route],
    width: u16,
    now: chrono::DateTime<chrono::Utc>,
) -> Vec<String> {
    let probed = list.iter().any(|s| s.serving.is_some());
    let mut grid = Grid::new();
    grid.column("seat", Kind::Name(40))
        .column("host", Kind::Name(40))
        .secondary("GPU", Kind::Number)
        .column("port", Kind::Number)
        .column("role", Kind::Number)
        .column("backend", Kind::Number)
        .column("state", Kind::Number)
        .secondary("uptime", Kind::Number)
        .secondary("load", Kind::Number)
        // The key columns — seat, state, model — show at every width.
        .column("model", Kind::Name(40))
        .secondary("restarts", Kind::Number);
    if probed {
        grid.column("probe", Kind::Number);
    }
    // Prose: shortened with `…` when long (the full list is in `--json`).
    grid.secondary("aliases", Kind::Text);
    let mut notes = Vec::new();
    for s in list {
        let (host, port) = host_port(&s.url);
        let role = s.role.as_str().to_string();
        let state = match &s.observed {
            Observed::Unknown { .. } => {
                // An unknown state carries the engine's error text: beneath the table.
                notes.push(format!(
                    "{} [{role} {}]: {}",
                    s.seat,
                    s.backend,
                    for_terminal(&s.observed.label(), 300)
                ));
                "unknown".to_string()
            }
            o => o.label(),
        };
        let mut row = vec![
            for_terminal(&s.seat, 200),
            for_terminal(&host, 200),
            if s.gpus.is_empty() {
                "-".into()
            } else {
                for_terminal(&s.gpus.join(","), 60)
            },
            port,
            role,
            s.backend.to_string(),
            state,
            // A figure and its unit never wrap apart (`3 d 04 h`, `42.1 s`).
            s.started_at
                .map(|t| term::glue(&uptime((now - t).num_seconds().max(0) as u64)))
                .unwrap_or_else(|| "-".into()),
            s.last_load_ms
                .map(|ms| term::glue(&crate::progress::elapsed_text(ms)))
                .unwrap_or_else(|| "-".into()),
            s.model
                .as_deref()
                .map(|m| for_terminal(m, 200))
                .unwrap_or_else(|| "-".into()),
            s.restart_count
                .map(|n| n.to_string())
                .unwrap_or_else(|| "-".into()),
        ];
        if probed {
            let verdict = match s.serving {
                Some(true) => "serving",
                Some(false) => "NOT serving",
                None => "-",
            };
            row.push(match s.probe_ms {
                Some(ms) if s.serving.is_some() => format!("{verdict} {ms}\u{a0}ms"),
                _ => verdict.into(),
            });
        }
        row.push(for_terminal(&s.aliases.join(", "), 300));
        grid.row(row);
        if let Some(d) = &s.detail {
            notes.push(format!("{}: {}", s.seat, for_terminal(d, 300)));
        }
    }
    let plan = grid.plan(width);
    let left_out = grid.left_out(&plan);
    let mut lines: Vec<String> = if list.is_empty() {
        vec!["no seats in this fleet".into()]
    } else {
        term::render_plan(plan, width)
            .lines()
            .map(str::to_string)
            .collect()
    };
    lines.extend(term::left_out_line(&left_out, width, "--json"));
    lines.extend(notes);
    for r in routes.iter().filter(|r| r.seat.is_none()) {
        lines.push(format!(
            "alias {} ({}) resolves to no seat of this fleet: {}",
            r.alias,
            r.from,
            r.api_base.as_deref().unwrap_or("-")
        ));
    }
    lines
}

/// `42 s`, `17 min`, `3 h 05 min`, `2 d 04 h`: how long a seat has been up.
fn uptime(s: u64) -> String {
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min", s / 60),
        3600..86_400 => format!("{} h {:02} min", s / 3600, s % 3600 / 60),
        _ => format!("{} d {:02} h", s / 86_400, s % 86_400 / 3600),
    }
}

/// The host and port of a seat's URL (`-` for what it does not say).
fn host_port(url: &str) -> (String, String) {
    match url::Url::parse(url) {
        Ok(u) => (
            u.host_str().unwrap_or("-").to_string(),
            u.port_or_known_default()
                .map(|p| p.to_string())
                .unwrap_or_else(|| "-".into()),
        ),
        Err(_) => (url.to_string(), "-".into()),
    }
}

/// `seat status --json`: the seats, and the fleet's aliases that resolve to no seat.
pub fn status_json(list: &[SeatStatus], routes: &[Route]) -> Value {
    let seats: Vec<Value> = list
        .iter()
        .map(|s| {
            json!({
                "seat": s.seat, "role": s.role, "backend": s.backend, "url": s.url,
                "state": s.observed.label(), "restart_count": s.restart_count,
                "id": s.id, "aliases": s.aliases, "serving": s.serving,
                "probe_ms": s.probe_ms, "detail": s.detail, "started_at": s.started_at,
                "model": s.model, "gpus": s.gpus, "last_load_ms": s.last_load_ms,
            })
        })
        .collect();
    let unrouted: Vec<Value> = routes
        .iter()
        .filter(|r| r.seat.is_none())
        .map(|r| json!({"alias": r.alias, "api_base": r.api_base, "from": r.from}))
        .collect();
    json!({"seats": seats, "unresolved_aliases": unrouted})
}

#[cfg(test)]
mod tests;
