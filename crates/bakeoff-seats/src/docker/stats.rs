//! A container's memory as `docker stats` shows it, read through the host's own Docker
//! connection (one-shot stats): the seat monitor's footprint of a container seat when no GPU
//! reading maps to it.

use bollard::Docker;
use bollard::query_parameters::StatsOptionsBuilder;
use futures_util::StreamExt;

/// Memory in use by container `name`, in bytes, as the docker CLI computes it for `docker
/// stats` (cli/command/container/stats_helpers.go `calculateMemUsageUnixNoCache`): the cgroup's
/// usage less its inactive file cache (`inactive_file` on cgroup v2, `total_inactive_file` on
/// v1), page cache the kernel can drop at will. An error (one line) when the engine does not
/// answer, the container does not run, or the engine reports no memory figure.
pub async fn memory_bytes(docker: &Docker, name: &str) -> Result<u64, StatsError> {
    let opts = StatsOptionsBuilder::new()
        .stream(false)
        .one_shot(true)
        .build();
    let mut stream = docker.stats(name, Some(opts));
    let stats = match stream.next().await {
        Some(Ok(s)) => s,
        Some(Err(source)) => {
            return Err(StatsError::Engine {
                name: name.to_owned(),
                source,
            });
        }
        None => return Err(StatsError::NoAnswer(name.to_owned())),
    };
    let mem = stats
        .memory_stats
        .ok_or_else(|| StatsError::NoFigures(name.to_owned()))?;
    let usage = mem
        .usage
        .ok_or_else(|| StatsError::NoUsage(name.to_owned()))?;
    Ok(without_cache(usage, mem.stats.as_ref()))
}

/// Why a container's memory was not read.
#[derive(Debug, thiserror::Error)]
pub enum StatsError {
    #[error("docker stats {name}: {source}")]
    Engine {
        name: String,
        #[source]
        source: bollard::errors::Error,
    },
    #[error("docker stats {0}: no answer")]
    NoAnswer(String),
    #[error("docker stats {0}: no memory figures (is it running?)")]
    NoFigures(String),
    #[error("docker stats {0}: no memory usage (is it running?)")]
    NoUsage(String),
}

/// `usage` less the inactive file cache, when the engine reports it and it is smaller.
fn without_cache(usage: u64, stats: Option<&std::collections::HashMap<String, u64>>) -> u64 {
    let cache = stats.and_then(|s| {
        s.get("inactive_file")
            .or_else(|| s.get("total_inactive_file"))
            .copied()
    });
    match cache {
        Some(c) if c < usage => usage - c,
        _ => usage,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_inactive_file_cache_is_not_counted() {
        let v2: std::collections::HashMap<String, u64> =
            [("inactive_file".to_string(), 100u64), ("anon".into(), 900)].into();
        assert_eq!(without_cache(1000, Some(&v2)), 900);
        let v1: std::collections::HashMap<String, u64> =
            [("total_inactive_file".to_string(), 300u64)].into();
        assert_eq!(without_cache(1000, Some(&v1)), 700);
        // A cache figure larger than the usage is not subtracted (the CLI's guard).
        assert_eq!(without_cache(50, Some(&v2)), 50);
        assert_eq!(without_cache(1000, None), 1000);
    }
}
