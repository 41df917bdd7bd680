//! `seat monitor`'s events on the display, as they happen: one line per seat each tick, one
//! per finding, the exports' addresses and each alert's fate — through the fleet's redactor,
//! since a seat's arguments and a probe's error can carry a secret.

use bakeoff_monitor::{Event, render};
use bakeoff_seats::redact::Redactor;

use crate::Progress;

/// Draws the monitor's events (lasting lines: a monitor's log is its record).
pub struct MonitorDisplay {
    progress: Progress,
    redactor: Redactor,
}

impl MonitorDisplay {
    pub fn new(redactor: Redactor) -> Self {
        Self {
            progress: Progress::new(false),
            redactor,
        }
    }

    /// Draw one of the monitor's events.
    pub fn event(&self, ev: Event<'_>) {
        for line in lines(ev) {
            self.progress.line(&self.redactor.text(&line));
        }
    }

    /// Remove the spinner (before the summary is printed).
    pub fn finish(&self) {
        self.progress.finish();
    }
}

/// The lines one event draws.
fn lines(ev: Event<'_>) -> Vec<String> {
    match ev {
        Event::Started { series, seats } => vec![format!(
            "monitoring {} seat(s): {}; series {} (Ctrl-C ends it and writes the summary)",
            seats.len(),
            seats
                .iter()
                .map(|w| w.seat.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            series.display()
        )],
        Event::Tick(samples) => samples.iter().map(render::tick_line).collect(),
        Event::Change(c) => vec![render::change_line(c)],
        Event::Serving(addr) => vec![format!(
            "serving the gauges for Prometheus at http://{addr}/metrics"
        )],
        Event::Alert { report, to } => vec![report.line(to)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exports_address_is_a_line() {
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], 9464));
        assert_eq!(
            lines(Event::Serving(addr)),
            ["serving the gauges for Prometheus at http://127.0.0.1:9464/metrics"]
        );
    }

    #[test]
    fn an_empty_tick_draws_nothing() {
        assert!(lines(Event::Tick(&[])).is_empty());
    }
}
