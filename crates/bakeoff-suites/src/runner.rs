//! Runs suites in order, item by item, handing each finished record to the caller at once (the
//! journal), and stopping cleanly — with every finished item kept — on cancellation or when the
//! endpoint goes away.

use std::collections::BTreeMap;
use std::time::Duration;

use bakeoff_artifact::{ItemRecord, Outcome, SuiteResult, SuiteStatus};
use bakeoff_client::{Client, Method};
use tokio::sync::watch;

use crate::{smoke, summary};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SuiteName {
    Smoke,
}

/// Suites the issue tracker plans but this build does not have yet; asking for one is a usage
/// error, never a silent skip.
const PLANNED: &[&str] = &[
    "tool",
    "session",
    "context",
    "intelligence",
    "throughput",
    "longgen",
];

impl SuiteName {
    pub fn as_str(self) -> &'static str {
        match self {
            SuiteName::Smoke => "smoke",
        }
    }

    pub fn parse_list(list: &str) -> Result<Vec<SuiteName>, String> {
        let mut out = Vec::new();
        for raw in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let s = match raw {
                "smoke" => SuiteName::Smoke,
                other if PLANNED.contains(&other) => {
                    return Err(format!(
                        "suite {other:?} is not in this build yet; available: smoke"
                    ));
                }
                other => return Err(format!("unknown suite {other:?}; available: smoke")),
            };
            if !out.contains(&s) {
                out.push(s);
            }
        }
        if out.is_empty() {
            return Err("--suite is empty; available: smoke".into());
        }
        Ok(out)
    }
}

pub struct SuiteContext<'a> {
    pub client: &'a Client,
    pub model: String,
}

#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub suites: BTreeMap<String, SuiteResult>,
    /// Why the run stopped early, when it did.
    pub interrupted: Option<String>,
}

impl RunOutcome {
    /// At least one item measured something about the model (not a request failure).
    pub fn measured_anything(&self) -> bool {
        self.suites
            .values()
            .any(|s| s.status != SuiteStatus::Failed)
    }
}

pub async fn run_suites(
    ctx: &SuiteContext<'_>,
    suites: &[SuiteName],
    cancel: &mut watch::Receiver<bool>,
    on_item: &mut (dyn FnMut(&str, &ItemRecord) + Send),
) -> RunOutcome {
    let mut out = RunOutcome {
        suites: BTreeMap::new(),
        interrupted: None,
    };
    for &suite in suites {
        let name = suite.as_str();
        let plan = match suite {
            SuiteName::Smoke => match smoke::items() {
                Ok(items) => items,
                Err(e) => {
                    out.interrupted = Some(e.to_string());
                    break;
                }
            },
        };
        let mut records = Vec::with_capacity(plan.len());
        for item in &plan {
            if *cancel.borrow() {
                out.interrupted
                    .get_or_insert_with(|| "interrupted by the operator".into());
                break;
            }
            let rec = tokio::select! {
                r = smoke::run_item(ctx.client, &ctx.model, item) => r,
                _ = cancel.changed() => {
                    out.interrupted.get_or_insert_with(|| "interrupted by the operator".into());
                    break;
                }
            };
            on_item(name, &rec);
            let dropped = rec.outcome == Outcome::ConnectionError;
            records.push(rec);
            if dropped && !reachable(ctx.client).await {
                out.interrupted = Some(format!(
                    "endpoint became unreachable during suite {name} after {} items",
                    records.len()
                ));
                break;
            }
        }
        let interrupted = out.interrupted.is_some();
        out.suites.insert(
            name.to_string(),
            SuiteResult {
                status: summary::status(plan.len(), &records, interrupted),
                summary: summary::summarize(plan.len(), &records),
                items: records,
            },
        );
        if interrupted {
            break;
        }
    }
    out
}

/// Is anything still listening? A connection error on an item may be one dropped stream, or
/// the server gone; only the second stops the run.
async fn reachable(client: &Client) -> bool {
    match client
        .control(
            Method::Get,
            client.url().v1_path("models"),
            None,
            Duration::from_secs(3),
        )
        .await
    {
        Ok(_) => true,
        Err(e) => !e.is_unreachable(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suite_lists() {
        assert_eq!(
            SuiteName::parse_list("smoke, smoke"),
            Ok(vec![SuiteName::Smoke])
        );
        assert!(
            SuiteName::parse_list("tool")
                .unwrap_err()
                .contains("not in this build")
        );
        assert!(
            SuiteName::parse_list("nope")
                .unwrap_err()
                .contains("unknown suite")
        );
        assert!(SuiteName::parse_list("").is_err());
    }
}
