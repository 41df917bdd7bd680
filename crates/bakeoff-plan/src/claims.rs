//! What each seat claims on a GPU, by the rules of its engine.
//!
//! vLLM (engine-facts.md §1, fact 1): the budget is `gpu_memory_utilization × total`, checked
//! against free memory at start (vllm/v1/worker/gpu_worker.py). It holds weights, peak
//! activations and the KV cache. The CUDA context and NCCL buffers are allocated before the
//! profiling snapshot and sit **outside** it. CUDA graphs: before v0.21 they were not counted
//! and spilled past the budget (vllm PR #21489, RFC #27951); since v0.21.0 vLLM estimates them
//! inside the budget by default (PR #30515, `VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS`) — an
//! estimate that has been wrong both ways (#45178, #57475). An unknown version is priced by the
//! older rule, which charges more. The default utilization is 0.92 (0.9 in older releases).
//!
//! llama.cpp: no budget flag; the seat holds the GGUF's weights plus the KV buffers it
//! allocates for `-c`/`-np` (bakeoff-model's `llamacpp_kv_buffers`, checked against the real
//! log) plus a compute buffer and the CUDA context.
//!
//! Overheads we cannot read from a file are **estimates** with a default, labelled as such in
//! every claim, and overridable: replace them with what `nvidia-smi` shows for a fresh seat.

use std::path::Path;

use serde::{Deserialize, Serialize};

use bakeoff_model::{
    GgufKvGeometry, LlamaCppKvParams, inspect_checkpoint, llamacpp_kv_buffers, read_gguf_file,
};

use crate::fleet::{Engine, PlanSeat, flag_value, has_flag};
use crate::gpu::{MIB, gib};

/// vLLM's current default `--gpu-memory-utilization` (vllm/config/cache.py).
pub const VLLM_DEFAULT_UTILIZATION: f64 = 0.92;

/// Overheads that no file tells us; every one is shown as an estimate.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct Overheads {
    /// CUDA context + non-torch allocations per process.
    pub cuda_context_bytes: u64,
    /// NCCL buffers per rank when tensor-parallel > 1.
    pub nccl_bytes: u64,
    /// CUDA graphs of vLLM before v0.21 (outside the budget); 0 with `--enforce-eager`.
    pub cuda_graph_bytes: u64,
    /// llama.cpp compute buffer per device.
    pub llamacpp_compute_bytes: u64,
}

impl Default for Overheads {
    fn default() -> Self {
        Self {
            cuda_context_bytes: 512 * MIB,
            nccl_bytes: 256 * MIB,
            cuda_graph_bytes: 1024 * MIB,
            llamacpp_compute_bytes: 256 * MIB,
        }
    }
}

/// One term of a claim.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct ClaimPart {
    pub what: String,
    pub bytes: u64,
    /// Inside the engine's own budget (already counted in `budget_bytes`).
    pub inside_budget: bool,
    /// A default estimate, not read from a file or flag.
    pub estimated: bool,
}

/// What one seat claims on one GPU.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct SeatClaim {
    pub seat: String,
    pub engine: Engine,
    pub engine_version: Option<String>,
    pub gpu: u32,
    pub gpu_memory_utilization: Option<f64>,
    /// `utilization × total` for vLLM/SGLang; `None` for llama.cpp (no budget flag).
    pub budget_bytes: Option<u64>,
    /// The rule applied, in words, with the version it depends on.
    pub rule: String,
    pub parts: Vec<ClaimPart>,
    /// Everything the seat is expected to hold on this GPU: the budget plus what lies outside it.
    pub expected_bytes: Option<u64>,
    /// Weights on this GPU (per rank), when the model is a local path.
    pub weights_bytes: Option<u64>,
    pub notes: Vec<String>,
}

/// `major.minor` of a version string (`v0.21.0`, `0.10.1rc1`).
fn major_minor(v: &str) -> Option<(u64, u64)> {
    let v = v.trim().trim_start_matches('v');
    let mut it = v.split('.');
    let major = it.next()?.parse().ok()?;
    let minor: String = it
        .next()?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    Some((major, minor.parse().ok()?))
}

/// Whether a vLLM version counts CUDA graphs inside the budget (v0.21.0 and later).
pub fn vllm_graphs_inside_budget(version: Option<&str>) -> Option<bool> {
    version
        .and_then(major_minor)
        .map(|(ma, mi)| (ma, mi) >= (0, 21))
}

fn part(what: impl Into<String>, bytes: u64, inside: bool, estimated: bool) -> ClaimPart {
    ClaimPart {
        what: what.into(),
        bytes,
        inside_budget: inside,
        estimated,
    }
}

/// Weights per rank for a local checkpoint, with a note when it cannot be read.
fn local_weights(seat: &PlanSeat, notes: &mut Vec<String>) -> Option<u64> {
    let model = seat.model.as_deref()?;
    let path = Path::new(model);
    if !path.exists() {
        notes.push(format!(
            "model `{model}` is not a local path here: weights not sized (give a local path to size them)"
        ));
        return None;
    }
    match inspect_checkpoint(path) {
        Ok(r) => r
            .weights
            .map(|w| w.bytes / seat.tensor_parallel_size.max(1)),
        Err(e) => {
            notes.push(format!("weights not sized: {e}"));
            None
        }
    }
}

/// The claim of `seat` on GPU `gpu` of `total_bytes` (unknown when no reading and no
/// `--gpu-memory-gib`).
pub fn seat_claim(seat: &PlanSeat, gpu: u32, total_bytes: Option<u64>, o: &Overheads) -> SeatClaim {
    let mut notes = Vec::new();
    let mut parts = Vec::new();
    let weights = local_weights(seat, &mut notes);
    let (budget, rule) = match seat.engine {
        Engine::Vllm => {
            let util = seat.gpu_memory_utilization.unwrap_or_else(|| {
                notes.push(format!(
                    "no gpu_memory_utilization: vLLM's default {VLLM_DEFAULT_UTILIZATION} assumed (0.9 before it changed)"
                ));
                VLLM_DEFAULT_UTILIZATION
            });
            let budget = total_bytes.map(|t| (t as f64 * util).round() as u64);
            let graphs_inside = vllm_graphs_inside_budget(seat.engine_version.as_deref());
            let eager = has_flag(&seat.args, &["--enforce-eager"]);
            let graph_rule = match (eager, graphs_inside) {
                (true, _) => "--enforce-eager: no CUDA graphs".to_owned(),
                (false, Some(true)) => "since v0.21 CUDA graphs are estimated inside the budget by default (the estimate can be wrong either way: vllm #45178, #57475)".to_owned(),
                (false, Some(false)) => "before v0.21 CUDA graphs are outside the budget".to_owned(),
                (false, None) => "version unknown: priced by the pre-v0.21 rule (CUDA graphs outside the budget), which charges more; set engine_version".to_owned(),
            };
            let rule = format!(
                "vLLM {}: budget = gpu_memory_utilization {util} × total{}, holding weights, activations and KV; CUDA context{} outside it; {graph_rule}",
                seat.engine_version
                    .as_deref()
                    .unwrap_or("(version unknown)"),
                total_bytes
                    .map(|t| format!(" {} = {}", gib(t), gib((t as f64 * util).round() as u64)))
                    .unwrap_or_default(),
                if seat.tensor_parallel_size > 1 {
                    " and NCCL buffers"
                } else {
                    ""
                },
            );
            if let Some(b) = budget {
                parts.push(part(format!("budget {util} × total"), b, true, false));
                if let Some(w) = weights {
                    parts.push(part("weights (in the budget)", w, true, false));
                    if w >= b {
                        notes.push(format!(
                            "the budget {} is smaller than the weights {}: vLLM will fail (`No available memory for the cache blocks`)",
                            gib(b), gib(w)
                        ));
                    } else {
                        notes.push(format!(
                            "{} of the budget left for activations and KV after the weights",
                            gib(b - w)
                        ));
                    }
                }
            }
            if flag_value(&seat.args, &["--kv-cache-memory-bytes"]).is_some() {
                notes.push("--kv-cache-memory-bytes skips profiling and ignores gpu_memory_utilization: the budget above is not what this seat will hold".into());
            }
            parts.push(part(
                "CUDA context + non-torch",
                o.cuda_context_bytes,
                false,
                true,
            ));
            if seat.tensor_parallel_size > 1 {
                parts.push(part("NCCL buffers", o.nccl_bytes, false, true));
            }
            if !eager && graphs_inside != Some(true) {
                parts.push(part(
                    "CUDA graphs (pre-v0.21 rule)",
                    o.cuda_graph_bytes,
                    false,
                    true,
                ));
            }
            (budget, rule)
        }
        Engine::Sglang | Engine::Generic => {
            let util = seat.gpu_memory_utilization;
            let budget = util
                .zip(total_bytes)
                .map(|(u, t)| (t as f64 * u).round() as u64);
            let rule = match (seat.engine, util) {
                (Engine::Sglang, Some(u)) => format!(
                    "SGLang: mem_fraction_static {u} × total holds weights and the KV pool; activations, CUDA graphs and the CUDA context are outside it"
                ),
                (_, Some(u)) => {
                    format!("generic: gpu_memory_utilization {u} × total, taken as the whole claim")
                }
                (_, None) => "no utilization flag: claim unknown; measure the seat".to_owned(),
            };
            if let Some(b) = budget {
                parts.push(part("budget × total", b, true, false));
            }
            if let Some(w) = weights {
                parts.push(part("weights", w, budget.is_some(), false));
            }
            parts.push(part(
                "CUDA context + non-torch",
                o.cuda_context_bytes,
                false,
                true,
            ));
            if seat.engine == Engine::Sglang && util.is_some() {
                parts.push(part(
                    "CUDA graphs + activations",
                    o.cuda_graph_bytes,
                    false,
                    true,
                ));
            }
            (budget, rule)
        }
        Engine::LlamaCpp => {
            let gpus = seat.gpus.len().max(1) as u64;
            let ngl0 = flag_value(&seat.args, &["-ngl", "--n-gpu-layers", "--gpu-layers"])
                .is_some_and(|v| v == "0");
            if ngl0 {
                notes.push("-ngl 0: weights and KV stay in host memory".into());
            } else {
                if let Some(w) = weights {
                    parts.push(part("weights (GGUF tensors)", w / gpus, false, false));
                }
                if let Some(kv) = llamacpp_kv(seat, &mut notes) {
                    parts.push(part(
                        "KV buffers (-c, -np, cache types)",
                        kv / gpus,
                        false,
                        false,
                    ));
                }
                if gpus > 1 {
                    notes.push(
                        "split evenly across the seat's GPUs (--tensor-split not modelled)".into(),
                    );
                }
            }
            parts.push(part(
                "compute buffer",
                o.llamacpp_compute_bytes,
                false,
                true,
            ));
            parts.push(part("CUDA context", o.cuda_context_bytes, false, true));
            (None, "llama.cpp: no budget flag; claim = weights + KV buffers from the GGUF and -c/-np + compute buffer + CUDA context".to_owned())
        }
    };
    let outside = crate::sat_sum(parts.iter().filter(|p| !p.inside_budget).map(|p| p.bytes));
    let expected = match seat.engine {
        Engine::LlamaCpp => Some(outside),
        _ => budget.map(|b| b.saturating_add(outside)),
    };
    SeatClaim {
        seat: seat.name.clone(),
        engine: seat.engine,
        engine_version: seat.engine_version.clone(),
        gpu,
        gpu_memory_utilization: seat.gpu_memory_utilization,
        budget_bytes: budget,
        rule,
        parts,
        expected_bytes: expected,
        weights_bytes: weights,
        notes,
    }
}

/// KV bytes a llama.cpp seat allocates, from its GGUF and `-c`, `-np`, `-kvu`, `-ctk`, `-ctv`,
/// `-ub`, `--swa-full`.
fn llamacpp_kv(seat: &PlanSeat, notes: &mut Vec<String>) -> Option<u64> {
    let model = seat.model.as_deref()?;
    let path = Path::new(model);
    let g = read_gguf_file(path).ok()?;
    let geo = match GgufKvGeometry::from_gguf(&g, path) {
        Ok(geo) => geo,
        Err(e) => {
            notes.push(format!("KV not sized: {e}"));
            return None;
        }
    };
    let a = &seat.args;
    let num = |names: &[&str]| flag_value(a, names).and_then(|v| v.parse::<u64>().ok());
    let ctx = num(&["-c", "--ctx-size"])
        .filter(|c| *c > 0)
        .or(g.context_length())
        .unwrap_or(4096);
    let np = num(&["-np", "--parallel"]).unwrap_or(1).max(1);
    let kvu = has_flag(a, &["-kvu", "--kv-unified"]);
    let mut p = LlamaCppKvParams::from_server_flags(ctx, np, kvu);
    if let Some(ub) = num(&["-ub", "--ubatch-size"]) {
        p.n_ubatch = ub;
    }
    p.swa_full = has_flag(a, &["--swa-full"]);
    if let Some(t) = flag_value(a, &["-ctk", "--cache-type-k"]) {
        p.cache_type_k = t.to_owned();
    }
    if let Some(t) = flag_value(a, &["-ctv", "--cache-type-v"]) {
        p.cache_type_v = t.to_owned();
    }
    let est = llamacpp_kv_buffers(&geo, &p);
    if est.is_none() {
        notes.push("KV not sized: unknown cache type".into());
    }
    est.map(|e| e.total_bytes)
}
