//! One prompt's replies compared: greedy agreement (identical, where they part, how much of the
//! reference's reply the other reproduces) and the per-position KL along the reference's reply.

use super::route::Step;
use crate::damage::first_token::{TopK, kl, same_top1};

/// One comparison against a reference's first run.
pub(crate) struct Compared {
    pub agreement: Agreement,
    /// Absent where the route has no teacher forcing.
    pub along: Option<Along>,
}

/// How a greedy reply agrees with the reference's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Agreement {
    pub identical: bool,
    /// First position (in the reference's tokens) where the replies part; `None` when
    /// identical. A reply that stops early, or runs on, parts where the shorter one ends.
    pub first_divergence: Option<u32>,
    /// Longest common subsequence of the two replies over the reference's length (1 when the
    /// reference's reply is empty and so is the other).
    pub reproduced: f64,
}

pub fn agreement(reference: &[Step], other: &[Step]) -> Agreement {
    let at = reference
        .iter()
        .zip(other)
        .position(|(a, b)| a.key != b.key)
        .or_else(|| (reference.len() != other.len()).then(|| reference.len().min(other.len())));
    let reproduced = if reference.is_empty() {
        if other.is_empty() { 1.0 } else { 0.0 }
    } else {
        lcs(reference, other) as f64 / reference.len() as f64
    };
    Agreement {
        identical: at.is_none(),
        first_divergence: at.map(|i| i as u32),
        reproduced,
    }
}

/// Agreement of two reply texts by character, for endpoints whose tokens cannot be compared
/// (prompts rendered into different tokens: another tokenizer or template).
pub fn agreement_by_text(reference: &str, other: &str) -> Agreement {
    let chars = |t: &str| -> Vec<Step> {
        t.chars()
            .map(|c| Step {
                key: c.to_string().into_bytes(),
                text: c.to_string(),
                top: TopK { tokens: vec![] },
                id: None,
            })
            .collect()
    };
    agreement(&chars(reference), &chars(other))
}

/// Length of the longest common subsequence of two token sequences (two rows of the table).
fn lcs(a: &[Step], b: &[Step]) -> usize {
    let mut prev = vec![0usize; b.len() + 1];
    let mut cur = vec![0usize; b.len() + 1];
    for x in a {
        for (j, y) in b.iter().enumerate() {
            cur[j + 1] = if x.key == y.key {
                prev[j] + 1
            } else {
                cur[j].max(prev[j + 1])
            };
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// KL(reference ‖ other) and whether the top-1 tokens differ, at every position of the
/// reference's reply. A position whose KL cannot be computed (no listed token) is `None`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Along {
    pub kl: Vec<Option<f64>>,
    pub top1_differs: Vec<bool>,
}

pub fn along(reference: &[TopK], other: &[TopK]) -> Along {
    let mut out = Along::default();
    for (r, o) in reference.iter().zip(other) {
        out.kl
            .push(kl(r, o).ok().map(|t| t.kl).filter(|k| k.is_finite()));
        out.top1_differs.push(!same_top1(r, o));
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::damage::first_token::TokenProb;

    fn reply(ids: &[u32]) -> Vec<Step> {
        ids.iter()
            .map(|i| Step {
                key: format!("#{i}").into_bytes(),
                text: i.to_string(),
                top: TopK { tokens: vec![] },
                id: Some(*i),
            })
            .collect()
    }

    #[test]
    fn replies_part_where_they_first_differ() {
        let r = reply(&[1, 2, 3, 4]);
        let same = agreement(&r, &reply(&[1, 2, 3, 4]));
        assert!(same.identical);
        assert_eq!((same.first_divergence, same.reproduced), (None, 1.0));
        // One word replaced: parts at 2, three of four reproduced.
        let one = agreement(&r, &reply(&[1, 2, 9, 4]));
        assert_eq!((one.identical, one.first_divergence), (false, Some(2)));
        assert_eq!(one.reproduced, 0.75);
        // Wrong from the first word, then the same text shifted by one: the position-wise
        // match is 0, the subsequence still finds three.
        let shifted = agreement(&r, &reply(&[7, 1, 2, 3]));
        assert_eq!(shifted.first_divergence, Some(0));
        assert_eq!(shifted.reproduced, 0.75);
        // A reply that stops early parts where it ends.
        let short = agreement(&r, &reply(&[1, 2]));
        assert_eq!(short.first_divergence, Some(2));
        assert_eq!(agreement(&[], &[]).reproduced, 1.0);
    }

    #[test]
    fn kl_is_read_at_every_position() {
        let t = |a: f64| TopK {
            tokens: vec![
                TokenProb {
                    token: "a".into(),
                    logprob: a.ln(),
                    bytes: None,
                },
                TokenProb {
                    token: "b".into(),
                    logprob: (1.0 - a).ln(),
                    bytes: None,
                },
            ],
        };
        let a = along(&[t(0.9), t(0.9)], &[t(0.9), t(0.2)]);
        assert_eq!(a.kl[0], Some(0.0));
        assert!(a.kl[1].unwrap() > 0.5);
        assert_eq!(a.top1_differs, vec![false, true]);
    }
}
