//! What the suite tests share: a client on an endpoint and what discovery found there, the
//! suite context, and a run nobody cancels.

use bakeoff_artifact::{EndpointFacts, ItemRecord};
use bakeoff_client::discovery::{DiscoveryOptions, discover};
use bakeoff_client::{Client, ClientOptions, EndpointUrl};
use bakeoff_suites::{RunOutcome, SuiteContext, SuiteName, SuiteOptions, run_suites};

/// The real test model's alias on the real llama-server (`bakeoff_testkit::real_llama`).
pub const REAL_MODEL: &str = "gemma-3-270m-q4_k_m";

/// One engine test at a time (the machine has 2 cores), in its own temporary directory.
pub async fn serial_tempdir() -> (bakeoff_testkit::Serial, tempfile::TempDir) {
    (bakeoff_testkit::serial().await, bakeoff_testkit::tempdir())
}

/// A client on `url` with the default options.
pub fn client(url: &str) -> Client {
    Client::new(EndpointUrl::parse(url).unwrap(), ClientOptions::default())
}

/// A client on `url` and the facts discovery found there.
pub async fn connect(url: &str) -> (Client, EndpointFacts) {
    let client = client(url);
    let facts = discover(&client, &DiscoveryOptions::default()).await.facts;
    (client, facts)
}

/// The context for running suites against `model` through `client`.
pub fn context<'a>(
    client: &'a Client,
    model: &str,
    facts: &'a EndpointFacts,
    options: &'a SuiteOptions,
) -> SuiteContext<'a> {
    SuiteContext {
        client,
        model: model.into(),
        facts,
        options,
    }
}

/// Run `suites` to the end (nothing cancels them), each finished item handed to `on_item`.
pub async fn run_to_end(
    ctx: &SuiteContext<'_>,
    suites: &[SuiteName],
    on_item: &mut (dyn FnMut(&str, &ItemRecord) + Send),
) -> RunOutcome {
    let (_tx, mut rx) = tokio::sync::watch::channel(false);
    run_suites(ctx, suites, &mut rx, on_item).await
}
