//! What this host says about itself, read in one place: its GPUs as the driver reports them
//! (NVML through nvml-wrapper, with one handle for the process; the `nvidia-smi` CSV queries,
//! run here or over a host's ssh channel), its `/proc` through the `procfs` crate (processes,
//! sockets, load, memory, locks; [`proc`]), the host PIDs of GPU processes mapped to containers
//! and ports, and the bounded subprocess runner these readings (and the seats' engine-registry
//! probe) share; and [`MachineReadings`], the GPU readings read once for `bakeoff plan` and a
//! campaign's memory check.
//!
//! Why a leaf: the sampler of a measurement's conditions (bakeoff-conditions), the seats'
//! stop checks (bakeoff-seats), the seat monitor (bakeoff-monitor), the cache audit
//! (bakeoff-cache) and the GPU planner (bakeoff-plan) all read the host the same way. Living
//! in the planner, these readings made every crate that samples conditions (load, suites,
//! seats) build the planner too; here they depend on serde, schemars, thiserror, nvml-wrapper,
//! procfs and tokio (for its blocking pool) only, and on no bakeoff crate.
//!
//! Everything here reads — the driver, `/proc`, a subprocess's output — and blocks while it
//! does (nvidia-smi for up to 15 s, ssh for up to 20 s): async code runs them through
//! [`blocking::off_runtime`] (tokio's blocking pool; [`MachineReadings::read_off_runtime`] does),
//! threads of their own (the conditions samplers) call them directly. No GPU is not an error: a
//! reading says why it is unavailable.

pub mod blocking;
pub mod bounded;
pub mod machine;
pub mod nvidia_smi;
pub mod nvml;
pub mod over_ssh;
pub mod proc;
pub mod procinfo;
pub mod readings;
pub mod units;

pub use machine::MachineReadings;
pub use proc::{ProcRoot, ProcStat};
pub use readings::{GpuProcess, GpuReading, ReadingSource, Readings};
