//! The KV buffers llama.cpp allocates, computed from GGUF metadata, so a plan can predict the
//! `llama_kv_cache: size = …` lines before the server starts.
//!
//! Source: llama.cpp src/llama-kv-cache.cpp and src/llama-kv-cache-iswa.cpp (the builds with
//! per-sequence "streams"), checked against the real log of build b11434 in
//! tests/fixtures/logs/ (both the non-SWA and the SWA line). Each cache holds, per layer, a K tensor of
//! `n_embd_k_gqa × cells × n_stream` and a V tensor of `n_embd_v_gqa × cells × n_stream`, where
//! `n_embd_k_gqa = key_length × head_count_kv(layer)` and `n_stream` is 1 with a unified cache
//! (`-kvu`) and `n_seq_max` (`-np`) without. Models with sliding-window attention get two
//! caches: a non-SWA one of the full size and an SWA one of
//! `pad256(min(cells, n_swa × (unified ? n_seq_max : 1) + n_ubatch))` cells, unless
//! `--swa-full`. Layers with `head_count_kv == 0` (recurrent layers of hybrids) hold no KV.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{ModelError, Result};
use crate::ggml_types::{cache_type_id, row_bytes};
use crate::gguf::{GgufFile, GgufValue};

/// Per-layer KV geometry from GGUF metadata.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct GgufKvGeometry {
    pub architecture: String,
    pub block_count: u64,
    pub head_count_kv: Vec<u64>,
    pub key_length: u64,
    pub value_length: u64,
    pub sliding_window: Option<u64>,
    /// Which layers use sliding-window attention.
    pub swa_layers: Vec<bool>,
    /// Where `swa_layers` came from.
    pub swa_source: String,
}

/// llama.cpp's fixed SWA layer patterns, set in src/llama-model.cpp `load_hparams` by
/// `hparams.set_swa_pattern(n)`: layer `il` slides when `il % n < n − 1`.
fn builtin_swa_pattern(arch: &str) -> Option<u64> {
    match arch {
        "gemma2" | "gpt-oss" => Some(2),
        "cohere2" => Some(4),
        "gemma3" => Some(6),
        _ => None,
    }
}

impl GgufKvGeometry {
    /// Reads the geometry from metadata; `path` only names the file in errors.
    pub fn from_gguf(gguf: &GgufFile, path: &Path) -> Result<Self> {
        let missing = |what: &str| {
            ModelError::malformed(
                path,
                format!("GGUF metadata has no {what}"),
                "use a GGUF converted by a current llama.cpp convert_hf_to_gguf.py",
            )
        };
        let architecture = gguf
            .architecture()
            .ok_or_else(|| missing("general.architecture"))?
            .to_owned();
        let block_count = gguf
            .block_count()
            .ok_or_else(|| missing("<arch>.block_count"))?;
        let head_count_kv = gguf
            .head_count_kv_per_layer()
            .ok_or_else(|| missing("<arch>.attention.head_count_kv"))?;
        if head_count_kv.len() as u64 != block_count {
            return Err(ModelError::malformed(
                path,
                format!(
                    "head_count_kv has {} entries for {block_count} layers",
                    head_count_kv.len()
                ),
                "re-convert the file",
            ));
        }
        let key_length = gguf
            .key_length_or_default()
            .ok_or_else(|| missing("attention.key_length (nor embedding_length/head_count)"))?;
        let value_length = gguf
            .value_length_or_default()
            .ok_or_else(|| missing("attention.value_length"))?;
        let sliding_window = gguf.sliding_window().filter(|w| *w > 0);

        let explicit = gguf
            .get(&format!("{architecture}.attention.sliding_window_pattern"))
            .and_then(GgufValue::as_array)
            .and_then(|a| a.values.as_ref())
            .and_then(|v| v.iter().map(GgufValue::as_bool).collect::<Option<Vec<_>>>())
            .filter(|v| v.len() == head_count_kv.len());
        let (swa_layers, swa_source) = match (sliding_window, explicit) {
            (None, _) => (vec![false; head_count_kv.len()], "no sliding window".into()),
            (Some(_), Some(v)) => (v, "attention.sliding_window_pattern".to_owned()),
            (Some(_), None) => match builtin_swa_pattern(&architecture) {
                Some(n) => (
                    (0..head_count_kv.len() as u64)
                        .map(|il| il % n < n - 1)
                        .collect(),
                    format!(
                        "llama.cpp built-in pattern for {architecture}: every {n}th layer full"
                    ),
                ),
                None => (
                    vec![false; head_count_kv.len()],
                    format!(
                        "sliding_window set but no known layer pattern for {architecture}: all layers priced as full"
                    ),
                ),
            },
        };
        Ok(Self {
            architecture,
            block_count,
            head_count_kv,
            key_length,
            value_length,
            sliding_window,
            swa_layers,
            swa_source,
        })
    }
}

/// The llama-server settings that size the KV cache.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct LlamaCppKvParams {
    /// Cells per stream: `-c` with `-kvu`, `-c / -np` without (llama-server `-c 32768 -np 8`
    /// gives 4096; see [`Self::from_server_flags`]).
    pub cells: u64,
    /// `-np` (parallel sequences).
    pub n_seq_max: u64,
    /// `-kvu`: one stream shared by all sequences.
    pub kv_unified: bool,
    /// `-ub` (default 512).
    pub n_ubatch: u64,
    /// `--swa-full`.
    pub swa_full: bool,
    /// `-ctk`, `-ctv` (default f16).
    pub cache_type_k: String,
    pub cache_type_v: String,
}

impl LlamaCppKvParams {
    /// From llama-server's `-c`, `-np` and `-kvu`, with f16 caches and `-ub 512`.
    pub fn from_server_flags(ctx: u64, parallel: u64, kv_unified: bool) -> Self {
        let parallel = parallel.max(1);
        Self {
            cells: if kv_unified { ctx } else { ctx / parallel },
            n_seq_max: parallel,
            kv_unified,
            n_ubatch: 512,
            swa_full: false,
            cache_type_k: "f16".into(),
            cache_type_v: "f16".into(),
        }
    }
}

/// The context one llama-server slot gets: `n_ctx_seq` (the cells of one stream — `-c / -np`,
/// or `-c` with `-kvu`) capped at the model's training context, as b11434's
/// tools/server/server-context.cpp `n_ctx_slot()` does (it logs `the slot context (N) exceeds the
/// training context of the model (M) - capping`; src/llama-context.cpp warns `n_ctx_seq (N) >
/// n_ctx_train (M) -- possible training context overflow`). `--kv-unified-per-slot` is not
/// modelled. `n_ctx_train` is the GGUF's `context_length`; `None` leaves the cells as they are.
pub fn llamacpp_slot_context(params: &LlamaCppKvParams, n_ctx_train: Option<u64>) -> u64 {
    n_ctx_train
        .filter(|t| *t > 0)
        .map_or(params.cells, |t| params.cells.min(t))
}

/// One KV cache llama.cpp would allocate, in the terms of its log line.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct LlamaCppKvCache {
    pub swa: bool,
    pub cells: u64,
    pub layers: u64,
    pub n_seq_max: u64,
    pub n_stream: u64,
    pub k_bytes: u64,
    pub v_bytes: u64,
    pub size_bytes: u64,
}

/// All KV caches of one llama.cpp context.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct LlamaCppKvEstimate {
    pub caches: Vec<LlamaCppKvCache>,
    pub total_bytes: u64,
}

/// The KV buffers llama.cpp allocates for `geometry` under `params`; `None` when a cache type
/// is unknown or a row is not whole quantization blocks (llama.cpp refuses those too).
pub fn llamacpp_kv_buffers(
    geometry: &GgufKvGeometry,
    params: &LlamaCppKvParams,
) -> Option<LlamaCppKvEstimate> {
    let type_k = cache_type_id(&params.cache_type_k)?;
    let type_v = cache_type_id(&params.cache_type_v)?;
    let n_stream = if params.kv_unified {
        1
    } else {
        params.n_seq_max.max(1)
    };
    let has_swa = geometry.swa_layers.iter().any(|s| *s);
    let mut caches = Vec::new();
    for swa in [false, true] {
        if swa && !has_swa {
            break;
        }
        let cells = if !swa || params.swa_full {
            params.cells
        } else {
            let per = if params.kv_unified {
                params.n_seq_max
            } else {
                1
            };
            let want = geometry
                .sliding_window
                .unwrap_or(0)
                .saturating_mul(per)
                .saturating_add(params.n_ubatch);
            params.cells.min(want).div_ceil(256).saturating_mul(256)
        };
        let mut layers = 0;
        let (mut k_row, mut v_row) = (0u64, 0u64);
        for (il, heads) in geometry.head_count_kv.iter().enumerate() {
            // Only non-SWA layers go in the base cache when there is an SWA cache; all layers
            // when there is not.
            let layer_swa = geometry.swa_layers.get(il).copied().unwrap_or(false);
            if *heads == 0 || (has_swa && layer_swa != swa) {
                continue;
            }
            layers += 1;
            k_row =
                k_row.checked_add(row_bytes(type_k, geometry.key_length.checked_mul(*heads)?)?)?;
            v_row = v_row.checked_add(row_bytes(
                type_v,
                geometry.value_length.checked_mul(*heads)?,
            )?)?;
        }
        let scale = cells.checked_mul(n_stream)?;
        let k_bytes = k_row.checked_mul(scale)?;
        let v_bytes = v_row.checked_mul(scale)?;
        caches.push(LlamaCppKvCache {
            swa,
            cells,
            layers,
            n_seq_max: params.n_seq_max,
            n_stream,
            k_bytes,
            v_bytes,
            size_bytes: k_bytes.checked_add(v_bytes)?,
        });
    }
    let total_bytes = caches
        .iter()
        .try_fold(0u64, |acc, c| acc.checked_add(c.size_bytes))?;
    Some(LlamaCppKvEstimate {
        caches,
        total_bytes,
    })
}

/// The largest llama-server `-c` whose KV buffers fit in `budget_bytes`, with every other
/// setting of `params` kept (`-np`, `-kvu`, `-ub`, cache types). llama.cpp sizes its cache from
/// `-c` (it has no memory-budget flag), so this is "the tokens a KV budget holds" in its terms:
/// the non-SWA cache grows with `-c`, the SWA cache stops growing at its window. `None` when a
/// cache type is unknown; `Some(0)` when not even one cell fits.
pub fn llamacpp_ctx_for_budget(
    geometry: &GgufKvGeometry,
    params: &LlamaCppKvParams,
    budget_bytes: u64,
) -> Option<u64> {
    // An unknown cache type is an answer of its own, checked once.
    cache_type_id(&params.cache_type_k)?;
    cache_type_id(&params.cache_type_v)?;
    let mut p = params.clone();
    let mut fits = |ctx: u64| {
        p.cells =
            LlamaCppKvParams::from_server_flags(ctx, params.n_seq_max, params.kv_unified).cells;
        // An overflowing size does not fit.
        llamacpp_kv_buffers(geometry, &p).is_some_and(|e| e.total_bytes <= budget_bytes)
    };
    // Total bytes never shrink as -c grows, so the answer is found by bisection.
    let (mut lo, mut hi) = (0u64, 1u64 << 40);
    if fits(hi) {
        return Some(hi);
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    // Whole cells per stream: `-c` beyond the last multiple of -np adds nothing.
    Some(if params.kv_unified {
        lo
    } else {
        lo - lo % params.n_seq_max.max(1)
    })
}

impl LlamaCppKvCache {
    /// Whether a parsed `llama_kv_cache: size = …` line describes this cache: same cells,
    /// layers and sequences, and sizes equal at the log's two-decimal MiB precision.
    pub fn matches_log(&self, line: &crate::logs::LlamaCppKvLine) -> bool {
        let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
        let close = |a: f64, b: f64| (a - b).abs() < 0.006;
        self.cells == line.cells
            && self.layers == line.layers
            && line.n_seq_max.is_none_or(|s| s == self.n_seq_max)
            && line.n_stream.is_none_or(|s| s == self.n_stream)
            && close(mib(self.size_bytes), line.size_mib)
            && close(mib(self.k_bytes), line.k_mib)
            && close(mib(self.v_bytes), line.v_mib)
    }
}
