//! Reading a Hugging Face `config.json` into a [`KvGeometry`] and a short summary.
//!
//! Configs are read as untyped JSON on purpose: every model family spells the same thing
//! differently (`head_dim` vs `attention_head_dim`, `n_groups` vs `mamba_n_groups`), and
//! multimodal checkpoints (Gemma 3/4, Llava, Mistral 3) nest the language model's fields under
//! `text_config`. We look in the nested text config first, then at the top level.
//!
//! Layer kinds are found, in this order, from:
//! 1. `hybrid_override_pattern` (Nemotron-H: `M` Mamba, `*` attention, `-` MLP, `E` MoE),
//! 2. `layers_block_type` or `layer_types` (`full_attention`, `sliding_attention`, `attention`,
//!    `mamba`, `linear_attention`),
//! 3. `attn_layer_period` + `attn_layer_offset` (Jamba),
//! 4. `full_attention_interval` (Qwen3-Next: every Nth layer is attention, the rest Gated
//!    DeltaNet),
//! 5. `sliding_window` + `sliding_window_pattern` (or `_sliding_window_pattern`; layer i is full
//!    when (i+1) % N == 0), with Gemma 2/3's built-in patterns (2 and 6) when the key is absent,
//!    `use_sliding_window: false` honoured (Qwen2 ships a window it does not use) and
//!    `max_window_layers` for Qwen2-style configs that do use it; otherwise a bare
//!    `sliding_window` means every layer slides (Mistral 7B v0.1).

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{ModelError, Result};
use crate::kv::{AttentionKind, KvGeometry, MambaGeometry};

mod layers;

/// Keys under which multimodal configs nest their language model's config.
const NESTED_TEXT_KEYS: [&str; 3] = ["text_config", "llm_config", "language_config"];

/// Refuse config files larger than this: real ones are a few kilobytes.
const MAX_CONFIG_BYTES: u64 = 16 * 1024 * 1024;

/// Identity fields of a config, for the checkpoint report.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct ConfigSummary {
    pub architectures: Vec<String>,
    pub model_type: Option<String>,
    /// `model_type` of the nested text config (`gemma3_text`), when there is one.
    pub text_model_type: Option<String>,
    /// `torch_dtype` (older) or `dtype` (transformers ≥ 4.56).
    pub dtype: Option<String>,
    pub max_position_embeddings: Option<u64>,
}

/// The longest sequence vLLM derives from a config ([`HfConfig::derived_max_model_len`]).
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct DerivedMaxLen {
    pub tokens: u64,
    /// The key it came from, as vLLM's refusal names it: `max_position_embeddings=8192`.
    pub key: String,
    /// The RoPE scaling applied (`yarn factor 40`), when one was.
    pub rope_scaling: Option<String>,
}

/// A parsed `config.json` and the path it came from (for error messages).
#[derive(Debug, Clone)]
pub struct HfConfig {
    path: std::path::PathBuf,
    root: Value,
}

impl HfConfig {
    /// Reads and parses `path`.
    pub fn read(path: &Path) -> Result<Self> {
        let text = crate::read_small_text(path, MAX_CONFIG_BYTES)?;
        Self::parse(&text, path)
    }

    /// Parses config JSON text; `path` only names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Self> {
        let root: Value = serde_json::from_str(text).map_err(|source| ModelError::Json {
            path: path.to_owned(),
            source,
        })?;
        if !root.is_object() {
            return Err(ModelError::malformed(
                path,
                "config.json is not a JSON object",
                "point at a Hugging Face config.json",
            ));
        }
        Ok(Self {
            path: path.to_owned(),
            root,
        })
    }

    /// The raw JSON.
    pub fn json(&self) -> &Value {
        &self.root
    }

    fn text(&self) -> Option<(&'static str, &Value)> {
        NESTED_TEXT_KEYS
            .iter()
            .find_map(|k| self.root.get(*k).filter(|v| v.is_object()).map(|v| (*k, v)))
    }

    /// A field of the language model: nested text config first, then the top level.
    pub fn field(&self, key: &str) -> Option<&Value> {
        self.text()
            .and_then(|(_, t)| t.get(key))
            .filter(|v| !v.is_null())
            .or_else(|| self.root.get(key).filter(|v| !v.is_null()))
    }

    fn u64_of(&self, key: &str) -> Option<u64> {
        self.field(key).and_then(Value::as_u64)
    }

    fn first_u64(&self, keys: &[&str]) -> Option<u64> {
        keys.iter().find_map(|k| self.u64_of(k))
    }

    fn str_of(&self, key: &str) -> Option<&str> {
        self.field(key).and_then(Value::as_str)
    }

    fn require(&self, keys: &[&str], fix: &str) -> Result<u64> {
        self.first_u64(keys)
            .ok_or_else(|| ModelError::MissingField {
                path: self.path.clone(),
                field: keys.join("` or `"),
                within: self.text().map(|(k, _)| k.to_owned()),
                fix: fix.to_owned(),
            })
    }

    /// Architectures, model types, dtype and window.
    pub fn summary(&self) -> ConfigSummary {
        let architectures = self
            .root
            .get("architectures")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        ConfigSummary {
            architectures,
            model_type: self
                .root
                .get("model_type")
                .and_then(Value::as_str)
                .map(str::to_owned),
            text_model_type: self
                .text()
                .and_then(|(_, t)| t.get("model_type"))
                .and_then(Value::as_str)
                .map(str::to_owned),
            dtype: self.dtype().map(str::to_owned),
            max_position_embeddings: self.u64_of("max_position_embeddings"),
        }
    }

    /// The longest sequence vLLM accepts without `VLLM_ALLOW_LONG_MAX_MODEL_LEN=1`: its
    /// "derived max_model_len" (vllm/config/model.py `_get_and_verify_max_len`). The smallest of
    /// the length keys (`max_position_embeddings`, `n_positions`, `max_seq_len`, `seq_length`,
    /// `max_target_positions`, `max_sequence_length`, `max_seq_length`, `seq_len`), with
    /// `model_max_length` taking over when set, times the RoPE scaling `factor` for rope types
    /// other than `su`, `longrope` and `llama3` (YaRN from `original_max_position_embeddings`),
    /// and no scaling for Gemma 3 (its length is already scaled). Not read: the tokenizer
    /// config's `model_max_length`, which vLLM also takes the minimum with. `None` when the
    /// config names no length.
    pub fn derived_max_model_len(&self) -> Option<DerivedMaxLen> {
        const KEYS: [&str; 8] = [
            "max_position_embeddings",
            "n_positions",
            "max_seq_len",
            "seq_length",
            "max_target_positions",
            "max_sequence_length",
            "max_seq_length",
            "seq_len",
        ];
        let mut best: Option<(&str, u64)> = None;
        for k in KEYS {
            if let Some(v) = self.u64_of(k)
                && best.is_none_or(|(_, b)| v < b)
            {
                best = Some((k, v));
            }
        }
        if let Some(v) = self.u64_of("model_max_length").filter(|v| *v > 0) {
            best = Some(("model_max_length", v));
        }
        let (key, base) = best?;
        let mut tokens = base as f64;
        let mut rope = None;
        if !self.model_type().contains("gemma3")
            && let Some(rp) = self.rope_parameters()
        {
            let kind = rp
                .get("rope_type")
                .or_else(|| rp.get("type"))
                .and_then(Value::as_str)
                .unwrap_or("default");
            if !matches!(kind, "su" | "longrope" | "llama3") {
                let factor = rp.get("factor").and_then(Value::as_f64).unwrap_or(1.0);
                if kind == "yarn"
                    && let Some(o) = rp
                        .get("original_max_position_embeddings")
                        .and_then(Value::as_u64)
                {
                    tokens = o as f64;
                }
                if factor.is_finite() && factor > 0.0 {
                    tokens *= factor;
                }
                if factor != 1.0 || kind == "yarn" {
                    rope = Some(format!("{kind} factor {factor}"));
                }
            }
        }
        Some(DerivedMaxLen {
            tokens: if tokens.is_finite() && tokens >= 1.0 {
                tokens as u64
            } else {
                base
            },
            key: format!("{key}={base}"),
            rope_scaling: rope,
        })
    }

    /// `rope_scaling` (or transformers 5's `rope_parameters`), as one set of parameters: a map
    /// per layer type is read through its first entry (vLLM assumes they share the factor).
    fn rope_parameters(&self) -> Option<&serde_json::Map<String, Value>> {
        let rp = self
            .field("rope_scaling")
            .or_else(|| self.field("rope_parameters"))?
            .as_object()?;
        if rp.contains_key("rope_type") || rp.contains_key("type") || rp.contains_key("factor") {
            Some(rp)
        } else {
            rp.values().find_map(Value::as_object)
        }
    }

    fn dtype(&self) -> Option<&str> {
        self.str_of("torch_dtype").or_else(|| self.str_of("dtype"))
    }

    fn model_type(&self) -> String {
        self.text()
            .and_then(|(_, t)| t.get("model_type"))
            .or_else(|| self.root.get("model_type"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_ascii_lowercase()
    }

    /// The KV geometry of the language model.
    pub fn kv_geometry(&self) -> Result<KvGeometry> {
        let mut notes = Vec::new();
        let num_layers = self.require(
            &["num_hidden_layers", "n_layer", "num_layers"],
            "pass a Hugging Face config.json of a decoder model",
        )?;
        // A hostile layer count must not make us allocate: per-layer lists are built from
        // arrays that exist in the file, never from `num_layers` alone.
        let (model_dtype, model_dtype_bytes) = match self.dtype() {
            Some(d) => match crate::kv::KvCacheDtype::parse(d).and_then(|k| k.bytes()) {
                Some(b) => (d.to_owned(), b),
                None => {
                    notes.push(format!("dtype `{d}` not recognised; priced as 2 bytes"));
                    (d.to_owned(), 2)
                }
            },
            None => {
                notes.push("no torch_dtype/dtype in config.json; assumed bfloat16".into());
                ("bfloat16".to_owned(), 2)
            }
        };

        let attention = self.attention(&mut notes)?;
        let kinds = self.layer_kinds(num_layers, &mut notes)?;
        let mamba = if kinds.recurrent > 0 {
            Some(self.mamba(kinds.recurrent, kinds.linear_attention)?)
        } else {
            None
        };
        Ok(KvGeometry {
            num_layers,
            attention,
            full_attention_layers: kinds.full,
            sliding_window_layers: kinds.sliding,
            sliding_window: if kinds.sliding > 0 {
                kinds.window
            } else {
                None
            },
            mamba,
            model_dtype,
            model_dtype_bytes,
            notes,
        })
    }

    fn attention(&self, notes: &mut Vec<String>) -> Result<AttentionKind> {
        if let (Some(kv_lora_rank), Some(qk_rope_head_dim)) =
            (self.u64_of("kv_lora_rank"), self.u64_of("qk_rope_head_dim"))
        {
            notes.push(format!(
                "MLA: head size kv_lora_rank {kv_lora_rank} + qk_rope_head_dim {qk_rope_head_dim}, 1 head, no separate V"
            ));
            return Ok(AttentionKind::Mla {
                kv_lora_rank,
                qk_rope_head_dim,
            });
        }
        let heads = self.require(
            &["num_attention_heads", "n_head", "num_heads"],
            "add num_attention_heads, or pass the language model's own config",
        )?;
        let num_kv_heads = match self.first_u64(&["num_key_value_heads", "num_kv_heads"]) {
            Some(kv) => kv,
            None => {
                notes.push(format!(
                    "no num_key_value_heads: defaulted to num_attention_heads ({heads})"
                ));
                heads
            }
        };
        let head_dim = match self.first_u64(&["head_dim", "attention_head_dim"]) {
            Some(d) => d,
            None => {
                let hidden = self.require(
                    &["hidden_size", "n_embd", "d_model"],
                    "add head_dim or hidden_size",
                )?;
                if heads == 0 {
                    return Err(ModelError::malformed(
                        &self.path,
                        "num_attention_heads is 0",
                        "fix num_attention_heads in config.json",
                    ));
                }
                notes.push(format!(
                    "no head_dim: hidden_size {hidden} / num_attention_heads {heads} = {}",
                    hidden / heads
                ));
                hidden / heads
            }
        };
        Ok(AttentionKind::Standard {
            num_attention_heads: heads,
            num_kv_heads,
            head_dim,
        })
    }

    fn mamba(&self, layers: u64, linear_attention: bool) -> Result<MambaGeometry> {
        let fix = "add the Mamba fields (conv kernel, state size, heads) or pass the model's own config.json";
        if linear_attention {
            return Ok(MambaGeometry::GatedDeltaNet {
                layers,
                num_k_heads: self.require(&["linear_num_key_heads"], fix)?,
                num_v_heads: self.require(&["linear_num_value_heads"], fix)?,
                head_k_dim: self.require(&["linear_key_head_dim"], fix)?,
                head_v_dim: self.require(&["linear_value_head_dim"], fix)?,
                conv_kernel: self.require(&["linear_conv_kernel_dim"], fix)?,
            });
        }
        let conv_kernel = self.require(&["conv_kernel", "mamba_d_conv", "d_conv"], fix)?;
        let state_size = self.require(
            &["ssm_state_size", "mamba_d_state", "state_size", "d_state"],
            fix,
        )?;
        let heads = self.first_u64(&["mamba_num_heads", "mamba_n_heads"]);
        let head_dim = self.first_u64(&["mamba_head_dim", "mamba_d_head"]);
        let expand = self.first_u64(&["mamba_expand", "expand"]);
        let hidden = self.first_u64(&["hidden_size", "d_model"]);
        let expanded = match (expand, hidden) {
            (Some(e), Some(h)) => Some(e.saturating_mul(h)),
            _ => None,
        };
        match (heads, head_dim) {
            (Some(num_heads), Some(head_dim)) => Ok(MambaGeometry::Mamba2 {
                layers,
                // vLLM's nemotron_h uses heads × head_dim; granitemoehybrid uses
                // expand × hidden. They agree for published configs; prefer the former.
                intermediate_size: num_heads.saturating_mul(head_dim),
                num_heads,
                head_dim,
                state_size,
                n_groups: self
                    .first_u64(&["n_groups", "mamba_n_groups", "mamba_num_groups"])
                    .unwrap_or(1),
                conv_kernel,
            }),
            _ => Ok(MambaGeometry::Mamba1 {
                layers,
                intermediate_size: expanded.or_else(|| self.u64_of("mamba_d_ssm")).ok_or_else(
                    || ModelError::MissingField {
                        path: self.path.clone(),
                        field: "mamba_expand` and `hidden_size".into(),
                        within: self.text().map(|(t, _)| t.to_owned()),
                        fix: fix.to_owned(),
                    },
                )?,
                state_size,
                conv_kernel,
            }),
        }
    }
}

/// Reads `config.json` at `path` and returns its KV geometry.
pub fn kv_geometry_from_config(path: &Path) -> Result<KvGeometry> {
    HfConfig::read(path)?.kv_geometry()
}
