//! Multi-turn conversations (`bench run --multi-turn TURNS`): each turn resends the whole
//! conversation so far plus a new user turn, so a prefix cache is exercised on purpose.
//!
//! The messages of a conversation, in this order (docs/metrics.md, "Workloads"):
//!
//! 1. the system prompt of `--system-prompt-tokens N`, the same words in every conversation of
//!    the run, so it is shared on purpose (absent when N is 0);
//! 2. the first user turn, which begins with the conversation's unique prefix unless
//!    `--allow-prefix-cache` (so conversations share nothing *after* the system prompt, and,
//!    without one, nothing from their very first token);
//! 3. the model's real reply to it (the streamed text), then the next user turn, and so on.
//!
//! User turns are synthetic (`--prompt-tokens` words each) or a ShareGPT conversation's human
//! turns in order.

use std::sync::Arc;

use bakeoff_wire::{ChatRequest, Message};

use super::{RequestPlan, ShareGpt};
use crate::prng::SplitMix64;
use crate::prompt;

#[derive(Debug, Clone, PartialEq)]
pub struct MultiTurn {
    /// Turns per conversation (at most: a ShareGPT conversation with fewer human turns ends
    /// sooner).
    pub turns: u32,
    /// Words of the shared system prompt (0: none).
    pub system_prompt_tokens: u32,
    /// User turns from ShareGPT instead of synthetic words.
    pub sharegpt: Option<Arc<ShareGpt>>,
}

/// One conversation in progress.
#[derive(Debug, Clone)]
pub struct Conversation {
    /// Numbered in its step from 0.
    pub id: u64,
    messages: Vec<Message>,
    /// Turns sent so far.
    sent: u32,
    turns: u32,
    step: usize,
    run_nonce: u64,
}

impl MultiTurn {
    /// Conversation `id` of step `step`, before its first turn.
    pub fn start(&self, run_nonce: u64, step: usize, id: u64) -> Conversation {
        let turns = match &self.sharegpt {
            Some(s) => self
                .turns
                .min(u32::try_from(s.conversation(id).human.len()).unwrap_or(u32::MAX)),
            None => self.turns,
        };
        let mut messages = Vec::with_capacity(turns as usize * 2 + 1);
        if self.system_prompt_tokens > 0 {
            messages.push(Message::system(prompt::build(
                self.system_prompt_tokens,
                None,
            )));
        }
        Conversation {
            id,
            messages,
            sent: 0,
            turns,
            step,
            run_nonce,
        }
    }
}

impl Conversation {
    /// The next turn's request, its requested output tokens and its turn number (1-based);
    /// `None` once every turn was sent.
    pub fn next_request(
        &mut self,
        plan: &RequestPlan<'_>,
        mt: &MultiTurn,
    ) -> Option<(ChatRequest, u32, u32)> {
        if self.sent >= self.turns {
            return None;
        }
        let turn = self.sent;
        // The request's index in the step, as the length distributions see it.
        let i = self.id * u64::from(mt.turns.max(1)) + u64::from(turn);
        let mut rng =
            SplitMix64::new(plan.seed ^ ((self.step as u64) << 48) ^ i.wrapping_mul(0x9E37_79B9));
        let ptoks = plan.prompt_tokens.sample(i, &mut rng);
        let otoks = plan.output_tokens.sample(i, &mut rng);
        let prefix = (turn == 0 && !plan.allow_prefix_cache)
            .then(|| prompt::unique_prefix(self.run_nonce, self.step, self.id));
        let text = match &mt.sharegpt {
            Some(s) => {
                let human = s
                    .conversation(self.id)
                    .human
                    .get(turn as usize)
                    .map(String::as_str)
                    .unwrap_or_default();
                match prefix {
                    Some(p) => format!("{p}\n{human}"),
                    None => human.to_string(),
                }
            }
            None => prompt::build(ptoks, prefix.as_deref()),
        };
        self.messages.push(Message::user(text));
        self.sent += 1;
        let mut req = ChatRequest::new(plan.model, self.messages.clone(), otoks, true);
        super::finish_request(plan, &mut req, otoks);
        Some((req, otoks, turn + 1))
    }

    /// Turns this conversation sends in all.
    pub fn turns(&self) -> u32 {
        self.turns
    }

    /// The model's real reply to the last turn, resent with every later turn.
    pub fn record_reply(&mut self, text: String) {
        self.messages.push(Message::assistant(text));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::lengths::LengthSpec;
    use crate::plan::LoadPlan;

    fn contents(r: &ChatRequest) -> Vec<(String, String)> {
        r.messages
            .iter()
            .map(|m| (m.role.clone(), m.content.clone().unwrap_or_default()))
            .collect()
    }

    #[test]
    fn turns_resend_the_history_with_the_real_replies_in_order() {
        let mut plan = LoadPlan::new("m");
        plan.prompt_tokens = LengthSpec::Fixed(6);
        let mt = MultiTurn {
            turns: 2,
            system_prompt_tokens: 4,
            sharegpt: None,
        };
        let mut a = mt.start(9, 1, 0);
        let mut b = mt.start(9, 1, 1);
        let (r1, _, t1) = a.next_request(&plan.request_plan(), &mt).unwrap();
        let (rb, _, _) = b.next_request(&plan.request_plan(), &mt).unwrap();
        assert_eq!(t1, 1);
        let (m1, mb) = (contents(&r1), contents(&rb));
        // The shared system prompt first, the same in both conversations; their first user
        // turns differ from the first word (the unique prefix).
        assert_eq!(m1[0].0, "system");
        assert_eq!(m1[0], mb[0]);
        assert_ne!(m1[1].1.split(' ').next(), mb[1].1.split(' ').next());
        a.record_reply("REAL REPLY".into());
        let (r2, _, t2) = a.next_request(&plan.request_plan(), &mt).unwrap();
        assert_eq!(t2, 2);
        let m2 = contents(&r2);
        assert_eq!(m2.len(), 4);
        assert_eq!(m2[..2], m1[..]);
        assert_eq!(m2[2], ("assistant".into(), "REAL REPLY".into()));
        assert_eq!(m2[3].0, "user");
        assert!(a.next_request(&plan.request_plan(), &mt).is_none());
        // Sharing allowed: no unique prefix, so both conversations start alike.
        plan.allow_prefix_cache = true;
        let (x, _, _) = mt
            .start(9, 1, 0)
            .next_request(&plan.request_plan(), &mt)
            .unwrap();
        let (y, _, _) = mt
            .start(9, 1, 1)
            .next_request(&plan.request_plan(), &mt)
            .unwrap();
        assert_eq!(contents(&x), contents(&y));
    }
}
