//! Queue depth from the engine's Prometheus `/metrics` (parsed by `bakeoff_client::prometheus`, the
//! one parser, whose `ENGINE_GAUGES` is the one table of gauge names). The gauges, by engine:
//!
//! - llama.cpp (`--metrics`; tools/server/server-task.cpp): `llamacpp:requests_deferred` (tasks
//!   waiting for a free slot) and `llamacpp:requests_processing` (slots busy). Without
//!   `--metrics` the server answers 501 "This server does not support metrics endpoint";
//! - vLLM: `vllm:num_requests_waiting` and `vllm:num_requests_running`;
//! - SGLang (`--enable-metrics`): `sglang:num_queue_reqs` and `sglang:num_running_reqs`.
//!
//! The scrape is taken before the tick's probe, so the probe itself is never counted.

use std::time::Duration;

use bakeoff_artifact::monitor::QueueSample;
use bakeoff_client::{Client, RequestError};

/// How long a scrape may take.
pub const SCRAPE_TIMEOUT: Duration = Duration::from_secs(5);

/// Why the queue could not be read (recorded in the sample as its text).
#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    #[error(
        "/metrics answered 501: the engine exposes no metrics \
         (llama.cpp: start it with --metrics; SGLang: --enable-metrics)"
    )]
    NoMetrics,
    #[error("/metrics answered HTTP {0}")]
    Status(u16),
    #[error("/metrics: {0}")]
    Request(#[source] RequestError),
    #[error("/metrics has no llama.cpp, vLLM or SGLang metrics")]
    NoFamily,
    #[error("/metrics: no queue gauges known for {0}")]
    NoGauges(String),
    #[error("/metrics has neither {waiting} nor {running}")]
    NoQueueGauge {
        waiting: &'static str,
        running: &'static str,
    },
}

/// The queue now, or why it cannot be read.
pub async fn read(client: &Client) -> Result<QueueSample, QueueError> {
    let url = client.url().root_path("metrics");
    match client.get_text(url, SCRAPE_TIMEOUT).await {
        Ok((200, text)) => from_text(&text),
        Ok((501, _)) => Err(QueueError::NoMetrics),
        Ok((status, _)) => Err(QueueError::Status(status)),
        Err(e) => Err(QueueError::Request(e)),
    }
}

/// The queue gauges of a scrape's text.
pub fn from_text(text: &str) -> Result<QueueSample, QueueError> {
    let scrape = bakeoff_client::prometheus::parse(text);
    let family = scrape.family().ok_or(QueueError::NoFamily)?;
    // The one table of engine gauges, shared with `bench run`'s gauge sampler.
    let g = bakeoff_client::prometheus::engine_gauges(family)
        .ok_or_else(|| QueueError::NoGauges(family.to_string()))?;
    let name = |names: &[&'static str]| names.first().copied().unwrap_or("?");
    let (waiting, running) = (name(g.waiting), name(g.running));
    let w = scrape.first_of(g.waiting).map(|x| x.1);
    let r = scrape.first_of(g.running).map(|x| x.1);
    if w.is_none() && r.is_none() {
        return Err(QueueError::NoQueueGauge { waiting, running });
    }
    Ok(QueueSample {
        waiting: w,
        running: r,
        source: format!("/metrics {waiting}, {running}"),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Lines as llama-server b11434 prints them (server-task.cpp: `# HELP`, `# TYPE`, then
    /// `llamacpp:NAME VALUE`).
    const LLAMA: &str = "# HELP llamacpp:requests_processing Number of requests processing.\n\
# TYPE llamacpp:requests_processing gauge\n\
llamacpp:requests_processing 1\n\
# HELP llamacpp:requests_deferred Number of requests deferred.\n\
# TYPE llamacpp:requests_deferred gauge\n\
llamacpp:requests_deferred 3\n";

    /// vLLM's gauges carry labels (engine, model_name); summed over them.
    const VLLM: &str = "# TYPE vllm:num_requests_waiting gauge\n\
vllm:num_requests_waiting{engine=\"0\",model_name=\"m\"} 2.0\n\
vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 5.0\n";

    #[test]
    fn each_engine_s_gauges_are_read() {
        let q = from_text(LLAMA).unwrap();
        assert_eq!((q.waiting, q.running), (Some(3.0), Some(1.0)));
        assert!(q.source.contains("llamacpp:requests_deferred"));
        let q = from_text(VLLM).unwrap();
        assert_eq!((q.waiting, q.running), (Some(2.0), Some(5.0)));
        assert!(from_text("# nothing\n").is_err());
    }
}
