//! What this machine's GPUs hold, as the driver reports it: NVML through nvml-wrapper, the
//! `nvidia-smi` CSV queries (run here, or over a host's ssh channel), the host PIDs of the
//! compute processes mapped to containers and ports through `/proc`, and the bounded
//! subprocess runner these readings (and the seats' engine-registry probe) share; and
//! [`MachineReadings`], all of them read once for `bakeoff plan` and a campaign's memory check.
//!
//! Why a leaf: the sampler of a measurement's conditions (bakeoff-conditions), the seats'
//! release check (bakeoff-seats), the seat monitor (bakeoff-monitor) and the GPU planner
//! (bakeoff-plan) all read the GPUs the same way. Living in the planner, these readings made
//! every crate that samples conditions (load, suites, seats) build the planner too; here they
//! depend on serde, schemars, thiserror, nvml-wrapper and tokio (for its blocking pool) only,
//! and on no bakeoff crate.
//!
//! Everything here reads — the driver, `/proc`, a subprocess's output — and blocks while it
//! does (nvidia-smi for up to 15 s, ssh for up to 20 s): async code runs them through
//! [`blocking::off_runtime`] (tokio's blocking pool; [`MachineReadings::read_off_runtime`] does),
//! threads of their own (the conditions samplers) call them directly. No GPU is not an error: a reading says
//! why it is unavailable.

pub mod blocking;
pub mod bounded;
pub mod machine;
pub mod nvidia_smi;
pub mod nvml;
pub mod over_ssh;
pub mod procinfo;
pub mod readings;
pub mod units;

pub use machine::MachineReadings;
pub use readings::{GpuProcess, GpuReading, ReadingSource, Readings};
