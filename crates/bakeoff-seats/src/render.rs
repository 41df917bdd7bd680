//! The terminal and JSON renderings of the seat commands: a watched start (`seat up`,
//! `restart`, `watch`), a swap, and `seat status`. Pure: each returns lines or a JSON value and
//! prints nothing; the binary prints them through its redacting printer, so a fleet's secrets
//! never reach the terminal or `--json` (the rule is [`crate::redact`]).
//!
//! Text an engine or the Docker engine wrote (a watchdog message, a state's error, a probe's
//! detail) is untrusted and goes through [`for_terminal`] before it reaches a terminal.

use bakeoff_wire::escape::for_terminal;
use serde_json::{Value, json};

use crate::fleet::Route;
use crate::ops::{SeatStatus, SwapOutcome, UpOutcome};

/// A watched start, for a terminal: `READY in …` with its phases, or `FAILED [class] …` with the
/// fix and the evidence file; then the watch's notes. A dormant seat is one line.
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
    if r.ready() {
        lines.push(format!(
            "{}: READY in {:.1} s ({})",
            o.seat,
            o.elapsed_ms as f64 / 1000.0,
            phases.join(" → ")
        ));
    } else {
        lines.push(format!(
            "{}: FAILED [{}] after {:.1} s: {}",
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
    lines
}

/// A watched start, for `--json`.
pub fn up_json(o: &UpOutcome) -> Value {
    let r = o.report.as_ref();
    json!({
        "seat": o.seat,
        "ok": o.ok(),
        "created_only": o.created_only,
        "elapsed_ms": o.elapsed_ms,
        "state": r.map(|r| r.state.as_str()),
        "class": r.and_then(|r| r.class),
        "message": r.map(|r| r.message.clone()),
        "phases": r.map(|r| r.phases.clone()),
        "failure": o.failure_path.as_ref().map(|p| p.display().to_string()),
        "notes": r.map(|r| r.notes.clone()),
    })
}

/// A swap, for a terminal: OLD stopped, NEW's start; when NEW failed, what the rollback did —
/// worded from what happened (a rollback that failed is said to have failed) — and OLD's start.
pub fn swap_lines(o: &SwapOutcome) -> Vec<String> {
    let mut lines = vec![format!("swap {} -> {}: stopped {}", o.old, o.new, o.old)];
    lines.extend(up_lines(&o.new_outcome));
    if let Some(r) = &o.rollback {
        let stopped = match &o.new_stop_error {
            None => format!("stopped {}", o.new),
            Some(e) => format!("could not stop {}: {}", o.new, for_terminal(e, 300)),
        };
        let back = if r.ok() {
            format!("brought {} back", o.old)
        } else {
            format!("FAILED to bring {} back: neither seat is serving", o.old)
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
        "new_outcome": up_json(&o.new_outcome),
        "new_stop_error": o.new_stop_error,
        "rollback": o.rollback.as_ref().map(up_json),
    })
}

/// `seat status`, for a terminal: one line per seat (role, backend, URL, state, restarts,
/// whether a real completion succeeded), its aliases and detail; then the fleet's aliases that
/// resolve to no seat.
pub fn status_lines(list: &[SeatStatus], routes: &[Route]) -> Vec<String> {
    let mut lines = Vec::new();
    for s in list {
        let serving = match s.serving {
            Some(true) => ", serving",
            Some(false) => ", NOT serving",
            None => "",
        };
        let rc = s
            .restart_count
            .filter(|n| *n > 0)
            .map(|n| format!(", {n} restarts"))
            .unwrap_or_default();
        lines.push(format!(
            "{} [{} {}] {}: {}{}{}",
            s.seat,
            format!("{:?}", s.role).to_lowercase(),
            s.backend,
            s.url,
            // An unknown state carries the engine's error text.
            for_terminal(&s.observed.label(), 300),
            rc,
            serving
        ));
        if !s.aliases.is_empty() {
            lines.push(format!(
                "    aliases (one seat, one finding): {}",
                s.aliases.join(", ")
            ));
        }
        if let Some(d) = &s.detail {
            lines.push(format!("    {}", for_terminal(d, 300)));
        }
    }
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

/// `seat status --json`: the seats, and the fleet's aliases that resolve to no seat.
pub fn status_json(list: &[SeatStatus], routes: &[Route]) -> Value {
    let seats: Vec<Value> = list
        .iter()
        .map(|s| {
            json!({
                "seat": s.seat, "role": s.role, "backend": s.backend, "url": s.url,
                "state": s.observed.label(), "restart_count": s.restart_count,
                "id": s.id, "aliases": s.aliases, "serving": s.serving,
                "detail": s.detail,
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
    use crate::backend::Observed;
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
            elapsed_ms: 7400,
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
            elapsed_ms: 7400,
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
            elapsed_ms: 120,
        };
        insta::assert_snapshot!(up_lines(&o).join("\n"));
        insta::assert_snapshot!(pretty(&up_json(&o)));
    }

    #[test]
    fn a_swap_whose_rollback_failed() {
        let o = SwapOutcome {
            old: "prod-a".into(),
            new: "prod-b".into(),
            new_outcome: failed("prod-b", FailureClass::KvCacheBudget),
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
            new_stop_error: None,
            rollback: Some(ready("prod-a")),
        };
        insta::assert_snapshot!(swap_lines(&o).join("\n"));
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
            detail: None,
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
        (vec![serving, failing, unknown, dormant, exited], routes)
    }

    #[test]
    fn seat_status_text() {
        let (list, routes) = fleet_status();
        let text = status_lines(&list, &routes).join("\n");
        assert!(!text.contains('\u{1b}'), "{text}");
        insta::assert_snapshot!(text);
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
