//! Checkpoint inspection for capacity planning and audits: a GGUF key-value reader of our own,
//! safetensors headers, Hugging Face `config.json`, KV-cache bytes per token (GQA, sliding
//! window, MLA, hybrid Mamba, tensor-parallel replication) and the tokens a KV budget holds,
//! the KV buffers llama.cpp allocates, weights size and dtype census, the checkpoint's
//! quantization config checked against a serving flag, and the engine log lines that
//! cross-check all of it.
//!
//! This crate reads files and nothing else: it never touches the network, never starts an
//! engine, and never reads tensor data — only headers, metadata and JSON, with every length
//! taken from a file checked against the file's size, so a truncated or hostile file is an
//! error and never a panic or a huge allocation. Numbers are per GPU rank unless a name says
//! otherwise.

pub mod args;
pub mod checkpoint;
pub mod config;
pub mod error;
pub mod ggml_types;
pub mod gguf;
pub mod kv;
pub mod llamacpp_kv;
pub mod logs;
pub mod quant;
pub mod regular;
pub mod safetensors;

use std::io::Read;
use std::path::Path;

pub use checkpoint::{
    CheckpointReport, WeightsFormat, WeightsSummary, audit_seat_checkpoint, blocks_start,
    check_serving_flag, inspect_checkpoint,
};
pub use config::{ConfigSummary, DerivedMaxLen, HfConfig, kv_geometry_from_config};
pub use error::{ModelError, Result};
pub use gguf::{GgufFile, GgufValue, read_gguf, read_gguf_file};
pub use kv::{
    AttentionKind, KvCacheDtype, KvCapacity, KvCost, KvCostOptions, KvGeometry, MambaGeometry,
    kv_capacity, kv_cost, pool_over_max_len_ratio, vllm_sliding_window_tokens,
};
pub use llamacpp_kv::{
    GgufKvGeometry, LlamaCppKvCache, LlamaCppKvEstimate, LlamaCppKvParams, llamacpp_ctx_for_budget,
    llamacpp_kv_buffers, llamacpp_slot_context,
};
pub use logs::{EngineLogFacts, LlamaCppKvLine, LlamaCppSlots, parse_engine_log};
pub use quant::{Finding, QuantizationInfo, Severity, check_quantization_flag};
pub use safetensors::{SafetensorsSummary, read_safetensors_header, read_safetensors_index};

/// Reads a small text file (JSON), refusing files over `max` bytes before reading them.
pub(crate) fn read_small_text(path: &Path, max: u64) -> Result<String> {
    let file = regular::open_regular(path).map_err(|e| ModelError::io(path, e))?;
    let len = file.metadata().map_err(|e| ModelError::io(path, e))?.len();
    if len > max {
        return Err(ModelError::malformed(
            path,
            format!("{len} bytes, more than the {max} a file of this kind can be"),
            "point at the right file",
        ));
    }
    let mut text = String::new();
    file.take(max)
        .read_to_string(&mut text)
        .map_err(|e| ModelError::io(path, e))?;
    Ok(text)
}
