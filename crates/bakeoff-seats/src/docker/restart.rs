//! The fleet file's `restart` key as Docker's restart policy.

use bollard::models::{RestartPolicy, RestartPolicyNameEnum};

/// A `restart` value Docker would not take; each names the value as written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RestartError {
    #[error("restart {0:?}: the retry count must be a number")]
    RetryCount(String),
    #[error("restart {0:?} must be no, always, unless-stopped, on-failure or on-failure:N")]
    Name(String),
    #[error("restart {0:?}: only on-failure takes a retry count")]
    CountWithoutOnFailure(String),
}

/// A restart policy string of the fleet file, checked.
pub fn restart_policy(s: &str) -> Result<RestartPolicy, RestartError> {
    let (name, n) = match s.split_once(':') {
        Some((a, b)) => (
            a,
            Some(
                b.parse::<i64>()
                    .map_err(|_| RestartError::RetryCount(s.to_string()))?,
            ),
        ),
        None => (s, None),
    };
    let name = match name {
        "no" => RestartPolicyNameEnum::NO,
        "always" => RestartPolicyNameEnum::ALWAYS,
        "unless-stopped" => RestartPolicyNameEnum::UNLESS_STOPPED,
        "on-failure" => RestartPolicyNameEnum::ON_FAILURE,
        other => {
            return Err(RestartError::Name(other.to_string()));
        }
    };
    if n.is_some() && name != RestartPolicyNameEnum::ON_FAILURE {
        return Err(RestartError::CountWithoutOnFailure(s.to_string()));
    }
    Ok(RestartPolicy {
        name: Some(name),
        maximum_retry_count: n,
    })
}
