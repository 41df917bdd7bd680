//! `seat status --probe` through the gateway (`[gateway] url`): the gateway's own view of what
//! it routes where (LiteLLM's `GET /model/info`: one entry per deployment, with
//! `model_name` and `litellm_params.api_base`), and a real one-token completion through the
//! gateway for every name it routes. Names are grouped by the seat their `api_base` reaches, so
//! a seat that is down is ONE outage however many aliases fail with it (docs/field-cases.md F2: two
//! aliases on one seat sampled as "two failing services" were one outage sampled twice).

use std::time::Duration;

use bakeoff_client::{ApiKey, Client, ClientOptions, EndpointUrl, Method, Timeouts};
use bakeoff_wire::chat::{ChatRequest, Message};
use serde_json::{Value, json};

use crate::fleet::types::Fleet;
use crate::ops::SeatStatus;

/// One deployment as the gateway lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deployment {
    pub name: String,
    pub api_base: Option<String>,
}

/// One name's completion through the gateway.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameProbe {
    pub name: String,
    pub ok: bool,
    /// Why it failed (the gateway's status and the start of its error body).
    pub detail: Option<String>,
}

/// The names the gateway routes to one place, and how their probes went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// The fleet's seat the `api_base` reaches; `None`: outside the fleet (or unknown).
    pub seat: Option<String>,
    pub api_base: Option<String>,
    pub names: Vec<String>,
    pub failing: Vec<String>,
}

/// What the gateway said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayView {
    pub url: String,
    /// Where the grouping came from: `"/model/info"` or, when the gateway did not list its
    /// deployments, `"fleet config"` (the fleet's routes).
    pub source: &'static str,
    /// Why the gateway's own view could not be read, when it could not.
    pub view_error: Option<String>,
    pub groups: Vec<Group>,
    pub probes: Vec<NameProbe>,
}

impl GatewayView {
    /// Any name that failed through the gateway.
    pub fn any_failed(&self) -> bool {
        self.probes.iter().any(|p| !p.ok)
    }
}

const LIST_LIMIT: Duration = Duration::from_secs(10);

/// Why the gateway's own view could not be had (recorded as the view's error, as text).
#[derive(Debug, thiserror::Error)]
pub enum GatewayViewError {
    #[error(transparent)]
    Url(#[from] bakeoff_client::UrlError),
    #[error("[gateway] {0}")]
    Tls(#[source] bakeoff_client::tls::TlsError),
    #[error(transparent)]
    Build(#[from] bakeoff_client::ClientBuildError),
    #[error("GET /model/info answered {0}")]
    Status(u16),
    #[error("GET /model/info: {0}")]
    Request(#[source] bakeoff_client::RequestError),
    #[error("/model/info has no data list (not a LiteLLM proxy?)")]
    NoData,
}

/// The gateway's client; its key (`[gateway] api_key_env`) travels only in the header. An
/// `https://` gateway is trusted by the system's roots, plus `[gateway] ca_cert`, or not
/// verified with `[gateway] insecure = true`; `Err` says why no client could be had.
fn client(
    url: &str,
    key_env: Option<&str>,
    tls: &bakeoff_client::tls::TlsOptions,
) -> Result<Client, GatewayViewError> {
    let url = EndpointUrl::parse(url)?;
    let tls = bakeoff_client::tls::Tls::new(tls).map_err(GatewayViewError::Tls)?;
    let api_key = key_env
        .and_then(|n| std::env::var(n).ok())
        .and_then(ApiKey::new);
    // LiteLLM answers a dead upstream after its own connect attempt (and retries, when the
    // operator configured them): bounded here whatever the gateway does.
    Ok(Client::try_new(
        url,
        ClientOptions {
            timeouts: Timeouts {
                connect: Duration::from_secs(3),
                first_byte: Duration::from_secs(30),
                idle: Duration::from_secs(10),
                total: Duration::from_secs(40),
            },
            api_key,
            tls,
        },
    )?)
}

/// The gateway's deployments from `/model/info` (LiteLLM also serves it as `/v1/model/info`);
/// when neither answers, why the second did not.
async fn deployments(c: &Client) -> Result<Vec<Deployment>, GatewayViewError> {
    let mut last = Err(GatewayViewError::NoData);
    for url in [
        c.url().root_path("model/info"),
        c.url().v1_path("model/info"),
    ] {
        last = match c.control(Method::Get, url, None, LIST_LIMIT).await {
            Ok((200, Some(v))) => return parse_model_info(&v),
            Ok((status, _)) => Err(GatewayViewError::Status(status)),
            Err(e) => Err(GatewayViewError::Request(e)),
        };
    }
    last
}

/// `{"data": [{"model_name": …, "litellm_params": {"api_base": …}}]}`.
pub fn parse_model_info(v: &Value) -> Result<Vec<Deployment>, GatewayViewError> {
    let data = v["data"].as_array().ok_or(GatewayViewError::NoData)?;
    Ok(data
        .iter()
        .filter_map(|d| {
            Some(Deployment {
                name: d["model_name"].as_str()?.to_string(),
                api_base: d["litellm_params"]["api_base"].as_str().map(String::from),
            })
        })
        .collect())
}

/// A one-token completion for `name` through the gateway.
async fn probe_name(c: &Client, name: &str) -> NameProbe {
    let req = ChatRequest::new(name, vec![Message::user("Say OK.")], 1, false);
    let ex = c.chat(&req).await;
    NameProbe {
        name: name.to_string(),
        ok: ex.ok(),
        detail: ex.error.map(|e| {
            crate::redact::text(&e.to_string())
                .chars()
                .take(300)
                .collect()
        }),
    }
}

/// Group deployments by the seat (else the `api_base`) they reach.
fn group(fleet: &Fleet, deps: &[Deployment], probes: &[NameProbe]) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    for d in deps {
        let seat = d
            .api_base
            .as_deref()
            .and_then(|b| fleet.resolve_api_base(b));
        let at = groups.iter().position(|g| match (&seat, &g.seat) {
            (Some(a), Some(b)) => a == b,
            (None, None) => g.api_base == d.api_base,
            _ => false,
        });
        let g = match at {
            Some(i) => &mut groups[i],
            None => {
                groups.push(Group {
                    seat: seat.clone(),
                    api_base: d.api_base.clone(),
                    names: Vec::new(),
                    failing: Vec::new(),
                });
                let last = groups.len() - 1;
                &mut groups[last]
            }
        };
        if !g.names.contains(&d.name) {
            g.names.push(d.name.clone());
            if probes.iter().any(|p| p.name == d.name && !p.ok) {
                g.failing.push(d.name.clone());
            }
        }
    }
    groups
}

/// Read the fleet's gateway (`[gateway] url`), when it names one: its view (else the fleet's
/// routes), and, with `probe`, a real completion through it for every name it routes.
pub async fn look(fleet: &Fleet, probe: bool) -> Option<GatewayView> {
    let url = fleet.gateway_url.as_deref()?;
    Some(look_at(fleet, url, probe).await)
}

async fn look_at(fleet: &Fleet, url: &str, probe: bool) -> GatewayView {
    let c = match client(url, fleet.gateway_key_env.as_deref(), &fleet.gateway_tls) {
        Ok(c) => c,
        Err(e) => {
            return GatewayView {
                url: url.to_string(),
                source: "fleet config",
                view_error: Some(format!("{url}: {e}")),
                groups: Vec::new(),
                probes: Vec::new(),
            };
        }
    };
    let (deps, source, view_error) = match deployments(&c).await {
        Ok(d) => (d, "/model/info", None),
        Err(e) => (
            fleet
                .routes
                .iter()
                .map(|r| Deployment {
                    name: r.alias.clone(),
                    api_base: r
                        .seat
                        .as_deref()
                        .and_then(|s| fleet.seat(s))
                        .map(|s| format!("{}/v1", fleet.seat_url(s)))
                        .or_else(|| r.api_base.clone()),
                })
                .collect(),
            "fleet config",
            Some(e.to_string()),
        ),
    };
    let mut names: Vec<&str> = Vec::new();
    for d in &deps {
        if !names.contains(&d.name.as_str()) {
            names.push(&d.name);
        }
    }
    let probes = if probe {
        futures_util::future::join_all(names.iter().map(|n| probe_name(&c, n))).await
    } else {
        Vec::new()
    };
    GatewayView {
        url: url.to_string(),
        source,
        view_error,
        groups: group(fleet, &deps, &probes),
        probes,
    }
}

/// The gateway's lines under the seat table: one line per seat (one outage, however many of
/// its names failed), with the seat's state beside it.
pub fn lines(view: &GatewayView, seats: &[SeatStatus]) -> Vec<String> {
    let mut out = vec![format!(
        "gateway {} (grouping from {}):",
        crate::redact::text(&view.url),
        view.source
    )];
    if let Some(e) = &view.view_error {
        out.push(format!("  its own view could not be read: {e}"));
    }
    for g in &view.groups {
        let place = match (&g.seat, &g.api_base) {
            (Some(s), _) => format!("seat {s}"),
            (None, Some(b)) => format!("{} (no seat of this fleet)", crate::redact::text(b)),
            (None, None) => "no api_base".to_string(),
        };
        let state = g
            .seat
            .as_deref()
            .and_then(|s| seats.iter().find(|x| x.seat == s))
            .map(|s| format!(" [{}]", s.observed.label()))
            .unwrap_or_default();
        let verdict = if view.probes.is_empty() {
            String::new()
        } else if g.failing.is_empty() {
            ": serving through the gateway".to_string()
        } else {
            format!(
                ": ONE OUTAGE — {} of {} names fail through the gateway ({})",
                g.failing.len(),
                g.names.len(),
                g.failing.join(", ")
            )
        };
        out.push(format!(
            "  {place}{state} <- {}{verdict}",
            g.names.join(", ")
        ));
    }
    out
}

/// `seat status --json`'s `gateway` object.
pub fn json(view: &GatewayView) -> Value {
    json!({
        "url": crate::redact::text(&view.url),
        "source": view.source,
        "view_error": view.view_error,
        "groups": view.groups.iter().map(|g| json!({
            "seat": g.seat, "api_base": g.api_base, "names": g.names, "failing": g.failing,
            "outage": !g.failing.is_empty(),
        })).collect::<Vec<_>>(),
        "probes": view.probes.iter().map(|p| json!({
            "name": p.name, "ok": p.ok, "detail": p.detail,
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn model_info_is_read_as_deployments() {
        let v = json!({"data": [
            {"model_name": "a", "litellm_params": {"model": "openai/x", "api_base": "http://127.0.0.1:9/v1"}, "model_info": {}},
            {"model_name": "b", "litellm_params": {"model": "openai/x"}},
        ]});
        let d = parse_model_info(&v).unwrap();
        assert_eq!(d[0].api_base.as_deref(), Some("http://127.0.0.1:9/v1"));
        assert_eq!(d[1].name, "b");
        assert!(parse_model_info(&json!({"detail": "no"})).is_err());
    }

    fn fleet(dir: &std::path::Path, gateway: &str) -> Fleet {
        let text = format!(
            r#"
[[seat]]
name = "gw"
engine = "llama.cpp"
role = "bench"
port = 18401
served_model_names = ["m"]
[seat.process]
command = "llama-server"

[[route]]
alias = "chat-a"
seat = "gw"

[[route]]
alias = "chat-b"
api_base = "http://127.0.0.1:18401/v1"

[gateway]
{gateway}
"#
        );
        let p = dir.join("fleet.toml");
        std::fs::write(&p, text).unwrap();
        Fleet::load(&p).unwrap()
    }

    /// A gateway that does not answer: its view is replaced by the fleet's routes, grouped the
    /// same way (both aliases under their one seat), and the reason is kept.
    #[tokio::test]
    async fn without_the_gateways_view_the_fleets_routes_group_the_aliases() {
        let dir = tempfile::tempdir().unwrap();
        let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = dead.local_addr().unwrap().port();
        drop(dead);
        let f = fleet(dir.path(), &format!("url = \"http://127.0.0.1:{port}\""));
        let v = look(&f, false).await.unwrap();
        assert_eq!(v.source, "fleet config");
        assert!(v.view_error.is_some());
        assert_eq!(v.groups.len(), 1, "{v:?}");
        assert_eq!(v.groups[0].seat.as_deref(), Some("gw"));
        assert_eq!(v.groups[0].names, ["chat-a", "chat-b"]);
        assert!(!v.any_failed());
    }

    #[test]
    fn a_gateway_url_must_be_http() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("fleet.toml");
        std::fs::write(&p, "[gateway]\nurl = \"gateway:4000\"\n").unwrap();
        let msg = Fleet::load(&p).unwrap_err().to_string();
        assert!(msg.contains("write it as http://HOST:PORT"), "{msg}");
        let f = fleet(dir.path(), "").gateway_url;
        assert!(f.is_none());
    }
}
