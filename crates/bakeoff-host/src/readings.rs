//! What a GPU really holds, as read from the driver: one shape for NVML and for nvidia-smi, so
//! the plan, the seat monitor and the side-by-side comparison do not care where a number came
//! from.

use serde::{Deserialize, Serialize};

/// Where a reading came from.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ReadingSource {
    /// libnvidia-ml through nvml-wrapper: `nvmlDeviceGetMemoryInfo`,
    /// `nvmlDeviceGetComputeRunningProcesses_v3`.
    Nvml,
    /// `nvidia-smi --query-gpu=… --query-compute-apps=… --format=csv,noheader,nounits`.
    NvidiaSmi,
}

/// One compute process on a GPU. `pid` is a **host** PID: the driver does not know PID
/// namespaces (NVML through nvml-wrapper 0.12.1).
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct GpuProcess {
    pub pid: u32,
    /// `None` when the driver reports it unavailable (NVML `Unavailable`, nvidia-smi `[N/A]`).
    pub used_bytes: Option<u64>,
    pub name: Option<String>,
}

/// One GPU's memory as the driver reports it.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct GpuReading {
    pub index: u32,
    pub uuid: String,
    pub name: String,
    pub total_bytes: u64,
    pub used_bytes: u64,
    pub free_bytes: u64,
    pub processes: Vec<GpuProcess>,
    pub source: ReadingSource,
}

/// The readings of all GPUs from one source, or why there are none.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct Readings {
    pub source: ReadingSource,
    pub gpus: Vec<GpuReading>,
    /// Why this source gave nothing (no driver, no GPU, command missing, timeout).
    pub unavailable: Option<String>,
}

impl Readings {
    /// No readings from `source`, and why.
    pub fn unavailable(source: ReadingSource, why: impl Into<String>) -> Self {
        Self {
            source,
            gpus: Vec::new(),
            unavailable: Some(why.into()),
        }
    }
}
