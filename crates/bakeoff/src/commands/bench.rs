//! `bakeoff bench run` and `bakeoff bench calibrate`: wire the load engine to the endpoint,
//! draw progress on stderr (`bakeoff_progress`: "step k/N", ETA, the harness ceiling as soon as
//! it is measured; a spinner on a terminal, plain lines otherwise), write the artifact, print
//! the table.

use std::path::Path;

use bakeoff_artifact::Artifact;
use bakeoff_client::Client;
use bakeoff_load::compare::SweepComparison;
use bakeoff_local::embedded;
use bakeoff_measure::bench::{self, BenchError, BenchRequest, Benched, Versus};
use bakeoff_measure::ceiling::Ceilings;
use bakeoff_measure::evaluate::Evaluated;
use bakeoff_progress::steps::BenchDisplay;
use bakeoff_report::bench_summary;

use crate::exit::{Error, Exit};
use bakeoff_flags::cli::BenchCommand;
use bakeoff_flags::config::{BenchRunConfig, CalibrateConfig};

pub async fn run(c: BenchCommand) -> Result<Exit, Error> {
    match c {
        BenchCommand::Run(a) => bench_run((*a).validate()?).await,
        BenchCommand::Calibrate(a) => calibrate(a.validate()?).await,
        BenchCommand::Compare(a) => super::bench_compare::run(a.validate()?),
        BenchCommand::ConvertLog(a) => convert_log(a),
    }
}

/// `bench convert-log`: a proxy's log to a session file, written new and whole.
fn convert_log(a: bakeoff_flags::cli::BenchConvertLogArgs) -> Result<Exit, Error> {
    use bakeoff_load::workload::sessions::convert::{LogFormat, convert};
    let format = match a.from {
        bakeoff_flags::cli::LogFormatArg::Litellm => LogFormat::Litellm,
        bakeoff_flags::cli::LogFormatArg::Messages => LogFormat::Messages,
    };
    let file = a.log.display().to_string();
    let text = std::fs::read_to_string(&a.log).map_err(|source| Error::Io {
        what: "read the log",
        path: a.log.clone(),
        source,
    })?;
    let c = convert(format, &file, &text)
        .map_err(|e| Error::Flags(bakeoff_flags::FlagError::invalid(e)))?;
    bakeoff_artifact::store::write_new_text(&a.out, &c.to_jsonl())?;
    stdoutln!(
        "{}: {} turns in {} sessions ({} left out: failed calls or other call types)",
        a.out.display(),
        c.lines.len(),
        c.sessions,
        c.skipped
    );
    Ok(Exit::Ok)
}

async fn bench_run(cfg: BenchRunConfig) -> Result<Exit, Error> {
    let local =
        embedded::start_unless(cfg.endpoint.url.as_ref(), &cfg.naming.out, cfg.local).await?;
    let local_url = local.as_ref().map(|l| l.server.url());
    let result = match super::measuring::client_for(&cfg.endpoint, local_url.as_deref()) {
        Ok(client) => measure(&cfg, &client, local.as_ref()).await,
        Err(e) => Err(e),
    };
    embedded::stop(local).await;
    result
}

async fn measure(
    cfg: &BenchRunConfig,
    client: &Client,
    local: Option<&embedded::LocalServer>,
) -> Result<Exit, Error> {
    let client_b = match &cfg.versus {
        Some(vs) => {
            let Some(url_b) = vs.url.clone() else {
                return Err(Error::internal("--versus without a URL"));
            };
            Some((vs, vs.client_for(url_b)?))
        }
        None => None,
    };
    let ceilings = Ceilings::default();
    // Progress on stderr (stdout stays the table, or pure JSON with --json), drawn from the
    // ceiling or the sweep on.
    let display = BenchDisplay::default();
    let req = BenchRequest {
        client,
        preflight: &cfg.endpoint.preflight,
        plan: &cfg.plan,
        pin: !cfg.no_pin,
        ceilings: cfg.calibrate.then_some(&ceilings),
        output: super::measuring::output(
            &cfg.naming,
            local,
            "-bench",
            bakeoff_artifact::RunRecord::bench_run(local.is_some()),
        ),
        versus: client_b.as_ref().map(|(vs, c)| Versus {
            client: c,
            preflight: &vs.preflight,
            allow_contaminated: cfg.allow_contaminated,
        }),
        schema: cfg.schema.clone(),
        progress: &display,
    };
    // Ctrl-C or SIGTERM ends the step in flight; the steps measured are kept.
    let run = bench::run(req, || {
        let stop = super::stop_signal::watch();
        (stop.rx.clone(), stop)
    })
    .await;
    display.finish();
    let benched = run?;
    match &benched {
        Benched::One(e) => print_one(cfg.json, &e.artifact, &e.path)?,
        Benched::Versus(v) => print_versus(
            cfg.json,
            [&v.a, &v.b],
            &v.comparison,
            &v.comparison_path,
            v.schema.as_ref(),
        )?,
    }
    Ok(Exit::from_ok(benched.ok()))
}

fn print_one(json: bool, art: &Artifact, path: &Path) -> Result<(), Error> {
    if json {
        stdoutln!(
            "{}",
            serde_json::to_string_pretty(art).map_err(Error::json)?
        );
    } else {
        stdout!("{}", super::screen(&bench_summary::bench_run(art, path)));
    }
    Ok(())
}

fn print_versus(
    json: bool,
    sides: [&Evaluated; 2],
    cmp: &SweepComparison,
    cmp_path: &Path,
    schema: Option<&bench::schema::SchemaComparison>,
) -> Result<(), Error> {
    if json {
        let mut v = serde_json::json!({
            "a": sides[0].artifact,
            "b": sides[1].artifact,
            "comparison": cmp,
        });
        if let Some(s) = schema {
            v["schema"] = serde_json::to_value(s).map_err(Error::json)?;
        }
        stdoutln!("{}", serde_json::to_string_pretty(&v).map_err(Error::json)?);
        return Ok(());
    }
    for (name, side) in ["A", "B"].iter().zip(sides) {
        if let Some(r) = side.artifact.load.get("throughput") {
            stdoutln!(
                "{}",
                super::screen(&format!(
                    "{name}: {}\n{}",
                    bakeoff_report::escape::for_terminal(&side.artifact.endpoint.url, 300),
                    bakeoff_report::bench::sweep(r)
                ))
            );
        }
    }
    stdout!(
        "{}",
        super::screen(&bakeoff_load::compare_text::text(
            cmp,
            &sides[0].path,
            &sides[1].path
        ))
    );
    if let Some(s) = schema {
        stdout!("{}", super::screen(&s.text()));
    }
    stdoutln!(
        "{}",
        super::screen(&format!("comparison: {}", cmp_path.display()))
    );
    for (name, side) in ["A", "B"].iter().zip(sides) {
        stdoutln!(
            "{}",
            super::screen(&format!(
                "{name} {}",
                bench_summary::conditions_line(&side.artifact)
            ))
        );
    }
    Ok(())
}

async fn calibrate(cfg: CalibrateConfig) -> Result<Exit, Error> {
    let c = bakeoff_measure::ceiling::measure(cfg.options, false)
        .await
        .map_err(BenchError::from)?;
    if cfg.json {
        stdoutln!("{}", serde_json::to_string_pretty(&c).map_err(Error::json)?);
    } else {
        stdout!("{}", super::screen(&bench_summary::ceiling(&c)));
    }
    Ok(Exit::Ok)
}
