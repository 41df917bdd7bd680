//! Process seats: an engine started through the OS, in its own process group so that it
//! outlives the `bakeoff seat up` that started it (and an operator's Ctrl-C in that terminal).
//! Its stdout and stderr go to `<state_dir>/<seat>.log`, which the watchdog follows; a pipe
//! would die with the command, taking the engine with it (SIGPIPE).
//!
//! `<state_dir>/<seat>.process.json` records the pid and the kernel's start time of that pid:
//! bakeoff only ever signals a process whose pid *and* start time match what it recorded, so
//! a recycled pid is never killed.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use crate::fleet::launch::{Launch, ProcessLaunch};
pub use crate::fleet::types::substitute;
use crate::fleet::types::{Fleet, Seat};
use crate::observed::{BackendError, FOLLOW_POLL, LineSplitter, Observed, Status};
use crate::redact::Redactor;
use crate::release::{ProcRoot, ProcStat, Stopped};

/// How long processes may take to disappear after SIGKILL before they count as survivors: the
/// kernel tears a big address space down in well under this, unless the process is stuck in
/// uninterruptible sleep.
const KILL_WAIT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, Serialize, Deserialize)]
struct StateFile {
    pid: u32,
    /// Field 22 of /proc/PID/stat (clock ticks since boot).
    start_ticks: u64,
    command: String,
    log: PathBuf,
    started_at: chrono::DateTime<chrono::Utc>,
}

pub struct ProcessBackend {
    seat: Seat,
    launch: ProcessLaunch,
    state_path: PathBuf,
    log_path: PathBuf,
    /// Held when this bakeoff started it: gives the exit code and reaps the zombie.
    child: Option<tokio::process::Child>,
    exited: Option<Option<i64>>,
    /// Every line read back from the log goes through it: an engine that echoes its
    /// arguments does not put its key into the evidence.
    redactor: Redactor,
}

impl ProcessBackend {
    pub fn new(fleet: &Fleet, seat: &Seat) -> Self {
        let launch = match &seat.launch {
            Launch::Process(p) => p.clone(),
            Launch::Docker(_) => ProcessLaunch {
                command: String::new(),
                args: vec![],
                env: Default::default(),
            },
        };
        Self {
            seat: seat.clone(),
            launch,
            state_path: fleet.state_dir.join(format!("{}.process.json", seat.name)),
            log_path: fleet.state_dir.join(format!("{}.log", seat.name)),
            child: None,
            exited: None,
            redactor: Redactor::for_seat(seat),
        }
    }

    fn err(&self, message: impl Into<String>) -> BackendError {
        BackendError::Process {
            seat: self.seat.name.clone(),
            message: message.into(),
        }
    }

    pub fn log_path(&self) -> &PathBuf {
        &self.log_path
    }

    fn read_state(&self) -> Option<StateFile> {
        let text = std::fs::read_to_string(&self.state_path).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// The recorded process, if it is still the same process (pid and start time match).
    fn live(&self) -> Option<(StateFile, char)> {
        let st = self.read_state()?;
        let e = ProcRoot::system().entry(st.pid)?;
        (e.start_ticks == st.start_ticks).then_some((st, e.state))
    }

    pub fn status(&mut self) -> Status {
        if let Some(child) = &mut self.child
            && let Ok(Some(es)) = child.try_wait()
        {
            self.exited = Some(es.code().map(i64::from).or_else(|| {
                // Killed by a signal: 128 + n, as a shell reports it.
                std::os::unix::process::ExitStatusExt::signal(&es).map(|s| 128 + i64::from(s))
            }));
            self.child = None;
        }
        if let Some(code) = self.exited {
            return Status {
                observed: Observed::Exited {
                    code,
                    oom_killed: None,
                },
                restart_count: None,
                id: None,
            };
        }
        match self.live() {
            Some((st, 'Z')) | Some((st, 'X')) => Status {
                observed: Observed::Exited {
                    code: None,
                    oom_killed: None,
                },
                restart_count: None,
                id: Some(st.pid.to_string()),
            },
            Some((st, _)) => Status {
                observed: Observed::Running,
                restart_count: None,
                id: Some(st.pid.to_string()),
            },
            None if self.read_state().is_some() => Status {
                observed: Observed::Exited {
                    code: None,
                    oom_killed: None,
                },
                restart_count: None,
                id: None,
            },
            None => Status::missing(),
        }
    }

    /// When the running process started (its recorded start), for `seat status`'s uptime.
    pub fn started_at(&self) -> Option<chrono::DateTime<chrono::Utc>> {
        self.live()
            .filter(|(_, state)| !matches!(state, 'Z' | 'X'))
            .map(|(st, _)| st.started_at)
    }

    pub async fn start(&mut self) -> Result<(), BackendError> {
        if let Some((st, s)) = self.live()
            && s != 'Z'
        {
            return Err(self.err(format!(
                "already running as pid {} (bakeoff seat down {} first)",
                st.pid, self.seat.name
            )));
        }
        if let Some(dir) = self.log_path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| self.err(format!("cannot create {}: {e}", dir.display())))?;
        }
        let log = std::fs::File::create(&self.log_path)
            .map_err(|e| self.err(format!("cannot open {}: {e}", self.log_path.display())))?;
        let log_err = log
            .try_clone()
            .map_err(|e| self.err(format!("cannot open {}: {e}", self.log_path.display())))?;
        let mut cmd = tokio::process::Command::new(substitute(&self.launch.command, &self.seat));
        cmd.args(self.launch.args.iter().map(|a| substitute(a, &self.seat)))
            .envs(
                self.launch
                    .env
                    .iter()
                    .map(|(k, v)| (k.clone(), substitute(v, &self.seat))),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::from(log))
            .stderr(Stdio::from(log_err))
            // Its own process group: Ctrl-C in the operator's terminal does not reach it,
            // and a stop signals the whole group (engines fork workers).
            .process_group(0)
            .kill_on_drop(false);
        let child = cmd.spawn().map_err(|e| {
            self.err(format!(
                "cannot start {:?}: {e} (check process.command)",
                self.launch.command
            ))
        })?;
        let pid = child
            .id()
            .ok_or_else(|| self.err("the process exited before its pid was read"))?;
        let start_ticks = ProcRoot::system().entry(pid).map_or(0, |e| e.start_ticks);
        let st = StateFile {
            pid,
            start_ticks,
            command: self.launch.command.clone(),
            log: self.log_path.clone(),
            started_at: chrono::Utc::now(),
        };
        let json = serde_json::to_vec_pretty(&st).map_err(|e| self.err(e.to_string()))?;
        std::fs::write(&self.state_path, json)
            .map_err(|e| self.err(format!("cannot write {}: {e}", self.state_path.display())))?;
        self.child = Some(child);
        self.exited = None;
        Ok(())
    }

    /// Where this seat's state files live (`<seat>.process.json`, `<seat>.zombie.json`).
    pub fn state_dir(&self) -> Option<&std::path::Path> {
        self.state_path.parent()
    }

    /// SIGTERM to the process group, the seat's stop grace, SIGKILL to the group, then a
    /// bounded wait for the processes to be gone. Only the recorded process (pid and start
    /// time) and the members of the group it leads are ever signalled; a process still alive
    /// after SIGKILL and [`KILL_WAIT`] is returned as a survivor (a zombie loader).
    pub async fn stop(&mut self) -> Result<Stopped, BackendError> {
        let proc = ProcRoot::system();
        let mut stopped = Stopped::new(&self.seat, true);
        let Some(st) = self.read_state() else {
            self.forget().await;
            return Ok(stopped);
        };
        let leader = self.live().filter(|(_, s)| !matches!(*s, 'Z' | 'X'));
        // The group is ours when the recorded process leads it (started with
        // `process_group(0)`), or — once the leader has exited — when its members started no
        // earlier than the leader did: a pid is not reused while it names a living group.
        let leads_group = match &leader {
            Some(_) => proc.entry(st.pid).is_some_and(|e| e.pgrp == st.pid),
            None => true,
        };
        let members = |proc: &ProcRoot| -> Vec<ProcStat> {
            if leads_group {
                proc.group_members(st.pid)
                    .into_iter()
                    .filter(|e| e.start_ticks >= st.start_ticks)
                    .collect()
            } else {
                proc.alive(st.pid, st.start_ticks).into_iter().collect()
            }
        };
        let mut procs = members(&proc);
        // Children that left the group (setsid) are never signalled, but they are the seat's
        // too: the GPU check looks for them.
        if leader.is_some() {
            for d in proc.with_descendants(st.pid) {
                if !procs.iter().any(|p| p.pid == d.pid) {
                    procs.push(d);
                }
            }
        }
        if procs.is_empty() {
            self.forget().await;
            return Ok(stopped);
        }
        stopped.was_running = true;
        stopped.procs = procs.clone();
        let pid = rustix::process::Pid::from_raw(st.pid as i32)
            .ok_or_else(|| self.err(format!("bad pid {}", st.pid)))?;
        let signal = |sig: rustix::process::Signal| {
            let _ = if leads_group {
                rustix::process::kill_process_group(pid, sig)
            } else {
                rustix::process::kill_process(pid, sig)
            };
        };
        let target = if leads_group {
            format!("process group {}", st.pid)
        } else {
            format!("pid {}", st.pid)
        };
        signal(rustix::process::Signal::TERM);
        let grace = self.seat.stop_grace();
        let left = |proc: &ProcRoot| -> Vec<ProcStat> {
            let mut left: Vec<ProcStat> = procs
                .iter()
                .filter(|p| p.pgrp == st.pid || p.pid == st.pid)
                .filter_map(|p| proc.alive(p.pid, p.start_ticks))
                .collect();
            for m in members(proc) {
                if !left.iter().any(|l| l.pid == m.pid) {
                    left.push(m);
                }
            }
            left
        };
        if !self
            .wait_gone(&proc, &left, Duration::from_secs(grace))
            .await
        {
            signal(rustix::process::Signal::KILL);
            stopped
                .escalated
                .push(format!("SIGKILL to {target} after the {grace} s grace"));
            if !self.wait_gone(&proc, &left, KILL_WAIT).await {
                stopped.survivors = left(&proc);
            }
        }
        self.forget().await;
        Ok(stopped)
    }

    /// Poll until `left` finds nothing (reaping our own child on the way), at most `within`.
    async fn wait_gone(
        &mut self,
        proc: &ProcRoot,
        left: &impl Fn(&ProcRoot) -> Vec<ProcStat>,
        within: Duration,
    ) -> bool {
        let deadline = Instant::now() + within;
        loop {
            if let Some(c) = &mut self.child {
                let _ = c.try_wait();
            }
            if left(proc).is_empty() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Reap our child (bounded) and drop the state file: nothing of ours is to be signalled
    /// again. A survivor is remembered in `<seat>.zombie.json` instead.
    async fn forget(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = tokio::time::timeout(Duration::from_secs(5), c.wait()).await;
        }
        let _ = std::fs::remove_file(&self.state_path);
    }

    pub fn follow(&self, tx: mpsc::Sender<String>) -> tokio::task::JoinHandle<()> {
        let path = self.log_path.clone();
        let redactor = self.redactor.clone();
        tokio::spawn(async move {
            use tokio::io::AsyncReadExt;
            let mut split = LineSplitter::default();
            let mut buf = vec![0u8; 16 * 1024];
            let mut file = loop {
                match tokio::fs::File::open(&path).await {
                    Ok(f) => break f,
                    Err(_) => tokio::time::sleep(FOLLOW_POLL).await,
                }
            };
            loop {
                match file.read(&mut buf).await {
                    Ok(0) => {
                        if tx.is_closed() {
                            return;
                        }
                        tokio::time::sleep(FOLLOW_POLL).await;
                    }
                    Ok(n) => {
                        let mut lines = Vec::new();
                        split.push(&buf[..n], &mut lines);
                        for l in lines {
                            if tx.send(redactor.text(&l)).await.is_err() {
                                return;
                            }
                        }
                    }
                    Err(_) => return,
                }
            }
        })
    }

    pub fn tail(&self, n: usize) -> Vec<String> {
        let bytes = std::fs::read(&self.log_path).unwrap_or_default();
        let mut lines = Vec::new();
        let mut split = LineSplitter::default();
        split.push(&bytes, &mut lines);
        split.tail(lines, n, &self.redactor)
    }
}
