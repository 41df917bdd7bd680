//! `bench compare A B`.

use std::path::PathBuf;

use crate::FlagError;
use crate::cli::{BenchCompareArgs, Sweep};

#[derive(Debug)]
pub struct BenchCompareConfig {
    pub a: PathBuf,
    pub b: PathBuf,
    pub sweep: Sweep,
    /// `--allow contaminated`.
    pub allow_contaminated: bool,
    pub json: bool,
}

impl BenchCompareArgs {
    pub fn validate(self) -> Result<BenchCompareConfig, FlagError> {
        Ok(BenchCompareConfig {
            allow_contaminated: super::allow_contaminated(&self.allow, "bench compare")?,
            a: self.a,
            b: self.b,
            sweep: self.sweep,
            json: self.json,
        })
    }
}
