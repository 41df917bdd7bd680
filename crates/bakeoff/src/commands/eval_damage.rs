//! `bakeoff eval damage`: the candidate's first-token distribution against a reference's, after
//! the reference's self-check. Wiring only: the measurement is
//! `bakeoff_measure::damage::evaluate_damage`, the text `bakeoff_report::damage` (under the run
//! summary of `bakeoff_report::terminal`).
//!
//! Exit codes as `eval run`: 0 a damage figure was reported; 1 an unfit endpoint (failure
//! artifact), a withheld figure (failed self-check) or an interrupted run, each with its reason
//! on stderr; 2 a bad flag or prompt file.

use std::sync::Arc;

use bakeoff_measure::damage::{DamageRequest, evaluate_damage};
use bakeoff_progress::Progress;
use bakeoff_progress::eval::damage_hook;

use crate::exit::{Error, Exit};
use bakeoff_flags::config::DamageConfig;

pub async fn run(cfg: DamageConfig) -> Result<Exit, Error> {
    bakeoff_artifact::store::create_dir(&cfg.naming.out)?;
    let candidate = cfg.candidate.client_for(cfg.candidate_url.clone())?;
    let reference = cfg.reference.client_for(cfg.reference_url.clone())?;
    let mut stop = super::stop_signal::watch();
    let display = Arc::new(Progress::new(false));
    let seed = cfg
        .seed
        .unwrap_or_else(|| bakeoff_suites::context::fresh_seed("damage"));
    let req = DamageRequest {
        candidate: &candidate,
        reference: &reference,
        candidate_preflight: &cfg.candidate.preflight,
        reference_preflight: &cfg.reference.preflight,
        prompts: &cfg.prompts,
        top_k: cfg.top_k,
        tokens: cfg.tokens,
        seed,
        output: super::measuring::output(
            &cfg.naming,
            None,
            "",
            bakeoff_artifact::RunRecord {
                command: Some("eval damage".into()),
                prompts: Some(cfg.prompts_source.clone()),
                prompt_count: Some(cfg.prompts.len() as u64),
                top_k: Some(cfg.top_k),
                tokens: Some(cfg.tokens),
                seed: Some(Some(seed)),
                ..Default::default()
            },
        ),
        progress: Some(damage_hook(display.clone())),
    };
    let result = evaluate_damage(req, &mut stop.rx).await;
    drop(stop);
    display.finish();
    let outcome = result?;
    let art = &outcome.evaluated.artifact;
    if cfg.json {
        stdoutln!(
            "{}",
            serde_json::to_string_pretty(art).map_err(Error::json)?
        );
    } else {
        // The run's summary table, with the damage lines under it (bakeoff_report::damage).
        stdout!(
            "{}",
            super::screen(&bakeoff_report::terminal::run_summary(
                art,
                &outcome.evaluated.path.display().to_string()
            ))
        );
        stdoutln!(
            "{}",
            super::screen(&bakeoff_report::bench_summary::conditions_line(art))
        );
    }
    match outcome.withheld {
        Some(reason) => {
            // One line: a failure artifact measured nothing; a withheld figure was measured
            // and not vouched for.
            let what = if art.kind == bakeoff_artifact::ArtifactKind::Failure {
                "damage not measured"
            } else {
                "damage figure withheld"
            };
            stderrln!(
                "{what}: {}",
                bakeoff_report::escape::for_terminal(&reason, 1000)
            );
            Ok(Exit::Failed)
        }
        None => Ok(Exit::from_ok(outcome.evaluated.ok())),
    }
}
