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

use std::time::Duration;

use bakeoff_client::{ApiKey, Client, ClientOptions, EndpointUrl, Timeouts};

use crate::cli::{Cli, Command, EndpointArgs, EvalCommand};
use crate::exit::{CliError, Exit, failed, usage};

pub async fn run(cli: Cli) -> Result<Exit, CliError> {
    match cli.command {
        Command::Eval(EvalCommand::Preflight(a)) => eval_preflight::run(a).await,
        Command::Bench(c) => bench::run(c).await,
        Command::Eval(EvalCommand::Run(a)) => eval_run::run(*a).await,
        Command::Eval(EvalCommand::Compare(a)) => eval_compare::run(a),
        Command::Report(a) => report::run(a),
        Command::Verdict(a) => verdict::run(a),
        Command::Retract(a) => retract::run(a),
        Command::Log(c) => log::run(c),
        Command::Seat(c) => seat::run(c).await,
        Command::Plan(a) => plan::run(a),
        Command::Kv(a) => plan::kv(a),
        Command::Audit(c) => audit::run(c).await,
        Command::Schema => {
            let s =
                serde_json::to_string_pretty(&bakeoff_artifact::json_schema()).map_err(usage)?;
            println!("{s}");
            Ok(Exit::Ok)
        }
    }
}

/// The API key: `--api-key-env NAME` names the variable; otherwise `BAKEOFF_API_KEY`. The value
/// goes only into the Authorization header.
fn api_key(a: &EndpointArgs) -> Result<Option<ApiKey>, CliError> {
    match &a.api_key_env {
        Some(name) => match std::env::var(name) {
            Ok(v) => ApiKey::new(v).map(Some).ok_or_else(|| {
                usage(format!(
                    "environment variable {name} (from --api-key-env) is empty"
                ))
            }),
            Err(_) => Err(usage(format!(
                "environment variable {name} (from --api-key-env) is not set; export it or drop the flag"
            ))),
        },
        None => Ok(std::env::var("BAKEOFF_API_KEY").ok().and_then(ApiKey::new)),
    }
}

fn timeouts(a: &EndpointArgs) -> Result<Timeouts, CliError> {
    for (name, v) in [
        ("--connect-timeout", a.connect_timeout),
        ("--first-byte-timeout", a.first_byte_timeout),
        ("--idle-timeout", a.idle_timeout),
        ("--request-timeout", a.request_timeout),
        ("--ready-timeout", a.ready_timeout),
    ] {
        if v == 0 {
            return Err(usage(format!("{name} must be at least 1 second")));
        }
    }
    Ok(Timeouts {
        connect: Duration::from_secs(a.connect_timeout),
        first_byte: Duration::from_secs(a.first_byte_timeout),
        idle: Duration::from_secs(a.idle_timeout),
        total: Duration::from_secs(a.request_timeout),
    })
}

fn client_for(url: &str, a: &EndpointArgs) -> Result<Client, CliError> {
    let url = EndpointUrl::parse(url).map_err(usage)?;
    Client::try_new(
        url,
        ClientOptions {
            timeouts: timeouts(a)?,
            api_key: api_key(a)?,
        },
    )
    .map_err(failed)
}

fn preflight_options(a: &EndpointArgs) -> Result<bakeoff_suites::PreflightOptions, CliError> {
    if a.max_model_len == Some(0) {
        return Err(usage("--max-model-len must be a positive token count"));
    }
    Ok(bakeoff_suites::PreflightOptions {
        model: a.model.clone(),
        max_model_len: a.max_model_len,
        ready_timeout: Duration::from_secs(a.ready_timeout),
    })
}

/// The files of a new run of `slug` in `out`: `<slug>.*` for the slug's first run there, else
/// `<slug>.<run_id>.*`; `--replace` takes `<slug>.*` and records what it replaces.
fn run_files(
    out: &std::path::Path,
    slug: &str,
    replace: bool,
) -> Result<bakeoff_artifact::RunFiles, CliError> {
    let run_id = bakeoff_artifact::run_id_now();
    if replace {
        bakeoff_artifact::RunFiles::replacing(out, slug, &run_id)
    } else {
        bakeoff_artifact::RunFiles::claim(out, slug, &run_id)
    }
    .map_err(failed)
}

/// Stamp the run id (and any `--replace` record) on `art` and write it under the run's stem.
fn write_run_artifact(
    files: &mut bakeoff_artifact::RunFiles,
    art: &mut bakeoff_artifact::Artifact,
) -> Result<std::path::PathBuf, CliError> {
    art.run_id = Some(files.run_id().to_string());
    art.replaces = files.replaced().to_vec();
    files.write_artifact(art).map_err(failed)
}

/// How the operator named a run: `--slug` (else the default, plus `slug_suffix`), `--note`,
/// `--hardware`.
struct Naming<'a> {
    slug: Option<&'a str>,
    slug_suffix: &'a str,
    notes: &'a [String],
    hardware: Option<&'a str>,
}

/// The candidate a run measured — ONE builder for `eval run` and `bench run`. An endpoint that
/// lists no model is named after its address (`endpoint-<host>-<port>`), never a shared
/// placeholder that would give unrelated endpoints one slug.
fn candidate(
    n: Naming<'_>,
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
    let slug = n.slug.map(str::to_string).unwrap_or_else(|| {
        let base = slug::default_slug(
            &model,
            facts.engine,
            quantization.as_deref(),
            facts.context_window,
        );
        format!("{base}{}", n.slug_suffix)
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
            .map(str::to_string)
            .or_else(|| local.map(|l| l.hardware.clone())),
        notes,
    }
}
