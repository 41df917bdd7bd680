//! A host's Docker address as the fleet file writes it (`docker = "…"`, `tls = {…}`,
//! `ssh_config = "…"`), checked at parse: the transport is known, an `ssh://` address carries
//! no password, and every certificate or config file named exists (docs/fleet.md
//! `[hosts.NAME]`). The connection itself is `crate::docker::transport`'s.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// `tls = { ca = "…", cert = "…", key = "…" }`: the files `docker --tlsverify` uses, resolved
/// against the fleet file's directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TlsFiles {
    pub ca: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// A host's `[hosts.NAME]` entry the fleet file cannot have (each names the host and the fix).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HostInvalid {
    #[error(
        "host {host:?}: tls and ssh_config need a docker address (docker = \"tcp://HOST:2376\" or \"ssh://USER@HOST\")"
    )]
    KeysWithoutDocker { host: String },
    #[error(
        "host {host:?}: tls needs docker = \"tcp://HOST:2376\" (a {scheme}:// address is not TLS)"
    )]
    TlsNotTcp { host: String, scheme: String },
    #[error("host {host:?}: tls is for tcp:// addresses; ssh:// is already encrypted: drop tls")]
    TlsOverSsh { host: String },
    /// `docker` as written, redacted.
    #[error(
        "host {host:?}: docker = {docker:?} must start with unix://, tcp://, http:// or ssh://"
    )]
    Scheme { host: String, docker: String },
    #[error(
        "host {host:?}: ssh_config is for ssh:// addresses: drop it or use docker = \"ssh://USER@HOST\""
    )]
    SshConfigNotSsh { host: String },
    #[error(
        "host {host:?}: docker = an ssh:// address that does not parse ({source}); write ssh://USER@HOST[:PORT]"
    )]
    SshUnparsable {
        host: String,
        source: url::ParseError,
    },
    // Never echo the address back here: it may hold the password being refused.
    #[error(
        "host {host:?}: the ssh:// address holds a password; bakeoff never sends one: use a key (ssh-agent or IdentityFile) and write docker = \"ssh://USER@HOST\""
    )]
    SshPassword { host: String },
    #[error("host {host:?}: docker = {docker:?} names no host; write ssh://USER@HOST[:PORT]")]
    SshNoHost { host: String, docker: String },
    #[error(
        "host {host:?}: docker = {docker:?} has a path; write ssh://USER@HOST[:PORT] (the remote's docker CLI picks its own socket)"
    )]
    SshPath { host: String, docker: String },
    /// `key` (`tls.ca`, `ssh_config`, …) names no file; `path` as resolved.
    #[error(
        "host {host:?}: {key} {} is not a file (fix the path; a relative path is relative to the fleet file)",
        path.display()
    )]
    NotAFile {
        host: String,
        key: &'static str,
        path: PathBuf,
    },
    #[error("host {host:?}: gpu_memory_gib = {gib} must be a size in GiB above 0 (e.g. 80)")]
    GpuMemory { host: String, gib: f64 },
}

/// A host's checked Docker keys.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct DockerKeys {
    pub docker: Option<String>,
    pub tls: Option<TlsFiles>,
    pub ssh_config: Option<PathBuf>,
}

/// Check host `name`'s `docker`, `tls` and `ssh_config` keys; relative paths are relative to
/// `dir`, the fleet file's directory.
pub(super) fn check(
    name: &str,
    docker: Option<&str>,
    tls: Option<&TlsFiles>,
    ssh_config: Option<&Path>,
    dir: &Path,
) -> Result<DockerKeys, HostInvalid> {
    let host = || name.to_string();
    let Some(d) = docker else {
        if tls.is_some() || ssh_config.is_some() {
            return Err(HostInvalid::KeysWithoutDocker { host: host() });
        }
        return Ok(DockerKeys::default());
    };
    let scheme = d.split_once("://").map(|(s, _)| s).unwrap_or("");
    match scheme {
        "unix" | "http" => {
            if tls.is_some() {
                return Err(HostInvalid::TlsNotTcp {
                    host: host(),
                    scheme: scheme.to_string(),
                });
            }
        }
        "tcp" => {}
        "ssh" => {
            check_ssh(name, d)?;
            if tls.is_some() {
                return Err(HostInvalid::TlsOverSsh { host: host() });
            }
        }
        _ => {
            return Err(HostInvalid::Scheme {
                host: host(),
                docker: crate::redact::text(d),
            });
        }
    }
    if ssh_config.is_some() && scheme != "ssh" {
        return Err(HostInvalid::SshConfigNotSsh { host: host() });
    }
    let tls = tls
        .map(|t| {
            Ok::<_, HostInvalid>(TlsFiles {
                ca: existing(name, "tls.ca", &t.ca, dir)?,
                cert: existing(name, "tls.cert", &t.cert, dir)?,
                key: existing(name, "tls.key", &t.key, dir)?,
            })
        })
        .transpose()?;
    let ssh_config = ssh_config
        .map(|p| existing(name, "ssh_config", p, dir))
        .transpose()?;
    Ok(DockerKeys {
        docker: Some(d.to_string()),
        tls,
        ssh_config,
    })
}

/// An `ssh://[USER@]HOST[:PORT]` address: a host, no password, no path.
fn check_ssh(name: &str, d: &str) -> Result<(), HostInvalid> {
    let host = || name.to_string();
    let url = url::Url::parse(d).map_err(|source| HostInvalid::SshUnparsable {
        host: host(),
        source,
    })?;
    // Never echo the address back here: it may hold the password being refused.
    if url.password().is_some() {
        return Err(HostInvalid::SshPassword { host: host() });
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(HostInvalid::SshNoHost {
            host: host(),
            docker: d.to_string(),
        });
    }
    if !matches!(url.path(), "" | "/") || url.query().is_some() {
        return Err(HostInvalid::SshPath {
            host: host(),
            docker: d.to_string(),
        });
    }
    Ok(())
}

/// `p` resolved against `dir`, refused when no such file exists.
fn existing(name: &str, key: &'static str, p: &Path, dir: &Path) -> Result<PathBuf, HostInvalid> {
    let full = dir.join(p);
    if full.is_file() {
        Ok(full)
    } else {
        Err(HostInvalid::NotAFile {
            host: name.to_string(),
            key,
            path: full,
        })
    }
}

/// A `docker` value that is not an `ssh://[USER@]HOST[:PORT]` address without a password.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SshAddressError {
    #[error("{address:?} is not an ssh://USER@HOST[:PORT] address: {source}")]
    Unparsable {
        address: String,
        source: url::ParseError,
    },
    #[error("not an ssh://USER@HOST[:PORT] address without a password")]
    NotSsh,
    #[error("{address:?} names no host")]
    NoHost { address: String },
}

/// The parts of a checked `ssh://[USER@]HOST[:PORT]` address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshAddress {
    /// `USER@HOST` or `HOST`, as `ssh` takes it.
    pub destination: String,
    pub port: Option<u16>,
}

impl SshAddress {
    pub fn parse(d: &str) -> Result<SshAddress, SshAddressError> {
        let url = url::Url::parse(d).map_err(|source| SshAddressError::Unparsable {
            address: d.to_string(),
            source,
        })?;
        if url.scheme() != "ssh" || url.password().is_some() {
            return Err(SshAddressError::NotSsh);
        }
        let host =
            url.host_str()
                .filter(|h| !h.is_empty())
                .ok_or_else(|| SshAddressError::NoHost {
                    address: d.to_string(),
                })?;
        let destination = match url.username() {
            "" => host.to_string(),
            u => format!("{u}@{host}"),
        };
        Ok(SshAddress {
            destination,
            port: url.port(),
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn dir_with(files: &[&str]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for f in files {
            std::fs::write(d.path().join(f), "x").unwrap();
        }
        d
    }

    #[test]
    fn the_three_transports_parse() {
        let d = dir_with(&["ca.pem", "cert.pem", "key.pem", "ssh_config"]);
        let k = check("a", Some("unix:///run/d.sock"), None, None, d.path()).unwrap();
        assert_eq!(k.docker.as_deref(), Some("unix:///run/d.sock"));
        let tls = TlsFiles {
            ca: "ca.pem".into(),
            cert: "cert.pem".into(),
            key: "key.pem".into(),
        };
        let k = check("b", Some("tcp://10.0.0.5:2376"), Some(&tls), None, d.path()).unwrap();
        assert_eq!(k.tls.unwrap().ca, d.path().join("ca.pem"));
        let k = check(
            "c",
            Some("ssh://ops@gpu2:2222"),
            None,
            Some(Path::new("ssh_config")),
            d.path(),
        )
        .unwrap();
        assert_eq!(k.ssh_config, Some(d.path().join("ssh_config")));
        assert_eq!(
            SshAddress::parse("ssh://ops@gpu2:2222").unwrap(),
            SshAddress {
                destination: "ops@gpu2".into(),
                port: Some(2222)
            }
        );
        assert_eq!(SshAddress::parse("ssh://gpu2").unwrap().destination, "gpu2");
    }

    #[test]
    fn a_password_in_an_ssh_address_is_refused_without_echoing_it() {
        let d = dir_with(&[]);
        let e = check("g", Some("ssh://ops:hunter2@gpu2"), None, None, d.path())
            .unwrap_err()
            .to_string();
        assert!(e.contains("holds a password"), "{e}");
        assert!(e.contains("use a key"), "{e}");
        assert!(!e.contains("hunter2"), "{e}");
    }

    #[test]
    fn a_missing_certificate_is_named() {
        let d = dir_with(&["ca.pem", "cert.pem"]);
        let tls = TlsFiles {
            ca: "ca.pem".into(),
            cert: "cert.pem".into(),
            key: "certs/key.pem".into(),
        };
        let e = check("b", Some("tcp://h:2376"), Some(&tls), None, d.path())
            .unwrap_err()
            .to_string();
        assert!(e.contains("tls.key"), "{e}");
        assert!(e.contains("certs/key.pem"), "{e}");
    }

    #[test]
    fn keys_that_do_not_fit_the_transport_are_refused() {
        let d = dir_with(&["ca.pem", "cert.pem", "key.pem", "cfg"]);
        let tls = TlsFiles {
            ca: "ca.pem".into(),
            cert: "cert.pem".into(),
            key: "key.pem".into(),
        };
        for (addr, tls, cfg, says) in [
            (Some("ssh://u@h"), Some(&tls), None, "drop tls"),
            (Some("unix:///s"), Some(&tls), None, "tls needs"),
            (
                Some("tcp://h:2376"),
                None,
                Some(Path::new("cfg")),
                "ssh_config is for",
            ),
            (None, Some(&tls), None, "need a docker address"),
            (Some("ftp://h"), None, None, "must start with"),
            (
                Some("ssh://u@h/var/run/docker.sock"),
                None,
                None,
                "has a path",
            ),
            (Some("ssh://u@"), None, None, "ssh://USER@HOST"),
        ] {
            let e = check("x", addr, tls, cfg, d.path())
                .unwrap_err()
                .to_string();
            assert!(e.contains(says), "{addr:?}: {e}");
        }
    }
}
