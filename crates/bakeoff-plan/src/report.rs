//! The plan in one call (`run_plan`, from bakeoff-host's [`MachineReadings`], which the caller
//! reads), the coexistence of seats on one GPU ([`coexist_on_gpu`]), the NVML-vs-nvidia-smi comparison, and the text
//! rendering. Rendering is plain text built here; the binary only prints it.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::coexist::{Answer, Coexistence, coexist, cpu_footprint, footprint};
use crate::error::{PlanError, Result};
use crate::plan::{
    CpuSeat, FleetView, GpuPlan, PlanOptions, SeatOnGpu, build_plan, build_plan_hosts, cpu_seats,
};
use crate::remote::HostReadings;
use bakeoff_host::MachineReadings;
use bakeoff_host::Readings;
use bakeoff_host::procinfo::ProcFacts;
use bakeoff_term::units::{gib, gib_signed};

/// NVML and nvidia-smi side by side for one GPU.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct ReadingComparison {
    pub index: u32,
    pub nvml_total_bytes: Option<u64>,
    pub smi_total_bytes: Option<u64>,
    pub nvml_used_bytes: Option<u64>,
    pub smi_used_bytes: Option<u64>,
    /// `(pid, NVML bytes, nvidia-smi bytes)` for every PID either source lists.
    pub processes: Vec<(u32, Option<u64>, Option<u64>)>,
}

/// Pairs the two sources GPU by GPU (by index).
pub fn compare_readings(nvml: &Readings, smi: &Readings) -> Vec<ReadingComparison> {
    let mut idx: Vec<u32> = nvml.gpus.iter().chain(&smi.gpus).map(|g| g.index).collect();
    idx.sort_unstable();
    idx.dedup();
    idx.into_iter()
        .map(|i| {
            let a = nvml.gpus.iter().find(|g| g.index == i);
            let b = smi.gpus.iter().find(|g| g.index == i);
            let mut pids: Vec<u32> = a
                .into_iter()
                .chain(b)
                .flat_map(|g| g.processes.iter().map(|p| p.pid))
                .collect();
            pids.sort_unstable();
            pids.dedup();
            let used = |g: Option<&bakeoff_host::GpuReading>, pid: u32| {
                g.and_then(|g| g.processes.iter().find(|p| p.pid == pid))
                    .and_then(|p| p.used_bytes)
            };
            ReadingComparison {
                index: i,
                nvml_total_bytes: a.map(|g| g.total_bytes),
                smi_total_bytes: b.map(|g| g.total_bytes),
                nvml_used_bytes: a.map(|g| g.used_bytes),
                smi_used_bytes: b.map(|g| g.used_bytes),
                processes: pids
                    .into_iter()
                    .map(|p| (p, used(a, p), used(b, p)))
                    .collect(),
            }
        })
        .collect()
}

/// Everything `bakeoff plan` prints.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct PlanReport {
    pub fleet: Option<String>,
    pub options: PlanOptions,
    /// Which source the plan's measured numbers come from (`nvml`, else `nvidia-smi`).
    pub measured_from: Option<String>,
    pub nvml: Readings,
    pub nvidia_smi: Readings,
    pub comparison: Vec<ReadingComparison>,
    pub gpus: Vec<GpuPlan>,
    /// The readings of the fleet's other hosts (nvidia-smi over ssh, or why there are none),
    /// by host; this machine's are `nvml` and `nvidia_smi` above.
    #[serde(default)]
    pub hosts: Vec<HostReadings>,
    /// Seats that run on the CPU and claim no GPU memory.
    pub cpu_seats: Vec<CpuSeat>,
    pub coexistence: Option<Coexistence>,
}

impl PlanReport {
    /// Whether any GPU carries a warning, or a coexistence question was not answered YES.
    pub fn has_warnings(&self) -> bool {
        self.gpus.iter().any(|g| !g.warnings.is_empty())
            || self
                .coexistence
                .as_ref()
                .is_some_and(|c| c.answer != Answer::Yes)
    }
}

/// Inputs of [`run_plan`] that do not come from the machine.
pub struct PlanRequest<'a> {
    /// The seats (from bakeoff-seats' fleet file, turned into [`crate::fleet::SeatSpec`]s).
    pub view: FleetView,
    /// The fleet file's path, for the report.
    pub fleet: Option<&'a Path>,
    pub coexist: Option<(String, String, u32)>,
    /// Other hosts' readings, by host name (read by the caller, which knows how to reach them:
    /// `bakeoff_campaign::host_readings`).
    pub remote: BTreeMap<String, HostReadings>,
}

/// Builds the plan from this machine's readings (NVML, nvidia-smi, `/proc`: `m`, read by the
/// caller off the async runtime, as [`MachineReadings::read_off_runtime`] does) and `req`.
pub fn run_plan(
    req: &PlanRequest<'_>,
    m: MachineReadings,
    opts: &PlanOptions,
) -> Result<PlanReport> {
    let view = &req.view;
    let primary = m.primary();
    let facts = |pid: u32| m.facts_of(pid);
    let names = &m.container_names;
    let gpus = build_plan_hosts(view, primary, &req.remote, &facts, names, opts);
    let coexistence = match &req.coexist {
        None => None,
        Some((a, b, n)) => Some(coexist_question(
            view, primary, &facts, names, opts, a, b, *n,
        )?),
    };
    let comparison = compare_readings(&m.nvml, &m.nvidia_smi);
    let MachineReadings {
        nvml,
        nvidia_smi,
        measured_from,
        ..
    } = m;
    Ok(PlanReport {
        fleet: req.fleet.map(|p| p.display().to_string()),
        options: opts.clone(),
        measured_from,
        nvml,
        nvidia_smi,
        comparison,
        gpus,
        hosts: req.remote.values().cloned().collect(),
        cpu_seats: cpu_seats(view),
        coexistence,
    })
}

/// Places seats `a` and `b` alone on GPU `gpu` and adds their footprints up
/// ([`coexist_on_gpu`]).
#[allow(clippy::too_many_arguments)]
pub fn coexist_question(
    view: &FleetView,
    readings: &Readings,
    facts: &dyn Fn(u32) -> ProcFacts,
    names: &BTreeMap<String, String>,
    opts: &PlanOptions,
    a: &str,
    b: &str,
    gpu: u32,
) -> Result<Coexistence> {
    let find = |n: &str| {
        view.seats
            .iter()
            .find(|s| s.name == n)
            .cloned()
            .ok_or_else(|| {
                PlanError::invalid(
                    format!("--coexist: no seat named `{n}` in the fleet file"),
                    format!(
                        "use one of: {}",
                        view.seats
                            .iter()
                            .map(|s| s.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
            })
    };
    let (mut sa, mut sb) = (find(a)?, find(b)?);
    // Alternatives in the fleet (same host and port) are never up together: say so, and answer
    // the question asked — could both run at once.
    let swap_pair = (sa.host == sb.host && sa.port.is_some() && sa.port == sb.port).then(|| {
        format!(
            "note: {a} and {b} share port {} on {}: the fleet runs them as alternatives (`bakeoff seat swap`), never together; the answer above is for both running at once",
            sa.port.map(|p| p.to_string()).unwrap_or_default(),
            sa.host
        )
    });
    let host = sa.host.clone();
    for s in [&mut sa, &mut sb] {
        if s.gpus.is_empty() {
            continue;
        }
        // Measured only where the seat really runs on that GPU.
        if !s.gpus.contains(&gpu) {
            s.port = None;
            s.container_name = Some(format!("\0not-on-gpu-{gpu}"));
        }
        s.gpus = vec![gpu];
        s.host = host.clone();
    }
    let pair = FleetView {
        seats: vec![sa, sb],
        gpu_memory: view.gpu_memory.clone(),
        local_hosts: view.local_hosts.clone(),
    };
    let mut c =
        coexist_on_gpu(&pair, readings, facts, names, opts, &host, gpu)?.ok_or_else(|| {
            PlanError::invalid(
                format!("GPU {gpu}: total memory unknown"),
                "pass --gpu-memory-gib (e.g. 94.97 for an H100 NVL), set gpu_memory_gib under \
             [hosts.NAME] in the fleet file, or run on the host that has it",
            )
        })?;
    c.lines.extend(swap_pair);
    Ok(c)
}

/// The seats of `seats` side by side on GPU `gpu` of `host`, their footprints added up against
/// the card ([`coexist`]): each seat on that GPU at what it is measured to hold there when it
/// runs, else at its claim (the per-GPU section's terms), and a seat that runs on the CPU at
/// nothing. `seats.gpu_memory` and `seats.local_hosts` size the card as the plan does (a reading
/// on this machine, else `--gpu-memory-gib`); `Ok(None)` when neither does. The one code path of
/// `plan --coexist A,B` (two seats) and a campaign's memory check (a variant beside the seats
/// that stay up); every seat counts, so alternatives (same host and port) are the caller's to
/// leave out.
pub fn coexist_on_gpu(
    seats: &FleetView,
    readings: &Readings,
    facts: &dyn Fn(u32) -> ProcFacts,
    names: &BTreeMap<String, String>,
    opts: &PlanOptions,
    host: &str,
    gpu: u32,
) -> Result<Option<Coexistence>> {
    let Some(total) = crate::plan::gpu_total(seats, readings, host, gpu) else {
        return Ok(None);
    };
    let plan = if seats.seats.iter().all(|s| s.gpus.is_empty()) {
        None
    } else {
        Some(
            build_plan(seats, readings, facts, names, opts)
                .into_iter()
                .find(|p| p.index == gpu && p.host == host)
                .ok_or_else(|| {
                    PlanError::invalid(
                        format!("GPU {gpu} on {host} not found"),
                        "check the GPU index",
                    )
                })?,
        )
    };
    let mut fps = Vec::new();
    for s in &seats.seats {
        if s.gpus.is_empty() {
            fps.push(cpu_footprint(s));
            continue;
        }
        let on = plan
            .iter()
            .flat_map(|p| &p.seats)
            .find(|o| o.claim.seat == s.name)
            .ok_or_else(|| {
                PlanError::invalid(
                    format!("seat {} was not placed on GPU {gpu} of {host}", s.name),
                    "check the seat's host and GPUs",
                )
            })?;
        fps.push(footprint(on, s));
    }
    Ok(Some(coexist(gpu, total, opts.margin_bytes, fps)))
}

fn opt_gib(b: Option<u64>) -> String {
    b.map(gib).unwrap_or_else(|| "unknown".into())
}

/// The plan as text, for the terminal.
pub fn render_text(r: &PlanReport) -> String {
    let mut o = String::new();
    let mut line = |s: String| {
        o.push_str(&s);
        o.push('\n');
    };
    match &r.measured_from {
        Some(src) => line(format!("measured usage from {src}")),
        None => line(format!(
            "measured usage unavailable: NVML: {}; nvidia-smi: {}",
            r.nvml.unavailable.as_deref().unwrap_or("no GPU"),
            r.nvidia_smi.unavailable.as_deref().unwrap_or("no GPU")
        )),
    }
    for h in &r.hosts {
        line(h.summary());
        for n in &h.notes {
            line(format!("  note: {n}"));
        }
    }
    for g in &r.gpus {
        line(String::new());
        render_gpu(g, &mut line);
    }
    render_cpu_seats(&r.cpu_seats, &mut line);
    render_comparison(&r.comparison, &mut line);
    if let Some(c) = &r.coexistence {
        line(String::new());
        for l in &c.lines {
            line(l.clone());
        }
    }
    o
}

/// One GPU's block: its size, each seat, the other processes, the sums and the headrooms, then
/// its notes and warnings.
fn render_gpu(g: &GpuPlan, line: &mut impl FnMut(String)) {
    line(format!(
        "GPU {} on {}{}: total {}{}",
        g.index,
        g.host,
        g.name
            .as_deref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default(),
        opt_gib(g.total_bytes),
        g.total_source
            .as_deref()
            .map(|s| format!(" [{s}]"))
            .unwrap_or_default()
    ));
    for s in &g.seats {
        render_seat(s, line);
    }
    for p in &g.other_processes {
        line(format!(
            "  other process pid {} ({}): {}",
            p.pid,
            p.name.as_deref().unwrap_or("?"),
            opt_gib(p.used_bytes)
        ));
    }
    if g.utilization_sum > 0.0 {
        line(format!(
            "  utilization flags{}: {:.2} of the card",
            if g.seats.iter().any(|s| s.claim.utilization_is_default) {
                " (and engine defaults where a flag is absent)"
            } else {
                ""
            },
            g.utilization_sum
        ));
    }
    line(format!(
        "  claimed {}; measured used {}{}",
        opt_gib(g.claimed_bytes),
        opt_gib(g.measured_used_bytes),
        g.measured_source
            .as_deref()
            .map(|s| format!(" [{s}]"))
            .unwrap_or_default()
    ));
    let h = |v: Option<i64>| {
        v.map(|b| gib_signed(i128::from(b)))
            .unwrap_or_else(|| "unknown".into())
    };
    let at_most = if g.headroom_is_upper_bound {
        "at most "
    } else {
        ""
    };
    if g.total_bytes.is_none() && g.headroom_by_claims_bytes.is_none() {
        // Nothing to subtract the claims from: say what cannot be priced and both ways to
        // give the card's size (docs/plan.md, docs/fleet.md `[hosts.NAME] gpu_memory_gib`).
        line(format!(
            "  headroom: not priced — the card's total memory is unknown (no reading of GPU {} on \
             {}); fix: pass --gpu-memory-gib GIB, or set gpu_memory_gib under [hosts.{}] in the \
             fleet file",
            g.index, g.host, g.host
        ));
    } else {
        line(format!(
            "  headroom: {at_most}{} by claims, {at_most}{} planned (running seats as measured)",
            h(g.headroom_by_claims_bytes),
            h(g.headroom_planned_bytes)
        ));
    }
    for n in &g.notes {
        line(format!("  note: {n}"));
    }
    for w in &g.warnings {
        line(format!("  WARNING: {w}"));
    }
}

/// One seat on a GPU: its claim against its measurement, the rule, the terms and the notes.
fn render_seat(s: &SeatOnGpu, line: &mut impl FnMut(String)) {
    let c = &s.claim;
    line(format!(
        "  seat {} ({}{}): claims {}{}{}",
        c.seat,
        c.engine,
        c.gpu_memory_utilization
            .map(|u| format!(
                ", util {u}{}",
                if c.utilization_is_default {
                    " (engine default)"
                } else {
                    ""
                }
            ))
            .unwrap_or_default(),
        if c.unpriced.is_empty() {
            ""
        } else {
            "at least "
        },
        opt_gib(c.expected_bytes),
        match &s.measured {
            Some(m) => format!(
                ", holds {} measured (pids {}, by {})",
                gib(m.bytes),
                crate::plan::pid_list(&m.pids),
                m.matched_by
            ),
            None => ", not running here".into(),
        }
    ));
    line(format!("    rule: {}", c.rule));
    for p in &c.parts {
        line(format!(
            "    {:>11}  {}{}{}",
            gib(p.bytes),
            p.what,
            if p.inside_budget {
                " [inside budget]"
            } else {
                ""
            },
            if p.estimated { " [estimate]" } else { "" }
        ));
    }
    for u in &c.unpriced {
        line(format!("    not priced: {u}"));
    }
    for n in &c.notes {
        line(format!("    note: {n}"));
    }
}

/// The seats that claim no GPU memory, when there are any.
fn render_cpu_seats(cpu_seats: &[CpuSeat], line: &mut impl FnMut(String)) {
    if cpu_seats.is_empty() {
        return;
    }
    line(String::new());
    line("CPU seats (no GPU memory claimed):".into());
    for c in cpu_seats {
        line(format!(
            "  seat {} ({}) on {}: CPU, {}{}",
            c.seat,
            c.engine,
            c.host,
            c.why,
            c.model
                .as_deref()
                .map(|m| format!("; model {m}"))
                .unwrap_or_default()
        ));
        if !c.not_priced.is_empty() {
            line(format!("    not priced: {}", c.not_priced));
        }
    }
}

/// NVML beside nvidia-smi, GPU by GPU and process by process, when both were read.
fn render_comparison(comparison: &[ReadingComparison], line: &mut impl FnMut(String)) {
    if comparison.is_empty() {
        return;
    }
    line(String::new());
    line("NVML vs nvidia-smi:".into());
    for c in comparison {
        line(format!(
            "  GPU {}: used {} (NVML) vs {} (nvidia-smi); total {} vs {}",
            c.index,
            opt_gib(c.nvml_used_bytes),
            opt_gib(c.smi_used_bytes),
            opt_gib(c.nvml_total_bytes),
            opt_gib(c.smi_total_bytes)
        ));
        for (pid, a, b) in &c.processes {
            line(format!("    pid {pid}: {} vs {}", opt_gib(*a), opt_gib(*b)));
        }
    }
}
