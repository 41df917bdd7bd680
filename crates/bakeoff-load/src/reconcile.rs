//! Client timings joined with the server's own: per request with llama.cpp `timings`, per step
//! with `/metrics` deltas (see [`crate::prometheus`]), and the flag for a step where the
//! client's share of the time grows.

use bakeoff_artifact::{FlagCode, FlagSeverity, InstrumentFlag, LoadStep, Reconciliation};
use bakeoff_stats::median;

use crate::measure::Measured;

/// What reconciliation keeps of one successful request that carried llama.cpp `timings`.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    client_decode_tps: Option<f64>,
    server_decode_tps: Option<f64>,
    ttft_ms: Option<f64>,
    e2e_ms: f64,
    server_prompt_ms: f64,
    server_predicted_ms: Option<f64>,
    server_cache_n: Option<u64>,
}

impl Sample {
    /// `None` for a failed request or one without server timings (vLLM, SGLang and gateways
    /// send none per request).
    pub fn of(m: &Measured) -> Option<Self> {
        let server_prompt_ms = m.record.server_prompt_ms.filter(|_| m.ok)?;
        Some(Self {
            client_decode_tps: m.client_decode_tps,
            server_decode_tps: m.record.server_decode_tps,
            ttft_ms: m.record.ttft_ms,
            e2e_ms: m.record.e2e_ms,
            server_prompt_ms,
            server_predicted_ms: m.record.server_predicted_ms,
            server_cache_n: m.record.server_cache_n,
        })
    }
}

/// Per-step reconciliation from requests that carried server timings; `None` when none did.
pub fn step(with: &[Sample]) -> Option<Reconciliation> {
    if with.is_empty() {
        return None;
    }
    let decode_ratio = with
        .iter()
        .filter_map(|m| Some(m.client_decode_tps? / m.server_decode_tps.filter(|s| *s > 0.0)?))
        .collect();
    let ttft_ratio = with
        .iter()
        .filter(|m| m.server_prompt_ms > 0.0)
        .filter_map(|m| Some(m.ttft_ms? / m.server_prompt_ms))
        .collect();
    let unaccounted = with
        .iter()
        .filter_map(|m| Some(m.e2e_ms - (m.server_prompt_ms + m.server_predicted_ms?)))
        .collect();
    Some(Reconciliation {
        requests_with_timings: with.len() as u64,
        decode_ratio_p50: median(decode_ratio),
        ttft_ratio_p50: median(ttft_ratio),
        unaccounted_ms_p50: median(unaccounted),
        server_decode_tps_p50: median(with.iter().filter_map(|m| m.server_decode_tps).collect()),
        client_decode_tps_p50: median(with.iter().filter_map(|m| m.client_decode_tps).collect()),
        cache_n_total: with.iter().filter_map(|m| m.server_cache_n).sum(),
    })
}

/// The decode ratio (client / server rate) compares like with like at every load level —
/// batching slows both sides equally — so when it falls the client is losing time reading.
/// Flag a step whose ratio is more than 5 points below the sweep's first reconciled step.
/// Engines without per-request timings (vLLM, SGLang) reconcile through `/metrics`: there the
/// client's mean E2E over the server's own is the measure, and a rise of more than 5 % over
/// the first step flags the step.
pub fn flag_overhead_growth(steps: &mut [LoadStep]) -> Vec<InstrumentFlag> {
    let decode = |s: &LoadStep| s.reconciliation.as_ref()?.decode_ratio_p50;
    let e2e = |s: &LoadStep| s.metrics.as_ref()?.client_server_e2e_ratio;
    let mut out = Vec::new();
    if let Some(base) = steps.iter().find_map(decode) {
        for s in steps.iter_mut() {
            let Some(r) = decode(s) else { continue };
            if base - r > 0.05 {
                let message = format!(
                    "step {}: client decode rate is {:.0}% of the server's own (first step: {:.0}%); \
                     the client is losing time at this load",
                    s.label,
                    r * 100.0,
                    base * 100.0
                );
                out.push(push_flag(s, message));
            }
        }
    } else if let Some(base) = steps.iter().find_map(e2e) {
        for s in steps.iter_mut() {
            let Some(r) = e2e(s) else { continue };
            if r - base > 0.05 * base {
                let message = format!(
                    "step {}: client E2E is {r:.3}× the server's own (first step: {base:.3}×); \
                     the client is losing time at this load",
                    s.label
                );
                out.push(push_flag(s, message));
            }
        }
    }
    out
}

fn push_flag(s: &mut LoadStep, message: String) -> InstrumentFlag {
    let f = InstrumentFlag {
        code: FlagCode::ClientOverheadGrowing,
        severity: FlagSeverity::Warning,
        message,
        suite: None,
        count: None,
    };
    s.flags.push(f.clone());
    f
}
