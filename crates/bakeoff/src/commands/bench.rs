//! `bakeoff bench run` and `bakeoff bench calibrate`: wire the load engine to the endpoint,
//! draw progress on stderr (`crate::progress`: "step k/N", ETA, the harness ceiling as soon as
//! it is measured; a spinner on a terminal, plain lines otherwise), write the artifact, print
//! the table.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use bakeoff_artifact::{Artifact, HarnessCeiling};
use bakeoff_client::Client;
use bakeoff_load::Progress;
use bakeoff_load::compare::SweepComparison;
use bakeoff_report::bench_summary;
use bakeoff_suites::bench::{self, BenchProgress, BenchRequest, Benched, Versus};
use bakeoff_suites::evaluate::Evaluated;

use crate::cli::BenchCommand;
use crate::config::{BenchRunConfig, CalibrateConfig};
use crate::exit::{Error, Exit};
use crate::local_default;

pub async fn run(c: BenchCommand) -> Result<Exit, Error> {
    match c {
        BenchCommand::Run(a) => bench_run((*a).validate()?).await,
        BenchCommand::Calibrate(a) => calibrate(a.validate()?).await,
        BenchCommand::Compare(a) => super::bench_compare::run(a.validate()?),
    }
}

async fn bench_run(cfg: BenchRunConfig) -> Result<Exit, Error> {
    let local =
        local_default::start_unless(cfg.endpoint.url.as_ref(), &cfg.naming.out, cfg.local).await?;
    let local_url = local.as_ref().map(|l| l.server.url());
    let result = match super::measuring::client_for(&cfg.endpoint, local_url.as_deref()) {
        Ok(client) => measure(&cfg, &client, local.as_ref()).await,
        Err(e) => Err(e),
    };
    local_default::stop(local).await;
    result
}

async fn measure(
    cfg: &BenchRunConfig,
    client: &Client,
    local: Option<&local_default::LocalServer>,
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
    let naming = super::measuring::naming(&cfg.naming, local);
    // Progress on stderr (stdout stays the table, or pure JSON with --json), drawn from the
    // ceiling or the sweep on.
    let display = BenchDisplay::default();
    let req = BenchRequest {
        client,
        preflight: &cfg.endpoint.preflight,
        plan: &cfg.plan,
        pin: !cfg.no_pin,
        calibrate: cfg.calibrate,
        naming: &naming,
        out: &cfg.naming.out,
        replace: cfg.naming.replace,
        embedded_default: local.is_some(),
        versus: client_b.as_ref().map(|(vs, c)| Versus {
            client: c,
            preflight: &vs.preflight,
            allow_contaminated: cfg.allow_contaminated,
        }),
        progress: &display,
    };
    // Ctrl-C or SIGTERM ends the step in flight; the steps measured are kept.
    let run = bench::run(req, || {
        let stop = super::stop_signal::watch();
        (stop.rx.clone(), stop)
    })
    .await;
    if let Some(d) = display.0.get() {
        d.finish();
    }
    let benched = run?;
    match &benched {
        Benched::One(e) => print_one(cfg.json, &e.artifact, &e.path)?,
        Benched::Versus(v) => {
            print_versus(cfg.json, [&v.a, &v.b], &v.comparison, &v.comparison_path)?
        }
    }
    Ok(Exit::from_ok(benched.ok()))
}

fn print_one(json: bool, art: &Artifact, path: &Path) -> Result<(), Error> {
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(art).map_err(Error::json)?
        );
    } else if let Some(r) = art.load.get("throughput") {
        println!("{}", bakeoff_report::bench::sweep(r));
        for line in bench_summary::workload_lines(r) {
            println!("{line}");
        }
        println!("artifact: {}", path.display());
        println!("{}", bench_summary::conditions_line(art));
    }
    Ok(())
}

fn print_versus(
    json: bool,
    sides: [&Evaluated; 2],
    cmp: &SweepComparison,
    cmp_path: &Path,
) -> Result<(), Error> {
    if json {
        let v = serde_json::json!({
            "a": sides[0].artifact,
            "b": sides[1].artifact,
            "comparison": cmp,
        });
        println!("{}", serde_json::to_string_pretty(&v).map_err(Error::json)?);
        return Ok(());
    }
    for (name, side) in ["A", "B"].iter().zip(sides) {
        if let Some(r) = side.artifact.load.get("throughput") {
            println!(
                "{name}: {}\n{}",
                bakeoff_report::escape::for_terminal(&side.artifact.endpoint.url, 300),
                bakeoff_report::bench::sweep(r)
            );
        }
    }
    print!(
        "{}",
        bakeoff_load::compare_text::text(cmp, &sides[0].path, &sides[1].path)
    );
    println!("comparison: {}", cmp_path.display());
    for (name, side) in ["A", "B"].iter().zip(sides) {
        println!("{name} {}", bench_summary::conditions_line(&side.artifact));
    }
    Ok(())
}

/// `bench run`'s progress: the display starts with the ceiling or the sweep, whichever is
/// first (nothing is drawn during preflight).
#[derive(Default)]
struct BenchDisplay(OnceLock<Arc<crate::progress::Progress>>);

impl BenchDisplay {
    fn display(&self) -> &Arc<crate::progress::Progress> {
        self.0
            .get_or_init(|| Arc::new(crate::progress::Progress::new(false)))
    }
}

impl BenchProgress for BenchDisplay {
    fn ceiling_started(&self, https: bool) {
        super::step_progress::announce_ceiling(self.display(), https);
    }

    fn ceiling_measured(&self, c: &HarnessCeiling) {
        super::step_progress::show_ceiling(self.display(), c);
    }

    fn sweep(&self, steps: Option<usize>) -> Arc<dyn Progress> {
        Arc::new(super::step_progress::StepProgress::new(
            self.display().clone(),
            "bench",
            steps,
        ))
    }
}

async fn calibrate(cfg: CalibrateConfig) -> Result<Exit, Error> {
    let c = bench::ceiling(cfg.options, false).await?;
    if cfg.json {
        println!("{}", serde_json::to_string_pretty(&c).map_err(Error::json)?);
    } else {
        println!(
            "harness ceiling on this machine: {:.0} req/s (1-token requests), {:.0} streamed tokens/s, \
             {} concurrent streams, peak RSS {:.0} MiB\nsweep steps above half of these are flagged client-bound",
            c.requests_per_second,
            c.streamed_tokens_per_second,
            c.concurrent_streams,
            c.peak_rss_mib.unwrap_or(0.0)
        );
    }
    Ok(Exit::Ok)
}
