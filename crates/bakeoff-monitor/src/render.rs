//! The monitor's live lines: one per seat per tick, and one per finding as it is raised (or an
//! outage as it ends). Text that came from a seat (an error message) is escaped for the
//! terminal; the caller redacts the fleet's secrets.

use bakeoff_artifact::monitor::{MonitorFinding, MonitorSample};
use bakeoff_term::escape::for_terminal;

use crate::findings::Change;

pub use bakeoff_artifact::monitor::{bytes_text as bytes, per_day_text as per_day};

/// `[t+12.0s] gemma-proc running: answered in 412 ms (reasoning only); 180.3 MiB (proc-rss); queue 0 waiting, 1 running`.
pub fn tick_line(s: &MonitorSample) -> String {
    let mut out = format!("[t+{:.1}s] {} {}", s.t_s, s.seat, s.state);
    match &s.probe {
        Some(p) if p.ok => out.push_str(&format!(
            ": answered in {:.0} ms{}",
            p.latency_ms,
            if p.reasoning_only {
                " (reasoning only: alive)"
            } else {
                ""
            }
        )),
        Some(p) => out.push_str(&format!(
            ": NOT ANSWERING ({})",
            for_terminal(p.error.as_deref().unwrap_or("no text"), 200)
        )),
        None => out.push_str(": not probed (not running)"),
    }
    if let Some(f) = &s.footprint {
        out.push_str(&format!("; {} ({})", bytes(f.bytes), f.source.as_str()));
    }
    if let Some(q) = &s.queue {
        let n = |v: Option<f64>| v.map_or("?".to_string(), |v| format!("{v:.0}"));
        out.push_str(&format!(
            "; queue {} waiting, {} running",
            n(q.waiting),
            n(q.running)
        ));
    }
    out
}

/// A finding raised, or an outage that ended.
pub fn change_line(c: &Change) -> String {
    match c {
        Change::Raised(f) => format!("finding {}", finding_text(f)),
        Change::OutageEnded(o) => format!(
            "outage over: {} answers again after {:.1} s ({} tick{} not answering; aliases: {})",
            o.seat,
            o.duration_s,
            o.failed_ticks,
            if o.failed_ticks == 1 { "" } else { "s" },
            alias_list(&o.aliases)
        ),
        Change::DriftEnded(d) => format!(
            "footprint-drift over: {} restarted; its footprint starts a new baseline (it had grown to {}, {:+.1} %)",
            d.seat,
            bytes(d.last_bytes),
            d.growth_percent
        ),
    }
}

/// A finding in one line (the live line and the summary's list), escaped for the terminal.
pub fn finding_text(f: &MonitorFinding) -> String {
    for_terminal(&f.text(), 600)
}

fn alias_list(a: &[String]) -> String {
    if a.is_empty() {
        "(none route to it)".into()
    } else {
        a.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_an_operator_writes_them() {
        assert_eq!(bytes(38 * (1 << 30) + (1 << 29)), "38.50 GiB");
        assert_eq!(bytes(180 << 20), "180.0 MiB");
        assert_eq!(bytes(2048), "2 KiB");
        assert_eq!(per_day(-1_073_741_824.0), "-1.00 GiB/day");
    }
}
