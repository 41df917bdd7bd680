//! Is a serving seat idle? A bench window stops a production seat only once it shows 0 running
//! and 0 waiting requests continuously for `idle_for` (docs/field-cases.md F8: the restore was triggered by
//! the seat's own throughput logs, a large prefill burst then zero running / zero waiting); a
//! seat that is not idle by the deadline is skipped, never forced.
//!
//! Where each engine tells its load (llama.cpp tools/server/README.md, vLLM
//! vllm/v1/metrics/loggers.py, SGLang python/sglang/srt/metrics/collector.py):
//! - llama.cpp: `GET /slots` (on by default, off with `--no-slots`); each slot has
//!   `is_processing` (older builds: `state`, 0 = idle). `/metrics` (needs `--metrics`) adds
//!   `llamacpp:requests_deferred`, the requests waiting for a slot, and is the fallback when
//!   `/slots` is off (`llamacpp:requests_processing`).
//! - vLLM: `/metrics` gauges `vllm:num_requests_running` and `vllm:num_requests_waiting`, one
//!   sample per label set (`model_name`, `engine`), summed.
//! - SGLang (`--enable-metrics`): `sglang:num_running_reqs`, `sglang:num_queue_reqs`. While idle
//!   SGLang refreshes these only every 30 s (scheduler `check_memory`: "During idle time, also
//!   collect metrics every 30 seconds"), so a seat that has just gone idle still reads busy for
//!   up to 30 s: the wait is longer, never wrong in the unsafe direction.
//!
//! Every request goes through `bakeoff_client::Client` (the one `Authorization`, no proxy, a fresh
//! connection) under its own time limit; a reading that fails is never taken as idle.

use std::fmt;
use std::future::Future;
use std::time::Duration;

use bakeoff_artifact::EngineKind;
use bakeoff_client::prometheus::{self, Scrape};
use bakeoff_client::{Client, ClientOptions, EndpointUrl, Timeouts};
use tokio::sync::watch;
// Tokio's clock, not std's: it is the one the naps between readings sleep on, and a test that
// pauses the runtime's clock drives the whole wait without waiting.
use tokio::time::Instant;

mod error;

use error::{Hint, Miss};
pub use error::{ReadError, Tried};

/// Requests a seat is working on right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Load {
    pub running: u64,
    pub waiting: u64,
}

impl Load {
    pub fn is_idle(&self) -> bool {
        self.running == 0 && self.waiting == 0
    }
}

impl fmt::Display for Load {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} running, {} waiting", self.running, self.waiting)
    }
}

/// Where a reading came from, for the record: "/slots", "/metrics (llamacpp:requests_processing,
/// llamacpp:requests_deferred)", "/metrics (vllm:num_requests_running,
/// vllm:num_requests_waiting)", "/metrics (sglang:num_running_reqs, sglang:num_queue_reqs)";
/// llama.cpp with both endpoints on: "/slots + /metrics (llamacpp:requests_deferred)".
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    pub load: Load,
    pub source: String,
}

impl fmt::Display for Reading {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (from {})", self.load, self.source)
    }
}

/// How a wait for idle ended.
#[derive(Debug, Clone, PartialEq)]
pub enum IdleWait {
    /// Idle for `idle_for` continuously; `waited` from the call to the end of that stretch.
    Idle { waited: Duration, source: String },
    /// Not idle by the deadline: the last reading (or the last error) and how long it was waited
    /// for.
    Busy { waited: Duration, last: String },
    /// The load could not be read at all by the deadline (every reading failed): the last error.
    Unreadable { waited: Duration, error: String },
    /// `stop` flipped to true (Ctrl-C) while waiting.
    Stopped,
}

const SLOTS: &str = "/slots";
const SLOTS_AND_DEFERRED: &str = "/slots + /metrics (llamacpp:requests_deferred)";

/// One engine's pair of Prometheus gauges: the first names of its row in the one table
/// ([`prometheus::ENGINE_GAUGES`], which `bench run` and the seat monitor read too).
struct Gauges {
    running: &'static str,
    waiting: &'static str,
    /// `/metrics (vllm:num_requests_running, vllm:num_requests_waiting)`.
    source: String,
}

impl Gauges {
    fn of(engine: EngineKind) -> Self {
        let first = |names: &[&'static str]| names.first().copied().unwrap_or("?");
        // Every engine with a metrics family has a row; a generic server has neither.
        let (running, waiting) = prometheus::engine_gauges(engine)
            .map_or(("?", "?"), |g| (first(g.running), first(g.waiting)));
        Gauges {
            running,
            waiting,
            source: format!("/metrics ({running}, {waiting})"),
        }
    }
}

/// The longest single reading inside [`wait_idle`] (capped further by the time left).
const READ_LIMIT: Duration = Duration::from_secs(5);
/// The shortest limit of one reading inside [`wait_idle_with`] near its deadline.
const MIN_READ_LIMIT: Duration = Duration::from_millis(500);
/// The shortest poll interval [`wait_idle`] honours.
const MIN_POLL: Duration = Duration::from_millis(20);

/// Read the load of the server at `base_url` (`http://host:port`, no trailing path) for an
/// engine.
///
/// - llama.cpp: `/slots` (running = slots processing) and `/metrics` side by side; waiting is
///   `llamacpp:requests_deferred` when `/metrics` is on, else 0 (a request waits only while every
///   slot is busy, so an idle `/slots` is idle). Without `/slots`, `/metrics` alone.
/// - vLLM, SGLang: their two `/metrics` gauges, summed over label sets.
/// - Generic: `/metrics` for any of the three engines' gauges, else `/slots`.
///
/// Each request has `timeout`; the requests of one reading run side by side, so a reading takes
/// about `timeout` at most. An Err is one line naming what was tried and the fix, e.g.
/// "llama.cpp at URL: /slots answered 501 (started with --no-slots?) and /metrics answered 501
/// (add --metrics): cannot tell whether it is idle".
pub async fn read_load(
    base_url: &str,
    engine: EngineKind,
    timeout: Duration,
) -> Result<Reading, ReadError> {
    let client = client(base_url, engine, timeout, None, &Default::default())?;
    read_load_with(&client, engine, timeout).await
}

/// [`read_load`] through a client the caller built, e.g. one that carries the seat's API key (a
/// llama-server started with `--api-key` guards `/slots` and `/metrics` with it).
pub async fn read_load_with(
    client: &Client,
    engine: EngineKind,
    timeout: Duration,
) -> Result<Reading, ReadError> {
    let unreadable = |tried: Tried, fix: &'static str| ReadError::Unreadable {
        engine,
        url: client.url().redacted(),
        tried: Box::new(tried),
        fix,
    };
    match engine {
        EngineKind::LlamaCpp => {
            let (slots, metrics) = tokio::join!(
                fetch(client, "slots", timeout),
                fetch(client, "metrics", timeout)
            );
            let slots = slots.and_then(|t| slots_running(&t));
            let g = Gauges::of(EngineKind::LlamaCpp);
            let metrics = metrics.and_then(|t| gauges(&prometheus::parse(&t), &g));
            match (slots, metrics) {
                (Ok(running), Ok(m)) => Ok(reading(running, m.waiting, SLOTS_AND_DEFERRED)),
                (Ok(running), Err(_)) => Ok(reading(running, 0, SLOTS)),
                (Err(_), Ok(load)) => Ok(Reading {
                    load,
                    source: g.source,
                }),
                (Err(s), Err(m)) => Err(unreadable(
                    Tried::two(
                        ("/slots", s, slots_hint),
                        ("/metrics", m, llamacpp_metrics_hint),
                    ),
                    "",
                )),
            }
        }
        EngineKind::Vllm | EngineKind::Sglang => {
            let hint: Hint = if engine == EngineKind::Vllm {
                vllm_hint
            } else {
                sglang_hint
            };
            let g = Gauges::of(engine);
            match fetch(client, "metrics", timeout)
                .await
                .and_then(|t| gauges(&prometheus::parse(&t), &g))
            {
                Ok(load) => Ok(Reading {
                    load,
                    source: g.source,
                }),
                Err(m) => Err(unreadable(Tried::one("/metrics", m, hint), "")),
            }
        }
        EngineKind::Generic => {
            let (metrics, slots) = tokio::join!(
                fetch(client, "metrics", timeout),
                fetch(client, "slots", timeout)
            );
            let metrics = metrics.and_then(|t| any_engine_gauges(&prometheus::parse(&t)));
            match (metrics, slots.and_then(|t| slots_running(&t))) {
                (Ok(r), _) => Ok(r),
                (Err(_), Ok(running)) => Ok(reading(running, 0, SLOTS)),
                (Err(m), Err(s)) => {
                    // Naming the engine helps only when something answered.
                    let fix = if matches!((&m, &s), (Miss::Request(_), Miss::Request(_))) {
                        ""
                    } else {
                        " (name the seat's engine, and turn its metrics on: llama.cpp --metrics, \
                         SGLang --enable-metrics)"
                    };
                    Err(unreadable(
                        Tried::two(("/metrics", m, common_hint), ("/slots", s, common_hint)),
                        fix,
                    ))
                }
            }
        }
    }
}

/// Poll [`read_load`] every `poll` until the seat has been idle for `idle_for` without a break (a
/// busy reading or a failed reading restarts the stretch), or `timeout` passes, or `stop` becomes
/// true. A reading due at the deadline is still taken. Each reading is bounded by 5 s and by the
/// time left (at least 0.5 s), so the call returns within about 0.5 s of `timeout`. A `base_url`
/// that is not an http URL is `Unreadable` at once. `api_key`: the seat's (`api_key_env`), for
/// an engine that guards `/slots` and `/metrics` with it.
pub async fn wait_idle(
    base_url: &str,
    api_key: Option<bakeoff_client::ApiKey>,
    engine: EngineKind,
    idle_for: Duration,
    timeout: Duration,
    poll: Duration,
    stop: &mut watch::Receiver<bool>,
) -> IdleWait {
    let access = SeatAccess {
        api_key,
        tls: Default::default(),
    };
    wait_idle_at(base_url, access, engine, idle_for, timeout, poll, stop).await
}

/// How a seat is read: its key (`api_key_env`) and how an `https://` seat is trusted (its
/// `[seat.tls]`).
#[derive(Debug, Clone, Default)]
pub struct SeatAccess {
    pub api_key: Option<bakeoff_client::ApiKey>,
    pub tls: bakeoff_client::tls::TlsOptions,
}

/// [`wait_idle`] of a seat read as `access` says.
pub async fn wait_idle_at(
    base_url: &str,
    access: SeatAccess,
    engine: EngineKind,
    idle_for: Duration,
    timeout: Duration,
    poll: Duration,
    stop: &mut watch::Receiver<bool>,
) -> IdleWait {
    let started = Instant::now();
    match client(base_url, engine, READ_LIMIT, access.api_key, &access.tls) {
        Ok(c) => wait_idle_with(&c, engine, idle_for, timeout, poll, stop).await,
        Err(error) => IdleWait::Unreadable {
            waited: started.elapsed(),
            error: error.to_string(),
        },
    }
}

/// [`wait_idle`] through a client the caller built (see [`read_load_with`]).
pub async fn wait_idle_with(
    client: &Client,
    engine: EngineKind,
    idle_for: Duration,
    timeout: Duration,
    poll: Duration,
    stop: &mut watch::Receiver<bool>,
) -> IdleWait {
    wait_idle_on(
        |limit| read_load_with(client, engine, limit),
        idle_for,
        timeout,
        poll,
        stop,
    )
    .await
}

/// The wait of [`wait_idle`] over any source of readings: `read(limit)` takes one reading,
/// bounded by `limit` (5 s, or the time left but at least 0.5 s). Time is tokio's clock
/// ([`tokio::time::Instant`]), so with the runtime's clock paused the wait runs at once, in
/// the same order, with the same figures.
pub async fn wait_idle_on<F, Fut, E>(
    mut read: F,
    idle_for: Duration,
    timeout: Duration,
    poll: Duration,
    stop: &mut watch::Receiver<bool>,
) -> IdleWait
where
    F: FnMut(Duration) -> Fut,
    Fut: Future<Output = Result<Reading, E>>,
    E: fmt::Display,
{
    let started = Instant::now();
    let deadline = started + timeout;
    let poll = poll.max(MIN_POLL);
    let mut idle_since: Option<Instant> = None;
    let mut any_read = false;
    loop {
        let limit = deadline
            .saturating_duration_since(Instant::now())
            .clamp(MIN_READ_LIMIT, READ_LIMIT);
        let got = tokio::select! {
            biased;
            () = stopped(stop) => return IdleWait::Stopped,
            r = read(limit) => r,
        };
        let now = Instant::now();
        let last = match got {
            Ok(r) if r.load.is_idle() => {
                any_read = true;
                let since = *idle_since.get_or_insert(now);
                if now.duration_since(since) >= idle_for {
                    return IdleWait::Idle {
                        waited: now.duration_since(started),
                        source: r.source,
                    };
                }
                r.to_string()
            }
            Ok(r) => {
                any_read = true;
                idle_since = None;
                r.to_string()
            }
            Err(e) => {
                idle_since = None;
                e.to_string()
            }
        };
        if now >= deadline {
            let waited = now.duration_since(started);
            return if any_read {
                IdleWait::Busy { waited, last }
            } else {
                IdleWait::Unreadable {
                    waited,
                    error: last,
                }
            };
        }
        let nap = poll.min(deadline.saturating_duration_since(now));
        tokio::select! {
            biased;
            () = stopped(stop) => return IdleWait::Stopped,
            () = tokio::time::sleep(nap) => {}
        }
    }
}

/// Resolves once `stop` is true; never, if its sender is gone while it is false.
async fn stopped(stop: &mut watch::Receiver<bool>) {
    if stop.wait_for(|s| *s).await.is_err() {
        std::future::pending::<()>().await;
    }
}

fn client(
    base_url: &str,
    engine: EngineKind,
    timeout: Duration,
    api_key: Option<bakeoff_client::ApiKey>,
    tls: &bakeoff_client::tls::TlsOptions,
) -> Result<Client, ReadError> {
    let url = EndpointUrl::parse(base_url).map_err(|source| ReadError::Url { engine, source })?;
    let tls =
        bakeoff_client::tls::Tls::new(tls).map_err(|source| ReadError::Tls { engine, source })?;
    let opts = ClientOptions {
        timeouts: Timeouts {
            connect: timeout,
            first_byte: timeout,
            idle: timeout,
            total: timeout,
        },
        api_key,
        tls,
    };
    Client::try_new(url, opts).map_err(|source| ReadError::Client { engine, source })
}

fn reading(running: u64, waiting: u64, source: &str) -> Reading {
    Reading {
        load: Load { running, waiting },
        source: source.into(),
    }
}

fn common_hint(m: &Miss) -> Option<&'static str> {
    match m {
        Miss::Request(e) if e.is_unreachable() => Some("is the seat up?"),
        Miss::Status(401 | 403) => Some("the seat wants its API key"),
        Miss::Status(503) => Some("still starting?"),
        _ => None,
    }
}

fn slots_hint(m: &Miss) -> Option<&'static str> {
    match m {
        Miss::Status(501) => Some("started with --no-slots?"),
        Miss::Status(404) => Some("not a llama-server?"),
        _ => common_hint(m),
    }
}

fn llamacpp_metrics_hint(m: &Miss) -> Option<&'static str> {
    match m {
        Miss::Status(501) => Some("add --metrics"),
        Miss::Status(404) | Miss::Absent(_) => Some("not a llama-server?"),
        _ => common_hint(m),
    }
}

fn vllm_hint(m: &Miss) -> Option<&'static str> {
    match m {
        Miss::Status(404) => Some("not a vLLM server?"),
        // vLLM registers its engine gauges only when it logs stats.
        Miss::Absent(_) => Some("started with --disable-log-stats?"),
        _ => common_hint(m),
    }
}

fn sglang_hint(m: &Miss) -> Option<&'static str> {
    match m {
        Miss::Status(404) => Some("add --enable-metrics"),
        Miss::Absent(_) => Some("not an SGLang server, or started without --enable-metrics?"),
        _ => common_hint(m),
    }
}

/// GET a path under the server root, 200 only.
async fn fetch(client: &Client, path: &str, timeout: Duration) -> Result<String, Miss> {
    match client.get_text(client.url().root_path(path), timeout).await {
        Ok((200, text)) => Ok(text),
        Ok((status, _)) => Err(Miss::Status(status)),
        Err(e) => Err(Miss::Request(e)),
    }
}

/// llama.cpp `/slots`: a list with one object per slot, `is_processing` on current builds
/// (tools/server README), `state` (0 idle, 1 processing) on older ones. An empty list or a slot
/// with neither field tells nothing, so it is no reading.
fn slots_running(text: &str) -> Result<u64, Miss> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|_| Miss::NotSlots("the body is not JSON".into()))?;
    let slots = v
        .as_array()
        .ok_or_else(|| Miss::NotSlots("the body is not a list of slots".into()))?;
    if slots.is_empty() {
        return Err(Miss::NotSlots("the list of slots is empty".into()));
    }
    let mut running = 0;
    for (i, slot) in slots.iter().enumerate() {
        let busy = match (
            slot.get("is_processing").and_then(|b| b.as_bool()),
            slot.get("state").and_then(|s| s.as_u64()),
        ) {
            (Some(b), _) => b,
            (None, Some(state)) => state != 0,
            (None, None) => {
                return Err(Miss::NotSlots(format!(
                    "slot {i} has neither is_processing nor state"
                )));
            }
        };
        running += u64::from(busy);
    }
    Ok(running)
}

/// An engine's two gauges from a scrape (summed over label sets by the parser); both must be
/// there.
fn gauges(s: &Scrape, g: &Gauges) -> Result<Load, Miss> {
    let get = |name: &'static str| s.values.get(name).copied().ok_or(Miss::Absent(name));
    Ok(Load {
        running: count(get(g.running)?),
        waiting: count(get(g.waiting)?),
    })
}

/// The first engine whose running gauge the scrape has.
fn any_engine_gauges(s: &Scrape) -> Result<Reading, Miss> {
    let g = EngineKind::WITH_METRICS
        .into_iter()
        .map(Gauges::of)
        .find(|g| s.values.contains_key(g.running))
        .ok_or(Miss::Absent(
            "vllm:num_requests_running, sglang:num_running_reqs or llamacpp:requests_processing",
        ))?;
    Ok(Reading {
        load: gauges(s, &g)?,
        source: g.source,
    })
}

/// A gauge as a count; any positive value is at least one request (never rounded to idle).
fn count(v: f64) -> u64 {
    if v > 0.0 { v.ceil() as u64 } else { 0 }
}
