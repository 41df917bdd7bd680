//! `seat status`: every seat with its state, the gateway aliases that answer for it now and,
//! with a probe, whether it serves a real completion.

use std::time::Instant;

use super::start_checks::seat_gpus;
use super::{Seats, host_status, last_load_ms};
use crate::backend::{Observed, Status};
use crate::fleet::types::Role;
use crate::watchdog;

/// One seat in `status`, with the gateway aliases that resolve to it: one outage is one
/// finding however many aliases route to it (docs/field-cases.md F2).
#[derive(Debug, Clone)]
pub struct SeatStatus {
    pub seat: String,
    pub role: Role,
    pub backend: &'static str,
    pub url: String,
    pub observed: Observed,
    pub restart_count: Option<u64>,
    pub id: Option<String>,
    pub aliases: Vec<String>,
    /// `Some(true)`: a real completion succeeded; `Some(false)`: it failed; `None`: not probed.
    pub serving: Option<bool>,
    /// How long the probe took (to its verdict), when probed.
    pub probe_ms: Option<u64>,
    pub detail: Option<String>,
    /// When the running seat started (for its uptime).
    pub started_at: Option<chrono::DateTime<chrono::Utc>>,
    /// The model it serves (its first served name).
    pub model: Option<String>,
    /// The GPUs it is given (`--gpus` of a container, `CUDA_VISIBLE_DEVICES` of a process;
    /// empty: none named).
    pub gpus: Vec<String>,
    /// How long its last watched start took to ready (its start record), when it got there.
    pub last_load_ms: Option<u64>,
}

impl SeatStatus {
    /// Whether this seat fails `seat status` (exit 1): a probe that failed, a state that could
    /// not be read (never taken for "fine") and, when `probed`, a production seat that is not
    /// running: an outage is what a probing check exists to see, and only running seats are
    /// sent a completion.
    pub fn fails_status(&self, probed: bool) -> bool {
        self.serving == Some(false)
            || matches!(self.observed, Observed::Unknown { .. })
            || (probed && self.role == Role::Production && !self.observed.is_up())
    }
}

impl Seats {
    /// Every seat with its state and its aliases. `probe`: also send a real completion to
    /// each running seat.
    pub async fn status(&self, probe: bool) -> Vec<SeatStatus> {
        // Hosts concurrently, each within its timeout: an engine that does not answer makes
        // only its own seats unknown, not "down" (host_status.rs).
        let (states, starts): (Vec<Status>, Vec<_>) =
            host_status::gather(&self.fleet).await.into_iter().unzip();
        let up: std::collections::BTreeSet<&str> = self
            .fleet
            .seats
            .iter()
            .zip(&states)
            .filter(|(_, st)| st.observed.is_up())
            .map(|(s, _)| s.name.as_str())
            .collect();
        // Each alias under the seat that answers for it now (a swap moves a port's aliases).
        let alias_seat: Vec<Option<String>> = self
            .fleet
            .routes
            .iter()
            .map(|r| self.fleet.route_seat_now(r, |n| up.contains(n)))
            .collect();
        let mut out = Vec::new();
        for ((seat, st), started_at) in self.fleet.seats.iter().zip(states).zip(starts) {
            let url = self.fleet.seat_url(seat);
            let t_probe = Instant::now();
            let (serving, detail) = if probe && st.observed == Observed::Running {
                match watchdog::probe_client_for(&url, seat.api_key(), &seat.tls_options()) {
                    Some(c) => {
                        let o = bakeoff_client::preflight::run_preflight(
                            &c,
                            &bakeoff_client::preflight::PreflightOptions {
                                model: seat.served_model_names.first().cloned(),
                                max_model_len: None,
                                ready_timeout: std::time::Duration::from_secs(20),
                                probe_tools: false,
                            },
                        )
                        .await;
                        (
                            Some(o.report.fit),
                            o.unfit.map(|u| format!("{}: {}", u.class, u.message)),
                        )
                    }
                    None => (None, None),
                }
            } else {
                (None, None)
            };
            out.push(SeatStatus {
                seat: seat.name.clone(),
                role: seat.role,
                backend: seat.backend_name(),
                url,
                observed: st.observed,
                restart_count: st.restart_count,
                id: st.id,
                aliases: self
                    .fleet
                    .routes
                    .iter()
                    .zip(&alias_seat)
                    .filter(|(_, s)| s.as_deref() == Some(seat.name.as_str()))
                    .map(|(r, _)| r.alias.clone())
                    .collect(),
                probe_ms: serving.map(|_| t_probe.elapsed().as_millis() as u64),
                serving,
                detail,
                started_at,
                model: seat.served_model_names.first().cloned(),
                gpus: seat_gpus(seat),
                last_load_ms: last_load_ms(&self.fleet, &seat.name),
            });
        }
        out
    }
}
