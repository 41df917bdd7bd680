//! `--endpoint` and the flags every endpoint command shares.

use std::time::Duration;

use bakeoff_client::tls::{Tls, TlsOptions};
use bakeoff_client::{ApiKey, Client, ClientOptions, EndpointUrl, Timeouts};
use bakeoff_suites::{PreflightOptions, ThinkingMode};

use crate::FlagError;
use crate::cli::{EndpointArgs, TlsArgs};

/// The endpoint to measure and how to talk to it.
#[derive(Debug, Clone)]
pub struct EndpointConfig {
    /// `None`: the embedded default (`eval run` and `bench run` start one).
    pub url: Option<EndpointUrl>,
    pub client: ClientOptions,
    pub preflight: PreflightOptions,
    pub thinking: ThinkingMode,
}

impl EndpointArgs {
    pub fn validate(self) -> Result<EndpointConfig, FlagError> {
        let url = url(self.endpoint.as_deref())?;
        let timeouts = Timeouts {
            connect: whole_secs("--connect-timeout", self.connect_timeout)?,
            first_byte: whole_secs("--first-byte-timeout", self.first_byte_timeout)?,
            idle: whole_secs("--idle-timeout", self.idle_timeout)?,
            total: whole_secs("--request-timeout", self.request_timeout)?,
        };
        let ready_timeout = whole_secs("--ready-timeout", self.ready_timeout)?;
        let client = client(timeouts, self.api_key_env.as_deref(), &self.tls)?;
        if self.max_model_len == Some(0) {
            return Err(FlagError::invalid(
                "--max-model-len must be a positive token count",
            ));
        }
        Ok(EndpointConfig {
            url,
            client,
            preflight: PreflightOptions {
                model: self.model,
                max_model_len: self.max_model_len,
                ready_timeout,
                probe_tools: false,
            },
            thinking: self.thinking.into(),
        })
    }
}

/// `--endpoint URL` (absent: the embedded default).
fn url(endpoint: Option<&str>) -> Result<Option<EndpointUrl>, FlagError> {
    Ok(endpoint.map(EndpointUrl::parse).transpose()?)
}

/// How to talk to an endpoint: its timeouts, the key from `--api-key-env NAME` (else
/// `BAKEOFF_API_KEY`), and TLS from `--ca-cert`/`--insecure`. Every command that talks to an
/// endpoint checks these here, so they are refused in the same words everywhere.
pub fn client(
    timeouts: Timeouts,
    api_key_env: Option<&str>,
    tls: &TlsArgs,
) -> Result<ClientOptions, FlagError> {
    if tls.insecure && tls.ca_cert.is_some() {
        return Err(FlagError::invalid(
            "--insecure and --ca-cert contradict each other: --ca-cert verifies against that CA, --insecure verifies nothing; give one",
        ));
    }
    let tls = Tls::new(&TlsOptions {
        ca_cert: tls.ca_cert.clone(),
        insecure: tls.insecure,
    })?;
    Ok(ClientOptions {
        timeouts,
        api_key: api_key(api_key_env)?,
        tls,
    })
}

/// The timeouts of a command whose one timeout flag is `--request-timeout` (`eval damage`,
/// `eval adapter`): the others keep their defaults, the first byte due no later than the whole
/// request.
pub fn request_timeouts(request_timeout: u64) -> Result<Timeouts, FlagError> {
    let total = whole_secs("--request-timeout", request_timeout)?;
    let d = Timeouts::default();
    Ok(Timeouts {
        total,
        first_byte: d.first_byte.min(total),
        ..d
    })
}

/// A whole-seconds flag that must be 1 or more.
pub fn whole_secs(flag: &str, v: u64) -> Result<Duration, FlagError> {
    if v == 0 {
        return Err(FlagError::invalid(format!(
            "{flag} must be at least 1 second"
        )));
    }
    Ok(Duration::from_secs(v))
}

impl EndpointConfig {
    /// The second endpoint of `bench run --versus`: the same timeouts, preflight and thinking
    /// mode as this one, its own URL and model, and its own key when `api_key_env` names one.
    pub fn versus(
        &self,
        url: &str,
        model: Option<String>,
        api_key_env: Option<&str>,
    ) -> Result<EndpointConfig, FlagError> {
        let url =
            EndpointUrl::parse(url).map_err(|e| FlagError::invalid(format!("--versus: {e}")))?;
        let mut c = self.clone();
        c.url = Some(url);
        c.preflight.model = model;
        if let Some(name) = api_key_env {
            c.client.api_key = Some(key_from_env(name, "--versus-api-key-env")?);
        }
        Ok(c)
    }

    /// An endpoint given by URL alone, its thinking mode left to the server and its window to
    /// discovery: `eval damage`'s two, `eval adapter`'s one. The URL comes back apart too, as
    /// these commands always have one.
    pub fn given(
        url: &str,
        model: Option<String>,
        client: ClientOptions,
        ready_timeout: Duration,
    ) -> Result<(EndpointUrl, Self), FlagError> {
        let url = EndpointUrl::parse(url)?;
        let c = EndpointConfig {
            url: Some(url.clone()),
            client,
            preflight: PreflightOptions {
                model,
                max_model_len: None,
                ready_timeout,
                probe_tools: false,
            },
            thinking: ThinkingMode::Default,
        };
        Ok((url, c))
    }

    /// A client for `url` (the given endpoint, or the embedded default's).
    pub fn client_for(&self, url: EndpointUrl) -> Result<Client, FlagError> {
        Client::try_new(url, self.client.clone()).map_err(FlagError::Client)
    }
}

/// The API key: `--api-key-env NAME` names the variable; otherwise `BAKEOFF_API_KEY`. The value
/// goes only into the Authorization header.
fn api_key(api_key_env: Option<&str>) -> Result<Option<ApiKey>, FlagError> {
    match api_key_env {
        Some(name) => key_from_env(name, "--api-key-env").map(Some),
        None => Ok(std::env::var("BAKEOFF_API_KEY").ok().and_then(ApiKey::new)),
    }
}

/// The key in environment variable `name`, named by `flag`.
fn key_from_env(name: &str, flag: &str) -> Result<ApiKey, FlagError> {
    match std::env::var(name) {
        Ok(v) => ApiKey::new(v).ok_or_else(|| {
            FlagError::invalid(format!(
                "environment variable {name} (from {flag}) is empty"
            ))
        }),
        Err(_) => Err(FlagError::invalid(format!(
            "environment variable {name} (from {flag}) is not set; export it or drop the flag"
        ))),
    }
}
