//! Long-generation probes (`longgen`): a few long completions at temperature 0, one at a time,
//! each reported with its decode rate — the deciding evidence for speculative decoding (MTP),
//! which short completions cannot measure: its overhead never amortizes over 10–31 tokens
//! (docs/field-cases.md B7: 3 × 1024 tokens at temperature 0 decided it).
//!
//! Speculative-decoding acceptance comes from `/metrics` (vLLM
//! `vllm:spec_decode_num_accepted_tokens_total / …_num_draft_tokens_total`, llama.cpp
//! `llamacpp:spec_decode_*`, SGLang `sglang:spec_accept_length`) or llama.cpp `timings`.

use bakeoff_artifact::{
    FlagCode, FlagSeverity, InstrumentFlag, LonggenDetails, LonggenOutput, LonggenProbe,
    RequestRecord, SuiteResult,
};
use bakeoff_load::{LengthSpec, LoadPlan, Mode, PinPolicy, StepBound};

pub use crate::load_options::LonggenOptions;
use crate::suite_run::{Recorder, SuiteContext};
use crate::throughput::measure_steps;

/// The note every longgen summary carries.
pub const SHORT_COMPLETIONS_NOTE: &str = "short completions cannot measure speculative decoding: \
its overhead never amortizes over 10–31 tokens; these long probes are the evidence for it";

pub fn plan(ctx: &SuiteContext<'_>, o: &LonggenOptions) -> LoadPlan {
    let mut p = LoadPlan::new(&ctx.model);
    p.mode = Mode::Closed {
        concurrency: vec![1],
    };
    p.bound = StepBound {
        requests: Some(o.probes),
        duration: None,
        completed: None,
    };
    p.warmup_requests = 0;
    // Probes one at a time on a quiet server: no busier step before to recover from.
    p.step_warmup = 0;
    p.prompt_tokens = LengthSpec::Fixed(o.prompt_tokens);
    p.output_tokens = LengthSpec::Fixed(o.output_tokens);
    p.temperature = 0.0;
    p.pin = PinPolicy::for_engine(ctx.facts.engine);
    p.repeat = o.repeats.max(1);
    crate::throughput::load_controls(ctx, &mut p);
    p
}

pub async fn run(ctx: &SuiteContext<'_>, rec: &mut Recorder<'_>) -> SuiteResult {
    let o = &ctx.options.longgen;
    let (mut result, report) = measure_steps(ctx, rec, plan(ctx, o), "longgen").await;
    if let Some(load) = &report {
        // Decode tok/s per probe, from the per-request records, beside the load report's own
        // fields as the last two keys.
        let longgen = LonggenDetails {
            probes: load
                .steps
                .iter()
                .flat_map(|s| &s.requests)
                .map(probe)
                .collect(),
            note: Some(SHORT_COMPLETIONS_NOTE.into()),
        };
        let details = LonggenOutput {
            load,
            longgen: &longgen,
        };
        crate::summary::write_details(&mut result.summary, "longgen", &details);
    }
    result.summary.flags.push(InstrumentFlag {
        code: FlagCode::ShortCompletionsCannotMeasureSpecDecoding,
        severity: FlagSeverity::Info,
        message: SHORT_COMPLETIONS_NOTE.into(),
        suite: Some("longgen".into()),
        count: None,
    });
    result
}

/// One probe's figures from its request record: the decode rate from the client's TPOT.
fn probe(r: &RequestRecord) -> LonggenProbe {
    LonggenProbe {
        probe: Some(r.i),
        output_tokens: r.output_tokens,
        decode_tokens_per_second: r.tpot_ms.filter(|t| *t > 0.0).map(|t| 1000.0 / t),
        server_decode_tokens_per_second: r.server_decode_tps,
        ttft_ms: r.ttft_ms,
        error: r.error.clone(),
    }
}
