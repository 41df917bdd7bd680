//! A seat that serves HTTPS (docs/fleet.md "Seats behind TLS"): its probes, status, the
//! monitor and a campaign's measurements then speak `https://` to it, trusting the system's
//! roots plus the seat's own `ca_cert`, or nothing at all with `insecure` (recorded).
//!
//! A seat serves HTTPS when the fleet file says so (`[seat.tls]`, for a seat whose TLS sits
//! in a wrapper or its image) or when its engine is told to in its own arguments: vLLM's
//! `--ssl-certfile` (vLLM 0.32.0 `vllm/entrypoints/launchers/cli_args.py` `ssl_certfile`, uvicorn's TLS) and
//! llama.cpp's `--ssl-cert-file` (b11434 `common/arg.cpp`, a build with `LLAMA_OPENSSL`). A
//! seat started with a certificate and probed over `http://` would never answer a probe, and
//! its start would read as `not-ready` after the whole timeout.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::launch::Launch;

/// How bakeoff trusts a seat's HTTPS (`[seat.tls]`); present means the seat serves HTTPS.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatTls {
    /// A private CA (PEM) trusted beside the system's roots: relative to the fleet file's
    /// directory as written, resolved and checked at parse.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_cert: Option<PathBuf>,
    /// Accept the seat's certificate without verifying it.
    #[serde(default)]
    pub insecure: bool,
}

impl SeatTls {
    /// As bakeoff's client takes it.
    pub fn options(&self) -> bakeoff_client::tls::TlsOptions {
        bakeoff_client::tls::TlsOptions {
            ca_cert: self.ca_cert.clone(),
            insecure: self.insecure,
        }
    }
}

/// `[seat.tls]` as written.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "SeatTls")]
pub(super) struct RawSeatTls {
    /// A private CA (PEM) trusted beside the system's roots, relative to the fleet file.
    ca_cert: Option<PathBuf>,
    /// Accept the seat's certificate without verifying it (recorded).
    #[serde(default)]
    insecure: bool,
}

/// The engines' own flags that make them serve HTTPS with a certificate file.
const ENGINE_CERT_FLAGS: &[&str] = &["--ssl-certfile", "--ssl-cert-file"];

/// The engine flag in `args` that makes the seat serve HTTPS, if any.
pub fn engine_cert_flag(args: &[String]) -> Option<&'static str> {
    ENGINE_CERT_FLAGS
        .iter()
        .copied()
        .find(|f| bakeoff_model::args::flag_value(args, &[f]).is_some())
}

/// The engine's arguments as the seat passes them (a process's args, a container's command).
fn launch_args(launch: &Launch) -> &[String] {
    match launch {
        Launch::Process(p) => &p.args,
        Launch::Docker(d) => &d.command,
    }
}

/// The seat's TLS: `[seat.tls]` as written, or the system's roots when only the engine's own
/// arguments ask for a certificate.
pub(super) fn of(raw: Option<&RawSeatTls>, launch: &Launch) -> Option<SeatTls> {
    match raw {
        Some(r) => Some(SeatTls {
            ca_cert: r.ca_cert.clone(),
            insecure: r.insecure,
        }),
        None => engine_cert_flag(launch_args(launch)).map(|_| SeatTls::default()),
    }
}

/// A seat's `[seat.tls]` whose CA cannot be used (the seat named).
#[derive(Debug, thiserror::Error)]
#[error("seat {seat:?}: [seat.tls] {}", why(source))]
pub struct SeatTlsError {
    pub seat: String,
    pub source: bakeoff_client::tls::TlsError,
}

/// What is wrong with the CA, in the fleet file's words (`ca_cert`, not the flag `--ca-cert`).
fn why(e: &bakeoff_client::tls::TlsError) -> String {
    match e {
        bakeoff_client::tls::TlsError::CaCert { path, message } => format!(
            "ca_cert {path}: {message}; give a PEM file with the CA's certificate (BEGIN CERTIFICATE)"
        ),
        other => other.to_string(),
    }
}

/// Resolve seat `seat`'s `ca_cert` against `dir` (the fleet file's directory) and check it is a
/// usable PEM now, so a typo fails the parse, not the first probe after a start.
pub(super) fn resolve(seat: &str, tls: &mut SeatTls, dir: &Path) -> Result<(), SeatTlsError> {
    if let Some(p) = tls.ca_cert.as_mut() {
        *p = dir.join(&*p);
    }
    bakeoff_client::tls::Tls::new(&tls.options())
        .map(|_| ())
        .map_err(|source| SeatTlsError {
            seat: seat.to_string(),
            source,
        })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_engines_own_certificate_flags_are_seen_in_both_forms() {
        assert_eq!(
            engine_cert_flag(&args(&["--model", "/m", "--ssl-certfile", "/c.pem"])),
            Some("--ssl-certfile")
        );
        assert_eq!(
            engine_cert_flag(&args(&["-m", "x.gguf", "--ssl-cert-file=/c.pem"])),
            Some("--ssl-cert-file")
        );
        assert_eq!(engine_cert_flag(&args(&["--ssl-keyfile", "/k"])), None);
        assert_eq!(engine_cert_flag(&args(&["--port", "8080"])), None);
    }
}
