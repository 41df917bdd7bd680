//! `plan` and `kv`. Numeric flags arrive as signed numbers so that a zero, negative or NaN value
//! is refused here in one line naming the flag and the fix (exit 2).

use std::collections::BTreeMap;
use std::path::PathBuf;

use bakeoff_model::KvCacheDtype;
use bakeoff_plan::kv_report::KvRequest;

use crate::FlagError;
use crate::cli::{KvArgs, PlanArgs, name_of};

#[derive(Debug)]
pub struct PlanConfig {
    pub fleet: Option<PathBuf>,
    pub json: bool,
    pub margin_gib: f64,
    pub gpu_memory_gib: Option<f64>,
    /// `--coexist A,B --gpu N`.
    pub coexist: Option<(String, String, u32)>,
    /// `--engine-version SEAT=VERSION`, by seat.
    pub engine_versions: BTreeMap<String, String>,
    pub cuda_context_gib: f64,
    pub cuda_graphs_gib: f64,
    pub nvidia_smi: String,
}

impl PlanArgs {
    pub fn validate(self) -> Result<PlanConfig, FlagError> {
        if !(self.margin.is_finite() && self.margin >= 0.0) {
            return Err(FlagError::invalid(format!(
                "--margin {}: must be a number of GiB, 0 or more; fix: e.g. --margin 2 (0 for no margin)",
                self.margin
            )));
        }
        let gpu_memory_gib = self
            .gpu_memory_gib
            .map(|m| {
                positive_gib(
                    "--gpu-memory-gib",
                    m,
                    "the card's memory as PyTorch reports it, e.g. 94.97 for an H100 NVL",
                )
            })
            .transpose()?;
        let cuda_context_gib = positive_gib(
            "--cuda-context-gib",
            self.cuda_context_gib,
            "what nvidia-smi shows for a freshly started seat beyond its budget (default 0.5)",
        )?;
        let cuda_graphs_gib = positive_gib(
            "--cuda-graphs-gib",
            self.cuda_graphs_gib,
            "what a pre-v0.21 vLLM seat's graphs hold (default 1.0); a seat with --enforce-eager is already priced without graphs",
        )?;
        let gpu = self
            .gpu
            .map(|g| {
                u32::try_from(g).map_err(|_| {
                    FlagError::invalid(format!(
                        "--gpu {g}: not a GPU index; fix: pass the index nvidia-smi shows (0, 1, …)"
                    ))
                })
            })
            .transpose()?;
        let mut engine_versions = BTreeMap::new();
        for v in &self.engine_versions {
            let (s, ver) = v.split_once('=').ok_or_else(|| {
                FlagError::invalid(format!("--engine-version {v:?}: write it as SEAT=VERSION"))
            })?;
            engine_versions.insert(s.to_owned(), ver.to_owned());
        }
        let coexist = match &self.coexist {
            None => None,
            Some(c) => {
                let (x, y) = c.split_once(',').ok_or_else(|| {
                    FlagError::invalid("--coexist takes two seat names: --coexist A,B")
                })?;
                let gpu = gpu.ok_or_else(|| FlagError::invalid("--coexist needs --gpu N"))?;
                Some((x.trim().to_owned(), y.trim().to_owned(), gpu))
            }
        };
        // One default for `--fleet` everywhere: fleet.toml, here only when there is one.
        let fleet = self.fleet.or_else(|| {
            let default = PathBuf::from(crate::cli::DEFAULT_FLEET);
            default.is_file().then_some(default)
        });
        Ok(PlanConfig {
            fleet,
            json: self.json,
            margin_gib: self.margin,
            gpu_memory_gib,
            coexist,
            engine_versions,
            cuda_context_gib,
            cuda_graphs_gib,
            nvidia_smi: self.nvidia_smi,
        })
    }
}

#[derive(Debug)]
pub struct KvConfig {
    /// Everything but the engine log, which the command reads (`log`).
    pub request: KvRequest,
    pub log: Option<PathBuf>,
    pub json: bool,
}

impl KvConfig {
    /// `--log FILE`'s text, when one is given.
    pub fn read_log(&self) -> Result<Option<String>, FlagError> {
        self.log
            .as_ref()
            .map(|p| {
                std::fs::read_to_string(p).map_err(|source| FlagError::EngineLog {
                    path: p.clone(),
                    source,
                })
            })
            .transpose()
    }
}

impl KvArgs {
    pub fn validate(self) -> Result<KvConfig, FlagError> {
        // Every numeric flag is checked before anything is read: 0, negative and NaN are refused.
        let max_model_len = self
            .max_model_len
            .map(|v| {
                at_least_one(
                    "--max-model-len",
                    v,
                    "pass the engine's max_model_len in tokens (e.g. 32768), or leave it out to use the model's context length",
                )
            })
            .transpose()?;
        let budget_gib = self
            .budget_gib
            .map(|b| {
                positive_gib(
                    "--budget-gib",
                    b,
                    "pass the KV budget in GiB (vLLM's `Available KV cache memory`, e.g. 20), or leave it out",
                )
            })
            .transpose()?;
        let tp = at_least_one(
            "--tp",
            self.tp,
            "pass the seat's tensor-parallel size (1 without tensor parallelism)",
        )?;
        let ctx = self
            .ctx
            .map(|c| {
                at_least_one(
                    "--ctx",
                    c,
                    "pass llama-server's -c in tokens; for -c 0 (llama-server's \"the model's training context\") leave --ctx out",
                )
            })
            .transpose()?;
        let parallel = at_least_one(
            "--parallel",
            self.parallel,
            "pass llama-server's -np (1 or more)",
        )?;
        // The cache types apply to a GGUF, the dtype to a config.json.
        let kv_cache_dtype = if KvRequest::is_gguf(&self.path) {
            KvCacheDtype::Auto
        } else {
            self.kv_cache_dtype.into()
        };
        Ok(KvConfig {
            request: KvRequest {
                path: self.path,
                max_model_len,
                budget_gib,
                kv_cache_dtype,
                tp,
                log: None,
                ctx,
                parallel,
                kv_unified: self.kv_unified,
                cache_type_k: name_of(&self.cache_type_k),
                cache_type_v: name_of(&self.cache_type_v),
            },
            log: self.log,
            json: self.json,
        })
    }
}

/// A whole-number flag that must be 1 or more: one line naming the flag and the fix.
fn at_least_one(flag: &str, v: i64, fix: &str) -> Result<u64, FlagError> {
    u64::try_from(v).ok().filter(|v| *v >= 1).ok_or_else(|| {
        FlagError::invalid(format!(
            "{flag} {v}: must be a whole number, 1 or more; fix: {fix}"
        ))
    })
}

/// A GiB flag that must be a finite number above 0.
fn positive_gib(flag: &str, v: f64, fix: &str) -> Result<f64, FlagError> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(FlagError::invalid(format!(
            "{flag} {v}: must be a number of GiB above 0; fix: {fix}"
        )))
    }
}
