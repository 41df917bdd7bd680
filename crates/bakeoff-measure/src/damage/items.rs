//! The damage suite's item shapes (`extra`), built from the measurement's own types: the
//! first-token self-check and candidate items, and the items along the reply. The shapes are
//! bakeoff-artifact's (`SelfCheckExtra`, `CandidateExtra`, `AlongExtra`, `AlongFailedExtra`),
//! where the report reads them back.

use bakeoff_stats::KlTerms;

pub use bakeoff_artifact::DamagePhase as ItemPhase;
pub use bakeoff_artifact::{AlongExtra, AlongFailedExtra, CandidateExtra, SelfCheckExtra};

use super::along::compare::{Agreement, Along};
use super::first_token::{FirstTokenError, TokenProb, TopK};

/// The top-K a request listed; `None` where it listed none.
fn listed(t: &Result<TopK, FirstTokenError>) -> Option<Vec<TokenProb>> {
    t.as_ref().ok().map(|t| t.tokens.clone())
}

/// A self-check item's `extra`: the reference's two runs of one prompt and how far apart they
/// are (`null` figures where either run listed nothing).
pub fn self_check_extra(
    prompt: &str,
    prefix: &str,
    run1: &Result<TopK, FirstTokenError>,
    run2: &Result<TopK, FirstTokenError>,
    figures: Option<(f64, bool)>,
) -> SelfCheckExtra {
    SelfCheckExtra {
        phase: ItemPhase::SelfCheck,
        prompt: prompt.to_owned(),
        prefix: prefix.to_owned(),
        reference_run1: listed(run1),
        reference_run2: listed(run2),
        kl: figures.map(|f| f.0),
        top1_differs: figures.map(|f| f.1),
    }
}

/// A candidate item's `extra`: the candidate's top-K against the reference's first run, and
/// the estimator's terms (`null` where the candidate listed nothing that could be scored).
pub fn candidate_extra(
    prompt: &str,
    prefix: &str,
    reference: &TopK,
    cand: &Result<TopK, FirstTokenError>,
    terms: Option<&(KlTerms, bool)>,
) -> CandidateExtra {
    let top1 = |t: &TopK| t.top1().map(|x| x.token.clone());
    CandidateExtra {
        phase: ItemPhase::Candidate,
        prompt: prompt.to_owned(),
        prefix: prefix.to_owned(),
        reference: reference.tokens.clone(),
        candidate: listed(cand),
        kl: terms.map(|t| t.0.kl),
        shared: terms.map(|t| t.0.shared),
        reference_tail: terms.map(|t| t.0.reference_tail),
        candidate_tail: terms.map(|t| t.0.candidate_tail),
        top1_reference: top1(reference),
        top1_candidate: cand.as_ref().ok().and_then(top1),
        top1_differs: terms.map(|t| t.1),
    }
}

/// An item along the reply: how a greedy reply agrees with the reference's first run, and
/// the per-position KL and top-1 differences where the route has teacher forcing (`null`
/// where it has none).
pub fn along_extra(
    phase: ItemPhase,
    prompt: &str,
    a: &Agreement,
    reference_tokens: usize,
    tokens: usize,
    along: Option<&Along>,
) -> AlongExtra {
    AlongExtra {
        phase,
        prompt: prompt.to_owned(),
        identical: a.identical,
        first_divergence: a.first_divergence,
        reproduced: a.reproduced,
        reference_tokens,
        tokens,
        kl: along.map(|al| al.kl.clone()),
        top1_differs: along.map(|al| al.top1_differs.clone()),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::damage::first_token::kl;
    use bakeoff_testkit::json::same_bytes_both_ways;
    use serde_json::json;

    fn top(tokens: &[(&str, f64)]) -> TopK {
        TopK {
            tokens: tokens
                .iter()
                .map(|(t, lp)| TokenProb {
                    token: (*t).into(),
                    logprob: *lp,
                    bytes: None,
                })
                .collect(),
        }
    }

    /// The former writer's `listed`.
    fn listed_then(t: &Result<TopK, FirstTokenError>) -> serde_json::Value {
        t.as_ref()
            .map(|t| serde_json::to_value(&t.tokens).unwrap_or_default())
            .unwrap_or(serde_json::Value::Null)
    }

    fn runs() -> [Result<TopK, FirstTokenError>; 3] {
        let mut with_bytes = top(&[("\u{fffd}", -0.2), ("b", -1.9)]);
        with_bytes.tokens[0].bytes = Some(vec![0xe2, 0x80]);
        [
            Ok(top(&[("Paris", -0.01), (" The", -4.5)])),
            Ok(with_bytes),
            Err(FirstTokenError::NoLogprobs),
        ]
    }

    /// The first-token shapes write what the suite's former `json!` writer wrote: runs with
    /// lists (bytes included) and without, figures and none.
    #[test]
    fn the_first_token_shapes_write_the_former_bytes() {
        let runs = runs();
        for run1 in &runs {
            for run2 in &runs {
                let figures = match (run1, run2) {
                    (Ok(a), Ok(b)) => kl(a, b).ok().map(|t| (t.kl, a != b)),
                    _ => None,
                };
                let then = json!({
                    "phase": "self-check",
                    "prompt": "p-1",
                    "prefix": "[7f3a] ",
                    "reference_run1": listed_then(run1),
                    "reference_run2": listed_then(run2),
                    "kl": figures.map(|f| f.0),
                    "top1_differs": figures.map(|f| f.1),
                });
                let now = self_check_extra("p-1", "[7f3a] ", run1, run2, figures);
                same_bytes_both_ways(&now, &then);
            }
        }
        let reference = top(&[("Paris", -0.01), (" The", -4.5)]);
        for cand in &runs {
            let terms = cand
                .as_ref()
                .ok()
                .and_then(|c| kl(&reference, c).ok().map(|t| (t, true)));
            let top1 = |t: &TopK| t.top1().map(|x| x.token.clone());
            let then = json!({
                "phase": "candidate",
                "prompt": "p-1",
                "prefix": "[7f3a] ",
                "reference": serde_json::to_value(&reference.tokens).unwrap_or_default(),
                "candidate": listed_then(cand),
                "kl": terms.as_ref().map(|t| t.0.kl),
                "shared": terms.as_ref().map(|t| t.0.shared),
                "reference_tail": terms.as_ref().map(|t| t.0.reference_tail),
                "candidate_tail": terms.as_ref().map(|t| t.0.candidate_tail),
                "top1_reference": top1(&reference),
                "top1_candidate": cand.as_ref().ok().and_then(top1),
                "top1_differs": terms.as_ref().map(|t| t.1),
            });
            let now = candidate_extra("p-1", "[7f3a] ", &reference, cand, terms.as_ref());
            same_bytes_both_ways(&now, &then);
        }
    }

    /// The shapes along the reply write what the former `json!` writer wrote: with teacher
    /// forcing (a position without KL included) and without, identical and parted, and the
    /// item of a failed request.
    #[test]
    fn the_along_shapes_write_the_former_bytes() {
        let forced = Along {
            kl: vec![Some(0.0), None, Some(1.5e-3)],
            top1_differs: vec![false, false, true],
        };
        let agreements = [
            Agreement {
                identical: true,
                first_divergence: None,
                reproduced: 1.0,
            },
            Agreement {
                identical: false,
                first_divergence: Some(2),
                reproduced: 2.0 / 3.0,
            },
        ];
        let phases = [
            (ItemPhase::AlongSelfCheck, "along-self-check"),
            (ItemPhase::AlongBatchFloor, "along-batch-floor"),
            (ItemPhase::AlongCandidate, "along-candidate"),
        ];
        for (phase, name) in phases {
            for a in &agreements {
                for along in [Some(&forced), None] {
                    let then = json!({
                        "phase": name,
                        "prompt": "p-1",
                        "identical": a.identical,
                        "first_divergence": a.first_divergence,
                        "reproduced": a.reproduced,
                        "reference_tokens": 3usize,
                        "tokens": 4usize,
                        "kl": along.map(|al| &al.kl),
                        "top1_differs": along.map(|al| &al.top1_differs),
                    });
                    let now = along_extra(phase, "p-1", a, 3, 4, along);
                    same_bytes_both_ways(&now, &then);
                }
            }
        }
        let failed = AlongFailedExtra {
            phase: ItemPhase::Along,
            prompt: "p-1".into(),
        };
        same_bytes_both_ways(&failed, &json!({"phase": "along", "prompt": "p-1"}));
    }
}
