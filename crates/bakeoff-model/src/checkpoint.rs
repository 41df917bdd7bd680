//! `bakeoff audit checkpoint`: what a checkpoint directory or GGUF file is, how big its weights
//! are, and whether a serving flag agrees with it — decided from headers and JSON alone.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::HfConfig;
use crate::error::{ModelError, Result};
use crate::gguf::{GgufFile, read_gguf_file};
use crate::kv::KvGeometry;
use crate::quant::{Finding, QuantizationInfo, check_quantization_flag, read_quantization};
use crate::safetensors::{DtypeCensus, safetensors_in_dir};

/// The on-disk format of the weights.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum WeightsFormat {
    Safetensors,
    Gguf,
    /// PyTorch pickles (`*.bin`, `*.pt`): sized by file size, never opened.
    PytorchBin,
}

/// Size of the weights and what they are made of.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct WeightsSummary {
    pub format: WeightsFormat,
    pub bytes: u64,
    /// How `bytes` was found: `safetensors headers`, `GGUF tensor infos`,
    /// `GGUF data section`, `file sizes`.
    pub source: String,
    pub files: Vec<String>,
    /// Per dtype (safetensors dtype or ggml type), largest first.
    pub dtypes: Vec<DtypeCensus>,
}

/// What we know about a checkpoint.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct CheckpointReport {
    pub path: String,
    pub architectures: Vec<String>,
    pub model_type: Option<String>,
    pub text_model_type: Option<String>,
    pub dtype: Option<String>,
    /// Training context window (`max_position_embeddings` or `<arch>.context_length`).
    pub context_length: Option<u64>,
    pub quantization: Option<QuantizationInfo>,
    pub weights: Option<WeightsSummary>,
    /// From config.json; `None` when it could not be derived (the reason is in `notes`).
    pub kv_geometry: Option<KvGeometry>,
    pub notes: Vec<String>,
}

/// Inspects a checkpoint directory (with `config.json`) or a `.gguf` file.
pub fn inspect_checkpoint(path: &Path) -> Result<CheckpointReport> {
    if path.is_file() {
        return inspect_gguf(path);
    }
    if !path.is_dir() {
        return Err(ModelError::io(
            path,
            std::io::Error::new(std::io::ErrorKind::NotFound, "no such file or directory"),
        ));
    }
    let config_path = path.join("config.json");
    if !config_path.is_file() {
        let ggufs = files_with_ext(path, &["gguf"])?;
        return match ggufs.as_slice() {
            [one] => inspect_gguf(one),
            _ => Err(ModelError::malformed(
                path,
                format!("no config.json and {} .gguf files", ggufs.len()),
                "point at a Hugging Face checkpoint directory or at one .gguf file",
            )),
        };
    }
    let config = HfConfig::read(&config_path)?;
    let summary = config.summary();
    let mut notes = Vec::new();
    let kv_geometry = match config.kv_geometry() {
        Ok(g) => Some(g),
        Err(e) => {
            notes.push(format!("no KV geometry: {e}"));
            None
        }
    };
    let quantization = read_quantization(path, Some(config.json()))?;
    let weights = match safetensors_in_dir(path)? {
        Some(s) => Some(WeightsSummary {
            format: WeightsFormat::Safetensors,
            bytes: s.total_bytes,
            source: "safetensors headers".into(),
            files: s.files,
            dtypes: s.dtypes,
        }),
        None => {
            let bins = files_with_ext(path, &["bin", "pt", "pth"])?;
            if bins.is_empty() {
                notes.push("no weight files found (no *.safetensors, *.bin)".into());
                None
            } else {
                notes.push("pickled PyTorch weights: sized by file size, not opened".into());
                let mut bytes = 0u64;
                for b in &bins {
                    let len = std::fs::metadata(b)
                        .map_err(|e| ModelError::io(b, e))?
                        .len();
                    bytes = bytes.saturating_add(len);
                }
                Some(WeightsSummary {
                    format: WeightsFormat::PytorchBin,
                    bytes,
                    source: "file sizes".into(),
                    files: bins.iter().map(|p| file_name(p)).collect(),
                    dtypes: Vec::new(),
                })
            }
        }
    };
    Ok(CheckpointReport {
        path: path.display().to_string(),
        architectures: summary.architectures,
        model_type: summary.model_type,
        text_model_type: summary.text_model_type,
        dtype: summary.dtype,
        context_length: summary.max_position_embeddings,
        quantization,
        weights,
        kv_geometry,
        notes,
    })
}

fn inspect_gguf(path: &Path) -> Result<CheckpointReport> {
    let g: GgufFile = read_gguf_file(path)?;
    let mut notes = Vec::new();
    if g.chat_template().is_none() {
        notes.push(
            "no tokenizer.chat_template in the GGUF (a base model, or one converted without it)"
                .into(),
        );
    }
    let (source, dtypes) = match g.weights_bytes_source {
        crate::gguf::WeightsBytesSource::TensorInfos => ("GGUF tensor infos", true),
        crate::gguf::WeightsBytesSource::DataSection => ("GGUF data section", false),
    };
    let dtypes = if dtypes {
        let mut d: Vec<DtypeCensus> = g
            .tensor_types
            .iter()
            .map(|c| DtypeCensus {
                dtype: c.ggml_type.clone(),
                tensors: c.tensors,
                bytes: c.bytes.unwrap_or(0),
                elements: 0,
            })
            .collect();
        d.sort_by_key(|c| std::cmp::Reverse(c.bytes));
        d
    } else {
        Vec::new()
    };
    Ok(CheckpointReport {
        path: path.display().to_string(),
        architectures: g.architecture().map(str::to_owned).into_iter().collect(),
        model_type: None,
        text_model_type: None,
        dtype: None,
        context_length: g.context_length(),
        quantization: Some(QuantizationInfo {
            method: "gguf".into(),
            source: "GGUF general.file_type".into(),
            bits: None,
            group_size: None,
            format: g.file_type_name().map(str::to_owned),
            quant_algo: None,
            legacy_layout: false,
        }),
        weights: Some(WeightsSummary {
            format: WeightsFormat::Gguf,
            bytes: g.weights_bytes,
            source: source.into(),
            files: vec![file_name(path)],
            dtypes,
        }),
        kv_geometry: None,
        notes,
    })
}

/// Findings of the serving flag `--quantization` (or its absence) against the checkpoint.
pub fn check_serving_flag(
    report: &CheckpointReport,
    quantization_flag: Option<&str>,
) -> Vec<Finding> {
    check_quantization_flag(
        &report.path,
        quantization_flag,
        report.quantization.as_ref(),
    )
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn files_with_ext(dir: &Path, exts: &[&str]) -> Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| ModelError::io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && p.extension()
                    .and_then(|x| x.to_str())
                    .is_some_and(|x| exts.contains(&x))
        })
        .collect();
    out.sort();
    Ok(out)
}

/// The checkpoint audit `seat up` runs before starting a seat whose model is a local path:
/// the findings of its `--quantization` flag (or its absence) against the checkpoint, and an
/// error finding when the checkpoint cannot be read at all. A model id that is not a local
/// path (a Hub name) gives no findings: there is nothing on disk to audit.
///
/// Callers refuse to start the seat when any finding is [`Severity::Error`]
/// (see [`blocks_start`]).
pub fn audit_seat_checkpoint(model_path: &Path, quantization_flag: Option<&str>) -> Vec<Finding> {
    if !model_path.exists() {
        return Vec::new();
    }
    match inspect_checkpoint(model_path) {
        Ok(report) => check_serving_flag(&report, quantization_flag),
        Err(e) => vec![Finding {
            code: "checkpoint-unreadable".into(),
            severity: crate::quant::Severity::Error,
            message: e.to_string(),
            fix: Some("point the seat at a complete checkpoint directory or .gguf file".into()),
        }],
    }
}

/// Whether any finding means the seat must not be started.
pub fn blocks_start(findings: &[Finding]) -> bool {
    findings
        .iter()
        .any(|f| f.severity == crate::quant::Severity::Error)
}
