//! The load suites' knobs (throughput's sweep, longgen's probes) and where they report
//! progress: plain settings the suite options carry, below the suites that read them.

use std::sync::Arc;

use bakeoff_load::NoProgress;

/// Where the load suites report progress (the binary draws bars; default: nowhere). Suites
/// never print: this hands events to whoever does.
#[derive(Clone, Default)]
pub struct LoadProgress(pub Option<Arc<dyn bakeoff_load::Progress>>);

impl std::fmt::Debug for LoadProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "LoadProgress(on)"
        } else {
            "LoadProgress(off)"
        })
    }
}

impl LoadProgress {
    pub(crate) fn get(&self) -> Arc<dyn bakeoff_load::Progress> {
        match &self.0 {
            Some(p) => p.clone(),
            None => Arc::new(NoProgress),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ThroughputOptions {
    pub concurrency: Vec<u32>,
    pub requests_per_step: u64,
    pub prompt_tokens: u32,
    pub output_tokens: u32,
    pub warmup_requests: u64,
    /// The harness's own ceiling, measured once per run before the load suites (`eval run`
    /// does, unless `--no-calibrate`): steps above half of it are flagged `client-bound`.
    pub harness_ceiling: Option<bakeoff_artifact::HarnessCeiling>,
}

impl Default for ThroughputOptions {
    /// Small enough for a CPU server in a minute; `bakeoff bench run` for the real sweep.
    fn default() -> Self {
        Self {
            concurrency: vec![1, 2, 4],
            requests_per_step: 8,
            prompt_tokens: 64,
            output_tokens: 32,
            warmup_requests: 1,
            harness_ceiling: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct LonggenOptions {
    pub probes: u64,
    pub output_tokens: u32,
    pub prompt_tokens: u32,
    /// Rounds of probes (`--longgen-repeats`); above 1 each figure gets a 95 % interval.
    pub repeats: u32,
}

impl Default for LonggenOptions {
    fn default() -> Self {
        Self {
            probes: 3,
            output_tokens: 1024,
            prompt_tokens: 64,
            repeats: 1,
        }
    }
}
