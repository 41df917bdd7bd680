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
        SeatCommand::Export(a) => super::seat_export::run(a),
        SeatCommand::Monitor(a) => super::seat_monitor::run(a).await,
    }
}

async fn up(a: SeatUpConfig) -> Result<Exit, Error> {
    let (seats, out) = open(&a.fleet, &a.watch)?;
    let mut seats = seats.with_warm_cache(a.warm_cache);
    let names = names_or_all(&seats, &a.seats, a.all)?;
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
    let names = names_or_all(&seats, &a.seats, a.all)?;
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

async fn down(a: SeatNamesArgs) -> Result<Exit, Error> {
    let (seats, out) = open(&a.fleet.fleet, &WatchConfig::default())?;
    let names = names_or_all(&seats, &a.seats, a.all)?;
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
    // A failed probe, or a state that could not be read (the Docker engine did not answer), is
    // not a healthy fleet: exit 1, so a script never takes "unknown" for "fine".
    let any_failed = list.iter().any(|s| {
        s.serving == Some(false)
            || matches!(s.observed, bakeoff_seats::backend::Observed::Unknown { .. })
    }) || gateway.as_ref().is_some_and(|g| g.any_failed());
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
    // NEW's watch, then (when NEW failed) OLD's rollback.
    let whose = Whose(vec![
        Whose::seat(&seats, &a.new, a.new.clone()),
        Whose::seat(&seats, &a.old, format!("{} rollback", a.old)),
    ]);
    let drawing = Drawing::start(&mut seats, whose);
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

/// The seats a verb acts on: those named, or with `--all` every seat in the fleet. Naming none
/// without `--all` is a usage error: a bare `seat up` or `seat down` never acts on the whole
/// fleet by accident.
fn names_or_all(seats: &Seats, given: &[String], all: bool) -> Result<Vec<String>, Error> {
    if all {
        return Ok(seats.fleet.seats.iter().map(|s| s.name.clone()).collect());
    }
    if given.is_empty() {
        return Err(Error::usage(NAME_THE_SEATS));
    }
    for n in given {
        seats.fleet.require(n)?;
    }
    Ok(given.to_vec())
}

/// The refusal of `seat up|down|restart` with no seat named and no `--all`.
const NAME_THE_SEATS: &str = "name the seats, or --all for every seat in the fleet";

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

/// The watch's progress on stderr while one seat operation runs (`crate::progress`: a spinner
/// on a terminal, plain lines otherwise; stdout keeps the result): each phase as a lasting line
/// with its time (`[gemma-proc] warming after 4.2 s`), notes and restarts as they happen, the
/// load progress and, while not ready, the silence timer as the status (`[gemma-proc] loading
/// 18/46 shards, ~61 s left (2 min 3 s)`). The words are the seats'
/// (`bakeoff_seats::progress::describe`, as a campaign's); the fleet's secrets are redacted.
struct Drawing {
    task: tokio::task::JoinHandle<()>,
}

/// Whose watches an operation draws: one seat, or a swap's NEW then OLD's rollback — each as
/// (label, the model id its watch probes).
struct Whose(Vec<(String, Option<String>)>);

impl Whose {
    fn seat(seats: &Seats, name: &str, label: String) -> (String, Option<String>) {
        let model = seats
            .seat(name)
            .ok()
            .and_then(|s| s.served_model_names.first().cloned());
        (label, model)
    }

    /// The label of the `nth` watch of the operation, which probes `model`: the one seat that
    /// serves that model, else the seat in the operation's order (a swap's NEW, then OLD).
    fn label(&self, nth: usize, model: Option<&str>) -> String {
        let serving: Vec<&(String, Option<String>)> = self
            .0
            .iter()
            .filter(|(_, m)| m.as_deref() == model)
            .collect();
        match serving.as_slice() {
            [one] => one.0.clone(),
            _ => self
                .0
                .get(nth)
                .or(self.0.last())
                .map(|s| s.0.clone())
                .unwrap_or_default(),
        }
    }
}

impl Drawing {
    /// Draw the watch of one seat.
    fn one(seats: &mut Seats, name: &str) -> Self {
        let whose = Whose(vec![Whose::seat(seats, name, name.to_string())]);
        Self::start(seats, whose)
    }

    /// Draw the watches of the operation about to run on `seats` (its watch options get the
    /// events sender).
    fn start(seats: &mut Seats, whose: Whose) -> Self {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        seats.watch.events = Some(tx);
        let redactor = Redactor::for_fleet(&seats.fleet);
        Self {
            task: tokio::spawn(draw(rx, whose, redactor)),
        }
    }

    /// Once the operation returned: every event it sent is drawn (its watches are over and the
    /// sender is dropped here, so the channel ends), and the spinner is gone before the result
    /// is printed.
    async fn done(self, seats: &mut Seats) {
        seats.watch.events = None;
        let mut task = self.task;
        if tokio::time::timeout(std::time::Duration::from_secs(2), &mut task)
            .await
            .is_err()
        {
            task.abort();
        }
    }
}

async fn draw(
    mut rx: tokio::sync::mpsc::UnboundedReceiver<bakeoff_seats::watchdog::Event>,
    whose: Whose,
    redactor: Redactor,
) {
    use bakeoff_seats::progress::{SilenceSteps, describe, elapsed_text};
    use bakeoff_seats::watchdog::Event;
    let progress = crate::progress::Progress::new(false);
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut label = whose.label(0, None);
    let mut began = std::time::Instant::now();
    let mut watches = 0;
    // What the seat is doing (its phase or load progress), beside the silence timer.
    let mut doing = String::from("starting");
    let mut silence = SilenceSteps::default();
    while let Some(ev) = rx.recv().await {
        let Some(text) = describe(&ev) else { continue };
        let text = redactor.text(&text);
        let since = elapsed_text(began.elapsed().as_millis() as u64);
        match &ev {
            Event::Began { model } => {
                label = whose.label(watches, model.as_deref());
                watches += 1;
                began = std::time::Instant::now();
                progress.line(&format!("[{label}] {text}"));
                doing = text;
            }
            Event::Phase(p) => {
                progress.line(&format!("[{label}] {text}"));
                doing = p.state.clone();
            }
            Event::Progress(_) => {
                if text != doing {
                    progress.status(&format!("[{label}] {text} ({since})"));
                    doing = text;
                }
            }
            // On a terminal the timer redraws every second (from 2 s of silence); a log gets
            // a line at 10 s of silence, then one a minute.
            Event::Silence { silent_ms, .. } => {
                let rose = silence.rose(*silent_ms);
                if terminal && *silent_ms >= 2000 {
                    progress.status(&format!("[{label}] {doing}; {text} ({since})"));
                } else if terminal {
                    progress.status(&format!("[{label}] {doing} ({since})"));
                } else if rose {
                    progress.status(&format!("[{label}] {text} ({since})"));
                }
            }
            _ => progress.line(&format!("[{label}] {text}")),
        }
    }
}
