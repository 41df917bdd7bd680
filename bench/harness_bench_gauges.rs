//! `harness-bench --gauge-cost URL` (docs/performance.md "Engine gauges through a step"): the
//! harness's CPU spent sampling a real engine's gauges, the `bench run` sampler alone against
//! `URL` for `--seconds` at `--interval` (default 1 s, `bench run`'s `--gauge-interval`), on one
//! client core. Nothing else runs in the process, so its CPU time over the window is the
//! sampler's: the scrape (a fresh connection each, the control path), the parse of the whole
//! `/metrics` page, the sample kept.

use std::time::{Duration, Instant};

use bakeoff_client::{Client, ClientOptions, EndpointUrl};
use bakeoff_load::gauges::GaugeSampler;

pub fn run(url: &str, secs: u64, interval: Duration) -> Result<serde_json::Value, String> {
    let url = EndpointUrl::parse(url).map_err(|e| e.to_string())?;
    let client =
        Client::try_new(url.clone(), ClientOptions::default()).map_err(|e| e.to_string())?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async {
        // One scrape first, outside the window: the connection set-up and the one-off work of a
        // first call (the system's roots, DNS) are not a sampling cost.
        let warm = GaugeSampler::start(&client, interval);
        warm.finish(Duration::ZERO).await;
        let cpu0 = super::tls_cost::cpu_ns();
        let t0 = Instant::now();
        let sampler = GaugeSampler::start(&client, interval);
        tokio::time::sleep(Duration::from_secs(secs)).await;
        let series = sampler.finish(Duration::ZERO).await;
        let wall = t0.elapsed().as_secs_f64();
        let cpu_ms = (super::tls_cost::cpu_ns().saturating_sub(cpu0)) as f64 / 1e6;
        let n = series.samples.len().max(1) as f64;
        if series.failed as usize == series.samples.len() {
            return Err(format!(
                "no gauge sample was read from {} ({}): nothing measured",
                url.redacted(),
                series.source
            ));
        }
        Ok(serde_json::json!({
            "benchmark": "gauge-sampling-cost",
            "endpoint": url.redacted(),
            "source": series.source,
            "interval_s": interval.as_secs_f64(),
            "window_s": wall,
            "samples": series.samples.len(),
            "failed": series.failed,
            "cpu_ms": cpu_ms,
            "cpu_ms_per_sample": cpu_ms / n,
            "cpu_share_of_one_core": cpu_ms / 1e3 / wall,
        }))
    })
}
