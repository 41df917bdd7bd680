//! Many requests' measurements to a step summary: latency histograms, rates, goodput, and the
//! tallies of reconciliation, turns, the prefix cache, ramp-up and cancellation.

use std::collections::BTreeMap;
use std::time::Duration;

use bakeoff_artifact::{Goodput, LoadStep, RequestRecord, StepHistograms, StepLatencies};
use bakeoff_stats::{LatencyRecorder, StatsError, rate_per_second};

use super::Measured;
use crate::plan::Slo;

/// Collects a step's requests.
pub struct StepAccumulator {
    ttft: LatencyRecorder,
    ttfot: LatencyRecorder,
    tpot: LatencyRecorder,
    itl: LatencyRecorder,
    e2e: LatencyRecorder,
    lateness: LatencyRecorder,
    ttft_corrected: LatencyRecorder,
    e2e_corrected: LatencyRecorder,
    /// Per-request records, only when the plan keeps them (`keep_requests`).
    records: Vec<RequestRecord>,
    /// What reconciliation needs of each request that carried server timings: a few numbers,
    /// never the ITL vectors (those go into the histogram and are dropped, so a long sweep's
    /// memory does not grow with its token count; docs/performance.md).
    recon: Vec<crate::reconcile::Sample>,
    /// Each successful request's decode interval and tokens: three numbers a request, for the
    /// step's throughput standard error ([`crate::capacity::throughput_se`]).
    spans: Vec<crate::capacity::DecodeSpan>,
    keep: bool,
    sent: u64,
    ok: u64,
    errors: BTreeMap<String, u64>,
    output_tokens: u64,
    prompt_tokens: u64,
    prompt_n: u64,
    chunks: u64,
    sources: BTreeMap<&'static str, u64>,
    first_intended: Option<Duration>,
    last_sent: Option<Duration>,
    good: u64,
    pub draft_n: u64,
    pub draft_accepted: u64,
    pub slo: Option<Slo>,
    /// Per-turn figures, only once a request carried a turn number (multi-turn workloads).
    turns: Option<crate::workload::TurnAccumulator>,
    /// Agent sessions: the turns by their place in the session, and whole sessions.
    sessions: Option<crate::workload::sessions::SessionTally>,
    /// llama.cpp `timings` cache figures over the step, for the prefix-cache hit rate.
    cache: crate::workload::CacheTally,
    /// `--ramp-up`: the requests sent before the measured window (in no figure).
    ramp: crate::shapes::RampTally,
    /// `--cancel-rate`: the requests drawn for cancellation.
    cancel: crate::shapes::CancelTally,
}

impl StepAccumulator {
    pub fn new(slo: Option<Slo>, keep: bool) -> Result<Self, StatsError> {
        Ok(Self {
            ttft: LatencyRecorder::new()?,
            ttfot: LatencyRecorder::new()?,
            tpot: LatencyRecorder::new()?,
            itl: LatencyRecorder::new()?,
            e2e: LatencyRecorder::new()?,
            lateness: LatencyRecorder::new()?,
            ttft_corrected: LatencyRecorder::new()?,
            e2e_corrected: LatencyRecorder::new()?,
            records: Vec::new(),
            recon: Vec::new(),
            spans: Vec::new(),
            keep,
            sent: 0,
            ok: 0,
            errors: BTreeMap::new(),
            output_tokens: 0,
            prompt_tokens: 0,
            prompt_n: 0,
            chunks: 0,
            sources: BTreeMap::new(),
            first_intended: None,
            last_sent: None,
            good: 0,
            draft_n: 0,
            draft_accepted: 0,
            slo,
            turns: None,
            sessions: None,
            cache: Default::default(),
            ramp: Default::default(),
            cancel: Default::default(),
        })
    }

    pub fn add(&mut self, m: Measured) {
        self.sent += 1;
        let sent = Duration::from_secs_f64(m.record.sent_ms / 1000.0);
        let intended = Duration::from_secs_f64(m.record.intended_ms / 1000.0);
        self.first_intended = Some(self.first_intended.map_or(intended, |f| f.min(intended)));
        self.last_sent = Some(self.last_sent.map_or(sent, |l| l.max(sent)));
        self.lateness.record(m.lateness);
        self.cancel.add(&m);
        if m.aborted.is_some() {
            // Cancelled mid-stream: counted as sent and in `cancellations`, nowhere else.
            if self.keep {
                self.records.push(m.record);
            }
            return;
        }
        if m.ok {
            self.ok += 1;
            if let Some(t) = m.ttft {
                self.ttft.record(t);
                self.ttft_corrected.record(t + m.lateness);
            }
            if let Some(t) = m.ttfot {
                self.ttfot.record(t);
            }
            if let Some(t) = m.tpot {
                self.tpot.record(t);
            }
            for g in &m.itl {
                self.itl.record(*g);
            }
            self.e2e.record(m.e2e);
            self.e2e_corrected.record(m.e2e + m.lateness);
            if let Some(n) = m.record.output_tokens {
                self.output_tokens += n;
                let first = m.record.ttft_ms.unwrap_or(m.record.e2e_ms);
                self.spans.push(crate::capacity::DecodeSpan {
                    start_ms: m.record.sent_ms + first,
                    end_ms: m.record.sent_ms + m.record.e2e_ms,
                    tokens: n,
                });
            }
            if let Some(p) = m.record.prompt_tokens {
                self.prompt_tokens += p;
                self.prompt_n += 1;
            }
            self.chunks += m.record.chunks;
            let src = if m.record.token_source == "usage" {
                "usage"
            } else {
                "client-chunks"
            };
            *self.sources.entry(src).or_insert(0) += 1;
            if self.slo.is_some_and(|s| meets(&s, &m)) {
                self.good += 1;
            }
            self.draft_n += m.draft_n.unwrap_or(0);
            self.draft_accepted += m.draft_accepted.unwrap_or(0);
        } else {
            let kind = m.record.error.clone().unwrap_or_else(|| "unknown".into());
            *self.errors.entry(kind).or_insert(0) += 1;
        }
        self.cache.add(&m.record);
        if let (Some(turn), Some(t)) = (m.record.turn, self.turns.as_mut()) {
            t.add(turn, &m);
        }
        if let Some(sample) = crate::reconcile::Sample::of(&m) {
            self.recon.push(sample);
        }
        if self.keep {
            self.records.push(m.record);
        }
    }

    /// Split the step's figures by turn (multi-turn workloads): first turns apart from later.
    pub fn with_turns(mut self) -> Result<Self, StatsError> {
        self.turns = Some(crate::workload::TurnAccumulator::new()?);
        Ok(self)
    }

    /// Tally the step's requests as session turns too (`workload`: `synthetic` or `replay`).
    pub fn with_sessions(mut self, workload: &'static str) -> Result<Self, StatsError> {
        self.sessions = Some(crate::workload::sessions::SessionTally::new(workload)?);
        Ok(self)
    }

    /// A session's turn: into the session tally (with the prompt tokens of the turn before it,
    /// whose history it resends), then into the step.
    pub fn add_session_turn(&mut self, m: Measured, previous_prompt: Option<u64>) {
        if let Some(t) = self.sessions.as_mut() {
            t.add(&m, previous_prompt);
        }
        self.add(m);
    }

    /// Whole sessions started and completed, into the session tally.
    pub fn session_tally(&mut self, f: impl FnOnce(&mut crate::workload::sessions::SessionTally)) {
        if let Some(t) = self.sessions.as_mut() {
            f(t);
        }
    }

    /// The step's llama.cpp `timings` cache figures so far.
    pub fn cache_tally(&self) -> crate::workload::CacheTally {
        self.cache
    }

    /// Requests added so far.
    pub fn count(&self) -> u64 {
        self.sent
    }

    /// Of those, the successful ones.
    pub fn ok_count(&self) -> u64 {
        self.ok
    }

    /// A request of the ramp-up before the measured window: counted apart, measured nowhere.
    pub fn add_ramp(&mut self, m: &Measured) {
        self.ramp.add(m);
    }

    /// The ramp-up's requests so far.
    pub fn ramp_tally(&self) -> crate::shapes::RampTally {
        self.ramp
    }

    /// The cancellations so far.
    pub fn cancel_tally(&self) -> crate::shapes::CancelTally {
        self.cancel
    }

    /// Speculative decoding as llama.cpp's per-request `timings` saw it (`draft_n`,
    /// `draft_n_accepted`), when any request drafted.
    pub fn timings_spec_decode(&self) -> Option<bakeoff_artifact::SpecDecode> {
        (self.draft_n > 0).then(|| bakeoff_artifact::SpecDecode {
            source: "llama.cpp timings".into(),
            draft_tokens: Some(self.draft_n as f64),
            accepted_tokens: Some(self.draft_accepted as f64),
            acceptance_rate: Some(self.draft_accepted as f64 / self.draft_n as f64),
            mean_accept_length: None,
        })
    }

    /// The step summary. `wall` runs from the step's start to its last completion.
    pub fn finish(self, label: String, wall: Duration) -> LoadStep {
        let wall_s = wall.as_secs_f64();
        let send_window = match (self.first_intended, self.last_sent) {
            (Some(a), Some(b)) if b > a => Some((b - a).as_secs_f64()),
            _ => None,
        };
        // n arrivals span n − 1 gaps. The window runs from the first *intended* send (the
        // schedule's origin) to the last actual send, so a late start cannot shorten it and
        // inflate the rate, and a dispatcher falling behind lengthens it.
        let achieved_rate =
            send_window.and_then(|w| rate_per_second(self.sent.saturating_sub(1), w));
        let token_source = match (self.sources.get("usage"), self.sources.get("client-chunks")) {
            (Some(_), None) => "usage",
            (None, Some(_)) => "client-chunks",
            (Some(_), Some(_)) => "mixed",
            (None, None) => "none",
        };
        let goodput = self.slo.map(|s| Goodput {
            slo: s.describe(),
            met: self.good,
            of: self.sent,
            per_second: rate_per_second(self.good, wall_s),
        });
        LoadStep {
            label,
            concurrency: None,
            requested_rate: None,
            arrival: None,
            sent: self.sent,
            ok: self.ok,
            errors: self.errors,
            wall_s,
            achieved_rate,
            requests_per_second: rate_per_second(self.ok, wall_s),
            output_tokens: self.output_tokens,
            output_tokens_per_second: rate_per_second(self.output_tokens, wall_s),
            output_tokens_per_second_se: crate::capacity::throughput_se(
                &self.spans,
                wall_s * 1000.0,
            ),
            repeat: None,
            token_source: token_source.to_string(),
            tokens_per_chunk: (self.chunks > 0)
                .then(|| self.output_tokens as f64 / self.chunks as f64),
            mean_output_tokens: (self.ok > 0).then(|| self.output_tokens as f64 / self.ok as f64),
            mean_prompt_tokens: (self.prompt_n > 0)
                .then(|| self.prompt_tokens as f64 / self.prompt_n as f64),
            latency: StepLatencies {
                ttft: self.ttft.summary(),
                ttfot: self.ttfot.summary(),
                tpot: self.tpot.summary(),
                itl: self.itl.summary(),
                e2e: self.e2e.summary(),
                send_lateness: self.lateness.summary(),
                ttft_corrected: self.ttft_corrected.summary(),
                e2e_corrected: self.e2e_corrected.summary(),
            },
            histograms: StepHistograms {
                ttft: self.ttft.buckets(),
                itl: self.itl.buckets(),
                e2e: self.e2e.buckets(),
            },
            goodput,
            reconciliation: crate::reconcile::step(&self.recon),
            metrics: None,
            flags: Vec::new(),
            conditions: None,
            gpu_telemetry: None,
            requests: self.records,
            turns: self.turns.map(crate::workload::TurnAccumulator::finish),
            sessions: self
                .sessions
                .map(crate::workload::sessions::SessionTally::finish),
            prefix_cache: None,
            ramp_up: None,
            cancellations: None,
            gauges: None,
            warmup: None,
            bound: None,
        }
    }
}

/// Every objective given is met (measured from the actual send: the server's service level).
fn meets(slo: &Slo, m: &Measured) -> bool {
    let ok_ttft = slo.ttft.is_none_or(|l| m.ttft.is_some_and(|t| t <= l));
    let ok_tpot = slo.tpot.is_none_or(|l| m.tpot.is_some_and(|t| t <= l));
    let ok_e2e = slo.e2e.is_none_or(|l| m.e2e <= l);
    ok_ttft && ok_tpot && ok_e2e
}
