//! Rendering a chat template the way Python transformers does, so a prompt we show is the
//! prompt the engine builds.
//!
//! transformers renders with `ImmutableSandboxedEnvironment(trim_blocks=True,
//! lstrip_blocks=True, extensions=[loopcontrols])`, a `tojson` filter that is
//! `json.dumps(x, ensure_ascii=False, indent=indent, separators=separators,
//! sort_keys=sort_keys)` (no HTML escaping, keys in insertion order), and the globals
//! `raise_exception(msg)` and `strftime_now(fmt)` (transformers/utils/chat_template_utils.py).
//! minijinja 2 gets the same: trim/lstrip blocks, `loop_controls`, Python string/dict methods
//! through minijinja-contrib's `pycompat::unknown_method_callback` (`.startswith`, `.items()`,
//! `.strip()` …), `preserve_order` in minijinja and serde_json, and our own `tojson` (the
//! built-in one escapes `< > & '`). `{% generation %}` blocks (transformers' assistant-mask
//! extension) are removed before compiling, as TGI and mistral.rs do.
//!
//! Python-rendered goldens (scripts/render_template_goldens.py) check this byte for byte.

use minijinja::value::{Kwargs, Value};
use minijinja::{Environment, Error, ErrorKind};

/// What to render a template with.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderInput {
    pub messages: serde_json::Value,
    pub tools: Option<serde_json::Value>,
    pub add_generation_prompt: bool,
    pub bos_token: String,
    pub eos_token: String,
    /// What `strftime_now` formats; `None` = the clock. Goldens fix it.
    pub now: Option<chrono::NaiveDateTime>,
}

/// The fixed conversation every audited template renders: a system prompt, two user turns,
/// one assistant turn, and one tool whose schema keys are deliberately **not** sorted
/// (`name`, `description`, `parameters`; `type`, `properties`, `required`), so a renderer that
/// sorts keys shows up as a diff. The same JSON is in
/// crates/bakeoff-text/tests/fixtures/templates/conversation.json for the Python goldens.
pub fn fixed_conversation() -> RenderInput {
    RenderInput {
        messages: serde_json::json!([
            {"role": "system", "content": "You are a careful assistant. Answer briefly."},
            {"role": "user", "content": "What is the capital of France?"},
            {"role": "assistant", "content": "Paris."},
            {"role": "user", "content": "And the weather there? Use the tool if you need it."}
        ]),
        tools: Some(serde_json::json!([
            {"type": "function", "function": {
                "name": "get_weather",
                "description": "Current weather for a city. Returns <temp> & \"conditions\".",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "city": {"type": "string", "description": "City name, e.g. Paris"},
                        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}
                    },
                    "required": ["city"]
                }
            }}
        ])),
        add_generation_prompt: true,
        bos_token: "<s>".into(),
        eos_token: "</s>".into(),
        now: chrono::NaiveDate::from_ymd_opt(2026, 8, 24).and_then(|d| d.and_hms_opt(12, 0, 0)),
    }
}

/// Why a template did not render.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RenderError {
    /// The template does not compile (syntax minijinja does not accept).
    #[error("template does not compile: {0}")]
    Syntax(String),
    /// The template called `raise_exception(msg)`: it refuses this conversation.
    #[error("template raised: {0}")]
    Raised(String),
    /// Another error while rendering.
    #[error("render failed: {0}")]
    Render(String),
}

/// Python `json.dumps(v, ensure_ascii=False, indent=indent)`: `", "` and `": "` without
/// indent, `","` and newlines with it; strings escaped as Python does with
/// `ensure_ascii=False` (only `"`, `\`, and control characters), which matches serde_json.
fn py_json(v: &serde_json::Value, indent: Option<usize>, level: usize, out: &mut String) {
    use serde_json::Value as J;
    let nl = |out: &mut String, level: usize| {
        if let Some(n) = indent {
            out.push('\n');
            out.push_str(&" ".repeat(n * level));
        }
    };
    let item_sep = if indent.is_some() { "," } else { ", " };
    match v {
        J::Array(a) if a.is_empty() => out.push_str("[]"),
        J::Object(o) if o.is_empty() => out.push_str("{}"),
        J::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(item_sep);
                }
                nl(out, level + 1);
                py_json(x, indent, level + 1, out);
            }
            nl(out, level);
            out.push(']');
        }
        J::Object(o) => {
            out.push('{');
            for (i, (k, x)) in o.iter().enumerate() {
                if i > 0 {
                    out.push_str(item_sep);
                }
                nl(out, level + 1);
                out.push_str(&serde_json::Value::String(k.clone()).to_string());
                out.push_str(": ");
                py_json(x, indent, level + 1, out);
            }
            nl(out, level);
            out.push('}');
        }
        J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        J::Null => out.push_str("null"),
        other => out.push_str(&other.to_string()),
    }
}

fn tojson(value: Value, kwargs: Kwargs) -> Result<Value, Error> {
    let indent: Option<usize> = kwargs.get("indent")?;
    // Accepted and ignored where they are transformers' defaults.
    let _: Option<bool> = kwargs.get("ensure_ascii")?;
    let sort_keys: Option<bool> = kwargs.get("sort_keys")?;
    kwargs.assert_all_used()?;
    let mut j = serde_json::to_value(&value)
        .map_err(|e| Error::new(ErrorKind::InvalidOperation, format!("tojson: {e}")))?;
    if sort_keys == Some(true) {
        j = sort(j);
    }
    let mut out = String::new();
    py_json(&j, indent, 0, &mut out);
    Ok(Value::from_safe_string(out))
}

fn sort(v: serde_json::Value) -> serde_json::Value {
    match v {
        serde_json::Value::Object(o) => {
            let mut items: Vec<_> = o.into_iter().collect();
            items.sort_by(|a, b| a.0.cmp(&b.0));
            serde_json::Value::Object(items.into_iter().map(|(k, v)| (k, sort(v))).collect())
        }
        serde_json::Value::Array(a) => serde_json::Value::Array(a.into_iter().map(sort).collect()),
        x => x,
    }
}

/// A minijinja environment that behaves like transformers' (see the module doc). `now` fixes
/// what `strftime_now` formats.
pub fn hf_environment(now: Option<chrono::NaiveDateTime>) -> Environment<'static> {
    let mut env = Environment::new();
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
    env.add_filter("tojson", tojson);
    env.add_function("raise_exception", |msg: String| -> Result<Value, Error> {
        Err(Error::new(ErrorKind::InvalidOperation, msg))
    });
    env.add_function("strftime_now", move |fmt: String| -> Result<Value, Error> {
        let t = now.unwrap_or_else(|| chrono::Local::now().naive_local());
        let mut s = String::new();
        use std::fmt::Write;
        write!(s, "{}", t.format(&fmt)).map_err(|_| {
            Error::new(
                ErrorKind::InvalidOperation,
                format!("strftime_now: bad format {fmt:?}"),
            )
        })?;
        Ok(Value::from(s))
    });
    env
}

/// Drops transformers' `{% generation %}` / `{% endgeneration %}` tags (with their `-`
/// whitespace-control variants); they only mark assistant tokens for training masks.
fn strip_generation_tags(src: &str) -> String {
    let mut out = src.to_owned();
    for tag in ["generation", "endgeneration"] {
        for (open, close) in [("{%", "%}"), ("{%-", "%}"), ("{%", "-%}"), ("{%-", "-%}")] {
            out = out.replace(&format!("{open} {tag} {close}"), "");
        }
    }
    out
}

/// Renders `template` with `input` as transformers' `apply_chat_template` would.
pub fn render_template(template: &str, input: &RenderInput) -> Result<String, RenderError> {
    let env = hf_environment(input.now);
    let src = strip_generation_tags(template);
    let tmpl = env
        .template_from_str(&src)
        .map_err(|e| RenderError::Syntax(e.to_string()))?;
    let ctx = minijinja::context! {
        messages => Value::from_serialize(&input.messages),
        tools => input.tools.as_ref().map(Value::from_serialize),
        add_generation_prompt => input.add_generation_prompt,
        bos_token => input.bos_token.clone(),
        eos_token => input.eos_token.clone(),
    };
    tmpl.render(ctx).map_err(|e| {
        // raise_exception surfaces as InvalidOperation with exactly the template's message.
        match (e.kind(), e.detail()) {
            (ErrorKind::InvalidOperation, Some(d))
                if !d.starts_with("tojson") && !d.starts_with("strftime_now") =>
            {
                RenderError::Raised(d.to_owned())
            }
            _ => RenderError::Render(e.to_string()),
        }
    })
}
