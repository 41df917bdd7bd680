//! `eval adapter`: its flags checked once, before anything is sent or written.

use bakeoff_client::EndpointUrl;
use bakeoff_measure::adapter::AdapterOptions;
use bakeoff_measure::damage::{Prompt, prompts};

use super::{EndpointConfig, RunNaming, client, request_timeouts, whole_secs};
use crate::FlagError;
use crate::cli::AdapterArgs;

#[derive(Debug)]
pub struct AdapterConfig {
    pub url: EndpointUrl,
    /// The client's timeouts and key, and the preflight (asked of the base model).
    pub endpoint: EndpointConfig,
    pub adapter: String,
    pub base: Option<String>,
    pub options: AdapterOptions,
    /// The prompt set, read and checked now (`--prompts`, else `eval damage`'s shipped one).
    pub prompts: Vec<Prompt>,
    pub prompts_source: String,
    pub naming: RunNaming,
    pub json: bool,
}

impl AdapterArgs {
    pub fn validate(self) -> Result<AdapterConfig, FlagError> {
        if self.adapter.trim().is_empty() {
            return Err(FlagError::invalid(
                "--adapter is empty: give the adapter's model id (vLLM) or its id, path or file \
                 name as llama.cpp's GET /lora-adapters lists it",
            ));
        }
        if self.top_k == 0 {
            return Err(FlagError::invalid(
                "--top-k must be at least 1 (the first token's alternatives to compare)",
            ));
        }
        if self.max_tokens == 0 {
            return Err(FlagError::invalid("--max-tokens must be at least 1"));
        }
        // The endpoint checks every command shares, so keys, timeouts and the preflight are
        // checked (and worded) the one way.
        let timeouts = request_timeouts(self.request_timeout)?;
        let ready_timeout = whole_secs("--ready-timeout", self.ready_timeout)?;
        let client = client(timeouts, self.api_key_env.as_deref(), &self.tls)?;
        let (url, endpoint) =
            EndpointConfig::given(&self.endpoint, self.base.clone(), client, ready_timeout)?;
        let prompt_set = prompts::load(self.prompts.as_deref())?;
        let prompts_source = match &self.prompts {
            Some(p) => p.display().to_string(),
            None => prompts::DEFAULT_SOURCE.into(),
        };
        let naming = RunNaming {
            out: self.out,
            slug: super::slug(self.slug)?,
            notes: Vec::new(),
            hardware: None,
            replace: false,
        };
        Ok(AdapterConfig {
            url,
            endpoint,
            adapter: self.adapter,
            base: self.base,
            options: AdapterOptions {
                top_k: self.top_k,
                max_tokens: self.max_tokens,
            },
            prompts: prompt_set,
            prompts_source,
            naming,
            json: self.json,
        })
    }
}
