//! Weights size and dtype census from safetensors headers, without reading tensors.
//!
//! A safetensors file is an 8-byte little-endian header length N, N bytes of JSON
//! (`{"name": {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {…}}`, offsets
//! relative to the end of the header), then the data. We read only the first 8 + N bytes, cap N
//! at 100 MB (the safetensors crate's own limit) and check it against the file size before
//! allocating, and check each tensor's span against the data section and its shape × dtype.
//! Sharded checkpoints are read through `model.safetensors.index.json` (`weight_map` names
//! every shard).

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{ModelError, Result};

/// The safetensors crate's `MAX_HEADER_SIZE`.
pub const MAX_HEADER_LEN: u64 = 100_000_000;

/// Tensors of one dtype.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct DtypeCensus {
    /// Safetensors dtype name: `BF16`, `F8_E4M3`, `U8` (packed 4-bit), …
    pub dtype: String,
    pub tensors: u64,
    pub bytes: u64,
    /// Elements (the product of shapes); for packed dtypes this counts storage elements, not
    /// logical weights.
    pub elements: u64,
}

/// Size and dtypes of one safetensors file or a sharded set.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct SafetensorsSummary {
    /// File names, relative to the checkpoint directory.
    pub files: Vec<String>,
    pub tensor_count: u64,
    /// Sum of all tensors' data spans: what loading the weights costs, before any
    /// engine-side repacking.
    pub total_bytes: u64,
    /// Largest first.
    pub dtypes: Vec<DtypeCensus>,
}

fn dtype_size(dtype: &str) -> Option<u64> {
    Some(match dtype {
        "BOOL" | "U8" | "I8" | "F8_E5M2" | "F8_E4M3" | "F8_E8M0" => 1,
        "U16" | "I16" | "F16" | "BF16" => 2,
        "U32" | "I32" | "F32" => 4,
        "U64" | "I64" | "F64" => 8,
        // Sub-byte types (F4, F6_*) are packed; their span is not elements × whole bytes.
        _ => return None,
    })
}

fn bad(path: &Path, what: impl Into<String>) -> ModelError {
    ModelError::malformed(
        path,
        what,
        "re-download the file; a valid safetensors header describes every tensor inside the file",
    )
}

/// Reads the header of one safetensors file.
pub fn read_safetensors_header(path: &Path) -> Result<SafetensorsSummary> {
    let mut file = crate::regular::open_regular(path).map_err(|e| ModelError::io(path, e))?;
    let file_size = file.metadata().map_err(|e| ModelError::io(path, e))?.len();
    if file_size < 8 {
        return Err(ModelError::Truncated {
            path: path.to_owned(),
            offset: file_size,
            what: "the 8-byte header length".into(),
        });
    }
    let mut len_bytes = [0u8; 8];
    file.read_exact(&mut len_bytes)
        .map_err(|e| ModelError::io(path, e))?;
    let header_len = u64::from_le_bytes(len_bytes);
    if header_len > MAX_HEADER_LEN {
        return Err(bad(
            path,
            format!("header length {header_len} exceeds the {MAX_HEADER_LEN}-byte limit"),
        ));
    }
    if header_len > file_size - 8 {
        return Err(ModelError::Truncated {
            path: path.to_owned(),
            offset: file_size,
            what: format!("a {header_len}-byte JSON header"),
        });
    }
    let mut header = Vec::new();
    (&mut file)
        .take(header_len)
        .read_to_end(&mut header)
        .map_err(|e| ModelError::io(path, e))?;
    let data_len = file_size - 8 - header_len;
    let map: serde_json::Map<String, Value> =
        serde_json::from_slice(&header).map_err(|source| ModelError::Json {
            path: path.to_owned(),
            source,
        })?;

    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut summary = SafetensorsSummary {
        files: vec![name],
        tensor_count: 0,
        total_bytes: 0,
        dtypes: Vec::new(),
    };
    for (tensor, info) in &map {
        if tensor == "__metadata__" {
            continue;
        }
        let dtype = info
            .get("dtype")
            .and_then(Value::as_str)
            .ok_or_else(|| bad(path, format!("tensor `{tensor}` has no dtype")))?;
        let offsets = info
            .get("data_offsets")
            .and_then(Value::as_array)
            .and_then(|a| match a.as_slice() {
                [b, e] => Some((b.as_u64()?, e.as_u64()?)),
                _ => None,
            })
            .ok_or_else(|| {
                bad(
                    path,
                    format!("tensor `{tensor}` has no [begin, end] data_offsets"),
                )
            })?;
        let (begin, end) = offsets;
        if begin > end || end > data_len {
            return Err(bad(
                path,
                format!(
                    "tensor `{tensor}` spans bytes {begin}..{end} of a {data_len}-byte data section"
                ),
            ));
        }
        let elements = info
            .get("shape")
            .and_then(Value::as_array)
            .and_then(|dims| {
                dims.iter()
                    .try_fold(1u64, |acc, d| acc.checked_mul(d.as_u64()?))
            })
            .ok_or_else(|| bad(path, format!("tensor `{tensor}` has no valid shape")))?;
        let bytes = end - begin;
        if let Some(size) = dtype_size(dtype)
            && elements.checked_mul(size) != Some(bytes)
        {
            return Err(bad(
                path,
                format!(
                    "tensor `{tensor}`: shape × {dtype} is not the {bytes} bytes its offsets span"
                ),
            ));
        }
        summary.add(dtype, 1, bytes, elements);
    }
    summary.sort();
    Ok(summary)
}

impl SafetensorsSummary {
    fn add(&mut self, dtype: &str, tensors: u64, bytes: u64, elements: u64) {
        self.tensor_count = self.tensor_count.saturating_add(tensors);
        self.total_bytes = self.total_bytes.saturating_add(bytes);
        match self.dtypes.iter_mut().find(|d| d.dtype == dtype) {
            Some(d) => {
                d.tensors = d.tensors.saturating_add(tensors);
                d.bytes = d.bytes.saturating_add(bytes);
                d.elements = d.elements.saturating_add(elements);
            }
            None => self.dtypes.push(DtypeCensus {
                dtype: dtype.to_owned(),
                tensors,
                bytes,
                elements,
            }),
        }
    }

    fn merge(&mut self, other: SafetensorsSummary) {
        self.files.extend(other.files);
        for d in other.dtypes {
            self.add(&d.dtype, d.tensors, d.bytes, d.elements);
        }
    }

    fn sort(&mut self) {
        self.dtypes
            .sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.dtype.cmp(&b.dtype)));
    }
}

/// Reads every shard named by a `*.safetensors.index.json` `weight_map`.
pub fn read_safetensors_index(index_path: &Path) -> Result<SafetensorsSummary> {
    let text = crate::read_small_text(index_path, MAX_HEADER_LEN)?;
    let index: Value = serde_json::from_str(&text).map_err(|source| ModelError::Json {
        path: index_path.to_owned(),
        source,
    })?;
    let weight_map = index
        .get("weight_map")
        .and_then(Value::as_object)
        .ok_or_else(|| {
            ModelError::malformed(
                index_path,
                "no `weight_map` object",
                "re-download the index; it must map tensor names to shard files",
            )
        })?;
    let dir = index_path.parent().unwrap_or(Path::new("."));
    let mut shards = BTreeSet::new();
    for shard in weight_map.values() {
        let name = shard.as_str().ok_or_else(|| {
            ModelError::malformed(
                index_path,
                "a weight_map value is not a file name",
                "re-download the index",
            )
        })?;
        // A shard name must stay inside the checkpoint directory.
        if Path::new(name).components().count() != 1 {
            return Err(ModelError::malformed(
                index_path,
                format!("weight_map names `{name}`, outside the checkpoint directory"),
                "re-download the index",
            ));
        }
        shards.insert(name.to_owned());
    }
    let mut total: Option<SafetensorsSummary> = None;
    for shard in shards {
        let path: PathBuf = dir.join(&shard);
        if !path.is_file() {
            return Err(ModelError::malformed(
                index_path,
                format!("weight_map names shard `{shard}`, which is missing"),
                "finish the download (all shards listed in the index must be present)",
            ));
        }
        let one = read_safetensors_header(&path)?;
        match total.as_mut() {
            Some(t) => t.merge(one),
            None => total = Some(one),
        }
    }
    let mut total = total.ok_or_else(|| {
        ModelError::malformed(index_path, "weight_map is empty", "re-download the index")
    })?;
    total.sort();
    Ok(total)
}

/// The weights of a checkpoint directory: through its index when there is one, else every
/// `*.safetensors` file in it; `None` when it has no safetensors at all.
pub fn safetensors_in_dir(dir: &Path) -> Result<Option<SafetensorsSummary>> {
    let index = dir.join("model.safetensors.index.json");
    if index.is_file() {
        return read_safetensors_index(&index).map(Some);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| ModelError::io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "safetensors") && p.is_file())
        .collect();
    files.sort();
    let mut total: Option<SafetensorsSummary> = None;
    for f in files {
        let one = read_safetensors_header(&f)?;
        match total.as_mut() {
            Some(t) => t.merge(one),
            None => total = Some(one),
        }
    }
    if let Some(t) = total.as_mut() {
        t.sort();
    }
    Ok(total)
}
