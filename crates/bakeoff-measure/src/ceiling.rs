//! The harness ceiling: how many requests and streamed tokens a second this client can drive
//! against a loopback target that answers at once (docs/metrics.md "The harness ceiling"). A
//! load step above half of it is flagged `client-bound`: the figure is the harness's, not the
//! endpoint's.
//!
//! Measured here and nowhere else, for every measurement that has load steps: `bench run`,
//! `eval run`'s throughput and longgen suites ([`crate::evaluate`]), a campaign's candidates and
//! tuning trials, and `bench calibrate`. [`Ceilings`] measures it once per run and shares it;
//! progress sees it as [`CeilingEvent`]s and draws them, it never measures.

use std::sync::Arc;

use bakeoff_artifact::HarnessCeiling;
use bakeoff_client::Client;
use bakeoff_load::LoadError;
use bakeoff_load::calibrate::{
    CalibrationOptions, CalibrationTarget, measure_ceiling, measure_ceiling_with,
};
pub use bakeoff_suites::progress::CeilingEvent;
use tokio::sync::OnceCell;

/// The ceiling could not be measured.
#[derive(Debug, thiserror::Error)]
pub enum CeilingError {
    #[error("cannot start the loopback calibration target: {0}")]
    Target(std::io::Error),
    #[error("cannot start the TLS loopback calibration target: {0}")]
    TlsTarget(std::io::Error),
    #[error(transparent)]
    Load(#[from] LoadError),
}

/// What a run says where the ceiling could not be measured (in its notes, on its progress):
/// its load steps go unchecked, as with `--no-calibrate`. `error` is given as it should be
/// shown (escaped where it reaches a terminal).
pub fn unmeasured(https: bool, error: &str) -> String {
    format!(
        "the harness ceiling{} could not be measured ({error}): the load steps are not checked \
         against it",
        if https { " over TLS" } else { "" }
    )
}

/// Whether the endpoint is `https://`: its ceiling is then measured over TLS (a TLS handshake
/// per request costs the client ×4 the CPU of a plain one: docs/performance.md "TLS").
pub fn is_https(client: &Client) -> bool {
    client.url().root_path("").scheme() == "https"
}

/// The ceiling against a fresh loopback target (`bench calibrate` with its options); over TLS,
/// against a TLS target with a throwaway CA made in memory.
pub async fn measure(o: CalibrationOptions, https: bool) -> Result<HarnessCeiling, CeilingError> {
    if https {
        let (target, url, tls) = CalibrationTarget::start_tls()
            .await
            .map_err(CeilingError::TlsTarget)?;
        let c = measure_ceiling_with(&url, o, tls).await?;
        drop(target);
        Ok(c)
    } else {
        let target = CalibrationTarget::start()
            .await
            .map_err(CeilingError::Target)?;
        Ok(measure_ceiling(&target.url(), o).await?)
    }
}

/// The ceiling with the default calibration, plain and over TLS, each measured once per run
/// when a load step first needs it and shared by every clone: one `eval run`, one `bench run`,
/// one campaign (whose candidates and trials then carry the same figure).
#[derive(Debug, Clone, Default)]
pub struct Ceilings {
    plain: Arc<OnceCell<HarnessCeiling>>,
    tls: Arc<OnceCell<HarnessCeiling>>,
}

impl Ceilings {
    /// Ceilings measured before this run (`bench calibrate`'s, or one kept from an earlier
    /// run on this host): taken as they are, never measured again. A scheme left `None` is
    /// measured on first need.
    pub fn known(plain: Option<HarnessCeiling>, tls: Option<HarnessCeiling>) -> Self {
        Ceilings {
            plain: Arc::new(OnceCell::new_with(plain)),
            tls: Arc::new(OnceCell::new_with(tls)),
        }
    }

    /// The ceiling for an endpoint of this scheme, measured on the first call: `on` hears it
    /// start and end (nothing when it was already known). A measurement that fails is not
    /// kept: its error says why, and the next call measures again.
    pub async fn get(
        &self,
        https: bool,
        on: &(dyn Fn(CeilingEvent) + Sync),
    ) -> Result<HarnessCeiling, CeilingError> {
        let cell = if https { &self.tls } else { &self.plain };
        cell.get_or_try_init(|| async {
            on(CeilingEvent::Started { https });
            let measured = measure(CalibrationOptions::default(), https).await;
            on(match &measured {
                Ok(c) => CeilingEvent::Measured(c.clone()),
                Err(e) => CeilingEvent::Unmeasured {
                    https,
                    error: e.to_string(),
                },
            });
            measured
        })
        .await
        .cloned()
    }
}
