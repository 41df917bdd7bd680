//! Thinking control (`--thinking on|off|default`) for every suite, and the probe that checks
//! the mode took effect.
//!
//! The mode is sent as `chat_template_kwargs.enable_thinking` plus the engine's own controls;
//! which fields those are lives in the engine's dialect (`bakeoff_client::dialect`), never
//! here. A template may ignore the kwarg (derivative checkpoints' templates lag the base
//! model's: docs/field-cases.md F4), so the
//! mode is verified, not assumed: off must give no reasoning and non-empty content, on must
//! give reasoning.

use bakeoff_artifact::{EngineKind, FlagCode, FlagSeverity, InstrumentFlag, ThinkingModeCheck};
use bakeoff_client::{Client, dialect};
use bakeoff_wire::{ChatRequest, Message, Usage};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ThinkingMode {
    On,
    Off,
    /// Send nothing: whatever the server and template do by default.
    #[default]
    Default,
}

/// A `--thinking` value that is not a mode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--thinking {0:?} is not a mode; use on, off or default")]
pub struct UnknownThinkingMode(pub String);

impl ThinkingMode {
    pub fn parse(s: &str) -> Result<Self, UnknownThinkingMode> {
        match s.trim().to_ascii_lowercase().as_str() {
            "on" => Ok(Self::On),
            "off" => Ok(Self::Off),
            "default" => Ok(Self::Default),
            other => Err(UnknownThinkingMode(other.to_string())),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::On => "on",
            Self::Off => "off",
            Self::Default => "default",
        }
    }

    /// The request fields this mode adds on `engine` (empty for `default`).
    pub fn controls(self, engine: EngineKind) -> serde_json::Map<String, serde_json::Value> {
        match self {
            Self::On => dialect::thinking_extras(engine, true),
            Self::Off => dialect::thinking_extras(engine, false),
            Self::Default => serde_json::Map::new(),
        }
    }

    /// Add this mode's controls to a request. Fields a suite already set are kept.
    pub fn apply(self, engine: EngineKind, req: &mut ChatRequest) {
        for (k, v) in self.controls(engine) {
            req.extra.entry(k).or_insert(v);
        }
    }
}

/// Output tokens a reply may spend reasoning before its answer, added to a scored suite's
/// answer budget under `--thinking on`. The answer budgets (16–160 tokens) fit the visible
/// answer only; a reasoning model spends hundreds to thousands of tokens first, and without
/// this allowance nearly every item would end `truncated-in-reasoning`. lighteval multiplies
/// `max_new_tokens` by 10 for reasoning models (its model configs' reasoning allowance); a
/// flat allowance keeps the 16-token items usable too. `default` and `off` keep the answer
/// budget: under `default` a reasoning model that runs out is flagged `thinking-artifacts`.
pub const THINKING_ALLOWANCE: u32 = 4096;

impl ThinkingMode {
    /// The output budget for a suite whose answer fits in `answer_tokens`.
    fn budget(self, answer_tokens: u32) -> u32 {
        match self {
            Self::On => answer_tokens.saturating_add(THINKING_ALLOWANCE),
            Self::Off | Self::Default => answer_tokens,
        }
    }

    /// Apply the mode's controls and widen the request's output budget for reasoning (the
    /// scored suites: smoke, tool, session, intelligence; load suites pin their lengths and
    /// use [`ThinkingMode::apply`] alone).
    pub fn apply_scored(self, engine: EngineKind, req: &mut ChatRequest) {
        self.apply(engine, req);
        if let Some(m) = req.max_tokens {
            req.max_tokens = Some(self.budget(m));
        }
    }
}

const PROBE_PROMPT: &str = "Say hello.";
/// Enough for a reasoning model to open its reasoning; not enough to wait on it.
const PROBE_MAX_TOKENS: u32 = 32;

/// Judge a reply against the mode: `Some(true)` when it took effect.
pub fn judge(
    mode: ThinkingMode,
    content: &str,
    reasoning: &str,
    reasoning_tokens: Option<u64>,
) -> (Option<bool>, String) {
    let has_reasoning = !reasoning.trim().is_empty() || reasoning_tokens.is_some_and(|t| t > 0);
    let has_content = !content.trim().is_empty();
    match mode {
        ThinkingMode::Default => (
            None,
            format!(
                "default mode: nothing sent; the probe gave {} content characters and {} reasoning characters",
                content.chars().count(),
                reasoning.chars().count()
            ),
        ),
        ThinkingMode::Off if !has_reasoning && has_content => {
            (Some(true), "thinking off took effect: no reasoning, non-empty content".into())
        }
        ThinkingMode::Off if has_reasoning => (
            Some(false),
            "thinking off did NOT take effect: the reply still carried reasoning (the template may ignore \
             enable_thinking; start the engine with thinking off: llama.cpp --reasoning-budget 0, vLLM \
             --default-chat-template-kwargs '{\"enable_thinking\": false}')"
                .into(),
        ),
        ThinkingMode::Off => (
            Some(false),
            "thinking off: no reasoning, but the content was empty too".into(),
        ),
        ThinkingMode::On if has_reasoning => (Some(true), "thinking on took effect: reasoning present".into()),
        ThinkingMode::On => (
            Some(false),
            "thinking on did NOT take effect: no reasoning came back (a non-reasoning model, a template \
             without a thinking switch, or no reasoning parser: vLLM --reasoning-parser, llama.cpp \
             --reasoning-format)"
                .into(),
        ),
    }
}

/// Send one probe with the mode applied and say whether it took effect; a flag when it did not.
pub async fn verify(
    client: &Client,
    model: &str,
    engine: EngineKind,
    mode: ThinkingMode,
) -> (ThinkingModeCheck, Option<InstrumentFlag>) {
    let mut req = ChatRequest::new(
        model,
        vec![Message::user(PROBE_PROMPT)],
        PROBE_MAX_TOKENS,
        true,
    );
    mode.apply(engine, &mut req);
    let controls = serde_json::Value::Object(mode.controls(engine));
    let ex = client.chat_stream(&req).await;
    let reasoning_tokens = ex.reply.usage.as_ref().and_then(Usage::reasoning_tokens);
    let (took_effect, message) = match &ex.error {
        Some(e) => (None, format!("the thinking probe failed: {e}")),
        None => judge(
            mode,
            &ex.reply.content,
            &ex.reply.reasoning,
            reasoning_tokens,
        ),
    };
    let flag = match (took_effect, &ex.error) {
        (Some(false), _) => Some(InstrumentFlag {
            code: FlagCode::ThinkingModeNotApplied,
            severity: FlagSeverity::Warning,
            message: format!("--thinking {}: {message}", mode.as_str()),
            suite: None,
            count: None,
        }),
        (None, Some(_)) if mode != ThinkingMode::Default => Some(InstrumentFlag {
            code: FlagCode::ThinkingModeUnverified,
            severity: FlagSeverity::Warning,
            message: format!("--thinking {}: {message}", mode.as_str()),
            suite: None,
            count: None,
        }),
        _ => None,
    };
    (
        ThinkingModeCheck {
            mode: mode.as_str().into(),
            took_effect,
            content_chars: ex.reply.content.chars().count() as u64,
            reasoning_chars: ex.reply.reasoning.chars().count() as u64,
            reasoning_tokens,
            controls,
            message,
        },
        flag,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse() {
        assert_eq!(ThinkingMode::parse("OFF"), Ok(ThinkingMode::Off));
        assert!(ThinkingMode::parse("maybe").is_err());
    }

    #[test]
    fn judging() {
        assert_eq!(judge(ThinkingMode::Off, "hi", "", None).0, Some(true));
        assert_eq!(judge(ThinkingMode::Off, "hi", "hmm", None).0, Some(false));
        assert_eq!(judge(ThinkingMode::Off, "hi", "", Some(12)).0, Some(false));
        assert_eq!(judge(ThinkingMode::Off, "", "", None).0, Some(false));
        assert_eq!(judge(ThinkingMode::On, "", "hmm", None).0, Some(true));
        assert_eq!(judge(ThinkingMode::On, "hi", "", None).0, Some(false));
        assert_eq!(judge(ThinkingMode::Default, "hi", "", None).0, None);
    }

    #[test]
    fn thinking_on_widens_the_answer_budget_only() {
        assert_eq!(ThinkingMode::On.budget(16), 16 + THINKING_ALLOWANCE);
        assert_eq!(ThinkingMode::Off.budget(16), 16);
        assert_eq!(ThinkingMode::Default.budget(32), 32);
        let mut req = ChatRequest::new("m", vec![Message::user("q")], 16, true);
        ThinkingMode::On.apply_scored(EngineKind::LlamaCpp, &mut req);
        assert_eq!(req.max_tokens, Some(16 + THINKING_ALLOWANCE));
        assert_eq!(req.extra["chat_template_kwargs"]["enable_thinking"], true);
    }

    #[test]
    fn controls_come_from_the_dialect() {
        let off = ThinkingMode::Off.controls(EngineKind::LlamaCpp);
        assert_eq!(off["chat_template_kwargs"]["enable_thinking"], false);
        assert_eq!(off["reasoning_format"], "deepseek");
        let on = ThinkingMode::On.controls(EngineKind::Vllm);
        assert_eq!(on["chat_template_kwargs"]["thinking"], true);
        assert!(on.get("reasoning_effort").is_none());
        assert!(ThinkingMode::Default.controls(EngineKind::Vllm).is_empty());
    }
}
