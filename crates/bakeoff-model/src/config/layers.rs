//! Layer kinds: how many layers are full attention, sliding window and recurrent (the rules
//! are listed in the parent module's documentation, in the order they are tried).

use serde_json::Value;

use super::HfConfig;
use crate::error::{ModelError, Result};

impl HfConfig {
    /// How many layers are full attention, sliding window and recurrent. The first rule that
    /// applies wins: `hybrid_override_pattern`, a per-layer list, an attention period, a
    /// full-attention interval, then the sliding window (with its pattern, if any).
    pub(super) fn layer_kinds(
        &self,
        num_layers: u64,
        notes: &mut Vec<String>,
    ) -> Result<LayerKinds> {
        let window = self.u64_of("sliding_window");
        if let Some(k) = self.kinds_from_hybrid_pattern(window, notes) {
            return Ok(k);
        }
        if let Some(k) = self.kinds_from_layer_list(window, notes) {
            return k;
        }
        if let Some(k) = self.kinds_from_attn_period(window, num_layers, notes) {
            return Ok(k);
        }
        if let Some(k) = self.kinds_from_full_attention_interval(window, num_layers, notes) {
            return Ok(k);
        }
        Ok(self.kinds_from_sliding_window(window, num_layers, notes))
    }

    /// Nemotron-H's `hybrid_override_pattern`: `M` a Mamba layer, `*` an attention layer.
    fn kinds_from_hybrid_pattern(
        &self,
        window: Option<u64>,
        notes: &mut Vec<String>,
    ) -> Option<LayerKinds> {
        let pattern = self.str_of("hybrid_override_pattern")?;
        let mut k = LayerKinds::with_window(window);
        for c in pattern.chars() {
            match c {
                'M' => k.recurrent += 1,
                '*' => k.full += 1,
                _ => {}
            }
        }
        notes.push(format!(
            "hybrid_override_pattern: {} attention (*), {} Mamba (M) of {} layers",
            k.full,
            k.recurrent,
            pattern.chars().count()
        ));
        Some(k)
    }

    /// A per-layer list of kinds (`layers_block_type`, `layer_types`). Sliding layers need
    /// the window size.
    fn kinds_from_layer_list(
        &self,
        window: Option<u64>,
        notes: &mut Vec<String>,
    ) -> Option<Result<LayerKinds>> {
        for key in ["layers_block_type", "layer_types"] {
            let Some(list) = self.field(key).and_then(Value::as_array) else {
                continue;
            };
            let mut k = LayerKinds::with_window(window);
            let mut unknown = Vec::new();
            for item in list {
                k.count_listed(item.as_str().unwrap_or(""), &mut unknown);
            }
            notes.push(format!(
                "{key}: {} full, {} sliding, {} recurrent of {} layers",
                k.full,
                k.sliding,
                k.recurrent,
                list.len()
            ));
            if !unknown.is_empty() {
                notes.push(format!(
                    "unknown layer kinds {unknown:?} priced as full attention"
                ));
            }
            if k.sliding > 0 && window.is_none() {
                return Some(Err(ModelError::MissingField {
                    path: self.path.clone(),
                    field: "sliding_window".into(),
                    within: self.text().map(|(t, _)| t.to_owned()),
                    fix: format!("{key} lists sliding layers; add their window size"),
                }));
            }
            return Some(Ok(k));
        }
        None
    }

    /// Jamba's `attn_layer_period` / `attn_layer_offset`: one attention layer per period.
    fn kinds_from_attn_period(
        &self,
        window: Option<u64>,
        num_layers: u64,
        notes: &mut Vec<String>,
    ) -> Option<LayerKinds> {
        let (Some(period), Some(offset)) = (
            self.u64_of("attn_layer_period"),
            self.u64_of("attn_layer_offset"),
        ) else {
            return None;
        };
        if period == 0 {
            return None;
        }
        let mut k = LayerKinds::with_window(window);
        // Counted arithmetically, not by iterating: num_layers comes from the file.
        k.full = if offset < period && num_layers > offset {
            (num_layers - offset).div_ceil(period)
        } else {
            0
        };
        k.recurrent = num_layers - k.full;
        notes.push(format!(
            "attn_layer_period {period} / offset {offset}: {} attention, {} Mamba",
            k.full, k.recurrent
        ));
        Some(k)
    }

    /// `full_attention_interval` (Qwen3-Next): every n-th layer full attention, the others
    /// linear attention.
    fn kinds_from_full_attention_interval(
        &self,
        window: Option<u64>,
        num_layers: u64,
        notes: &mut Vec<String>,
    ) -> Option<LayerKinds> {
        let interval = self.u64_of("full_attention_interval").filter(|n| *n > 0)?;
        let mut k = LayerKinds::with_window(window);
        k.full = num_layers / interval;
        k.recurrent = num_layers - k.full;
        k.linear_attention = true;
        notes.push(format!(
            "full_attention_interval {interval}: {} attention, {} linear-attention",
            k.full, k.recurrent
        ));
        Some(k)
    }

    /// No per-layer description: every layer full, unless a sliding window applies — then a
    /// pattern (given, or Gemma's), Qwen's `max_window_layers`, or every layer slides.
    fn kinds_from_sliding_window(
        &self,
        window: Option<u64>,
        num_layers: u64,
        notes: &mut Vec<String>,
    ) -> LayerKinds {
        let mut k = LayerKinds::with_window(window);
        let Some(window) = window else {
            k.full = num_layers;
            return k;
        };
        if self.field("use_sliding_window").and_then(Value::as_bool) == Some(false) {
            notes.push(format!(
                "sliding_window {window} ignored: use_sliding_window is false"
            ));
            k.full = num_layers;
            return k;
        }
        let model_type = self.model_type();
        let pattern = self
            .first_u64(&["sliding_window_pattern", "_sliding_window_pattern"])
            .or(match model_type.as_str() {
                "gemma3" | "gemma3_text" => Some(6),
                "gemma2" => Some(2),
                _ => None,
            });
        if let Some(p) = pattern.filter(|p| *p > 0) {
            k.full = num_layers / p;
            k.sliding = num_layers - k.full;
            notes.push(format!(
                "sliding window {window}, pattern {p} (every {p}th layer full): {} full, {} sliding",
                k.full, k.sliding
            ));
        } else if let Some(max_window_layers) = self
            .u64_of("max_window_layers")
            .filter(|_| model_type.starts_with("qwen"))
        {
            // Qwen2 (transformers): layers at index ≥ max_window_layers slide.
            k.full = max_window_layers.min(num_layers);
            k.sliding = num_layers - k.full;
            notes.push(format!(
                "sliding window {window} from layer {max_window_layers} (max_window_layers)"
            ));
        } else {
            k.sliding = num_layers;
            notes.push(format!(
                "sliding_window {window} with no layer pattern: every layer slides (Mistral 7B v0.1 semantics)"
            ));
        }
        k
    }
}

#[derive(Default)]
pub(super) struct LayerKinds {
    pub(super) full: u64,
    pub(super) sliding: u64,
    pub(super) recurrent: u64,
    pub(super) linear_attention: bool,
    pub(super) window: Option<u64>,
}

impl LayerKinds {
    fn with_window(window: Option<u64>) -> Self {
        Self {
            window,
            ..Self::default()
        }
    }

    /// One entry of a per-layer kind list. An unknown kind is priced as full attention (an
    /// over-estimate is the safe side for a capacity plan) and remembered once in `unknown`.
    fn count_listed(&mut self, kind: &str, unknown: &mut Vec<String>) {
        match kind {
            "full_attention" | "attention" | "global" | "full" => self.full += 1,
            "sliding_attention" | "sliding" | "local" | "chunked_attention" => self.sliding += 1,
            "mamba" | "mamba2" | "ssm" => self.recurrent += 1,
            "linear_attention" => {
                self.recurrent += 1;
                self.linear_attention = true;
            }
            other => {
                self.full += 1;
                if !unknown.contains(&other.to_owned()) {
                    unknown.push(other.to_owned());
                }
            }
        }
    }
}
