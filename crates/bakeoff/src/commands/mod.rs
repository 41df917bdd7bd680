//! One file per verb.

mod audit;
mod bench;
mod eval_compare;
mod eval_preflight;
mod eval_run;
mod log;
mod plan;
mod report;
mod retract;
mod seat;
mod verdict;

use bakeoff_client::{Client, EndpointUrl};

use crate::cli::{Cli, Command, EvalCommand};
use crate::config::{EndpointConfig, RunNaming};
use crate::exit::{Error, Exit};

/// Each verb converts its arguments once (`validate`, [`crate::config`]) and runs on the result.
pub async fn run(cli: Cli) -> Result<Exit, Error> {
    match cli.command {
        Command::Eval(EvalCommand::Preflight(a)) => eval_preflight::run(a.validate()?).await,
        Command::Bench(c) => bench::run(c).await,
        Command::Eval(EvalCommand::Run(a)) => eval_run::run((*a).validate()?).await,
        Command::Eval(EvalCommand::Compare(a)) => eval_compare::run(a),
        Command::Report(a) => report::run(a.validate()?),
        Command::Verdict(a) => verdict::run(a.validate()?),
        Command::Retract(a) => retract::run(a.validate()?),
        Command::Log(c) => log::run(c),
        Command::Seat(c) => seat::run(c).await,
        Command::Plan(a) => plan::run(a.validate()?),
        Command::Kv(a) => plan::kv(a.validate()?),
        Command::Audit(c) => audit::run(c).await,
        Command::Schema => {
            let s = serde_json::to_string_pretty(&bakeoff_artifact::json_schema())
                .map_err(Error::json)?;
            println!("{s}");
            Ok(Exit::Ok)
        }
    }
}

/// The client for the endpoint to measure: the one given, or the embedded default's.
fn client_for(endpoint: &EndpointConfig, local: Option<&str>) -> Result<Client, Error> {
    let url = match (&endpoint.url, local) {
        (_, Some(l)) => EndpointUrl::parse(l).map_err(Error::internal)?,
        (Some(u), None) => u.clone(),
        (None, None) => {
            return Err(Error::internal(
                "no endpoint and no embedded default was started",
            ));
        }
    };
    endpoint.client_for(url)
}

/// The files of a new run of `slug` in `out`: `<slug>.*` for the slug's first run there, else
/// `<slug>.<run_id>.*`; `--replace` takes `<slug>.*` and records what it replaces.
fn run_files(
    out: &std::path::Path,
    slug: &str,
    replace: bool,
) -> Result<bakeoff_artifact::RunFiles, Error> {
    let run_id = bakeoff_artifact::run_id_now();
    Ok(if replace {
        bakeoff_artifact::RunFiles::replacing(out, slug, &run_id)
    } else {
        bakeoff_artifact::RunFiles::claim(out, slug, &run_id)
    }?)
}

/// Stamp the run id (and any `--replace` record) on `art` and write it under the run's stem.
fn write_run_artifact(
    files: &mut bakeoff_artifact::RunFiles,
    art: &mut bakeoff_artifact::Artifact,
) -> Result<std::path::PathBuf, Error> {
    art.run_id = Some(files.run_id().to_string());
    art.replaces = files.replaced().to_vec();
    Ok(files.write_artifact(art)?)
}

/// The candidate a run measured — ONE builder for `eval run` and `bench run`: the slug is
/// `--slug`, else the default plus `slug_suffix`. An endpoint that lists no model is named after
/// its address (`endpoint-<host>-<port>`), never a shared placeholder that would give unrelated
/// endpoints one slug.
fn candidate(
    n: &RunNaming,
    slug_suffix: &str,
    client: &Client,
    pre: &bakeoff_suites::PreflightOutcome,
    local: Option<&crate::local_default::LocalServer>,
) -> bakeoff_artifact::Candidate {
    use bakeoff_artifact::slug;
    let facts = &pre.discovered.facts;
    let model = pre
        .report
        .model
        .clone()
        .unwrap_or_else(|| format!("endpoint-{}", slug::sanitize(&client.url().host_port())));
    let quantization = pre
        .discovered
        .quantization
        .clone()
        .or_else(|| bakeoff_client::dialect::quantization_from_name(&model));
    let slug = n.slug.clone().unwrap_or_else(|| {
        let base = slug::default_slug(
            &model,
            facts.engine,
            quantization.as_deref(),
            facts.context_window,
        );
        format!("{base}{slug_suffix}")
    });
    let mut notes = n.notes.to_vec();
    if let Some(l) = local {
        notes.push(l.note.clone());
    }
    bakeoff_artifact::Candidate {
        slug,
        model,
        engine: facts.engine,
        engine_version: facts.engine_version.clone(),
        quantization,
        context_window: facts.context_window,
        hardware: n
            .hardware
            .clone()
            .or_else(|| local.map(|l| l.hardware.clone())),
        notes,
    }
}
