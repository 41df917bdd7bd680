//! NVML readings through nvml-wrapper, which loads libnvidia-ml at run time: without a driver
//! `Nvml::init()` returns an error and we report NVML as unavailable, never fail the plan.

use nvml_wrapper::Nvml;
use nvml_wrapper::enums::device::UsedGpuMemory;

use crate::readings::{GpuProcess, GpuReading, ReadingSource, Readings};

/// Reads every GPU NVML sees: memory (`nvmlDeviceGetMemoryInfo`) and compute processes
/// (`nvmlDeviceGetComputeRunningProcesses_v3`, host PIDs).
pub fn read() -> Readings {
    let nvml = match Nvml::init() {
        Ok(n) => n,
        Err(e) => {
            return Readings::unavailable(
                ReadingSource::Nvml,
                format!("NVML did not initialize ({e}): no NVIDIA driver or GPU on this host"),
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
