//! Where GPU readings come from: NVML (the process's one handle, `bakeoff_host::nvml`; a host
//! without the driver gets an error, never a crash), else nvidia-smi (power only: its energy is
//! integrated from sampled `power.draw`).

use bakeoff_host::nvidia_smi::{QUERY_APPS, SmiError, parse_compute_apps, run};
use bakeoff_host::nvml::{Telemetry, TelemetryError};

use super::summary::GpuSample;

/// Why a GPU source gave no reading.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error(transparent)]
    Nvml(#[from] TelemetryError),
    #[error(transparent)]
    Smi(#[from] SmiError),
    /// nvidia-smi answered, but no line parsed; `first` is its first line.
    #[error("nvidia-smi --query-gpu answered lines that do not parse: {first}")]
    Unparsed { first: String },
}

/// A source of GPU readings; tests put fake ones behind it.
pub trait GpuSource: Send {
    /// `nvml` or `nvidia-smi`, as written in the artifact.
    fn name(&self) -> &'static str;
    /// Every GPU, now.
    fn read(&mut self) -> Result<Vec<GpuSample>, SourceError>;
    /// `(gpu uuid, pid)` of every compute process (host pids).
    fn processes(&mut self) -> Result<Vec<(String, u32)>, SourceError>;
}

/// NVML: power, the energy counter, utilization and memory (`bakeoff_host::nvml::Telemetry`).
pub struct NvmlSource(Telemetry);

impl NvmlSource {
    /// NVML initialized, or why not (no driver: libnvidia-ml cannot be loaded).
    pub fn open() -> Result<Self, SourceError> {
        Ok(Self(Telemetry::open()?))
    }
}

impl GpuSource for NvmlSource {
    fn name(&self) -> &'static str {
        "nvml"
    }

    fn read(&mut self) -> Result<Vec<GpuSample>, SourceError> {
        Ok(self.0.read()?)
    }

    fn processes(&mut self) -> Result<Vec<(String, u32)>, SourceError> {
        Ok(self.0.processes()?)
    }
}

/// The fields asked of nvidia-smi; `name` last, the only one that could hold a comma.
pub const QUERY_POWER: &str = "index,uuid,power.draw,utilization.gpu,memory.used,name";

/// One line of `--query-gpu=QUERY_POWER --format=csv,noheader,nounits` (`[N/A]` fields absent).
pub fn parse_power_line(line: &str) -> Option<GpuSample> {
    let f: Vec<&str> = line.splitn(6, ',').map(str::trim).collect();
    match f.as_slice() {
        [index, uuid, power, util, mem, name] => Some(GpuSample {
            index: index.parse().ok()?,
            uuid: (*uuid).to_owned(),
            name: (*name).to_owned(),
            power_w: power.parse().ok(),
            energy_mj: None,
            utilization_pct: util.parse().ok(),
            memory_used_bytes: mem.parse::<u64>().ok().map(|m| m * 1024 * 1024),
        }),
        _ => None,
    }
}

/// nvidia-smi, run once a sample.
pub struct SmiSource {
    pub bin: String,
}

impl GpuSource for SmiSource {
    fn name(&self) -> &'static str {
        "nvidia-smi"
    }

    fn read(&mut self) -> Result<Vec<GpuSample>, SourceError> {
        let text = run(
            &self.bin,
            &[
                format!("--query-gpu={QUERY_POWER}"),
                "--format=csv,noheader,nounits".into(),
            ],
        )?;
        let gpus: Vec<GpuSample> = text.lines().filter_map(parse_power_line).collect();
        if gpus.is_empty() && !text.trim().is_empty() {
            return Err(SourceError::Unparsed {
                first: text.lines().next().unwrap_or_default().to_owned(),
            });
        }
        Ok(gpus)
    }

    fn processes(&mut self) -> Result<Vec<(String, u32)>, SourceError> {
        let text = run(
            &self.bin,
            &[
                format!("--query-compute-apps={QUERY_APPS}"),
                "--format=csv,noheader,nounits".into(),
            ],
        )?;
        Ok(parse_compute_apps(&text)
            .0
            .into_iter()
            .map(|(u, p)| (u, p.pid))
            .collect())
    }
}
