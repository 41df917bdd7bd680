//! Filler prose cut exactly on token boundaries, with needles on sentence boundaries.
//!
//! The filler (original prose shipped in `data/filler.txt`, ASCII so every token piece is a
//! whole character) is assembled from its sentences in a seeded order and tokenized **once**
//! with the served model's own tokenizer. After that, a haystack of exactly `n` filler tokens
//! is a slice of the text ending at token `n`'s end offset: no re-tokenization, no search, and
//! no words-per-token or characters-per-token guess anywhere.

use bakeoff_stats::SplitMix64;

const FILLER: &str = include_str!("../data/filler.txt");

/// The shipped sentences, in file order.
pub fn filler_sentences() -> Vec<&'static str> {
    FILLER
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect()
}

/// Filler text of `sentences` sentences: the shipped ones cycled, each cycle in a new seeded
/// order, joined by single spaces. Returns the text and the byte offset after each sentence.
pub fn build_filler(sentences: usize, seed: u64) -> (String, Vec<usize>) {
    let base = filler_sentences();
    let mut rng = SplitMix64::new(seed);
    let mut text = String::new();
    let mut bounds = Vec::with_capacity(sentences);
    let mut order: Vec<usize> = (0..base.len()).collect();
    let mut i = 0;
    while bounds.len() < sentences && !base.is_empty() {
        if i % base.len() == 0 {
            for k in (1..order.len()).rev() {
                let j = rng.below(k as u64 + 1) as usize;
                order.swap(k, j);
            }
        }
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(base[order[i % base.len()]]);
        bounds.push(text.len());
        i += 1;
    }
    (text, bounds)
}

/// Filler text tokenized once: the text, each token's end offset, and the token index at each
/// sentence end.
#[derive(Debug, Clone)]
pub struct TokenizedFiller {
    text: String,
    ends: Vec<usize>,
    /// Sorted token counts `k` such that the first `k` tokens end exactly at a sentence end.
    sentence_tokens: Vec<usize>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum HaystackError {
    #[error("the filler holds {have} tokens but {want} were asked for")]
    TooShort { have: usize, want: usize },
    #[error("token end offsets do not fit the filler text")]
    BadOffsets,
}

impl TokenizedFiller {
    /// `ends` are token end offsets in `text` (from the server's pieces or a local tokenizer's
    /// offsets); `sentence_bounds` are byte offsets where sentences end.
    pub fn new(
        text: String,
        ends: Vec<usize>,
        sentence_bounds: &[usize],
    ) -> Result<Self, HaystackError> {
        if ends.windows(2).any(|w| w[0] > w[1]) || ends.last().is_some_and(|&e| e > text.len()) {
            return Err(HaystackError::BadOffsets);
        }
        if ends.iter().any(|&e| !text.is_char_boundary(e)) {
            return Err(HaystackError::BadOffsets);
        }
        let mut sentence_tokens = Vec::new();
        for &b in sentence_bounds {
            // The number of tokens that end at or before b; a boundary counts only when a token
            // ends exactly there (otherwise a token straddles it and it is no clean cut).
            let k = ends.partition_point(|&e| e <= b);
            if k > 0 && ends[k - 1] == b {
                sentence_tokens.push(k);
            }
        }
        sentence_tokens.dedup();
        Ok(Self {
            text,
            ends,
            sentence_tokens,
        })
    }

    pub fn len_tokens(&self) -> usize {
        self.ends.len()
    }

    /// The sentence boundaries (in tokens), for choosing a start.
    pub fn sentence_tokens(&self) -> &[usize] {
        &self.sentence_tokens
    }

    fn offset(&self, tokens: usize) -> usize {
        if tokens == 0 {
            0
        } else {
            self.ends[tokens - 1]
        }
    }

    /// Exactly `n` filler tokens starting after token `start` (a sentence boundary), with
    /// `needle` inserted at the sentence boundary nearest to `depth` (0.0 = first, 1.0 = last).
    /// Returns the haystack text and the depth actually used.
    pub fn haystack(
        &self,
        start: usize,
        n: usize,
        needle: &str,
        depth: f64,
    ) -> Result<(String, f64), HaystackError> {
        if start + n > self.len_tokens() {
            return Err(HaystackError::TooShort {
                have: self.len_tokens().saturating_sub(start),
                want: n,
            });
        }
        let a = self.offset(start);
        let b = self.offset(start + n);
        let target = start as f64 + depth.clamp(0.0, 1.0) * n as f64;
        // Candidate cuts: the window's ends and every sentence boundary inside it.
        let mut best = (start, (target - start as f64).abs());
        for &k in self
            .sentence_tokens
            .iter()
            .filter(|&&k| k > start && k <= start + n)
        {
            let d = (target - k as f64).abs();
            if d < best.1 {
                best = (k, d);
            }
        }
        let end_d = (target - (start + n) as f64).abs();
        if end_d < best.1 {
            best = (start + n, end_d);
        }
        let cut = self.offset(best.0).clamp(a, b);
        let left = self.text[a..cut].trim_start();
        let right = &self.text[cut..b];
        let mut out = String::with_capacity(b - a + needle.len() + 2);
        out.push_str(left);
        if !left.is_empty() {
            out.push(' ');
        }
        out.push_str(needle);
        if !right.is_empty() {
            if !right.starts_with(' ') {
                out.push(' ');
            }
            out.push_str(right);
        }
        let used = if n == 0 {
            0.0
        } else {
            (best.0 - start) as f64 / n as f64
        };
        Ok((out, used))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A word-level "tokenizer" for tests: each word with its leading space is a token, and
    /// "." is its own token — the shape of SentencePiece output on this filler.
    fn toy_ends(text: &str) -> Vec<usize> {
        let mut ends = Vec::new();
        let bytes = text.as_bytes();
        for (i, &c) in bytes.iter().enumerate() {
            let next = bytes.get(i + 1).copied();
            if c == b'.' || next.is_none() || next == Some(b' ') || next == Some(b'.') {
                ends.push(i + 1);
            }
        }
        ends
    }

    #[test]
    fn filler_is_reproducible_and_ascii() {
        let (a, ba) = build_filler(120, 7);
        let (b, _) = build_filler(120, 7);
        let (c, _) = build_filler(120, 8);
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(ba.len(), 120);
        assert!(a.is_ascii());
        assert_eq!(*ba.last().unwrap(), a.len());
    }

    #[test]
    fn haystack_has_exactly_n_filler_tokens_plus_the_needle() {
        let (text, bounds) = build_filler(200, 1);
        let ends = toy_ends(&text);
        let f = TokenizedFiller::new(text, ends, &bounds).unwrap();
        assert!(f.sentence_tokens().len() > 100);
        let needle = "NEEDLE.";
        for depth in [0.0, 0.25, 0.5, 0.75, 1.0] {
            for n in [1usize, 50, 333, 1000] {
                let start = f.sentence_tokens()[3];
                let (h, used) = f.haystack(start, n, needle, depth).unwrap();
                let without = h.replacen("NEEDLE.", "", 1);
                let count = toy_ends(without.trim()).len();
                // Removing the needle leaves the filler slice, whose toy token count is n (or n
                // ± 1 where the needle's removal merged two spaces).
                assert!(count.abs_diff(n) <= 1, "depth {depth} n {n}: {count}");
                assert!((0.0..=1.0).contains(&used));
                if n >= 333 {
                    assert!((used - depth).abs() < 0.1, "depth {depth} used {used}");
                }
            }
        }
    }

    #[test]
    fn needle_lands_on_a_sentence_boundary() {
        let (text, bounds) = build_filler(60, 3);
        assert_eq!(
            TokenizedFiller::new(text.clone(), vec![text.len() + 1], &bounds).unwrap_err(),
            HaystackError::BadOffsets
        );
        let ends = toy_ends(&text);
        let f = TokenizedFiller::new(text, ends, &bounds).unwrap();
        let (h, _) = f.haystack(0, 400, "XNEEDLEX.", 0.5).unwrap();
        let i = h.find("XNEEDLEX.").unwrap();
        assert!(
            h[..i].trim_end().ends_with('.'),
            "needle not after a sentence end"
        );
    }

    #[test]
    fn too_short_is_an_error() {
        let (text, bounds) = build_filler(5, 3);
        let ends = toy_ends(&text);
        let f = TokenizedFiller::new(text, ends, &bounds).unwrap();
        assert!(matches!(
            f.haystack(0, 100_000, "n", 0.5),
            Err(HaystackError::TooShort { .. })
        ));
    }
}
