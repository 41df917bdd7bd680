//! `bakeoff seat monitor`: watch seats over time (bakeoff_monitor). Each tick's lines go to
//! stderr as they happen (one per seat, and one per finding); stdout gets the summary table and
//! the two files. Ctrl-C or SIGTERM finishes the tick and writes the summary.
//!
//! Exit 0: watched to the end with no finding; 1: a finding (an outage, a footprint drift), or
//! no seat answered a single probe (nothing was measured); 2: a bad flag, fleet file or seat
//! name; 3: the series or the summary could not be written.

use bakeoff_progress::monitor::MonitorDisplay;
use bakeoff_seats::Fleet;
use bakeoff_seats::redact::Redactor;

use crate::exit::{Error, Exit};
use bakeoff_flags::cli::SeatMonitorArgs;

pub async fn run(a: SeatMonitorArgs) -> Result<Exit, Error> {
    let cfg: bakeoff_flags::config::SeatMonitorConfig = a.validate()?;
    let fleet = Fleet::load(&cfg.fleet)?;
    let redactor = Redactor::for_fleet(&fleet);
    let display = MonitorDisplay::new(redactor.clone());
    let outcome = bakeoff_monitor::monitor(
        fleet,
        cfg.fleet.display().to_string(),
        cfg.options,
        super::stop_signal::wait(),
        |ev| display.event(ev),
    )
    .await
    .map_err(|e| Error::Monitor {
        message: redactor.text(&e.to_string()),
        source: Box::new(e),
    })?;
    display.finish();
    let s = &outcome.summary;
    stdout!("{}", redactor.text(&bakeoff_report::monitor::terminal(s)));
    stdoutln!("series: {}", outcome.series_path.display());
    stdoutln!("summary: {}", outcome.summary_path.display());
    let answered = s.seats.iter().any(|r| r.answered > 0);
    if !answered {
        stderrln!("no seat answered a single probe: nothing was measured");
    }
    Ok(Exit::from_ok(answered && s.findings.is_empty()))
}
