//! The watch's driver: gathers observations — log lines from the backend's follower, the
//! backend's state every 300 ms, readiness probes every `probe_interval`, the disk the seat
//! writes every `disk_every` until ready ([`super::disk`]), a tick at least every 100 ms —
//! feeds them to the [`Watchdog`] and stops at its terminal event.

use std::time::{Duration, Instant};

use bakeoff_client::Client;
use bakeoff_client::preflight::{PreflightOptions, PreflightOutcome, run_preflight};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::disk::{self, DiskPlan};
use super::machine::{Ending, Event, Observation, Watchdog};
use super::readings::DiskSample;
use super::{ProbeTarget, State, WatchOptions, WatchReport, probe_client_for};
use crate::backend::Backend;

/// How often the backend's state is read.
const STATUS_EVERY: Duration = Duration::from_millis(300);
/// The longest wait for a log line before the timers are checked.
const TICK: Duration = Duration::from_millis(100);
/// How long the lines the follower already has are read after a failure: the lines just
/// before an exit are the evidence.
const DRAIN: Duration = Duration::from_millis(400);
/// The most lines taken from the queue at once before the checks run.
const BATCH: usize = 4096;

/// Watch `backend` (already started) until ready or failed, sampling only its container's
/// writable layer (no cache directories: see [`watch_with_disk`]).
pub async fn watch(
    backend: &mut Backend,
    url: &str,
    target: ProbeTarget,
    opts: &WatchOptions,
) -> WatchReport {
    watch_with_disk(backend, url, target, DiskPlan::default(), opts).await
}

/// Watch `backend` (already started) until ready or failed, reading the disk `plan` names
/// while it loads.
pub async fn watch_with_disk(
    backend: &mut Backend,
    url: &str,
    target: ProbeTarget,
    plan: DiskPlan,
    opts: &WatchOptions,
) -> WatchReport {
    let start = Instant::now();
    let (tx, mut rx) = mpsc::channel::<String>(1024);
    let follower = backend.follow(tx);
    let mut probes = Probes {
        client: probe_client_for(url, target.api_key.clone(), &target.tls),
        model: target.model.clone(),
        running: None,
        next: Instant::now(),
    };
    let mut disk = DiskSampling {
        every: opts.disk_every.max(disk::MIN_EVERY),
        running: None,
        next: Instant::now(),
        plan,
    };
    let first = backend.status().await;
    let mut wd = Watchdog::new(target, opts.clone(), start, first);
    if !disk.plan.layer_fix.is_empty() {
        wd.set_layer_fix(disk.plan.layer_fix.clone());
    }
    send(
        opts,
        Event::Began {
            model: probes.model.clone(),
        },
    );

    let mut next_status = Instant::now();
    let ending = loop {
        // Wait for a line or a tick, then take every line already queued, then run the
        // checks: a seat that logs faster than the tick must still reach them (a `continue`
        // per line starved them, and a chatty seat was watched forever).
        let mut ended = None;
        for line in next_batch(&mut rx).await {
            ended = ended.or(decided(
                opts,
                wd.step(Observation::Line(line), Instant::now()),
            ));
        }
        if let Some(e) = ended {
            break e;
        }
        if let Some(e) = probes.turn(&mut wd, opts) {
            break e;
        }
        if let Some(e) = disk.turn(&mut wd, opts, backend) {
            break e;
        }
        if Instant::now() >= next_status {
            next_status = Instant::now() + STATUS_EVERY;
            let st = backend.status().await;
            if let Some(e) = decided(opts, wd.step(Observation::State(st), Instant::now())) {
                break e;
            }
        }
        if let Some(e) = decided(opts, wd.step(Observation::Tick, Instant::now())) {
            break e;
        }
    };

    // Drain what the follower already has: the lines just before an exit are the evidence.
    if ending != Ending::Ready {
        let drain_until = Instant::now() + DRAIN;
        while let Ok(Some(line)) = tokio::time::timeout_at(drain_until.into(), rx.recv()).await {
            wd.step(Observation::Line(line), Instant::now());
        }
    }
    follower.abort();
    probes.abort();
    disk.abort();
    wd.finish(Instant::now())
}

/// The readiness probes: at most one running beside the watch loop, the next one
/// `probe_interval` after the last finished.
struct Probes {
    /// `None` when the seat's URL or TLS options make no client: no probe runs.
    client: Option<Client>,
    model: Option<String>,
    running: Option<JoinHandle<PreflightOutcome>>,
    next: Instant,
}

impl Probes {
    /// A finished probe is observed; the next one starts when due.
    fn turn(&mut self, wd: &mut Watchdog, opts: &WatchOptions) -> Option<Ending> {
        if let Some(p) = &self.running
            && p.is_finished()
        {
            if let Some(Ok(out)) = self
                .running
                .take()
                .and_then(futures_util::FutureExt::now_or_never)
                && let Some(e) = decided(
                    opts,
                    wd.step(Observation::Probe(Box::new(out)), Instant::now()),
                )
            {
                return Some(e);
            }
            self.next = Instant::now() + opts.probe_interval;
        }
        if self.running.is_none()
            && Instant::now() >= self.next
            && let Some(c) = self.client.clone()
        {
            let popts = PreflightOptions {
                model: self.model.clone(),
                max_model_len: None,
                // Long enough for one short completion on a busy 2-core machine; the
                // probe runs beside the watch loop, so silence and exits are still seen.
                ready_timeout: Duration::from_secs(10),
                probe_tools: false,
            };
            self.running = Some(tokio::spawn(async move { run_preflight(&c, &popts).await }));
        }
        None
    }

    fn abort(&mut self) {
        if let Some(p) = self.running.take() {
            p.abort();
        }
    }
}

/// The disk the loading seat writes: one sample at a time (an inspect with sizes of a big
/// layer may take longer than the period), every `every` while not ready.
struct DiskSampling {
    every: Duration,
    running: Option<JoinHandle<DiskSample>>,
    next: Instant,
    plan: DiskPlan,
}

impl DiskSampling {
    /// A finished sample is observed; the next one starts when due, while not ready.
    fn turn(
        &mut self,
        wd: &mut Watchdog,
        opts: &WatchOptions,
        backend: &Backend,
    ) -> Option<Ending> {
        if self.running.as_ref().is_some_and(|d| d.is_finished())
            && let Some(Ok(sample)) = self
                .running
                .take()
                .and_then(futures_util::FutureExt::now_or_never)
            && let Some(e) = decided(opts, wd.step(Observation::Disk(sample), Instant::now()))
        {
            return Some(e);
        }
        if self.running.is_none() && wd.state() < State::Ready && Instant::now() >= self.next {
            self.next = Instant::now() + self.every;
            let layer = backend.writable_layer_reader();
            if layer.is_some() || !self.plan.caches.is_empty() {
                self.running = Some(tokio::spawn(disk::sample(layer, self.plan.caches.clone())));
            }
        }
        None
    }

    fn abort(&mut self) {
        if let Some(d) = self.running.take() {
            d.abort();
        }
    }
}

/// The lines to observe next: one line or none within a tick, then every line already queued.
async fn next_batch(rx: &mut mpsc::Receiver<String>) -> Vec<String> {
    let mut batch = Vec::new();
    tokio::select! {
        line = rx.recv() => match line {
            Some(line) => batch.push(line),
            // The follower ended (it only does when the channel closes): keep ticking.
            None => tokio::time::sleep(Duration::from_millis(50)).await,
        },
        _ = tokio::time::sleep(TICK) => {}
    }
    while batch.len() < BATCH {
        match rx.try_recv() {
            Ok(line) => batch.push(line),
            Err(_) => break,
        }
    }
    batch
}

/// The terminal event among `events`, if any; the others go to the progress display.
fn decided(opts: &WatchOptions, events: Vec<Event>) -> Option<Ending> {
    events.into_iter().find_map(|e| match e {
        Event::Decided(end) => Some(end),
        other => {
            send(opts, other);
            None
        }
    })
}

/// An event to the progress display, if there is one (a display gone away is no error).
fn send(opts: &WatchOptions, event: Event) {
    if let Some(tx) = &opts.events {
        let _ = tx.send(event);
    }
}
