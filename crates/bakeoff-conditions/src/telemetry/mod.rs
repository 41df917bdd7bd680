//! GPU telemetry per load step (docs/metrics.md, "GPU telemetry and tokens per joule"): a
//! [`TelemetrySampler`] started around the step reads power, the energy counter, utilization
//! and memory on a thread of its own — every 250 ms through NVML (a few microseconds a GPU),
//! every 500 ms through nvidia-smi (a process each time) — and [`TelemetrySampler::finish`]
//! turns the samples into a [`GpuTelemetry`]; [`with_tokens`] adds output tokens per joule once
//! the step's tokens are counted. Without NVML and nvidia-smi the step records why.

pub mod sources;
pub mod summary;

use std::collections::HashSet;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use bakeoff_artifact::GpuTelemetry;

use crate::Exclude;
pub use sources::{GpuSource, NvmlSource, SmiSource, SourceError};
pub use summary::{Sample, with_tokens};

const NVML_INTERVAL: Duration = Duration::from_millis(250);
const SMI_INTERVAL: Duration = Duration::from_millis(500);

/// Who the engine is, to tell its GPUs.
#[derive(Debug, Clone, Default)]
pub struct Engine {
    pub pid: Option<u32>,
    /// How it was looked for, in words (from [`Exclude::engine`]).
    pub how: String,
    /// Where to read its descendants (`/proc`); `None`: only the pid itself.
    pub proc_root: Option<bakeoff_host::ProcRoot>,
}

impl Engine {
    fn tree(&self) -> HashSet<u32> {
        let Some(pid) = self.pid else {
            return HashSet::new();
        };
        match &self.proc_root {
            Some(proc) => bakeoff_host::proc::descendants(&proc.all(), &[pid]),
            None => [pid].into(),
        }
    }
}

/// What the thread collects.
struct Collected {
    source: Box<dyn GpuSource>,
    started: Instant,
    samples: Vec<Sample>,
    processes: Vec<(String, u32)>,
    problems: Vec<String>,
}

impl Collected {
    fn note(&mut self, problem: String) {
        // The first failure of each kind: a GPU that fails every 250 ms would fill the artifact.
        let kind = problem.split(':').next().unwrap_or_default().to_owned();
        if !self.problems.iter().any(|p| p.starts_with(&kind)) {
            self.problems.push(problem);
        }
    }

    fn sample(&mut self) {
        let t_s = self.started.elapsed().as_secs_f64();
        match self.source.read() {
            Ok(gpus) => self.samples.push(Sample { t_s, gpus }),
            Err(e) => self.note(e.to_string()),
        }
    }

    fn read_processes(&mut self) {
        match self.source.processes() {
            Ok(ps) => {
                for p in ps {
                    if !self.processes.contains(&p) {
                        self.processes.push(p);
                    }
                }
            }
            Err(e) => self.note(format!("compute processes: {e}")),
        }
    }
}

enum State {
    Unavailable(GpuTelemetry),
    Running {
        stop: mpsc::Sender<()>,
        thread: std::thread::JoinHandle<Collected>,
        interval: Duration,
        engine: Engine,
        tree: HashSet<u32>,
    },
}

/// Sampling around one step: [`TelemetrySampler::start`] before it, [`TelemetrySampler::finish`]
/// after.
pub struct TelemetrySampler {
    state: State,
}

impl TelemetrySampler {
    /// NVML if it initializes, else nvidia-smi where `ex` found it on PATH, else unavailable.
    pub fn start(ex: &Exclude) -> Self {
        let engine = Engine {
            pid: ex.engine_pid,
            how: ex.engine.clone(),
            proc_root: Some(ex.proc_root.clone()),
        };
        match NvmlSource::open() {
            Ok(s) => Self::start_with(Box::new(s), NVML_INTERVAL, engine),
            Err(nvml) => match &ex.nvidia_smi {
                Some(bin) => Self::start_with(
                    Box::new(SmiSource { bin: bin.clone() }),
                    SMI_INTERVAL,
                    engine,
                ),
                None => Self {
                    state: State::Unavailable(GpuTelemetry::unavailable(
                        "nvml, nvidia-smi",
                        format!(
                            "unavailable (no NVML): {nvml}, and nvidia-smi is not on PATH: no NVIDIA driver on this host"
                        ),
                    )),
                },
            },
        }
    }

    /// Samples `source` now and then every `interval` on a thread of its own.
    pub fn start_with(source: Box<dyn GpuSource>, interval: Duration, engine: Engine) -> Self {
        let tree = engine.tree();
        let mut c = Collected {
            source,
            started: Instant::now(),
            samples: Vec::new(),
            processes: Vec::new(),
            problems: Vec::new(),
        };
        let name = c.source.name();
        c.read_processes();
        c.sample();
        if c.samples.is_empty() {
            let why = c.problems.join("; ");
            return Self {
                state: State::Unavailable(GpuTelemetry::unavailable(
                    name,
                    format!("unavailable ({name} could not be read): {why}"),
                )),
            };
        }
        let (stop, rx) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("bakeoff-telemetry".into())
            .spawn(move || {
                while let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(interval) {
                    c.sample();
                }
                c
            });
        match thread {
            Ok(thread) => Self {
                state: State::Running {
                    stop,
                    thread,
                    interval,
                    engine,
                    tree,
                },
            },
            Err(e) => Self {
                state: State::Unavailable(GpuTelemetry::unavailable(
                    name,
                    format!("unavailable: the telemetry thread could not start ({e})"),
                )),
            },
        }
    }

    /// [`TelemetrySampler::start`] for async code: NVML's initialisation and the first reading
    /// (nvidia-smi: up to 15 s on a wedged driver) on tokio's blocking pool.
    pub async fn start_off_runtime(ex: &Exclude) -> Self {
        let ex = ex.clone();
        bakeoff_host::blocking::off_runtime(move || Self::start(&ex)).await
    }

    /// [`TelemetrySampler::finish`] for async code, its last reading on tokio's blocking pool.
    pub async fn finish_off_runtime(self) -> GpuTelemetry {
        bakeoff_host::blocking::off_runtime(move || self.finish()).await
    }

    /// Stops the thread (at once), takes the last sample and sums the step up. Output tokens
    /// per joule are left to [`with_tokens`].
    pub fn finish(self) -> GpuTelemetry {
        let (stop, thread, interval, engine, mut tree) = match self.state {
            State::Unavailable(t) => return t,
            State::Running {
                stop,
                thread,
                interval,
                engine,
                tree,
            } => (stop, thread, interval, engine, tree),
        };
        let _ = stop.send(());
        let Ok(mut c) = thread.join() else {
            return GpuTelemetry::unavailable("telemetry", "the telemetry thread panicked");
        };
        c.sample();
        c.read_processes();
        // A multi-process engine (vLLM) may start its GPU workers during the step.
        tree.extend(engine.tree());
        let last = c.samples.last().map(|s| s.gpus.clone()).unwrap_or_default();
        let scope = summary::scope(engine.pid, &tree, &engine.how, &c.processes, &last);
        summary::summarize(
            c.source.name(),
            interval.as_millis() as u64,
            &c.samples,
            &scope,
            c.problems,
        )
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
