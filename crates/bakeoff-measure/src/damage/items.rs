//! The damage suite's item shapes (`extra`): the first-token self-check and candidate items,
//! and the items along the reply. `bakeoff_report` reads `phase`, `prompt`, the top-1 tokens,
//! `identical` and `kl` back from the records.

use bakeoff_stats::KlTerms;
use serde::{Deserialize, Serialize};

use super::along::compare::{Agreement, Along};
use super::first_token::{FirstTokenError, TokenProb, TopK};

/// Which measurement an item belongs to (`extra.phase`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ItemPhase {
    /// The reference's first token against itself.
    SelfCheck,
    /// The candidate's first token against the reference's.
    Candidate,
    /// Along the reply: a reference request that failed.
    Along,
    /// Along the reply: the reference's second greedy run against its first.
    AlongSelfCheck,
    /// Along the reply: the reference again, with other requests in flight.
    AlongBatchFloor,
    /// Along the reply: the candidate against the reference's first run.
    AlongCandidate,
}

/// The top-K a request listed; `None` where it listed none.
fn listed(t: &Result<TopK, FirstTokenError>) -> Option<Vec<TokenProb>> {
    t.as_ref().ok().map(|t| t.tokens.clone())
}

/// A self-check item's `extra`: the reference's two runs of one prompt and how far apart they
/// are (`null` figures where either run listed nothing).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelfCheckExtra {
    pub phase: ItemPhase,
    pub prompt: String,
    pub prefix: String,
    pub reference_run1: Option<Vec<TokenProb>>,
    pub reference_run2: Option<Vec<TokenProb>>,
    /// KL(run 1 ‖ run 2), nats.
    pub kl: Option<f64>,
    pub top1_differs: Option<bool>,
}

impl SelfCheckExtra {
    pub fn of(
        prompt: &str,
        prefix: &str,
        run1: &Result<TopK, FirstTokenError>,
        run2: &Result<TopK, FirstTokenError>,
        figures: Option<(f64, bool)>,
    ) -> Self {
        Self {
            phase: ItemPhase::SelfCheck,
            prompt: prompt.to_owned(),
            prefix: prefix.to_owned(),
            reference_run1: listed(run1),
            reference_run2: listed(run2),
            kl: figures.map(|f| f.0),
            top1_differs: figures.map(|f| f.1),
        }
    }
}

/// A candidate item's `extra`: the candidate's top-K against the reference's first run, and
/// the estimator's terms (`null` where the candidate listed nothing that could be scored).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CandidateExtra {
    pub phase: ItemPhase,
    pub prompt: String,
    pub prefix: String,
    pub reference: Vec<TokenProb>,
    pub candidate: Option<Vec<TokenProb>>,
    /// KL(reference ‖ candidate), nats.
    pub kl: Option<f64>,
    /// Distinct tokens both listed.
    pub shared: Option<u32>,
    pub reference_tail: Option<f64>,
    pub candidate_tail: Option<f64>,
    pub top1_reference: Option<String>,
    pub top1_candidate: Option<String>,
    pub top1_differs: Option<bool>,
}

impl CandidateExtra {
    pub fn of(
        prompt: &str,
        prefix: &str,
        reference: &TopK,
        cand: &Result<TopK, FirstTokenError>,
        terms: Option<&(KlTerms, bool)>,
    ) -> Self {
        let top1 = |t: &TopK| t.top1().map(|x| x.token.clone());
        Self {
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
}

/// An item along the reply: how a greedy reply agrees with the reference's first run, and
/// the per-position KL and top-1 differences where the route has teacher forcing (`null`
/// where it has none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlongExtra {
    pub phase: ItemPhase,
    pub prompt: String,
    pub identical: bool,
    /// First position (in the reference's tokens) where the replies part; `null` when
    /// identical.
    pub first_divergence: Option<u32>,
    /// Share of the reference's reply the other reproduces (longest common subsequence).
    pub reproduced: f64,
    pub reference_tokens: usize,
    pub tokens: usize,
    /// KL(reference ‖ other) at each position of the reference's reply; `null` at a position
    /// whose KL could not be computed.
    pub kl: Option<Vec<Option<f64>>>,
    pub top1_differs: Option<Vec<bool>>,
}

impl AlongExtra {
    pub fn of(
        phase: ItemPhase,
        prompt: &str,
        a: &Agreement,
        reference_tokens: usize,
        tokens: usize,
        along: Option<&Along>,
    ) -> Self {
        Self {
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
}

/// An item along the reply whose reference request failed: which prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlongFailedExtra {
    pub phase: ItemPhase,
    pub prompt: String,
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
                let now = SelfCheckExtra::of("p-1", "[7f3a] ", run1, run2, figures);
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
            let now = CandidateExtra::of("p-1", "[7f3a] ", &reference, cand, terms.as_ref());
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
                    let now = AlongExtra::of(phase, "p-1", a, 3, 4, along);
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
