//! From samples to findings — a transition function over the series, no I/O, so every rule is
//! tested on samples:
//!
//! - **`footprint-drift`**: the seat's first footprint is its baseline (its source too: a
//!   figure from another source is another quantity and never compared with it); a restart
//!   (a new start time of its process or container) starts a new baseline — a footprint that
//!   grows with uptime is measured over one uptime. A later sample
//!   of that source at or past `first × (1 + percent/100)` **and** `first + min_bytes` raises
//!   the finding, once; the summary adds the last figure and the least-squares slope over every
//!   sample of that source, per day.
//! - **`outage`**: a seat that answered a real completion and then does not (its probe failed,
//!   its process exited, its container stopped) opens one outage; every gateway alias routing
//!   to it is listed in it — two aliases of one seat are one outage, not two (docs/field-cases.md F2). The
//!   first tick that finds it answering again closes it, with its duration. A seat named on the
//!   command line is expected to answer from the first tick: not answering then opens an
//!   outage too. A seat of the whole fleet that never answered is not an outage (it was not
//!   serving when the monitor began): the summary says so.

use std::collections::BTreeMap;

use bakeoff_artifact::monitor::{
    DriftThresholds, FootprintDrift, FootprintSource, LatencyRange, MonitorFinding, MonitorSample,
    Outage, SeatSeries,
};
use chrono::{DateTime, Utc};

/// Seconds in a day: the slope is reported per day, the unit of a footprint that grows with
/// uptime.
const DAY_S: f64 = 86_400.0;

/// What a sample changed.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// A finding was raised (a drift crossed, an outage began).
    Raised(MonitorFinding),
    /// An outage ended: the seat answers again.
    OutageEnded(Outage),
    /// A drift ended with its seat's life: the seat restarted (its footprint starts a new
    /// baseline). The finding as settled at the last sample of that life.
    DriftEnded(FootprintDrift),
}

/// Where a seat stands now, for the exported gauges (`crate::export`).
#[derive(Debug, Clone, PartialEq)]
pub struct SeatNow {
    /// When the open outage began; `None`: answering (or never served).
    pub outage_since: Option<DateTime<Utc>>,
    /// Outages begun so far.
    pub outages: u64,
    /// Restarts seen so far.
    pub restarts: u64,
    /// A drift finding is raised for the current life.
    pub drifting: bool,
    /// The baseline of the current life: source and bytes.
    pub baseline: Option<(FootprintSource, u64)>,
    /// The least-squares slope of the current life's footprint, bytes per second.
    pub slope_bytes_per_s: Option<f64>,
}

#[derive(Debug, Default)]
struct SeatTrack {
    host: String,
    aliases: Vec<String>,
    samples: u64,
    answered: u64,
    reasoning_only: u64,
    latencies: Vec<f64>,
    /// The baseline: source, bytes, when.
    first: Option<(FootprintSource, u64, DateTime<Utc>)>,
    /// `(t_s, bytes)` of every sample of the baseline's source.
    points: Vec<(f64, u64)>,
    last: Option<(u64, DateTime<Utc>)>,
    max_bytes: Option<u64>,
    max_waiting: Option<f64>,
    ever_answered: bool,
    /// When the seat's current process or container started, and how many restarts were seen.
    life: Option<DateTime<Utc>>,
    restarts: u64,
    /// Index into `Tracker::findings` of this seat's drift finding.
    drift: Option<usize>,
    /// Index into `Tracker::findings` of this seat's open outage.
    outage: Option<usize>,
}

/// The findings so far, and what each seat's series adds up to.
#[derive(Debug)]
pub struct Tracker {
    thresholds: DriftThresholds,
    seats: BTreeMap<String, SeatTrack>,
    findings: Vec<MonitorFinding>,
}

impl Tracker {
    pub fn new(thresholds: DriftThresholds) -> Self {
        Self {
            thresholds,
            seats: BTreeMap::new(),
            findings: Vec::new(),
        }
    }

    /// Fold one sample in. `aliases`: the gateway aliases that route to the seat now (an
    /// outage lists them); `expected`: the seat was named, so not answering from the first tick
    /// is an outage.
    pub fn observe(
        &mut self,
        s: &MonitorSample,
        aliases: &[String],
        expected: bool,
    ) -> Vec<Change> {
        let mut changes = Vec::new();
        let t = self.seats.entry(s.seat.clone()).or_default();
        t.host = s.host.clone();
        t.samples += 1;
        if !aliases.is_empty() {
            t.aliases = aliases.to_vec();
        }
        if let Some(q) = s.queue.as_ref().and_then(|q| q.waiting) {
            t.max_waiting = Some(t.max_waiting.map_or(q, |m: f64| m.max(q)));
        }
        // Outages.
        if s.answering {
            t.answered += 1;
            t.ever_answered = true;
            if let Some(p) = &s.probe {
                t.latencies.push(p.latency_ms);
                if p.reasoning_only {
                    t.reasoning_only += 1;
                }
            }
            if let Some(i) = t.outage.take()
                && let Some(MonitorFinding::Outage(o)) = self.findings.get_mut(i)
            {
                o.ended_at = Some(s.at);
                o.duration_s = seconds_between(o.started_at, s.at);
                changes.push(Change::OutageEnded(o.clone()));
            }
        } else {
            match t.outage.and_then(|i| self.findings.get_mut(i)) {
                Some(MonitorFinding::Outage(o)) => {
                    o.failed_ticks += 1;
                    o.duration_s = seconds_between(o.started_at, s.at);
                }
                _ if t.ever_answered || expected => {
                    let o = Outage {
                        seat: s.seat.clone(),
                        aliases: t.aliases.clone(),
                        started_at: s.at,
                        ended_at: None,
                        duration_s: 0.0,
                        failed_ticks: 1,
                        first_error: why_not_answering(s),
                    };
                    t.outage = Some(self.findings.len());
                    self.findings.push(MonitorFinding::Outage(o.clone()));
                    changes.push(Change::Raised(MonitorFinding::Outage(o)));
                }
                _ => {}
            }
        }
        // A restart (a new start time): the footprint of a new process is a new series. The old
        // life's drift, if any, is settled where it ended.
        if let Some(start) = s.started_at {
            match t.life {
                Some(l) if l != start => {
                    if let Some(MonitorFinding::FootprintDrift(d)) =
                        t.drift.take().and_then(|i| self.findings.get_mut(i))
                    {
                        settle(d, &t.points, t.last);
                        changes.push(Change::DriftEnded(d.clone()));
                    }
                    t.first = None;
                    t.points.clear();
                    t.last = None;
                    t.max_bytes = None;
                    t.restarts += 1;
                    t.life = Some(start);
                }
                None => t.life = Some(start),
                Some(_) => {}
            }
        }
        // Footprint drift, over the baseline's source only.
        if let Some(fp) = &s.footprint {
            t.max_bytes = Some(t.max_bytes.map_or(fp.bytes, |m| m.max(fp.bytes)));
            let (source, first, first_at) = *t.first.get_or_insert((fp.source, fp.bytes, s.at));
            if fp.source == source {
                t.points.push((s.t_s, fp.bytes));
                t.last = Some((fp.bytes, s.at));
                let th = self.thresholds;
                let over_percent = fp.bytes as f64 >= first as f64 * (1.0 + th.percent / 100.0);
                let over_bytes = fp.bytes >= first.saturating_add(th.min_bytes);
                if t.drift.is_none() && over_percent && over_bytes && fp.bytes > first {
                    let d = FootprintDrift {
                        seat: s.seat.clone(),
                        source,
                        first_bytes: first,
                        first_at,
                        crossed_bytes: fp.bytes,
                        crossed_at: s.at,
                        last_bytes: fp.bytes,
                        last_at: s.at,
                        growth_percent: growth_percent(first, fp.bytes),
                        slope_bytes_per_day: slope_per_day(&t.points).unwrap_or(0.0),
                        samples: t.points.len() as u64,
                    };
                    t.drift = Some(self.findings.len());
                    self.findings
                        .push(MonitorFinding::FootprintDrift(d.clone()));
                    changes.push(Change::Raised(MonitorFinding::FootprintDrift(d)));
                }
            }
        }
        changes
    }

    /// The findings, each brought up to the last sample: a drift's last figure and its slope
    /// over every sample of its source.
    pub fn findings(&self) -> Vec<MonitorFinding> {
        let mut out = self.findings.clone();
        for t in self.seats.values() {
            if let Some(MonitorFinding::FootprintDrift(d)) = t.drift.and_then(|i| out.get_mut(i)) {
                settle(d, &t.points, t.last);
            }
        }
        out
    }

    /// Each seat's series, summed up (in seat-name order).
    pub fn seats(&self) -> Vec<SeatSeries> {
        self.seats
            .iter()
            .map(|(name, t)| SeatSeries {
                seat: name.clone(),
                host: t.host.clone(),
                aliases: t.aliases.clone(),
                samples: t.samples,
                restarts: t.restarts,
                answered: t.answered,
                reasoning_only: t.reasoning_only,
                latency_ms: latency_range(&t.latencies),
                footprint_source: t.first.map(|f| f.0),
                first_bytes: t.first.map(|f| f.1),
                last_bytes: t.last.map(|l| l.0),
                max_bytes: t.max_bytes,
                slope_bytes_per_day: slope_per_day(&t.points),
                max_waiting: t.max_waiting,
            })
            .collect()
    }

    /// Where `seat` stands now (`None`: no sample of it yet).
    pub fn now(&self, seat: &str) -> Option<SeatNow> {
        let t = self.seats.get(seat)?;
        let outage_since = match t.outage.and_then(|i| self.findings.get(i)) {
            Some(MonitorFinding::Outage(o)) => Some(o.started_at),
            _ => None,
        };
        let outages = self
            .findings
            .iter()
            .filter(|f| matches!(f, MonitorFinding::Outage(o) if o.seat == seat))
            .count() as u64;
        Some(SeatNow {
            outage_since,
            outages,
            restarts: t.restarts,
            drifting: t.drift.is_some(),
            baseline: t.first.map(|(src, b, _)| (src, b)),
            slope_bytes_per_s: slope_per_day(&t.points).map(|d| d / DAY_S),
        })
    }

    /// Seats that never answered a probe.
    pub fn never_answered(&self) -> Vec<String> {
        self.seats
            .iter()
            .filter(|(_, t)| !t.ever_answered)
            .map(|(n, _)| n.clone())
            .collect()
    }
}

/// A drift brought up to the last sample of its life: the last figure, and the slope over
/// every sample of its source.
fn settle(d: &mut FootprintDrift, points: &[(f64, u64)], last: Option<(u64, DateTime<Utc>)>) {
    if let Some((b, at)) = last {
        d.last_bytes = b;
        d.last_at = at;
        d.growth_percent = growth_percent(d.first_bytes, b);
    }
    d.slope_bytes_per_day = slope_per_day(points).unwrap_or(d.slope_bytes_per_day);
    d.samples = points.len() as u64;
}

/// What the first failing tick saw: the probe's error when one was sent, else the state.
fn why_not_answering(s: &MonitorSample) -> String {
    match s.probe.as_ref().and_then(|p| p.error.clone()) {
        Some(e) if s.state == "running" => e,
        Some(e) => format!("{}; probe: {e}", s.state),
        None => s.state.clone(),
    }
}

fn seconds_between(a: DateTime<Utc>, b: DateTime<Utc>) -> f64 {
    (b - a).num_milliseconds().max(0) as f64 / 1000.0
}

fn growth_percent(first: u64, now: u64) -> f64 {
    if first == 0 {
        return 0.0;
    }
    ((now as f64 / first as f64) - 1.0) * 100.0
}

/// Bytes per day, fitted on `(t_s, bytes)`.
fn slope_per_day(points: &[(f64, u64)]) -> Option<f64> {
    let pts: Vec<(f64, f64)> = points.iter().map(|(t, b)| (*t, *b as f64)).collect();
    bakeoff_stats::least_squares_slope(&pts).map(|s| s * DAY_S)
}

fn latency_range(v: &[f64]) -> Option<LatencyRange> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let mid = s.len() / 2;
    let p50 = if s.len() % 2 == 1 {
        s[mid]
    } else {
        (s[mid - 1] + s[mid]) / 2.0
    };
    Some(LatencyRange {
        p50,
        mean: s.iter().sum::<f64>() / s.len() as f64,
        max: s[s.len() - 1],
    })
}

#[cfg(test)]
mod tests;
