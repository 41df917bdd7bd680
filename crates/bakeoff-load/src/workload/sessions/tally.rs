//! A session step's figures by turn: the depth curve, cache hits per turn, and whether the
//! cache survived each tool wait (docs/metrics.md, "Sessions").

use std::collections::BTreeMap;
use std::time::Duration;

use bakeoff_artifact::{ReplayTokens, RequestRecord, SessionStep, SessionTurn};
use bakeoff_stats::{LatencyRecorder, StatsError};

use crate::measure::Measured;

/// The share of the previous turn's prompt the server must serve from its cache for the cache
/// to count as having survived the wait: below 1 for the template's closing tokens of the
/// previous turn and for a block-granular cache (vLLM caches whole blocks of 16 tokens).
pub const KEPT_SHARE: f64 = 0.9;

/// The prompt tokens a reply says came from the server's cache, and where that was read.
pub fn cached_tokens(r: &RequestRecord) -> Option<(u64, &'static str)> {
    r.server_cache_n
        .map(|c| (c, "llama.cpp timings"))
        .or_else(|| {
            r.server_cached_tokens
                .map(|c| (c, "usage.prompt_tokens_details"))
        })
}

struct TurnAcc {
    sent: u64,
    ok: u64,
    ttft: LatencyRecorder,
    e2e: LatencyRecorder,
    prompt_sum: u64,
    prompt_n: u64,
    cached: u64,
    cache_prompt: u64,
    checked: u64,
    kept: u64,
    wait_ms: f64,
    waits: u64,
}

impl TurnAcc {
    fn new() -> Result<Self, StatsError> {
        Ok(Self {
            sent: 0,
            ok: 0,
            ttft: LatencyRecorder::new()?,
            e2e: LatencyRecorder::new()?,
            prompt_sum: 0,
            prompt_n: 0,
            cached: 0,
            cache_prompt: 0,
            checked: 0,
            kept: 0,
            wait_ms: 0.0,
            waits: 0,
        })
    }
}

/// Collects a step's session turns and whole sessions.
pub struct SessionTally {
    workload: &'static str,
    turns: BTreeMap<u32, TurnAcc>,
    started: u64,
    completed: u64,
    sub_sessions: u64,
    session_time: LatencyRecorder,
    tool_wait: LatencyRecorder,
    cache_source: Option<&'static str>,
    replay: Option<ReplayTokens>,
}

impl SessionTally {
    /// `workload`: `synthetic` or `replay`.
    pub fn new(workload: &'static str) -> Result<Self, StatsError> {
        Ok(Self {
            workload,
            turns: BTreeMap::new(),
            started: 0,
            completed: 0,
            sub_sessions: 0,
            session_time: LatencyRecorder::new()?,
            tool_wait: LatencyRecorder::new()?,
            cache_source: None,
            replay: None,
        })
    }

    /// One turn's request. `previous_prompt`: the prompt tokens of the same session's turn
    /// before it, whose history this turn resends.
    pub fn add(&mut self, m: &Measured, previous_prompt: Option<u64>) {
        let r = &m.record;
        let turn = r.turn.unwrap_or(1);
        let t = match self.turns.entry(turn) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => match TurnAcc::new() {
                Ok(fresh) => e.insert(fresh),
                // The recorder's bounds are constants: it cannot fail to build.
                Err(_) => return,
            },
        };
        t.sent += 1;
        if let Some(w) = r.tool_wait_ms {
            t.wait_ms += w;
            t.waits += 1;
            self.tool_wait.record(Duration::from_secs_f64(w / 1000.0));
        }
        if !m.ok {
            return;
        }
        t.ok += 1;
        if let Some(x) = m.ttft {
            t.ttft.record(x);
        }
        t.e2e.record(m.e2e);
        if let Some(p) = r.prompt_tokens {
            t.prompt_sum += p;
            t.prompt_n += 1;
        }
        if let (Some((cached, source)), Some(p)) = (cached_tokens(r), r.prompt_tokens) {
            self.cache_source.get_or_insert(source);
            t.cached += cached;
            t.cache_prompt += p;
            if let Some(prev) = previous_prompt.filter(|p| *p > 0) {
                t.checked += 1;
                if cached as f64 >= KEPT_SHARE * prev as f64 {
                    t.kept += 1;
                }
            }
        }
    }

    /// A replayed turn: the prompt tokens the recording's server counted against this
    /// server's count (both when known).
    pub fn replayed(&mut self, recorded: Option<u64>, counted: Option<u64>) {
        if let (Some(a), Some(b)) = (recorded, counted) {
            let r = self.replay.get_or_insert_with(Default::default);
            r.compared += 1;
            if a == b {
                r.equal += 1;
            }
            r.max_difference = r.max_difference.max(a.abs_diff(b));
        }
    }

    pub fn session_started(&mut self, sub_sessions: u32) {
        self.started += 1;
        self.sub_sessions += u64::from(sub_sessions);
    }

    /// A session that sent every turn with no failure, and its whole time.
    pub fn session_completed(&mut self, time: Duration) {
        self.completed += 1;
        self.session_time.record(time);
    }

    pub fn finish(self) -> SessionStep {
        SessionStep {
            workload: self.workload.to_string(),
            started: self.started,
            completed: self.completed,
            sub_sessions: self.sub_sessions,
            session_time: self.session_time.summary(),
            tool_wait: self.tool_wait.summary(),
            cache_source: self.cache_source.map(str::to_string),
            replay_tokens: self.replay,
            turns: self
                .turns
                .into_iter()
                .map(|(turn, t)| SessionTurn {
                    turn,
                    sent: t.sent,
                    ok: t.ok,
                    mean_prompt_tokens: (t.prompt_n > 0)
                        .then(|| t.prompt_sum as f64 / t.prompt_n as f64),
                    ttft: t.ttft.summary(),
                    e2e: t.e2e.summary(),
                    cache_hit_rate: (t.cache_prompt > 0)
                        .then(|| t.cached as f64 / t.cache_prompt as f64),
                    cache_checked: t.checked,
                    cache_kept: t.kept,
                    mean_tool_wait_ms: (t.waits > 0).then(|| t.wait_ms / t.waits as f64),
                })
                .collect(),
        }
    }
}
