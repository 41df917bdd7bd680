//! One reply to one schema, judged: the outcome rules of docs/suites.md "Structured output",
//! applied in order.

use bakeoff_artifact::StructuredOutcome;
use bakeoff_client::{Exchange, RequestError};
use serde_json::Value;

/// The judgement of one reply.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    pub outcome: StructuredOutcome,
    /// One line saying why.
    pub detail: String,
    /// The server's own words, for a refusal (its error message, else its body).
    pub words: Option<String>,
    /// The first violation of the schema, for `not-enforced` (`at PATH: …`).
    pub violation: Option<String>,
}

/// At most this many characters of a server's words are kept.
const WORDS_CHARS: usize = 300;

fn cut(s: &str, n: usize) -> String {
    let t: String = s.chars().take(n).collect();
    if t.len() < s.len() {
        format!("{t}…")
    } else {
        t
    }
}

/// The message of an error body (`error.message`, `message`, `detail`), else the body itself.
pub fn words_of(body: &str) -> String {
    let msg = serde_json::from_str::<Value>(body).ok().and_then(|v| {
        let m = v
            .pointer("/error/message")
            .or_else(|| v.get("message"))
            .or_else(|| v.get("detail"))
            .or_else(|| v.get("error"))?;
        match m {
            Value::String(s) => Some(s.clone()),
            other => Some(other.to_string()),
        }
    });
    let text = msg.unwrap_or_else(|| body.to_owned());
    cut(
        text.split_whitespace().collect::<Vec<_>>().join(" ").trim(),
        WORDS_CHARS,
    )
}

/// Words of a server error that speak of the schema or its grammar (a refusal), as opposed to
/// an unrelated failure.
fn speaks_of_the_schema(words: &str) -> bool {
    let w = words.to_ascii_lowercase();
    [
        "schema",
        "grammar",
        "json",
        "structured",
        "guided",
        "response_format",
    ]
    .iter()
    .any(|k| w.contains(k))
}

/// Judge a reply against the schema's validator and the known answer.
pub fn judge(ex: &Exchange, validator: &jsonschema::Validator, answer: &Value) -> Judged {
    let plain = |outcome, detail: String| Judged {
        outcome,
        detail,
        words: None,
        violation: None,
    };
    if let Some(e) = &ex.error {
        let body = match e {
            RequestError::Http { status, body } => Some((Some(*status), body)),
            RequestError::ServerErrorEvent { body } => Some((None, body)),
            _ => None,
        };
        if let Some((status, body)) = body {
            let words = words_of(body);
            let client_error = status.is_some_and(|s| (400..500).contains(&s));
            if client_error || speaks_of_the_schema(&words) {
                return Judged {
                    outcome: StructuredOutcome::Refused,
                    detail: format!("the server rejected the schema: {words}"),
                    words: Some(words),
                    violation: None,
                };
            }
        }
        return plain(
            StructuredOutcome::RequestFailed,
            format!("request failed: {e}"),
        );
    }
    let r = &ex.reply;
    let cut_off = r.finish_reason.as_deref() == Some("length");
    let text = r.content.trim();
    let parsed: Result<Value, _> = serde_json::from_str(text);
    let value = match parsed {
        Ok(v) => v,
        Err(e) if cut_off => {
            return plain(
                StructuredOutcome::Truncated,
                format!("cut off by max_tokens before the JSON closed ({e})"),
            );
        }
        Err(e) => {
            let what = if text.is_empty() {
                "an empty reply".to_owned()
            } else {
                format!("not valid JSON ({e})")
            };
            return Judged {
                outcome: StructuredOutcome::NotEnforced,
                detail: format!(
                    "not enforced by the server: it accepted the schema and returned {what}"
                ),
                words: None,
                violation: Some(what),
            };
        }
    };
    if let Some(err) = validator.iter_errors(&value).next() {
        let at = err.instance_path().to_string();
        let violation = cut(
            &format!("at {}: {err}", if at.is_empty() { "/" } else { &at }),
            WORDS_CHARS,
        );
        return Judged {
            outcome: StructuredOutcome::NotEnforced,
            detail: format!(
                "not enforced by the server: it accepted the schema and returned JSON that \
                 violates it ({violation})"
            ),
            words: None,
            violation: Some(violation),
        };
    }
    match differs(answer, &value, "") {
        None => plain(
            StructuredOutcome::ValidRight,
            "valid, and the known answer".into(),
        ),
        Some(d) => plain(
            StructuredOutcome::ValidWrong,
            format!("valid, but not the known answer: {d}"),
        ),
    }
}

/// Where `got` differs from the known answer `want` (every key `want` has, with its value),
/// or `None`.
pub fn differs(want: &Value, got: &Value, at: &str) -> Option<String> {
    let here = if at.is_empty() { "/" } else { at };
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => w.iter().find_map(|(k, wv)| {
            let path = format!("{at}/{k}");
            match g.get(k) {
                Some(gv) => differs(wv, gv, &path),
                None => Some(format!("{path} missing")),
            }
        }),
        (Value::Array(w), Value::Array(g)) => {
            if w.len() != g.len() {
                return Some(format!("{here} has {} items, wanted {}", g.len(), w.len()));
            }
            w.iter()
                .zip(g)
                .enumerate()
                .find_map(|(i, (wv, gv))| differs(wv, gv, &format!("{at}/{i}")))
        }
        (Value::String(w), Value::String(g)) => (w.trim().to_lowercase()
            != g.trim().to_lowercase())
        .then(|| format!("{here} is {g:?}, wanted {w:?}")),
        (Value::Number(w), Value::Number(g)) => match (w.as_f64(), g.as_f64()) {
            (Some(a), Some(b)) if (a - b).abs() <= 1e-9 * a.abs().max(1.0) => None,
            _ => Some(format!("{here} is {g}, wanted {w}")),
        },
        (w, g) if w == g => None,
        (w, g) => Some(cut(&format!("{here} is {g}, wanted {w}"), 200)),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use bakeoff_client::Reply;
    use serde_json::json;

    fn ex(content: &str, finish: &str) -> Exchange {
        Exchange {
            reply: Reply {
                content: content.into(),
                finish_reason: Some(finish.into()),
                ..Reply::default()
            },
            error: None,
        }
    }

    fn schema() -> jsonschema::Validator {
        super::super::battery::validator(&json!({
            "type": "object",
            "properties": {"email": {"type": "string", "format": "email"}, "n": {"type": "integer"}},
            "required": ["email", "n"],
            "additionalProperties": false
        }))
        .unwrap()
    }

    #[test]
    fn the_rules_in_order() {
        let v = schema();
        let want = json!({"email": "a@b.example", "n": 2});
        let j = judge(&ex(r#"{"email":"A@b.example","n":2.0}"#, "stop"), &v, &want);
        assert_eq!(j.outcome, StructuredOutcome::ValidRight, "{}", j.detail);
        let j = judge(&ex(r#"{"email":"c@d.example","n":2}"#, "stop"), &v, &want);
        assert_eq!(j.outcome, StructuredOutcome::ValidWrong);
        assert!(j.detail.contains("/email"), "{}", j.detail);
        // Valid JSON that breaks the schema is the server's failure, never a wrong answer.
        let j = judge(&ex(r#"{"email":"not-an-email","n":2}"#, "stop"), &v, &want);
        assert_eq!(j.outcome, StructuredOutcome::NotEnforced);
        assert!(j.violation.unwrap().contains("/email"));
        let j = judge(
            &ex(r#"{"email":"a@b.example","n":2,"x":1}"#, "stop"),
            &v,
            &want,
        );
        assert_eq!(j.outcome, StructuredOutcome::NotEnforced);
        let j = judge(&ex("Sure! Here it is", "stop"), &v, &want);
        assert_eq!(j.outcome, StructuredOutcome::NotEnforced);
        let j = judge(&ex(r#"{"email":"a@b"#, "length"), &v, &want);
        assert_eq!(j.outcome, StructuredOutcome::Truncated);
        let refused = Exchange {
            reply: Reply::default(),
            error: Some(RequestError::Http {
                status: 400,
                body: r##"{"error":{"code":400,"message":"\"json_schema\": Unrecognized schema: {\"$ref\":\"#money\"}","type":"invalid_request_error"}}"##.into(),
            }),
        };
        let j = judge(&refused, &v, &want);
        assert_eq!(j.outcome, StructuredOutcome::Refused);
        assert!(
            j.words
                .unwrap()
                .starts_with("\"json_schema\": Unrecognized")
        );
        let down = Exchange {
            reply: Reply::default(),
            error: Some(RequestError::Http {
                status: 503,
                body: "Service Unavailable".into(),
            }),
        };
        assert_eq!(
            judge(&down, &v, &want).outcome,
            StructuredOutcome::RequestFailed
        );
    }
}
