//! `audit checkpoint`: the flag it checks must name something.

use crate::FlagError;
use crate::cli::AuditCheckpointArgs;

impl AuditCheckpointArgs {
    /// An empty `--quantization ''` is not "no flag": it would be checked as a method named
    /// nothing and agree with every checkpoint.
    pub fn validate(self) -> Result<Self, FlagError> {
        if self
            .quantization
            .as_deref()
            .is_some_and(|q| q.trim().is_empty())
        {
            return Err(FlagError::invalid(
                "--quantization is empty; fix: give the method the server is started with (e.g. --quantization awq), or leave the flag out for a server started without one",
            ));
        }
        Ok(self)
    }
}
