//! What a plan is made of: its knobs, the fleet it reads, and each GPU's plan with the seats on
//! it. The plan's driver (`plan.rs`) and the per-GPU builder both use these.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::claims::{Overheads, SeatClaim};
use crate::fleet::PlanSeat;
use bakeoff_host::GpuProcess;

/// Knobs of the plan.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct PlanOptions {
    /// Warn when headroom is below this (`--margin`, default 2 GiB).
    pub margin_bytes: u64,
    pub overheads: Overheads,
    /// Seats up longer than this get the uptime note (default 24 h).
    pub long_uptime_s: u64,
}

impl Default for PlanOptions {
    fn default() -> Self {
        Self {
            margin_bytes: 2 << 30,
            overheads: Overheads::default(),
            long_uptime_s: 24 * 3600,
        }
    }
}

/// What the driver says one seat holds on one GPU.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct MeasuredSeat {
    pub pids: Vec<u32>,
    pub bytes: u64,
    /// The longest uptime among its processes.
    pub uptime_s: Option<u64>,
    /// `container <name>` or `port <N>`.
    pub matched_by: String,
}

/// One seat on one GPU.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct SeatOnGpu {
    pub claim: SeatClaim,
    pub measured: Option<MeasuredSeat>,
    /// Measured when running, else the claim.
    pub effective_bytes: Option<u64>,
}

/// The plan of one GPU.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct GpuPlan {
    pub host: String,
    pub index: u32,
    pub name: Option<String>,
    pub total_bytes: Option<u64>,
    /// `nvml`, `nvidia-smi`, `nvidia-smi over ssh USER@HOST` or `--gpu-memory-gib`.
    pub total_source: Option<String>,
    /// Where the measured figures (used, per process) come from: `nvml`, `nvidia-smi`, or
    /// `nvidia-smi over ssh USER@HOST` for another host; `None` when nothing was read.
    #[serde(default)]
    pub measured_source: Option<String>,
    pub seats: Vec<SeatOnGpu>,
    /// Σ utilization of the vLLM/SGLang seats ("0.43 + 0.51 = 0.94 of the card").
    pub utilization_sum: f64,
    pub claimed_bytes: Option<u64>,
    pub measured_used_bytes: Option<u64>,
    /// Processes on this GPU that map to no seat.
    pub other_processes: Vec<GpuProcess>,
    pub headroom_by_claims_bytes: Option<i64>,
    pub headroom_planned_bytes: Option<i64>,
    /// True when some seat's claim has unpriced terms: the headrooms are then upper bounds.
    pub headroom_is_upper_bound: bool,
    /// Groups of seats here that share a host and port (never up together): each group counts
    /// as its largest member.
    pub alternatives: Vec<Vec<String>>,
    pub warnings: Vec<String>,
    pub notes: Vec<String>,
}

/// Hosts and seats of a fleet file, normalized.
pub struct FleetView {
    pub seats: Vec<PlanSeat>,
    /// `(host, gpu index) → GiB` for GPUs no reading covers (`bakeoff plan --gpu-memory-gib`).
    pub gpu_memory: BTreeMap<(String, u32), f64>,
    pub local_hosts: Vec<String>,
}
