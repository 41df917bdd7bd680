//! The decision table: for each failure class, the hypotheses a campaign tests and the probe
//! that tests each, with what a start and a failure would mean. The planner (`plan.rs`) walks
//! these rows in order, and docs/campaign.md embeds [`markdown`] of them (a test keeps the two
//! the same), so the table an operator reads is the one the code runs.

use bakeoff_artifact::{EngineKind, FailureClass};

/// What a probe changes, named once for the planner and the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeKind {
    /// The flag the engine's refusal names, left out.
    LeaveOutRefusedFlag,
    /// The window set to the one the engine derived, read from its words.
    DerivedWindow,
    /// CUDA graphs off at the same window.
    GraphsOff,
    /// The window halved, graphs on.
    WindowHalved,
    /// Both at once: graphs off and the window halved.
    GraphsOffWindowHalved,
    /// Between the largest window that started and the smallest that did not.
    WindowBisect,
    /// The window the engine's stated KV budget holds.
    PredictedWindow,
    /// One step above the predicted window: it must fail for the prediction to stand.
    StepAbovePredicted,
    /// `--gpu-memory-utilization` (SGLang `--mem-fraction-static`) raised to the allowed
    /// headroom, priced before the start.
    MoreGpuMemory,
    /// The window the load's arithmetic fits in the seat's memory (or halved).
    SmallerWindow,
    /// Half the sequences (vLLM `--max-num-seqs`, SGLang `--max-running-requests`,
    /// llama.cpp `-np`).
    FewerSequences,
    /// Half the GPU layers (llama.cpp `-ngl`).
    FewerGpuLayers,
    /// The asked window with an 8-bit KV cache, priced first by the stated budget.
    CompactKvCache,
    /// A multimodal checkpoint's language model alone (vLLM `--language-model-only`): no
    /// memory profiled for the encoder.
    LanguageModelOnly,
    /// The same configuration once more.
    Again,
}

/// One row: a class, a hypothesis, its probe, and what each outcome means.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    pub classes: &'static [FailureClass],
    pub hypothesis: &'static str,
    pub kind: ProbeKind,
    pub probe: &'static str,
    pub if_ready: &'static str,
    pub if_failed: &'static str,
}

use FailureClass as C;
use ProbeKind as P;

const OOM: &[FailureClass] = &[C::CudaOom, C::HostOom];
const NO_CAUSE: &[FailureClass] = &[C::Exited, C::CrashLoop];

/// The table, in the order the planner tries each class's rows.
pub const TABLE: &[Row] = &[
    Row {
        classes: &[C::BadArgument],
        hypothesis: "the flag the engine refused",
        kind: P::LeaveOutRefusedFlag,
        probe: "the flag named in the engine's refusal, left out",
        if_ready: "the flag is the cause (isolated)",
        if_failed: "a refusal naming another flag: leave that out too; any other failure: not isolated",
    },
    Row {
        classes: &[C::ContextTooLong],
        hypothesis: "the window is above what the checkpoint allows",
        kind: P::DerivedWindow,
        probe: "the window the engine derived, from its own words",
        if_ready: "the window is the cause (isolated)",
        if_failed: "not isolated",
    },
    Row {
        classes: &[C::InitWedge],
        hypothesis: "graph capture",
        kind: P::GraphsOff,
        probe: "graphs off at the same window (vLLM `--enforce-eager`, SGLang `--disable-cuda-graph`, llama.cpp `GGML_CUDA_DISABLE_GRAPHS=1`)",
        if_ready: "graph capture is involved: see the window probe",
        if_failed: "graph capture alone is not the cause",
    },
    Row {
        classes: &[C::InitWedge],
        hypothesis: "the window",
        kind: P::WindowHalved,
        probe: "the window halved, graphs on",
        if_ready: "with graphs off failing: the window (then bisected); with graphs off starting too: graph capture at this window",
        if_failed: "with graphs off starting: graph capture (isolated); with both failing: the next row",
    },
    Row {
        classes: &[C::InitWedge],
        hypothesis: "graph capture and the window together",
        kind: P::GraphsOffWindowHalved,
        probe: "graphs off and the window halved",
        if_ready: "both are needed to start (isolated: both)",
        if_failed: "neither lever: not isolated",
    },
    Row {
        classes: &[C::InitWedge],
        hypothesis: "the window's threshold",
        kind: P::WindowBisect,
        probe: "the window between the largest that started and the smallest that did not, graphs on, to one step",
        if_ready: "the threshold is above it",
        if_failed: "the threshold is at or below it",
    },
    Row {
        classes: &[C::KvCacheBudget],
        hypothesis: "the window is above the KV budget the engine stated",
        kind: P::PredictedWindow,
        probe: "the largest window the stated budget holds (vLLM's estimated maximum model length or the maximum number of tokens the KV cache can store)",
        if_ready: "the prediction holds: then one step above must fail",
        if_failed: "not isolated (the stated budget is not the whole story)",
    },
    Row {
        classes: &[C::KvCacheBudget],
        hypothesis: "the predicted window is the largest",
        kind: P::StepAbovePredicted,
        probe: "one step above the predicted window",
        if_ready: "the window is the cause, and the prediction is conservative",
        if_failed: "the window is the cause: the largest that fits is the prediction (isolated)",
    },
    Row {
        classes: &[C::KvCacheBudget],
        hypothesis: "a compact KV cache keeps the asked window",
        kind: P::CompactKvCache,
        probe: "the asked window with an 8-bit KV cache (vLLM `--kv-cache-dtype fp8`, SGLang `--kv-cache-dtype fp8_e5m2`), only where the stated budget at half the bytes per token holds it; otherwise priced out, not started",
        if_ready: "a lever that keeps the window (the window stays the factor)",
        if_failed: "the KV dtype does not keep the window",
    },
    Row {
        classes: &[C::KvCacheBudget],
        hypothesis: "a multimodal checkpoint's encoder takes the KV cache's memory",
        kind: P::LanguageModelOnly,
        probe: "the language model alone (vLLM `--language-model-only`), one start, only where the engine's words show it profiled an encoder (`Encoder cache will be initialized with a budget of …`) and the stated budget is negative: the encoder's share is not stated in bytes, so it cannot be priced",
        if_ready: "the encoder's reservation is the cause (isolated): the seat serves text only",
        if_failed: "the encoder is not the whole story: its budget without the encoder is recorded, and the fraction is priced next",
    },
    Row {
        classes: &[C::KvCacheBudget],
        hypothesis: "GPU memory left to the KV cache",
        kind: P::MoreGpuMemory,
        probe: "the engine's GPU-memory fraction raised to the headroom the campaign allows, priced first: when the stated negative budget stays negative at the highest allowed fraction, nothing is started",
        if_ready: "the fraction is the cause (isolated)",
        if_failed: "not isolated",
    },
    Row {
        classes: OOM,
        hypothesis: "the window's KV cache",
        kind: P::SmallerWindow,
        probe: "the window the seat's memory holds by the load's own buffer sizes (llama.cpp's KV and model buffers against the container's memory), else the window halved",
        if_ready: "the window is the cause (then one step above is tried)",
        if_failed: "the next lever",
    },
    Row {
        classes: OOM,
        hypothesis: "the number of sequences",
        kind: P::FewerSequences,
        probe: "half the sequences",
        if_ready: "the sequences are the cause (isolated)",
        if_failed: "the next lever",
    },
    Row {
        classes: OOM,
        hypothesis: "the layers on the GPU",
        kind: P::FewerGpuLayers,
        probe: "half the GPU layers (llama.cpp)",
        if_ready: "the offload is the cause (isolated)",
        if_failed: "not isolated",
    },
    Row {
        classes: NO_CAUSE,
        hypothesis: "a flake",
        kind: P::Again,
        probe: "the same configuration once more, before anything else",
        if_ready: "not reproduced: a flake, no factor",
        if_failed: "reproduced with no stated cause: not isolated",
    },
];

/// The rows for a class, in order.
pub fn rows_for(class: FailureClass) -> impl Iterator<Item = &'static Row> {
    TABLE.iter().filter(move |r| r.classes.contains(&class))
}

/// The row of a probe kind (every kind has one).
pub fn row_of(kind: ProbeKind) -> Option<&'static Row> {
    TABLE.iter().find(|r| r.kind == kind)
}

/// Classes the engine states it cannot run: no start of the same build changes that, so the
/// only probes are the candidate's alternative builds, asked without a start.
pub const ENGINE_SUPPORT: &[FailureClass] = &[
    C::UnsupportedArchitecture,
    C::UnknownModelType,
    C::MissingModule,
    C::QuantizationMismatch,
    C::GpuUnsupported,
];

/// The table as docs/campaign.md shows it.
pub fn markdown() -> String {
    let mut out = String::from(
        "| class | hypothesis | probe | if it starts | if it fails |\n|---|---|---|---|---|\n",
    );
    for r in TABLE {
        let classes: Vec<String> = r.classes.iter().map(|c| format!("`{c}`")).collect();
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            classes.join(", "),
            r.hypothesis,
            r.probe,
            r.if_ready,
            r.if_failed
        ));
    }
    let support: Vec<String> = ENGINE_SUPPORT.iter().map(|c| format!("`{c}`")).collect();
    out.push_str(&format!(
        "| {} (or the registry check refused the start) | the engine build as deployed cannot run the checkpoint | each build under `alternatives = [...]` (an image, or a process seat's command) asked with the registry check, no start; none listed: no probe, the engine said so in its own words | a build knows it: the engine build is the factor (isolated) | every build refuses: proven unfit with these builds; one could not be asked: not isolated |\n",
        support.join(", ")
    ));
    out
}

/// The engine's levers: flag names and defaults by engine (vLLM 0.19.1 `EngineArgs`, SGLang
/// 0.5 `ServerArgs`, llama.cpp b11434 common/arg.cpp).
pub struct Levers {
    pub window: Option<&'static [&'static str]>,
    pub graphs_off: Option<GraphsOff>,
    pub sequences: Option<(&'static [&'static str], u64)>,
    pub gpu_fraction: Option<(&'static [&'static str], f64)>,
    pub gpu_layers: Option<&'static [&'static str]>,
    /// The KV cache's dtype flag and its 8-bit value (half the bytes of the default 16-bit).
    pub kv_dtype: Option<(&'static [&'static str], &'static str)>,
    /// The switch that loads a multimodal checkpoint's language model alone.
    pub language_model_only: Option<&'static str>,
}

/// How an engine turns CUDA graphs off.
#[derive(Debug, Clone, Copy)]
pub enum GraphsOff {
    Flag(&'static str),
    /// ggml-cuda reads `GGML_CUDA_DISABLE_GRAPHS` (llama.cpp b11434 ggml/src/ggml-cuda/common.cuh).
    Env(&'static str, &'static str),
}

pub fn levers(engine: EngineKind) -> Levers {
    match engine {
        EngineKind::Vllm => Levers {
            window: Some(&["--max-model-len"]),
            graphs_off: Some(GraphsOff::Flag("--enforce-eager")),
            sequences: Some((&["--max-num-seqs"], 256)),
            gpu_fraction: Some((&["--gpu-memory-utilization"], 0.9)),
            gpu_layers: None,
            kv_dtype: Some((&["--kv-cache-dtype"], "fp8")),
            // vLLM 0.32.0 vllm/config/multimodal.py `language_model_only`: every modality limit 0.
            language_model_only: Some("--language-model-only"),
        },
        EngineKind::Sglang => Levers {
            window: Some(&["--context-length"]),
            graphs_off: Some(GraphsOff::Flag("--disable-cuda-graph")),
            sequences: Some((&["--max-running-requests"], 0)),
            gpu_fraction: Some((&["--mem-fraction-static"], 0.88)),
            gpu_layers: None,
            kv_dtype: Some((&["--kv-cache-dtype"], "fp8_e5m2")),
            language_model_only: None,
        },
        EngineKind::LlamaCpp => Levers {
            window: Some(&["-c", "--ctx-size"]),
            graphs_off: Some(GraphsOff::Env("GGML_CUDA_DISABLE_GRAPHS", "1")),
            sequences: Some((&["-np", "--parallel"], 4)),
            gpu_fraction: None,
            gpu_layers: Some(&["-ngl", "--gpu-layers", "--n-gpu-layers"]),
            // llama.cpp states no KV budget to price against (its KV cache is allocated whole).
            kv_dtype: None,
            // llama.cpp loads a vision projector only when given one (`--mmproj`).
            language_model_only: None,
        },
        _ => Levers {
            window: None,
            graphs_off: None,
            sequences: None,
            gpu_fraction: None,
            gpu_layers: None,
            kv_dtype: None,
            language_model_only: None,
        },
    }
}
