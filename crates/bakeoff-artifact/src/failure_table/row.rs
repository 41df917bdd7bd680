//! A row of the failure table and the constructors the table's rows are written with.

use crate::FailureClass;

/// Where a row's signature is observed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignatureKind {
    /// A regular expression over one log line.
    Log(&'static str),
    /// Produced by the seat watchdog from something other than one log line.
    Watchdog(&'static str),
    /// What the preflight observed of an endpoint (its probes and the readiness wait).
    Endpoint(&'static str),
}

#[derive(Debug, Clone, Copy)]
pub struct Row {
    pub class: FailureClass,
    pub signature: SignatureKind,
    /// Where the signature comes from: the upstream source that prints it (file and version), a
    /// field case (docs/field-cases.md) or a measured log.
    pub source: &'static str,
    pub remediation: &'static str,
    /// Chosen as root cause only when no primary signature matched.
    pub secondary: bool,
    /// A generic bind failure counts only when it is the API server's own (see [`Scope`]).
    pub scope: Scope,
}

/// Which lines a row's signature may claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Any line that matches.
    Any,
    /// Only the API server's own port: the line names the seat's port, or the lines just above
    /// it are the API server's bind (`create_server_socket`, uvicorn, `serve_http`). A bind
    /// failure of an internal socket (NCCL RAS `Call to bind failed: Address already in use`,
    /// torch's c10d store on 29500) is not the seat's port.
    ApiPort,
    /// Only when one of these markers stands within [`NEAR_LINES`] lines of the match, above
    /// or below it (a log pasted newest line first has its traceback below): a bare
    /// `KeyError: 'x'` is transformers' unknown `model_type` only under its `CONFIG_MAPPING`
    /// frames.
    Near(&'static [&'static str]),
}

/// How far from a [`Scope::Near`] match its markers are looked for.
pub const NEAR_LINES: usize = 12;

pub(super) const fn log(
    class: FailureClass,
    re: &'static str,
    source: &'static str,
    remediation: &'static str,
) -> Row {
    Row {
        class,
        signature: SignatureKind::Log(re),
        source,
        remediation,
        secondary: false,
        scope: Scope::Any,
    }
}

pub(super) const fn watch(
    class: FailureClass,
    what: &'static str,
    source: &'static str,
    remediation: &'static str,
) -> Row {
    Row {
        class,
        signature: SignatureKind::Watchdog(what),
        source,
        remediation,
        secondary: false,
        scope: Scope::Any,
    }
}

pub(super) const fn endpoint(
    class: FailureClass,
    observed: &'static str,
    source: &'static str,
    remediation: &'static str,
) -> Row {
    Row {
        class,
        signature: SignatureKind::Endpoint(observed),
        source,
        remediation,
        secondary: false,
        scope: Scope::Any,
    }
}
