//! What a seat failure records beyond the generic [`crate::Failure`]: the seat's configuration,
//! the log lines that are the evidence, the root cause the classifier chose, and the timings of
//! each startup phase. Written by `bakeoff seat up|restart|swap|watch` into `<slug>.failure.json`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One startup phase the watchdog saw begin (`starting`, `loading`, `warming`, `ready`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SeatPhase {
    pub state: String,
    /// Milliseconds from the start command to the first sign of this phase.
    pub at_ms: u64,
    /// The log line that marked it, when a line did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<String>,
}

/// The log line the failure-class table matched as the first causal error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SeatRootCause {
    pub class: crate::FailureClass,
    pub line: String,
    /// Index of the line in `evidence_lines`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_index: Option<u64>,
    /// Where the signature comes from (engine source file, issue, seed).
    pub source: String,
}

/// Weight-loading progress parsed from the log, and the projected time to finish.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SeatLoadProgress {
    /// `vllm-safetensors`, `vllm-pt`, `llama.cpp`.
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percent: Option<f64>,
    /// Seconds per shard (converted from `it/s` when the bar printed a rate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds_per_item: Option<f64>,
    /// Projected seconds from the start of loading to the last shard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub projected_total_s: Option<f64>,
    /// `--load-budget`, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_s: Option<f64>,
    pub over_budget: bool,
}

/// What the readiness probes saw during a seat's watch. The class of a seat that never became
/// ready follows from it: a probe only ever refused is `not-listening`, a log that names another
/// port is `wrong-port`, a server listing other ids is `model-name-mismatch`; only a seat whose
/// port answered and whose log fell silent is an `init-wedge`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SeatReadiness {
    /// Readiness probes made (each: discovery's control calls, then a real short completion).
    pub attempts: u64,
    /// Probes whose every connection was refused or timed out connecting (nothing listening).
    pub refused: u64,
    /// Probes whose completion timed out after the server accepted the connection.
    pub timed_out: u64,
    /// HTTP statuses seen, control calls and completions together, with how often.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub http_statuses: std::collections::BTreeMap<u16, u64>,
    /// The ids `/v1/models` listed, the last time it answered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub served_model_ids: Vec<String>,
    /// The id the probes asked for (the seat's first served model name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_model: Option<String>,
    /// The port the probes expect the engine to listen on (the seat's port; a container's own
    /// port for a Docker seat).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_listen_port: Option<u16>,
    /// The port the engine's log says it listens on, when a line said so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_listen_port: Option<u16>,
    /// That line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_listen_line: Option<String>,
    /// The last probe's error, as the preflight put it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

/// How much a [`SeatFinding`] matters: `error` fails the operation that found it (a seat
/// serving another template than its pin; a process that survived its stop), `warning` is
/// printed and recorded, `note` is recorded.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum FindingSeverity {
    Note,
    Warning,
    Error,
}

/// Something a seat operation noticed that is not a failure class of its own: a check before
/// the start (a cache path outside every mount, a pinned chat template), a reading during the
/// load (the container's writable layer growing, a stalled download), a check after ready
/// (the served template against the pin) or after a stop (a process left holding the port or
/// the GPU). `code` is one of the findings in docs/failure-classes.md "Seat findings".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SeatFinding {
    /// `download-in-writable-layer`, `template-mismatch`, `zombie-loader`, …
    pub code: String,
    pub severity: FindingSeverity,
    pub message: String,
    /// The observations behind it (a growth rate, a pid and its command line, a diff).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<String>,
    /// What to do about it, when there is something to do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl SeatFinding {
    pub fn new(code: &str, severity: FindingSeverity, message: impl Into<String>) -> Self {
        Self {
            code: code.to_string(),
            severity,
            message: message.into(),
            evidence: Vec::new(),
            fix: None,
        }
    }

    pub fn with_fix(mut self, fix: impl Into<String>) -> Self {
        self.fix = Some(fix.into());
        self
    }

    pub fn with_evidence(mut self, line: impl Into<String>) -> Self {
        self.evidence.push(line.into());
        self
    }
}

/// The seat part of a failure artifact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SeatRecord {
    pub seat: String,
    /// `process` or `docker`.
    pub backend: String,
    /// The seat as the fleet file declares it, secrets redacted: argument values after a
    /// secret-looking flag, secret-looking env values, `Authorization` credentials, `sk-…` /
    /// `hf_…` tokens and URL passwords (docs/fleet.md "Secrets").
    pub config: serde_json::Value,
    /// The last state the watchdog reached before the verdict.
    pub last_state: String,
    pub phases: Vec<SeatPhase>,
    /// The deep tail of the seat's log (up to the last 300 lines), oldest first.
    pub evidence_lines: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_cause: Option<SeatRootCause>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// Docker's top-level `RestartCount` at the verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_count: Option<u64>,
    /// Docker's `State.OOMKilled` (a host-cgroup OOM, not a CUDA OOM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oom_killed: Option<bool>,
    /// Milliseconds since the last log line, at the verdict.
    pub silent_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_progress: Option<SeatLoadProgress>,
    /// What the readiness probes saw (absent in artifacts from before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readiness: Option<SeatReadiness>,
    /// What the checks before the start, the readings during the load and the checks after
    /// ready noticed (docs/failure-classes.md "Seat findings").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<SeatFinding>,
}

/// Version of the seat start record. Readers refuse versions they do not know.
pub const SEAT_START_VERSION: u32 = 1;

/// What a seat start record is (the one value: `seat-start`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SeatStartKind {
    SeatStart,
}

/// `<state_dir>/<seat>.seat.json` (schema `schemas/seat-start.v1.schema.json`): the last
/// watched start of a seat, success or failure — its seat record and how long each phase of its
/// load took. It is replaced by the next start; a failure also has its never-overwritten
/// `<slug>.failure.json`, which this record names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SeatStartRecord {
    pub schema_version: u32,
    pub kind: SeatStartKind,
    /// When the watch ended.
    pub at: chrono::DateTime<chrono::Utc>,
    /// A real completion succeeded.
    pub ready: bool,
    /// The failure class, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<crate::FailureClass>,
    /// The failure artifact, when it failed and one was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_artifact: Option<String>,
    pub record: SeatRecord,
    pub load: SeatLoadTiming,
    /// Whether the weight files were in the page cache before the start (absent in records
    /// from before it was measured, and for a seat that was already up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_cache: Option<crate::SeatPageCache>,
    /// The host's conditions from the start command to ready or the failure (docs/metrics.md "Conditions": a
    /// page cache dropped during the weight load, a contended host), the engine being started
    /// left out. Absent in records from before they were sampled, for a seat that was already
    /// up, and for a seat on another host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<crate::Conditions>,
}

impl crate::Versioned for SeatStartRecord {
    const WHAT: &'static str = "seat start record";
    const VERSION: u32 = SEAT_START_VERSION;
}

/// How long a start took, phase by phase, from the watchdog's `phases[].at_ms`. A phase the
/// log never marked (llama.cpp may go from starting straight to warming) leaves its gaps out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SeatLoadTiming {
    /// From the start command to the first loading line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starting_to_loading_ms: Option<u64>,
    /// From the first loading line to the first warming line: the weight load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loading_to_warming_ms: Option<u64>,
    /// From the first warming line to the first real completion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warming_to_ready_ms: Option<u64>,
    /// From the start command to ready (absent when it never got there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_ready_ms: Option<u64>,
    /// How long the watch ran, to its verdict.
    pub elapsed_ms: u64,
    /// The last weight-loading progress reading, when one was parsed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<SeatLoadProgress>,
}

impl SeatLoadTiming {
    /// The timing of `phases` (as the watchdog recorded them, first sign of each state).
    pub fn from_phases(
        phases: &[SeatPhase],
        elapsed_ms: u64,
        progress: Option<SeatLoadProgress>,
    ) -> Self {
        let at = |state: &str| phases.iter().find(|p| p.state == state).map(|p| p.at_ms);
        let gap = |a: &str, b: &str| Some(at(b)?.saturating_sub(at(a)?));
        Self {
            starting_to_loading_ms: gap("starting", "loading"),
            loading_to_warming_ms: gap("loading", "warming"),
            warming_to_ready_ms: gap("warming", "ready"),
            to_ready_ms: at("ready"),
            elapsed_ms,
            progress,
        }
    }
}

/// The JSON Schema of [`SeatStartRecord`], as checked in.
pub fn seat_start_json_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(SeatStartRecord)).unwrap_or(serde_json::Value::Null)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod seat_start_tests {
    use super::*;

    fn phase(state: &str, at_ms: u64) -> SeatPhase {
        SeatPhase {
            state: state.into(),
            at_ms,
            line: None,
        }
    }

    #[test]
    fn phase_gaps_are_the_load_timing() {
        let t = SeatLoadTiming::from_phases(
            &[
                phase("starting", 0),
                phase("loading", 400),
                phase("warming", 42_500),
                phase("ready", 44_000),
            ],
            44_100,
            None,
        );
        assert_eq!(t.starting_to_loading_ms, Some(400));
        assert_eq!(t.loading_to_warming_ms, Some(42_100));
        assert_eq!(t.warming_to_ready_ms, Some(1_500));
        assert_eq!(t.to_ready_ms, Some(44_000));
        // A start that never reached loading or ready has no such gaps.
        let t = SeatLoadTiming::from_phases(
            &[phase("starting", 0), phase("warming", 900)],
            5_000,
            None,
        );
        assert_eq!(t.starting_to_loading_ms, None);
        assert_eq!(t.loading_to_warming_ms, None);
        assert_eq!(t.to_ready_ms, None);
        assert_eq!(t.elapsed_ms, 5_000);
    }

    #[test]
    fn checked_in_seat_start_schema_matches_the_types() {
        let generated = serde_json::to_string_pretty(&seat_start_json_schema()).unwrap() + "\n";
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../schemas/seat-start.v1.schema.json");
        if std::env::var_os("BAKEOFF_UPDATE_SCHEMA").is_some() {
            std::fs::write(&path, &generated).unwrap();
        }
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            on_disk == generated,
            "schemas/seat-start.v1.schema.json is out of date; regenerate with \
             BAKEOFF_UPDATE_SCHEMA=1 cargo test -p bakeoff-artifact --lib seat_start"
        );
    }
}
