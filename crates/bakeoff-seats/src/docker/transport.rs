//! How bakeoff reaches a host's Docker engine, by the host's `docker` key: this machine's
//! socket (no key), `unix://`, plain `tcp://`/`http://`, `tcp://` with `tls = {…}` (what
//! `docker --tlsverify -H tcp://…:2376` does, through bollard's rustls client), or `ssh://`
//! (`docker system dial-stdio` over the operator's `ssh`, see [`super::ssh`]).

use bollard::Docker;

use crate::fleet::docker_host::{SshAddress, SshAddressError};
use crate::fleet::types::Host;

use super::ssh::SshTarget;

/// The API version the client speaks (Docker 20.10 = 1.41).
pub const DOCKER_API: bollard::ClientVersion = bollard::ClientVersion {
    major_version: 1,
    minor_version: 41,
};
/// The timeout of one Engine API request (bollard's own is per request).
const REQUEST_TIMEOUT_S: u64 = 30;

/// What the address is called in messages: never the raw `ssh://` URL (the parser refuses a
/// password in it, but a message has no business repeating credentials-shaped text).
pub fn label(host: Option<&Host>) -> String {
    match host.and_then(|h| h.docker.as_deref()) {
        None => "/var/run/docker.sock".into(),
        Some(a) => crate::redact::text(a),
    }
}

/// Why no Docker engine could be reached (one line, naming the address as [`label`] gives it).
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error(transparent)]
    Address(#[from] SshAddressError),
    #[error("cannot connect to {label}: {source}")]
    Connect {
        label: String,
        source: bollard::errors::Error,
    },
    /// `hint` says what to check, by transport.
    #[error("no Docker engine answers at {label}: {} ({hint})", chain(source))]
    NoAnswer {
        label: String,
        source: bollard::errors::Error,
        hint: &'static str,
    },
}

/// A client for `host`'s engine (`None` or no `docker` key: this machine's socket), its API
/// version negotiated: an error when nothing answers.
pub async fn connect(host: Option<&Host>) -> Result<Docker, ConnectError> {
    let label = label(host);
    let api = &DOCKER_API;
    let d = match host.and_then(|h| h.docker.as_deref()) {
        None => Docker::connect_with_unix("unix:///var/run/docker.sock", REQUEST_TIMEOUT_S, api),
        Some(a) if a.starts_with("unix://") => Docker::connect_with_unix(a, REQUEST_TIMEOUT_S, api),
        Some(a) if a.starts_with("ssh://") => {
            let target = SshTarget {
                address: SshAddress::parse(a)?,
                config: host.and_then(|h| h.ssh_config.clone()),
            };
            super::ssh::connect(target, REQUEST_TIMEOUT_S, api)
        }
        Some(a) => match host.and_then(|h| h.tls.as_ref()) {
            Some(t) => Docker::connect_with_ssl(a, &t.key, &t.cert, &t.ca, REQUEST_TIMEOUT_S, api),
            None => Docker::connect_with_http(a, REQUEST_TIMEOUT_S, api),
        },
    }
    .map_err(|source| ConnectError::Connect {
        label: label.clone(),
        source,
    })?;
    // What to check, by transport: over ssh the login and the remote docker CLI come first.
    let hint = if label.starts_with("ssh://") {
        "check that `ssh USER@HOST docker version` works without a prompt"
    } else {
        "is dockerd running?"
    };
    // Negotiation only lowers the version (an older daemon); it fails when nothing answers.
    d.negotiate_version()
        .await
        .map_err(|source| ConnectError::NoAnswer {
            label,
            source,
            hint,
        })
}

/// An `ssh` command that runs `remote` on an `ssh://` host, with the options its Docker
/// connection uses (`BatchMode`, `ConnectTimeout`, the fleet's `ssh_config`, the port): how
/// `plan` reads a remote host's GPUs. An error for a host that is not `ssh://`. The caller
/// bounds the wait (ssh's `ConnectTimeout` covers only the TCP connect).
pub fn ssh_command(host: &Host, remote: &[&str]) -> Result<std::process::Command, SshCommandError> {
    let Some(a) = host.docker.as_deref().filter(|a| a.starts_with("ssh://")) else {
        return Err(SshCommandError::NotSsh(host.name.clone()));
    };
    let target = SshTarget {
        address: SshAddress::parse(a)?,
        config: host.ssh_config.clone(),
    };
    let mut c = std::process::Command::new("ssh");
    c.args(target.args_running(remote));
    Ok(c)
}

/// Why no `ssh` command could be built for a host.
#[derive(Debug, thiserror::Error)]
pub enum SshCommandError {
    #[error("host {0:?} is not reached over ssh (docker = \"ssh://USER@HOST\")")]
    NotSsh(String),
    #[error(transparent)]
    Address(#[from] crate::fleet::SshAddressError),
}

/// An error with its causes: hyper says only "client error (Connect)"; the cause below it is
/// the reason an operator can act on (connection refused, `invalid peer certificate:
/// UnknownIssuer`).
fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let s = c.to_string();
        if !out.contains(&s) {
            out.push_str(": ");
            out.push_str(&s);
        }
        cur = c.source();
    }
    out
}
