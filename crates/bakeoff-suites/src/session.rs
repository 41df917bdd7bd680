//! Session suite (`--suite session`): multi-turn conversations (data/sessions.json) of six
//! turns or more. The model's own replies (content only, never reasoning) are fed back as the
//! history. Every turn is an item; it passes when the conversation's system rule holds on it
//! and its own exact checks pass (a fact given early asked later, a correction that must win).

use bakeoff_artifact::{ItemRecord, Outcome, SuiteResult};
use bakeoff_wire::{ChatRequest, Message};
use serde::{Deserialize, Serialize};

use crate::instrument::{self, Tally};
use crate::outcome::{Check, classify, record};
use crate::suite_run::{Recorder, SuiteContext};

const DATA: &str = include_str!("../data/sessions.json");

/// Short answers; a rambling reply is `truncated`, not waited on.
pub const MAX_TOKENS: u32 = 32;

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "kebab-case")]
pub enum TurnCheck {
    /// Case-insensitive, whitespace-collapsed, and whole-word: the value must not be part of a
    /// longer word or number ("4" is not found in "14", "2024" or "4.5").
    Contains(String),
    NotContains(String),
    /// The reply, trailing punctuation and markup removed, ends with the word (any case).
    EndsWith(String),
    /// The reply, leading markup removed, starts with the word (any case).
    StartsWith(String),
    /// No lower-case letter, and at least one letter or digit: a reply that is only a number
    /// ("4") keeps a capitals-only rule.
    Uppercase(String),
}

#[derive(Debug, Clone, Deserialize)]
pub struct Turn {
    pub user: String,
    /// `rule`, `recall` or `correction`: the statistics family of this turn.
    pub kind: String,
    pub checks: Vec<TurnCheck>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Conversation {
    pub id: String,
    pub system: String,
    pub rule: Option<TurnCheck>,
    pub turns: Vec<Turn>,
}

#[derive(Debug, Deserialize)]
struct SessionData {
    conversations: Vec<Conversation>,
}

#[derive(Debug, thiserror::Error)]
#[error("shipped session conversations are invalid: {0}")]
pub struct DataError(String);

/// A turn's `expected`: the conversation's rule, the turn's own checks, and its family.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnExpected {
    pub rule: Option<TurnCheck>,
    pub checks: Vec<TurnCheck>,
    pub family: String,
}

impl TurnExpected {
    pub fn of(conv: &Conversation, turn: &Turn) -> Self {
        Self {
            rule: conv.rule.clone(),
            checks: turn.checks.clone(),
            family: turn.kind.clone(),
        }
    }
}

/// A turn's `extra`: its family and place, and what a sent turn carried (bakeoff-artifact's
/// shapes, where the report reads them).
pub use bakeoff_artifact::{TurnExtra, TurnSent};

pub fn conversations() -> Result<Vec<Conversation>, DataError> {
    let d: SessionData = serde_json::from_str(DATA).map_err(|e| DataError(e.to_string()))?;
    Ok(d.conversations)
}

fn edge_trim(s: &str) -> &str {
    s.trim_matches(|c: char| !c.is_alphanumeric())
}

impl TurnCheck {
    pub fn holds(&self, reply: &str) -> bool {
        let low = reply.to_lowercase();
        match self {
            TurnCheck::Contains(v) => contains_word(&collapse(&low), &collapse(&v.to_lowercase())),
            TurnCheck::NotContains(v) => {
                !contains_word(&collapse(&low), &collapse(&v.to_lowercase()))
            }
            TurnCheck::EndsWith(v) => edge_trim(&low).ends_with(&v.to_lowercase()),
            TurnCheck::StartsWith(v) => edge_trim(&low).starts_with(&v.to_lowercase()),
            TurnCheck::Uppercase(_) => {
                reply.chars().any(char::is_alphanumeric) && !reply.chars().any(char::is_lowercase)
            }
        }
    }

    pub fn describe(&self) -> String {
        match self {
            TurnCheck::Contains(v) => format!("contains {v:?}"),
            TurnCheck::NotContains(v) => format!("does not contain {v:?}"),
            TurnCheck::EndsWith(v) => format!("ends with {v:?}"),
            TurnCheck::StartsWith(v) => format!("starts with {v:?}"),
            TurnCheck::Uppercase(_) => "is in capital letters".into(),
        }
    }
}

/// `needle` occurs in `hay` with a word boundary on each side: the neighbouring characters are
/// not alphanumeric, and a digit next to a decimal point or comma that is followed or preceded by
/// another digit also counts as part of the number ("4" is not in "4.5" or "1,400").
fn contains_word(hay: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return true;
    }
    let chars: Vec<char> = hay.chars().collect();
    let want: Vec<char> = needle.chars().collect();
    let n = want.len();
    if chars.len() < n {
        return false;
    }
    let part_of_word = |i: Option<usize>, step_out: isize| -> bool {
        let Some(i) = i else { return false };
        let Some(&c) = chars.get(i) else { return false };
        if c.is_alphanumeric() {
            return true;
        }
        // "4.5", "1,400": a separator between digits continues the number.
        if matches!(c, '.' | ',') {
            let beyond = i as isize + step_out;
            return beyond >= 0
                && chars
                    .get(beyond as usize)
                    .is_some_and(|d| d.is_ascii_digit());
        }
        false
    };
    (0..=chars.len() - n).any(|start| {
        chars[start..start + n] == want[..]
            && !(want[0].is_alphanumeric() && part_of_word(start.checked_sub(1), -1))
            && !(want[n - 1].is_alphanumeric() && part_of_word(Some(start + n), 1))
    })
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// All checks of a turn (the rule first) against the reply.
pub fn check_turn(conv: &Conversation, turn: &Turn, reply: &str) -> Check {
    let mut failed = Vec::new();
    let mut all: Vec<(&str, &TurnCheck)> = Vec::new();
    if let Some(r) = &conv.rule {
        all.push(("system rule", r));
    }
    all.extend(turn.checks.iter().map(|c| ("check", c)));
    for (what, c) in &all {
        if !c.holds(reply) {
            failed.push(format!(
                "{what} failed: reply {}",
                c.describe().replacen("contains", "should contain", 1)
            ));
        }
    }
    Check {
        passed: failed.is_empty(),
        detail: if failed.is_empty() {
            format!("{} check(s) hold", all.len())
        } else {
            failed.join("; ")
        },
    }
}

pub async fn run(ctx: &SuiteContext<'_>, rec: &mut Recorder<'_>) -> SuiteResult {
    let Ok(convs) = conversations() else {
        return rec.result(0, Vec::new());
    };
    let convs: Vec<Conversation> = convs
        .into_iter()
        .take(ctx.options.limit.unwrap_or(usize::MAX))
        .collect();
    let planned: usize = convs.iter().map(|c| c.turns.len()).sum();
    let mut done: Vec<ItemRecord> = Vec::with_capacity(planned);
    let mut tallies = Vec::new();
    'convs: for conv in &convs {
        let mut history = vec![Message::system(&conv.system)];
        let mut broken: Option<String> = None;
        for (i, turn) in conv.turns.iter().enumerate() {
            let id = format!("{}/t{}", conv.id, i + 1);
            history.push(Message::user(&turn.user));
            let mut req = ChatRequest::new(&ctx.model, history.clone(), MAX_TOKENS, true);
            ctx.options
                .thinking
                .apply_scored(ctx.facts.engine, &mut req);
            let expected = TurnExpected::of(conv, turn);
            let mut extra = TurnExtra {
                family: turn.kind.clone(),
                turn: i + 1,
                sent: None,
            };
            let item = if let Some(why) = &broken {
                let mut it = record(
                    &id,
                    &req,
                    &empty_exchange(),
                    Outcome::Skipped,
                    Some(why.clone()),
                    serde_json::Value::Null,
                );
                rec.writes().expected(&mut it, &expected);
                rec.writes().extra(&mut it, &extra);
                it
            } else {
                let Some(ex) = rec.guard(ctx.client.chat_stream(&req)).await else {
                    break 'convs;
                };
                let (outcome, detail) = classify(&ex, |a| check_turn(conv, turn, a));
                if outcome.is_request_failure() {
                    broken = Some(format!(
                        "not sent: turn {} of this conversation failed",
                        i + 1
                    ));
                }
                // The model's own visible reply becomes the history (never its reasoning).
                history.push(Message::assistant(ex.reply.content.clone()));
                let mut it = record(&id, &req, &ex, outcome, detail, serde_json::Value::Null);
                extra.sent = Some(TurnSent {
                    history_messages: req.messages.len(),
                    reasoning_tokens: crate::tool::reasoning_tokens(&ex),
                });
                rec.writes().expected(&mut it, &expected);
                rec.writes().extra(&mut it, &extra);
                it
            };
            tallies.push(Tally {
                id: id.clone(),
                family: turn.kind.clone(),
                outcome: item.outcome,
                chance: 0.0,
                extraction_failed: false,
            });
            let go_on = rec.record(&item).await;
            done.push(item);
            if !go_on {
                break 'convs;
            }
        }
    }
    let mut result = rec.result(planned, done);
    let mut details = instrument::apply("session", &mut result.summary, &tallies);
    details.reasoning = Some(crate::summary::reasoning_totals(&result.items));
    crate::summary::write_details(&mut result.summary, "session", &details);
    result
}

fn empty_exchange() -> bakeoff_client::Exchange {
    bakeoff_client::Exchange {
        reply: bakeoff_client::Reply::default(),
        error: None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn shipped_conversations_are_long_enough_and_cover_each_kind() {
        let cs = conversations().unwrap();
        assert!(cs.len() >= 3);
        for c in &cs {
            assert!(c.turns.len() >= 6, "{}", c.id);
            assert!(c.rule.is_some(), "{}", c.id);
            assert!(c.turns.iter().any(|t| t.kind == "correction"), "{}", c.id);
            assert!(c.turns.iter().any(|t| t.kind == "recall"), "{}", c.id);
        }
    }

    /// The turn's shapes write what the suite's former `json!` writer wrote: a sent turn and a
    /// skipped one (whose history fields are absent, not `null`), a reasoning count and none.
    #[test]
    fn the_typed_shapes_write_the_former_bytes() {
        use crate::item_extra::tests::same_bytes_both_ways;
        use serde_json::json;
        let cs = conversations().unwrap();
        let conv = &cs[0];
        for (i, turn) in conv.turns.iter().enumerate() {
            same_bytes_both_ways(
                &TurnExpected::of(conv, turn),
                &json!({ "rule": conv.rule, "checks": turn.checks, "family": turn.kind }),
            );
            let mut extra = TurnExtra {
                family: turn.kind.clone(),
                turn: i + 1,
                sent: None,
            };
            same_bytes_both_ways(&extra, &json!({ "family": turn.kind, "turn": i + 1 }));
            for reasoning_tokens in [Some(12u64), None] {
                extra.sent = Some(TurnSent {
                    history_messages: 2 * i + 2,
                    reasoning_tokens,
                });
                let then = json!({
                    "family": turn.kind,
                    "turn": i + 1,
                    "history_messages": 2 * i + 2,
                    "reasoning_tokens": reasoning_tokens,
                });
                same_bytes_both_ways(&extra, &then);
            }
        }
        let no_rule = Conversation {
            rule: None,
            ..conv.clone()
        };
        let turn = &no_rule.turns[0];
        same_bytes_both_ways(
            &TurnExpected::of(&no_rule, turn),
            &json!({ "rule": no_rule.rule, "checks": turn.checks, "family": turn.kind }),
        );
    }

    #[test]
    fn checks() {
        assert!(TurnCheck::EndsWith("OVER".into()).holds("Your kettle is green. Over."));
        assert!(!TurnCheck::EndsWith("OVER".into()).holds("Over and out"));
        assert!(TurnCheck::StartsWith("Noted".into()).holds("**Noted:** the code word is WALRUS"));
        assert!(TurnCheck::Uppercase(String::new()).holds("SATURDAY, 6 PEOPLE."));
        assert!(!TurnCheck::Uppercase(String::new()).holds("Saturday"));
        // A bare number keeps a capitals-only rule (booking-caps asks for "the number").
        assert!(TurnCheck::Uppercase(String::new()).holds("4"));
        assert!(TurnCheck::Uppercase(String::new()).holds("4."));
        assert!(!TurnCheck::Uppercase(String::new()).holds("4 people"));
        assert!(!TurnCheck::Uppercase(String::new()).holds("..."));
        // Whole words and whole numbers only.
        let four = TurnCheck::Contains("4".into());
        assert!(four.holds("4") && four.holds("FOR 4 PEOPLE.") && four.holds("(4)"));
        for not_four in ["14", "2024", "4.5", "1,400", "40", "4th"] {
            assert!(!four.holds(not_four), "{not_four}");
        }
        assert!(four.holds("4, FRIDAY") && four.holds("IT IS 4."));
        assert!(TurnCheck::NotContains("4".into()).holds("6 PEOPLE, NOT 14"));
        assert!(!TurnCheck::NotContains("4".into()).holds("6, NOT 4"));
        assert!(TurnCheck::Contains("Priya".into()).holds("Your name is Priya's? PRIYA."));
        assert!(!TurnCheck::Contains("blue".into()).holds("bluebell"));
        assert!(TurnCheck::Contains("4471".into()).holds("order #4471 OVER"));
        assert!(TurnCheck::NotContains("blue".into()).holds("green OVER"));
        let cs = conversations().unwrap();
        let conv = &cs[0];
        let turn = &conv.turns[5];
        assert!(check_turn(conv, turn, "Green. OVER").passed);
        let c = check_turn(conv, turn, "Blue, no wait, green. OVER");
        assert!(!c.passed && c.detail.contains("blue"), "{}", c.detail);
        assert!(!check_turn(conv, turn, "Green.").passed);
    }
}
