//! `eval preflight`, `eval run`, `eval compare`.

use std::path::PathBuf;

use bakeoff_local::embedded::Embedded;
use bakeoff_suites::context::{self, ContextOptions};
use bakeoff_suites::longgen::LonggenOptions;
use bakeoff_suites::throughput::ThroughputOptions;
use bakeoff_suites::{SuiteChoice, SuiteName, SuiteOptions};

use super::{EndpointConfig, RunNaming, embedded};
use crate::FlagError;
use crate::cli::{CompareArgs, LoadSuiteArgs, PreflightArgs, RunArgs};

#[derive(Debug)]
pub struct PreflightConfig {
    pub endpoint: EndpointConfig,
    pub url: bakeoff_client::EndpointUrl,
    pub json: bool,
}

impl PreflightArgs {
    pub fn validate(self) -> Result<PreflightConfig, FlagError> {
        if self.endpoint.endpoint.is_none() {
            return Err(FlagError::invalid(
                "eval preflight needs --endpoint URL (e.g. http://127.0.0.1:8080)",
            ));
        }
        let endpoint = self.endpoint.validate()?;
        let url = endpoint.url.clone().ok_or_else(|| {
            FlagError::invalid("eval preflight needs --endpoint URL (e.g. http://127.0.0.1:8080)")
        })?;
        Ok(PreflightConfig {
            endpoint,
            url,
            json: self.json,
        })
    }
}

#[derive(Debug)]
pub struct RunConfig {
    pub endpoint: EndpointConfig,
    pub suites: Vec<SuiteName>,
    pub naming: RunNaming,
    pub json: bool,
    pub local: Embedded,
    /// The suites' options; `load_progress` is left for the command to attach.
    pub suite_options: SuiteOptions,
    /// Measure the harness ceiling before the load suites (not `--no-calibrate`).
    pub calibrate: bool,
}

impl RunArgs {
    pub fn validate(self) -> Result<RunConfig, FlagError> {
        // Everything is validated before anything starts or is written.
        // The library reads the list: `all` expanded in its order, repeats once, none refused.
        let suites = SuiteChoice::expand(self.suite.iter().flatten().copied())?;
        let naming = RunNaming::new(self.naming.clone())?;
        let mut endpoint = self.endpoint.clone().validate()?;
        endpoint.preflight.probe_tools = suites.contains(&SuiteName::Tool);
        let suite_options = suite_options(&self, &endpoint)?;
        let local = embedded(self.local_ctx, self.local_parallel)?;
        Ok(RunConfig {
            endpoint,
            suites,
            naming,
            json: self.json,
            local,
            suite_options,
            calibrate: !self.load.no_calibrate,
        })
    }
}

/// `--thinking`, `--battery`, `--refusal-battery`, `--structured-battery`, `--schema-form`, `--limit` and the suites' own flags.
fn suite_options(a: &RunArgs, endpoint: &EndpointConfig) -> Result<SuiteOptions, FlagError> {
    if let Some(p) = &a.battery {
        bakeoff_suites::intelligence::load(Some(p))?;
    }
    if let Some(p) = &a.refusal_battery {
        bakeoff_suites::refusal::load(Some(p))?;
    }
    if let Some(p) = &a.structured_battery {
        bakeoff_suites::structured::load(Some(p))?;
    }
    if a.limit == Some(0) {
        return Err(FlagError::invalid("--limit must be at least 1"));
    }
    Ok(SuiteOptions {
        thinking: endpoint.thinking,
        battery: a.battery.clone(),
        refusal_battery: a.refusal_battery.clone(),
        structured_battery: a.structured_battery.clone(),
        schema_form: a.schema_form.into(),
        limit: a.limit,
        context: context_options(a)?,
        throughput: a.load.throughput()?,
        longgen: a.load.longgen()?,
        load_progress: Default::default(),
    })
}

fn context_options(a: &RunArgs) -> Result<ContextOptions, FlagError> {
    Ok(ContextOptions {
        targets: a
            .context_targets
            .as_deref()
            .map(context::parse_targets)
            .transpose()?,
        depths: context::parse_depths(&a.context_depths)?,
        seed: a.seed.unwrap_or_else(|| context::fresh_seed("")),
        overflow_probe: !a.no_overflow_probe,
        tokenizer: a
            .tokenizer
            .as_deref()
            .map(|p| bakeoff_text::LocalTokenizer::from_file(p).map(std::sync::Arc::new))
            .transpose()?,
    })
}

impl LoadSuiteArgs {
    fn throughput(&self) -> Result<ThroughputOptions, FlagError> {
        // The same level parser as `bench run --concurrency`.
        let concurrency = bakeoff_load::plan::parse_levels(&self.load_concurrency)
            .ok()
            .filter(|c| !c.is_empty())
            .ok_or_else(|| {
                FlagError::invalid("--load-concurrency needs levels of at least 1, e.g. 1,2,4")
            })?;
        if self.load_requests == 0 || self.load_prompt_tokens == 0 || self.load_output_tokens == 0 {
            return Err(FlagError::invalid(
                "--load-requests, --load-prompt-tokens and --load-output-tokens must be at least 1",
            ));
        }
        Ok(ThroughputOptions {
            concurrency,
            requests_per_step: self.load_requests,
            prompt_tokens: self.load_prompt_tokens,
            output_tokens: self.load_output_tokens,
            ..Default::default()
        })
    }

    fn longgen(&self) -> Result<LonggenOptions, FlagError> {
        if self.longgen_probes == 0 || self.longgen_tokens == 0 || self.longgen_repeats == 0 {
            return Err(FlagError::invalid(
                "--longgen-probes, --longgen-tokens and --longgen-repeats must be at least 1",
            ));
        }
        Ok(LonggenOptions {
            probes: self.longgen_probes,
            output_tokens: self.longgen_tokens,
            repeats: self.longgen_repeats,
            ..Default::default()
        })
    }
}

#[derive(Debug)]
pub struct CompareConfig {
    pub a: PathBuf,
    pub b: PathBuf,
    pub allow: Vec<bakeoff_report::compare::Confound>,
    pub json: bool,
}

impl CompareArgs {
    /// Nothing left to refuse: clap read `--allow`, and every difference can be allowed here.
    pub fn validate(self) -> CompareConfig {
        CompareConfig {
            allow: super::confounds(&self.allow),
            a: self.a,
            b: self.b,
            json: self.json,
        }
    }
}
