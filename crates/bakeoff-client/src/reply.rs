//! A reply assembled from stream events (or one non-streamed body), with its timing.

use std::time::Duration;

use bakeoff_wire::{
    FunctionCall, NonStreamResponse, StreamChunk, Timings, TokenLogprob, ToolCall, Usage,
};

use crate::RequestError;

/// One stream event that carried text, stamped with the arrival of the network chunk that
/// completed it (time since the request was sent).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChunkStamp {
    pub at: Duration,
    pub content_chars: u32,
    pub reasoning_chars: u32,
    pub tool_chars: u32,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reply {
    pub status: Option<u16>,
    pub content: String,
    pub reasoning: String,
    pub tool_calls: Vec<ToolCall>,
    pub finish_reason: Option<String>,
    pub usage: Option<Usage>,
    pub timings: Option<Timings>,
    /// First body byte after the request was sent.
    pub first_byte: Option<Duration>,
    /// First event carrying content or reasoning (TTFT, docs/metrics.md).
    pub ttft: Option<Duration>,
    /// First event carrying visible content (TTFOT).
    pub ttfot: Option<Duration>,
    /// Request sent → last byte (or the failure).
    pub e2e: Duration,
    /// Events that carried text, in order: ITL is computed from these.
    pub chunks: Vec<ChunkStamp>,
    /// Every data event seen, text-bearing or not.
    pub events: u64,
    pub saw_done: bool,
    /// Each generated token with its `top_logprobs` (non-streamed replies to a request that
    /// asked for `logprobs`; empty otherwise).
    pub logprobs: Vec<TokenLogprob>,
}

/// More parallel tool calls than any real reply carries: a server-sent `index` beyond this is
/// a broken (or hostile) stream, not a reason to allocate millions of slots.
pub const MAX_TOOL_CALLS: usize = 128;

impl Reply {
    /// Fold one stream chunk in. Only choice 0 is read: bakeoff never asks for `n > 1`.
    pub(crate) fn apply_chunk(
        &mut self,
        chunk: StreamChunk,
        at: Duration,
    ) -> Result<(), RequestError> {
        self.events += 1;
        if let Some(u) = chunk.usage {
            self.usage = Some(u);
        }
        if let Some(t) = chunk.timings {
            self.timings = Some(t);
        }
        let Some(choice) = chunk.choices.into_iter().find(|c| c.index == 0) else {
            return Ok(());
        };
        let d = choice.delta;
        let mut stamp = ChunkStamp {
            at,
            content_chars: 0,
            reasoning_chars: 0,
            tool_chars: 0,
        };
        if let Some(c) = d.content.as_deref().filter(|c| !c.is_empty()) {
            stamp.content_chars = char_count(c);
            self.content.push_str(c);
        }
        // vLLM renamed `reasoning_content` to `reasoning`; a server sending both would be sending
        // the same text twice, so take one per chunk.
        if let Some(r) = d
            .reasoning_content
            .as_deref()
            .filter(|r| !r.is_empty())
            .or(d.reasoning.as_deref().filter(|r| !r.is_empty()))
        {
            stamp.reasoning_chars = char_count(r);
            self.reasoning.push_str(r);
        }
        for tc in d.tool_calls.unwrap_or_default() {
            let idx = tc
                .index
                .unwrap_or(self.tool_calls.len().saturating_sub(1) as u32)
                as usize;
            if idx >= MAX_TOOL_CALLS {
                return Err(RequestError::Decode {
                    message: format!(
                        "tool call index {idx} is past the {MAX_TOOL_CALLS} a reply can carry"
                    ),
                    snippet: String::new(),
                });
            }
            while self.tool_calls.len() <= idx {
                self.tool_calls.push(ToolCall {
                    id: None,
                    kind: "function".into(),
                    function: FunctionCall {
                        name: String::new(),
                        arguments: String::new(),
                    },
                });
            }
            let slot = &mut self.tool_calls[idx];
            if let Some(id) = tc.id {
                slot.id = Some(id);
            }
            if let Some(f) = tc.function {
                if let Some(n) = f.name {
                    stamp.tool_chars += char_count(&n);
                    slot.function.name.push_str(&n);
                }
                if let Some(a) = f.arguments {
                    stamp.tool_chars += char_count(&a);
                    slot.function.arguments.push_str(&a);
                }
            }
        }
        if let Some(f) = choice.finish_reason {
            self.finish_reason = Some(f);
        }
        let has_text = stamp.content_chars + stamp.reasoning_chars + stamp.tool_chars > 0;
        if has_text {
            if self.ttft.is_none() && (stamp.content_chars > 0 || stamp.reasoning_chars > 0) {
                self.ttft = Some(at);
            }
            if self.ttfot.is_none() && stamp.content_chars > 0 {
                self.ttfot = Some(at);
            }
            self.chunks.push(stamp);
        }
        Ok(())
    }

    /// End of the reply: slots opened only because a server skipped an `index` (no id, no
    /// name, no arguments) are not calls.
    pub(crate) fn settle(&mut self) {
        self.tool_calls.retain(|c| {
            c.id.is_some() || !c.function.name.is_empty() || !c.function.arguments.is_empty()
        });
    }

    pub(crate) fn apply_body(&mut self, body: NonStreamResponse) {
        self.usage = body.usage;
        self.timings = body.timings;
        if let Some(choice) = body.choices.into_iter().find(|c| c.index == 0) {
            self.finish_reason = choice.finish_reason;
            self.logprobs = choice.logprobs.and_then(|l| l.content).unwrap_or_default();
            if let Some(m) = choice.message {
                self.content = m.content.unwrap_or_default();
                self.reasoning = m.reasoning_content.or(m.reasoning).unwrap_or_default();
                self.tool_calls = m.tool_calls.unwrap_or_default();
            }
        }
    }

    /// Completion tokens as the server counted them.
    pub fn completion_tokens(&self) -> Option<u64> {
        self.usage.as_ref().and_then(|u| u.completion_tokens)
    }

    pub fn prompt_tokens(&self) -> Option<u64> {
        self.usage.as_ref().and_then(|u| u.prompt_tokens)
    }

    /// Any visible or reasoning text at all.
    pub fn has_text(&self) -> bool {
        !self.content.trim().is_empty()
            || !self.reasoning.trim().is_empty()
            || !self.tool_calls.is_empty()
    }
}

fn char_count(s: &str) -> u32 {
    u32::try_from(s.chars().count()).unwrap_or(u32::MAX)
}

/// A request and what came back: the reply as far as it got, and the error that ended it early.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    pub reply: Reply,
    pub error: Option<RequestError>,
}

impl Exchange {
    pub fn ok(&self) -> bool {
        self.error.is_none()
    }
}
