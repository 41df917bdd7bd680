//! The host PIDs of a container's processes (`docker top`), read through the host's own
//! Docker connection: the daemon runs `ps` on its host, so these are the PIDs that host's
//! driver (nvidia-smi, NVML) reports — how `plan` maps a remote host's GPU processes to seats.

use bollard::Docker;

/// Host PIDs of the processes of container `name`; an error (one line) when the engine does
/// not answer or the container does not run.
pub async fn host_pids(docker: &Docker, name: &str) -> Result<Vec<u32>, TopError> {
    let top = docker
        .top_processes(name, None)
        .await
        .map_err(|source| TopError {
            name: name.to_owned(),
            source,
        })?;
    Ok(pids_of(
        top.titles.as_deref().unwrap_or_default(),
        top.processes.as_deref().unwrap_or_default(),
    ))
}

/// `docker top` did not answer for a container.
#[derive(Debug, thiserror::Error)]
#[error("docker top {name}: {source}")]
pub struct TopError {
    pub name: String,
    #[source]
    pub source: bollard::errors::Error,
}

impl TopError {
    /// The engine answered 404 (no such container) or 409 (not running): the container is
    /// not running there, which is an answer rather than a failure to read.
    pub fn not_running(&self) -> bool {
        matches!(
            self.source,
            bollard::errors::Error::DockerResponseServerError {
                status_code: 404 | 409,
                ..
            }
        )
    }
}

/// The `PID` column of `docker top`'s table (its columns follow the daemon's `ps` arguments,
/// so the column is found by its title, never by position).
fn pids_of(titles: &[String], rows: &[Vec<String>]) -> Vec<u32> {
    let Some(col) = titles.iter().position(|t| t == "PID") else {
        return Vec::new();
    };
    rows.iter()
        .filter_map(|r| r.get(col).and_then(|p| p.trim().parse().ok()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pid_column_is_found_by_its_title() {
        let titles: Vec<String> = ["UID", "PID", "PPID", "CMD"].map(String::from).to_vec();
        let rows = vec![
            ["root", "5159", "5130", "llama-server"]
                .map(String::from)
                .to_vec(),
            ["root", "x", "5130", "bad"].map(String::from).to_vec(),
        ];
        assert_eq!(pids_of(&titles, &rows), vec![5159]);
        assert!(pids_of(&[], &rows).is_empty());
    }
}
