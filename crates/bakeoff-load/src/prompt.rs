//! Synthetic prompts of about N tokens, and the unique prefix that keeps a prompt cache from
//! flattering the result.
//!
//! Without a tokenizer in the hot path we build prompts from short, common English words, each
//! a single token in the BPE vocabularies of Llama, Gemma, Qwen and Mistral. The server's own
//! `usage.prompt_tokens` is recorded for every request, so the real length is always known
//! (reference notes, pitfall 3: re-encoded random ids drift; plain words do not).

const WORDS: &[&str] = &[
    "the", "cat", "sat", "on", "a", "mat", "and", "the", "dog", "ran", "to", "the", "park", "in",
    "the", "sun", "with", "a", "red", "ball", "then", "it", "came", "home", "for", "tea",
];

/// About `tokens` prompt tokens. With a `prefix` (unique per request) the request shares no
/// leading tokens with any other, so prefix caching cannot skip its prefill.
pub fn build(tokens: u32, prefix: Option<&str>) -> String {
    let mut s = String::with_capacity(tokens as usize * 5 + 64);
    let mut budget = tokens as usize;
    if let Some(p) = prefix {
        s.push_str(p);
        // A prefix such as "r1a2b-3-17:" is several tokens; count it roughly (chars / 3).
        budget = budget.saturating_sub(p.len().div_ceil(3));
    }
    for (k, w) in WORDS.iter().cycle().take(budget.max(1)).enumerate() {
        if k > 0 || prefix.is_some() {
            s.push(' ');
        }
        s.push_str(w);
    }
    s
}

/// The unique prefix of request `i` of step `step` in run `run`.
pub fn unique_prefix(run: u64, step: usize, i: u64) -> String {
    format!("[{run:x}-{step}-{i}]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_differ_at_the_start_only_with_a_prefix() {
        let a = build(50, Some(&unique_prefix(1, 0, 1)));
        let b = build(50, Some(&unique_prefix(1, 0, 2)));
        assert_ne!(a[..8], b[..8]);
        assert_eq!(build(50, None), build(50, None));
        assert_eq!(build(10, None).split(' ').count(), 10);
    }
}
