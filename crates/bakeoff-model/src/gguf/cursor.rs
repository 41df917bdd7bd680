//! The bounded reader under [`super::read_gguf`]: a position-aware cursor whose every read or
//! skip is checked against the bytes that remain, and the metadata value reader on top of it
//! (strings, scalars, arrays kept inline or sought past).

use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::value::{GgufArray, GgufType, GgufValue, MAX_INLINE_ARRAY_LEN};
use crate::error::{ModelError, Result};

/// Strings longer than this are refused even if the file is big enough: no real key or chat
/// template comes near it, and it bounds what one hostile length can make us allocate.
const MAX_STRING_LEN: u64 = 64 * 1024 * 1024;

/// A buffered reader that knows its position and the stream length, so that every declared
/// length can be checked against what is left before it is read or skipped.
pub(super) struct Cursor<'p, R> {
    inner: BufReader<R>,
    pub(super) pos: u64,
    pub(super) len: u64,
    path: &'p Path,
}

impl<'p, R: Read + Seek> Cursor<'p, R> {
    pub(super) fn new(mut reader: R, path: &'p Path) -> Result<Self> {
        let len = reader
            .seek(SeekFrom::End(0))
            .and_then(|len| reader.seek(SeekFrom::Start(0)).map(|_| len))
            .map_err(|e| ModelError::io(path, e))?;
        Ok(Self {
            inner: BufReader::new(reader),
            pos: 0,
            len,
            path,
        })
    }

    fn path(&self) -> PathBuf {
        self.path.to_owned()
    }

    fn remaining(&self) -> u64 {
        self.len.saturating_sub(self.pos)
    }

    fn need(&self, n: u64, what: &str) -> Result<()> {
        if n > self.remaining() {
            return Err(ModelError::Truncated {
                path: self.path(),
                offset: self.pos,
                what: format!("{what} ({n} bytes declared, {} left)", self.remaining()),
            });
        }
        Ok(())
    }

    pub(super) fn bytes<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        self.need(N as u64, what)?;
        let mut buf = [0u8; N];
        self.inner
            .read_exact(&mut buf)
            .map_err(|e| ModelError::io(self.path, e))?;
        self.pos += N as u64;
        Ok(buf)
    }

    fn skip(&mut self, n: u64, what: &str) -> Result<()> {
        self.need(n, what)?;
        let step = i64::try_from(n).map_err(|_| {
            ModelError::malformed(self.path, format!("{what} is too long"), "re-download")
        })?;
        // seek_relative keeps BufReader's buffer when the target is inside it, which makes
        // skipping 262,144 short token strings cheap.
        self.inner
            .seek_relative(step)
            .map_err(|e| ModelError::io(self.path, e))?;
        self.pos += n;
        Ok(())
    }

    pub(super) fn u32(&mut self, what: &str) -> Result<u32> {
        self.bytes::<4>(what).map(u32::from_le_bytes)
    }

    pub(super) fn u64(&mut self, what: &str) -> Result<u64> {
        self.bytes::<8>(what).map(u64::from_le_bytes)
    }

    fn string_len(&mut self, what: &str) -> Result<u64> {
        let len = self.u64(what)?;
        if len > MAX_STRING_LEN {
            return Err(ModelError::malformed(
                self.path,
                format!("{what} at byte {} declares {len} bytes", self.pos - 8),
                "re-download or re-convert the file",
            ));
        }
        self.need(len, what)?;
        Ok(len)
    }

    pub(super) fn string(&mut self, what: &str) -> Result<String> {
        let len = self.string_len(what)?;
        let mut buf = Vec::new();
        // `take` bounds the read by the checked length; the buffer grows only as bytes arrive.
        (&mut self.inner)
            .take(len)
            .read_to_end(&mut buf)
            .map_err(|e| ModelError::io(self.path, e))?;
        if buf.len() as u64 != len {
            return Err(ModelError::Truncated {
                path: self.path(),
                offset: self.pos,
                what: what.to_owned(),
            });
        }
        self.pos += len;
        // GGUF strings are UTF-8 by spec; a stray byte should not cost the whole file.
        Ok(String::from_utf8_lossy(&buf).into_owned())
    }

    pub(super) fn value(&mut self, type_id: u32, key: &str) -> Result<GgufValue> {
        let ty = GgufType::from_id(type_id).ok_or_else(|| {
            ModelError::malformed(
                self.path,
                format!("key `{key}` has unknown value type {type_id}"),
                "re-download the file, or update bakeoff if the GGUF spec grew a type",
            )
        })?;
        self.typed_value(ty, key, true)
    }

    fn typed_value(&mut self, ty: GgufType, key: &str, top_level: bool) -> Result<GgufValue> {
        Ok(match ty {
            GgufType::U8 => GgufValue::U8(self.bytes::<1>(key)?[0]),
            GgufType::I8 => GgufValue::I8(i8::from_le_bytes(self.bytes::<1>(key)?)),
            GgufType::U16 => GgufValue::U16(u16::from_le_bytes(self.bytes::<2>(key)?)),
            GgufType::I16 => GgufValue::I16(i16::from_le_bytes(self.bytes::<2>(key)?)),
            GgufType::U32 => GgufValue::U32(self.u32(key)?),
            GgufType::I32 => GgufValue::I32(i32::from_le_bytes(self.bytes::<4>(key)?)),
            GgufType::F32 => GgufValue::F32(f32::from_le_bytes(self.bytes::<4>(key)?)),
            GgufType::Bool => GgufValue::Bool(self.bytes::<1>(key)?[0] != 0),
            GgufType::U64 => GgufValue::U64(self.u64(key)?),
            GgufType::I64 => GgufValue::I64(i64::from_le_bytes(self.bytes::<8>(key)?)),
            GgufType::F64 => GgufValue::F64(f64::from_le_bytes(self.bytes::<8>(key)?)),
            GgufType::String => GgufValue::String(self.string(key)?),
            GgufType::Array if top_level => GgufValue::Array(self.array(key)?),
            GgufType::Array => {
                // llama.cpp's gguf reader refuses nested arrays too.
                return Err(ModelError::malformed(
                    self.path,
                    format!("key `{key}` is an array of arrays"),
                    "re-convert the file; GGUF readers do not support nested arrays",
                ));
            }
        })
    }

    fn array(&mut self, key: &str) -> Result<GgufArray> {
        let type_id = self.u32(key)?;
        let element_type = GgufType::from_id(type_id).ok_or_else(|| {
            ModelError::malformed(
                self.path,
                format!("array `{key}` has unknown element type {type_id}"),
                "re-download the file",
            )
        })?;
        let len = self.u64(key)?;
        // Cheapest possible element: 1 byte, or the 8-byte length of an empty string.
        let min_elem = element_type.fixed_size().unwrap_or(8);
        self.need(len.saturating_mul(min_elem), key)?;
        if len <= MAX_INLINE_ARRAY_LEN {
            let mut values = Vec::new();
            for _ in 0..len {
                values.push(self.typed_value(element_type, key, false)?);
            }
            return Ok(GgufArray {
                element_type,
                len,
                values: Some(values),
            });
        }
        match element_type.fixed_size() {
            Some(size) => self.skip(len * size, key)?,
            None if element_type == GgufType::String => {
                for _ in 0..len {
                    let n = self.string_len(key)?;
                    self.skip(n, key)?;
                }
            }
            None => {
                return Err(ModelError::malformed(
                    self.path,
                    format!("key `{key}` is an array of arrays"),
                    "re-convert the file; GGUF readers do not support nested arrays",
                ));
            }
        }
        Ok(GgufArray {
            element_type,
            len,
            values: None,
        })
    }
}
