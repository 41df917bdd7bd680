//! Warm or cold, on purpose (docs/metrics.md "Conditions"): which files are a seat's weights, whether they
//! were in the page cache before its start, and `seat up --warm-cache`'s read of them.
//!
//! Residency is read with util-linux `fincore` (which asks `mincore(2)` of a mapping of each
//! file): the workspace forbids `unsafe` and no crate in the lock file offers `mincore` safely.
//! Where `fincore` cannot run, the state is told from the growth of `/proc/meminfo` `Cached`
//! over the load instead. Both numbers are recorded when they can be read.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

use bakeoff_artifact::{PageCacheMethod, PageCacheState, SeatPageCache, SeatWarmRead};

use crate::checks::model_path::model_and_quantization;
use crate::fleet::types::Seat;

/// At least this share of the weight bytes resident before the start: warm.
pub const WARM_RESIDENT: f64 = 0.9;
/// At most this share resident: cold (between the two: partial).
pub const COLD_RESIDENT: f64 = 0.1;
/// Cache growth over the load of at least this share of the weight bytes: the load read them
/// from the disk (cold); less: they were cached already (warm).
pub const COLD_GROWTH: f64 = 0.5;
/// The warm read's buffer: large, so the read is sequential.
const WARM_BUFFER: usize = 8 << 20;

/// Why the weight files of a seat cannot be named (the record's `why`).
#[derive(Debug, thiserror::Error)]
pub enum WeightFilesError {
    #[error("the seat runs on host {0}, whose page cache this machine cannot read")]
    OtherHost(String),
    #[error(
        "no local model path in the launch arguments (a hub id, a container path outside the bind mounts, or no -m/--model)"
    )]
    NoLocalModel,
    #[error("the model path {} cannot be read: {source}", path.display())]
    ModelPath {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the model directory {} cannot be read: {source}", path.display())]
    ModelDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the model directory {} holds no *.safetensors or *.gguf file", .0.display())]
    NoWeights(PathBuf),
}

/// Why `fincore` gave no residency.
#[derive(Debug, thiserror::Error)]
pub enum FincoreError {
    #[error("fincore (util-linux) could not run: {0}")]
    Run(#[source] std::io::Error),
    /// Its standard error, trimmed.
    #[error("fincore failed: {0}")]
    Failed(String),
    /// A line of its output that is not a number.
    #[error("fincore printed {0:?}, not a byte count")]
    NotACount(String),
}

/// The weight files of `seat` on this machine, or why they cannot be named.
pub fn weight_files(seat: &Seat) -> Result<Vec<PathBuf>, WeightFilesError> {
    if seat.host != "local" {
        return Err(WeightFilesError::OtherHost(seat.host.clone()));
    }
    let (model, _) = model_and_quantization(seat).ok_or(WeightFilesError::NoLocalModel)?;
    let meta = match std::fs::metadata(&model) {
        Ok(m) => m,
        Err(source) => {
            return Err(WeightFilesError::ModelPath {
                path: model,
                source,
            });
        }
    };
    if meta.is_file() {
        return Ok(vec![model]);
    }
    let entries = match std::fs::read_dir(&model) {
        Ok(e) => e,
        Err(source) => {
            return Err(WeightFilesError::ModelDir {
                path: model,
                source,
            });
        }
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && p.extension()
                    .is_some_and(|x| x == "safetensors" || x == "gguf")
        })
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(WeightFilesError::NoWeights(model));
    }
    Ok(files)
}

/// `/proc/meminfo` `Cached`, in bytes.
pub fn meminfo_cached() -> Option<u64> {
    Some(bakeoff_host::ProcRoot::system().memory()?.cached_bytes)
}

/// Bytes of `files` in the page cache, from `fincore` (`RES` column, in bytes).
pub fn resident_bytes(files: &[PathBuf]) -> Result<u64, FincoreError> {
    let out = std::process::Command::new("fincore")
        .args(["--bytes", "--noheadings", "--raw", "--output", "RES"])
        .args(files)
        .output()
        .map_err(FincoreError::Run)?;
    if !out.status.success() {
        return Err(FincoreError::Failed(
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut total = 0u64;
    for l in text.lines().filter(|l| !l.trim().is_empty()) {
        total += l
            .trim()
            .parse::<u64>()
            .map_err(|_| FincoreError::NotACount(l.to_string()))?;
    }
    Ok(total)
}

/// Read every file once, sequentially, so its pages are cached before the start.
pub fn warm(files: &[PathBuf]) -> SeatWarmRead {
    let t0 = Instant::now();
    let mut buf = vec![0u8; WARM_BUFFER];
    let mut bytes = 0u64;
    let mut errors = Vec::new();
    for f in files {
        match read_through(f, &mut buf) {
            Ok(n) => bytes += n,
            Err(e) => errors.push(format!("{}: {e}", f.display())),
        }
    }
    SeatWarmRead {
        bytes,
        seconds: t0.elapsed().as_secs_f64(),
        errors,
    }
}

fn read_through(path: &Path, buf: &mut [u8]) -> std::io::Result<u64> {
    let mut f = bakeoff_model::regular::open_regular(path)?;
    let mut n = 0u64;
    loop {
        match f.read(buf)? {
            0 => return Ok(n),
            k => n += k as u64,
        }
    }
}

/// What was read just before the start; [`Before::after`] finishes it once the watch ended.
#[derive(Debug)]
pub struct Before {
    files: Result<Weights, WeightFilesError>,
    cached: Option<u64>,
    warmed: Option<SeatWarmRead>,
}

/// The weight files named before the start, their size and their residency then.
#[derive(Debug)]
struct Weights {
    files: Vec<PathBuf>,
    bytes: u64,
    resident: Result<u64, FincoreError>,
}

impl Before {
    /// Name the weight files of `seat`, warm them when `warm_cache`, then read their residency
    /// and the page cache's size: the last thing before the start command.
    pub fn take(seat: &Seat, warm_cache: bool) -> Self {
        let list = match weight_files(seat) {
            Ok(list) => list,
            Err(why) => {
                // `--warm-cache` asked for a read it cannot make: the record says so, never a
                // silent success.
                let warmed = warm_cache.then(|| SeatWarmRead {
                    bytes: 0,
                    seconds: 0.0,
                    errors: vec![format!("no weight files to read: {why}")],
                });
                return Self {
                    files: Err(why),
                    cached: meminfo_cached(),
                    warmed,
                };
            }
        };
        let bytes = list
            .iter()
            .map(|f| std::fs::metadata(f).map(|m| m.len()).unwrap_or(0))
            .sum();
        let warmed = warm_cache.then(|| warm(&list));
        let resident = resident_bytes(&list);
        Self {
            files: Ok(Weights {
                files: list,
                bytes,
                resident,
            }),
            cached: meminfo_cached(),
            warmed,
        }
    }

    /// The record, with the page cache's size now (the load is over).
    pub fn after(self) -> SeatPageCache {
        let cached_after = meminfo_cached();
        let growth = match (self.cached, cached_after) {
            (Some(b), Some(a)) => Some(a as i64 - b as i64),
            _ => None,
        };
        let mut rec = SeatPageCache {
            state: PageCacheState::Unknown,
            method: PageCacheMethod::None,
            why: None,
            files: Vec::new(),
            weight_bytes: self.files.as_ref().ok().map(|w| w.bytes),
            resident_before_bytes: None,
            cached_before_bytes: self.cached,
            cached_after_bytes: cached_after,
            cache_growth_bytes: growth,
            warmed: self.warmed,
        };
        let weights = match self.files {
            Ok(w) => w,
            Err(why) => {
                rec.why = Some(why.to_string());
                return rec;
            }
        };
        rec.files = weights
            .files
            .iter()
            .map(|f| f.display().to_string())
            .collect();
        let weight = weights.bytes;
        if weight == 0 {
            rec.why = Some("the weight files are empty".into());
            return rec;
        }
        match weights.resident {
            Ok(res) => {
                rec.method = PageCacheMethod::Fincore;
                rec.resident_before_bytes = Some(res);
                rec.state = by_residency(res as f64 / weight as f64);
            }
            Err(fincore_error) => match growth {
                Some(g) => {
                    rec.method = PageCacheMethod::CacheGrowth;
                    rec.why = Some(format!("residency not read ({fincore_error})"));
                    rec.state = by_growth(g as f64 / weight as f64);
                }
                None => {
                    rec.why = Some(format!(
                        "residency not read ({fincore_error}) and /proc/meminfo not readable"
                    ));
                }
            },
        }
        rec
    }
}

/// The state of a share of the weight bytes resident before the start.
pub fn by_residency(share: f64) -> PageCacheState {
    if share >= WARM_RESIDENT {
        PageCacheState::Warm
    } else if share <= COLD_RESIDENT {
        PageCacheState::Cold
    } else {
        PageCacheState::Partial
    }
}

/// The state of the cache's growth over the load, as a share of the weight bytes.
pub fn by_growth(share: f64) -> PageCacheState {
    if share >= COLD_GROWTH {
        PageCacheState::Cold
    } else {
        PageCacheState::Warm
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds() {
        assert_eq!(by_residency(1.0), PageCacheState::Warm);
        assert_eq!(by_residency(0.5), PageCacheState::Partial);
        assert_eq!(by_residency(0.0), PageCacheState::Cold);
        assert_eq!(by_growth(0.9), PageCacheState::Cold);
        assert_eq!(by_growth(0.02), PageCacheState::Warm);
    }
}
