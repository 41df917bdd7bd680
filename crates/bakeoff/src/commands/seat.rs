//! `bakeoff seat up|down|restart|status|logs|watch|swap`. Exit 0: done (every seat ready);
//! 1: refused (production without --confirm, a port taken) or a seat failed (its
//! `<slug>.failure.json` is written); 2: a bad fleet file or flag; 3: the failure artifact
//! could not be written.
//!
//! Everything printed goes through [`Out`]: the fleet's secrets (`--api-key VALUE`, `HF_TOKEN`,
//! …; the rule is `bakeoff_seats::redact`) never reach the terminal or `--json`.

use std::path::Path;

use bakeoff_report::escape::for_terminal;
use bakeoff_seats::redact::Redactor;
use bakeoff_seats::render::{self, up_json};
use bakeoff_seats::{Fleet, OpsError, Role, Seats, UpOutcome};

use crate::cli::{SeatCommand, SeatLogsArgs, SeatNamesArgs, SeatStatusArgs};
use crate::config::{SeatSwapConfig, SeatUpConfig, SeatWatchConfig, WatchConfig};
use crate::exit::{Error, Exit};

pub async fn run(c: SeatCommand) -> Result<Exit, Error> {
    match c {
        SeatCommand::Up(a) => up(a.validate()?).await,
        SeatCommand::Restart(a) => restart(a.validate()?).await,
        SeatCommand::Down(a) => down(a).await,
        SeatCommand::Status(a) => status(a).await,
        SeatCommand::Logs(a) => logs(a).await,
        SeatCommand::Watch(a) => watch(a.validate()?).await,
        SeatCommand::Swap(a) => swap(a.validate()?).await,
    }
}

async fn up(a: SeatUpConfig) -> Result<Exit, Error> {
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
    Ok(Exit::from_ok(ok))
}

async fn restart(a: SeatUpConfig) -> Result<Exit, Error> {
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
    Ok(Exit::from_ok(ok))
}

async fn down(a: SeatNamesArgs) -> Result<Exit, Error> {
    let (seats, out) = open(&a.fleet.fleet, &WatchConfig::default())?;
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

async fn status(a: SeatStatusArgs) -> Result<Exit, Error> {
    let (seats, out) = open(&a.fleet.fleet, &WatchConfig::default())?;
    let list = seats.status(a.probe).await;
    if a.json {
        out.json(render::status_json(&list, &seats.fleet.routes))?;
    } else {
        out.lines(render::status_lines(&list, &seats.fleet.routes));
    }
    let any_failed = list.iter().any(|s| s.serving == Some(false));
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
    Ok(Exit::from_ok(o.ok()))
}

async fn swap(a: SeatSwapConfig) -> Result<Exit, Error> {
    let (seats, out) = open(&a.fleet, &a.watch)?;
    let o = seats
        .swap(&a.old, &a.new, a.confirm)
        .await
        .map_err(|e| ops_error(&out, e))?;
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
    Ok((Seats::new(fleet, w.out.clone(), w.options.clone()), out))
}

/// Prints the seat commands' output with the fleet's secrets redacted.
struct Out {
    redactor: Redactor,
}

impl Out {
    fn line(&self, s: std::fmt::Arguments<'_>) {
        println!("{}", self.redactor.text(&s.to_string()));
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
        println!("{}", serde_json::to_string_pretty(&v).map_err(Error::json)?);
        Ok(())
    }
}

fn names_or_all(seats: &Seats, given: &[String], need_one: bool) -> Result<Vec<String>, Error> {
    if given.is_empty() {
        if need_one {
            return Err(Error::usage("name the seats to act on"));
        }
        return Ok(seats.fleet.seats.iter().map(|s| s.name.clone()).collect());
    }
    for n in given {
        seats.seat(n).map_err(Error::usage)?;
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
) -> Result<(), Error> {
    let mut refusals = Vec::new();
    for n in names {
        let seat = seats.seat(n).map_err(Error::usage)?;
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

/// An operation's error, redacted: a seat the fleet does not declare is a usage error (2), a
/// refusal or a backend failure a failed check (1), a failure artifact that could not be
/// written an I/O failure (3).
fn ops_error(out: &Out, e: OpsError) -> Error {
    match e {
        OpsError::UnknownSeat { .. } | OpsError::SameSeat(_) => {
            Error::usage(out.text(&e.to_string()))
        }
        OpsError::NeedsConfirm { .. } => {
            out.line(format_args!("{e}"));
            Error::failed("nothing was done")
        }
        OpsError::Artifact(_) => Error::Output(out.text(&e.to_string())),
        other => Error::failed(out.text(&other.to_string())),
    }
}

fn print_up(out: &Out, o: &UpOutcome) {
    out.lines(render::up_lines(o));
}
