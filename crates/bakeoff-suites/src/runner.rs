//! Runs suites in order, handing each finished record to the caller at once (the journal), and
//! stopping cleanly — with every finished item kept — on cancellation or when the endpoint goes
//! away.
//!
//! A suite is a module with `pub async fn run(ctx: &SuiteContext<'_>, rec: &mut Recorder<'_>)
//! -> SuiteResult`; to add one, add a [`SuiteName`] variant, its name, and its arm in
//! [`run_suites`].

use std::collections::BTreeMap;

use bakeoff_artifact::{InstrumentFlag, ItemRecord, SuiteResult, SuiteStatus};
use tokio::sync::watch;

// The runner's old paths: what the suites share now lives below them (`suite_run`, `progress`,
// `suite_choice`), so they never import the runner that drives them.
pub use crate::progress::{EvalEvent, EvalHook, ItemProgress, Outcomes, PreflightPhase, eta};
pub use crate::suite_choice::{AVAILABLE, SuiteName};
pub use crate::suite_run::{Recorder, SuiteContext, SuiteOptions, first_per};
use crate::{intelligence, refusal, session, smoke, structured, tool};

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
        SuiteName::Structured => structured::load(ctx.options.structured_battery.as_deref())
            .ok()
            .map(|v| structured::subset(v, limit).len()),
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
        let mut rec = Recorder::new(
            suite.as_str(),
            ctx.client,
            &mut *cancel,
            &mut *on_item,
            hook,
            planned,
        );
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
            SuiteName::Structured => structured::run(ctx, &mut rec).await,
        };
        let (stop, started, outcomes, writes) = rec.finish();
        let mut result = result;
        // After the suite's own flags, so no suite can overwrite it.
        writes.raise(&mut result.summary, suite.as_str());
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
        // No families for the instrument to have rejected: a suite of another shape (the
        // damage suite's `null`), or a scored suite whose details this run could not write,
        // which `write_details` flagged `instrument-failure` already. This run wrote them from
        // the type read here, so nothing else reaches this arm.
        Err(_) => false,
    }
}
