//! `bakeoff plan` over a fleet: the fleet file's seats as the planner's view (through
//! [`crate::fleet_view`], the one bridge, shared with a campaign's memory check), the other
//! hosts' GPUs read over the channel each is reached by ([`crate::host_readings`]), and this
//! machine's NVML and `nvidia-smi` readings taken off the runtime's threads.

use std::collections::BTreeMap;
use std::path::Path;

use bakeoff_host::MachineReadings;
use bakeoff_plan::{FleetView, PlanOptions, PlanReport, PlanRequest, run_plan};
use bakeoff_seats::Fleet;

use crate::fleet_view::{ViewOptions, view_of};
use crate::host_readings::read_hosts;

/// What to plan: the fleet (with its file's path, for the report), or none (this machine
/// alone), and the question asked of it.
pub struct FleetPlan<'a> {
    pub fleet: Option<(&'a Fleet, &'a Path)>,
    pub view: ViewOptions,
    /// `--coexist A,B --gpu N`.
    pub coexist: Option<(String, String, u32)>,
    pub options: PlanOptions,
    /// The `nvidia-smi` binary to read.
    pub nvidia_smi: &'a str,
}

/// Read every host and plan.
pub async fn plan(p: FleetPlan<'_>) -> bakeoff_plan::Result<PlanReport> {
    // The other hosts' GPUs, all at once, each bounded.
    let remote = match p.fleet {
        Some((f, _)) => read_hosts(f).await,
        None => BTreeMap::new(),
    };
    let view = match p.fleet {
        Some((f, _)) => view_of(f, &p.view),
        None => FleetView {
            seats: Vec::new(),
            gpu_memory: BTreeMap::new(),
            local_hosts: vec!["local".into()],
        },
    };
    let req = PlanRequest {
        view,
        fleet: p.fleet.map(|(_, path)| path),
        coexist: p.coexist,
        remote,
    };
    // NVML and nvidia-smi (up to 15 s on a wedged driver) are read on the blocking pool.
    let machine = MachineReadings::read_off_runtime(p.nvidia_smi).await;
    run_plan(&req, machine, &p.options)
}
