//! A command run to its end with a time limit: killed when the limit passes, its stdout and
//! stderr drained on their own threads (bounded), so a chatty child can never block on a full
//! pipe while we wait. One helper for the GPU readings (`nvidia-smi` here and over ssh) and the
//! seats' engine-registry probe.

use std::io::Read;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How much of each pipe is kept.
const PIPE_CAP: u64 = 4 << 20;

/// What a bounded run left.
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

#[derive(Debug, thiserror::Error)]
pub enum BoundedError {
    #[error("cannot run {program} ({source})")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    #[error("{program} did not answer in {} s (killed)", .limit.as_secs())]
    Timeout { program: String, limit: Duration },
    #[error("waiting for {program}: {source}")]
    Wait {
        program: String,
        source: std::io::Error,
    },
}

/// Run `cmd` (stdin closed) for at most `limit`.
pub fn run_bounded(cmd: &mut Command, limit: Duration) -> Result<Finished, BoundedError> {
    let program = cmd.get_program().to_string_lossy().into_owned();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| BoundedError::Spawn {
            program: program.clone(),
            source,
        })?;
    let drain = |p: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(p) = p {
                let _ = p.take(PIPE_CAP).read_to_end(&mut buf);
            }
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if start.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(BoundedError::Timeout { program, limit });
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(source) => return Err(BoundedError::Wait { program, source }),
        }
    };
    Ok(Finished {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn output_comes_back_and_a_slow_command_is_killed() {
        let f = run_bounded(
            Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]),
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(f.stdout, "out\n");
        assert_eq!(f.stderr, "err\n");
        assert_eq!(f.status.code(), Some(3));
        let e =
            run_bounded(Command::new("sleep").arg("5"), Duration::from_millis(200)).unwrap_err();
        assert!(e.to_string().contains("did not answer"), "{e}");
    }
}
