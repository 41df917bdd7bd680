//! A checkpoint's quantization, and the check of a serving flag against it.
//!
//! vLLM reads `quantization_config` from config.json by itself; `--quantization` only has to
//! agree with it. The failure this guards against is docs/field-cases.md F7: a compose file hard-coding
//! `--quantization compressed-tensors` pointed at unquantized BF16 weights crash-looped 35 times
//! with a `TypeError` from `CompressedTensorsConfig.__init__`.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{ModelError, Result};

/// The crash vLLM prints when `--quantization compressed-tensors` meets a checkpoint without a
/// compressed-tensors config (docs/field-cases.md F7, quoted as logged).
pub const COMPRESSED_TENSORS_CRASH: &str = "TypeError: CompressedTensorsConfig.__init__() missing 3 required positional arguments: 'target_scheme_map', 'ignore', 'quant_format'";

/// How a checkpoint is quantized.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct QuantizationInfo {
    /// `quant_method`, lower-case with `-` for `_` (`compressed-tensors`, `fp8`, `awq`,
    /// `gptq`, `modelopt`, `bitsandbytes`, `mxfp4`, or `gguf` for GGUF files).
    pub method: String,
    /// Where it was found: `config.json quantization_config`, `config.json
    /// compression_config`, `hf_quant_config.json`, or `GGUF general.file_type`.
    pub source: String,
    pub bits: Option<u64>,
    pub group_size: Option<i64>,
    /// compressed-tensors `format` (`float-quantized`, `nvfp4-pack-quantized`, …), AWQ
    /// `version`, or the GGUF file type name.
    pub format: Option<String>,
    /// ModelOpt `quant_algo` (`FP8`, `NVFP4`).
    pub quant_algo: Option<String>,
    /// A compressed-tensors config without `config_groups`: the flat/legacy shape that
    /// vLLM's CompressedTensorsConfig cannot be built from.
    pub legacy_layout: bool,
}

/// Normalizes a method or flag name: lower case, `_` → `-`.
pub fn normalize_method(s: &str) -> String {
    s.trim().to_ascii_lowercase().replace('_', "-")
}

fn from_config_object(obj: &Value, source: &str) -> Option<QuantizationInfo> {
    let method = obj
        .get("quant_method")
        .and_then(Value::as_str)
        .map(normalize_method)
        .or_else(|| {
            // Older compressed-tensors configs (`compression_config`) have no quant_method.
            (source.ends_with("compression_config")).then(|| "compressed-tensors".to_owned())
        })?;
    let format = obj
        .get("format")
        .or_else(|| obj.get("version"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    Some(QuantizationInfo {
        legacy_layout: method == "compressed-tensors" && obj.get("config_groups").is_none(),
        method,
        source: source.to_owned(),
        bits: obj
            .get("bits")
            .or_else(|| obj.get("w_bit"))
            .and_then(Value::as_u64),
        group_size: obj
            .get("group_size")
            .or_else(|| obj.get("q_group_size"))
            .and_then(Value::as_i64),
        format,
        quant_algo: obj
            .get("quant_algo")
            .and_then(Value::as_str)
            .map(str::to_owned),
    })
}

/// The quantization declared by a checkpoint directory: `quantization_config` (top level or
/// in the nested text config), the older `compression_config`, or ModelOpt's
/// `hf_quant_config.json` next to config.json.
pub fn read_quantization(dir: &Path, config: Option<&Value>) -> Result<Option<QuantizationInfo>> {
    if let Some(config) = config {
        let nested = ["text_config", "llm_config", "language_config"]
            .iter()
            .find_map(|k| config.get(*k));
        for (key, label) in [
            ("quantization_config", "config.json quantization_config"),
            ("compression_config", "config.json compression_config"),
        ] {
            let obj = config
                .get(key)
                .or_else(|| nested.and_then(|n| n.get(key)))
                .filter(|v| v.is_object());
            if let Some(info) = obj.and_then(|o| from_config_object(o, label)) {
                return Ok(Some(info));
            }
        }
    }
    let hf_quant = dir.join("hf_quant_config.json");
    if hf_quant.is_file() {
        let text = crate::read_small_text(&hf_quant, 16 * 1024 * 1024)?;
        let v: Value = serde_json::from_str(&text).map_err(|source| ModelError::Json {
            path: hf_quant.clone(),
            source,
        })?;
        let q = v.get("quantization").unwrap_or(&v);
        return Ok(Some(QuantizationInfo {
            method: "modelopt".into(),
            source: "hf_quant_config.json".into(),
            bits: None,
            group_size: q.get("group_size").and_then(Value::as_i64),
            format: None,
            quant_algo: q
                .get("quant_algo")
                .and_then(Value::as_str)
                .map(str::to_owned),
            legacy_layout: false,
        }));
    }
    Ok(None)
}

/// How bad a finding is.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The seat will not start (or will serve the wrong thing).
    Error,
    /// It may work; check.
    Warning,
    /// Worth knowing; nothing to do.
    Note,
}

/// One finding of an audit.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct Finding {
    /// Stable kebab-case identifier, e.g. `quantization-mismatch`.
    pub code: String,
    pub severity: Severity,
    pub message: String,
    pub fix: Option<String>,
}

/// `--quantization` values that quantize unquantized weights while loading.
const ONLINE_METHODS: [&str; 5] = ["fp8", "bitsandbytes", "experts-int8", "ptpc-fp8", "torchao"];

/// `--quantization` values that need weights already quantized that way.
const CHECKPOINT_METHODS: [&str; 17] = [
    "compressed-tensors",
    "awq",
    "awq-marlin",
    "gptq",
    "gptq-marlin",
    "gptq-marlin-24",
    "gptq-bitblas",
    "bitblas",
    "marlin",
    "modelopt",
    "modelopt-fp4",
    "mxfp4",
    "quark",
    "gguf",
    "auto-round",
    "moe-wna16",
    "hqq",
];

/// Whether `--quantization flag` accepts a checkpoint quantized with `method`. Kernel flags
/// (`awq_marlin`, `gptq_marlin`, …) are vLLM's allowed overrides of the config's method.
fn flag_accepts(flag: &str, method: &str) -> bool {
    if flag == method {
        return true;
    }
    match flag {
        "awq-marlin" => method == "awq",
        "gptq-marlin" | "gptq-marlin-24" | "gptq-bitblas" | "bitblas" | "marlin" => {
            method == "gptq"
        }
        "modelopt" | "modelopt-fp4" => method == "modelopt" || method == "modelopt-fp4",
        "moe-wna16" => method == "awq" || method == "gptq",
        _ => false,
    }
}

const DROP_OR_REPOINT: &str = "drop the --quantization flag (vLLM reads the checkpoint's own quantization_config), or point the seat at a checkpoint quantized with that method";

/// Checks a `--quantization` flag (or its absence) against what the checkpoint declares.
pub fn check_quantization_flag(
    checkpoint: &str,
    flag: Option<&str>,
    quant: Option<&QuantizationInfo>,
) -> Vec<Finding> {
    let flag = flag.map(normalize_method).filter(|f| !f.is_empty());
    match (flag.as_deref(), quant) {
        (None, None) => Vec::new(),
        (None, Some(q)) => vec![Finding {
            code: "quantization-auto-detected".into(),
            severity: Severity::Note,
            message: format!(
                "{checkpoint} declares quant_method `{}` (from {}); vLLM detects it without a --quantization flag",
                q.method, q.source
            ),
            fix: None,
        }],
        (Some("compressed-tensors"), None) => vec![Finding {
            code: "quantization-mismatch".into(),
            severity: Severity::Error,
            message: format!(
                "--quantization compressed-tensors, but {checkpoint} has no quantization_config: vLLM will crash at startup with `{COMPRESSED_TENSORS_CRASH}` (docs/field-cases.md F7: 35 restarts before it was caught)"
            ),
            fix: Some(DROP_OR_REPOINT.into()),
        }],
        (Some(f), None) if ONLINE_METHODS.contains(&f) => vec![Finding {
            code: "quantization-online".into(),
            severity: Severity::Note,
            message: format!(
                "--quantization {f} on unquantized weights: vLLM quantizes them while loading (weights load at full size first)"
            ),
            fix: None,
        }],
        (Some(f), None) if CHECKPOINT_METHODS.contains(&f) => vec![Finding {
            code: "quantization-mismatch".into(),
            severity: Severity::Error,
            message: format!(
                "--quantization {f} needs weights quantized with {f}, but {checkpoint} has no quantization_config: vLLM will fail at startup"
            ),
            fix: Some(DROP_OR_REPOINT.into()),
        }],
        (Some(f), None) => vec![Finding {
            code: "quantization-unknown-flag".into(),
            severity: Severity::Warning,
            message: format!(
                "--quantization {f} is not a method bakeoff knows, and {checkpoint} has no quantization_config"
            ),
            fix: Some("check the flag against `vllm serve --help`".into()),
        }],
        (Some(f), Some(q)) if flag_accepts(f, &q.method) => {
            let mut out = Vec::new();
            if f == "compressed-tensors" && q.legacy_layout {
                out.push(Finding {
                    code: "quantization-legacy-config".into(),
                    severity: Severity::Warning,
                    message: format!(
                        "{checkpoint}'s compressed-tensors config has no config_groups (a flat or legacy layout): vLLM may crash with `{COMPRESSED_TENSORS_CRASH}`"
                    ),
                    fix: Some("re-export the checkpoint with a current llm-compressor, or drop the flag".into()),
                });
            }
            out.push(Finding {
                code: "quantization-flag-redundant".into(),
                severity: Severity::Note,
                message: format!(
                    "--quantization {f} agrees with {checkpoint}'s quant_method `{}`; vLLM would detect it anyway",
                    q.method
                ),
                fix: None,
            });
            out
        }
        (Some(f), Some(q)) => vec![Finding {
            code: "quantization-mismatch".into(),
            severity: Severity::Error,
            message: format!(
                "--quantization {f}, but {checkpoint} is quantized with `{}` (from {}): vLLM rejects a flag that differs from the checkpoint's quant_method",
                q.method, q.source
            ),
            fix: Some(format!(
                "use --quantization {} or drop the flag (vLLM reads the checkpoint's own quantization_config)",
                q.method
            )),
        }],
    }
}
