//! What a stop really freed. A polite stop (SIGTERM, `docker stop`) is not proof that a seat is
//! gone: a loader deep in a huge mmap'd read can sit in uninterruptible sleep (`D`) through
//! SIGKILL and keep its port, its RAM and its GPU memory (docs/field-cases.md B5: a container that refused
//! a normal stop and needed `docker rm -f`). So after the backend's stop — escalated to SIGKILL
//! when the grace ran out — this module checks, on a local host, that nothing listens on the
//! seat's port any more (naming the holder when something does), that none of the seat's
//! processes still holds GPU memory (NVML, else nvidia-smi; not checked without either), and
//! reports every process that outlived SIGKILL as a `zombie-loader`. Such a process is
//! recorded in `<state_dir>/<seat>.zombie.json`, and `seat up` refuses to start a seat on the
//! same port or GPUs while it is alive ([`live_zombie`]).
//!
//! It never signals anything: the backends do, and only what they recorded.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bakeoff_artifact::{FindingSeverity, SeatFinding};
use serde::{Deserialize, Serialize};

pub mod container;

// The processes a stop checks are read by bakeoff-host; named here too, beside the stop's types.
pub use bakeoff_host::proc::{ProcRoot, ProcStat, state_words};
pub use container::{ContainerSeen, STOP_VERIFY_WAIT, container_procs, wait_procs_gone};

/// How long a released port or GPU may take to show as released (the kernel closes the
/// sockets and the driver frees the memory as the process is torn down, not at once).
const RELEASE_WAIT: Duration = Duration::from_secs(5);
const POLL: Duration = Duration::from_millis(100);
/// A GPU reading that does not come back in this time is "not checked", never a hang.
const GPU_READ_TIMEOUT: Duration = Duration::from_secs(20);

/// What a backend's stop did, before the checks.
#[derive(Debug, Clone)]
pub struct Stopped {
    pub seat: String,
    pub port: u16,
    /// The seat runs on this machine: its port, `/proc` and GPUs can be checked here.
    pub local: bool,
    /// Something of the seat was running (or existed) when the stop began.
    pub was_running: bool,
    /// Steps beyond the polite stop, in words.
    pub escalated: Vec<String>,
    /// The seat's processes (pid and start time) as they were when the stop began.
    pub procs: Vec<ProcStat>,
    /// Those of them still alive after the last step and its bounded wait.
    pub survivors: Vec<ProcStat>,
    /// A container the engine could not stop or remove: what was seen of it.
    pub container_left: Option<String>,
}

impl Stopped {
    pub fn new(seat: &crate::fleet::types::Seat, local: bool) -> Self {
        Self {
            seat: seat.name.clone(),
            port: seat.port,
            local,
            was_running: false,
            escalated: Vec::new(),
            procs: Vec::new(),
            survivors: Vec::new(),
            container_left: None,
        }
    }
}

/// Whether the seat's processes still hold GPU memory after the stop.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum GpuRelease {
    /// The driver lists none of the seat's processes.
    Released { source: String },
    /// These of the seat's processes still hold GPU memory.
    Held { processes: Vec<GpuHolder> },
    /// Not checked, and why (no NVML or nvidia-smi, a remote host, nothing was running).
    NotChecked { why: String },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuHolder {
    pub pid: u32,
    pub gpu: u32,
    pub used_bytes: Option<u64>,
}

/// What `seat down` (and every other stop) did and verified.
#[derive(Debug, Clone, Serialize)]
pub struct StopReport {
    pub seat: String,
    pub was_running: bool,
    /// Steps taken beyond the polite stop, in words (empty: the polite stop sufficed).
    pub escalated: Vec<String>,
    pub port: u16,
    /// `Some(true)`: nothing listens on the port; `Some(false)`: something still does;
    /// `None`: not verified (a remote host, or nothing was running).
    pub port_released: Option<bool>,
    pub gpu: GpuRelease,
    pub findings: Vec<SeatFinding>,
    /// Processes that outlived the stop (recorded in `<seat>.zombie.json`).
    pub zombies: Vec<ZombieProcess>,
}

impl StopReport {
    /// The seat is free: no error finding (a zombie, a held port or GPU).
    pub fn ok(&self) -> bool {
        self.port_released != Some(false)
            && !self
                .findings
                .iter()
                .any(|f| f.severity == FindingSeverity::Error)
    }

    /// One line: how it stopped, the port, the GPU memory.
    pub fn summary(&self) -> String {
        if !self.was_running {
            return "nothing was running".to_string();
        }
        let how = if self.escalated.is_empty() {
            "stopped (the polite stop sufficed)".to_string()
        } else {
            format!("stopped (escalated: {})", self.escalated.join("; then "))
        };
        let port = match self.port_released {
            Some(true) => format!("port {} released", self.port),
            Some(false) => format!("port {} STILL HELD", self.port),
            None => format!("port {} not verified (remote host)", self.port),
        };
        let gpu = match &self.gpu {
            GpuRelease::Released { .. } => "GPU memory released".to_string(),
            GpuRelease::Held { processes } => format!(
                "GPU memory STILL HELD by pid {}",
                processes
                    .iter()
                    .map(|p| p.pid.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            GpuRelease::NotChecked { why } => format!("GPU memory not checked ({why})"),
        };
        format!("{how}; {port}; {gpu}")
    }

    /// The summary, then each finding with its evidence and fix, indented.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![self.summary()];
        for f in &self.findings {
            let sev = match f.severity {
                FindingSeverity::Error => "error",
                FindingSeverity::Warning => "warning",
                FindingSeverity::Note => "note",
            };
            out.push(format!("  {sev} {}: {}", f.code, f.message));
            out.extend(f.evidence.iter().map(|e| format!("    {e}")));
            out.extend(f.fix.iter().map(|x| format!("    fix: {x}")));
        }
        out
    }
}

/// A process that outlived a stop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ZombieProcess {
    pub pid: u32,
    pub start_ticks: u64,
    /// The state letter as read (`D`: uninterruptible sleep).
    pub state: char,
    pub cmdline: Option<String>,
    pub rss_bytes: Option<u64>,
    pub gpu_bytes: Option<u64>,
}

impl ZombieProcess {
    /// What it holds, in words: `12.3 GiB RSS, 40.0 GiB GPU memory`.
    pub fn held(&self) -> String {
        let mut parts = Vec::new();
        if let Some(b) = self.rss_bytes {
            parts.push(format!("{} RSS", gib(b)));
        }
        if let Some(b) = self.gpu_bytes {
            parts.push(format!("{} GPU memory", gib(b)));
        }
        if parts.is_empty() {
            "memory not readable".into()
        } else {
            parts.join(", ")
        }
    }

    /// What the operator can do, ending with what bakeoff will do meanwhile.
    pub fn fix(&self) -> String {
        let what = if self.state == 'D' {
            "the process is in uninterruptible sleep (D): wait for its I/O to finish or reboot"
                .to_string()
        } else {
            format!(
                "it survived SIGKILL in state {}: wait for it to exit or reboot",
                self.state
            )
        };
        format!(
            "{what}; bakeoff seat up refuses until pid {} is gone",
            self.pid
        )
    }
}

fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

/// `<state_dir>/<seat>.zombie.json`: what a stop left behind, for the next command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ZombieRecord {
    pub seat: String,
    pub port: u16,
    pub processes: Vec<ZombieProcess>,
    pub recorded_at: chrono::DateTime<chrono::Utc>,
}

pub fn zombie_path(state_dir: &Path, seat: &str) -> PathBuf {
    state_dir.join(format!("{seat}.zombie.json"))
}

/// Check what the stop left: the port, the GPU memory, the processes that outlived it.
pub async fn verify(stopped: Stopped, proc: &ProcRoot) -> StopReport {
    let mut findings = Vec::new();
    // Only a stop that stopped something checks: a seat that was not running does not own
    // the port (a sibling on the same port may rightly hold it).
    let port_released = if stopped.local && stopped.was_running {
        let free = wait_port_free(stopped.port).await;
        if !free {
            findings.push(port_finding(&stopped, proc));
        }
        Some(free)
    } else {
        None
    };
    let gpu = if !stopped.was_running {
        GpuRelease::NotChecked {
            why: "nothing was running".into(),
        }
    } else if !stopped.local {
        GpuRelease::NotChecked {
            why: "remote host".into(),
        }
    } else if stopped.procs.is_empty() {
        GpuRelease::NotChecked {
            why: "no process of the seat was seen on this host".into(),
        }
    } else {
        gpu_release(&stopped.procs, proc).await
    };
    let gpu_of = |pid: u32| match &gpu {
        GpuRelease::Held { processes } => {
            let b: Vec<u64> = processes
                .iter()
                .filter(|h| h.pid == pid)
                .filter_map(|h| h.used_bytes)
                .collect();
            (!b.is_empty()).then(|| b.into_iter().fold(0u64, u64::saturating_add))
        }
        _ => None,
    };
    let zombies = zombies(&stopped.survivors, proc, gpu_of);
    findings.extend(zombies.iter().map(|z| zombie_finding(&stopped.seat, z)));
    if let Some(c) = &stopped.container_left
        && zombies.is_empty()
    {
        findings.push(
            SeatFinding::new(
                "zombie-loader",
                FindingSeverity::Error,
                format!("the container of {} outlived docker kill and docker rm -f", stopped.seat),
            )
            .with_evidence(c.clone())
            .with_fix("its processes do not die (often a loader in uninterruptible sleep under a huge mmap): wait for its I/O to finish, then `docker rm -f` it, or restart the Docker engine or reboot"),
        );
    }
    if let GpuRelease::Held { processes } = &gpu {
        let held: Vec<&GpuHolder> = processes
            .iter()
            .filter(|h| !zombies.iter().any(|z| z.pid == h.pid))
            .collect();
        if !held.is_empty() {
            let mut f = SeatFinding::new(
                "gpu-memory-held",
                FindingSeverity::Error,
                format!("processes of {} still hold GPU memory after the stop", stopped.seat),
            )
            .with_fix("a seat started on that GPU now would find less memory than planned: wait for them to exit (nvidia-smi lists them), then start");
            for h in held {
                f = f.with_evidence(format!(
                    "pid {} on GPU {}: {}",
                    h.pid,
                    h.gpu,
                    h.used_bytes
                        .map(gib)
                        .unwrap_or_else(|| "amount not reported".into())
                ));
            }
            findings.push(f);
        }
    }
    // The container's processes were found: the container's state goes with the first.
    if let Some(c) = &stopped.container_left
        && !zombies.is_empty()
        && let Some(f) = findings.iter_mut().find(|f| f.code == "zombie-loader")
    {
        f.evidence.push(c.clone());
    }
    StopReport {
        seat: stopped.seat,
        was_running: stopped.was_running,
        escalated: stopped.escalated,
        port: stopped.port,
        port_released,
        gpu,
        findings,
        zombies,
    }
}

/// The survivors still alive (same pid and start time), with what they hold.
fn zombies(
    survivors: &[ProcStat],
    proc: &ProcRoot,
    gpu_of: impl Fn(u32) -> Option<u64>,
) -> Vec<ZombieProcess> {
    survivors
        .iter()
        .filter_map(|s| proc.alive(s.pid, s.start_ticks))
        .map(|e| ZombieProcess {
            pid: e.pid,
            start_ticks: e.start_ticks,
            state: e.state,
            cmdline: proc.cmdline(e.pid),
            rss_bytes: proc.rss_bytes(e.pid),
            gpu_bytes: gpu_of(e.pid),
        })
        .collect()
}

pub fn zombie_finding(seat: &str, z: &ZombieProcess) -> SeatFinding {
    SeatFinding::new(
        "zombie-loader",
        FindingSeverity::Error,
        format!(
            "pid {} of {seat} outlived SIGKILL: {}, holding {}",
            z.pid,
            state_words(z.state),
            z.held()
        ),
    )
    .with_evidence(format!(
        "pid {} state {}: {}",
        z.pid,
        z.state,
        z.cmdline
            .as_deref()
            .unwrap_or("(command line not readable)")
    ))
    .with_fix(z.fix())
}

fn port_finding(stopped: &Stopped, proc: &ProcRoot) -> SeatFinding {
    let holders = proc.socket_holders(&proc.listening_inodes(stopped.port));
    let mut f = SeatFinding::new(
        "port-still-held",
        FindingSeverity::Error,
        format!(
            "port {} is still held after the stop of {}",
            stopped.port, stopped.seat
        ),
    )
    .with_fix(format!(
        "stop what holds it (`ss -ltnp 'sport = :{}'` names it); a start on that port fails as port-in-use until then",
        stopped.port
    ));
    if holders.is_empty() {
        f = f.with_evidence("the holder is not readable here (another user's process, or another network namespace)");
    }
    for pid in holders {
        f = f.with_evidence(format!(
            "pid {pid}: {}",
            proc.cmdline(pid)
                .unwrap_or_else(|| "(command line not readable)".into())
        ));
    }
    f
}

/// Whether nothing listens on `port` on this machine: a listening bind on loopback and on
/// every address both succeed. std sets SO_REUSEADDR on Linux, so connections of the stopped
/// seat lingering in TIME_WAIT do not count as held.
pub fn port_free(port: u16) -> bool {
    ["127.0.0.1", "0.0.0.0"].iter().all(|a| {
        !matches!(
            std::net::TcpListener::bind((*a, port)),
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse
        )
    })
}

async fn wait_port_free(port: u16) -> bool {
    let deadline = Instant::now() + RELEASE_WAIT;
    loop {
        if port_free(port) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Why the GPU readings could not say which processes hold memory.
#[derive(Debug, thiserror::Error)]
pub enum GpuUnread {
    /// The GPUs were read but not their processes; the reading's own reason (recorded as it
    /// was given, in the artifact's `gpu_release.why`).
    #[error("{0}")]
    Processes(String),
    #[error("unavailable (no NVML or nvidia-smi)")]
    Neither,
}

/// The GPU readings: NVML, else nvidia-smi; `Err(why)` when neither answers. Also the seat
/// monitor's per-process GPU reading (bakeoff-monitor).
pub async fn gpu_readings() -> Result<bakeoff_host::Readings, GpuUnread> {
    let usable = |r: &bakeoff_host::Readings| !r.gpus.is_empty() && r.unavailable.is_none();
    if let Ok(Ok(r)) = tokio::time::timeout(
        GPU_READ_TIMEOUT,
        tokio::task::spawn_blocking(bakeoff_host::nvml::read),
    )
    .await
        && usable(&r)
    {
        return Ok(r);
    }
    match tokio::time::timeout(
        GPU_READ_TIMEOUT,
        tokio::task::spawn_blocking(|| bakeoff_host::nvidia_smi::read("nvidia-smi")),
    )
    .await
    {
        Ok(Ok(r)) if usable(&r) => Ok(r),
        Ok(Ok(r)) if !r.gpus.is_empty() => Err(GpuUnread::Processes(
            r.unavailable
                .unwrap_or_else(|| "GPU processes not readable".into()),
        )),
        _ => Err(GpuUnread::Neither),
    }
}

/// Which of the seat's processes (still the same processes) the driver lists as holding
/// memory, after up to [`RELEASE_WAIT`] for the driver to free it.
async fn gpu_release(procs: &[ProcStat], proc: &ProcRoot) -> GpuRelease {
    let deadline = Instant::now() + RELEASE_WAIT;
    loop {
        let readings = match gpu_readings().await {
            Ok(r) => r,
            Err(why) => {
                return GpuRelease::NotChecked {
                    why: why.to_string(),
                };
            }
        };
        let held = gpu_holders(&readings, procs, proc);
        if held.is_empty() {
            return GpuRelease::Released {
                source: format!("{:?}", readings.source),
            };
        }
        if Instant::now() >= deadline {
            return GpuRelease::Held { processes: held };
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// The GPU processes of `readings` that are the seat's: one of `procs`, still the same process
/// (pid and start time; the driver's list may lag behind a pid already reused).
pub fn gpu_holders(
    readings: &bakeoff_host::Readings,
    procs: &[ProcStat],
    proc: &ProcRoot,
) -> Vec<GpuHolder> {
    readings
        .gpus
        .iter()
        .flat_map(|g| {
            g.processes.iter().filter_map(move |p| {
                let ours = procs
                    .iter()
                    .find(|s| s.pid == p.pid)
                    .and_then(|s| proc.alive(s.pid, s.start_ticks))
                    .is_some();
                ours.then_some(GpuHolder {
                    pid: p.pid,
                    gpu: g.index,
                    used_bytes: p.used_bytes,
                })
            })
        })
        .collect()
}

/// Record the report's zombies in `<state_dir>/<seat>.zombie.json` (nothing when it has none:
/// an older record stays until [`live_zombie`] finds its processes gone). A record that
/// cannot be written becomes a warning: the stop itself happened.
pub fn persist(state_dir: &Path, report: &mut StopReport) {
    if report.zombies.is_empty() {
        return;
    }
    let path = zombie_path(state_dir, &report.seat);
    let rec = ZombieRecord {
        seat: report.seat.clone(),
        port: report.port,
        processes: report.zombies.clone(),
        recorded_at: chrono::Utc::now(),
    };
    let written = std::fs::create_dir_all(state_dir)
        .map_err(|e| e.to_string())
        .and_then(|()| serde_json::to_vec_pretty(&rec).map_err(|e| e.to_string()))
        .and_then(|json| std::fs::write(&path, json).map_err(|e| e.to_string()));
    if let Err(e) = written {
        report.findings.push(
            SeatFinding::new(
                "zombie-loader",
                FindingSeverity::Warning,
                format!("cannot record the zombie loader in {}: {e}", path.display()),
            )
            .with_fix("check the fleet's state_dir is writable; until then `seat up` cannot know about it"),
        );
    }
}

/// A zombie that still holds what `seat`'s record says: the first recorded process still alive
/// (same pid and start time), with its state as read now. A record whose processes are all
/// gone is stale and removed; one that does not parse is left alone (and ignored).
pub fn live_zombie(state_dir: &Path, seat: &str, proc: &ProcRoot) -> Option<ZombieProcess> {
    let path = zombie_path(state_dir, seat);
    let text = std::fs::read_to_string(&path).ok()?;
    let rec: ZombieRecord = serde_json::from_str(&text).ok()?;
    let alive = rec.processes.iter().find_map(|z| {
        proc.alive(z.pid, z.start_ticks).map(|e| ZombieProcess {
            state: e.state,
            rss_bytes: proc.rss_bytes(z.pid).or(z.rss_bytes),
            ..z.clone()
        })
    });
    if alive.is_none() {
        let _ = std::fs::remove_file(&path);
    }
    alive
}
