//! Whether a seat's weight files were in the page cache when its start began (docs/metrics.md "Conditions"):
//! a load time read from a warm cache measures the engine, one from a cold cache measures the
//! disk too, and the two must not be compared as if they were the same thing (docs/field-cases.md B5).
//! Recorded in the seat start record (`page_cache`), written by `bakeoff seat up|restart`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The page-cache state of the weight files before the start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PageCacheState {
    /// (Nearly) all of the weight bytes were cached: the load read memory, not the disk.
    Warm,
    /// Some were cached, not most: the load read part of them from the disk.
    Partial,
    /// (Nearly) none were cached: the load read them from the disk.
    Cold,
    /// It could not be told; `why` says why.
    Unknown,
}

/// How the state was measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PageCacheMethod {
    /// Residency of each file's pages before the start, from util-linux `fincore` (`mincore(2)`
    /// on a mapping of the file): exact, per file.
    Fincore,
    /// The growth of `/proc/meminfo` `Cached` over the load against the files' size: a load
    /// that grew the cache by at least half the files' size read them from the disk. Coarse: any
    /// other I/O on the host during the load counts too.
    CacheGrowth,
    /// Nothing was measured (`state` is `unknown`).
    None,
}

/// Whether a seat's weight files were in the page cache before its start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SeatPageCache {
    pub state: PageCacheState,
    pub method: PageCacheMethod,
    /// Why the state is `unknown`, or what was not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// The weight files, host paths (a llama.cpp `-m` file; the `*.safetensors`/`*.gguf` of a
    /// local model directory; a Docker seat's model mapped through its bind mounts).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// Their total size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight_bytes: Option<u64>,
    /// Bytes of them in the page cache just before the start (method `fincore`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resident_before_bytes: Option<u64>,
    /// `/proc/meminfo` `Cached` just before the start, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_before_bytes: Option<u64>,
    /// `/proc/meminfo` `Cached` when the watch ended, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_after_bytes: Option<u64>,
    /// `cached_after_bytes - cached_before_bytes` (negative: the cache shrank during the load).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_growth_bytes: Option<i64>,
    /// The read of every weight file before the start, when `--warm-cache` asked for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmed: Option<SeatWarmRead>,
}

/// `seat up --warm-cache`: every weight file read once, sequentially, before the start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SeatWarmRead {
    pub bytes: u64,
    pub seconds: f64,
    /// Files that could not be read (path: error); the start went ahead without them warm.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
}
