//! `eval adapter`: its flags checked once, before anything is sent or written.

use bakeoff_client::EndpointUrl;
use bakeoff_suites::adapter::AdapterOptions;
use bakeoff_suites::damage::{Prompt, prompts};

use super::{EndpointConfig, RunNaming};
use crate::cli::{AdapterArgs, EndpointArgs, NamingArgs};
use crate::exit::Error;

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
    pub fn validate(self) -> Result<AdapterConfig, Error> {
        if self.adapter.trim().is_empty() {
            return Err(Error::usage(
                "--adapter is empty: give the adapter's model id (vLLM) or its id, path or file \
                 name as llama.cpp's GET /lora-adapters lists it",
            ));
        }
        if self.top_k == 0 {
            return Err(Error::usage(
                "--top-k must be at least 1 (the first token's alternatives to compare)",
            ));
        }
        if self.max_tokens == 0 {
            return Err(Error::usage("--max-tokens must be at least 1"));
        }
        // The endpoint flags every command shares, so keys, timeouts and the preflight are
        // checked (and worded) the one way.
        let endpoint = EndpointArgs {
            endpoint: Some(self.endpoint),
            model: self.base.clone(),
            max_model_len: None,
            ready_timeout: self.ready_timeout,
            api_key_env: self.api_key_env,
            connect_timeout: bakeoff_client::Timeouts::default().connect.as_secs(),
            first_byte_timeout: self
                .request_timeout
                .min(bakeoff_client::Timeouts::default().first_byte.as_secs()),
            idle_timeout: bakeoff_client::Timeouts::default().idle.as_secs(),
            request_timeout: self.request_timeout,
            thinking: "default".into(),
            tls: self.tls.clone(),
        }
        .validate()?;
        let url = endpoint
            .url
            .clone()
            .ok_or_else(|| Error::internal("--endpoint was given but not kept"))?;
        let prompt_set = prompts::load(self.prompts.as_deref()).map_err(Error::usage)?;
        let prompts_source = match &self.prompts {
            Some(p) => p.display().to_string(),
            None => prompts::DEFAULT_SOURCE.into(),
        };
        let naming = RunNaming::new(NamingArgs {
            out: self.out,
            slug: self.slug,
            note: Vec::new(),
            hardware: None,
            replace: false,
        })?;
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
