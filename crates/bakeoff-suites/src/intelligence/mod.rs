//! Intelligence suite (`--suite intelligence`): a battery of short-answer items (the shipped
//! default, or `--battery FILE`), scored by documented extraction rules on `content` only,
//! with per-family statistics and instrument flags ([`crate::instrument`]).

pub mod battery;
pub mod extract;
pub mod generate;
pub mod items;

use bakeoff_artifact::{Outcome, SuiteResult};
use bakeoff_wire::{ChatRequest, Message};

use crate::instrument::{self, Tally};
use crate::outcome::{Check, classify, record};
use crate::suite_run::{Recorder, SuiteContext, first_per};
use battery::BatteryItem;
use extract::{Extracted, extract, matches};
use items::{IntelligenceExpected, extra_of};

const DEFAULT: &str = include_str!("../../data/intelligence-default.jsonl");

/// Every correct answer fits in 16 tokens (a date is about 10).
pub const MAX_TOKENS: u32 = 16;

/// The battery the run uses: `--battery FILE`, else the shipped default.
pub fn load(path: Option<&std::path::Path>) -> Result<Vec<BatteryItem>, battery::BatteryError> {
    match path {
        Some(p) => battery::load(p),
        None => battery::parse(DEFAULT, "default (data/intelligence-default.jsonl)"),
    }
}

/// The first `limit` items of each family, in battery order.
pub fn subset(items: Vec<BatteryItem>, limit: Option<usize>) -> Vec<BatteryItem> {
    first_per(items, limit, |it| it.family.clone())
}

pub fn request(model: &str, item: &BatteryItem) -> ChatRequest {
    ChatRequest::new(
        model,
        vec![Message::user(item.rendered_prompt())],
        MAX_TOKENS,
        true,
    )
}

/// Judge one reply's content: (check, extracted answer or failure reason).
pub fn check(item: &BatteryItem, content: &str) -> (Check, Extracted) {
    let ex = extract(item, content);
    let c = match &ex {
        Extracted::Found(got) if matches(item, got) => Check {
            passed: true,
            detail: format!("extracted {got:?}: accepted"),
        },
        Extracted::Found(got) => Check {
            passed: false,
            detail: format!(
                "extracted {:?}, accepted {:?}",
                got.chars().take(40).collect::<String>(),
                item.answers
            ),
        },
        Extracted::Failed(why) => Check {
            passed: false,
            detail: format!("extraction failed: {why}"),
        },
    };
    (c, ex)
}

pub async fn run(ctx: &SuiteContext<'_>, rec: &mut Recorder<'_>) -> SuiteResult {
    let Ok(items) = load(ctx.options.battery.as_deref()) else {
        // The binary validates --battery before the run starts; reaching this means nothing
        // could be measured.
        return rec.result(0, Vec::new());
    };
    let items = subset(items, ctx.options.limit);
    let mut done = Vec::with_capacity(items.len());
    let mut tallies = Vec::with_capacity(items.len());
    for item in &items {
        let mut req = request(&ctx.model, item);
        ctx.options
            .thinking
            .apply_scored(ctx.facts.engine, &mut req);
        let Some(ex) = rec.guard(ctx.client.chat_stream(&req)).await else {
            break;
        };
        let mut extracted = None;
        let (outcome, detail) = classify(&ex, |a| {
            let (c, e) = check(item, a);
            extracted = Some(e);
            c
        });
        // Only a visible answer can fail extraction; reasoning-only and request failures are
        // their own classes.
        let extraction_failed = matches!(outcome, Outcome::Wrong | Outcome::Truncated)
            && matches!(extracted, Some(Extracted::Failed(_)));
        let mut r = record(
            &item.id,
            &req,
            &ex,
            outcome,
            detail,
            serde_json::Value::Null,
        );
        let extra = extra_of(
            item,
            extracted.as_ref(),
            extraction_failed,
            crate::tool::reasoning_tokens(&ex),
        );
        rec.writes()
            .expected(&mut r, &IntelligenceExpected::of(item));
        rec.writes().extra(&mut r, &extra);
        tallies.push(Tally {
            id: item.id.clone(),
            family: item.family.clone(),
            outcome,
            chance: item.chance(),
            extraction_failed,
        });
        let go_on = rec.record(&r).await;
        done.push(r);
        if !go_on {
            break;
        }
    }
    let mut result = rec.result(items.len(), done);
    let mut details = instrument::apply("intelligence", &mut result.summary, &tallies);
    details.reasoning = Some(crate::summary::reasoning_totals(&result.items));
    details.battery = Some(
        ctx.options
            .battery
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "default".into()),
    );
    crate::summary::write_details(&mut result.summary, "intelligence", &details);
    result
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn default_loads_and_subsets_keep_every_family() {
        let all = load(None).unwrap();
        assert_eq!(all.len(), 216);
        let sub = subset(all, Some(2));
        assert_eq!(sub.len(), 12);
    }

    #[test]
    fn own_answers_pass_and_garbage_is_an_extraction_failure() {
        for it in load(None).unwrap() {
            let a = it.answers[0].clone();
            assert!(check(&it, &a).0.passed, "{}: {a}", it.id);
            let (c, e) = check(&it, "<|im_end|>\n<|im_start|>");
            assert!(!c.passed);
            if it.scoring != battery::Scoring::Exact {
                assert!(matches!(e, Extracted::Failed(_)), "{}", it.id);
            }
        }
    }
}
