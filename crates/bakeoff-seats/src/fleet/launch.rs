//! How a seat is launched (docs/fleet.md): a process or a Docker container, as checked from the
//! fleet file. A leaf: the secret rule ([`crate::redact`]) and the TLS reading of a seat's
//! arguments ([`super::seat_tls`]) read launches without the rest of the fleet.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProcessLaunch {
    /// The program (`{cache}` is bakeoff's cache directory).
    pub command: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Environment variables added to bakeoff's own.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DockerLaunch {
    /// The image (pulled by Docker when absent).
    pub image: String,
    /// The container's command (entrypoint left to the image).
    #[serde(default)]
    pub command: Vec<String>,
    /// The container's environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// `HOST:CONTAINER[:ro]` bind mounts.
    #[serde(default)]
    pub mounts: Vec<String>,
    /// GPU ids handed to the container (`--gpus device=…`).
    #[serde(default)]
    pub gpus: Vec<String>,
    /// `no`, `always`, `unless-stopped`, `on-failure` or `on-failure:N`.
    #[serde(default)]
    pub restart: Option<String>,
    /// Memory limit: bytes, or with a suffix `k`, `m`, `g` (`512m`, `8g`).
    #[serde(default)]
    pub memory: Option<String>,
    /// Container labels.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// The port the engine listens on inside the container (default: the seat's port).
    #[serde(default)]
    pub container_port: Option<u16>,
    /// Container name (default `bakeoff-<seat>`).
    #[serde(default)]
    pub container_name: Option<String>,
    /// `host`: the container shares the host's network and listens on the seat's port itself
    /// (no port publishing; for an engine without a bridge, or a fast path). Default: Docker's
    /// bridge with the port published. Left out of the JSON when unset, so existing
    /// containers keep their configuration hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_mode: Option<String>,
}

impl DockerLaunch {
    pub fn memory_bytes(&self) -> Result<Option<i64>, NotASize> {
        self.memory.as_deref().map(parse_bytes).transpose()
    }
}

/// A `memory` value that is not a size Docker takes (as written).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("memory {0:?} is not a size (use bytes or 512m, 8g)")]
pub struct NotASize(pub String);

fn parse_bytes(s: &str) -> Result<i64, NotASize> {
    parse_size(s)
        .and_then(|n| i64::try_from(n).ok())
        .ok_or_else(|| NotASize(s.to_string()))
}

/// A size as the fleet file's `memory` takes it: bytes, or with a suffix `k`, `m`, `g` (an
/// optional `b` after it), binary multiples; `None` when it is not one, or not above 0. The
/// one reading for the fleet file and the flags that take a size.
pub fn parse_size(s: &str) -> Option<u64> {
    let t = s.trim().to_ascii_lowercase();
    let t = t.strip_suffix('b').unwrap_or(&t);
    let (num, mult) = match t.chars().last() {
        Some('k') => (&t[..t.len() - 1], 1u64 << 10),
        Some('m') => (&t[..t.len() - 1], 1 << 20),
        Some('g') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    num.trim()
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .filter(|n| *n > 0)
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Launch {
    Process(ProcessLaunch),
    Docker(DockerLaunch),
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_bytes("512m").unwrap(), 512 << 20);
        assert_eq!(parse_bytes("8g").unwrap(), 8 << 30);
        assert_eq!(parse_bytes("100").unwrap(), 100);
        assert!(parse_bytes("lots").is_err());
    }
}
