//! `seat monitor --prometheus ADDR`: the monitor's gauges in the Prometheus text exposition
//! format (version 0.0.4, prometheus.io/docs/instrumenting/exposition_formats/), served at
//! `GET /metrics` for a Prometheus to scrape. docs/monitor-export.md lists every series.
//!
//! Names follow Prometheus' naming conventions (prometheus.io/docs/practices/naming/): the
//! `bakeoff_monitor_` prefix, base units (`_seconds`, `_bytes`), `_total` on counters; labels
//! `seat` and `host` on every per-seat series (`source` on the footprint's, since figures of two
//! sources are two quantities). A gauge with no reading this tick (no probe sent, no footprint,
//! no `/metrics`) is left out, never written as a zero.
//!
//! Each tick replaces the [`Snapshot`]; a scrape renders it, so an outage's duration is as of
//! the scrape.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use bakeoff_artifact::monitor::FootprintSource;
use chrono::{DateTime, Utc};

/// The exposition format's content type (text format 0.0.4).
pub const CONTENT_TYPE_0_0_4: &str = "text/plain; version=0.0.4; charset=utf-8";

/// One seat as of the last tick.
#[derive(Debug, Clone, PartialEq)]
pub struct SeatGauges {
    pub seat: String,
    pub host: String,
    /// Answered this tick's probe (a real short completion; reasoning alone counts).
    pub answering: bool,
    /// The probe's latency and time to first token, when one was sent.
    pub probe_s: Option<f64>,
    pub ttft_s: Option<f64>,
    pub outage_since: Option<DateTime<Utc>>,
    pub outages: u64,
    pub restarts: u64,
    pub footprint: Option<(FootprintSource, u64)>,
    pub baseline: Option<(FootprintSource, u64)>,
    pub slope_bytes_per_s: Option<f64>,
    pub drifting: bool,
    pub waiting: Option<f64>,
    pub running: Option<f64>,
}

/// Everything a scrape shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    pub seats: Vec<SeatGauges>,
    pub ticks: u64,
    pub last_tick: Option<DateTime<Utc>>,
    pub alerts_sent: u64,
    pub alerts_undelivered: u64,
}

/// The snapshot shared between the monitor's loop and the scrape handler.
#[derive(Debug, Clone, Default)]
pub struct Shared(Arc<Mutex<Snapshot>>);

impl Shared {
    /// Change the snapshot (a poisoned lock still holds a whole snapshot: each write replaces
    /// fields, never leaves one half-written).
    pub fn update(&self, f: impl FnOnce(&mut Snapshot)) {
        let mut g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut g);
    }

    pub fn render(&self, now: DateTime<Utc>) -> String {
        let g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        render(&g, now)
    }
}

/// One metric family: its name, type, help, and the samples of each seat.
struct Family<'a> {
    name: &'a str,
    kind: &'a str,
    help: &'a str,
}

/// `name{labels} value` lines under one `# HELP`/`# TYPE` header; nothing at all when no seat
/// has a value (a family without samples is not written).
fn family(out: &mut String, f: Family<'_>, lines: &[(String, f64)]) {
    if lines.is_empty() {
        return;
    }
    let _ = writeln!(out, "# HELP {} {}", f.name, f.help);
    let _ = writeln!(out, "# TYPE {} {}", f.name, f.kind);
    for (labels, v) in lines {
        let _ = writeln!(out, "{}{} {}", f.name, labels, number(*v));
    }
}

/// A value as the text format writes it (`+Inf`, `-Inf`, `NaN` for the non-finite).
fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v == f64::INFINITY {
        "+Inf".into()
    } else if v == f64::NEG_INFINITY {
        "-Inf".into()
    } else {
        format!("{v}")
    }
}

/// A label value escaped as the text format requires: backslash, double quote, line feed.
fn escape(v: &str) -> String {
    v.replace('\\', r"\\")
        .replace('"', r#"\""#)
        .replace('\n', r"\n")
}

fn labels(s: &SeatGauges, source: Option<FootprintSource>) -> String {
    let mut l = format!(
        "{{seat=\"{}\",host=\"{}\"",
        escape(&s.seat),
        escape(&s.host)
    );
    if let Some(src) = source {
        let _ = write!(l, ",source=\"{}\"", src.as_str());
    }
    l.push('}');
    l
}

fn bool01(b: bool) -> f64 {
    if b { 1.0 } else { 0.0 }
}

/// The snapshot in the text exposition format, as of `now`: the probe and outage families, the
/// footprint and queue families, then the monitor's own.
pub fn render(s: &Snapshot, now: DateTime<Utc>) -> String {
    let mut out = String::new();
    probe_families(&mut out, s, now);
    footprint_families(&mut out, s);
    monitor_families(&mut out, s);
    out
}

/// Each seat's value of `f`, labelled (seats without a value are left out).
fn per_seat(s: &Snapshot, f: &dyn Fn(&SeatGauges) -> Option<f64>) -> Vec<(String, f64)> {
    s.seats
        .iter()
        .filter_map(|g| f(g).map(|v| (labels(g, None), v)))
        .collect()
}

/// Whether each seat answers, its probe's times, its outages and restarts.
fn probe_families(out: &mut String, s: &Snapshot, now: DateTime<Utc>) {
    let per_seat = |f: &dyn Fn(&SeatGauges) -> Option<f64>| per_seat(s, f);
    family(
        out,
        Family {
            name: "bakeoff_monitor_probe_success",
            kind: "gauge",
            help: "1 when the seat answered this tick's probe (a real short completion; reasoning alone counts), else 0.",
        },
        &per_seat(&|g| Some(bool01(g.answering))),
    );
    family(
        out,
        Family {
            name: "bakeoff_monitor_probe_duration_seconds",
            kind: "gauge",
            help: "How long this tick's probe took, start to last byte (sent only to a running seat).",
        },
        &per_seat(&|g| g.probe_s),
    );
    family(
        out,
        Family {
            name: "bakeoff_monitor_probe_ttft_seconds",
            kind: "gauge",
            help: "Time to the first text of this tick's probe.",
        },
        &per_seat(&|g| g.ttft_s),
    );
    family(
        out,
        Family {
            name: "bakeoff_monitor_outage",
            kind: "gauge",
            help: "1 while the seat is in an outage (it answered, then stopped; or, named, never answered), else 0.",
        },
        &per_seat(&|g| Some(bool01(g.outage_since.is_some()))),
    );
    family(
        out,
        Family {
            name: "bakeoff_monitor_outage_duration_seconds",
            kind: "gauge",
            help: "How long the open outage has lasted, as of the scrape; 0 when none is open.",
        },
        &per_seat(&|g| {
            Some(g.outage_since.map_or(0.0, |since| {
                (now - since).num_milliseconds().max(0) as f64 / 1000.0
            }))
        }),
    );
    family(
        out,
        Family {
            name: "bakeoff_monitor_outages_total",
            kind: "counter",
            help: "Outages begun since the monitor started.",
        },
        &per_seat(&|g| Some(g.outages as f64)),
    );
    family(
        out,
        Family {
            name: "bakeoff_monitor_restarts_total",
            kind: "counter",
            help: "Restarts of the seat's process or container seen since the monitor started.",
        },
        &per_seat(&|g| Some(g.restarts as f64)),
    );
}

/// Each seat's memory (labelled by its source), its drift, and its engine's queue.
fn footprint_families(out: &mut String, s: &Snapshot) {
    let per_seat = |f: &dyn Fn(&SeatGauges) -> Option<f64>| per_seat(s, f);
    let footprint = |pick: &dyn Fn(&SeatGauges) -> Option<(FootprintSource, u64)>| {
        s.seats
            .iter()
            .filter_map(|g| pick(g).map(|(src, b)| (labels(g, Some(src)), b as f64)))
            .collect::<Vec<_>>()
    };
    family(
        out,
        Family {
            name: "bakeoff_monitor_footprint_bytes",
            kind: "gauge",
            help: "The seat's memory this tick, from the best source that answered (label source: nvml, nvidia-smi, docker-stats, proc-rss).",
        },
        &footprint(&|g| g.footprint),
    );
    family(
        out,
        Family {
            name: "bakeoff_monitor_footprint_baseline_bytes",
            kind: "gauge",
            help: "The seat's first footprint of its current life (a restart starts a new one): what drift is measured against.",
        },
        &footprint(&|g| g.baseline),
    );
    family(
        out,
        Family {
            name: "bakeoff_monitor_footprint_slope_bytes_per_second",
            kind: "gauge",
            help: "Least-squares slope of the footprint over the current life's samples of the baseline's source.",
        },
        &per_seat(&|g| g.slope_bytes_per_s),
    );
    family(
        out,
        Family {
            name: "bakeoff_monitor_footprint_drift",
            kind: "gauge",
            help: "1 when a footprint-drift finding is raised for the seat's current life (grown past --drift-threshold and --drift-min over its baseline), else 0.",
        },
        &per_seat(&|g| Some(bool01(g.drifting))),
    );
    family(
        out,
        Family {
            name: "bakeoff_monitor_queue_waiting_requests",
            kind: "gauge",
            help: "Requests waiting in the engine's queue, from its /metrics (llama.cpp requests_deferred, vLLM num_requests_waiting, SGLang num_queue_reqs).",
        },
        &per_seat(&|g| g.waiting),
    );
    family(
        out,
        Family {
            name: "bakeoff_monitor_queue_running_requests",
            kind: "gauge",
            help: "Requests the engine is running, from its /metrics.",
        },
        &per_seat(&|g| g.running),
    );
}

/// The monitor's own ticks and alerts.
fn monitor_families(out: &mut String, s: &Snapshot) {
    let one = |v: f64| vec![(String::new(), v)];
    family(
        out,
        Family {
            name: "bakeoff_monitor_ticks_total",
            kind: "counter",
            help: "Ticks completed since the monitor started.",
        },
        &one(s.ticks as f64),
    );
    if let Some(t) = s.last_tick {
        family(
            out,
            Family {
                name: "bakeoff_monitor_last_tick_timestamp_seconds",
                kind: "gauge",
                help: "When the last completed tick began, Unix time.",
            },
            &one(t.timestamp_millis() as f64 / 1000.0),
        );
    }
    family(
        out,
        Family {
            name: "bakeoff_monitor_alerts_sent_total",
            kind: "counter",
            help: "Alert messages the webhook accepted (2xx).",
        },
        &one(s.alerts_sent as f64),
    );
    family(
        out,
        Family {
            name: "bakeoff_monitor_alerts_undelivered_total",
            kind: "counter",
            help: "Alert messages given up on after every attempt (each logged).",
        },
        &one(s.alerts_undelivered as f64),
    );
}

/// The exporter could not listen.
#[derive(Debug, thiserror::Error)]
#[error("--prometheus {addr}: cannot listen there: {message}")]
pub struct ListenError {
    pub addr: SocketAddr,
    pub message: String,
}

/// A listening exporter; dropping it (or [`Exporter::stop`]) stops serving.
#[derive(Debug)]
pub struct Exporter {
    pub addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Exporter {
    /// Bind `addr` (port 0: any free port, read back from [`Exporter::addr`]) and serve
    /// `GET /metrics` from `shared`.
    pub async fn start(addr: SocketAddr, shared: Shared) -> Result<Self, ListenError> {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| ListenError {
                addr,
                message: e.to_string(),
            })?;
        let bound = listener.local_addr().map_err(|e| ListenError {
            addr,
            message: e.to_string(),
        })?;
        let app = axum::Router::new()
            .route(
                "/metrics",
                axum::routing::get(move || {
                    let shared = shared.clone();
                    async move {
                        (
                            [(CONTENT_TYPE, CONTENT_TYPE_0_0_4)],
                            shared.render(Utc::now()),
                        )
                            .into_response()
                    }
                }),
            )
            .route(
                "/",
                axum::routing::get(|| async {
                    "bakeoff seat monitor: the gauges are at /metrics (docs/monitor-export.md)\n"
                }),
            );
        // A scrape is answered from memory at once; a client that never sends its request is
        // hyper's to time out, and the task ends with the monitor (`stop`).
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self { addr: bound, task })
    }

    pub fn stop(self) {
        self.task.abort();
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn seat() -> SeatGauges {
        SeatGauges {
            seat: "gemma".into(),
            host: "local".into(),
            answering: false,
            probe_s: Some(0.25),
            ttft_s: None,
            outage_since: Some(DateTime::from_timestamp(1_800_000_000, 0).unwrap()),
            outages: 1,
            restarts: 0,
            footprint: Some((FootprintSource::ProcRss, 1 << 20)),
            baseline: Some((FootprintSource::ProcRss, 1 << 19)),
            slope_bytes_per_s: Some(12.5),
            drifting: true,
            waiting: Some(2.0),
            running: None,
        }
    }

    #[test]
    fn each_family_once_with_help_type_and_labels_and_no_invented_zero() {
        let snap = Snapshot {
            seats: vec![seat()],
            ticks: 3,
            last_tick: None,
            alerts_sent: 1,
            alerts_undelivered: 0,
        };
        let now = DateTime::from_timestamp(1_800_000_090, 500_000_000).unwrap();
        let text = render(&snap, now);
        assert!(text.contains("# TYPE bakeoff_monitor_probe_success gauge\n"));
        assert!(text.contains("bakeoff_monitor_probe_success{seat=\"gemma\",host=\"local\"} 0\n"));
        assert!(
            text.contains(
                "bakeoff_monitor_outage_duration_seconds{seat=\"gemma\",host=\"local\"} 90.5\n"
            ),
            "{text}"
        );
        assert!(text.contains(
            "bakeoff_monitor_footprint_bytes{seat=\"gemma\",host=\"local\",source=\"proc-rss\"} 1048576\n"
        ));
        assert!(text.contains("# TYPE bakeoff_monitor_outages_total counter\n"));
        assert!(text.contains("bakeoff_monitor_ticks_total 3\n"));
        // No ttft, no running gauge: the families are absent, not zero.
        assert!(!text.contains("probe_ttft_seconds"), "{text}");
        assert!(!text.contains("queue_running_requests"), "{text}");
        assert!(!text.contains("last_tick_timestamp"), "{text}");
        for name in text.lines().filter(|l| l.starts_with("# TYPE ")) {
            assert_eq!(text.matches(name).count(), 1, "{name} twice");
        }
    }

    #[test]
    fn label_values_are_escaped() {
        let mut s = seat();
        s.seat = "a\"b\\c\nd".into();
        let text = render(
            &Snapshot {
                seats: vec![s],
                ..Snapshot::default()
            },
            Utc::now(),
        );
        assert!(text.contains(r#"seat="a\"b\\c\nd""#), "{text}");
        assert_eq!(number(f64::INFINITY), "+Inf");
    }
}
