//! Per-GPU plan: claims, measured usage mapped to seats, headroom, warnings.
//!
//! Two headrooms, because they answer different questions:
//! - **by claims**: total − Σ expected claims. What the flags promise if every seat is fresh.
//! - **planned**: total − Σ (a running seat's *measured* footprint, else its claim) − memory
//!   held by processes that belong to no seat. This is the one the seeds needed: seat `gen`
//!   claimed 0.43 × 94.97 = 40.84 GiB and held 45.6 GiB after three days (seed 003 §1).
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

use crate::claims::{Overheads, SeatClaim, seat_claim};
use crate::fleet::PlanSeat;
use crate::gpu::{GpuProcess, GpuReading, Readings, gib, gib_signed, gib_to_bytes};
use crate::procinfo::ProcFacts;

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
    /// `nvml`, `nvidia-smi` or `--gpu-memory-gib`.
    pub total_source: Option<String>,
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

/// A seat that runs on the CPU and claims no GPU memory.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct CpuSeat {
    pub seat: String,
    pub host: String,
    pub engine: crate::fleet::Engine,
    pub model: Option<String>,
    /// Why it is a CPU seat (`host local declares gpus = 0`).
    pub why: String,
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
        })
        .collect()
}

/// Indexes of `seats` grouped by (host, port): seats sharing both are alternatives. A seat
/// without a port is a group of its own. Groups keep the seats' order.
pub fn alternative_groups(seats: &[&PlanSeat]) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, s) in seats.iter().enumerate() {
        let same = s.port.and_then(|port| {
            groups.iter().position(|g| {
                g.first()
                    .and_then(|&j| seats.get(j))
                    .is_some_and(|o| o.port == Some(port) && o.host == s.host)
            })
        });
        match same {
            Some(g) => groups[g].push(i),
            None => groups.push(vec![i]),
        }
    }
    groups
}

fn uptime_words(s: u64) -> String {
    let (d, h, m) = (s / 86_400, (s % 86_400) / 3600, (s % 3600) / 60);
    if d > 0 {
        format!("{d}d {h}h")
    } else if h > 0 {
        format!("{h}h {m}m")
    } else {
        format!("{m}m")
    }
}

/// Which seat a process belongs to: its container's name, else a `--port` on its command line
/// (or an ancestor's) equal to the seat's port.
fn seat_of<'a>(
    facts: &ProcFacts,
    seats: &[&'a PlanSeat],
    container_names: &BTreeMap<String, String>,
) -> Option<(&'a PlanSeat, String)> {
    if let Some(name) = facts
        .container_id
        .as_ref()
        .and_then(|id| container_names.get(id))
    {
        let name = name.trim_start_matches('/');
        if let Some(s) = seats
            .iter()
            .find(|s| s.container_name.as_deref() == Some(name) || s.name == name)
        {
            return Some((s, format!("container {name}")));
        }
    }
    seats.iter().find_map(|s| {
        let port = s.port?;
        facts
            .ports
            .contains(&port)
            .then(|| (*s, format!("port {port}")))
    })
}

/// Builds the plan of every GPU that a seat uses or that the readings show.
pub fn build_plan(
    fleet: &FleetView,
    readings: &Readings,
    proc_facts: &dyn Fn(u32) -> ProcFacts,
    container_names: &BTreeMap<String, String>,
    opts: &PlanOptions,
) -> Vec<GpuPlan> {
    // Every (host, gpu) a seat sits on, plus every local GPU read.
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
    keys.sort();
    keys.dedup();

    keys.into_iter()
        .map(|(host, index)| {
            let is_local = fleet.local_hosts.contains(&host);
            let reading: Option<&GpuReading> = is_local
                .then(|| readings.gpus.iter().find(|g| g.index == index))
                .flatten();
            gpu_plan(
                fleet,
                &host,
                index,
                reading,
                proc_facts,
                container_names,
                opts,
                is_local,
                readings,
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

#[allow(clippy::too_many_arguments)]
fn gpu_plan(
    fleet: &FleetView,
    host: &str,
    index: u32,
    reading: Option<&GpuReading>,
    proc_facts: &dyn Fn(u32) -> ProcFacts,
    container_names: &BTreeMap<String, String>,
    opts: &PlanOptions,
    is_local: bool,
    readings: &Readings,
) -> GpuPlan {
    let mut warnings = Vec::new();
    let mut notes = Vec::new();
    let file_mem = fleet.gpu_memory.get(&(host.to_owned(), index)).copied();
    let (total, total_source) = match (reading, file_mem) {
        (Some(r), _) => (
            Some(r.total_bytes),
            Some(
                format!("{:?}", r.source)
                    .to_lowercase()
                    .replace("nvidiasmi", "nvidia-smi"),
            ),
        ),
        (None, Some(m)) => (Some(gib_to_bytes(m)), Some("--gpu-memory-gib".to_owned())),
        (None, None) => (None, None),
    };
    if reading.is_none() {
        notes.push(if is_local {
            format!(
                "measured usage unavailable: {}",
                readings
                    .unavailable
                    .as_deref()
                    .unwrap_or("no reading for this GPU")
            )
        } else {
            format!("host {host} is not this machine: claims only, no measured usage")
        });
    }
    if total.is_none() {
        warnings.push(format!(
            "GPU {index} on {host}: total memory unknown; fix: pass --gpu-memory-gib (e.g. 94.97 for an H100 NVL), or run the plan on that host"
        ));
    }
    let seats_here: Vec<&PlanSeat> = fleet
        .seats
        .iter()
        .filter(|s| s.host == host && s.gpus.contains(&index))
        .collect();
    if reading.is_some() {
        let cpu: Vec<&str> = fleet
            .seats
            .iter()
            .filter(|s| s.host == host && s.gpus.is_empty())
            .map(|s| s.name.as_str())
            .collect();
        if !cpu.is_empty() {
            notes.push(format!(
                "GPU {index} is read on host {host}, yet seat(s) {} are planned on the CPU (their host declares gpus = 0, or their launch hides every GPU); if they use this GPU, declare `gpus` under [hosts.{host}]",
                cpu.join(", ")
            ));
        }
    }

    // Map processes to seats.
    let mut measured: BTreeMap<String, MeasuredSeat> = BTreeMap::new();
    let mut other = Vec::new();
    if let Some(r) = reading {
        for p in &r.processes {
            let facts = proc_facts(p.pid);
            match seat_of(&facts, &seats_here, container_names) {
                Some((s, how)) => {
                    let m = measured
                        .entry(s.name.clone())
                        .or_insert_with(|| MeasuredSeat {
                            pids: Vec::new(),
                            bytes: 0,
                            uptime_s: None,
                            matched_by: how,
                        });
                    m.pids.push(p.pid);
                    m.bytes = m.bytes.saturating_add(p.used_bytes.unwrap_or(0));
                    m.uptime_s = m.uptime_s.max(facts.uptime_s);
                    if p.used_bytes.is_none() {
                        warnings.push(format!(
                            "pid {} of seat {}: the driver does not report its memory",
                            p.pid, s.name
                        ));
                    }
                }
                None => other.push(p.clone()),
            }
        }
    }

    let mut seats = Vec::new();
    for s in &seats_here {
        let claim = seat_claim(s, index, total, &opts.overheads);
        let m = measured.remove(&s.name);
        if let (Some(m), Some(exp)) = (&m, claim.expected_bytes)
            && m.bytes > exp
            && claim.unpriced.is_empty()
        {
            warnings.push(format!(
                "seat {} holds {} measured against {} claimed (+{} outside its flags): claims understate it",
                s.name,
                gib(m.bytes),
                gib(exp),
                gib(m.bytes - exp)
            ));
        }
        if let Some(up) = m.as_ref().and_then(|m| m.uptime_s)
            && up >= opts.long_uptime_s
        {
            notes.push(format!(
                "seat {} has been up {}: footprints grow with uptime (seed 003: 38.5 GiB fresh, 45.6 GiB after three days, same flags); measure headroom against a freshly started seat",
                s.name,
                uptime_words(up)
            ));
        }
        let effective = m.as_ref().map(|m| m.bytes).or(claim.expected_bytes);
        seats.push(SeatOnGpu {
            claim,
            measured: m,
            effective_bytes: effective,
        });
    }

    // Seats on one host and port are never up together: each group counts its largest member.
    let groups = alternative_groups(&seats_here);
    let mut alternatives = Vec::new();
    let mut util_sum = 0.0;
    let mut claimed: Option<u64> = Some(0);
    let mut planned_seats: Option<u64> = Some(0);
    for g in &groups {
        let members: Vec<&SeatOnGpu> = g.iter().filter_map(|&i| seats.get(i)).collect();
        util_sum += members
            .iter()
            .filter_map(|m| m.claim.gpu_memory_utilization)
            .fold(0.0, f64::max);
        let claim_max = members
            .iter()
            .map(|m| m.claim.expected_bytes)
            .try_fold(0u64, |acc, x| x.map(|x| acc.max(x)));
        // A running member holds what it holds; an alternative may be swapped in later.
        let running = crate::sat_sum(
            members
                .iter()
                .filter_map(|m| m.measured.as_ref().map(|x| x.bytes)),
        );
        let planned_max = members
            .iter()
            .map(|m| m.effective_bytes)
            .try_fold(running, |acc, x| x.map(|x| acc.max(x)));
        claimed = claimed.zip(claim_max).map(|(a, b)| a.saturating_add(b));
        planned_seats = planned_seats
            .zip(planned_max)
            .map(|(a, b)| a.saturating_add(b));
        if members.len() > 1 {
            let names: Vec<String> = members.iter().map(|m| m.claim.seat.clone()).collect();
            let port = seats_here
                .get(g[0])
                .and_then(|s| s.port)
                .map(|p| p.to_string())
                .unwrap_or_default();
            let largest = members
                .iter()
                .max_by_key(|m| m.claim.expected_bytes.unwrap_or(0))
                .map(|m| {
                    format!(
                        "{} {}",
                        m.claim.seat,
                        m.claim
                            .expected_bytes
                            .map(gib)
                            .unwrap_or_else(|| "unknown".into())
                    )
                })
                .unwrap_or_default();
            let sum = members
                .iter()
                .map(|m| m.claim.expected_bytes)
                .try_fold(0u64, |acc, x| x.map(|x| acc.saturating_add(x)));
            notes.push(format!(
                "seats {} share port {port} on {host}: alternatives, never up together (`bakeoff seat swap`); GPU {index}'s claim counts the larger, {largest}, not the sum{}",
                names.join(" and "),
                sum.map(|s| format!(" ({})", gib(s))).unwrap_or_default()
            ));
            alternatives.push(names);
        }
    }

    // Saturating sums (None when any seat has no claim): sizes come from files, flags and the
    // driver, and a hostile one must not panic the plan.
    let unmapped = crate::sat_sum(other.iter().filter_map(|p| p.used_bytes));
    let planned_use: Option<u64> = planned_seats.map(|u| u.saturating_add(unmapped));
    let signed = |t: u64, u: u64| i64::try_from(i128::from(t) - i128::from(u)).unwrap_or(i64::MIN);
    let headroom_by_claims = total.zip(claimed).map(|(t, c)| signed(t, c));
    let headroom_planned = total.zip(planned_use).map(|(t, u)| signed(t, u));
    let unpriced: Vec<String> = seats
        .iter()
        .filter(|s| s.measured.is_none())
        .flat_map(|s| {
            s.claim
                .unpriced
                .iter()
                .map(move |u| format!("seat {}: {u}", s.claim.seat))
        })
        .collect();
    let upper_bound = !unpriced.is_empty();
    if upper_bound {
        notes.push(format!(
            "claims leave terms unpriced ({}): the headroom is at most what is shown",
            unpriced.join("; ")
        ));
    }
    if util_sum > 1.0 {
        warnings.push(format!(
            "GPU {index}: the utilization flags add up to {util_sum:.2} of the card: the later seat cannot start (vLLM checks its budget against free memory)"
        ));
    }
    if let Some(h) = headroom_planned.or(headroom_by_claims)
        && h < opts.margin_bytes as i64
    {
        warnings.push(format!(
            "GPU {index} on {host}: claims plus overheads leave {}{} of headroom, under the {} margin",
            if upper_bound { "at most " } else { "" },
            gib_signed(i128::from(h)),
            gib(opts.margin_bytes)
        ));
    }
    if total.is_some() && (claimed.is_none() || planned_use.is_none()) {
        notes.push(
            "some seats have no computable claim (see their notes): headroom not computed".into(),
        );
    }
    GpuPlan {
        host: host.to_owned(),
        index,
        name: reading.map(|r| r.name.clone()),
        total_bytes: total,
        total_source,
        seats,
        utilization_sum: util_sum,
        claimed_bytes: claimed,
        measured_used_bytes: reading.map(|r| r.used_bytes),
        other_processes: other,
        headroom_by_claims_bytes: headroom_by_claims,
        headroom_planned_bytes: headroom_planned,
        headroom_is_upper_bound: upper_bound,
        alternatives,
        warnings,
        notes,
    }
}
