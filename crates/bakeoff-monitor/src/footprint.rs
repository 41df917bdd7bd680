//! A seat's memory footprint at one tick, from the best source that answers, each figure
//! labelled with its source:
//!
//! 1. **GPU memory of the seat's processes**: NVML, else nvidia-smi (`bakeoff_seats::release::
//!    gpu_readings`, the reading a stop verifies with) on this machine; nvidia-smi over the
//!    host's ssh channel for an `ssh://` host (`bakeoff_host::over_ssh`, as `plan` reads it). The
//!    driver reports host PIDs: a process seat's are its recorded pid and descendants, a
//!    container's come from `docker top` on its host. A seat on a GPU grows there (docs/field-cases.md F1:
//!    38.5 GiB fresh, 45.6 GiB after three days).
//! 2. **`docker stats`** for a container seat the GPU readings do not cover (a CPU seat, a
//!    host without nvidia-smi): the cgroup's usage less its inactive file cache.
//! 3. **Process RSS** otherwise: `VmRSS` of the seat's recorded process and its descendants,
//!    from `/proc`.

use bakeoff_artifact::monitor::{FootprintSample, FootprintSource};
use bakeoff_host::{ProcRoot, ReadingSource, Readings};

/// GPU readings of one host, with what they were read through (`NVML`, `nvidia-smi over ssh
/// ops@gpu2`).
#[derive(Debug, Clone)]
pub struct GpuView {
    pub readings: Readings,
    pub label: String,
}

fn source_of(r: &Readings) -> FootprintSource {
    match r.source {
        ReadingSource::Nvml => FootprintSource::Nvml,
        ReadingSource::NvidiaSmi => FootprintSource::NvidiaSmi,
    }
}

/// The GPU memory the driver lists for `pids` (host PIDs), when it lists any with a figure.
pub fn gpu_bytes(view: &GpuView, pids: &[u32]) -> Option<FootprintSample> {
    let mut bytes = 0u64;
    let mut held = Vec::new();
    for g in &view.readings.gpus {
        for p in g.processes.iter().filter(|p| pids.contains(&p.pid)) {
            if let Some(b) = p.used_bytes {
                bytes = bytes.saturating_add(b);
                held.push(format!("pid {} on GPU {}", p.pid, g.index));
            }
        }
    }
    (!held.is_empty()).then(|| FootprintSample {
        bytes,
        source: source_of(&view.readings),
        detail: format!("{} ({})", held.join(", "), view.label),
    })
}

/// Why a running seat has no footprint reading (recorded in the sample as its text).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FootprintError {
    #[error("process {0} is not in /proc any more")]
    Gone(u32),
    #[error("no resident memory readable for pid{} {}", if .0.len() == 1 { "" } else { "s" }, list(.0))]
    NoRss(Vec<u32>),
    #[error("the seat's process id is not recorded")]
    NoPid,
    #[error("the host's Docker engine did not answer")]
    NoDocker,
    /// `docker stats` failed; the seats crate's message.
    #[error("{0}")]
    DockerStats(String),
    #[error("docker stats {container}: no answer within {limit_s} s")]
    DockerTimeout { container: String, limit_s: u64 },
}

/// A process seat's footprint: the GPU memory of its process tree when the driver lists it,
/// else the tree's resident memory.
pub fn of_process(
    pid: u32,
    proc: &ProcRoot,
    gpu: Option<&GpuView>,
) -> Result<FootprintSample, FootprintError> {
    let tree = proc.with_descendants(pid);
    if tree.is_empty() {
        return Err(FootprintError::Gone(pid));
    }
    let pids: Vec<u32> = tree.iter().map(|e| e.pid).collect();
    if let Some(s) = gpu.and_then(|v| gpu_bytes(v, &pids)) {
        return Ok(s);
    }
    rss_of(&pids, proc)
}

/// The resident memory of `pids`, summed; an error when none of them could be read.
pub fn rss_of(pids: &[u32], proc: &ProcRoot) -> Result<FootprintSample, FootprintError> {
    let read: Vec<(u32, u64)> = pids
        .iter()
        .filter_map(|p| proc.rss_bytes(*p).map(|b| (*p, b)))
        .collect();
    if read.is_empty() {
        return Err(FootprintError::NoRss(pids.to_vec()));
    }
    let pids: Vec<u32> = read.iter().map(|(p, _)| *p).collect();
    Ok(FootprintSample {
        bytes: read.iter().map(|(_, b)| *b).sum(),
        source: FootprintSource::ProcRss,
        detail: format!(
            "VmRSS of pid{} {}",
            if pids.len() == 1 { "" } else { "s" },
            list(&pids)
        ),
    })
}

fn list(pids: &[u32]) -> String {
    const SHOWN: usize = 8;
    let mut s: Vec<String> = pids.iter().take(SHOWN).map(u32::to_string).collect();
    if pids.len() > SHOWN {
        s.push(format!("and {} more", pids.len() - SHOWN));
    }
    s.join(", ")
}

/// A container's footprint from `docker stats`.
pub fn of_docker_stats(container: &str, bytes: u64) -> FootprintSample {
    FootprintSample {
        bytes,
        source: FootprintSource::DockerStats,
        detail: format!("container {container}"),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use bakeoff_host::{GpuProcess, GpuReading};

    fn view(source: ReadingSource, procs: Vec<GpuProcess>) -> GpuView {
        GpuView {
            readings: Readings {
                source,
                gpus: vec![GpuReading {
                    index: 1,
                    uuid: "GPU-x".into(),
                    name: "H200".into(),
                    total_bytes: 140 << 30,
                    used_bytes: 50 << 30,
                    free_bytes: 90 << 30,
                    processes: procs,
                    source,
                }],
                unavailable: None,
            },
            label: "NVML".into(),
        }
    }

    #[test]
    fn gpu_memory_of_the_seat_s_pids_only() {
        let v = view(
            ReadingSource::Nvml,
            vec![
                GpuProcess {
                    pid: 10,
                    used_bytes: Some(38 << 30),
                    name: None,
                },
                GpuProcess {
                    pid: 11,
                    used_bytes: Some(1 << 30),
                    name: None,
                },
                GpuProcess {
                    pid: 99,
                    used_bytes: Some(5 << 30),
                    name: None,
                },
            ],
        );
        let s = gpu_bytes(&v, &[10, 11, 12]).unwrap();
        assert_eq!(s.bytes, 39 << 30);
        assert_eq!(s.source, FootprintSource::Nvml);
        assert!(s.detail.contains("pid 10 on GPU 1"), "{}", s.detail);
        // Not listed, or listed without a figure: no GPU footprint (the next source is used).
        assert!(gpu_bytes(&v, &[12]).is_none());
        let na = view(
            ReadingSource::NvidiaSmi,
            vec![GpuProcess {
                pid: 10,
                used_bytes: None,
                name: None,
            }],
        );
        assert!(gpu_bytes(&na, &[10]).is_none());
    }

    #[test]
    fn rss_of_this_process_is_read_from_proc() {
        let me = std::process::id();
        let s = of_process(me, &ProcRoot::system(), None).unwrap();
        assert_eq!(s.source, FootprintSource::ProcRss);
        assert!(s.bytes > 0);
        assert!(s.detail.contains(&me.to_string()), "{}", s.detail);
    }
}
