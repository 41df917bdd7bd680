//! The seat monitor's files (`bakeoff seat monitor`, docs/fleet.md "Monitor"; format in
//! docs/artifacts.md "Seat monitor"): a JSONL time series, `<stem>.monitor.jsonl`, one
//! [`MonitorSample`] per seat per tick, appended as each tick ends; and the summary,
//! `<stem>.monitor.json` ([`MonitorSummary`], schema `schemas/monitor.v1.schema.json`), written
//! atomically when the monitor ends, with the findings: a footprint that drifted past its
//! threshold over the seat's first sample, and each outage, one per seat however many gateway
//! aliases route to it (docs/field-cases.md F1, F2).
//!
//! Every memory figure carries its source ([`FootprintSource`]); a reading that could not be
//! taken says why instead of being a zero.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Version of the monitor's series and summary. Readers refuse versions they do not know.
pub const MONITOR_VERSION: u32 = 1;

/// The suffix of a monitor's series file.
pub const SERIES_SUFFIX: &str = ".monitor.jsonl";
/// The suffix of a monitor's summary file.
pub const SUMMARY_SUFFIX: &str = ".monitor.json";

/// One seat at one tick: a line of `<stem>.monitor.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MonitorSample {
    pub schema_version: u32,
    /// The tick's number, from 0.
    pub tick: u64,
    /// When the tick began.
    pub at: DateTime<Utc>,
    /// Seconds from the monitor's start to the tick's start.
    pub t_s: f64,
    pub seat: String,
    pub host: String,
    /// What the backend says of the seat: `running`, `down`, `exited (137)`,
    /// `unknown (host unreachable: …)`.
    pub state: String,
    /// When the seat's running process or container started (its uptime; a new value is a
    /// restart, and its footprint gets a new baseline).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<DateTime<Utc>>,
    /// The seat answered a real completion at this tick (content or reasoning came back).
    pub answering: bool,
    /// The probe: a real short completion. Absent when none was sent (the seat is not running).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<ProbeSample>,
    /// The seat's memory, from the best source that answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub footprint: Option<FootprintSample>,
    /// Why there is no footprint, when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub footprint_unavailable: Option<String>,
    /// Requests waiting and running, from the engine's `/metrics`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueSample>,
    /// Why there is no queue reading (no `/metrics`, `--metrics` not given, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_unavailable: Option<String>,
}

/// The probe of one tick: one real chat completion, never `/health` (docs/field-cases.md B1: an engine wedged
/// with its control endpoints up while every inference failed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProbeSample {
    /// The model id asked for (the seat's first served name).
    pub model: String,
    /// Text came back: visible content, or reasoning alone (a thinking model that spends the
    /// whole budget thinking is alive).
    pub ok: bool,
    /// Request sent → last byte (or the failure), milliseconds.
    pub latency_ms: f64,
    /// Request sent → first text, milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<f64>,
    pub content_chars: u64,
    pub reasoning_chars: u64,
    /// All reasoning and no visible content: still alive (the `max_tokens: 1` trap of a probe
    /// that calls such a seat dead).
    pub reasoning_only: bool,
    /// Why it failed: `kind: message`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Where a memory figure came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FootprintSource {
    /// GPU memory of the seat's processes, NVML (`nvmlDeviceGetComputeRunningProcesses`).
    Nvml,
    /// GPU memory of the seat's processes, `nvidia-smi --query-compute-apps` (here or over the
    /// host's ssh channel).
    NvidiaSmi,
    /// The container's memory as `docker stats` shows it: cgroup usage less inactive file
    /// cache.
    DockerStats,
    /// Resident memory (`VmRSS`) of the seat's process and its descendants, from `/proc`.
    ProcRss,
}

impl FootprintSource {
    pub fn as_str(self) -> &'static str {
        match self {
            FootprintSource::Nvml => "nvml",
            FootprintSource::NvidiaSmi => "nvidia-smi",
            FootprintSource::DockerStats => "docker-stats",
            FootprintSource::ProcRss => "proc-rss",
        }
    }
}

/// The seat's memory at one tick.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FootprintSample {
    pub bytes: u64,
    pub source: FootprintSource,
    /// What was read: the processes, the container, the channel (`pids 812, 813`,
    /// `container bakeoff-char-rp`, `nvidia-smi over ssh ops@gpu2`).
    pub detail: String,
}

/// Requests queued and in flight, as the engine's Prometheus gauges say.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct QueueSample {
    /// Waiting for a slot (llama.cpp `llamacpp:requests_deferred`, vLLM
    /// `vllm:num_requests_waiting`, SGLang `sglang:num_queue_reqs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<f64>,
    /// Being processed (llama.cpp `llamacpp:requests_processing`, vLLM
    /// `vllm:num_requests_running`, SGLang `sglang:num_running_reqs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<f64>,
    /// The gauges read: `/metrics llamacpp:requests_deferred, llamacpp:requests_processing`.
    pub source: String,
}

/// `<stem>.monitor.json`: what the monitor saw, written when it ends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MonitorSummary {
    pub schema_version: u32,
    /// The fleet file, as given.
    pub fleet: String,
    pub started_at: DateTime<Utc>,
    pub ended_at: DateTime<Utc>,
    /// `duration` (`--duration` ran out) or `interrupted` (Ctrl-C, SIGTERM).
    pub ended_by: String,
    pub interval_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    /// Ticks run.
    pub ticks: u64,
    /// The series file beside this one.
    pub series: String,
    pub thresholds: DriftThresholds,
    pub seats: Vec<SeatSeries>,
    pub findings: Vec<MonitorFinding>,
    /// What the monitor could not do (no GPU readings here, a seat not running at the start).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl crate::Versioned for MonitorSummary {
    const WHAT: &'static str = "seat monitor summary";
    const VERSION: u32 = MONITOR_VERSION;
}

/// When a footprint counts as drifting: grown past `percent` of its first sample **and** by at
/// least `min_bytes` (small processes wobble by whole percents).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DriftThresholds {
    pub percent: f64,
    pub min_bytes: u64,
}

/// One seat's series, summed up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SeatSeries {
    pub seat: String,
    pub host: String,
    /// The gateway aliases that route to it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// Ticks sampled.
    pub samples: u64,
    /// Restarts seen while monitored (a new start time of its process or container). The
    /// footprint figures below are those since the last one.
    #[serde(default)]
    pub restarts: u64,
    /// Ticks at which a real completion came back.
    pub answered: u64,
    /// Of those, replies that were all reasoning (alive all the same).
    pub reasoning_only: u64,
    /// Probe latency over the answered ticks, milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<LatencyRange>,
    /// The source of the first footprint since the seat's last (re)start; the drift is measured
    /// over the samples of this source only (a figure from another source is another
    /// quantity).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub footprint_source: Option<FootprintSource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<u64>,
    /// Least-squares slope of the footprint over time, bytes per day (two samples or more).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slope_bytes_per_day: Option<f64>,
    /// The most requests seen waiting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_waiting: Option<f64>,
}

/// Probe latencies of a seat: median, mean and worst.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LatencyRange {
    pub p50: f64,
    pub mean: f64,
    pub max: f64,
}

/// Something the monitor found, said live and recorded once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum MonitorFinding {
    /// The seat's footprint grew past the threshold over its first sample.
    FootprintDrift(FootprintDrift),
    /// The seat stopped answering: one finding per outage of a seat, with every alias that
    /// routes to it.
    Outage(Outage),
}

impl MonitorFinding {
    pub fn seat(&self) -> &str {
        match self {
            MonitorFinding::FootprintDrift(d) => &d.seat,
            MonitorFinding::Outage(o) => &o.seat,
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            MonitorFinding::FootprintDrift(_) => "footprint-drift",
            MonitorFinding::Outage(_) => "outage",
        }
    }

    /// The finding in one line, as the monitor says it live and its summary lists it. Not
    /// escaped: an outage's error came from a seat, so each medium escapes the line.
    pub fn text(&self) -> String {
        match self {
            MonitorFinding::Outage(o) => {
                let when = match o.ended_at {
                    Some(end) => format!(
                        "from {} to {} ({:.1} s)",
                        o.started_at.format("%H:%M:%S"),
                        end.format("%H:%M:%S"),
                        o.duration_s
                    ),
                    None if o.failed_ticks <= 1 => {
                        format!("since {}", o.started_at.format("%H:%M:%S"))
                    }
                    None => format!(
                        "since {} ({:.1} s, still out)",
                        o.started_at.format("%H:%M:%S"),
                        o.duration_s
                    ),
                };
                let aliases = if o.aliases.is_empty() {
                    "(none route to it)".to_string()
                } else {
                    o.aliases.join(", ")
                };
                format!(
                    "outage: {} stopped answering {when}: {}; one outage for its aliases: {aliases}",
                    o.seat, o.first_error
                )
            }
            MonitorFinding::FootprintDrift(d) => format!(
                "footprint-drift: {} grew from {} to {} ({:+.1} %, {}) since {}; slope {} over {} samples",
                d.seat,
                bytes_text(d.first_bytes),
                bytes_text(d.last_bytes),
                d.growth_percent,
                d.source.as_str(),
                d.first_at.format("%H:%M:%S"),
                per_day_text(d.slope_bytes_per_day),
                d.samples
            ),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FootprintDrift {
    pub seat: String,
    pub source: FootprintSource,
    pub first_bytes: u64,
    pub first_at: DateTime<Utc>,
    /// The sample that crossed the threshold.
    pub crossed_bytes: u64,
    pub crossed_at: DateTime<Utc>,
    /// The last sample of this source (at the end of the monitor).
    pub last_bytes: u64,
    pub last_at: DateTime<Utc>,
    /// Last over first, in percent.
    pub growth_percent: f64,
    /// Least-squares slope over every sample of this source, bytes per day.
    pub slope_bytes_per_day: f64,
    /// Samples the slope was fitted on.
    pub samples: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Outage {
    pub seat: String,
    /// Every gateway alias that routes to the seat: all of them were out together.
    pub aliases: Vec<String>,
    /// The first tick that found it not answering.
    pub started_at: DateTime<Utc>,
    /// The first tick that found it answering again; absent while it was still out when the
    /// monitor ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<DateTime<Utc>>,
    /// From the first failing tick to the first answering one (or to the last tick, while
    /// still out), seconds: measured to the tick, so within one interval of the truth.
    pub duration_s: f64,
    /// Ticks that found it not answering.
    pub failed_ticks: u64,
    /// What the first failing tick saw (the seat's state, the probe's error).
    pub first_error: String,
}

/// A byte count as the monitor and its report print it: `38.50 GiB`, `180.3 MiB`, `512 KiB`.
pub fn bytes_text(b: u64) -> String {
    const KIB: f64 = 1024.0;
    let f = b as f64;
    if f >= KIB * KIB * KIB {
        format!("{:.2} GiB", f / (KIB * KIB * KIB))
    } else if f >= KIB * KIB {
        format!("{:.1} MiB", f / (KIB * KIB))
    } else {
        format!("{:.0} KiB", f / KIB)
    }
}

/// A footprint slope, bytes per day, signed: `+1.20 GiB/day`.
pub fn per_day_text(b: f64) -> String {
    let sign = if b < 0.0 { "-" } else { "+" };
    format!("{sign}{}/day", bytes_text(b.abs().round() as u64))
}

/// Read a series back (`bakeoff report`): every line that parses as a sample of this version,
/// and how many lines did not (a torn last line of a killed monitor, another version's lines).
pub fn read_series(
    path: &std::path::Path,
) -> Result<(Vec<MonitorSample>, usize), crate::StoreError> {
    let text = std::fs::read_to_string(path).map_err(|source| crate::StoreError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mut out = Vec::new();
    let mut skipped = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str::<MonitorSample>(line) {
            Ok(s) if s.schema_version == MONITOR_VERSION => out.push(s),
            _ => skipped += 1,
        }
    }
    Ok((out, skipped))
}

/// The JSON Schema of [`MonitorSummary`] and [`MonitorSample`] (one file: the summary, with the
/// sample under `$defs`), as checked in.
pub fn monitor_json_schema() -> serde_json::Value {
    use serde_json::Value;
    let mut summary =
        serde_json::to_value(schemars::schema_for!(MonitorSummary)).unwrap_or(Value::Null);
    let mut sample =
        serde_json::to_value(schemars::schema_for!(MonitorSample)).unwrap_or(Value::Null);
    let sample_defs = sample
        .as_object_mut()
        .and_then(|o| {
            o.remove("$schema");
            o.remove("$defs")
        })
        .unwrap_or_default();
    if let Some(root) = summary.as_object_mut() {
        let defs = root
            .entry("$defs")
            .or_insert_with(|| Value::Object(Default::default()));
        if let Some(defs) = defs.as_object_mut() {
            if let Value::Object(more) = sample_defs {
                for (k, v) in more {
                    defs.entry(k).or_insert(v);
                }
            }
            defs.insert("MonitorSample".into(), sample);
        }
    }
    summary
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn checked_in_monitor_schema_matches_the_types() {
        let generated = serde_json::to_string_pretty(&monitor_json_schema()).unwrap() + "\n";
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../schemas/monitor.v1.schema.json");
        if std::env::var_os("BAKEOFF_UPDATE_SCHEMA").is_some() {
            std::fs::write(&path, &generated).unwrap();
        }
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            on_disk == generated,
            "schemas/monitor.v1.schema.json is out of date; regenerate with \
             BAKEOFF_UPDATE_SCHEMA=1 cargo test -p bakeoff-artifact --lib monitor"
        );
    }

    #[test]
    fn a_finding_is_tagged_by_its_kind() {
        let o = MonitorFinding::Outage(Outage {
            seat: "s".into(),
            aliases: vec!["a".into(), "b".into()],
            started_at: Utc::now(),
            ended_at: None,
            duration_s: 3.0,
            failed_ticks: 3,
            first_error: "exited (137)".into(),
        });
        let v = serde_json::to_value(&o).unwrap();
        assert_eq!(v["kind"], "outage");
        assert_eq!(v["aliases"][1], "b");
        let back: MonitorFinding = serde_json::from_value(v).unwrap();
        assert_eq!(back, o);
    }
}
