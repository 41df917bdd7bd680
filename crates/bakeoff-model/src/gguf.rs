//! Our own GGUF metadata reader: header, key-value section and tensor infos, never tensor data.
//!
//! Layout (ggml/docs/gguf.md, little-endian, versions 2 and 3): magic `GGUF`, `u32` version,
//! `u64` tensor count, `u64` key-value count, the key-value pairs, then one tensor info per
//! tensor (name, `u32` n_dims, `u64` dims, `u32` ggml type, `u64` offset into the data
//! section), padding to `general.alignment` (default 32), then the data.
//!
//! Large arrays (the 262,144-entry `tokenizer.ggml.tokens` of Gemma 3, scores, merges) are
//! *sought past*: only their element type and length are kept, so reading the metadata of a
//! 250 GB checkpoint costs a few megabytes of I/O at most. Every length read from the file is
//! checked against the bytes that remain before anything is allocated or skipped, so a hostile
//! or truncated file is an error, never a panic or a huge allocation.
//!
//! Weights size: we sum each tensor's size from its tensor info (dims × the ggml type's bytes per
//! block, see [`crate::ggml_types`]). That is the honest number, without alignment padding. When
//! a tensor has a type id newer than our table we fall back to `file size − data offset` and say
//! so in [`WeightsBytesSource`].

use std::io::{Read, Seek};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{ModelError, Result};
use crate::ggml_types::{ggml_type_info, llama_ftype_name};

mod cursor;
mod value;

use cursor::Cursor;
pub use value::{GgufArray, GgufType, GgufValue, MAX_INLINE_ARRAY_LEN};

/// Distinct tensor types kept in the census; ggml has about 40.
const MAX_CENSUS_TYPES: usize = 64;

/// Largest layer count we expand a scalar per-layer value to.
const MAX_LAYERS: usize = 4096;

/// GGML_MAX_DIMS: a tensor info declaring more dimensions is corrupt.
const MAX_DIMS: u32 = 4;

/// One key-value pair, in file order.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct GgufKv {
    pub key: String,
    pub value: GgufValue,
}

/// Tensors of one ggml type: how many and how many bytes of data.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct GgufTensorTypeCensus {
    /// ggml type name (`Q4_K`), or `unknown(N)` for an id newer than our table.
    pub ggml_type: String,
    pub tensors: u64,
    /// `None` for unknown types, whose block size we do not know.
    pub bytes: Option<u64>,
}

/// Where [`GgufFile::weights_bytes`] came from.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum WeightsBytesSource {
    /// Sum of every tensor's dims × bytes per element of its type.
    TensorInfos,
    /// `file size − data offset` (some tensor had a type we cannot size).
    DataSection,
}

/// What we read from a GGUF file: everything but the tensor data.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct GgufFile {
    pub version: u32,
    pub tensor_count: u64,
    pub metadata: Vec<GgufKv>,
    /// Tensor counts and bytes per ggml type, in order of first appearance.
    pub tensor_types: Vec<GgufTensorTypeCensus>,
    pub alignment: u64,
    /// Byte offset of the data section (after the tensor infos, aligned).
    pub data_offset: u64,
    pub file_size: u64,
    pub weights_bytes: u64,
    pub weights_bytes_source: WeightsBytesSource,
}

/// Reads the metadata of the GGUF file at `path`.
pub fn read_gguf_file(path: &Path) -> Result<GgufFile> {
    let file = crate::regular::open_regular(path).map_err(|e| ModelError::io(path, e))?;
    read_gguf(file, path)
}

/// Reads the metadata of a GGUF stream; `path` only names it in errors.
pub fn read_gguf<R: Read + Seek>(reader: R, path: &Path) -> Result<GgufFile> {
    let mut r = Cursor::new(reader, path)?;
    let version = read_header(&mut r, path)?;
    let tensor_count = r.u64("tensor count")?;
    let kv_count = r.u64("key-value count")?;
    let metadata = read_metadata(&mut r, kv_count, path)?;
    let alignment = alignment_of(&metadata, path)?;
    let tensors = read_tensor_infos(&mut r, tensor_count, path)?;

    let data_offset = r.pos.div_ceil(alignment).saturating_mul(alignment);
    let file_size = r.len;
    let data_end = tensors.data_end;
    if data_offset > file_size || data_end > file_size - data_offset {
        return Err(ModelError::Truncated {
            path: path.to_owned(),
            offset: file_size,
            what: format!("tensor data (needs {data_end} bytes after offset {data_offset})"),
        });
    }
    let (weights_bytes, weights_bytes_source) = match tensors.sized_total {
        Some(total) => (total, WeightsBytesSource::TensorInfos),
        None => (file_size - data_offset, WeightsBytesSource::DataSection),
    };

    Ok(GgufFile {
        version,
        tensor_count,
        metadata,
        tensor_types: tensors.census,
        alignment,
        data_offset,
        file_size,
        weights_bytes,
        weights_bytes_source,
    })
}

/// The magic and the version: little-endian GGUF 2 or 3, else an error that says what it is.
fn read_header<R: Read + Seek>(r: &mut Cursor<'_, R>, path: &Path) -> Result<u32> {
    let magic = r.bytes::<4>("magic")?;
    if &magic != b"GGUF" {
        return Err(ModelError::malformed(
            path,
            format!("not a GGUF file (first bytes {magic:02x?}, expected `GGUF`)"),
            "point at a .gguf file",
        ));
    }
    let version = r.u32("version")?;
    if version.swap_bytes() == 2 || version.swap_bytes() == 3 {
        return Err(ModelError::malformed(
            path,
            format!("big-endian GGUF (version field reads {version:#x} little-endian)"),
            "use the little-endian build of this model; big-endian GGUFs are only for s390x",
        ));
    }
    if version != 2 && version != 3 {
        return Err(ModelError::malformed(
            path,
            format!("GGUF version {version} is not supported (only 2 and 3)"),
            "convert the file with a current llama.cpp `convert_hf_to_gguf.py`",
        ));
    }
    Ok(version)
}

/// The key-value section, in file order; a duplicate key is an error.
fn read_metadata<R: Read + Seek>(
    r: &mut Cursor<'_, R>,
    kv_count: u64,
    path: &Path,
) -> Result<Vec<GgufKv>> {
    // No `with_capacity(kv_count)`: the count is attacker-controlled. Each pair consumes at least
    // 13 bytes of the file, so the loop is bounded by the file size.
    let mut metadata: Vec<GgufKv> = Vec::new();
    // A set, not a scan of `metadata`: a hostile file of many tiny pairs must stay linear.
    let mut seen = std::collections::HashSet::new();
    for _ in 0..kv_count {
        let key = r.string("metadata key")?;
        let type_id = r.u32("metadata value type")?;
        let value = r.value(type_id, &key)?;
        if !seen.insert(key.clone()) {
            // llama.cpp's gguf_init refuses duplicate keys; so do we, rather than pick one.
            return Err(ModelError::malformed(
                path,
                format!("duplicate metadata key `{key}`"),
                "re-convert the file; a valid GGUF has each key once",
            ));
        }
        metadata.push(GgufKv { key, value });
    }
    Ok(metadata)
}

/// `general.alignment` (default 32); anything but a power of two is an error.
fn alignment_of(metadata: &[GgufKv], path: &Path) -> Result<u64> {
    match metadata.iter().find(|kv| kv.key == "general.alignment") {
        None => Ok(32),
        Some(kv) => match kv.value.as_u64() {
            Some(a) if a > 0 && a.is_power_of_two() => Ok(a),
            _ => Err(ModelError::malformed(
                path,
                match kv.value.as_u64() {
                    Some(a) => format!("general.alignment is {a}, not a power of two"),
                    None => "general.alignment is not an unsigned integer".to_string(),
                },
                "re-convert the file",
            )),
        },
    }
}

/// What the tensor infos add up to.
struct TensorInfos {
    /// Per ggml type, in order of first appearance.
    census: Vec<GgufTensorTypeCensus>,
    /// Every tensor's bytes summed; `None` once one cannot be sized.
    sized_total: Option<u64>,
    /// The furthest byte any sized tensor reaches, relative to the data section.
    data_end: u64,
}

/// One tensor info: its ggml type id and its size in bytes when the type is known.
struct TensorInfo {
    type_id: u32,
    info: Option<crate::ggml_types::GgmlTypeInfo>,
    bytes: Option<u64>,
    offset: u64,
}

/// Every tensor info, counted into the census as it is read.
fn read_tensor_infos<R: Read + Seek>(
    r: &mut Cursor<'_, R>,
    tensor_count: u64,
    path: &Path,
) -> Result<TensorInfos> {
    let mut t = TensorInfos {
        census: Vec::new(),
        sized_total: Some(0),
        data_end: 0,
    };
    for _ in 0..tensor_count {
        let tensor = read_tensor_info(r, path)?;
        t.add(&tensor);
    }
    Ok(t)
}

/// Name, dims, type and offset of one tensor; its size from dims × the type's bytes per block.
fn read_tensor_info<R: Read + Seek>(r: &mut Cursor<'_, R>, path: &Path) -> Result<TensorInfo> {
    let name = r.string("tensor name")?;
    let n_dims = r.u32("tensor dimension count")?;
    if n_dims > MAX_DIMS {
        return Err(ModelError::malformed(
            path,
            format!("tensor `{name}` declares {n_dims} dimensions (ggml allows {MAX_DIMS})"),
            "re-download or re-convert the file",
        ));
    }
    let mut elems: Option<u64> = Some(1);
    let mut ne0 = 1;
    for d in 0..n_dims {
        let dim = r.u64("tensor dimension")?;
        if d == 0 {
            ne0 = dim;
        }
        elems = elems.and_then(|e| e.checked_mul(dim));
    }
    let type_id = r.u32("tensor type")?;
    let offset = r.u64("tensor data offset")?;
    let info = ggml_type_info(type_id);
    let bytes = match (info, elems) {
        (Some(info), Some(elems)) if ne0.is_multiple_of(info.block_elems) => {
            (elems / info.block_elems).checked_mul(info.block_bytes)
        }
        _ => None,
    };
    if info.is_some() && bytes.is_none() {
        return Err(ModelError::malformed(
            path,
            format!("tensor `{name}` has a size that overflows or is not whole blocks"),
            "re-download or re-convert the file",
        ));
    }
    Ok(TensorInfo {
        type_id,
        info,
        bytes,
        offset,
    })
}

impl TensorInfos {
    fn add(&mut self, tensor: &TensorInfo) {
        let bytes = tensor.bytes;
        if let Some(b) = bytes {
            self.data_end = self.data_end.max(tensor.offset.saturating_add(b));
        }
        self.sized_total = match (self.sized_total, bytes) {
            (Some(t), Some(b)) => t.checked_add(b),
            _ => None,
        };
        let census = &mut self.census;
        let type_name = match tensor.info {
            Some(i) => i.name.to_owned(),
            // Bounded: a hostile file giving every tensor its own unknown id must not make the
            // census (and its linear lookup) grow with the tensor count.
            None if census.len() < MAX_CENSUS_TYPES => format!("unknown({})", tensor.type_id),
            None => "unknown(other)".to_owned(),
        };
        match census.iter_mut().find(|c| c.ggml_type == type_name) {
            Some(c) => {
                c.tensors += 1;
                c.bytes = match (c.bytes, bytes) {
                    (Some(a), Some(b)) => a.checked_add(b),
                    _ => None,
                };
            }
            None => census.push(GgufTensorTypeCensus {
                ggml_type: type_name,
                tensors: 1,
                bytes,
            }),
        }
    }
}

impl GgufFile {
    /// The value under `key`.
    pub fn get(&self, key: &str) -> Option<&GgufValue> {
        self.metadata
            .iter()
            .find(|kv| kv.key == key)
            .map(|kv| &kv.value)
    }

    fn str_of(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(GgufValue::as_str)
    }

    /// `<architecture>.<suffix>` as an unsigned integer.
    pub fn arch_u64(&self, suffix: &str) -> Option<u64> {
        let arch = self.architecture()?;
        self.get(&format!("{arch}.{suffix}"))
            .and_then(GgufValue::as_u64)
    }

    /// `general.architecture`, e.g. `gemma3`.
    pub fn architecture(&self) -> Option<&str> {
        self.str_of("general.architecture")
    }

    /// `general.name`.
    pub fn name(&self) -> Option<&str> {
        self.str_of("general.name")
    }

    /// `<arch>.context_length`: the training context window.
    pub fn context_length(&self) -> Option<u64> {
        self.arch_u64("context_length")
    }

    /// `<arch>.block_count`: number of layers.
    pub fn block_count(&self) -> Option<u64> {
        self.arch_u64("block_count")
    }

    /// `<arch>.attention.head_count`.
    pub fn head_count(&self) -> Option<u64> {
        self.arch_u64("attention.head_count")
    }

    /// `<arch>.attention.head_count_kv` when it is one number for every layer.
    pub fn head_count_kv(&self) -> Option<u64> {
        self.arch_u64("attention.head_count_kv")
    }

    /// `<arch>.attention.head_count_kv` per layer: the array form (hybrid models write 0 for
    /// their recurrent layers), or the scalar repeated `block_count` times.
    pub fn head_count_kv_per_layer(&self) -> Option<Vec<u64>> {
        let arch = self.architecture()?;
        let value = self.get(&format!("{arch}.attention.head_count_kv"))?;
        if let Some(n) = value.as_u64() {
            let layers = usize::try_from(self.block_count()?).ok()?;
            // A hostile block count is refused rather than allocated; no real model comes
            // within an order of magnitude of this.
            if layers > MAX_LAYERS {
                return None;
            }
            return Some(vec![n; layers]);
        }
        let values = value.as_array()?.values.as_ref()?;
        values.iter().map(GgufValue::as_u64).collect()
    }

    /// `<arch>.embedding_length`: hidden size.
    pub fn embedding_length(&self) -> Option<u64> {
        self.arch_u64("embedding_length")
    }

    /// `<arch>.attention.key_length`: K head dimension (llama.cpp defaults it to
    /// embedding_length / head_count when absent; [`Self::key_length_or_default`] does that).
    pub fn key_length(&self) -> Option<u64> {
        self.arch_u64("attention.key_length")
    }

    /// `<arch>.attention.value_length`: V head dimension.
    pub fn value_length(&self) -> Option<u64> {
        self.arch_u64("attention.value_length")
    }

    /// K head dimension with llama.cpp's default (`n_embd / n_head`).
    pub fn key_length_or_default(&self) -> Option<u64> {
        self.key_length().or_else(|| {
            self.embedding_length()?
                .checked_div(self.head_count().filter(|h| *h > 0)?)
        })
    }

    /// V head dimension with llama.cpp's default (`n_embd / n_head`).
    pub fn value_length_or_default(&self) -> Option<u64> {
        self.value_length().or_else(|| {
            self.embedding_length()?
                .checked_div(self.head_count().filter(|h| *h > 0)?)
        })
    }

    /// `<arch>.attention.sliding_window`.
    pub fn sliding_window(&self) -> Option<u64> {
        self.arch_u64("attention.sliding_window")
    }

    /// `tokenizer.chat_template` (base models often have none).
    pub fn chat_template(&self) -> Option<&str> {
        self.str_of("tokenizer.chat_template")
    }

    /// `general.file_type` (a `llama_ftype`; 15 is Q4_K_M).
    pub fn file_type(&self) -> Option<u64> {
        self.get("general.file_type").and_then(GgufValue::as_u64)
    }

    /// `general.file_type` as llama.cpp names it, e.g. `MOSTLY_Q4_K_M`.
    pub fn file_type_name(&self) -> Option<&'static str> {
        self.file_type().and_then(llama_ftype_name)
    }
}
