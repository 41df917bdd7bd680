//! What every suite works with: the context it reads ([`SuiteContext`], with the knobs of
//! [`SuiteOptions`]), the handle it journals through ([`Recorder`]) and the shared subset rule
//! ([`first_per`]). Below the suites and the runner that drives them, so a suite never reaches
//! up into the runner.

use std::collections::BTreeMap;
use std::future::Future;
use std::time::{Duration, Instant};

use bakeoff_artifact::{EndpointFacts, ItemRecord, Outcome, SuiteResult};
use bakeoff_client::{Client, Method};
use tokio::sync::watch;

use crate::item_extra::ItemWrites;
use crate::progress::{EvalEvent, EvalHook, ItemProgress, Outcomes, eta};
use crate::summary;

/// Knobs of the suites; each suite reads its own fields. Defaults are what an operator expects.
#[derive(Debug, Clone, Default)]
pub struct SuiteOptions {
    /// `--thinking on|off|default`, applied to every request of every suite.
    pub thinking: crate::thinking::ThinkingMode,
    /// `--battery FILE`: the intelligence battery to load instead of the shipped default.
    pub battery: Option<std::path::PathBuf>,
    /// `--refusal-battery FILE`: the refusal battery to load instead of the shipped default.
    pub refusal_battery: Option<std::path::PathBuf>,
    /// `--structured-battery FILE`: the structured-output battery instead of the shipped one.
    pub structured_battery: Option<std::path::PathBuf>,
    /// `--schema-form`: how the structured suite's requests carry their schema.
    pub schema_form: bakeoff_client::dialect::structured::FormChoice,
    /// A subset for quick runs and tests: the first N tool cases of each category, the first N session
    /// conversations, the first N intelligence items of each family, the first N refusal items
    /// of each category. `None`: everything.
    pub limit: Option<usize>,
    /// The context suite's targets, depths and seed.
    pub context: crate::context::targets::ContextOptions,
    /// The throughput suite's sweep (concurrency levels, lengths).
    pub throughput: crate::load_options::ThroughputOptions,
    /// The longgen probes (count, output tokens).
    pub longgen: crate::load_options::LonggenOptions,
    /// Progress of the load suites' steps (drawn by the binary).
    pub load_progress: crate::load_options::LoadProgress,
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
    writes: ItemWrites,
}

impl<'a> Recorder<'a> {
    /// The handle for one suite's run; `planned`: its items, when known before it runs.
    pub(crate) fn new(
        suite: &'static str,
        client: &'a Client,
        cancel: &'a mut watch::Receiver<bool>,
        on_item: &'a mut (dyn FnMut(&str, &ItemRecord) + Send),
        hook: Option<&'a EvalHook>,
        planned: Option<usize>,
    ) -> Self {
        Self {
            suite,
            client,
            cancel,
            on_item,
            interrupted: None,
            recorded: 0,
            hook,
            started: Instant::now(),
            planned,
            outcomes: Outcomes::new(),
            writes: ItemWrites::new(),
        }
    }

    /// The suite is over: why it stopped early (if it did), when it began, its outcomes, and
    /// the item fields that could not be written (the runner flags them on the suite).
    pub(crate) fn finish(self) -> (Option<String>, Instant, Outcomes, ItemWrites) {
        (self.interrupted, self.started, self.outcomes, self.writes)
    }

    /// Where the suite writes its items' typed `extra` and `expected`: a write that fails is
    /// kept here and becomes the suite's `instrument-failure` flag when it finishes.
    pub fn writes(&mut self) -> &mut ItemWrites {
        &mut self.writes
    }

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
