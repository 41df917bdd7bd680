//! The nvidia-smi fallback, and the second opinion next to NVML.
//!
//! Format (nvidia-smi(1), `nvidia-smi --help-query-gpu` and `--help-query-compute-apps`):
//! `--format=csv,noheader,nounits` prints one line per GPU (or per process), the queried fields
//! in the order asked, separated by `", "`, memory in MiB without the unit; a value the driver
//! cannot give is printed as `[N/A]` (or `[Insufficient Permissions]`, `[Not Supported]`).
//! We ask for:
//!
//! - `QUERY_GPU`: `index,uuid,name,memory.total,memory.used,memory.free`
//! - `QUERY_APPS`: `gpu_uuid,pid,used_memory,process_name` (nvidia-smi `--query-compute-apps`)
//!
//! `process_name` is last because it is the only field that can hold a comma; everything after
//! the third separator belongs to it.

use std::process::{Command, ExitStatus};
use std::time::Duration;

use crate::bounded::BoundedError;
use crate::readings::{GpuProcess, GpuReading, ReadingSource, Readings};
use crate::units::MIB;

pub const QUERY_GPU: &str = "index,uuid,name,memory.total,memory.used,memory.free";
pub const QUERY_APPS: &str = "gpu_uuid,pid,used_memory,process_name";

/// nvidia-smi normally answers in well under a second; a wedged driver can make it hang.
const TIMEOUT: Duration = Duration::from_secs(15);

fn field_u64(s: &str) -> Option<u64> {
    s.trim().parse::<u64>().ok()
}

/// Parses `--query-gpu=QUERY_GPU --format=csv,noheader,nounits` output. Lines that do not
/// parse are returned as errors (line number and text) rather than dropped.
pub fn parse_query_gpu(text: &str) -> (Vec<GpuReading>, Vec<String>) {
    let mut gpus = Vec::new();
    let mut bad = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.splitn(6, ',').map(str::trim).collect();
        let parsed = match f.as_slice() {
            [index, uuid, name, total, used, free] => (|| {
                Some(GpuReading {
                    index: index.parse().ok()?,
                    uuid: (*uuid).to_owned(),
                    name: (*name).to_owned(),
                    total_bytes: field_u64(total)?.checked_mul(MIB)?,
                    used_bytes: field_u64(used)?.checked_mul(MIB)?,
                    free_bytes: field_u64(free)?.checked_mul(MIB)?,
                    processes: Vec::new(),
                    source: ReadingSource::NvidiaSmi,
                })
            })(),
            _ => None,
        };
        match parsed {
            Some(g) => gpus.push(g),
            None => bad.push(format!("line {}: {line:?}", n + 1)),
        }
    }
    (gpus, bad)
}

/// Parses `--query-compute-apps=QUERY_APPS --format=csv,noheader,nounits` output into
/// `(gpu_uuid, process)` pairs.
pub fn parse_compute_apps(text: &str) -> (Vec<(String, GpuProcess)>, Vec<String>) {
    let mut out = Vec::new();
    let mut bad = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.splitn(4, ',').map(str::trim).collect();
        let parsed = match f.as_slice() {
            [uuid, pid, used, name] => pid.parse::<u32>().ok().map(|pid| {
                (
                    (*uuid).to_owned(),
                    GpuProcess {
                        pid,
                        // `[N/A]` when the driver cannot attribute memory (containers without
                        // --pid=host on some drivers, WDDM).
                        used_bytes: field_u64(used).and_then(|m| m.checked_mul(MIB)),
                        name: Some((*name).to_owned()).filter(|s| !s.is_empty()),
                    },
                )
            }),
            _ => None,
        };
        match parsed {
            Some(p) => out.push(p),
            None => bad.push(format!("line {}: {line:?}", n + 1)),
        }
    }
    (out, bad)
}

/// Joins the two queries: processes go to the GPU with their UUID.
pub fn join(mut gpus: Vec<GpuReading>, apps: Vec<(String, GpuProcess)>) -> Vec<GpuReading> {
    for (uuid, p) in apps {
        if let Some(g) = gpus.iter_mut().find(|g| g.uuid == uuid) {
            g.processes.push(p);
        }
    }
    gpus
}

/// Why `nvidia-smi` gave no output.
#[derive(Debug, thiserror::Error)]
pub enum SmiError {
    /// It could not be started, or did not answer in time.
    #[error(transparent)]
    Run(#[from] BoundedError),
    /// It ran and failed; `first` is the first non-empty line it printed.
    #[error("{bin} exited with {status} ({first})")]
    Exited {
        bin: String,
        status: ExitStatus,
        first: String,
    },
}

/// Runs `nvidia-smi ARGS` with a timeout; `Err` says why there is no output.
pub fn run(bin: &str, args: &[String]) -> Result<String, SmiError> {
    let out = crate::bounded::run_bounded(Command::new(bin).args(args), TIMEOUT)?;
    if !out.status.success() {
        // nvidia-smi prints its reason ("NVIDIA-SMI has failed because it couldn't
        // communicate with the NVIDIA driver…") on stdout, others on stderr.
        let text = format!("{}\n{}", out.stderr, out.stdout);
        let first = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("");
        return Err(SmiError::Exited {
            bin: bin.to_owned(),
            status: out.status,
            first: first.to_owned(),
        });
    }
    Ok(out.stdout)
}

/// Reads all GPUs through nvidia-smi (`bin` is normally `nvidia-smi`).
pub fn read(bin: &str) -> Readings {
    let q = |query: &str| {
        vec![
            format!("--query-{query}"),
            "--format=csv,noheader,nounits".to_owned(),
        ]
    };
    let gpus = match run(bin, &q(&format!("gpu={QUERY_GPU}"))) {
        Ok(t) => t,
        Err(e) => return Readings::unavailable(ReadingSource::NvidiaSmi, e.to_string()),
    };
    let (gpus, bad) = parse_query_gpu(&gpus);
    if gpus.is_empty() {
        return Readings::unavailable(
            ReadingSource::NvidiaSmi,
            if bad.is_empty() {
                "nvidia-smi listed no GPU".to_owned()
            } else {
                format!("nvidia-smi output did not parse: {}", bad.join("; "))
            },
        );
    }
    let apps = match run(bin, &q(&format!("compute-apps={QUERY_APPS}"))) {
        Ok(t) => parse_compute_apps(&t).0,
        Err(e) => {
            return Readings {
                source: ReadingSource::NvidiaSmi,
                gpus,
                unavailable: Some(format!("GPUs read, but not their processes: {e}")),
            };
        }
    };
    Readings {
        source: ReadingSource::NvidiaSmi,
        gpus: join(gpus, apps),
        unavailable: None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// `tests/fixtures/nvidia-smi` (its README says where the figures come from).
    fn fixture(name: &str) -> String {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/nvidia-smi");
        std::fs::read_to_string(dir.join(name)).unwrap()
    }

    #[test]
    fn nvidia_smi_csv_fixtures_parse() {
        let gpus = fixture("query-gpu.csv");
        let apps = fixture("compute-apps.csv");
        let (g, bad) = parse_query_gpu(&gpus);
        assert!(bad.is_empty());
        assert_eq!(g.len(), 2);
        assert_eq!((g[0].index, g[0].name.as_str()), (0, "NVIDIA H200"));
        assert_eq!(g[0].total_bytes, 143_771 * MIB);
        assert_eq!(g[0].used_bytes, 47_319 * MIB);
        let (a, bad) = parse_compute_apps(&apps);
        assert!(bad.is_empty());
        assert_eq!(a[0].1.used_bytes, Some(46_694 * MIB));
        // `[N/A]` is unavailable, not zero; a comma in the process name stays in the name.
        assert_eq!(a[1].1.used_bytes, None);
        assert_eq!(a[1].1.name.as_deref(), Some("llama-server, with a comma"));
        let joined = join(g, a);
        assert_eq!(joined[0].processes.len(), 2);
        assert!(joined[1].processes.is_empty());
        let (_, bad) = parse_query_gpu("0, GPU-x, H200, lots, 1, 2\n");
        assert_eq!(bad.len(), 1);
    }
}
