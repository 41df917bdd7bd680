//! Secrets in what bakeoff writes or prints about a seat: its configuration in failure
//! artifacts, the `seat` commands' output (text and `--json`), and the log lines read back from
//! a seat (the evidence tail, `seat logs`). The seat itself is always launched with the real
//! values: only what is written or printed goes through here.
//!
//! ONE rule for environment variables, arguments, header and key names (docs/fleet.md,
//! "Secrets"):
//!
//! - A **name** — an environment variable, a flag without its dashes, the `NAME` of `NAME=VALUE`
//!   or `NAME: VALUE` — is secret when, split into words on `-`, `_` and `.`, some word contains
//!   `SECRET`, `PASSWORD`, `PASSWD`, `PASSPHRASE`, `CREDENTIAL` or `AUTHORIZATION` (or is
//!   `PASS`), or its **last** word is `KEY`, `KEYS` or `AUTH` or ends in `APIKEY`, `APIKEYS` or
//!   `TOKEN` (case-insensitive). So `--api-key`, `--admin-api-key`, `--hf-token`, `--token`,
//!   `--ssl-keyfile-password`, `HF_TOKEN`, `OPENAI_API_KEY`, `X-Api-Key` are secret;
//!   `--max-tokens`, `--kv-cache-dtype`, `--tokenizer`, `--return-tokens-as-token-ids`,
//!   `--api-key-env` and `AWS_ACCESS_KEY_ID` are not. A name whose last word ends in `FILE`,
//!   `PATH` or `DIR` (`--api-key-file`, `--ssl-keyfile`, `--password-file`) names where a secret
//!   is kept, not the secret: its value is kept as evidence.
//! - Its **value** is replaced by `<redacted>`: the value of a secret variable; in an argument
//!   list, every argument after a secret flag up to the next flag (vLLM's `--api-key` takes
//!   several); in text, the word after a secret flag or `NAME:`; `NAME=VALUE` anywhere. The
//!   credential of `Authorization: Bearer|Basic|Token X` and of `Bearer X` (the scheme is kept).
//!   Empty values and `None`/`null` are left as they are.
//! - Whatever the name, anywhere: `sk-` followed by 16 or more of `[A-Za-z0-9_-]` (OpenAI-style
//!   keys), `hf_` followed by 20 or more letters and digits (Hugging Face tokens), and the
//!   password of a URL (`scheme://user:PASSWORD@host`; the user is kept).
//! - [`Redactor`] also knows every value the rules found in a seat's configuration, and removes
//!   it wherever it appears verbatim (at least 4 characters): an engine that echoes its
//!   arguments (vLLM's `non-default args: {'api_key': …}`) does not leak the key into the
//!   evidence.

use std::collections::BTreeMap;

use crate::fleet::launch::{DockerLaunch, Launch, ProcessLaunch};

/// What a secret is replaced with.
pub const REDACTED: &str = "<redacted>";

/// Known secret values shorter than this are not searched for in free text (a 2-character
/// password would blank every occurrence of those two characters); the structural rules
/// still redact them.
const MIN_KNOWN: usize = 4;
/// `sk-` keys: at least this many characters after the prefix.
const SK_MIN: usize = 16;
/// `hf_` tokens: at least this many characters after the prefix.
const HF_MIN: usize = 20;

/// Does `name` (an environment variable, a flag, a header or key name) hold a secret? The rule
/// is in the module documentation.
pub fn secret_name(name: &str) -> bool {
    let upper = name
        .trim_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_ascii_uppercase();
    let words: Vec<&str> = upper
        .split(['-', '_', '.'])
        .filter(|w| !w.is_empty())
        .collect();
    let Some(last) = words.last() else {
        return false;
    };
    if ["FILE", "PATH", "DIR"].iter().any(|p| last.ends_with(p)) {
        return false;
    }
    const STRONG: [&str; 6] = [
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "PASSPHRASE",
        "CREDENTIAL",
        "AUTHORIZATION",
    ];
    words
        .iter()
        .any(|w| *w == "PASS" || STRONG.iter().any(|s| w.contains(s)))
        || matches!(*last, "KEY" | "KEYS" | "AUTH")
        || ["APIKEY", "APIKEYS", "TOKEN"]
            .iter()
            .any(|s| last.ends_with(s))
}

/// An argument list (a process seat's `args`, a container's `command`) with its secrets
/// redacted.
pub fn args(args: &[String]) -> Vec<String> {
    args_into(args, &mut Vec::new())
}

/// Free text (a log line, a message, a shell script in an argument) with its secrets redacted.
pub fn text(s: &str) -> String {
    text_into(s, &mut Vec::new())
}

/// Environment variables with the values of secret names (and secrets inside the others, such
/// as a proxy URL's password) redacted.
pub fn env(env: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    env_into(env, &mut Vec::new())
}

/// A seat's launch as it may be written or printed.
pub fn launch(l: &Launch) -> Launch {
    launch_into(l, &mut Vec::new())
}

/// Redacts free text with the rules plus the secret values of a seat's (or a fleet's)
/// configuration, wherever they appear verbatim.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// Longest first, so a value that contains another is removed whole.
    known: Vec<String>,
}

impl Redactor {
    /// `s` with the rules applied and every known secret value removed.
    pub fn text(&self, s: &str) -> String {
        let mut t = text(s);
        for k in &self.known {
            if t.contains(k.as_str()) {
                t = t.replace(k.as_str(), REDACTED);
            }
        }
        t
    }

    /// Every string in a JSON value (keys kept), through [`Redactor::text`].
    pub fn json(&self, v: &mut serde_json::Value) {
        match v {
            serde_json::Value::String(s) => *s = self.text(s),
            serde_json::Value::Array(a) => a.iter_mut().for_each(|x| self.json(x)),
            serde_json::Value::Object(o) => o.iter_mut().for_each(|(_, x)| self.json(x)),
            _ => {}
        }
    }
}

// ---- the rules ---------------------------------------------------------------------------

fn launch_into(l: &Launch, found: &mut Vec<String>) -> Launch {
    match l {
        Launch::Process(p) => Launch::Process(ProcessLaunch {
            command: text_into(&p.command, found),
            args: args_into(&p.args, found),
            env: env_into(&p.env, found),
        }),
        Launch::Docker(d) => Launch::Docker(DockerLaunch {
            image: text_into(&d.image, found),
            command: args_into(&d.command, found),
            env: env_into(&d.env, found),
            mounts: d.mounts.iter().map(|m| text_into(m, found)).collect(),
            labels: env_into(&d.labels, found),
            ..d.clone()
        }),
    }
}

fn env_into(env: &BTreeMap<String, String>, found: &mut Vec<String>) -> BTreeMap<String, String> {
    env.iter()
        .map(|(k, v)| {
            let v = if secret_name(k) {
                redact_whole(v, found)
            } else {
                text_into(v, found)
            };
            (k.clone(), v)
        })
        .collect()
}

fn args_into(args: &[String], found: &mut Vec<String>) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut after_secret_flag = false;
    for a in args {
        if after_secret_flag {
            if !is_flag(a) {
                out.push(redact_whole(a, found));
                continue;
            }
            after_secret_flag = false;
        }
        if is_flag(a) && !a.contains('=') && secret_name(a) {
            after_secret_flag = true;
            out.push(a.clone());
            continue;
        }
        // `--api-key=VALUE`, `HF_TOKEN=VALUE`: the whole of VALUE, whatever it holds (an
        // argument with spaces is a script or a header: text).
        if let Some((name, value)) = a.split_once('=')
            && !a.contains(char::is_whitespace)
            && !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            && secret_name(name)
            && !value.is_empty()
        {
            out.push(format!("{name}={}", redact_whole(value, found)));
            continue;
        }
        // Everything else is text: `--api-key=X`, `HF_TOKEN=X`, `Authorization: Bearer X`, a
        // shell script, a URL with a password, an `sk-…` key.
        out.push(text_into(a, found));
    }
    out
}

/// What the previous word asked of the next one.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pending {
    None,
    /// The next word is a secret value.
    Value,
    /// After `Authorization:`: an optional scheme word, then the credential.
    Credential,
}

fn text_into(s: &str, found: &mut Vec<String>) -> String {
    let mut out = String::with_capacity(s.len());
    let mut pending = Pending::None;
    let mut rest = s;
    while !rest.is_empty() {
        let space = rest.len() - rest.trim_start().len();
        if space > 0 {
            out.push_str(&rest[..space]);
            rest = &rest[space..];
            continue;
        }
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        out.push_str(&word(&rest[..end], &mut pending, found));
        rest = &rest[end..];
    }
    out
}

const LEAD: &[char] = &['"', '\'', '(', '[', '{', '`'];
const TRAIL: &[char] = &['"', '\'', ')', ']', '}', ',', ';', '`'];

/// One whitespace-delimited word of text.
fn word(w: &str, pending: &mut Pending, found: &mut Vec<String>) -> String {
    let core_start = w.len() - w.trim_start_matches(LEAD).len();
    let lead = &w[..core_start];
    let rest = &w[core_start..];
    let core = rest.trim_end_matches(TRAIL);
    let trail = &rest[core.len()..];

    let was = std::mem::replace(pending, Pending::None);
    if was != Pending::None && !core.is_empty() && !is_flag(core) {
        if was == Pending::Credential && is_scheme(core) {
            *pending = Pending::Value;
            return w.to_string();
        }
        return format!("{lead}{}{trail}", redact_value(core, found));
    }
    // NAME=VALUE (with or without dashes).
    if let Some((before, value)) = core.split_once('=') {
        let name = name_tail(before);
        if !name.is_empty() && secret_name(name) {
            if value.is_empty() {
                // `--api-key= VALUE`, `KEY= VALUE`.
                *pending = Pending::Value;
                return w.to_string();
            }
            if is_scheme(value) {
                *pending = Pending::Value;
                return w.to_string();
            }
            return format!("{lead}{before}={}{trail}", redact_value(value, found));
        }
    }
    // `NAME:` (a header, a YAML or dict key) and its value in the next word; `NAME:VALUE`.
    if let Some((before, value)) = core.split_once(':')
        && !before.is_empty()
        && !value.starts_with("//")
    {
        let name = name_tail(before);
        if !name.is_empty() && secret_name(name) {
            let credential = name.eq_ignore_ascii_case("authorization")
                || name.eq_ignore_ascii_case("proxy-authorization");
            let value = value.trim_start_matches(['\'', '"']);
            if credential && is_scheme(value) {
                *pending = Pending::Value;
                return w.to_string();
            }
            if value.is_empty() {
                *pending = if credential {
                    Pending::Credential
                } else {
                    Pending::Value
                };
                return w.to_string();
            }
            let at = core.len() - value.len();
            return format!("{lead}{}{}{trail}", &core[..at], redact_value(value, found));
        }
    }
    if is_flag(core) && !core.contains('=') && secret_name(core) {
        *pending = Pending::Value;
        return w.to_string();
    }
    if core.eq_ignore_ascii_case("bearer") {
        *pending = Pending::Value;
        return w.to_string();
    }
    scrub(w, found)
}

/// The name at the end of `s`: `Namespace(api_key` → `api_key`, `'api_key'` → `api_key`,
/// `--api-key` → `--api-key`.
fn name_tail(s: &str) -> &str {
    let s = s.trim_end_matches(['\'', '"']);
    // Past the whole boundary character: it may be more than one byte (`§`, `—`).
    let start = s
        .char_indices()
        .rfind(|(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .map_or(0, |(i, c)| i + c.len_utf8());
    &s[start..]
}

fn is_flag(s: &str) -> bool {
    let mut c = s.chars();
    c.next() == Some('-')
        && c.next()
            .is_some_and(|x| x.is_ascii_alphabetic() || x == '-')
        && s != "--"
}

fn is_scheme(s: &str) -> bool {
    ["bearer", "basic", "token", "digest"]
        .iter()
        .any(|k| s.eq_ignore_ascii_case(k))
}

/// A value that is all secret (an environment value, an argument after a secret flag).
fn redact_whole(v: &str, found: &mut Vec<String>) -> String {
    if v.is_empty() || matches!(v, "None" | "none" | "null" | "NULL" | "~" | REDACTED) {
        return v.to_string();
    }
    found.push(v.to_string());
    REDACTED.to_string()
}

/// A secret value in a word of text, its surrounding quotes and brackets kept: `'sk-…'` → `'<redacted>'`.
fn redact_value(v: &str, found: &mut Vec<String>) -> String {
    let l = v.len() - v.trim_start_matches(LEAD).len();
    let r = v.len() - v.trim_end_matches(TRAIL).len();
    if l + r >= v.len() {
        return v.to_string();
    }
    let inner = &v[l..v.len() - r];
    if matches!(inner, "None" | "none" | "null" | "NULL" | "~" | REDACTED) {
        return v.to_string();
    }
    found.push(inner.to_string());
    format!("{}{REDACTED}{}", &v[..l], &v[v.len() - r..])
}

/// The name-independent rules on one word: URL passwords, `sk-…` and `hf_…` values.
fn scrub(w: &str, found: &mut Vec<String>) -> String {
    shaped(&url_passwords(w, found), found)
}

fn url_passwords(s: &str, found: &mut Vec<String>) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        let end = tail
            .find(|c: char| matches!(c, '/' | '?' | '#' | '"' | '\'') || c.is_whitespace())
            .unwrap_or(tail.len());
        let authority = &tail[..end];
        match authority.rfind('@').and_then(|at| {
            let colon = authority[..at].find(':')?;
            Some((colon, at))
        }) {
            Some((colon, at)) if at > colon + 1 => {
                found.push(authority[colon + 1..at].to_string());
                out.push_str(&authority[..=colon]);
                out.push_str(REDACTED);
                out.push_str(&authority[at..]);
            }
            _ => out.push_str(authority),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// `sk-…` and `hf_…` values at a word boundary.
fn shaped(s: &str, found: &mut Vec<String>) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut copied = 0;
    let mut i = 0;
    while i < b.len() {
        let boundary = i == 0 || !b[i - 1].is_ascii_alphanumeric();
        let run = if !boundary {
            0
        } else if b[i..].starts_with(b"sk-") {
            let n = b[i + 3..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric() || **c == b'-' || **c == b'_')
                .count();
            if n >= SK_MIN { 3 + n } else { 0 }
        } else if b[i..].starts_with(b"hf_") {
            let n = b[i + 3..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric())
                .count();
            if n >= HF_MIN { 3 + n } else { 0 }
        } else {
            0
        };
        if run > 0 {
            // The prefix and the run are ASCII: `i` and `i + run` are char boundaries.
            out.push_str(&s[copied..i]);
            out.push_str(REDACTED);
            found.push(s[i..i + run].to_string());
            i += run;
            copied = i;
        } else {
            i += 1;
        }
    }
    out.push_str(&s[copied..]);
    out
}

mod seat;
#[cfg(test)]
mod tests;
