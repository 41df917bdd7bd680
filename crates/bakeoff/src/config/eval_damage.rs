//! `eval damage`: its flags checked once, before anything is sent or written.

use bakeoff_client::EndpointUrl;
use bakeoff_suites::damage::{Prompt, prompts};

use super::{EndpointConfig, RunNaming};
use crate::cli::{DamageArgs, EndpointArgs};
use crate::exit::Error;

#[derive(Debug)]
pub struct DamageConfig {
    pub candidate_url: EndpointUrl,
    pub candidate: EndpointConfig,
    pub reference_url: EndpointUrl,
    pub reference: EndpointConfig,
    /// The prompt set, read and checked now.
    pub prompts: Vec<Prompt>,
    pub prompts_source: String,
    pub top_k: u32,
    /// `--tokens` (0: first token only).
    pub tokens: u32,
    /// `--seed`; `None`: a fresh one for this run.
    pub seed: Option<u64>,
    pub naming: RunNaming,
    pub json: bool,
}

impl DamageArgs {
    pub fn validate(self) -> Result<DamageConfig, Error> {
        if self.tokens > 4096 {
            return Err(Error::usage(format!(
                "--tokens {} is more than 4096: damage along the reply costs a request per position on some engines; give at most 4096",
                self.tokens
            )));
        }
        if self.top_k == 0 {
            return Err(Error::usage(
                "--top-k must be at least 1 (the first token's alternatives to compare)",
            ));
        }
        // Each endpoint through the flags every command shares, so keys, timeouts and the
        // preflight are checked (and worded) the one way.
        let shared = |url: String, model: Option<String>, key: Option<String>| EndpointArgs {
            endpoint: Some(url),
            model,
            max_model_len: None,
            ready_timeout: self.ready_timeout,
            api_key_env: key,
            connect_timeout: bakeoff_client::Timeouts::default().connect.as_secs(),
            first_byte_timeout: self
                .request_timeout
                .min(bakeoff_client::Timeouts::default().first_byte.as_secs()),
            idle_timeout: bakeoff_client::Timeouts::default().idle.as_secs(),
            request_timeout: self.request_timeout,
            thinking: "default".into(),
            tls: self.tls.clone(),
        };
        let candidate = shared(
            self.endpoint.clone(),
            self.model.clone(),
            self.api_key_env.clone(),
        )
        .validate()?;
        let reference = shared(
            self.reference.clone(),
            self.reference_model.clone(),
            self.reference_api_key_env.clone(),
        )
        .validate()
        .map_err(|e| Error::usage(format!("--reference: {e}")))?;
        let (Some(candidate_url), Some(reference_url)) =
            (candidate.url.clone(), reference.url.clone())
        else {
            return Err(Error::internal(
                "--endpoint and --reference were given but not kept",
            ));
        };
        let prompt_set = prompts::load(self.prompts.as_deref()).map_err(Error::usage)?;
        let prompts_source = match &self.prompts {
            Some(p) => p.display().to_string(),
            None => prompts::DEFAULT_SOURCE.into(),
        };
        Ok(DamageConfig {
            candidate_url,
            candidate,
            reference_url,
            reference,
            prompts: prompt_set,
            prompts_source,
            top_k: self.top_k,
            tokens: self.tokens,
            seed: self.seed,
            naming: RunNaming::new(self.naming)?,
            json: self.json,
        })
    }
}
