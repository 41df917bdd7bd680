//! What the campaign file says of a candidate, once validated (`file.rs` checks it, `variant.rs`
//! expands its ladder): its changes to a fleet seat's launch, its ladder and its bench window.

use std::collections::BTreeMap;

use bakeoff_artifact::campaign::LadderMode;

/// A bench window: seats stopped for a candidate and restored after.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    pub displaces: Vec<String>,
    /// Each displaced seat must show 0 running and 0 waiting this long first.
    pub idle_for_s: u64,
    /// Not idle by then: the candidate is skipped, never forced.
    pub idle_timeout_s: u64,
}

/// One value of a flag: a string, or presence (`true`) / absence (`false`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FlagValue {
    Value(String),
    Present,
    Absent,
}

impl FlagValue {
    /// As written in records: the value, `true` or `false`.
    pub fn as_str(&self) -> &str {
        match self {
            FlagValue::Value(v) => v,
            FlagValue::Present => "true",
            FlagValue::Absent => "false",
        }
    }
}

/// One candidate: a fleet seat's launch with changes, and optionally a ladder and a window.
#[derive(Debug, Clone, PartialEq)]
pub struct CandidateSpec {
    pub name: String,
    pub seat: String,
    /// `flag → value`, in file order.
    pub set_args: Vec<(String, FlagValue)>,
    pub add_args: Vec<String>,
    pub remove_args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub image: Option<String>,
    pub note: Option<String>,
    /// Axes in file order: a flag and the values tried.
    pub ladder: Vec<(String, Vec<FlagValue>)>,
    pub ladder_mode: LadderMode,
    pub window: Option<Window>,
}
