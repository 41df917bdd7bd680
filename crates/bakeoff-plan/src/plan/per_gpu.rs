//! The plan of one GPU: its size, the processes read on it mapped to seats, each seat's claim
//! beside its measurement, the groups of alternatives, and the two headrooms.

use std::collections::BTreeMap;

use super::types::{FleetView, GpuPlan, MeasuredSeat, PlanOptions, SeatOnGpu};
use crate::claims::seat_claim;
use crate::fleet::PlanSeat;
use bakeoff_host::procinfo::ProcFacts;
use bakeoff_host::units::gib_to_bytes;
use bakeoff_host::{GpuProcess, GpuReading};
use bakeoff_term::units::{gib, gib_signed};

/// The plan of GPU `index` of `host`: its seats' claims beside what was measured, the
/// headrooms, and what they warn of.
#[allow(clippy::too_many_arguments)]
pub(super) fn gpu_plan(
    fleet: &FleetView,
    host: &str,
    index: u32,
    reading: Option<&GpuReading>,
    proc_facts: &dyn Fn(u32) -> ProcFacts,
    container_names: &BTreeMap<String, String>,
    opts: &PlanOptions,
    ctx: &ReadingContext<'_>,
) -> GpuPlan {
    let site = GpuSite {
        fleet,
        host,
        index,
        reading,
        label: ctx.label,
    };
    let mut f = Findings::default();
    let (total, total_source) = site.size();
    site.reading_findings(ctx.missing, total, &mut f);
    let seats_here = site.seats_here();
    let (measured, other) = site.map_processes(&seats_here, proc_facts, container_names, &mut f);
    let seats = seats_on_gpu(&seats_here, index, total, opts, measured, &mut f);
    let groups = site.group_totals(&seats_here, &seats, &mut f);
    let headroom = site.headroom(total, &groups, &seats, &other, opts, &mut f);
    GpuPlan {
        host: host.to_owned(),
        index,
        name: reading.map(|r| r.name.clone()),
        total_bytes: total,
        measured_source: reading.map(|_| site.reading_label()),
        total_source,
        seats,
        utilization_sum: groups.util_sum,
        claimed_bytes: groups.claimed,
        measured_used_bytes: reading.map(|r| r.used_bytes),
        other_processes: other,
        headroom_by_claims_bytes: headroom.by_claims,
        headroom_planned_bytes: headroom.planned,
        headroom_is_upper_bound: headroom.upper_bound,
        alternatives: groups.alternatives,
        warnings: f.warnings,
        notes: f.notes,
    }
}

/// Where a GPU's reading comes from, and what to say when there is none.
pub(super) struct ReadingContext<'a> {
    /// The channel of another host's reading (`nvidia-smi over ssh ops@gpu2`); `None` on this
    /// machine, where the reading's own source names it.
    pub label: Option<&'a str>,
    /// The note when this GPU has no reading (why, and that the plan uses claims).
    pub missing: &'a str,
}

/// The warnings and notes of one GPU's plan, in the order they are found.
#[derive(Default)]
struct Findings {
    warnings: Vec<String>,
    notes: Vec<String>,
}

/// One GPU being planned: where it is and what was read on it.
struct GpuSite<'a> {
    fleet: &'a FleetView,
    host: &'a str,
    index: u32,
    reading: Option<&'a GpuReading>,
    /// The remote channel the reading came through, when not this machine.
    label: Option<&'a str>,
}

/// The sums over a GPU's seats, each group of alternatives counted as its largest member.
struct GroupTotals {
    alternatives: Vec<Vec<String>>,
    util_sum: f64,
    /// Σ claims; `None` when some seat has no claim.
    claimed: Option<u64>,
    /// Σ measured-else-claimed footprints of the seats; `None` when some seat has neither.
    planned_seats: Option<u64>,
}

/// The two headrooms of a GPU.
struct Headroom {
    by_claims: Option<i64>,
    planned: Option<i64>,
    /// Some claim has unpriced terms: the headrooms are at most what is shown.
    upper_bound: bool,
}

/// Processes on a GPU mapped to the seats they belong to, and the ones that belong to none.
type ProcessMap = (BTreeMap<String, MeasuredSeat>, Vec<GpuProcess>);

impl GpuSite<'_> {
    /// The GPU's total memory and where it comes from: the reading, else `--gpu-memory-gib`.
    fn size(&self) -> (Option<u64>, Option<String>) {
        let file_mem = self
            .fleet
            .gpu_memory
            .get(&(self.host.to_owned(), self.index))
            .copied();
        match (self.reading, file_mem) {
            (Some(r), _) => (Some(r.total_bytes), Some(self.reading_label())),
            (None, Some(m)) => (Some(gib_to_bytes(m)), Some("--gpu-memory-gib".to_owned())),
            (None, None) => (None, None),
        }
    }

    /// Where this GPU's reading came from: the remote channel, else the local source.
    fn reading_label(&self) -> String {
        match (self.label, self.reading.map(|r| r.source)) {
            (Some(l), _) => l.to_owned(),
            (None, Some(bakeoff_host::ReadingSource::Nvml)) => "nvml".to_owned(),
            (None, _) => "nvidia-smi".to_owned(),
        }
    }

    /// What the reading (or its absence) and the size say about this GPU.
    fn reading_findings(&self, missing: &str, total: Option<u64>, f: &mut Findings) {
        let (host, index) = (self.host, self.index);
        if self.reading.is_none() {
            f.notes.push(missing.to_owned());
        }
        if total.is_none() {
            f.warnings.push(format!(
                "GPU {index} on {host}: total memory unknown; fix: pass --gpu-memory-gib (e.g. 94.97 for an H100 NVL), or run the plan on that host"
            ));
        }
        if self.reading.is_some() {
            let cpu: Vec<&str> = self
                .fleet
                .seats
                .iter()
                .filter(|s| s.host == host && s.gpus.is_empty())
                .map(|s| s.name.as_str())
                .collect();
            if !cpu.is_empty() {
                f.notes.push(format!(
                    "GPU {index} is read on host {host}, yet seat(s) {} are planned on the CPU (their host declares gpus = 0, or their launch hides every GPU); if they use this GPU, declare `gpus` under [hosts.{host}]",
                    cpu.join(", ")
                ));
            }
        }
    }

    /// The seats that sit on this GPU.
    fn seats_here(&self) -> Vec<&PlanSeat> {
        self.fleet
            .seats
            .iter()
            .filter(|s| s.host == self.host && s.gpus.contains(&self.index))
            .collect()
    }

    /// Map the processes read on this GPU to seats.
    fn map_processes(
        &self,
        seats_here: &[&PlanSeat],
        proc_facts: &dyn Fn(u32) -> ProcFacts,
        container_names: &BTreeMap<String, String>,
        f: &mut Findings,
    ) -> ProcessMap {
        let mut measured: BTreeMap<String, MeasuredSeat> = BTreeMap::new();
        let mut other = Vec::new();
        let Some(r) = self.reading else {
            return (measured, other);
        };
        for p in &r.processes {
            let facts = proc_facts(p.pid);
            let Some((s, how)) = seat_of(&facts, seats_here, container_names) else {
                other.push(p.clone());
                continue;
            };
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
                f.warnings.push(format!(
                    "pid {} of seat {}: the driver does not report its memory",
                    p.pid, s.name
                ));
            }
        }
        (measured, other)
    }

    /// Seats on one host and port are never up together: each group counts its largest member.
    fn group_totals(
        &self,
        seats_here: &[&PlanSeat],
        seats: &[SeatOnGpu],
        f: &mut Findings,
    ) -> GroupTotals {
        let mut t = GroupTotals {
            alternatives: Vec::new(),
            util_sum: 0.0,
            claimed: Some(0),
            planned_seats: Some(0),
        };
        for g in &alternative_groups(seats_here) {
            let members: Vec<&SeatOnGpu> = g.iter().filter_map(|&i| seats.get(i)).collect();
            t.util_sum += members
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
            t.claimed = t.claimed.zip(claim_max).map(|(a, b)| a.saturating_add(b));
            t.planned_seats = t
                .planned_seats
                .zip(planned_max)
                .map(|(a, b)| a.saturating_add(b));
            if members.len() > 1 {
                let port = seats_here
                    .get(g[0])
                    .and_then(|s| s.port)
                    .map(|p| p.to_string())
                    .unwrap_or_default();
                let names: Vec<String> = members.iter().map(|m| m.claim.seat.clone()).collect();
                f.notes
                    .push(self.alternatives_note(&names, &port, &members));
                t.alternatives.push(names);
            }
        }
        t
    }

    /// The note on a group of alternatives: which one the claim counts, and what the sum would be.
    fn alternatives_note(&self, names: &[String], port: &str, members: &[&SeatOnGpu]) -> String {
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
        format!(
            "seats {} share port {port} on {}: alternatives, never up together (`bakeoff seat swap`); GPU {}'s claim counts the larger, {largest}, not the sum{}",
            names.join(" and "),
            self.host,
            self.index,
            sum.map(|s| format!(" ({})", gib(s))).unwrap_or_default()
        )
    }

    /// The headrooms, and what they warn of.
    fn headroom(
        &self,
        total: Option<u64>,
        groups: &GroupTotals,
        seats: &[SeatOnGpu],
        other: &[GpuProcess],
        opts: &PlanOptions,
        f: &mut Findings,
    ) -> Headroom {
        let (host, index) = (self.host, self.index);
        // Saturating sums (None when any seat has no claim): sizes come from files, flags and
        // the driver, and a hostile one must not panic the plan.
        let unmapped = crate::sat_sum(other.iter().filter_map(|p| p.used_bytes));
        let planned_use: Option<u64> = groups.planned_seats.map(|u| u.saturating_add(unmapped));
        let signed =
            |t: u64, u: u64| i64::try_from(i128::from(t) - i128::from(u)).unwrap_or(i64::MIN);
        let by_claims = total.zip(groups.claimed).map(|(t, c)| signed(t, c));
        let planned = total.zip(planned_use).map(|(t, u)| signed(t, u));
        let unpriced = unpriced_terms(seats);
        let upper_bound = !unpriced.is_empty();
        if upper_bound {
            f.notes.push(format!(
                "claims leave terms unpriced ({}): the headroom is at most what is shown",
                unpriced.join("; ")
            ));
        }
        let util_sum = groups.util_sum;
        if util_sum > 1.0 {
            f.warnings.push(format!(
                "GPU {index}: the utilization flags add up to {util_sum:.2} of the card: the later seat cannot start (vLLM checks its budget against free memory)"
            ));
        }
        if let Some(h) = planned.or(by_claims)
            && h < opts.margin_bytes as i64
        {
            f.warnings.push(format!(
                "GPU {index} on {host}: claims plus overheads leave {}{} of headroom, under the {} margin",
                if upper_bound { "at most " } else { "" },
                gib_signed(i128::from(h)),
                gib(opts.margin_bytes)
            ));
        }
        if total.is_some() && (groups.claimed.is_none() || planned_use.is_none()) {
            f.notes.push(
                "some seats have no computable claim (see their notes): headroom not computed"
                    .into(),
            );
        }
        Headroom {
            by_claims,
            planned,
            upper_bound,
        }
    }
}

/// Each seat's claim on GPU `index` beside what it was measured to hold, with the warnings and
/// notes that comparison gives.
fn seats_on_gpu(
    seats_here: &[&PlanSeat],
    index: u32,
    total: Option<u64>,
    opts: &PlanOptions,
    mut measured: BTreeMap<String, MeasuredSeat>,
    f: &mut Findings,
) -> Vec<SeatOnGpu> {
    let mut seats = Vec::new();
    for s in seats_here {
        let claim = seat_claim(s, index, total, &opts.overheads);
        let m = measured.remove(&s.name);
        if let (Some(m), Some(exp)) = (&m, claim.expected_bytes)
            && m.bytes > exp
            && claim.unpriced.is_empty()
        {
            f.warnings.push(format!(
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
            f.notes.push(format!(
                "seat {} has been up {}: footprints grow with uptime (docs/field-cases.md F1: 38.5 GiB fresh, 45.6 GiB after three days, same flags); measure headroom against a freshly started seat",
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
    seats
}

/// The unpriced terms of the seats that are not running (a running seat's measurement covers
/// them), each named by its seat.
fn unpriced_terms(seats: &[SeatOnGpu]) -> Vec<String> {
    seats
        .iter()
        .filter(|s| s.measured.is_none())
        .flat_map(|s| {
            s.claim
                .unpriced
                .iter()
                .map(move |u| format!("seat {}: {u}", s.claim.seat))
        })
        .collect()
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
