//! Where GPU readings come from: NVML (nvml-wrapper loads libnvidia-ml at run time, so a host
//! without the driver gets an error, never a crash), else nvidia-smi (power only: its energy is
//! integrated from sampled `power.draw`).

use nvml_wrapper::Nvml;
use nvml_wrapper::error::NvmlError;

use super::summary::GpuSample;
use bakeoff_gpu::nvidia_smi::{QUERY_APPS, SmiError, parse_compute_apps, run};

/// Why a GPU source gave no reading.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// libnvidia-ml could not be loaded or initialized (no driver).
    #[error("NVML did not initialize ({0})")]
    Init(#[source] NvmlError),
    #[error("NVML device count: {0}")]
    DeviceCount(#[source] NvmlError),
    #[error("NVML GPU {index}: {source}")]
    Device { index: u32, source: NvmlError },
    /// One reading of one GPU (`power`, `energy`, `utilization`, `memory`, `processes`).
    #[error("NVML GPU {index} {what}: {source}")]
    Reading {
        index: u32,
        what: &'static str,
        source: NvmlError,
    },
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

/// NVML: power (`nvmlDeviceGetPowerUsage`, mW), the energy counter
/// (`nvmlDeviceGetTotalEnergyConsumption`, mJ), utilization and memory.
pub struct NvmlSource {
    nvml: Nvml,
    /// `(uuid, name)` by index, read once.
    names: Vec<(String, String)>,
}

impl NvmlSource {
    /// NVML initialized, or why not (no driver: libnvidia-ml cannot be loaded).
    pub fn open() -> Result<Self, SourceError> {
        let nvml = Nvml::init().map_err(SourceError::Init)?;
        let count = nvml.device_count().map_err(SourceError::DeviceCount)?;
        let mut names = Vec::new();
        for index in 0..count {
            let d = nvml
                .device_by_index(index)
                .map_err(|source| SourceError::Device { index, source })?;
            names.push((d.uuid().unwrap_or_default(), d.name().unwrap_or_default()));
        }
        Ok(Self { nvml, names })
    }
}

/// A reading NVML does not support on this GPU is absent, not an error.
fn optional<T>(r: Result<T, NvmlError>) -> Result<Option<T>, NvmlError> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(NvmlError::NotSupported) => Ok(None),
        Err(e) => Err(e),
    }
}

impl GpuSource for NvmlSource {
    fn name(&self) -> &'static str {
        "nvml"
    }

    fn read(&mut self) -> Result<Vec<GpuSample>, SourceError> {
        let mut out = Vec::with_capacity(self.names.len());
        for (i, (uuid, name)) in self.names.iter().enumerate() {
            let index = i as u32;
            let d = self
                .nvml
                .device_by_index(index)
                .map_err(|source| SourceError::Device { index, source })?;
            let e = |what: &'static str| {
                move |source| SourceError::Reading {
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

    fn processes(&mut self) -> Result<Vec<(String, u32)>, SourceError> {
        let mut out = Vec::new();
        for (i, (uuid, _)) in self.names.iter().enumerate() {
            let index = i as u32;
            let d = self
                .nvml
                .device_by_index(index)
                .map_err(|source| SourceError::Device { index, source })?;
            let ps = d
                .running_compute_processes()
                .map_err(|source| SourceError::Reading {
                    index,
                    what: "processes",
                    source,
                })?;
            out.extend(ps.into_iter().map(|p| (uuid.clone(), p.pid)));
        }
        Ok(out)
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
