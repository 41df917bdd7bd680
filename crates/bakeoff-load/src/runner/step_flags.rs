//! What a finished step says about itself: its instrument flags, the speculative-decoding
//! figures taken from llama.cpp's `timings`, and whether output-length pinning held.

use bakeoff_artifact::{FlagCode, FlagSeverity, InstrumentFlag, LoadStep, PinningRecord};

use super::step::SPEC_DECODE_MIN_TOKENS;
use crate::plan::LoadPlan;

/// llama.cpp reports drafts per request in `timings` too; use them when `/metrics` is off.
pub(super) fn attach_timings_spec(step: &mut LoadStep, spec: Option<bakeoff_artifact::SpecDecode>) {
    let Some(spec) = spec else { return };
    match &mut step.metrics {
        Some(m) if m.spec_decode.is_some() => {}
        Some(m) => m.spec_decode = Some(spec),
        None => {
            step.metrics = Some(bakeoff_artifact::MetricsDelta {
                family: "llamacpp".into(),
                deltas: Default::default(),
                generation_tokens: None,
                client_server_token_ratio: None,
                spec_decode: Some(spec),
                server_ttft_mean_ms: None,
                server_e2e_mean_ms: None,
                client_server_ttft_ratio: None,
                client_server_e2e_ratio: None,
            })
        }
    }
}

fn flag(code: FlagCode, severity: FlagSeverity, message: String) -> InstrumentFlag {
    InstrumentFlag {
        code,
        severity,
        message,
        suite: None,
        count: None,
    }
}

/// A step's own instrument flags.
pub fn flag_step(plan: &LoadPlan, step: &mut LoadStep) {
    if step.ok == 0 {
        step.flags.push(flag(
            FlagCode::StepMeasuredNothing,
            FlagSeverity::Invalid,
            format!(
                "step {}: every one of {} requests failed",
                step.label, step.sent
            ),
        ));
    }
    if let Some(c) = &plan.ceiling {
        let mut why = Vec::new();
        if let Some(t) = step.output_tokens_per_second
            && t > 0.5 * c.streamed_tokens_per_second
        {
            why.push(format!(
                "{t:.0} tok/s > half the ceiling {:.0}",
                c.streamed_tokens_per_second
            ));
        }
        if let Some(r) = step.requests_per_second
            && r > 0.5 * c.requests_per_second
        {
            why.push(format!(
                "{r:.1} req/s > half the ceiling {:.1}",
                c.requests_per_second
            ));
        }
        if let Some(n) = step.concurrency
            && f64::from(n) > 0.5 * c.concurrent_streams as f64
        {
            why.push(format!(
                "{n} streams > half the ceiling {}",
                c.concurrent_streams
            ));
        }
        if !why.is_empty() {
            step.flags.push(flag(
                FlagCode::ClientBound,
                FlagSeverity::Warning,
                format!(
                    "step {}: {} — the harness, not the server, may be the limit",
                    step.label,
                    why.join("; ")
                ),
            ));
        }
    }
    if step.token_source != "usage" && step.ok > 0 {
        step.flags.push(flag(
            FlagCode::TokenCountFallback,
            FlagSeverity::Warning,
            format!(
                "step {}: output tokens are {} (no usage from the server), counted by the client as text-bearing chunks",
                step.label, step.token_source
            ),
        ));
    }
    if let (Some(req), Some(got)) = (step.requested_rate, step.achieved_rate)
        && (got - req).abs() / req > 0.05
    {
        step.flags.push(flag(
            FlagCode::ScheduleDrift,
            FlagSeverity::Warning,
            format!(
                "step {}: achieved {got:.2} req/s of {req} requested",
                step.label
            ),
        ));
    }
    let spec_active = step
        .metrics
        .as_ref()
        .and_then(|m| m.spec_decode.as_ref())
        .is_some();
    if spec_active
        && step
            .mean_output_tokens
            .is_some_and(|n| n < SPEC_DECODE_MIN_TOKENS)
    {
        step.flags.push(flag(
            FlagCode::SpecDecodingUnmeasurable,
            FlagSeverity::Warning,
            format!(
                "step {}: the endpoint uses speculative decoding but completions average {:.0} tokens; \
                 short completions cannot measure it (its overhead never amortizes) — use the longgen probes",
                step.label,
                step.mean_output_tokens.unwrap_or(0.0)
            ),
        ));
    }
}

pub(super) fn pinning(plan: &LoadPlan, steps: &[LoadStep]) -> PinningRecord {
    let mut finished = 0;
    let mut exact = 0;
    for s in steps {
        // A request the client cancelled (`--cancel-rate`) never finished: it says nothing
        // about pinning.
        for r in &s.requests {
            if r.error.is_none() && r.cancelled_after.is_none() {
                finished += 1;
                if r.token_source == "usage" && r.output_tokens == Some(u64::from(r.max_tokens)) {
                    exact += 1;
                }
            }
        }
    }
    let sent = plan.pin.ignore_eos || plan.pin.min_tokens;
    let honoured = (sent && finished > 0).then_some(exact == finished);
    let detail = match honoured {
        Some(true) => {
            format!("all {finished} finished requests produced exactly their requested length")
        }
        Some(false) => format!(
            "pinning was sent but only {exact} of {finished} finished requests produced their requested length: the engine did not honour it"
        ),
        None if finished == 0 => {
            "no finished request to check (or per-request records were not kept)".into()
        }
        None => {
            format!("output length not pinned; {exact} of {finished} requests reached max_tokens")
        }
    };
    PinningRecord {
        ignore_eos_sent: plan.pin.ignore_eos,
        min_tokens_sent: plan.pin.min_tokens,
        finished,
        exact_length: exact,
        honoured,
        detail,
    }
}
