//! The campaign record, `campaign.json` (schema `schemas/campaign.v1.schema.json`, format in
//! docs/campaign.md): one row per variant of a campaign — what was run (the configuration
//! delta against the base seat), what happened (the outcome, never a judgement of the model),
//! the suggested verdict, the suites' scores with their intervals and flags, the artifacts,
//! and the timings, production downtime included.
//!
//! The campaign's journal (`campaign.journal.jsonl`) is the source of truth while it runs; this
//! file is rewritten atomically from it after every variant, so it always says where the
//! campaign stands.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::evidence::VerdictKind;
use crate::{EngineKind, FailureClass};

/// Version of the campaign format. Readers refuse versions they do not know.
pub const CAMPAIGN_VERSION: u32 = 1;

/// `campaign.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CampaignRecord {
    pub schema_version: u32,
    pub name: String,
    /// The campaign file, as given.
    pub file: String,
    /// The fleet file the seats come from.
    pub fleet: String,
    pub suites: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    pub started_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Every variant has an outcome (none is pending).
    pub finished: bool,
    pub candidates: Vec<CandidatePlan>,
    pub variants: Vec<VariantRow>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// `campaign run --allow contaminated`: verdicts are suggested even for variants measured
    /// under contaminated conditions (they are still marked). Without it such a verdict is
    /// withheld (docs/campaign.md, "Contaminated variants").
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_contaminated: bool,
    /// What isolation designed and concluded, one per candidate with `[candidate.isolate]`
    /// and a failed variant (docs/campaign.md "Isolation that designs itself").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub isolations: Vec<IsolationRecord>,
    /// What tuning searched and found, one per candidate with `[candidate.tune]` and a
    /// completed variant (docs/campaign.md "Tuning").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tunings: Vec<TuningRecord>,
}

/// A tuning trial: a configuration of the search space, started, watched and benched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TrialRecord {
    /// The completed variant tuned.
    pub base: String,
    /// Its place in the search, from 1 (1: the base configuration itself).
    pub step: u32,
    /// The configuration: each flag of the space and its value (`base` where the base's own
    /// launch is kept).
    pub config: Vec<AxisValue>,
    /// `output tok/s` (peak over the levels) or `capacity req/s` (under the SLO).
    pub objective: String,
    /// The measured value; absent when the trial did not start, did not fit or measured
    /// nothing valid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    /// The row of the final comparison (the winner against the base, alternately): its result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparison: Option<TuneComparison>,
}

/// The winner measured against the base, alternately, in one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TuneComparison {
    /// What was compared: `output tok/s at c=4`.
    pub metric: String,
    /// Rounds of the alternation.
    pub repeats: u32,
    /// Winner minus base, with its 95 % interval (paired by round).
    pub difference: f64,
    pub low: f64,
    pub high: f64,
    pub base_mean: f64,
    pub winner_mean: f64,
    /// `better`, `no better than the default`, or `worse`.
    pub verdict: String,
    /// The comparison's artifacts, relative to the campaign's directory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<String>,
}

/// One candidate's tuning.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TuningRecord {
    pub candidate: String,
    /// The completed variant tuned.
    pub base: String,
    /// `coordinate search` (docs/campaign.md "Tuning").
    pub method: String,
    pub objective: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo: Option<String>,
    /// `in-progress`, `searched`, `compared`, or `stopped` (the budget cut it).
    pub status: String,
    pub trials: u32,
    pub max_trials: u32,
    /// Configurations in the whole grid of the space.
    pub grid: u32,
    /// The best configuration found and its value.
    pub best: Vec<AxisValue>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_value: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_value: Option<f64>,
    /// The best variant (its artifacts are `<variant>.bakeoff.json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_variant: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparison: Option<TuneComparison>,
    pub summary: String,
}

/// A probe: a variant the campaign designed itself after a failure, to test one hypothesis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProbeRecord {
    /// The failed variant whose failure it isolates.
    pub parent: String,
    /// The failure class that chose it (`init-wedge`, `bad-argument`, …).
    pub class: FailureClass,
    /// Its place in the isolation, from 1.
    pub step: u32,
    /// What it tests: `graph capture at 131072`.
    pub hypothesis: String,
    /// What changes against the parent: `--enforce-eager, window 131072`.
    pub probe: String,
    /// What a start would mean, and what a failure would mean.
    pub if_ready: String,
    pub if_failed: String,
}

/// How one candidate's isolation ended (or stands).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum IsolationStatus {
    /// Probes are still to run.
    InProgress,
    /// A factor separates a probe that started from one that failed.
    Isolated,
    /// The arithmetic proves that nothing in the allowed space fits; nothing more was started.
    ProvenUnfit,
    /// The budget ran out, or the table has no probe left: no factor is claimed.
    NotIsolated,
}

impl IsolationStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            IsolationStatus::InProgress => "in-progress",
            IsolationStatus::Isolated => "isolated",
            IsolationStatus::ProvenUnfit => "proven-unfit",
            IsolationStatus::NotIsolated => "not-isolated",
        }
    }
}

/// One candidate's isolation: the failure it started from, the factor (or why none), the
/// probes on each side, what the budget cut.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IsolationRecord {
    pub candidate: String,
    /// The failed variant isolated.
    pub parent: String,
    pub class: FailureClass,
    pub status: IsolationStatus,
    /// The separating factor, in words (`graph capture`, `the flag --foo`, `the window:
    /// 8192 starts, 16384 fails`); absent unless isolated or proven unfit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub factor: Option<String>,
    /// The probe (variant) that started, and the one that failed, that separate it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passed: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
    /// Why it ended where it did, with the numbers.
    pub summary: String,
    /// Starts used (probes that were started) against the budget.
    pub starts: u32,
    pub max_starts: u32,
    /// Seconds spent in probes against the time budget.
    pub seconds: u64,
    pub budget_s: u64,
    /// Probes the budget (or the proof) cut, as `hypothesis: probe`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_attempted: Vec<String>,
    /// For a failure of engine support: what the registry check said of each alternative
    /// build the candidate lists (`alternatives = [...]`), asked without a start.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alternatives: Vec<AlternativeCheck>,
}

/// One alternative build (an image, or a process seat's command) asked whether it knows the
/// checkpoint its candidate's engine did not: the engine's own registry, no start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AlternativeCheck {
    /// The image, or the command, as listed.
    pub build: String,
    pub verdict: AlternativeVerdict,
    /// The check's own words (the registry's answer, or why it could not be asked).
    pub words: String,
}

/// What the registry check of an alternative build said.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AlternativeVerdict {
    /// The build's registry knows the checkpoint's architecture (or `model_type`).
    Supports,
    /// The build's registry does not know it either.
    Refuses,
    /// The check could not run (image not here, a hub id offline, a timeout): why is in `words`.
    NotChecked,
}

impl AlternativeVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            AlternativeVerdict::Supports => "supports",
            AlternativeVerdict::Refuses => "refuses",
            AlternativeVerdict::NotChecked => "not-checked",
        }
    }
}

impl crate::Versioned for CampaignRecord {
    const WHAT: &'static str = "campaign record";
    const VERSION: u32 = CAMPAIGN_VERSION;
}

/// One candidate of the campaign: its base seat and its ladder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CandidatePlan {
    pub name: String,
    /// The fleet seat whose launch is the base configuration.
    pub seat: String,
    pub engine: EngineKind,
    /// The base launch, redacted: `command args…` or `image command…`.
    pub base: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The ladder's axes, in file order (empty: a single variant).
    pub axes: Vec<Axis>,
    pub ladder_mode: LadderMode,
    /// Seats stopped for this candidate's bench window and restored after.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub displaces: Vec<String>,
}

/// One axis of a ladder: a flag and the values tried (`true`/`false`: present/absent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Axis {
    pub flag: String,
    pub values: Vec<String>,
}

/// A variant's value on one axis.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AxisValue {
    pub flag: String,
    pub value: String,
}

/// How a ladder runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum LadderMode {
    /// Every variant, in order.
    #[default]
    All,
    /// Stop at the first variant whose outcome is `completed`; the rest are `skipped`.
    FirstSuccess,
}

/// What happened to a variant — a statement of fact, never a judgement of the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum OutcomeKind {
    /// Not run yet.
    Pending,
    /// Ready, and every suite wrote a complete, valid result.
    Completed,
    /// Ready, but a suite measured nothing valid (or was incomplete).
    Invalid,
    /// The seat never became ready: `class` says how.
    Failed,
    /// Its claim cannot fit beside the seats that stay up: never started.
    DoesNotFit,
    /// Not run: `reason` says why (a displaced seat never went idle, a ladder that stopped
    /// at its first success, a pre-start check that refused it).
    Skipped,
    /// The campaign stopped (Ctrl-C, SIGTERM, a kill) while this variant ran.
    Interrupted,
}

impl OutcomeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            OutcomeKind::Pending => "pending",
            OutcomeKind::Completed => "completed",
            OutcomeKind::Invalid => "invalid",
            OutcomeKind::Failed => "failed",
            OutcomeKind::DoesNotFit => "does-not-fit",
            OutcomeKind::Skipped => "skipped",
            OutcomeKind::Interrupted => "interrupted",
        }
    }

    /// A final outcome: the variant is not run again on resume (`pending` and `interrupted`
    /// are).
    pub fn is_final(self) -> bool {
        !matches!(self, OutcomeKind::Pending | OutcomeKind::Interrupted)
    }
}

/// A variant's outcome: its kind, the failure class or skip reason, and a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Outcome {
    pub kind: OutcomeKind,
    /// `failed` only: the failure class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<FailureClass>,
    /// `skipped` only: the short reason (`not-idle`, `ladder-stopped`, `pre-start`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What happened, in a sentence (the failure message, the arithmetic's verdict, …).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

impl Outcome {
    pub fn pending() -> Self {
        Self::of(OutcomeKind::Pending, "")
    }

    pub fn of(kind: OutcomeKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            class: None,
            reason: None,
            message: message.into(),
        }
    }

    pub fn failed(class: FailureClass, message: impl Into<String>) -> Self {
        Self {
            class: Some(class),
            ..Self::of(OutcomeKind::Failed, message)
        }
    }

    pub fn skipped(reason: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            reason: Some(reason.into()),
            ..Self::of(OutcomeKind::Skipped, message)
        }
    }

    /// `completed`, `failed:init-wedge`, `skipped:not-idle`, …
    pub fn label(&self) -> String {
        match (&self.class, &self.reason) {
            (Some(c), _) => format!("{}:{c}", self.kind.as_str()),
            (None, Some(r)) => format!("{}:{r}", self.kind.as_str()),
            (None, None) => self.kind.as_str().to_string(),
        }
    }

    /// The verdict the outcome suggests; the operator's `bakeoff verdict` overrides it.
    /// `completed` suggests nothing stronger than `watch`: a ladder that came up and measured
    /// is evidence for a verdict, not the verdict itself.
    /// Whether a host shared with other work (docs/metrics.md "Conditions": a contended CPU,
    /// a shared GPU, a dropped page cache, throttling) could have produced this outcome: any
    /// figure (a completed or invalid variant's scores and rates) and any timing-based
    /// judgment, but never a failure the engine stated in its own words
    /// ([`FailureClass::stated_by_engine`]). A contaminated variant withholds its verdict
    /// and the believed cause only when this holds.
    pub fn contention_could_cause(&self) -> bool {
        match (self.kind, self.class) {
            (OutcomeKind::Failed, Some(c)) => !c.stated_by_engine(),
            _ => true,
        }
    }

    pub fn suggested_verdict(&self) -> Option<VerdictKind> {
        match self.kind {
            OutcomeKind::Completed => Some(VerdictKind::Watch),
            OutcomeKind::Failed | OutcomeKind::DoesNotFit => {
                Some(VerdictKind::RejectUnderTestedConfiguration)
            }
            OutcomeKind::Invalid => Some(VerdictKind::NotEnoughEvidence),
            OutcomeKind::Pending | OutcomeKind::Skipped | OutcomeKind::Interrupted => None,
        }
    }
}

/// One suite's figure in a variant's row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SuiteScore {
    pub suite: String,
    /// `complete`, `incomplete` or `failed` (the suite's own status).
    pub status: crate::SuiteStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<crate::Score>,
    /// Instrument flags, `severity:code`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
    /// The suite measured something valid.
    pub valid: bool,
}

/// A seat stopped for a variant's bench window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Displacement {
    pub seat: String,
    /// It was up when the window opened (a seat that was down is neither stopped nor
    /// started).
    pub was_up: bool,
    /// Waited this long for it to show 0 running and 0 waiting requests.
    pub idle_wait_ms: u64,
    /// Restored and answering a real completion again (`None`: not restored yet, or nothing
    /// to restore).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restored: Option<bool>,
    /// From its stop to its first real completion after the restore.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub down_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Where a variant's time went (milliseconds).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Timings {
    /// From the campaign's start to this variant's.
    pub queued_ms: u64,
    /// Waiting for displaced seats to be idle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_wait_ms: Option<u64>,
    /// From the start command to ready (or to the failure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suites_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_ms: Option<u64>,
    /// The longest downtime of a displaced seat (from its stop to its first real completion
    /// after the restore).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub production_down_ms: Option<u64>,
    pub total_ms: u64,
}

/// The memory check before a start: the variant's claim beside the seats that stay up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FitCheck {
    /// `yes`, `no`, `unknown` or `not-checked`.
    pub answer: String,
    /// The arithmetic, one line per term, then the verdict (or why it was not checked).
    pub lines: Vec<String>,
}

/// One variant of the campaign.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct VariantRow {
    pub candidate: String,
    /// The variant's slug: its artifacts are `<variant>.bakeoff.json` / `.failure.json`.
    pub variant: String,
    /// Its position in the campaign, from 1.
    pub index: u32,
    pub axes: Vec<AxisValue>,
    /// The configuration delta against the base seat, one change per entry (`-c 4096 (was
    /// 1024)`, `+ --metrics`, `- --no-warmup`, `env LLAMA_ARG_THREADS=2`, `image …`).
    pub delta: Vec<String>,
    /// The exact launch, redacted (the command line or the container).
    pub launch: String,
    pub outcome: Outcome,
    /// `outcome.label()`, for readers that want one string.
    pub outcome_label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggested_verdict: Option<VerdictKind>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suites: Vec<SuiteScore>,
    /// Artifacts of this variant, relative to the campaign's directory (every attempt's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<String>,
    /// The seat's log, relative to the campaign's directory, when one was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
    /// Notable log lines (the root cause and the last lines before a failure).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub log_lines: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub displaced: Vec<Displacement>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit: Option<FitCheck>,
    pub timings: Timings,
    /// Times this variant was started (an interrupted attempt counts).
    pub attempts: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The conditions the variant ran under: its seat load's and its suites' (absent in rows
    /// from before they were recorded, and for a variant never started).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<VariantConditions>,
    /// A variant the campaign designed itself (isolation): its hypothesis and what each
    /// outcome would mean. Absent for the campaign file's own variants.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<ProbeRecord>,
    /// A tuning trial (docs/campaign.md "Tuning"): its configuration and measured value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial: Option<TrialRecord>,
}

/// A variant's conditions, summarized from its seat start record and its eval artifact (each
/// keeps the full readings).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct VariantConditions {
    /// No finding during anything sampled.
    pub clean: bool,
    /// What was sampled: `seat load` and the suites' names.
    pub sampled: Vec<String>,
    /// Every finding, with where it was drawn.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<ConditionFinding>,
}

/// One contamination finding of a variant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ConditionFinding {
    /// `seat load`, or the suite's name.
    pub during: String,
    /// The flag code (`host-contended`, `page-cache-dropped`, …).
    pub code: String,
    /// The evidence.
    pub message: String,
}

impl VariantConditions {
    /// From what was sampled, each with its conditions (`None`: not sampled, left out).
    pub fn of<'a>(
        parts: impl IntoIterator<Item = (&'a str, Option<&'a crate::Conditions>)>,
    ) -> Self {
        let mut out = Self::default();
        for (during, c) in parts {
            let Some(c) = c else { continue };
            out.sampled.push(during.to_string());
            for f in &c.findings {
                out.findings.push(ConditionFinding {
                    during: during.to_string(),
                    code: f.code.as_str().to_string(),
                    message: f.message.clone(),
                });
            }
        }
        out.clean = out.findings.is_empty();
        out
    }

    /// `host-contended during seat load, page-cache-dropped during smoke`, or `None` when clean.
    pub fn contamination(&self) -> Option<String> {
        if self.findings.is_empty() {
            return None;
        }
        let parts: Vec<String> = self
            .findings
            .iter()
            .map(|f| format!("{} during {}", f.code, f.during))
            .collect();
        Some(parts.join(", "))
    }
}

impl VariantRow {
    /// Set the outcome, with its label and suggested verdict.
    pub fn set_outcome(&mut self, outcome: Outcome) {
        self.outcome_label = outcome.label();
        self.suggested_verdict = outcome.suggested_verdict();
        self.outcome = outcome;
    }

    /// This variant's value on `flag`, when it has one.
    pub fn axis(&self, flag: &str) -> Option<&str> {
        self.axes
            .iter()
            .find(|a| a.flag == flag)
            .map(|a| a.value.as_str())
    }
}

/// The JSON Schema of [`CampaignRecord`], as checked in.
pub fn json_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(CampaignRecord)).unwrap_or(serde_json::Value::Null)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {

    /// Contention can cause figures and timing judgments, never the engine's own
    /// statement of a failure.
    #[test]
    fn contention_causes_timing_failures_never_the_engines_own_words() {
        use crate::FailureClass as F;
        for c in [
            F::BadArgument,
            F::ContextTooLong,
            F::ModelFileMissing,
            F::UnsupportedArchitecture,
        ] {
            assert!(!Outcome::failed(c, "x").contention_could_cause(), "{c}");
        }
        for c in [
            F::InitWedge,
            F::NotReady,
            F::InferenceHanging,
            F::CudaOom,
            F::Exited,
        ] {
            assert!(Outcome::failed(c, "x").contention_could_cause(), "{c}");
        }
        assert!(Outcome::of(OutcomeKind::Completed, "").contention_could_cause());
        assert!(Outcome::of(OutcomeKind::Invalid, "").contention_could_cause());
    }

    use super::*;

    #[test]
    fn labels_name_the_class_or_the_reason() {
        assert_eq!(
            Outcome::failed(FailureClass::InitWedge, "x").label(),
            "failed:init-wedge"
        );
        assert_eq!(
            Outcome::skipped("not-idle", "x").label(),
            "skipped:not-idle"
        );
        assert_eq!(
            Outcome::of(OutcomeKind::DoesNotFit, "").label(),
            "does-not-fit"
        );
    }

    #[test]
    fn checked_in_schema_matches_the_types() {
        let generated = serde_json::to_string_pretty(&json_schema()).unwrap() + "\n";
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../schemas/campaign.v1.schema.json");
        if std::env::var_os("BAKEOFF_UPDATE_SCHEMA").is_some() {
            std::fs::write(&path, &generated).unwrap();
        }
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            on_disk == generated,
            "schemas/campaign.v1.schema.json is out of date; regenerate with \
             BAKEOFF_UPDATE_SCHEMA=1 cargo test -p bakeoff-artifact --lib campaign"
        );
    }
}
