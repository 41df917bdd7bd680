//! The terminal and JSON renderings of the seat commands: a watched start (`seat up`,
//! `restart`, `watch`), a swap, and `seat status`. Pure: each returns lines or a JSON value and
//! prints nothing; the binary prints them through its redacting printer, so a fleet's secrets
//! never reach the terminal or `--json` (the rule is [`crate::redact`]).
//!
//! Text an engine or the Docker engine wrote (a watchdog message, a state's error, a probe's
//! detail) is untrusted and goes through [`for_terminal`] before it reaches a terminal.

use bakeoff_wire::escape::for_terminal;
use bakeoff_wire::term::{self, Grid, Kind, width};
use serde_json::{Value, json};

use crate::backend::Observed;
use crate::fleet::Route;
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
mod tests {
    //! Snapshots of every rendering: a failed start of each class of the failure table, a
    //! ready start, a dormant seat, a swap whose rollback failed, and `seat status` in text and
    //! JSON.

    use std::path::PathBuf;

    use bakeoff_artifact::{FailureClass, SeatPhase};

    use super::*;
    use crate::classify;
    use crate::fleet::Role;
    use crate::watchdog::{State, WatchReport};

    fn phase(state: &str, at_ms: u64) -> SeatPhase {
        SeatPhase {
            state: state.into(),
            at_ms,
            line: None,
        }
    }

    fn report(state: State, class: Option<FailureClass>, message: &str) -> WatchReport {
        WatchReport {
            phases: vec![phase("starting", 0), phase("loading", 1200)],
            elapsed_ms: 7400,
            ..WatchReport::decided(state, State::Loading, class, message.into())
        }
    }

    fn failed(seat: &str, class: FailureClass) -> UpOutcome {
        UpOutcome {
            seat: seat.into(),
            report: Some(report(
                State::Failed,
                Some(class),
                &format!("exited with code 1 while loading: a line that names {class}"),
            )),
            failure_path: Some(PathBuf::from(format!("results/{seat}.failure.json"))),
            created_only: false,
            already_up: false,
            elapsed_ms: 7400,
            page_cache: None,
            conditions: None,
        }
    }

    fn ready(seat: &str) -> UpOutcome {
        let mut r = report(
            State::Ready,
            None,
            "ready in 7.4 s (a real completion succeeded)",
        );
        r.phases
            .extend([phase("warming", 5300), phase("ready", 7400)]);
        r.notes = vec!["weight loading has taken 4.1 s, over the --load-budget of 3.0 s".into()];
        UpOutcome {
            seat: seat.into(),
            report: Some(r),
            failure_path: None,
            created_only: false,
            already_up: false,
            elapsed_ms: 7400,
            page_cache: None,
            conditions: None,
        }
    }

    /// Every class of the failure table, once, in the table's order.
    fn table_classes() -> Vec<FailureClass> {
        let mut classes: Vec<FailureClass> = Vec::new();
        for row in classify::TABLE {
            if !classes.contains(&row.class) {
                classes.push(row.class);
            }
        }
        classes
    }

    #[test]
    fn a_failed_start_of_each_class() {
        let classes = table_classes();
        assert!(classes.contains(&FailureClass::InitWedge), "{classes:?}");
        for class in classes {
            let o = failed("bench-a", class);
            let text = up_lines(&o).join("\n");
            assert!(text.contains(&format!("FAILED [{class}]")), "{text}");
            insta::assert_snapshot!(format!("failed_start__{class}"), text);
        }
    }

    #[test]
    fn a_failed_start_as_json() {
        let mut o = failed("bench-a", FailureClass::CudaOom);
        if let Some(r) = o.report.as_mut() {
            // Untrusted text in JSON is escaped by serde, never cut.
            r.message = "exited with code 1 while loading: CUDA out of memory\u{1b}[2J".into();
        }
        insta::assert_snapshot!(pretty(&up_json(&o)));
    }

    #[test]
    fn an_escaped_failure_message() {
        let mut o = failed("bench-a", FailureClass::Exited);
        if let Some(r) = o.report.as_mut() {
            r.message = "exited while loading; last line: \u{1b}[31mred\rgone\nnext".into();
            r.notes = vec![
                "the seat's state could not be read at +1.0 s (timeout); the watch went on".into(),
            ];
        }
        insta::assert_snapshot!(up_lines(&o).join("\n"));
    }

    /// A started seat's lines say whether its weights were cached before the start, and end
    /// with the load's conditions line.
    #[test]
    fn a_started_seat_says_cold_or_warm_and_ends_with_its_conditions() {
        use bakeoff_artifact::{
            Conditions, Excluded, GpuConditions, PageCacheMethod, PageCacheState, SeatPageCache,
            SeatWarmRead,
        };
        let mib = 1024 * 1024;
        let mut pc = SeatPageCache {
            state: PageCacheState::Cold,
            method: PageCacheMethod::Fincore,
            why: None,
            files: vec!["/models/m.gguf".into()],
            weight_bytes: Some(200 * mib),
            resident_before_bytes: Some(4 * mib),
            cached_before_bytes: None,
            cached_after_bytes: None,
            cache_growth_bytes: None,
            warmed: None,
        };
        assert_eq!(
            page_cache_line(&pc),
            "page cache before the start: cold (2 % of 200 MiB resident, fincore)"
        );
        let mut o = ready("bench-a");
        o.page_cache = Some(pc.clone());
        o.conditions = Some(Conditions {
            source: "/proc".into(),
            samples: 3,
            wall_s: 7.4,
            host_cores: 2,
            excluded: Excluded {
                bakeoff_pid: 1,
                engine_pid: Some(2),
                engine: "pid 2: the seat's process, spawned".into(),
            },
            load_avg: None,
            other_cpu_cores: Some(0.1),
            top_others: vec![],
            memory: None,
            gpu: GpuConditions::unavailable("nvidia-smi", "not on PATH"),
            unavailable: vec![],
            findings: vec![],
        });
        let lines = up_lines(&o);
        assert!(
            lines.contains(
                &"    page cache before the start: cold (2 % of 200 MiB resident, fincore)"
                    .to_string()
            ),
            "{lines:?}"
        );
        assert_eq!(
            lines.last().map(String::as_str),
            Some("    conditions: clean (1 step(s) sampled; others used at most 0.10 cores)")
        );
        pc.state = PageCacheState::Warm;
        pc.resident_before_bytes = Some(200 * mib);
        pc.warmed = Some(SeatWarmRead {
            bytes: 200 * mib,
            seconds: 0.5,
            errors: vec![],
        });
        assert_eq!(
            page_cache_line(&pc),
            "page cache before the start: warm (--warm-cache read 200 MiB in 0.5 s first; 100 % of 200 MiB resident, fincore)"
        );
    }

    #[test]
    fn a_ready_start() {
        let o = ready("bench-a");
        insta::assert_snapshot!(up_lines(&o).join("\n"));
        insta::assert_snapshot!(pretty(&up_json(&o)));
    }

    #[test]
    fn a_dormant_seat_created_only() {
        let o = UpOutcome {
            seat: "spare".into(),
            report: None,
            failure_path: None,
            created_only: true,
            already_up: false,
            elapsed_ms: 120,
            page_cache: None,
            conditions: None,
        };
        insta::assert_snapshot!(up_lines(&o).join("\n"));
        insta::assert_snapshot!(pretty(&up_json(&o)));
    }

    /// `seat up` on a seat that was already up: said so, and still confirmed ready by the
    /// watch (or found failing).
    #[test]
    fn a_seat_already_up() {
        let mut o = ready("bench-a");
        o.already_up = true;
        o.elapsed_ms = 300;
        if let Some(r) = o.report.as_mut() {
            r.phases = vec![phase("ready", 300)];
            r.notes.clear();
        }
        let text = up_lines(&o).join("\n");
        assert!(
            text.starts_with("bench-a: already up, READY in 0.3 s"),
            "{text}"
        );
        insta::assert_snapshot!(text);
        assert_eq!(up_json(&o)["already_up"], true);
        let mut f = failed("bench-a", FailureClass::InferenceFailing);
        f.already_up = true;
        let text = up_lines(&f).join("\n");
        assert!(
            text.starts_with("bench-a: already up, FAILED [inference-failing]"),
            "{text}"
        );
    }

    #[test]
    fn a_swap_whose_rollback_failed() {
        let o = SwapOutcome {
            old: "prod-a".into(),
            new: "prod-b".into(),
            new_outcome: failed("prod-b", FailureClass::KvCacheBudget),
            old_was_running: true,
            new_stop_error: Some("could not signal pid 4242:\u{7} operation not permitted".into()),
            rollback: Some(failed("prod-a", FailureClass::PortInUse)),
        };
        insta::assert_snapshot!(swap_lines(&o).join("\n"));
        insta::assert_snapshot!(pretty(&swap_json(&o)));
    }

    #[test]
    fn a_swap_rolled_back() {
        let o = SwapOutcome {
            old: "prod-a".into(),
            new: "prod-b".into(),
            new_outcome: failed("prod-b", FailureClass::CudaOom),
            old_was_running: true,
            new_stop_error: None,
            rollback: Some(ready("prod-a")),
        };
        insta::assert_snapshot!(swap_lines(&o).join("\n"));
    }

    /// A swap from a seat that was not running says so: it claims neither to have stopped OLD
    /// nor, when NEW fails, to have brought it "back".
    #[test]
    fn a_swap_from_a_seat_that_was_not_running() {
        let o = SwapOutcome {
            old: "bench-a".into(),
            new: "bench-b".into(),
            new_outcome: ready("bench-b"),
            old_was_running: false,
            new_stop_error: None,
            rollback: None,
        };
        let text = swap_lines(&o).join("\n");
        assert!(
            text.starts_with("swap bench-a -> bench-b: bench-a was not running"),
            "{text}"
        );
        assert!(!text.contains("stopped bench-a"), "{text}");
        insta::assert_snapshot!(text);
        assert_eq!(swap_json(&o)["old_was_running"], false);
        let failed_swap = SwapOutcome {
            new_outcome: failed("bench-b", FailureClass::CudaOom),
            rollback: Some(ready("bench-a")),
            ..o
        };
        let text = swap_lines(&failed_swap).join("\n");
        assert!(
            text.contains("stopped bench-b; started bench-a (it was not running before the swap)"),
            "{text}"
        );
        assert!(!text.contains("brought bench-a back"), "{text}");
    }

    fn fleet_status() -> (Vec<SeatStatus>, Vec<Route>) {
        let seat = |name: &str, role, backend, observed, serving| SeatStatus {
            seat: String::from(name),
            role,
            backend,
            url: format!("http://127.0.0.1:{}/v1", 8000 + name.len()),
            observed,
            restart_count: None,
            id: None,
            aliases: vec![],
            serving,
            probe_ms: serving.map(|_| 840),
            detail: None,
            started_at: None,
            model: Some("gemma-3-270m".into()),
            gpus: vec![],
            last_load_ms: None,
        };
        let mut serving = seat(
            "prod-a",
            Role::Production,
            "docker",
            Observed::Running,
            Some(true),
        );
        serving.restart_count = Some(2);
        serving.id = Some("3f2a9c".into());
        serving.aliases = vec!["gpt-4o".into(), "default".into()];
        serving.started_at = Some(clock() - chrono::Duration::seconds(3 * 86_400 + 4 * 3600));
        serving.gpus = vec!["0".into(), "1".into()];
        serving.last_load_ms = Some(42_100);
        let mut failing = seat(
            "bench-b",
            Role::Bench,
            "process",
            Observed::Running,
            Some(false),
        );
        failing.id = Some("4242".into());
        failing.detail = Some("inference-failing: every completion failed\n(HTTP 500)".into());
        let unknown = seat(
            "bench-c",
            Role::Bench,
            "docker",
            Observed::Unknown {
                reason: "Docker: \u{1b}[31mconnection reset\r\u{7}".into(),
            },
            None,
        );
        let dormant = seat("spare", Role::Dormant, "docker", Observed::Created, None);
        let exited = seat(
            "bench-d",
            Role::Bench,
            "process",
            Observed::Exited {
                code: Some(137),
                oom_killed: None,
            },
            None,
        );
        // A 35-character name, a long model id and aliases past any column.
        let mut long = seat(
            "qwen3-coder-30b-a3b-instruct-bench1",
            Role::Bench,
            "process",
            Observed::Running,
            Some(true),
        );
        long.model = Some("/models/Qwen3-Coder-30B-A3B-Instruct-Q4_K_M.gguf".into());
        long.aliases = vec![
            "qwen-coder".into(),
            "coder-large".into(),
            "team-default-coder".into(),
            "gpt-4o-mini".into(),
        ];
        long.started_at = Some(clock() - chrono::Duration::seconds(17 * 60 + 5));
        long.last_load_ms = Some(104_000);
        long.probe_ms = Some(104);
        let routes = vec![
            Route {
                alias: "gpt-4o".into(),
                seat: Some("prod-a".into()),
                api_base: Some("http://127.0.0.1:8006/v1".into()),
                model: None,
                from: "fleet.toml".into(),
            },
            Route {
                alias: "claude-proxy".into(),
                seat: None,
                api_base: Some("http://10.0.0.9:4000".into()),
                model: Some("claude".into()),
                from: "litellm.yaml".into(),
            },
            Route {
                alias: "orphan".into(),
                seat: None,
                api_base: None,
                model: None,
                from: "fleet.toml".into(),
            },
        ];
        (
            vec![serving, failing, unknown, dormant, exited, long],
            routes,
        )
    }

    #[test]
    fn seat_status_text() {
        let (list, routes) = fleet_status();
        // 60: the compact layout; 120: what a terminal reporting 0 columns gets.
        let zero = term::width_from(None, Some(0));
        for (w, name) in [
            (60, "60"),
            (80, "80"),
            (100, "100"),
            (120, "120"),
            (200, "200"),
            (250, "250"),
            (zero, "reported_0"),
        ] {
            let text = status_lines_now(&list, &routes, w, clock()).join("\n");
            assert!(!text.contains('\u{1b}'), "{text}");
            assert!(text.contains("bench-c [bench docker]: unknown ("), "{text}");
            // Every line fits; the key columns show at every width; the list form
            // keeps every field; a figure and its unit never wrap apart.
            assert!(
                text.lines().all(|l| l.chars().count() <= usize::from(w)
                    || l.starts_with("alias ")
                    || l.contains(": ")),
                "{w}: {text}"
            );
            let list_form = text.starts_with("seat: ");
            for key in ["seat", "state", "model"] {
                let shown = if list_form {
                    text.contains(&format!("{key}: "))
                } else {
                    text.lines().nth(1).is_some_and(|h| h.contains(key))
                };
                assert!(shown, "{key} at {w}: {text}");
            }
            if list_form {
                for field in ["uptime: 3\u{a0}d", "model: gemma-3-270m", "aliases: gpt-4o"] {
                    assert!(text.contains(field), "{field} at {w}: {text}");
                }
            } else {
                assert!(
                    !text.contains("qwen3-coder-30b-a3b-instruct-bench1") || w >= 200,
                    "{w}: {text}"
                );
                assert!(
                    text.lines().all(|l| l
                        .split(['│', '┆'])
                        .all(|c| !matches!(c.trim(), "ms" | "s" | "min" | "h" | "d"))),
                    "a figure wrapped apart from its unit at {w}: {text}"
                );
            }
            insta::assert_snapshot!(format!("seat_status_text_{name}"), text);
        }
    }

    /// The fixed clock the snapshots' uptimes are read against.
    fn clock() -> chrono::DateTime<chrono::Utc> {
        chrono::DateTime::from_timestamp(1_796_000_000, 0).unwrap_or_default()
    }

    #[test]
    fn uptimes_read_at_a_glance() {
        assert_eq!(uptime(42), "42 s");
        assert_eq!(uptime(17 * 60 + 5), "17 min");
        assert_eq!(uptime(3 * 3600 + 5 * 60), "3 h 05 min");
        assert_eq!(uptime(2 * 86_400 + 4 * 3600), "2 d 04 h");
    }

    #[test]
    fn seat_status_json() {
        let (list, routes) = fleet_status();
        insta::assert_snapshot!(pretty(&status_json(&list, &routes)));
    }

    /// As the binary prints `--json`.
    fn pretty(v: &Value) -> String {
        serde_json::to_string_pretty(v).unwrap_or_default()
    }
}
