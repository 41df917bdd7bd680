//! The damage suite's item `extra` (`bakeoff eval damage`, docs/artifacts.md "Damage suite
//! records"): the first-token self-check and candidate items, and the items along the reply.
//! Each item says which it is in `phase`; [`DamageExtra`] reads an item by it.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

/// One listed token and its log probability.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TokenProb {
    /// The token as text (untrusted model output: escape it wherever it is shown).
    pub token: String,
    pub logprob: f64,
    /// The exact bytes, when the server sent them and they differ from the text (llama.cpp
    /// cuts an incomplete UTF-8 sequence out of `token`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<Vec<u8>>,
}

impl TokenProb {
    /// The token's identity across endpoints: its bytes. Two endpoints with different
    /// tokenizers are compared on the strings their tokens stand for.
    pub fn key(&self) -> Vec<u8> {
        self.bytes
            .clone()
            .unwrap_or_else(|| self.token.as_bytes().to_vec())
    }
}

/// Which measurement a damage item belongs to (`extra.phase`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DamagePhase {
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

/// A self-check item's `extra`: the reference's two runs of one prompt and how far apart they
/// are (`null` figures where either run listed nothing).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SelfCheckExtra {
    pub phase: DamagePhase,
    #[serde(default)]
    pub prompt: String,
    #[serde(default)]
    pub prefix: String,
    #[serde(default)]
    pub reference_run1: Option<Vec<TokenProb>>,
    #[serde(default)]
    pub reference_run2: Option<Vec<TokenProb>>,
    /// KL(run 1 ‖ run 2), nats.
    #[serde(default)]
    pub kl: Option<f64>,
    #[serde(default)]
    pub top1_differs: Option<bool>,
}

/// A candidate item's `extra`: the candidate's top-K against the reference's first run, and
/// the estimator's terms (`null` where the candidate listed nothing that could be scored).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CandidateExtra {
    pub phase: DamagePhase,
    #[serde(default)]
    pub prompt: String,
    #[serde(default)]
    pub prefix: String,
    #[serde(default)]
    pub reference: Vec<TokenProb>,
    #[serde(default)]
    pub candidate: Option<Vec<TokenProb>>,
    /// KL(reference ‖ candidate), nats.
    #[serde(default)]
    pub kl: Option<f64>,
    /// Distinct tokens both listed.
    #[serde(default)]
    pub shared: Option<u32>,
    #[serde(default)]
    pub reference_tail: Option<f64>,
    #[serde(default)]
    pub candidate_tail: Option<f64>,
    #[serde(default)]
    pub top1_reference: Option<String>,
    #[serde(default)]
    pub top1_candidate: Option<String>,
    #[serde(default)]
    pub top1_differs: Option<bool>,
}

/// An item along the reply: how a greedy reply agrees with the reference's first run, and
/// the per-position KL and top-1 differences where the route has teacher forcing (`null`
/// where it has none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AlongExtra {
    pub phase: DamagePhase,
    #[serde(default)]
    pub prompt: String,
    #[serde(default)]
    pub identical: bool,
    /// First position (in the reference's tokens) where the replies part; `null` when
    /// identical.
    #[serde(default)]
    pub first_divergence: Option<u32>,
    /// Share of the reference's reply the other reproduces (longest common subsequence).
    #[serde(default)]
    pub reproduced: f64,
    #[serde(default)]
    pub reference_tokens: usize,
    #[serde(default)]
    pub tokens: usize,
    /// KL(reference ‖ other) at each position of the reference's reply; `null` at a position
    /// whose KL could not be computed.
    #[serde(default)]
    pub kl: Option<Vec<Option<f64>>>,
    #[serde(default)]
    pub top1_differs: Option<Vec<bool>>,
}

/// An item along the reply whose reference request failed: which prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AlongFailedExtra {
    pub phase: DamagePhase,
    #[serde(default)]
    pub prompt: String,
}

/// A damage item's `extra`, read as the shape its `phase` names. Read only: the suite writes
/// the structs themselves.
#[derive(Debug, Clone, PartialEq)]
pub enum DamageExtra {
    SelfCheck(SelfCheckExtra),
    Candidate(CandidateExtra),
    /// `along-self-check`, `along-batch-floor` or `along-candidate` (its `phase` says which).
    Along(AlongExtra),
    AlongFailed(AlongFailedExtra),
}

impl DamageExtra {
    pub fn phase(&self) -> DamagePhase {
        match self {
            DamageExtra::SelfCheck(x) => x.phase,
            DamageExtra::Candidate(x) => x.phase,
            DamageExtra::Along(x) => x.phase,
            DamageExtra::AlongFailed(x) => x.phase,
        }
    }

    pub fn prompt(&self) -> &str {
        match self {
            DamageExtra::SelfCheck(x) => &x.prompt,
            DamageExtra::Candidate(x) => &x.prompt,
            DamageExtra::Along(x) => &x.prompt,
            DamageExtra::AlongFailed(x) => &x.prompt,
        }
    }
}

// Not serde's internally tagged enum: it takes the tag out of the fields it hands the variant,
// and each shape keeps its `phase` as the suite wrote it.
impl<'de> Deserialize<'de> for DamageExtra {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Phase {
            phase: DamagePhase,
        }
        let v = serde_json::Value::deserialize(d)?;
        let phase = Phase::deserialize(&v)
            .map_err(serde::de::Error::custom)?
            .phase;
        let read = match phase {
            DamagePhase::SelfCheck => SelfCheckExtra::deserialize(v).map(DamageExtra::SelfCheck),
            DamagePhase::Candidate => CandidateExtra::deserialize(v).map(DamageExtra::Candidate),
            DamagePhase::Along => AlongFailedExtra::deserialize(v).map(DamageExtra::AlongFailed),
            DamagePhase::AlongSelfCheck
            | DamagePhase::AlongBatchFloor
            | DamagePhase::AlongCandidate => AlongExtra::deserialize(v).map(DamageExtra::Along),
        };
        read.map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_item_reads_as_the_shape_its_phase_names() {
        let along: DamageExtra = serde_json::from_value(json!({
            "phase": "along-candidate", "prompt": "p-1", "identical": false,
            "first_divergence": 2, "reproduced": 0.5, "reference_tokens": 4, "tokens": 4,
            "kl": [0.1, null], "top1_differs": [false, true]
        }))
        .unwrap();
        assert_eq!(along.phase(), DamagePhase::AlongCandidate);
        let DamageExtra::Along(a) = &along else {
            panic!("{along:?}")
        };
        assert_eq!(a.kl, Some(vec![Some(0.1), None]));
        let failed: DamageExtra =
            serde_json::from_value(json!({"phase": "along", "prompt": "p-2"})).unwrap();
        assert_eq!(failed.prompt(), "p-2");
        let wrong =
            serde_json::from_value::<DamageExtra>(json!({"phase": "candidate", "reference": "x"}))
                .unwrap_err()
                .to_string();
        assert!(wrong.contains("invalid type"), "{wrong}");
        let none = serde_json::from_value::<DamageExtra>(json!({"prompt": "p"}))
            .unwrap_err()
            .to_string();
        assert!(none.contains("phase"), "{none}");
    }
}
