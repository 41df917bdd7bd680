//! The export of a scripted state, tick by tick.

use bakeoff_artifact::monitor::{
    DriftThresholds, FootprintSample, FootprintSource, MONITOR_VERSION, MonitorSample, ProbeSample,
    QueueSample,
};
use bakeoff_client::prometheus;
use bakeoff_monitor::export::prometheus::{CONTENT_TYPE_0_0_4, Exporter, Shared, Snapshot, render};
use bakeoff_monitor::export::seat_gauges;
use bakeoff_monitor::findings::{Change, Tracker};
use bakeoff_monitor::render::{change_line, tick_line};
use chrono::{DateTime, Utc};

const GIB: u64 = 1 << 30;

fn at(s: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap()
}

/// The seat `gemma` at `t` seconds: answering in 400 ms with `bytes` resident and two
/// requests waiting, or down (its process exited: no probe, no footprint).
fn sample(tick: u64, t: i64, bytes: Option<u64>) -> MonitorSample {
    let up = bytes.is_some();
    MonitorSample {
        schema_version: MONITOR_VERSION,
        tick,
        at: at(t),
        t_s: t as f64,
        seat: "gemma".into(),
        host: "local".into(),
        state: if up { "running" } else { "exited (137)" }.into(),
        started_at: up.then(|| at(-600)),
        answering: up,
        probe: up.then(|| ProbeSample {
            model: "gemma-3-270m".into(),
            ok: true,
            latency_ms: 400.0,
            ttft_ms: Some(120.0),
            content_chars: 5,
            reasoning_chars: 0,
            reasoning_only: false,
            error: None,
        }),
        footprint: bytes.map(|b| FootprintSample {
            bytes: b,
            source: FootprintSource::ProcRss,
            detail: "VmRSS of pid 4242".into(),
        }),
        footprint_unavailable: (!up).then(|| "the process is gone".into()),
        queue: up.then(|| QueueSample {
            waiting: Some(2.0),
            running: Some(1.0),
            source: "/metrics llamacpp:requests_deferred, llamacpp:requests_processing".into(),
        }),
        queue_unavailable: None,
    }
}

/// The state a scrape sees after `samples`: what the monitor's loop puts in its snapshot.
struct Run {
    tracker: Tracker,
    snapshot: Snapshot,
    lines: Vec<String>,
}

impl Run {
    fn new() -> Self {
        Self {
            tracker: Tracker::new(DriftThresholds {
                percent: 10.0,
                min_bytes: 64 << 20,
            }),
            snapshot: Snapshot::default(),
            lines: Vec::new(),
        }
    }

    fn tick(&mut self, s: MonitorSample) -> Vec<Change> {
        let changes = self.tracker.observe(&s, &["chat".into()], true);
        self.lines.push(tick_line(&s));
        self.lines.extend(changes.iter().map(change_line));
        self.snapshot.seats = vec![seat_gauges(&s, &self.tracker)];
        self.snapshot.ticks += 1;
        self.snapshot.last_tick = Some(s.at);
        changes
    }
}

/// One value of the text, by its sample line's start (`name{labels}`).
fn value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .map(|v| v.parse().unwrap())
}

const SEAT: &str = "{seat=\"gemma\",host=\"local\"}";

#[test]
fn a_seat_that_grows_then_stops_is_drifting_then_in_an_outage_as_of_the_scrape() {
    let mut run = Run::new();
    assert!(run.tick(sample(0, 0, Some(GIB))).is_empty());
    // +20 % and +200 MiB: past both thresholds, the drift is raised once.
    let changes = run.tick(sample(1, 60, Some(GIB + GIB / 5)));
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert!(
        run.lines.last().unwrap().starts_with("finding "),
        "{:?}",
        run.lines
    );
    // The process exits at t = 120: one outage, open from its first failing tick.
    assert_eq!(run.tick(sample(2, 120, None)).len(), 1);
    assert!(run.tick(sample(3, 180, None)).is_empty());

    let text = render(&run.snapshot, at(210));
    let s = |name: &str| value(&text, &format!("{name}{SEAT}"));
    assert_eq!(s("bakeoff_monitor_probe_success"), Some(0.0));
    assert_eq!(s("bakeoff_monitor_outage"), Some(1.0));
    // As of the scrape, 90 s after the first tick that failed.
    assert_eq!(s("bakeoff_monitor_outage_duration_seconds"), Some(90.0));
    assert_eq!(s("bakeoff_monitor_outages_total"), Some(1.0));
    assert_eq!(s("bakeoff_monitor_footprint_drift"), Some(1.0));
    assert_eq!(
        value(
            &text,
            "bakeoff_monitor_footprint_baseline_bytes{seat=\"gemma\",host=\"local\",source=\"proc-rss\"}"
        ),
        Some(GIB as f64)
    );
    // Down: no probe was sent and no footprint or queue read, so those series are absent,
    // never written as zeros.
    for absent in [
        "bakeoff_monitor_probe_duration_seconds",
        "bakeoff_monitor_footprint_bytes{",
        "bakeoff_monitor_queue_waiting_requests",
    ] {
        assert!(!text.contains(absent), "{absent} in\n{text}");
    }
    assert_eq!(value(&text, "bakeoff_monitor_ticks_total"), Some(4.0));

    // It answers again: the outage closes, its count stays.
    let changes = run.tick(sample(4, 240, Some(GIB)));
    assert!(
        changes
            .iter()
            .any(|c| matches!(c, Change::OutageEnded(o) if o.duration_s == 120.0)),
        "{changes:?}"
    );
    assert!(
        run.lines
            .last()
            .unwrap()
            .contains("answers again after 120.0 s"),
        "{:?}",
        run.lines
    );
    let text = render(&run.snapshot, at(250));
    let s = |name: &str| value(&text, &format!("{name}{SEAT}"));
    assert_eq!(s("bakeoff_monitor_outage"), Some(0.0));
    assert_eq!(s("bakeoff_monitor_outage_duration_seconds"), Some(0.0));
    assert_eq!(s("bakeoff_monitor_outages_total"), Some(1.0));
    assert_eq!(s("bakeoff_monitor_probe_duration_seconds"), Some(0.4));
    assert_eq!(s("bakeoff_monitor_queue_waiting_requests"), Some(2.0));
}

#[test]
fn the_text_is_well_formed_and_reads_back_with_the_projects_parser() {
    let mut run = Run::new();
    run.tick(sample(0, 0, Some(GIB)));
    run.tick(sample(1, 60, None));
    run.snapshot.alerts_sent = 2;
    let text = render(&run.snapshot, at(90));
    // Each family once, its HELP before its TYPE before its samples; every sample line named
    // under the monitor's prefix with a number.
    let mut families = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(l) = lines.next() {
        let help = l
            .strip_prefix("# HELP ")
            .unwrap_or_else(|| panic!("{l}\n{text}"));
        let name = help.split(' ').next().unwrap().to_string();
        let ty = lines.next().unwrap();
        assert!(
            ty == format!("# TYPE {name} gauge") || ty == format!("# TYPE {name} counter"),
            "{ty}"
        );
        assert!(!families.contains(&name), "{name} twice");
        while let Some(sample) = lines.next_if(|l| !l.starts_with('#')) {
            assert!(sample.starts_with(&name), "{sample} under {name}");
            let v = sample.rsplit(' ').next().unwrap();
            assert!(v.parse::<f64>().is_ok(), "{sample}");
        }
        families.push(name);
    }
    assert!(families.iter().all(|f| f.starts_with("bakeoff_monitor_")));
    let scrape = prometheus::parse(&text);
    assert_eq!(scrape.values.get("bakeoff_monitor_outage"), Some(&1.0));
    assert_eq!(
        scrape.values.get("bakeoff_monitor_outage_duration_seconds"),
        Some(&30.0)
    );
    assert_eq!(
        scrape.values.get("bakeoff_monitor_alerts_sent_total"),
        Some(&2.0)
    );
    assert!(scrape.gauges.contains("bakeoff_monitor_outage"));
    assert!(!scrape.gauges.contains("bakeoff_monitor_outages_total"));
}

/// The exporter serves the shared snapshot at `/metrics` as the text format's content type:
/// a scrape after a tick sees that tick.
#[tokio::test]
async fn the_exporter_serves_the_latest_snapshot() {
    let shared = Shared::default();
    let exporter = Exporter::start("127.0.0.1:0".parse().unwrap(), shared.clone())
        .await
        .unwrap();
    let url = bakeoff_client::EndpointUrl::parse(&format!("http://{}", exporter.addr)).unwrap();
    let client = bakeoff_client::Client::new(url.clone(), Default::default());
    let limit = std::time::Duration::from_secs(30);
    let (status, text) = client
        .get_text(url.root_path("metrics"), limit)
        .await
        .unwrap();
    assert_eq!(status, 200);
    assert!(!text.contains("seat=\"gemma\""), "{text}");

    let mut run = Run::new();
    run.tick(sample(0, 0, Some(GIB)));
    let snapshot = run.snapshot.clone();
    shared.update(|s| *s = snapshot);
    let (status, text) = client
        .get_text(url.root_path("metrics"), limit)
        .await
        .unwrap();
    assert_eq!(status, 200);
    assert_eq!(
        value(&text, &format!("bakeoff_monitor_probe_success{SEAT}")),
        Some(1.0)
    );
    assert_eq!(value(&text, "bakeoff_monitor_ticks_total"), Some(1.0));
    assert!(CONTENT_TYPE_0_0_4.starts_with("text/plain; version=0.0.4"));
    exporter.stop();
}
