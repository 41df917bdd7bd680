//! KV-cache arithmetic as vLLM does it (vllm/v1/kv_cache_interface.py).
//! Everything here is **per GPU rank**, because vLLM's KV budget ("Available KV cache memory")
//! is per worker.
//!
//! - Full attention: `2 × layers × kv_heads_per_gpu × head_dim × dtype_bytes` per token, with
//!   `kv_heads_per_gpu = max(1, kv_heads // tp)`: heads are replicated when there are fewer
//!   KV heads than ranks (vllm/config/model.py `get_num_kv_heads`).
//! - MLA (DeepSeek): one latent "head" of `kv_lora_rank + qk_rope_head_dim`, no ×2 for K and V,
//!   replicated on every rank (61 × 576 × 2 B = 70,272 B ≈ 68.6 KiB/token for DeepSeek-V3).
//! - Sliding-window layers hold at most a window's worth of tokens per sequence, so they are a
//!   constant per sequence once the sequence is longer than the window.
//! - Mamba / linear-attention layers hold a constant state per sequence; only attention layers
//!   scale with tokens. The state sizes follow vLLM's `MambaStateShapeCalculator`
//!   (vllm/model_executor/layers/mamba/mamba_utils.py), see [`MambaGeometry`].
//!
//! Not modelled: vLLM's rounding to 16-token blocks, the padding of attention pages to the
//! Mamba page size in hybrid models (`Add N padding layers…`), pipeline parallelism, and
//! speculative-decoding extra state. These move the real number by a few percent at most for
//! dense models; for hybrids compare with the engine's own `GPU KV cache size` line.

use serde::{Deserialize, Serialize};

/// The KV cache dtype: vLLM's `--kv-cache-dtype`.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum KvCacheDtype {
    /// The model dtype (`torch_dtype` / `dtype` in config.json).
    Auto,
    Bf16,
    Fp16,
    Fp32,
    /// `fp8`, `fp8_e4m3`, `fp8_e5m2`, `fp8_inc`: one byte per element.
    Fp8,
    /// DeepSeek's FlashMLA fp8 layout: 656 bytes per token per layer (vLLM `fp8_ds_mla`,
    /// vllm/v1/kv_cache_interface.py).
    Fp8DsMla,
}

impl KvCacheDtype {
    /// Parses a `--kv-cache-dtype` value or a torch dtype name.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Self::Auto,
            "bfloat16" | "bf16" | "torch.bfloat16" => Self::Bf16,
            "float16" | "fp16" | "half" | "torch.float16" => Self::Fp16,
            "float32" | "fp32" | "float" | "torch.float32" => Self::Fp32,
            "fp8" | "fp8_e4m3" | "fp8_e5m2" | "fp8_inc" | "float8_e4m3fn" => Self::Fp8,
            "fp8_ds_mla" => Self::Fp8DsMla,
            _ => return None,
        })
    }

    /// Bytes per element; `None` for `Auto` (resolve it against the model dtype first).
    pub fn bytes(self) -> Option<u64> {
        match self {
            Self::Auto => None,
            Self::Bf16 | Self::Fp16 => Some(2),
            Self::Fp32 => Some(4),
            Self::Fp8 | Self::Fp8DsMla => Some(1),
        }
    }
}

/// How the attention layers store K and V.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AttentionKind {
    /// Multi-head / grouped-query attention: separate K and V per KV head.
    Standard {
        num_attention_heads: u64,
        num_kv_heads: u64,
        head_dim: u64,
    },
    /// DeepSeek multi-head latent attention: one compressed latent per token.
    Mla {
        kv_lora_rank: u64,
        qk_rope_head_dim: u64,
    },
}

/// The constant per-sequence state of recurrent layers, with the fields vLLM sizes it from.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MambaGeometry {
    /// Mamba-2 (Nemotron-H, Granite 4.0-H, Zamba2). Per layer, per rank:
    /// conv state `(d_conv − 1) × (intermediate + 2·n_groups'·state_size) / tp` and SSM state
    /// `(num_heads / tp) × head_dim × state_size`, where `n_groups' = n_groups` when tp divides
    /// it and `tp` otherwise (groups are replicated to follow the head shards) —
    /// `MambaStateShapeCalculator.mamba2_state_shape` / `extra_groups_for_head_shards`.
    Mamba2 {
        layers: u64,
        intermediate_size: u64,
        num_heads: u64,
        head_dim: u64,
        state_size: u64,
        n_groups: u64,
        conv_kernel: u64,
    },
    /// Mamba-1 (Jamba). Per layer, per rank: conv `(d_conv − 1) × intermediate / tp`, SSM
    /// `intermediate / tp × state_size` — `mamba1_state_shape`.
    Mamba1 {
        layers: u64,
        intermediate_size: u64,
        state_size: u64,
        conv_kernel: u64,
    },
    /// Gated DeltaNet linear attention (Qwen3-Next). Per layer, per rank: conv
    /// `(k − 1) × (2·k_heads·k_dim + v_heads·v_dim) / tp`, state `v_heads / tp × k_dim × v_dim` —
    /// `gated_delta_net_state_shape`.
    GatedDeltaNet {
        layers: u64,
        num_k_heads: u64,
        num_v_heads: u64,
        head_k_dim: u64,
        head_v_dim: u64,
        conv_kernel: u64,
    },
}

impl MambaGeometry {
    /// Number of recurrent layers.
    pub fn layers(&self) -> u64 {
        match *self {
            Self::Mamba2 { layers, .. }
            | Self::Mamba1 { layers, .. }
            | Self::GatedDeltaNet { layers, .. } => layers,
        }
    }

    /// Elements of (conv state, SSM/temporal state) per layer on one rank of `tp`.
    pub fn state_elems_per_layer(&self, tp: u64) -> (u64, u64) {
        let tp = tp.max(1);
        match *self {
            Self::Mamba2 {
                intermediate_size,
                num_heads,
                head_dim,
                state_size,
                n_groups,
                conv_kernel,
                ..
            } => {
                let groups = if n_groups.is_multiple_of(tp) {
                    n_groups
                } else {
                    tp
                };
                let conv_dim = intermediate_size.saturating_add(mul(&[2, groups, state_size]));
                let conv = mul(&[conv_kernel.saturating_sub(1), conv_dim / tp]);
                let ssm = mul(&[num_heads / tp, head_dim, state_size]);
                (conv, ssm)
            }
            Self::Mamba1 {
                intermediate_size,
                state_size,
                conv_kernel,
                ..
            } => {
                let conv = mul(&[conv_kernel.saturating_sub(1), intermediate_size / tp]);
                (conv, mul(&[intermediate_size / tp, state_size]))
            }
            Self::GatedDeltaNet {
                num_k_heads,
                num_v_heads,
                head_k_dim,
                head_v_dim,
                conv_kernel,
                ..
            } => {
                let conv_dim = mul(&[2, num_k_heads, head_k_dim])
                    .saturating_add(mul(&[num_v_heads, head_v_dim]));
                let conv = mul(&[conv_kernel.saturating_sub(1), conv_dim / tp]);
                (conv, mul(&[num_v_heads / tp, head_k_dim, head_v_dim]))
            }
        }
    }
}

/// The shape of a model's KV cache, independent of dtype and parallelism.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct KvGeometry {
    /// All decoder layers, including Mamba and MLP-only ones.
    pub num_layers: u64,
    pub attention: AttentionKind,
    /// Attention layers that keep every token.
    pub full_attention_layers: u64,
    /// Attention layers that keep only the last `sliding_window` tokens.
    pub sliding_window_layers: u64,
    pub sliding_window: Option<u64>,
    /// Recurrent layers, if the model is a hybrid.
    pub mamba: Option<MambaGeometry>,
    /// The model dtype (what `--kv-cache-dtype auto` resolves to), e.g. `bfloat16`.
    pub model_dtype: String,
    pub model_dtype_bytes: u64,
    /// How the layer kinds and dims were found (which config keys, which defaults).
    pub notes: Vec<String>,
}

/// What to price the cache at.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct KvCostOptions {
    pub kv_cache_dtype: KvCacheDtype,
    pub tensor_parallel_size: u64,
    /// Bytes per element of the Mamba SSM state (`--mamba-ssm-cache-dtype`); `None` = model
    /// dtype. The conv state always uses the model dtype here.
    pub mamba_ssm_dtype_bytes: Option<u64>,
}

impl Default for KvCostOptions {
    fn default() -> Self {
        Self {
            kv_cache_dtype: KvCacheDtype::Auto,
            tensor_parallel_size: 1,
            mamba_ssm_dtype_bytes: None,
        }
    }
}

/// KV bytes per GPU rank, split by how they scale.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct KvCost {
    pub tensor_parallel_size: u64,
    pub kv_cache_dtype: KvCacheDtype,
    pub kv_bytes_per_element: u64,
    /// KV heads each rank stores (1 for MLA).
    pub kv_heads_per_gpu: u64,
    /// True when heads are copied onto ranks instead of split (kv_heads < tp, or MLA with tp > 1).
    pub kv_heads_replicated: bool,
    /// Bytes per token of the full-attention layers: these scale with every token.
    pub full_attention_bytes_per_token: u64,
    /// Bytes per token of all sliding-window layers together, for tokens inside the window.
    pub sliding_window_bytes_per_token: u64,
    pub sliding_window: Option<u64>,
    /// Constant bytes per sequence of the recurrent (Mamba) layers.
    pub state_bytes_per_sequence: u64,
    /// Bytes per token if every attention layer kept every token (vLLM
    /// `--disable-hybrid-kv-cache-manager`, or llama.cpp `--swa-full`).
    pub all_attention_as_full_bytes_per_token: u64,
}

impl KvCost {
    /// Bytes the sliding-window layers hold for one sequence of `tokens` tokens: they keep
    /// `min(window, tokens)`. vLLM actually keeps `window − 1 + max_num_batched_tokens`; pass
    /// [`vllm_sliding_window_tokens`] as `tokens` for that.
    pub fn sliding_window_bytes_per_sequence(&self, tokens: u64) -> u64 {
        let kept = self.sliding_window.map_or(tokens, |w| w.min(tokens));
        self.sliding_window_bytes_per_token.saturating_mul(kept)
    }

    /// All KV bytes one sequence of `tokens` tokens holds on one rank.
    pub fn bytes_per_sequence(&self, tokens: u64) -> u64 {
        self.full_attention_bytes_per_token
            .saturating_mul(tokens)
            .saturating_add(self.sliding_window_bytes_per_sequence(tokens))
            .saturating_add(self.state_bytes_per_sequence)
    }
}

/// Saturating product: config values come from files, and a hostile one must give a huge
/// number, not an overflow panic.
fn mul(factors: &[u64]) -> u64 {
    factors.iter().fold(1u64, |acc, f| acc.saturating_mul(*f))
}

/// Tokens vLLM keeps per request in a sliding-window layer:
/// `min(window − 1 + max_num_batched_tokens, max_model_len)` (vllm/v1/kv_cache_interface.py).
pub fn vllm_sliding_window_tokens(
    window: u64,
    max_num_batched_tokens: u64,
    max_model_len: u64,
) -> u64 {
    window
        .saturating_sub(1)
        .saturating_add(max_num_batched_tokens)
        .min(max_model_len)
}

/// Prices a geometry at a dtype and tensor-parallel size.
pub fn kv_cost(geometry: &KvGeometry, options: &KvCostOptions) -> KvCost {
    let tp = options.tensor_parallel_size.max(1);
    let elem = options
        .kv_cache_dtype
        .bytes()
        .unwrap_or(geometry.model_dtype_bytes);
    let (per_layer_token, kv_heads_per_gpu, replicated) = match geometry.attention {
        AttentionKind::Standard {
            num_kv_heads,
            head_dim,
            ..
        } => {
            let per_gpu = (num_kv_heads / tp).max(1);
            let bytes = mul(&[2, per_gpu, head_dim, elem]);
            (bytes, per_gpu, num_kv_heads < tp)
        }
        AttentionKind::Mla {
            kv_lora_rank,
            qk_rope_head_dim,
        } => {
            let bytes = if options.kv_cache_dtype == KvCacheDtype::Fp8DsMla {
                656
            } else {
                mul(&[kv_lora_rank.saturating_add(qk_rope_head_dim), elem])
            };
            (bytes, 1, tp > 1)
        }
    };
    let state_bytes_per_sequence = geometry.mamba.as_ref().map_or(0, |m| {
        let (conv, ssm) = m.state_elems_per_layer(tp);
        let ssm_bytes = options
            .mamba_ssm_dtype_bytes
            .unwrap_or(geometry.model_dtype_bytes);
        let per_layer =
            mul(&[conv, geometry.model_dtype_bytes]).saturating_add(mul(&[ssm, ssm_bytes]));
        m.layers().saturating_mul(per_layer)
    });
    KvCost {
        tensor_parallel_size: tp,
        kv_cache_dtype: options.kv_cache_dtype,
        kv_bytes_per_element: elem,
        kv_heads_per_gpu,
        kv_heads_replicated: replicated,
        full_attention_bytes_per_token: mul(&[per_layer_token, geometry.full_attention_layers]),
        sliding_window_bytes_per_token: mul(&[per_layer_token, geometry.sliding_window_layers]),
        sliding_window: geometry.sliding_window,
        state_bytes_per_sequence,
        all_attention_as_full_bytes_per_token: mul(&[
            per_layer_token,
            geometry
                .full_attention_layers
                .saturating_add(geometry.sliding_window_layers),
        ]),
    }
}

/// How many tokens a KV budget holds.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct KvCapacity {
    pub bytes_budget: u64,
    pub max_model_len: u64,
    /// Bytes one full-length sequence needs on one rank.
    pub bytes_per_full_length_sequence: u64,
    /// Tokens the pool holds, counted as vLLM's `GPU KV cache size` does:
    /// `int(max_concurrency × max_model_len)`.
    pub tokens: u64,
    /// Full-length sequences that fit at once ("Maximum concurrency … 20.20x").
    pub max_concurrency: f64,
    /// `tokens / max_model_len`: "the pool holds 1.4× a full-length sequence". Equal to
    /// `max_concurrency`; kept under this name because that is the question it answers.
    pub pool_over_max_len_ratio: f64,
}

/// Tokens that fit in `bytes_budget` bytes of KV cache on one rank, pricing sliding-window
/// layers at `min(window, max_model_len)` tokens and Mamba state once per sequence.
///
/// With constant per-sequence terms, "tokens" only has a meaning relative to a sequence length:
/// like vLLM (cache.py `kv_cache_size_tokens`), we count how many full-length sequences fit and
/// multiply by the length. For a dense model this is simply `budget / bytes_per_token`.
pub fn kv_capacity(bytes_budget: u64, cost: &KvCost, max_model_len: u64) -> KvCapacity {
    let per_seq = cost.bytes_per_sequence(max_model_len);
    let (tokens, concurrency) = if per_seq == 0 || max_model_len == 0 {
        (0, 0.0)
    } else {
        let tokens = u128::from(bytes_budget) * u128::from(max_model_len) / u128::from(per_seq);
        (
            u64::try_from(tokens).unwrap_or(u64::MAX),
            bytes_budget as f64 / per_seq as f64,
        )
    };
    KvCapacity {
        bytes_budget,
        max_model_len,
        bytes_per_full_length_sequence: per_seq,
        tokens,
        max_concurrency: concurrency,
        pool_over_max_len_ratio: pool_over_max_len_ratio(tokens, max_model_len),
    }
}

/// `tokens / max_model_len`, or 0 for a zero length. For a token count read from an engine log.
pub fn pool_over_max_len_ratio(tokens: u64, max_model_len: u64) -> f64 {
    if max_model_len == 0 {
        0.0
    } else {
        tokens as f64 / max_model_len as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dense(layers: u64, kv_heads: u64, head_dim: u64) -> KvGeometry {
        KvGeometry {
            num_layers: layers,
            attention: AttentionKind::Standard {
                num_attention_heads: 32,
                num_kv_heads: kv_heads,
                head_dim,
            },
            full_attention_layers: layers,
            sliding_window_layers: 0,
            sliding_window: None,
            mamba: None,
            model_dtype: "bfloat16".into(),
            model_dtype_bytes: 2,
            notes: vec![],
        }
    }

    #[test]
    fn dense_capacity_is_budget_over_bytes_per_token() {
        // Llama-3-8B shape: 131,072 B/token; 16 GiB / 128 KiB = 131,072 tokens exactly.
        let cost = kv_cost(&dense(32, 8, 128), &KvCostOptions::default());
        assert_eq!(cost.full_attention_bytes_per_token, 131_072);
        let cap = kv_capacity(16 << 30, &cost, 32_768);
        assert_eq!(cap.tokens, 131_072);
        assert!((cap.pool_over_max_len_ratio - 4.0).abs() < 1e-9);
        assert!((cap.max_concurrency - 4.0).abs() < 1e-9);
    }

    #[test]
    fn seed_pool_ratio() {
        // docs/field-cases.md F1: 371,023 tokens against max-model-len 262,144 → "1.4x a full-length
        // sequence" (371,023 / 262,144 = 1.4153).
        let r = pool_over_max_len_ratio(371_023, 262_144);
        assert!((r - 1.4153).abs() < 1e-4, "{r}");
        assert_eq!(pool_over_max_len_ratio(1, 0), 0.0);
    }

    #[test]
    fn zero_sized_geometry_gives_zero_not_a_panic() {
        let cost = kv_cost(&dense(0, 8, 128), &KvCostOptions::default());
        let cap = kv_capacity(1 << 30, &cost, 4096);
        assert_eq!(cap.tokens, 0);
        assert_eq!(kv_capacity(1 << 30, &cost, 0).tokens, 0);
    }

    #[test]
    fn parses_vllm_kv_cache_dtypes() {
        assert_eq!(KvCacheDtype::parse("fp8_e5m2"), Some(KvCacheDtype::Fp8));
        assert_eq!(KvCacheDtype::parse("bfloat16"), Some(KvCacheDtype::Bf16));
        assert_eq!(KvCacheDtype::parse("int4"), None);
    }
}
