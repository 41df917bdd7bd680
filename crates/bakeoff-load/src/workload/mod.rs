//! What the requests of a sweep say (docs/metrics.md, "Workloads"): today's synthetic
//! single-message prompts (the default), ShareGPT prompts, multi-turn conversations that
//! exercise a prefix cache on purpose, or a replayed trace. The runner owns the timing; a
//! workload only builds request bodies and says how a step's requests relate.

pub mod conversation;
pub mod prefix_cache;
pub mod sessions;
pub mod sharegpt;
pub mod trace;
mod turns;

use std::sync::Arc;

use bakeoff_wire::{ChatRequest, Message};

pub use conversation::{Conversation, MultiTurn};
pub use sessions::{SessionFile, Sessions};
pub use sharegpt::ShareGpt;
pub use trace::{LineProblem, Trace, TraceEntry, TraceError};
pub use turns::{CacheTally, TurnAccumulator};

use crate::LoadError;
use crate::invalid::NotPositive;
use crate::lengths::LengthSpec;
use crate::pin::PinPolicy;
use crate::prompt;

/// What a request body takes from the load plan: the model, the lengths and their seed, the
/// prefix rule, pinning and the extra fields. The plan lends it (`LoadPlan::request_plan`), so
/// a workload builds requests without knowing the plan that holds it.
#[derive(Debug, Clone, Copy)]
pub struct RequestPlan<'a> {
    pub model: &'a str,
    pub prompt_tokens: &'a LengthSpec,
    pub output_tokens: &'a LengthSpec,
    pub seed: u64,
    pub allow_prefix_cache: bool,
    pub temperature: f32,
    pub pin: &'a PinPolicy,
    pub extra: &'a serde_json::Map<String, serde_json::Value>,
}

#[derive(Debug, Clone, Default)]
pub enum Workload {
    /// One synthetic single-message prompt per request (`--prompt-tokens` words).
    #[default]
    Synthetic,
    /// One single-message prompt per request: a ShareGPT conversation's first human turn,
    /// conversations in file order, cycling.
    ShareGpt(Arc<ShareGpt>),
    /// Closed-loop workers each running whole conversations.
    MultiTurn(MultiTurn),
    /// One open-loop step replaying a trace's arrivals and lengths.
    Trace(TraceReplay),
    /// Closed-loop workers each running whole agent sessions (`--sessions`).
    Sessions(Sessions),
    /// One step replaying recorded sessions token-for-token (`--sessions-file`).
    SessionReplay(SessionReplay),
}

#[derive(Debug, Clone)]
pub struct SessionReplay {
    pub file: Arc<SessionFile>,
    /// Session starts and tool waits are divided by this (2.0: twice as fast).
    pub speedup: f64,
}

#[derive(Debug, Clone)]
pub struct TraceReplay {
    pub trace: Arc<Trace>,
    /// Offsets are divided by this (2.0: twice as fast).
    pub speedup: f64,
}

impl Workload {
    pub fn is_synthetic(&self) -> bool {
        matches!(self, Workload::Synthetic)
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Workload::Synthetic => "synthetic",
            Workload::ShareGpt(_) => "sharegpt",
            Workload::MultiTurn(_) => "multi-turn",
            Workload::Trace(_) => "trace",
            Workload::Sessions(_) => "sessions",
            Workload::SessionReplay(_) => "sessions-file",
        }
    }

    /// One step replaying a file (a trace, recorded sessions) rather than levels.
    pub fn is_replay(&self) -> bool {
        matches!(self, Workload::Trace(_) | Workload::SessionReplay(_))
    }

    pub fn validate(&self) -> Result<(), LoadError> {
        match self {
            Workload::MultiTurn(m) if m.turns == 0 => Err(NotPositive::Turns.into()),
            Workload::Trace(t) if !(t.speedup.is_finite() && t.speedup > 0.0) => {
                Err(NotPositive::TraceSpeedup(t.speedup).into())
            }
            Workload::SessionReplay(r) if !(r.speedup.is_finite() && r.speedup > 0.0) => {
                Err(NotPositive::SessionSpeedup(r.speedup).into())
            }
            Workload::Sessions(s) if s.turns == 0 => Err(NotPositive::SessionTurns.into()),
            Workload::Sessions(s) if s.fork.is_some_and(|f| f.sessions == 0 || f.turns == 0) => {
                Err(NotPositive::Fork.into())
            }
            _ => Ok(()),
        }
    }

    /// As recorded in the plan. File names are the operator's own; file contents never appear.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Workload::Synthetic => serde_json::json!({"kind": "synthetic"}),
            Workload::ShareGpt(s) => serde_json::json!({
                "kind": "sharegpt",
                "sharegpt": sharegpt_json(s),
            }),
            Workload::MultiTurn(m) => serde_json::json!({
                "kind": "multi-turn",
                "turns": m.turns,
                "system_prompt_tokens": m.system_prompt_tokens,
                "sharegpt": m.sharegpt.as_deref().map(sharegpt_json),
                "order": "shared system prompt, then the conversation's unique prefix (unless allow_prefix_cache), then the turns with the model's real replies",
            }),
            Workload::Trace(t) => serde_json::json!({
                "kind": "trace",
                "trace": t.trace.source,
                "requests": t.trace.entries.len(),
                "conversations": t.trace.conversations,
                "speedup": t.speedup,
                "block_tokens": trace::BLOCK_TOKENS,
                "span_s": t.trace.entries.last().map(|e| e.offset.as_secs_f64() / t.speedup),
            }),
            Workload::Sessions(s) => s.to_json(),
            Workload::SessionReplay(r) => serde_json::json!({
                "kind": "sessions-file",
                "file": r.file.source,
                "sessions": r.file.sessions.len(),
                "turns": r.file.turns(),
                "speedup": r.speedup,
                "order": "each turn's recorded history (recorded replies, not this server's), its tools and response format; the recorded output length",
            }),
        }
    }
}

fn sharegpt_json(s: &ShareGpt) -> serde_json::Value {
    serde_json::json!({
        "file": s.source,
        "conversations": s.conversations.len(),
        "skipped_without_human_turn": s.skipped,
    })
}

/// What every request body gets whatever the workload: temperature, output-length pinning,
/// the plan's extra fields.
pub(crate) fn finish_request(plan: &RequestPlan<'_>, req: &mut ChatRequest, max_tokens: u32) {
    req.temperature = Some(plan.temperature);
    plan.pin.apply(req, max_tokens);
    for (k, v) in plan.extra {
        req.extra.insert(k.clone(), v.clone());
    }
}

/// Single-turn ShareGPT: request `i`'s prompt is conversation `i`'s first human turn, after
/// the unique prefix (unless the plan allows prefix caching).
pub(crate) fn sharegpt_prompt(s: &ShareGpt, prefix: Option<&str>, i: u64) -> String {
    let human = s
        .conversation(i)
        .human
        .first()
        .map(String::as_str)
        .unwrap_or_default();
    match prefix {
        Some(p) => format!("{p}\n{human}"),
        None => human.to_string(),
    }
}

/// The step index's marks for the words that tag trace blocks and sessions, so they can never
/// equal a request's unique prefix.
const BLOCK_MARK: usize = 0xB10C;
const SESSION_MARK: usize = 0x5E55;

/// Trace entry `i`'s request. With `hash_ids`: the prompt is the blocks in order, block `h`
/// being [`trace::BLOCK_TOKENS`] words that begin with `h`'s tag, so equal ids are equal
/// token blocks and the trace's prefix sharing is reproduced; cut or extended to the line's
/// length. Without, a session's requests all begin with the session's tag (sharing their
/// leading words), and a line with neither gets a unique prefix like a synthetic request. The
/// tags carry the run's nonce unless the plan allows prefix caching, so an earlier run's cache
/// cannot serve this one.
pub(crate) fn trace_request(
    plan: &RequestPlan<'_>,
    e: &TraceEntry,
    run_nonce: u64,
    step: usize,
    i: u64,
) -> ChatRequest {
    let nonce = if plan.allow_prefix_cache {
        0
    } else {
        run_nonce
    };
    let text = if !e.hash_ids.is_empty() {
        let mut words: Vec<String> =
            Vec::with_capacity(e.prompt_tokens.min(crate::lengths::MAX_TOKENS) as usize);
        for h in &e.hash_ids {
            if words.len() >= e.prompt_tokens as usize {
                break;
            }
            let block = prompt::build(
                trace::BLOCK_TOKENS,
                Some(&prompt::unique_prefix(nonce, BLOCK_MARK, *h)),
            );
            words.extend(block.split(' ').map(str::to_string));
        }
        let short = (e.prompt_tokens as usize).saturating_sub(words.len());
        if short > 0 {
            words.extend(
                prompt::build(short as u32, None)
                    .split(' ')
                    .map(str::to_string),
            );
        }
        words.truncate(e.prompt_tokens as usize);
        words.join(" ")
    } else if let Some(c) = e.conversation {
        prompt::build(
            e.prompt_tokens,
            Some(&prompt::unique_prefix(nonce, SESSION_MARK, c)),
        )
    } else {
        let prefix = (!plan.allow_prefix_cache).then(|| prompt::unique_prefix(run_nonce, step, i));
        prompt::build(e.prompt_tokens, prefix.as_deref())
    };
    let mut req = ChatRequest::new(plan.model, vec![Message::user(text)], e.output_tokens, true);
    finish_request(plan, &mut req, e.output_tokens);
    req
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::plan::LoadPlan;

    fn entry(hash_ids: Vec<u64>, prompt_tokens: u32) -> TraceEntry {
        TraceEntry {
            offset: std::time::Duration::ZERO,
            prompt_tokens,
            output_tokens: 4,
            conversation: None,
            hash_ids,
            line: 1,
        }
    }

    fn text(r: &ChatRequest) -> String {
        r.messages[0].content.clone().unwrap()
    }

    #[test]
    fn equal_hash_ids_give_equal_blocks() {
        let plan = LoadPlan::new("m");
        let a = text(&trace_request(
            &plan.request_plan(),
            &entry(vec![7, 8], 1024),
            42,
            1,
            0,
        ));
        let b = text(&trace_request(
            &plan.request_plan(),
            &entry(vec![7, 9], 1000),
            42,
            1,
            1,
        ));
        let (wa, wb): (Vec<&str>, Vec<&str>) = (a.split(' ').collect(), b.split(' ').collect());
        assert_eq!(wa.len(), 1024);
        assert_eq!(wb.len(), 1000);
        // The first 512-word block is shared, the second is not.
        assert_eq!(wa[..512], wb[..512]);
        assert_ne!(wa[512..520], wb[512..520]);
        // Another run: another block, so an earlier run's cache cannot serve it.
        let c = text(&trace_request(
            &plan.request_plan(),
            &entry(vec![7], 512),
            43,
            1,
            0,
        ));
        assert_ne!(c.split(' ').collect::<Vec<_>>(), wa[..512]);
        // Longer than its blocks: filled out to its length.
        let d = text(&trace_request(
            &plan.request_plan(),
            &entry(vec![7], 600),
            42,
            1,
            0,
        ));
        assert_eq!(d.split(' ').count(), 600);
    }

    #[test]
    fn sessions_share_their_start_and_lone_lines_are_unique() {
        let plan = LoadPlan::new("m");
        let mut e = entry(vec![], 40);
        e.conversation = Some(3);
        let a = text(&trace_request(&plan.request_plan(), &e, 1, 1, 0));
        e.prompt_tokens = 60;
        let b = text(&trace_request(&plan.request_plan(), &e, 1, 1, 1));
        assert!(b.starts_with(&a));
        let x = text(&trace_request(
            &plan.request_plan(),
            &entry(vec![], 40),
            1,
            1,
            0,
        ));
        let y = text(&trace_request(
            &plan.request_plan(),
            &entry(vec![], 40),
            1,
            1,
            1,
        ));
        assert_ne!(x.split(' ').next(), y.split(' ').next());
    }
}
