//! What the campaign file says of a candidate, once validated (`file.rs` checks it, `variant.rs`
//! expands its ladder): its changes to a fleet seat's launch, its ladder and its bench window.

use std::collections::BTreeMap;

use bakeoff_artifact::campaign::LadderMode;

/// A bench window: seats stopped for a candidate and restored after.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    pub displaces: Vec<String>,
    /// Each displaced seat must show 0 running and 0 waiting this long first.
    pub idle_for_s: u64,
    /// Not idle by then: the candidate is skipped, never forced.
    pub idle_timeout_s: u64,
}

/// One value of a flag: a string, or presence (`true`) / absence (`false`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FlagValue {
    Value(String),
    Present,
    Absent,
}

impl FlagValue {
    /// As written in records: the value, `true` or `false`.
    pub fn as_str(&self) -> &str {
        match self {
            FlagValue::Value(v) => v,
            FlagValue::Present => "true",
            FlagValue::Absent => "false",
        }
    }
}

/// One candidate: a fleet seat's launch with changes, and optionally a ladder and a window.
#[derive(Debug, Clone, PartialEq)]
pub struct CandidateSpec {
    pub name: String,
    pub seat: String,
    /// `flag → value`, in file order.
    pub set_args: Vec<(String, FlagValue)>,
    pub add_args: Vec<String>,
    pub remove_args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub image: Option<String>,
    pub note: Option<String>,
    /// Axes in file order: a flag and the values tried.
    pub ladder: Vec<(String, Vec<FlagValue>)>,
    pub ladder_mode: LadderMode,
    pub window: Option<Window>,
    /// `[candidate.isolate]`: after a variant fails, design and run the probes that isolate
    /// its cause (docs/campaign.md "Isolation that designs itself"); off unless asked.
    pub isolate: Option<Isolate>,
    /// `[candidate.tune]`: once a variant completes, search the flags of `space` for the
    /// configuration that serves best (docs/campaign.md "Tuning"); off unless asked.
    pub tune: Option<Tune>,
}

/// What tuning optimizes.
#[derive(Debug, Clone, PartialEq)]
pub enum Objective {
    /// The peak output tokens/s over closed-loop `concurrency` levels.
    Throughput { concurrency: Vec<u32> },
    /// The highest request rate whose requests meet `slo` (bench run's `--find-capacity`),
    /// searched from `rate`.
    Capacity { slo: String, rate: f64 },
}

/// A candidate's tuning: the objective, the bench steps of each trial, the search space and
/// its budget.
#[derive(Debug, Clone, PartialEq)]
pub struct Tune {
    pub objective: Objective,
    /// Requests per measured step.
    pub requests: u64,
    pub prompt_tokens: u64,
    pub output_tokens: u64,
    /// Trials started at most, the base's included.
    pub max_trials: u32,
    /// A move needs this relative gain over the best so far (noise is not a winner).
    pub min_gain: f64,
    /// The winner against the base, alternately: this many rounds.
    pub repeat: u32,
    /// Flags and the values searched, in file order.
    pub space: Vec<(String, Vec<String>)>,
}

/// The budget of a candidate's isolation.
#[derive(Debug, Clone, PartialEq)]
pub struct Isolate {
    /// Probes started at most (a probe the arithmetic refuses is not started and not counted).
    pub max_starts: u32,
    /// Seconds of probes at most; a probe is not begun past it.
    pub budget_s: u64,
    /// Plan headroom for `--gpu-memory-utilization` probes: the highest fraction allowed.
    pub max_gpu_memory_utilization: f64,
    /// Other builds asked with the registry check (no start) after a failure of engine
    /// support: images for a Docker seat, commands for a process seat.
    pub alternatives: Vec<String>,
}

impl Default for Isolate {
    fn default() -> Self {
        Self {
            max_starts: 6,
            budget_s: 3600,
            max_gpu_memory_utilization: 0.95,
            alternatives: Vec::new(),
        }
    }
}
