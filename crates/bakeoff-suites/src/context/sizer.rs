//! Sizing a context prompt to an exact token count: which tokenizer cuts and counts the filler
//! text ([`TextRoute`]), how the whole chat prompt is counted ([`Counting`]), and the [`Sizer`]
//! that settles a filler length on a target in a few steps.

use std::sync::Arc;

use bakeoff_artifact::{EngineKind, PromptCounting};
use bakeoff_client::Client;
use bakeoff_client::tokenize::TokenizeError;
use bakeoff_text::{LocalTokenizer, LocalTokenizerError, TokenizedFiller, build_filler};
use bakeoff_wire::{ChatRequest, Message};

use crate::suite_run::SuiteContext;

/// Which tokenizer cuts the filler and counts plain text.
pub(super) enum TextRoute {
    /// The server's `/tokenize` (with pieces).
    Server,
    /// A local `tokenizer.json`.
    Local(Arc<LocalTokenizer>),
}

impl TextRoute {
    /// `--tokenizer` when given, else the server.
    pub(super) fn new(tokenizer: Option<&Arc<LocalTokenizer>>) -> Self {
        match tokenizer {
            Some(t) => TextRoute::Local(Arc::clone(t)),
            None => TextRoute::Server,
        }
    }

    /// The route as artifacts record it; `server` is what discovery recorded for the server's.
    pub(super) fn label(&self, server: Option<&String>) -> Option<String> {
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
pub(super) enum Counting {
    /// The server counts the chat request itself.
    Server,
    /// The chat-template overhead, measured once by a calibration request, plus the text's own
    /// tokens.
    Calibrated { overhead: i64 },
}

pub(super) struct Sizer<'a> {
    pub(super) client: &'a Client,
    pub(super) engine: EngineKind,
    pub(super) model: &'a str,
    pub(super) filler: TokenizedFiller,
    pub(super) text: TextRoute,
    pub(super) counting: Counting,
}

/// The messages of one context request.
pub(super) fn messages(header: &str, haystack: &str, question: &str) -> Vec<Message> {
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
    pub(super) async fn size(
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

/// How the whole chat prompt will be counted: by the server when its dialect can (one probe
/// call tells), else from one `max_tokens: 1` calibration request whose `usage.prompt_tokens`
/// gives the chat-template overhead over the text's own tokens. Returns the counting and what
/// to record about it.
pub(super) async fn choose_counting(
    route: &TextRoute,
    ctx: &SuiteContext<'_>,
) -> Result<(Counting, PromptCounting), TokenizeError> {
    let (client, engine, model) = (ctx.client, ctx.facts.engine, ctx.model.as_str());
    let msgs = messages(
        "Document calibration.",
        "The calibration sentence is here.",
        "Reply with OK.",
    );
    match client.count_chat_tokens(engine, model, &msgs).await {
        Ok(_) => {
            let server = PromptCounting {
                route: "server".into(),
                ..PromptCounting::default()
            };
            return Ok((Counting::Server, server));
        }
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
        PromptCounting {
            route: "calibration".into(),
            calibration_prompt_tokens: Some(total),
            calibration_text_tokens: Some(text_tokens as u64),
            template_overhead_tokens: Some(overhead),
        },
    ))
}

/// Tokenize enough filler once. A first small tokenization measures this tokenizer's tokens per
/// sentence on this filler (a measurement, not a heuristic); the full filler is then built with
/// margin and tokenized once.
pub(super) async fn tokenize_filler(
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
