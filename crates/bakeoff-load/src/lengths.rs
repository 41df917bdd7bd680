//! Prompt and output length distributions: fixed, uniform, or read from a JSONL file.
//!
//! Syntax (CLI and suites alike): `128` fixed; `64-256` uniform, inclusive; `@path.jsonl` one
//! JSON object per line, the length read from the named field (`prompt_tokens` for prompts,
//! `output_tokens` for outputs) and used in file order, cycling.

use std::path::{Path, PathBuf};

use crate::LoadError;
use crate::invalid::Unparsable;
use crate::prng::SplitMix64;

/// The most tokens one request's prompt or output may ask for (2^20, past every served
/// window today): a length above it is refused where it is read (a flag, a lengths file, a
/// trace line), before any prompt is built, since a prompt of N tokens holds about 5·N bytes.
pub const MAX_TOKENS: u32 = 1 << 20;

/// What is wrong with a length written `N` or `A-B` (reported as
/// [`crate::invalid::Unparsable::Length`]).
#[derive(Debug, thiserror::Error)]
pub enum LengthProblem {
    #[error("not a number")]
    NotANumber,
    /// `A-B` with A of 0 or B below A.
    #[error("a range needs 1 <= A <= B")]
    Range { min: u32, max: u32 },
    #[error("must be at least 1")]
    Zero,
    /// Above [`MAX_TOKENS`].
    #[error("at most {} tokens", MAX_TOKENS)]
    TooMany,
}

/// A `@file.jsonl` of lengths, one JSON object per line; `line` is 1-based.
#[derive(Debug, thiserror::Error)]
pub enum LengthFileInvalid {
    #[error("cannot read {path} ({source}): pass an existing JSONL file")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} line {line}: not JSON: {source}")]
    NotJson {
        path: PathBuf,
        line: usize,
        source: serde_json::Error,
    },
    /// The line lacks `field`, or it is not an integer from 1 to [`MAX_TOKENS`].
    #[error(
        "{path} line {line}: needs a field {field:?}, an integer from 1 to {}",
        MAX_TOKENS
    )]
    NoLength {
        path: PathBuf,
        line: usize,
        field: String,
    },
    /// Not one non-blank line.
    #[error("{path} has no lines")]
    Empty { path: PathBuf },
}

#[derive(Debug, Clone, PartialEq)]
pub enum LengthSpec {
    Fixed(u32),
    Uniform {
        min: u32,
        max: u32,
    },
    /// Lengths in file order; request `i` takes `list[i % len]`.
    List {
        source: String,
        lengths: Vec<u32>,
    },
}

impl LengthSpec {
    /// Parse `N`, `A-B` or `@file.jsonl` (reading `field` from each line).
    pub fn parse(s: &str, field: &str) -> Result<Self, LoadError> {
        let s = s.trim();
        let bad = |problem: LengthProblem| Unparsable::Length {
            spec: s.to_string(),
            problem,
        };
        if let Some(path) = s.strip_prefix('@') {
            return Self::from_jsonl(Path::new(path), field);
        }
        if let Some((a, b)) = s.split_once('-') {
            let min: u32 = a
                .trim()
                .parse()
                .map_err(|_| bad(LengthProblem::NotANumber))?;
            let max: u32 = b
                .trim()
                .parse()
                .map_err(|_| bad(LengthProblem::NotANumber))?;
            if min == 0 || max < min {
                return Err(bad(LengthProblem::Range { min, max }).into());
            }
            if max > MAX_TOKENS {
                return Err(bad(LengthProblem::TooMany).into());
            }
            return Ok(LengthSpec::Uniform { min, max });
        }
        let n: u32 = s.parse().map_err(|_| bad(LengthProblem::NotANumber))?;
        if n == 0 {
            return Err(bad(LengthProblem::Zero).into());
        }
        if n > MAX_TOKENS {
            return Err(bad(LengthProblem::TooMany).into());
        }
        Ok(LengthSpec::Fixed(n))
    }

    pub fn from_jsonl(path: &Path, field: &str) -> Result<Self, LoadError> {
        let text = std::fs::read_to_string(path).map_err(|source| LengthFileInvalid::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let mut lengths = Vec::new();
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let v: serde_json::Value =
                serde_json::from_str(line).map_err(|source| LengthFileInvalid::NotJson {
                    path: path.to_path_buf(),
                    line: n + 1,
                    source,
                })?;
            let len = v
                .get(field)
                .and_then(serde_json::Value::as_u64)
                .and_then(|x| u32::try_from(x).ok())
                .filter(|x| (1..=MAX_TOKENS).contains(x))
                .ok_or_else(|| LengthFileInvalid::NoLength {
                    path: path.to_path_buf(),
                    line: n + 1,
                    field: field.to_string(),
                })?;
            lengths.push(len);
        }
        if lengths.is_empty() {
            return Err(LengthFileInvalid::Empty {
                path: path.to_path_buf(),
            }
            .into());
        }
        Ok(LengthSpec::List {
            source: path.display().to_string(),
            lengths,
        })
    }

    /// The length of request `i`.
    pub fn sample(&self, i: u64, rng: &mut SplitMix64) -> u32 {
        match self {
            LengthSpec::Fixed(n) => *n,
            LengthSpec::Uniform { min, max } => rng.range_inclusive(*min, *max),
            LengthSpec::List { lengths, .. } => lengths[(i % lengths.len() as u64) as usize],
        }
    }

    pub fn max(&self) -> u32 {
        match self {
            LengthSpec::Fixed(n) => *n,
            LengthSpec::Uniform { max, .. } => *max,
            LengthSpec::List { lengths, .. } => lengths.iter().copied().max().unwrap_or(1),
        }
    }

    pub fn describe(&self) -> String {
        match self {
            LengthSpec::Fixed(n) => format!("fixed {n}"),
            LengthSpec::Uniform { min, max } => format!("uniform {min}-{max}"),
            LengthSpec::List { source, lengths } => {
                format!("{} lengths from {source}", lengths.len())
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn parse_forms() {
        assert_eq!(LengthSpec::parse("32", "x").unwrap(), LengthSpec::Fixed(32));
        assert_eq!(
            LengthSpec::parse("8-16", "x").unwrap(),
            LengthSpec::Uniform { min: 8, max: 16 }
        );
        assert!(LengthSpec::parse("0", "x").is_err());
        assert!(LengthSpec::parse("9-3", "x").is_err());
        assert!(LengthSpec::parse("abc", "x").is_err());
    }

    /// A length past `MAX_TOKENS` is refused where it is read: a prompt of N tokens is built
    /// as about 5·N bytes, so 4000000000 would ask for 20 GB and abort the process.
    #[test]
    fn lengths_past_the_bound_are_refused_before_any_prompt_is_built() {
        for spec in ["4000000000", "1048577", "1-4000000000"] {
            let e = LengthSpec::parse(spec, "x").unwrap_err().to_string();
            assert!(e.contains("at most 1048576 tokens"), "{spec}: {e}");
        }
        assert!(LengthSpec::parse("1048576", "x").is_ok());
        let f = std::env::temp_dir().join(format!("bakeoff-lengths-{}.jsonl", std::process::id()));
        std::fs::write(&f, "{\"prompt_tokens\": 4000000}\n").unwrap();
        let e = LengthSpec::from_jsonl(&f, "prompt_tokens").map(drop);
        let _ = std::fs::remove_file(&f);
        let e = e.unwrap_err().to_string();
        assert!(e.contains("an integer from 1 to 1048576"), "{e}");
    }

    #[test]
    fn jsonl_cycles_in_file_order() {
        let dir = std::env::temp_dir().join(format!("bakeoff-load-len-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("w.jsonl");
        std::fs::write(&p, "{\"output_tokens\":5}\n\n{\"output_tokens\":7}\n").unwrap();
        let spec = LengthSpec::parse(&format!("@{}", p.display()), "output_tokens").unwrap();
        let mut rng = SplitMix64::new(1);
        let got: Vec<u32> = (0..4).map(|i| spec.sample(i, &mut rng)).collect();
        assert_eq!(got, vec![5, 7, 5, 7]);
        std::fs::write(&p, "{\"prompt_tokens\":5}\n").unwrap();
        let err = LengthSpec::parse(&format!("@{}", p.display()), "output_tokens").unwrap_err();
        assert!(err.to_string().contains("output_tokens"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
