//! What each seat claims on a GPU, by the rules of its engine.
//!
//! vLLM (vllm/config/cache.py): the budget is `gpu_memory_utilization × total`, checked
//! against free memory at start (vllm/v1/worker/gpu_worker.py). It holds weights, peak
//! activations and the KV cache. The CUDA context and NCCL buffers are allocated before the
//! profiling snapshot and sit **outside** it. CUDA graphs: before v0.21 they were not counted
//! and spilled past the budget (the memory profile ran before graph capture); since v0.21.0
//! vLLM estimates them inside the budget by default (`VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS`)
//! — an estimate, which can be wrong both ways (docs/plan.md). An unknown version is priced by the
//! older rule, which charges more. Without the flag vLLM's default utilization applies: 0.92
//! (vllm/config/cache.py `gpu_memory_utilization: float = Field(default=0.92, …)`; 0.9 in older
//! releases), so a seat without the flag claims 0.92 of the card — never a "minimum".
//!
//! SGLang without `--mem-fraction-static` derives the fraction at start from the card's memory,
//! the chunked-prefill size and the CUDA-graph batch size (python/sglang/srt/server_args.py
//! `_handle_gpu_memory_settings`): no constant to price, so the claim lists it as unpriced.
//!
//! A claim is the sum of the terms we can price plus the list of terms we cannot
//! ([`SeatClaim::unpriced`]); a claim with unpriced terms is a lower bound, and every answer
//! built on it (headroom, coexistence) says so instead of answering YES.
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
    GgufKvGeometry, HfConfig, KvCacheDtype, KvCostOptions, LlamaCppKvParams, inspect_checkpoint,
    kv_cost, llamacpp_kv_buffers, read_gguf_file,
};

use crate::error::Unpriced;
use crate::fleet::{Engine, PlanSeat, flag_value, has_flag};
use bakeoff_host::units::MIB;
use bakeoff_term::units::gib;

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
    /// The utilization the budget is priced at: the seat's flag, or the engine's default
    /// (`utilization_is_default`).
    pub gpu_memory_utilization: Option<f64>,
    /// True when `gpu_memory_utilization` is the engine's default (vLLM 0.92), not a flag.
    pub utilization_is_default: bool,
    /// `utilization × total` for vLLM/SGLang; `None` for llama.cpp (no budget flag).
    pub budget_bytes: Option<u64>,
    /// The rule applied, in words, with the version it depends on.
    pub rule: String,
    pub parts: Vec<ClaimPart>,
    /// Everything the seat is expected to hold on this GPU that we can price: the budget plus
    /// what lies outside it. A lower bound when `unpriced` is not empty.
    pub expected_bytes: Option<u64>,
    /// Terms this seat holds that no file or flag here prices (`weights: model … is not a local
    /// path here`), each with the fix. Empty when `expected_bytes` is the whole claim.
    pub unpriced: Vec<String>,
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

/// Weights per rank for a local checkpoint; `Err(why)` when they cannot be sized here.
fn local_weights(seat: &PlanSeat) -> Result<u64, Unpriced> {
    let Some(model) = seat.model.as_deref() else {
        return Err(Unpriced::NoModel);
    };
    let path = Path::new(model);
    if !path.exists() {
        return Err(Unpriced::NotLocal(model.to_owned()));
    }
    inspect_checkpoint(path)?
        .weights
        .map(|w| w.bytes / seat.tensor_parallel_size.max(1))
        .ok_or_else(|| Unpriced::NoWeights(model.to_owned()))
}

/// KV bytes of one full-length sequence for a local HF checkpoint, per rank, and that length.
pub(crate) fn one_sequence_kv(seat: &PlanSeat) -> Option<(u64, u64)> {
    let model = seat.model.as_deref()?;
    let cfg = HfConfig::read(&Path::new(model).join("config.json")).ok()?;
    let geo = cfg.kv_geometry().ok()?;
    let len = seat
        .max_model_len
        .or(cfg.derived_max_model_len().map(|d| d.tokens))
        .or(cfg.summary().max_position_embeddings)?;
    let dtype = flag_value(&seat.args, &["--kv-cache-dtype"])
        .and_then(KvCacheDtype::parse)
        .unwrap_or(KvCacheDtype::Auto);
    let cost = kv_cost(
        &geo,
        &KvCostOptions {
            kv_cache_dtype: dtype,
            tensor_parallel_size: seat.tensor_parallel_size,
            mamba_ssm_dtype_bytes: None,
        },
    );
    Some((cost.bytes_per_sequence(len), len))
}

/// A claim being built: its priced terms, the terms nothing here prices, and notes.
#[derive(Default)]
struct Terms {
    parts: Vec<ClaimPart>,
    unpriced: Vec<String>,
    notes: Vec<String>,
}

impl Terms {
    fn part(&mut self, what: impl Into<String>, bytes: u64, inside: bool, estimated: bool) {
        self.parts.push(part(what, bytes, inside, estimated));
    }
}

/// The seat's weights per rank, or why they cannot be sized here.
struct Weights {
    bytes: Option<u64>,
    why: Option<Unpriced>,
}

impl Weights {
    fn of(seat: &PlanSeat) -> Self {
        let weights_or = local_weights(seat);
        Self {
            bytes: weights_or.as_ref().ok().copied(),
            why: weights_or.err(),
        }
    }

    /// The weights as an unpriced term, with why.
    fn unpriced(&self) -> String {
        match &self.why {
            Some(why) => format!("weights: {why}"),
            None => "weights: ".to_owned(),
        }
    }
}

/// What an engine's rule decides besides the terms: its budget, the rule in words, and the
/// utilization the budget is priced at.
struct Budget {
    bytes: Option<u64>,
    rule: String,
    utilization: Option<f64>,
    utilization_is_default: bool,
}

/// The claim of `seat` on GPU `gpu` of `total_bytes` (unknown when no reading and no
/// `--gpu-memory-gib`).
pub fn seat_claim(seat: &PlanSeat, gpu: u32, total_bytes: Option<u64>, o: &Overheads) -> SeatClaim {
    let mut t = Terms::default();
    let weights = Weights::of(seat);
    let budget = match seat.engine {
        Engine::Vllm => vllm_claim(seat, total_bytes, o, &weights, &mut t),
        Engine::Sglang | Engine::Generic => fraction_claim(seat, total_bytes, o, &weights, &mut t),
        Engine::LlamaCpp => llamacpp_claim(seat, o, &weights, &mut t),
    };
    let outside = crate::sat_sum(t.parts.iter().filter(|p| !p.inside_budget).map(|p| p.bytes));
    // What we can price: a budget (when there is one) plus everything outside it. With
    // unpriced terms this is a lower bound, and says so through `unpriced`.
    let expected = Some(budget.bytes.map_or(outside, |b| b.saturating_add(outside)));
    SeatClaim {
        seat: seat.name.clone(),
        engine: seat.engine,
        engine_version: seat.engine_version.clone(),
        gpu,
        gpu_memory_utilization: budget.utilization,
        utilization_is_default: budget.utilization_is_default,
        budget_bytes: budget.bytes,
        rule: budget.rule,
        parts: t.parts,
        expected_bytes: expected,
        unpriced: t.unpriced,
        weights_bytes: weights.bytes,
        notes: t.notes,
    }
}

/// vLLM: `gpu_memory_utilization × total` (vLLM's default without the flag), or the weights,
/// the KV and the activations under `--kv-cache-memory-bytes`; the CUDA context, NCCL buffers
/// and (by the pre-v0.21 rule) CUDA graphs outside it.
fn vllm_claim(
    seat: &PlanSeat,
    total_bytes: Option<u64>,
    o: &Overheads,
    weights: &Weights,
    t: &mut Terms,
) -> Budget {
    let utilization_is_default = seat.gpu_memory_utilization.is_none();
    let util = seat.gpu_memory_utilization.unwrap_or_else(|| {
        t.notes.push(format!(
            "no gpu_memory_utilization: vLLM's default {VLLM_DEFAULT_UTILIZATION} applies (vllm/config/cache.py; 0.9 in older releases), and vLLM refuses to start unless that much is free"
        ));
        VLLM_DEFAULT_UTILIZATION
    });
    let budget = total_bytes.map(|t| (t as f64 * util).round() as u64);
    let graphs_inside = vllm_graphs_inside_budget(seat.engine_version.as_deref());
    let eager = has_flag(&seat.args, &["--enforce-eager"]);
    let rule = vllm_rule(
        seat,
        util,
        utilization_is_default,
        total_bytes,
        vllm_graph_rule(eager, graphs_inside),
    );
    let kv_bytes_flag = flag_value(&seat.args, &["--kv-cache-memory-bytes"]);
    match (budget, kv_bytes_flag) {
        (_, Some(v)) => vllm_fixed_kv_terms(v, weights, t),
        (Some(b), None) => {
            let default = if utilization_is_default {
                " (default)"
            } else {
                ""
            };
            t.part(format!("budget {util}{default} × total"), b, true, false);
            vllm_weights_in_budget(seat, b, weights, t);
        }
        (None, None) => t
            .unpriced
            .push("budget: the GPU's total memory is unknown; pass --gpu-memory-gib, or set gpu_memory_gib \
                 under [hosts.NAME] in the fleet file".into()),
    }
    t.part(
        "CUDA context + non-torch",
        o.cuda_context_bytes,
        false,
        true,
    );
    if seat.tensor_parallel_size > 1 {
        t.part("NCCL buffers", o.nccl_bytes, false, true);
    }
    if !eager && graphs_inside != Some(true) {
        t.part(
            "CUDA graphs (pre-v0.21 rule)",
            o.cuda_graph_bytes,
            false,
            true,
        );
    }
    Budget {
        bytes: budget.filter(|_| kv_bytes_flag.is_none()),
        rule,
        utilization: Some(util),
        utilization_is_default,
    }
}

/// Where vLLM's CUDA graphs lie, in words.
fn vllm_graph_rule(eager: bool, graphs_inside: Option<bool>) -> &'static str {
    match (eager, graphs_inside) {
        (true, _) => "--enforce-eager: no CUDA graphs",
        (false, Some(true)) => {
            "since v0.21 CUDA graphs are estimated inside the budget by default (an estimate, which can be wrong either way)"
        }
        (false, Some(false)) => "before v0.21 CUDA graphs are outside the budget",
        (false, None) => {
            "version unknown: priced by the pre-v0.21 rule (CUDA graphs outside the budget), which charges more; set engine_version"
        }
    }
}

/// vLLM's rule in words: the budget, what it holds and what lies outside it.
fn vllm_rule(
    seat: &PlanSeat,
    util: f64,
    utilization_is_default: bool,
    total_bytes: Option<u64>,
    graph_rule: &str,
) -> String {
    format!(
        "vLLM {}: budget = gpu_memory_utilization {util}{} × total{}, holding weights, activations and KV; CUDA context{} outside it; {graph_rule}",
        seat.engine_version
            .as_deref()
            .unwrap_or("(version unknown)"),
        if utilization_is_default {
            " (vLLM's default)"
        } else {
            ""
        },
        total_bytes
            .map(|t| format!(" {} = {}", gib(t), gib((t as f64 * util).round() as u64)))
            .unwrap_or_default(),
        if seat.tensor_parallel_size > 1 {
            " and NCCL buffers"
        } else {
            ""
        },
    )
}

/// `--kv-cache-memory-bytes V`: vLLM skips profiling and ignores the utilization
/// (cache.py): the seat holds the weights, this much KV, and its activations.
fn vllm_fixed_kv_terms(v: &str, weights: &Weights, t: &mut Terms) {
    t.notes.push("--kv-cache-memory-bytes skips profiling and ignores gpu_memory_utilization: priced as weights + that KV + activations".into());
    match weights.bytes {
        Some(w) => t.part("weights", w, false, false),
        None => t.unpriced.push(weights.unpriced()),
    }
    match parse_bytes_flag(v) {
        Some(kv) => t.part("KV (--kv-cache-memory-bytes)", kv, false, false),
        None => t.unpriced.push(format!(
            "KV: --kv-cache-memory-bytes {v} is not a byte count"
        )),
    }
    t.unpriced
        .push("peak activations: profiled by vLLM at start; measure a fresh seat".into());
}

/// The weights inside a vLLM budget of `b` bytes: what is left for activations and KV, and
/// whether one full-length sequence still fits.
fn vllm_weights_in_budget(seat: &PlanSeat, b: u64, weights: &Weights, t: &mut Terms) {
    if let Some(why) = &weights.why {
        t.notes.push(format!(
            "weights not sized ({why}): they lie inside the budget, so the claim does not depend on them"
        ));
    }
    let Some(w) = weights.bytes else { return };
    t.part("weights (in the budget)", w, true, false);
    if w >= b {
        t.notes.push(format!(
            "the budget {} is smaller than the weights {}: vLLM will fail (`No available memory for the cache blocks`)",
            gib(b),
            gib(w)
        ));
        return;
    }
    t.notes.push(format!(
        "{} of the budget left for activations and KV after the weights",
        gib(b - w)
    ));
    if let Some((kv, len)) = one_sequence_kv(seat)
        && b - w < kv
    {
        t.notes.push(format!(
            "one {len}-token sequence needs {} of KV, more than the {} left after the weights: vLLM refuses to start (kv_cache_utils.py `_check_enough_kv_cache_memory`)",
            gib(kv),
            gib(b - w)
        ));
    }
}

/// SGLang and generic engines: a memory fraction × total when the seat sets one, plus the
/// CUDA context (and for SGLang its CUDA graphs and activations) outside it.
fn fraction_claim(
    seat: &PlanSeat,
    total_bytes: Option<u64>,
    o: &Overheads,
    weights: &Weights,
    t: &mut Terms,
) -> Budget {
    let util = seat.gpu_memory_utilization;
    let budget = util
        .zip(total_bytes)
        .map(|(u, t)| (t as f64 * u).round() as u64);
    match (budget, util) {
        (Some(b), _) => t.part("budget × total", b, true, false),
        (None, Some(_)) => t
            .unpriced
            .push("budget: the GPU's total memory is unknown; pass --gpu-memory-gib, or set gpu_memory_gib \
                 under [hosts.NAME] in the fleet file".into()),
        (None, None) if seat.engine == Engine::Sglang => t.unpriced.push(
            "budget: SGLang derives mem_fraction_static at start; set --mem-fraction-static (or gpu_memory_utilization in the fleet file) to plan this seat".into(),
        ),
        (None, None) => t.unpriced.push(
            "budget: no utilization flag; set gpu_memory_utilization in the fleet file, or measure the running seat".into(),
        ),
    }
    match weights.bytes {
        Some(w) => t.part("weights", w, budget.is_some(), false),
        // Inside a known budget the weights change nothing; outside one they are a term.
        None if budget.is_none() => t.unpriced.push(weights.unpriced()),
        None => {}
    }
    t.part(
        "CUDA context + non-torch",
        o.cuda_context_bytes,
        false,
        true,
    );
    if seat.engine == Engine::Sglang && util.is_some() {
        t.part("CUDA graphs + activations", o.cuda_graph_bytes, false, true);
    }
    Budget {
        bytes: budget,
        rule: fraction_rule(seat.engine, util),
        utilization: util,
        utilization_is_default: false,
    }
}

/// The SGLang / generic rule in words.
fn fraction_rule(engine: Engine, util: Option<f64>) -> String {
    match (engine, util) {
        (Engine::Sglang, Some(u)) => format!(
            "SGLang: mem_fraction_static {u} × total holds weights and the KV pool; activations, CUDA graphs and the CUDA context are outside it"
        ),
        (Engine::Sglang, None) => "SGLang without --mem-fraction-static: the fraction is derived at start from the card's memory, chunked prefill and CUDA-graph batch size (server_args.py `_handle_gpu_memory_settings`); not priced here".to_owned(),
        (_, Some(u)) => {
            format!("generic: gpu_memory_utilization {u} × total, taken as the whole claim")
        }
        (_, None) => "no utilization flag: claim unknown; measure the seat".to_owned(),
    }
}

/// llama.cpp: no budget flag; the GGUF's weights and KV buffers split over the seat's GPUs
/// (none with `-ngl 0`), a compute buffer and the CUDA context.
fn llamacpp_claim(seat: &PlanSeat, o: &Overheads, weights: &Weights, t: &mut Terms) -> Budget {
    let gpus = seat.gpus.len().max(1) as u64;
    let ngl0 = flag_value(&seat.args, &["-ngl", "--n-gpu-layers", "--gpu-layers"])
        .is_some_and(|v| v == "0");
    if ngl0 {
        t.notes
            .push("-ngl 0: weights and KV stay in host memory".into());
    } else {
        match weights.bytes {
            Some(w) => t.part("weights (GGUF tensors)", w / gpus, false, false),
            None => t.unpriced.push(weights.unpriced()),
        }
        match llamacpp_kv(seat, &mut t.notes) {
            Ok(kv) => t.part("KV buffers (-c, -np, cache types)", kv / gpus, false, false),
            Err(why) => t.unpriced.push(format!("KV buffers: {why}")),
        }
        if gpus > 1 {
            t.notes
                .push("split evenly across the seat's GPUs (--tensor-split not modelled)".into());
        }
    }
    t.part("compute buffer", o.llamacpp_compute_bytes, false, true);
    t.part("CUDA context", o.cuda_context_bytes, false, true);
    Budget {
        bytes: None,
        rule: "llama.cpp: no budget flag; claim = weights + KV buffers from the GGUF and -c/-np + compute buffer + CUDA context".to_owned(),
        utilization: seat.gpu_memory_utilization,
        utilization_is_default: false,
    }
}

/// `--kv-cache-memory-bytes` as vLLM reads it: a number of bytes, optionally with a k/m/g/t
/// (decimal) or ki/mi/gi/ti (binary) suffix.
fn parse_bytes_flag(v: &str) -> Option<u64> {
    let t = v.trim().to_ascii_lowercase();
    let split = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num.trim().parse().ok()?;
    let mult: f64 = match unit.trim_end_matches('b') {
        "" => 1.0,
        "k" => 1e3,
        "m" => 1e6,
        "g" => 1e9,
        "t" => 1e12,
        "ki" => 1024.0,
        "mi" => 1024.0 * 1024.0,
        "gi" => 1024.0 * 1024.0 * 1024.0,
        "ti" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    let b = n * mult;
    (b.is_finite() && b >= 1.0 && b < u64::MAX as f64).then(|| b.round() as u64)
}

/// KV bytes a llama.cpp seat allocates, from its GGUF and `-c`, `-np`, `-kvu`, `-ctk`, `-ctv`,
/// `-ub`, `--swa-full`; `Err(why)` when they cannot be sized.
fn llamacpp_kv(seat: &PlanSeat, notes: &mut Vec<String>) -> Result<u64, Unpriced> {
    let Some(model) = seat.model.as_deref() else {
        return Err(Unpriced::NoGgufModel);
    };
    let path = Path::new(model);
    if !path.exists() {
        return Err(Unpriced::GgufNotLocal(model.to_owned()));
    }
    let g = read_gguf_file(path)?;
    let geo = GgufKvGeometry::from_gguf(&g, path)?;
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
    if let Some(train) = g.context_length()
        && p.cells > train
    {
        notes.push(format!(
            "-c {ctx} gives each slot {} tokens, past the model's training context {train}: llama-server caps each slot at {train} (`the slot context … exceeds the training context of the model … - capping`); the KV buffers are still allocated for -c",
            p.cells
        ));
    }
    llamacpp_kv_buffers(&geo, &p)
        .map(|e| e.total_bytes)
        .ok_or_else(|| Unpriced::CacheType {
            k: p.cache_type_k.clone(),
            v: p.cache_type_v.clone(),
        })
}
