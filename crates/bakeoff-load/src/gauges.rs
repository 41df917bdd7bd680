//! The engine's own gauges sampled through a step (docs/metrics.md, "Engine gauges through a
//! step"): running, waiting, KV-cache usage and preemptions, every `--gauge-interval` (default
//! 1 s), from `/metrics` (the one table: [`crate::prometheus::ENGINE_GAUGES`]), else from
//! llama.cpp's `/slots` (on by default in llama-server; `/metrics` needs `--metrics`).
//!
//! The sampler keeps off the measured hot path: it is a task of its own, and its scrapes go
//! through the client's control path (reqwest, a fresh connection each, a bounded wait) while
//! the measured requests stream over the lean HTTP/1.1 transport (`bakeoff_client::h1`); they
//! share nothing but the address. A failed scrape is a sample with an error, never fatal.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use bakeoff_artifact::{EngineKind, GaugeSample, GaugeSeries, GaugeStat};
use bakeoff_client::{Client, Method, RequestError};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::prometheus;

/// Where the gauges are read, settled by the first scrape that answered.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Source {
    Unknown,
    Metrics(EngineKind),
    Slots,
    /// The first scrape was answered, and neither `/metrics` nor `/slots` has gauges (a
    /// gateway, the loopback target): sampling stops there.
    Absent,
}

impl Source {
    fn describe(self) -> String {
        match self {
            Source::Unknown | Source::Absent => "unavailable".into(),
            // Every engine with a gauge table has a metrics family.
            Source::Metrics(e) => e
                .metrics_family()
                .map_or_else(|| "unavailable".into(), |f| format!("{f} /metrics")),
            Source::Slots => "llama.cpp /slots".into(),
        }
    }
}

/// Why one reading has no values: the sample's `error`.
#[derive(Debug, thiserror::Error)]
enum ReadError {
    #[error("/metrics has no llama.cpp, vLLM or SGLang gauges")]
    NoGauges,
    #[error("/metrics answered HTTP {0}")]
    MetricsStatus(u16),
    #[error("/metrics: {0}")]
    Metrics(#[source] RequestError),
    #[error("/slots answered HTTP {0}")]
    SlotsStatus(u16),
    #[error("/slots: {0}")]
    Slots(#[source] RequestError),
    /// Both answered, neither with gauges: sampling stops.
    #[error("{metrics}; {slots}: no engine gauges to sample")]
    Absent {
        metrics: Box<ReadError>,
        slots: Box<ReadError>,
    },
}

/// What the sampling task gathered.
#[derive(Debug)]
struct Raw {
    source: Source,
    names: BTreeMap<String, String>,
    samples: Vec<GaugeSample>,
    /// llama.cpp: the slots in all, read once from `/slots`.
    slots: Option<f64>,
}

/// A running sampler; [`GaugeSampler::finish`] stops it and returns the series.
pub struct GaugeSampler {
    stop: oneshot::Sender<()>,
    task: JoinHandle<Raw>,
    interval: Duration,
}

impl GaugeSampler {
    /// Start sampling now (the step's start), every `interval`.
    pub fn start(client: &Client, interval: Duration) -> Self {
        let timeout = interval.max(Duration::from_secs(2));
        let client = client.clone();
        let (stop, mut stopped) = oneshot::channel();
        let task = tokio::spawn(async move {
            let start = Instant::now();
            let mut tick = tokio::time::interval(interval);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut raw = Raw {
                source: Source::Unknown,
                names: BTreeMap::new(),
                samples: Vec::new(),
                slots: None,
            };
            // The first tick is now: the step's-start reading. It always finishes (it is
            // bounded by `timeout`), so a step shorter than one reading still has its one
            // sample, or the reason it has none; later readings end with the step.
            tick.tick().await;
            loop {
                let t_s = start.elapsed().as_secs_f64();
                let read = if raw.samples.is_empty() {
                    read(&client, timeout, &mut raw).await
                } else {
                    tokio::select! {
                        r = read(&client, timeout, &mut raw) => r,
                        _ = &mut stopped => break,
                    }
                };
                raw.samples.push(match read {
                    Ok(values) => GaugeSample {
                        t_s,
                        values,
                        error: None,
                    },
                    Err(e) => GaugeSample {
                        t_s,
                        values: BTreeMap::new(),
                        error: Some(e.to_string()),
                    },
                });
                if raw.source == Source::Absent {
                    break;
                }
                tokio::select! {
                    _ = tick.tick() => {}
                    _ = &mut stopped => break,
                }
            }
            raw
        });
        Self {
            stop,
            task,
            interval,
        }
    }

    /// Stop and summarize: samples before `measured_from` (the ramp-up) stay in the series but
    /// out of the peaks and means.
    pub async fn finish(self, measured_from: Duration) -> GaugeSeries {
        let _ = self.stop.send(());
        let interval_s = self.interval.as_secs_f64();
        match self.task.await {
            Ok(raw) => series(raw, interval_s, measured_from.as_secs_f64()),
            Err(e) => GaugeSeries {
                source: "unavailable".into(),
                interval_s,
                names: BTreeMap::new(),
                measured_from_s: measured_from.as_secs_f64(),
                samples: vec![GaugeSample {
                    t_s: 0.0,
                    values: BTreeMap::new(),
                    error: Some(format!("the sampling task stopped: {e}")),
                }],
                summary: BTreeMap::new(),
                failed: 1,
            },
        }
    }
}

/// One reading of the gauges, by the source the first answer settled.
async fn read(
    client: &Client,
    timeout: Duration,
    raw: &mut Raw,
) -> Result<BTreeMap<String, f64>, ReadError> {
    if raw.source == Source::Slots {
        return read_slots(client, timeout, raw).await;
    }
    let url = client.url().root_path("metrics");
    let mut answered = false;
    let why = match client.get_text(url, timeout).await {
        Ok((200, text)) => {
            let scrape = prometheus::parse(&text);
            match scrape.family().and_then(prometheus::engine_gauges) {
                Some(g) => {
                    if raw.source == Source::Unknown && g.engine == EngineKind::LlamaCpp {
                        // The slots in all, once: what "every slot busy" is measured against.
                        raw.slots = slot_states(client, timeout).await.ok().map(|s| s.1);
                    }
                    raw.source = Source::Metrics(g.engine);
                    return Ok(values(&scrape, g, raw));
                }
                None => {
                    answered = true;
                    ReadError::NoGauges
                }
            }
        }
        Ok((status, _)) => {
            answered = true;
            ReadError::MetricsStatus(status)
        }
        Err(e) => ReadError::Metrics(e),
    };
    if raw.source == Source::Unknown {
        // llama-server without --metrics answers 501; its /slots is on by default.
        match read_slots(client, timeout, raw).await {
            Ok(v) => {
                raw.source = Source::Slots;
                return Ok(v);
            }
            Err(e @ ReadError::SlotsStatus(_)) if answered => {
                raw.source = Source::Absent;
                return Err(ReadError::Absent {
                    metrics: Box::new(why),
                    slots: Box::new(e),
                });
            }
            Err(_) => {}
        }
    }
    Err(why)
}

fn values(
    scrape: &prometheus::Scrape,
    g: &prometheus::EngineGauges,
    raw: &mut Raw,
) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for (name, metrics) in g.each() {
        if let Some((metric, v)) = scrape.first_of(metrics) {
            raw.names.insert(name.into(), metric.into());
            out.insert(name.to_string(), v);
        }
    }
    if let Some(n) = raw.slots {
        raw.names.insert("slots".into(), "llama.cpp /slots".into());
        out.insert("slots".into(), n);
    }
    out
}

/// llama.cpp `/slots` (tools/server/server-context.cpp, b11434: an array of slots, each with
/// `is_processing`): busy slots and slots in all.
async fn slot_states(client: &Client, timeout: Duration) -> Result<(f64, f64), ReadError> {
    let url = client.url().root_path("slots");
    match client.control(Method::Get, url, None, timeout).await {
        Ok((200, Some(serde_json::Value::Array(slots)))) => {
            let busy = slots
                .iter()
                .filter(|s| s.get("is_processing").and_then(|v| v.as_bool()) == Some(true))
                .count();
            Ok((busy as f64, slots.len() as f64))
        }
        Ok((status, _)) => Err(ReadError::SlotsStatus(status)),
        Err(e) => Err(ReadError::Slots(e)),
    }
}

async fn read_slots(
    client: &Client,
    timeout: Duration,
    raw: &mut Raw,
) -> Result<BTreeMap<String, f64>, ReadError> {
    let (busy, total) = slot_states(client, timeout).await?;
    raw.names
        .insert("running".into(), "llama.cpp /slots is_processing".into());
    raw.names.insert("slots".into(), "llama.cpp /slots".into());
    Ok(BTreeMap::from([
        ("running".to_string(), busy),
        ("slots".to_string(), total),
    ]))
}

/// The series: preemption counters turned into their increase since the first sample, then
/// each gauge's peak and mean over the samples at or after `measured_from_s`.
fn series(mut raw: Raw, interval_s: f64, measured_from_s: f64) -> GaugeSeries {
    let base = raw
        .samples
        .iter()
        .find_map(|s| s.values.get("preemptions").copied());
    if let Some(b) = base {
        for s in &mut raw.samples {
            if let Some(v) = s.values.get_mut("preemptions") {
                *v -= b;
            }
        }
    }
    let mut acc: BTreeMap<String, (f64, f64, u64)> = BTreeMap::new();
    for s in raw.samples.iter().filter(|s| s.t_s >= measured_from_s) {
        for (k, v) in &s.values {
            let e = acc.entry(k.clone()).or_insert((f64::MIN, 0.0, 0));
            e.0 = e.0.max(*v);
            e.1 += v;
            e.2 += 1;
        }
    }
    let summary = acc
        .into_iter()
        .map(|(k, (peak, sum, n))| {
            (
                k,
                GaugeStat {
                    peak,
                    mean: sum / n as f64,
                    samples: n,
                },
            )
        })
        .collect();
    GaugeSeries {
        source: raw.source.describe(),
        interval_s,
        names: raw.names,
        measured_from_s,
        failed: raw.samples.iter().filter(|s| s.error.is_some()).count() as u64,
        samples: raw.samples,
        summary,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn sample(t_s: f64, kv: &[(&str, f64)]) -> GaugeSample {
        GaugeSample {
            t_s,
            values: kv.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            error: None,
        }
    }

    #[test]
    fn peaks_and_means_skip_the_ramp_and_preemptions_count_from_the_first_sample() {
        let raw = Raw {
            source: Source::Metrics(EngineKind::Vllm),
            names: BTreeMap::new(),
            samples: vec![
                sample(0.0, &[("waiting", 9.0), ("preemptions", 40.0)]),
                sample(1.0, &[("waiting", 2.0), ("preemptions", 41.0)]),
                GaugeSample {
                    t_s: 2.0,
                    values: BTreeMap::new(),
                    error: Some("/metrics: timed out".into()),
                },
                sample(3.0, &[("waiting", 4.0), ("preemptions", 43.0)]),
            ],
            slots: None,
        };
        let s = series(raw, 1.0, 0.5);
        assert_eq!(s.source, "vllm /metrics");
        assert_eq!(s.failed, 1);
        let w = &s.summary["waiting"];
        // The ramp's 9 is left out: peak 4, mean (2 + 4) / 2.
        assert_eq!((w.peak, w.mean, w.samples), (4.0, 3.0, 2));
        assert_eq!(s.summary["preemptions"].peak, 3.0);
        assert_eq!(s.samples[0].values["preemptions"], 0.0);
    }

    #[test]
    fn the_one_table_reads_each_engine() {
        let v = prometheus::parse(
            "vllm:num_requests_running{engine=\"0\"} 3\nvllm:num_requests_waiting 1\n\
             vllm:gpu_cache_usage_perc 0.5\nvllm:num_preemptions_total 2\n",
        );
        let mut raw = Raw {
            source: Source::Unknown,
            names: BTreeMap::new(),
            samples: Vec::new(),
            slots: None,
        };
        let g = prometheus::engine_gauges(v.family().unwrap()).unwrap();
        let got = values(&v, g, &mut raw);
        assert_eq!(got["kv_cache_usage"], 0.5);
        assert_eq!(raw.names["kv_cache_usage"], "vllm:gpu_cache_usage_perc");
        assert_eq!(
            (got["running"], got["waiting"], got["preemptions"]),
            (3.0, 1.0, 2.0)
        );
    }
}
