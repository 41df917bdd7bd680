//! `bakeoff kv`'s arithmetic: KV bytes per token and the tokens a budget holds, from a
//! config.json (vLLM's rules) or a GGUF (llama.cpp's buffers and slots), cross-checked against an
//! engine log. The binary validates the flags into a [`KvRequest`] and prints the [`KvReport`].

use std::path::{Path, PathBuf};

use bakeoff_model::{
    EngineLogFacts, GgufKvGeometry, HfConfig, KvCacheDtype, KvCostOptions, LlamaCppKvParams,
    ModelError, kv_capacity, kv_cost, llamacpp_ctx_for_budget, llamacpp_kv_buffers,
    llamacpp_slot_context, pool_over_max_len_ratio, read_gguf_file,
};
use serde_json::{Map, Value};

use bakeoff_host::units::gib_to_bytes;
use bakeoff_term::units::gib;

/// What went wrong while sizing the KV cache: the message names the thing and the fix.
#[derive(Debug, thiserror::Error)]
pub enum KvError {
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error("{0}")]
    Invalid(String),
    #[error("cannot serialize the KV report: {0}")]
    Json(#[from] serde_json::Error),
}

/// Validated inputs (every number already checked positive).
#[derive(Debug, Clone)]
pub struct KvRequest {
    /// A checkpoint directory, its config.json, or a .gguf file.
    pub path: PathBuf,
    pub max_model_len: Option<u64>,
    pub budget_gib: Option<f64>,
    /// vLLM `--kv-cache-dtype` (config.json only).
    pub kv_cache_dtype: KvCacheDtype,
    pub tp: u64,
    /// The parsed engine log to cross-check against.
    pub log: Option<EngineLogFacts>,
    /// llama.cpp `-c`, `-np`, `-kvu`, `-ctk`, `-ctv` (GGUF only; cache types lowercase).
    pub ctx: Option<u64>,
    pub parallel: u64,
    pub kv_unified: bool,
    pub cache_type_k: String,
    pub cache_type_v: String,
}

impl KvRequest {
    /// A `.gguf` path is sized by llama.cpp's rules, anything else by vLLM's.
    pub fn is_gguf(path: &Path) -> bool {
        path.extension().is_some_and(|x| x == "gguf")
    }
}

/// The answer: a header line, warnings, the arithmetic lines, and the same as JSON.
#[derive(Debug, Clone, Default)]
pub struct KvReport {
    /// The header line first, then the arithmetic (warnings are printed between them).
    pub lines: Vec<String>,
    pub warnings: Vec<String>,
    pub json: Map<String, Value>,
    /// The computed KV buffers or slots disagree with the log.
    pub mismatch: bool,
}

/// Size the KV cache of `req.path`.
pub fn kv_report(req: &KvRequest) -> Result<KvReport, KvError> {
    let mut r = KvReport::default();
    if KvRequest::is_gguf(&req.path) {
        gguf(req, &mut r)?;
    } else {
        hf_config(req, &mut r)?;
    }
    if let Some(l) = &req.log {
        r.json.insert("log".into(), serde_json::to_value(l)?);
    }
    r.json
        .insert("warnings".into(), serde_json::to_value(&r.warnings)?);
    Ok(r)
}

fn unified(req: &KvRequest) -> &'static str {
    if req.kv_unified { " -kvu" } else { "" }
}

/// llama.cpp's buffers for a GGUF.
fn gguf(req: &KvRequest, r: &mut KvReport) -> Result<(), KvError> {
    let (path, parallel) = (&req.path, req.parallel);
    let g = read_gguf_file(path)?;
    let geo = GgufKvGeometry::from_gguf(&g, path)?;
    // llama.cpp's n_ctx_train: the GGUF's context_length.
    let n_ctx_train = g.context_length().filter(|t| *t > 0);
    let ctx = req.ctx.or(n_ctx_train).unwrap_or(4096);
    let params = LlamaCppKvParams {
        cache_type_k: req.cache_type_k.to_ascii_lowercase(),
        cache_type_v: req.cache_type_v.to_ascii_lowercase(),
        ..LlamaCppKvParams::from_server_flags(ctx, parallel, req.kv_unified)
    };
    let est = llamacpp_kv_buffers(&geo, &params).ok_or_else(|| {
        KvError::Invalid(format!(
            "-c {ctx}: the KV buffers overflow, or a row of {}/{} is not whole quantization blocks; fix: a smaller -c or another cache type",
            params.cache_type_k, params.cache_type_v
        ))
    })?;
    r.lines.push(format!(
        "{}: {} ({} layers, {} sliding, window {}, training context {}); llama.cpp -c {ctx} -np {parallel}{} -ctk {} -ctv {}",
        path.display(),
        geo.architecture,
        geo.block_count,
        geo.swa_layers.iter().filter(|s| **s).count(),
        window_words(geo.sliding_window),
        n_ctx_train.map_or_else(|| "unknown".to_owned(), |t| format!("{t}")),
        unified(req),
        params.cache_type_k,
        params.cache_type_v
    ));
    if let Some(train) = n_ctx_train
        && params.cells > train
    {
        r.warnings.push(llamacpp_over_train(
            params.cells,
            train,
            &format!("-c {ctx} -np {parallel}{}", unified(req)),
        ));
    }
    gguf_log_check(req, &est, r);
    // The slot line is printed at the default verbosity: slots, and each one's context
    // (capped at n_ctx_train, as llama-server does).
    let slot_ctx = llamacpp_slot_context(&params, n_ctx_train);
    let mut l = format!("  slots: -np {parallel}, {slot_ctx} tokens each");
    if let Some(slots) = req.log.as_ref().and_then(|l| l.llamacpp_slots.as_ref()) {
        let same = slots.n_slots == parallel
            && slots.n_ctx_slot == slot_ctx
            && slots.kv_unified.is_none_or(|u| u == req.kv_unified);
        l.push_str(&format!(
            "  [the log {}: n_slots = {}, n_ctx_slot = {}{}]",
            if same { "agrees" } else { "DISAGREES" },
            slots.n_slots,
            slots.n_ctx_slot,
            slots
                .kv_unified
                .map(|u| format!(", kv_unified = {u}"))
                .unwrap_or_default()
        ));
        r.mismatch |= !same;
        r.json.insert(
            "log_slots_check".into(),
            Value::String(if same { "agrees" } else { "disagrees" }.into()),
        );
    }
    r.lines.push(l);
    r.lines
        .push(format!("  total KV buffers: {}", gib(est.total_bytes)));
    // The pool ÷ max-model-len ratio, in llama.cpp's terms: -c cells hold the pool.
    if let (Some(m), Some(train)) = (req.max_model_len, n_ctx_train)
        && m > train
    {
        r.warnings.push(format!(
            "--max-model-len {m} is past the model's training context ({train} tokens, GGUF context_length): llama-server caps each slot at {train}, so no sequence is longer than that"
        ));
    }
    let len = req.max_model_len.or(n_ctx_train);
    if let Some(len) = len {
        r.lines.push(format!(
            "  -c {ctx}: the pool holds {:.2}× a full-length ({len}-token) sequence",
            pool_over_max_len_ratio(ctx, len)
        ));
    }
    if let Some(b) = req.budget_gib {
        gguf_budget(req, &geo, &params, gib_to_bytes(b), n_ctx_train, len, r)?;
    }
    r.json
        .insert("geometry".into(), serde_json::to_value(&geo)?);
    r.json
        .insert("llamacpp".into(), serde_json::to_value(&est)?);
    Ok(())
}

/// Each computed KV cache against the log's `llama_kv_cache: size = …` lines.
fn gguf_log_check(req: &KvRequest, est: &bakeoff_model::LlamaCppKvEstimate, r: &mut KvReport) {
    // At default verbosity llama-server b11434 prints no `llama_kv_cache: size =` lines
    // (they come at -lv 4): absent lines are not a mismatch.
    let log = req.log.as_ref();
    let log_has_kv = log.map(|l| !l.llamacpp_kv_caches.is_empty());
    let mut mismatch = false;
    for c in &est.caches {
        let mut l = format!(
            "  {} cache: {} cells × {} streams × {} layers = {}",
            if c.swa { "SWA" } else { "non-SWA" },
            c.cells,
            c.n_stream,
            c.layers,
            gib(c.size_bytes)
        );
        match (log, log_has_kv) {
            (Some(log), Some(true)) => {
                let found = log
                    .llamacpp_kv_caches
                    .iter()
                    .any(|line| c.matches_log(line));
                l.push_str(if found {
                    "  [matches the log]"
                } else {
                    "  [NOT in the log]"
                });
                mismatch |= !found;
            }
            (Some(_), _) => l.push_str("  [not in the log (raise verbosity: -lv 4)]"),
            (None, _) => {}
        }
        r.lines.push(l);
    }
    if log_has_kv == Some(false) {
        r.lines.push("  the log has no `llama_kv_cache: size = …` lines: llama-server prints them only at verbosity 4 (-lv 4); nothing to compare, not a mismatch".into());
    }
    if let Some(has) = log_has_kv {
        r.json.insert(
            "log_kv_check".into(),
            Value::String(
                match (has, mismatch) {
                    (false, _) => "not in the log (raise verbosity: -lv 4)",
                    (true, false) => "matches",
                    (true, true) => "mismatch",
                }
                .into(),
            ),
        );
    }
    r.mismatch |= mismatch;
}

/// The largest `-c` whose KV buffers fit `budget`, capped where no slot could use more.
fn gguf_budget(
    req: &KvRequest,
    geo: &GgufKvGeometry,
    params: &LlamaCppKvParams,
    budget: u64,
    n_ctx_train: Option<u64>,
    len: Option<u64>,
    r: &mut KvReport,
) -> Result<(), KvError> {
    let parallel = req.parallel;
    // `None` only for an unknown cache type, refused by the caller; kept as an error rather
    // than a silent `-c 0` should that ever change.
    let fit = llamacpp_ctx_for_budget(geo, params, budget)
        .ok_or_else(|| KvError::Invalid("KV cache types unknown to bakeoff".into()))?;
    // No slot holds more than n_ctx_train (server-context.cpp `n_ctx_slot`): a -c past
    // n_ctx_train × -np buys cells no sequence can use.
    let useful = n_ctx_train.map(|t| t.saturating_mul(parallel));
    let (answer, capped) = match useful {
        Some(u) if fit > u => (u, true),
        _ => (fit, false),
    };
    let at = LlamaCppKvParams::from_server_flags(answer, parallel, req.kv_unified);
    let mut l = format!(
        "  budget {}: llama-server -c {answer} ({} tokens per sequence with -np {parallel})",
        gib(budget),
        llamacpp_slot_context(&at, n_ctx_train),
    );
    if let Some(len) = len {
        l.push_str(&format!(
            "; the pool holds {:.2}× a full-length ({len}-token) sequence",
            pool_over_max_len_ratio(answer, len)
        ));
    }
    r.lines.push(l);
    if capped && let Some(train) = n_ctx_train {
        let over = LlamaCppKvParams::from_server_flags(fit, parallel, req.kv_unified);
        r.lines.push(format!(
            "  capped at the model's training context ({train} tokens per sequence × -np {parallel}): the budget would hold -c {fit}, but llama-server caps each slot at {train}; the rest of the budget buys nothing"
        ));
        r.warnings.push(llamacpp_over_train(
            over.cells,
            train,
            &format!("the budget's -c {fit}"),
        ));
    }
    r.json.insert(
        "capacity".into(),
        serde_json::json!({
            "bytes_budget": budget,
            "ctx": answer,
            "ctx_for_budget": fit,
            "capped_at_training_context": capped,
            "n_ctx_train": n_ctx_train,
            "max_model_len": len,
            "pool_over_max_len_ratio": len.map(|l| pool_over_max_len_ratio(answer, l)),
        }),
    );
    Ok(())
}

/// vLLM's arithmetic for a config.json.
fn hf_config(req: &KvRequest, r: &mut KvReport) -> Result<(), KvError> {
    let cfg_path = if req.path.is_dir() {
        req.path.join("config.json")
    } else {
        req.path.clone()
    };
    let cfg = HfConfig::read(&cfg_path)?;
    let geo = cfg.kv_geometry()?;
    let cost = kv_cost(
        &geo,
        &KvCostOptions {
            kv_cache_dtype: req.kv_cache_dtype,
            tensor_parallel_size: req.tp,
            mamba_ssm_dtype_bytes: None,
        },
    );
    // vLLM's derived max_model_len: the longest it accepts without the env override.
    let derived = cfg.derived_max_model_len();
    let asked = req
        .max_model_len
        .or(derived.as_ref().map(|d| d.tokens))
        .or(cfg.summary().max_position_embeddings)
        .ok_or_else(|| {
            KvError::Invalid("no context length in config.json: pass --max-model-len".into())
        })?;
    let over = derived.as_ref().filter(|d| asked > d.tokens);
    // The answer is priced at what vLLM accepts; the asked length is shown beside it.
    let len = over.map_or(asked, |d| d.tokens);
    r.lines.push(format!(
        "{}: {} per token in full-attention layers, {} per token in sliding-window layers (window {}), {} state per sequence; tp {} ({} KV heads per GPU{})",
        cfg_path.display(),
        bytes_words(cost.full_attention_bytes_per_token),
        bytes_words(cost.sliding_window_bytes_per_token),
        window_words(cost.sliding_window),
        bytes_words(cost.state_bytes_per_sequence),
        cost.tensor_parallel_size,
        cost.kv_heads_per_gpu,
        if cost.kv_heads_replicated { ", replicated" } else { "" }
    ));
    if let Some(d) = over {
        r.warnings.push(format!(
            "--max-model-len {asked} is past the model's context: vLLM derives {} ({} in config.json{}) and refuses to start (`User-specified max_model_len ({asked}) is greater than the derived max_model_len ({} …)`) unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1, with which positions past {} give NaN under RoPE (vllm/config/model.py `_get_and_verify_max_len`); the answer below is capped at {}",
            d.tokens,
            d.key,
            d.rope_scaling
                .as_deref()
                .map(|r| format!(", {r}"))
                .unwrap_or_default(),
            d.key,
            d.tokens,
            d.tokens
        ));
    }
    r.lines.push(format!(
        "  one {len}-token sequence: {}",
        gib(cost.bytes_per_sequence(len))
    ));
    let budget = req.budget_gib.map(gib_to_bytes).or_else(|| {
        req.log
            .as_ref()?
            .vllm_available_kv_cache_gib
            .map(gib_to_bytes)
    });
    if let Some(b) = budget {
        let cap = kv_capacity(b, &cost, len);
        r.lines.push(format!(
            "  budget {}: {} tokens; the pool holds {:.2}× a full-length ({len}-token) sequence{}",
            gib(b),
            cap.tokens,
            cap.pool_over_max_len_ratio,
            if over.is_some() {
                format!(" (capped at the model's {len} tokens, not the {asked} asked)")
            } else {
                String::new()
            }
        ));
        if over.is_some() {
            let at_asked = kv_capacity(b, &cost, asked);
            r.lines.push(format!(
                "  with VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 at {asked}: {} tokens; the pool holds {:.2}× a full-length ({asked}-token) sequence",
                at_asked.tokens, at_asked.pool_over_max_len_ratio
            ));
        }
        if let Some(logged) = req.log.as_ref().and_then(|l| l.vllm_kv_cache_tokens) {
            // The log is of a running engine: compare at the length it ran with.
            let ran = req
                .log
                .as_ref()
                .and_then(|l| l.vllm_max_concurrency.as_ref())
                .map_or(asked, |c| c.tokens_per_request);
            let computed = kv_capacity(b, &cost, ran).tokens;
            let diff = (computed as f64 - logged as f64) / logged.max(1) as f64 * 100.0;
            r.lines.push(format!(
                "  vLLM logged KV cache size: {logged} tokens ({:.2}× of {ran}); computed {:+.1}% from it",
                pool_over_max_len_ratio(logged, ran),
                diff
            ));
        }
        r.json
            .insert("capacity".into(), serde_json::to_value(&cap)?);
    } else {
        r.lines.push(
            "  no budget: pass --budget-gib, or --log with vLLM's `Available KV cache memory` line"
                .into(),
        );
    }
    if let Some(d) = &derived {
        r.json
            .insert("derived_max_model_len".into(), serde_json::to_value(d)?);
    }
    r.json
        .insert("geometry".into(), serde_json::to_value(&geo)?);
    r.json.insert("cost".into(), serde_json::to_value(&cost)?);
    Ok(())
}

/// What llama.cpp does when a slot's context passes the training context (b11434:
/// src/llama-context.cpp and tools/server/server-context.cpp).
fn llamacpp_over_train(cells: u64, train: u64, what: &str) -> String {
    format!(
        "{what} gives each slot {cells} tokens, past the model's training context ({train} tokens, GGUF context_length): llama.cpp warns `n_ctx_seq ({cells}) > n_ctx_train ({train}) -- possible training context overflow` and llama-server caps each slot at {train} (`the slot context ({cells}) exceeds the training context of the model ({train}) - capping`), while still allocating the KV buffers for all of -c"
    )
}

/// A sliding window in words: its length in tokens, or `none` (never Rust's `Some(512)`).
fn window_words(w: Option<u64>) -> String {
    w.map_or_else(|| "none".to_owned(), |t| format!("{t} tokens"))
}

fn bytes_words(b: u64) -> String {
    if b < 1 << 20 {
        format!("{b} B ({:.1} KiB)", b as f64 / 1024.0)
    } else {
        gib(b)
    }
}
