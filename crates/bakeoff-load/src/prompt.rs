//! Synthetic prompts of about N tokens, and the unique prefix that keeps a prompt cache from
//! flattering the result.
//!
//! Without a tokenizer in the hot path we build prompts from short, common English words, each
//! a single token in the BPE vocabularies of Llama, Gemma, Qwen and Mistral. The server's own
//! `usage.prompt_tokens` is recorded for every request, so the real length is always known
//! (random token ids re-encoded through a tokenizer drift in length; plain words do not).

const WORDS: &[&str] = &[
    "the", "cat", "sat", "on", "a", "mat", "and", "the", "dog", "ran", "to", "the", "park", "in",
    "the", "sun", "with", "a", "red", "ball", "then", "it", "came", "home", "for", "tea",
];

/// One word per hex digit for the unique prefix. The prefix is made of words like the rest of
/// the prompt, so the whole prompt is counted in one unit and no characters-per-token guess is
/// needed anywhere.
const DIGITS: [&str; 16] = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "red",
    "blue", "green", "black", "white",
];

/// About `tokens` prompt tokens: `tokens` words, each one token in the vocabularies above, the
/// prefix's words included. With a `prefix` (unique per request) the request shares no leading
/// tokens with any other, so prefix caching cannot skip its prefill.
pub fn build(tokens: u32, prefix: Option<&str>) -> String {
    // The inputs are bounded where they are read (`MAX_TOKENS`); the reservation is bounded
    // here too, so no length can ask the allocator for gigabytes up front.
    let reserve = tokens.min(crate::lengths::MAX_TOKENS) as usize * 5 + 64;
    let mut s = String::with_capacity(reserve);
    let mut budget = tokens as usize;
    if let Some(p) = prefix {
        s.push_str(p);
        budget = budget.saturating_sub(p.split_whitespace().count());
    }
    for (k, w) in WORDS.iter().cycle().take(budget.max(1)).enumerate() {
        if k > 0 || prefix.is_some() {
            s.push(' ');
        }
        s.push_str(w);
    }
    s
}

/// The unique prefix of request `i` of step `step` in run `run`, as words. The request number
/// comes first, so two requests of a run differ from their first token on.
pub fn unique_prefix(run: u64, step: usize, i: u64) -> String {
    let mut words: Vec<&str> = Vec::with_capacity(24);
    for n in [i, step as u64, run & 0xFFFF_FFFF] {
        push_hex_words(n, &mut words);
        words.push("and");
    }
    words.pop();
    words.join(" ")
}

fn push_hex_words(mut n: u64, out: &mut Vec<&'static str>) {
    let from = out.len();
    loop {
        out.push(DIGITS[(n & 0xF) as usize]);
        n >>= 4;
        if n == 0 {
            break;
        }
    }
    out[from..].reverse();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_differ_at_the_start_only_with_a_prefix() {
        let a = build(50, Some(&unique_prefix(1, 0, 1)));
        let b = build(50, Some(&unique_prefix(1, 0, 2)));
        assert_ne!(a.split(' ').next(), b.split(' ').next());
        assert_eq!(build(50, None), build(50, None));
        assert_eq!(build(10, None).split(' ').count(), 10);
        // The prefix's words count towards the length.
        assert_eq!(a.split(' ').count(), 50);
        assert_eq!(
            unique_prefix(0xAB, 3, 0x1F),
            "one white and three and ten red"
        );
    }
}
