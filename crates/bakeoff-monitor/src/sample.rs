//! One tick: every watched seat's state, probe, queue and footprint, as [`MonitorSample`]s.
//!
//! Hosts are read concurrently, each over one Docker connection within [`host_timeout`]: a host
//! that does not answer makes its seats `unknown (host unreachable: …)` while every other seat
//! is read as usual. Every wait below is bounded, so a tick always ends.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use bakeoff_artifact::monitor::{FootprintSample, MONITOR_VERSION, MonitorSample, ProbeSample};
use bakeoff_client::Client;
use bakeoff_host::ProcRoot;
use bakeoff_seats::backend::{Backend, Observed, Status};
use bakeoff_seats::docker::DockerBackend;
use bakeoff_seats::fleet::{Fleet, Host, Launch, Seat};
use bakeoff_seats::ops::host_status::HOST_STATUS_TIMEOUT;
use bakeoff_seats::process::ProcessBackend;
use bollard::Docker;
use chrono::{DateTime, Utc};
use futures_util::future::join_all;

use crate::footprint::{self, FootprintError, GpuView};

/// How long one container's `docker top` or `docker stats` may take.
const DOCKER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long this machine's GPU reading may take (NVML, then nvidia-smi).
const GPU_READ_TIMEOUT: Duration = Duration::from_secs(20);

/// A seat the monitor watches.
#[derive(Debug, Clone)]
pub struct Watched {
    pub seat: Seat,
    pub url: String,
    /// The id the probe asks for: the seat's first served name (`default` when none).
    pub model: String,
    /// Named on the command line: expected to answer from the first tick.
    pub named: bool,
}

/// What a probe asks and how long it may take, and how long a host's Docker engine may take
/// to say what its seats are doing.
#[derive(Debug, Clone, Copy)]
pub struct ProbeOptions {
    pub timeout: Duration,
    pub max_tokens: u32,
    pub host_timeout: Duration,
}

/// How long a host may take to answer for its seats: the interval, between 2 s (an ssh
/// handshake) and `seat status`'s [`HOST_STATUS_TIMEOUT`], so a host that does not answer
/// neither stalls the other seats' cadence for long nor is given up on at once.
pub fn host_timeout(interval: Duration) -> Duration {
    interval.clamp(Duration::from_secs(2), HOST_STATUS_TIMEOUT)
}

/// Whether a GPU source has shown it can answer; one that cannot is not asked again (it would
/// cost every tick its timeout), and the reason is kept for the summary.
#[derive(Debug, Clone, Default)]
enum GpuState {
    #[default]
    Untried,
    Answers,
    Unavailable(String),
}

/// The tick-to-tick state of the sampling: which GPU sources answer.
pub struct Sampler {
    fleet: Fleet,
    watched: Vec<Watched>,
    /// Each watched seat's probe client (same order as `watched`), or why it cannot be built:
    /// built once, so a tick neither rebuilds a connection pool nor re-reads a CA file.
    clients: Vec<Result<Client, crate::probe::ProbeClientError>>,
    probe: ProbeOptions,
    proc: ProcRoot,
    gpus: GpuSources,
    /// Every text a sample carries from a seat, an engine or a host (errors, states) goes
    /// through it before it is journaled: the fleet's secrets never reach the files.
    redactor: bakeoff_seats::redact::Redactor,
}

/// Which GPU sources answer: this machine's, and each ssh host's.
#[derive(Debug, Default)]
struct GpuSources {
    here: GpuState,
    ssh: BTreeMap<String, GpuState>,
}

/// A seat's state as read this tick, with the Docker connection of its host when it has one.
struct StateRead {
    status: Status,
    /// When the running process or container started: a new value is a restart.
    started_at: Option<DateTime<Utc>>,
    docker: Option<Docker>,
}

impl Sampler {
    pub fn new(fleet: Fleet, watched: Vec<Watched>, probe: ProbeOptions) -> Self {
        let clients = watched
            .iter()
            .map(|w| {
                crate::probe::client(
                    &w.url,
                    probe.timeout,
                    w.seat.api_key(),
                    &w.seat.tls_options(),
                )
            })
            .collect();
        Self {
            clients,
            redactor: bakeoff_seats::redact::Redactor::for_fleet(&fleet),
            fleet,
            watched,
            probe,
            proc: ProcRoot::system(),
            gpus: GpuSources::default(),
        }
    }

    pub fn watched(&self) -> &[Watched] {
        &self.watched
    }

    pub fn fleet(&self) -> &Fleet {
        &self.fleet
    }

    /// Text from a seat, an engine or a host, with the fleet's secrets redacted.
    pub fn redact(&self, s: &str) -> String {
        self.redactor.text(s)
    }

    /// Why a GPU source gave nothing, for the summary's notes.
    pub fn gpu_notes(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let GpuState::Unavailable(why) = &self.gpus.here {
            out.push(format!(
                "GPU readings on this machine: {why}; footprints here are Docker stats or process RSS"
            ));
        }
        for (h, st) in &self.gpus.ssh {
            if let GpuState::Unavailable(why) = st {
                out.push(format!(
                    "GPU readings on host {h}: {why}; its footprints are Docker stats"
                ));
            }
        }
        out
    }

    /// One tick: every watched seat's sample, in the order the seats were given, plus the
    /// seats that are up now (watched or a watched seat's port sibling: an alias follows its
    /// port after a swap).
    pub async fn tick(
        &mut self,
        tick: u64,
        at: DateTime<Utc>,
        t_s: f64,
    ) -> (Vec<MonitorSample>, BTreeSet<String>) {
        let states = self.read_states().await;
        let up: BTreeSet<String> = states
            .iter()
            .filter(|(_, s)| s.status.observed.is_up())
            .map(|(n, _)| n.clone())
            .collect();
        let running = |w: &Watched| {
            states
                .get(&w.seat.name)
                .is_some_and(|s| s.status.observed == Observed::Running)
        };
        // GPU readings only where a watched seat runs.
        let local_needed = self
            .watched
            .iter()
            .any(|w| running(w) && self.reads_here(&w.seat));
        let ssh_needed: BTreeSet<String> = self
            .watched
            .iter()
            .filter(|w| running(w) && self.ssh_host(&w.seat).is_some())
            .map(|w| w.seat.host.clone())
            .collect();
        let probes = join_all(self.watched.iter().zip(&self.clients).map(|(w, client)| {
            let st = states.get(&w.seat.name);
            probe_seat(w, client, st.map(|s| &s.status.observed), self.probe)
        }));
        let (gpu, probes) = tokio::join!(
            read_gpus(&mut self.gpus, &self.fleet, local_needed, &ssh_needed),
            probes
        );
        let footprints = join_all(self.watched.iter().map(|w| {
            let st = states.get(&w.seat.name);
            let view = if self.reads_here(&w.seat) {
                gpu.get("")
            } else {
                gpu.get(&w.seat.host)
            };
            footprint_of(w, st, view, &self.proc)
        }))
        .await;
        let samples = self
            .watched
            .iter()
            .zip(probes)
            .zip(footprints)
            .map(|((w, (probe, queue)), fp)| {
                let state = states
                    .get(&w.seat.name)
                    .map(|s| s.status.observed.label())
                    .unwrap_or_else(|| "unknown (not read)".into());
                let (mut footprint, footprint_unavailable) = split(fp);
                let (queue, queue_unavailable) = split(queue);
                let r = |t: String| self.redactor.text(&t);
                let mut probe = probe;
                if let Some(p) = probe.as_mut() {
                    p.error = p.error.take().map(r);
                }
                if let Some(f) = footprint.as_mut() {
                    f.detail = r(std::mem::take(&mut f.detail));
                }
                MonitorSample {
                    schema_version: MONITOR_VERSION,
                    tick,
                    at,
                    t_s,
                    seat: w.seat.name.clone(),
                    host: w.seat.host.clone(),
                    state: r(state),
                    started_at: states.get(&w.seat.name).and_then(|s| s.started_at),
                    answering: probe.as_ref().is_some_and(|p| p.ok),
                    probe,
                    footprint,
                    footprint_unavailable: footprint_unavailable.map(r),
                    queue,
                    queue_unavailable: queue_unavailable.map(r),
                }
            })
            .collect();
        (samples, up)
    }

    /// The seats whose state is read this tick: the watched ones and their port siblings.
    fn seats_to_read(&self) -> Vec<Seat> {
        let mut names: BTreeSet<String> = BTreeSet::new();
        for w in &self.watched {
            names.insert(w.seat.name.clone());
            names.extend(self.fleet.port_siblings(&w.seat).map(|s| s.name.clone()));
        }
        self.fleet
            .seats
            .iter()
            .filter(|s| names.contains(&s.name))
            .cloned()
            .collect()
    }

    /// Every seat's state, hosts concurrently, each host within its timeout.
    async fn read_states(&self) -> BTreeMap<String, StateRead> {
        let seats = self.seats_to_read();
        let mut hosts: BTreeMap<String, Vec<Seat>> = BTreeMap::new();
        let mut out = BTreeMap::new();
        for s in seats {
            match &s.launch {
                // A process seat is this machine's: its state file and /proc.
                Launch::Process(_) => {
                    let mut b = ProcessBackend::new(&self.fleet, &s);
                    let status = b.status();
                    let started_at = status.observed.is_up().then(|| b.started_at()).flatten();
                    out.insert(
                        s.name.clone(),
                        StateRead {
                            status,
                            started_at,
                            docker: None,
                        },
                    );
                }
                Launch::Docker(_) => hosts.entry(s.host.clone()).or_default().push(s),
            }
        }
        let per_host = hosts
            .into_iter()
            .map(|(h, seats)| docker_host_states(&self.fleet, h, seats, self.probe.host_timeout));
        for v in join_all(per_host).await {
            out.extend(v);
        }
        out
    }

    /// Whether a seat's processes are this machine's (a process seat, or a container on the
    /// local socket or another `unix://` one): the GPU readings here cover it.
    fn reads_here(&self, seat: &Seat) -> bool {
        match &seat.launch {
            Launch::Process(_) => true,
            Launch::Docker(_) => self
                .fleet
                .host_of(seat)
                .and_then(|h| h.docker.as_deref())
                .is_none_or(|a| a.starts_with("unix://")),
        }
    }

    /// The seat's host when it is reached over ssh (its GPUs are read there).
    fn ssh_host(&self, seat: &Seat) -> Option<&Host> {
        self.fleet
            .host_of(seat)
            .filter(|h| h.docker.as_deref().is_some_and(|a| a.starts_with("ssh://")))
    }
}

/// This tick's GPU readings: `""` for this machine, else by ssh host name. A source that
/// did not answer once is not asked again.
async fn read_gpus(
    gpus: &mut GpuSources,
    fleet: &Fleet,
    local: bool,
    ssh: &BTreeSet<String>,
) -> BTreeMap<String, GpuView> {
    let mut out = BTreeMap::new();
    let here = async {
        if !local || matches!(gpus.here, GpuState::Unavailable(_)) {
            return None;
        }
        Some(
            match tokio::time::timeout(GPU_READ_TIMEOUT, bakeoff_seats::release::gpu_readings())
                .await
            {
                Ok(r) => r.map_err(|e| e.to_string()),
                Err(_) => Err(format!("no answer within {} s", GPU_READ_TIMEOUT.as_secs())),
            },
        )
    };
    let remote = join_all(
        ssh.iter()
            .filter(|h| !matches!(gpus.ssh.get(*h), Some(GpuState::Unavailable(_))))
            .filter_map(|h| fleet.hosts.get(h).cloned())
            .map(read_ssh_gpus),
    );
    let (here, remote) = tokio::join!(here, remote);
    match here {
        Some(Ok(r)) => {
            gpus.here = GpuState::Answers;
            let label = match r.source {
                bakeoff_host::ReadingSource::Nvml => "NVML",
                bakeoff_host::ReadingSource::NvidiaSmi => "nvidia-smi",
            };
            out.insert(
                String::new(),
                GpuView {
                    readings: r,
                    label: label.into(),
                },
            );
        }
        // Answered before: a passing failure, tried again next tick.
        Some(Err(why)) if matches!(gpus.here, GpuState::Untried) => {
            gpus.here = GpuState::Unavailable(why);
        }
        _ => {}
    }
    for (host, r) in remote {
        match r {
            Ok(v) => {
                gpus.ssh.insert(host.clone(), GpuState::Answers);
                out.insert(host, v);
            }
            Err(why) => {
                if !matches!(gpus.ssh.get(&host), Some(GpuState::Answers)) {
                    gpus.ssh
                        .insert(host, GpuState::Unavailable(why.to_string()));
                }
            }
        }
    }
    out
}

/// A host's Docker seats: one connection, every status within the host's timeout.
async fn docker_host_states(
    fleet: &Fleet,
    host: String,
    seats: Vec<Seat>,
    limit: Duration,
) -> Vec<(String, StateRead)> {
    let unknown = |reason: &str| {
        seats
            .iter()
            .map(|s| {
                (
                    s.name.clone(),
                    StateRead {
                        status: Status::unknown(reason),
                        started_at: None,
                        docker: None,
                    },
                )
            })
            .collect::<Vec<_>>()
    };
    let work = async {
        let docker = match bakeoff_seats::docker::connect(fleet.hosts.get(&host)).await {
            Ok(d) => d,
            Err(e) => return unknown(&format!("host unreachable: {e}")),
        };
        let mut out = Vec::new();
        for s in &seats {
            let (status, started_at) = match DockerBackend::on(docker.clone(), fleet, s) {
                Ok(b) => {
                    let mut b = Backend::Docker(b);
                    let status = b.status().await;
                    let started = if status.observed.is_up() {
                        b.started_at().await
                    } else {
                        None
                    };
                    (status, started)
                }
                Err(e) => (Status::unknown(e.to_string()), None),
            };
            out.push((
                s.name.clone(),
                StateRead {
                    status,
                    started_at,
                    docker: Some(docker.clone()),
                },
            ));
        }
        out
    };
    match tokio::time::timeout(limit, work).await {
        Ok(v) => v,
        Err(_) => unknown(&format!(
            "host unreachable: host {host:?} ({}) did not answer within {} s",
            bakeoff_seats::docker::transport::label(fleet.hosts.get(&host)),
            limit.as_secs_f64()
        )),
    }
}

/// The queue (scraped first, so the probe is not counted in it), then the probe — for a seat
/// that runs, or whose state could not be read (its engine may well serve: the probe says).
async fn probe_seat(
    w: &Watched,
    client: &Result<Client, crate::probe::ProbeClientError>,
    observed: Option<&Observed>,
    opts: ProbeOptions,
) -> (
    Option<ProbeSample>,
    Option<Result<bakeoff_artifact::monitor::QueueSample, crate::queue::QueueError>>,
) {
    let send = matches!(
        observed,
        Some(Observed::Running | Observed::Restarting | Observed::Unknown { .. }) | None
    );
    if !send {
        return (None, None);
    }
    let client = match client {
        Ok(c) => c,
        Err(e) => {
            return (
                Some(ProbeSample {
                    model: w.model.clone(),
                    ok: false,
                    latency_ms: 0.0,
                    ttft_ms: None,
                    content_chars: 0,
                    reasoning_chars: 0,
                    reasoning_only: false,
                    error: Some(e.to_string()),
                }),
                None,
            );
        }
    };
    let queue = crate::queue::read(client).await;
    let probe = crate::probe::probe(client, &w.model, opts.max_tokens).await;
    (Some(probe), Some(queue))
}

/// The footprint of a running seat, or why there is none.
async fn footprint_of(
    w: &Watched,
    st: Option<&StateRead>,
    gpu: Option<&GpuView>,
    proc: &ProcRoot,
) -> Option<Result<FootprintSample, FootprintError>> {
    let st = st?;
    if st.status.observed != Observed::Running {
        return None;
    }
    Some(match &w.seat.launch {
        Launch::Process(_) => {
            let pid = st.status.id.as_deref().and_then(|p| p.parse::<u32>().ok());
            match pid {
                Some(pid) => footprint::of_process(pid, proc, gpu),
                None => Err(FootprintError::NoPid),
            }
        }
        Launch::Docker(_) => {
            let Some(docker) = &st.docker else {
                return Some(Err(FootprintError::NoDocker));
            };
            let name = w.seat.container_name().unwrap_or_default();
            container_footprint(docker, &name, gpu).await
        }
    })
}

/// A container's GPU memory (its host PIDs from `docker top`, found in the host's readings),
/// else its `docker stats` memory.
async fn container_footprint(
    docker: &Docker,
    name: &str,
    gpu: Option<&GpuView>,
) -> Result<FootprintSample, FootprintError> {
    if let Some(view) = gpu {
        let pids = tokio::time::timeout(
            DOCKER_READ_TIMEOUT,
            bakeoff_seats::docker::top::host_pids(docker, name),
        )
        .await;
        if let Ok(Ok(pids)) = pids
            && let Some(s) = footprint::gpu_bytes(view, &pids)
        {
            return Ok(s);
        }
    }
    match tokio::time::timeout(
        DOCKER_READ_TIMEOUT,
        bakeoff_seats::docker::stats::memory_bytes(docker, name),
    )
    .await
    {
        Ok(Ok(b)) => Ok(footprint::of_docker_stats(name, b)),
        Ok(Err(e)) => Err(FootprintError::DockerStats(e.to_string())),
        Err(_) => Err(FootprintError::DockerTimeout {
            container: name.to_owned(),
            limit_s: DOCKER_READ_TIMEOUT.as_secs(),
        }),
    }
}

/// Why an `ssh://` host's GPUs were not read (kept as text for the summary).
#[derive(Debug, thiserror::Error)]
enum SshGpuError {
    /// The host is not reached over ssh; the seats crate's message.
    #[error("{0}")]
    Ssh(String),
    /// nvidia-smi answered without GPUs; its reason when it gave one.
    #[error("{0}")]
    Unavailable(String),
    #[error("no GPU listed")]
    NoGpu,
    #[error("the reader stopped: {0}")]
    Stopped(#[source] tokio::task::JoinError),
    #[error("no answer within {limit_s} s")]
    Timeout { limit_s: u64 },
}

/// nvidia-smi over an `ssh://` host's channel (as `bakeoff plan` reads it), bounded.
async fn read_ssh_gpus(h: Host) -> (String, Result<GpuView, SshGpuError>) {
    let dest = h
        .docker
        .as_deref()
        .and_then(|a| bakeoff_seats::fleet::SshAddress::parse(a).ok())
        .map(|a| a.destination)
        .unwrap_or_else(|| h.name.clone());
    let label = format!("nvidia-smi over ssh {dest}");
    let bin = h.nvidia_smi.clone().unwrap_or_else(|| "nvidia-smi".into());
    let cmd = bakeoff_seats::docker::transport::ssh_command(
        &h,
        &[&bakeoff_host::over_ssh::remote_command(&bin)],
    );
    let l = label.clone();
    let read =
        tokio::task::spawn_blocking(move || cmd.map(|c| bakeoff_host::over_ssh::read_over(c, &l)));
    let limit = bakeoff_host::over_ssh::SSH_READ_TIMEOUT + Duration::from_secs(5);
    let r = match tokio::time::timeout(limit, read).await {
        Ok(Ok(Ok(r))) if !r.gpus.is_empty() => Ok(GpuView { readings: r, label }),
        Ok(Ok(Ok(r))) => Err(r
            .unavailable
            .map_or(SshGpuError::NoGpu, SshGpuError::Unavailable)),
        Ok(Ok(Err(e))) => Err(SshGpuError::Ssh(e.to_string())),
        Ok(Err(e)) => Err(SshGpuError::Stopped(e)),
        Err(_) => Err(SshGpuError::Timeout {
            limit_s: limit.as_secs(),
        }),
    };
    (h.name.clone(), r)
}

/// A reading, or why there is none as the sample records it (text).
fn split<T, E: std::fmt::Display>(r: Option<Result<T, E>>) -> (Option<T>, Option<String>) {
    match r {
        Some(Ok(v)) => (Some(v), None),
        Some(Err(e)) => (None, Some(e.to_string())),
        None => (None, None),
    }
}
