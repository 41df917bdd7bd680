//! One error type at the edge, mapped to exit codes: 0 ok/fit, 1 checked-and-failed,
//! 2 usage or configuration error.

use std::process::ExitCode;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Ok,
    /// The thing was checked and failed (unfit endpoint, failure artifact, incomplete run).
    Failed,
    /// Bad input or configuration.
    Usage,
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> Self {
        match e {
            Exit::Ok => ExitCode::SUCCESS,
            Exit::Failed => ExitCode::from(1),
            Exit::Usage => ExitCode::from(2),
        }
    }
}

/// An error that ends the command: a usage error (2) or a failure after checking (1).
#[derive(Debug)]
pub struct CliError {
    pub code: Exit,
    pub error: anyhow::Error,
}

impl CliError {
    pub fn exit(&self) -> Exit {
        self.code
    }
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if f.alternate() {
            write!(f, "{:#}", self.error)
        } else {
            write!(f, "{}", self.error)
        }
    }
}

pub fn usage(msg: impl std::fmt::Display) -> CliError {
    CliError {
        code: Exit::Usage,
        error: anyhow::anyhow!("{msg}"),
    }
}

pub fn failed(msg: impl std::fmt::Display) -> CliError {
    CliError {
        code: Exit::Failed,
        error: anyhow::anyhow!("{msg}"),
    }
}
