//! A running endpoint's chat template, for `bakeoff audit template URL`: llama.cpp serves the
//! template it applies at `/props` (`chat_template`), which discovery reads.

use std::time::Duration;

use bakeoff_text::ExtractedTemplate;

use super::{DiscoveryOptions, discover};
use crate::{ApiKey, Client, ClientOptions, EndpointUrl, Timeouts, UrlError};

#[derive(Debug, thiserror::Error)]
pub enum EndpointTemplateError {
    #[error(transparent)]
    Url(#[from] UrlError),
    /// Not llama.cpp, or a llama.cpp without a template at `/props`.
    #[error(
        "{endpoint}: the endpoint exposes no chat template (llama.cpp /props has none, or it is not llama.cpp); fix: audit the model directory instead"
    )]
    NoTemplate { endpoint: String },
    /// No request reached the server (refused, timed out, no such host): there is nothing to
    /// say about its template.
    #[error(
        "{endpoint}: cannot reach the endpoint ({reason}); fix: start the server, or check the URL and port"
    )]
    Unreachable { endpoint: String, reason: String },
}

/// The chat template the endpoint at `endpoint` (an `http://` or `https://` URL) applies,
/// labelled by that URL.
pub async fn endpoint_template(
    endpoint: &str,
    api_key: Option<ApiKey>,
) -> Result<ExtractedTemplate, EndpointTemplateError> {
    let client = Client::new(
        EndpointUrl::parse(endpoint)?,
        ClientOptions {
            timeouts: Timeouts::default(),
            api_key,
            ..Default::default()
        },
    );
    let opts = DiscoveryOptions {
        probe_timeout: Duration::from_secs(10),
        ..DiscoveryOptions::default()
    };
    let found = discover(&client, &opts).await;
    if let Some(e) = &found.unreachable {
        return Err(EndpointTemplateError::Unreachable {
            endpoint: endpoint.to_owned(),
            reason: e.to_string(),
        });
    }
    let text = found
        .chat_template
        .ok_or_else(|| EndpointTemplateError::NoTemplate {
            endpoint: endpoint.to_owned(),
        })?;
    Ok(ExtractedTemplate {
        label: endpoint.to_owned(),
        source: "endpoint /props chat_template".into(),
        text,
        bos_token: None,
        eos_token: None,
    })
}
