//! Context suite: needle retrieval at exact, server-verified token targets up to the window.
//!
//! The old harness of docs/field-cases.md B7 sized filler with a words heuristic and truncated at
//! the window, so its "131k" probe sent 261,949 tokens; and an endpoint that did not advertise
//! its window produced a false context failure. Here:
//! - the window comes from discovery (with its source) or `--max-model-len`; unknown → the suite
//!   refuses (failed, measured nothing) rather than guess;
//! - a target is the prompt as the server counts it (`usage.prompt_tokens`, chat template
//!   included), clamped to `window − output budget`; a target above the window is `skipped`
//!   and never sent;
//! - the filler is tokenized once by the served model's own tokenizer (the server's `/tokenize`,
//!   or a local `tokenizer.json` given with `--tokenizer`) and cut on token boundaries; the whole
//!   chat prompt is then counted — by the server where it can (llama.cpp `/apply-template` +
//!   `/tokenize`, vLLM `/tokenize` with `messages`), else as the chat-template overhead measured
//!   by one `max_tokens: 1` calibration request plus the text's own tokens — and corrected in at
//!   most a few steps: never a linear search, never a words-per-token guess;
//! - every request is verified against `usage.prompt_tokens`: off by more than
//!   max(0.5 %, 16 tokens) → `instrument-miss`, excluded from the score;
//! - one probe just past the window records how the endpoint reacts (an endpoint fact, never a
//!   model failure).

use std::ops::ControlFlow;

use bakeoff_artifact::{
    ContextDetails, ContextRow, DetailsError, FlagCode, FlagSeverity, InstrumentFlag, ItemRecord,
    NeedleRow, Outcome, OverflowProbe, PromptCounting, ResponseRecord, SkippedRow, SuiteResult,
    WindowSource,
};
use bakeoff_client::Exchange;
use bakeoff_client::tokenize::TokenizeError;
use bakeoff_stats::SplitMix64;
use bakeoff_wire::ChatRequest;
use serde_json::json;

use crate::item_extra::ItemWrites;
use crate::outcome::{Check, classify, record};
use crate::suite_run::{Recorder, SuiteContext};

pub mod items;
mod sizer;
pub(crate) mod targets;

use items::{Sent, needle_extra, skipped_extra};
use sizer::{Sizer, TextRoute, choose_counting, tokenize_filler};
pub use targets::{
    ContextFlagError, ContextOptions, OUTPUT_BUDGET, PlannedTarget, TargetSpec, default_targets,
    parse_depths, parse_targets, plan_targets, tolerance,
};

/// How far past the window the edge probe goes.
const OVERFLOW_BY: u64 = 64;

/// A random needle: a UUID-shaped code the model cannot know, and a made-up archive name.
fn needle(rng: &mut SplitMix64) -> (String, String) {
    const NAMES: &[&str] = &[
        "amber", "basalt", "cobalt", "delta", "ember", "fjord", "granite", "harbor", "indigo",
        "juniper", "kestrel", "lantern",
    ];
    let name = format!(
        "{}-{}",
        NAMES[rng.below(NAMES.len() as u64) as usize],
        rng.below(900) + 100
    );
    let a = rng.next_u64();
    let b = rng.next_u64();
    let code = format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        (a >> 32) as u32,
        (a >> 16) as u16,
        a as u16,
        (b >> 48) as u16,
        b & 0xFFFF_FFFF_FFFF
    );
    (name, code)
}

/// The prompt of one needle request: where the needle hides and what is asked about it.
struct NeedlePrompt {
    /// The needle, the answer the model must give.
    code: String,
    header: String,
    sentence: String,
    question: String,
}

impl NeedlePrompt {
    /// A fresh needle and the words around it, drawn from `rng`.
    fn draw(rng: &mut SplitMix64) -> Self {
        let (name, code) = needle(rng);
        let header = format!(
            "Document {:016x}. Read the text below; one sentence in it gives a secret access code.",
            rng.next_u64()
        );
        let sentence = format!("The secret access code for the {name} archive is {code}.");
        let question = format!(
            "What is the secret access code for the {name} archive? Reply with the code only."
        );
        Self {
            code,
            header,
            sentence,
            question,
        }
    }
}

/// What the suite has recorded so far: the items and the summary's rows.
#[derive(Default)]
struct Tally {
    items: Vec<ItemRecord>,
    rows: Vec<ContextRow>,
}

impl Tally {
    /// Record one item and its row; whether the suite goes on.
    async fn push(&mut self, rec: &mut Recorder<'_>, item: ItemRecord, row: ContextRow) -> bool {
        self.rows.push(row);
        let go_on = rec.record(&item).await;
        self.items.push(item);
        go_on
    }
}

pub async fn run(ctx: &SuiteContext<'_>, rec: &mut Recorder<'_>) -> SuiteResult {
    let opts = &ctx.options.context;
    let window = ctx.facts.context_window;
    let Some(window_tokens) = window.tokens else {
        return refuse(
            rec,
            "the context window is unknown (the server does not advertise it); give --max-model-len N — the suite will not guess",
        );
    };
    let targets = opts
        .targets
        .clone()
        .unwrap_or_else(|| default_targets(window_tokens));
    let planned = plan_targets(&targets, window_tokens);
    let mut rng = SplitMix64::new(opts.seed);
    let mut tally = Tally::default();
    // Items: every (target, depth) pair plus each skipped target; the edge probe is a fact,
    // not an item.
    let total_planned = planned.iter().filter(|p| p.clamped.is_some()).count() * opts.depths.len()
        + planned.iter().filter(|p| p.clamped.is_none()).count();

    // Skipped targets are recorded, never sent.
    for p in planned.iter().filter(|p| p.clamped.is_none()) {
        let it = skipped_item(p, window_tokens, window.source, rec.writes());
        let row = ContextRow::Skipped(SkippedRow {
            target: p.label.clone(),
            requested: p.requested,
            outcome: Outcome::Skipped.as_str().into(),
            reason: it.check.clone(),
        });
        let _ = tally.push(rec, it, row).await;
    }

    let probe_size = window_tokens + OVERFLOW_BY;
    let text_route = TextRoute::new(opts.tokenizer.as_ref());
    let route_label = text_route.label(ctx.facts.tokenize.route.as_ref());
    let need_tokens = filler_tokens_needed(&planned, opts.overflow_probe.then_some(probe_size));
    let (sizer, counting) =
        match prepare(ctx, rec, text_route, need_tokens, &mut tally, total_planned).await {
            ControlFlow::Continue(ready) => ready,
            ControlFlow::Break(result) => return result,
        };
    let needles = Needles::new(ctx, sizer, window_tokens, window.source);

    for p in planned.iter().filter(|p| p.clamped.is_some()) {
        if let Err(reason) = needles.target(rec, &mut rng, p, &mut tally).await {
            let reason = reason.to_string();
            return refuse_with(rec, tally.items, tally.rows, total_planned, &reason);
        }
    }

    let mut overflow = None;
    if opts.overflow_probe
        && !rec.stopped()
        && let Some(fact) = rec
            .guard(overflow_probe(&needles.sizer, ctx, probe_size))
            .await
    {
        overflow = Some(fact);
    }

    let (mut result, misses) = result_with_misses(rec, total_planned, tally.items);
    let details = ContextDetails {
        window: Some(window_tokens),
        window_source: Some(window.source.as_str().into()),
        output_budget: Some(u64::from(OUTPUT_BUDGET)),
        tokenizer_route: route_label,
        prompt_counting: Some(counting),
        seed: Some(opts.seed),
        rows: tally.rows,
        instrument_misses: Some(misses),
        overflow,
        refused: None,
    };
    crate::summary::write_details(&mut result.summary, "context", &details);
    result
}

/// How many filler tokens to tokenize: enough for the largest send (or the edge probe, when it
/// is sent) plus room for the start offsets.
fn filler_tokens_needed(planned: &[PlannedTarget], probe_size: Option<u64>) -> usize {
    let largest = planned.iter().filter_map(|p| p.clamped).max().unwrap_or(0);
    largest.max(probe_size.unwrap_or(0)) as usize + 2048
}

/// Tokenize the filler once and choose how whole prompts are counted. `Break` carries the
/// suite's result when it cannot size prompts (refused) or was interrupted.
async fn prepare<'a>(
    ctx: &'a SuiteContext<'_>,
    rec: &mut Recorder<'_>,
    text_route: TextRoute,
    need_tokens: usize,
    tally: &mut Tally,
    total_planned: usize,
) -> ControlFlow<SuiteResult, (Sizer<'a>, PromptCounting)> {
    let engine = ctx.facts.engine;
    let seed = ctx.options.context.seed;
    let filler = match tokenize_filler(
        &text_route,
        ctx.client,
        engine,
        &ctx.model,
        need_tokens,
        seed,
    )
    .await
    {
        Ok(filler) => filler,
        Err(e) => {
            return ControlFlow::Break(refuse(
                rec,
                &format!("cannot size prompts with the served model's tokenizer: {e}"),
            ));
        }
    };
    let Some(counting) = rec.guard(choose_counting(&text_route, ctx)).await else {
        return ControlFlow::Break(rec.result(total_planned, std::mem::take(&mut tally.items)));
    };
    let (counting, calibration) = match counting {
        Ok(c) => c,
        Err(e) => {
            let tally = std::mem::take(tally);
            return ControlFlow::Break(refuse_with(
                rec,
                tally.items,
                tally.rows,
                total_planned,
                &format!("cannot count the chat prompt as the server does: {e}"),
            ));
        }
    };
    let sizer = Sizer {
        client: ctx.client,
        engine,
        model: &ctx.model,
        filler,
        text: text_route,
        counting,
    };
    ControlFlow::Continue((sizer, calibration))
}

/// A needle prompt could not be sized to its target: the suite is refused with this reason.
#[derive(Debug, thiserror::Error)]
#[error("prompt sizing failed: {0}")]
struct SizingFailed(TokenizeError);

/// The needle requests of one run: what they all share.
struct Needles<'a> {
    ctx: &'a SuiteContext<'a>,
    sizer: Sizer<'a>,
    /// Where a haystack may start: sentence starts in the filler's first 2048 tokens.
    starts: Vec<usize>,
    window: u64,
    window_source: WindowSource,
}

impl<'a> Needles<'a> {
    fn new(
        ctx: &'a SuiteContext<'a>,
        sizer: Sizer<'a>,
        window: u64,
        window_source: WindowSource,
    ) -> Self {
        let starts = sizer
            .filler
            .sentence_tokens()
            .iter()
            .copied()
            .filter(|&k| k < 2048)
            .collect::<Vec<_>>();
        Self {
            ctx,
            sizer,
            starts,
            window,
            window_source,
        }
    }

    /// Every depth at one planned target. `Err` is the reason to refuse the suite.
    async fn target(
        &self,
        rec: &mut Recorder<'_>,
        rng: &mut SplitMix64,
        p: &PlannedTarget,
        tally: &mut Tally,
    ) -> Result<(), SizingFailed> {
        let target = p.clamped.unwrap_or(0);
        for &depth in &self.ctx.options.context.depths {
            if rec.stopped() {
                break;
            }
            let Some((it, row)) = self.item(rec, rng, p, target, depth).await? else {
                break;
            };
            if !tally.push(rec, it, row).await {
                break;
            }
        }
        Ok(())
    }

    /// One needle request at `target` tokens and `depth`: its item and row, or `None` when the
    /// operator interrupted it.
    async fn item(
        &self,
        rec: &mut Recorder<'_>,
        rng: &mut SplitMix64,
        p: &PlannedTarget,
        target: u64,
        depth: f64,
    ) -> Result<Option<(ItemRecord, ContextRow)>, SizingFailed> {
        let ctx = self.ctx;
        let prompt = NeedlePrompt::draw(rng);
        let start = self
            .starts
            .get(rng.below(self.starts.len().max(1) as u64) as usize)
            .copied()
            .unwrap_or(0);
        let id = format!("context-{}-d{:03}", p.label, (depth * 100.0).round() as u32);
        let sized = rec
            .guard(self.sizer.size(
                target,
                start,
                &prompt.sentence,
                depth,
                &prompt.header,
                &prompt.question,
            ))
            .await;
        let Some(sized) = sized else { return Ok(None) };
        let (msgs, planned_tokens, used_depth) = sized.map_err(SizingFailed)?;
        let mut req = ChatRequest::new(&ctx.model, msgs, OUTPUT_BUDGET, true);
        ctx.options.thinking.apply(ctx.facts.engine, &mut req);
        let Some(ex) = rec.guard(ctx.client.chat_stream(&req)).await else {
            return Ok(None);
        };
        let (outcome, detail) = judge(&ex, &prompt.code, target);
        let sent = Sent {
            target,
            planned_tokens,
            used_depth,
            actual: ex.reply.prompt_tokens(),
            tolerance: tolerance(target),
        };
        let expected = serde_json::Value::from(prompt.code.as_str());
        let mut it = record(&id, &req, &ex, outcome, detail, expected);
        // Keep the record small: the prompt is reproducible from the seed and is long.
        if let Some(m) = it.request.get_mut("messages") {
            *m = json!([{"role": "user", "content": format!("<{planned_tokens}-token context prompt; needle {} at depth {:.0}%>", prompt.code, used_depth * 100.0)}]);
        }
        let extra = needle_extra(
            p,
            depth,
            &sent,
            &prompt.code,
            self.window,
            self.window_source,
        );
        rec.writes().extra(&mut it, &extra);
        let row = ContextRow::Needle(NeedleRow {
            target: p.label.clone(),
            target_tokens: target,
            planned: planned_tokens,
            actual: sent.actual,
            depth,
            outcome: it.outcome.as_str().into(),
        });
        Ok(Some((it, row)))
    }
}

/// The outcome of one needle request: found or not, unless the server's prompt count missed the
/// target by more than the tolerance (`instrument-miss`).
fn judge(ex: &Exchange, code: &str, target: u64) -> (Outcome, Option<String>) {
    let code_lc = code.to_ascii_lowercase();
    let (mut outcome, mut detail) = classify(ex, |a| Check {
        passed: a.to_ascii_lowercase().contains(&code_lc),
        detail: if a.to_ascii_lowercase().contains(&code_lc) {
            "needle found in the answer".into()
        } else {
            "needle not in the answer".into()
        },
    });
    let actual = ex.reply.prompt_tokens();
    let tol = tolerance(target);
    let miss = match actual {
        Some(a) => a.abs_diff(target) > tol,
        None => !outcome.is_request_failure(),
    };
    if miss && !outcome.is_request_failure() {
        detail = Some(format!(
            "instrument-miss: server counted {} prompt tokens against a target of {target} (tolerance {tol}); the model's answer was {}",
            actual.map(|a| a.to_string()).unwrap_or_else(|| "no".into()),
            outcome.as_str()
        ));
        outcome = Outcome::InstrumentMiss;
    }
    (outcome, detail)
}

/// The suite's result, flagged when some requests missed their token target; and how many did.
fn result_with_misses(
    rec: &Recorder<'_>,
    total_planned: usize,
    items: Vec<ItemRecord>,
) -> (SuiteResult, u64) {
    let mut result = rec.result(total_planned, items);
    let misses = result
        .items
        .iter()
        .filter(|i| i.outcome == Outcome::InstrumentMiss)
        .count() as u64;
    if misses > 0 {
        result.summary.flags.push(InstrumentFlag {
            code: FlagCode::InstrumentMiss,
            severity: FlagSeverity::Warning,
            message: format!("{misses} context request(s) missed their token target by more than max(0.5 %, 16 tokens); excluded from the score"),
            suite: Some("context".into()),
            count: Some(misses),
        });
    }
    (result, misses)
}

/// The edge probe's reaction as an endpoint fact, from a context suite result: none when the
/// probe was not sent or the suite wrote no details; details that do not read as the suite's
/// shape are an error ([`overflow_unread`]), never taken for "not sent".
pub fn overflow_fact(
    result: &SuiteResult,
) -> Result<Option<bakeoff_artifact::OverflowFact>, DetailsError> {
    if result.summary.details.is_null() {
        return Ok(None);
    }
    let details: bakeoff_artifact::ContextDetails = result.summary.details_as()?;
    Ok(details.overflow.filter(|o| o.sent).and_then(|o| {
        Some(bakeoff_artifact::OverflowFact {
            behaviour: o.behaviour?,
            prompt_tokens_sent: o.prompt_tokens_sent?,
            http_status: o.http_status.and_then(|v| u16::try_from(v).ok()),
            server_prompt_tokens: o.server_prompt_tokens,
        })
    }))
}

/// The run's flag when [`overflow_fact`] could not read the suite's details: the fact is left
/// unrecorded, and the run says why.
pub fn overflow_unread(e: &DetailsError) -> InstrumentFlag {
    InstrumentFlag {
        code: FlagCode::InstrumentFailure,
        severity: FlagSeverity::Warning,
        message: format!("context: {e}; the endpoint's reaction past its window is not recorded"),
        suite: Some("context".into()),
        count: None,
    }
}

/// One request just past the window: how does the endpoint react?
async fn overflow_probe(sizer: &Sizer<'_>, ctx: &SuiteContext<'_>, size: u64) -> OverflowProbe {
    let header = "Document overflow-probe.";
    let question = "Reply with OK.";
    let sized = sizer
        .size(
            size,
            0,
            "The probe sentence is here.",
            0.5,
            header,
            question,
        )
        .await;
    let (msgs, planned, _) = match sized {
        Ok(s) => s,
        Err(e) => {
            return OverflowProbe {
                sent: false,
                error: Some(e.to_string()),
                ..OverflowProbe::default()
            };
        }
    };
    let req = ChatRequest::new(&ctx.model, msgs, 1, true);
    let ex = ctx.client.chat_stream(&req).await;
    let reaction = bakeoff_client::dialect::classify_overflow(
        ctx.facts.engine,
        ex.error.as_ref(),
        planned,
        ex.reply.prompt_tokens(),
    );
    OverflowProbe {
        sent: true,
        prompt_tokens_sent: Some(planned),
        window: ctx.facts.context_window.tokens,
        http_status: ex.reply.status.map(u64::from),
        server_prompt_tokens: ex.reply.prompt_tokens(),
        behaviour: Some(reaction),
        error: ex.error.as_ref().map(|e| e.to_string()),
        note: Some("an endpoint fact, never scored as a model failure".into()),
    }
}

fn skipped_item(
    p: &PlannedTarget,
    window: u64,
    source: WindowSource,
    writes: &mut ItemWrites,
) -> ItemRecord {
    let mut it = ItemRecord {
        id: format!("context-{}", p.label),
        outcome: Outcome::Skipped,
        request: serde_json::Value::Null,
        response: ResponseRecord::default(),
        expected: serde_json::Value::Null,
        check: Some(format!(
            "target {} tokens cannot fit the window of {window} tokens (source: {source}) minus the {OUTPUT_BUDGET}-token output budget; never sent",
            p.requested
        )),
        latency: Default::default(),
        error: None,
        extra: serde_json::Value::Null,
    };
    writes.extra(&mut it, &skipped_extra(p, window, source));
    it
}

/// The suite cannot measure: `failed` with the reason in the summary (never a silent skip).
fn refuse(rec: &mut Recorder<'_>, reason: &str) -> SuiteResult {
    refuse_with(rec, Vec::new(), Vec::new(), 0, reason)
}

fn refuse_with(
    rec: &mut Recorder<'_>,
    items: Vec<ItemRecord>,
    rows: Vec<ContextRow>,
    planned: usize,
    reason: &str,
) -> SuiteResult {
    let mut r = rec.result(planned, items);
    if !r.items.iter().any(|i| i.outcome.is_scored()) {
        r.status = bakeoff_artifact::SuiteStatus::Failed;
    }
    r.summary.flags.push(InstrumentFlag {
        code: FlagCode::ContextRefused,
        severity: FlagSeverity::Invalid,
        message: reason.to_string(),
        suite: Some("context".into()),
        count: None,
    });
    let details = ContextDetails {
        refused: Some(reason.to_string()),
        rows,
        ..ContextDetails::default()
    };
    crate::summary::write_details(&mut r.summary, "context", &details);
    r
}

#[cfg(test)]
mod tests;

/// A fresh context-suite seed (a run's unique prompt prefix): std's randomly keyed hasher draws
/// its keys from the OS, and `salt` (a campaign variant's slug) and the clock go in too, so two
/// runs never share a seed — and a prompt cache warmed by one never helps the next — unless
/// `--seed` says so.
pub fn fresh_seed(salt: &str) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write(salt.as_bytes());
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    h.finish()
}
