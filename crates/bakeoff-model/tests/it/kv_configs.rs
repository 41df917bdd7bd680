//! KV bytes per token from real-shaped config.json fixtures (tests/fixtures/configs/, sources
//! in tests/fixtures/README.md), each number worked out by hand in the comment above it.

use bakeoff_model::{
    AttentionKind, KvCacheDtype, KvCostOptions, KvGeometry, MambaGeometry, kv_capacity, kv_cost,
    kv_geometry_from_config, vllm_sliding_window_tokens,
};

use crate::util::fixtures;

fn geometry(name: &str) -> KvGeometry {
    kv_geometry_from_config(&fixtures().join("configs").join(name)).unwrap()
}

fn opts(dtype: KvCacheDtype, tp: u64) -> KvCostOptions {
    KvCostOptions {
        kv_cache_dtype: dtype,
        tensor_parallel_size: tp,
        mamba_ssm_dtype_bytes: None,
    }
}

#[test]
fn llama_3_8b_is_128_kib_per_token() {
    // 2 (K,V) × 32 layers × 8 KV heads × head_dim (4096/32 = 128) × 2 B (bf16)
    // = 131,072 B = 128 KiB per token (vllm/v1/kv_cache_interface.py).
    let g = geometry("llama-3-8b.json");
    let c = kv_cost(&g, &KvCostOptions::default());
    assert_eq!(c.full_attention_bytes_per_token, 131_072);
    assert_eq!(c.sliding_window_bytes_per_token, 0);
    assert_eq!(c.state_bytes_per_sequence, 0);
    assert!(
        g.notes
            .iter()
            .any(|n| n.contains("4096 / num_attention_heads 32"))
    );

    // --kv-cache-dtype fp8 halves it: 65,536 B.
    let fp8 = kv_cost(&g, &opts(KvCacheDtype::Fp8, 1));
    assert_eq!(fp8.full_attention_bytes_per_token, 65_536);
}

#[test]
fn tensor_parallel_splits_then_replicates_kv_heads() {
    let g = geometry("llama-3-8b.json");
    // TP=2: 8 // 2 = 4 heads per GPU → 2 × 32 × 4 × 128 × 2 = 65,536 B per GPU.
    let tp2 = kv_cost(&g, &opts(KvCacheDtype::Auto, 2));
    assert_eq!(
        (tp2.kv_heads_per_gpu, tp2.full_attention_bytes_per_token),
        (4, 65_536)
    );
    assert!(!tp2.kv_heads_replicated);
    // TP=16: 8 // 16 = 0 → max(1, 0) = 1 head per GPU (replicated, vLLM get_num_kv_heads):
    // 2 × 32 × 1 × 128 × 2 = 16,384 B per GPU, not the 8,192 a naive split would say.
    let tp16 = kv_cost(&g, &opts(KvCacheDtype::Auto, 16));
    assert_eq!(
        (tp16.kv_heads_per_gpu, tp16.full_attention_bytes_per_token),
        (1, 16_384)
    );
    assert!(tp16.kv_heads_replicated);
}

#[test]
fn qwen2_5_7b_gqa_ignores_its_unused_window() {
    // 2 × 28 layers × 4 KV heads × (3584/28 = 128) × 2 B = 57,344 B = 56 KiB per token.
    // The config carries sliding_window 131072 with use_sliding_window false: all full.
    let g = geometry("qwen2.5-7b-instruct.json");
    assert_eq!((g.full_attention_layers, g.sliding_window_layers), (28, 0));
    assert_eq!(g.sliding_window, None);
    let c = kv_cost(&g, &KvCostOptions::default());
    assert_eq!(c.full_attention_bytes_per_token, 57_344);
}

#[test]
fn gemma_3_27b_nested_text_config_and_sliding_window() {
    // text_config: 62 layers, default pattern 6 (every 6th layer global) → 62 // 6 = 10 full
    // and 52 sliding (window 1024); 16 KV heads × head_dim 128.
    // Per layer per token: 2 × 16 × 128 × 2 B = 8,192 B.
    //   full layers: 10 × 8,192 = 81,920 B/token (80 KiB);
    //   sliding layers: 52 × 8,192 = 425,984 B per token of window,
    //     × 1,024 tokens = 436,207,616 B (416 MiB) per sequence once past the window;
    //   all 62 layers as full (--disable-hybrid-kv-cache-manager): 507,904 B/token.
    let g = geometry("gemma-3-27b-it.json");
    assert_eq!(g.num_layers, 62);
    assert_eq!((g.full_attention_layers, g.sliding_window_layers), (10, 52));
    assert_eq!(g.sliding_window, Some(1024));
    let c = kv_cost(&g, &KvCostOptions::default());
    assert_eq!(c.full_attention_bytes_per_token, 81_920);
    assert_eq!(c.sliding_window_bytes_per_token, 425_984);
    assert_eq!(c.sliding_window_bytes_per_sequence(131_072), 436_207_616);
    // A 100-token sequence keeps only its 100 tokens in the sliding layers.
    assert_eq!(c.sliding_window_bytes_per_sequence(100), 42_598_400);
    assert_eq!(c.all_attention_as_full_bytes_per_token, 507_904);

    // 40 GiB at max-model-len 131,072: one sequence = 81,920 × 131,072 + 436,207,616
    // = 11,173,625,856 B → 42,949,672,960 / that = 3.8438 sequences → 503,820 tokens.
    let cap = kv_capacity(40 << 30, &c, 131_072);
    assert_eq!(cap.bytes_per_full_length_sequence, 11_173_625_856);
    assert_eq!(cap.tokens, 503_820);
    assert!((cap.pool_over_max_len_ratio - 3.8438).abs() < 1e-4);

    // vLLM keeps window − 1 + max_num_batched_tokens per request: 1023 + 8192 = 9215.
    assert_eq!(vllm_sliding_window_tokens(1024, 8192, 131_072), 9215);
}

#[test]
fn gemma_3_270m_layer_types_match_the_gguf() {
    // layer_types lists 15 sliding + 3 full of 18; 1 KV head × head_dim 256.
    // Per layer per token: 2 × 1 × 256 × 2 B = 1,024 B → full 3,072 B/token,
    // sliding 15,360 B per token of window, × 512 = 7,864,320 B per sequence.
    let g = geometry("gemma-3-270m.json");
    assert_eq!((g.full_attention_layers, g.sliding_window_layers), (3, 15));
    let c = kv_cost(&g, &KvCostOptions::default());
    assert_eq!(c.full_attention_bytes_per_token, 3_072);
    assert_eq!(c.sliding_window_bytes_per_sequence(32_768), 7_864_320);
}

#[test]
fn deepseek_v3_mla_is_68_6_kib_per_token_on_every_rank() {
    // MLA: 61 layers × (kv_lora_rank 512 + qk_rope_head_dim 64 = 576) × 2 B, no ×2 for K/V:
    // 70,272 B = 68.625 KiB per token.
    let g = geometry("deepseek-v3.json");
    assert!(matches!(
        g.attention,
        AttentionKind::Mla {
            kv_lora_rank: 512,
            qk_rope_head_dim: 64
        }
    ));
    let c = kv_cost(&g, &KvCostOptions::default());
    assert_eq!(c.full_attention_bytes_per_token, 70_272);
    assert!((c.full_attention_bytes_per_token as f64 / 1024.0 - 68.625).abs() < 1e-9);
    // Replicated across TP ranks, not split: still 70,272 B per GPU at TP=8.
    let tp8 = kv_cost(&g, &opts(KvCacheDtype::Auto, 8));
    assert_eq!(tp8.full_attention_bytes_per_token, 70_272);
    assert!(tp8.kv_heads_replicated);
    // fp8: 61 × 576 = 35,136 B; fp8_ds_mla: 61 × 656 = 40,016 B.
    assert_eq!(
        kv_cost(&g, &opts(KvCacheDtype::Fp8, 8)).full_attention_bytes_per_token,
        35_136
    );
    assert_eq!(
        kv_cost(&g, &opts(KvCacheDtype::Fp8DsMla, 8)).full_attention_bytes_per_token,
        40_016
    );
}

#[test]
fn nemotron_h_only_attention_layers_scale_with_tokens() {
    // hybrid_override_pattern (52 chars): 4 `*` attention, 24 `M` Mamba-2, 24 `-` MLP.
    // Attention: 2 × 4 layers × 8 KV heads × attention_head_dim 128 × 2 B = 16,384 B/token.
    // Mamba-2 per layer (vLLM mamba2_state_shape, TP=1):
    //   intermediate = mamba_num_heads 128 × mamba_head_dim 64 = 8,192
    //   conv_dim = 8,192 + 2 × n_groups 8 × ssm_state_size 128 = 10,240
    //   conv state = (conv_kernel 4 − 1) × 10,240 = 30,720 elements
    //   ssm state = 128 heads × 64 × 128 = 1,048,576 elements
    //   (30,720 + 1,048,576) × 2 B = 2,158,592 B; × 24 layers = 51,806,208 B per sequence.
    let g = geometry("nemotron-h-8b-base-8k.json");
    assert_eq!(g.full_attention_layers, 4);
    assert_eq!(g.mamba.as_ref().map(MambaGeometry::layers), Some(24));
    let c = kv_cost(&g, &KvCostOptions::default());
    assert_eq!(c.full_attention_bytes_per_token, 16_384);
    assert_eq!(c.state_bytes_per_sequence, 51_806_208);

    // TP=2: 4 KV heads → 8,192 B/token; conv (3 × 10,240/2 = 15,360) + ssm (64 × 64 × 128 =
    // 524,288) = 539,648 elements × 2 B × 24 = 25,903,104 B per sequence.
    let tp2 = kv_cost(&g, &opts(KvCacheDtype::Auto, 2));
    assert_eq!(tp2.full_attention_bytes_per_token, 8_192);
    assert_eq!(tp2.state_bytes_per_sequence, 25_903_104);

    // 10 GiB at max-model-len 8,192: one sequence = 16,384 × 8,192 + 51,806,208
    // = 186,023,936 B → 57.72 sequences → 472,847 tokens.
    let cap = kv_capacity(10 << 30, &c, 8192);
    assert_eq!(cap.bytes_per_full_length_sequence, 186_023_936);
    assert_eq!(cap.tokens, 472_847);
    assert!((cap.max_concurrency - 57.7206).abs() < 1e-4);
}

#[test]
fn jamba_mamba1_layers_from_attn_period() {
    // attn_layer_period 8, offset 4 over 32 layers → attention at 4, 12, 20, 28; 28 Mamba-1.
    // Attention: 2 × 4 × 8 × 128 × 2 B = 16,384 B/token.
    // Mamba-1 per layer: intermediate = mamba_expand 2 × 4,096 = 8,192;
    //   conv (4 − 1) × 8,192 = 24,576 + ssm 8,192 × mamba_d_state 16 = 131,072
    //   → 155,648 × 2 B = 311,296 B; × 28 = 8,716,288 B per sequence.
    let g = geometry("jamba-v0.1.json");
    assert_eq!(g.full_attention_layers, 4);
    let c = kv_cost(&g, &KvCostOptions::default());
    assert_eq!(c.full_attention_bytes_per_token, 16_384);
    assert_eq!(c.state_bytes_per_sequence, 8_716_288);
}

#[test]
fn qwen3_next_gated_deltanet_from_interval() {
    // Qwen3-Next-80B-A3B shape: 48 layers, full_attention_interval 4 → 12 attention, 36
    // Gated DeltaNet. Attention: 2 × 12 × 2 KV heads × 256 × 2 B = 24,576 B/token.
    // GDN per layer: conv_dim = 2 × 16 × 128 + 32 × 128 = 8,192; conv 3 × 8,192 = 24,576;
    //   state 32 × 128 × 128 = 524,288 → 548,864 × 2 B = 1,097,728 B; × 36 = 39,518,208 B.
    let cfg = r#"{"model_type": "qwen3_next", "num_hidden_layers": 48, "full_attention_interval": 4,
        "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256, "hidden_size": 2048,
        "linear_num_key_heads": 16, "linear_num_value_heads": 32, "linear_key_head_dim": 128,
        "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4, "torch_dtype": "bfloat16"}"#;
    let g = bakeoff_model::HfConfig::parse(cfg, "config.json".as_ref())
        .unwrap()
        .kv_geometry()
        .unwrap();
    let c = kv_cost(&g, &KvCostOptions::default());
    assert_eq!(c.full_attention_bytes_per_token, 24_576);
    assert_eq!(c.state_bytes_per_sequence, 39_518_208);
}

#[test]
fn missing_fields_name_the_file_and_the_fix() {
    let err = bakeoff_model::HfConfig::parse(r#"{"text_config": {}}"#, "m/config.json".as_ref())
        .unwrap()
        .kv_geometry()
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("m/config.json: no `num_hidden_layers`"),
        "{err}"
    );
    assert!(
        err.contains("in `text_config`") && err.contains("fix:"),
        "{err}"
    );
    assert!(!err.contains('\n'));
}

#[test]
fn hostile_config_values_do_not_panic() {
    let cfg = r#"{"num_hidden_layers": 18446744073709551615, "num_attention_heads": 1,
        "num_key_value_heads": 18446744073709551615, "head_dim": 18446744073709551615,
        "attn_layer_period": 1, "attn_layer_offset": 0, "mamba_d_conv": 0, "mamba_d_state": 1,
        "mamba_expand": 18446744073709551615, "hidden_size": 18446744073709551615}"#;
    let g = bakeoff_model::HfConfig::parse(cfg, "x.json".as_ref())
        .unwrap()
        .kv_geometry()
        .unwrap();
    let c = kv_cost(&g, &KvCostOptions::default());
    let _ = kv_capacity(u64::MAX, &c, u64::MAX);
    for bad in ["[]", "1", "{\"num_hidden_layers\": -3}", "{"] {
        let parsed = bakeoff_model::HfConfig::parse(bad, "x.json".as_ref());
        if let Ok(c) = parsed {
            assert!(c.kv_geometry().is_err());
        }
    }
}

fn config(dir: &str, name: &str) -> bakeoff_model::HfConfig {
    bakeoff_model::HfConfig::read(&fixtures().join(dir).join(name)).unwrap()
}

/// vLLM's derived max_model_len (vllm/config/model.py `_get_and_verify_max_len`): what it
/// accepts without VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. docs/failure-classes.md warns past it.
#[test]
fn derived_max_model_len_follows_vllm() {
    // Llama 3 8B: max_position_embeddings 8192, no RoPE scaling.
    let d = config("configs", "llama-3-8b.json")
        .derived_max_model_len()
        .unwrap();
    assert_eq!(
        (d.tokens, d.key.as_str()),
        (8192, "max_position_embeddings=8192")
    );
    assert_eq!(d.rope_scaling, None);
    // DeepSeek-V3: YaRN, original_max_position_embeddings 4096 × factor 40 = 163,840.
    let d = config("configs", "deepseek-v3.json")
        .derived_max_model_len()
        .unwrap();
    assert_eq!(d.tokens, 163_840);
    assert_eq!(d.rope_scaling.as_deref(), Some("yarn factor 40"));
    // Llama 3.1: rope_type llama3 is not multiplied (131,072 as written).
    let d = config("checkpoints/llama-3.1-8b-instruct-awq", "config.json")
        .derived_max_model_len()
        .unwrap();
    assert_eq!(d.tokens, 131_072);
    // Gemma 3: the length is already scaled (linear factor 8 not applied again).
    let d = config("configs", "gemma-3-270m.json")
        .derived_max_model_len()
        .unwrap();
    assert_eq!(d.tokens, 32_768);
    // A config that names no length derives nothing.
    let none = bakeoff_model::HfConfig::parse(
        r#"{"num_hidden_layers": 2}"#,
        std::path::Path::new("config.json"),
    )
    .unwrap();
    assert_eq!(none.derived_max_model_len(), None);
}
