//! The failure artifacts of an `eval damage` run that measured nothing on one side: an unfit
//! endpoint, an endpoint-level gap (K refused), an endpoint none of whose replies carried
//! logprobs, and the first errors of its items.

use std::time::Instant;

use bakeoff_artifact::failure_table::remediation;
use bakeoff_artifact::{Evidence, Failure, FailureClass, ItemRecord};
use bakeoff_client::preflight::Unfit;

use super::SUITE;
use super::first_token::{FirstToken, FirstTokenError};

/// The first endpoint-level gap among these answers (K refused, no alternatives).
pub(super) fn endpoint_gap(answers: &[&FirstToken]) -> Option<FirstTokenError> {
    answers.iter().find_map(|a| {
        a.top
            .as_ref()
            .err()
            .filter(|e| e.is_endpoint_gap())
            .cloned()
    })
}

pub(super) fn unfit_failure(unfit: &Unfit, reference_url: Option<&str>, start: Instant) -> Failure {
    let mut f = unfit.failure(start.elapsed().as_millis() as u64);
    if let Some(url) = reference_url {
        f.message = format!("the reference endpoint {url} is unfit: {}", unfit.message);
    }
    f
}

pub(super) fn gap_failure(gap: &FirstTokenError, url: &str, start: Instant) -> Failure {
    Failure {
        class: FailureClass::NotMeasurable,
        message: format!("{url}: {gap}"),
        evidence: vec![Evidence {
            what: format!("{url} POST /v1/chat/completions (logprobs)"),
            detail: gap.to_string(),
        }],
        elapsed_ms: start.elapsed().as_millis() as u64,
        remediation: Some(remediation(FailureClass::NotMeasurable).into()),
    }
}

/// The endpoint none of whose replies carried logprobs.
pub(super) fn refusal_failure(url: &str, start: Instant) -> Failure {
    let why = FirstTokenError::endpoint_refusal();
    Failure {
        class: FailureClass::NotMeasurable,
        message: format!("{url}: {why}"),
        evidence: vec![Evidence {
            what: format!("{url} POST /v1/chat/completions (logprobs)"),
            detail: why,
        }],
        elapsed_ms: start.elapsed().as_millis() as u64,
        remediation: Some(remediation(FailureClass::NotMeasurable).into()),
    }
}

pub(super) fn first_errors(items: &[ItemRecord]) -> Vec<Evidence> {
    let mut out: Vec<Evidence> = Vec::new();
    for it in items {
        if let Some(e) = &it.error
            && !out.iter().any(|x| x.detail == e.message)
        {
            out.push(Evidence {
                what: format!("{SUITE}/{} POST /v1/chat/completions", it.id),
                detail: e.message.clone(),
            });
        }
    }
    out
}
