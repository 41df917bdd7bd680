//! Context suite: needle retrieval at exact, server-verified token targets up to the window.
//!
//! The seeds' old harness sized filler with a words heuristic and truncated at the window, so
//! its "131k" probe sent 261,949 tokens; and an endpoint that did not advertise its window
//! produced a false context failure. Here:
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

use bakeoff_artifact::{
    EngineKind, FlagSeverity, InstrumentFlag, ItemRecord, Outcome, ResponseRecord, SuiteResult,
    WindowSource,
};
use std::sync::Arc;

use bakeoff_client::Client;
use bakeoff_client::tokenize::TokenizeError;
use bakeoff_text::{
    LocalTokenizer, LocalTokenizerError, SplitMix64, TokenizedFiller, build_filler,
};
use bakeoff_wire::{ChatRequest, Message};
use serde_json::json;

use crate::outcome::{Check, classify, record};
use crate::runner::{Recorder, SuiteContext};

/// Tokens reserved for the answer (a needle is a 36-character code).
pub const OUTPUT_BUDGET: u32 = 48;
/// How far past the window the edge probe goes.
const OVERFLOW_BY: u64 = 64;

/// One requested target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetSpec {
    Tokens(u64),
    /// Up to the window itself.
    Window,
}

impl TargetSpec {
    pub fn label(self) -> String {
        match self {
            TargetSpec::Tokens(n) => bakeoff_artifact::slug::window_label(n),
            TargetSpec::Window => "window".into(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct ContextOptions {
    /// `None`: powers of two from 4k up to and including the window.
    pub targets: Option<Vec<TargetSpec>>,
    /// Needle depths in 0..=1.
    pub depths: Vec<f64>,
    /// Seed for needles, filler order and start offsets (reproducible runs).
    pub seed: u64,
    /// Send the one probe just past the window.
    pub overflow_probe: bool,
    /// `--tokenizer PATH`: cut and count with this `tokenizer.json` instead of the server's
    /// `/tokenize` (for endpoints that have none).
    pub tokenizer: Option<Arc<LocalTokenizer>>,
}

impl Default for ContextOptions {
    fn default() -> Self {
        Self {
            targets: None,
            depths: vec![0.0, 0.25, 0.5, 0.75, 1.0],
            seed: 0x00C0_FFEE,
            overflow_probe: true,
            tokenizer: None,
        }
    }
}

/// `4k,16k,window`, `8192`, `32K`.
pub fn parse_targets(s: &str) -> Result<Vec<TargetSpec>, String> {
    let mut out = Vec::new();
    for raw in s.split(',').map(str::trim).filter(|x| !x.is_empty()) {
        let lower = raw.to_ascii_lowercase();
        let t =
            if lower == "window" {
                TargetSpec::Window
            } else if let Some(k) = lower.strip_suffix('k') {
                TargetSpec::Tokens(
                    k.parse::<u64>().ok().filter(|&k| k > 0).ok_or_else(|| {
                        format!("context target {raw:?} is not a size like 4k, 8192 or window")
                    })? * 1024,
                )
            } else {
                TargetSpec::Tokens(lower.parse::<u64>().ok().filter(|&n| n > 0).ok_or_else(
                    || format!("context target {raw:?} is not a size like 4k, 8192 or window"),
                )?)
            };
        out.push(t);
    }
    if out.is_empty() {
        return Err("--context-targets is empty; e.g. 4k,16k,window".into());
    }
    Ok(out)
}

/// `0,25,50,75,100` (percent).
pub fn parse_depths(s: &str) -> Result<Vec<f64>, String> {
    let mut out = Vec::new();
    for raw in s.split(',').map(str::trim).filter(|x| !x.is_empty()) {
        let v: f64 = raw
            .trim_end_matches('%')
            .parse()
            .map_err(|_| format!("context depth {raw:?} is not a percentage 0–100"))?;
        if !(0.0..=100.0).contains(&v) {
            return Err(format!("context depth {raw:?} is not a percentage 0–100"));
        }
        out.push(v / 100.0);
    }
    if out.is_empty() {
        return Err("--context-depths is empty; e.g. 0,50,100".into());
    }
    Ok(out)
}

/// The tolerance rule: max(0.5 % of the target, 16 tokens).
pub fn tolerance(target: u64) -> u64 {
    ((target as f64) * 0.005).ceil().max(16.0) as u64
}

/// A planned row: what was asked, what can fit.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedTarget {
    pub label: String,
    pub requested: u64,
    /// What will be sent (≤ window − output budget), or `None` when it cannot fit.
    pub clamped: Option<u64>,
}

/// Targets against the window: above the window → cannot fit (skipped); otherwise clamped to
/// `window − output budget`. Duplicates after clamping are kept once.
pub fn plan_targets(targets: &[TargetSpec], window: u64) -> Vec<PlannedTarget> {
    let max_fit = window.saturating_sub(u64::from(OUTPUT_BUDGET));
    let mut out: Vec<PlannedTarget> = Vec::new();
    for t in targets {
        let requested = match t {
            TargetSpec::Tokens(n) => *n,
            TargetSpec::Window => window,
        };
        let clamped = (requested <= window && max_fit > 0).then(|| requested.min(max_fit));
        if clamped.is_some() && out.iter().any(|o| o.clamped == clamped) {
            continue;
        }
        out.push(PlannedTarget {
            label: t.label(),
            requested,
            clamped,
        });
    }
    out
}

/// Powers of two from 4k below the window, then the window.
pub fn default_targets(window: u64) -> Vec<TargetSpec> {
    let mut v = Vec::new();
    let mut t = 4096u64;
    while t < window {
        v.push(TargetSpec::Tokens(t));
        t *= 2;
    }
    v.push(TargetSpec::Window);
    v
}

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

/// Which tokenizer cuts the filler and counts plain text.
enum TextRoute {
    /// The server's `/tokenize` (with pieces).
    Server,
    /// A local `tokenizer.json`.
    Local(Arc<LocalTokenizer>),
}

impl TextRoute {
    /// `--tokenizer` when given, else the server.
    fn new(tokenizer: Option<&Arc<LocalTokenizer>>) -> Self {
        match tokenizer {
            Some(t) => TextRoute::Local(Arc::clone(t)),
            None => TextRoute::Server,
        }
    }

    /// The route as artifacts record it; `server` is what discovery recorded for the server's.
    fn label(&self, server: Option<&String>) -> Option<String> {
        match self {
            TextRoute::Local(t) => Some(t.route()),
            TextRoute::Server => server.cloned(),
        }
    }

    /// Tokens of `text` (no special tokens) with each token's end offset. The local tokenizer
    /// runs off the async runtime: a window-sized text takes a while to encode.
    async fn pieces(
        &self,
        client: &Client,
        engine: EngineKind,
        model: &str,
        text: &str,
    ) -> Result<(usize, Vec<usize>), TokenizeError> {
        match self {
            TextRoute::Server => {
                let p = client.tokenize_pieces(engine, model, text).await?;
                Ok((p.ids.len(), p.ends))
            }
            TextRoute::Local(t) => {
                let (ids, ends) = run_local(t, text.to_string(), |t, text| t.ends(text)).await?;
                Ok((ids.len(), ends))
            }
        }
    }

    /// How many tokens `text` is (no special tokens): the count [`TextRoute::pieces`] gives,
    /// without computing the boundaries.
    async fn count(
        &self,
        client: &Client,
        engine: EngineKind,
        model: &str,
        text: String,
    ) -> Result<usize, TokenizeError> {
        match self {
            TextRoute::Server => client.count_text_tokens(engine, model, &text).await,
            TextRoute::Local(t) => run_local(t, text, |t, text| t.count(text)).await,
        }
    }
}

/// Run `f` on the local tokenizer off the async runtime.
async fn run_local<T: Send + 'static>(
    t: &Arc<LocalTokenizer>,
    text: String,
    f: impl FnOnce(&LocalTokenizer, &str) -> Result<T, LocalTokenizerError> + Send + 'static,
) -> Result<T, TokenizeError> {
    let t = Arc::clone(t);
    tokio::task::spawn_blocking(move || f(&t, &text))
        .await
        .map_err(|e| TokenizeError::Shape(format!("local tokenizer task failed: {e}")))?
        .map_err(|e| TokenizeError::Shape(e.to_string()))
}

/// How a whole chat prompt (template included) is counted.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Counting {
    /// The server counts the chat request itself.
    Server,
    /// The chat-template overhead, measured once by a calibration request, plus the text's own
    /// tokens.
    Calibrated { overhead: i64 },
}

struct Sizer<'a> {
    client: &'a Client,
    engine: EngineKind,
    model: &'a str,
    filler: TokenizedFiller,
    text: TextRoute,
    counting: Counting,
}

/// The messages of one context request.
fn messages(header: &str, haystack: &str, question: &str) -> Vec<Message> {
    vec![Message::user(format!(
        "{header}\n\n{haystack}\n\n{question}"
    ))]
}

/// The text of `msgs` with no template: their contents, joined as they are.
fn joined_content(msgs: &[Message]) -> String {
    msgs.iter().filter_map(|m| m.content.as_deref()).collect()
}

impl Sizer<'_> {
    /// Tokens of the whole chat prompt, as the server will count them.
    async fn count_chat(&self, msgs: &[Message]) -> Result<u64, TokenizeError> {
        match self.counting {
            Counting::Server => {
                self.client
                    .count_chat_tokens(self.engine, self.model, msgs)
                    .await
            }
            Counting::Calibrated { overhead } => {
                let n = self
                    .text
                    .count(self.client, self.engine, self.model, joined_content(msgs))
                    .await?;
                Ok((n as i64 + overhead).max(0) as u64)
            }
        }
    }

    /// Find the filler length whose whole prompt counts exactly `target` tokens on the server.
    /// Returns the messages, the server's count (the plan), and the needle depth used.
    async fn size(
        &self,
        target: u64,
        start: usize,
        needle_sentence: &str,
        depth: f64,
        header: &str,
        question: &str,
    ) -> Result<(Vec<Message>, u64, f64), TokenizeError> {
        // The fixed part (template, header, needle, question) costs what an empty haystack costs.
        let fixed = self
            .count_chat(&messages(header, needle_sentence, question))
            .await?;
        let room = self.filler.len_tokens().saturating_sub(start);
        let mut n = (target.saturating_sub(fixed) as usize).min(room);
        let mut last = None;
        // Joins around the needle can merge or split a token; each step corrects by the
        // difference the server reports, so this settles in one or two steps.
        for _ in 0..4 {
            let (hay, used) = self
                .filler
                .haystack(start, n, needle_sentence, depth)
                .map_err(|e| TokenizeError::Shape(e.to_string()))?;
            let msgs = messages(header, &hay, question);
            let count = self.count_chat(&msgs).await?;
            if count == target {
                return Ok((msgs, count, used));
            }
            let next = (n as i64 + target as i64 - count as i64).clamp(0, room as i64) as usize;
            last = Some((msgs, count, used));
            if next == n {
                break;
            }
            n = next;
        }
        last.ok_or_else(|| TokenizeError::Shape("no sizing step ran".into()))
    }
}

pub async fn run(ctx: &SuiteContext<'_>, rec: &mut Recorder<'_>) -> SuiteResult {
    let opts = &ctx.options.context;
    let window = ctx.facts.context_window;
    let engine = ctx.facts.engine;
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
    let mut items = Vec::new();
    let mut rows = Vec::new();
    // Items: every (target, depth) pair plus each skipped target; the edge probe is a fact,
    // not an item.
    let total_planned = planned.iter().filter(|p| p.clamped.is_some()).count() * opts.depths.len()
        + planned.iter().filter(|p| p.clamped.is_none()).count();

    // Skipped targets are recorded, never sent.
    for p in planned.iter().filter(|p| p.clamped.is_none()) {
        let it = skipped_item(p, window_tokens, window.source);
        rows.push(json!({"target": p.label, "requested": p.requested, "outcome": "skipped", "reason": it.check}));
        let _ = rec.record(&it).await;
        items.push(it);
    }

    // Tokenize the filler once, long enough for the largest send plus start offsets.
    let largest = planned.iter().filter_map(|p| p.clamped).max().unwrap_or(0);
    let probe_size = window_tokens + OVERFLOW_BY;
    let need_tokens = largest.max(if opts.overflow_probe { probe_size } else { 0 }) as usize + 2048;
    let text_route = TextRoute::new(opts.tokenizer.as_ref());
    let route_label = text_route.label(ctx.facts.tokenize.route.as_ref());
    let filler = match tokenize_filler(
        &text_route,
        ctx.client,
        engine,
        &ctx.model,
        need_tokens,
        opts.seed,
    )
    .await
    {
        Ok(filler) => filler,
        Err(e) => {
            return refuse(
                rec,
                &format!("cannot size prompts with the served model's tokenizer: {e}"),
            );
        }
    };
    let Some(counting) = rec.guard(choose_counting(&text_route, ctx)).await else {
        return rec.result(total_planned, items);
    };
    let (counting, calibration) = match counting {
        Ok(c) => c,
        Err(e) => {
            return refuse_with(
                rec,
                items,
                rows,
                total_planned,
                &format!("cannot count the chat prompt as the server does: {e}"),
            );
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
    let starts = sizer
        .filler
        .sentence_tokens()
        .iter()
        .copied()
        .filter(|&k| k < 2048)
        .collect::<Vec<_>>();

    for p in planned.iter().filter(|p| p.clamped.is_some()) {
        let target = p.clamped.unwrap_or(0);
        for &depth in &opts.depths {
            if rec.stopped() {
                break;
            }
            let (name, code) = needle(&mut rng);
            let header = format!(
                "Document {:016x}. Read the text below; one sentence in it gives a secret access code.",
                rng.next_u64()
            );
            let needle_sentence =
                format!("The secret access code for the {name} archive is {code}.");
            let question = format!(
                "What is the secret access code for the {name} archive? Reply with the code only."
            );
            let start = starts
                .get(rng.below(starts.len().max(1) as u64) as usize)
                .copied()
                .unwrap_or(0);
            let id = format!("context-{}-d{:03}", p.label, (depth * 100.0).round() as u32);
            let sized = rec
                .guard(sizer.size(target, start, &needle_sentence, depth, &header, &question))
                .await;
            let Some(sized) = sized else { break };
            let (msgs, planned_tokens, used_depth) = match sized {
                Ok(s) => s,
                Err(e) => {
                    return refuse_with(
                        rec,
                        items,
                        rows,
                        total_planned,
                        &format!("prompt sizing failed: {e}"),
                    );
                }
            };
            let mut req = ChatRequest::new(&ctx.model, msgs, OUTPUT_BUDGET, true);
            ctx.options.thinking.apply(engine, &mut req);
            let Some(ex) = rec.guard(ctx.client.chat_stream(&req)).await else {
                break;
            };
            let code_lc = code.to_ascii_lowercase();
            let (mut outcome, mut detail) = classify(&ex, |a| Check {
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
            let mut it = record(&id, &req, &ex, outcome, detail, json!(code));
            // Keep the record small: the prompt is reproducible from the seed and is long.
            if let Some(m) = it.request.get_mut("messages") {
                *m = json!([{"role": "user", "content": format!("<{planned_tokens}-token context prompt; needle {code} at depth {:.0}%>", used_depth * 100.0)}]);
            }
            it.extra = json!({
                "target_label": p.label,
                "requested_tokens": p.requested,
                "target_tokens": target,
                "planned_tokens": planned_tokens,
                "actual_prompt_tokens": actual,
                "delta_tokens": actual.map(|a| a as i64 - target as i64),
                "tolerance_tokens": tol,
                "depth_requested": depth,
                "depth_used": used_depth,
                "needle": code,
                "window": window_tokens,
                "window_source": window.source,
            });
            rows.push(json!({
                "target": p.label, "target_tokens": target, "planned": planned_tokens, "actual": actual,
                "depth": depth, "outcome": it.outcome.as_str(),
            }));
            let go_on = rec.record(&it).await;
            items.push(it);
            if !go_on {
                break;
            }
        }
    }

    let mut overflow = serde_json::Value::Null;
    if opts.overflow_probe
        && !rec.stopped()
        && let Some(fact) = rec.guard(overflow_probe(&sizer, ctx, probe_size)).await
    {
        overflow = fact;
    }

    let mut result = rec.result(total_planned, items);
    let misses = result
        .items
        .iter()
        .filter(|i| i.outcome == Outcome::InstrumentMiss)
        .count() as u64;
    if misses > 0 {
        result.summary.flags.push(InstrumentFlag {
            code: "instrument-miss".into(),
            severity: FlagSeverity::Warning,
            message: format!("{misses} context request(s) missed their token target by more than max(0.5 %, 16 tokens); excluded from the score"),
            suite: Some("context".into()),
            count: Some(misses),
        });
    }
    result.summary.details = json!({
        "window": window_tokens,
        "window_source": window.source,
        "output_budget": OUTPUT_BUDGET,
        "tokenizer_route": route_label,
        "prompt_counting": calibration,
        "seed": opts.seed,
        "rows": rows,
        "instrument_misses": misses,
        "overflow": overflow,
    });
    result
}

/// The edge probe's reaction as an endpoint fact, from a context suite result.
pub fn overflow_fact(result: &SuiteResult) -> Option<bakeoff_artifact::OverflowFact> {
    let o = result.summary.details.get("overflow")?;
    if o.get("sent")?.as_bool() != Some(true) {
        return None;
    }
    Some(bakeoff_artifact::OverflowFact {
        behaviour: o.get("behaviour")?.as_str()?.to_string(),
        prompt_tokens_sent: o.get("prompt_tokens_sent")?.as_u64()?,
        http_status: o
            .get("http_status")
            .and_then(|v| v.as_u64())
            .and_then(|v| u16::try_from(v).ok()),
        server_prompt_tokens: o.get("server_prompt_tokens").and_then(|v| v.as_u64()),
    })
}

/// How the whole chat prompt will be counted: by the server when its dialect can (one probe
/// call tells), else from one `max_tokens: 1` calibration request whose `usage.prompt_tokens`
/// gives the chat-template overhead over the text's own tokens. Returns the counting and what
/// to record about it.
async fn choose_counting(
    route: &TextRoute,
    ctx: &SuiteContext<'_>,
) -> Result<(Counting, serde_json::Value), TokenizeError> {
    let (client, engine, model) = (ctx.client, ctx.facts.engine, ctx.model.as_str());
    let msgs = messages(
        "Document calibration.",
        "The calibration sentence is here.",
        "Reply with OK.",
    );
    match client.count_chat_tokens(engine, model, &msgs).await {
        Ok(_) => return Ok((Counting::Server, json!({"route": "server"}))),
        // The server is there but cannot count a chat request: calibrate.
        Err(TokenizeError::Unsupported { .. } | TokenizeError::Status { .. })
        | Err(TokenizeError::Shape(_)) => {}
        Err(e) => return Err(e),
    }
    let text_tokens = route
        .count(client, engine, model, joined_content(&msgs))
        .await?;
    // The calibration request carries the same engine extras (thinking mode) as the real ones:
    // a template that reads `enable_thinking` changes the overhead. `calibrate_chat_tokens`
    // sends it with `max_tokens: 1`.
    let mut req = ChatRequest::new(model, msgs, 1, true);
    ctx.options.thinking.apply(engine, &mut req);
    let total = client.calibrate_chat_tokens(req).await?;
    let overhead = total as i64 - text_tokens as i64;
    Ok((
        Counting::Calibrated { overhead },
        json!({
            "route": "calibration",
            "calibration_prompt_tokens": total,
            "calibration_text_tokens": text_tokens,
            "template_overhead_tokens": overhead,
        }),
    ))
}

/// Tokenize enough filler once. A first small tokenization measures this tokenizer's tokens per
/// sentence on this filler (a measurement, not a heuristic); the full filler is then built with
/// margin and tokenized once.
async fn tokenize_filler(
    route: &TextRoute,
    client: &Client,
    engine: EngineKind,
    model: &str,
    need_tokens: usize,
    seed: u64,
) -> Result<TokenizedFiller, TokenizeError> {
    let (sample, _) = build_filler(100, seed);
    let (sample_tokens, _) = route.pieces(client, engine, model, &sample).await?;
    let sentences = (need_tokens * 100 / sample_tokens.max(1)) * 11 / 10 + 100;
    let (text, bounds) = build_filler(sentences, seed);
    let (n, ends) = route.pieces(client, engine, model, &text).await?;
    if n < need_tokens {
        return Err(TokenizeError::Shape(format!(
            "filler tokenized to {n} tokens, fewer than the {need_tokens} needed"
        )));
    }
    TokenizedFiller::new(text, ends, &bounds).map_err(|e| TokenizeError::Shape(e.to_string()))
}

/// One request just past the window: how does the endpoint react?
async fn overflow_probe(sizer: &Sizer<'_>, ctx: &SuiteContext<'_>, size: u64) -> serde_json::Value {
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
        Err(e) => return json!({"sent": false, "error": e.to_string()}),
    };
    let req = ChatRequest::new(&ctx.model, msgs, 1, true);
    let ex = ctx.client.chat_stream(&req).await;
    let reaction = bakeoff_client::dialect::classify_overflow(
        ctx.facts.engine,
        ex.error.as_ref(),
        planned,
        ex.reply.prompt_tokens(),
    );
    json!({
        "sent": true,
        "prompt_tokens_sent": planned,
        "window": ctx.facts.context_window.tokens,
        "http_status": ex.reply.status,
        "server_prompt_tokens": ex.reply.prompt_tokens(),
        "behaviour": reaction,
        "error": ex.error.as_ref().map(|e| e.to_string()),
        "note": "an endpoint fact, never scored as a model failure",
    })
}

fn skipped_item(p: &PlannedTarget, window: u64, source: WindowSource) -> ItemRecord {
    ItemRecord {
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
        extra: json!({"target_label": p.label, "requested_tokens": p.requested, "window": window, "window_source": source}),
    }
}

/// The suite cannot measure: `failed` with the reason in the summary (never a silent skip).
fn refuse(rec: &mut Recorder<'_>, reason: &str) -> SuiteResult {
    refuse_with(rec, Vec::new(), Vec::new(), 0, reason)
}

fn refuse_with(
    rec: &mut Recorder<'_>,
    items: Vec<ItemRecord>,
    rows: Vec<serde_json::Value>,
    planned: usize,
    reason: &str,
) -> SuiteResult {
    let mut r = rec.result(planned, items);
    if !r.items.iter().any(|i| i.outcome.is_scored()) {
        r.status = bakeoff_artifact::SuiteStatus::Failed;
    }
    r.summary.flags.push(InstrumentFlag {
        code: "context-refused".into(),
        severity: FlagSeverity::Invalid,
        message: reason.to_string(),
        suite: Some("context".into()),
        count: None,
    });
    r.summary.details = json!({"refused": reason, "rows": rows});
    r
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn target_parsing() {
        assert_eq!(
            parse_targets("4k, 16K,window,8192").unwrap(),
            vec![
                TargetSpec::Tokens(4096),
                TargetSpec::Tokens(16384),
                TargetSpec::Window,
                TargetSpec::Tokens(8192)
            ]
        );
        assert!(parse_targets("4q").is_err());
        assert!(parse_targets("0").is_err());
        assert!(parse_targets("").is_err());
        assert_eq!(parse_depths("0,50,100%").unwrap(), vec![0.0, 0.5, 1.0]);
        assert!(parse_depths("120").is_err());
    }

    #[test]
    fn clamping_and_skipping() {
        let p = plan_targets(
            &[
                TargetSpec::Tokens(4096),
                TargetSpec::Tokens(16384),
                TargetSpec::Window,
            ],
            8192,
        );
        assert_eq!(p[0].clamped, Some(4096));
        assert_eq!(
            p[1].clamped, None,
            "16k cannot fit an 8k window: skipped, never sent"
        );
        assert_eq!(p[2].clamped, Some(8192 - u64::from(OUTPUT_BUDGET)));
        // An explicit 8192 and `window` clamp to the same size: sent once.
        let p = plan_targets(&[TargetSpec::Tokens(8192), TargetSpec::Window], 8192);
        assert_eq!(p.len(), 1);
    }

    #[test]
    fn default_targets_are_powers_of_two_up_to_the_window() {
        assert_eq!(
            default_targets(32768),
            vec![
                TargetSpec::Tokens(4096),
                TargetSpec::Tokens(8192),
                TargetSpec::Tokens(16384),
                TargetSpec::Window
            ]
        );
        assert_eq!(default_targets(4096), vec![TargetSpec::Window]);
        assert_eq!(
            default_targets(6000),
            vec![TargetSpec::Tokens(4096), TargetSpec::Window]
        );
    }

    #[test]
    fn tolerance_rule() {
        assert_eq!(tolerance(1000), 16);
        assert_eq!(tolerance(3200), 16);
        assert_eq!(tolerance(32768), 164);
        assert_eq!(tolerance(131072), 656);
    }

    #[test]
    fn needles_are_unique_and_uuid_shaped() {
        let mut r = SplitMix64::new(1);
        let (n1, c1) = needle(&mut r);
        let (_, c2) = needle(&mut r);
        assert_ne!(c1, c2);
        assert_eq!(c1.len(), 36);
        assert_eq!(c1.matches('-').count(), 4);
        assert!(!n1.is_empty());
    }
}
