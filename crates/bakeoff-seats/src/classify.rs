//! The failure-class table: ONE table of (class, signature, source, remediation). Every seat
//! failure bakeoff reports is a row here; backends and the watchdog never decide a class with
//! an `if` of their own. `docs/failure-classes.md` is this table, written out.
//!
//! Two kinds of rows:
//! - log signatures (a regular expression over one log line), matched by [`root_cause`];
//! - watchdog signatures (silence, restarts, Docker state, exit status), produced by the
//!   watchdog and listed here so the class, its source and its remediation live in one place.
//!
//! The root cause is the **first causal line**: wrappers such as vLLM's `Engine core
//! initialization failed. See root cause above.` are never chosen, and a `secondary` signature
//! (a missing optional module, often logged as a warning) is chosen only when no primary one
//! matched anywhere in the tail.

use std::sync::OnceLock;

use bakeoff_artifact::FailureClass;
use regex::Regex;

/// Where a row's signature is observed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignatureKind {
    /// A regular expression over one log line.
    Log(&'static str),
    /// Produced by the watchdog from something other than one log line.
    Watchdog(&'static str),
}

#[derive(Debug, Clone, Copy)]
pub struct Row {
    pub class: FailureClass,
    pub signature: SignatureKind,
    /// Where the signature comes from: engine source file, issue, measured log, seed.
    pub source: &'static str,
    pub remediation: &'static str,
    /// Chosen as root cause only when no primary signature matched.
    pub secondary: bool,
}

const fn log(
    class: FailureClass,
    re: &'static str,
    source: &'static str,
    remediation: &'static str,
) -> Row {
    Row {
        class,
        signature: SignatureKind::Log(re),
        source,
        remediation,
        secondary: false,
    }
}

const fn watch(
    class: FailureClass,
    what: &'static str,
    source: &'static str,
    remediation: &'static str,
) -> Row {
    Row {
        class,
        signature: SignatureKind::Watchdog(what),
        source,
        remediation,
        secondary: false,
    }
}

use FailureClass as C;

const R_WEDGE: &str = "the engine stopped logging before it could serve: it is wedged (in the seeds, CUDA-graph \
     capture). Stop it (bakeoff seat down), then split the trigger: --enforce-eager, a smaller \
     --max-model-len, another engine build";
const R_CRASH: &str = "the seat restarts itself and fails again: read the root cause below; give bench seats \
     restart policy \"no\" so a failing seat cannot resurrect itself and block another's restore";
const R_CUDA: &str = "the GPU ran out of memory: lower --gpu-memory-utilization of this or a co-resident seat, \
     --max-model-len or --max-num-seqs; remember the utilization budget does not cover the CUDA \
     context (bakeoff plan)";
const R_KV: &str = "the weights fit but the KV cache does not: raise --gpu-memory-utilization, lower \
     --max-model-len / --max-num-seqs, use an fp8 KV cache, or pick a smaller quantization";
const R_ARCH: &str = "this engine build does not support the model's architecture: use a newer engine image \
     (check its supported-architectures list) or another engine";
const R_MODULE: &str = "a Python module the engine needs is not installed in the image: use an image that \
     ships it, or install it in a derived image";
const R_TYPE: &str = "the image's transformers does not know this model_type: use an engine image with a \
     newer transformers (or a nightly build)";
const R_QUANT: &str = "the quantization flag does not match the checkpoint: drop the hard-coded --quantization \
     for unquantized weights, or point the seat at weights with that quantization config";
const R_HOST: &str = "the container hit its memory limit (host RAM, not GPU): raise the seat's memory limit, \
     or load with mmap so weights are page cache rather than anonymous memory";
const R_PORT: &str = "another process or seat already binds this port: stop it (bakeoff seat status shows seats \
     on the port), or use seat swap OLD NEW for two seats that share a port";
const R_EXIT: &str = "the engine exited before it was ready and no known signature matched: read the evidence \
     lines (the deep tail of its log)";
const R_NOT_READY: &str = "the seat kept logging but no real completion succeeded within --ready-timeout: read the \
     log for where it stalls; raise --ready-timeout for a load that is slow but moving \
     (--load-budget projects it)";
const R_LOAD: &str = "the model file could not be loaded: check the path the seat gives the engine (and the \
     container's mounts) and that the file is a complete checkpoint";

/// The table. Order matters only for display; matching takes the earliest line in the log.
pub const TABLE: &[Row] = &[
    watch(
        C::InitWedge,
        "no log line for --silence-timeout while not ready, even if /v1/models or /health answers",
        "seed 000 §1 (vLLM v0.19, Nemotron-3-Nano NVFP4: last line FLASHINFER backend selection, \
         44+ min of silence, /v1/models answering); engine-facts.md fact 3",
        R_WEDGE,
    ),
    watch(
        C::CrashLoop,
        "Docker inspect top-level RestartCount rising by --crash-loop-restarts within --crash-loop-window",
        "engine-facts.md §6 (RestartCount is top-level, not in State); seed 003 §1 (13 restarts on a \
         CUDA OOM) and §7 (35 restarts on a quantization mismatch)",
        R_CRASH,
    ),
    log(
        C::CudaOom,
        r"(torch\.(cuda\.)?OutOfMemoryError|CUDA out of memory)",
        "seed 003 §1 (`torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 336.00 MiB.`); \
         engine-facts.md §1",
        R_CUDA,
    ),
    log(
        C::CudaOom,
        r"cudaMalloc failed: out of memory",
        "llama.cpp b11434 ggml/src/ggml-cuda/ggml-cuda.cu:888 (`allocating %.2f MiB on device %d: \
         cudaMalloc failed: %s`)",
        R_CUDA,
    ),
    log(
        C::KvCacheBudget,
        r"No available memory for the cache blocks",
        "vLLM kv_cache_utils.py (engine-facts.md §1); seed 000 §4 (the Gemma-4 KV-cache OOM ladder)",
        R_KV,
    ),
    log(
        C::KvCacheBudget,
        r"Available KV cache memory: -\d",
        "vLLM gpu_worker.py `Available KV cache memory: -0.3 GiB` (engine-facts.md §1); seed 000 §4 \
         (−0.66 … −3.21 GiB)",
        R_KV,
    ),
    log(
        C::KvCacheBudget,
        r"KV cache is needed, which is larger than the available KV cache memory",
        "vLLM kv_cache_utils.py `_check_enough_kv_cache_memory` (engine-facts.md §1)",
        R_KV,
    ),
    log(
        C::KvCacheBudget,
        r"failed to allocate buffer for kv cache",
        "llama.cpp b11434 src/llama-kv-cache.cpp:288",
        R_KV,
    ),
    log(
        C::UnsupportedArchitecture,
        r"(Model architectures \[.*\] (are not supported for now|failed to be inspected)|architecture .{0,80}not supported for now)",
        "vLLM registry (#9515, #13332; engine-facts.md §1); seed 000 §2 (pydantic ValidationError: \
         architecture \"not supported for now\")",
        R_ARCH,
    ),
    log(
        C::UnsupportedArchitecture,
        r"unknown model architecture: '",
        "llama.cpp b11434 src/llama-model.cpp:373",
        R_ARCH,
    ),
    log(
        C::UnknownModelType,
        r"has model type .{0,40} but Transformers does not recognize this architecture",
        "transformers configuration_auto.py (engine-facts.md §1); seed 000 §5 (deepseek_v4 on NGC 26.04)",
        R_TYPE,
    ),
    log(
        C::QuantizationMismatch,
        r"CompressedTensorsConfig\.__init__\(\) missing \d+ required positional argument",
        "seed 003 §7 (hard-coded --quantization compressed-tensors over BF16 weights, 35 restarts); \
         engine-facts.md §1",
        R_QUANT,
    ),
    log(
        C::QuantizationMismatch,
        r"No compressed-tensors compatible scheme was found",
        "llm-compressor #1427 (engine-facts.md §1)",
        R_QUANT,
    ),
    log(
        C::PortInUse,
        r"couldn't bind HTTP server socket",
        "llama.cpp b11434 tools/server/server-http.cpp:517; measured here with a held port",
        R_PORT,
    ),
    log(
        C::PortInUse,
        r"(\[Errno 98\]|[Aa]ddress already in use|port is already allocated)",
        "uvicorn bind error (vLLM/SGLang API servers) `[Errno 98] … address already in use`; Docker \
         daemon `Bind for 0.0.0.0:P failed: port is already allocated`",
        R_PORT,
    ),
    Row {
        class: C::MissingModule,
        signature: SignatureKind::Log(r"ModuleNotFoundError: No module named"),
        source: "seed 000 §2 (secondary `ModuleNotFoundError: mamba_ssm` beside the unsupported \
                 architecture); Python import system",
        remediation: R_MODULE,
        // Engines log optional imports that fail as warnings; the seed's was secondary.
        secondary: true,
    },
    watch(
        C::HostOom,
        "Docker inspect State.OOMKilled = true",
        "engine-facts.md §6 and fact 7 (OOMKilled is a host-cgroup OOM, not a CUDA OOM); measured \
         here with a 96 MiB limit and --load-mode none",
        R_HOST,
    ),
    watch(
        C::Exited,
        "the process or container exited before ready and no log signature matched (the code is recorded)",
        "process exit status / Docker State.ExitCode; llama.cpp b11434 tools/server/server.cpp:491 \
         (`exiting due to model loading error`)",
        R_EXIT,
    ),
    watch(
        C::NotReady,
        "--ready-timeout passed while the seat was up and still logging, and no real completion (the preflight's check) had succeeded",
        "bakeoff's readiness definition (issue 6: ready means a real completion succeeds); seed 000 §1 \
         (/v1/models answering is not ready); a container logging every 20 ms measured here \
         (docker_backend.rs a_chatty_seat_still_reaches_the_ready_timeout)",
        R_NOT_READY,
    ),
];

/// Lines that wrap the real error and must never be chosen as the root cause.
pub const WRAPPERS: &[(&str, &str)] = &[(
    r"Engine core initialization failed",
    "vLLM v1/engine/utils.py wait_for_engine_startup (engine-facts.md §1, fact 9)",
)];

/// A remediation for a plain exit when the tail shows the model itself could not be loaded.
pub fn exited_remediation(tail: &[String]) -> &'static str {
    if tail
        .iter()
        .any(|l| l.contains("failed to load model") || l.contains("failed to open GGUF file"))
    {
        R_LOAD
    } else {
        R_EXIT
    }
}

/// The first causal line of a log tail.
#[derive(Debug, Clone, PartialEq)]
pub struct Cause {
    pub class: FailureClass,
    pub line_index: usize,
    pub line: String,
    pub source: &'static str,
    pub remediation: &'static str,
}

struct Compiled {
    rows: Vec<(Regex, &'static Row)>,
    wrappers: Vec<Regex>,
}

fn compiled() -> &'static Compiled {
    static C: OnceLock<Compiled> = OnceLock::new();
    C.get_or_init(|| Compiled {
        rows: TABLE
            .iter()
            .filter_map(|r| match r.signature {
                // The patterns are constants checked by a unit test; a bad one is skipped, not
                // a panic in an operator's terminal.
                SignatureKind::Log(p) => Regex::new(p).ok().map(|re| (re, r)),
                SignatureKind::Watchdog(_) => None,
            })
            .collect(),
        wrappers: WRAPPERS
            .iter()
            .filter_map(|(p, _)| Regex::new(p).ok())
            .collect(),
    })
}

/// The first causal error in `lines` (oldest first), or `None` when no signature matches.
pub fn root_cause(lines: &[String]) -> Option<Cause> {
    let c = compiled();
    let mut secondary: Option<Cause> = None;
    for (i, line) in lines.iter().enumerate() {
        if c.wrappers.iter().any(|w| w.is_match(line)) {
            continue;
        }
        for (re, row) in &c.rows {
            if !re.is_match(line) {
                continue;
            }
            let cause = Cause {
                class: row.class,
                line_index: i,
                line: line.clone(),
                source: row.source,
                remediation: row.remediation,
            };
            if row.secondary {
                secondary.get_or_insert(cause);
            } else {
                return Some(cause);
            }
        }
    }
    secondary
}

/// The row of a watchdog-produced class (its source and remediation).
pub fn watchdog_row(class: FailureClass) -> Option<&'static Row> {
    TABLE
        .iter()
        .find(|r| r.class == class && matches!(r.signature, SignatureKind::Watchdog(_)))
}

/// Any row's remediation for `class`.
pub fn remediation(class: FailureClass) -> &'static str {
    TABLE
        .iter()
        .find(|r| r.class == class)
        .map(|r| r.remediation)
        .unwrap_or(R_EXIT)
}

/// The table as markdown (docs/failure-classes.md embeds it; a test keeps the two in step).
pub fn markdown_table() -> String {
    let mut s = String::from(
        "| class | signature | observed in | source | remediation |\n|---|---|---|---|---|\n",
    );
    for r in TABLE {
        let (sig, where_) = match r.signature {
            SignatureKind::Log(p) => (format!("`{}`", p.replace('|', r"\|")), "log line"),
            SignatureKind::Watchdog(w) => (w.to_string(), "watchdog"),
        };
        let sig = if r.secondary {
            format!("{sig} (secondary: only when no other signature matched)")
        } else {
            sig
        };
        s.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            r.class,
            sig,
            where_,
            r.source.replace('|', r"\|"),
            r.remediation
        ));
    }
    for (p, src) in WRAPPERS {
        s.push_str(&format!(
            "| (wrapper, never a root cause) | `{p}` | log line | {src} | read the lines before it |\n"
        ));
    }
    s
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles() {
        for r in TABLE {
            if let SignatureKind::Log(p) = r.signature {
                Regex::new(p).unwrap();
            }
        }
        for (p, _) in WRAPPERS {
            Regex::new(p).unwrap();
        }
    }
}
