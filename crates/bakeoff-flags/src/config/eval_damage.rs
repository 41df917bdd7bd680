//! `eval damage`: its flags checked once, before anything is sent or written.

use bakeoff_client::EndpointUrl;
use bakeoff_measure::damage::{Prompt, prompts};

use super::{EndpointConfig, RunNaming, client, request_timeouts, whole_secs};
use crate::FlagError;
use crate::cli::DamageArgs;

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
    pub fn validate(self) -> Result<DamageConfig, FlagError> {
        if self.tokens > 4096 {
            return Err(FlagError::invalid(format!(
                "--tokens {} is more than 4096: damage along the reply costs a request per position on some engines; give at most 4096",
                self.tokens
            )));
        }
        if self.top_k == 0 {
            return Err(FlagError::invalid(
                "--top-k must be at least 1 (the first token's alternatives to compare)",
            ));
        }
        // Each endpoint through the checks every command shares, so keys, timeouts and the
        // preflight are checked (and worded) the one way.
        let timeouts = request_timeouts(self.request_timeout)?;
        let ready_timeout = whole_secs("--ready-timeout", self.ready_timeout)?;
        let shared = |url: &str, model: &Option<String>, key: Option<&str>| {
            let client = client(timeouts, key, &self.tls)?;
            EndpointConfig::given(url, model.clone(), client, ready_timeout)
        };
        let (candidate_url, candidate) =
            shared(&self.endpoint, &self.model, self.api_key_env.as_deref())?;
        let (reference_url, reference) = shared(
            &self.reference,
            &self.reference_model,
            self.reference_api_key_env.as_deref(),
        )
        .map_err(|e| FlagError::invalid(format!("--reference: {e}")))?;
        let prompt_set = prompts::load(self.prompts.as_deref())?;
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
