//! The local tokenization route: a `tokenizer.json` (the Hugging Face format every HF model
//! repository ships) loaded through the HF `tokenizers` crate, for endpoints whose server cannot
//! tokenize (a LiteLLM gateway, a hosted API, an SGLang build without `/tokenize`).
//!
//! It answers the same question the server route answers — the tokens of a text and where each
//! one ends — so the context suite builds the same [`crate::TokenizedFiller`] from it. Counts
//! are exact counts of this tokenizer; whether they match the served model is checked on every
//! request against the server's own `usage.prompt_tokens`.

use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum LocalTokenizerError {
    #[error(
        "cannot load tokenizer {path}: {message} (give the model's tokenizer.json, as shipped in its Hugging Face repository)"
    )]
    Load { path: PathBuf, message: String },
    #[error("tokenizer {path} failed on a text: {message}")]
    Encode { path: PathBuf, message: String },
}

/// A loaded `tokenizer.json`.
pub struct LocalTokenizer {
    inner: tokenizers::Tokenizer,
    path: PathBuf,
}

impl std::fmt::Debug for LocalTokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalTokenizer")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl LocalTokenizer {
    /// Load `path` (a missing file, a directory or a file that is not a tokenizer.json is an
    /// error naming the file).
    pub fn from_file(path: &Path) -> Result<Self, LocalTokenizerError> {
        let load = |message: String| LocalTokenizerError::Load {
            path: path.to_path_buf(),
            message,
        };
        if !path.is_file() {
            return Err(load("no such file".into()));
        }
        let inner = tokenizers::Tokenizer::from_file(path).map_err(|e| load(one_line(&e)))?;
        Ok(Self {
            inner,
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The route as artifacts record it.
    pub fn route(&self) -> String {
        format!("local tokenizer.json ({})", self.path.display())
    }

    fn encode(&self, text: &str) -> Result<tokenizers::Encoding, LocalTokenizerError> {
        // No special tokens: a prompt's BOS and template tokens are the chat-template overhead,
        // counted separately (by the server or by one calibration request).
        self.inner
            .encode(text, false)
            .map_err(|e| LocalTokenizerError::Encode {
                path: self.path.clone(),
                message: one_line(&e),
            })
    }

    /// Tokens of `text` without special tokens.
    pub fn count(&self, text: &str) -> Result<usize, LocalTokenizerError> {
        Ok(self.encode(text)?.len())
    }

    /// Token ids of `text` and the byte offset where each token ends. Offsets come from the
    /// tokenizer's alignment with the original text; a token whose reported end is before the
    /// previous token's (a whitespace token trimmed to nothing) ends where the previous one did,
    /// so the ends never go backwards.
    pub fn ends(&self, text: &str) -> Result<(Vec<u32>, Vec<usize>), LocalTokenizerError> {
        let enc = self.encode(text)?;
        let mut ends = Vec::with_capacity(enc.len());
        let mut last = 0usize;
        for &(_, end) in enc.get_offsets() {
            last = last.max(end.min(text.len()));
            ends.push(last);
        }
        Ok((enc.get_ids().to_vec(), ends))
    }
}

fn one_line(e: &dyn std::fmt::Display) -> String {
    e.to_string()
        .lines()
        .next()
        .unwrap_or_default()
        .chars()
        .take(300)
        .collect()
}

/// A byte-level BPE `tokenizer.json` (GPT-2 layout) with the 256 byte symbols and `merges`, for
/// tests and fixtures: synthetic, small, and loaded by the same code path as a model's own file.
pub fn byte_level_tokenizer_json(merges: &[(&str, &str)]) -> String {
    use serde_json::{Map, Value, json};
    let mut vocab = Map::new();
    for (i, c) in byte_symbols().into_iter().enumerate() {
        vocab.insert(c.to_string(), json!(i));
    }
    let mut next = vocab.len();
    for (a, b) in merges {
        let m = format!("{a}{b}");
        if !vocab.contains_key(&m) {
            vocab.insert(m, json!(next));
            next += 1;
        }
    }
    let merges: Vec<Value> = merges
        .iter()
        .map(|(a, b)| json!(format!("{a} {b}")))
        .collect();
    json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": [],
        "normalizer": null,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
        "post_processor": null,
        "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
        "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
                  "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
                  "vocab": vocab, "merges": merges}
    })
    .to_string()
}

/// GPT-2's `bytes_to_unicode` table: byte `b` is shown as the char at index `b`.
pub fn byte_symbols() -> Vec<char> {
    let printable = |b: u32| {
        (u32::from(b'!')..=u32::from(b'~')).contains(&b)
            || (0xA1..=0xAC).contains(&b)
            || (0xAE..=0xFF).contains(&b)
    };
    let mut n = 0u32;
    (0u32..256)
        .map(|b| {
            let code = if printable(b) {
                b
            } else {
                n += 1;
                255 + n
            };
            char::from_u32(code).unwrap_or('?')
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::{TokenizedFiller, build_filler};

    #[test]
    fn loads_and_cuts_on_token_ends() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("tokenizer.json");
        std::fs::write(
            &p,
            byte_level_tokenizer_json(&[("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("i", "n")]),
        )
        .unwrap();
        let t = LocalTokenizer::from_file(&p).unwrap();
        // "Ġt"+"he" merge: " the" is one token; every other byte is its own.
        assert_eq!(t.count("in the").unwrap(), 2);
        assert_eq!(t.count("abc").unwrap(), 3);
        let (ids, ends) = t.ends("in the sea").unwrap();
        assert_eq!(ids.len(), ends.len());
        assert_eq!(ends, vec![2, 6, 7, 8, 9, 10]);

        let (text, bounds) = build_filler(40, 5);
        let (_, ends) = t.ends(&text).unwrap();
        let f = TokenizedFiller::new(text, ends, &bounds).unwrap();
        assert!(f.sentence_tokens().len() > 30);
        let (h, _) = f.haystack(0, 500, "NEEDLE.", 0.5).unwrap();
        // 500 filler tokens plus " NEEDLE." (8 byte tokens); a join may merge or split one.
        let n = t.count(&h).unwrap();
        assert!(n.abs_diff(500 + 8) <= 2, "{n}");
    }

    #[test]
    fn bad_files_are_one_line_errors_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope.json");
        let e = LocalTokenizer::from_file(&missing).unwrap_err().to_string();
        assert!(e.contains("nope.json") && e.contains("no such file"), "{e}");
        let junk = dir.path().join("junk.json");
        std::fs::write(&junk, "{\"not\": \"a tokenizer\"}").unwrap();
        let e = LocalTokenizer::from_file(&junk).unwrap_err().to_string();
        assert!(e.contains("junk.json") && !e.contains('\n'), "{e}");
    }
}
