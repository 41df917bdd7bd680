//! Kubernetes names. A seat name (lower-case letters, digits, single dashes) is already a DNS-1123
//! label in its characters; a Service name must also start with a letter and every name and
//! label value here has at most 63 characters.

use crate::error::KubeError;

/// The longest DNS-1123 label (a Service name, a namespace, a label value).
const MAX_LABEL: usize = 63;

/// The name of a seat's Deployment, Service and container: the seat's own, so `kubectl scale
/// deployment/char-rp` reads like `bakeoff seat down char-rp`.
pub(crate) fn object_name(seat: &str) -> Result<String, KubeError> {
    if seat.len() > MAX_LABEL || !seat.starts_with(|c: char| c.is_ascii_lowercase()) {
        return Err(KubeError::Seat {
            seat: seat.to_string(),
            message: format!(
                "Kubernetes needs a Service name of at most {MAX_LABEL} characters starting with a letter; rename the seat to export it"
            ),
        });
    }
    Ok(seat.to_string())
}

pub(crate) fn check_namespace(ns: &str) -> Result<(), KubeError> {
    let ok = !ns.is_empty()
        && ns.len() <= MAX_LABEL
        && ns
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !ns.starts_with('-')
        && !ns.ends_with('-');
    if ok {
        Ok(())
    } else {
        Err(KubeError::Namespace(format!(
            "--namespace {ns:?} is not a Kubernetes namespace: use lower-case letters, digits and dashes, at most {MAX_LABEL}, starting and ending with a letter or digit"
        )))
    }
}

/// A Secret key (`[-._a-zA-Z0-9]+`) from an environment variable name.
pub(crate) fn secret_key(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect()
}
