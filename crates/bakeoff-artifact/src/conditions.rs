//! The conditions a measurement ran under (docs/metrics.md "Conditions"): what else the host and the GPU were doing
//! while a bench step or an eval suite was measured, each reading with its source or why it
//! could not be had, and the contamination findings drawn from them (docs/metrics.md,
//! "Conditions"). Sampled by `bakeoff-conditions`; this crate only names them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{FlagCode, InstrumentFlag};

/// Everything recorded around one measured step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Conditions {
    /// Where the host figures come from (`/proc, sampled at 1 Hz`).
    pub source: String,
    /// Samples taken (the start and the end are always two of them).
    pub samples: u32,
    /// The step's wall time as the sampler saw it, s.
    pub wall_s: f64,
    /// Cores the host offers (`std::thread::available_parallelism`).
    pub host_cores: u32,
    /// What was left out of "others": bakeoff, the engine under test, their descendants.
    pub excluded: Excluded,
    /// `/proc/loadavg`, or `None` with the reason in `unavailable`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_avg: Option<LoadAvg>,
    /// Average cores used by every process not excluded, over the step (utime+stime deltas
    /// from `/proc/[pid]/stat`). A process that exits between two samples loses its last
    /// interval's time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_cpu_cores: Option<f64>,
    /// The heaviest other processes, most CPU first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub top_others: Vec<OtherProcess>,
    /// `/proc/meminfo` at the start, the end, and the minimum during the step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryConditions>,
    /// The GPUs, or why they could not be read (always present: "unavailable" is a reading).
    pub gpu: GpuConditions,
    /// Readings that could not be had, each with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unavailable: Vec<String>,
    /// `host-contended`, `gpu-shared`, `page-cache-dropped`, `thermal-throttled`,
    /// `power-capped`: each a warning with its evidence. Empty: a clean step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<InstrumentFlag>,
}

impl Conditions {
    /// Whether any finding says the step was contaminated.
    pub fn contaminated(&self) -> bool {
        !self.findings.is_empty()
    }
}

/// Processes left out of the "others".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Excluded {
    /// bakeoff's own pid (its descendants are excluded too).
    pub bakeoff_pid: u32,
    /// The engine under test's pid, when found (its descendants are excluded too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_pid: Option<u32>,
    /// How the engine was looked for, and whether it was found (`pid 4242 listens on
    /// 127.0.0.1:8080`, `remote endpoint: not looked for`, `no process listens on port 8080`).
    pub engine: String,
}

/// `/proc/loadavg`'s 1-, 5- and 15-minute averages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LoadAvg {
    pub start: [f64; 3],
    pub end: [f64; 3],
    /// The highest 1-minute figure sampled.
    pub max_1m: f64,
}

/// One other process and the CPU it used during the step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OtherProcess {
    pub pid: u32,
    /// `/proc/[pid]/comm` (escape when rendering: any process can name itself).
    pub comm: String,
    pub cpu_seconds: f64,
}

/// One `/proc/meminfo` reading, bytes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MemSnapshot {
    pub free_bytes: u64,
    pub available_bytes: u64,
    pub cached_bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MemoryConditions {
    pub start: MemSnapshot,
    pub end: MemSnapshot,
    /// The lowest of each field sampled during the step (each field on its own).
    pub min: MemSnapshot,
}

/// The GPUs during the step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GpuConditions {
    /// `nvidia-smi`, or the tool that was looked for.
    pub source: String,
    /// Why there is no GPU reading (`nvidia-smi is not on PATH`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpus: Vec<GpuState>,
    /// Compute processes on the GPU(s) under test that are neither bakeoff nor the engine.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub others: Vec<GpuOther>,
}

impl GpuConditions {
    pub fn unavailable(source: impl Into<String>, why: impl Into<String>) -> Self {
        Self {
            source: source.into(),
            unavailable: Some(why.into()),
            gpus: Vec::new(),
            others: Vec::new(),
        }
    }
}

/// One GPU's clocks and throttle reasons over the step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GpuState {
    pub index: u32,
    pub uuid: String,
    /// Whether the engine under test holds memory on it (`None`: engine pid unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub under_test: Option<bool>,
    /// Lowest and highest `clocks.sm` sampled, MHz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_clock_mhz_min: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_clock_mhz_max: Option<u32>,
    /// Every throttle reason seen active in any sample (`sw-power-cap`, `hw-thermal-slowdown`,
    /// …; from `clocks_throttle_reasons.active`), `gpu-idle` left out. Always written for a
    /// GPU that was read: `[]` means read, and none was active.
    #[serde(default)]
    pub throttle_reasons: Vec<String>,
}

/// Another compute process on a GPU under test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GpuOther {
    pub gpu_uuid: String,
    pub pid: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The most memory seen held, bytes (`None`: the driver did not say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used_bytes: Option<u64>,
}

/// The codes a conditions finding can carry.
pub const CONDITION_CODES: [FlagCode; 5] = [
    FlagCode::HostContended,
    FlagCode::GpuShared,
    FlagCode::PageCacheDropped,
    FlagCode::ThermalThrottled,
    FlagCode::PowerCapped,
];

/// The one line every `bench run` and `eval run` summary ends with: `conditions: clean (…)`
/// or `conditions: CONTAMINATED — host-contended during c=4 (…); …`. `steps` are the
/// measured steps (or suites) by label. Text from `/proc` is not escaped here: the caller
/// escapes for its medium.
pub fn summary_line<'a>(steps: impl IntoIterator<Item = (&'a str, &'a Conditions)>) -> String {
    let mut n = 0usize;
    let mut worst: Option<f64> = None;
    let mut bad = Vec::new();
    for (label, c) in steps {
        n += 1;
        if let Some(o) = c.other_cpu_cores {
            worst = Some(worst.map_or(o, |w: f64| w.max(o)));
        }
        for f in &c.findings {
            bad.push(format!("{} during {label} ({})", f.code, f.message));
        }
    }
    if n == 0 {
        return "conditions: not recorded".to_owned();
    }
    if bad.is_empty() {
        let others = worst.map_or("others' CPU unavailable".to_owned(), |w| {
            format!("others used at most {w:.2} cores")
        });
        format!("conditions: clean ({n} step(s) sampled; {others})")
    } else {
        format!("conditions: CONTAMINATED — {}", bad.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FlagSeverity;

    fn clean() -> Conditions {
        Conditions {
            source: "/proc".into(),
            samples: 2,
            wall_s: 1.0,
            host_cores: 2,
            excluded: Excluded {
                bakeoff_pid: 1,
                engine_pid: None,
                engine: "remote endpoint: not looked for".into(),
            },
            load_avg: None,
            other_cpu_cores: Some(0.1),
            top_others: Vec::new(),
            memory: None,
            gpu: GpuConditions::unavailable("nvidia-smi", "nvidia-smi is not on PATH"),
            unavailable: Vec::new(),
            findings: Vec::new(),
        }
    }

    #[test]
    fn summary_line_says_clean_or_what_contaminated() {
        let a = clean();
        assert!(summary_line([("c=1", &a)]).starts_with("conditions: clean (1 step(s)"));
        let mut b = clean();
        b.findings.push(InstrumentFlag {
            code: FlagCode::HostContended,
            severity: FlagSeverity::Warning,
            message: "pids 123 stress".into(),
            suite: None,
            count: None,
        });
        assert!(b.contaminated());
        assert_eq!(
            summary_line([("c=1", &a), ("c=4", &b)]),
            "conditions: CONTAMINATED — host-contended during c=4 (pids 123 stress)"
        );
        assert_eq!(summary_line([]), "conditions: not recorded");
    }
}
