//! GPU memory planning for a fleet: what each seat's flags claim on each GPU (by the rules of
//! its engine and version), what each process really holds (bakeoff-host's readings: NVML, with
//! nvidia-smi as the fallback and as a second opinion), host PIDs mapped to seats through
//! `/proc`, the headroom left with a warning under a margin, an uptime note for long-running
//! seats, and the coexistence question "can A and B share GPU N", answered with the arithmetic
//! (YES, NO, or UNKNOWN when a term is not priced). Seats on one host and port are alternatives
//! (never up together) and count once; seats on a CPU-only host claim no GPU memory.
//!
//! This crate reads checkpoint headers and never starts, stops or signals anything; the driver
//! and `/proc` are read by bakeoff-host, whose readings the caller passes in. No GPU is not an
//! error: NVML is reported unavailable and the plan still prints the claims. Every overhead that no file tells us is labelled an estimate.

pub mod claims;
pub mod coexist;
pub mod error;
pub mod fleet;
pub mod gpu_table;
pub mod kv_report;
pub mod plan;
pub mod remote;
pub mod report;
pub mod terminal;

pub use claims::{ClaimPart, Overheads, SeatClaim, seat_claim, vllm_graphs_inside_budget};
pub use coexist::{Answer, Coexistence, Footprint, Term, coexist, cpu_footprint, footprint};
pub use error::{PlanError, Result};
pub use fleet::{Engine, PlanSeat};
pub use plan::{
    CpuSeat, FleetView, GpuPlan, MeasuredSeat, PlanOptions, SeatOnGpu, alternative_groups,
    build_plan, build_plan_hosts, cpu_seats,
};
pub use remote::HostReadings;
pub use report::{
    PlanReport, PlanRequest, ReadingComparison, coexist_on_gpu, compare_readings, render_text,
    run_plan,
};

/// A saturating sum: sizes come from files, flags and the driver, and a hostile one must not
/// panic the plan.
pub(crate) fn sat_sum(v: impl IntoIterator<Item = u64>) -> u64 {
    v.into_iter().fold(0, u64::saturating_add)
}
