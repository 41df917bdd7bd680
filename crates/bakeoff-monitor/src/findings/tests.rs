#![allow(clippy::unwrap_used)]

use super::*;
use bakeoff_artifact::monitor::{FootprintSample, MONITOR_VERSION, ProbeSample};

const MIB: u64 = 1 << 20;

fn th() -> DriftThresholds {
    DriftThresholds {
        percent: 10.0,
        min_bytes: 64 * MIB,
    }
}

fn at(s: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap()
}

fn sample(seat: &str, t: i64, answering: bool, bytes: Option<u64>) -> MonitorSample {
    MonitorSample {
        schema_version: MONITOR_VERSION,
        tick: t as u64,
        at: at(t),
        t_s: t as f64,
        seat: seat.into(),
        host: "local".into(),
        state: if answering { "running" } else { "exited (137)" }.into(),
        started_at: answering.then(|| at(-100)),
        answering,
        probe: answering.then(|| ProbeSample {
            model: "m".into(),
            ok: true,
            latency_ms: 100.0 + t as f64,
            ttft_ms: Some(20.0),
            content_chars: 0,
            reasoning_chars: 12,
            reasoning_only: true,
            error: None,
        }),
        footprint: bytes.map(|b| FootprintSample {
            bytes: b,
            source: FootprintSource::ProcRss,
            detail: "VmRSS of pid 1".into(),
        }),
        footprint_unavailable: None,
        queue: None,
        queue_unavailable: None,
    }
}

fn aliases() -> Vec<String> {
    vec!["chat".into(), "chat-thinking".into()]
}

#[test]
fn one_outage_with_every_alias_from_its_first_failing_tick_to_its_return() {
    let mut tr = Tracker::new(th());
    let mut raised = Vec::new();
    let mut ended = Vec::new();
    for (t, ok) in [
        (0, true),
        (1, true),
        (2, false),
        (3, false),
        (4, false),
        (5, true),
    ] {
        for c in tr.observe(&sample("s", t, ok, Some(100 * MIB)), &aliases(), false) {
            match c {
                Change::Raised(f) => raised.push(f),
                Change::OutageEnded(o) => ended.push(o),
                Change::DriftEnded(d) => panic!("no drift here: {d:?}"),
            }
        }
    }
    assert_eq!(raised.len(), 1, "{raised:?}");
    assert_eq!(ended.len(), 1);
    let f = tr.findings();
    assert_eq!(f.len(), 1);
    let MonitorFinding::Outage(o) = &f[0] else {
        panic!("{f:?}")
    };
    assert_eq!(o.aliases, aliases());
    assert_eq!(o.started_at, at(2));
    assert_eq!(o.ended_at, Some(at(5)));
    assert_eq!(o.duration_s, 3.0);
    assert_eq!(o.failed_ticks, 3);
    assert_eq!(o.first_error, "exited (137)");
    let s = &tr.seats()[0];
    assert_eq!((s.samples, s.answered, s.reasoning_only), (6, 3, 3));
    assert_eq!(s.latency_ms.unwrap().max, 105.0);
}

#[test]
fn a_seat_that_never_answered_is_an_outage_only_when_named() {
    let mut tr = Tracker::new(th());
    assert!(
        tr.observe(&sample("idle", 0, false, None), &[], false)
            .is_empty()
    );
    assert!(
        tr.observe(&sample("idle", 1, false, None), &[], false)
            .is_empty()
    );
    assert_eq!(tr.never_answered(), vec!["idle".to_string()]);
    let c = tr.observe(&sample("named", 0, false, None), &[], true);
    assert!(
        matches!(&c[..], [Change::Raised(MonitorFinding::Outage(_))]),
        "{c:?}"
    );
    // Still out at the end: no end, the duration runs to the last tick.
    tr.observe(&sample("named", 4, false, None), &[], true);
    let f = tr.findings();
    let MonitorFinding::Outage(o) = &f[0] else {
        panic!()
    };
    assert_eq!((o.ended_at, o.duration_s, o.failed_ticks), (None, 4.0, 2));
}

#[test]
fn drift_needs_both_the_percent_and_the_bytes_and_is_raised_once() {
    let mut tr = Tracker::new(th());
    // 100 MiB first: +10 % is 110 MiB, but the 64 MiB minimum holds it back until 164 MiB.
    let mut raised = 0;
    for (t, mib) in [(0, 100), (1, 120), (2, 150), (3, 170), (4, 190), (5, 210)] {
        for c in tr.observe(&sample("g", t, true, Some(mib * MIB)), &[], false) {
            if let Change::Raised(MonitorFinding::FootprintDrift(d)) = c {
                raised += 1;
                assert_eq!(d.crossed_bytes, 170 * MIB);
                assert_eq!(d.crossed_at, at(3));
            }
        }
    }
    assert_eq!(raised, 1);
    let f = tr.findings();
    let MonitorFinding::FootprintDrift(d) = &f[0] else {
        panic!()
    };
    assert_eq!(d.first_bytes, 100 * MIB);
    assert_eq!(d.last_bytes, 210 * MIB);
    assert!((d.growth_percent - 110.0).abs() < 1e-9);
    assert_eq!(d.samples, 6);
    // The fitted slope: the points rise by about 22 MiB a second.
    let per_s = d.slope_bytes_per_day / 86_400.0 / MIB as f64;
    assert!((per_s - 21.7).abs() < 1.0, "{per_s}");
}

#[test]
fn a_figure_from_another_source_is_not_compared_with_the_baseline() {
    let mut tr = Tracker::new(th());
    tr.observe(&sample("d", 0, true, Some(100 * MIB)), &[], false);
    let mut other = sample("d", 1, true, Some(10_000 * MIB));
    other.footprint.as_mut().unwrap().source = FootprintSource::DockerStats;
    assert!(tr.observe(&other, &[], false).is_empty());
    let s = &tr.seats()[0];
    assert_eq!(s.footprint_source, Some(FootprintSource::ProcRss));
    assert_eq!(s.last_bytes, Some(100 * MIB));
    assert_eq!(s.max_bytes, Some(10_000 * MIB));
}

#[test]
fn a_restart_starts_a_new_baseline_and_settles_the_old_drift() {
    let mut tr = Tracker::new(th());
    for (t, mib) in [(0, 100), (1, 200), (2, 300)] {
        tr.observe(&sample("r", t, true, Some(mib * MIB)), &[], false);
    }
    assert!(tr.now("r").unwrap().drifting);
    // Restarted: a new start time, a fresh process at 100 MiB that stays flat. The drift ends
    // with the first sample of the new life (said once: the alert's end), and only then.
    for (t, mib) in [(3, 100), (4, 101), (5, 100)] {
        let mut s = sample("r", t, true, Some(mib * MIB));
        s.started_at = Some(at(3));
        let c = tr.observe(&s, &[], false);
        if t == 3 {
            assert!(
                matches!(&c[..], [Change::DriftEnded(d)] if d.last_bytes == 300 * MIB),
                "{c:?}"
            );
        } else {
            assert!(c.is_empty(), "{c:?}");
        }
    }
    let now = tr.now("r").unwrap();
    assert!(!now.drifting && now.outage_since.is_none());
    assert_eq!((now.restarts, now.outages), (1, 0));
    assert_eq!(now.baseline, Some((FootprintSource::ProcRss, 100 * MIB)));
    let f = tr.findings();
    assert_eq!(f.len(), 1, "{f:?}");
    let MonitorFinding::FootprintDrift(d) = &f[0] else {
        panic!()
    };
    // The first life's drift, ended where that life ended.
    assert_eq!(
        (d.first_bytes, d.last_bytes, d.samples),
        (100 * MIB, 300 * MIB, 3)
    );
    let s = &tr.seats()[0];
    assert_eq!(s.restarts, 1);
    assert_eq!(
        (s.first_bytes, s.last_bytes),
        (Some(100 * MIB), Some(100 * MIB))
    );
}
