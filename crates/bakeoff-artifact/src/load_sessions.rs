//! Agent sessions (`bench run --sessions`, `--sessions-file`): a step's turns by their place in
//! the session, with the context depth each reached, time to first token, the server's
//! prefix-cache hits, and whether the cache survived the tool wait before the turn
//! (docs/metrics.md, "Sessions").

use bakeoff_stats::LatencySummary;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One step's sessions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SessionStep {
    /// `synthetic` (`--sessions`) or `replay` (`--sessions-file`).
    pub workload: String,
    /// Sessions started in the step (sub-sessions not counted).
    pub started: u64,
    /// Of those, the sessions that sent every turn with no failure before the step ended.
    pub completed: u64,
    /// Sub-sessions forked from a parent's history (`--fork`).
    #[serde(default)]
    pub sub_sessions: u64,
    /// Whole-session time of the completed sessions, first send to last reply, tool waits
    /// included.
    pub session_time: LatencySummary,
    /// The tool waits kept between turns (after `--speedup` in a replay).
    pub tool_wait: LatencySummary,
    /// Where the per-request cache figures come from: `llama.cpp timings` (`cache_n`),
    /// `usage.prompt_tokens_details` (`cached_tokens`), or absent when no reply carried either.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_source: Option<String>,
    /// A replay: each turn's prompt tokens as this server counted them against the count in
    /// the recording (where both are known). Equal counts mean the replay sent exactly the
    /// recorded tokens (when the recording came from a server with the same tokenizer and
    /// template).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_tokens: Option<ReplayTokens>,
    /// By turn (1 = a session's first request), in order: the depth curve.
    pub turns: Vec<SessionTurn>,
}

/// A replay's prompt tokens against the recording's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReplayTokens {
    /// Turns whose recorded and counted prompt tokens are both known.
    pub compared: u64,
    /// Of those, the turns counted exactly as recorded.
    pub equal: u64,
    /// The largest difference, tokens.
    pub max_difference: u64,
}

/// The requests of one turn number across the step's sessions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SessionTurn {
    /// 1-based; a sub-session's turns continue its parent's numbering.
    pub turn: u32,
    /// Requests sent at this turn (failed ones included).
    pub sent: u64,
    pub ok: u64,
    /// Mean server-counted prompt tokens (`usage.prompt_tokens`): the context depth.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_prompt_tokens: Option<f64>,
    pub ttft: LatencySummary,
    pub e2e: LatencySummary,
    /// Σ cached prompt tokens / Σ prompt tokens over the turn's replies that reported them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_hit_rate: Option<f64>,
    /// Later turns whose reply reported cached tokens (and whose previous turn's prompt is
    /// known): the ones `cache_kept` is judged on.
    #[serde(default)]
    pub cache_checked: u64,
    /// Of those, the turns where the server served at least 90 % of the previous turn's prompt
    /// from its cache: the cache survived the tool wait.
    #[serde(default)]
    pub cache_kept: u64,
    /// Mean tool wait before this turn, ms (absent on first turns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_tool_wait_ms: Option<f64>,
}

/// Capacity in sessions: the highest level of concurrent sessions whose turns met the SLO.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SessionCapacity {
    /// The objectives as given, e.g. `ttft=2s`.
    pub slo: String,
    /// The most concurrent sessions at which at least 95 % of the turns (all repeats pooled)
    /// met every objective; absent when no level did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<u32>,
    /// Under `--repeat N`: the same finding in each round of the sweep (0: no level passed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_repeat: Vec<u32>,
    /// The rounds' findings as a mean with a 95 % interval (two or more rounds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<bakeoff_stats::MeanInterval>,
    pub statement: String,
}
