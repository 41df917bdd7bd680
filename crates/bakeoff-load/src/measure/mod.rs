//! From one [`Exchange`] to the numbers of docs/metrics.md, and from many to a step summary
//! (`step.rs`). The arithmetic lives here and only here.

use std::time::Duration;

use bakeoff_artifact::RequestRecord;
use bakeoff_client::Exchange;

mod step;

pub use step::StepAccumulator;

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Output tokens: the server's `usage.completion_tokens`, else (labelled) the number of
/// text-bearing stream events.
pub fn output_tokens(ex: &Exchange) -> (Option<u64>, &'static str) {
    match ex.reply.completion_tokens() {
        Some(n) => (Some(n), "usage"),
        None if !ex.reply.chunks.is_empty() => {
            (Some(ex.reply.chunks.len() as u64), "client-chunks")
        }
        None => (None, "none"),
    }
}

/// TPOT = (E2E − TTFT) / (output tokens − 1); undefined below two tokens.
pub fn tpot(e2e: Duration, ttft: Duration, tokens: u64) -> Option<Duration> {
    if tokens < 2 || e2e < ttft {
        return None;
    }
    Some((e2e - ttft) / u32::try_from(tokens - 1).unwrap_or(u32::MAX))
}

/// ITL: gaps between consecutive content- or reasoning-bearing events.
pub fn itl_gaps(ex: &Exchange) -> Vec<Duration> {
    let stamps: Vec<Duration> = ex
        .reply
        .chunks
        .iter()
        .filter(|c| c.content_chars > 0 || c.reasoning_chars > 0)
        .map(|c| c.at)
        .collect();
    stamps
        .windows(2)
        .map(|w| w[1].saturating_sub(w[0]))
        .collect()
}

/// One finished request, as the step accumulator needs it.
#[derive(Debug, Clone)]
pub struct Measured {
    pub record: RequestRecord,
    pub itl: Vec<Duration>,
    pub lateness: Duration,
    pub ttft: Option<Duration>,
    pub ttfot: Option<Duration>,
    pub e2e: Duration,
    pub tpot: Option<Duration>,
    /// Client decode rate, tokens/s: 1 / TPOT.
    pub client_decode_tps: Option<f64>,
    pub ok: bool,
    pub draft_n: Option<u64>,
    pub draft_accepted: Option<u64>,
    /// `--cancel-rate`: the seeded abort point this request was drawn for.
    pub planned_abort: Option<u64>,
    /// The client aborted it mid-stream at `planned_abort` (set by the runner).
    pub aborted: Option<u64>,
}

impl Measured {
    /// Mark the request drawn for cancellation at `point`, and whether the client aborted it
    /// there (else it finished first).
    pub fn with_abort(mut self, point: Option<u64>, aborted: bool) -> Self {
        self.planned_abort = point;
        self.aborted = point.filter(|_| aborted);
        self.record.cancelled_after = self.aborted;
        if self.aborted.is_some() {
            // Not a completion: no latencies, no TPOT, no ITL.
            self.ok = false;
        }
        self
    }
}

/// Build the measurement of one request. `intended`/`sent` are offsets from the step start.
pub fn measure(
    i: u64,
    intended: Duration,
    sent: Duration,
    max_tokens: u32,
    ex: &Exchange,
) -> Measured {
    let r = &ex.reply;
    let (tokens, source) = output_tokens(ex);
    let tp = match (r.ttft, tokens) {
        (Some(t), Some(n)) if ex.ok() => tpot(r.e2e, t, n),
        _ => None,
    };
    let timings = r.timings.as_ref();
    let record = RequestRecord {
        i,
        intended_ms: ms(intended),
        sent_ms: ms(sent),
        ttft_ms: r.ttft.map(ms),
        ttfot_ms: r.ttfot.map(ms),
        e2e_ms: ms(r.e2e),
        tpot_ms: tp.map(ms),
        max_tokens,
        output_tokens: tokens,
        token_source: source.to_string(),
        prompt_tokens: r.prompt_tokens(),
        chunks: r.chunks.len() as u64,
        finish: r.finish_reason.clone(),
        error: ex.error.as_ref().map(|e| e.kind().to_string()),
        error_message: ex.error.as_ref().map(|e| e.to_string()),
        server_prompt_ms: timings.and_then(|t| t.prompt_ms),
        server_predicted_ms: timings.and_then(|t| t.predicted_ms),
        server_decode_tps: timings.and_then(|t| t.predicted_per_second),
        server_cache_n: timings.and_then(|t| t.cache_n),
        server_prompt_n: timings.and_then(|t| t.prompt_n),
        // Set by the workload that knows them (multi-turn, trace).
        turn: None,
        conversation: None,
        cancelled_after: None,
        sub_session: None,
        tool_wait_ms: None,
        server_cached_tokens: r.usage.as_ref().and_then(|u| u.cached_tokens()),
    };
    Measured {
        itl: if ex.ok() { itl_gaps(ex) } else { Vec::new() },
        lateness: sent.saturating_sub(intended),
        ttft: r.ttft,
        ttfot: r.ttfot,
        e2e: r.e2e,
        tpot: tp,
        client_decode_tps: tp.filter(|d| !d.is_zero()).map(|d| 1.0 / d.as_secs_f64()),
        ok: ex.ok(),
        draft_n: timings.and_then(|t| t.draft_n),
        draft_accepted: timings.and_then(|t| t.draft_n_accepted),
        planned_abort: None,
        aborted: None,
        record,
    }
}
