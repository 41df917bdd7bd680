//! A Docker seat's engine build lives in its image. The engine ↔ checkpoint check asks the image
//! itself, through throw-away containers on the local Docker engine (the `docker` CLI, every
//! call bounded in time):
//! - files are read out of a container that is created and never started (`docker create`,
//!   then `docker cp -L ID:PATH -`, a tar stream of one file, read up to a cap), so an image
//!   without a shell or a Python answers too (a llama.cpp image: its `libllama.so` and, when the
//!   model is baked in, the GGUF's header);
//! - vLLM's registry is asked by running the image's `python3` once, with no network
//!   (`docker run --rm --network none --pull never --entrypoint python3`).
//!
//! Nothing is ever pulled for a check: an image that is not on this host is reported as not
//! checked, and the engine checks at its start.

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::command::CommandError;

/// Why the image could not answer a check (one line, naming the image or the file).
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    #[error(
        "the image {0} is not on this host, and a check never pulls it; the engine checks at its start"
    )]
    NotPresent(String),
    #[error("the local Docker engine could not inspect {image}: {source}")]
    Inspect { image: String, source: CommandError },
    #[error("a throw-away container of {image} could not be created: {source}")]
    Create { image: String, source: CommandError },
    #[error("docker cp could not start: {0}")]
    CpStart(#[source] std::io::Error),
    #[error("docker cp gave no output pipe")]
    NoOutputPipe,
    #[error("docker cp gave no error pipe")]
    NoErrorPipe,
    #[error("reading {path} from the image failed: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("reading {path} from the image took over {secs} s")]
    ReadTimeout { path: String, secs: u64 },
    /// `why`: the last line `docker cp` printed on its standard error.
    #[error("{path} is not in the image: {why}")]
    NotInImage { path: String, why: String },
    #[error("{0} could not be read from the image")]
    Unreadable(String),
    #[error("docker cp's answer for {0} is not a tar")]
    NotTar(String),
    #[error("the image's python3 could not be run: {0}")]
    Python(#[source] CommandError),
}

/// `docker create`, `cp` and `rm` of a local image take well under a second; a daemon that
/// does not answer in this long is reported, never waited on.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// A tar header, and the block size of its content.
const BLOCK: usize = 512;

static SERIAL: AtomicU64 = AtomicU64::new(0);

/// A unique container name for one check (process id and a counter).
fn scratch_name(what: &str) -> String {
    format!(
        "bakeoff-check-{what}-{}-{}",
        std::process::id(),
        SERIAL.fetch_add(1, Ordering::Relaxed)
    )
}

/// Run `docker ARGS` to its end within `limit`: its stdout, or why it failed (the daemon's last
/// line).
fn docker(args: &[&str], limit: Duration) -> Result<String, CommandError> {
    let mut cmd = Command::new("docker");
    cmd.args(args);
    super::command::run_with_timeout(cmd, limit)
}

/// Whether `image` is on this host, without pulling it.
pub(super) fn present(image: &str) -> Result<(), ImageError> {
    docker(
        &["image", "inspect", "--format", "{{.Id}}", image],
        CALL_TIMEOUT,
    )
    .map(|_| ())
    .map_err(|why| {
        // The daemon says so only in words (its last line of standard error).
        if why
            .to_string()
            .to_ascii_lowercase()
            .contains("no such image")
        {
            ImageError::NotPresent(image.to_string())
        } else {
            ImageError::Inspect {
                image: image.to_string(),
                source: why,
            }
        }
    })
}

/// The image's entrypoint, first element (`docker image inspect`), when it has one.
pub(super) fn entrypoint(image: &str) -> Option<String> {
    let v = docker(
        &[
            "image",
            "inspect",
            "--format",
            "{{json .Config.Entrypoint}}",
            image,
        ],
        CALL_TIMEOUT,
    )
    .ok()?;
    let list: Option<Vec<String>> = serde_json::from_str(v.trim()).ok()?;
    list?.into_iter().next()
}

/// A container of the image, created but never started, to read files from; removed when
/// dropped.
pub(super) struct Scratch {
    name: String,
}

impl Scratch {
    pub(super) fn create(image: &str) -> Result<Scratch, ImageError> {
        let name = scratch_name("files");
        // The entrypoint is replaced by a name that exists nowhere: the container is never
        // started, and an image without a default command can still be created.
        docker(
            &[
                "create",
                "--pull",
                "never",
                "--network",
                "none",
                "--name",
                &name,
                "--entrypoint",
                "/bakeoff-never-started",
                image,
            ],
            CALL_TIMEOUT,
        )
        .map_err(|source| ImageError::Create {
            image: image.to_string(),
            source,
        })?;
        Ok(Scratch { name })
    }

    /// The first `cap` bytes of the file at `path` in the image (links followed), or why not.
    pub(super) fn read(&self, path: &str, cap: usize) -> Result<Vec<u8>, ImageError> {
        let src = format!("{}:{path}", self.name);
        let mut child = Command::new("docker")
            .args(["cp", "-L", &src, "-"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(ImageError::CpStart)?;
        let Some(stdout) = child.stdout.take() else {
            return Err(ImageError::NoOutputPipe);
        };
        let Some(mut stderr) = child.stderr.take() else {
            return Err(ImageError::NoErrorPipe);
        };
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let r = stdout
                .take((BLOCK + cap) as u64)
                .read_to_end(&mut buf)
                .map(|_| buf);
            let _ = tx.send(r);
        });
        let got = rx.recv_timeout(CALL_TIMEOUT);
        // The stream is cut at the cap: the rest of a large file is never read.
        let _ = child.kill();
        let status = child.wait();
        let buf = match got {
            Ok(Ok(b)) => b,
            Ok(Err(source)) => {
                return Err(ImageError::Read {
                    path: path.to_string(),
                    source,
                });
            }
            Err(_) => {
                return Err(ImageError::ReadTimeout {
                    path: path.to_string(),
                    secs: CALL_TIMEOUT.as_secs(),
                });
            }
        };
        if buf.len() < BLOCK {
            let mut why = String::new();
            let _ = stderr.read_to_string(&mut why);
            let why = why.lines().last().unwrap_or("").trim().to_string();
            return Err(match (status, why.is_empty()) {
                (_, false) => ImageError::NotInImage {
                    path: path.to_string(),
                    why,
                },
                _ => ImageError::Unreadable(path.to_string()),
            });
        }
        tar_file(&buf, cap).ok_or_else(|| ImageError::NotTar(path.to_string()))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = docker(&["rm", "-f", &self.name], CALL_TIMEOUT);
    }
}

/// The content of the one regular file a `docker cp … -` tar stream holds, cut at `cap` bytes:
/// a ustar header (its size in octal at bytes 124–135) followed by the bytes.
fn tar_file(buf: &[u8], cap: usize) -> Option<Vec<u8>> {
    let header = buf.get(..BLOCK)?;
    if &header[257..262] != b"ustar" {
        return None;
    }
    let size_field = std::str::from_utf8(&header[124..136]).ok()?;
    let size = u64::from_str_radix(size_field.trim_matches(|c: char| c == '\0' || c == ' '), 8)
        .ok()? as usize;
    let end = BLOCK + size.min(cap);
    buf.get(BLOCK..end.min(buf.len())).map(<[u8]>::to_vec)
}

/// Run `python3 -c SCRIPT` in a throw-away container of `image` with no network and `env`;
/// its stdout. The container is removed when it ends, or killed when it overruns `limit`.
pub(super) fn run_python(
    image: &str,
    script: &str,
    env: &[(String, String)],
    limit: Duration,
) -> Result<String, ImageError> {
    let name = scratch_name("registry");
    let mut args: Vec<String> = [
        "run",
        "--rm",
        "--pull",
        "never",
        "--network",
        "none",
        "--name",
        &name,
        "--entrypoint",
        "python3",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for (k, v) in env {
        args.push("-e".into());
        args.push(format!("{k}={v}"));
    }
    args.extend([image.to_string(), "-c".into(), script.to_string()]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let start = Instant::now();
    let out = docker(&refs, limit);
    if out.is_err() && start.elapsed() >= limit {
        let _ = docker(&["rm", "-f", &name], CALL_TIMEOUT);
    }
    out.map_err(ImageError::Python)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn tar_of(content: &[u8]) -> Vec<u8> {
        let mut h = vec![0u8; BLOCK];
        h[..4].copy_from_slice(b"file");
        let size = format!("{:011o}\0", content.len());
        h[124..136].copy_from_slice(size.as_bytes());
        h[257..263].copy_from_slice(b"ustar\0");
        h.extend_from_slice(content);
        h.resize(h.len().div_ceil(BLOCK) * BLOCK + 2 * BLOCK, 0);
        h
    }

    #[test]
    fn one_file_is_read_from_a_tar_stream_up_to_the_cap() {
        let t = tar_of(b"\0llama\0gemma3\0");
        assert_eq!(tar_file(&t, 1 << 20).unwrap(), b"\0llama\0gemma3\0");
        assert_eq!(tar_file(&t, 3).unwrap(), b"\0ll");
        // A stream cut short gives what came.
        assert_eq!(tar_file(&t[..BLOCK + 4], 1 << 20).unwrap(), b"\0lla");
        assert!(tar_file(b"not a tar", 10).is_none());
        assert!(tar_file(&[0u8; BLOCK], 10).is_none());
    }
}
