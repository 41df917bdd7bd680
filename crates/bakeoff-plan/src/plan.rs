//! Per-GPU plan: claims, measured usage mapped to seats, headroom, warnings.
//!
//! Two headrooms, because they answer different questions:
//! - **by claims**: total − Σ expected claims. What the flags promise if every seat is fresh.
//! - **planned**: total − Σ (a running seat's *measured* footprint, else its claim) − memory
//!   held by processes that belong to no seat. This is the one field case F1 needed: seat `gen`
//!   claimed 0.43 × 94.97 = 40.84 GiB and held 45.6 GiB after three days (docs/field-cases.md F1).
//!
//! A seat up for longer than `long_uptime_s` gets a note: footprints grow with uptime, so
//! headroom should be measured against a freshly started seat.
//!
//! Seats that bind the same port on the same host are **alternatives** (bakeoff-seats refuses to
//! start one while the other is up; `bakeoff seat swap` moves between them): a GPU's claim
//! counts the largest of each such group, never their sum, and the plan says so. Seats on a host
//! with `gpus = 0` (or whose launch hides every GPU) run on the CPU: they claim no GPU memory and
//! are listed apart ([`cpu_seats`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::fleet::PlanSeat;
use crate::remote::HostReadings;
use bakeoff_host::procinfo::ProcFacts;
use bakeoff_host::units::gib_to_bytes;
use bakeoff_host::{GpuReading, Readings};

mod per_gpu;
mod types;

pub use per_gpu::alternative_groups;
use per_gpu::gpu_plan;
pub use types::{FleetView, GpuPlan, MeasuredSeat, PlanOptions, SeatOnGpu};

/// Process ids as printed: `5159, 5160` (never Rust's `[5159, 5160]`).
pub fn pid_list(pids: &[u32]) -> String {
    pids.iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// A seat that runs on the CPU and claims no GPU memory.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct CpuSeat {
    pub seat: String,
    pub host: String,
    pub engine: crate::fleet::Engine,
    pub model: Option<String>,
    /// Why it is a CPU seat (`host local declares gpus = 0`).
    pub why: String,
    /// What such a seat holds that the plan does not price: host memory, in words.
    #[serde(default)]
    pub not_priced: String,
}

/// What a CPU seat holds in host memory that the plan (a GPU-memory plan) does not price.
fn host_memory_not_priced(s: &PlanSeat) -> String {
    let kv = match s.engine {
        // vllm/envs.py (0.32): the CPU backend's KV pool is `VLLM_CPU_KVCACHE_SPACE` GiB.
        crate::fleet::Engine::Vllm => {
            "vLLM's CPU KV pool (VLLM_CPU_KVCACHE_SPACE GiB, from the seat's environment)"
                .to_string()
        }
        crate::fleet::Engine::LlamaCpp => match s.max_model_len {
            Some(n) => format!("the KV cache for -c {n}"),
            None => "the KV cache".to_string(),
        },
        _ => "its KV cache".to_string(),
    };
    format!("host memory: the weights and {kv} live in RAM, and this plan prices GPU memory only")
}

/// The seats of `fleet` that hold no GPU memory.
pub fn cpu_seats(fleet: &FleetView) -> Vec<CpuSeat> {
    fleet
        .seats
        .iter()
        .filter(|s| s.gpus.is_empty())
        .map(|s| CpuSeat {
            seat: s.name.clone(),
            host: s.host.clone(),
            engine: s.engine,
            model: s.model.clone(),
            why: s
                .cpu_only
                .clone()
                .unwrap_or_else(|| "no GPU assigned".into()),
            not_priced: host_memory_not_priced(s),
        })
        .collect()
}

/// Builds the plan of every GPU that a seat uses or that the readings show.
pub fn build_plan(
    fleet: &FleetView,
    readings: &Readings,
    proc_facts: &dyn Fn(u32) -> ProcFacts,
    container_names: &BTreeMap<String, String>,
    opts: &PlanOptions,
) -> Vec<GpuPlan> {
    build_plan_hosts(
        fleet,
        readings,
        &BTreeMap::new(),
        proc_facts,
        container_names,
        opts,
    )
}

/// [`build_plan`] with the readings of other hosts (`remote`, by host name: nvidia-smi over
/// ssh), each of their processes mapped to seats through the container PIDs read on that host.
pub fn build_plan_hosts(
    fleet: &FleetView,
    readings: &Readings,
    remote: &BTreeMap<String, HostReadings>,
    proc_facts: &dyn Fn(u32) -> ProcFacts,
    container_names: &BTreeMap<String, String>,
    opts: &PlanOptions,
) -> Vec<GpuPlan> {
    // Every (host, gpu) a seat sits on, plus every GPU read, here or on another host.
    let mut keys: Vec<(String, u32)> = Vec::new();
    for s in &fleet.seats {
        for g in &s.gpus {
            keys.push((s.host.clone(), *g));
        }
    }
    let local = fleet
        .local_hosts
        .first()
        .cloned()
        .unwrap_or_else(|| "local".into());
    for r in &readings.gpus {
        keys.push((local.clone(), r.index));
    }
    for (host, h) in remote {
        for r in &h.readings.gpus {
            keys.push((host.clone(), r.index));
        }
    }
    keys.sort();
    keys.dedup();

    // A remote host's PIDs are mapped through its containers' PIDs (`docker top` there), never
    // through this machine's `/proc`: the same PID here is another process.
    let remote_names: BTreeMap<String, String> = remote
        .values()
        .flat_map(|h| h.container_pids.keys())
        .map(|n| (format!("remote:{n}"), n.clone()))
        .collect();

    keys.into_iter()
        .map(|(host, index)| {
            if let Some(h) = remote.get(&host) {
                let reading = h.readings.gpus.iter().find(|g| g.index == index);
                let facts = |pid: u32| ProcFacts {
                    container_id: h.container_of(pid).map(|n| format!("remote:{n}")),
                    ..ProcFacts::default()
                };
                let missing = h
                    .readings
                    .unavailable
                    .clone()
                    .unwrap_or_else(|| format!("{} shows no GPU {index}", h.source));
                let ctx = per_gpu::ReadingContext {
                    label: Some(&h.source),
                    missing: &missing,
                };
                return gpu_plan(
                    fleet,
                    &host,
                    index,
                    reading,
                    &facts,
                    &remote_names,
                    opts,
                    &ctx,
                );
            }
            let is_local = fleet.local_hosts.contains(&host);
            let reading: Option<&GpuReading> = is_local
                .then(|| readings.gpus.iter().find(|g| g.index == index))
                .flatten();
            let missing = if is_local {
                format!(
                    "measured usage unavailable: {}",
                    readings
                        .unavailable
                        .as_deref()
                        .unwrap_or("no reading for this GPU")
                )
            } else {
                format!("host {host} is not this machine: claims only, no measured usage")
            };
            let ctx = per_gpu::ReadingContext {
                label: None,
                missing: &missing,
            };
            gpu_plan(
                fleet,
                &host,
                index,
                reading,
                proc_facts,
                container_names,
                opts,
                &ctx,
            )
        })
        .collect()
}

/// The size of GPU `index` of `host`: a reading when the host is this machine, else
/// `--gpu-memory-gib`.
pub(crate) fn gpu_total(
    fleet: &FleetView,
    readings: &Readings,
    host: &str,
    index: u32,
) -> Option<u64> {
    let local = fleet.local_hosts.iter().any(|h| h == host);
    local
        .then(|| readings.gpus.iter().find(|g| g.index == index))
        .flatten()
        .map(|r| r.total_bytes)
        .or_else(|| {
            fleet
                .gpu_memory
                .get(&(host.to_owned(), index))
                .map(|m| gib_to_bytes(*m))
        })
}
