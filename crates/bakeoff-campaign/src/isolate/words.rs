//! The engine's own words, read for the numbers and names a probe needs: the flag a refusal
//! names, the window the engine derived, the KV budget it stated, the buffers it allocated.
//! Each pattern cites the source it reads; a text that says none of it gives `None`, never a
//! guess.

use std::sync::LazyLock;

use regex::Regex;

/// The patterns are literals below, each exercised by the tests: `None` (a bug of this file)
/// matches nothing rather than panicking.
fn re(p: &str) -> Option<Regex> {
    Regex::new(p).ok()
}

/// The flag an engine's refusal names, as written (`--cache-type-k`), or `None`.
///
/// - llama.cpp b11434 common/arg.cpp common_params_parse_ex: `error while handling argument
///   "--cache-type-k": …` and `error: invalid argument: --no-such-flag`;
/// - CPython Lib/argparse.py (vLLM's and SGLang's parsers): `error: unrecognized arguments:
///   --foo 1` and `error: argument --load-format: invalid choice: …` (`--a/-b` names the
///   first spelling);
/// - the campaign's own check of the engine's `--help` before a start: `--foo, --bar are not
///   a flag of BIN …` (the first named).
pub fn refused_flag(text: &str) -> Option<String> {
    static PATTERNS: LazyLock<Vec<Option<Regex>>> = LazyLock::new(|| {
        [
            r#"error while handling argument "(-{1,2}[\w.-]+)""#,
            r"error: invalid argument: (-{1,2}[\w.-]+)",
            r"error: unrecognized arguments: (-{1,2}[\w.-]+)",
            r"error: argument (-{1,2}[\w.-]+)",
            r"(?m)^(-{1,2}[\w.-]+)(?:, -{1,2}[\w.-]+)* (?:is|are) not a flag of ",
        ]
        .iter()
        .map(|p| re(p))
        .collect()
    });
    PATTERNS
        .iter()
        .find_map(|r| r.as_ref()?.captures(text))
        .and_then(|c| c.get(1))
        .map(|m| m.as_str().split('=').next().unwrap_or_default().to_string())
}

/// The window the engine derived from the checkpoint, when it refused a longer one.
///
/// vLLM 0.19.1 vllm/config/model.py `_get_and_verify_max_len` (the same words in 0.4.2
/// vllm/config.py): `User-specified max_model_len (999999) is greater than the derived
/// max_model_len (max_position_embeddings=8192.0 or model_max_length=None in model's
/// config.json).` — the smallest number in the parentheses; SGLang 0.5
/// python/sglang/srt/configs/model_config.py: `User-specified context_length (N) is greater
/// than the derived context_length (M).`
pub fn derived_window(text: &str) -> Option<u64> {
    static DERIVED: LazyLock<Option<Regex>> =
        LazyLock::new(|| re(r"derived (?:max_model_len|context_length) \(([^)]*)\)"));
    static NUMBER: LazyLock<Option<Regex>> = LazyLock::new(|| re(r"(?:^|[=\s])(\d+)(?:\.\d+)?\b"));
    let inside = DERIVED.as_ref()?.captures(text)?.get(1)?.as_str();
    NUMBER
        .as_ref()?
        .captures_iter(inside)
        .filter_map(|c| c.get(1)?.as_str().parse::<u64>().ok())
        .filter(|n| *n > 0)
        .min()
}

/// What the engine stated of its KV budget.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum KvStated {
    /// The most tokens the cache holds (the largest window that fits one sequence).
    MaxTokens(u64),
    /// The budget left for the KV cache is negative (GiB): no window fits.
    Negative(f64),
}

/// The engine's stated KV budget:
///
/// - vLLM 0.19.1 vllm/v1/core/kv_cache_utils.py `_check_enough_kv_cache_memory`: `To serve at
///   least one request with the models's max seq len (N), (X GiB KV cache is needed, which is
///   larger than the available KV cache memory (Y GiB). Based on the available memory, the
///   estimated maximum model length is M.` — M, else N × Y / X;
/// - vLLM V0 worker/worker.py `raise_if_cache_size_invalid`: `The model's max seq len (N) is
///   larger than the maximum number of tokens that can be stored in KV cache (M).`;
/// - vLLM 0.19.1 vllm/v1/worker/gpu_worker.py: `Available KV cache memory: -0.66 GiB`.
pub fn kv_stated(text: &str) -> Option<KvStated> {
    static ESTIMATED: LazyLock<Option<Regex>> =
        LazyLock::new(|| re(r"estimated maximum model length is (\d+)"));
    static STORED: LazyLock<Option<Regex>> =
        LazyLock::new(|| re(r"maximum number of tokens that can be stored in KV cache \((\d+)\)"));
    static NEEDED: LazyLock<Option<Regex>> = LazyLock::new(|| {
        re(
            r"max seq len \((\d+)\), \(?([\d.]+) GiB KV cache is needed, which is larger than the available KV cache memory \((-?[\d.]+) GiB\)",
        )
    });
    static NEGATIVE: LazyLock<Option<Regex>> =
        LazyLock::new(|| re(r"Available KV cache memory: (-[\d.]+) GiB"));
    let num = |r: &Option<Regex>| -> Option<u64> {
        r.as_ref()?.captures(text)?.get(1)?.as_str().parse().ok()
    };
    if let Some(m) = num(&ESTIMATED).or_else(|| num(&STORED)) {
        return Some(KvStated::MaxTokens(m));
    }
    if let Some(c) = NEEDED.as_ref().and_then(|r| r.captures(text)) {
        let n: f64 = c.get(1)?.as_str().parse().ok()?;
        let x: f64 = c.get(2)?.as_str().parse().ok()?;
        let y: f64 = c.get(3)?.as_str().parse().ok()?;
        if y <= 0.0 {
            return Some(KvStated::Negative(y));
        }
        if x > 0.0 {
            return Some(KvStated::MaxTokens((n * y / x).floor() as u64));
        }
    }
    let neg: f64 = NEGATIVE
        .as_ref()?
        .captures(text)?
        .get(1)?
        .as_str()
        .parse()
        .ok()?;
    Some(KvStated::Negative(neg))
}

/// The encoder cache's budget (tokens) a multimodal checkpoint was profiled with, when the
/// engine says it profiled one: vLLM 0.32.0 vllm/v1/worker/gpu_model_runner.py `profile_run` (and gpu/mm/encoder_runner.py),
/// `Encoder cache will be initialized with a budget of 8192 tokens, and profiled with 1 image
/// items of the maximum feature size.` A text-only checkpoint never says it.
pub fn encoder_budget(text: &str) -> Option<u64> {
    static ENCODER: LazyLock<Option<Regex>> =
        LazyLock::new(|| re(r"Encoder cache will be initialized with a budget of (\d+) tokens"));
    ENCODER
        .as_ref()?
        .captures(text)?
        .get(1)?
        .as_str()
        .parse()
        .ok()
}

/// What llama.cpp said of its buffers while loading: the KV cache's size for its window, and
/// the weights' (MiB). llama.cpp b11434 src/llama-kv-cache.cpp (`llama_kv_cache: CPU KV buffer
/// size = 96.00 MiB`), src/llama-context.cpp (`llama_context: n_ctx = 4096`), src/llama-model.cpp
/// load_tensors (`CPU_Mapped model buffer size = 241.05 MiB`; several lines on several devices
/// are summed).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LlamaBuffers {
    pub n_ctx: u64,
    /// The KV buffers that grow with the window (MiB).
    pub kv_mib: f64,
    /// Sliding-window KV buffers: sized by the attention window, not the context (MiB).
    pub fixed_kv_mib: f64,
    pub model_mib: f64,
}

pub fn llama_buffers(text: &str) -> Option<LlamaBuffers> {
    static KV: LazyLock<Option<Regex>> = LazyLock::new(|| re(r"KV buffer size\s*=\s*([\d.]+) MiB"));
    // llama.cpp b11434 src/llama-kv-cache-iswa.cpp: "creating non-SWA KV cache, size = N cells"
    // and "creating     SWA KV cache, size = N cells" before each cache's buffer line.
    static CACHE: LazyLock<Option<Regex>> =
        LazyLock::new(|| re(r"creating\s+(non-SWA|SWA) KV cache"));
    static MODEL: LazyLock<Option<Regex>> =
        LazyLock::new(|| re(r"model buffer size\s*=\s*([\d.]+) MiB"));
    static NCTX: LazyLock<Option<Regex>> =
        LazyLock::new(|| re(r"llama_context: n_ctx\s*=\s*(\d+)"));
    let mib = |r: &Option<Regex>, line: &str| -> Option<f64> {
        r.as_ref()?.captures(line)?.get(1)?.as_str().parse().ok()
    };
    let n_ctx: u64 = NCTX
        .as_ref()?
        .captures(text)?
        .get(1)?
        .as_str()
        .parse()
        .ok()?;
    let (mut kv_mib, mut fixed_kv_mib, mut model_mib) = (0.0, 0.0, 0.0);
    let mut sliding = false;
    for line in text.lines() {
        if let Some(c) = CACHE.as_ref().and_then(|r| r.captures(line)) {
            sliding = c.get(1).is_some_and(|m| m.as_str() == "SWA");
        }
        if let Some(m) = mib(&KV, line) {
            if sliding {
                fixed_kv_mib += m;
            } else {
                kv_mib += m;
            }
        }
        model_mib += mib(&MODEL, line).unwrap_or(0.0);
    }
    (n_ctx > 0 && kv_mib > 0.0).then_some(LlamaBuffers {
        n_ctx,
        kv_mib,
        fixed_kv_mib,
        model_mib,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn refusals_name_their_flag() {
        // llama-server b11434, measured here (docs/failure-classes.md).
        assert_eq!(
            refused_flag(
                "error while handling argument \"--cache-type-k\": Unsupported cache type: q9_9"
            )
            .as_deref(),
            Some("--cache-type-k")
        );
        assert_eq!(
            refused_flag("error: invalid argument: --no-such-flag").as_deref(),
            Some("--no-such-flag")
        );
        // argparse (vLLM).
        assert_eq!(
            refused_flag("vllm serve: error: unrecognized arguments: --bogus 3").as_deref(),
            Some("--bogus")
        );
        assert_eq!(
            refused_flag("vllm serve: error: argument --load-format: invalid choice: 'x'")
                .as_deref(),
            Some("--load-format")
        );
        assert_eq!(
            refused_flag(
                "--frobnicate is not a flag of /x/llama-server (its --help does not list it)"
            )
            .as_deref(),
            Some("--frobnicate")
        );
        assert_eq!(refused_flag("CUDA out of memory"), None);
    }

    #[test]
    fn the_derived_window_is_the_smallest_number_stated() {
        let v = "ValueError: User-specified max_model_len (999999) is greater than the derived max_model_len (max_position_embeddings=8192.0 or model_max_length=None in model's config.json). To allow overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1.";
        assert_eq!(derived_window(v), Some(8192));
        assert_eq!(
            derived_window(
                "User-specified context_length (200000) is greater than the derived context_length (131072)."
            ),
            Some(131072)
        );
        assert_eq!(derived_window("max_model_len is 4096"), None);
    }

    #[test]
    fn kv_budgets_as_vllm_states_them() {
        let v1 = "ValueError: To serve at least one request with the models's max seq len (131072), (20.0 GiB KV cache is needed, which is larger than the available KV cache memory (5.0 GiB). Based on the available memory, the estimated maximum model length is 32752. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.";
        assert_eq!(kv_stated(v1), Some(KvStated::MaxTokens(32752)));
        let no_estimate = "To serve at least one request with the models's max seq len (131072), (20.0 GiB KV cache is needed, which is larger than the available KV cache memory (5.0 GiB).";
        assert_eq!(kv_stated(no_estimate), Some(KvStated::MaxTokens(32768)));
        let v0 = "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in KV cache (26352). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.";
        assert_eq!(kv_stated(v0), Some(KvStated::MaxTokens(26352)));
        // docs/field-cases.md B4: negative budgets.
        assert_eq!(
            kv_stated("INFO gpu_worker.py:276] Available KV cache memory: -0.66 GiB"),
            Some(KvStated::Negative(-0.66))
        );
        assert_eq!(kv_stated("loaded"), None);
    }

    #[test]
    fn llama_buffers_are_read_and_summed() {
        let log = "load_tensors:   CPU_Mapped model buffer size =   241.05 MiB\nllama_context: n_ctx         = 8192\nllama_kv_cache:        CPU KV buffer size =    96.00 MiB\n";
        let b = llama_buffers(log).unwrap();
        assert_eq!(b.n_ctx, 8192);
        assert!((b.kv_mib - 96.0).abs() < 1e-9);
        assert!((b.model_mib - 241.05).abs() < 1e-9);
        assert_eq!(llama_buffers("nothing"), None);
    }

    #[test]
    fn a_sliding_window_cache_is_room_taken_not_a_rate() {
        // Lines of the real b11434 log of the test model (gemma-3-270m, -c 32768 -np 8;
        // crates/bakeoff-model/tests/fixtures/logs holds the whole log).
        let log = "0.00.950.210 I load_tensors:   CPU_Mapped model buffer size =   235.16 MiB
0.00.950.233 I load_tensors:   CPU_REPACK model buffer size =    12.66 MiB
0.00.963.469 I llama_context: n_ctx                 = 32768
0.00.966.187 I llama_kv_cache_iswa: creating non-SWA KV cache, size = 4096 cells
0.00.966.362 I llama_kv_cache:        CPU KV buffer size =    96.00 MiB
0.01.029.638 I llama_kv_cache_iswa: creating     SWA KV cache, size = 1024 cells
0.01.029.793 I llama_kv_cache:        CPU KV buffer size =   120.00 MiB
";
        let b = llama_buffers(log).unwrap();
        assert_eq!(b.n_ctx, 32768);
        assert!((b.kv_mib - 96.0).abs() < 1e-9, "{b:?}");
        assert!((b.fixed_kv_mib - 120.0).abs() < 1e-9, "{b:?}");
        assert!((b.model_mib - (235.16 + 12.66)).abs() < 1e-6, "{b:?}");
    }
}
