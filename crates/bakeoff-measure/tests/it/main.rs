//! `bakeoff-measure`'s public API against in-process servers on port 0: where a measurement's
//! artifacts go and what they are called (one output description for every driver), and the
//! harness ceiling a measurement's load steps are checked against. The real engines meet these
//! drivers through the binary's tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod ceiling;
mod output;

use std::path::Path;
use std::time::Duration;

use bakeoff_client::{Client, EndpointUrl};
use bakeoff_measure::ceiling::Ceilings;
use bakeoff_measure::evaluate::{EvalRequest, Evaluated, evaluate};
use bakeoff_measure::{Naming, Output};
use bakeoff_suites::{EvalEvent, EvalHook, PreflightOptions, SuiteName, SuiteOptions};

pub fn client(url: &str) -> Client {
    Client::new(EndpointUrl::parse(url).unwrap(), Default::default())
}

pub fn preflight() -> PreflightOptions {
    PreflightOptions {
        model: None,
        max_model_len: None,
        ready_timeout: Duration::from_secs(5),
        probe_tools: false,
    }
}

/// An output in `out` named `slug`, with a note and a run record the artifact must carry.
pub fn output<'a>(out: &'a Path, slug: &str, replace: bool) -> Output<'a> {
    Output {
        naming: Naming {
            slug: Some(slug.into()),
            hardware: Some("test bench".into()),
            notes: vec!["written by the measure crate's tests".into()],
        },
        slug_suffix: "",
        out,
        replace,
        run_record: bakeoff_artifact::RunRecord {
            command: Some("measure test".into()),
            ..Default::default()
        },
    }
}

/// `evaluate` of `suites` against `url`, its events collected.
pub async fn measure(
    url: &str,
    suites: &[SuiteName],
    options: &SuiteOptions,
    ceilings: Option<&Ceilings>,
    output: Output<'_>,
) -> (Evaluated, Vec<EvalEvent>) {
    let events = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = events.clone();
    let hook: EvalHook = std::sync::Arc::new(move |e| sink.lock().unwrap().push(e));
    let client = client(url);
    let req = EvalRequest {
        client: &client,
        preflight: &preflight(),
        suites,
        options,
        ceilings,
        output,
        progress: Some(hook),
    };
    let (_tx, mut rx) = tokio::sync::watch::channel(false);
    let e = evaluate(req, &mut rx).await.unwrap();
    let events = events.lock().unwrap().clone();
    (e, events)
}
