//! Client timings joined with the server's own: per request with llama.cpp `timings`, per step
//! with `/metrics` deltas (see [`crate::prometheus`]), and the flag for a step where the
//! client's share of the time grows.

use bakeoff_artifact::{FlagSeverity, InstrumentFlag, LoadStep, Reconciliation};

use crate::measure::Measured;

fn median(mut v: Vec<f64>) -> Option<f64> {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// Per-step reconciliation from requests that carried server timings; `None` when none did
/// (vLLM, SGLang and gateways send no per-request timings).
pub fn step(measured: &[Measured]) -> Option<Reconciliation> {
    let with: Vec<&Measured> = measured
        .iter()
        .filter(|m| m.ok && m.record.server_prompt_ms.is_some())
        .collect();
    if with.is_empty() {
        return None;
    }
    let decode_ratio = with
        .iter()
        .filter_map(|m| {
            Some(m.client_decode_tps? / m.record.server_decode_tps.filter(|s| *s > 0.0)?)
        })
        .collect();
    let ttft_ratio = with
        .iter()
        .filter_map(|m| Some(m.record.ttft_ms? / m.record.server_prompt_ms.filter(|p| *p > 0.0)?))
        .collect();
    let unaccounted = with
        .iter()
        .filter_map(|m| {
            Some(m.record.e2e_ms - (m.record.server_prompt_ms? + m.record.server_predicted_ms?))
        })
        .collect();
    Some(Reconciliation {
        requests_with_timings: with.len() as u64,
        decode_ratio_p50: median(decode_ratio),
        ttft_ratio_p50: median(ttft_ratio),
        unaccounted_ms_p50: median(unaccounted),
        server_decode_tps_p50: median(
            with.iter()
                .filter_map(|m| m.record.server_decode_tps)
                .collect(),
        ),
        client_decode_tps_p50: median(with.iter().filter_map(|m| m.client_decode_tps).collect()),
        cache_n_total: with.iter().filter_map(|m| m.record.server_cache_n).sum(),
    })
}

/// The decode ratio (client / server rate) compares like with like at every load level —
/// batching slows both sides equally — so when it falls the client is losing time reading.
/// Flag a step whose ratio is more than 5 points below the sweep's first reconciled step.
pub fn flag_overhead_growth(steps: &mut [LoadStep]) -> Vec<InstrumentFlag> {
    let base = steps
        .iter()
        .find_map(|s| s.reconciliation.as_ref()?.decode_ratio_p50);
    let Some(base) = base else { return Vec::new() };
    let mut out = Vec::new();
    for s in steps.iter_mut() {
        let Some(r) = s.reconciliation.as_ref().and_then(|r| r.decode_ratio_p50) else {
            continue;
        };
        if base - r > 0.05 {
            let f = InstrumentFlag {
                code: "client-overhead-growing".into(),
                severity: FlagSeverity::Warning,
                message: format!(
                    "step {}: client decode rate is {:.0}% of the server's own (first step: {:.0}%); \
                     the client is losing time at this load",
                    s.label,
                    r * 100.0,
                    base * 100.0
                ),
                suite: None,
                count: None,
            };
            s.flags.push(f.clone());
            out.push(f);
        }
    }
    out
}
