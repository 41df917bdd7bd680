//! The arithmetic of a step's GPU telemetry, over plain samples (tests feed them directly):
//! per-GPU power, energy (counter delta, else integrated power), utilization and memory; the
//! totals over the GPUs in scope; output tokens per joule.

use std::collections::HashSet;

use bakeoff_artifact::{EnergyMethod, GpuStepTelemetry, GpuTelemetry, TelemetryScope};

/// One GPU at one instant, as a source read it (NVML's reading; nvidia-smi's fills the same).
pub use bakeoff_host::nvml::GpuSample;

/// Every GPU at one instant, `t_s` seconds after the step's start.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub t_s: f64,
    pub gpus: Vec<GpuSample>,
}

/// Which GPUs count: `Some(uuids)` the engine's, `None` all of them; `detail` says how it was told.
#[derive(Debug, Clone, PartialEq)]
pub struct Scope {
    pub engine_gpus: Option<HashSet<String>>,
    pub detail: String,
}

/// Tells the engine's GPUs from `(gpu uuid, pid)` pairs of compute processes. `engine_pid`: the
/// engine's listener (`None`: not found), `tree`: it and its descendants, `how`: how it was
/// looked for, in words.
pub fn scope(
    engine_pid: Option<u32>,
    tree: &HashSet<u32>,
    how: &str,
    processes: &[(String, u32)],
    gpus: &[GpuSample],
) -> Scope {
    let Some(pid) = engine_pid else {
        return Scope {
            engine_gpus: None,
            detail: format!("engine pid unknown ({how}): all GPUs"),
        };
    };
    let mine: HashSet<String> = processes
        .iter()
        .filter(|(_, p)| *p == pid || tree.contains(p))
        .map(|(u, _)| u.clone())
        .collect();
    if mine.is_empty() {
        return Scope {
            engine_gpus: None,
            detail: format!(
                "engine pid {pid} (and its descendants) holds memory on no GPU the driver lists \
                 (a CPU engine, or a container without the host's pid namespace): all GPUs"
            ),
        };
    }
    let mut idx: Vec<String> = gpus
        .iter()
        .filter(|g| mine.contains(&g.uuid))
        .map(|g| g.index.to_string())
        .collect();
    idx.sort();
    idx.dedup();
    Scope {
        engine_gpus: Some(mine),
        detail: format!(
            "engine pid {pid} (or a descendant) holds memory on GPU {}",
            idx.join(", ")
        ),
    }
}

/// The energy between the first and last counter readings, mJ; an error when the counter went
/// backwards (a driver reload resets it; a wrap would too) — then nothing about the step's
/// energy can be said from it.
pub fn counter_delta(first: u64, last: u64) -> Result<u64, CounterBackwards> {
    last.checked_sub(first)
        .ok_or(CounterBackwards { first, last })
}

/// The energy counter's last reading below its first, mJ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "the energy counter went backwards ({first} → {last} mJ: driver reload or wrap); energy unavailable"
)]
pub struct CounterBackwards {
    pub first: u64,
    pub last: u64,
}

/// Trapezoids over `(t_s, watts)` points, mJ; `None` below two points.
pub fn integrate_mj(points: &[(f64, f64)]) -> Option<f64> {
    if points.len() < 2 {
        return None;
    }
    Some(
        points
            .windows(2)
            .map(|w| (w[1].0 - w[0].0).max(0.0) * (w[0].1 + w[1].1) / 2.0)
            .sum::<f64>()
            * 1000.0,
    )
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

fn max(v: &[f64]) -> Option<f64> {
    v.iter().copied().reduce(f64::max)
}

/// One GPU over all samples.
fn per_gpu(uuid: &str, samples: &[Sample], in_scope: bool) -> GpuStepTelemetry {
    let seen: Vec<(f64, &GpuSample)> = samples
        .iter()
        .filter_map(|s| s.gpus.iter().find(|g| g.uuid == uuid).map(|g| (s.t_s, g)))
        .collect();
    let power: Vec<(f64, f64)> = seen
        .iter()
        .filter_map(|(t, g)| g.power_w.map(|p| (*t, p)))
        .collect();
    let watts: Vec<f64> = power.iter().map(|p| p.1).collect();
    let util: Vec<f64> = seen.iter().filter_map(|(_, g)| g.utilization_pct).collect();
    let counters: Vec<u64> = seen.iter().filter_map(|(_, g)| g.energy_mj).collect();
    let (mut energy_mj, mut energy_method, mut energy_unavailable) = (None, None, None);
    if let (Some(first), Some(last), true) =
        (counters.first(), counters.last(), counters.len() >= 2)
    {
        match counter_delta(*first, *last) {
            Ok(d) => {
                energy_mj = Some(d as f64);
                energy_method = Some(EnergyMethod::NvmlEnergyCounter);
            }
            Err(e) => energy_unavailable = Some(e.to_string()),
        }
    } else if let Some(e) = integrate_mj(&power) {
        energy_mj = Some(e);
        energy_method = Some(EnergyMethod::IntegratedPower);
    } else {
        energy_unavailable =
            Some("fewer than two energy or power readings: energy unavailable".into());
    }
    let first = seen.first().map(|(_, g)| *g);
    GpuStepTelemetry {
        index: first.map_or(0, |g| g.index),
        uuid: uuid.to_owned(),
        name: first.map(|g| g.name.clone()).unwrap_or_default(),
        in_scope,
        power_w_mean: mean(&watts),
        power_w_max: max(&watts),
        energy_mj,
        energy_method,
        energy_unavailable,
        utilization_pct_mean: mean(&util),
        utilization_pct_max: max(&util),
        memory_used_bytes_max: seen.iter().filter_map(|(_, g)| g.memory_used_bytes).max(),
    }
}

/// The step's telemetry from its samples. `source`: `nvml` or `nvidia-smi`.
pub fn summarize(
    source: &str,
    interval_ms: u64,
    samples: &[Sample],
    scope: &Scope,
    problems: Vec<String>,
) -> GpuTelemetry {
    let mut uuids: Vec<&str> = Vec::new();
    for g in samples.iter().flat_map(|s| &s.gpus) {
        if !uuids.contains(&g.uuid.as_str()) {
            uuids.push(&g.uuid);
        }
    }
    let counts = |u: &str| scope.engine_gpus.as_ref().is_none_or(|e| e.contains(u));
    let gpus: Vec<GpuStepTelemetry> = uuids
        .iter()
        .map(|u| per_gpu(u, samples, counts(u)))
        .collect();
    let in_scope: Vec<&GpuStepTelemetry> = gpus.iter().filter(|g| g.in_scope).collect();
    // Per-sample sums, only where every GPU in scope had a power reading.
    let sums: Vec<f64> = samples
        .iter()
        .filter_map(|s| {
            in_scope
                .iter()
                .map(|g| s.gpus.iter().find(|x| x.uuid == g.uuid)?.power_w)
                .sum::<Option<f64>>()
        })
        .filter(|_| !in_scope.is_empty())
        .collect();
    let energy_mj: Option<f64> = if in_scope.is_empty() {
        None
    } else {
        in_scope.iter().map(|g| g.energy_mj).sum()
    };
    let energy_method = energy_mj.map(|_| {
        if in_scope
            .iter()
            .all(|g| g.energy_method == Some(EnergyMethod::NvmlEnergyCounter))
        {
            EnergyMethod::NvmlEnergyCounter
        } else {
            EnergyMethod::IntegratedPower
        }
    });
    GpuTelemetry {
        source: source.to_owned(),
        unavailable: None,
        interval_ms,
        samples: samples.len() as u32,
        scope: Some(if scope.engine_gpus.is_some() {
            TelemetryScope::EngineGpus
        } else {
            TelemetryScope::AllGpus
        }),
        scope_detail: scope.detail.clone(),
        power_w_mean: mean(&sums),
        power_w_max: max(&sums),
        energy_j: energy_mj.map(|e| e / 1000.0),
        energy_method,
        output_tokens_per_joule: None,
        gpus,
        problems,
    }
}

/// Output tokens per joule: the step's output tokens ÷ the energy of the GPUs in scope. None
/// without an energy figure, or with none spent (a zero counter delta over a short step).
pub fn with_tokens(mut t: GpuTelemetry, output_tokens: u64) -> GpuTelemetry {
    t.output_tokens_per_joule = t
        .energy_j
        .filter(|j| *j > 0.0)
        .map(|j| output_tokens as f64 / j);
    t
}
