//! NVML through nvml-wrapper, which loads libnvidia-ml at run time: without a driver the
//! initialisation fails and the readings say NVML is unavailable, never fail a command.
//!
//! The process holds one NVML handle ([`handle`]): initialised on first use, shared by the
//! memory readings ([`read`]: the plan, the seats' release check, the monitor) and the per-step
//! telemetry ([`Telemetry`]), and never shut down (NVML counts its initialisations; one that
//! lives as long as the process is the simplest count). A failed initialisation is kept too, so
//! a host without the driver pays for the failed library load once.

use std::sync::OnceLock;

use nvml_wrapper::Nvml;
use nvml_wrapper::enums::device::UsedGpuMemory;
/// The driver's own error, as NVML reports it (re-exported so callers need no nvml-wrapper).
pub use nvml_wrapper::error::NvmlError as DriverError;

use crate::readings::{GpuProcess, GpuReading, ReadingSource, Readings};

/// Why NVML is not there: the library could not be loaded or initialised (no driver).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("NVML did not initialize ({0})")]
pub struct InitError(String);

/// The process's NVML handle, initialised on the first call.
pub fn handle() -> Result<&'static Nvml, InitError> {
    static NVML: OnceLock<Result<Nvml, InitError>> = OnceLock::new();
    NVML.get_or_init(|| Nvml::init().map_err(|e| InitError(e.to_string())))
        .as_ref()
        .map_err(Clone::clone)
}

/// Reads every GPU NVML sees: memory (`nvmlDeviceGetMemoryInfo`) and compute processes
/// (`nvmlDeviceGetComputeRunningProcesses_v3`, host PIDs).
pub fn read() -> Readings {
    let nvml = match handle() {
        Ok(n) => n,
        Err(e) => {
            return Readings::unavailable(
                ReadingSource::Nvml,
                format!("{e}: no NVIDIA driver or GPU on this host"),
            );
        }
    };
    let count = match nvml.device_count() {
        Ok(c) => c,
        Err(e) => {
            return Readings::unavailable(ReadingSource::Nvml, format!("NVML device count: {e}"));
        }
    };
    let mut gpus = Vec::new();
    let mut problems = Vec::new();
    for i in 0..count {
        let dev = match nvml.device_by_index(i) {
            Ok(d) => d,
            Err(e) => {
                problems.push(format!("GPU {i}: {e}"));
                continue;
            }
        };
        let mem = match dev.memory_info() {
            Ok(m) => m,
            Err(e) => {
                problems.push(format!("GPU {i} memory: {e}"));
                continue;
            }
        };
        let processes = match dev.running_compute_processes() {
            Ok(ps) => ps
                .into_iter()
                .map(|p| GpuProcess {
                    pid: p.pid,
                    used_bytes: match p.used_gpu_memory {
                        UsedGpuMemory::Used(b) => Some(b),
                        UsedGpuMemory::Unavailable => None,
                    },
                    name: nvml.sys_process_name(p.pid, 256).ok(),
                })
                .collect(),
            Err(e) => {
                problems.push(format!("GPU {i} processes: {e}"));
                Vec::new()
            }
        };
        gpus.push(GpuReading {
            index: i,
            uuid: dev.uuid().unwrap_or_default(),
            name: dev.name().unwrap_or_default(),
            total_bytes: mem.total,
            used_bytes: mem.used,
            free_bytes: mem.free,
            processes,
            source: ReadingSource::Nvml,
        });
    }
    Readings {
        source: ReadingSource::Nvml,
        gpus,
        unavailable: (!problems.is_empty()).then(|| problems.join("; ")),
    }
}

/// Why a telemetry reading failed.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    #[error(transparent)]
    Init(#[from] InitError),
    #[error("NVML device count: {0}")]
    DeviceCount(#[source] DriverError),
    #[error("NVML GPU {index}: {source}")]
    Device { index: u32, source: DriverError },
    /// One reading of one GPU (`power`, `energy`, `utilization`, `memory`, `processes`).
    #[error("NVML GPU {index} {what}: {source}")]
    Reading {
        index: u32,
        what: &'static str,
        source: DriverError,
    },
}

/// One GPU at one instant, as a telemetry source read it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GpuSample {
    pub index: u32,
    pub uuid: String,
    pub name: String,
    pub power_w: Option<f64>,
    /// NVML's total-energy counter, mJ since the driver loaded (`None`: not supported, or a
    /// source without it).
    pub energy_mj: Option<u64>,
    pub utilization_pct: Option<f64>,
    pub memory_used_bytes: Option<u64>,
}

/// Power (`nvmlDeviceGetPowerUsage`, mW), the energy counter
/// (`nvmlDeviceGetTotalEnergyConsumption`, mJ), utilization and memory of every GPU, through
/// the shared handle: what a measurement step's telemetry samples every 250 ms.
pub struct Telemetry {
    nvml: &'static Nvml,
    /// `(uuid, name)` by index, read once.
    names: Vec<(String, String)>,
}

/// A reading NVML does not support on this GPU is absent, not an error.
fn optional<T>(r: Result<T, DriverError>) -> Result<Option<T>, DriverError> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(DriverError::NotSupported) => Ok(None),
        Err(e) => Err(e),
    }
}

impl Telemetry {
    /// The shared handle and every GPU's name, or why not (no driver).
    pub fn open() -> Result<Self, TelemetryError> {
        let nvml = handle()?;
        let count = nvml.device_count().map_err(TelemetryError::DeviceCount)?;
        let mut names = Vec::new();
        for index in 0..count {
            let d = nvml
                .device_by_index(index)
                .map_err(|source| TelemetryError::Device { index, source })?;
            names.push((d.uuid().unwrap_or_default(), d.name().unwrap_or_default()));
        }
        Ok(Self { nvml, names })
    }

    /// Every GPU, now.
    pub fn read(&self) -> Result<Vec<GpuSample>, TelemetryError> {
        let mut out = Vec::with_capacity(self.names.len());
        for (i, (uuid, name)) in self.names.iter().enumerate() {
            let index = i as u32;
            let d = self
                .nvml
                .device_by_index(index)
                .map_err(|source| TelemetryError::Device { index, source })?;
            let e = |what: &'static str| {
                move |source| TelemetryError::Reading {
                    index,
                    what,
                    source,
                }
            };
            out.push(GpuSample {
                index,
                uuid: uuid.clone(),
                name: name.clone(),
                power_w: optional(d.power_usage())
                    .map_err(e("power"))?
                    .map(|mw| f64::from(mw) / 1000.0),
                energy_mj: optional(d.total_energy_consumption()).map_err(e("energy"))?,
                utilization_pct: optional(d.utilization_rates())
                    .map_err(e("utilization"))?
                    .map(|u| f64::from(u.gpu)),
                memory_used_bytes: optional(d.memory_info())
                    .map_err(e("memory"))?
                    .map(|m| m.used),
            });
        }
        Ok(out)
    }

    /// `(gpu uuid, pid)` of every compute process (host pids).
    pub fn processes(&self) -> Result<Vec<(String, u32)>, TelemetryError> {
        let mut out = Vec::new();
        for (i, (uuid, _)) in self.names.iter().enumerate() {
            let index = i as u32;
            let d = self
                .nvml
                .device_by_index(index)
                .map_err(|source| TelemetryError::Device { index, source })?;
            let ps = d
                .running_compute_processes()
                .map_err(|source| TelemetryError::Reading {
                    index,
                    what: "processes",
                    source,
                })?;
            out.extend(ps.into_iter().map(|p| (uuid.clone(), p.pid)));
        }
        Ok(out)
    }
}
