//! The container's log: followed (reopened across restarts, from the last timestamp seen) and
//! its tail; every line redacted.

use std::time::Duration;

use bollard::query_parameters::LogsOptions;
use futures_util::StreamExt;
use tokio::sync::mpsc;

use super::DockerBackend;
use crate::observed::LineSplitter;

impl DockerBackend {
    pub fn follow(&self, tx: mpsc::Sender<String>) -> tokio::task::JoinHandle<()> {
        let docker = self.docker.clone();
        let name = self.name.clone();
        let redactor = self.redactor.clone();
        tokio::spawn(async move {
            // With timestamps=true each line starts with an RFC 3339 timestamp. A reopened
            // stream resumes at `since` (1-second resolution), so lines at or before the last
            // timestamp already sent are dropped (compared as times: Docker trims trailing
            // zeros of the fraction, so the text does not sort).
            type Ts = chrono::DateTime<chrono::FixedOffset>;
            let mut last: Option<Ts> = None;
            let mut since: i32 = 0;
            loop {
                let mut stream = docker.logs(
                    &name,
                    Some(LogsOptions {
                        follow: true,
                        stdout: true,
                        stderr: true,
                        since,
                        timestamps: true,
                        tail: "all".into(),
                        ..Default::default()
                    }),
                );
                let resumed_after = last;
                let mut split = LineSplitter::default();
                let mut pending = Vec::new();
                loop {
                    let item = stream.next().await;
                    let ended = !matches!(item, Some(Ok(_)));
                    if let Some(Ok(out)) = item {
                        split.push(&out.into_bytes(), &mut pending);
                    } else if let Some(l) = split.finish() {
                        pending.push(l);
                    }
                    for l in pending.drain(..) {
                        let parsed = l
                            .split_once(' ')
                            .and_then(|(ts, text)| Some((Ts::parse_from_rfc3339(ts).ok()?, text)));
                        let text = match parsed {
                            Some((ts, text)) => {
                                if resumed_after.is_some_and(|r| ts <= r) {
                                    continue;
                                }
                                last = Some(ts);
                                text.to_string()
                            }
                            // A `\r`-split continuation carries no timestamp of its own.
                            None => l,
                        };
                        if tx.send(redactor.text(&text)).await.is_err() {
                            return;
                        }
                    }
                    if ended {
                        break;
                    }
                }
                if tx.is_closed() {
                    return;
                }
                if let Some(t) = last {
                    since = i32::try_from(t.timestamp()).unwrap_or(0);
                }
                // The stream ended: the container stopped (maybe to be restarted). Reopen.
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        })
    }

    pub async fn tail(&self, n: usize) -> Vec<String> {
        let mut stream = self.docker.logs(
            &self.name,
            Some(LogsOptions {
                follow: false,
                stdout: true,
                stderr: true,
                tail: n.to_string(),
                ..Default::default()
            }),
        );
        let mut split = LineSplitter::default();
        let mut lines = Vec::new();
        while let Some(Ok(out)) = stream.next().await {
            split.push(&out.into_bytes(), &mut lines);
        }
        split.tail(lines, n, &self.redactor)
    }
}
