//! What the disk a loading seat writes says, decided from samples alone (no I/O, no clock: the
//! driver samples in [`super::disk`] and passes the time).
//!
//! - **The container's writable layer** (`SizeRw`) growing past `writable_layer_limit` while
//!   the seat is not ready is a download landing inside the container, not in a mounted cache:
//!   docs/field-cases.md B7, llama.cpp `-hf` put ~20 GB into `/root/.cache/huggingface` while only the
//!   legacy llama.cpp path was mounted, silently (that build logs no download progress). One
//!   `download-in-writable-layer` finding per watch, its numbers updated as the layer grows.
//! - **A mounted cache growing** is a download making progress: one `download-progress` note,
//!   updated, so an operator sees a load that logs nothing is still downloading.
//! - **A cache with partial blobs (`*.incomplete`) that stopped growing** for `download_stall` is
//!   `download-stalled`, naming whoever holds the hub's blob locks: docs/field-cases.md B6, a stale pull
//!   loop held the locks and the retry waited on them ("the stall is the lock, not a rate
//!   limit"). This is what tells a stalled download from a slow one.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use bakeoff_artifact::{FindingSeverity, SeatFinding};

use super::event::Event;

pub const LAYER_CODE: &str = "download-in-writable-layer";
pub const PROGRESS_CODE: &str = "download-progress";
pub const STALL_CODE: &str = "download-stalled";

/// The most often a live `download-progress` note is sent (the finding itself is updated on
/// every sample).
const PROGRESS_NOTE_EVERY: Duration = Duration::from_secs(30);

/// One sample of the disk a loading seat writes, as the driver read it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DiskSample {
    /// The container's writable layer (`SizeRw`); `None` for a process, or when the Docker
    /// engine did not answer (a missing reading is not a shrink).
    pub layer_bytes: Option<u64>,
    pub caches: Vec<CacheSample>,
}

/// One host-side cache directory the seat downloads into.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheSample {
    pub path: PathBuf,
    pub bytes: u64,
    /// Partial blobs (`*.incomplete`) under it: a download under way or abandoned.
    pub partial: u64,
    /// Who holds a lock under it (read when there are partial blobs).
    pub holders: Vec<LockHolder>,
}

/// A process holding a download lock.
#[derive(Debug, Clone, PartialEq)]
pub struct LockHolder {
    pub pid: u32,
    pub command: String,
    pub lock: PathBuf,
}

/// The limits of the readings (from `WatchOptions`) and the mount to suggest.
#[derive(Debug, Clone)]
pub struct ReadingLimits {
    pub writable_layer_limit: u64,
    pub download_stall: Duration,
    /// The fix of `download-in-writable-layer`: the mount to add, in the seat's own paths.
    pub layer_fix: String,
}

#[derive(Debug, Clone, Copy)]
struct Series {
    first: (Instant, u64),
    last: (Instant, u64),
}

impl Series {
    fn new(now: Instant, bytes: u64) -> Self {
        Self {
            first: (now, bytes),
            last: (now, bytes),
        }
    }

    fn growth(&self) -> u64 {
        self.last.1.saturating_sub(self.first.1)
    }

    fn secs(&self) -> f64 {
        self.last
            .0
            .saturating_duration_since(self.first.0)
            .as_secs_f64()
    }

    /// MB/s over the series (0 when no time passed).
    fn rate(&self) -> f64 {
        let s = self.secs();
        if s > 0.0 {
            self.growth() as f64 / 1e6 / s
        } else {
            0.0
        }
    }
}

#[derive(Debug, Clone)]
struct CacheSeries {
    series: Series,
    /// The last time its size rose (the first sample counts: a stall is measured from it).
    grew_at: Instant,
}

/// Everything the readings know: part of the watch's one struct.
#[derive(Debug, Clone)]
pub struct Readings {
    limits: ReadingLimits,
    start: Instant,
    layer: Option<Series>,
    caches: BTreeMap<PathBuf, CacheSeries>,
    findings: Vec<SeatFinding>,
    last_progress_note: Option<Instant>,
    stall_noted: bool,
}

/// Bytes for an operator: `312.5 MB`, `20.4 GB` (decimal, as the rates).
pub fn size_text(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1e9 {
        format!("{:.1} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.1} kB", b / 1e3)
    } else {
        format!("{bytes} B")
    }
}

impl Readings {
    pub fn new(limits: ReadingLimits, start: Instant) -> Self {
        Self {
            limits,
            start,
            layer: None,
            caches: BTreeMap::new(),
            findings: Vec::new(),
            last_progress_note: None,
            stall_noted: false,
        }
    }

    pub fn set_layer_fix(&mut self, fix: String) {
        self.limits.layer_fix = fix;
    }

    /// The findings so far, one per code.
    pub fn findings(&self) -> &[SeatFinding] {
        &self.findings
    }

    pub fn into_findings(self) -> Vec<SeatFinding> {
        self.findings
    }

    fn at(&self, t: Instant) -> f64 {
        t.saturating_duration_since(self.start).as_secs_f64()
    }

    /// Put `f` in place of the finding of its code, or add it: one finding per code.
    fn upsert(&mut self, f: SeatFinding) {
        match self.findings.iter_mut().find(|x| x.code == f.code) {
            Some(x) => *x = f,
            None => self.findings.push(f),
        }
    }

    fn has(&self, code: &str) -> bool {
        self.findings.iter().any(|f| f.code == code)
    }

    /// One sample, taken at `now`.
    pub fn observe(&mut self, sample: DiskSample, now: Instant, events: &mut Vec<Event>) {
        if let Some(b) = sample.layer_bytes {
            self.on_layer(b, now, events);
        }
        let mut stalled = Vec::new();
        for c in &sample.caches {
            let entry = self
                .caches
                .entry(c.path.clone())
                .or_insert_with(|| CacheSeries {
                    series: Series::new(now, c.bytes),
                    grew_at: now,
                });
            if c.bytes > entry.series.last.1 {
                entry.grew_at = now;
            }
            entry.series.last = (now, c.bytes);
            let still = now.saturating_duration_since(entry.grew_at);
            if c.partial > 0 && still >= self.limits.download_stall {
                stalled.push((c.clone(), still));
            }
        }
        self.on_progress(now, events);
        if !stalled.is_empty() {
            self.on_stall(&stalled, events);
        }
    }

    fn on_layer(&mut self, bytes: u64, now: Instant, events: &mut Vec<Event>) {
        let s = self.layer.get_or_insert(Series::new(now, bytes));
        s.last = (now, bytes);
        let s = *s;
        if s.growth() < self.limits.writable_layer_limit {
            // Once flagged, a layer that shrinks (a file deleted) keeps the numbers it had.
            return;
        }
        let first_time = !self.has(LAYER_CODE);
        let message = format!(
            "the container's writable layer grew by {} in {:.0} s ({:.1} MB/s) before the seat was ready: \
             a download is landing inside the container, not in a mounted cache, and is lost with it",
            size_text(s.growth()),
            s.secs(),
            s.rate()
        );
        let f = SeatFinding::new(LAYER_CODE, FindingSeverity::Warning, message.clone())
            .with_evidence(format!(
                "SizeRw first: {} bytes at +{:.1} s",
                s.first.1,
                self.at(s.first.0)
            ))
            .with_evidence(format!(
                "SizeRw last: {} bytes at +{:.1} s",
                s.last.1,
                self.at(s.last.0)
            ))
            .with_evidence(format!("growth: {} bytes", s.growth()))
            .with_evidence(format!("rate: {:.1} MB/s", s.rate()))
            .with_fix(self.limits.layer_fix.clone());
        self.upsert(f);
        if first_time {
            events.push(Event::Note(format!(
                "{message}; fix: {}",
                self.limits.layer_fix
            )));
        }
    }

    fn on_progress(&mut self, now: Instant, events: &mut Vec<Event>) {
        let growing: Vec<(PathBuf, Series)> = self
            .caches
            .iter()
            .filter(|(_, c)| c.series.growth() > 0)
            .map(|(p, c)| (p.clone(), c.series))
            .collect();
        if growing.is_empty() {
            return;
        }
        let total: u64 = growing.iter().map(|(_, s)| s.growth()).sum();
        let secs = growing.iter().map(|(_, s)| s.secs()).fold(0.0, f64::max);
        let rate = if secs > 0.0 {
            total as f64 / 1e6 / secs
        } else {
            0.0
        };
        let message = format!(
            "downloading: the mounted cache grew by {} in {secs:.0} s ({rate:.1} MB/s)",
            size_text(total)
        );
        let mut f = SeatFinding::new(PROGRESS_CODE, FindingSeverity::Note, message.clone());
        for (p, s) in &growing {
            f = f.with_evidence(format!(
                "{}: {} → {} bytes (+{}, {:.1} MB/s)",
                p.display(),
                s.first.1,
                s.last.1,
                size_text(s.growth()),
                s.rate()
            ));
        }
        self.upsert(f);
        if self
            .last_progress_note
            .is_none_or(|t| now.saturating_duration_since(t) >= PROGRESS_NOTE_EVERY)
        {
            self.last_progress_note = Some(now);
            events.push(Event::Note(message));
        }
    }

    fn on_stall(&mut self, stalled: &[(CacheSample, Duration)], events: &mut Vec<Event>) {
        let partial: u64 = stalled.iter().map(|(c, _)| c.partial).sum();
        let still = stalled
            .iter()
            .map(|(_, d)| d.as_secs_f64())
            .fold(0.0, f64::max);
        let paths: Vec<String> = stalled
            .iter()
            .map(|(c, _)| c.path.display().to_string())
            .collect();
        let holders: Vec<&LockHolder> = stalled.iter().flat_map(|(c, _)| &c.holders).collect();
        let mut pids: Vec<u32> = holders.iter().map(|h| h.pid).collect();
        pids.sort_unstable();
        pids.dedup();
        let who = if pids.is_empty() {
            "no process holds its locks".to_string()
        } else {
            format!("the lock is held by pid {}", join(&pids))
        };
        let message = format!(
            "a download stalled in {}: {partial} partial blob(s) (*.incomplete) have not grown for {still:.0} s; {who}",
            paths.join(", ")
        );
        let fix = if pids.is_empty() {
            "no process holds the lock: the download stopped — check the network/token".to_string()
        } else {
            format!("end {} (a stale pull holds the lock)", join(&pids))
        };
        let mut f = SeatFinding::new(STALL_CODE, FindingSeverity::Warning, message.clone())
            .with_fix(fix.clone());
        for (c, d) in stalled {
            f = f.with_evidence(format!(
                "{}: {} bytes, {} partial blob(s), no growth for {:.1} s",
                c.path.display(),
                c.bytes,
                c.partial,
                d.as_secs_f64()
            ));
        }
        for h in holders {
            f = f.with_evidence(format!(
                "lock {} held by pid {}: {}",
                h.lock.display(),
                h.pid,
                h.command
            ));
        }
        self.upsert(f);
        if !self.stall_noted {
            self.stall_noted = true;
            events.push(Event::Note(format!("{message}; fix: {fix}")));
        }
    }
}

fn join(pids: &[u32]) -> String {
    pids.iter()
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const MB: u64 = 1_000_000;

    fn limits() -> ReadingLimits {
        ReadingLimits {
            writable_layer_limit: 100 * MB,
            download_stall: Duration::from_secs(2),
            layer_fix: "mount a host directory at /root/.cache/huggingface".into(),
        }
    }

    fn layer(b: u64) -> DiskSample {
        DiskSample {
            layer_bytes: Some(b),
            caches: vec![],
        }
    }

    fn cache(bytes: u64, partial: u64, holders: Vec<LockHolder>) -> DiskSample {
        DiskSample {
            layer_bytes: None,
            caches: vec![CacheSample {
                path: "/srv/hf".into(),
                bytes,
                partial,
                holders,
            }],
        }
    }

    fn notes(ev: &[Event]) -> Vec<String> {
        ev.iter()
            .filter_map(|e| match e {
                Event::Note(n) => Some(n.clone()),
                _ => None,
            })
            .collect()
    }

    /// docs/field-cases.md B7: a layer growing past the limit is flagged once, and its numbers follow the
    /// growth; below the limit nothing is said.
    #[test]
    fn a_growing_layer_is_one_finding_updated() {
        let t0 = Instant::now();
        let mut r = Readings::new(limits(), t0);
        let mut ev = Vec::new();
        r.observe(layer(5 * MB), t0, &mut ev);
        r.observe(layer(60 * MB), t0 + Duration::from_secs(1), &mut ev);
        assert!(r.findings().is_empty());
        r.observe(layer(205 * MB), t0 + Duration::from_secs(2), &mut ev);
        r.observe(layer(405 * MB), t0 + Duration::from_secs(4), &mut ev);
        assert_eq!(r.findings().len(), 1);
        let f = &r.findings()[0];
        assert_eq!(f.code, LAYER_CODE);
        assert_eq!(f.severity, FindingSeverity::Warning);
        assert!(f.message.contains("400.0 MB in 4 s (100.0 MB/s)"), "{f:?}");
        assert!(
            f.evidence
                .iter()
                .any(|e| e == "SizeRw first: 5000000 bytes at +0.0 s")
        );
        assert!(
            f.evidence
                .iter()
                .any(|e| e == "SizeRw last: 405000000 bytes at +4.0 s")
        );
        assert!(f.evidence.iter().any(|e| e == "growth: 400000000 bytes"));
        assert!(
            f.fix
                .as_deref()
                .unwrap()
                .contains("/root/.cache/huggingface")
        );
        assert_eq!(notes(&ev).len(), 1, "{ev:?}");
        // A missing reading is neither a shrink nor a reset.
        r.observe(DiskSample::default(), t0 + Duration::from_secs(5), &mut ev);
        assert!(r.findings()[0].message.contains("400.0 MB"));
    }

    /// A cache that grows is progress, not a stall, even with partial blobs.
    #[test]
    fn a_growing_cache_is_progress() {
        let t0 = Instant::now();
        let mut r = Readings::new(limits(), t0);
        let mut ev = Vec::new();
        for i in 0..6u64 {
            r.observe(
                cache(i * 50 * MB, 1, vec![]),
                t0 + Duration::from_secs(i),
                &mut ev,
            );
        }
        assert_eq!(r.findings().len(), 1, "{:?}", r.findings());
        let f = &r.findings()[0];
        assert_eq!(f.code, PROGRESS_CODE);
        assert!(f.message.contains("250.0 MB in 5 s (50.0 MB/s)"), "{f:?}");
        // One live note, however many samples (rate-limited).
        assert_eq!(notes(&ev).len(), 1);
    }

    /// docs/field-cases.md B6: partial blobs that stopped growing past the stall window, with the lock
    /// held by a live process, name that process; without a holder the fix points elsewhere.
    #[test]
    fn a_stalled_download_names_the_lock_holder() {
        let t0 = Instant::now();
        let holder = LockHolder {
            pid: 4242,
            command: "hf download org/model".into(),
            lock: "/srv/hf/hub/.locks/models--org--model/abc.lock".into(),
        };
        let mut r = Readings::new(limits(), t0);
        let mut ev = Vec::new();
        r.observe(cache(10 * MB, 1, vec![]), t0, &mut ev);
        r.observe(
            cache(20 * MB, 1, vec![]),
            t0 + Duration::from_secs(1),
            &mut ev,
        );
        // Not grown for 1 s: slow, not stalled.
        r.observe(
            cache(20 * MB, 1, vec![holder.clone()]),
            t0 + Duration::from_secs(2),
            &mut ev,
        );
        assert!(!r.findings().iter().any(|f| f.code == STALL_CODE));
        r.observe(
            cache(20 * MB, 1, vec![holder.clone()]),
            t0 + Duration::from_secs(3),
            &mut ev,
        );
        r.observe(
            cache(20 * MB, 1, vec![holder]),
            t0 + Duration::from_secs(4),
            &mut ev,
        );
        let stalls: Vec<_> = r
            .findings()
            .iter()
            .filter(|f| f.code == STALL_CODE)
            .collect();
        assert_eq!(stalls.len(), 1);
        let f = stalls[0];
        assert_eq!(
            f.fix.as_deref(),
            Some("end 4242 (a stale pull holds the lock)")
        );
        assert!(f.message.contains("not grown for 3 s"), "{f:?}");
        assert!(
            f.evidence
                .iter()
                .any(|e| e.contains("held by pid 4242: hf download org/model")),
            "{f:?}"
        );
        assert_eq!(
            notes(&ev).iter().filter(|n| n.contains("stalled")).count(),
            1
        );

        let mut r = Readings::new(limits(), t0);
        r.observe(cache(10 * MB, 2, vec![]), t0, &mut ev);
        r.observe(
            cache(10 * MB, 2, vec![]),
            t0 + Duration::from_secs(3),
            &mut ev,
        );
        let f = r.findings().iter().find(|f| f.code == STALL_CODE).unwrap();
        assert!(
            f.fix
                .as_deref()
                .unwrap()
                .contains("check the network/token")
        );
    }

    /// A cache without partial blobs that does not grow is a finished or idle cache.
    #[test]
    fn an_idle_cache_is_nothing() {
        let t0 = Instant::now();
        let mut r = Readings::new(limits(), t0);
        let mut ev = Vec::new();
        r.observe(cache(10 * MB, 0, vec![]), t0, &mut ev);
        r.observe(
            cache(10 * MB, 0, vec![]),
            t0 + Duration::from_secs(60),
            &mut ev,
        );
        assert!(r.findings().is_empty());
        assert!(ev.is_empty());
    }

    /// Through the watch's state machine: a disk observation's finding reaches the report, its
    /// note the events, with the fix the driver set.
    #[test]
    fn the_watch_reports_the_findings() {
        use super::super::machine::{Observation, Watchdog};
        use super::super::{ProbeTarget, WatchOptions};
        let t0 = Instant::now();
        let opts = WatchOptions {
            writable_layer_limit: 100 * MB,
            ..WatchOptions::default()
        };
        let first = crate::observed::Status::missing();
        let mut wd = Watchdog::new(ProbeTarget::default(), opts, t0, first);
        wd.set_layer_fix("mount it".into());
        assert!(wd.step(Observation::Disk(layer(0)), t0).is_empty());
        let ev = wd.step(
            Observation::Disk(layer(200 * MB)),
            t0 + Duration::from_secs(2),
        );
        assert!(
            notes(&ev).iter().any(|n| n.contains("writable layer")),
            "{ev:?}"
        );
        let r = wd.finish(t0 + Duration::from_secs(3));
        assert_eq!(r.findings.len(), 1, "{:?}", r.findings);
        assert_eq!(r.findings[0].code, LAYER_CODE);
        assert_eq!(r.findings[0].fix.as_deref(), Some("mount it"));
    }

    #[test]
    fn sizes_read_at_a_glance() {
        assert_eq!(size_text(512), "512 B");
        assert_eq!(size_text(312_500_000), "312.5 MB");
        assert_eq!(size_text(20_400_000_000), "20.4 GB");
    }
}
