//! Runs suites in order, handing each finished record to the caller at once (the journal), and
//! stopping cleanly — with every finished item kept — on cancellation or when the endpoint goes
//! away.
//!
//! A suite is a module with `pub async fn run(ctx: &SuiteContext<'_>, rec: &mut Recorder<'_>)
//! -> SuiteResult`; to add one, add a [`SuiteName`] variant, its name, and its arm in
//! [`run_suites`].

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bakeoff_artifact::{
    EndpointFacts, EngineKind, FailureClass, InstrumentFlag, ItemRecord, Outcome, SuiteResult,
    SuiteStatus,
};
use bakeoff_client::{Client, Method};
use tokio::sync::watch;

use crate::suite_choice::SuiteChoice;
use crate::{intelligence, refusal, session, smoke, summary, tool};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SuiteName {
    Smoke,
    Tool,
    Session,
    Intelligence,
    Context,
    Throughput,
    Longgen,
    Refusal,
}

/// Every suite this build has, in the order `--suite all` runs them.
pub const AVAILABLE: &[SuiteName] = &[
    SuiteName::Smoke,
    SuiteName::Tool,
    SuiteName::Session,
    SuiteName::Intelligence,
    SuiteName::Context,
    SuiteName::Throughput,
    SuiteName::Longgen,
    SuiteName::Refusal,
];

/// Suites planned but not in this build; asking for one is a usage error, never a silent skip.
const PLANNED: &[&str] = &[];

impl SuiteName {
    pub fn as_str(self) -> &'static str {
        match self {
            SuiteName::Smoke => "smoke",
            SuiteName::Tool => "tool",
            SuiteName::Session => "session",
            SuiteName::Intelligence => "intelligence",
            SuiteName::Context => "context",
            SuiteName::Throughput => "throughput",
            SuiteName::Longgen => "longgen",
            SuiteName::Refusal => refusal::SUITE,
        }
    }

    pub(crate) fn available_list() -> String {
        AVAILABLE
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// A comma-separated list of [`SuiteChoice`] names (blank items skipped), expanded by
    /// [`SuiteChoice::expand`].
    pub fn parse_list(list: &str) -> Result<Vec<SuiteName>, String> {
        let mut choices = Vec::new();
        for raw in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let Some(c) = SuiteChoice::named(raw) else {
                return Err(if PLANNED.contains(&raw) {
                    format!(
                        "suite {raw:?} is not in this build yet; available: {}",
                        Self::available_list()
                    )
                } else {
                    format!(
                        "unknown suite {raw:?}; available: {}",
                        Self::available_list()
                    )
                });
            };
            choices.push(c);
        }
        SuiteChoice::expand(choices)
    }
}

/// Knobs of the suites; each suite reads its own fields. Defaults are what an operator expects.
#[derive(Debug, Clone, Default)]
pub struct SuiteOptions {
    /// `--thinking on|off|default`, applied to every request of every suite.
    pub thinking: crate::thinking::ThinkingMode,
    /// `--battery FILE`: the intelligence battery to load instead of the shipped default.
    pub battery: Option<std::path::PathBuf>,
    /// `--refusal-battery FILE`: the refusal battery to load instead of the shipped default.
    pub refusal_battery: Option<std::path::PathBuf>,
    /// A subset for quick runs and tests: the first N tool cases of each category, the first N session
    /// conversations, the first N intelligence items of each family, the first N refusal items
    /// of each category. `None`: everything.
    pub limit: Option<usize>,
    /// The context suite's targets, depths and seed.
    pub context: crate::context::ContextOptions,
    /// The throughput suite's sweep (concurrency levels, lengths).
    pub throughput: crate::throughput::ThroughputOptions,
    /// The longgen probes (count, output tokens).
    pub longgen: crate::longgen::LonggenOptions,
    /// Progress of the load suites' steps (drawn by the binary).
    pub load_progress: crate::throughput::LoadProgress,
}

/// What a measurement reports as it goes, for a progress display: suites never print, they
/// hand these to whoever draws ([`EvalHook`]).
#[derive(Debug, Clone)]
pub enum EvalEvent {
    /// A phase of the preflight (from [`crate::evaluate::evaluate`]).
    Preflight(PreflightPhase),
    /// A suite begins; `planned`: its items, when known before it runs.
    SuiteStarted {
        suite: &'static str,
        planned: Option<usize>,
    },
    /// An item finished (journaled).
    ItemFinished(ItemProgress),
    /// A suite ended, with its outcomes.
    SuiteFinished {
        suite: &'static str,
        status: SuiteStatus,
        done: usize,
        planned: Option<usize>,
        elapsed: Duration,
        outcomes: Outcomes,
    },
}

/// The preflight's phases as `evaluate` sees them.
#[derive(Debug, Clone)]
pub enum PreflightPhase {
    /// Discovery (engine, ids, window), then the readiness probe — a real short completion —
    /// all within `ready_timeout`.
    Probing { ready_timeout: Duration },
    /// Fit to be measured.
    Ready {
        model: Option<String>,
        engine: EngineKind,
        window: Option<u64>,
        elapsed: Duration,
    },
    /// Not fit: the class and why.
    Unfit {
        class: FailureClass,
        message: String,
        elapsed: Duration,
    },
    /// Checking that `--thinking` takes effect on this endpoint.
    CheckingThinking { mode: &'static str },
}

/// One finished item: where the suite stands.
#[derive(Debug, Clone)]
pub struct ItemProgress {
    pub suite: &'static str,
    /// Items finished in this suite, this one included.
    pub done: usize,
    pub planned: Option<usize>,
    pub outcome: Outcome,
    /// Since the suite began.
    pub elapsed: Duration,
    /// Mean item time so far × items left; `None` before two items are done, when the plan
    /// is unknown, or when nothing is left.
    pub eta: Option<Duration>,
    pub outcomes: Outcomes,
}

/// Outcome classes counted so far, in the enum's order.
pub type Outcomes = BTreeMap<Outcome, usize>;

/// Where [`EvalEvent`]s go (the binary draws them).
pub type EvalHook = Arc<dyn Fn(EvalEvent) + Send + Sync>;

/// Mean item time so far × items left, once at least two items are done.
pub fn eta(elapsed: Duration, done: usize, planned: Option<usize>) -> Option<Duration> {
    let planned = planned?;
    if done < 2 || planned <= done {
        return None;
    }
    let left = u32::try_from(planned - done).ok()?;
    let done = u32::try_from(done).ok()?;
    Some(elapsed / done * left)
}

/// The items a suite will run, as far as can be known before it starts (the suite's own
/// `result` stays the authority); `None` when it depends on what the suite learns first.
pub fn planned_items(ctx: &SuiteContext<'_>, suite: SuiteName) -> Option<usize> {
    let limit = ctx.options.limit;
    let steps = |p: bakeoff_load::LoadPlan| p.mode.map_steps(|_| (), |_, _, _| ()).len();
    match suite {
        SuiteName::Smoke => smoke::items().ok().map(|v| v.len()),
        SuiteName::Tool => tool::data()
            .ok()
            .map(|d| tool::subset(&d.cases, limit).len()),
        SuiteName::Session => session::conversations().ok().map(|c| {
            c.iter()
                .take(limit.unwrap_or(usize::MAX))
                .map(|c| c.turns.len())
                .sum()
        }),
        SuiteName::Intelligence => intelligence::load(ctx.options.battery.as_deref())
            .ok()
            .map(|v| intelligence::subset(v, limit).len()),
        SuiteName::Context => {
            let window = ctx.facts.context_window.tokens?;
            let opts = &ctx.options.context;
            let targets = opts
                .targets
                .clone()
                .unwrap_or_else(|| crate::context::default_targets(window));
            let planned = crate::context::plan_targets(&targets, window);
            let fits = planned.iter().filter(|p| p.clamped.is_some()).count();
            Some(fits * opts.depths.len() + (planned.len() - fits))
        }
        SuiteName::Throughput => Some(steps(crate::throughput::plan(ctx, &ctx.options.throughput))),
        SuiteName::Longgen => Some(steps(crate::longgen::plan(ctx, &ctx.options.longgen))),
        SuiteName::Refusal => refusal::load(ctx.options.refusal_battery.as_deref())
            .ok()
            .map(|v| refusal::subset(v, limit).len()),
    }
}

/// What every suite may read.
pub struct SuiteContext<'a> {
    pub client: &'a Client,
    pub model: String,
    pub facts: &'a EndpointFacts,
    pub options: &'a SuiteOptions,
}

/// The per-suite handle on journaling and cancellation.
pub struct Recorder<'a> {
    suite: &'static str,
    client: &'a Client,
    cancel: &'a mut watch::Receiver<bool>,
    on_item: &'a mut (dyn FnMut(&str, &ItemRecord) + Send),
    interrupted: Option<String>,
    recorded: usize,
    hook: Option<&'a EvalHook>,
    started: Instant,
    planned: Option<usize>,
    outcomes: Outcomes,
}

impl Recorder<'_> {
    /// The run must stop (operator interrupt or endpoint gone): finish the suite with what
    /// it has.
    pub fn stopped(&self) -> bool {
        self.interrupted.is_some() || *self.cancel.borrow()
    }

    /// Run one request future; `None` when the operator interrupted it (the item is dropped:
    /// it did not finish).
    pub async fn guard<F: Future>(&mut self, fut: F) -> Option<F::Output> {
        if self.stopped() {
            self.interrupted
                .get_or_insert_with(|| "interrupted by the operator".into());
            return None;
        }
        tokio::select! {
            out = fut => Some(out),
            _ = self.cancel.changed() => {
                self.interrupted.get_or_insert_with(|| "interrupted by the operator".into());
                None
            }
        }
    }

    /// Hand a finished item to the journal. After a connection error it checks whether the
    /// endpoint is still there; when it is gone the run stops (returns false).
    pub async fn record(&mut self, item: &ItemRecord) -> bool {
        (self.on_item)(self.suite, item);
        self.recorded += 1;
        *self.outcomes.entry(item.outcome).or_insert(0) += 1;
        if let Some(hook) = self.hook {
            let elapsed = self.started.elapsed();
            hook(EvalEvent::ItemFinished(ItemProgress {
                suite: self.suite,
                done: self.recorded,
                planned: self.planned,
                outcome: item.outcome,
                elapsed,
                eta: eta(elapsed, self.recorded, self.planned),
                outcomes: self.outcomes.clone(),
            }));
        }
        if item.outcome == Outcome::ConnectionError && !reachable(self.client).await {
            self.interrupted = Some(format!(
                "endpoint became unreachable during suite {} after {} items",
                self.suite, self.recorded
            ));
            return false;
        }
        !self.stopped()
    }

    pub fn interrupted(&self) -> bool {
        self.interrupted.is_some()
    }

    /// Standard result from a suite's items: status and summary by the shared rules.
    pub fn result(&self, planned: usize, items: Vec<ItemRecord>) -> SuiteResult {
        SuiteResult {
            status: summary::status(planned, &items, self.interrupted()),
            summary: summary::summarize(planned, &items),
            items,
        }
    }
}

#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub suites: BTreeMap<String, SuiteResult>,
    /// Why the run stopped early, when it did.
    pub interrupted: Option<String>,
}

impl RunOutcome {
    /// At least one suite measured something about the model (not only request failures).
    pub fn measured_anything(&self) -> bool {
        self.suites
            .values()
            .any(|s| s.status != SuiteStatus::Failed)
    }
}

/// The first `limit` items of each group (`key`), in input order; all of them when `limit` is
/// `None`. A quick run still covers every category or family.
pub fn first_per<T, K: Ord>(
    items: impl IntoIterator<Item = T>,
    limit: Option<usize>,
    mut key: impl FnMut(&T) -> K,
) -> Vec<T> {
    let Some(limit) = limit else {
        return items.into_iter().collect();
    };
    let mut counts: BTreeMap<K, usize> = BTreeMap::new();
    items
        .into_iter()
        .filter(|it| {
            let n = counts.entry(key(it)).or_insert(0);
            *n += 1;
            *n <= limit
        })
        .collect()
}

pub async fn run_suites(
    ctx: &SuiteContext<'_>,
    suites: &[SuiteName],
    cancel: &mut watch::Receiver<bool>,
    on_item: &mut (dyn FnMut(&str, &ItemRecord) + Send),
) -> RunOutcome {
    run_suites_with(ctx, suites, cancel, on_item, None).await
}

/// [`run_suites`], reporting each suite's start, every finished item and each suite's end to
/// `hook`.
pub async fn run_suites_with(
    ctx: &SuiteContext<'_>,
    suites: &[SuiteName],
    cancel: &mut watch::Receiver<bool>,
    on_item: &mut (dyn FnMut(&str, &ItemRecord) + Send),
    hook: Option<&EvalHook>,
) -> RunOutcome {
    let mut out = RunOutcome {
        suites: BTreeMap::new(),
        interrupted: None,
    };
    // Once per run: finding the engine's pid walks every process's open files.
    let url = ctx.client.url().root_path("");
    let exclude = bakeoff_conditions::Exclude::for_endpoint(
        url.host_str().unwrap_or(""),
        url.port_or_known_default(),
    );
    for &suite in suites {
        let planned = hook.and_then(|_| planned_items(ctx, suite));
        if let Some(hook) = hook {
            hook(EvalEvent::SuiteStarted {
                suite: suite.as_str(),
                planned,
            });
        }
        let mut rec = Recorder {
            suite: suite.as_str(),
            client: ctx.client,
            cancel: &mut *cancel,
            on_item: &mut *on_item,
            interrupted: None,
            recorded: 0,
            hook,
            started: Instant::now(),
            planned,
            outcomes: Outcomes::new(),
        };
        let sampler = bakeoff_conditions::Sampler::start_off_runtime(exclude.clone()).await;
        let result = match suite {
            SuiteName::Smoke => smoke::run(ctx, &mut rec).await,
            SuiteName::Tool => tool::run(ctx, &mut rec).await,
            SuiteName::Session => session::run(ctx, &mut rec).await,
            SuiteName::Intelligence => intelligence::run(ctx, &mut rec).await,
            SuiteName::Context => crate::context::run(ctx, &mut rec).await,
            SuiteName::Throughput => crate::throughput::run(ctx, &mut rec).await,
            SuiteName::Longgen => crate::longgen::run(ctx, &mut rec).await,
            SuiteName::Refusal => refusal::run(ctx, &mut rec).await,
        };
        let stop = rec.interrupted.take();
        let (started, outcomes) = (rec.started, std::mem::take(&mut rec.outcomes));
        let mut result = result;
        let conditions = sampler.finish_off_runtime().await;
        result
            .summary
            .flags
            .extend(conditions.findings.iter().map(|f| InstrumentFlag {
                suite: Some(suite.as_str().to_owned()),
                ..f.clone()
            }));
        result.summary.conditions = Some(conditions);
        if result.status != SuiteStatus::Failed && nothing_valid(&result) {
            // Items ran, but the instrument rejected every family they belong to: the suite
            // measured nothing that may be used, and is a failure, never a pass.
            result.status = SuiteStatus::Failed;
        }
        if let Some(hook) = hook {
            hook(EvalEvent::SuiteFinished {
                suite: suite.as_str(),
                status: result.status,
                done: result.items.len(),
                planned,
                elapsed: started.elapsed(),
                outcomes,
            });
        }
        out.suites.insert(suite.as_str().to_string(), result);
        if let Some(reason) = stop {
            out.interrupted = Some(reason);
            break;
        }
    }
    out
}

/// Every family of a scored suite failed the instrument check (`instrument-failure`, severity
/// `invalid`): its `details.families_not_scored` lists each of its `details.families`.
pub fn nothing_valid(r: &SuiteResult) -> bool {
    match r.summary.details_as::<bakeoff_artifact::ScoredDetails>() {
        Ok(d) => !d.families.is_empty() && d.families_not_scored.len() >= d.families.len(),
        Err(_) => false,
    }
}

/// Is anything still listening? A connection error may be one dropped stream, or the server
/// gone; only the second stops the run.
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
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn suite_lists() {
        assert_eq!(
            SuiteName::parse_list("smoke, smoke"),
            Ok(vec![SuiteName::Smoke])
        );
        assert_eq!(SuiteName::parse_list("all"), Ok(AVAILABLE.to_vec()));
        assert!(
            SuiteName::parse_list("nope")
                .unwrap_err()
                .contains("unknown suite")
        );
        assert!(SuiteName::parse_list("").is_err());
    }

    #[test]
    fn eta_is_the_mean_item_time_times_the_items_left_from_two_items_on() {
        let s = Duration::from_secs;
        assert_eq!(eta(s(10), 1, Some(6)), None, "one item is not a mean");
        assert_eq!(eta(s(10), 2, Some(6)), Some(s(20)));
        assert_eq!(eta(s(12), 3, Some(6)), Some(s(12)));
        assert_eq!(eta(s(12), 6, Some(6)), None, "nothing left");
        assert_eq!(eta(s(12), 3, None), None, "no plan, no estimate");
    }
}
