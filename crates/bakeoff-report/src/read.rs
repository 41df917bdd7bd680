//! The report's one way into what a suite keeps as plain JSON: its `summary.details` and its
//! items' `extra`, each read as the suite's typed shape (bakeoff-artifact's `details`), chosen
//! by the suite's name.
//!
//! A part that does not read as its shape (an artifact edited by hand, or written by another
//! build) is an [`Unread`]: what it holds is left out of the tables, and every rendering says
//! so in its notes — `report`'s `note:` lines and "Parts not read" in the markdown and the
//! HTML (through [`crate::registry::Entry::unread`]), `eval run`'s summary, `eval compare`'s
//! notices — never an empty table without a word. Details or an `extra` that are `null` are
//! absent, not unread: a suite that measured nothing wrote none, and a writer that failed
//! raised its own `instrument-failure` flag.
//!
//! Every reader in this crate goes through the functions below, and [`of_artifact`] calls
//! each of them on every suite and item, so whatever a reader leaves out is a note.

use std::collections::BTreeMap;

use bakeoff_artifact::{
    AdapterDetails, Artifact, DamageExtra, IntelligenceExtra, ItemRecord, LoadReport,
    LonggenDetails, RefusalDetails, RefusalExtra, ScoredDetails, StructuredDetails,
    StructuredExtra, SuiteResult, ToolExtra, TurnExtra,
};
use serde::de::DeserializeOwned;

/// The names in artifacts of the suites whose shapes are read by name here (the renderings
/// name their suite by these too, so this module reads none of theirs).
pub mod suite {
    pub const REFUSAL: &str = "refusal";
    pub const STRUCTURED: &str = "structured";
    pub const DAMAGE: &str = "damage";
    pub const ADAPTER: &str = "adapter";
    pub const LONGGEN: &str = "longgen";
}

/// The suites whose details are [`ScoredDetails`] (families, their flags).
pub const SCORED: &[&str] = &["smoke", "intelligence", "tool", "session"];

/// The load suites: their details are a [`LoadReport`].
pub const LOAD: &[&str] = &["throughput", suite::LONGGEN];

/// A suite's part that did not read as its shape. Its words are the artifact's (the suite's
/// name, the item's id, serde's message quoting the value): untrusted, escaped where shown.
#[derive(Debug, Clone, PartialEq)]
pub struct Unread {
    pub suite: String,
    /// The first item whose `extra` did not read; `None` for the details.
    pub item: Option<String>,
    /// Further items of the suite whose `extra` did not read as the same shape.
    pub more: usize,
    /// The shape asked for (`RefusalDetails`, `StructuredExtra`, …).
    pub shape: &'static str,
    /// serde's message.
    pub message: String,
}

impl std::fmt::Display for Unread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.item {
            None => write!(
                f,
                "suite {}: details do not read as {} ({}); left out of this report",
                self.suite, self.shape, self.message
            ),
            Some(item) => {
                write!(
                    f,
                    "suite {}: item {item}'s extra does not read as {} ({})",
                    self.suite, self.shape, self.message
                )?;
                if self.more > 0 {
                    write!(f, ", nor does the extra of {} more item(s)", self.more)?;
                }
                f.write_str("; left out of this report")
            }
        }
    }
}

/// A part read as its shape: `Ok(None)` when the suite has no such part (another suite, or
/// `null`), `Err` when it does not read.
pub type Read<T> = Result<Option<T>, Unread>;

/// The value of a read, or none where it did not read: the failure is [`of_artifact`]'s note,
/// which calls the same read.
pub fn noted<T>(r: Read<T>) -> Option<T> {
    r.ok().flatten()
}

/// `s`'s details as `T`.
fn details<T: DeserializeOwned>(suite: &str, s: &SuiteResult) -> Read<T> {
    if s.summary.details.is_null() {
        return Ok(None);
    }
    s.summary.details_as::<T>().map(Some).map_err(|e| Unread {
        suite: suite.to_string(),
        item: None,
        more: 0,
        shape: e.shape,
        message: e.source.to_string(),
    })
}

/// `it`'s `extra` as `T`.
fn extra<T: DeserializeOwned>(suite: &str, it: &ItemRecord) -> Read<T> {
    if it.extra.is_null() {
        return Ok(None);
    }
    it.extra_as::<T>().map(Some).map_err(|e| Unread {
        suite: suite.to_string(),
        item: Some(e.item),
        more: 0,
        shape: e.shape,
        message: e.source.to_string(),
    })
}

/// The details of suite `name` as `T` when `name` is one of `suites`.
fn details_of<T: DeserializeOwned>(suites: &[&str], name: &str, s: &SuiteResult) -> Read<T> {
    if suites.contains(&name) {
        details(name, s)
    } else {
        Ok(None)
    }
}

/// A scored suite's details: its families and their flags.
pub fn scored(name: &str, s: &SuiteResult) -> Read<ScoredDetails> {
    details_of(SCORED, name, s)
}

/// A load suite's sweep.
pub fn load(name: &str, s: &SuiteResult) -> Read<LoadReport> {
    details_of(LOAD, name, s)
}

/// The longgen suite's probes.
pub fn longgen(name: &str, s: &SuiteResult) -> Read<LonggenDetails> {
    details_of(&[suite::LONGGEN], name, s)
}

/// The refusal suite's counts.
pub fn refusal(name: &str, s: &SuiteResult) -> Read<RefusalDetails> {
    details_of(&[suite::REFUSAL], name, s)
}

/// The structured suite's counts per class.
pub fn structured(name: &str, s: &SuiteResult) -> Read<StructuredDetails> {
    details_of(&[suite::STRUCTURED], name, s)
}

/// The adapter check's verdict.
pub fn adapter(name: &str, s: &SuiteResult) -> Read<AdapterDetails> {
    details_of(&[suite::ADAPTER], name, s)
}

/// A refusal item's judgement.
pub fn refusal_item(name: &str, it: &ItemRecord) -> Read<RefusalExtra> {
    if name == suite::REFUSAL {
        extra(name, it)
    } else {
        Ok(None)
    }
}

/// A structured item's judgement.
pub fn structured_item(name: &str, it: &ItemRecord) -> Read<StructuredExtra> {
    if name == suite::STRUCTURED {
        extra(name, it)
    } else {
        Ok(None)
    }
}

/// A damage item, as its phase's shape.
pub fn damage_item(name: &str, it: &ItemRecord) -> Read<DamageExtra> {
    if name == suite::DAMAGE {
        extra(name, it)
    } else {
        Ok(None)
    }
}

/// The family an item of a scored suite belongs to (`extra.family` of the intelligence, tool
/// and session suites); none for another suite's item or an empty family.
pub fn family(name: &str, it: &ItemRecord) -> Read<String> {
    let family = match name {
        "intelligence" => extra::<IntelligenceExtra>(name, it)?.map(|x| x.family),
        "tool" => extra::<ToolExtra>(name, it)?.map(|x| x.family),
        "session" => extra::<TurnExtra>(name, it)?.map(|x| x.family),
        _ => None,
    };
    Ok(family.filter(|f| !f.is_empty()))
}

/// Every part of `a` that a reader of this crate would leave out: each suite's details, then
/// its items' `extra`, one note per suite and shape (the first item named, the rest counted).
pub fn of_artifact(a: &Artifact) -> Vec<Unread> {
    let mut out = Vec::new();
    for (name, s) in &a.suites {
        out.extend(scored(name, s).err());
        out.extend(load(name, s).err());
        out.extend(longgen(name, s).err());
        out.extend(refusal(name, s).err());
        out.extend(structured(name, s).err());
        out.extend(adapter(name, s).err());
        let mut items: BTreeMap<&'static str, Unread> = BTreeMap::new();
        for it in &s.items {
            let failed = [
                refusal_item(name, it).err(),
                structured_item(name, it).err(),
                damage_item(name, it).err(),
                family(name, it).err(),
            ];
            for u in failed.into_iter().flatten() {
                items
                    .entry(u.shape)
                    .and_modify(|first| first.more += 1)
                    .or_insert(u);
            }
        }
        out.extend(items.into_values());
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
