//! Docker over SSH the way `docker -H ssh://` does it: one `ssh … HOST docker system
//! dial-stdio` per HTTP connection, the Engine API spoken over its stdin and stdout.
//!
//! Why not bollard's own `ssh` feature: it goes through the `openssh` crate, which reads only
//! `~/.ssh/config` (no `ssh -F`, so a fleet cannot name its own ssh_config and a test cannot
//! avoid writing into the operator's `~/.ssh`), accepts unknown host keys into the operator's
//! known_hosts by default, and starts a fresh ControlMaster for every pooled connection. Here
//! the operator's own `ssh` runs with their config, keys, agent and known_hosts, exactly as for
//! `docker -H ssh://`; `BatchMode=yes` makes a missing key an error instead of a password
//! prompt, and `ConnectTimeout` bounds the wait for a host that does not answer.

use std::path::PathBuf;
use std::pin::Pin;
use std::process::Stdio;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bollard::{BollardRequest, Docker};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::watch;

use crate::fleet::docker_host::SshAddress;

/// How long `ssh` may take to open the TCP connection to a host.
pub const SSH_CONNECT_TIMEOUT_S: u64 = 10;
/// How long a failed request waits for ssh's stderr (ssh has exited by then; this only
/// covers the reader task's last wake-up).
const STDERR_WAIT: Duration = Duration::from_secs(2);

/// Where and how to reach one host's engine over ssh.
#[derive(Debug, Clone)]
pub struct SshTarget {
    pub address: SshAddress,
    /// `ssh -F FILE` (the fleet's `ssh_config`); `None`: the operator's own config.
    pub config: Option<PathBuf>,
}

impl SshTarget {
    /// The `ssh` arguments, destination and remote command included.
    pub fn args(&self) -> Vec<String> {
        self.args_running(&["docker", "system", "dial-stdio"])
    }

    /// The `ssh` arguments that run `remote` on the host (its words are joined by the remote
    /// shell, as `ssh HOST CMD…` always does): the same options as the Docker connection, so
    /// `plan`'s GPU readings reach a host exactly the way its engine is reached.
    pub fn args_running(&self, remote: &[&str]) -> Vec<String> {
        let mut a = Vec::new();
        if let Some(c) = &self.config {
            a.push("-F".to_string());
            a.push(c.display().to_string());
        }
        a.extend(
            [
                "-o",
                "BatchMode=yes",
                "-o",
                &format!("ConnectTimeout={SSH_CONNECT_TIMEOUT_S}"),
                "-T",
            ]
            .map(String::from),
        );
        if let Some(p) = self.address.port {
            a.push("-p".to_string());
            a.push(p.to_string());
        }
        // `--` ends the options: a destination can never be read as one.
        a.push("--".to_string());
        a.push(self.address.destination.clone());
        a.extend(remote.iter().map(|w| w.to_string()));
        a
    }
}

/// A Docker client whose every connection is a `docker system dial-stdio` over ssh.
pub fn connect(
    target: SshTarget,
    timeout_s: u64,
    version: &bollard::ClientVersion,
) -> Result<Docker, bollard::errors::Error> {
    let (said, _) = watch::channel(None::<String>);
    let said = Arc::new(said);
    let connector = DialStdio {
        target: Arc::new(target.clone()),
        said: said.clone(),
    };
    let client = Arc::new(Client::builder(TokioExecutor::new()).build(connector));
    let dest = target.address.destination.clone();
    let transport = move |req: BollardRequest| {
        let client = client.clone();
        let said = said.clone();
        let dest = dest.clone();
        async move {
            let e = match client.request(req).await {
                Ok(r) => return Ok(r),
                Err(e) => e,
            };
            // hyper only sees a closed pipe; what ssh said on stderr is the reason. Its reader
            // finishes when ssh exits, which is about when the pipe closed: wait for it, bounded.
            let mut rx = said.subscribe();
            let text = tokio::time::timeout(STDERR_WAIT, rx.wait_for(Option::is_some))
                .await
                .ok()
                .and_then(Result::ok)
                .and_then(|v| v.clone())
                .unwrap_or_default();
            match text.trim().lines().last() {
                Some(line) if !line.is_empty() => Err(bollard::errors::Error::IOError {
                    err: std::io::Error::other(format!("ssh {dest}: {line}")),
                }),
                _ => Err(bollard::errors::Error::from(e)),
            }
        }
    };
    // The URL is a placeholder (`docker -H ssh://` sends one too): the connector ignores it.
    Docker::connect_with_custom_transport(
        transport,
        Some("http://docker.example.com"),
        timeout_s,
        version,
    )
}

#[derive(Clone)]
struct DialStdio {
    target: Arc<SshTarget>,
    /// The last connection's ssh stderr once ssh exited, for the error message.
    said: Arc<watch::Sender<Option<String>>>,
}

impl tower_service::Service<http::Uri> for DialStdio {
    type Response = TokioIo<SshStream>;
    type Error = std::io::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: http::Uri) -> Self::Future {
        let target = self.target.clone();
        let said = self.said.clone();
        Box::pin(async move {
            let mut child = tokio::process::Command::new("ssh")
                .args(target.args())
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                // A connection hyper drops takes its ssh with it.
                .kill_on_drop(true)
                .spawn()
                .map_err(|e| {
                    std::io::Error::other(format!("cannot run ssh: {e} (install openssh-client)"))
                })?;
            let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
                return Err(std::io::Error::other("ssh started without pipes"));
            };
            if let Some(err) = child.stderr.take() {
                said.send_replace(None);
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    // Bounded: ssh's own diagnostics are a few lines.
                    let _ = err.take(64 * 1024).read_to_end(&mut buf).await;
                    said.send_replace(Some(String::from_utf8_lossy(&buf).into_owned()));
                });
            }
            Ok(TokioIo::new(SshStream {
                _child: child,
                stdin,
                stdout,
            }))
        })
    }
}

/// One ssh child as a byte stream: its stdout read, its stdin written.
struct SshStream {
    _child: Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
}

impl Connection for SshStream {
    fn connected(&self) -> Connected {
        Connected::new()
    }
}

impl AsyncRead for SshStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stdout).poll_read(cx, buf)
    }
}

impl AsyncWrite for SshStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stdin).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stdin).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stdin).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssh_runs_in_batch_mode_with_a_timeout_and_the_fleet_config() {
        let t = SshTarget {
            address: SshAddress {
                destination: "ops@gpu2".into(),
                port: Some(2222),
            },
            config: Some(PathBuf::from("/etc/bakeoff/ssh_config")),
        };
        assert_eq!(
            t.args().join(" "),
            "-F /etc/bakeoff/ssh_config -o BatchMode=yes -o ConnectTimeout=10 -T -p 2222 -- ops@gpu2 docker system dial-stdio"
        );
    }
}
