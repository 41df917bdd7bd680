//! GPU power, energy, utilization and memory over one load step, and output tokens per joule
//! (docs/metrics.md, "GPU telemetry and tokens per joule").

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a step's energy was had.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum EnergyMethod {
    /// The delta of NVML's total-energy counter (`nvmlDeviceGetTotalEnergyConsumption`, mJ since
    /// the driver loaded) between the first and the last sample: exact, whatever the sampling.
    NvmlEnergyCounter,
    /// Sampled power draw integrated over time (trapezoids between samples): an estimate that
    /// misses what happens between samples.
    IntegratedPower,
}

/// Which GPUs a step's totals cover.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TelemetryScope {
    /// The GPUs on which the engine under test (or a process it started) holds memory.
    EngineGpus,
    /// Every GPU of the host: the engine's GPUs could not be told (`scope_detail` says why).
    AllGpus,
}

/// One GPU over the step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GpuStepTelemetry {
    pub index: u32,
    pub uuid: String,
    /// The product name (`NVIDIA H200`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Whether its figures count in the step's totals (see `GpuTelemetry::scope`).
    pub in_scope: bool,
    /// Mean and highest power draw sampled, W.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_w_mean: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_w_max: Option<f64>,
    /// Energy over the step, mJ, had by `energy_method`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_mj: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_method: Option<EnergyMethod>,
    /// Why there is no energy figure (the counter went backwards: a driver reload or a wrap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_unavailable: Option<String>,
    /// Mean and highest GPU utilization sampled, % (NVML: share of the last sample period in
    /// which a kernel ran; not how much of the GPU it used).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub utilization_pct_mean: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub utilization_pct_max: Option<f64>,
    /// Highest memory used sampled (every process on the GPU), bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_used_bytes_max: Option<u64>,
}

/// GPU telemetry of one load step: sampled on a background thread from the step's start to its
/// end. "Unavailable" is a reading: `unavailable` says why (no NVML and no nvidia-smi).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GpuTelemetry {
    /// `nvml`, `nvidia-smi` (the fallback: power sampled and integrated), or the sources tried.
    pub source: String,
    /// Why there is no reading, e.g. `unavailable (no NVML): …`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// The sampling interval, ms.
    pub interval_ms: u64,
    /// Samples taken (the start and the end are two of them).
    pub samples: u32,
    /// Which GPUs the totals cover.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<TelemetryScope>,
    /// How the GPUs under test were told apart, in words (`engine pid 4242 holds memory on GPU
    /// 0`, `engine pid unknown: all GPUs`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub scope_detail: String,
    /// Power of the GPUs in scope, W: the mean of the per-sample sums, and the highest sum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_w_mean: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_w_max: Option<f64>,
    /// Energy of the GPUs in scope over the step, J; absent unless every GPU in scope has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_j: Option<f64>,
    /// How `energy_j` was had (`integrated-power` is an estimate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_method: Option<EnergyMethod>,
    /// The step's output tokens ÷ `energy_j`: output tokens per joule of the GPUs in scope,
    /// their idle power included (docs/metrics.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens_per_joule: Option<f64>,
    /// Every GPU read, in scope or not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpus: Vec<GpuStepTelemetry>,
    /// Readings that failed during the step, each with why (the first failure of each kind).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

impl GpuTelemetry {
    /// A step with no GPU reading, and why.
    pub fn unavailable(source: impl Into<String>, why: impl Into<String>) -> Self {
        Self {
            source: source.into(),
            unavailable: Some(why.into()),
            interval_ms: 0,
            samples: 0,
            scope: None,
            scope_detail: String::new(),
            power_w_mean: None,
            power_w_max: None,
            energy_j: None,
            energy_method: None,
            output_tokens_per_joule: None,
            gpus: Vec::new(),
            problems: Vec::new(),
        }
    }
}
