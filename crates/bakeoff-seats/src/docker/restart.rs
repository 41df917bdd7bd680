//! The fleet file's `restart` key as Docker's restart policy.

use bollard::models::{RestartPolicy, RestartPolicyNameEnum};

/// A restart policy string of the fleet file, checked.
pub fn restart_policy(s: &str) -> Result<RestartPolicy, String> {
    let (name, n) = match s.split_once(':') {
        Some((a, b)) => (
            a,
            Some(
                b.parse::<i64>()
                    .map_err(|_| format!("restart {s:?}: the retry count must be a number"))?,
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
            return Err(format!(
                "restart {other:?} must be no, always, unless-stopped, on-failure or on-failure:N"
            ));
        }
    };
    if n.is_some() && name != RestartPolicyNameEnum::ON_FAILURE {
        return Err(format!(
            "restart {s:?}: only on-failure takes a retry count"
        ));
    }
    Ok(RestartPolicy {
        name: Some(name),
        maximum_retry_count: n,
    })
}
