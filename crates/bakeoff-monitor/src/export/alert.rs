//! `seat monitor --alert-webhook URL`: one plain JSON message when a finding starts (an outage
//! begins, a footprint drift is raised) and one when it ends (the seat answers again; the
//! drifting seat restarts), POSTed to the URL — once each, in order, retried with back-off
//! (1 s, 2 s, 4 s, … up to 60 s between attempts) when the receiver cannot be reached, times
//! out, answers 408, 429 or 5xx. A message the receiver refuses (another 4xx), or that no attempt
//! delivered, is reported as undelivered: the monitor logs it and lists it in the summary's
//! notes — never dropped silently.
//!
//! The body carries a `text` line (what Slack-style incoming webhooks show) and a `title`
//! beside the structured fields (docs/monitor-export.md shows ntfy and Slack use). No secret is
//! in it: the texts come through the fleet's redactor, and the webhook's own URL is never
//! logged beyond its scheme, host and port (a Slack webhook's path is its token).

use std::time::Duration;

use bakeoff_artifact::monitor::MonitorFinding;
use bakeoff_client::{Client, ClientOptions, EndpointUrl, Method, RequestError, Timeouts};
use chrono::{DateTime, Utc};
use serde::Serialize;
use tokio::sync::mpsc;
use url::Url;

use crate::findings::Change;

/// The longest wait between two attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// Where alerts go and how hard to try.
#[derive(Debug, Clone)]
pub struct AlertOptions {
    pub url: Url,
    /// Attempts per message, the first included (at least 1).
    pub attempts: u32,
    /// The wait after the first failed attempt; doubled after each further one.
    pub first_backoff: Duration,
    /// One attempt's whole budget (connect to the last byte of the answer).
    pub timeout: Duration,
    /// The client's options (TLS for an `https://` receiver); its timeouts are set here.
    pub client: ClientOptions,
}

/// The webhook URL is refused before the monitor starts.
#[derive(Debug, thiserror::Error)]
pub enum AlertUrlError {
    #[error("--alert-webhook: {0}")]
    Url(String),
}

impl AlertOptions {
    /// Checks the URL (http or https, a host) and builds the options.
    pub fn new(url: &str, attempts: u32, client: ClientOptions) -> Result<Self, AlertUrlError> {
        let url = Url::parse(url.trim()).map_err(|e| {
            AlertUrlError::Url(format!(
                "not a URL ({e}); give one like https://ntfy.sh/TOPIC"
            ))
        })?;
        origin(&url).map_err(|e| AlertUrlError::Url(e.to_string()))?;
        Ok(Self {
            url,
            attempts: attempts.max(1),
            first_backoff: Duration::from_secs(1),
            timeout: Duration::from_secs(10),
            client,
        })
    }

    /// The receiver as it may be logged: scheme, host and port only.
    pub fn label(&self) -> String {
        label(&self.url)
    }
}

fn label(url: &Url) -> String {
    match (url.host_str(), url.port()) {
        (Some(h), Some(p)) => format!("{}://{h}:{p}", url.scheme()),
        (Some(h), None) => format!("{}://{h}", url.scheme()),
        _ => url.scheme().to_string(),
    }
}

/// The webhook's origin as an endpoint (the client's root); the request goes to the full URL.
fn origin(url: &Url) -> Result<EndpointUrl, bakeoff_client::UrlError> {
    let o = match (url.host_str(), url.port()) {
        (Some(h), Some(p)) => format!("{}://{h}:{p}", url.scheme()),
        (Some(h), None) => format!("{}://{h}", url.scheme()),
        _ => url.as_str().to_string(),
    };
    EndpointUrl::parse(&o)
}

/// One message, as posted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Alert {
    /// Always `"bakeoff seat monitor"`.
    pub source: &'static str,
    /// The fleet file as given.
    pub fleet: String,
    /// `"start"` or `"end"`.
    pub event: &'static str,
    /// The finding's kind: `"outage"` or `"footprint-drift"`.
    pub kind: &'static str,
    pub seat: String,
    pub host: String,
    /// When it started or ended (the tick that saw it).
    pub at: DateTime<Utc>,
    /// A short headline: `outage started: gemma`.
    pub title: String,
    /// The finding in one line (the monitor's own wording).
    pub text: String,
    /// The finding itself, as the summary records it.
    pub finding: MonitorFinding,
}

impl Alert {
    /// The message of a change; `redact` is the fleet's redactor.
    pub fn of(change: &Change, fleet: &str, host: &str, redact: impl Fn(&str) -> String) -> Self {
        let (event, finding, at) = match change {
            Change::Raised(f) => {
                let at = match f {
                    MonitorFinding::Outage(o) => o.started_at,
                    MonitorFinding::FootprintDrift(d) => d.crossed_at,
                };
                ("start", f.clone(), at)
            }
            Change::OutageEnded(o) => (
                "end",
                MonitorFinding::Outage(o.clone()),
                o.ended_at.unwrap_or_else(Utc::now),
            ),
            Change::DriftEnded(d) => ("end", MonitorFinding::FootprintDrift(d.clone()), d.last_at),
        };
        let mut finding = finding;
        if let MonitorFinding::Outage(o) = &mut finding {
            o.first_error = redact(&o.first_error);
        }
        let verb = if event == "start" { "started" } else { "ended" };
        let text = match change {
            Change::DriftEnded(_) => format!(
                "{} (ended: the seat restarted, its footprint starts a new baseline)",
                finding.text()
            ),
            _ => finding.text(),
        };
        Self {
            source: "bakeoff seat monitor",
            fleet: redact(fleet),
            event,
            kind: finding.kind(),
            seat: finding.seat().to_string(),
            host: host.to_string(),
            at,
            title: format!("{} {verb}: {}", finding.kind(), finding.seat()),
            text: redact(&text),
            finding,
        }
    }

    /// `outage start for gemma`: how the logs name a message.
    pub fn what(&self) -> String {
        format!("{} {} for {}", self.kind, self.event, self.seat)
    }
}

/// What became of a message (reported back to the monitor's loop, which logs it).
#[derive(Debug, Clone, PartialEq)]
pub enum Report {
    Delivered {
        what: String,
        attempts: u32,
        status: u16,
    },
    /// An attempt failed; another follows after `again_in`.
    Retrying {
        what: String,
        attempt: u32,
        of: u32,
        error: String,
        again_in: Duration,
    },
    /// Given up: every attempt failed, or the receiver refused it.
    Undelivered {
        what: String,
        attempts: u32,
        error: String,
    },
}

impl Report {
    /// The log line; `to` is the receiver's label.
    pub fn line(&self, to: &str) -> String {
        match self {
            Report::Delivered {
                what,
                attempts,
                status,
            } => format!(
                "alert sent: {what} to {to} (HTTP {status}{})",
                if *attempts > 1 {
                    format!(", attempt {attempts}")
                } else {
                    String::new()
                }
            ),
            Report::Retrying {
                what,
                attempt,
                of,
                error,
                again_in,
            } => format!(
                "alert {what} to {to}: attempt {attempt} of {of} failed ({error}); trying again in {}",
                bakeoff_client::seconds(*again_in)
            ),
            Report::Undelivered {
                what,
                attempts,
                error,
            } => format!(
                "ALERT NOT DELIVERED: {what} to {to} after {attempts} attempt{} ({error})",
                if *attempts == 1 { "" } else { "s" }
            ),
        }
    }
}

/// The sender: a task that posts the messages one at a time, in order.
pub struct Alerter {
    tx: Option<mpsc::UnboundedSender<Alert>>,
    reports: mpsc::UnboundedReceiver<Report>,
    task: tokio::task::JoinHandle<()>,
    label: String,
    queued: u64,
    settled: u64,
}

impl Alerter {
    pub fn start(opts: AlertOptions) -> Result<Self, AlertUrlError> {
        let endpoint = origin(&opts.url).map_err(|e| AlertUrlError::Url(e.to_string()))?;
        let client = Client::try_new(
            endpoint,
            ClientOptions {
                timeouts: Timeouts {
                    connect: opts.timeout.min(Duration::from_secs(5)),
                    first_byte: opts.timeout,
                    idle: opts.timeout,
                    total: opts.timeout,
                },
                ..opts.client.clone()
            },
        )
        .map_err(|e| AlertUrlError::Url(e.to_string()))?;
        let (tx, mut rx) = mpsc::unbounded_channel::<Alert>();
        let (rtx, reports) = mpsc::unbounded_channel();
        let label = opts.label();
        let task = tokio::spawn(async move {
            while let Some(a) = rx.recv().await {
                let r = deliver(&client, &opts, &a, |r| {
                    let _ = rtx.send(r);
                })
                .await;
                let _ = rtx.send(r);
            }
        });
        Ok(Self {
            tx: Some(tx),
            reports,
            task,
            label,
            queued: 0,
            settled: 0,
        })
    }

    pub fn label(&self) -> &str {
        &self.label
    }

    /// Queue a message (sent in the background; its fate comes back through [`Alerter::drain`]).
    pub fn send(&mut self, a: Alert) {
        if let Some(tx) = &self.tx
            && tx.send(a).is_ok()
        {
            self.queued += 1;
        }
    }

    /// The reports that have come back so far.
    pub fn drain(&mut self) -> Vec<Report> {
        let mut out = Vec::new();
        while let Ok(r) = self.reports.try_recv() {
            self.count(&r);
            out.push(r);
        }
        out
    }

    fn count(&mut self, r: &Report) {
        if !matches!(r, Report::Retrying { .. }) {
            self.settled += 1;
        }
    }

    /// No more messages: wait up to `limit` for the queued ones to be delivered or given up on.
    /// Returns every report not yet drained, and how many messages were still unsettled when
    /// the wait ran out (each to be logged as undelivered).
    pub async fn finish(mut self, limit: Duration) -> (Vec<Report>, u64) {
        self.tx = None;
        let finished = tokio::time::timeout(limit, &mut self.task).await.is_ok();
        if !finished {
            self.task.abort();
        }
        let reports = self.drain();
        (reports, self.queued.saturating_sub(self.settled))
    }
}

/// Post `a` until it is accepted, refused, or out of attempts; each failed attempt that is
/// followed by another is reported through `on_retry`.
async fn deliver(
    client: &Client,
    opts: &AlertOptions,
    a: &Alert,
    on_retry: impl Fn(Report),
) -> Report {
    let what = a.what();
    let body = match serde_json::to_value(a) {
        Ok(v) => v,
        Err(e) => {
            return Report::Undelivered {
                what,
                attempts: 0,
                error: format!("cannot encode the message: {e}"),
            };
        }
    };
    let mut backoff = opts.first_backoff;
    let mut attempt = 0;
    loop {
        attempt += 1;
        let outcome = client
            .control(Method::Post, opts.url.clone(), Some(&body), opts.timeout)
            .await;
        let (error, retry) = match outcome {
            Ok((status, _)) if (200..300).contains(&status) => {
                return Report::Delivered {
                    what,
                    attempts: attempt,
                    status,
                };
            }
            Ok((status, _)) => (
                format!("HTTP {status}"),
                status == 408 || status == 429 || status >= 500,
            ),
            Err(e) => (scrub(&e, &opts.url), true),
        };
        if !retry || attempt >= opts.attempts {
            return Report::Undelivered {
                what,
                attempts: attempt,
                error: if retry {
                    error
                } else {
                    format!("{error}: the receiver refused it, not retried")
                },
            };
        }
        on_retry(Report::Retrying {
            what: what.clone(),
            attempt,
            of: opts.attempts,
            error,
            again_in: backoff,
        });
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// A request error without the webhook's path or query (a token may sit there).
fn scrub(e: &RequestError, url: &Url) -> String {
    let mut s = e.to_string();
    let full = url.as_str();
    if !full.is_empty() {
        s = s.replace(full, &label(url));
    }
    let path = url.path();
    if path.len() > 1 {
        s = s.replace(path, "/…");
    }
    s
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use bakeoff_artifact::monitor::Outage;

    fn outage(ended: bool) -> Outage {
        let t0 = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        Outage {
            seat: "gemma".into(),
            aliases: vec!["chat".into()],
            started_at: t0,
            ended_at: ended.then(|| t0 + chrono::Duration::seconds(7)),
            duration_s: if ended { 7.0 } else { 0.0 },
            failed_ticks: 3,
            first_error: "connect: token sk-123 refused".into(),
        }
    }

    #[test]
    fn a_start_and_an_end_say_which_with_the_finding_redacted() {
        let redact = |s: &str| s.replace("sk-123", "[redacted]");
        let s = Alert::of(
            &Change::Raised(MonitorFinding::Outage(outage(false))),
            "fleet.toml",
            "local",
            redact,
        );
        assert_eq!(
            (s.event, s.kind, s.seat.as_str()),
            ("start", "outage", "gemma")
        );
        assert_eq!(s.title, "outage started: gemma");
        let body = serde_json::to_string(&s).unwrap();
        assert!(!body.contains("sk-123"), "{body}");
        assert!(
            body.contains("\"text\":\"outage: gemma stopped answering"),
            "{body}"
        );
        let e = Alert::of(
            &Change::OutageEnded(outage(true)),
            "fleet.toml",
            "local",
            redact,
        );
        assert_eq!((e.event, e.title.as_str()), ("end", "outage ended: gemma"));
        assert_eq!(e.at, outage(true).ended_at.unwrap());
    }

    #[test]
    fn the_receiver_is_logged_without_its_path() {
        let o = AlertOptions::new(
            "https://hooks.slack.com/services/T0/B0/SECRET?x=1",
            3,
            ClientOptions::default(),
        )
        .unwrap();
        assert_eq!(o.label(), "https://hooks.slack.com");
        let e = RequestError::Connect {
            addr: "hooks.slack.com:443".into(),
            message: "for url https://hooks.slack.com/services/T0/B0/SECRET?x=1".into(),
        };
        assert!(!scrub(&e, &o.url).contains("SECRET"));
        assert!(AlertOptions::new("ftp://x", 1, ClientOptions::default()).is_err());
    }
}
