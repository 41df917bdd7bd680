//! What `bakeoff audit cache` reports, as `--json` prints it (`schemas/cache-audit.v1.schema.json`):
//! each path's layout, downloads and locks, and the findings with their fixes.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::hub::HubRepo;
use crate::llamacpp::LlamaCache;
use crate::locks::{LockHolder, LockState};

/// The version of [`CacheAudit`]'s JSON (`schemas/cache-audit.v1.schema.json`).
pub const SCHEMA_VERSION: u32 = 1;

/// The whole audit, as printed by `--json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CacheAudit {
    /// Always [`SCHEMA_VERSION`].
    pub schema_version: u32,
    pub sample_interval_ms: u64,
    pub caches: Vec<CacheReport>,
    /// Every partial file (`.incomplete` blob, `.downloadInProgress`) and what it is doing.
    pub downloads: Vec<DownloadReport>,
    /// Every lock file and who holds it.
    pub locks: Vec<LockReport>,
    /// Problems (each with its fix) and notes.
    pub findings: Vec<CacheFinding>,
    /// True when no finding is a problem (exit 0).
    pub ok: bool,
}

/// One cache found under a PATH given on the command line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CacheReport {
    /// The PATH as given.
    pub path: PathBuf,
    pub layout: Layout,
    /// The hub directory (the one holding `.locks`), for the hub layout.
    pub hub_dir: Option<PathBuf>,
    pub repos: Vec<HubRepo>,
    pub llama: Option<LlamaCache>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Layout {
    /// The Hugging Face hub cache (also where newer llama.cpp `-hf` downloads land).
    HfHub,
    /// llama.cpp's own flat cache (`LLAMA_CACHE`).
    LlamaCpp,
}

/// What a partial file is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Activity {
    /// It grew between the two samples.
    InProgress,
    /// A live process holds its lock or has it open, and it did not grow.
    Stalled,
    /// Nobody holds or writes it: an interrupted download.
    Interrupted,
}

/// One partial file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DownloadReport {
    pub path: PathBuf,
    /// `ORG/NAME` for a hub blob.
    pub repo: Option<String>,
    /// Bytes written at the second sample.
    pub bytes: u64,
    /// Seconds since it was last written, at the first sample.
    pub age_secs: u64,
    /// Bytes it grew between the samples.
    pub grew_bytes: u64,
    /// The hub lock guarding it, when there is one.
    pub lock: Option<PathBuf>,
    /// The live processes holding its lock or having it open.
    pub holders: Vec<LockHolder>,
    pub activity: Activity,
}

/// One lock file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LockReport {
    pub path: PathBuf,
    pub repo: Option<String>,
    /// The `.incomplete` blob it guards (whether or not it exists).
    pub blob: Option<PathBuf>,
    #[serde(flatten)]
    pub state: LockState,
    /// Whether its blob grew between the samples.
    pub progressing: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Makes the audit exit 1.
    Problem,
    /// For the operator's information.
    Note,
}

/// One problem or note, with the fix in words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CacheFinding {
    /// `incomplete_blob`, `partial_download`, `stalled_download`, `lock_held_idle`,
    /// `missing_blob`, `download_in_progress`, `stale_lock`, `lock_unprobed`.
    pub code: String,
    pub severity: Severity,
    /// The file it is about.
    pub path: PathBuf,
    pub message: String,
    pub fix: Option<String>,
    /// The processes the fix names.
    pub pids: Vec<u32>,
}

/// The JSON schema of [`CacheAudit`].
pub fn json_schema() -> schemars::Schema {
    schemars::schema_for!(CacheAudit)
}
