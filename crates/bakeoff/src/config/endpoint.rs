//! `--endpoint` and the flags every endpoint command shares.

use std::time::Duration;

use bakeoff_client::tls::{Tls, TlsOptions};
use bakeoff_client::{ApiKey, Client, ClientOptions, EndpointUrl, Timeouts};
use bakeoff_suites::{PreflightOptions, ThinkingMode};

use crate::cli::EndpointArgs;
use crate::exit::Error;

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
    pub fn validate(self) -> Result<EndpointConfig, Error> {
        let url = self
            .endpoint
            .as_deref()
            .map(EndpointUrl::parse)
            .transpose()
            .map_err(Error::usage)?;
        if self.tls.insecure && self.tls.ca_cert.is_some() {
            return Err(Error::usage(
                "--insecure and --ca-cert contradict each other: --ca-cert verifies against that CA, --insecure verifies nothing; give one",
            ));
        }
        let tls = Tls::new(&TlsOptions {
            ca_cert: self.tls.ca_cert.clone(),
            insecure: self.tls.insecure,
        })
        .map_err(Error::usage)?;
        let client = ClientOptions {
            timeouts: timeouts(&self)?,
            api_key: api_key(&self)?,
            tls,
        };
        if self.max_model_len == Some(0) {
            return Err(Error::usage(
                "--max-model-len must be a positive token count",
            ));
        }
        let thinking = ThinkingMode::parse(&self.thinking).map_err(Error::usage)?;
        Ok(EndpointConfig {
            url,
            client,
            preflight: PreflightOptions {
                model: self.model,
                max_model_len: self.max_model_len,
                ready_timeout: Duration::from_secs(self.ready_timeout),
                probe_tools: false,
            },
            thinking,
        })
    }
}

impl EndpointConfig {
    /// The second endpoint of `bench run --versus`: the same timeouts, preflight and thinking
    /// mode as this one, its own URL and model, and its own key when `api_key_env` names one.
    pub fn versus(
        &self,
        url: &str,
        model: Option<String>,
        api_key_env: Option<&str>,
    ) -> Result<EndpointConfig, Error> {
        let url = EndpointUrl::parse(url).map_err(|e| Error::usage(format!("--versus: {e}")))?;
        let mut c = self.clone();
        c.url = Some(url);
        c.preflight.model = model;
        if let Some(name) = api_key_env {
            c.client.api_key = Some(key_from_env(name, "--versus-api-key-env")?);
        }
        Ok(c)
    }

    /// A client for `url` (the given endpoint, or the embedded default's).
    pub fn client_for(&self, url: EndpointUrl) -> Result<Client, Error> {
        Client::try_new(url, self.client.clone()).map_err(Error::internal)
    }
}

/// The API key: `--api-key-env NAME` names the variable; otherwise `BAKEOFF_API_KEY`. The value
/// goes only into the Authorization header.
fn api_key(a: &EndpointArgs) -> Result<Option<ApiKey>, Error> {
    match &a.api_key_env {
        Some(name) => key_from_env(name, "--api-key-env").map(Some),
        None => Ok(std::env::var("BAKEOFF_API_KEY").ok().and_then(ApiKey::new)),
    }
}

/// The key in environment variable `name`, named by `flag`.
fn key_from_env(name: &str, flag: &str) -> Result<ApiKey, Error> {
    match std::env::var(name) {
        Ok(v) => ApiKey::new(v).ok_or_else(|| {
            Error::usage(format!(
                "environment variable {name} (from {flag}) is empty"
            ))
        }),
        Err(_) => Err(Error::usage(format!(
            "environment variable {name} (from {flag}) is not set; export it or drop the flag"
        ))),
    }
}

fn timeouts(a: &EndpointArgs) -> Result<Timeouts, Error> {
    for (name, v) in [
        ("--connect-timeout", a.connect_timeout),
        ("--first-byte-timeout", a.first_byte_timeout),
        ("--idle-timeout", a.idle_timeout),
        ("--request-timeout", a.request_timeout),
        ("--ready-timeout", a.ready_timeout),
    ] {
        if v == 0 {
            return Err(Error::usage(format!("{name} must be at least 1 second")));
        }
    }
    Ok(Timeouts {
        connect: Duration::from_secs(a.connect_timeout),
        first_byte: Duration::from_secs(a.first_byte_timeout),
        idle: Duration::from_secs(a.idle_timeout),
        total: Duration::from_secs(a.request_timeout),
    })
}
