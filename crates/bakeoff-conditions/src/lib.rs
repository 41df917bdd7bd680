//! The conditions a measurement ran under (docs/metrics.md "Conditions"). A
//! [`Sampler`] is started around a measured step (a bench step, an eval suite) with the pids
//! to leave out — bakeoff itself and the engine under test, each with its descendants — and a
//! background thread reads `/proc` (and nvidia-smi, where it is on PATH) about once a second
//! until [`Sampler::finish`], which returns a [`Conditions`] with its findings. Reading
//! `/proc` (through `bakeoff_host::proc`, the `procfs` crate) costs about a millisecond a
//! sample with 87 processes on the 2-core development machine, 11 % more than the hand parser it
//! replaced (1.02 ms against 0.92 ms, `bench/proc_sample.rs`): cheap enough to leave on, and too
//! little to keep a parser of our own for.

pub mod engine;
pub mod findings;
pub mod gpu;
pub mod telemetry;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use bakeoff_artifact::{
    Conditions, Excluded, LoadAvg, MemSnapshot, MemoryConditions, OtherProcess,
};
use bakeoff_host::proc::{ProcRoot, descendants, ticks_per_second};

pub use findings::findings;

/// Other processes listed in `top_others`.
const TOP: usize = 8;
/// The GPU is read every this many samples (nvidia-smi costs more than `/proc`), and at the
/// start and the end.
const GPU_EVERY: u32 = 5;

/// Whom to leave out, and where to read.
#[derive(Debug, Clone)]
pub struct Exclude {
    pub bakeoff_pid: u32,
    pub engine_pid: Option<u32>,
    /// Other engines the measurement itself drives (`eval damage`'s reference), left out too.
    pub also: Vec<u32>,
    /// How the engine was looked for, in words.
    pub engine: String,
    pub proc_root: ProcRoot,
    /// The nvidia-smi to run (`None`: not on PATH, the GPU part unavailable).
    pub nvidia_smi: Option<String>,
    pub interval: Duration,
}

impl Exclude {
    /// bakeoff (this process) and, for an endpoint on this host, the process listening on its
    /// port; nvidia-smi from PATH.
    pub fn for_endpoint(host: &str, port: Option<u16>) -> Self {
        let proc_root = ProcRoot::system();
        let (engine_pid, engine) = match port {
            Some(p) if engine::is_local(host) => engine::find_listener(&proc_root, p),
            Some(p) => (
                None,
                format!("remote endpoint {host}:{p}: its engine is not on this host"),
            ),
            None => (None, format!("endpoint {host} has no port")),
        };
        Self {
            bakeoff_pid: std::process::id(),
            engine_pid,
            also: Vec::new(),
            engine,
            proc_root,
            nvidia_smi: gpu::nvidia_smi_on_path(),
            interval: Duration::from_secs(1),
        }
    }

    /// bakeoff (this process), and the engine once [`Sampler::exclude_engine`] names it: for a
    /// seat load, which starts the engine after the first sample.
    pub fn for_seat_load() -> Self {
        Self {
            engine: "the engine being started: not spawned yet at the first sample, left out \
                     from when its pid was known"
                .to_owned(),
            ..Self::for_endpoint("", None)
        }
    }

    /// As [`Exclude::for_endpoint`] for the first endpoint, with the engine of each other one
    /// on this host left out too: a measurement that drives two engines (`eval damage`'s
    /// candidate and reference) must not count the one it drives as contention.
    pub fn for_endpoints(endpoints: &[(&str, Option<u16>)]) -> Self {
        let Some(((host, port), rest)) = endpoints.split_first() else {
            return Self::for_endpoint("", None);
        };
        let mut ex = Self::for_endpoint(host, *port);
        for (h, p) in rest {
            let other = Self::for_endpoint(h, *p);
            if let Some(pid) = other.engine_pid.filter(|pid| Some(*pid) != ex.engine_pid) {
                ex.also.push(pid);
            }
            ex.engine = format!("{}; {}", ex.engine, other.engine);
        }
        ex
    }

    fn roots(&self) -> Vec<u32> {
        std::iter::once(self.bakeoff_pid)
            .chain(self.engine_pid)
            .chain(self.also.iter().copied())
            .collect()
    }
}

/// An engine pid named after the sampling began (a seat load: the engine does not exist at the
/// first sample), with how it was found.
type LateEngine = Arc<Mutex<Option<(u32, String)>>>;

/// What the sampling thread accumulates.
struct State {
    ex: Exclude,
    late_engine: LateEngine,
    hz: u64,
    samples: u32,
    unavailable: Vec<String>,
    load_start: Option<[f64; 3]>,
    load_end: Option<[f64; 3]>,
    load_max: f64,
    mem_start: Option<MemSnapshot>,
    mem_end: Option<MemSnapshot>,
    mem_min: Option<MemSnapshot>,
    busy_start: Option<u64>,
    busy_end: Option<u64>,
    /// Excluded processes' ticks: first and last seen, by (pid, start).
    excluded_ticks: HashMap<(u32, u64), (u64, u64)>,
    /// Other processes: (comm, ticks at first sight or 0 when born after the start, last ticks).
    others: HashMap<(u32, u64), (String, u64, u64)>,
    gpu: gpu::GpuSampler,
}

impl State {
    fn new(ex: Exclude, late_engine: LateEngine) -> Self {
        let gpu = gpu::GpuSampler::new(ex.nvidia_smi.clone());
        Self {
            ex,
            late_engine,
            hz: ticks_per_second(),
            samples: 0,
            unavailable: Vec::new(),
            load_start: None,
            load_end: None,
            load_max: 0.0,
            mem_start: None,
            mem_end: None,
            mem_min: None,
            busy_start: None,
            busy_end: None,
            excluded_ticks: HashMap::new(),
            others: HashMap::new(),
            gpu,
        }
    }

    fn sample(&mut self, with_gpu: bool) {
        let late = self
            .late_engine
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some((pid, how)) = late {
            self.ex.engine_pid = Some(pid);
            self.ex.engine = how;
        }
        let first = self.samples == 0;
        self.samples += 1;
        let proc = &self.ex.proc_root;
        if let Some(l) = proc.loadavg() {
            self.load_start.get_or_insert(l);
            self.load_end = Some(l);
            self.load_max = self.load_max.max(l[0]);
        }
        if let Some(m) = proc.memory().and_then(|m| {
            Some(MemSnapshot {
                free_bytes: m.free_bytes,
                available_bytes: m.available_bytes?,
                cached_bytes: m.cached_bytes,
            })
        }) {
            self.mem_start.get_or_insert(m);
            self.mem_end = Some(m);
            self.mem_min = Some(match self.mem_min {
                None => m,
                Some(x) => MemSnapshot {
                    free_bytes: x.free_bytes.min(m.free_bytes),
                    available_bytes: x.available_bytes.min(m.available_bytes),
                    cached_bytes: x.cached_bytes.min(m.cached_bytes),
                },
            });
        }
        if let Some(b) = proc.host_busy_ticks() {
            self.busy_start.get_or_insert(b);
            self.busy_end = Some(b);
        }
        let all = proc.all();
        let excluded = descendants(&all, &self.ex.roots());
        // An engine named late may have been sampled as another process before: its ticks
        // from its start count as excluded (its entry there starts at 0), not as others'.
        self.others.retain(|(pid, _), _| !excluded.contains(pid));
        for p in &all {
            let key = (p.pid, p.start_ticks);
            if excluded.contains(&p.pid) {
                self.excluded_ticks
                    .entry(key)
                    .and_modify(|e| e.1 = p.cpu_ticks)
                    .or_insert((if first { p.cpu_ticks } else { 0 }, p.cpu_ticks));
            } else {
                self.others
                    .entry(key)
                    .and_modify(|e| e.2 = p.cpu_ticks)
                    .or_insert((
                        p.comm.clone(),
                        if first { p.cpu_ticks } else { 0 },
                        p.cpu_ticks,
                    ));
            }
        }
        if with_gpu {
            self.gpu.sample(&excluded, self.ex.engine_pid);
        }
    }

    fn finish(mut self, wall: Duration) -> Conditions {
        let wall_s = wall.as_secs_f64();
        let hz = self.hz as f64;
        let host_cores = std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(1);
        let excluded: u64 = self
            .excluded_ticks
            .values()
            .map(|(a, b)| b.saturating_sub(*a))
            .sum();
        let other_cpu_cores = match (self.busy_start, self.busy_end) {
            (Some(a), Some(b)) if wall_s > 0.0 => {
                Some((b.saturating_sub(a).saturating_sub(excluded)) as f64 / hz / wall_s)
            }
            _ => {
                self.unavailable
                    .push("others' CPU: /proc/stat could not be read".into());
                None
            }
        };
        let mut top: Vec<OtherProcess> = self
            .others
            .iter()
            .map(|((pid, _), (comm, a, b))| OtherProcess {
                pid: *pid,
                comm: comm.clone(),
                cpu_seconds: b.saturating_sub(*a) as f64 / hz,
            })
            .filter(|o| o.cpu_seconds > 0.0)
            .collect();
        top.sort_by(|a, b| b.cpu_seconds.total_cmp(&a.cpu_seconds));
        top.truncate(TOP);
        let load_avg = match (self.load_start, self.load_end) {
            (Some(start), Some(end)) => Some(LoadAvg {
                start,
                end,
                max_1m: self.load_max,
            }),
            _ => {
                self.unavailable
                    .push("load average: /proc/loadavg could not be read".into());
                None
            }
        };
        let memory = match (self.mem_start, self.mem_end, self.mem_min) {
            (Some(start), Some(end), Some(min)) => Some(MemoryConditions { start, end, min }),
            _ => {
                self.unavailable
                    .push("memory: /proc/meminfo could not be read".into());
                None
            }
        };
        let mut c = Conditions {
            source: format!(
                "/proc, sampled every {}s ({} ticks/s from sysconf(_SC_CLK_TCK))",
                self.ex.interval.as_secs_f64(),
                self.hz
            ),
            samples: self.samples,
            wall_s,
            host_cores,
            excluded: Excluded {
                bakeoff_pid: self.ex.bakeoff_pid,
                engine_pid: self.ex.engine_pid,
                engine: self.ex.engine.clone(),
            },
            load_avg,
            other_cpu_cores,
            top_others: top,
            memory,
            gpu: self.gpu.finish(),
            unavailable: self.unavailable,
            findings: Vec::new(),
        };
        c.findings = findings(&c);
        c
    }
}

/// Sampling around one step: [`Sampler::start`] before it, [`Sampler::finish`] after.
pub struct Sampler {
    started: Instant,
    stop: mpsc::Sender<()>,
    thread: Option<std::thread::JoinHandle<State>>,
    /// Kept here when the thread could not be started: then only the start and end samples.
    inline: Option<State>,
    late_engine: LateEngine,
}

impl Sampler {
    /// Takes the first sample now, then one about every `interval` on a thread of its own.
    pub fn start(ex: Exclude) -> Self {
        let interval = ex.interval;
        let started = Instant::now();
        let late_engine: LateEngine = Arc::new(Mutex::new(None));
        let mut state = State::new(ex, late_engine.clone());
        state.sample(true);
        let (stop, rx) = mpsc::channel::<()>();
        // The state moves into the thread; if the thread cannot start it comes back in the
        // error's closure... which std does not return, so a second state takes its place.
        let spare = State::new(state.ex.clone(), late_engine.clone());
        let thread = std::thread::Builder::new()
            .name("bakeoff-conditions".into())
            .spawn(move || {
                let mut n = 0u32;
                // `recv_timeout` returns at once when `finish` sends or drops the sender.
                while let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(interval) {
                    n += 1;
                    state.sample(n.is_multiple_of(GPU_EVERY));
                }
                state
            });
        match thread {
            Ok(t) => Self {
                started,
                stop,
                thread: Some(t),
                inline: None,
                late_engine,
            },
            Err(_) => {
                let mut s = spare;
                s.unavailable
                    .push("the sampling thread could not start: start and end samples only".into());
                s.sample(true);
                Self {
                    started,
                    stop,
                    thread: None,
                    inline: Some(s),
                    late_engine,
                }
            }
        }
    }

    /// [`Sampler::start`] for async code: the first sample runs nvidia-smi (up to 15 s on a
    /// wedged driver), so it is taken on tokio's blocking pool (`bakeoff_host::blocking`).
    pub async fn start_off_runtime(ex: Exclude) -> Self {
        bakeoff_host::blocking::off_runtime(move || Self::start(ex)).await
    }

    /// [`Sampler::finish`] for async code, its last sample on tokio's blocking pool.
    pub async fn finish_off_runtime(self) -> Conditions {
        bakeoff_host::blocking::off_runtime(move || self.finish()).await
    }

    /// Leave out `pid` (with its descendants) as the engine from the next sample on: for a
    /// step that starts the engine itself (a seat load), whose pid is known only once it is
    /// spawned. `how`: how it was found, in words (recorded as `excluded.engine`).
    pub fn exclude_engine(&self, pid: u32, how: impl Into<String>) {
        *self.late_engine.lock().unwrap_or_else(|e| e.into_inner()) = Some((pid, how.into()));
    }

    /// Stops the thread (at once), takes the last sample and draws the findings.
    pub fn finish(mut self) -> Conditions {
        let _ = self.stop.send(());
        let state = match (self.thread.take(), self.inline.take()) {
            (Some(t), _) => t.join().ok(),
            (None, s) => s,
        };
        match state {
            Some(mut s) => {
                s.sample(true);
                s.finish(self.started.elapsed())
            }
            None => {
                let mut s = State::new(
                    Exclude {
                        nvidia_smi: None,
                        ..Exclude::for_endpoint("", None)
                    },
                    self.late_engine.clone(),
                );
                s.unavailable.push("the sampling thread panicked".into());
                s.finish(self.started.elapsed())
            }
        }
    }
}
