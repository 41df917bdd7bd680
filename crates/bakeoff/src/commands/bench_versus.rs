//! `bakeoff bench run --endpoint A --versus B`: both endpoints measured alternately in one run
//! (`bakeoff_load::run_versus`), one artifact per side, and their paired comparison printed and
//! written beside them (`versus-<run id>.compare.json`).

use std::sync::Arc;

use bakeoff_client::Client;
use bakeoff_load::compare::compare;
use bakeoff_load::{LoadPlan, PinPolicy};
use bakeoff_suites::evaluate;
use bakeoff_suites::{PreflightOutcome, run_preflight};
use tokio::sync::watch;

use super::bench::{StepProgress, artifact, measured_all};
use crate::config::{BenchRunConfig, EndpointConfig};
use crate::exit::{Error, Exit};
use bakeoff_report::bench_summary::conditions_line;

pub(super) async fn measure(
    cfg: &BenchRunConfig,
    vs: &EndpointConfig,
    client_a: &Client,
    pre_a: &PreflightOutcome,
    plan_a: LoadPlan,
    progress: Arc<StepProgress>,
    cancel: watch::Receiver<bool>,
) -> Result<Exit, Error> {
    let Some(url_b) = vs.url.clone() else {
        return Err(Error::internal("--versus without a URL"));
    };
    let client_b = vs.client_for(url_b)?;
    let pre_b = run_preflight(&client_b, &vs.preflight).await;
    if let Some(unfit) = &pre_b.unfit {
        return Err(Error::failed(format!(
            "--versus endpoint is not fit to be measured ({}): {}; run `bakeoff eval preflight --endpoint {}` for the evidence",
            unfit.class,
            unfit.message,
            client_b.url().redacted()
        )));
    }
    // B's plan is A's workload with B's own model and its engine's pinning fields.
    let mut plan_b = plan_a.clone();
    plan_b.model = pre_b
        .report
        .model
        .clone()
        .unwrap_or_else(|| "default".into());
    if !cfg.no_pin {
        plan_b.pin = PinPolicy::for_engine(pre_b.discovered.facts.engine);
    }
    let (ra, rb) = bakeoff_load::run_versus(
        bakeoff_load::Side {
            client: client_a,
            plan: &plan_a,
        },
        bakeoff_load::Side {
            client: &client_b,
            plan: &plan_b,
        },
        progress,
        cancel,
    )
    .await?;
    let cmp = compare(&ra, &rb, cfg.allow_contaminated);
    let run_id = ra
        .versus
        .as_ref()
        .map(|v| v.run_id.clone())
        .unwrap_or_default();

    let mut paths = Vec::new();
    let mut arts = Vec::new();
    for (side, client, pre, report) in [("a", client_a, pre_a, ra), ("b", &client_b, &pre_b, rb)] {
        let mut art = artifact(cfg, client, pre, None, report);
        let naming = super::naming(&cfg.naming, None);
        art.candidate = evaluate::candidate(&naming, &format!("-{side}-bench"), client, pre);
        if let Some(s) = &cfg.naming.slug {
            art.candidate.slug = format!("{s}-{side}");
        }
        let mut files =
            evaluate::run_files(&cfg.naming.out, &art.candidate.slug, cfg.naming.replace)?;
        paths.push(evaluate::write_run_artifact(&mut files, &mut art)?);
        arts.push(art);
    }
    let cmp_path = cfg.naming.out.join(format!("versus-{run_id}.compare.json"));
    bakeoff_artifact::write_new(&cmp_path, &cmp).map_err(Error::from)?;

    if cfg.json {
        let v = serde_json::json!({
            "a": arts[0],
            "b": arts[1],
            "comparison": cmp,
        });
        println!("{}", serde_json::to_string_pretty(&v).map_err(Error::json)?);
    } else {
        for (name, art) in ["A", "B"].iter().zip(&arts) {
            if let Some(r) = art.load.get("throughput") {
                println!(
                    "{name}: {}\n{}",
                    bakeoff_report::escape::for_terminal(&art.endpoint.url, 300),
                    bakeoff_report::bench::sweep(r)
                );
            }
        }
        print!(
            "{}",
            bakeoff_load::compare_text::text(&cmp, &paths[0], &paths[1])
        );
        println!("comparison: {}", cmp_path.display());
        for (name, art) in ["A", "B"].iter().zip(&arts) {
            println!("{name} {}", conditions_line(art));
        }
    }
    Ok(Exit::from_ok(
        arts.iter().all(measured_all) && cmp.not_comparable.is_empty(),
    ))
}
