//! The monitor's loop: a tick every interval (on a fixed schedule from the start; a tick that
//! overran its interval is followed at once by the next), each tick's samples journaled and
//! folded into the findings, until `--duration` runs out or the stop future resolves (Ctrl-C,
//! SIGTERM): a stop during a tick lets the tick finish, a stop between ticks ends at once; the
//! summary is written either way.

use std::collections::BTreeSet;
use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use bakeoff_artifact::StoreError;
use bakeoff_artifact::monitor::{DriftThresholds, MONITOR_VERSION, MonitorSample, MonitorSummary};
use bakeoff_seats::fleet::Fleet;
use tokio::time::Instant;

use crate::export::alert::{Alert, AlertOptions, AlertUrlError, Alerter, Report};
use crate::export::prometheus::{Exporter, ListenError, Shared};
use crate::findings::{Change, Tracker};
use crate::sample::{ProbeOptions, Sampler, Watched};
use crate::series::Series;

#[derive(Debug, Clone)]
pub struct MonitorOptions {
    /// Seats named on the command line; empty: every seat of the fleet.
    pub seats: Vec<String>,
    pub interval: Duration,
    /// `None`: until stopped.
    pub duration: Option<Duration>,
    pub out: PathBuf,
    pub probe_timeout: Duration,
    pub probe_max_tokens: u32,
    pub drift: DriftThresholds,
    /// `--prometheus ADDR`: serve the gauges there (docs/monitor-export.md).
    pub prometheus: Option<SocketAddr>,
    /// `--alert-webhook URL`: a message when a finding starts and when it ends.
    pub alert: Option<AlertOptions>,
}

#[derive(Debug, thiserror::Error)]
pub enum MonitorError {
    #[error(transparent)]
    UnknownSeat(#[from] bakeoff_seats::fleet::UnknownSeat),
    #[error("the fleet declares no seat to monitor")]
    NoSeats,
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Listen(#[from] ListenError),
    #[error(transparent)]
    Alert(#[from] AlertUrlError),
}

/// What the monitor reports as it goes.
#[derive(Debug)]
pub enum Event<'a> {
    /// The series file is open and the first tick begins.
    Started {
        series: &'a std::path::Path,
        seats: &'a [Watched],
    },
    /// One tick's samples, journaled.
    Tick(&'a [MonitorSample]),
    /// A finding raised, or an outage ended.
    Change(&'a Change),
    /// The gauges are served at `http://ADDR/metrics`.
    Serving(SocketAddr),
    /// What became of an alert message; `to`: the receiver's scheme, host and port.
    Alert { report: &'a Report, to: &'a str },
}

/// The monitor's end.
#[derive(Debug)]
pub struct Outcome {
    pub summary: MonitorSummary,
    pub series_path: PathBuf,
    pub summary_path: PathBuf,
}

/// Watch the seats of `fleet` (`fleet_label`: the fleet file as given, for the record) until
/// the duration runs out or `stop` resolves.
pub async fn monitor(
    fleet: Fleet,
    fleet_label: String,
    opts: MonitorOptions,
    stop: impl Future<Output = ()>,
    mut on: impl FnMut(Event<'_>),
) -> Result<Outcome, MonitorError> {
    let watched = watched(&fleet, &opts.seats)?;
    // Both exports start before the first tick: a port that cannot be had or a webhook that
    // cannot be addressed refuses the run at once.
    let shared = Shared::default();
    let exporter = match opts.prometheus {
        Some(addr) => Some(Exporter::start(addr, shared.clone()).await?),
        None => None,
    };
    let mut alerter = opts.alert.clone().map(Alerter::start).transpose()?;
    let alert_limit = opts.alert.as_ref().map(finish_limit);
    let mut alert_notes: Vec<String> = Vec::new();
    let started_at = chrono::Utc::now();
    let run_id = started_at.format("%Y%m%dT%H%M%SZ").to_string();
    let mut series = Series::create(&opts.out, &fleet.name, &run_id)?;
    let mut sampler = Sampler::new(fleet, watched, probe_options(&opts));
    on(Event::Started {
        series: series.path(),
        seats: sampler.watched(),
    });
    if let Some(e) = &exporter {
        on(Event::Serving(e.addr));
    }
    let mut tracker = Tracker::new(opts.drift);
    let t0 = Instant::now();
    let mut stop = std::pin::pin!(stop);
    let mut stopped = false;
    let mut ticks = 0u64;
    let ended_by = loop {
        let at = chrono::Utc::now();
        let t_s = round_ms(t0.elapsed().as_secs_f64());
        let (samples, up) = {
            let mut tick = std::pin::pin!(sampler.tick(ticks, at, t_s));
            tokio::select! {
                r = &mut tick => r,
                _ = &mut stop, if !stopped => {
                    // Ctrl-C during a tick: the tick is finished (every wait in it is bounded).
                    stopped = true;
                    tick.await
                }
            }
        };
        series.append(&samples)?;
        on(Event::Tick(&samples));
        let seen = Seen {
            sampler: &sampler,
            up: &up,
            fleet_label: &fleet_label,
        };
        seen.fold(&samples, &mut tracker, alerter.as_mut(), &mut on);
        ticks += 1;
        if let Some(a) = alerter.as_mut() {
            let label = a.label().to_string();
            for r in a.drain() {
                settle_report(&r, &label, &shared, &mut alert_notes, &mut on);
            }
        }
        if exporter.is_some() {
            let gauges: Vec<_> = samples
                .iter()
                .map(|s| crate::export::seat_gauges(s, &tracker))
                .collect();
            shared.update(|snap| {
                snap.seats = gauges;
                snap.ticks = ticks;
                snap.last_tick = Some(at);
            });
        }
        if stopped {
            break "interrupted";
        }
        let due = t0 + opts.interval.mul_f64(ticks as f64);
        if opts.duration.is_some_and(|d| due.duration_since(t0) >= d) {
            break "duration";
        }
        tokio::select! {
            _ = tokio::time::sleep_until(due.max(Instant::now())) => {}
            _ = &mut stop, if !stopped => break "interrupted",
        }
    };
    // The alerts still on their way: each delivered or given up on (and said so) before the
    // summary is written.
    if let (Some(a), Some(limit)) = (alerter.take(), alert_limit) {
        finish_alerts(a, limit, &shared, &mut alert_notes, &mut on).await;
    }
    if let Some(e) = exporter {
        e.stop();
    }
    let notes = summary_notes(&sampler, &tracker, alert_notes);
    let seats = seats_in_watch_order(&sampler, &tracker);
    let summary = MonitorSummary {
        schema_version: MONITOR_VERSION,
        fleet: fleet_label,
        started_at,
        ended_at: chrono::Utc::now(),
        ended_by: ended_by.into(),
        interval_s: opts.interval.as_secs_f64(),
        duration_s: opts.duration.map(|d| d.as_secs_f64()),
        ticks,
        series: series.file_name(),
        thresholds: opts.drift,
        seats,
        findings: tracker.findings(),
        notes,
    };
    let summary_path = series.finish(&summary)?;
    Ok(Outcome {
        summary,
        series_path: series.path().to_path_buf(),
        summary_path,
    })
}

/// What a tick's samples are folded with: the seats watched, those up this tick (for the
/// aliases that route to each), and the fleet's label for the alerts.
struct Seen<'a> {
    sampler: &'a Sampler,
    up: &'a BTreeSet<String>,
    fleet_label: &'a str,
}

impl Seen<'_> {
    /// Each sample into the findings; each change said and, with a webhook, alerted.
    fn fold(
        &self,
        samples: &[MonitorSample],
        tracker: &mut Tracker,
        mut alerter: Option<&mut Alerter>,
        on: &mut impl FnMut(Event<'_>),
    ) {
        for s in samples {
            let named = self
                .sampler
                .watched()
                .iter()
                .any(|w| w.seat.name == s.seat && w.named);
            let aliases = aliases_now(self.sampler.fleet(), &s.seat, self.up);
            for c in tracker.observe(s, &aliases, named) {
                on(Event::Change(&c));
                if let Some(a) = alerter.as_deref_mut() {
                    a.send(Alert::of(&c, self.fleet_label, &s.host, |t| {
                        self.sampler.redact(t)
                    }));
                }
            }
        }
    }
}

/// The alerts still on their way when the monitor ends: each delivered or given up on within
/// `limit`, and those still retried then reported as undelivered.
async fn finish_alerts(
    a: Alerter,
    limit: Duration,
    shared: &Shared,
    alert_notes: &mut Vec<String>,
    on: &mut impl FnMut(Event<'_>),
) {
    let label = a.label().to_string();
    let (reports, unsettled) = a.finish(limit).await;
    for r in reports {
        settle_report(&r, &label, shared, alert_notes, on);
    }
    if unsettled > 0 {
        let r = Report::Undelivered {
            what: format!("{unsettled} message(s)"),
            attempts: 0,
            error: format!(
                "still being retried when the monitor ended ({} s after its last tick)",
                limit.as_secs()
            ),
        };
        settle_report(&r, &label, shared, alert_notes, on);
    }
}

/// What each tick's probe asks and how long it and a host may take.
fn probe_options(opts: &MonitorOptions) -> ProbeOptions {
    ProbeOptions {
        timeout: opts.probe_timeout,
        max_tokens: opts.probe_max_tokens,
        host_timeout: crate::sample::host_timeout(opts.interval),
    }
}

/// Each seat's summary, in the order the seats were watched.
fn seats_in_watch_order(
    sampler: &Sampler,
    tracker: &Tracker,
) -> Vec<bakeoff_artifact::monitor::SeatSeries> {
    let order: Vec<String> = sampler
        .watched()
        .iter()
        .map(|w| w.seat.name.clone())
        .collect();
    let mut seats = tracker.seats();
    seats.sort_by_key(|s| order.iter().position(|n| *n == s.seat));
    seats
}

/// The summary's notes: the GPU sources that did not answer (redacted), the alerts not
/// delivered, and the seats that never answered.
fn summary_notes(sampler: &Sampler, tracker: &Tracker, alert_notes: Vec<String>) -> Vec<String> {
    let mut notes: Vec<String> = sampler
        .gpu_notes()
        .iter()
        .map(|n| sampler.redact(n))
        .collect();
    notes.extend(alert_notes);
    for n in tracker.never_answered() {
        notes.push(format!(
            "{n} never answered a probe while monitored (not serving: no outage is counted for a seat of the whole fleet that never answered)"
        ));
    }
    notes
}

/// The seats to watch: those named (each must exist), else every seat of the fleet.
fn watched(fleet: &Fleet, names: &[String]) -> Result<Vec<Watched>, MonitorError> {
    let named = !names.is_empty();
    let seats: Vec<_> = if named {
        let mut v = Vec::new();
        for n in names {
            let s = fleet.require(n)?;
            if !v.iter().any(|x: &bakeoff_seats::Seat| x.name == s.name) {
                v.push(s.clone());
            }
        }
        v
    } else {
        fleet.seats.clone()
    };
    if seats.is_empty() {
        return Err(MonitorError::NoSeats);
    }
    Ok(seats
        .into_iter()
        .map(|seat| Watched {
            url: fleet.seat_url(&seat),
            model: seat
                .served_model_names
                .first()
                .cloned()
                .unwrap_or_else(|| "default".into()),
            seat,
            named,
        })
        .collect())
}

/// The gateway aliases that route to `seat` now (an `api_base` alias follows its port to a
/// sibling that is up after a swap).
fn aliases_now(fleet: &Fleet, seat: &str, up: &BTreeSet<String>) -> Vec<String> {
    fleet
        .routes
        .iter()
        .filter(|r| fleet.route_seat_now(r, |n| up.contains(n)).as_deref() == Some(seat))
        .map(|r| r.alias.clone())
        .collect()
}

/// An alert's report: said, counted in the gauges, and an undelivered one kept for the
/// summary's notes.
fn settle_report(
    r: &Report,
    label: &str,
    shared: &Shared,
    notes: &mut Vec<String>,
    on: &mut impl FnMut(Event<'_>),
) {
    on(Event::Alert {
        report: r,
        to: label,
    });
    match r {
        Report::Delivered { .. } => shared.update(|s| s.alerts_sent += 1),
        Report::Undelivered { .. } => {
            shared.update(|s| s.alerts_undelivered += 1);
            notes.push(r.line(label));
        }
        Report::Retrying { .. } => {}
    }
}

/// How long the monitor's end waits for the alerts in flight: one message's every attempt and
/// back-off, plus a margin; at most two minutes.
fn finish_limit(o: &AlertOptions) -> Duration {
    let mut wait = Duration::ZERO;
    let mut backoff = o.first_backoff;
    for _ in 1..o.attempts {
        wait += backoff;
        backoff = (backoff * 2).min(Duration::from_secs(60));
    }
    (wait + o.timeout * o.attempts + Duration::from_secs(5)).min(Duration::from_secs(120))
}

fn round_ms(s: f64) -> f64 {
    (s * 1000.0).round() / 1000.0
}
