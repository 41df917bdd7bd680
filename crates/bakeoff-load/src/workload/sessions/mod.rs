//! Agent sessions (docs/metrics.md, "Sessions"): load shaped as agents make it.
//!
//! A synthetic session (`bench run --sessions TURNS`) is tens of turns. Each turn resends the
//! history so far and grows it by what an agent's loop adds: the model's real reply, the tool
//! calls the model made (when it is offered a tool and calls it), and a synthetic tool result
//! of `--tool-result-tokens`; between turns the agent waits on its tool (`--tool-wait`), and
//! whether the server's prefix cache survives that wait is what the per-turn figures show.
//! With `--fork N`, after the middle turn a session forks N sub-sessions that each run
//! `--fork-turns` turns from the parent's history at once, then the parent goes on.
//!
//! The messages of a session, in order:
//!
//! 1. the system prompt of `--system-prompt-tokens N`, the same in every session (absent at 0);
//! 2. the task: a user turn of `--prompt-tokens` words that begins with the session's unique
//!    prefix unless `--allow-prefix-cache`, so sessions share nothing after the system prompt;
//! 3. the model's reply (its text, and its tool calls when it made any), then the tool's result:
//!    one `tool` message per call, or, when the model called none, a user turn carrying the
//!    result, so the history grows by the same tokens either way; and so on.
//!
//! A replay (`--sessions-file`) sends recorded turns instead ([`file`]).

pub mod convert;
pub mod file;
mod tally;
pub mod wait;

use std::time::Duration;

use bakeoff_wire::{ChatRequest, Message, Tool, ToolCall, ToolFunction};

pub use file::{SessionFile, SessionFileError, SessionLineProblem};
pub use tally::SessionTally;
pub use wait::{WaitInvalid, WaitSpec};

use super::RequestPlan;
use crate::lengths::LengthSpec;
use crate::prng::SplitMix64;
use crate::prompt;

/// The step index's mark for tool results, so their words never equal a unique prefix.
const RESULT_MARK: usize = 0x7001;

#[derive(Debug, Clone, PartialEq)]
pub struct Sessions {
    /// Turns per session (sub-sessions' turns not counted).
    pub turns: u32,
    /// Words of the shared system prompt (0: none).
    pub system_prompt_tokens: u32,
    /// The tool result each later turn adds.
    pub tool_result_tokens: LengthSpec,
    /// The wait on the tool before each later turn.
    pub tool_wait: WaitSpec,
    pub fork: Option<Fork>,
    /// Offer the model one tool (`run_command`), so the tool calls it makes join the history.
    pub tools: bool,
}

/// Sub-sessions forked from a parent's history after its middle turn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fork {
    pub sessions: u32,
    pub turns: u32,
}

impl Sessions {
    /// The parent's turn after which sub-sessions fork: the middle one.
    pub fn fork_after(&self) -> u32 {
        self.turns.div_ceil(2)
    }

    /// Every request one session sends, its sub-sessions' included.
    pub fn requests_per_session(&self) -> u64 {
        let subs = self
            .fork
            .map_or(0, |f| u64::from(f.sessions) * u64::from(f.turns));
        u64::from(self.turns) + subs
    }

    /// Session `id` of step `step`, before its first turn.
    pub fn start(&self, run_nonce: u64, step: usize, id: u64) -> Session {
        let mut messages = Vec::with_capacity(self.turns as usize * 3 + 1);
        if self.system_prompt_tokens > 0 {
            messages.push(Message::system(prompt::build(
                self.system_prompt_tokens,
                None,
            )));
        }
        Session {
            id,
            sub: None,
            messages,
            next_turn: 1,
            last_turn: self.turns,
            step,
            run_nonce,
            calls: Vec::new(),
        }
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "kind": "sessions",
            "turns": self.turns,
            "system_prompt_tokens": self.system_prompt_tokens,
            "tool_result_tokens": self.tool_result_tokens.describe(),
            "tool_wait": self.tool_wait.describe(),
            "fork": self.fork.map(|f| serde_json::json!({
                "sub_sessions": f.sessions,
                "turns": f.turns,
                "after_turn": self.fork_after(),
            })),
            "tools": self.tools,
            "order": "shared system prompt, the task with the session's unique prefix (unless allow_prefix_cache), then each reply with its tool calls and the tool's result",
        })
    }
}

/// The one tool a session offers: a command runner, as coding agents have.
fn offered_tool() -> Tool {
    Tool {
        kind: "function".into(),
        function: ToolFunction {
            name: "run_command".into(),
            description: Some("Run a shell command in the workspace and return its output.".into()),
            parameters: serde_json::json!({
                "type": "object",
                "properties": {"command": {"type": "string"}},
                "required": ["command"],
            }),
        },
    }
}

/// One session (or sub-session) in progress.
#[derive(Debug, Clone)]
pub struct Session {
    /// Numbered in its step from 0; a sub-session keeps its parent's.
    pub id: u64,
    /// 1-based for a sub-session.
    pub sub: Option<u32>,
    messages: Vec<Message>,
    /// The turn number the next request is.
    next_turn: u32,
    /// The last turn this session sends.
    last_turn: u32,
    step: usize,
    run_nonce: u64,
    /// The ids of the tool calls in the last reply, answered by the next turn's tool results.
    calls: Vec<String>,
}

impl Session {
    /// The turn number the next request is, or `None` once every turn was sent.
    pub fn next_turn(&self) -> Option<u32> {
        (self.next_turn <= self.last_turn).then_some(self.next_turn)
    }

    /// Send turns up to `turn` (inclusive): a parent stops at its fork point, then, once its
    /// sub-sessions are done, goes on to its last turn.
    pub fn resume_until(&mut self, turn: u32) {
        self.last_turn = turn;
    }

    /// Sub-session `k` (1-based) forked from this session's history: its first turn is a task
    /// of its own in place of the tool result, then `turns` turns in all.
    pub fn fork(&self, k: u32, turns: u32) -> Session {
        Session {
            id: self.id,
            sub: Some(k),
            messages: self.messages.clone(),
            next_turn: self.next_turn,
            last_turn: self.next_turn + turns.saturating_sub(1),
            step: self.step,
            run_nonce: self.run_nonce,
            calls: self.calls.clone(),
        }
    }

    /// The next turn's request, its requested output tokens and its turn number; `None` once
    /// every turn was sent.
    pub fn next_request(
        &mut self,
        plan: &RequestPlan<'_>,
        cfg: &Sessions,
    ) -> Option<(ChatRequest, u32, u32)> {
        let turn = self.next_turn()?;
        // The request's index as the length distributions see it: session, sub-session, turn.
        let i = self.id * 1_000_003 + u64::from(self.sub.unwrap_or(0)) * 1_009 + u64::from(turn);
        let mut rng =
            SplitMix64::new(plan.seed ^ ((self.step as u64) << 48) ^ i.wrapping_mul(0x9E37_79B9));
        let otoks = plan.output_tokens.sample(i, &mut rng);
        if turn == 1 {
            let ptoks = plan.prompt_tokens.sample(i, &mut rng);
            let prefix = (!plan.allow_prefix_cache)
                .then(|| prompt::unique_prefix(self.run_nonce, self.step, self.id));
            self.messages
                .push(Message::user(prompt::build(ptoks, prefix.as_deref())));
        } else {
            let rtoks = cfg.tool_result_tokens.sample(i, &mut rng);
            self.push_tool_result(rtoks, i);
        }
        self.next_turn += 1;
        let mut req = ChatRequest::new(plan.model, self.messages.clone(), otoks, true);
        super::finish_request(plan, &mut req, otoks);
        if cfg.tools {
            req.tools = Some(vec![offered_tool()]);
            req.tool_choice = Some(serde_json::json!("auto"));
        }
        Some((req, otoks, turn))
    }

    /// The wait before the next turn, drawn from the session's own seeded stream so a run with
    /// the same `--seed` waits the same.
    pub fn tool_wait(&self, plan: &RequestPlan<'_>, cfg: &Sessions) -> Duration {
        let i = self.id * 1_000_003
            + u64::from(self.sub.unwrap_or(0)) * 1_009
            + u64::from(self.next_turn);
        let mut rng = SplitMix64::new(
            plan.seed ^ 0x7001_7001 ^ ((self.step as u64) << 48) ^ i.wrapping_mul(0x9E37_79B9),
        );
        cfg.tool_wait.sample(&mut rng)
    }

    /// The tool's result for the last reply: a `tool` message per call it made (the words
    /// shared out among them), or a user turn carrying the result when it made none. Its
    /// words are the request's own (`i`), so sub-sessions part from their parent here.
    fn push_tool_result(&mut self, tokens: u32, i: u64) {
        let tag = prompt::unique_prefix(self.run_nonce, RESULT_MARK, i);
        if self.calls.is_empty() {
            self.messages
                .push(Message::user(prompt::build(tokens, Some(&tag))));
            return;
        }
        let each = (tokens / self.calls.len() as u32).max(1);
        for id in std::mem::take(&mut self.calls) {
            self.messages.push(Message {
                role: "tool".into(),
                content: Some(prompt::build(each, Some(&tag))),
                tool_call_id: Some(id),
                ..Message::default()
            });
        }
    }

    /// The model's real reply to the last turn, resent with every later turn: its text and the
    /// tool calls it made (a call without an id gets one, as the next turn must answer it).
    pub fn record_reply(&mut self, content: String, tool_calls: Vec<ToolCall>) {
        let turn = self.next_turn.saturating_sub(1);
        let calls: Vec<ToolCall> = tool_calls
            .into_iter()
            .enumerate()
            .map(|(k, mut c)| {
                if c.id.as_deref().is_none_or(str::is_empty) {
                    c.id = Some(format!("call_{turn}_{k}"));
                }
                c
            })
            .collect();
        self.calls = calls.iter().filter_map(|c| c.id.clone()).collect();
        self.messages.push(Message {
            role: "assistant".into(),
            content: (!content.is_empty() || calls.is_empty()).then_some(content),
            tool_calls: (!calls.is_empty()).then_some(calls),
            ..Message::default()
        });
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
