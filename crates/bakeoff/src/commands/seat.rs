//! `bakeoff seat up|down|restart|status|logs|watch|swap`. Exit 0: done (every seat ready);
//! 1: refused (production without --confirm, a port taken) or a seat failed (its
//! `<slug>.failure.json` is written); 2: a bad fleet file or flag; 3: the failure artifact
//! could not be written.
//!
//! Everything printed goes through [`Out`]: the fleet's secrets (`--api-key VALUE`, `HF_TOKEN`,
//! …; the rule is `bakeoff_seats::redact`) never reach the terminal or `--json`.

use std::path::Path;

use bakeoff_progress::seat_watch::Drawing;
use bakeoff_report::escape::for_terminal;
use bakeoff_seats::redact::Redactor;
use bakeoff_seats::render::{self, up_json};
use bakeoff_seats::{Fleet, OpsError, Role, Seats, UpOutcome};

use crate::exit::{Error, Exit};
use bakeoff_flags::cli::{SeatCommand, SeatLogsArgs, SeatStatusArgs};
use bakeoff_flags::config::{
    SeatDownConfig, SeatSelection, SeatSwapConfig, SeatUpConfig, SeatWatchConfig, WatchConfig,
};

pub async fn run(c: SeatCommand) -> Result<Exit, Error> {
    match c {
        SeatCommand::Up(a) => up(a.validate()?).await,
        SeatCommand::Restart(a) => restart(a.validate()?).await,
        SeatCommand::Down(a) => down(a.validate()?).await,
        SeatCommand::Status(a) => status(a).await,
        SeatCommand::Logs(a) => logs(a).await,
        SeatCommand::Watch(a) => watch(a.validate()?).await,
        SeatCommand::Swap(a) => swap(a.validate()?).await,
        SeatCommand::Export(a) => super::seat_export::run(a),
        SeatCommand::Monitor(a) => super::seat_monitor::run(a).await,
    }
}

async fn up(a: SeatUpConfig) -> Result<Exit, Error> {
    let (seats, out) = open(&a.fleet, &a.watch)?;
    let mut seats = seats.with_warm_cache(a.warm_cache);
    let names = names_of(&seats, &a.seats)?;
    gate_all(&seats, &out, &names, "start", a.confirm)?;
    let mut ok = true;
    let mut outs = Vec::new();
    for n in &names {
        let drawing = Drawing::one(&mut seats, n);
        let o = seats.up(n, a.confirm, false).await;
        drawing.done(&mut seats).await;
        let o = o.map_err(|e| ops_error(&out, e))?;
        ok &= o.ok();
        if !a.watch.json {
            print_up(&out, &o);
        }
        outs.push(o);
    }
    if a.watch.json {
        out.json(serde_json::Value::Array(outs.iter().map(up_json).collect()))?;
    }
    Ok(Exit::from_ok(ok))
}

async fn restart(a: SeatUpConfig) -> Result<Exit, Error> {
    let (seats, out) = open(&a.fleet, &a.watch)?;
    let mut seats = seats.with_warm_cache(a.warm_cache);
    let names = names_of(&seats, &a.seats)?;
    gate_all(&seats, &out, &names, "restart", a.confirm)?;
    let mut ok = true;
    for n in &names {
        let drawing = Drawing::one(&mut seats, n);
        let o = seats.restart(n, a.confirm).await;
        drawing.done(&mut seats).await;
        let o = o.map_err(|e| ops_error(&out, e))?;
        ok &= o.ok();
        if a.watch.json {
            out.json(up_json(&o))?;
        } else {
            print_up(&out, &o);
        }
    }
    Ok(Exit::from_ok(ok))
}

async fn down(a: SeatDownConfig) -> Result<Exit, Error> {
    let (seats, out) = open(&a.fleet, &WatchConfig::default())?;
    let names = names_of(&seats, &a.seats)?;
    gate_all(&seats, &out, &names, "stop", a.confirm)?;
    // Every named seat is stopped even when one leaves something behind; a zombie loader or a
    // port still held makes the command fail (1) once all are done.
    let mut ok = true;
    for n in &names {
        let report = seats
            .down(n, a.confirm)
            .await
            .map_err(|e| ops_error(&out, e))?;
        let kept = seats.seat(n).is_ok_and(|s| s.role == Role::Dormant);
        let mut lines = report.lines().into_iter();
        out.line(format_args!(
            "{n}: down{}; {}",
            if kept {
                " (dormant: kept created, stopped)"
            } else {
                ""
            },
            lines.next().unwrap_or_default()
        ));
        out.lines(lines.collect());
        ok &= report.ok();
    }
    Ok(Exit::from_ok(ok))
}

async fn status(a: SeatStatusArgs) -> Result<Exit, Error> {
    let (seats, out) = open(&a.fleet.fleet, &WatchConfig::default())?;
    let list = seats.status(a.probe).await;
    // The gateway's own view (and, probing, each alias through it), when `[gateway] url` is set.
    let gateway = bakeoff_seats::gateway::probe::look(&seats.fleet, a.probe).await;
    if a.json {
        let mut v = render::status_json(&list, &seats.fleet.routes);
        if let Some(g) = &gateway {
            v["gateway"] = bakeoff_seats::gateway::probe::json(g);
        }
        out.json(v)?;
    } else {
        out.lines(render::status_lines(&list, &seats.fleet.routes));
        if let Some(g) = &gateway {
            out.lines(bakeoff_seats::gateway::probe::lines(g, &list));
        }
    }
    // A failed probe, a state that could not be read (the Docker engine did not answer) or,
    // probing, a production seat that is down is not a healthy fleet: exit 1, so a script
    // never takes "unknown" or an outage for "fine".
    let any_failed = list.iter().any(|s| s.fails_status(a.probe))
        || gateway.as_ref().is_some_and(|g| g.any_failed());
    Ok(Exit::from_ok(!any_failed))
}

async fn logs(a: SeatLogsArgs) -> Result<Exit, Error> {
    let (seats, out) = open(&a.fleet.fleet, &WatchConfig::default())?;
    for l in seats
        .logs(&a.seat, a.tail)
        .await
        .map_err(|e| ops_error(&out, e))?
    {
        out.line(format_args!("{}", for_terminal(&l, 2000)));
    }
    Ok(Exit::Ok)
}

async fn watch(a: SeatWatchConfig) -> Result<Exit, Error> {
    let (mut seats, out) = open(&a.fleet, &a.watch)?;
    let drawing = Drawing::one(&mut seats, &a.seat);
    let o = seats.watch_seat(&a.seat).await;
    drawing.done(&mut seats).await;
    let o = o.map_err(|e| ops_error(&out, e))?;
    if a.watch.json {
        out.json(up_json(&o))?;
    } else {
        print_up(&out, &o);
    }
    Ok(Exit::from_ok(o.ok()))
}

async fn swap(a: SeatSwapConfig) -> Result<Exit, Error> {
    let (mut seats, out) = open(&a.fleet, &a.watch)?;
    let drawing = Drawing::swap(&mut seats, &a.old, &a.new);
    let o = seats.swap(&a.old, &a.new, a.confirm).await;
    drawing.done(&mut seats).await;
    let o = o.map_err(|e| ops_error(&out, e))?;
    if a.watch.json {
        out.json(render::swap_json(&o))?;
    } else {
        out.lines(render::swap_lines(&o));
    }
    Ok(Exit::from_ok(o.ok()))
}

/// The fleet's seats, and the printer for their output. Failure artifacts go to the watch
/// config's `out` (`--out`, default `results/` in the working directory).
fn open(fleet: &Path, w: &WatchConfig) -> Result<(Seats, Out), Error> {
    let fleet = Fleet::load(fleet)?;
    let out = Out {
        redactor: Redactor::for_fleet(&fleet),
    };
    Ok((
        Seats::new(fleet, w.out.clone(), w.options.clone())
            .with_placement(bakeoff_campaign::fits::placement_check()),
        out,
    ))
}

/// Prints the seat commands' output with the fleet's secrets redacted.
struct Out {
    redactor: Redactor,
}

impl Out {
    fn line(&self, s: std::fmt::Arguments<'_>) {
        stdoutln!("{}", super::screen(&self.redactor.text(&s.to_string())));
    }

    /// Lines rendered by `bakeoff_seats::render`, one `line` each.
    fn lines(&self, lines: Vec<String>) {
        for l in lines {
            self.line(format_args!("{l}"));
        }
    }

    fn text(&self, s: &str) -> String {
        self.redactor.text(s)
    }

    fn json(&self, mut v: serde_json::Value) -> Result<(), Error> {
        self.redactor.json(&mut v);
        stdoutln!("{}", serde_json::to_string_pretty(&v).map_err(Error::json)?);
        Ok(())
    }
}

/// The names of the seats selected, each one the fleet declares.
fn names_of(seats: &Seats, selection: &SeatSelection) -> Result<Vec<String>, Error> {
    match selection {
        SeatSelection::All => Ok(seats.fleet.seats.iter().map(|s| s.name.clone()).collect()),
        SeatSelection::Named(given) => {
            for n in given {
                seats.fleet.require(n)?;
            }
            Ok(given.clone())
        }
    }
}

/// Check every gate before acting on any seat: a refusal leaves the whole fleet untouched.
fn gate_all(
    seats: &Seats,
    out: &Out,
    names: &[String],
    action: &str,
    confirm: bool,
) -> Result<(), Error> {
    let mut refusals = Vec::new();
    for n in names {
        let seat = seats.fleet.require(n)?;
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
        Err(Error::failed(format!(
            "{} production seat(s) need --confirm; nothing was done",
            refusals.len()
        )))
    }
}

/// An operation's error, redacted; `Error::exit_code` classifies it by its variant. A
/// production seat's refusal prints what it would have run, then ends with one line.
fn ops_error(out: &Out, e: OpsError) -> Error {
    let message = match e {
        OpsError::NeedsConfirm { .. } => {
            out.line(format_args!("{e}"));
            "nothing was done".to_string()
        }
        _ => out.text(&e.to_string()),
    };
    Error::Ops {
        message,
        source: Box::new(e),
    }
}

fn print_up(out: &Out, o: &UpOutcome) {
    out.lines(render::up_lines(o));
}
