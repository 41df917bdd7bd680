//! `bakeoff seat up|down|restart|status|logs|watch|swap`. Exit 0: done (every seat ready);
//! 1: refused (production without --confirm, a port taken) or a seat failed (its
//! `<slug>.failure.json` is written); 2: a bad fleet file or flag.
//!
//! Everything printed goes through [`Out`]: the fleet's secrets (`--api-key VALUE`, `HF_TOKEN`,
//! …; the rule is `bakeoff_seats::redact`) never reach the terminal or `--json`.

use std::path::PathBuf;
use std::time::Duration;

use bakeoff_report::escape::for_terminal;
use bakeoff_seats::redact::Redactor;
use bakeoff_seats::{Fleet, OpsError, Role, Seats, UpOutcome, WatchOptions};

use crate::cli::{FleetArgs, SeatCommand, WatchArgs};
use crate::exit::{CliError, Exit, failed, usage};

pub async fn run(c: SeatCommand) -> Result<Exit, CliError> {
    match c {
        SeatCommand::Up(a) => {
            let (seats, out) = open(&a.fleet, &a.watch)?;
            let names = names_or_all(&seats, &a.seats, false)?;
            gate_all(&seats, &out, &names, "start", a.confirm)?;
            let mut ok = true;
            let mut outs = Vec::new();
            for n in &names {
                let o = seats
                    .up(n, a.confirm, false)
                    .await
                    .map_err(|e| ops_error(&out, e))?;
                ok &= o.ok();
                if !a.watch.json {
                    print_up(&out, &o);
                }
                outs.push(o);
            }
            if a.watch.json {
                out.json(serde_json::Value::Array(outs.iter().map(up_json).collect()))?;
            }
            Ok(exit(ok))
        }
        SeatCommand::Restart(a) => {
            let (seats, out) = open(&a.fleet, &a.watch)?;
            let names = names_or_all(&seats, &a.seats, true)?;
            gate_all(&seats, &out, &names, "restart", a.confirm)?;
            let mut ok = true;
            for n in &names {
                let o = seats
                    .restart(n, a.confirm)
                    .await
                    .map_err(|e| ops_error(&out, e))?;
                ok &= o.ok();
                if a.watch.json {
                    out.json(up_json(&o))?;
                } else {
                    print_up(&out, &o);
                }
            }
            Ok(exit(ok))
        }
        SeatCommand::Down(a) => {
            let (seats, out) = open(&a.fleet, &WatchArgs::defaults())?;
            let names = names_or_all(&seats, &a.seats, false)?;
            gate_all(&seats, &out, &names, "stop", a.confirm)?;
            for n in &names {
                seats
                    .down(n, a.confirm)
                    .await
                    .map_err(|e| ops_error(&out, e))?;
                let kept = seats.seat(n).is_ok_and(|s| s.role == Role::Dormant);
                out.line(format_args!(
                    "{n}: down{}",
                    if kept {
                        " (dormant: kept created, stopped)"
                    } else {
                        ""
                    }
                ));
            }
            Ok(Exit::Ok)
        }
        SeatCommand::Status(a) => {
            let (seats, out) = open(&a.fleet, &WatchArgs::defaults())?;
            let list = seats.status(a.probe).await;
            if a.json {
                let v: Vec<_> = list
                    .iter()
                    .map(|s| {
                        serde_json::json!({
                            "seat": s.seat, "role": s.role, "backend": s.backend, "url": s.url,
                            "state": s.observed.label(), "restart_count": s.restart_count,
                            "id": s.id, "aliases": s.aliases, "serving": s.serving,
                            "detail": s.detail,
                        })
                    })
                    .collect();
                let unrouted: Vec<_> = seats
                    .fleet
                    .routes
                    .iter()
                    .filter(|r| r.seat.is_none())
                    .map(|r| serde_json::json!({"alias": r.alias, "api_base": r.api_base, "from": r.from}))
                    .collect();
                out.json(serde_json::json!({"seats": v, "unresolved_aliases": unrouted}))?;
            } else {
                for s in &list {
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
                    out.line(format_args!(
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
                        out.line(format_args!(
                            "    aliases (one seat, one finding): {}",
                            s.aliases.join(", ")
                        ));
                    }
                    if let Some(d) = &s.detail {
                        out.line(format_args!("    {}", for_terminal(d, 300)));
                    }
                }
                for r in seats.fleet.routes.iter().filter(|r| r.seat.is_none()) {
                    out.line(format_args!(
                        "alias {} ({}) resolves to no seat of this fleet: {}",
                        r.alias,
                        r.from,
                        r.api_base.as_deref().unwrap_or("-")
                    ));
                }
            }
            let any_failed = list.iter().any(|s| s.serving == Some(false));
            Ok(exit(!any_failed))
        }
        SeatCommand::Logs(a) => {
            let (seats, out) = open(&a.fleet, &WatchArgs::defaults())?;
            for l in seats
                .logs(&a.seat, a.tail)
                .await
                .map_err(|e| ops_error(&out, e))?
            {
                out.line(format_args!("{}", for_terminal(&l, 2000)));
            }
            Ok(Exit::Ok)
        }
        SeatCommand::Watch(a) => {
            let (seats, out) = open(&a.fleet, &a.watch)?;
            let o = seats
                .watch_seat(&a.seat)
                .await
                .map_err(|e| ops_error(&out, e))?;
            if a.watch.json {
                out.json(up_json(&o))?;
            } else {
                print_up(&out, &o);
            }
            Ok(exit(o.ok()))
        }
        SeatCommand::Swap(a) => {
            let (seats, out) = open(&a.fleet, &a.watch)?;
            let o = seats
                .swap(&a.old, &a.new, a.confirm)
                .await
                .map_err(|e| ops_error(&out, e))?;
            if a.watch.json {
                out.json(serde_json::json!({
                    "old": o.old, "new": o.new, "ok": o.ok(),
                    "new_outcome": up_json(&o.new_outcome),
                    "new_stop_error": o.new_stop_error,
                    "rollback": o.rollback.as_ref().map(up_json),
                }))?;
            } else {
                out.line(format_args!(
                    "swap {} -> {}: stopped {}",
                    o.old, o.new, o.old
                ));
                print_up(&out, &o.new_outcome);
                if let Some(r) = &o.rollback {
                    // Worded from what happened: a rollback that failed is said to have failed.
                    let stopped = match &o.new_stop_error {
                        None => format!("stopped {}", o.new),
                        Some(e) => format!("could not stop {}: {}", o.new, for_terminal(e, 300)),
                    };
                    let back = if r.ok() {
                        format!("brought {} back", o.old)
                    } else {
                        format!("FAILED to bring {} back: neither seat is serving", o.old)
                    };
                    out.line(format_args!("swap failed: {stopped}; {back}"));
                    print_up(&out, r);
                }
            }
            Ok(exit(o.ok()))
        }
    }
}

impl WatchArgs {
    fn defaults() -> Self {
        Self {
            silence_timeout: 300.0,
            ready_timeout: 3600.0,
            load_budget: None,
            crash_loop_restarts: 3,
            crash_loop_window: 600.0,
            out: None,
            json: false,
        }
    }
}

fn secs(name: &str, v: f64) -> Result<Duration, CliError> {
    // try_from: a huge value (1e20) would panic in from_secs_f64.
    match Duration::try_from_secs_f64(v) {
        Ok(d) if v.is_finite() && v > 0.0 => Ok(d),
        _ => Err(usage(format!(
            "{name} {v} must be a positive number of seconds (at most about 1.8e19)"
        ))),
    }
}

/// The fleet's seats, and the printer for their output. Failure artifacts go to `--out`,
/// default `results/` in the working directory (as `eval run --out results`): never into the
/// directory of the fleet file, which may be a source tree (`examples/fleet.toml`).
fn open(f: &FleetArgs, w: &WatchArgs) -> Result<(Seats, Out), CliError> {
    let fleet = Fleet::load(&f.fleet).map_err(usage)?;
    if w.crash_loop_restarts == 0 {
        return Err(usage("--crash-loop-restarts must be at least 1"));
    }
    let watch = WatchOptions {
        silence_timeout: secs("--silence-timeout", w.silence_timeout)?,
        ready_timeout: secs("--ready-timeout", w.ready_timeout)?,
        load_budget: w
            .load_budget
            .map(|b| secs("--load-budget", b))
            .transpose()?,
        crash_loop_restarts: w.crash_loop_restarts,
        crash_loop_window: secs("--crash-loop-window", w.crash_loop_window)?,
        ..WatchOptions::default()
    };
    let out_dir = w.out.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_OUT));
    let out = Out {
        redactor: Redactor::for_fleet(&fleet),
    };
    Ok((Seats::new(fleet, out_dir, watch), out))
}

/// Where failure artifacts go without `--out`, relative to the working directory.
const DEFAULT_OUT: &str = "results";

/// Prints the seat commands' output with the fleet's secrets redacted.
struct Out {
    redactor: Redactor,
}

impl Out {
    fn line(&self, s: std::fmt::Arguments<'_>) {
        println!("{}", self.redactor.text(&s.to_string()));
    }

    fn text(&self, s: &str) -> String {
        self.redactor.text(s)
    }

    fn json(&self, mut v: serde_json::Value) -> Result<(), CliError> {
        self.redactor.json(&mut v);
        println!("{}", serde_json::to_string_pretty(&v).map_err(usage)?);
        Ok(())
    }
}

fn names_or_all(seats: &Seats, given: &[String], need_one: bool) -> Result<Vec<String>, CliError> {
    if given.is_empty() {
        if need_one {
            return Err(usage("name the seats to act on"));
        }
        return Ok(seats.fleet.seats.iter().map(|s| s.name.clone()).collect());
    }
    for n in given {
        seats.seat(n).map_err(usage)?;
    }
    Ok(given.to_vec())
}

/// Check every gate before acting on any seat: a refusal leaves the whole fleet untouched.
fn gate_all(
    seats: &Seats,
    out: &Out,
    names: &[String],
    action: &str,
    confirm: bool,
) -> Result<(), CliError> {
    let mut refusals = Vec::new();
    for n in names {
        let seat = seats.seat(n).map_err(usage)?;
        if let Err(e) = seats.gate(seat, action, confirm) {
            refusals.push(e.to_string());
        }
    }
    if refusals.is_empty() {
        Ok(())
    } else {
        // A refusal says what it would have run: the seat's command line, redacted.
        for r in &refusals {
            out.line(format_args!("{r}"));
        }
        Err(failed(format!(
            "{} production seat(s) need --confirm; nothing was done",
            refusals.len()
        )))
    }
}

fn ops_error(out: &Out, e: OpsError) -> CliError {
    match e {
        OpsError::UnknownSeat { .. } | OpsError::SameSeat(_) => usage(out.text(&e.to_string())),
        OpsError::NeedsConfirm { .. } => {
            out.line(format_args!("{e}"));
            failed("nothing was done")
        }
        other => failed(out.text(&other.to_string())),
    }
}

fn exit(ok: bool) -> Exit {
    if ok { Exit::Ok } else { Exit::Failed }
}

fn print_up(out: &Out, o: &UpOutcome) {
    if o.created_only {
        out.line(format_args!("{}: dormant: created, not started", o.seat));
        return;
    }
    let Some(r) = &o.report else { return };
    let phases: Vec<String> = r
        .phases
        .iter()
        .map(|p| format!("{} +{:.1}s", p.state, p.at_ms as f64 / 1000.0))
        .collect();
    if r.ready() {
        out.line(format_args!(
            "{}: READY in {:.1} s ({})",
            o.seat,
            o.elapsed_ms as f64 / 1000.0,
            phases.join(" → ")
        ));
    } else {
        out.line(format_args!(
            "{}: FAILED [{}] after {:.1} s: {}",
            o.seat,
            r.class.map(|c| c.to_string()).unwrap_or_default(),
            o.elapsed_ms as f64 / 1000.0,
            for_terminal(&r.message, 600)
        ));
        if let Some(rem) = &r.remediation {
            out.line(format_args!("    fix: {rem}"));
        }
        if let Some(p) = &o.failure_path {
            out.line(format_args!("    evidence: {}", p.display()));
        }
    }
    for n in &r.notes {
        out.line(format_args!("    note: {n}"));
    }
}

fn up_json(o: &UpOutcome) -> serde_json::Value {
    let r = o.report.as_ref();
    serde_json::json!({
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
