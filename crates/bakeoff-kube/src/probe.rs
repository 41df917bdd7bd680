//! The probes of a seat's container. Readiness is a real one-token completion, as the watchdog's
//! is: an engine can answer `/health` and `/v1/models` while every inference dies (docs/field-cases.md B1),
//! so a probe that asks for less would route users to a wedged engine. The probe is an `exec` of
//! curl inside the container (the image must carry curl): Kubernetes' own HTTP probe can only
//! GET, and a completion is a POST with a body.
//!
//! There is no liveness probe on purpose: a busy engine queues the probe's completion behind
//! real traffic, and a liveness kill under load would turn load into an outage. A wedged engine
//! fails readiness and leaves the Service's endpoints; restarting it stays the operator's call.

use bakeoff_seats::{Fleet, Seat};
use k8s_openapi::api::core::v1::{ExecAction, Probe};

/// Seconds between startup-probe attempts; the startup budget is this times `failureThreshold`.
pub const PROBE_PERIOD_S: u64 = 10;
/// Seconds between readiness probes once started.
const READY_PERIOD_S: i32 = 15;
/// curl's own limit on one probe request (`-m`), and the kubelet's, a little longer, so the
/// failure seen is curl's.
const CURL_MAX_S: u64 = 20;
const PROBE_TIMEOUT_S: i32 = 30;
/// Without a recorded start: 30 minutes. Loads vary widely (docs/field-cases.md B5: ~2 min for a 70 GB
/// checkpoint, an 83 GB one projected past an hour from a cold page cache); a recorded start is
/// the better guide, and docs/scale-out.md says to raise this for such checkpoints.
pub const DEFAULT_STARTUP_BUDGET_S: u64 = 30 * 60;
/// With a recorded start, the budget is twice its time to ready, and never under 5 minutes: a
/// node with a cold page cache reads the weights slower than the host that recorded it.
pub const MIN_STARTUP_BUDGET_S: u64 = 5 * 60;

/// How long the startup probe lets a seat take before the kubelet restarts it, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartupBudget {
    pub seconds: u64,
    /// In words: the start record it came from, or the default.
    pub source: String,
}

impl StartupBudget {
    /// Attempts of [`PROBE_PERIOD_S`] that cover the budget.
    pub fn failure_threshold(&self) -> i32 {
        i32::try_from(self.seconds.div_ceil(PROBE_PERIOD_S).max(1)).unwrap_or(i32::MAX)
    }
}

/// The budget from the seat's last start record (`<state_dir>/<seat>.seat.json`), else the
/// default.
pub(crate) fn startup_budget(fleet: &Fleet, seat: &Seat) -> StartupBudget {
    let record = bakeoff_seats::ops::start_record_path(fleet, &seat.name);
    match bakeoff_seats::ops::last_load_ms(fleet, &seat.name) {
        Some(ms) => {
            let s = ms.div_ceil(1000);
            StartupBudget {
                seconds: (s * 2).max(MIN_STARTUP_BUDGET_S),
                source: format!(
                    "twice the last time to ready, {s} s, from {}, at least {MIN_STARTUP_BUDGET_S} s",
                    record.display()
                ),
            }
        }
        None => StartupBudget {
            seconds: DEFAULT_STARTUP_BUDGET_S,
            source: format!(
                "the default: no ready start recorded in {}",
                record.display()
            ),
        },
    }
}

/// The command of both probes: POST a one-token chat completion for the seat's first served
/// model to the engine inside the container. With `key_var` (the container's environment
/// variable holding the engine's API key) it runs under `sh -c` to send the key, read from the
/// environment at probe time, never written into the manifest.
pub(crate) fn completion_command(seat: &Seat, port: u16, key_var: Option<&str>) -> Vec<String> {
    let model = seat
        .served_model_names
        .first()
        .cloned()
        .unwrap_or_else(|| seat.name.clone());
    let body = serde_json::json!({
        "model": model,
        "max_tokens": 1,
        "messages": [{"role": "user", "content": "Say OK."}],
    })
    .to_string();
    let url = format!("http://127.0.0.1:{port}/v1/chat/completions");
    let max = CURL_MAX_S.to_string();
    match key_var {
        None => [
            "curl",
            "-sf",
            "-m",
            max.as_str(),
            "-o",
            "/dev/null",
            "-H",
            "Content-Type: application/json",
            "-d",
            body.as_str(),
            url.as_str(),
        ]
        .iter()
        .map(|s| (*s).to_string())
        .collect(),
        Some(var) => vec![
            "sh".into(),
            "-c".into(),
            format!(
                "curl -sf -m {max} -o /dev/null -H 'Content-Type: application/json' -H \"Authorization: Bearer ${{{var}}}\" -d {} {}",
                sh_quote(&body),
                sh_quote(&url)
            ),
        ],
    }
}

pub(crate) fn readiness(command: Vec<String>) -> Probe {
    Probe {
        exec: Some(ExecAction {
            command: Some(command),
        }),
        period_seconds: Some(READY_PERIOD_S),
        timeout_seconds: Some(PROBE_TIMEOUT_S),
        failure_threshold: Some(3),
        success_threshold: Some(1),
        ..Default::default()
    }
}

/// The startup probe holds the readiness probe off until the first completion succeeds, and
/// gives up (the kubelet restarts the container) after the budget.
pub(crate) fn startup(command: Vec<String>, budget: &StartupBudget) -> Probe {
    Probe {
        exec: Some(ExecAction {
            command: Some(command),
        }),
        period_seconds: Some(PROBE_PERIOD_S as i32),
        timeout_seconds: Some(PROBE_TIMEOUT_S),
        failure_threshold: Some(budget.failure_threshold()),
        success_threshold: Some(1),
        ..Default::default()
    }
}

/// `s` as one single-quoted shell word.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_is_covered_by_whole_periods() {
        let b = |seconds| StartupBudget {
            seconds,
            source: String::new(),
        };
        assert_eq!(b(1800).failure_threshold(), 180);
        assert_eq!(b(1801).failure_threshold(), 181);
        assert_eq!(b(0).failure_threshold(), 1);
    }

    #[test]
    fn quotes_survive_the_shell() {
        assert_eq!(sh_quote("it's"), r"'it'\''s'");
    }
}
