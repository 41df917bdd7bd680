//! `seat monitor`: its flags checked once.

use std::net::SocketAddr;
use std::path::PathBuf;

use bakeoff_artifact::monitor::DriftThresholds;
use bakeoff_client::ClientOptions;
use bakeoff_monitor::MonitorOptions;
use bakeoff_monitor::export::alert::AlertOptions;

use super::seat::{secs, size};
use crate::FlagError;
use crate::cli::SeatMonitorArgs;

/// The longest a probe may be given: a tick must end.
const MAX_PROBE_TIMEOUT_S: f64 = 600.0;

#[derive(Debug)]
pub struct SeatMonitorConfig {
    pub fleet: PathBuf,
    pub options: MonitorOptions,
}

impl SeatMonitorArgs {
    pub fn validate(self) -> Result<SeatMonitorConfig, FlagError> {
        let interval = secs("--interval", self.interval)?;
        let duration = self.duration.map(|d| secs("--duration", d)).transpose()?;
        let probe_timeout = secs("--probe-timeout", self.probe_timeout)?;
        if self.probe_timeout > MAX_PROBE_TIMEOUT_S {
            return Err(FlagError::invalid(format!(
                "--probe-timeout {} is longer than {MAX_PROBE_TIMEOUT_S} s: a probe that slow is an outage; lower it",
                self.probe_timeout
            )));
        }
        if self.probe_max_tokens == 0 {
            return Err(FlagError::invalid(
                "--probe-max-tokens must be at least 1 (the default 32 lets a thinking model show text)",
            ));
        }
        if !(self.drift_threshold.is_finite() && self.drift_threshold >= 0.0) {
            return Err(FlagError::invalid(format!(
                "--drift-threshold {} must be a percentage, 0 or more (10 means +10 % over the first sample)",
                self.drift_threshold
            )));
        }
        if self.alert_attempts == 0 {
            return Err(FlagError::invalid(
                "--alert-attempts must be at least 1 (the default 5 retries for about 15 s)",
            ));
        }
        let prometheus = self
            .prometheus
            .as_deref()
            .map(|a| {
                a.trim().parse::<SocketAddr>().map_err(|_| {
                    FlagError::invalid(format!(
                        "--prometheus {a:?} is not an address to listen on; give IP:PORT, e.g. 127.0.0.1:9464 (0.0.0.0:9464 for every interface)"
                    ))
                })
            })
            .transpose()?;
        let alert = self
            .alert_webhook
            .as_deref()
            .map(|u| AlertOptions::new(u, self.alert_attempts, ClientOptions::default()))
            .transpose()?;
        Ok(SeatMonitorConfig {
            fleet: self.fleet.fleet,
            options: MonitorOptions {
                seats: self.seats,
                interval,
                duration,
                out: self.out,
                probe_timeout,
                probe_max_tokens: self.probe_max_tokens,
                drift: DriftThresholds {
                    percent: self.drift_threshold,
                    min_bytes: size("--drift-min", &self.drift_min)?,
                },
                prometheus,
                alert,
            },
        })
    }
}
