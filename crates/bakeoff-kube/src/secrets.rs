//! A seat's environment and arguments with every secret moved out of the manifest. The rule of
//! what is secret is the seats crate's one rule (`bakeoff_seats::redact`, docs/fleet.md
//! "Secrets"): where it would print `<redacted>`, the manifest gets a reference instead.
//!
//! - An environment variable whose value is secret: `valueFrom.secretKeyRef` to the seat's
//!   Secret, key = the variable's name.
//! - An argument that is secret (the value after `--api-key`, a script holding a token): an
//!   environment variable `BAKEOFF_SECRET_ARG_<i>` from the Secret (key `arg-<i>`), and the
//!   argument becomes `$(BAKEOFF_SECRET_ARG_<i>)`, which the kubelet expands; `--flag=VALUE`
//!   keeps its flag visible and only VALUE moves.
//!
//! The kubelet also expands `$(NAME)` in every other argument and environment value, which
//! Docker never did: those are escaped (`$` doubled) so the engine sees what the fleet file says.

use std::collections::BTreeMap;

use bakeoff_seats::Seat;
use bakeoff_seats::fleet::DockerLaunch;
use bakeoff_seats::redact::{self, REDACTED, Redactor};
use k8s_openapi::api::core::v1::{EnvVar, EnvVarSource, SecretKeySelector};

use crate::names::secret_key;

/// One key of a seat's Secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretKey {
    pub key: String,
    /// What it holds, in words (`env HF_TOKEN`, `argument 5, after --api-key`); never the value.
    pub holds: String,
}

/// A seat's container environment and arguments, secrets by reference.
#[derive(Debug, Default)]
pub(crate) struct Split {
    pub env: Vec<EnvVar>,
    pub args: Vec<String>,
    pub keys: Vec<SecretKey>,
    /// The container's environment variable that holds the engine's API key, for the probe.
    pub api_key_var: Option<String>,
}

/// The Secret a seat's secret values come from.
pub(crate) fn secret_name(seat: &str) -> String {
    format!("{seat}-secrets")
}

/// Environment variables engines read their API key from (vLLM, llama-server): the probe must
/// send that key.
const API_KEY_ENV: &[&str] = &["VLLM_API_KEY", "LLAMA_API_KEY", "LLAMA_ARG_API_KEY"];

pub(crate) fn split(seat: &Seat, d: &DockerLaunch) -> Split {
    let secret = secret_name(&seat.name);
    // The structural rules plus every secret value of the seat's configuration wherever it
    // appears verbatim: what `seat status` would redact is exactly what moves out.
    let redactor = Redactor::for_seat(seat);
    let mut out = Split::default();

    let red_env = redact::env(&d.env);
    for (name, value) in &d.env {
        let secret_value = red_env.get(name) != Some(value) || redactor.text(value) != *value;
        if secret_value {
            let key = secret_key(name);
            out.env.push(from_secret(name, &secret, &key));
            out.keys.push(SecretKey {
                key,
                holds: format!("env {name}"),
            });
            if API_KEY_ENV.contains(&name.as_str()) && out.api_key_var.is_none() {
                out.api_key_var = Some(name.clone());
            }
        } else {
            out.env.push(EnvVar {
                name: name.clone(),
                value: Some(escape(value)),
                ..Default::default()
            });
        }
    }

    // The Docker backend fills `{port}`, `{seat}`, `{cache}` in the command: so does this.
    let cmd: Vec<String> = d
        .command
        .iter()
        .map(|c| bakeoff_seats::process::substitute(c, seat))
        .collect();
    let red_args = redact::args(&cmd);
    let mut arg_env = BTreeMap::new();
    for (i, (arg, red)) in cmd.iter().zip(&red_args).enumerate() {
        if arg == red && redactor.text(arg) == *arg {
            out.args.push(escape(arg));
            continue;
        }
        let var = format!("BAKEOFF_SECRET_ARG_{i}");
        let key = format!("arg-{i}");
        let prev = i.checked_sub(1).and_then(|p| cmd.get(p));
        let after_key_flag = prev.is_some_and(|p| is_api_key_flag(p));
        let holds = match prev {
            Some(p) if p.starts_with('-') => format!("argument {i}, after {p}"),
            _ => format!("argument {i}"),
        };
        match arg.split_once('=') {
            Some((flag, _)) if *red == format!("{flag}={REDACTED}") => {
                out.args.push(format!("{}=$({var})", escape(flag)));
                if is_api_key_flag(flag) && out.api_key_var.is_none() {
                    out.api_key_var = Some(var.clone());
                }
                out.keys.push(SecretKey {
                    key: key.clone(),
                    holds: format!("argument {i}, the value of {flag}="),
                });
            }
            _ => {
                out.args.push(format!("$({var})"));
                if after_key_flag && out.api_key_var.is_none() {
                    out.api_key_var = Some(var.clone());
                }
                out.keys.push(SecretKey {
                    key: key.clone(),
                    holds,
                });
            }
        }
        arg_env.insert(i, from_secret(&var, &secret, &key));
    }
    // After the fleet's own variables: a `$(NAME)` reference only sees variables defined
    // before it, and these names cannot collide with an engine's.
    out.env.extend(arg_env.into_values());
    out
}

/// `--api-key` as vLLM, SGLang and llama-server spell it.
fn is_api_key_flag(a: &str) -> bool {
    a == "--api-key"
}

fn from_secret(var: &str, secret: &str, key: &str) -> EnvVar {
    EnvVar {
        name: var.to_string(),
        value_from: Some(EnvVarSource {
            secret_key_ref: Some(SecretKeySelector {
                name: secret.to_string(),
                key: key.to_string(),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The kubelet expands `$(NAME)` and turns `$$` into `$`: doubling every `$` gives the engine
/// the text the fleet file holds, whatever follows each `$`.
fn escape(s: &str) -> String {
    s.replace('$', "$$")
}
