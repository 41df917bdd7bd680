//! Errors of the cache audit: only bad input (a path that is not a cache). Everything found
//! inside a cache is a finding in the report, not an error.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error(
        "{path}: does not exist; pass a Hugging Face cache (HF_HOME such as ~/.cache/huggingface, its hub/ or one models--ORG--NAME dir) or a llama.cpp cache (~/.cache/llama.cpp)"
    )]
    Missing { path: PathBuf },
    #[error(
        "{path}: not a model cache (no hub/, models--*/datasets--* dirs, or *.gguf files); pass HF_HOME (~/.cache/huggingface), its hub/, one models--ORG--NAME dir, or LLAMA_CACHE (~/.cache/llama.cpp)"
    )]
    NotACache { path: PathBuf },
    #[error("{path}: cannot read ({source}); check its permissions")]
    Unreadable {
        path: PathBuf,
        source: std::io::Error,
    },
}
