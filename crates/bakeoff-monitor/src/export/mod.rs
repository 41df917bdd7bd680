//! The monitor, exported (docs/monitor-export.md): its gauges for a Prometheus to scrape
//! ([`prometheus`], `--prometheus ADDR`), and a message to a webhook when a finding starts and
//! when it ends ([`alert`], `--alert-webhook URL`).

pub mod alert;
pub mod prometheus;

use bakeoff_artifact::monitor::MonitorSample;

use crate::findings::Tracker;
use prometheus::SeatGauges;

/// A seat's gauges from its sample of the last tick and where the tracker says it stands.
pub fn seat_gauges(s: &MonitorSample, tracker: &Tracker) -> SeatGauges {
    let now = tracker.now(&s.seat);
    SeatGauges {
        seat: s.seat.clone(),
        host: s.host.clone(),
        answering: s.answering,
        probe_s: s.probe.as_ref().map(|p| p.latency_ms / 1000.0),
        ttft_s: s
            .probe
            .as_ref()
            .and_then(|p| p.ttft_ms)
            .map(|ms| ms / 1000.0),
        outage_since: now.as_ref().and_then(|n| n.outage_since),
        outages: now.as_ref().map_or(0, |n| n.outages),
        restarts: now.as_ref().map_or(0, |n| n.restarts),
        footprint: s.footprint.as_ref().map(|f| (f.source, f.bytes)),
        baseline: now.as_ref().and_then(|n| n.baseline),
        slope_bytes_per_s: now.as_ref().and_then(|n| n.slope_bytes_per_s),
        drifting: now.as_ref().is_some_and(|n| n.drifting),
        waiting: s.queue.as_ref().and_then(|q| q.waiting),
        running: s.queue.as_ref().and_then(|q| q.running),
    }
}
