//! What `campaign run` was asked to do: the options the driver (`run.rs`) passes down to each
//! attempt, the recovery and the dry run.

use bakeoff_seats::WatchOptions;

/// What `campaign run` was asked to do.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Displaced production seats may be stopped.
    pub confirm: bool,
    /// Start over: the old files move under `previous-<time>/` first.
    pub fresh: bool,
    /// Only these candidates or variants (empty: all).
    pub only: Vec<String>,
    pub watch: WatchOptions,
    /// The suites' options (thinking, …); the campaign sets `limit` and the context seed.
    pub suite_options: bakeoff_suites::SuiteOptions,
    /// `nvidia-smi` for the memory check's GPU readings.
    pub nvidia_smi: String,
    /// `--allow contaminated`: suggest verdicts for variants measured under contaminated
    /// conditions too (they stay marked); without it those verdicts are withheld.
    pub allow_contaminated: bool,
    /// The harness ceiling, measured once per run when a load step first needs it.
    pub ceilings: Ceilings,
}

/// The harness ceiling against the built-in loopback target, plain and over TLS, each measured
/// once per campaign run when a load step first needs it (as `eval run` and `bench run` measure
/// theirs), so a campaign's throughput steps and tuning trials are flagged `client-bound` near
/// it as theirs are. Shared by every clone of the options.
#[derive(Debug, Clone, Default)]
pub struct Ceilings {
    plain: std::sync::Arc<tokio::sync::OnceCell<bakeoff_artifact::HarnessCeiling>>,
    tls: std::sync::Arc<tokio::sync::OnceCell<bakeoff_artifact::HarnessCeiling>>,
}

impl Ceilings {
    /// The ceiling for an endpoint of this scheme, measured on the first call. A measurement
    /// that fails is not kept: its error says why, and the next call measures again.
    pub async fn get(
        &self,
        https: bool,
    ) -> Result<bakeoff_artifact::HarnessCeiling, bakeoff_suites::bench::BenchError> {
        let cell = if https { &self.tls } else { &self.plain };
        cell.get_or_try_init(|| {
            bakeoff_suites::bench::ceiling(
                bakeoff_load::calibrate::CalibrationOptions::default(),
                https,
            )
        })
        .await
        .cloned()
    }
}
