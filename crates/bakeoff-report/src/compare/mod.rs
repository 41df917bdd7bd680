//! Paired comparison of two artifacts (`bakeoff eval compare A B`): items paired on
//! (suite, item id), exact McNemar per family, changes as item counts, the smallest
//! difference detectable at that n — and no verdict, with the reason, when the runs are not
//! comparable (different item sets or n, different chat-template hashes, different thinking
//! modes) unless the operator allows that difference.
//!
//! Only suites whose items pass or fail are paired ([`PAIRED_SUITES`]); the load suites are
//! listed as skipped with the reason. A family that either run flagged `instrument-failure`
//! (not scored there) gets no verdict either, with the reason.

use std::collections::BTreeMap;

use bakeoff_artifact::{Artifact, ItemRecord};
use bakeoff_stats::{
    MinDetectableDifference, PairedComparison, format_effect, min_detectable_difference,
};
use serde::Serialize;

use crate::read::{self, noted};

pub mod contamination;
pub mod damage;
pub mod refusal;
pub mod render;

/// A difference between the runs that blocks a verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Confound {
    /// The runs measured different items (ids, or the same id with a different expectation
    /// or different prompts).
    ItemSet,
    /// The runs measured different numbers of items.
    N,
    /// Different chat-template hashes.
    Template,
    /// Different `--thinking` modes.
    Thinking,
    /// A side was measured under contaminated conditions (a condition flag: host-contended,
    /// gpu-shared, page-cache-dropped, thermal-throttled, power-capped).
    Contaminated,
}

/// An `--allow` value that is not a difference [`Confound::parse`] knows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--allow {0:?} is not a difference; use item-set, n, template, thinking or contaminated")]
pub struct UnknownConfound(pub String);

impl Confound {
    pub fn parse(s: &str) -> Result<Self, UnknownConfound> {
        match s.trim() {
            "item-set" | "items" => Ok(Self::ItemSet),
            "n" | "n-confound" => Ok(Self::N),
            "template" | "chat-template" => Ok(Self::Template),
            "thinking" => Ok(Self::Thinking),
            "contaminated" => Ok(Self::Contaminated),
            o => Err(UnknownConfound(o.to_string())),
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ItemSet => "item-set",
            Self::N => "n",
            Self::Template => "template",
            Self::Thinking => "thinking",
            Self::Contaminated => "contaminated",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ConfoundFound {
    pub confound: Confound,
    pub detail: String,
    pub allowed: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct FamilyComparison {
    pub suite: String,
    pub family: String,
    /// Items scored in both runs.
    pub pairs: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paired: Option<PairedComparison>,
    /// Items B lost relative to A ("−5 items") and gained ("+4 items").
    pub lost: String,
    pub gained: String,
    /// Net B − A, in items and points.
    pub net: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_detectable: Option<MinDetectableDifference>,
    /// The verdict, or why there is none.
    pub verdict: String,
    pub has_verdict: bool,
    /// Instrument flags either run raised on this family (`A: suspect-instrument`, …).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub instrument_flags: Vec<String>,
    /// What the paired counts count when it is not passed items: `refusals` for the refusal
    /// suite (then `both_correct` is "both refused", `only_a` "refused by A alone", and a
    /// positive net means B refuses more).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measure: Option<&'static str>,
}

impl FamilyComparison {
    /// The smallest detectable difference as a cell: `12 items`, or `none` when no number of
    /// items of this size would detect one.
    pub fn min_detectable_cell(&self) -> String {
        self.min_detectable
            .as_ref()
            .and_then(|m| m.items)
            .map(|i| format!("{i} items"))
            .unwrap_or_else(|| "none".into())
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct RunComparison {
    pub a: String,
    pub b: String,
    pub confounds: Vec<ConfoundFound>,
    /// Why no verdict is given, when none is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_verdict_reason: Option<String>,
    pub families: Vec<FamilyComparison>,
    /// Items present in only one run, per side.
    pub only_in_a: u64,
    pub only_in_b: u64,
    /// Paired items left out because a run did not score them (request failures, skipped).
    pub unscored_pairs: u64,
    /// Suites present in a run but not paired, each with the reason.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped_suites: Vec<SkippedSuite>,
    /// Things the reader should know that do not block a verdict (e.g. template unknown).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<String>,
    /// Each side's contamination findings with their evidence (`suite: code (message)`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub contaminated_a: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub contaminated_b: Vec<String>,
    /// Two damage runs paired by prompt along the reply ([`damage`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub damage: Option<damage::DamageComparison>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SkippedSuite {
    pub suite: String,
    pub reason: String,
}

/// The instrument flag that leaves a family unscored in a run (bakeoff-suites' `instrument`).
const INSTRUMENT_FAILURE: &str = bakeoff_artifact::FlagCode::InstrumentFailure.as_str();

/// Suites whose items pass or fail, and so can be paired item by item.
pub const PAIRED_SUITES: &[&str] = &[
    "smoke",
    "tool",
    "session",
    "intelligence",
    "context",
    refusal::SUITE,
    crate::structured::SUITE,
];

fn skip_reason(suite: &str) -> String {
    match suite {
        "throughput" | "longgen" => format!(
            "{suite} is a load suite: its items are timed requests, not answers that pass or fail (compare speed with bakeoff report)"
        ),
        other => format!("{other} has no items that pass or fail in this build"),
    }
}

/// The family an item is paired in: its `extra.family` (the intelligence, tool and session
/// suites), else the suite's name (an `extra` that does not read is a notice).
fn family_of(suite: &str, it: &ItemRecord) -> String {
    noted(read::family(suite, it)).unwrap_or_else(|| suite.to_string())
}

type Key = (String, String);

fn index(a: &Artifact) -> BTreeMap<Key, &ItemRecord> {
    let mut m = BTreeMap::new();
    for (suite, s) in &a.suites {
        if !PAIRED_SUITES.contains(&suite.as_str()) {
            continue;
        }
        for it in &s.items {
            m.insert((suite.clone(), it.id.clone()), it);
        }
    }
    m
}

fn template_hash(a: &Artifact) -> Option<String> {
    a.endpoint
        .facts
        .as_ref()?
        .chat_template
        .as_ref()
        .map(|t| t.fingerprint.sha256.clone())
}

/// What was asked of the model on an item, independent of its own replies: the system and user
/// messages and the tool list. Session requests carry the model's earlier replies as
/// assistant turns, which differ between runs by design, so those are left out.
fn asked(it: &ItemRecord) -> serde_json::Value {
    let messages: Vec<serde_json::Value> = it
        .request
        .get("messages")
        .and_then(|m| m.as_array())
        .map(|ms| {
            ms.iter()
                .filter(|m| m.get("role").and_then(|r| r.as_str()) != Some("assistant"))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    serde_json::json!({ "messages": messages, "tools": it.request.get("tools") })
}

/// Per family, the instrument flag a run raised (`suspect-instrument`, `instrument-failure`),
/// from the suite summary's `details.families`.
fn family_flags(a: &Artifact) -> BTreeMap<Key, String> {
    let mut m = BTreeMap::new();
    for (suite, s) in &a.suites {
        // Details that do not read are a notice.
        let Some(d) = noted(read::scored(suite, s)) else {
            continue;
        };
        for f in &d.families {
            if let Some(flag) = f.flag {
                m.insert((suite.clone(), f.family.clone()), flag.to_string());
            }
        }
        for name in d.families_not_scored {
            m.insert((suite.clone(), name), INSTRUMENT_FAILURE.to_string());
        }
    }
    m
}

/// The first characters of a hash for display (never a byte slice: an artifact is input).
fn short_hash(t: &Option<String>) -> String {
    t.as_deref()
        .map(|s| s.chars().take(16).collect())
        .unwrap_or_else(|| "unknown".into())
}

/// The thinking mode a run used: `run.thinking`, else `default` (runs before the flag).
pub fn thinking_of(a: &Artifact) -> String {
    a.run.thinking_or_default().to_string()
}

pub fn compare(
    a: &Artifact,
    b: &Artifact,
    allow: &[Confound],
    a_name: &str,
    b_name: &str,
) -> RunComparison {
    let ia = index(a);
    let ib = index(b);
    let only_in_a = ia.keys().filter(|k| !ib.contains_key(*k)).count() as u64;
    let only_in_b = ib.keys().filter(|k| !ia.contains_key(*k)).count() as u64;
    let (confounds, notices) = confounds(a, b, &ia, &ib, allow);
    let no_verdict_reason = no_verdict_reason(&confounds);
    let (groups, unscored_pairs) = paired_outcomes(&ia, &ib);
    let families = families(a, b, groups, no_verdict_reason.is_some());
    RunComparison {
        a: a_name.to_string(),
        b: b_name.to_string(),
        confounds,
        no_verdict_reason,
        families,
        only_in_a,
        only_in_b,
        unscored_pairs,
        skipped_suites: skipped_suites(a, b),
        notices,
        contaminated_a: contamination::of_artifact(a, true),
        contaminated_b: contamination::of_artifact(b, true),
        damage: damage::compare(a, b),
    }
}

/// The suites either run has that are not paired, each with the reason.
fn skipped_suites(a: &Artifact, b: &Artifact) -> Vec<SkippedSuite> {
    a.suites
        .keys()
        .chain(b.suites.keys())
        .filter(|s| !PAIRED_SUITES.contains(&s.as_str()))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .map(|s| SkippedSuite {
            suite: s.clone(),
            reason: skip_reason(s),
        })
        .collect()
}

/// The differences between the runs (each marked allowed when `allow` names it), and the
/// notices that block nothing.
fn confounds(
    a: &Artifact,
    b: &Artifact,
    ia: &BTreeMap<Key, &ItemRecord>,
    ib: &BTreeMap<Key, &ItemRecord>,
    allow: &[Confound],
) -> (Vec<ConfoundFound>, Vec<String>) {
    let only_in_a = ia.keys().filter(|k| !ib.contains_key(*k)).count() as u64;
    let only_in_b = ib.keys().filter(|k| !ia.contains_key(*k)).count() as u64;
    let changed_expectation = ia
        .iter()
        .filter(|(k, x)| ib.get(*k).is_some_and(|y| y.expected != x.expected))
        .count();
    let changed_prompt = ia
        .iter()
        .filter(|(k, x)| ib.get(*k).is_some_and(|y| asked(y) != asked(x)))
        .count();
    let mut notices = Vec::new();
    let mut confounds = Vec::new();
    let mut push = |c: Confound, detail: String| {
        confounds.push(ConfoundFound {
            confound: c,
            detail,
            allowed: allow.contains(&c),
        })
    };
    if only_in_a + only_in_b > 0 || changed_expectation > 0 || changed_prompt > 0 {
        push(
            Confound::ItemSet,
            format!(
                "item sets differ: {only_in_a} item(s) only in A, {only_in_b} only in B, {changed_expectation} with a different expected answer, {changed_prompt} with a different prompt"
            ),
        );
    }
    if ia.len() != ib.len() {
        push(
            Confound::N,
            format!("n-confound: A has {} items, B has {}", ia.len(), ib.len()),
        );
    }
    let (ta, tb) = (template_hash(a), template_hash(b));
    if ta.is_none() && tb.is_none() {
        notices.push(
            "template unknown: neither run recorded its chat-template hash, so a template change between them cannot be ruled out"
                .into(),
        );
    } else if ta != tb {
        push(
            Confound::Template,
            format!(
                "chat-template hashes differ: A {} vs B {}",
                short_hash(&ta),
                short_hash(&tb)
            ),
        );
    }
    let (tha, thb) = (thinking_of(a), thinking_of(b));
    if tha != thb {
        push(
            Confound::Thinking,
            format!("thinking modes differ: A {tha} vs B {thb}"),
        );
    }
    if let Some(d) = contamination::detail(
        &contamination::of_artifact(a, false),
        &contamination::of_artifact(b, false),
    ) {
        push(Confound::Contaminated, d);
    }
    // What the pairing reads of either run and that does not read as its suite's shape: left
    // out of the pairing. A load suite's sweep is not paired, so its note is the report's only.
    let paired = |u: &&read::Unread| {
        PAIRED_SUITES.contains(&u.suite.as_str()) || u.suite == crate::damage::SUITE
    };
    for (side, x) in [("A", a), ("B", b)] {
        let unread = read::of_artifact(x);
        notices.extend(unread.iter().filter(paired).map(|u| format!("{side}: {u}")));
    }
    (confounds, notices)
}

/// Why no verdict is given: the confounds not allowed, if any.
fn no_verdict_reason(confounds: &[ConfoundFound]) -> Option<String> {
    let blocking: Vec<&ConfoundFound> = confounds.iter().filter(|c| !c.allowed).collect();
    (!blocking.is_empty()).then(|| {
        format!(
            "no verdict: {} (pass --allow {} to compare anyway)",
            blocking
                .iter()
                .map(|c| c.detail.as_str())
                .collect::<Vec<_>>()
                .join("; "),
            blocking
                .iter()
                .map(|c| c.confound.as_str())
                .collect::<Vec<_>>()
                .join(",")
        )
    })
}

/// Items scored in both runs, as (A passed, B passed) per (suite, family); and how many paired
/// items were left out because a run did not score them.
fn paired_outcomes(
    ia: &BTreeMap<Key, &ItemRecord>,
    ib: &BTreeMap<Key, &ItemRecord>,
) -> (BTreeMap<Key, Vec<(bool, bool)>>, u64) {
    let mut groups: BTreeMap<Key, Vec<(bool, bool)>> = BTreeMap::new();
    let mut unscored_pairs = 0u64;
    for (k, x) in ia {
        let Some(y) = ib.get(k) else { continue };
        if k.0 == refusal::SUITE {
            // Paired on refused or not; a reply that was neither pairs with nothing.
            match (refusal::refused(x), refusal::refused(y)) {
                (Some(a), Some(b)) => groups
                    .entry((k.0.clone(), refusal::FAMILY.to_string()))
                    .or_default()
                    .push((a, b)),
                _ => unscored_pairs += 1,
            }
            continue;
        }
        if k.0 == crate::structured::SUITE {
            // Paired on valid-right or not, per feature class; a failed request pairs with
            // nothing (a refusal or a schema not enforced counts: the candidate fails it).
            // An `extra` that does not read pairs with nothing (and is a notice).
            use bakeoff_artifact::StructuredOutcome as O;
            let judged = |it: &ItemRecord| {
                noted(read::structured_item(&k.0, it)).filter(|x| x.outcome != O::RequestFailed)
            };
            match (judged(x), judged(y)) {
                (Some(a), Some(b)) => {
                    let class = if a.class.is_empty() {
                        crate::structured::SUITE.to_string()
                    } else {
                        a.class
                    };
                    groups
                        .entry((k.0.clone(), class))
                        .or_default()
                        .push((a.outcome == O::ValidRight, b.outcome == O::ValidRight));
                }
                _ => unscored_pairs += 1,
            }
            continue;
        }
        if !(x.outcome.is_scored() && y.outcome.is_scored()) {
            unscored_pairs += 1;
            continue;
        }
        let fam = family_of(&k.0, x);
        groups.entry((k.0.clone(), fam)).or_default().push((
            x.outcome == bakeoff_artifact::Outcome::Ok,
            y.outcome == bakeoff_artifact::Outcome::Ok,
        ));
    }
    (groups, unscored_pairs)
}

/// Each family's comparison, with the instrument flags either run raised on it; no verdict
/// anywhere when the runs are `not_comparable`.
fn families(
    a: &Artifact,
    b: &Artifact,
    groups: BTreeMap<Key, Vec<(bool, bool)>>,
    not_comparable: bool,
) -> Vec<FamilyComparison> {
    let (fa, fb) = (family_flags(a), family_flags(b));
    groups
        .into_iter()
        .map(|((suite, family), pairs)| {
            let key = (suite.clone(), family.clone());
            let sides = [("A", fa.get(&key)), ("B", fb.get(&key))];
            let flags: Vec<String> = sides
                .iter()
                .filter_map(|(side, f)| f.map(|f| format!("{side}: {f}")))
                .collect();
            let block = family_block(&sides, not_comparable);
            let mut fc = family_comparison(suite, family, &pairs, block);
            fc.instrument_flags = flags;
            fc
        })
        .collect()
}

/// Why a family gets no verdict: the runs are not comparable, or a run flagged it
/// `instrument-failure` (`sides` are each run's flag on the family).
fn family_block(sides: &[(&str, Option<&String>)], not_comparable: bool) -> Option<String> {
    let failed: Vec<&str> = sides
        .iter()
        .filter(|(_, f)| f.is_some_and(|f| f == INSTRUMENT_FAILURE))
        .map(|(side, _)| *side)
        .collect();
    if not_comparable {
        Some(NOT_COMPARABLE.to_string())
    } else if !failed.is_empty() {
        Some(format!(
            "no verdict: run {} flagged this family {INSTRUMENT_FAILURE} (its score is below chance beyond doubt, so the family was not scored)",
            failed.join(" and ")
        ))
    } else {
        None
    }
}

/// The per-family verdict when confounds block every verdict.
const NOT_COMPARABLE: &str = "no verdict: the runs are not comparable (see confounds)";

/// One family's paired figures and verdict; `block` is the reason there is no verdict (the runs
/// are not comparable, or a run failed the instrument check on the family), if any.
fn family_comparison(
    suite: String,
    family: String,
    pairs: &[(bool, bool)],
    block: Option<String>,
) -> FamilyComparison {
    let n = pairs.len() as u64;
    let paired = PairedComparison::from_pairs(pairs.iter().copied()).ok();
    let mdd = min_detectable_difference(n.max(1), 0.05, 0.8)
        .ok()
        .filter(|_| n > 0);
    let (lost, gained, net) = match &paired {
        Some(p) => (
            format_effect(-(p.only_a as i64), n),
            format_effect(p.only_b as i64, n),
            format_effect(p.delta_items, n),
        ),
        None => (
            "0 items (no data)".into(),
            "0 items (no data)".into(),
            "0 items (no data)".into(),
        ),
    };
    let (verdict, has_verdict) = match (&paired, block) {
        (_, Some(reason)) => (reason, false),
        (None, None) => (
            "no verdict: no item was scored in both runs".to_string(),
            false,
        ),
        (Some(p), None) => {
            let detect = match mdd.as_ref().and_then(|m| m.difference.zip(m.items)) {
                Some((d, items)) => format!(
                    "smallest detectable difference at n={n}: {items} items ({:.1} pts)",
                    100.0 * d
                ),
                None => format!("no difference is detectable at n={n}"),
            };
            if suite == refusal::SUITE {
                refusal::verdict(p, &detect)
            } else if p.p_value < 0.05 {
                let who = if p.delta_items > 0 { "B" } else { "A" };
                (
                    format!(
                        "{who} ahead: {} (exact McNemar p = {:.3}); {detect}",
                        format_effect(p.delta_items, n),
                        p.p_value
                    ),
                    true,
                )
            } else {
                (
                    format!(
                        "no detectable difference (exact McNemar p = {:.3}); {detect}",
                        p.p_value
                    ),
                    true,
                )
            }
        }
    };
    FamilyComparison {
        family,
        pairs: n,
        paired,
        lost,
        gained,
        net,
        min_detectable: mdd,
        verdict,
        has_verdict,
        instrument_flags: Vec::new(),
        measure: (suite == refusal::SUITE).then_some(refusal::MEASURE),
        suite,
    }
}

#[cfg(test)]
mod tests;
