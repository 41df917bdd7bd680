//! A multi-turn step's figures split by turn class (first turn / later turns), and the
//! llama.cpp `timings` cache tally behind the prefix-cache hit rate.

use bakeoff_artifact::{RequestRecord, TurnClass, TurnSplit};
use bakeoff_stats::{LatencyRecorder, StatsError};

use crate::measure::Measured;

/// llama.cpp `timings` over some requests: `cache_n` (prompt tokens reused from the slot's
/// cache) and `prompt_n` (prompt tokens evaluated), summed over the finished requests that
/// carried both.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CacheTally {
    pub with_timings: u64,
    pub cache_n: u64,
    pub prompt_n: u64,
}

impl CacheTally {
    pub fn add(&mut self, r: &RequestRecord) {
        if r.error.is_some() {
            return;
        }
        if let (Some(c), Some(p)) = (r.server_cache_n, r.server_prompt_n) {
            self.with_timings += 1;
            self.cache_n += c;
            self.prompt_n += p;
        }
    }

    /// Σcache_n / Σ(cache_n + prompt_n); `None` without timings or prompt tokens.
    pub fn hit_rate(&self) -> Option<f64> {
        let all = self.cache_n + self.prompt_n;
        (self.with_timings > 0 && all > 0).then(|| self.cache_n as f64 / all as f64)
    }
}

struct ClassAccumulator {
    sent: u64,
    ok: u64,
    ttft: LatencyRecorder,
    e2e: LatencyRecorder,
    prompt_tokens: u64,
    prompt_n: u64,
    cache: CacheTally,
}

impl ClassAccumulator {
    fn new() -> Result<Self, StatsError> {
        Ok(Self {
            sent: 0,
            ok: 0,
            ttft: LatencyRecorder::new()?,
            e2e: LatencyRecorder::new()?,
            prompt_tokens: 0,
            prompt_n: 0,
            cache: CacheTally::default(),
        })
    }

    fn add(&mut self, m: &Measured) {
        self.sent += 1;
        self.cache.add(&m.record);
        if !m.ok {
            return;
        }
        self.ok += 1;
        if let Some(t) = m.ttft {
            self.ttft.record(t);
        }
        self.e2e.record(m.e2e);
        if let Some(p) = m.record.prompt_tokens {
            self.prompt_tokens += p;
            self.prompt_n += 1;
        }
    }

    fn finish(self) -> TurnClass {
        TurnClass {
            sent: self.sent,
            ok: self.ok,
            ttft: self.ttft.summary(),
            e2e: self.e2e.summary(),
            mean_prompt_tokens: (self.prompt_n > 0)
                .then(|| self.prompt_tokens as f64 / self.prompt_n as f64),
            cache_hit_rate: self.cache.hit_rate(),
        }
    }
}

/// First turns apart from later turns: a later turn resends the conversation so far, so the
/// difference between the two is what a prefix cache (or its absence) does.
pub struct TurnAccumulator {
    first: ClassAccumulator,
    later: ClassAccumulator,
}

impl TurnAccumulator {
    pub fn new() -> Result<Self, StatsError> {
        Ok(Self {
            first: ClassAccumulator::new()?,
            later: ClassAccumulator::new()?,
        })
    }

    /// `turn` is 1-based.
    pub fn add(&mut self, turn: u32, m: &Measured) {
        if turn <= 1 {
            self.first.add(m);
        } else {
            self.later.add(m);
        }
    }

    pub fn finish(self) -> TurnSplit {
        TurnSplit {
            // Every conversation sends its first turn exactly once.
            conversations: self.first.sent,
            first_turn: self.first.finish(),
            later_turns: self.later.finish(),
        }
    }
}
