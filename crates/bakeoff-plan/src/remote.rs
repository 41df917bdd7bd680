//! Another host's GPU readings as the plan takes them: what `bakeoff_host::over_ssh` read over
//! the host's ssh channel (the caller runs it: `bakeoff_campaign::host_readings`), with the
//! host PIDs of its seat containers, so its processes map to seats as they do here.
//!
//! Every reading is labelled with where it came from (`nvidia-smi over ssh ops@gpu2`), and a
//! host whose nvidia-smi cannot be reached says why in one line and is planned by claims.

use std::collections::BTreeMap;

use bakeoff_host::{ReadingSource, Readings};
use serde::{Deserialize, Serialize};

/// What one host's GPUs read, and how its processes map to seats.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct HostReadings {
    pub host: String,
    /// Where the figures come from: `nvidia-smi over ssh USER@HOST`, or the channel that has
    /// none (`tcp://`).
    pub source: String,
    pub readings: Readings,
    /// Host PIDs of each seat container's processes on that host (`docker top`), by container
    /// name: how the GPU processes there are mapped to seats.
    pub container_pids: BTreeMap<String, Vec<u32>>,
    /// What could not be read besides the GPUs (a container's PIDs), one line each.
    pub notes: Vec<String>,
}

impl HostReadings {
    /// A host with no shell channel to read GPUs through (`tcp://`, TLS): claims only.
    pub fn not_over(host: &str, scheme: &str) -> Self {
        Self {
            host: host.to_owned(),
            source: format!("none ({scheme}://)"),
            readings: Readings::unavailable(
                ReadingSource::NvidiaSmi,
                format!("not available over {scheme}:// (claims only)"),
            ),
            container_pids: BTreeMap::new(),
            notes: Vec::new(),
        }
    }

    /// The one line the plan prints for this host.
    pub fn summary(&self) -> String {
        let n = self.readings.gpus.len();
        match (&self.readings.unavailable, n) {
            (Some(why), 0) => format!("GPU readings on {}: {why}", self.host),
            (Some(why), _) => format!(
                "GPU readings on {}: {} ({n} GPU{}); {why}",
                self.host,
                self.source,
                if n == 1 { "" } else { "s" }
            ),
            (None, _) => format!(
                "GPU readings on {}: {} ({n} GPU{})",
                self.host,
                self.source,
                if n == 1 { "" } else { "s" }
            ),
        }
    }

    /// The container (by name) whose processes include host PID `pid`.
    pub fn container_of(&self, pid: u32) -> Option<&str> {
        self.container_pids
            .iter()
            .find(|(_, pids)| pids.contains(&pid))
            .map(|(name, _)| name.as_str())
    }
}
