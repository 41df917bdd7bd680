//! The believed cause of a candidate's failures, from its ladder alone: which configurations
//! passed and which failed, and how. Worded as a belief — it names the evidence (the axis that
//! separated pass from fail, the failure classes), and an operator's verdict stays the
//! judgment.

use bakeoff_artifact::FailureClass;
use bakeoff_artifact::campaign::{OutcomeKind, VariantRow};

/// The class of a believed cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CauseClass {
    /// The engine (as deployed: image, build) cannot run the model at all.
    EngineSupport,
    /// Some configurations pass and some fail: the configuration, not the model or engine.
    ConfigSpecific,
    /// Every failure was a memory or disk budget.
    Resources,
    /// Nothing above fits the evidence.
    Unknown,
    /// Not drawn: the evidence includes a variant measured under contaminated conditions
    /// (docs/metrics.md "Conditions") and `--allow contaminated` was not given.
    Withheld,
}

impl CauseClass {
    pub fn as_str(self) -> &'static str {
        match self {
            CauseClass::EngineSupport => "engine-support",
            CauseClass::ConfigSpecific => "config-specific",
            CauseClass::Resources => "resources",
            CauseClass::Unknown => "unknown",
            CauseClass::Withheld => "withheld",
        }
    }
}

impl std::fmt::Display for CauseClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A believed cause: its class and a sentence naming the evidence. The text quotes flags and
/// values from the record as they are: escape it where it is rendered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BelievedCause {
    pub class: CauseClass,
    pub text: String,
}

/// Failures that ran out of a budget (memory, disk), `does-not-fit` aside.
const RESOURCES: [FailureClass; 4] = [
    FailureClass::CudaOom,
    FailureClass::KvCacheBudget,
    FailureClass::HostOom,
    FailureClass::DiskFull,
];

/// Failures that say the engine cannot run the model at all.
const ENGINE_SUPPORT: [FailureClass; 4] = [
    FailureClass::UnsupportedArchitecture,
    FailureClass::UnknownModelType,
    FailureClass::MissingModule,
    FailureClass::GpuUnsupported,
];

/// A variant's value on an axis it does not carry.
const UNSET: &str = "(unset)";

/// An outcome that counts against the configuration: it ran (or was refused by the fit check)
/// and did not complete. `interrupted`, `skipped` and `pending` are no evidence either way.
pub(crate) fn is_failure(k: OutcomeKind) -> bool {
    matches!(
        k,
        OutcomeKind::Failed | OutcomeKind::DoesNotFit | OutcomeKind::Invalid
    )
}

/// An axis whose values among the passing variants and among the failing ones are disjoint.
pub(crate) struct Separation<'a> {
    pub flag: &'a str,
    pub pass: Vec<&'a str>,
    pub fail: Vec<&'a str>,
}

/// The distinct values of `flag` among `rows`, in order.
fn values<'a>(rows: &[&'a VariantRow], flag: &str) -> Vec<&'a str> {
    let mut out: Vec<&'a str> = Vec::new();
    for r in rows {
        let v = r.axis(flag).unwrap_or(UNSET);
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// Every axis that separates `pass` from `fail`, in the order the variants name them.
pub(crate) fn separating_axes<'a>(
    pass: &[&'a VariantRow],
    fail: &[&'a VariantRow],
) -> Vec<Separation<'a>> {
    let mut flags: Vec<&'a str> = Vec::new();
    for r in pass.iter().chain(fail) {
        for a in &r.axes {
            if !flags.contains(&a.flag.as_str()) {
                flags.push(&a.flag);
            }
        }
    }
    flags
        .into_iter()
        .filter_map(|flag| {
            let p = values(pass, flag);
            let f = values(fail, flag);
            (!p.is_empty() && !f.is_empty() && p.iter().all(|v| !f.contains(v))).then_some(
                Separation {
                    flag,
                    pass: p,
                    fail: f,
                },
            )
        })
        .collect()
}

/// A failure's short name: its class, else its outcome kind.
pub(crate) fn short_label(r: &VariantRow) -> String {
    match (r.outcome.kind, r.outcome.class) {
        (OutcomeKind::Failed, Some(c)) => c.to_string(),
        (k, _) => k.as_str().to_string(),
    }
}

/// `kv-cache-budget ×2, does-not-fit`: the failures' short names with their counts, in order.
fn tally(rows: &[&VariantRow]) -> String {
    let mut seen: Vec<(String, usize)> = Vec::new();
    for r in rows {
        let l = short_label(r);
        match seen.iter_mut().find(|(s, _)| *s == l) {
            Some((_, n)) => *n += 1,
            None => seen.push((l, 1)),
        }
    }
    let parts: Vec<String> = seen
        .into_iter()
        .map(|(l, n)| if n > 1 { format!("{l} ×{n}") } else { l })
        .collect();
    parts.join(", ")
}

fn cause(class: CauseClass, text: impl Into<String>) -> BelievedCause {
    BelievedCause {
        class,
        text: text.into(),
    }
}

/// The believed cause of the failures among `rows` (one candidate's variants):
///
/// - **config-specific** when some variants completed and some failed, naming the axis (or
///   axes) whose values separate pass from fail, or saying that none does;
/// - **resources** when every failure is `cuda-oom`, `kv-cache-budget`, `host-oom`,
///   `disk-full` or `does-not-fit`;
/// - **engine-support** when every failure is `unsupported-architecture`,
///   `unknown-model-type`, `missing-module` or `gpu-unsupported`;
/// - **unknown** otherwise (and when nothing failed).
///
/// `interrupted`, `skipped` and `pending` variants are no evidence either way; `invalid` ones
/// count as failures.
/// The variants that completed and the ones that failed (`invalid` included); the rest are no
/// evidence either way.
pub(crate) fn pass_and_fail<'a>(
    rows: &[&'a VariantRow],
) -> (Vec<&'a VariantRow>, Vec<&'a VariantRow>) {
    let pass = rows
        .iter()
        .copied()
        .filter(|r| r.outcome.kind == OutcomeKind::Completed)
        .collect();
    let fail = rows
        .iter()
        .copied()
        .filter(|r| is_failure(r.outcome.kind))
        .collect();
    (pass, fail)
}

pub fn believed_cause(rows: &[&VariantRow]) -> BelievedCause {
    let (pass, fail) = pass_and_fail(rows);
    if fail.is_empty() {
        return cause(
            CauseClass::Unknown,
            if pass.is_empty() {
                "unknown: no variant ran to an outcome"
            } else {
                "unknown: no variant failed, there is nothing to explain"
            },
        );
    }
    if !pass.is_empty() {
        let seps = separating_axes(&pass, &fail);
        if seps.is_empty() {
            return cause(
                CauseClass::ConfigSpecific,
                "config-specific, no single axis separates pass from fail",
            );
        }
        let named: Vec<String> = seps
            .iter()
            .map(|s| {
                format!(
                    "`{}` separated pass ({}) from fail ({})",
                    s.flag,
                    s.pass.join(", "),
                    s.fail.join(", ")
                )
            })
            .collect();
        return cause(
            CauseClass::ConfigSpecific,
            format!("config-specific: {}", named.join("; ")),
        );
    }
    let tally = tally(&fail);
    let of = |set: &[FailureClass], r: &VariantRow| {
        r.outcome.kind == OutcomeKind::Failed && r.outcome.class.is_some_and(|c| set.contains(&c))
    };
    if fail
        .iter()
        .all(|r| r.outcome.kind == OutcomeKind::DoesNotFit || of(&RESOURCES, r))
    {
        return cause(
            CauseClass::Resources,
            format!(
                "resources: every failure was a memory or disk budget ({tally}); a smaller configuration or more memory is the next step, not a verdict on the model"
            ),
        );
    }
    if fail.iter().all(|r| of(&ENGINE_SUPPORT, r)) {
        return cause(
            CauseClass::EngineSupport,
            format!(
                "engine-support: the engine as deployed cannot run this model ({tally}); not specific to the quantization, context or hardware tried"
            ),
        );
    }
    cause(
        CauseClass::Unknown,
        format!("unknown: the failures ({tally}) point to no one cause class; isolate further"),
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use bakeoff_artifact::campaign::{AxisValue, Outcome, Timings};

    fn row(index: u32, axes: &[(&str, &str)], outcome: Outcome) -> VariantRow {
        let mut r = VariantRow {
            candidate: "c".into(),
            variant: format!("c-{index}"),
            index,
            axes: axes
                .iter()
                .map(|(f, v)| AxisValue {
                    flag: f.to_string(),
                    value: v.to_string(),
                })
                .collect(),
            delta: Vec::new(),
            launch: String::new(),
            outcome: Outcome::pending(),
            outcome_label: String::new(),
            suggested_verdict: None,
            suites: Vec::new(),
            artifacts: Vec::new(),
            log: None,
            log_lines: Vec::new(),
            displaced: Vec::new(),
            fit: None,
            timings: Timings::default(),
            attempts: 1,
            started_at: None,
            finished_at: None,
            notes: Vec::new(),
            conditions: None,
            probe: None,
            trial: None,
        };
        r.set_outcome(outcome);
        r
    }

    fn done() -> Outcome {
        Outcome::of(OutcomeKind::Completed, "")
    }

    fn failed(c: FailureClass) -> Outcome {
        Outcome::failed(c, "x")
    }

    fn of(rows: &[VariantRow]) -> BelievedCause {
        let refs: Vec<&VariantRow> = rows.iter().collect();
        believed_cause(&refs)
    }

    #[test]
    fn class_names() {
        assert_eq!(CauseClass::EngineSupport.as_str(), "engine-support");
        assert_eq!(CauseClass::ConfigSpecific.as_str(), "config-specific");
        assert_eq!(CauseClass::Resources.as_str(), "resources");
        assert_eq!(CauseClass::Unknown.as_str(), "unknown");
    }

    #[test]
    fn config_specific_names_the_axis_that_separates() {
        let rows = [
            row(
                1,
                &[("-c", "8192"), ("--flash-attn", "on")],
                failed(FailureClass::InitWedge),
            ),
            row(
                2,
                &[("-c", "8192"), ("--flash-attn", "off")],
                failed(FailureClass::Exited),
            ),
            row(3, &[("-c", "4096"), ("--flash-attn", "on")], done()),
            row(4, &[("-c", "4096"), ("--flash-attn", "off")], done()),
        ];
        let c = of(&rows);
        assert_eq!(c.class, CauseClass::ConfigSpecific);
        assert_eq!(
            c.text,
            "config-specific: `-c` separated pass (4096) from fail (8192)"
        );
    }

    #[test]
    fn config_specific_names_every_separating_axis() {
        let rows = [
            row(
                1,
                &[("-c", "8192"), ("-np", "4")],
                failed(FailureClass::CudaOom),
            ),
            row(2, &[("-c", "4096"), ("-np", "1")], done()),
        ];
        assert_eq!(
            of(&rows).text,
            "config-specific: `-c` separated pass (4096) from fail (8192); `-np` separated pass (1) from fail (4)"
        );
    }

    #[test]
    fn config_specific_without_a_separating_axis() {
        let rows = [
            row(1, &[("-c", "8192"), ("--flash-attn", "on")], done()),
            row(
                2,
                &[("-c", "8192"), ("--flash-attn", "off")],
                failed(FailureClass::InitWedge),
            ),
            row(
                3,
                &[("-c", "4096"), ("--flash-attn", "on")],
                failed(FailureClass::InitWedge),
            ),
            row(4, &[("-c", "4096"), ("--flash-attn", "off")], done()),
        ];
        let c = of(&rows);
        assert_eq!(c.class, CauseClass::ConfigSpecific);
        assert_eq!(
            c.text,
            "config-specific, no single axis separates pass from fail"
        );
    }

    #[test]
    fn an_invalid_variant_counts_as_a_failure_and_interruptions_do_not() {
        let rows = [
            row(
                1,
                &[("-c", "8192")],
                Outcome::of(OutcomeKind::Invalid, "nothing valid"),
            ),
            row(2, &[("-c", "4096")], done()),
            row(
                3,
                &[("-c", "2048")],
                Outcome::of(OutcomeKind::Interrupted, ""),
            ),
        ];
        assert_eq!(
            of(&rows).text,
            "config-specific: `-c` separated pass (4096) from fail (8192)"
        );
    }

    #[test]
    fn resources_when_every_failure_is_a_budget() {
        let rows = [
            row(1, &[("-c", "32768")], failed(FailureClass::KvCacheBudget)),
            row(2, &[("-c", "16384")], failed(FailureClass::KvCacheBudget)),
            row(
                3,
                &[("-c", "8192")],
                Outcome::of(OutcomeKind::DoesNotFit, ""),
            ),
            row(4, &[("-c", "4096")], failed(FailureClass::HostOom)),
            row(
                5,
                &[("-c", "2048")],
                Outcome::of(OutcomeKind::Interrupted, ""),
            ),
            row(6, &[("-c", "1024")], Outcome::skipped("ladder-stopped", "")),
        ];
        let c = of(&rows);
        assert_eq!(c.class, CauseClass::Resources);
        assert!(
            c.text
                .contains("(kv-cache-budget ×2, does-not-fit, host-oom)"),
            "{}",
            c.text
        );
    }

    #[test]
    fn engine_support_when_every_failure_says_the_engine_cannot_run_it() {
        let rows = [
            row(1, &[], failed(FailureClass::UnsupportedArchitecture)),
            row(2, &[], failed(FailureClass::MissingModule)),
            row(3, &[], failed(FailureClass::UnknownModelType)),
            row(4, &[], failed(FailureClass::GpuUnsupported)),
        ];
        assert_eq!(of(&rows).class, CauseClass::EngineSupport);
    }

    #[test]
    fn unknown_otherwise() {
        let mixed = [
            row(1, &[], failed(FailureClass::KvCacheBudget)),
            row(2, &[], failed(FailureClass::MissingModule)),
        ];
        assert_eq!(of(&mixed).class, CauseClass::Unknown);
        let wedges = [
            row(1, &[], failed(FailureClass::InitWedge)),
            row(2, &[], failed(FailureClass::Exited)),
        ];
        let c = of(&wedges);
        assert_eq!(c.class, CauseClass::Unknown);
        assert_eq!(
            c.text,
            "unknown: the failures (init-wedge, exited) point to no one cause class; isolate further"
        );
        let nothing_failed = [row(1, &[], done()), row(2, &[], Outcome::pending())];
        assert_eq!(of(&nothing_failed).class, CauseClass::Unknown);
        assert_eq!(of(&[]).class, CauseClass::Unknown);
    }
}
