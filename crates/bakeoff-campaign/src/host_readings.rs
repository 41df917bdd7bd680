//! The GPU readings of a fleet's other hosts, for `bakeoff plan`: each `ssh://` host's GPUs
//! through nvidia-smi over the host's own ssh channel (bakeoff-seats builds the ssh command,
//! bakeoff-host runs and parses it), and the host PIDs of its seat containers through that
//! host's Docker connection (`docker top`), so its GPU processes map to seats as they do here.
//! A `tcp://` host has no shell channel: it is planned by claims, and says so.
//!
//! Hosts are read concurrently, each within bakeoff-host's ssh timeout: one slow host does
//! not hold up the others.

use std::collections::BTreeMap;
use std::time::Duration;

use bakeoff_host::over_ssh::{read_over, remote_command};
use bakeoff_host::{ReadingSource, Readings};
use bakeoff_plan::HostReadings;
use bakeoff_seats::Fleet;
use bakeoff_seats::fleet::{Host, Launch, SshAddress};

/// How long the Docker side (connect over ssh, one `docker top` per container) may take: as
/// long as the nvidia-smi side (`bakeoff_host::over_ssh::SSH_READ_TIMEOUT`), which runs beside it.
const TOP_TIMEOUT: Duration = Duration::from_secs(20);

/// The readings of every host of `fleet` that is not this machine and has a Docker address:
/// `ssh://` read over ssh, `tcp://`/`http://` marked as claims only. Hosts without one (this
/// machine, `unix://`) are not here: this machine is read by NVML and nvidia-smi directly.
pub async fn read_hosts(fleet: &Fleet) -> BTreeMap<String, HostReadings> {
    let mut out = BTreeMap::new();
    let mut set = tokio::task::JoinSet::new();
    for (name, h) in &fleet.hosts {
        let Some(addr) = h.docker.as_deref() else {
            continue;
        };
        match addr.split_once("://").map(|(s, _)| s) {
            Some("ssh") => {
                let containers: Vec<String> = fleet
                    .seats
                    .iter()
                    .filter(|s| &s.host == name && matches!(s.launch, Launch::Docker(_)))
                    .filter_map(|s| s.container_name())
                    .collect();
                set.spawn(read_ssh_host(h.clone(), containers));
            }
            Some(scheme @ ("tcp" | "http")) => {
                out.insert(name.clone(), HostReadings::not_over(name, scheme));
            }
            _ => {}
        }
    }
    while let Some(done) = set.join_next().await {
        if let Ok(h) = done {
            out.insert(h.host.clone(), h);
        }
    }
    out
}

/// One `ssh://` host: nvidia-smi's two queries in one ssh call, and its containers' PIDs, both
/// at once.
async fn read_ssh_host(h: Host, containers: Vec<String>) -> HostReadings {
    let dest = h
        .docker
        .as_deref()
        .and_then(|a| SshAddress::parse(a).ok())
        .map(|a| a.destination)
        .unwrap_or_else(|| h.name.clone());
    let source = format!("nvidia-smi over ssh {dest}");
    let bin = h.nvidia_smi.clone().unwrap_or_else(|| "nvidia-smi".into());
    let cmd = bakeoff_seats::docker::transport::ssh_command(&h, &[&remote_command(&bin)]);
    let label = source.clone();
    let gpus = tokio::task::spawn_blocking(move || match cmd {
        Ok(c) => read_over(c, &label),
        Err(e) => unavailable(format!(
            "{label} unavailable: {e}; claims only for this host"
        )),
    });
    let (readings, (container_pids, notes)) = tokio::join!(gpus, container_pids(&h, &containers));
    let readings = readings.unwrap_or_else(|e| {
        unavailable(format!(
            "{source} unavailable: the reader stopped ({e}); claims only for this host"
        ))
    });
    // Without GPU readings there is nothing to map: the Docker side's failure (the same ssh
    // channel, most likely) would only repeat the reason already given.
    let notes = if readings.gpus.is_empty() {
        Vec::new()
    } else {
        notes
    };
    HostReadings {
        host: h.name.clone(),
        source,
        readings,
        container_pids,
        notes,
    }
}

fn unavailable(why: String) -> Readings {
    Readings::unavailable(ReadingSource::NvidiaSmi, why)
}

/// The host PIDs of each container (by name) on `h`, and a line for each that could not be
/// read. A container that is not running is simply absent: its seat is not running there.
async fn container_pids(
    h: &Host,
    containers: &[String],
) -> (BTreeMap<String, Vec<u32>>, Vec<String>) {
    let mut pids = BTreeMap::new();
    let mut notes = Vec::new();
    if containers.is_empty() {
        return (pids, notes);
    }
    let read = async {
        let docker = match bakeoff_seats::docker::connect(Some(h)).await {
            Ok(d) => d,
            Err(e) => {
                notes.push(format!(
                    "container PIDs not read ({e}): GPU processes there are not mapped to seats"
                ));
                return;
            }
        };
        for name in containers {
            match bakeoff_seats::docker::top::host_pids(&docker, name).await {
                Ok(p) => {
                    pids.insert(name.clone(), p);
                }
                // 404 (no such container) and 409 (not running): the seat is down there.
                Err(e) if e.not_running() => {}
                Err(e) => notes.push(e.to_string()),
            }
        }
    };
    if tokio::time::timeout(TOP_TIMEOUT, read).await.is_err() {
        notes.push(format!(
            "container PIDs on {} not read within {} s: GPU processes there are not mapped to seats",
            h.name,
            TOP_TIMEOUT.as_secs()
        ));
    }
    (pids, notes)
}
